"""All-in-one multi-class machines (--multiclass llw|cs): S2DO's closed-form steps, batch and
online solvers against generic optimisers and liblinear, and the CLI round trip.

Oracles and tolerances: the LLW box dual against scipy's L-BFGS-B on the same QP (1e-6
relative); the CS dual against scipy's SLSQP with the simplex constraints (1e-6
relative); the CS linear-kernel primal from our model against liblinear's Crammer-Singer
(scikit-learn's LinearSVC, no intercept, tol 1e-8) (1e-3 relative); online x-infinity against
the batch dual (1e-4 relative); the 2-D steps against a fine grid.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import LinearConstraint, minimize

from lasvm_cli.cli.main import svm_predict, svm_train
from lasvm_cli.numerics.data import kernel_data
from lasvm_cli.io.model_file import read_model, write_model
from lasvm_cli.numerics.kernels import make_params
from lasvm_cli.qp.s2do import CS, LLW
from lasvm_cli.qp.s2do_steps import increase, solve_box, solve_triangle
from lasvm_cli.solvers.s2do_batch import solve_batch
from lasvm_cli.solvers.s2do_online import solve_online

from .conftest import run_cli as run

F64 = dict(cache_dtype=np.float64)


def blobs(l=45, d=3, f=4, seed=0, shift=0.8):
    rng = np.random.default_rng(seed)
    yc = np.arange(l) % d
    rng.shuffle(yc)
    X = rng.normal(size=(l, f)) + shift * np.eye(d, f)[yc] * 2
    return X, yc


def kd_of(X):
    Xs = sp.csr_matrix(X)
    return kernel_data(Xs.indptr, Xs.indices + 1, Xs.data)


def rbf(X, gamma):
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    return np.exp(-gamma * sq)


def dual_qp(K, yc, d, kind):
    """Q over the free variables (n, c), c != y_n, in the order n d + c."""
    idx = [(n, c) for n in range(len(yc)) for c in range(d) if c != yc[n]]
    if kind == LLW:
        M = lambda yi, p, yj, q: (p == q) - 1.0 / d  # noqa: E731
    else:
        M = lambda yi, p, yj, q: (float(yi == yj) - float(yi == q) - float(p == yj)  # noqa: E731
                                   + float(p == q))
    Q = np.array([[M(yc[n], p, yc[m], q) * K[n, m] for (m, q) in idx] for (n, p) in idx])
    return Q, idx


def scipy_llw_dual(K, yc, d, C, v=1.0):
    Q, idx = dual_qp(K, yc, d, LLW)
    res = minimize(lambda a: (0.5 * a @ Q @ a - v * a.sum(), Q @ a - v), np.zeros(len(idx)),
                   jac=True, method="L-BFGS-B", bounds=[(0, C)] * len(idx),
                   options=dict(ftol=1e-16, gtol=1e-12, maxiter=100000, maxfun=100000))
    return -res.fun


def scipy_cs_dual(K, yc, d, C):
    Q, idx = dual_qp(K, yc, d, CS)
    A = np.zeros((len(yc), len(idx)))
    for j, (n, _c) in enumerate(idx):
        A[n, j] = 1.0
    res = minimize(lambda a: (0.5 * a @ Q @ a - a.sum(), Q @ a - 1.0), np.zeros(len(idx)),
                   jac=True, method="SLSQP", bounds=[(0, None)] * len(idx),
                   constraints=[LinearConstraint(A, -np.inf, C)],
                   options=dict(ftol=1e-15, maxiter=10000))
    return -res.fun


# ---------------------------------------------------------------------------------------------
# the closed-form steps


def _grid_best(g1, g2, q11, q12, q22, feasible, lo1, hi1, lo2, hi2, n=401):
    m1, m2 = np.meshgrid(np.linspace(lo1, hi1, n), np.linspace(lo2, hi2, n))
    v = g1 * m1 + g2 * m2 - 0.5 * (q11 * m1 ** 2 + 2 * q12 * m1 * m2 + q22 * m2 ** 2)
    v[~feasible(m1, m2)] = -np.inf
    return v.max()


def _random_Q(rng):
    kind = rng.integers(3)
    if kind == 0:  # PSD
        B = rng.normal(size=(2, 2))
        Q = B @ B.T
    elif kind == 1:  # rank one
        b = rng.normal(size=2)
        Q = np.outer(b, b)
    else:
        Q = np.zeros((2, 2))
    return Q[0, 0], Q[0, 1], Q[1, 1]


def selection_state(rng, kind, l, d, C, diag):
    """An S2doState for the selection tests: alphas at 0, at C and between (CS: sums at and
    below C), gradients rounded to one decimal (many ties)."""
    from lasvm_cli.qp import s2do

    yc = rng.integers(0, d, l)
    st = s2do.make_state(kind, yc, d, diag, C)
    A = np.where(rng.random((l, d)) < 0.3, 0.0, rng.random((l, d)) * C)
    A[rng.random((l, d)) < 0.2] = C
    A[np.arange(l), yc] = 0.0
    if kind == CS:
        A *= 0.5
        full = rng.random(l) < 0.3
        A[full] *= C / np.maximum(A[full].sum(1), 1e-12)[:, None]
    st.A[:] = A
    st.S[:] = A.sum(1)
    st.G[:] = np.round(rng.standard_normal((l, d)), 1)
    return st


def reference_first(A, G, S, yc, kind, C, lo, hi, supports_only):
    """select_first's rules as one plain loop (the form it had before its scores went to a
    vectorised pass): the largest feasible-direction score, first (t, c) on ties, and CS's
    best same-example pair at S = C."""
    d = A.shape[1]
    cs = kind == CS
    m, p, best, pair = -1, -1, 0.0, (-1, -1, -1, 0.0)
    for t in range(lo, hi):
        full = cs and S[t] >= C
        for c in range(d):
            a, g = A[t, c], G[t, c]
            if c == yc[t] or (supports_only and a == 0.0):
                continue
            grows = g > 0.0 and not full and (cs or a < C)
            score = g if grows else (-g if g < 0.0 and a > 0.0 else 0.0)
            if score > best:
                m, p, best = t, c, score
        if full:
            ok = [c for c in range(d) if c != yc[t] and not (supports_only and A[t, c] == 0.0)]
            cu = max(ok, key=lambda c: (G[t, c], -c)) if ok else -1  # first of the largest
            downs = [c for c in ok if A[t, c] > 0.0]
            cd = min(downs, key=lambda c: (G[t, c], c)) if downs else -1  # first of the smallest
            if cd >= 0 and cu != cd and G[t, cu] - G[t, cd] > pair[3]:
                pair = (t, cu, cd, G[t, cu] - G[t, cd])
    return (m, p, best) + pair


@pytest.mark.parametrize("kind", [LLW, CS])
@pytest.mark.parametrize("supports_only", [False, True])
def test_select_first_follows_its_rules(kind, supports_only):
    """select_first (scores in a branch-free pass, the max on their bit patterns, CS pairs
    apart) against the plain loop: variables at both bounds and at 0, tied gradients, CS
    examples at S = C, a sub-range of positions."""
    from lasvm_cli.qp import s2do

    rng = np.random.default_rng(kind * 2 + supports_only)
    l, C = 300, 2.0
    st = selection_state(rng, kind, l, 5, C, np.ones(l))
    for lo, hi in ((0, l), (17, 251)):
        got = s2do.select_first(st, lo, hi, supports_only)
        ref = reference_first(st.A, st.G, st.S, st.yc, kind, C, lo, hi, supports_only)
        assert got == pytest.approx(ref, abs=0.0), (lo, hi)
        assert got[0] >= 0


def reference_second(st, K1, kind, C, lo, hi, m, p, supports_only):
    """select_second's rules as one plain loop (its form before the gains went to a vectorised
    pass): the movable (t, c) != (m, p) of the largest Algorithm-4 gain above -1, first on
    ties; gains by the same operations, Shark's ridge where Q_B is (near) singular."""
    d = st.A.shape[1]
    diag = 1.0 - 1.0 / d if kind == LLW else 2.0
    g1, q11, ym = st.G[m, p], diag * st.KD[m], st.yc[m]
    n, q, best = -1, -1, -1.0
    for t in range(lo, hi):
        yt, q22, k = st.yc[t], diag * st.KD[t], float(K1[t])
        for c in range(d):
            a, g = st.A[t, c], st.G[t, c]
            if c == yt or (t == m and c == p) or (supports_only and a == 0.0):
                continue
            grows = g > 0.0 and (a < C if kind == LLW else (st.S[t] < C or t == m))
            if not (grows or (g < 0.0 and a > 0.0)):
                continue
            M = ((p == c) - 1.0 / d if kind == LLW
                 else float(ym == yt) - float(ym == c) - float(p == yt) + float(p == c))
            q12 = M * k
            a11, a22 = q11, q22
            det = a11 * a22 - q12 * q12
            if det <= 1e-12 * a11 * a22 or det <= 0.0:
                a11, a22 = a11 + 1e-6, a22 + 1e-6
                det = a11 * a22 - q12 * q12
            v = (g1 * g1 * a22 - 2.0 * g1 * g * q12 + g * g * a11) / (2.0 * det)
            if v > best:
                n, q, best = t, c, v
    return n, q


