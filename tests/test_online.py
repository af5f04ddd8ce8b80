"""Online LASVM long runs (lasvm_cli/training/run_control.py): resume equivalence, data / parameter
checks, early stopping, snapshots (LaSVM 1.1's -T/-l), traces, svm-train end to end, lasvm plot."""

import csv
import os

import numpy as np
import pytest
from click.testing import CliRunner

from lasvm_cli.numerics.data import Problem, subset
from lasvm_cli.base.errors import ParameterError
from lasvm_cli.io.model_file import read_model
from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.numerics.kernels import RBF, make_params
from lasvm_cli.training.online_options import OnlineOptions, parse_snapshots
from lasvm_cli.training.run_control import OnlineControl
from lasvm_cli.training.params import TrainParams
from lasvm_cli.solvers import lasvm as L
from lasvm_cli.solvers.lasvm import LasvmRun, solve_lasvm
from lasvm_cli.numerics.classes import group_classes
from lasvm_cli.training.fit import fit as train  # the online options go through fit
from lasvm_cli.training.train import decision_on

from .conftest import HEART

KW = dict(seed=7, epochs=2)


@pytest.fixture(scope="module")
def heart():
    d = read_svmlight(str(HEART))
    prob = Problem.from_svmlight(d)
    y = np.where(d.y > 0, 1.0, -1.0)
    return prob, y, make_params(RBF, gamma=1 / 13)


def _driven(control, kd, kp, y, Cp, Cn, progress=None, **kw):
    """LASVM's run on these rows, driven by ``control`` (as the training layer's driver
    does)."""
    return control.drive(LasvmRun(kd, kp, y, Cp, Cn, **kw), progress)


def _solve(heart, opts, **kw):
    prob, y, kp = heart
    return _driven(OnlineControl(opts), prob.kd, kp, y, 1.0, 1.0, **{**KW, **kw})


def _same(a, b):
    assert np.array_equal(a.coef[0], b.coef[0])
    assert a.rho == b.rho and a.obj == b.obj and a.n_sv == b.n_sv


def test_resume_equals_uninterrupted(heart, tmp_path):
    prob, y, kp = heart
    ref = solve_lasvm(prob.kd, kp, y, 1.0, 1.0, **KW)
    state = str(tmp_path / "run.npz")
    # stop twice (online phase, second epoch), saving at every chunk; resume each time
    r1 = _solve(heart, OnlineOptions(save_state=state, save_every=0, stop_iterations=130))
    assert r1.counters["iterations"] > 0
    r2 = _solve(heart, OnlineOptions(resume=state, save_state=state, stop_iterations=400))
    r3 = _solve(heart, OnlineOptions(resume=state, save_state=state))
    _same(r3, ref)
    # the final state resumes to the same model, with nothing left to do
    _same(_solve(heart, OnlineOptions(resume=state)), ref)
    # stopping is not the end: the stopped models are the finished copies at the stop
    assert r1.obj > r2.obj > ref.obj
    # a stop-by-sv run and a resume also reproduce the run
    s2 = str(tmp_path / "sv.npz")
    _solve(heart, OnlineOptions(save_state=s2, stop_sv=60))
    _same(_solve(heart, OnlineOptions(resume=s2)), ref)


