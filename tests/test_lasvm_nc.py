"""LASVM-G, FULL SVM, LASVM-NC and LASVM-I (Ertekin, Bottou & Giles 2011; solvers/lasvm_nc.py
over qp/lasvm_g_core.py) against independent references:

* the duality gap (corrections 001-3) equals J_beta(w) - G_beta(alpha) computed with
  numpy from alpha and the kernel matrix, and is never negative along a run (weak duality);
* on separable toy data all four reach the optimum of the bias-free box QP, solved by a numpy
  float64 coordinate ascent to a violation below 1e-10 (cross-checked by scipy's L-BFGS-B),
  within 1e-4 relative (our kernel rows are float32);
* s -> -inf makes LASVM-NC LASVM-G, step for step; LASVM-I with s = -1 PROCESSes exactly the
  examples with -1 <= z <= 1 (z from numpy's f(x) of the machine before each example);
* --reprocess pair: the partner is numpy's argmax of the two-variable gain, the step the
  optimum of the two-variable box QP (scipy's L-BFGS-B), and the gap and the optimum tests
  above hold for it too;
* a sanity experiment with the defaults of corrections 001-7 (2-D sine boundary, 10% flipped
  labels);
* svm-train end to end: the online options, multi-class, and models with wrong-sign SVs read
  by libsvm-official.
"""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from lasvm_cli.numerics.cache import make_cache
from lasvm_cli.numerics.data import kernel_data
from lasvm_cli.io.model_file import read_model
from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.numerics.kernels import RBF, kernel_row_serial, make_params
from lasvm_cli.qp import lasvm_g_core as gc
from lasvm_cli.qp import online_core as core
from lasvm_cli.solvers.csvc import solve_binary
from lasvm_cli.solvers.lasvm_nc import LasvmGRun, solve_lasvm_g

from .conftest import HEART, REPO, box_qp_optimum, dual, heart_rbf_gram, libsvm_or_skip

SOLVERS = ("full-svm", "lasvm-g", "lasvm-nc", "lasvm-i")


def dense_kd(X):
    n, d = X.shape
    indptr = np.arange(0, n * d + 1, d, dtype=np.int64)
    indices = np.tile(np.arange(1, d + 1, dtype=np.int32), n)
    return kernel_data(indptr, indices, np.ascontiguousarray(X, np.float64).ravel())


def gram(X, gamma):
    sq = (X * X).sum(1)
    return np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0))


def sine(n, rng, flip=0.1):
    """The sanity experiment: x uniform on [-3, 3]^2, y = sign(x2 - sin(2 x1)), labels flipped
    with probability ``flip``."""
    X = rng.uniform(-3, 3, size=(n, 2))
    y = np.where(X[:, 1] > np.sin(2 * X[:, 0]), 1.0, -1.0)
    y[rng.random(n) < flip] *= -1
    return X, y


def write_svm(path, X, y):
    path.write_text("".join(f"{int(t)} " + " ".join(f"{j + 1}:{v:.9g}" for j, v in enumerate(x))
                            + "\n" for t, x in zip(y, X)))
    return str(path)


@pytest.fixture(scope="module")
def heart():
    return heart_rbf_gram()


@pytest.fixture(scope="module")
def blobs():
    """Two well separated Gaussian blobs (separable): 120 points in 2-D, RBF gamma = 0.5."""
    rng = np.random.default_rng(11)
    y = np.where(np.arange(120) % 2 == 0, 1.0, -1.0)
    X = rng.normal(scale=0.6, size=(120, 2)) + np.where(y > 0, 1.5, -1.5)[:, None]
    return dense_kd(X), make_params(RBF, gamma=0.5), y, gram(X, 0.5)


@pytest.fixture(scope="module")
def sine_data():
    rng = np.random.default_rng(0)
    X, y = sine(3000, rng)
    Xt, yt = sine(3000, rng)
    return X, y, Xt, yt


def expansion_of(run):
    """(example ids, alpha, A, B) of the run's expansion S."""
    n = int(run.st.ist[core.I_NS])
    return (run.st.pos2ex[:n].copy(), run.st.alpha[:n].copy(), run.st.A[:n].copy(),
            run.st.B[:n].copy())


def numpy_gap(K, y, C, run):
    """J_beta(w) - G_beta(alpha) over S from alpha and K alone (corrections 001-3: CCCP sub-problem
    primal 1/2|w|^2 + C sum H_1(y f) + sum beta y f, dual sum alpha y - 1/2|w|^2 + sum beta)."""
    ex, a, A, B = expansion_of(run)
    Ks = K[np.ix_(ex, ex)]
    f = Ks @ a
    ys = y[ex]
    beta = np.where(ys > 0, -A, B)
    primal = 0.5 * a @ Ks @ a + C * np.maximum(0.0, 1 - ys * f).sum() + (beta * ys * f).sum()
    dual_ = (a * ys).sum() - 0.5 * a @ Ks @ a + beta.sum()
    return primal - dual_


# ---------------------------------------------------------------------------------------------
# the duality gap