@pytest.mark.parametrize("kind", [LLW, CS])
@pytest.mark.parametrize("supports_only", [False, True])
def test_select_second_follows_its_rules(kind, supports_only):
    """select_second (gains in a branch-free pass, the max on their order keys) against the
    plain loop: tied gains (repeated gradients and kernel values), variables at both bounds,
    CS examples at S = C, a singular Q_B (an example equal to m's), m inside and outside a
    sub-range of positions."""
    from lasvm_cli.qp import s2do

    rng = np.random.default_rng(10 + kind * 2 + supports_only)
    l, d, C = 300, 5, 2.0
    st = selection_state(rng, kind, l, d, C, np.round(rng.uniform(0.5, 1.5, l), 1))
    yc = st.yc
    K1 = np.round(rng.random(l), 1).astype(np.float32)
    for m, lo, hi in ((40, 0, l), (40, 17, 251), (5, 17, 251), (260, 17, 251)):
        p = (yc[m] + 1) % d
        K1[m] = np.float32(st.KD[m])  # K_mm: (m, p) with another class of m is singular
        got = s2do.select_second(st, K1, lo, hi, m, p, supports_only)
        ref = reference_second(st, K1, kind, C, lo, hi, m, p, supports_only)
        assert got == ref, (m, lo, hi)
        assert got[0] >= 0
    # m's example alone (TWO_NEWS) with no other variable that can move: none, not (m, p)
    m = 40
    p = (yc[m] + 1) % d
    st.G[m] = 0.0
    st.G[m, p] = 1.0
    st.A[m, p] = 0.0
    assert reference_second(st, K1, kind, C, m, m + 1, m, p, supports_only) == (-1, -1)
    assert s2do.select_second(st, K1, m, m + 1, m, p, supports_only) == (-1, -1)


