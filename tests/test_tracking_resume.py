"""Long runs of the tracking solvers (solvers/tracking.py's TrackRun through the online driver,
training/tracking_control.py): a run stopped or interrupted (Ctrl-C) with --save-state and
continued with --resume ends with the uninterrupted run's model, byte for byte, for every
algorithm and teacher; --snapshots writes the models along the way; a resume with other
options, or from a damaged state file, is one clear error line."""

import contextlib
import os
import signal

import numpy as np
import pytest

from lasvm_cli.cli.main import svm_train

from .conftest import HEART, run_cli

# every algorithm with every teacher (rcd has none: random coordinates over all the examples),
# and each output: w(abar) (tracking's default; rcd's --average, the mean of all its iterates)
# and w(alpha) (--no-average; rcd's default)
CASES = [(alg, teacher, ()) for alg in ("track1", "track2", "track2-lasvm")
         for teacher in ("sequential", "shuffle", "active", "adversarial")] + [
    ("track1", "shuffle", ("--no-average",)), ("track2", "active", ("--no-average",)),
    ("rcd", None, ()), ("rcd", None, ("--average",))]
L = 270  # heart_scale's rows
K = 3


def train(*args, code=0):
    return run_cli(svm_train, [*args], code)


def options(alg, teacher, C, gamma, seed):
    args = ["--solver", alg, "-K", K, "-c", C, "-g", gamma, "--seed", seed]
    if teacher is not None:
        args += ["--teacher", teacher, "--pool", 10]
    return args