@pytest.mark.parametrize("reprocess", ["one", "pair"])
@pytest.mark.parametrize("solver", SOLVERS)
def test_gap_is_the_primal_minus_the_dual_and_never_negative(heart, solver, reprocess):
    """After every iteration: gap_of == numpy's J - G (1e-6 relative), >= 0 up to rounding,
    and the gap loop left it at most T unless REPROCESS bailed out; NC flags outliers here."""
    kd, kp, y, K = heart
    C = 10.0
    run = LasvmGRun(kd, kp, y, C, C, solver=solver, seed=2, clean_every=20, clean_keep=10,
                    reprocess=reprocess)
    run.begin()
    gaps = []
    while run.online:
        bailed = run.gst[gc.G_BAILED]
        run.step(1)
        if not run.online:
            break
        gap = run.gap()
        ref = numpy_gap(K, y, C, run)
        assert gap == pytest.approx(ref, rel=1e-6, abs=1e-6 * C * y.size)
        assert gap >= -1e-9 * C * y.size  # rounding only: J - G >= 0 (weak duality)
        if run.gst[gc.G_BAILED] == bailed and run.gst[gc.G_IN_S] == 0:
            assert gap <= run.gfs[gc.F_TARGET] * (1 + 1e-12)
        gaps.append(gap)
    assert len(gaps) > 200
    if solver == "lasvm-nc":
        assert run.gst[gc.G_FLAGGED] > 0


@pytest.mark.parametrize("seed", range(4))
def test_scan_finds_the_cores_maximal_violator_and_the_gap(seed):
    """The gap loop's scan (update and violations, a max over the violations' bit patterns, a
    search for the first index) against the online core's one-loop max_violator, ties and all,
    and the gap against its sum in numpy: positions at both bounds, at zero, tied gradients,
    an expansion of odd size (the vector loops' tail)."""
    rng = np.random.default_rng(seed)
    n = 1001 + seed
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    A, B = core.svc_boxes(y, 3.0, 2.0)
    kc = make_cache(n, 1.0)
    st = core.make_state(kc, y, A, B, bias=False)
    st.A[:], st.B[:] = A, B  # position t is example t
    st.alpha[:] = np.where(rng.random(n) < 0.3, np.where(rng.random(n) < 0.5, A, B),
                           rng.random(n) * (A + B))
    st.alpha[rng.random(n) < 0.2] = 0.0
    st.g[:] = np.round(rng.standard_normal(n), 1)  # many ties
    st.ist[core.I_NS] = n
    gap, k, v = gc.scan(st)
    assert (k, v) == core.max_violator(st, n)
    assert k >= 0 and v > 0
    g, a = st.g, st.alpha
    terms = B * np.maximum(g, 0) - A * np.maximum(-g, 0) - a * g
    assert gap == pytest.approx(terms.sum(), rel=1e-12)
    st.g[:] = 0.0  # nothing violates
    assert gc.scan(st)[1:] == (-1, 0.0) == core.max_violator(st, n)


@pytest.mark.parametrize("n", [0, 3, 8, 13, 1003])
def test_gap_pass_adds_in_the_order_it_states(n):
    """ordered.gap_pass (the gap loop's pass): g updated as the scalar rule, the largest
    violation and its first position as a plain argmax of the scalar rules (tied violations
    in several lanes and in the tail included), and the gap bit for bit in its stated order:
    term t to lane t % W for the first n - n % W positions (W = GAP_LANES), lanes added
    pairwise up a binary tree, then the rest in order; float32 and float64 rows, with and
    without an update."""
    from lasvm_cli.numerics.ordered import GAP_LANES as W, gap_pass

    rng = np.random.default_rng(n)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    A, B = core.svc_boxes(y, 3.0, 2.0)
    alpha = np.where(rng.random(n) < 0.3, np.where(rng.random(n) < 0.5, A, B),
                     rng.random(n) * (A + B))
    g0 = rng.standard_normal(n) * 10.0 ** rng.integers(-6, 7, n)  # rounding matters
    ties = np.flatnonzero((alpha < B) & (alpha > A))[-10:]  # the largest in lanes and the tail
    g0[ties] = 1e9
    for K, mu in ((rng.random(n + 5).astype(np.float32), 0.37), (rng.random(n + 5), 1.3),
                  (rng.random(n + 5), 0.0), (np.zeros(n + 5), 0.0)):
        g = g0.copy() if K.any() else np.zeros(n)  # the last: nothing violates
        start = g.copy()
        gap, k, v = gap_pass(g, alpha, A, B, K, 5, mu, n)
        want_g = start - mu * K[5:5 + n].astype(np.float64) if mu != 0.0 else start
        assert np.array_equal(g, want_g)
        up = np.where(alpha < B, g, 0.0)
        down = np.where(alpha > A, -g, 0.0)
        viol = np.where(up > down, up, down)
        want_k = int(np.argmax(viol)) if n and viol.max() > 0.0 else -1
        assert (k, v) == ((want_k, viol[want_k]) if want_k >= 0 else (-1, 0.0))
        terms = (B * np.where(g > 0, g, 0.0) - A * np.where(g < 0, -g, 0.0)) - alpha * g
        m = n - n % W
        lanes = np.zeros(W)
        for row in terms[:m].reshape(-1, W):
            lanes = lanes + row
        lanes = list(lanes)
        while len(lanes) > 1:
            lanes = [lanes[k] + lanes[k + 1] for k in range(0, len(lanes), 2)]
        want = lanes[0]
        tail = 0.0
        for x in terms[m:]:
            tail += x
        assert gap == want + tail


