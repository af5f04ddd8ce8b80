"""svm-train --stream --solver lasvm through the online driver (training/stream.py): the
stream's run (solvers/lasvm_stream.py's LasvmStreamRun, LasvmRun fed by the file in blocks)
stepped by the one drive loop with the trace, stopping limits, snapshots and state files.

Oracles:
* the in-memory run in the stream's order: the online core's primitives over the whole file in
  memory (seeds, then every other example in file order, stopped after the same number of
  PROCESS calls, then the finishing step) give the streamed model's dual objective, iterations
  and SVs exactly (tests/test_stream.py's oracle, with a stop);
* the uninterrupted stream: a stream saved at a stop and resumed (at any block boundary, in
  the middle of a block, with a candidate window) writes the same model file, byte for byte;
  observers (trace, test set, snapshots, state saves) change no model.
"""

import numpy as np
import pytest
from click.testing import CliRunner

from lasvm_cli.cli.main import svm_train
from lasvm_cli.io.model_file import read_model, write_model
from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.numerics.classes import group_classes
from lasvm_cli.numerics.data import Problem
from lasvm_cli.solvers.lasvm_stream import LasvmStreamRun, start_stream
from lasvm_cli.solvers.run import SavedRun
from lasvm_cli.training.params import TrainParams
from lasvm_cli.training.stream import train_stream

from .conftest import HEART, RecordingBar
from .test_stream import file_order_lasvm


def params(gamma, C, solver="lasvm", **kw):
    return TrainParams(solver=solver, gamma=gamma, C=C, **kw)


def streamed(path, p, chunk_bytes=1 << 22, info=None):
    return train_stream(str(path), p, start_stream, chunk_bytes=chunk_bytes, info=info)


def model_bytes(model, tmp_path, name="m"):
    out = tmp_path / name
    write_model(model, str(out))
    return out.read_bytes()


