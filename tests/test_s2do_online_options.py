"""The long-run options of LASVM (lasvm_cli/training/run_control.py) on the online S2DO solver of
the all-in-one machines, ``--multiclass llw|cs --solver online``: --trace / --trace-every / --test,
--stop-iterations / --stop-sv / --stop-seconds, --snapshots / --snapshot-by, --save-state /
--resume. Iterations are examples processed (TWO_NEWS steps), sv the support patterns |W|; the
compiled pass is driven in chunks of examples, which must not change the iterates, and a
resumed run must be the uninterrupted one bit for bit."""

import csv
import lzma
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from lasvm_cli.cli.main import svm_predict, svm_train

from .conftest import HEART, run_cli as run

from .conftest import shared_file

SCHEMES = ["llw", "cs"]


def train(data, model, *args, code=0):
    return run(svm_train, ["--solver", "online", "-g", "0.5", "-c", "2", *map(str, args),
                           str(data), str(model)], code=code)


def write_svm(path, labels, X):
    with open(path, "w") as f:
        for y, x in zip(labels, X):
            f.write(f"{y} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(x)) + "\n")


@pytest.fixture(scope="module")
def four_classes(tmp_path_factory):
    """240 training and 120 test rows of four overlapping Gaussian classes (labels 7, -1, 3,
    2), sparse-written."""
    rng = np.random.default_rng(21)
    centres = rng.normal(size=(4, 5)) * 1.2
    labels = np.array([7, -1, 3, 2])
    d = tmp_path_factory.mktemp("four")
    paths = []
    for name, n in (("train", 240), ("test", 120)):
        yc = rng.integers(0, 4, n)
        X = centres[yc] + rng.normal(size=(n, 5))
        write_svm(d / name, labels[yc], X)
        paths.append(d / name)
    return paths


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows


def dual_of(stdout):
    return float(re.search(r"dual = ([-0-9.e+]+)", stdout).group(1))


def total_sv(model_path):
    return int(re.search(r"^total_sv (\d+)$", model_path.read_text(), re.M).group(1))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_trace_leaves_the_model_unchanged_and_reports_the_run(four_classes, tmp_path, scheme):
    data, test = four_classes
    plain = tmp_path / "plain.model"
    out_plain = train(data, plain, "--multiclass", scheme, "--epochs", "2", "--seed", "5").stdout
    traced = tmp_path / "traced.model"
    trace = tmp_path / "trace.csv"
    out = train(data, traced, "--multiclass", scheme, "--epochs", "2", "--seed", "5",
                "--trace", trace, "--trace-every", "50", "--test", test).stdout
    assert traced.read_bytes() == plain.read_bytes()
    assert dual_of(out) == dual_of(out_plain)
    header = trace.read_text().split("\n", 1)[0].split(",")
    assert header == ["iterations", "seconds", "kernel_evals", "sv", "delta", "dual_objective",
                      "test_error", "phase", "s2do_steps", "epoch"]
    rows = read_rows(trace)
    its = [int(r["iterations"]) for r in rows]
    # every 50 examples from 0 (the empty machine), then the final row: 2 epochs of 240
    assert its == list(range(0, 481, 50)) + [480]
    assert [r["phase"] for r in rows] == ["online"] * (len(rows) - 1) + ["final"]
    assert float(rows[-1]["epoch"]) == 2.0 and float(rows[5]["epoch"]) == pytest.approx(250 / 240)
    assert rows[0]["dual_objective"] == "0" and rows[0]["sv"] == "0"
    duals = [float(r["dual_objective"]) for r in rows]
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(duals, duals[1:]))  # S2DO steps ascend
    assert duals[-1] == pytest.approx(dual_of(out), rel=1e-6)
    for col in ("kernel_evals", "s2do_steps", "seconds"):
        vals = [float(r[col]) for r in rows]
        assert vals == sorted(vals), col
    assert int(rows[-1]["sv"]) == total_sv(traced)
    # the final row's test error is svm-predict's on the written model
    pred = run(svm_predict, [str(test), str(traced), str(tmp_path / "pred")]).stdout
    accuracy = float(re.search(r"Accuracy = ([0-9.]+)%", pred).group(1))
    assert float(rows[-1]["test_error"]) == pytest.approx(1 - accuracy / 100, abs=1e-4)
    assert float(rows[0]["test_error"]) > float(rows[-1]["test_error"])


