"""svm-train: LIBSVM's command line (flags, messages, output, default model name), plus long
options for what LIBSVM does not have (solvers, working sets, LASVM's online options).

Beyond LIBSVM's checks, before any training: every output path (model, ``--save-state``,
``--trace``, snapshot names) must be writable, the training file must hold at least one row,
and the kernel values must stay finite (rows whose squared norm overflows are rejected by the
reader with FILE:LINE; linear and polynomial kernels are bounded from the largest row). A
model whose rho or coefficients came out non-finite anyway is an error, never a file.
"""

import os
import sys

from ..base.errors import InputFormatError, LasvmError, OutputError, ParameterError
from ..base.options import Option, atoi
from ..base.progress import bars_cleared
from .argv import read_options
from .report import UsageExit, write_stdout

from ..solvers import OPTIONS, TRACKING_SOLVERS

# svm-train's own options (not training parameters): fields of Options below
COMMAND_OPTIONS = (
    Option("zero_based", ("--zero-based",), None, True, default=False, command=True,
           section="command",
           usage="--zero-based : the training file uses 0-based feature indices"),
    Option("counters", ("--counters",), None, True, default=False, command=True,
           section="command", usage="--counters : print solver counters (iterations, kernel "
                                    "evaluations, cache) to stderr"),
    Option("stream", ("--stream",), None, True, default=False, command=True, section="command",
           usage="""\
--stream : one sequential pass over the training file, holding only the expansion:
	--solver lasvm|lasvm-g|lasvm-nc|lasvm-i|full-svm (two classes), --multiclass ovr
	--solver lasvm or --multiclass llw|cs --solver online (any number of classes); -g
	required for -t 1/2/3; --epochs 1; the two-class and the all-in-one streams also
	take the long-run options (--trace, --stop-*, --snapshots, --save-state, --resume)"""),
    Option("workers", ("--workers",), int, default=None, command=True, section="command",
           usage="""\
--workers n : run the -v folds, or the one-vs-one pairs, as tasks on a local Dask cluster
	of n worker processes (needs the dask extra)"""),
    Option("scheduler", ("--scheduler",), str, default=None, command=True, section="command",
           usage="""\
--scheduler address : the same on an existing Dask cluster (tcp://host:8786)"""),
    Option("partitions", ("--partitions",), int, default=0, command=True, section="command",
           usage="""\
--partitions P : one exact SVM of any type (-s 0 to 4) over P parts of the
	training file(s) (a quoted glob names several; a compressed file is one part), each
	read and checked where it is trained: in this process, or on Dask with --workers /
	--scheduler (docs/partitions.md)"""),
    Option("early_model", ("--early-model",), None, True, default=False, command=True,
           section="command", usage="--early-model : with --partitions, the model of the "
                                    "first merge (not the exact optimum)"),
    Option("cascade_cache", ("--cascade-cache",), float, default=None, command=True,
           section="command", usage="""\
--cascade-cache MB : with --partitions, the kernel values one process may keep beyond
	-m where they pay (rows of more than 32 features): its parts' between their KKT
	checks, the client's for its merged SMO (default 2048; 0: none)"""),
)
ALL_OPTIONS = OPTIONS + COMMAND_OPTIONS

# the usage text: LIBSVM's (its options' declarations hold LIBSVM's lines verbatim), then ours
SECTIONS = (
    ("libsvm", "Usage: svm-train [options] training_set_file [model_file]\noptions:"),
    ("lasvm-cli", "lasvm-cli options (the online solvers and options: -s 0, C-SVC, only):"),
    ("tracking", f"tracking solvers (--solver {'|'.join(TRACKING_SOLVERS)}):"),
    ("command", None),
)
TRACKING_TRACE = """\
--trace file / --trace-every n / --test file : gap trace (CSV: t, iterations, updates, sv,
	primal, dual, gap, test_error, kernel_evals, teacher_kernel_evals, seconds), every n
	examples (rcd: n x K steps)"""