def write_data(path, n, dim, density, seed, labels=(1, -1)):
    """Two Gaussian classes (shifted means), dense rows or sparse ones (``density`` of the
    features present), svmlight text."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        lab = labels[i % len(labels)] if i < 20 else labels[int(rng.integers(len(labels)))]
        x = rng.normal(0.6 * (1 if lab == labels[0] else -1), 1.0, dim)
        keep = rng.random(dim) < density
        keep[int(rng.integers(dim))] = True
        lines.append(f"{lab} " + " ".join(f"{j + 1}:{x[j]:.6g}" for j in np.flatnonzero(keep)))
    path.write_text("\n".join(lines) + "\n")
    return path


def shuffled(src, dst, seed):
    lines = src.read_text().splitlines()
    order = np.random.default_rng(seed).permutation(len(lines))
    dst.write_text("\n".join(lines[i] for i in order) + "\n")
    return dst


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    """heart_scale and generated dense / sparse sets, each in file order and shuffled."""
    d = tmp_path_factory.mktemp("sets")
    heart = d / "heart"
    heart.write_bytes(open(HEART, "rb").read())
    base = {"heart": heart,
            "dense": write_data(d / "dense", 240, 8, 1.0, 3),
            "sparse": write_data(d / "sparse", 240, 60, 0.08, 4, labels=(2, 7))}
    out = {}
    for name, path in base.items():
        out[name, 0] = path
        out[name, 1] = shuffled(path, d / f"{name}-shuffled", 11)
    return out


def test_the_stream_run_is_a_saved_run(tmp_path):
    run = start_stream(HEART, params(0.07, 1.0))
    assert isinstance(run, SavedRun) and isinstance(run, LasvmStreamRun)


@pytest.mark.parametrize("name", ["heart", "dense", "sparse"])
@pytest.mark.parametrize("order", [0, 1])
def test_sweep_streamed_is_in_memory_in_file_order_and_resumes(sets, tmp_path, name, order):
    """2 C x 2 gamma: the streamed model (whole, and stopped halfway) is the in-memory run's
    in the same order; a stream saved at the stop and resumed (small blocks: the save falls
    inside a block) writes the uninterrupted model; not degenerate (both classes among the
    SVs, training accuracy near SMO's)."""
    from lasvm_cli.training.train import train

    path = sets[name, order]
    d = read_svmlight(path)
    n = d.y.size
    for C in (1.0, 10.0):
        for gamma in (0.05, 0.5):
            whole = streamed(path, params(gamma, C), chunk_bytes=900)
            obj, _, n_sv, iters = file_order_lasvm(path, gamma, C)
            assert (whole.counters["obj"], whole.total_sv, whole.counters["iterations"]) == \
                (obj, n_sv, iters), (C, gamma)
            stop = n // 2
            half = streamed(path, params(gamma, C, stop_iterations=stop))
            assert (half.counters["obj"], half.total_sv) == \
                file_order_lasvm(path, gamma, C, stop=stop)[::2], (C, gamma)
            state = tmp_path / f"s-{C}-{gamma}"
            streamed(path, params(gamma, C, stop_iterations=stop, save_state=str(state)),
                     chunk_bytes=700)
            resumed = streamed(path, params(gamma, C, resume=str(state)), chunk_bytes=1300)
            assert model_bytes(resumed, tmp_path, "a") == model_bytes(whole, tmp_path, "b")
            assert (whole.nSV > 0).all()
            smo = train(Problem.from_svmlight(d, kernel_type=2), params(gamma, C, solver="smo"))
            acc = lambda m: float((m.predict(Problem.from_svmlight(d).kd) == d.y).mean())  # noqa
            assert acc(whole) >= acc(smo) - 0.05, (C, gamma)


@pytest.mark.parametrize("selection", ["random", "gradient", "active", "autoactive"])
@pytest.mark.parametrize("finish", [True, False])
def test_resume_anywhere_is_the_uninterrupted_stream(tmp_path, selection, finish):
    """Stops at several places (a seed block, the middle of a block, after the file's end in
    the window's last rows, the finishing phase: --stop-iterations of the whole pass) saved
    and resumed: the uninterrupted model, byte for byte, for every selection."""
    kw = dict(selection=selection, candidates=7, finish=finish)
    whole = model_bytes(streamed(HEART, params(0.07, 1.0, **kw), chunk_bytes=600), tmp_path)
    for stop in (10, 37, 150, 269, 100000):
        state = tmp_path / f"s{stop}"
        streamed(HEART, params(0.07, 1.0, stop_iterations=stop, save_state=str(state), **kw),
                 chunk_bytes=600)
        lines = []
        resumed = streamed(HEART, params(0.07, 1.0, resume=str(state), **kw), chunk_bytes=500,
                           info=lines.append)
        assert model_bytes(resumed, tmp_path, "r") == whole, stop
        # it went on from the saved state (not from the file's start)
        phase = "online" if stop < 270 else "done"
        assert lines[0].startswith(f"resumed {state}: {phase} phase, {min(stop, 270)} "), lines


def run_cli(*args):
    r = CliRunner().invoke(svm_train, [str(a) for a in args])
    return r


def test_every_observer_through_the_cli(tmp_path):
    """--trace with --test, --snapshots, --save-state (saved after every step), a stopping
    limit: each observer acted, no model changed: the snapshot at 100 is the model stopped at
    100; the traced, snapshotted and saving run ends with the plain stream's model; the trace's
    final test error is the model's."""
    g = ["-g", "0.07", "--stream", "--solver", "lasvm", "-q"]
    plain, traced, stopped = tmp_path / "plain", tmp_path / "traced", tmp_path / "stopped"
    assert run_cli(*g, HEART, plain).exit_code == 0
    r = run_cli(*g, "--trace", tmp_path / "t.csv", "--trace-every", 25, "--test", HEART,
                "--snapshots", "100,200", "--save-state", tmp_path / "s", "--save-every", 0,
                HEART, traced)
    assert r.exit_code == 0, r.stderr
    assert r.stderr == ""
    assert (tmp_path / "s").exists()
    r = run_cli(*g, "--stop-iterations", 100, HEART, stopped)
    assert r.exit_code == 0, r.stderr
    # the snapshots end the online phase at their last value (LaSVM 1.1's -l)
    assert (tmp_path / "traced.100").read_bytes() == stopped.read_bytes()
    assert (tmp_path / "traced.200").exists()
    rows = [line.split(",") for line in (tmp_path / "t.csv").read_text().splitlines()]
    assert rows[0][:8] == ["iterations", "seconds", "kernel_evals", "sv", "delta",
                           "dual_objective", "test_error", "phase"]
    its = [int(row[0]) for row in rows[1:]]
    assert its == sorted(its) and its[0] == 10 and rows[-1][7] == "final"
    assert [int(i) for i in its[1:-1]] == list(range(25, 201, 25))
    m = read_model(traced)
    d = read_svmlight(HEART)
    err = float(np.mean(m.predict(Problem.from_svmlight(d).kd) != d.y))
    assert float(rows[-1][6]) == pytest.approx(err, abs=1e-6)
    assert int(rows[-1][3]) == m.total_sv
    # without the snapshots' stop: the plain model
    r = run_cli(*g, "--trace", tmp_path / "t2.csv", "--test", HEART, "--save-state",
                tmp_path / "s2", HEART, traced)
    assert r.exit_code == 0 and traced.read_bytes() == plain.read_bytes()


def test_cli_resume_lines_and_model(tmp_path):
    """The CLI's stop / resume: LIBSVM's lines of the resumed run, the uninterrupted model."""
    g = ["-g", "0.07", "--stream", "--solver", "lasvm"]
    assert run_cli(*g, "-q", HEART, tmp_path / "whole").exit_code == 0
    r = run_cli(*g, "--stop-iterations", 120, "--save-state", tmp_path / "s", HEART,
                tmp_path / "stopped")
    assert r.exit_code == 0 and "stopped at 120 iterations" in r.stdout
    r = run_cli(*g, "--resume", tmp_path / "s", HEART, tmp_path / "resumed")
    assert r.exit_code == 0, r.stderr
    assert "resumed" in r.stdout and "Total nSV =" in r.stdout
    assert (tmp_path / "resumed").read_bytes() == (tmp_path / "whole").read_bytes()


def test_resume_refuses_another_file_or_kind(tmp_path):
    g = ["-g", "0.07", "--solver", "lasvm", "-q"]
    other = tmp_path / "other"
    other.write_text("".join(open(HEART).readlines()[:200]))
    assert run_cli(*g, "--stream", "--stop-iterations", 50, "--save-state", tmp_path / "s",
                   HEART, tmp_path / "m").exit_code == 0
    r = run_cli(*g, "--stream", "--resume", tmp_path / "s", other, tmp_path / "m2")
    assert r.exit_code == 1 and "other training data" in r.stderr
    r = run_cli(*g, "--resume", tmp_path / "s", HEART, tmp_path / "m3")  # in memory
    assert r.exit_code == 1 and r.stderr.startswith("ERROR: ") and "Traceback" not in r.stderr
    assert not (tmp_path / "m2").exists() and not (tmp_path / "m3").exists()


def test_bad_row_mid_stream_leaves_no_output(tmp_path):
    """An input error after training began: FILE:LINE: ..., exit 1, and no model, trace,
    snapshot or state file."""
    lines = open(HEART).read().splitlines()
    bad = tmp_path / "bad"
    bad.write_text("\n".join(lines[:200] + ["+1 1:0.5 3:x"] + lines[200:]) + "\n")
    r = run_cli("-g", "0.07", "--stream", "--solver", "lasvm", "-q", "--trace",
                tmp_path / "t", "--snapshots", "50", "--save-state", tmp_path / "s",
                "--save-every", 0, bad, tmp_path / "m")
    assert r.exit_code == 1
    assert r.stderr.startswith(f"{bad}:201: "), r.stderr
    assert "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad"]