def test_resume_checks_data_and_parameters(heart, tmp_path):
    prob, y, kp = heart
    state = str(tmp_path / "s.npz")
    _solve(heart, OnlineOptions(save_state=state, stop_iterations=50))
    other = subset(prob.kd, np.arange(1, prob.n))
    with pytest.raises(ParameterError, match="other training data"):
        _driven(OnlineControl(
            OnlineOptions(resume=state)), other, kp, y[1:], 1.0, 1.0, **KW)
    flipped = y.copy()
    flipped[3] = -flipped[3]
    with pytest.raises(ParameterError, match="other training data"):
        _driven(OnlineControl(OnlineOptions(resume=state)), prob.kd, kp, flipped, 1.0, 1.0,
                **KW)
    with pytest.raises(ParameterError, match="other parameters: Cp"):
        _driven(OnlineControl(
            OnlineOptions(resume=state)), prob.kd, kp, y, 2.0, 1.0, **KW)
    with pytest.raises(ParameterError, match="other parameters: .*gamma"):
        _driven(OnlineControl(OnlineOptions(resume=state)), prob.kd,
                make_params(RBF, gamma=0.5), y, 1.0, 1.0, **KW)
    bad = tmp_path / "bad.npz"
    bad.write_text("not a state")
    with pytest.raises(ParameterError, match="cannot read LASVM state"):
        _solve(heart, OnlineOptions(resume=str(bad)))
    # more epochs are allowed (how long to run, not what to compute)
    _solve(heart, OnlineOptions(resume=state), epochs=3)


def test_state_save_is_atomic(heart, tmp_path, monkeypatch):
    """A crash while writing leaves the previous state file intact and no temporary file."""
    state = tmp_path / "s.npz"
    _solve(heart, OnlineOptions(save_state=str(state), stop_iterations=40))
    before = state.read_bytes()
    import lasvm_cli.training.state_file as O

    def boom(*a, **k):
        raise RuntimeError("killed")

    monkeypatch.setattr(O.np, "savez", boom)
    with pytest.raises(RuntimeError):
        _solve(heart, OnlineOptions(save_state=str(state), stop_iterations=80))
    assert state.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["s.npz"]


def _params(**kw):
    return TrainParams(solver="lasvm", gamma=1 / 13, **{**KW, **kw})


def test_snapshots_are_models_of_the_run(heart, tmp_path):
    prob, y, kp = heart
    base = str(tmp_path / "m")
    model = train(prob, _params(snapshots="25,60,120", model_file=base))
    snaps = model.online.snapshots_written
    assert [s["path"] for s in snaps] == [f"{base}.25", f"{base}.60", f"{base}.120"]
    assert [s["iterations"] for s in snaps] == [25, 60, 120]
    assert model.online.stop_reason.startswith("last snapshot")
    for s in snaps:
        m = read_model(s["path"])
        assert m.svm_type == "c_svc" and m.nr_class == 2 and list(m.label) == [1, -1]
    # snapshot at 60 = the run stopped at 60 and finished = LasvmRun's finished copy at 60
    stopped = train(prob, _params(stop_iterations=60))
    m60 = read_model(f"{base}.60")
    dv = m60.decision_values(prob.kd)[:, 0]
    np.testing.assert_allclose(dv, stopped.decision_values(prob.kd)[:, 0], rtol=0, atol=1e-12)
    grouped = group_classes(prob.y)[3]  # train's sub-problem: rows grouped by class, +1 first
    run = L.LasvmRun(subset(prob.kd, grouped), kp, y[grouped], 1.0, 1.0, **KW)
    run.begin()
    while run.processed < 60:
        run.step(60 - run.processed)
    res = run.finished_copy().result()
    f = decision_on(prob.kd, grouped, res.coef[0], res.rho[0], np.arange(prob.n), kp)
    np.testing.assert_allclose(dv, f, atol=1e-6)  # model file: %.17g coefs, %.8g features
    np.testing.assert_array_equal(m60.predict(prob.kd), np.where(f > 0, 1.0, -1.0))
    # the final model of a snapshot run is the last snapshot
    np.testing.assert_array_equal(read_model(f"{base}.120").sv_coef, model.sv_coef)


def test_snapshots_by_sv_and_seconds(heart, tmp_path):
    prob, y, kp = heart
    base = str(tmp_path / "m")
    warns = []
    model = train(prob, _params(snapshots="20,40,60", snapshot_by="sv", model_file=base))
    snaps = model.online.snapshots_written
    assert [s["value"] for s in snaps] == [20, 40, 60]
    for s in snaps:
        assert s["expansion"] >= s["value"]
    its = [s["iterations"] for s in snaps]
    assert its == sorted(its)
    model = train(prob, _params(snapshots="0,1e9", snapshot_by="seconds", model_file=base),
                  warn=warns.append)
    assert os.path.exists(f"{base}.0") and not os.path.exists(f"{base}.1e+09")
    assert any("not reached" in w for w in warns)


