"""svm-train's LIBSVM argv dialect, from a table (no solver involved)."""

import pytest

from lasvm_cli.base.options import atof, atoi
from lasvm_cli.cli.report import UsageExit
from lasvm_cli.cli.train import parse_command_line
from lasvm_cli.training.params import TrainParams, check_parameter


@pytest.mark.parametrize("text,value", [("5", 5.0), ("1e-3", 1e-3), ("abc", 0.0), ("2x", 2.0),
                                        (".5", 0.5), ("-3", -3.0), ("+1E2", 100.0)])
def test_atof_reads_a_numeric_prefix(text, value):
    assert atof(text) == value


@pytest.mark.parametrize("text,value", [("5", 5), ("-2", -2), ("3.7", 3), ("x", 0)])
def test_atoi_reads_an_integer_prefix(text, value):
    assert atoi(text) == value


@pytest.mark.parametrize("argv,field,value", [
    (["-c", "10", "f"], "C", 10.0),
    (["-cost", "5", "f"], "C", 5.0),  # only the first letter counts, as LIBSVM
    (["-gamma", "2", "f"], "gamma", 2.0),
    (["-t", "0", "f"], "kernel_type", 0),
    (["-h", "0", "f"], "shrinking", 0),  # -h is shrinking, never help
    (["-m", "40", "f"], "cache_size", 40.0),
    (["-e", "0.01", "f"], "eps", 0.01),
    (["-b", "1", "f"], "probability", 1),
    (["-d", "2", "f"], "degree", 2),
    (["-r", "1.5", "f"], "coef0", 1.5),
    (["--wss", "hmg", "f"], "wss", "hmg"),
    (["--wss=mvp", "f"], "wss", "mvp"),
    (["--solver", "lasvm", "--epochs", "3", "f"], "epochs", 3),
    (["--no-finish", "f"], "finish", False),
    (["--seed", "7", "f"], "seed", 7),
])
def test_options(argv, field, value):
    o = parse_command_line(argv)
    assert getattr(o.params, field) == value
    assert o.input_file == "f"


def test_weights_take_the_label_from_the_flag():
    o = parse_command_line(["-w1", "2", "-w-1", "0.5", "-w3", "4", "train"])
    assert o.params.weights == {1: 2.0, -1: 0.5, 3: 4.0}


def test_default_model_name_is_basename_plus_model():
    assert parse_command_line(["dir/sub/heart"]).model_file == "heart.model"
    assert parse_command_line(["dir/heart", "out.m"]).model_file == "out.m"


def test_quiet_and_cross_validation():
    o = parse_command_line(["-q", "-v", "5", "f"])
    assert o.quiet and o.nr_fold == 5


@pytest.mark.parametrize("argv,prefix", [
    ([], None),
    (["-c"], None),
    (["-c", "1"], None),
    (["-x", "1", "f"], "Unknown option: -x"),
    (["-v", "1", "f"], "n-fold cross validation: n must >= 2"),
])
def test_usage_errors(argv, prefix):
    with pytest.raises(UsageExit) as e:
        parse_command_line(argv)
    assert e.value.prefix == prefix
    assert e.value.usage.startswith("Usage: svm-train [options] training_set_file [model_file]")


@pytest.mark.parametrize("word,message", [
    ("--bogus", "Unknown option: --bogus\n"),
    ("--epoch", "Unknown option: --epoch (did you mean --epochs?)\n"),
    ("--solver-lasvm", "Unknown option: --solver-lasvm (did you mean --solver?)\n"),
])
def test_unknown_long_option_is_named_without_the_usage(word, message, capsys):
    """A mistyped long option: its name and the closest option, not 120 lines of usage that
    scroll it away (LIBSVM's own short options keep LIBSVM's usage, above)."""
    from lasvm_cli.cli.report import run_guarded
    from lasvm_cli.cli.train import main

    assert run_guarded(main, [word, "1", "f"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == message + "Run svm-train without arguments for its options.\n"


@pytest.mark.parametrize("changes,message", [
    (dict(C=0), "C <= 0"),
    (dict(eps=0), "eps <= 0"),
    (dict(cache_size=-1), "cache_size <= 0"),
    (dict(gamma=-1), "gamma < 0"),
    (dict(kernel_type=1, degree=-1), "degree of polynomial kernel < 0"),
    (dict(shrinking=2), "shrinking != 0 and shrinking != 1"),
    (dict(probability=3), "probability != 0 and probability != 1"),
    (dict(svm_type=7), "unknown svm type"),
    (dict(kernel_type=9), "unknown kernel type"),
])
def test_check_parameter_messages(changes, message):
    p = TrainParams(**changes)
    assert check_parameter(p) == message


def test_lasvm_names_what_is_supported():
    assert check_parameter(TrainParams(svm_type=3)) is None
    msg = check_parameter(TrainParams(svm_type=3, solver="lasvm"))
    assert "-s 0 (C-SVC) only" in msg and "--solver smo" in msg
    assert "--wss so" in check_parameter(TrainParams(svm_type=1, wss="mvp"))
    assert check_parameter(TrainParams(svm_type=2, wss="mvp")) is None


def test_nu_infeasible():
    assert check_parameter(TrainParams(svm_type=1, nu=0.5), [10, 3]) == \
        "specified nu is infeasible"
    assert check_parameter(TrainParams(svm_type=1, nu=0.4), [10, 3]) is None
    assert check_parameter(TrainParams(svm_type=1, nu=1.5), [10, 3]) == "nu <= 0 or nu > 1"
