"""The training options' declarations (lasvm_cli/base/options.py, lasvm_cli/solvers OPTIONS):
complete, reaching their solvers, and an option given to a solver that does not take it is an
error naming the solvers that do. Parametrised over the declarations, so an option added later
is covered without a new test."""

import dataclasses
import inspect
import re
from pathlib import Path

import pytest

from lasvm_cli.cli.train import ALL_OPTIONS, USAGE, parse_command_line
from lasvm_cli.base.errors import ParameterError
from lasvm_cli.base.options import ALL_IN_ONE_KEYS, applies, atof, where
from lasvm_cli.training.params import TrainParams, check_parameter
from lasvm_cli.solvers import (C_SVC_SOLVERS, OPTIONS, SOLVER_NAMES, SOLVERS, command_words,
                               dispatch_key, solver_kwargs)

PACKAGE = Path(__file__).resolve().parent.parent / "lasvm_cli"


def _context(key):
    """The command-line words (the first scheme's) that select solver row ``key`` and the
    TrainParams fields they set."""
    words = list(command_words(key)[0])
    p = parse_command_line([*words, "train.svm"]).params
    assert dispatch_key(p) == key, (key, words)
    return ["--solver", "smo"] if not words else words, \
        {f: getattr(p, f) for f in ("solver", "multiclass") if "--" + f in words}


# every solver key (but the svm types'), with the command-line words and TrainParams fields
# that select it, from the rows
CONTEXTS = {k: _context(k) for k, row in SOLVERS.items() if row.kind != "svm_type"}

RESTRICTED = [o for o in OPTIONS if o.flags and (o.solvers is not None or o.when)]


def sample(o):
    """(command-line words, value) giving option ``o`` a valid value other than its default."""
    if o.parse is None:
        return [o.flags[0]], o.value
    if o.choices:
        v = next(c for c in o.choices if c != o.default)
        return [o.flags[0], v], v
    text = {"field": "x"}.get(o.field, "3")
    v = o.parse(text) if o.parse is not str else "x"
    if o.field == "ramp_s":
        text, v = "-0.5", -0.5
    return [o.flags[0], str(text) if o.parse is not str else "x"], v


def foreign_context(o):
    """A solver key that does not take ``o`` (SMO's first, as a new user would try it)."""
    for key in ("smo", "lasvm", *CONTEXTS):
        words, fields = CONTEXTS[key]
        if not applies(o, TrainParams(**fields)):
            return key
    raise AssertionError(f"{o.name}: every solver takes it")


def named_solvers(o, message):
    """Every solver that takes ``o`` is named in ``message`` (the all-in-one machines as
    --multiclass llw|cs)."""
    takes = [s for s in CONTEXTS if s in (o.solvers or CONTEXTS)]
    for s in takes:
        if s == "s2do" and "smo" in takes:
            assert "--solver smo" in message, (o.name, message)  # the same --solver
        elif s in ALL_IN_ONE_KEYS:
            assert "--multiclass" in message, (o.name, message)
        else:
            assert re.search(rf"[ |]{re.escape(s)}(?=[| )]|$)", message), (s, message)
    if "smo" in takes and "s2do" not in takes:
        assert "not --multiclass llw|cs" in message


@pytest.mark.parametrize("option", RESTRICTED, ids=lambda o: o.flags[0])
def test_option_for_another_solver_is_an_error_on_the_command_line(option):
    """svm-train FLAG VALUE with a solver that does not take it: ERROR naming the solvers that
    do (the flag given, even with its default value)."""
    words, _ = sample(option)
    key = foreign_context(option)
    argv = words + CONTEXTS[key][0] + ["train.svm"]
    try:
        o = parse_command_line(argv)
    except ParameterError as e:  # the online driver's options are refused while parsing
        message = str(e)
    else:
        message = check_parameter(o.params, given=o.given)
    assert message is not None, argv
    assert option.flags[0] in message and ("only with" in message or "is for" in message), \
        message
    if "only with" in message and "without -v" not in message:
        assert where(option) in message
        named_solvers(option, message)