def usage_text():
    parts = []
    for section, header in SECTIONS:
        if header:
            parts.append(header)
        parts += [o.usage_text() for o in ALL_OPTIONS if o.section == section and o.usage]
        if section == "tracking":
            parts.append(TRACKING_TRACE)
    return "\n".join(parts) + "\n"


USAGE = usage_text()

# the parser's tables, from the declarations: long options taking a value / switches, and
# LIBSVM's one-letter options (only the letter after '-' counts: ``-cost 5`` is ``-c 5``)
_LONG_VALUE = {f: o for o in ALL_OPTIONS if o.parse is not None for f in o.flags
               if f.startswith("--")}
_LONG_FLAG = {f: o for o in ALL_OPTIONS if o.parse is None for f in o.flags
              if f.startswith("--")}
_SHORT = {f[1]: o for o in ALL_OPTIONS for f in o.flags if f.startswith("-") and
          not f.startswith("--")}


class Options:
    def __init__(self):
        from ..training.params import TrainParams

        self.params = TrainParams()
        self.quiet = False
        self.nr_fold = 0
        self.zero_based = False
        self.counters = False
        self.stream = False
        self.workers = None  # --workers n: a local Dask cluster (training/distributed.py)
        self.scheduler = None  # --scheduler address: an existing one
        self.partitions = 0  # --partitions P: cli/partitions.py
        self.early_model = False
        self.cascade_cache = None  # --cascade-cache MB: training/cascade.py's CASCADE_CACHE_MB
        self.input_file = None
        self.model_file = None
        self.given = set()  # the option words given ("--epochs", "-c"): check_parameter's


def parse_command_line(argv):
    """LIBSVM's parse_command_line: options first, each taking the next word; only the
    character after '-' counts (``-cost 5`` is ``-c 5``)."""
    o = Options()
    p = o.params
    found, rest = read_options(argv, USAGE, long_flags=_LONG_FLAG.keys(),
                               long_values=_LONG_VALUE.keys())
    for name, value, arg in found:
        o.given.add(name)
        if name in _LONG_FLAG:
            opt = _LONG_FLAG[name]
            setattr(o if opt.command else p, opt.field, opt.value)
        elif name in _LONG_VALUE:
            opt = _LONG_VALUE[name]
            try:
                setattr(o if opt.command else p, opt.field, opt.parse(value))
            except ValueError:
                raise ParameterError(f"ERROR: invalid value '{value}' for {name}") from None
        else:
            _short_option(o, name[1], value, arg)
    if not rest:
        raise UsageExit(USAGE)
    o.input_file = rest[0]
    if len(rest) > 1:
        o.model_file = rest[1]
    else:
        o.model_file = os.path.basename(o.input_file) + ".model"
    p.model_file = o.model_file  # LASVM snapshots are named model_file.<value>
    from ..training.online_options import OPTION_NAMES, online_requested
    from ..solvers import ONLINE, ONLINE_DRIVEN, TRACKING_SOLVERS

    if p.solver in TRACKING_SOLVERS:
        _check_tracking_options(o)
    elif online_requested(p) and (p.solver not in ONLINE_DRIVEN or o.nr_fold):
        used = " ".join(n for f, n in OPTION_NAMES.items() if getattr(p, f, None))
        raise ParameterError(f"ERROR: {used}: only with --solver "
                             f"{'|'.join(ONLINE + TRACKING_SOLVERS)} (or --multiclass llw|cs "
                             "--solver online), without -v")
    if o.workers is not None and o.workers < 1:
        raise ParameterError("ERROR: --workers must be at least 1")
    if o.workers is not None and o.scheduler:
        raise ParameterError("ERROR: --workers and --scheduler exclude each other (--workers "
                             "sizes a local cluster)")
    if "--partitions" in o.given or o.early_model or o.cascade_cache is not None:
        from .partitions import check_options

        check_options(o)
    elif (o.workers or o.scheduler) and (o.stream or online_requested(p)):
        raise ParameterError("ERROR: --workers and --scheduler: only for batch training and -v "
                             "(not with --stream or LASVM's online options)")
    return o


