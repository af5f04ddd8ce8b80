"""`lasvm compile` (cli/precompile.py): after it, the first svm-train, svm-predict, svm-scale
and -b 1 runs of a fresh install load their compiled code instead of compiling it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import HEART

BIN = Path(sys.executable).parent
NOTICE = "compiling the numerical code"
pytestmark = pytest.mark.skipif(not (BIN / "lasvm").exists(),
                                reason="console scripts not installed beside this python")


def _env(cache):
    return dict(os.environ, NUMBA_CACHE_DIR=str(cache), LASVM_SERVER="0",
                LASVM_COMPILE_NOTICE="1")


def _run(env, *argv):
    res = subprocess.run([BIN / argv[0], *map(str, argv[1:])], env=env, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    return res


def test_first_commands_after_compile_load_from_the_cache(tmp_path):
    env = _env(tmp_path / "jit")
    res = _run(env, "lasvm", "compile", "--jobs", "2")
    assert "lasvm compile: 3 groups (train, predict, probability) in 2 processes" in res.stderr
    assert "finished in" in res.stderr
    model = tmp_path / "m"
    for argv in (("svm-train", HEART, model), ("svm-predict", HEART, model, tmp_path / "out"),
                 ("svm-scale", HEART), ("svm-train", "-b", "1", HEART, tmp_path / "mb"),
                 ("svm-predict", "-b", "1", HEART, tmp_path / "mb", tmp_path / "outb")):
        assert NOTICE not in _run(env, *argv).stderr, argv


def test_without_it_the_first_command_compiles(tmp_path):
    """The check above can fail: a fresh cache makes svm-scale compile (and say so)."""
    assert NOTICE in _run(_env(tmp_path / "jit"), "svm-scale", HEART).stderr


def test_every_solver_row_is_compiled_by_a_group():
    """`lasvm compile --all` trains every row of the dispatch table (a row's ``compile`` names
    its group; the default groups train SMO), each command a valid svm-train command line."""
    from lasvm_cli.cli.precompile import GROUPS, MORE_GROUPS, commands
    from lasvm_cli.cli.train import parse_command_line
    from lasvm_cli.solvers import SOLVERS, dispatch_key, stream_trainer
    from lasvm_cli.training.params import check_parameter

    trained = {}
    for name in (*GROUPS, *MORE_GROUPS):
        for argv in commands(name, "d"):
            if argv[0] == "svm-train":
                o = parse_command_line(argv[1:])
                assert check_parameter(o.params, given=o.given) is None, argv
                trained.setdefault(dispatch_key(o.params), name)
    for key, row in SOLVERS.items():
        # a row that shares its module and functions with a trained one shares its code
        assert any(SOLVERS[k][:3] == row[:3] for k in trained), key
        assert row.compile in MORE_GROUPS or (not row.compile and key in trained), key
    assert trained["smo"] == "train"
    streamed = set()
    for argv in commands("streams", "d"):
        o = parse_command_line(argv[1:])
        assert o.stream and check_parameter(o.params, given=o.given) is None, argv
        streamed.add(stream_trainer(o.params))
    assert streamed == {stream_trainer(parse_command_line(["--stream", "--multiclass", scheme,
                                                           "--solver", key, "f"]).params)
                        for key, row in SOLVERS.items() for scheme, _ in row.streams}