@pytest.mark.parametrize("option", [o for o in RESTRICTED if o.default != o.value],
                         ids=lambda o: o.flags[0])
def test_option_for_another_solver_is_an_error_in_the_parameters(option):
    """The same through TrainParams alone (the scikit-learn estimators' path): a field set to
    anything but its default, for a solver that does not take it."""
    _, value = sample(option)
    key = foreign_context(option)
    p = TrainParams(**CONTEXTS[key][1])
    setattr(p, option.field, value)
    message = check_parameter(p)
    assert message is not None and any(f in message for f in option.flags), message


@pytest.mark.parametrize("option", RESTRICTED, ids=lambda o: o.flags[0])
def test_option_is_accepted_by_its_solvers(option):
    """Given to each solver that takes it (and with the conditions of ``when``), the option
    passes the solver check."""
    words, value = sample(option)
    for key in option.solvers or CONTEXTS:
        fields = dict(CONTEXTS[key][1])
        for field, values in option.when:
            fields[field] = values[0]
        p = TrainParams(**fields)
        setattr(p, option.field, value)
        message = check_parameter(p)
        assert message is None or "only with" not in message, (key, message)


def test_the_issue_examples():
    """svm-train --label-budget 20 (SMO) used to train an ordinary SMO model, exit 0."""
    for argv, text in ((["--label-budget", "20"], "--label-budget: only with --solver lasvm"),
                       (["--final-kkt-check"], "--final-kkt-check: only with --solver smo "
                                               "--wss hmg (not --multiclass llw|cs)"),
                       (["--epochs", "3"], "--epochs: only with --solver lasvm|lasvm-g|"
                                           "full-svm|lasvm-nc|lasvm-i (or --multiclass llw|cs "
                                           "--solver online)"),
                       (["--llw-target", "2"], "--llw-target: only with --multiclass llw")):
        o = parse_command_line(["-q", *argv, "heart_scale"])
        assert check_parameter(o.params, given=o.given) == text


def test_what_the_solver_rows_say_reaches_the_options():
    """--epochs is taken by the rows with ``epochs``; every --solver choice's row has its
    phrase in the usage text; every row's ``rules`` run for it (and only for it)."""
    epochs = next(o for o in OPTIONS if o.field == "epochs")
    assert epochs.solvers == tuple(k for k, row in SOLVERS.items() if row.epochs)
    assert set(epochs.solvers) >= {"lasvm", "lasvm-g", "online"}
    text = " ".join(USAGE.split())
    for key in SOLVER_NAMES:
        assert SOLVERS[key].usage, key
        assert " ".join(SOLVERS[key].usage.split()) in text, key
    # lasvm-i's rule: --ramp-s > 0 is its error only
    assert "lasvm-i" in check_parameter(TrainParams(solver="lasvm-i", ramp_s=0.5))
    assert check_parameter(TrainParams(solver="lasvm-nc", ramp_s=0.5)) is None
    # the tracking rows' rules, for each of them
    for key in (k for k, row in SOLVERS.items() if row.tracking):
        assert check_parameter(TrainParams(solver=key, K=2, track_eps=1.0)) == \
            "-K and --eps exclude each other"
        assert check_parameter(TrainParams(solver=key, probability=1)) == \
            f"--solver {key}: no probability estimates (-b 1)"


NUMBERS = [o for o in OPTIONS if o.flags and o.parse in (float, atof) and not o.command
           and o.field != "weights"]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("option", NUMBERS, ids=lambda o: o.flags[0])
def test_no_number_option_takes_nan(option, value):
    """Every option that takes a number refuses NaN (a range check ``v <= 0`` is false for
    it), with its solver: by its row's ``number`` or its own check. An infinite value is
    refused unless the row says it may be infinite (a limit that is no limit)."""
    key = next(iter(option.solvers or ("smo",)))
    words = CONTEXTS[key][0]
    argv = [*words, option.flags[0], value, "train.svm"]
    for field, values in option.when:
        argv = [f"--{field.replace('_', '-')}", values[0], *argv]
    o = parse_command_line(argv)
    message = check_parameter(o.params, given=o.given)
    if value == "nan" or option.number == "finite":
        assert message is not None and option.flags[0] in message, (argv, message)
    elif option.number == "not nan":
        assert message is None, (argv, message)
    assert option.number in ("", "finite", "not nan")