def _check_tracking_options(o):
    """The tracking solvers take the online driver's options and train models (no -v,
    --stream, --workers)."""
    p = o.params
    used = ["-v"] if o.nr_fold else []
    used += ["--stream"] if o.stream else []
    used += ["--workers/--scheduler"] if (o.workers or o.scheduler) else []
    if used:
        raise ParameterError(f"ERROR: {' '.join(used)}: not with --solver {p.solver}")


def _short_option(o, c, value, word):
    """One LIBSVM option -c VALUE (``word`` is the option word: -w carries its class)."""
    p = o.params
    opt = _SHORT.get(c)
    if opt is None:
        raise UsageExit(USAGE, f"Unknown option: -{c}")
    if opt.field == "quiet":
        o.quiet = True
    elif opt.field == "nr_fold":
        o.nr_fold = opt.parse(value)
        if o.nr_fold < 2:
            raise UsageExit(USAGE, "n-fold cross validation: n must >= 2")
    elif opt.field == "weights":
        label = atoi(word[2:])
        p.weights[label] = p.weights.get(label, 1.0) * opt.parse(value)
    else:
        setattr(o if opt.command else p, opt.field, opt.parse(value))


def _stdout(line):
    write_stdout(line + "\n")


def _stderr(line):
    sys.stdout.flush()
    with bars_cleared():
        sys.stderr.write(line + "\n")


def _error(msg):
    raise ParameterError(f"ERROR: {msg}")


def check_precomputed(problem):
    """LIBSVM's read_problem checks of the 0:serial column."""
    import numpy as np

    starts, stops = problem.indptr[:-1], problem.indptr[1:]
    nonempty = starts < stops
    first_index = np.where(nonempty, problem.indices[np.minimum(starts, stops - 1).clip(0)], -1)
    if not (nonempty & (first_index == 0)).all():
        _error("Wrong input format: first column must be 0:sample_serial_number")
    serial = problem.values[starts]
    if (serial <= 0).any() or (serial > problem.max_index).any():
        _error("Wrong input format: sample_serial_number out of range")


def check_outputs(o):
    """Every file the run will write must be writable before training starts (a bad
    --save-state path used to fail after the whole run, losing the model)."""
    from ..io.atomic import output_problem
    from ..training.online_options import parse_snapshots, snapshot_path

    p = o.params
    if not o.nr_fold:
        problem = output_problem(o.model_file)
        if problem:
            raise LasvmError(f"can't save model to file {o.model_file}: {problem}")
        for value in parse_snapshots(p.snapshots):
            path = snapshot_path(o.model_file, value)
            problem = output_problem(path)
            if problem:
                raise OutputError(path, problem, "--snapshots file")
    for option, path in (("--save-state", p.save_state), ("--trace", p.trace)):
        if path is not None:
            problem = output_problem(path)
            if problem:
                raise OutputError(path, problem, f"{option} file")


def check_resume_file(p):
    """--resume FILE must be a whole state file (a zip archive whose members pass their CRC
    check): a truncated or foreign file is an error here, before training, not a traceback
    from deep inside the run."""
    if not p.resume:
        return
    import zipfile

    try:
        with zipfile.ZipFile(p.resume) as z:
            bad = z.testzip()
    except FileNotFoundError:
        _error(f"can't open LASVM state file {p.resume}")
    except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile) as e:
        reason = "truncated, or not a state file written by --save-state" \
            if isinstance(e, zipfile.BadZipFile) else (getattr(e, "strerror", None) or str(e))
        _error(f"cannot read LASVM state file {p.resume}: {reason}")
    else:
        if bad is not None:
            _error(f"cannot read LASVM state file {p.resume}: damaged member {bad}")


def check_data(data, path):
    """At least one training row (an empty or comment-only file trained a 'nr_class 0' model)."""
    if data.n == 0:
        raise InputFormatError(path, None, "no training data (the file is empty or holds only "
                               "comment lines)")


DBL_MAX = 1.7976931348623157e308


