"""svm-train --stream --multiclass llw|cs --solver online through the online driver
(training/stream.py): the all-in-one stream's run (solvers/s2do_stream.py's S2doStreamRun,
the online S2doRun fed by the file in blocks) stepped by the one drive loop with the trace,
stopping limits, snapshots and state files.

Oracles:
* the in-memory run in the stream's order (tests/test_stream.py's ``in_memory_file_order``:
  the one-pass S2doRun over the whole file in memory, in file order, with the stream's kernel
  cost): the driven stream, cut into small steps, writes its model file byte for byte;
* the uninterrupted stream: a stream stopped, saved and resumed (inside a block, at a block
  boundary, before and after a class first seen late) writes the same model file, byte for
  byte; observers (trace, test set, snapshots, state saves) change no model.
"""

import functools

import numpy as np
import pytest
from click.testing import CliRunner

from lasvm_cli.cli.main import svm_train
from lasvm_cli.io.model_file import read_model
from lasvm_cli.io.svmlight import iter_svmlight, read_svmlight
from lasvm_cli.numerics.data import Problem
from lasvm_cli.solvers.run import SavedRun
from lasvm_cli.solvers.s2do_stream import S2doStreamRun, start_stream_allinone
from lasvm_cli.training.stream import train_stream

from .conftest import RecordingBar, check_bad_input_mid_stream
from .test_stream import allinone_params, in_memory_file_order, model_text, write_classes


def streamed(path, p, chunk_bytes=1 << 22, info=None, progress=None):
    return train_stream(str(path), p, start_stream_allinone, chunk_bytes=chunk_bytes,
                        info=info, progress=progress)


def block_rows(path, chunk_bytes):
    """Rows of each block the stream reads."""
    return [b.n for b in iter_svmlight(str(path), chunk_bytes=chunk_bytes)]


