"""The dispatch table's one signature and the run protocol (lasvm_cli/solvers/run.py): every
row's function trains a Machine, every run a solver starts implements its protocol, and a run
stepped by the driver in small chunks ends where the solver's own function ends."""

import inspect
from types import SimpleNamespace

import numpy as np
import pytest

from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.numerics.data import Problem
from lasvm_cli.numerics.classes import group_classes
from lasvm_cli.solvers import SOLVERS, Machine, _function, machine_of, solve, start
from lasvm_cli.solvers.run import SavedRun, TrackedRun
from lasvm_cli.training.params import TrainParams

from .conftest import HEART

# the runs of the solvers that train in steps, and whether the online driver saves them
STEPPED = {"lasvm": SavedRun, "lasvm-g": SavedRun, "full-svm": SavedRun, "lasvm-nc": SavedRun,
           "lasvm-i": SavedRun, "online": SavedRun, "track1": TrackedRun, "track2": TrackedRun,
           "track2-lasvm": TrackedRun, "rcd": TrackedRun}


def test_every_row_has_the_one_signature():
    for key in SOLVERS:
        params = list(inspect.signature(_function(key, "function")).parameters)
        assert params[:3] == ["machine", "params", "progress"], key
        if SOLVERS[key].start:
            assert list(inspect.signature(_function(key, "start")).parameters)[:2] == \
                ["machine", "params"], key
    assert {k for k, v in SOLVERS.items() if v.start} == set(STEPPED)


@pytest.fixture(scope="module")
def heart():
    d = read_svmlight(str(HEART))
    return Problem.from_svmlight(d, kernel_type=2)


def _machine(problem, key):
    if key == "online":
        p = TrainParams(multiclass="cs", solver="online", gamma=0.1)
        _, _, count, perm = group_classes(problem.y)
        yc = np.repeat(np.arange(count.size), count).astype(np.int64)
        from lasvm_cli.numerics.data import subset

        return machine_of(subset(problem.kd, perm), yc, p.C, p.C, p, count.size), p
    p = TrainParams(solver=key, gamma=0.1)
    y = np.where(problem.y > 0, 1.0, -1.0)
    return machine_of(problem.kd, y, 1.0, 1.0, p), p


@pytest.mark.parametrize("key", sorted(STEPPED))
def test_each_run_implements_its_protocol_and_ends_as_the_solver(heart, key):
    machine, params = _machine(heart, key)
    assert isinstance(machine, Machine)
    run = start(machine, params)
    run.begin()
    assert isinstance(run, STEPPED[key]), key  # its counters are there once it has begun
    while not run.done:  # small steps, as a driver cutting at trace rows
        run.step(7)
    assert run.processed > 0 and run.kernel_evals > 0
    driven, whole = run.result(), solve(machine, params)
    np.testing.assert_array_equal(driven.coef, whole.coef)
    np.testing.assert_array_equal(driven.rho, whole.rho)


def test_the_batch_rows_have_no_run():
    for key in ("smo", "nu_svc", "one_class", "epsilon_svr", "nu_svr", "s2do"):
        assert SOLVERS[key].start is None


@pytest.mark.parametrize("key", sorted(STEPPED))
def test_each_run_goes_through_the_one_loop_with_every_observer(heart, key, tmp_path,
                                                                monkeypatch):
    """Every run class through the drive loop (training/drive.py) with every observer that
    applies to it: the progress bar, a trace with a test set, a state file saved at every
    step; then stopping limits and snapshots. Unstopped, the driven run ends where the
    solver's own function ends."""
    from lasvm_cli.training.online_options import OnlineOptions
    from lasvm_cli.training.run_control import OnlineControl
    from lasvm_cli.training.test_set import TestSet
    from lasvm_cli.training.tracking_control import trace_run

    machine, params = _machine(heart, key)
    whole = solve(machine, params)
    calls = []
    if STEPPED[key] is TrackedRun:
        rows = trace_run(start(machine, params), 50, error=lambda r: 0.0,
                         progress=lambda *a: calls.append(a))
        assert len(rows) >= 2 and calls
        run = start(machine, params)
        trace_run(run)
        np.testing.assert_array_equal(run.result().coef, whole.coef)
        _tracked_through_the_online_driver(heart, key, machine, params, whole, tmp_path,
                                           monkeypatch)
        return
    # an all-in-one machine: its classes' labels in class-index order; a binary one: (+1, -1)
    machines = [tuple(group_classes(heart.y)[0])] if key == "online" else [(1.0, -1.0)]
    test = TestSet(str(HEART), heart)
    trace, state = tmp_path / "t.csv", tmp_path / "s.npz"
    control = OnlineControl(OnlineOptions(trace=str(trace), trace_every=40, save_state=str(state),
                                          save_every=0), machines=machines, test=test)
    res = control.drive(start(machine, params), lambda *a: calls.append(a))
    control.close()
    np.testing.assert_array_equal(res.coef, whole.coef)
    assert calls and state.exists()
    lines = trace.read_text().splitlines()
    assert len(lines) >= 3 and lines[-1].split(",")[7] == "final"
    assert all(0 <= float(line.split(",")[6]) <= 1 for line in lines[1:])

    # the trainer's model assembly and writing are not this test's: the results are recorded
    import lasvm_cli.io.model_file as model_file

    written = []
    monkeypatch.setattr(model_file, "write_model", lambda model, path: written.append(path))
    stopped = OnlineControl(OnlineOptions(stop_iterations=30, snapshots="10,20",
                                          model_file=str(tmp_path / "m")), machines=machines,
                            build_model=lambda results: SimpleNamespace(nSV=np.ones(1)))
    res = stopped.drive(start(machine, params))
    assert stopped.stop_reason == "last snapshot (iterations 20)"
    assert written == [str(tmp_path / "m.10"), str(tmp_path / "m.20")]
    assert res.coef.shape == whole.coef.shape