def test_every_field_is_declared_with_its_default():
    """TrainParams is made from the rows; LIBSVM's fields keep svm_parameter's defaults (as
    svm-train.c sets them) and the API-only fields keep theirs."""
    fields = {f.name: f for f in dataclasses.fields(TrainParams)}
    assert set(fields) == {o.field for o in OPTIONS if not o.command}
    p = TrainParams()
    assert (p.svm_type, p.kernel_type, p.degree, p.gamma, p.coef0, p.C, p.nu, p.p,
            p.cache_size, p.eps, p.shrinking, p.probability, p.weights) == \
        (0, 2, 3, 0.0, 0.0, 1.0, 0.5, 0.1, 100.0, 1e-3, 1, 0, {})
    assert TrainParams().weights is not p.weights
    for o in OPTIONS:
        if not o.command and o.field != "weights":
            assert getattr(p, o.field) == o.default, o.name


def test_flags_are_unique_and_parsed_into_their_field():
    flags = [f for o in ALL_OPTIONS for f in o.flags]
    assert len(flags) == len(set(flags))
    for o in RESTRICTED:
        words, value = sample(o)
        key = next(iter(o.solvers or CONTEXTS))
        parsed = parse_command_line(words + CONTEXTS[key][0] + ["f"])
        assert getattr(parsed.params, o.field) == value, o.name
        assert o.flags[0] in parsed.given


def test_every_flag_is_in_the_usage():
    for o in ALL_OPTIONS:
        for f in o.flags:
            assert re.search(rf"^{re.escape(f)}[ :]", USAGE, re.M) or \
                (f == "-wi" and "-wi weight" in USAGE), f


LIBSVM_USAGE = """\
Usage: svm-train [options] training_set_file [model_file]
options:
-s svm_type : set type of SVM (default 0)
	0 -- C-SVC		(multi-class classification)
	1 -- nu-SVC		(multi-class classification)
	2 -- one-class SVM
	3 -- epsilon-SVR	(regression)
	4 -- nu-SVR		(regression)
-t kernel_type : set type of kernel function (default 2)
	0 -- linear: u'*v
	1 -- polynomial: (gamma*u'*v + coef0)^degree
	2 -- radial basis function: exp(-gamma*|u-v|^2)
	3 -- sigmoid: tanh(gamma*u'*v + coef0)
	4 -- precomputed kernel (kernel values in training_set_file)
-d degree : set degree in kernel function (default 3)
-g gamma : set gamma in kernel function (default 1/num_features)
-r coef0 : set coef0 in kernel function (default 0)
-c cost : set the parameter C of C-SVC, epsilon-SVR, and nu-SVR (default 1)
-n nu : set the parameter nu of nu-SVC, one-class SVM, and nu-SVR (default 0.5)
-p epsilon : set the epsilon in loss function of epsilon-SVR (default 0.1)
-m cachesize : set cache memory size in MB (default 100)
-e epsilon : set tolerance of termination criterion (default 0.001)
-h shrinking : whether to use the shrinking heuristics, 0 or 1 (default 1)
-b probability_estimates : whether to train a SVC or SVR model for probability estimates, 0 or 1 (default 0)
-wi weight : set the parameter C of class i to weight*C, for C-SVC (default 1)
-v n: n-fold cross validation mode
-q : quiet mode (no outputs)
"""


def test_usage_starts_with_libsvms_text():
    assert USAGE.startswith(LIBSVM_USAGE)


# the solver functions that solver_kwargs feeds, by solver key
def solver_functions():
    from lasvm_cli.solvers import csvc, lasvm, lasvm_nc, s2do_batch, s2do_online

    return {"smo": csvc.solve_binary, "lasvm": lasvm.LasvmRun,
            **{s: lasvm_nc.solve_lasvm_g for s in ("lasvm-g", "full-svm", "lasvm-nc",
                                                    "lasvm-i")},
            "s2do": s2do_batch.solve_batch, "online": s2do_online.solve_online}