def test_trace_plots(four_classes, tmp_path):
    pytest.importorskip("matplotlib")
    from lasvm_cli.tools.plot import plot_traces, read_trace

    data, test = four_classes
    trace = tmp_path / "t.csv"
    train(data, tmp_path / "m", "--multiclass", "cs", "--trace", trace, "--trace-every", "60",
          "--test", test, "-q")
    cols = read_trace(str(trace))
    assert cols["phase"][-1] == "final" and cols["iterations"][-1] == 240.0
    for x, y in (("iterations", None), ("kernel", "dual"), ("time", "error"), ("sv", None)):
        out = tmp_path / f"{x}.png"
        plot_traces([str(trace)], str(out), x=x, y=y)
        assert out.stat().st_size > 1000


@pytest.mark.parametrize("scheme", SCHEMES)
def test_stop_iterations_is_the_snapshot_at_that_count(four_classes, tmp_path, scheme):
    data, _ = four_classes
    trace = tmp_path / "t.csv"
    stopped = tmp_path / "stopped.model"
    out = train(data, stopped, "--multiclass", scheme, "--epochs", "2", "--seed", "2",
                "--stop-iterations", "300", "--trace", trace, "--trace-every", "100").stdout
    assert "stopped at 300 iterations (--stop-iterations 300)" in out
    rows = read_rows(trace)
    assert [int(r["iterations"]) for r in rows] == [0, 100, 200, 300, 300]
    assert rows[-1]["phase"] == "final" and float(rows[-1]["epoch"]) == 1.25
    snap = tmp_path / "snap.model"
    train(data, snap, "--multiclass", scheme, "--epochs", "2", "--seed", "2", "-q",
          "--snapshots", "120,300,470", "--snapshot-by", "iterations")
    assert (tmp_path / "snap.model.300").read_bytes() == stopped.read_bytes()
    # the last snapshot ends the run (as LASVM's): the model is the one at 470
    assert (tmp_path / "snap.model.470").read_bytes() == snap.read_bytes()
    full = tmp_path / "full.model"
    train(data, full, "--multiclass", scheme, "--epochs", "2", "--seed", "2", "-q")
    assert full.read_bytes() != stopped.read_bytes()
    assert full.read_bytes() != snap.read_bytes()
    # a limit beyond the run changes nothing
    late = tmp_path / "late.model"
    train(data, late, "--multiclass", scheme, "--epochs", "2", "--seed", "2", "-q",
          "--stop-iterations", "100000", "--stop-sv", "100000", "--stop-seconds", "1e9")
    assert late.read_bytes() == full.read_bytes()


def test_stop_sv_stops_at_the_first_check_past_the_limit(four_classes, tmp_path):
    data, _ = four_classes
    trace = tmp_path / "t.csv"
    model = tmp_path / "m"
    out = train(data, model, "--multiclass", "llw", "--stop-sv", "90", "--trace", trace,
                "--trace-every", "100000").stdout
    m = re.search(r"stopped at (\d+) iterations \(--stop-sv 90\)", out)
    assert m
    stop = int(m.group(1))
    assert 0 < stop < 240 and stop % 100 == 0  # checked every 100 examples, as LASVM's
    assert total_sv(model) >= 90
    # one check earlier |W| was below the limit: the run to stop - 100 examples
    before = tmp_path / "before"
    train(data, before, "--multiclass", "llw", "--stop-iterations", stop - 100, "-q")
    assert total_sv(before) < 90
    assert int(read_rows(trace)[-1]["sv"]) == total_sv(model)


def test_stop_seconds(four_classes, tmp_path):
    data, _ = four_classes
    trace = tmp_path / "t.csv"
    model = tmp_path / "m"
    out = train(data, model, "--multiclass", "cs", "--stop-seconds", "0", "--trace",
                trace).stdout
    assert "stopped at 0 iterations (--stop-seconds 0)" in out
    assert total_sv(model) == 0
    rows = read_rows(trace)
    assert [(r["iterations"], r["phase"]) for r in rows] == [("0", "online"), ("0", "final")]


def test_snapshots_by_sv_and_seconds(four_classes, tmp_path):
    data, _ = four_classes
    model = tmp_path / "m"
    res = train(data, model, "--multiclass", "cs", "--epochs", "2", "--snapshots", "40,80",
                "--snapshot-by", "sv")
    for v in (40, 80):
        assert total_sv(tmp_path / f"m.{v}") >= v
    assert model.read_bytes() == (tmp_path / "m.80").read_bytes()
    assert "stopped at" in res.stdout and "last snapshot (sv 80)" in res.stdout
    model2 = tmp_path / "s"
    res = train(data, model2, "--multiclass", "llw", "--snapshots", "0,1e9", "--snapshot-by",
                "seconds")
    assert (tmp_path / "s.0").exists() and not (tmp_path / "s.1e+09").exists()
    assert "snapshot at seconds 1e+09 not reached" in res.stderr
    # the model after an unreached last value is the whole run's
    full = tmp_path / "full"
    train(data, full, "--multiclass", "llw", "-q")
    assert model2.read_bytes() == full.read_bytes()