def _tracked_through_the_online_driver(heart, key, machine, params, whole, tmp_path,
                                       monkeypatch):
    """A tracking run through the online driver (TrackControl, an OnlineControl): the
    progress bar, its gap trace with a test set, a state file saved at every step; then
    stopping limits and snapshots."""
    from lasvm_cli.training.online_options import OnlineOptions
    from lasvm_cli.training.test_set import TestSet
    from lasvm_cli.training.tracking_control import TrackControl

    rows = np.arange(heart.n, dtype=np.int64)
    machines = [(rows, (1.0, -1.0))]
    trace, state, calls = tmp_path / "tt.csv", tmp_path / "ts.npz", []
    control = TrackControl(params, machines, OnlineOptions(
        trace=str(trace), trace_every=40, save_state=str(state), save_every=0),
        test=TestSet(str(HEART), heart))
    res = control.solve(machine, params, lambda *a: calls.append(a))
    control.close()
    np.testing.assert_array_equal(res.coef, whole.coef)
    assert calls and state.exists()
    lines = trace.read_text().splitlines()
    assert len(lines) >= 3 and all(0 <= float(line.split(",")[7]) <= 1 for line in lines[1:])

    import lasvm_cli.io.model_file as model_file

    written = []
    monkeypatch.setattr(model_file, "write_model", lambda model, path: written.append(path))
    stopped = TrackControl(params, machines, OnlineOptions(
        stop_iterations=30, snapshots="10,20", model_file=str(tmp_path / "tm")),
        build_model=lambda results: SimpleNamespace(nSV=np.ones(1)))
    res = stopped.solve(machine, params)
    assert stopped.stop_reason == "last snapshot (iterations 20)"
    assert written == [str(tmp_path / "tm.10"), str(tmp_path / "tm.20")]
    assert res.coef.shape == whole.coef.shape


# Every run class of lasvm_cli.solvers, and the test that drives it through the one loop with
# every observer (a trace with a test set, a state file, stopping limits, snapshots): this
# file's for the in-memory runs, the stream files' for the runs fed by a file.
EVERY_OBSERVER = "test_each_run_goes_through_the_one_loop_with_every_observer"
DRIVEN = {"LasvmRun": EVERY_OBSERVER, "LasvmGRun": EVERY_OBSERVER, "S2doRun": EVERY_OBSERVER,
          "TrackRun": EVERY_OBSERVER,
          "LasvmStreamRun": "test_stream_driven.test_every_observer_through_the_cli",
          "LasvmGStreamRun": "test_stream_driven.test_g_stream_cli_with_the_long_run_options",
          "OvrStreamRun": "test_stream_ovr_driven.test_cli_long_run_options",
          "S2doStreamRun": "test_stream_allinone_driven.test_cli_long_run_options"}


def test_every_run_class_is_driven_through_the_one_loop():
    """A class of lasvm_cli.solvers with a run's begin, step and result is listed in DRIVEN,
    and its test exists: a new run class fails here until a test drives it."""
    import importlib
    import pkgutil
    import sys

    import lasvm_cli.solvers as solvers

    found = set()
    for info in pkgutil.iter_modules(solvers.__path__):
        module = importlib.import_module(f"lasvm_cli.solvers.{info.name}")
        found |= {name for name, obj in vars(module).items()
                  if isinstance(obj, type) and obj.__module__ == module.__name__
                  and not getattr(obj, "_is_protocol", False)
                  and all(callable(getattr(obj, a, None)) for a in ("begin", "step", "result"))}
    assert found == set(DRIVEN)
    for where in DRIVEN.values():
        module_name, _, test = where.rpartition(".")
        module = importlib.import_module(f"{__package__}.{module_name}") if module_name \
            else sys.modules[__name__]
        assert callable(getattr(module, test, None)), where


def test_the_runs_implement_the_protocols_for_a_type_checker(tmp_path, monkeypatch):
    """mypy on tests/typecheck_runs.py: each run class provides its protocol's members."""
    api = pytest.importorskip("mypy.api")
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("MYPYPATH", str(root))  # the package's source, not an installed copy

    def check(path):
        return api.run([str(path), "--follow-imports=silent", "--ignore-missing-imports",
                        "--cache-dir", str(tmp_path / "mypy-cache"), "--no-error-summary"])

    out, err, status = check(root / "tests" / "typecheck_runs.py")
    assert status == 0, out + err
    # the check sees the classes: a run that is not the protocol fails it
    wrong = tmp_path / "wrong.py"
    wrong.write_text("from lasvm_cli.solvers.lasvm import LasvmRun\n"
                     "from lasvm_cli.solvers.run import TrackedRun\n\n\n"
                     "def f(r: LasvmRun) -> TrackedRun:\n    return r\n")
    out, _, status = check(wrong)
    assert status == 1 and "Incompatible return value type" in out