@pytest.mark.parametrize("n", [0, 3, 8, 13, 1003])
def test_gap_pass_pair_is_gap_pass_with_the_next_pair(n):
    """ordered.gap_pass_pair (the pair step's pass): g, the gap and (k, v) bit for bit those of
    gap_pass, tied violations in several lanes, across directions and in the tail included;
    j numpy's first argmax of the violations moving the other way from k (-1 when none)."""
    from lasvm_cli.numerics.ordered import gap_pass, gap_pass_pair

    rng = np.random.default_rng(100 + n)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    A, B = core.svc_boxes(y, 3.0, 2.0)
    alpha = np.where(rng.random(n) < 0.3, np.where(rng.random(n) < 0.5, A, B),
                     rng.random(n) * (A + B))
    g0 = np.round(rng.standard_normal(n), 1) * 10.0 ** rng.integers(-3, 4, n)
    free = np.flatnonzero((alpha < B) & (alpha > A))
    g0[free[-6::2]] = 1e9  # equal violations up ...
    g0[free[-5::2]] = -1e9  # ... and down, in lanes and in the tail
    K = rng.random(n + 5).astype(np.float32)
    for mu in (0.37, -2.5):
        for g_start in (g0, -g0, np.zeros(n)):
            g1, g2 = g_start.copy(), g_start.copy()
            want = gap_pass(g1, alpha, A, B, K, 5, mu, n)
            gap, k, v, j = gap_pass_pair(g2, alpha, A, B, K, 5, mu, n)
            assert np.array_equal(g1, g2)
            assert (gap, k, v) == want
            if k < 0:
                assert j == -1
                continue
            other = np.where(alpha > A, -g2, 0.0) if g2[k] > 0 else np.where(alpha < B, g2, 0.0)
            want_j = int(np.argmax(other)) if other.max() > 0 else -1
            assert j == want_j


def test_gap_loop_stops_when_reprocess_bails_out(heart):
    """With a coarse tau the loop cannot bring the gap below T: REPROCESS bails out, the loop
    stops there (counted), and the run ends."""
    kd, kp, y, _ = heart
    r = solve_lasvm_g(kd, kp, y, 100.0, 100.0, solver="lasvm-g", eps=2.0, seed=1)
    assert r.counters["gap_loops_bailed"] > 0
    assert r.counters["gap_loops_capped"] == 0


def test_gap_loop_ends_at_gap_cap(heart, monkeypatch):
    """Corrections 001-5, the second guard: a gap loop that nothing else ends (a target below
    any gap, tau = -1 so that REPROCESS never bails out) stops after GAP_CAP steps, counted
    in G_CAPPED, with the gap of where it stopped. The loop's Python body (its py_func, which
    reads GAP_CAP at run time) over the compiled steps, GAP_CAP set to 7."""
    kd, kp, y, _ = heart
    run = LasvmGRun(kd, kp, y, 10.0, 10.0, solver="lasvm-g", seed=1)
    run.begin()
    run.step(100)
    gap, k, v = gc.scan(run.st)
    assert k >= 0 and v > 0
    monkeypatch.setattr(gc, "GAP_CAP", 7)
    steps = int(run.st.ist[core.I_STEPS])
    capped = int(run.gst[gc.G_CAPPED])
    gc.gap_loop.py_func(run.st, run.kc, run.kd, run.kp, -1.0, -1.0, run.gst, run.gfs, gap, k,
                        v, 0)
    assert int(run.st.ist[core.I_STEPS]) - steps == 7
    assert int(run.gst[gc.G_CAPPED]) == capped + 1
    assert run.gfs[gc.F_GAP] == pytest.approx(gc.gap_of(run.st), rel=1e-12)


@pytest.mark.parametrize("solver", SOLVERS)
def test_gap_cap_is_never_reached_on_heart(heart, solver):
    """Corrections 001-5, was GAP_CAP ever reached? Not in these runs (C up to 1000, both
    starts, three epochs): REPROCESS bails out, or the gap falls below its target, first."""
    kd, kp, y, _ = heart
    for C in (1.0, 100.0, 1000.0):
        for start in ("printed", "convex"):
            r = solve_lasvm_g(kd, kp, y, C, C, solver=solver, seed=2, epochs=3,
                              ramp_start=start)
            assert r.counters["gap_loops_capped"] == 0, (C, start)


def test_later_epochs_do_not_process_an_example_in_s_again(heart):
    """Corrections 001-8: in the second epoch an example drawn while it is in S is not
    PROCESSed again (its box, hence LASVM-NC's beta, unchanged; counted in G_IN_S) and an
    example CLEAN removed earlier arrives afresh (PROCESSed, its box set anew)."""
    kd, kp, y, _ = heart
    run = LasvmGRun(kd, kp, y, 10.0, 10.0, solver="lasvm-nc", seed=4, clean_every=10,
                    clean_keep=5, epochs=2)
    run.begin()
    while run.online and int(run.st.ist[core.I_EPOCH]) == 0:
        run.step(1)
    again = fresh = 0
    while run.online:
        st = run.st
        n = int(st.ist[core.I_NS])
        in_s = st.ex2pos[:y.size] < n
        box = {ex: (st.A[st.ex2pos[ex]], st.B[st.ex2pos[ex]]) for ex in np.flatnonzero(in_s)}
        processed, in_s_count = int(st.ist[core.I_PROCESSED]), int(run.gst[gc.G_IN_S])
        run.step(1)
        if not run.online:
            break
        ex = int(st.pool[st.ist[core.I_POOL]])  # the example just drawn
        if in_s[ex]:
            again += 1
            assert int(st.ist[core.I_PROCESSED]) == processed, ex
            assert int(run.gst[gc.G_IN_S]) == in_s_count + 1, ex
            p = st.ex2pos[ex]
            if p < int(st.ist[core.I_NS]):  # (unless this iteration's CLEAN removed it)
                assert (st.A[p], st.B[p]) == box[ex], ex
        else:
            fresh += 1
            assert int(st.ist[core.I_PROCESSED]) == processed + 1, ex
            assert int(run.gst[gc.G_IN_S]) == in_s_count, ex
    assert again > 0 and fresh > 0
    assert again + fresh == y.size


