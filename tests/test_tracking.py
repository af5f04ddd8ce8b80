"""The tracking solvers (solvers/tracking.py; Usunier, Bordes & Bottou 2010): weak duality on
every trace row, the cheap averaging (corrections 002-2) against the literal running mean of
line 8, batch rcd against an independent reference optimum of the bias-free box dual, oracles
derived from the paper (Figure 1's single example, Lemma 1, Theorem 2's bound), and the command
line (options, errors, teachers, multi-class models)."""

import math

import numpy as np
import pytest
from click.testing import CliRunner

from lasvm_cli.cli.main import svm_predict, svm_train
from lasvm_cli.numerics.data import Problem
from lasvm_cli.io.model_file import read_model
from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.numerics.kernels import LINEAR, make_params
from lasvm_cli.tools.plot import read_trace
from lasvm_cli.qp.tracking_core import TrackScalars
from lasvm_cli.solvers.tracking import TrackRun, duality_measures, shuffled

from .conftest import HEART, heart_rbf_gram, run_cli

SOLVERS = ("track1", "track2", "track2-lasvm", "rcd")


def run(args, code=0):
    return run_cli(svm_train, args, code)


@pytest.fixture(scope="module")
def heart():
    return heart_rbf_gram()


def mu(x, C):
    """mu(x) = sqrt(2x) + x / C (Lemma 1)."""
    return math.sqrt(2 * x) + x / C


# ---------------------------------------------------------------------------------------------
# weak duality, averaging


@pytest.mark.parametrize("solver", SOLVERS)
def test_weak_duality_on_every_trace_row(tmp_path, solver):
    """P_t >= D_t on every row (to 1e-12 relative: both are sums of float64 terms) and the gap
    column of eq. (4) (a sum of non-negative terms) is >= 0; t grows to l = 270."""
    trace = tmp_path / "t.csv"
    extra = ["--batch-iters", "5400"] if solver == "rcd" else []
    run(["-q", "--solver", solver, "-K", "3", "--trace", str(trace), "--trace-every", "30",
         "--test", str(HEART), *extra, str(HEART), str(tmp_path / "m")])
    cols = read_trace(trace)
    assert len(cols["t"]) >= 5 and cols["t"][-1] == 270
    for p, d, g in zip(cols["primal"], cols["dual"], cols["gap"]):
        assert p - d >= -1e-12 * max(1.0, abs(p))
        assert g >= 0.0
    assert all(0.0 <= e <= 1.0 for e in cols["test_error"])


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("average", [True, False])
def test_cheap_average_equals_the_literal_running_mean(heart, solver, average):
    """abar = alpha - S / k (corrections 002-2) against line 8 computed literally at every step, to
    1e-12, after every time index (rcd: every 50 steps, the mean of all its iterates)."""
    kd, kp, y, _ = heart
    r = TrackRun(kd, kp, y, 2.0, 2.0, algorithm=solver, K=4, average=True,
                 order=shuffled(y.size, 5), seed=5, literal=True, batch_iters=3000)
    worst = 0.0
    while not r.done:
        r.step(50 if solver == "rcd" else 1)
        worst = max(worst, np.abs(r.literal_average() - r.output_alpha()).max())
    assert worst <= 1e-12
    assert r.iterations == (3000 if solver == "rcd" else
                            270 * (4 if solver == "track1" else 5))


@pytest.mark.parametrize("solver", SOLVERS)
def test_nonzero_list_follows_alpha(heart, solver):
    """tr.nz / nz_coef / nz_at (what a new example's gradient reads instead of the seen set)
    hold exactly the examples with alpha != 0, their alphas and their entries, after every time
    index (rcd: every 50 steps); examples also leave the list (alpha back at a bound of 0)."""
    kd, kp, y, _ = heart
    r = TrackRun(kd, kp, y, 0.5, 0.5, algorithm=solver, K=4, order=shuffled(y.size, 5), seed=5,
                 batch_iters=3000)
    left = 0
    m_before = 0
    while not r.done:
        r.step(50 if solver == "rcd" else 1)
        tr, a = r.tr, r.alpha()
        m = TrackScalars(tr).nnz
        assert sorted(tr.nz[:m]) == list(np.flatnonzero(a))
        np.testing.assert_array_equal(tr.nz_coef[:m], a[tr.nz[:m]])
        assert (tr.nz_at[tr.nz[:m]] == np.arange(m)).all() and (tr.nz_at >= 0).sum() == m
        left += m < m_before
        m_before = m
    assert left > 0