def test_trace_columns(heart, tmp_path):
    prob, y, kp = heart
    trace = tmp_path / "t.csv"
    train(prob, _params(trace=str(trace), trace_every=50, test_file=str(HEART)))
    rows = list(csv.DictReader(trace.open()))
    assert list(rows[0]) == ["iterations", "seconds", "kernel_evals", "sv", "delta",
                             "dual_objective", "test_error", "phase"]
    it = [int(r["iterations"]) for r in rows]
    sec = [float(r["seconds"]) for r in rows]
    ke = [int(r["kernel_evals"]) for r in rows]
    assert it == sorted(it) and sec == sorted(sec) and ke == sorted(ke)
    assert it[0] == 10 and it[1:4] == [50, 100, 150] and len(rows) >= 10
    assert [r["phase"] for r in rows] == ["online"] * (len(rows) - 1) + ["final"]
    err = [float(r["test_error"]) for r in rows]
    assert all(0 <= e <= 1 for e in err)
    assert err[-1] < 0.2 and err[-1] < err[0]  # training error of the final machine
    w = [float(r["dual_objective"]) for r in rows]
    assert w[-1] == pytest.approx(100.877, rel=1e-4)  # two epochs: LIBSVM's optimum
    assert float(rows[-1]["delta"]) <= 1e-3


def test_trace_continues_after_resume(heart, tmp_path):
    prob, y, kp = heart
    trace, state = tmp_path / "t.csv", str(tmp_path / "s.npz")
    train(prob, _params(trace=str(trace), trace_every=40, stop_iterations=200,
                        save_state=state))
    first = trace.read_text().splitlines()
    assert first[-1].endswith(",final")
    train(prob, _params(trace=str(trace), trace_every=40, resume=state))
    whole = trace.read_text().splitlines()
    # the stopped run's final row is replaced; the online rows continue
    assert whole[:len(first) - 1] == first[:-1]
    it = [int(r.split(",")[0]) for r in whole[1:]]
    assert it == sorted(it) and whole[len(first) - 1].split(",")[0] == "240"
    assert sum(r.endswith(",final") for r in whole) == 1


def test_option_errors(heart, tmp_path):
    prob, y, kp = heart
    with pytest.raises(ParameterError, match="--snapshot-by"):
        train(prob, _params(snapshots="10", snapshot_by="epochs", model_file="m"))
    with pytest.raises(ParameterError, match="--snapshots"):
        parse_snapshots("10,x")
    assert parse_snapshots("5000 1000,2000") == (1000.0, 2000.0, 5000.0)
    one = Problem(np.ones(prob.n), prob.indptr, prob.indices, prob.values, prob.max_index)
    with pytest.raises(ParameterError, match="only one class"):
        train(one, _params(stop_iterations=10))


# ---------------------------------------------------------------------------------------------
# multi-class: the binary machines one after the other


@pytest.fixture(scope="module")
def three(heart):
    prob = heart[0]
    return Problem(np.where(prob.y > 0, 1.0, np.arange(prob.n) % 2 + 2), prob.indptr,
                   prob.indices, prob.values, prob.max_index)


def _same_model(a, b):
    np.testing.assert_array_equal(a.sv_coef, b.sv_coef)
    np.testing.assert_array_equal(a.rho, b.rho)
    np.testing.assert_array_equal(a.sv_indices, b.sv_indices)