def check_kernel_range(data, p):
    """Linear and polynomial kernel values grow with the data: refuse a problem whose largest
    kernel value, times C and the number of rows (a bound on a gradient), overflows float64.
    (RBF and sigmoid values are bounded; the reader's check_norms keeps |x|^2 finite.)"""
    if p.kernel_type not in (0, 1) or data.n == 0:
        return
    import numpy as np

    from ..numerics.data import squared_norms

    with np.errstate(over="ignore"):
        largest = float(squared_norms(data.indptr, data.values).max())
    if p.kernel_type == 0:
        kmax, name, options = largest, "linear kernel u'*v", "-c"
    else:
        base = abs(p.gamma) * largest + abs(p.coef0)
        try:
            kmax = base ** p.degree if p.degree > 0 else 1.0
        except OverflowError:
            kmax = float("inf")
        name, options = "polynomial kernel (gamma*u'*v + coef0)^degree", "-g, -r, -d or -c"
    cmax = p.C * max([1.0] + [abs(w) for w in p.weights.values()])
    if not kmax * cmax * data.n <= DBL_MAX / 8:
        _error(f"kernel values overflow: the {name} reaches {kmax:.3g} on the training data "
               f"(largest |x|^2 = {largest:.3g}), too large for {data.n} rows with C = "
               f"{cmax:g}; scale the data (svm-scale) or lower {options}")


def check_model(model):
    """A model with a non-finite rho or coefficient is an error, never a file."""
    import numpy as np

    for name in ("rho", "sv_coef", "probA", "probB"):
        v = getattr(model, name, None)
        if v is not None and not np.isfinite(np.asarray(v, np.float64)).all():
            first = np.asarray(v, np.float64).ravel()
            first = first[~np.isfinite(first)][0]
            _error(f"training gave a non-finite model ({name} {first:g}): kernel values or "
                   "gradients overflowed; scale the data (svm-scale) or lower -g, -r, -d, -c")


def _training(run, p):
    """run(); an OSError while writing --trace, --save-state or snapshots becomes an
    OutputError naming the file."""
    try:
        return run()
    except OutputError:
        raise
    except OSError as e:  # unnamed: the trace, the one output written without atomic_write
        if e.filename:
            raise OutputError(e.filename, e.strerror or str(e)) from None
        what = "--trace file" if p.trace else None
        raise OutputError(p.trace or "an output file", e.strerror or str(e), what) from None


def _main_stream(o):
    """--stream: one sequential pass, the file never read into memory as a whole: LASVM and
    the LASVM-G family for two classes, one-vs-rest LASVM and the online all-in-one machines
    for any number (runs fed by the file, driven by training/stream.py with the long-run
    options)."""
    from ..training.params import check_parameter
    from ..solvers import stream_trainer, streamed
    from ..solvers.stream_source import StreamError
    from ..base.progress import progress_factory

    p = o.params
    start_stream = stream_trainer(p)
    if start_stream is None:
        what = f"--solver {p.solver}" + (f" --multiclass {p.multiclass}"
                                         if p.multiclass != "ovo" else "")
        _error(f"--stream trains {streamed()}; not {what}")
    if o.nr_fold:
        _error("--stream does not support cross validation (-v)")
    err = check_parameter(p, given=o.given)
    if err:
        _error(err)
    check_outputs(o)
    check_resume_file(p)
    info = (lambda _m: None) if o.quiet else _stdout
    kw = dict(zero_based=o.zero_based, info=info, warn=_stderr,
              progress=progress_factory(o.quiet))
    from ..training.stream import train_stream as drive_stream

    def training():  # the stream's run through the online driver (training/stream.py)
        return drive_stream(o.input_file, p, start_stream, **kw)
    try:
        model = _training(training, p)
    except StreamError as e:
        _error(str(e))
    except OutputError:
        raise
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        _stderr(f"can't open input file {o.input_file}")
        return 1
    check_model(model)
    return save_model(model, o)


def regression_cv_lines(y, target):
    """svm-train.c's do_cross_validation for regression (sums in row order, as LIBSVM)."""
    from ..numerics.measures import cfmt_g, regression_measures

    mse, scc = regression_measures(target, y)
    return [f"Cross Validation Mean squared error = {cfmt_g(mse)}",
            f"Cross Validation Squared correlation coefficient = {cfmt_g(scc)}"]