def test_box_step_is_the_exact_optimum():
    rng = np.random.default_rng(1)
    for _ in range(150):
        q11, q12, q22 = _random_Q(rng)
        g1, g2 = rng.normal(size=2) * 2
        a1, a2 = rng.uniform(0, 1, 2)
        lo1, hi1, lo2, hi2 = -a1, 1 - a1, -a2, 1 - a2
        m1, m2 = solve_box(g1, g2, q11, q12, q22, lo1, hi1, lo2, hi2)
        assert lo1 - 1e-12 <= m1 <= hi1 + 1e-12 and lo2 - 1e-12 <= m2 <= hi2 + 1e-12
        ours = increase(g1, g2, q11, q12, q22, m1, m2)
        grid = _grid_best(g1, g2, q11, q12, q22, lambda x, y: np.ones_like(x, bool),
                          lo1, hi1, lo2, hi2)
        assert ours >= grid - 1e-9


def test_triangle_step_is_the_exact_optimum():
    rng = np.random.default_rng(2)
    for _ in range(150):
        q11, q12, q22 = _random_Q(rng)
        g1, g2 = rng.normal(size=2) * 2
        a1, a2 = rng.uniform(0, 0.5, 2)
        s = 1.0 - a1 - a2
        m1, m2 = solve_triangle(g1, g2, q11, q12, q22, a1, a2, s)
        assert m1 >= -a1 - 1e-12 and m2 >= -a2 - 1e-12 and m1 + m2 <= s + 1e-12
        ours = increase(g1, g2, q11, q12, q22, m1, m2)
        grid = _grid_best(g1, g2, q11, q12, q22, lambda x, y: x + y <= s + 1e-12,
                          -a1, s + a2, -a2, s + a1)
        assert ours >= grid - 1e-9


# ---------------------------------------------------------------------------------------------
# batch S2DO against generic optimisers


@pytest.mark.parametrize("d,seed", [(3, 0), (4, 1)])
def test_llw_batch_dual_matches_lbfgsb(d, seed):
    X, yc = blobs(l=40, d=d, seed=seed)
    gamma, C = 0.3, 2.0
    ref = scipy_llw_dual(rbf(X, gamma), yc, d, C)
    for shrinking in (True, False):
        res = solve_batch(kd_of(X), make_params(2, 3, gamma, 0.0), yc, d, C, LLW, eps=1e-9,
                          shrinking=shrinking, **F64)
        assert res.counters["dual"] == pytest.approx(ref, rel=1e-6)
        assert res.counters["kkt_violation"] < 1e-9