def write_sparse(path, labels, n, dim, density, seed):
    """Classes with shifted means, each row holding about ``density`` of ``dim`` features
    (the store's columns grow as blocks bring new feature indices)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(len(labels), dim)) * 1.5
    lines = []
    for i in range(n):
        c = i % len(labels) if i < 2 * len(labels) else int(rng.integers(len(labels)))
        x = centres[c] + rng.normal(size=dim)
        keep = rng.random(dim) < density
        keep[int(rng.integers(dim))] = True
        lines.append(f"{labels[c]} " + " ".join(f"{j + 1}:{x[j]:.6g}"
                                                 for j in np.flatnonzero(keep)))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("allinone")
    return {"four": write_classes(d / "four.svm", [7, -1, 3, 2], n=240, seed=21),
            "pm": write_classes(d / "pm.svm", [-1, 1], n=150, seed=4),
            "sparse": write_sparse(d / "sparse.svm", [4, 2, 6], 240, 60, 0.15, 5),
            "late": write_classes(d / "late.svm", [2, 1, 3, 9], n=300, seed=8, late=(9, 190))}


@pytest.mark.parametrize("chunk", [1, 700, 1500, 4000])
def test_blocks_read_from_a_block_start_are_the_first_readings(files, chunk):
    """iter_svmlight begun at a block's (offset, line) reads the blocks a reading from the
    file's start reads from there (its reads stay on the file's grid of chunk_bytes): a
    resumed all-in-one stream grows its classes where the first reading did."""
    path = str(files["late"])
    positions = []
    blocks = [(b.y.tolist(), b.values.tolist()) for b in
              iter_svmlight(path, chunk_bytes=chunk, positions=positions)]
    assert len(blocks) > (1 if chunk < 4000 else 0)
    for k in range(0, len(blocks), 7 if chunk == 1 else 1):
        again = [(b.y.tolist(), b.values.tolist()) for b in
                 iter_svmlight(path, chunk_bytes=chunk, start=positions[k])]
        assert again == blocks[k:], (chunk, k)


def test_the_stream_run_is_a_saved_run(files):
    run = start_stream_allinone(str(files["four"]), allinone_params("cs"))
    assert isinstance(run, S2doStreamRun)
    run.begin()
    assert isinstance(run, SavedRun)
    assert run.TITLE == "cs (online) stream"


@pytest.mark.parametrize("scheme", ["llw", "cs"])
@pytest.mark.parametrize("name", ["four", "pm", "sparse"])
def test_driven_stream_is_the_in_memory_pass_in_file_order(files, tmp_path, monkeypatch,
                                                           scheme, name):
    """3 (C, gamma): the driven stream (blocks of ~12 rows, a trace row every 7 rows: steps
    cut inside blocks) writes the in-memory run's model in file order, byte for byte; not
    degenerate (every class predicted, training accuracy well above chance). Sparse rows:
    about 15% of 60 features each, so the store's columns grow from block to block; every
    class is in the first block (the in-memory machine has every class from the start)."""
    path = files[name]
    d = read_svmlight(str(path))
    labels = np.unique(d.y)
    scale = 0.1 if name == "sparse" else 1.0  # 60 features
    for C, gamma in ((2.0, 0.5 * scale), (10.0, 0.1 * scale), (0.5, 2.0 * scale)):
        p = allinone_params(scheme, C=C, gamma=gamma)
        p.trace, p.trace_every = str(tmp_path / "t.csv"), 7
        m = streamed(path, p, chunk_bytes=700)
        assert m.counters["classes_grown"] == 0
        mem = in_memory_file_order(path, allinone_params(scheme, C=C, gamma=gamma),
                                   m.counters["kernel_cost"], monkeypatch)
        monkeypatch.undo()
        assert model_text(m, tmp_path / "s") == model_text(mem, tmp_path / "m"), (C, gamma)
        pred = m.predict(Problem.from_svmlight(d).kd)
        assert set(np.unique(pred)) == set(labels), (C, gamma)
        assert float(np.mean(pred == d.y)) > 1.5 / labels.size, (C, gamma)


@pytest.mark.parametrize("scheme", ["llw", "cs"])
def test_resume_anywhere_is_the_uninterrupted_stream(files, tmp_path, scheme):
    """A class first seen after the first block (it grows the machine at its block's start):
    stops inside a block, at block boundaries, before and after that block, after the last
    row, after the end (a finished run's state); saved and resumed (with another block size
    asked for: the saved run's is kept), the uninterrupted model, byte for byte; the stop's
    model is the snapshot's there."""
    path = files["late"]
    chunk = 1500
    rows = block_rows(path, chunk)
    assert len(rows) >= 5
    edges = np.cumsum(rows).tolist()
    late_block = int(np.searchsorted(edges, 190, side="right"))
    assert late_block >= 1  # row 190 is not in the first block
    p = allinone_params(scheme)
    lines = []
    whole = streamed(path, p, chunk_bytes=chunk, info=lines.append)
    y = read_svmlight(str(path)).y
    first = [int(v) for v in y[np.sort(np.unique(y, return_index=True)[1])]]
    assert whole.counters["classes_grown"] == 1 and list(whole.label) == first
    assert first[-1] == 9
    assert any(ln.startswith("class 9 first appears at line 191, after the first block")
               for ln in lines), lines
    whole_bytes = model_text(whole, tmp_path / "w")
    stops = sorted({5, edges[0], edges[late_block - 1], edges[late_block - 1] + 3,
                    edges[late_block], 250, 300, 100000})
    for stop in stops:
        state = tmp_path / f"s{stop}"
        stopped = streamed(path, allinone_params(scheme, stop_iterations=stop,
                                                 save_state=str(state)), chunk_bytes=chunk)
        out = []
        resumed = streamed(path, allinone_params(scheme, resume=str(state)),
                           chunk_bytes=700, info=out.append)
        assert model_text(resumed, tmp_path / "r") == whole_bytes, stop
        phase = "online" if stop <= 300 else "done"  # 300: the last row, the end not read
        assert out[0].startswith(f"resumed {state}: {phase} phase, {min(stop, 300)} "), out
        if stop < 300:
            assert model_text(stopped, tmp_path / "st") != whole_bytes, stop
            streamed(path, allinone_params(scheme, snapshots=str(stop),
                                           model_file=str(tmp_path / "snap")),
                     chunk_bytes=chunk)
            assert (tmp_path / f"snap.{stop}").read_bytes() == \
                model_text(stopped, tmp_path / "st"), stop


@pytest.mark.parametrize("scheme", ["llw", "cs"])
def test_sparse_rows_resume_anywhere(files, tmp_path, scheme):
    """Sparse rows (about 15% of 60 features: the store's columns grow from block to block),
    2 (C, gamma): stopped inside and at the end of blocks, saved and resumed, the
    uninterrupted model, byte for byte; every class predicted."""
    path = files["sparse"]
    chunk = 900
    edges = np.cumsum(block_rows(path, chunk)).tolist()
    assert len(edges) >= 4
    d = read_svmlight(str(path))
    for C, gamma in ((2.0, 0.05), (10.0, 0.2)):
        whole = streamed(path, allinone_params(scheme, C=C, gamma=gamma), chunk_bytes=chunk)
        pred = whole.predict(Problem.from_svmlight(d).kd)
        assert set(np.unique(pred)) == set(np.unique(d.y)), (C, gamma)
        whole_bytes = model_text(whole, tmp_path / "w")
        for stop in (7, edges[2], edges[2] + 2, 200):
            state = tmp_path / f"s{stop}"
            streamed(path, allinone_params(scheme, C=C, gamma=gamma, stop_iterations=stop,
                                           save_state=str(state)), chunk_bytes=chunk)
            resumed = streamed(path, allinone_params(scheme, C=C, gamma=gamma,
                                                     resume=str(state)), chunk_bytes=chunk)
            assert model_text(resumed, tmp_path / "r") == whole_bytes, (C, gamma, stop)


@pytest.mark.parametrize("scheme", ["llw", "cs"])
def test_observers_change_no_model_and_trace_is_sane(files, tmp_path, scheme):
    """A trace with a test set, snapshots and a state file saved at every step: the plain
    stream's model; the trace's iterations grow, its test errors are in [0, 1], and its final
    row's test error is the model's on the test set (svm-predict's arg-max)."""
    path = files["late"]
    plain = model_text(streamed(path, allinone_params(scheme), chunk_bytes=1500), tmp_path / "p")
    test = write_classes(tmp_path / "test.svm", [2, 1, 3, 9, 5], n=120, seed=30)
    trace = tmp_path / "t.csv"
    p = allinone_params(scheme, trace=str(trace), trace_every=20, test_file=str(test),
                        snapshots="40,120", model_file=str(tmp_path / "snap"),
                        save_state=str(tmp_path / "s"), save_every=0)
    # the snapshots end the online phase at their last value: a second run without them
    streamed(path, p, chunk_bytes=1500)
    assert (tmp_path / "snap.40").exists() and (tmp_path / "snap.120").exists()
    p = allinone_params(scheme, trace=str(trace), trace_every=20, test_file=str(test),
                        save_state=str(tmp_path / "s"), save_every=0)
    m = streamed(path, p, chunk_bytes=1500)
    assert model_text(m, tmp_path / "o") == plain
    rows = [ln.split(",") for ln in trace.read_text().splitlines()]
    assert rows[0][:8] == ["iterations", "seconds", "kernel_evals", "sv", "delta",
                           "dual_objective", "test_error", "phase"]
    its = [int(r[0]) for r in rows[1:]]
    assert its == sorted(its) and its[-1] == 300 and rows[-1][7] == "final"
    assert len(rows) >= 10
    errors = [float(r[6]) for r in rows[1:]]
    assert all(0 <= e <= 1 for e in errors)
    t = read_svmlight(str(test))
    kd = Problem.from_svmlight(t).kd
    assert errors[-1] == pytest.approx(float(np.mean(m.predict(kd) != t.y)), abs=1e-6)
    assert int(rows[-1][3]) == m.total_sv
    assert errors[-1] < errors[0]


def run_cli(*args):
    return CliRunner().invoke(svm_train, [str(a) for a in args])


@pytest.mark.parametrize("scheme", ["llw", "cs"])
def test_cli_long_run_options(files, tmp_path, scheme):
    """svm-train --stream --multiclass llw|cs --solver online with --trace --test, a stop
    saved and resumed: exit 0, LIBSVM's lines, the uninterrupted model; no refusal."""
    path = files["late"]
    g = ["--stream", "--multiclass", scheme, "--solver", "online", "-g", "0.5", "-c", "2"]
    r = run_cli(*g, path, tmp_path / "whole")
    assert r.exit_code == 0, r.stderr
    r = run_cli(*g, "--trace", tmp_path / "t", "--test", path, "--stop-iterations", 120,
                "--save-state", tmp_path / "s", path, tmp_path / "m")
    assert r.exit_code == 0, r.stderr
    assert "does not support" not in r.stderr
    assert "stopped at 120 iterations" in r.stdout and "Total nSV =" in r.stdout
    r = run_cli(*g, "--resume", tmp_path / "s", "--trace", tmp_path / "t", path,
                tmp_path / "m")
    assert r.exit_code == 0, r.stderr
    assert f"resumed {tmp_path / 's'}: online phase, 120 iterations" in r.stdout
    for key in ("optimization finished, #iter =", "obj =", "support patterns =",
                "Total nSV ="):
        assert key in r.stdout
    assert (tmp_path / "m").read_bytes() == (tmp_path / "whole").read_bytes()
    assert read_model(tmp_path / "m").multiclass == scheme
    its = [int(ln.split(",")[0]) for ln in (tmp_path / "t").read_text().splitlines()[1:]]
    assert its == sorted(its) and its[-1] == 300
    r = run_cli(*g, "--stop-sv", 20, "--snapshots", "250", path, tmp_path / "sv")
    assert r.exit_code == 0 and "stopped at" in r.stdout and "--stop-sv 20" in r.stdout


def test_resume_refuses_another_file_or_kind(files, tmp_path):
    g = ["--multiclass", "llw", "--solver", "online", "-g", "0.5", "-q"]
    other = tmp_path / "other"
    other.write_text("".join(open(files["late"]).readlines()[:200]))
    assert run_cli(*g, "--stream", "--stop-iterations", 50, "--save-state", tmp_path / "s",
                   files["late"], tmp_path / "m").exit_code == 0
    r = run_cli(*g, "--stream", "--resume", tmp_path / "s", other, tmp_path / "m2")
    assert r.exit_code == 1 and "other training data" in r.stderr, r.stderr
    r = run_cli(*g, "--resume", tmp_path / "s", files["late"], tmp_path / "m3")  # in memory
    assert r.exit_code == 1 and r.stderr.startswith("ERROR: ") and "Traceback" not in r.stderr
    r = run_cli("--multiclass", "cs", "--solver", "online", "-g", "0.5", "--stream",
                "--resume", tmp_path / "s", files["late"], tmp_path / "m4")
    assert r.exit_code == 1 and "multiclass" in r.stderr, r.stderr
    assert not any((tmp_path / m).exists() for m in ("m2", "m3", "m4"))


def test_bad_input_mid_stream_leaves_no_output(files, tmp_path):
    check_bad_input_mid_stream(tmp_path, files["four"], functools.partial(allinone_params, "cs"), streamed,
                               ["-g", "0.5", "--stream", "--multiclass", "cs", "--solver", "online", "-q"])


def test_progress_bar_is_an_observer_of_the_stream(files):
    calls = []

    streamed(files["four"], allinone_params("llw", stop_iterations=200), chunk_bytes=900,
             progress=RecordingBar.into(calls))
    assert calls[0] == ("title", "llw (online) stream")
    done = [c[1] for c in calls if c[0] == "update"]
    assert len(done) >= 5 and done == sorted(done) and done[-1] == 200
    assert calls[-1] == ("close",) and calls.count(("close",)) == 1