# ---------------------------------------------------------------------------------------------
# rcd against a reference solver


def reference_optimum(K, y, C):
    """scipy's L-BFGS-B on the bias-free box dual, in the paper's variables (alpha in [0, C]):
    max sum alpha - 1/2 alpha' Q alpha, Q = yy'K. Returns the optimal dual value."""
    from scipy.optimize import minimize

    Q = (y[:, None] * y[None, :]) * K

    def f(a):
        Qa = Q @ a
        return 0.5 * a @ Qa - a.sum(), Qa - 1.0

    res = minimize(f, np.zeros(y.size), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, C)] * y.size,
                   options=dict(maxiter=100000, ftol=1e-16, gtol=1e-12, maxcor=50))
    return -res.fun


@pytest.mark.parametrize("C, steps", [(1.0, 300), (10.0, 3000)])
def test_rcd_reaches_the_bias_free_optimum(heart, C, steps):
    """rcd (last iterate) after ``steps`` x l steps: its dual value, recomputed in float64,
    within 1e-6 relative of L-BFGS-B's optimum on heart_scale (our rows are float32); at C = 10
    random coordinate ascent needs about ten times longer (300 l steps: 4e-5)."""
    pytest.importorskip("scipy")
    kd, kp, y, K = heart
    r = TrackRun(kd, kp, y, C, C, algorithm="rcd", K=steps, average=False, seed=3)
    while not r.done:
        r.step(100000)
    a = r.output_alpha()  # signed: y * alpha_paper
    ours = float(y @ a - 0.5 * a @ K @ a)
    best = reference_optimum(K, y, C)
    assert abs(ours - best) <= 1e-6 * abs(best)
    assert r.measures()["gap"] < 1e-6


# ---------------------------------------------------------------------------------------------
# oracles derived from the paper: Figure 1's single example, Lemma 1, Theorems 2 and 3


@pytest.mark.parametrize("C, table", [
    (1.5, [(0.0, 1.5), (0.3, 0.84), (0.6, 0.36), (0.9, 0.06), (1.2, 0.24), (1.5, 0.75)]),
    (0.7, [(0.0, 0.7), (0.28, 0.3024), (0.56, 0.0616), (0.7, 0.0)]),
])
def test_single_example_gap_values(C, table):
    """x = 1, y = 1, k = 1 (Figure 1): gap = (1 - a)(C - a) for a <= 1, a(a - 1) beyond;
    P - D from the same g equals eq. (4)'s gap."""
    y, Ci = np.array([1.0]), np.array([C])
    for a, gap in table:
        g = 1.0 - np.array([a])
        p, d, G = duality_measures(np.array([a]), g, y, Ci)
        assert G == pytest.approx(gap, abs=1e-12)
        assert p - d == pytest.approx(G, abs=1e-12)


@pytest.mark.parametrize("C, a_star", [(1.5, 1.0), (0.7, 0.7)])
def test_single_example_one_step_reaches_the_optimum(C, a_star):
    """One Newton step from 0 (linear kernel, x = 1): alpha* = min(1, C), gap 0, P* = D*."""
    kd = Problem(np.array([1.0]), np.array([0, 1]), np.array([1], np.int32),
                 np.array([1.0]), 1).kd
    r = TrackRun(kd, make_params(LINEAR), np.array([1.0]), C, C, algorithm="track2", K=1)
    r.step(1)
    assert r.output_alpha()[0] == pytest.approx(a_star)
    m = r.measures()
    assert m["gap"] == pytest.approx(0.0, abs=1e-12)
    assert m["primal"] == pytest.approx(a_star - a_star ** 2 / 2 if C < 1 else 0.5)


def test_gap_is_one_at_alpha_zero(heart):
    """P_t(0) = C t, D_t(0) = 0: the normalised gap at alpha = 0 is exactly 1."""
    kd, kp, y, _ = heart
    _, _, G = duality_measures(np.zeros(y.size), y.copy(), y, np.full(y.size, 3.0))
    assert G / (3.0 * y.size) == 1.0