# ---------------------------------------------------------------------------------------------
# the optimum on separable data


def test_oracle_agrees_with_lbfgsb(blobs):
    """The coordinate-ascent oracle against scipy's L-BFGS-B on the same box QP."""
    optimize = pytest.importorskip("scipy.optimize")
    _, _, y, K = blobs
    A, B = core.svc_boxes(y, 10.0, 10.0)
    _, w_star = box_qp_optimum(K, y, A, B)
    res = optimize.minimize(lambda a: (-(y @ a - 0.5 * a @ K @ a), -(y - K @ a)),
                            np.zeros(y.size), jac=True, method="L-BFGS-B",
                            bounds=list(zip(A, B)), options=dict(ftol=1e-15, gtol=1e-10,
                                                                  maxiter=10000))
    assert -res.fun == pytest.approx(w_star, rel=1e-7)


@pytest.mark.parametrize("reprocess", ["one", "pair"])
@pytest.mark.parametrize("solver", SOLVERS)
def test_separable_data_reach_the_bias_free_optimum(blobs, solver, reprocess):
    """Three epochs and REPROCESS to tau = 1e-5 at the end (--finish-tau): the box-QP optimum
    within 1e-4 relative, alpha in its boxes, no outlier flagged (separable data)."""
    kd, kp, y, K = blobs
    C = 10.0
    A, B = core.svc_boxes(y, C, C)
    _, w_star = box_qp_optimum(K, y, A, B)
    r = solve_lasvm_g(kd, kp, y, C, C, solver=solver, epochs=3, finish=True, eps=1e-5, seed=4,
                      reprocess=reprocess)
    a = r.coef[0]
    assert r.rho[0] == 0.0
    assert np.all(a >= A) and np.all(a <= B)
    assert r.counters["outliers_flagged"] == 0
    assert dual(K, y, a) == pytest.approx(w_star, rel=1e-4)
    assert dual(K, y, a) <= w_star * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_pair_step_is_the_two_variable_optimum(heart, seed):
    """One pair REPROCESS in the middle of a run (C = 100, gamma = 0.005: K nearly constant):
    the partner is numpy's first argmax of the violations moving the other way (-g over
    alpha > A when k goes up, g over alpha < B when it goes down), the two alphas land on the
    optimum of their box QP (scipy's L-BFGS-B, 1e-6 of C), nothing else moves, and g drops by
    mu_k K_k + mu_j K_j (float32 rows: 1e-5)."""
    optimize = pytest.importorskip("scipy.optimize")
    kd, _, y, _ = heart
    gamma, C = 0.005, 100.0
    kp = make_params(RBF, gamma=gamma)
    K = np.empty((y.size, y.size))
    for i in range(y.size):
        kernel_row_serial(kd, i, kd, np.arange(y.size), kp, K[i])
    run = LasvmGRun(kd, kp, y, C, C, solver="lasvm-g", seed=seed, reprocess="pair")
    run.begin()
    run.step(60 + 40 * seed)
    st = run.st
    for _ in range(100):  # a state where some violator moves the other way
        n = int(st.ist[core.I_NS])
        k, v = core.max_violator(st, n)
        a0, g0, A, B = (st.alpha[:n].copy(), st.g[:n].copy(), st.A[:n].copy(), st.B[:n].copy())
        other = np.where(a0 > A, -g0, 0.0) if g0[k] > 0 else np.where(a0 < B, g0, 0.0)
        other[k] = 0.0
        if v > 1e-3 and other.max() > 0:
            break
        run.step(1)
    j = int(np.argmax(other))
    assert v > 1e-3 and other[j] > 0
    Ks = K[np.ix_(st.pos2ex[:n], st.pos2ex[:n])]
    assert gc.partner(st, run.kc, k) == j
    gc.pair_scan(st, run.kc, run.kd, run.kp, k, j)
    moved = np.flatnonzero(st.alpha[:n] != a0)
    assert set(moved) <= {k, j} and k in moved
    Q = Ks[np.ix_([k, j], [k, j])]
    gB = g0[[k, j]]
    res = optimize.minimize(lambda m: (-(gB @ m - 0.5 * m @ Q @ m), -(gB - Q @ m)), np.zeros(2),
                            jac=True, method="L-BFGS-B",
                            bounds=[(A[k] - a0[k], B[k] - a0[k]), (A[j] - a0[j], B[j] - a0[j])],
                            options=dict(ftol=1e-15, gtol=1e-12))
    mu = st.alpha[[k, j]] - a0[[k, j]]
    assert mu == pytest.approx(res.x, abs=1e-6 * C)
    assert np.all(st.alpha[:n] >= A) and np.all(st.alpha[:n] <= B)
    want = g0 - mu[0] * Ks[k] - mu[1] * Ks[j]
    assert st.g[:n] == pytest.approx(want, abs=1e-5 * C)