def test_llw_target_margin_scaling_law():
    """Corrections 004-1: LLW(gamma, C) is gamma^2 LLW(1, C / gamma)."""
    X, yc = blobs(l=30, d=3, seed=3)
    kd, kp = kd_of(X), make_params(2, 3, 0.3, 0.0)
    a = solve_batch(kd, kp, yc, 3, 1.0, LLW, eps=1e-10, target=0.5, **F64)
    b = solve_batch(kd, kp, yc, 3, 2.0, LLW, eps=1e-10, target=1.0, **F64)
    assert a.counters["dual"] == pytest.approx(0.25 * b.counters["dual"], rel=1e-8)


def test_cs_batch_dual_matches_slsqp():
    d = 3
    X, yc = blobs(l=30, d=d, seed=4)
    gamma, C = 0.3, 1.0
    ref = scipy_cs_dual(rbf(X, gamma), yc, d, C)
    for shrinking in (True, False):
        res = solve_batch(kd_of(X), make_params(2, 3, gamma, 0.0), yc, d, C, CS, eps=1e-9,
                          shrinking=shrinking, **F64)
        assert res.counters["dual"] == pytest.approx(ref, rel=1e-6)


def cs_primal(W, X, yc, C):
    """0.5 sum ||w_c||^2 + C sum_i max_c (1 - delta_{c,y_i} + w_c x_i - w_{y_i} x_i)."""
    F = X @ W.T
    l = len(yc)
    margins = 1.0 - np.eye(W.shape[0])[yc] + F - F[np.arange(l), yc][:, None]
    return 0.5 * (W ** 2).sum() + C * margins.max(axis=1).sum()


def test_cs_linear_primal_matches_liblinear():
    from sklearn.svm import LinearSVC

    d = 4
    X, yc = blobs(l=80, d=d, f=5, seed=5, shift=0.6)
    C = 0.5
    res = solve_batch(kd_of(X), make_params(0), yc, d, C, CS, eps=1e-6, **F64)
    W = res.coef @ X  # w_c = sum_n coef[c, n] x_n
    ours = cs_primal(W, X, yc, C)
    svc = LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=C, tol=1e-8,
                    max_iter=200000).fit(X, yc)
    theirs = cs_primal(svc.coef_, X, yc, C)
    assert ours == pytest.approx(theirs, rel=1e-3)
    # weak duality: the primal is at least the dual, and the gap is small at eps 1e-6
    assert ours >= res.counters["dual"] - 1e-9
    assert ours == pytest.approx(res.counters["dual"], rel=1e-4)


@pytest.mark.parametrize("kind", [LLW, CS])
def test_shrinking_on_and_off_reach_the_same_dual(kind):
    X, yc = blobs(l=120, d=4, seed=6, shift=0.5)
    kd, kp = kd_of(X), make_params(2, 3, 0.5, 0.0)
    on = solve_batch(kd, kp, yc, 4, 5.0, kind, eps=1e-7, shrinking=True, **F64)
    off = solve_batch(kd, kp, yc, 4, 5.0, kind, eps=1e-7, shrinking=False, **F64)
    assert on.counters["shrinks"] > 0 and off.counters["shrinks"] == 0
    assert on.counters["dual"] == pytest.approx(off.counters["dual"], rel=1e-7)


# ---------------------------------------------------------------------------------------------
# the online solver


@pytest.mark.parametrize("kind", [LLW, CS])
@pytest.mark.parametrize("strategy", ["s2do-all", "random-pattern-s2do-all",
                                      "random-pattern-s2do-pattern"])
def test_online_until_optimal_reaches_the_batch_dual(kind, strategy):
    X, yc = blobs(l=60, d=3, seed=7, shift=0.5)
    kd, kp = kd_of(X), make_params(2, 3, 0.5, 0.0)
    batch = solve_batch(kd, kp, yc, 3, 3.0, kind, eps=1e-6, **F64)
    online = solve_online(kd, kp, yc, 3, 3.0, kind, eps=1e-6, epochs=math.inf,
                          strategy=strategy, **F64)
    assert online.counters["kkt_violation"] < 1e-6
    assert online.counters["dual"] == pytest.approx(batch.counters["dual"], rel=1e-4)