def test_lemma1_bound_on_random_instances(heart):
    """Lemma 1: (P - D)/(C t) <= mu(E_i Delta_i) for random alpha in the box (bounds
    included), t <= 30, C in [0.01, 100], RBF (||x|| = 1)."""
    _, _, _, K = heart
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(500):
        t = int(rng.integers(1, 31))
        idx = rng.choice(K.shape[0], t, replace=False)
        Kt = K[np.ix_(idx, idx)]
        y = rng.choice([-1.0, 1.0], t)
        C = float(10 ** rng.uniform(-2, 2))
        ap = rng.uniform(0, C, t)
        ap[rng.random(t) < 0.3] = 0.0
        ap[rng.random(t) < 0.2] = C
        a = y * ap
        g = y - Kt @ a
        _, _, G = duality_measures(a, g, y, np.full(t, C))
        gp = y * g
        step = np.clip(gp / np.diag(Kt), -ap, C - ap)
        delta = step * gp - 0.5 * np.diag(Kt) * step ** 2
        worst = max(worst, (G / (C * t)) / mu(float(delta.mean()), C) if G > 0 else 0.0)
    assert worst <= 1.0


def test_tracking_gaps_below_the_bound_and_algorithm_2_below_1(tmp_path):
    """Mean normalised gap over a pass of heart_scale, 3 runs, C = 1, K = 5: below mu(C/K)
    (Theorem 2, 0.833), and Algorithm 2's below Algorithm 1's."""
    means = {}
    for solver in ("track1", "track2"):
        trace = tmp_path / f"{solver}.csv"
        run(["-q", "--solver", solver, "-K", "5", "--runs", "3", "--trace", str(trace),
             "--trace-every", "10", str(HEART), str(tmp_path / "m")])
        means[solver] = float(np.mean(read_trace(trace)["gap"]))
    assert means["track1"] < mu(1.0 / 5, 1.0)
    assert means["track2"] < means["track1"]


# ---------------------------------------------------------------------------------------------
# command line


@pytest.mark.parametrize("args, message", [
    (["--solver", "track1", "--eps", "4.5"], "--eps must satisfy 0 < eps <= 4C"),
    (["--solver", "track1", "--eps", "0"], "--eps must satisfy 0 < eps <= 4C"),
    (["--solver", "track1", "--eps", "-1"], "--eps must satisfy 0 < eps <= 4C"),
    (["--solver", "track1", "-K", "3", "--eps", "1"], "-K and --eps exclude each other"),
    (["--solver", "track1", "-K", "0"], "K < 1"),
    (["-K", "3"], "-K: only with --solver"),
    (["--solver", "lasvm", "--teacher", "active"], "--teacher: only with --solver"),
    (["--solver", "track2", "--teacher", "nope"], "unknown teacher 'nope'"),
    (["--solver", "track2", "--teacher", "order-file"], "needs --order FILE"),
    (["--solver", "track1", "-v", "3"], "-v: not with --solver track1"),
    (["--solver", "rcd", "--stream"], "--stream: not with --solver rcd"),
    (["--solver", "track2", "-v", "3", "--save-state", "x"], "-v: not with --solver track2"),
])
def test_option_errors(tmp_path, args, message):
    res = run([*args, str(HEART), str(tmp_path / "m")], code=1)
    assert res.stderr.startswith("ERROR: ") and message in res.stderr


def test_eps_gives_K():
    """K = ceil(8 C / eps^2): C = 1, eps = 2 -> 2; eps = 4C -> 1 (the largest allowed)."""
    from lasvm_cli.training.params import TrainParams
    from lasvm_cli.solvers import tracking_K

    assert tracking_K(TrainParams(solver="track1", track_eps=2.0))[0] == 2
    assert tracking_K(TrainParams(solver="track1", C=2.0, track_eps=8.0))[0] == 1
    assert tracking_K(TrainParams(solver="track1", C=1.0, track_eps=0.1))[0] == 800


@pytest.mark.parametrize("teacher", ["sequential", "shuffle", "active", "adversarial"])
def test_teachers_train_models_with_rho_zero(tmp_path, teacher):
    model = tmp_path / "m"
    run(["-q", "--solver", "track1", "-K", "3", "--teacher", teacher, "--pool", "20",
         "--max-examples", "150", str(HEART), str(model)])
    text = model.read_text()
    assert "\nrho 0\n" in text
    res = CliRunner().invoke(svm_predict, [str(HEART), str(model), str(tmp_path / "p")])
    acc = float(res.stdout.split("=")[1].split("%")[0])
    assert acc > 70.0