@pytest.mark.parametrize("solver", SOLVERS)
def test_pair_reprocess_needs_far_fewer_steps_on_a_nearly_constant_kernel(heart, solver):
    """heart, C = 100, gamma = 0.005 (every K_ij near 1): the paper's one-variable REPROCESS
    zigzags along K's constant part; pairs take at most a quarter of its steps (measured 12-14x
    fewer) and end with the gap under the same kind of threshold."""
    kd, _, y, _ = heart
    kp = make_params(RBF, gamma=0.005)
    c = {r: solve_lasvm_g(kd, kp, y, 100.0, 100.0, solver=solver, seed=1,
                          reprocess=r).counters for r in ("one", "pair")}
    assert 4 * c["pair"]["reprocess"] <= c["one"]["reprocess"], c
    for r in ("one", "pair"):
        assert c[r]["gap_loops_bailed"] == c[r]["gap_loops_capped"] == 0
        assert 0 <= c[r]["gap"] <= c[r]["gap_target"] * (1 + 1e-12)


def test_one_epoch_without_finishing_is_near_the_optimum(blobs):
    """The paper's setting (one epoch, no finishing): the gap is at most T = max(C, Ghat), so
    the dual is within that of the optimum."""
    kd, kp, y, K = blobs
    A, B = core.svc_boxes(y, 10.0, 10.0)
    _, w_star = box_qp_optimum(K, y, A, B)
    r = solve_lasvm_g(kd, kp, y, 10.0, 10.0, solver="lasvm-g", seed=4)
    w = dual(K, y, r.coef[0])
    assert w_star - max(r.counters["gap"], 0.0) - 1e-6 <= w <= w_star * (1 + 1e-9)


# ---------------------------------------------------------------------------------------------
# the variants against each other


def test_nc_with_s_to_minus_infinity_is_lasvm_g_step_for_step(heart):
    kd, kp, y, _ = heart
    g = LasvmGRun(kd, kp, y, 10.0, 10.0, solver="lasvm-g", seed=3, clean_every=10,
                  clean_keep=5)
    nc = LasvmGRun(kd, kp, y, 10.0, 10.0, solver="lasvm-nc", seed=3, clean_every=10,
                   clean_keep=5, ramp_s=-1e300, sv_threshold=0)
    for run in (g, nc):
        run.begin()
    while g.online:
        g.step(1)
        nc.step(1)
        for f in ("alpha", "g", "A", "B", "pos2ex", "ist"):
            assert np.array_equal(getattr(g.st, f), getattr(nc.st, f)), f
    assert not nc.online
    # the same counters, but for the regions, which are relative to s, and the end of NC's
    # convex stage (LASVM-G has none)
    def same(c):
        return {k: v for k, v in c.items()
                if not k.startswith(("admitted", "cleaned", "nonconvex_from"))}

    assert same(g.result().counters) == same(nc.result().counters)
    assert nc.result().counters["outliers_flagged"] == 0


@pytest.mark.parametrize("start", ["printed", "convex"])
def test_lasvm_i_processes_exactly_the_ramp_region(heart, start):
    """Before each example, z = y f(x) from numpy (float64 K); PROCESS iff -1 <= z <= 1
    (examples within 1e-5 of an edge, where float32 rows may decide otherwise, are not
    checked); with the convex stage (corrections 001-10), every example until S holds more
    than S SVs of each class, the ramp region after."""
    kd, kp, y, K = heart
    run = LasvmGRun(kd, kp, y, 1.0, 1.0, solver="lasvm-i", seed=5, ramp_start=start)
    run.begin()
    inside = outside = staged = 0
    while run.online:
        coef, _ = run.coef_rho()
        z = y * (K @ coef)
        sv_per_class = (np.count_nonzero(coef > 0), np.count_nonzero(coef < 0))
        before = int(run.st.ist[core.I_PROCESSED])
        run.step(1)
        if not run.online:
            break
        ex = run.st.pool[run.st.ist[core.I_POOL]]  # the example just drawn
        processed = int(run.st.ist[core.I_PROCESSED]) > before
        if start == "convex" and min(sv_per_class) <= 10:
            assert processed and run.gst[gc.G_NONCONVEX] == 0, ex
            staged += 1
            continue
        if abs(z[ex] - 1) < 1e-5 or abs(z[ex] + 1) < 1e-5:
            continue
        assert processed == (-1 <= z[ex] <= 1), (ex, z[ex])
        inside += processed
        outside += not processed
    assert inside > 50 and outside > 50
    assert (staged > 20) == (start == "convex")
    assert (run.gst[gc.G_NONCONVEX] == staged + 1) == (start == "convex")