@pytest.mark.parametrize("multiclass", ["ovo", "ovr"])
def test_multiclass_stop_and_resume_equal_uninterrupted(three, tmp_path, monkeypatch, multiclass):
    import shutil

    import lasvm_cli.training.run_control as O

    ref = train(three, _params(multiclass=multiclass))
    state, killed = str(tmp_path / "s.npz"), str(tmp_path / "killed.npz")
    # every machine stops at 60 iterations; the state file holds all three
    stopped = train(three, _params(multiclass=multiclass, save_state=state, save_every=0,
                                   stop_iterations=60))
    assert stopped.online.stop_reason == "--stop-iterations 60"
    assert len(stopped.online.results) == 3
    assert all(r.counters["processed"] == 60 for r in stopped.online.results)
    # resuming without the limit continues every machine: the uninterrupted model, bit for bit
    _same_model(train(three, _params(multiclass=multiclass, resume=state)), ref)
    # a run killed while its second machine was in its online phase
    save = O.OnlineControl._save

    def save_and_copy(self, run):
        save(self, run)
        if self.index == 1 and run.online and run.processed > 100 and \
                not os.path.exists(killed):
            shutil.copy(state, killed)

    monkeypatch.setattr(O.OnlineControl, "_save", save_and_copy)
    train(three, _params(multiclass=multiclass, save_state=state, save_every=0))
    monkeypatch.undo()
    assert os.path.exists(killed)
    resumed = train(three, _params(multiclass=multiclass, resume=killed))
    _same_model(resumed, ref)
    with pytest.raises(ParameterError, match="other training data"):
        train(three, _params(multiclass="ovr" if multiclass == "ovo" else "ovo",
                             resume=killed))
    two = Problem(np.where(three.y > 1, -1.0, 1.0), three.indptr, three.indices, three.values,
                  three.max_index)
    with pytest.raises(ParameterError, match="saved for 3 binary machine"):
        train(two, _params(multiclass=multiclass, resume=killed))


def test_multiclass_snapshots_are_models_of_every_machine(three, tmp_path):
    base = str(tmp_path / "m")
    model = train(three, _params(snapshots="20,60,100000", model_file=base), warn=print)
    assert [s["path"] for s in model.online.snapshots_written] == [f"{base}.20", f"{base}.60"]
    assert not os.path.exists(f"{base}.100000")
    for v in (20, 60):
        snap = read_model(f"{base}.{v}")
        assert snap.nr_class == 3 and list(snap.label) == list(model.label)
        stopped = train(three, _params(stop_iterations=v))
        np.testing.assert_allclose(snap.decision_values(three.kd),
                                   stopped.decision_values(three.kd), atol=1e-12)
    # a machine that ends before a value gives its final model to that snapshot
    small = Problem(three.y[:60], *three.csr_rows(np.arange(60)), three.max_index)
    count = np.bincount(small.y.astype(int))[1:]
    sizes = [count[0] + count[1], count[0] + count[2], count[1] + count[2]]
    v = (min(sizes) + max(sizes)) // 2  # iterations of one epoch = the machine's examples
    assert min(sizes) < v <= max(sizes)
    base2 = str(tmp_path / "s")
    train(small, _params(snapshots=str(v), model_file=base2, epochs=1, finish=False))
    final = train(small, _params(epochs=1, finish=False))
    snap = read_model(f"{base2}.{v}")
    assert snap.nr_class == 3
    # the machines that ended before v (all of them, at v = max) give their final models
    if v == max(sizes):
        np.testing.assert_array_equal(snap.sv_coef, final.sv_coef)