def test_order_file_teacher_learns_exactly_the_listed_rows(tmp_path):
    """--order FILE: only the listed rows are seen; every SV is one of them."""
    order = tmp_path / "order"
    listed = [5, 1, 77, 30, 200, 12, 150, 99, 45, 250, 3, 8]
    order.write_text("# a curriculum\n" + "\n".join(map(str, listed)) + "\n")
    model = tmp_path / "m"
    trace = tmp_path / "t.csv"
    run(["-q", "--solver", "track2", "-K", "5", "--teacher", "order-file", "--order", str(order),
         "--trace", str(trace), "--trace-every", "100", str(HEART), str(model)])
    assert read_trace(trace)["t"] == [len(listed)]
    d = read_svmlight(str(HEART))

    def key(idx, val):
        return tuple(int(i) for i in idx), tuple(round(float(v), 6) for v in val)

    allowed = {key(d.indices[d.indptr[r - 1]:d.indptr[r]], d.values[d.indptr[r - 1]:d.indptr[r]])
               for r in listed}
    m = read_model(str(model))
    assert 0 < m.sv_indptr.size - 1 <= len(listed)
    for s in range(m.sv_indptr.size - 1):
        a, b = m.sv_indptr[s], m.sv_indptr[s + 1]
        assert key(m.sv_indices[a:b], m.sv_values[a:b]) in allowed


def test_order_file_errors(tmp_path):
    order = tmp_path / "order"
    order.write_text("1 2 2\n")
    res = run(["--solver", "track1", "--teacher", "order-file", "--order", str(order),
               str(HEART), str(tmp_path / "m")], code=1)
    assert "row 2 is listed more than once" in res.stderr
    order.write_text("1 999\n")
    res = run(["--solver", "track1", "--teacher", "order-file", "--order", str(order),
               str(HEART), str(tmp_path / "m")], code=1)
    assert "row 999 out of range" in res.stderr


def test_no_average_outputs_the_last_iterate(heart):
    kd, kp, y, _ = heart
    r = TrackRun(kd, kp, y, 1.0, 1.0, algorithm="track1", K=4, average=False,
                 order=shuffled(y.size, 1))
    while not r.done:
        r.step(100)
    np.testing.assert_array_equal(r.result().coef[0], r.alpha())


@pytest.mark.parametrize("solver, every, at, positions", [
    ("track1", 50, None, [50, 100, 150, 200, 250, 270]),
    ("track1", None, [1, 7, 7, 300, 0], [1, 7, 270]),
    ("rcd", 20, None, [60, 120, 180, 200]),  # every 20 x K steps, and the end
    ("rcd", None, [5, 13, 64, 199], [5, 13, 64, 199, 200]),
])
def test_trace_rows_at_their_positions(heart, solver, every, at, positions):
    """trace_run's rows: every ``every`` examples (rcd: every ``every`` x K steps) or at the
    listed positions (deduplicated, past the end ignored), and always one at the end."""
    from lasvm_cli.training.tracking_control import trace_run

    kd, kp, y, _ = heart
    r = TrackRun(kd, kp, y, 1.0, 1.0, algorithm=solver, K=3, order=shuffled(y.size, 1),
                 batch_iters=200)
    rows = trace_run(r, every, at=at)
    assert [row["iterations" if solver == "rcd" else "t"] for row in rows] == positions


def test_multiclass_one_vs_one_and_one_vs_rest(tmp_path):
    """Three classes: LIBSVM's one-vs-one layout (3 rho, all 0) and one-vs-rest, trained with
    a trace per machine, predicting well on their training set."""
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    lines = []
    for r in range(150):
        c = r % 3
        x = centers[c] + rng.normal(0, 0.7, 2)
        lines.append(f"{[2, 7, 4][c]} 1:{x[0]:.4f} 2:{x[1]:.4f}")
    data = tmp_path / "three"
    data.write_text("\n".join(lines) + "\n")
    for scheme in ("ovo", "ovr"):
        model = tmp_path / f"m.{scheme}"
        trace = tmp_path / f"t.{scheme}"
        run(["-q", "--solver", "track2", "-K", "5", "-g", "0.5", "--multiclass", scheme,
             "--teacher", "sequential", "--trace", str(trace), str(data), str(model)])
        m = read_model(str(model))
        assert np.all(np.asarray(m.rho) == 0.0) and len(m.rho) == 3
        assert set(read_trace(trace)["machine"]) == ({"2-7", "2-4", "7-4"} if scheme == "ovo"
                                                     else {"2-rest", "7-rest", "4-rest"})
        res = CliRunner().invoke(svm_predict, [str(data), str(model), str(tmp_path / "p")])
        assert float(res.stdout.split("=")[1].split("%")[0]) > 90.0