def skewed(n, rng, pos=0.08, d=60, k=10):
    """Sparse binary rows, a few positives, a kernel nearly constant at gamma = 0.005
    (K >= exp(-0.1)): every row has k ones; a negative draws them among the first d - 6
    columns (one of them, with probability 0.1, among the last 6), a positive two of them
    among the last 6. Returns (kd, y, X dense)."""
    y = np.where(rng.random(n) < pos, 1.0, -1.0)
    X = np.zeros((n, d))
    for i in range(n):
        m = 2 if y[i] > 0 else int(rng.random() < 0.1)
        X[i, rng.choice(d - 6, k - m, replace=False)] = 1.0
        X[i, d - 6 + rng.choice(6, m, replace=False)] = 1.0
    return dense_kd(X), y, X


def test_printed_start_stalls_where_the_convex_stage_learns():
    """The product defect of corrections 001-10, on generated skewed sparse data (8%
    positive, gamma = 0.005, C = 100), ten orders: as printed, LASVM-I ends with a one-class
    machine in several orders (the paper's blocks: its filter from the first example), where
    batch SMO separates the training set; with the convex stage (the default) neither LASVM-I
    nor LASVM-NC ever does, and both stay within 1 point of SMO's training accuracy; the
    stage ends once and for good (nonconvex_from)."""
    X_kd, y, X = skewed(400, np.random.default_rng(0))
    C, gamma = 100.0, 0.005
    kp = make_params(RBF, gamma=gamma)
    K = gram(X, gamma)
    smo = solve_binary(X_kd, kp, y, C, C)
    smo_acc = np.mean(np.where(K @ smo.coef[0] - smo.rho[0] > 0, 1.0, -1.0) == y)
    assert smo_acc >= 0.99
    one_class = {}
    for solver in ("lasvm-nc", "lasvm-i"):
        for start in ("printed", "convex"):
            for seed in range(10):
                r = solve_lasvm_g(X_kd, kp, y, C, C, solver=solver, seed=seed,
                                  ramp_start=start)
                pred = np.where(K @ r.coef[0] > 0, 1.0, -1.0)
                one = bool(np.all(pred == pred[0]))
                one_class[solver, start] = one_class.get((solver, start), 0) + one
                if start == "convex":
                    assert not one and np.mean(pred == y) >= smo_acc - 0.01, (solver, seed)
                    assert r.counters["nonconvex_from"] > 20
                else:
                    assert r.counters["nonconvex_from"] == 0
    assert one_class["lasvm-i", "printed"] >= 2, one_class


def test_sine_sanity_experiment(sine_data):
    """The sanity experiment: 3000 + 3000 points, RBF gamma = 1, C = 10, s = -1, one epoch:
    NC and I keep at least 3x fewer SVs than FULL SVM at a test error within 0.5 points."""
    X, y, Xt, yt = sine_data
    kd = dense_kd(X)
    kp = make_params(RBF, gamma=1.0)
    Kt = None
    out = {}
    for solver in SOLVERS:
        r = solve_lasvm_g(kd, kp, y, 10.0, 10.0, solver=solver, seed=0)
        coef = r.coef[0]
        sv = np.flatnonzero(coef)
        d2 = ((Xt[:, None, :] - X[None, sv, :]) ** 2).sum(-1)
        Kt = np.exp(-d2)
        out[solver] = (100 * np.mean(np.where(Kt @ coef[sv] > 0, 1, -1) != yt), sv.size)
    err_full, sv_full = out["full-svm"]
    for solver in ("lasvm-nc", "lasvm-i"):
        err, nsv = out[solver]
        assert 3 * nsv <= sv_full, out
        assert abs(err - err_full) <= 0.5, out
    assert out["lasvm-g"][1] <= sv_full


# ---------------------------------------------------------------------------------------------
# svm-train end to end


def _cli(args):
    from lasvm_cli.cli.main import svm_train

    return CliRunner().invoke(svm_train, args)


def test_ramp_start_from_the_command_line(tmp_path):
    """--ramp-start reaches the solver: printed and convex give other LASVM-I models on
    heart_scale (the convex stage processes its first examples unfiltered), convex is the
    default, and --counters reports where the stage ended (0 as printed)."""
    models = {}
    for extra in ([], ["--ramp-start", "convex"], ["--ramp-start", "printed"]):
        path = tmp_path / ("m" + "".join(extra))
        r = _cli(["--solver", "lasvm-i", "-q", "--counters"] + extra + [str(HEART), str(path)])
        assert r.exit_code == 0, r.output
        models[tuple(extra)] = open(path).read()
        m = re.search(r"nonconvex_from[ =:]+(\d+)", r.output)
        assert m, r.output
        assert (int(m.group(1)) == 0) == ("printed" in extra), r.output
    assert models[()] == models[("--ramp-start", "convex")]
    assert models[()] != models[("--ramp-start", "printed")]


