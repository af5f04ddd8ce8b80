"""svm-train --stream --multiclass ovr --solver lasvm through the online driver
(training/stream.py): the one-vs-rest stream's run (solvers/lasvm_ovr_stream.py's
OvrStreamRun, k LASVM machines over one shared slot store) stepped by the one drive loop with
the trace, stopping limits, snapshots and state files.

Oracles:
* the in-memory machines in the stream's order (tests/test_stream.py's ``ovr_in_memory``:
  training/ovr.py's machines, each over the file's rows in file order from its start row):
  the driven stream, cut into small steps, writes their model file byte for byte;
* the uninterrupted stream: a stream stopped, saved and resumed (inside a group of rows, at
  block boundaries, before and after a class first seen late, in the finishing phase) writes
  the same model file, byte for byte; observers (trace, test set, snapshots, state saves)
  change no model.
"""

import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from lasvm_cli.cli.main import svm_train
from lasvm_cli.io.model_file import read_model
from lasvm_cli.io.svmlight import iter_svmlight, read_svmlight
from lasvm_cli.numerics.data import Problem
from lasvm_cli.solvers.lasvm_ovr_stream import OvrStreamRun, start_stream_ovr
from lasvm_cli.solvers.run import SavedRun
from lasvm_cli.training.params import TrainParams
from lasvm_cli.training.stream import train_stream

from .conftest import RecordingBar, check_bad_input_mid_stream
from .test_stream import model_text, ovr_in_memory, write_classes
from .test_stream_allinone_driven import write_sparse


def ovr_params(**kw):
    return TrainParams(solver="lasvm", multiclass="ovr", gamma=kw.pop("gamma", 0.5),
                       C=kw.pop("C", 2.0), **kw)


def streamed(path, p, chunk_bytes=1 << 22, info=None, progress=None, warn=None):
    return train_stream(str(path), p, start_stream_ovr, chunk_bytes=chunk_bytes, info=info,
                        progress=progress, warn=warn)


def block_rows(path, chunk_bytes):
    return [b.n for b in iter_svmlight(str(path), chunk_bytes=chunk_bytes)]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("ovr")
    return {"three": write_classes(d / "three.svm", [2, 1, 3], n=240, seed=5),
            "five": write_classes(d / "five.svm", [5, -1, 3, 2, 9], n=300, seed=7),
            "pm": write_classes(d / "pm.svm", [-1, 1], n=150, seed=4),
            "sparse": write_sparse(d / "sparse.svm", [4, 2, 6], 240, 60, 0.15, 5),
            "late": write_classes(d / "late.svm", [2, 1, 3, 9], n=300, seed=8,
                                  late=(9, 190))}


def test_the_stream_run_is_a_saved_run(files):
    run = start_stream_ovr(str(files["three"]), ovr_params())
    assert isinstance(run, OvrStreamRun)
    run.begin()
    assert isinstance(run, SavedRun)
    assert run.TITLE == "LASVM ovr stream" and run.processed == 0
    assert sorted(run.labels) == [1, 2, 3]  # a machine for each class of the first block


@pytest.mark.parametrize("name", ["three", "five", "pm", "sparse", "late"])
def test_driven_stream_is_the_in_memory_pass_in_file_order(files, tmp_path, name):
    """3 (C, gamma), finishing or not: the driven stream (blocks of ~12 rows, a trace row
    every 7 rows: steps cut inside groups and blocks) writes the model file of the in-memory
    machines in file order with the same start rows, byte for byte; not degenerate (every
    class predicted, training accuracy well above chance). "late": class 9 first appears at
    row 190, its machine starts at that block's first row."""
    path = files[name]
    d = read_svmlight(str(path))
    labels = np.unique(d.y)
    scale = 0.1 if name == "sparse" else 1.0  # 60 features
    for (C, gamma), finish in zip(((2.0, 0.5 * scale), (10.0, 0.1 * scale),
                                   (0.5, 2.0 * scale)), (True, False, True)):
        p = ovr_params(C=C, gamma=gamma, finish=finish)
        p.trace, p.trace_every = str(tmp_path / "t.csv"), 7
        m = streamed(path, p, chunk_bytes=700)
        assert m.counters["classes_late"] == (1 if name == "late" else 0)
        mem = ovr_in_memory(path, ovr_params(C=C, gamma=gamma, finish=finish), m)
        assert model_text(m, tmp_path / "s") == model_text(mem, tmp_path / "m"), (C, gamma)
        pred = m.predict(Problem.from_svmlight(d).kd)
        assert set(np.unique(pred)) == set(labels), (C, gamma)
        assert float(np.mean(pred == d.y)) > 1.5 / labels.size, (C, gamma)


