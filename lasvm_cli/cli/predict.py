"""svm-predict: LIBSVM 3.37's command line, output files and messages, over a batch predictor.

Differences from LIBSVM, all on error paths or extensions: the output file is written
atomically (a bad test file or model leaves no output file behind; a device or named pipe such
as ``/dev/stdout`` is written straight through); a bad data line is reported as
``FILE:LINE: reason (token 'X')`` (LIBSVM: ``Wrong input format at line N``), and so are rows
whose values are so large that kernel values overflow; a model with NaN or infinite numbers is
refused; extension options ``--decision-values FILE`` and ``--zero-based``.
"""

import sys

from ..base.options import atoi
from ..numerics.measures import cdiv, cfmt_g, regression_measures, summary
from .argv import read_options
from .report import UsageExit, write_stdout

USAGE = """\
Usage: svm-predict [options] test_file model_file output_file
options:
-b probability_estimates: whether to predict probability estimates, 0 or 1 (default 0); for one-class SVM only 0 is supported
-q : quiet mode (no outputs)
lasvm-cli options:
--decision-values FILE : also write the decision values, one line per test example (%.17g)
--zero-based : the test file uses 0-based feature indices
"""

MSG_NO_PROB = "Model does not support probabiliy estimates"  # sic, as LIBSVM
MSG_PROB_DISABLED = "Model supports probability estimates, but disabled in prediction."


class Options:
    def __init__(self):
        self.probability = 0
        self.quiet = False
        self.decision_values = None
        self.zero_based = False
        self.test_file = None
        self.model_file = None
        self.output_file = None


def parse_command_line(argv):
    """svm-predict.c's loop: options first; only the letter after '-' counts; -q takes no value."""
    o = Options()
    found, rest = read_options(argv, USAGE, long_flags=("--zero-based",),
                               long_values=("--decision-values",))
    for name, value, _word in found:
        if name == "--zero-based":
            o.zero_based = True
        elif name == "--decision-values":
            o.decision_values = value
        elif name == "-q":
            o.quiet = True
        elif name == "-b":
            o.probability = atoi(value)
        else:
            raise UsageExit(USAGE, f"Unknown option: {name}")
    if len(rest) < 3:
        raise UsageExit(USAGE)
    o.test_file, o.model_file, o.output_file = rest[:3]
    return o


def main(argv):
    o = parse_command_line(argv)
    from ..base.progress import announce_compilation

    announce_compilation("svm-predict", o.quiet)

    def info(text):
        if not o.quiet:
            write_stdout(text)

    def fail(text):
        sys.stdout.flush()
        sys.stderr.write(text + "\n")
        return 1

    try:
        with open(o.test_file, "rb"):
            pass
    except OSError:
        return fail(f"can't open input file {o.test_file}")
    from ..io.atomic import output_problem

    for path in (o.output_file, o.decision_values):
        problem = path is not None and output_problem(path)
        if problem:
            return fail(f"can't open output file {path}: {problem}")

    from ..base.errors import ModelFormatError
    from ..io.model_file import read_model

    try:
        model = read_model(o.model_file)
    except ModelFormatError as e:
        sys.stderr.write(f"{e}\n")
        return fail(f"can't open model file {o.model_file}")
    except (OSError, UnicodeError):
        return fail(f"can't open model file {o.model_file}")

    if o.probability:
        if not model.check_probability_model():
            return fail(MSG_NO_PROB)
    elif model.check_probability_model():
        info(MSG_PROB_DISABLED + "\n")

    import numpy as np

    from ..numerics.data import kernel_data
    from ..io.atomic import atomic_write
    from ..io.svmlight import read_svmlight
    from ..numerics.probability import SVR_NOTE, predict_probability

    data = read_svmlight(o.test_file, zero_based=o.zero_based,
                         precomputed=model.kernel_type == 4,
                         check_norms=model.kernel_type != 4)
    kd = kernel_data(data.indptr, data.indices, data.values, kernel_type=model.kernel_type)
    dec = model.decision_values(kd)

    lines = []
    if o.probability and model.is_regression:
        info(SVR_NOTE % model.svr_probability())
    if o.probability and not model.is_regression:
        pred, probs = predict_probability(model, dec, info)
        if model.svm_type == "one_class":
            lines.append("label normal outlier")
        else:
            lines.append("labels" + "".join(" %d" % v for v in model.label))
        probs_l = probs.tolist()
        lines.extend("%g" % v + "".join([" %g" % p for p in row])
                     for v, row in zip(pred.tolist(), probs_l))
    else:
        pred = model.predict_from_values(dec)
        lines.extend(["%.17g" % v for v in pred.tolist()])

    text = "\n".join(lines) + "\n" if lines else ""
    with atomic_write(o.output_file) as f:
        f.write(text)
    if o.decision_values is not None:
        with atomic_write(o.decision_values) as f:
            f.write("".join(" ".join(["%.17g" % v for v in row]) + "\n" for row in dec.tolist()))

    pred = np.asarray(pred, np.float64)
    if model.is_regression:
        mse, scc = regression_measures(pred, data.y)
        info("Mean squared error = %s (regression)\n" % cfmt_g(mse))
        info("Squared correlation coefficient = %s (regression)\n" % cfmt_g(scc))
    else:
        correct, total = summary(pred, data.y)[:2]
        acc = cdiv(float(correct), float(total)) * 100
        info("Accuracy = %s%% (%d/%d) (classification)\n" % (cfmt_g(acc), correct, total))
    return 0