def test_multiclass_trace_has_a_machine_column(three, tmp_path):
    trace = tmp_path / "t.csv"
    model = train(three, _params(trace=str(trace), trace_every=50, test_file=str(HEART)))
    a, b, c = model.label  # LIBSVM's order of first appearance: 1, 3, 2
    pairs = [f"{a}-{b}", f"{a}-{c}", f"{b}-{c}"]
    rows = list(csv.DictReader(trace.open()))
    assert list(rows[0])[-1] == "machine"
    names = [r["machine"] for r in rows]
    assert list(dict.fromkeys(names)) == pairs
    assert [r["machine"] for r in rows if r["phase"] == "final"] == pairs
    # heart_scale's test rows all have labels +1/-1: machine 1-x is tested on the +1 rows
    # (class 1 against x), the machine of classes 2 and 3 on none of them
    assert all(r["test_error"] == "nan" for r in rows if r["machine"] == pairs[2])
    assert all(0 <= float(r["test_error"]) <= 1 for r in rows if r["machine"] == pairs[0])
    # lasvm plot draws one curve per machine
    from lasvm_cli.tools.plot import by_machine, read_trace

    split = by_machine(read_trace(str(trace)))
    assert [m for m, _ in split] == pairs
    assert sum(len(c["iterations"]) for _, c in split) == len(rows)
    if pytest.importorskip("matplotlib"):
        from lasvm_cli.cli.plot import main

        out = tmp_path / "multi.png"
        assert main([str(trace), "-o", str(out), "--x", "iterations"]) == 0
        assert out.read_bytes()[:4] == b"\x89PNG"


# ---------------------------------------------------------------------------------------------
# svm-train end to end


def _cli(args):
    from lasvm_cli.cli.main import svm_train

    return CliRunner().invoke(svm_train, args)


def test_svm_train_cli(tmp_path):
    d = str(tmp_path)
    common = ["--solver", "lasvm", "--epochs", "2", "--seed", "3", "-q"]
    r = _cli(common + [str(HEART), f"{d}/full.model"])
    assert r.exit_code == 0, r.output
    r = _cli(common + ["--save-state", f"{d}/s.npz", "--stop-iterations", "150", "--trace",
                       f"{d}/t.csv", "--trace-every", "50", "--test", str(HEART),
                       "--snapshots", "40,80", str(HEART), f"{d}/m"])
    assert r.exit_code == 0, r.output
    for name in ("m", "m.40", "m.80", "s.npz", "t.csv"):
        assert os.path.exists(f"{d}/{name}"), name
    read_model(f"{d}/m.40")
    r = _cli(common + ["--resume", f"{d}/s.npz", "--save-state", f"{d}/s.npz",
                       str(HEART), f"{d}/resumed.model"])
    assert r.exit_code == 0, r.output
    assert open(f"{d}/resumed.model").read() == open(f"{d}/full.model").read()
    # errors: resume on other data, options without --solver lasvm or with -v
    other = tmp_path / "other"
    other.write_text("".join(open(HEART).readlines()[:100]))
    r = _cli(common + ["--resume", f"{d}/s.npz", str(other), f"{d}/o.model"])
    assert r.exit_code == 1 and "other training data" in r.output
    r = _cli(["--stop-iterations", "10", str(HEART), f"{d}/x.model"])
    assert r.exit_code == 1 and "--solver lasvm" in r.output
    r = _cli(common + ["-v", "3", "--trace", f"{d}/x.csv", str(HEART)])
    assert r.exit_code == 1 and "without -v" in r.output


# ---------------------------------------------------------------------------------------------
# lasvm plot