@pytest.mark.parametrize("alg, teacher, output", CASES)
def test_stopped_saved_and_resumed_is_the_uninterrupted_run(tmp_path, alg, teacher, output):
    """Two C/gamma settings, two seeds; stopped near the start, in the middle and one unit
    before the end (examples; rcd: coordinate steps), saved, resumed: the uninterrupted model,
    byte for byte."""
    end = K * L if alg == "rcd" else L
    for C, gamma in ((1.0, 0.1), (10.0, 0.5)):
        for seed in (1, 2):
            opts = [*options(alg, teacher, C, gamma, seed), *output]
            whole = tmp_path / "whole"
            train("-q", *opts, HEART, whole)
            for stop in (3, end // 2, end - 1):
                state, model = tmp_path / f"s{stop}", tmp_path / f"m{stop}"
                out = train(*opts, "--stop-iterations", stop, "--save-state", state, HEART,
                            model).stdout
                assert f"stopped at {stop} iterations (--stop-iterations {stop})" in out
                out = train(*opts, "--resume", state, HEART, model).stdout
                assert out.startswith(f"resumed {state}: online phase, {stop} iterations, ")
                assert model.read_bytes() == whole.read_bytes(), (C, gamma, seed, stop)


@contextlib.contextmanager
def ctrl_c_at(monkeypatch, machine, processed):
    """A Ctrl-C (SIGINT to this process, caught by the state saver's handler) after the first
    step of binary machine ``machine`` that reaches ``processed``."""
    from lasvm_cli.training.state_file import StateSaver
    from lasvm_cli.training.tracking_control import TrackControl

    after_step = StateSaver.after_step
    sent = []
    controls = []
    init = TrackControl.__init__

    def record(self, *a, **kw):
        init(self, *a, **kw)
        controls.append(self)

    def interrupting(self, run, drive):
        if not sent and controls[-1].index == machine and run.processed >= processed:
            sent.append(run.processed)
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends
        after_step(self, run, drive)

    monkeypatch.setattr(TrackControl, "__init__", record)
    monkeypatch.setattr(StateSaver, "after_step", interrupting)
    yield sent
    monkeypatch.undo()


@pytest.fixture(scope="module")
def three_classes(tmp_path_factory):
    """200 dense rows of three classes in 5 dimensions (Gaussian blobs)."""
    rng = np.random.default_rng(3)
    y = rng.integers(1, 4, 200)
    x = rng.normal(size=(200, 5)) + y[:, None] * 0.7
    path = tmp_path_factory.mktemp("data") / "three"
    path.write_text("".join(f"{c} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row))
                            + "\n" for c, row in zip(y, x)))
    return path


@pytest.mark.parametrize("alg, teacher, multiclass", [
    ("track2", "shuffle", "ovo"), ("track1", "active", "ovr"), ("rcd", None, "ovo")])
def test_ctrl_c_saves_and_resume_finishes_every_machine(tmp_path, monkeypatch, three_classes,
                                                        alg, teacher, multiclass):
    """Three classes (three binary machines): Ctrl-C in the second machine saves the state
    (the first machine's block and the second's) and exits 130 with one line and no model;
    --resume ends with the uninterrupted model, its snapshot and its trace rows (seconds aside,
    and kernel evaluations: a resumed run's cache starts empty)."""
    from lasvm_cli.cli.report import run_guarded
    from lasvm_cli.cli.train import main
    from lasvm_cli.tools.plot import read_trace

    opts = [str(a) for a in options(alg, teacher, 1.0, 0.2, 1)]
    opts += ["--multiclass", multiclass, "--snapshots", "20,10000", "--trace-every", "15"]
    whole, state, model = tmp_path / "whole", tmp_path / "s", tmp_path / "m"
    train("-q", *opts, "--trace", tmp_path / "tw", "--runs", 2, three_classes, whole)
    with ctrl_c_at(monkeypatch, 1, 40) as sent:
        code = run_guarded(main, ["-q", *opts, "--trace", str(tmp_path / "t"), "--runs", "2",
                                  "--save-state", str(state), str(three_classes), str(model)])
    assert code == 130 and sent and state.exists() and not model.exists()
    train("-q", *opts, "--trace", tmp_path / "t", "--runs", 2, "--resume", state,
          three_classes, model)
    assert model.read_bytes() == whole.read_bytes()
    assert (tmp_path / "m.20").read_bytes() == (tmp_path / "whole.20").read_bytes()
    assert not (tmp_path / "m.10000").exists()  # never reached (a warning), as uninterrupted
    assert not (tmp_path / "whole.10000").exists()
    a, b = read_trace(tmp_path / "t"), read_trace(tmp_path / "tw")
    assert set(a) == set(b) and len(a["t"]) == len(b["t"]) >= 6
    for column in set(a) - {"seconds", "kernel_evals"}:  # the resumed cache starts empty
        assert a[column] == b[column], column


def test_snapshots_are_the_runs_stopped_there(tmp_path):
    """--snapshots 30,90: model.30 is the run stopped at 30 examples; the online phase ends at
    the last value, so the model is model.90; by sv, a snapshot once the output has that many
    non-zero coefficients."""
    opts = ["--solver", "track2", "-K", K, "--teacher", "shuffle"]
    out = train(*opts, "--snapshots", "30,90", HEART, tmp_path / "m").stdout
    assert f"snapshot {tmp_path / 'm'}.30: iterations 30, " in out
    assert "stopped at 90 iterations (last snapshot (iterations 90))" in out
    train("-q", *opts, "--stop-iterations", 30, HEART, tmp_path / "s30")
    assert (tmp_path / "m.30").read_bytes() == (tmp_path / "s30").read_bytes()
    assert (tmp_path / "m.90").read_bytes() == (tmp_path / "m").read_bytes()
    train("-q", *opts, "--snapshots", 25, "--snapshot-by", "sv", HEART, tmp_path / "v")
    text = (tmp_path / "v.25").read_text()
    assert int(text.split("total_sv ")[1].split()[0]) >= 25


def test_resume_with_other_options_is_refused(tmp_path):
    """One line naming the state file and what differs; exit 1, no model."""
    state = tmp_path / "s"
    opts = ["--solver", "track2", "-K", K, "--teacher", "shuffle"]
    train("-q", *opts, "--stop-iterations", 50, "--save-state", state, HEART, tmp_path / "m")
    for changed, says in [
            (["--solver", "track2", "-K", K, "--teacher", "shuffle", "-c", 2],
             "the state was saved with other parameters: Cp 1.0 (now 2.0), Cn 1.0 (now 2.0)"),
            (["--solver", "track1", "-K", K, "--teacher", "shuffle"],
             "the state was saved with other parameters: algorithm 'track2' (now 'track1')"),
            (["--solver", "track2", "-K", K, "--teacher", "shuffle", "--seed", 5],
             "the state was saved with other parameters: seed 1 (now 5), order '"),
            (["--solver", "track2", "-K", 4, "--teacher", "shuffle"],
             "the state was saved with other parameters: K 3 (now 4)"),
            (["--solver", "track2", "-K", K, "--teacher", "active"],
             "the state was saved with other parameters: teacher 'shuffle' (now 'active'), "
             "pool None (now 50)"),
            (["--solver", "lasvm"],
             "the state was saved by a tracking solver, not by a LASVM-family solver as this "
             "run")]:
        res = train(*changed, "--resume", state, HEART, tmp_path / "r", code=1)
        assert res.stderr.startswith(f"ERROR: {state}: {says}"), res.stderr
        assert res.stderr.count("\n") == 1
        assert not (tmp_path / "r").exists()
    lasvm_state = tmp_path / "l"
    train("-q", "--solver", "lasvm", "--stop-iterations", 50, "--save-state", lasvm_state,
          HEART, tmp_path / "l_m")
    res = train(*opts, "--resume", lasvm_state, HEART, tmp_path / "r", code=1)
    assert res.stderr == (f"ERROR: {lasvm_state}: the state was saved by a LASVM-family "
                          "solver, not by a tracking solver as this run\n")


def test_damaged_state_file_is_one_error_line(tmp_path):
    """A truncated state file, and one with a changed byte: one line naming the file, exit 1,
    no model."""
    state = tmp_path / "s"
    opts = ["--solver", "rcd", "-K", K]
    train("-q", *opts, "--stop-iterations", 100, "--save-state", state, HEART, tmp_path / "m")
    data = state.read_bytes()
    (tmp_path / "short").write_bytes(data[:len(data) // 2])
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF
    (tmp_path / "flipped").write_bytes(bytes(flipped))
    for name in ("short", "flipped"):
        res = train(*opts, "--resume", tmp_path / name, HEART, tmp_path / "r", code=1)
        assert res.stderr.startswith(f"ERROR: cannot read LASVM state file {tmp_path / name}: ")
        assert res.stderr.count("\n") == 1 and not (tmp_path / "r").exists()


def test_ctrl_c_in_a_trace_only_run(tmp_path, monkeypatch, capfd):
    """--runs 3 --trace: a Ctrl-C in the second run (the trace's mean only) says the state is
    saved (the first run's, at its end), exit 130; --resume makes the other runs again: the
    uninterrupted model and trace (seconds and kernel evaluations aside)."""
    from lasvm_cli.cli.report import run_guarded
    from lasvm_cli.cli.train import main
    from lasvm_cli.tools.plot import read_trace
    from lasvm_cli.training import tracking_control

    opts = ["-q", "--solver", "track1", "-K", "3", "--teacher", "active", "--pool", "10",
            "--runs", "3", "--trace-every", "40"]
    whole, state, model = tmp_path / "whole", tmp_path / "s", tmp_path / "m"
    train(*opts, "--trace", tmp_path / "tw", HEART, whole)
    trace_run = tracking_control.trace_run

    def interrupted(*args, **kw):
        os.kill(os.getpid(), signal.SIGINT)  # Python's handler: KeyboardInterrupt
        return trace_run(*args, **kw)

    monkeypatch.setattr(tracking_control, "trace_run", interrupted)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # SIG_IGN in a
    try:                                                                # background job
        code = run_guarded(main, [*opts, "--trace", str(tmp_path / "t"), "--save-state",
                                  str(state), str(HEART), str(model)])
    finally:
        signal.signal(signal.SIGINT, before)
    monkeypatch.undo()
    err = capfd.readouterr().err
    assert code == 130 and not model.exists()
    assert err == f"interrupted: state saved to {state} (--resume {state} continues the run)\n"
    train(*opts, "--trace", tmp_path / "t", "--resume", state, HEART, model)
    assert model.read_bytes() == whole.read_bytes()
    a, b = read_trace(tmp_path / "t"), read_trace(tmp_path / "tw")
    assert len(a["t"]) == len(b["t"]) >= 7
    for column in set(a) - {"seconds", "kernel_evals"}:
        assert a[column] == b[column], column