def test_resume_anywhere_is_the_uninterrupted_stream(files, tmp_path):
    """A class first seen after the first block (its machine starts at its block's first
    row): stops inside a group of rows, at block boundaries, before and after that block,
    after the last row (the end not read), after the end; saved and resumed (with another
    block size asked for: the saved run's is kept), the uninterrupted model and LIBSVM's
    lines, byte for byte; the stop's model is the snapshot's there."""
    path = files["late"]
    chunk = 1500
    edges = np.cumsum(block_rows(path, chunk)).tolist()
    assert len(edges) >= 5
    late_block = int(np.searchsorted(edges, 190, side="right"))
    assert late_block >= 1  # row 190 is not in the first block
    lines = []
    whole = streamed(path, ovr_params(), chunk_bytes=chunk, info=lines.append)
    y = read_svmlight(str(path)).y
    first = [int(v) for v in y[np.sort(np.unique(y, return_index=True)[1])]]
    assert whole.counters["classes_late"] == 1 and list(whole.label) == first
    assert first[-1] == 9
    assert any(ln.startswith("class 9 first appears at line 191, after the first block")
               for ln in lines), lines
    whole_bytes = model_text(whole, tmp_path / "w")
    stops = sorted({5, edges[0], edges[late_block - 1], edges[late_block - 1] + 3,
                    edges[late_block], 250, 300, 100000})
    for stop in stops:
        state = tmp_path / f"s{stop}"
        stopped = streamed(path, ovr_params(stop_iterations=stop, save_state=str(state)),
                           chunk_bytes=chunk)
        out = []
        resumed = streamed(path, ovr_params(resume=str(state)), chunk_bytes=700,
                           info=out.append)
        assert model_text(resumed, tmp_path / "r") == whole_bytes, stop
        phase = "online" if stop <= 300 else "done"
        assert out[0].startswith(f"resumed {state}: {phase} phase, {min(stop, 300)} "), out
        assert out[1:] == lines, stop
        if stop < 300:
            assert model_text(stopped, tmp_path / "st") != whole_bytes, stop
            streamed(path, ovr_params(snapshots=str(stop), model_file=str(tmp_path / "snap")),
                     chunk_bytes=chunk)
            assert (tmp_path / f"snap.{stop}").read_bytes() == \
                model_text(stopped, tmp_path / "st"), stop


@pytest.mark.parametrize("rule", ["smo", "reprocess"])
def test_resume_in_the_finishing_phase(files, tmp_path, rule):
    """States saved after every step of the finishing phase (a machine half finished, between
    two machines): resumed, the uninterrupted model, byte for byte."""
    path = files["five"]
    state, kept = tmp_path / "s", []

    class Bar:  # after each step: the state file of the step before, kept in the finishing
        def __init__(self, title):
            pass

        def update(self, done, value=None):
            if state.exists():
                with np.load(state) as z:
                    meta = json.loads(str(z["meta"]))
                if meta["phase"] == "finish":
                    kept.append(tmp_path / f"f{len(kept)}")
                    shutil.copy(state, kept[-1])

        def close(self):
            pass

    p = ovr_params(C=10.0, finishing=rule, save_state=str(state), save_every=0)
    p.eps = 1e-5  # more finishing steps than one call's
    whole = model_text(streamed(path, ovr_params(C=10.0, finishing=rule, eps=1e-5),
                                chunk_bytes=900), tmp_path / "w")
    streamed(path, p, chunk_bytes=900, progress=Bar)
    assert len(kept) >= 5  # the five machines, each at least once
    for f in kept:
        m = streamed(path, ovr_params(C=10.0, finishing=rule, eps=1e-5, resume=str(f)),
                     chunk_bytes=900)
        assert model_text(m, tmp_path / "r") == whole, f


def test_sparse_rows_resume_anywhere(files, tmp_path):
    """Sparse rows (the store's columns grow from block to block), 2 (C, gamma): stopped
    inside and at the end of blocks, saved and resumed, the uninterrupted model."""
    path = files["sparse"]
    chunk = 900
    edges = np.cumsum(block_rows(path, chunk)).tolist()
    assert len(edges) >= 4
    for C, gamma in ((2.0, 0.05), (10.0, 0.2)):
        whole = model_text(streamed(path, ovr_params(C=C, gamma=gamma), chunk_bytes=chunk),
                           tmp_path / "w")
        for stop in (7, edges[2], edges[2] + 2, 200):
            state = tmp_path / f"s{stop}"
            streamed(path, ovr_params(C=C, gamma=gamma, stop_iterations=stop,
                                      save_state=str(state)), chunk_bytes=chunk)
            resumed = streamed(path, ovr_params(C=C, gamma=gamma, resume=str(state)),
                               chunk_bytes=chunk)
            assert model_text(resumed, tmp_path / "r") == whole, (C, gamma, stop)