# ---------------------------------------------------------------------------------------------
# LASVM-G, -NC, -I, FULL SVM (solvers/lasvm_g_stream.py's LasvmGStreamRun)

G_SOLVERS = ["lasvm-g", "lasvm-nc", "lasvm-i", "full-svm"]


@pytest.mark.parametrize("solver", G_SOLVERS)
@pytest.mark.parametrize("finish_tau", [False, True])
def test_g_family_resumes_anywhere_and_observers_change_nothing(tmp_path, solver, finish_tau):
    """Stopped and saved at several places (mid-block, after the last row) and resumed: the
    uninterrupted model; a stop's model is the snapshot's at the same place; a traced run
    (with its gap column) ends with the plain model."""
    from lasvm_cli.solvers.lasvm_g_stream import LasvmGStreamRun, start_stream_g

    def run(chunk=600, info=None, **kw):
        p = TrainParams(solver=solver, gamma=0.07, C=1.0, finish_tau=finish_tau,
                        clean_every=20, clean_keep=15, **kw)
        return train_stream(str(HEART), p, start_stream_g, chunk_bytes=chunk, info=info)

    assert isinstance(start_stream_g(HEART, TrainParams(solver=solver, gamma=0.07)),
                      LasvmGStreamRun)
    whole = model_bytes(run(), tmp_path)
    for stop in (33, 140, 270):
        state = tmp_path / f"s{stop}"
        stopped = run(stop_iterations=stop, save_state=str(state))
        lines = []
        resumed = run(chunk=450, resume=str(state), info=lines.append)
        assert model_bytes(resumed, tmp_path, "r") == whole, stop
        assert lines[0].startswith(f"resumed {state}: "), lines
        if stop < 270:
            run(snapshots=str(stop), model_file=str(tmp_path / "snap"))
            assert (tmp_path / f"snap.{stop}").read_bytes() == \
                model_bytes(stopped, tmp_path, "st"), stop
    traced = run(trace=str(tmp_path / "t.csv"), trace_every=50, test_file=str(HEART))
    assert model_bytes(traced, tmp_path, "tr") == whole
    rows = [line.split(",") for line in (tmp_path / "t.csv").read_text().splitlines()]
    assert rows[0][-1] == "gap" and rows[-1][7] == "final" and len(rows) >= 6
    assert all(0 <= float(r[6]) <= 1 for r in rows[1:])