def test_wrong_sign_svs_survive_export_and_libsvm(sine_data, tmp_path):
    """LASVM-NC's model on noisy data holds SVs whose coefficient has the sign of the other
    class: the file keeps them under their own class, nr_sv counts them, and libsvm-official
    loads the file and predicts as svm-predict does."""
    svmutil = libsvm_or_skip()
    X, y, Xt, yt = sine_data
    train = write_svm(tmp_path / "train", X[:1500], y[:1500])
    test = write_svm(tmp_path / "test", Xt[:500], yt[:500])
    model = str(tmp_path / "m")
    # such SVs are rare (a flagged outlier that later lies beyond the margin): the first seed
    # that gives one (seeds 4 and 6 do here)
    for seed in range(8):
        r = _cli(["--solver", "lasvm-nc", "-c", "10", "-g", "1", "--seed", str(seed),
                  "--counters", train, model])
        assert r.exit_code == 0, r.output
        assert "rho = 0.000000" in r.output and "outliers_flagged" in r.output
        m = read_model(model)
        assert m.rho[0] == 0.0 and "rho 0\n" in open(model).read()
        label_of_sv = np.repeat(m.label, m.nSV)
        wrong = (np.sign(m.sv_coef[0]) != np.where(label_of_sv == m.label[0], 1, -1)).sum()
        if wrong:
            break
    assert wrong > 0
    lib = svmutil.svm_load_model(model)
    assert lib.get_nr_sv() == m.sv_coef.shape[1] == int(m.nSV.sum())
    assert [lib.nSV[i] for i in range(2)] == list(m.nSV)
    tx = read_svmlight(test)
    from .conftest import libsvm_x

    p_labels, _, p_vals = svmutil.svm_predict(tx.y, libsvm_x(tx.indptr, tx.indices, tx.values),
                                              lib, "-q")
    from lasvm_cli.cli.main import svm_predict

    out = str(tmp_path / "pred")
    assert CliRunner().invoke(svm_predict, [test, model, out]).exit_code == 0
    assert np.array_equal(np.loadtxt(out), np.array(p_labels))


def test_online_options_with_the_new_solvers(tmp_path):
    """--trace (with the gap column), --save-state/--resume (bit for bit), --stop-iterations
    and --snapshots for lasvm-nc; --counters for lasvm-i."""
    d = str(tmp_path)
    common = ["--solver", "lasvm-nc", "-c", "10", "--epochs", "2", "--seed", "3", "-q"]
    assert _cli(common + [str(HEART), f"{d}/full.model"]).exit_code == 0
    r = _cli(common + ["--save-state", f"{d}/s.npz", "--stop-iterations", "300", "--trace",
                       f"{d}/t.csv", "--trace-every", "50", "--test", str(HEART),
                       "--snapshots", "100,200", str(HEART), f"{d}/m"])
    assert r.exit_code == 0, r.output
    for name in ("m", "m.100", "m.200", "s.npz", "t.csv"):
        assert os.path.exists(f"{d}/{name}"), name
    assert read_model(f"{d}/m.100").rho[0] == 0.0
    header, *rows = open(f"{d}/t.csv").read().split()
    assert header.split(",")[-1] == "gap"
    assert all(float(row.split(",")[-1]) >= 0 for row in rows)
    r = _cli(common + ["--resume", f"{d}/s.npz", str(HEART), f"{d}/resumed.model"])
    assert r.exit_code == 0, r.output
    assert open(f"{d}/resumed.model").read() == open(f"{d}/full.model").read()
    # a state of another solver is refused
    r = _cli(["--solver", "lasvm-i", "-c", "10", "--epochs", "2", "--seed", "3", "-q",
              "--resume", f"{d}/s.npz", str(HEART), f"{d}/x.model"])
    assert r.exit_code == 1 and "other parameters" in r.output
    # nor a state of the other REPROCESS step
    r = _cli(common + ["--reprocess", "pair", "--resume", f"{d}/s.npz", str(HEART),
                       f"{d}/x.model"])
    assert r.exit_code == 1 and "other parameters" in r.output
    r = _cli(["--solver", "lasvm-i", "--counters", str(HEART), f"{d}/i.model"])
    assert r.exit_code == 0
    for name in ("skipped_left", "skipped_right", "admitted_left", "cleaned_right",
                 "expansion_sv", "expansion_non_sv", "kernel_evals"):
        assert re.search(rf"^{name} = \d+$", r.output, re.M), name


def test_reprocess_pair_from_the_command_line(tmp_path):
    """svm-train --reprocess pair: an ordinary bias-free model, far fewer REPROCESS steps than
    the paper's one-variable step (-c 100 -g 0.005 on heart), training accuracy within 2
    points of it."""
    from lasvm_cli.cli.main import svm_predict

    acc, steps = {}, {}
    for r in ("one", "pair"):
        model = str(tmp_path / f"{r}.model")
        out = _cli(["--solver", "lasvm-nc", "-c", "100", "-g", "0.005", "--reprocess", r,
                    "--counters", str(HEART), model])
        assert out.exit_code == 0, out.output
        assert "rho 0\n" in open(model).read()
        steps[r] = int(re.search(r"^reprocess = (\d+)$", out.output, re.M).group(1))
        p = CliRunner().invoke(svm_predict, [str(HEART), model, str(tmp_path / "pred")])
        acc[r] = float(re.search(r"Accuracy = ([\d.]+)%", p.output).group(1))
    assert 4 * steps["pair"] <= steps["one"], steps
    assert abs(acc["pair"] - acc["one"]) <= 2.0, acc
    # a run stopped, saved and resumed gives the uninterrupted run's model, bit for bit
    d = str(tmp_path)
    common = ["--solver", "lasvm-nc", "--reprocess", "pair", "-c", "10", "--epochs", "2",
              "--seed", "3", "-q"]
    assert _cli(common + [str(HEART), f"{d}/full.m"]).exit_code == 0
    r = _cli(common + ["--save-state", f"{d}/s.npz", "--stop-iterations", "300", str(HEART),
                       f"{d}/part.m"])
    assert r.exit_code == 0, r.output
    r = _cli(common + ["--resume", f"{d}/s.npz", str(HEART), f"{d}/resumed.m"])
    assert r.exit_code == 0, r.output
    assert open(f"{d}/resumed.m").read() == open(f"{d}/full.m").read()