def save_model(model, o):
    """Write the model atomically (LIBSVM's message on failure); print counters on request."""
    from ..io.model_file import write_model

    try:
        write_model(model, o.model_file)
    except OSError as e:
        reason = e.reason if isinstance(e, OutputError) else (e.strerror or str(e))
        _stderr(f"can't save model to file {o.model_file}: {reason}")
        return 1
    if o.counters:
        for k, v in model.counters.items():
            _stderr(f"{k} = {v}")
    return 0


def main(argv):
    o = parse_command_line(argv)
    from ..base.progress import announce_compilation

    announce_compilation("svm-train", o.quiet)
    from ..numerics.data import Problem
    from ..io.svmlight import read_svmlight
    from ..training.params import check_parameter
    from ..base.progress import progress_factory

    p = o.params
    if o.stream:
        return _main_stream(o)
    if o.partitions:
        from .partitions import main_partitions

        return main_partitions(o, (lambda _m: None) if o.quiet else _stdout, _stderr,
                               progress_factory(o.quiet), save_model, check_outputs, check_model)
    precomputed = p.kernel_type == 4
    if o.input_file != "-":  # LIBSVM's first message, before the outputs' checks
        try:
            open(o.input_file, "rb").close()
        except OSError:
            _stderr(f"can't open input file {o.input_file}")
            return 1
    check_outputs(o)
    check_resume_file(p)
    try:
        data = read_svmlight(o.input_file, zero_based=o.zero_based or precomputed,
                             precomputed=precomputed, check_norms=not precomputed)
    except OSError:
        _stderr(f"can't open input file {o.input_file}")
        return 1
    check_data(data, o.input_file)
    if p.gamma == 0 and data.max_index > 0:
        p.gamma = 1.0 / data.max_index
    counts = None
    if p.svm_type == 1:  # nu-SVC's feasibility check counts the rows of each class
        from ..numerics.classes import group_classes

        counts = group_classes(data.y)[2]
    err = check_parameter(p, counts, given=o.given)
    if err:
        _error(err)
    check_kernel_range(data, p)
    problem = Problem.from_svmlight(data, kernel_type=p.kernel_type, x_storage=p.x_storage)
    if precomputed:
        check_precomputed(problem)
    info = (lambda _m: None) if o.quiet else _stdout
    progress = progress_factory(o.quiet)

    runner = make_runner(o)
    try:
        return _train_or_validate(o, problem, info, progress, runner)
    finally:
        if runner is not None:
            runner.close()


def make_runner(o):
    """A Dask runner for --workers / --scheduler (lasvm_cli/training/distributed.py), else None."""
    if not (o.workers or o.scheduler):
        return None
    from ..training.distributed import DaskRunner, dask_available

    if not dask_available():
        _error("--workers and --scheduler need Dask: pip install 'lasvm-cli[dask]'")
    return DaskRunner(scheduler=o.scheduler, workers=o.workers)


def _train_or_validate(o, problem, info, progress, runner):
    from ..training.fit import fit
    from ..training.train import cross_validation

    p = o.params
    if runner is not None:
        progress = None  # the solvers run in the workers
    if o.nr_fold:
        nr_fold = o.nr_fold
        if nr_fold > problem.n:
            _stderr(f"WARNING: # folds ({nr_fold}) > # data ({problem.n}). Will use # folds = "
                    "# data instead (i.e., leave-one-out cross validation)")
            nr_fold = problem.n
        target = _training(lambda: cross_validation(problem, p, nr_fold, progress=progress,
                                                    info=info, warn=_stderr,
                                                    mapper=runner), p)
        # printf, not info(): LIBSVM prints these lines even with -q
        if p.svm_type in (3, 4):
            for line in regression_cv_lines(problem.y, target):
                _stdout(line)
        else:
            correct = int((target == problem.y).sum())
            _stdout(f"Cross Validation Accuracy = {100.0 * correct / problem.n:g}%")
        return 0

    model = _training(lambda: fit(problem, p, info=info, warn=_stderr, progress=progress,
                                  mapper=runner), p)
    check_model(model)
    return save_model(model, o)