def test_g_stream_cli_with_the_long_run_options(tmp_path):
    g = ["-g", "0.07", "--stream", "--solver", "lasvm-i", "-q"]
    assert run_cli(*g, HEART, tmp_path / "whole").exit_code == 0
    r = run_cli(*g, "--stop-iterations", 100, "--save-state", tmp_path / "s", "--trace",
                tmp_path / "t", "--test", HEART, HEART, tmp_path / "m")
    assert r.exit_code == 0, r.stderr
    r = run_cli(*g, "--resume", tmp_path / "s", "--trace", tmp_path / "t", HEART,
                tmp_path / "m")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "m").read_bytes() == (tmp_path / "whole").read_bytes()


@pytest.mark.parametrize("solver", ["lasvm", "lasvm-g"])
def test_saved_in_the_finishing_phase(tmp_path, solver):
    """A state taken in the finishing phase (Ctrl-C or --save-every there) put back into a
    fresh run (no file reopened) ends with the uninterrupted model."""
    from lasvm_cli.solvers.lasvm import PH_FINISH
    from lasvm_cli.solvers.lasvm_g_stream import start_stream_g

    p = TrainParams(solver=solver, gamma=0.07, C=10.0, finish_tau=solver != "lasvm")
    begin = start_stream if solver == "lasvm" else start_stream_g

    def to_end(run):
        while not run.done:
            run.step(3)
        return run.result().model

    whole = model_bytes(to_end(_begun(begin, p)), tmp_path, "w")
    run = _begun(begin, p)
    while run.phase != PH_FINISH:
        run.step(50)
    run.step(3)
    assert run.phase == PH_FINISH
    other = begin(str(HEART), p)
    other.load_state_arrays(run.state_arrays(), run.phase)
    assert model_bytes(to_end(other), tmp_path, "o") == whole


def _begun(begin, p):
    run = begin(str(HEART), p, chunk_bytes=800)
    run.begin()
    return run


@pytest.mark.parametrize("solver", G_SOLVERS)
@pytest.mark.parametrize("finish_tau", [False, True])
def test_g_family_stopped_stream_is_the_in_memory_run_stopped_in_file_order(tmp_path, solver,
                                                                            finish_tau):
    """--stop-iterations N on the stream: the model of the in-memory LasvmGRun that took the
    file's first N rows in file order and then ended (tests/test_stream.py's driver), byte for
    byte."""
    from lasvm_cli.solvers.lasvm_g_stream import start_stream_g
    from lasvm_cli.training.train import train

    from .test_stream import g_file_order_driver, model_text

    d = read_svmlight(HEART)
    order = np.argsort(group_classes(d.y)[3]).astype(np.int64)
    p = TrainParams(solver=solver, gamma=1 / 13, C=1.0, finish_tau=finish_tau)
    full = model_text(train_stream(str(HEART), p, start_stream_g), tmp_path / "f")
    for stop in (60, 150):
        p = TrainParams(solver=solver, gamma=1 / 13, C=1.0, finish_tau=finish_tau)
        mem = train(Problem.from_svmlight(d, kernel_type=2), p,
                    driver=g_file_order_driver(order[:stop]))
        p.stop_iterations = stop
        m = train_stream(str(HEART), p, start_stream_g, chunk_bytes=2000)
        assert model_text(m, tmp_path / "s") == model_text(mem, tmp_path / "m"), stop
        assert model_text(m, tmp_path / "s") != full  # it did stop


@pytest.mark.parametrize("solver", ["lasvm", "lasvm-i"])
def test_progress_bar_is_an_observer_of_the_stream(solver):
    """The progress bar's callback after each step: the run's own title, rows processed
    growing to the pass's end, closed once."""
    from lasvm_cli.solvers.lasvm_g_stream import start_stream_g

    calls = []

    begin = start_stream if solver == "lasvm" else start_stream_g
    p = TrainParams(solver=solver, gamma=0.07, C=1.0, stop_iterations=200)
    train_stream(str(HEART), p, begin, chunk_bytes=900, progress=RecordingBar.into(calls))
    assert calls[0] == ("title", f"{'LASVM' if solver == 'lasvm' else solver} stream")
    done = [c[1] for c in calls if c[0] == "update"]
    assert len(done) >= 5 and done == sorted(done) and done[-1] >= 200
    assert calls[-1] == ("close",) and calls.count(("close",)) == 1