def test_usps_rows_traced_and_plain_give_the_same_model(tmp_path):
    """The first 300 rows of usps (10 classes, 256 dense features)."""
    with lzma.open(shared_file("usps", "train"), "rt") as f:
        lines = [next(f) for _ in range(300)]
    data = tmp_path / "usps300"
    data.write_text("".join(lines))
    for scheme in SCHEMES:
        args = ["--solver", "online", "--multiclass", scheme, "-g", "0.01", "--seed", "7", "-q"]
        run(svm_train, args + [str(data), str(tmp_path / "plain")])
        run(svm_train, args + ["--trace", str(tmp_path / "t.csv"), "--trace-every", "7",
                               "--test", str(data), str(data), str(tmp_path / "traced")])
        assert (tmp_path / "plain").read_bytes() == (tmp_path / "traced").read_bytes()
        assert len(read_rows(tmp_path / "t.csv")) == 300 // 7 + 2


@pytest.mark.parametrize("args, message", [
    (["--multiclass", "llw", "--solver", "smo", "--trace", "t.csv"],
     "only with --solver lasvm|lasvm-g|full-svm|lasvm-nc|lasvm-i|track1|track2|track2-lasvm|"
     "rcd (or --multiclass llw|cs --solver online)"),
    (["--multiclass", "cs", "--solver", "online", "-v", "3", "--trace", "t.csv"],
     "without -v"),
    (["--multiclass", "cs", "--solver", "online", "--test", "t.svm"], "--test needs --trace"),
])
def test_refused_options(four_classes, tmp_path, args, message):
    data, _ = four_classes
    res = run(svm_train, args + [str(data), str(tmp_path / "m")], code=1)
    assert res.stderr.startswith("ERROR: ") and message in res.stderr, res.stderr
    assert not (tmp_path / "m").exists()


def test_traced_all_in_one_runs_do_not_load_lasvm(four_classes, tmp_path):
    """The online options' driver is shared with LASVM, LASVM's compiled code is not: an
    llw/cs run with --trace and --stop-sv loads neither LASVM's solver nor its core."""
    data, test = four_classes
    code = ("import sys\nfrom lasvm_cli.cli.train import main\n"
            f"main(['-q', '--multiclass', 'llw', '--solver', 'online', '--trace', "
            f"{str(tmp_path / 't.csv')!r}, '--test', {str(test)!r}, '--stop-sv', '50', "
            f"{str(data)!r}, {str(tmp_path / 'm')!r}])\n"
            "bad = [m for m in sys.modules if m.endswith(('online_core', 'solvers.lasvm', "
            "'finishing'))]\n"
            "assert not bad, bad\n"
            "assert 'lasvm_cli.solvers.s2do_online' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert (tmp_path / "m").exists()


def trace_without_seconds(path):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in read_rows(path)]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_resume_is_the_uninterrupted_run(four_classes, tmp_path, scheme):
    data, test = four_classes
    common = ["--multiclass", scheme, "--epochs", "2", "--seed", "4", "-q", "--trace-every", "40",
              "--test", test]
    full = tmp_path / "full"
    train(data, full, *common, "--trace", tmp_path / "full.csv")
    state = tmp_path / "s.npz"
    trace = tmp_path / "t.csv"
    # stopped in the middle of the second epoch, then continued to the end
    train(data, tmp_path / "part", *common, "--trace", trace, "--save-state", state,
          "--stop-iterations", "310")
    res = train(data, tmp_path / "resumed", *common, "--trace", trace, "--resume", state,
                "--save-state", state)
    assert (tmp_path / "resumed").read_bytes() == full.read_bytes()
    # the trace continues where the state was saved (the stop's final row replaced): every
    # column but the seconds is the uninterrupted run's, kernel evaluations included (the
    # state holds the kernel cache)
    assert trace_without_seconds(trace) == trace_without_seconds(tmp_path / "full.csv")
    assert res.exit_code == 0
    # a larger --epochs continues a run that ended
    three = tmp_path / "three"
    train(data, three, "--multiclass", scheme, "--epochs", "3", "--seed", "4", "-q")
    train(data, tmp_path / "more", "--multiclass", scheme, "--epochs", "3", "--seed", "4", "-q",
          "--resume", state)
    assert (tmp_path / "more").read_bytes() == three.read_bytes()
    assert three.read_bytes() != full.read_bytes()