def test_lasvm_plot_draws_the_gap_against_t(tmp_path):
    pytest.importorskip("matplotlib")
    from lasvm_cli.cli.main import lasvm

    trace = tmp_path / "t.csv"
    run(["-q", "--solver", "track1", "-K", "2", "--trace", str(trace), "--trace-every", "50",
         str(HEART), str(tmp_path / "m")])
    out = tmp_path / "gap.png"
    res = CliRunner().invoke(lasvm, ["plot", "--x", "examples", "--y", "gap", "--logy",
                                     str(trace), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 0
    res = CliRunner().invoke(lasvm, ["plot", "--y", "nope", str(trace), "-o", str(out)])
    assert res.exit_code == 1 and "no numeric 'nope' column" in res.output


def test_other_solvers_never_load_the_tracking_code(tmp_path):
    """Start-up: svm-train with smo or lasvm imports neither solvers/tracking.py nor
    training/tracking_control.py (SOLVERS loads modules lazily)."""
    import subprocess
    import sys

    code = ("import sys\nfrom lasvm_cli.cli.train import main\n"
            f"main(['-q', {str(HEART)!r}, {str(tmp_path / 'm')!r}])\n"
            f"main(['-q', '--solver', 'lasvm', {str(HEART)!r}, {str(tmp_path / 'm')!r}])\n"
            "print(sorted(m for m in sys.modules if 'track' in m))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def _binary_rbf_problem(n=300, d=150, seed=11):
    """Bit-set data (binary rows, 3 words) and labels of a planted rule, RBF."""
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import RBF

    rng = np.random.default_rng(seed)
    M = rng.random((n, d)) < 0.06
    indptr = np.concatenate([[0], np.cumsum(M.sum(1))]).astype(np.int64)
    idx = np.concatenate([np.flatnonzero(r) for r in M]).astype(np.int32)
    kd = kernel_data(indptr, idx, np.ones(idx.size), width=d)
    assert kd.bits.shape[0] == n
    y = np.where(M[:, :20].sum(1) + 0.3 * rng.standard_normal(n) > 1.0, 1.0, -1.0)
    return kd, make_params(RBF, 3, 0.1, 0.0), y


@pytest.mark.parametrize("solver", ["track1", "track2", "track2-lasvm"])
@pytest.mark.parametrize("data", ["bits", "heart"])
def test_run_in_the_teachers_order_is_the_same_run(heart, solver, data):
    """A fixed-order run on the data renumbered in the teacher's order (by_position, the default
    for bit-set data) takes the same steps as the run on the data as given: the same picks,
    alphas, averaged output, measures, kernel evaluations and result, exactly, in the caller's
    ids; also with max_examples (examples outside the order)."""
    if data == "bits":
        kd, kp, y = _binary_rbf_problem()
    else:
        kd, kp, y, _ = heart
    order = shuffled(y.size, 3)
    runs = [TrackRun(kd, kp, y, 1.0, 1.0, algorithm=solver, K=3, order=order, seed=2,
                     max_examples=y.size - 40, literal=True, by_position=flag)
            for flag in (False, True)]
    assert runs[0].perm is None and runs[1].perm is not None
    while not runs[0].done:
        for r in runs:
            r.step(7)
        plain, renumbered = runs
        np.testing.assert_array_equal(plain.picks(), renumbered.picks())
        np.testing.assert_array_equal(plain.alpha(), renumbered.alpha())
        np.testing.assert_array_equal(plain.output_alpha(), renumbered.output_alpha())
        np.testing.assert_array_equal(plain.literal_average(), renumbered.literal_average())
        np.testing.assert_array_equal(plain.seen(), renumbered.seen())
        assert plain.measures() == renumbered.measures()
        assert plain.kernel_evals == renumbered.kernel_evals
    a, b = (r.result() for r in runs)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert (a.obj, a.n_sv, a.n_bsv, a.counters) == (b.obj, b.n_sv, b.n_bsv, b.counters)


def test_renumbering_is_the_default_for_bit_sets_only(heart):
    kd, kp, y = _binary_rbf_problem()
    order = shuffled(y.size, 3)
    assert TrackRun(kd, kp, y, 1.0, 1.0, algorithm="track2", order=order).perm is not None
    for kwargs in (dict(order=np.arange(y.size)), dict(teacher="active"),
                   dict(order=np.concatenate([order, order[:3]]))):
        assert TrackRun(kd, kp, y, 1.0, 1.0, algorithm="track2", **kwargs).perm is None
    assert TrackRun(kd, kp, y, 1.0, 1.0, algorithm="rcd").perm is None
    hkd, hkp, hy, _ = heart
    assert TrackRun(hkd, hkp, hy, 1.0, 1.0, algorithm="track2",
                    order=shuffled(hy.size, 3)).perm is None