def test_plot_any_trace_column(tmp_path):
    """lasvm plot --y COLUMN draws the gap (or #SV, kernel evaluations) of the traces."""
    pytest.importorskip("matplotlib")
    from lasvm_cli.cli.plot import main
    from lasvm_cli.tools.plot import PlotError

    traces = []
    for solver in ("lasvm-g", "lasvm-nc"):
        traces.append(str(tmp_path / f"{solver}.csv"))
        r = _cli(["--solver", solver, "-q", "--trace", traces[-1], "--trace-every", "30",
                  str(HEART), str(tmp_path / "m")])
        assert r.exit_code == 0, r.output
    for y in ("gap", "sv", "kernel_evals"):
        out = tmp_path / f"{y}.png"
        assert main(traces + ["--y", y, "--x", "iterations", "-o", str(out)]) == 0
        assert out.stat().st_size > 0
    with pytest.raises(PlotError, match="no numeric 'phase' column"):
        main(traces + ["--y", "phase", "-o", str(tmp_path / "x.png")])


@pytest.mark.parametrize("multiclass", ["ovo", "ovr"])
def test_multiclass(tmp_path, multiclass):
    """Three classes, one machine per pair (LIBSVM's model) or per class, rho 0 each, and a
    trace with a machine column after the gap."""
    d = read_svmlight(str(HEART))
    lab = np.where(d.y > 0, 1, np.arange(d.y.size) % 2 + 2)
    lines = open(HEART).read().splitlines()
    path = tmp_path / "three"
    path.write_text("".join(f"{c} {ln.split(' ', 1)[1]}\n" for c, ln in zip(lab, lines)))
    r = _cli(["--solver", "lasvm-g", "--multiclass", multiclass, "-q", "--trace",
              str(tmp_path / "t.csv"), str(path), str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    model = open(tmp_path / "m").read()
    assert re.search(r"^rho 0 0 0$", model, re.M), model[:300]
    assert open(tmp_path / "t.csv").readline().strip().endswith("gap,machine")


@pytest.mark.parametrize("args, message", [
    (["--ramp-s", "-2"], "--ramp-s: only with --solver lasvm-g|full-svm|lasvm-nc|lasvm-i"),
    (["--solver", "lasvm", "--clean-every", "5"], "--clean-every: only with --solver"),
    (["--solver", "lasvm-nc", "--ramp-s", "1"], "--ramp-s must be below 1"),
    (["--solver", "lasvm-nc", "--ramp-s", "inf"], "--ramp-s must be a finite number"),
    (["--solver", "lasvm-i", "--ramp-s", "0.5"], "would skip every example"),
    (["--solver", "lasvm-g", "--clean-every", "0"], "--clean-every < 1"),
    (["--solver", "lasvm-g", "--clean-keep", "-1"], "--clean-keep < 0"),
    (["--solver", "lasvm-nc", "--sv-threshold", "-3"], "--sv-threshold < 0"),
    (["--solver", "lasvm-nc", "--ramp-start", "late"], "unknown --ramp-start 'late'"),
    (["--solver", "lasvm-g", "--ramp-start", "printed"],
     "--ramp-start: only with --solver lasvm-nc|lasvm-i"),
    (["--solver", "lasvm-i", "--reprocess", "two"], "unknown --reprocess 'two'"),
    (["--reprocess", "pair"], "--reprocess: only with --solver lasvm-g"),
    (["--solver", "lasvm-g", "--selection", "active"], "--selection: only with --solver lasvm"),
    (["--solver", "lasvm-g", "--no-finish"], "--no-finish: only with --solver lasvm"),
    (["--solver", "lasvm-g", "-s", "1"], "trains -s 0 (C-SVC) only"),
    (["--solver", "smo", "--trace", "x.csv"], "only with --solver lasvm|lasvm-g"),
])
def test_option_errors(tmp_path, args, message):
    r = _cli(args + [str(HEART), str(tmp_path / "m")])
    assert r.exit_code == 1
    assert "ERROR: " in r.output and message in r.output, r.output
    assert "Traceback" not in r.output


def test_lasvm_does_not_load_the_new_solvers():
    """svm-train --solver lasvm (and smo) never imports the LASVM-G family's modules."""
    code = ("import sys\nfrom lasvm_cli.cli.main import svm_train\n"
            "from click.testing import CliRunner\nimport tempfile, os\n"
            "d = tempfile.mkdtemp()\n"
            f"r = CliRunner().invoke(svm_train, ['-q', '--solver', 'lasvm', {str(HEART)!r}, "
            "os.path.join(d, 'm')])\nassert r.exit_code == 0, r.output\n"
            "print(sorted(m for m in sys.modules if 'lasvm_g_core' in m or 'lasvm_nc' in m))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, env=dict(os.environ), check=True).stdout
    assert out.strip() == "[]"