def test_observers_change_no_model_and_trace_is_sane(files, tmp_path):
    """A trace with a test set (the training rows), snapshots and a state file saved at every
    step: the plain stream's model; the trace's iterations grow, its test errors are in
    [0, 1] and fall, its duals grow, its final row's test error is the model's on the test
    set (svm-predict's arg-max over the k machines) and its sv column the model's."""
    path = files["late"]
    plain = model_text(streamed(path, ovr_params(), chunk_bytes=1500), tmp_path / "p")
    test = path  # the training error: the machines learn their rows
    trace = tmp_path / "t.csv"
    p = ovr_params(trace=str(trace), trace_every=20, test_file=str(test), snapshots="40,120",
                   model_file=str(tmp_path / "snap"), save_state=str(tmp_path / "s"),
                   save_every=0)
    # the snapshots end the online phase at their last value: a second run without them
    streamed(path, p, chunk_bytes=1500)
    assert (tmp_path / "snap.40").exists() and (tmp_path / "snap.120").exists()
    assert read_model(tmp_path / "snap.40").multiclass == "ovr"
    p = ovr_params(trace=str(trace), trace_every=20, test_file=str(test),
                   save_state=str(tmp_path / "s"), save_every=0)
    m = streamed(path, p, chunk_bytes=1500)
    assert model_text(m, tmp_path / "o") == plain
    rows = [ln.split(",") for ln in trace.read_text().splitlines()]
    assert rows[0] == ["iterations", "seconds", "kernel_evals", "sv", "delta",
                       "dual_objective", "test_error", "phase"]
    its = [int(r[0]) for r in rows[1:]]
    assert its == sorted(its) and its[0] == 0 and its[-1] == 300 and rows[-1][7] == "final"
    assert len(rows) >= 15
    errors = [float(r[6]) for r in rows[1:]]
    assert all(0 <= e <= 1 for e in errors)
    t = read_svmlight(str(test))
    kd = Problem.from_svmlight(t).kd
    assert errors[-1] == pytest.approx(float(np.mean(m.predict(kd) != t.y)), abs=1e-6)
    assert int(rows[-1][3]) == m.total_sv
    assert errors[-1] < errors[1] and errors[-1] < 0.2
    duals = [float(r[5]) for r in rows[1:-1]]
    assert all(v >= 0 for v in duals) and duals[-1] > duals[1]


def test_stop_before_a_second_class_is_an_error(tmp_path):
    """A stop while the rows read hold one class: no model can be made, outputs removed."""
    from lasvm_cli.solvers.stream_source import StreamError

    path = tmp_path / "f.svm"
    path.write_text("".join(f"3 1:{i / 40:.3f}\n" for i in range(60)) +
                    "".join(f"4 1:{1 + i / 40:.3f}\n" for i in range(60)))
    p = ovr_params(stop_iterations=30, trace=str(tmp_path / "t"))
    with pytest.raises(StreamError, match="the first 30 rows hold only label 3"):
        streamed(path, p, chunk_bytes=300)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["f.svm"]


def test_weight_warnings_once(files, tmp_path):
    """-wi of a label not in the file: LIBSVM's warning, once, after the pass (not at each
    snapshot)."""
    warned = []
    streamed(files["three"], ovr_params(weights={7: 2.0}, snapshots="20,60,100",
                                        model_file=str(tmp_path / "m")), warn=warned.append)
    assert warned == []  # the last snapshot ends the online phase: the file was not read
    streamed(files["three"], ovr_params(weights={7: 2.0}, trace_every=10,
                                        trace=str(tmp_path / "t")), warn=warned.append)
    assert warned == ["WARNING: class label 7 specified in weight is not found"]


def run_cli(*args):
    return CliRunner().invoke(svm_train, [str(a) for a in args])