def test_resume_keeps_the_snapshots(four_classes, tmp_path):
    data, _ = four_classes
    common = ["--multiclass", "cs", "--epochs", "2", "--seed", "8", "-q", "--snapshots",
              "150,400"]
    train(data, tmp_path / "full", *common)
    state = tmp_path / "s.npz"
    train(data, tmp_path / "part", *common, "--save-state", state, "--stop-iterations", "250")
    assert (tmp_path / "part.150").read_bytes() == (tmp_path / "full.150").read_bytes()
    assert not (tmp_path / "part.400").exists()
    train(data, tmp_path / "part", *common, "--resume", state)
    for suffix in ("", ".150", ".400"):
        assert (tmp_path / f"part{suffix}").read_bytes() == \
            (tmp_path / f"full{suffix}").read_bytes()


def test_resume_refuses_other_parameters_and_solvers(four_classes, tmp_path):
    data, _ = four_classes
    state = tmp_path / "s.npz"
    train(data, tmp_path / "m", "--multiclass", "llw", "-q", "--save-state", state,
          "--stop-iterations", "100")
    res = train(data, tmp_path / "x", "--multiclass", "llw", "-c", "3", "--resume", state,
                code=1)
    assert "the state was saved with other parameters: C 2.0 (now 3.0)" in res.stderr
    res = train(data, tmp_path / "x", "--multiclass", "cs", "--resume", state, code=1)
    assert "multiclass 'llw' (now 'cs')" in res.stderr
    res = train(data, tmp_path / "x", "--multiclass", "llw", "-m", "1", "--resume", state,
                code=1)
    assert "cache_mb 100.0 (now 1.0)" in res.stderr
    res = run(svm_train, ["--solver", "lasvm", "--resume", str(state), str(data),
                          str(tmp_path / "x")], code=1)
    assert res.stderr == (f"ERROR: {state}: the state was saved by --multiclass llw --solver "
                          "online, not by a LASVM-family solver as this run\n")
    assert not (tmp_path / "x").exists()



def test_resume_of_a_lasvm_state_as_all_in_one_names_the_solver(tmp_path):
    state = tmp_path / "s.npz"
    run(svm_train, ["-q", "--solver", "lasvm", "--save-state", str(state), str(HEART),
                    str(tmp_path / "m")])
    res = train(HEART, tmp_path / "x", "--multiclass", "llw", "--resume", state, code=1)
    assert res.stderr == (f"ERROR: {state}: the state was saved by a LASVM-family solver, not "
                          "by --multiclass llw --solver online as this run\n")
    assert not (tmp_path / "x").exists()


def test_ctrl_c_saves_the_state_then_resume_finishes_the_run(tmp_path):
    """SIGINT during a run: the state is saved at the next chunk boundary, then
    KeyboardInterrupt; --resume gives the uninterrupted model."""
    import os
    import signal

    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import make_params
    from lasvm_cli.training.online_options import OnlineOptions
    from lasvm_cli.training.run_control import OnlineControl
    from lasvm_cli.qp.s2do import CS
    from lasvm_cli.solvers.s2do_online import S2doRun, solve_online

    rng = np.random.default_rng(3)
    yc = rng.integers(0, 3, 150)
    X = rng.normal(size=(3, 4))[yc] + rng.normal(size=(150, 4))
    Xs = sp.csr_matrix(X)
    kd, kp = kernel_data(Xs.indptr, Xs.indices + 1, Xs.data), make_params(2, 3, 0.5, 0.0)
    kw = dict(epochs=3, seed_value=6)
    ref = solve_online(kd, kp, yc, 3, 2.0, CS, **kw)
    state = str(tmp_path / "s.npz")

    def progress(epoch, _):
        if epoch == 1:
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends

    before = signal.getsignal(signal.SIGINT)  # SIG_IGN in a background job
    warns = []
    control = OnlineControl(OnlineOptions(save_state=state, save_every=1e9), warn=warns.append)
    with pytest.raises(KeyboardInterrupt):
        control.drive(S2doRun(kd, kp, yc, 3, 2.0, CS, progress=progress, **kw))
    assert any("interrupted: state saved" in w for w in warns)
    assert signal.getsignal(signal.SIGINT) is before  # the caller's handler restored
    # an unrelated compiled draw in between must not matter: numba's RNG is in the state
    solve_online(kd, kp, yc, 3, 2.0, CS, epochs=1, seed_value=99)
    res = OnlineControl(OnlineOptions(resume=state)).drive(S2doRun(kd, kp, yc, 3, 2.0, CS, **kw))
    np.testing.assert_array_equal(res.coef, ref.coef)
    assert res.n_iter == ref.n_iter