def test_every_kwarg_reaches_a_parameter_of_its_solver():
    """Each declared ``kwarg`` is a keyword parameter of the function of each solver that
    takes the option (the LASVM-G family's function forwards **options to LasvmGRun)."""
    from lasvm_cli.solvers.lasvm_nc import LasvmGRun

    functions = solver_functions()
    keys = {s for o in OPTIONS if o.kwarg for s in o.solvers or ()}
    assert keys <= set(functions), f"map {keys - set(functions)} to their functions above"
    for key, fn in functions.items():
        names = set(inspect.signature(fn).parameters)
        if key in ("lasvm-g", "full-svm", "lasvm-nc", "lasvm-i"):
            names |= set(inspect.signature(LasvmGRun).parameters)
        p = TrainParams(solver=key if key in C_SVC_SOLVERS else "smo" if key == "s2do" else key,
                        multiclass="llw" if key in ALL_IN_ONE_KEYS else "ovo")
        for kwarg in solver_kwargs(p, key):
            assert kwarg in names, (key, kwarg)


def test_every_field_is_read_by_the_package():
    """Each declared field is read outside the declarations and the parsers (an option nobody
    reads would be silently ignored)."""
    from lasvm_cli.solvers import tracking_K

    skip = {"base/options.py", "solvers/__init__.py", "cli/train.py"}
    text = "\n".join([p.read_text() for p in PACKAGE.rglob("*.py")
                      if str(p.relative_to(PACKAGE)) not in skip]
                     + [inspect.getsource(tracking_K)])  # beside the declarations
    for o in OPTIONS:
        if o.command or o.kwarg:
            continue
        assert re.search(rf"\.{o.field}\b|\"{o.field}\"|'{o.field}'", text), o.field


def estimators():
    from lasvm_cli.sklearn import SVC, SVR, NuSVC, NuSVR, OneClassSVM, OnlineSVC

    return SVC, NuSVC, SVR, NuSVR, OneClassSVM, OnlineSVC


def test_estimator_parameters_are_declared_options():
    """Each estimator parameter is a declared option (by its scikit-learn name) or one of
    scikit-learn's own; the batch estimators take every declared option that has a
    scikit-learn name (the regressors and one-class: but multiclass and random_state, which
    are about classes and their folds), with the declared default for lasvm-cli's options.
    The signatures stay written out (scikit-learn's get_params reads them); this test is what
    keeps them and the declarations together."""
    from lasvm_cli.sklearn.svm import EXTENSION_OPTIONS, SKLEARN_ONLY

    declared = {o.sklearn: o for o in OPTIONS if o.sklearn}
    declared_names = set(declared) - {"nu", "C", "epsilon", "probability", "class_weight"}
    for cls in estimators():
        params = cls().get_params()
        unknown = set(params) - set(declared) - set(SKLEARN_ONLY)
        assert not unknown, (cls.__name__, unknown)
        if cls.__name__ == "OnlineSVC":
            continue
        expected = set(declared_names)
        if cls.__name__ in ("SVR", "NuSVR", "OneClassSVM"):
            expected -= {"multiclass", "random_state"}
        missing = expected - set(params)
        assert not missing, (cls.__name__, missing)
        for o in EXTENSION_OPTIONS:
            if o.sklearn in params:
                assert params[o.sklearn] == o.default, (cls.__name__, o.sklearn)


@pytest.mark.parametrize("option", [o for o in OPTIONS if o.sklearn and o.parse is not None
                                    and o.field in ("wss", "epochs", "selection", "candidates",
                                                    "delta_max", "solver", "multiclass")],
                         ids=lambda o: o.sklearn)
def test_estimator_parameters_reach_train_params(option):
    import numpy as np

    from lasvm_cli.sklearn import SVC

    _, value = sample(option)
    if option.field == "solver":
        value = "lasvm"
    est = SVC(**{option.sklearn: value})
    p = est.train_params(np.ones((2, 2)))
    assert getattr(p, option.field) == value