def _trace(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("iterations,seconds,kernel_evals,sv,delta,dual_objective,test_error,phase\n"
                 "10,0.1,50,10,1,7,0.3,online\n100,0.5,900,40,0.5,40,0.2,online\n"
                 "100,0.6,1200,42,0.001,44,0.18,final\n")
    q = tmp_path / "u.tsv"
    q.write_text("iterations\tseconds\tsv\tdual_objective\n10\t0.1\t5\t3\n20\t0.2\t8\t6\n")
    return str(p), str(q)


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    from lasvm_cli.cli.plot import main
    from lasvm_cli.tools.plot import curve, read_trace

    p, q = _trace(tmp_path)
    assert curve(read_trace(p), "iterations") == ([10, 100, 100], [0.3, 0.2, 0.18], "test error")
    assert curve(read_trace(q), "sv")[2] == "dual objective"
    for x in ("time", "iterations", "sv"):
        out = tmp_path / f"c_{x}.png"
        assert main([p, q, "-o", str(out), "--x", x, "--label", "a", "--title", "t"]) == 0
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_errors(tmp_path, monkeypatch):
    import sys

    from lasvm_cli.cli.main import _run  # noqa: F401  (the module loads)
    from lasvm_cli.cli.plot import main
    from lasvm_cli.cli.report import UsageExit, run_guarded
    from lasvm_cli.tools.plot import PlotError

    p, _ = _trace(tmp_path)
    with pytest.raises(ParameterError, match="^Error: Missing option '-o'"):
        main([p])
    with pytest.raises(UsageExit):
        main([])
    with pytest.raises(UsageExit):
        main([p, "-o", "x.png", "--x", "epochs"])
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(PlotError, match="not a trace file"):
        main([str(bad), "-o", str(tmp_path / "x.png")])
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(PlotError, match=r"pip install 'lasvm-cli\[plot\]'"):
        main([p, "-o", str(tmp_path / "x.png")])
    assert run_guarded(main, [p, "-o", str(tmp_path / "x.png")]) == 1


def test_ctrl_c_with_save_state_says_interrupted_once(tmp_path, monkeypatch, capfd):
    """svm-train --save-state, Ctrl-C: one line naming the saved state, exit status 130."""
    import contextlib
    import signal

    from lasvm_cli.cli.report import run_guarded
    from lasvm_cli.cli.train import main

    from lasvm_cli.training.state_file import StateSaver

    deferred = StateSaver.deferred_interrupt

    @contextlib.contextmanager
    def ctrl_c_at_once(self):
        with deferred(self):
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends, caught by the handler
            yield

    monkeypatch.setattr(StateSaver, "deferred_interrupt", ctrl_c_at_once)
    state = tmp_path / "s.npz"
    code = run_guarded(main, ["-q", "--solver", "lasvm", "--save-state", str(state),
                              str(HEART), str(tmp_path / "m")])
    err = capfd.readouterr().err
    assert code == 130 and state.exists()
    assert err == f"interrupted: state saved to {state} (--resume {state} continues the run)\n"


def test_ctrl_c_saves_the_state_then_resume_finishes_the_run(heart, tmp_path):
    """SIGINT in the middle of a run: the state is saved at the next chunk boundary, then
    KeyboardInterrupt (svm-train: exit status 130); --resume gives the uninterrupted model."""
    import signal

    prob, y, kp = heart
    ref = solve_lasvm(prob.kd, kp, y, 1.0, 1.0, **KW)
    state = str(tmp_path / "s.npz")
    calls = []

    def progress(processed, n_sv):
        calls.append(processed)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends

    before = signal.getsignal(signal.SIGINT)  # SIG_IGN in a background job
    warns = []
    control = OnlineControl(OnlineOptions(save_state=state, save_every=1e9), warn=warns.append)
    with pytest.raises(KeyboardInterrupt):
        _driven(control, prob.kd, kp, y, 1.0, 1.0, progress=progress, **KW)
    assert any("interrupted: state saved" in w for w in warns)
    assert signal.getsignal(signal.SIGINT) is before  # the caller's handler restored
    _same(_solve(heart, OnlineOptions(resume=state)), ref)


def test_one_vs_rest_trace_errors_are_each_machines_own(three, tmp_path):
    trace = tmp_path / "t.csv"
    model = train(three, _params(multiclass="ovr", trace=str(trace), test_file=str(HEART)))
    finals = [r for r in csv.DictReader(trace.open()) if r["phase"] == "final"]
    assert [r["machine"] for r in finals] == [f"{c}-rest" for c in model.label]
    test = read_svmlight(str(HEART))
    dv = model.decision_values(Problem.from_svmlight(test).kd)
    for c, row in enumerate(finals):  # every test row counts: class c against the rest
        want = np.mean((dv[:, c] > 0) != (test.y == model.label[c]))
        assert float(row["test_error"]) == pytest.approx(want, abs=1e-6)
    assert float(finals[0]["test_error"]) < 0.3