def test_cli_long_run_options(files, tmp_path):
    """svm-train --stream --multiclass ovr --solver lasvm with --trace --test, a stop saved
    and resumed: exit 0, LIBSVM's lines, the uninterrupted model; no refusal."""
    path = files["late"]
    g = ["--stream", "--multiclass", "ovr", "--solver", "lasvm", "-g", "0.5", "-c", "2"]
    r = run_cli(*g, path, tmp_path / "whole")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.count("optimization finished, #iter =") == 4
    r = run_cli(*g, "--trace", tmp_path / "t", "--test", path, "--stop-iterations", 120,
                "--save-state", tmp_path / "s", path, tmp_path / "m")
    assert r.exit_code == 0, r.stderr
    assert "does not support" not in r.stderr
    assert "stopped at 120 iterations" in r.stdout and "Total nSV =" in r.stdout
    r = run_cli(*g, "--resume", tmp_path / "s", "--trace", tmp_path / "t", path,
                tmp_path / "m")
    assert r.exit_code == 0, r.stderr
    assert f"resumed {tmp_path / 's'}: online phase, 120 iterations" in r.stdout
    for key in ("optimization finished, #iter =", "obj =", "nSV =", "Total nSV ="):
        assert key in r.stdout
    assert (tmp_path / "m").read_bytes() == (tmp_path / "whole").read_bytes()
    assert read_model(tmp_path / "m").multiclass == "ovr"
    its = [int(ln.split(",")[0]) for ln in (tmp_path / "t").read_text().splitlines()[1:]]
    assert its == sorted(its) and its[-1] == 300
    r = run_cli(*g, "--stop-sv", 20, "--snapshots", "250", path, tmp_path / "sv")
    assert r.exit_code == 0 and "stopped at" in r.stdout and "--stop-sv 20" in r.stdout
    r = run_cli(*g, "--stop-seconds", 1000, path, tmp_path / "sec")
    assert r.exit_code == 0 and (tmp_path / "sec").read_bytes() == \
        (tmp_path / "whole").read_bytes()


def test_cli_keeps_file_order_only(files, tmp_path):
    r = run_cli("--stream", "--multiclass", "ovr", "--solver", "lasvm", "-g", "0.5",
                "--selection", "gradient", files["three"], tmp_path / "m")
    assert r.exit_code == 1 and "a candidate window would differ per machine" in r.stderr
    assert not (tmp_path / "m").exists()


def test_resume_refuses_another_file_or_kind(files, tmp_path):
    g = ["--multiclass", "ovr", "--solver", "lasvm", "-g", "0.5", "-q"]
    other = tmp_path / "other"
    other.write_text("".join(open(files["late"]).readlines()[:200]))
    assert run_cli(*g, "--stream", "--stop-iterations", 50, "--save-state", tmp_path / "s",
                   files["late"], tmp_path / "m").exit_code == 0
    r = run_cli(*g, "--stream", "--resume", tmp_path / "s", other, tmp_path / "m2")
    assert r.exit_code == 1 and "other training data" in r.stderr, r.stderr
    r = run_cli(*g, "--resume", tmp_path / "s", files["late"], tmp_path / "m3")  # in memory
    assert r.exit_code == 1 and r.stderr.startswith("ERROR: ") and "Traceback" not in r.stderr
    r = run_cli("--multiclass", "llw", "--solver", "online", "-g", "0.5", "--stream",
                "--resume", tmp_path / "s", files["late"], tmp_path / "m4")
    assert r.exit_code == 1 and "multiclass" in r.stderr, r.stderr
    pm = ["-g", "0.5", "-q", "--stream", "--solver", "lasvm"]
    assert run_cli(*pm, "--stop-iterations", 50, "--save-state", tmp_path / "b",
                   files["pm"], tmp_path / "m5").exit_code == 0
    r = run_cli(*pm, "--multiclass", "ovr", "--resume", tmp_path / "b", files["pm"],
                tmp_path / "m6")
    assert r.exit_code == 1 and "--multiclass ovr --solver lasvm" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not any((tmp_path / m).exists() for m in ("m2", "m3", "m4", "m6"))


def test_bad_input_mid_stream_leaves_no_output(files, tmp_path):
    check_bad_input_mid_stream(tmp_path, files["five"], ovr_params, streamed,
                               ["-g", "0.5", "--stream", "--multiclass", "ovr", "--solver", "lasvm", "-q"])


def test_progress_bar_is_an_observer_of_the_stream(files):
    calls = []

    streamed(files["five"], ovr_params(stop_iterations=200), chunk_bytes=900,
             progress=RecordingBar.into(calls))
    assert calls[0] == ("title", "LASVM ovr stream")
    done = [c[1] for c in calls if c[0] == "update"]
    assert len(done) >= 5 and done == sorted(done) and done[-1] == 200
    assert calls[-1] == ("close",) and calls.count(("close",)) == 1
