"""The dispatch table's one signature and the run protocol (lasvm_cli/solvers/run.py): every
row's function trains a Machine, every run a solver starts implements its protocol, and a run
stepped by the driver in small chunks ends where the solver's own function ends."""

import inspect

import numpy as np
import pytest

from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.numerics.data import Problem
from lasvm_cli.numerics.classes import group_classes
from lasvm_cli.solvers import SOLVERS, Machine, _function, machine_of, solve, start
from lasvm_cli.solvers.run import Run, SavedRun
from lasvm_cli.training.params import TrainParams

from .conftest import HEART

# the runs of the solvers that train in steps, and whether the online driver saves them
STEPPED = {"lasvm": SavedRun, "lasvm-g": SavedRun, "full-svm": SavedRun, "lasvm-nc": SavedRun,
           "lasvm-i": SavedRun, "online": SavedRun, "track1": Run, "track2": Run,
           "track2-lasvm": Run, "rcd": Run}


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