@pytest.mark.parametrize("kind", [LLW, CS])
def test_online_one_epoch_is_feasible_and_close(kind):
    X, yc = blobs(l=90, d=3, seed=8, shift=0.8)
    kd, kp = kd_of(X), make_params(2, 3, 0.5, 0.0)
    C = 2.0
    batch = solve_batch(kd, kp, yc, 3, C, kind, eps=1e-3)
    one = solve_online(kd, kp, yc, 3, C, kind, epochs=1)
    assert one.counters["epochs"] == 1
    assert 0.5 * batch.counters["dual"] < one.counters["dual"] <= batch.counters["dual"] * (
        1 + 1e-6)


# ---------------------------------------------------------------------------------------------
# the command line


@pytest.fixture
def three_class_file(tmp_path):
    X, yc = blobs(l=90, d=3, seed=9, shift=1.0)
    labels = np.array([5, -1, 2])[yc]
    path = tmp_path / "three.svm"
    with open(path, "w") as f:
        for y, x in zip(labels, X):
            f.write(f"{y} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(x)) + "\n")
    return path, labels


@pytest.mark.parametrize("scheme", ["llw", "cs"])
@pytest.mark.parametrize("solver", ["smo", "online"])
def test_cli_trains_writes_and_predicts(three_class_file, tmp_path, scheme, solver):
    path, labels = three_class_file
    model_path = tmp_path / f"{scheme}.model"
    out = run(svm_train, ["--multiclass", scheme, "--solver", solver, "-c", "2",
                          str(path), str(model_path)]).stdout
    assert "dual = " in out and out.rstrip().split("\n")[-1].startswith("Total nSV = ")
    text = model_path.read_text()
    assert f"multiclass {scheme}\n" in text
    model = read_model(str(model_path))
    assert model.multiclass == scheme and model.sv_coef.shape[0] == 3
    assert (model.rho == 0).all()
    # round trip: the written model reads back to the same file
    again = tmp_path / "again.model"
    write_model(model, str(again))
    assert again.read_text() == text
    pred = tmp_path / "pred"
    res = run(svm_predict, [str(path), str(model_path), str(pred)])
    ours = np.loadtxt(pred)
    assert (ours == labels).mean() > 0.8
    assert res.stdout.startswith("Accuracy = ")


def test_cli_cross_validation(three_class_file):
    path, _ = three_class_file
    out = run(svm_train, ["--multiclass", "cs", "-v", "3", "-q", str(path)]).stdout
    assert out.startswith("Cross Validation Accuracy = ")


@pytest.mark.parametrize("args,message", [
    (["--multiclass", "llw", "-b", "1"], "probability estimates (-b 1) are not available"),
    (["--multiclass", "cs", "--solver", "lasvm"], "trains with --solver smo"),
    (["--solver", "online"], "--solver online trains --multiclass llw|cs"),
    (["--multiclass", "cs", "--solver", "online", "--strategy", "x"], "unknown strategy"),
    (["--multiclass", "cs", "--strategy", "s2do-all"], "--strategy is for --solver online"),
    (["--multiclass", "llw", "--epochs", "inf"], "--epochs inf is for --solver online"),
    (["--multiclass", "llw", "-w1", "2"], "class weights (-wi) are not supported"),
])
def test_cli_rejects_what_all_in_one_machines_do_not_support(three_class_file, tmp_path, args,
                                                             message):
    path, _ = three_class_file
    res = run(svm_train, args + [str(path), str(tmp_path / "m")], code=1)
    assert res.stderr.startswith("ERROR: ") and message in res.stderr


def test_other_runs_do_not_load_the_s2do_solvers():
    """svm-train / svm-predict runs that do not use llw|cs never import (or JIT-load) them."""
    import subprocess
    import sys

    code = ("import sys, lasvm_cli.cli.main, lasvm_cli.cli.train, lasvm_cli.cli.predict, "
            "lasvm_cli.training.fit, lasvm_cli.training.train, lasvm_cli.training.params, "
            "lasvm_cli.numerics.model, lasvm_cli.io.model_file\n"
            "bad = [m for m in sys.modules if m.endswith(('s2do', 's2do_steps', 's2do_batch', "
            "'s2do_online', 's2do_epoch', 'allinone'))]\n"
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_online_runs_repeat_with_their_seed():
    X, yc = blobs(l=60, d=3, seed=10, shift=0.5)
    kd, kp = kd_of(X), make_params(2, 3, 0.5, 0.0)
    a, b = (solve_online(kd, kp, yc, 3, 2.0, CS, epochs=2, seed_value=4) for _ in range(2))
    np.testing.assert_array_equal(a.coef, b.coef)
    assert a.counters["iterations"] == b.counters["iterations"]


def test_a_cs_sum_within_snap_of_c_is_c():
    """Corrections 004-10: after a step, a CS sum within SNAP C below C is set to C, so that
    the selection treats the example as at its bound (its variables cannot grow; the pair "up
    c, down e" is offered); a sum further below keeps its value, and an LLW sum (unbounded) is
    never snapped. A batch run ends with no CS sum in (C (1 - SNAP), C) or above C."""
    from lasvm_cli.qp import s2do

    C, d = 2.0, 4
    yc = np.array([0, 1, 2, 3])
    for kind in (CS, LLW):
        st = s2do.make_state(kind, yc, d, np.ones(4), C)
        st.A[0, 1:] = (C / 3) * (1 - 4e-13), (C / 3), (C / 3)  # 4e-13 C / 3 below C
        st.A[1, [0, 2]] = C / 2, C / 2 * (1 - 2e-9)  # 1e-9 C below C
        for t in range(2):
            s2do._resum(st, t)
        assert st.A[0].sum() < C
        if kind == CS:
            assert st.S[0] == C and st.S[1] == st.A[1].sum() < C
        else:
            assert st.S[0] == st.A[0].sum() < C
    # CS: with every gradient positive, example 0 (snapped) offers only its pair, example 1
    # still grows
    st = s2do.make_state(CS, yc, d, np.ones(4), C)
    st.A[0, 1:] = (C / 3) * (1 - 4e-13), (C / 3), (C / 3)
    s2do._resum(st, 0)
    st.G[:] = 1.0
    st.G[0, 1] = 3.0
    st.G[0, 2] = 0.5
    m, p, best, pm, pup, pdown, pbest = s2do.select_first(st, 0, 1, False)
    assert (m, best) == (-1, 0.0)  # nothing of example 0 may grow
    assert (pm, pup, pdown, pbest) == (0, 1, 2, 2.5)
    # a run through many CS steps ends with every sum at C exactly or clearly below it
    X, y = blobs(l=60, d=4, seed=11, shift=0.4)
    kd, kp = kd_of(X), make_params(2, 3, 0.5, 0.0)
    st = s2do.make_state(CS, y.astype(np.int64), 4, np.ones(60), 0.5, eps=1e-6,
                         shrinking=False)
    from lasvm_cli.numerics import cache as kc

    assert s2do.s2do_run(st, kc.make_cache(60, 10.0), kd, kp, 10 ** 6) == s2do.OPTIMAL
    S = st.S
    assert (S == 0.5).sum() > 10  # many examples at the bound
    assert not ((S > 0.5 * (1 - s2do.SNAP)) & (S < 0.5)).any() and (S <= 0.5).all()


def test_schedules_and_the_cs_second_rule():
    """--step-schedule fixed runs one block of each old step type per example (d steps each, every
    strategy); the per-step schedules and the printed CS second variable end one pass feasible
    and close to the batch dual, as the default does; --step-schedule steps repeats with its seed,
    and changes the run (the gain updated per step)."""
    X, yc = blobs(l=90, d=3, seed=8, shift=0.8)
    kd, kp = kd_of(X), make_params(2, 3, 0.5, 0.0)
    C = 2.0
    for kind in (LLW, CS):
        batch = solve_batch(kd, kp, yc, 3, C, kind, eps=1e-3).counters["dual"]
        for strategy in ("s2do-all", "random-pattern-s2do-pattern"):
            fixed = solve_online(kd, kp, yc, 3, C, kind, strategy=strategy, schedule="fixed")
            assert fixed.counters["two_old_steps"] == fixed.counters[
                "two_old_supports_steps"] == 90 * 3
        for schedule, second in (("steps", "gain"), ("seconds", "gain"), ("blocks", "gradient"),
                                 ("steps", "gradient")):
            if kind == LLW and second == "gradient":
                continue
            r = solve_online(kd, kp, yc, 3, C, kind, schedule=schedule, cs_second=second)
            assert 0.5 * batch < r.counters["dual"] <= batch * (1 + 1e-6), (schedule, second)
        a, b, c = (solve_online(kd, kp, yc, 3, C, kind, schedule=s, seed_value=4)
                   for s in ("steps", "steps", "blocks"))
        np.testing.assert_array_equal(a.coef, b.coef)
        assert a.counters["iterations"] != c.counters["iterations"]
