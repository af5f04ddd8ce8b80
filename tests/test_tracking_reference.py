"""The compiled tracking solvers (lasvm_cli/solvers/tracking.py) against the paper's pseudo-code
in plain numpy (tests/reference_tracking.py: Algorithms 1 and 2 of Usunier, Bordes & Bottou
2010 line by line, the batch counterpart, Section 5.2's shortcut).

Both sides draw from the same SplitMix64 stream, so "pick i randomly in {1..t}" picks the same
i; the compiled run logs the example of every step (``literal=True``) and keeps float64 kernel
rows (``cache_dtype=np.float64``: LIBSVM-style float32 rows would differ from the reference by
about 1e-8). Tolerances, the same in every test here:

* the examples of the steps (and the teacher's x_t): equal, in the same order;
* alpha and the output's coefficients (abar^t or alpha) after every time index: 1e-10
  absolute (C <= 10; the compiled gradient is updated step by step, the reference recomputes
  g_i(alpha) from its definition, so they differ by rounding only);
* the normalised gap (P_t - D_t) / (C t) of the output on S_t after every time index: 1e-9
  absolute.
"""

import numpy as np
import pytest

from lasvm_cli.numerics.data import kernel_data
from lasvm_cli.numerics.kernels import LINEAR, POLY, RBF, make_params
from lasvm_cli.solvers.tracking import TrackRun, shuffled

from . import reference_tracking as ref

ALPHA_TOL, GAP_TOL = 1e-10, 1e-9


def problem(seed, kernel, n=40, d=5):
    """n random examples in d dimensions, ||x|| <= 1 (the paper's assumption, which also keeps
    the polynomial kernel's ||x||^2 <= 1), values exact in float32 (the library may keep x in
    float32), labels from a noisy linear rule (so that some examples end at C). Returns
    (kd, kp, y, Q) with Q the kernel matrix computed here in numpy from x."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None] * 1.25
    X = X.astype(np.float32).astype(np.float64)
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=n) > 0, 1.0, -1.0)
    if kernel == "rbf":
        kp = make_params(RBF, gamma=0.7)
        sq = (X ** 2).sum(1)
        Q = np.exp(-0.7 * (sq[:, None] + sq[None, :] - 2.0 * X @ X.T))
    elif kernel == "linear":
        kp = make_params(LINEAR)
        Q = X @ X.T
    else:
        kp = make_params(POLY, degree=2, gamma=0.8, coef0=0.2)
        Q = (0.8 * X @ X.T + 0.2) ** 2
    indptr = np.arange(0, n * d + 1, d, dtype=np.int64)
    indices = np.tile(np.arange(d, dtype=np.int32), n)
    kd = kernel_data(indptr, indices, X.ravel(), width=d, training=True)
    return kd, kp, y, Q


def compiled(kd, kp, y, C, algorithm, K, seed, order=None, teacher="shuffle", average=True,
             max_examples=None, batch_iters=None):
    return TrackRun(kd, kp, y, C, C, algorithm=algorithm, K=K, average=average,
                    teacher=teacher, order=order, seed=seed, max_examples=max_examples,
                    batch_iters=batch_iters, literal=True, cache_dtype=np.float64)


def paper_alpha(run):
    """The compiled run's alpha in the paper's variables (alpha_i in [0, C]): y_i alpha_i."""
    return run.st.y * run.alpha()


def assert_same_time_index(run, rec, y, done_steps):
    np.testing.assert_array_equal(run.picks()[done_steps:], rec["picks"])
    np.testing.assert_allclose(paper_alpha(run), rec["alpha"], rtol=0, atol=ALPHA_TOL)
    np.testing.assert_allclose(y * run.output_alpha(), rec["output"], rtol=0, atol=ALPHA_TOL)
    assert abs(run.measures()["gap"] - rec["gap"]) <= GAP_TOL


CASES = [(seed, C, K, kernel) for seed, C, K, kernel in [
    (0, 1.0, 1, "rbf"), (1, 1.0, 3, "rbf"), (2, 10.0, 5, "rbf"), (3, 0.1, 2, "rbf"),
    (4, 1.0, 4, "linear"), (5, 10.0, 2, "linear"), (6, 1.0, 3, "poly"), (7, 0.3, 6, "poly")]]


@pytest.mark.parametrize("algorithm", ["track1", "track2"])
@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("seed, C, K, kernel", CASES)
def test_algorithms_1_and_2_take_the_papers_steps(algorithm, average, seed, C, K, kernel):
    """Algorithm 1 / 2 on a shuffled stream of 40 examples: at every time index the same
    examples picked at line 6 (Algorithm 2: after line 4's x_t), the same alpha and output
    w(abar^t) (or w(alpha) without averaging) to 1e-10, the same normalised gap to 1e-9."""
    kd, kp, y, Q = problem(seed, kernel)
    order = shuffled(y.size, seed)
    run = compiled(kd, kp, y, C, algorithm, K, seed, order=order, average=average)
    records = ref.tracking(1 if algorithm == "track1" else 2, y, Q, C, K,
                           ref.FixedOrder(order), ref.SplitMix64(seed), average=average)
    assert len(records) == y.size
    for rec in records:
        done = run.iterations
        run.step(1)
        assert run.t == rec["t"]
        assert_same_time_index(run, rec, y, done)
    assert run.iterations == y.size * (K if algorithm == "track1" else K + 1)


@pytest.mark.parametrize("teacher", ["active", "adversarial"])
@pytest.mark.parametrize("algorithm", ["track1", "track2"])
@pytest.mark.parametrize("seed, C, K, kernel", [(11, 1.0, 3, "rbf"), (12, 10.0, 2, "linear"),
                                                (13, 1.0, 4, "poly")])
def test_pool_teachers_choose_the_same_examples(teacher, algorithm, seed, C, K, kernel):
    """Selective sampling (pool of 5 of 40 unseen examples, closest to the boundary of the
    current output w(abar^{t-1}); adversarial: largest hinge loss): the same x_t at every time
    index, then the same steps, alphas (1e-10) and gaps (1e-9) as the reference."""
    kd, kp, y, Q = problem(seed, kernel)
    run = TrackRun(kd, kp, y, C, C, algorithm=algorithm, K=K, teacher=teacher, pool=5,
                   seed=seed, literal=True, cache_dtype=np.float64)
    records = ref.tracking(1 if algorithm == "track1" else 2, y, Q, C, K,
                           ref.Pool(y.size, y, Q, size=5, kind=teacher), ref.SplitMix64(seed))
    for rec in records:
        done = run.iterations
        run.step(1)
        assert run.seen()[-1] == rec["x_t"]
        assert_same_time_index(run, rec, y, done)


@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("seed, C, kernel", [(21, 1.0, "rbf"), (22, 10.0, "linear"),
                                             (23, 0.5, "poly")])
def test_batch_counterpart_takes_the_papers_steps(average, seed, C, kernel):
    """rcd, the batch counterpart of Section 6.3 (all 40 examples from the start, N = 400
    steps on examples picked at random): the same examples, the same alpha and output (last
    iterate, or the mean of all N iterates) to 1e-10 and gap to 1e-9."""
    kd, kp, y, Q = problem(seed, kernel)
    run = compiled(kd, kp, y, C, "rcd", 10, seed, average=average, batch_iters=400)
    while not run.done:
        run.step(400)
    picks, alpha, output, gap = ref.batch_counterpart(y, Q, C, 400, ref.SplitMix64(seed),
                                                      average=average)
    np.testing.assert_array_equal(run.picks(), picks)
    np.testing.assert_allclose(paper_alpha(run), alpha, rtol=0, atol=ALPHA_TOL)
    np.testing.assert_allclose(y * run.output_alpha(), output, rtol=0, atol=ALPHA_TOL)
    assert abs(run.measures()["gap"] - gap) <= GAP_TOL


@pytest.mark.parametrize("seed, C, K, kernel", [(31, 1.0, 3, "rbf"), (32, 10.0, 5, "linear"),
                                                (33, 0.5, 4, "poly")])
def test_lasvm_shortcut_follows_section_5_2(seed, C, K, kernel):
    """track2-lasvm given its own picks (it draws over its own arrangement of S_t): line 4 as
    Algorithm 2, line 7 skipped when alpha_i = 0 (Section 5.2 (ii)); alpha and output to
    1e-10, gap to 1e-9 after every time index, and some draws skipped."""
    kd, kp, y, Q = problem(seed, kernel)
    order = shuffled(y.size, seed)
    run = compiled(kd, kp, y, C, "track2-lasvm", K, seed, order=order)
    alphas, outputs, gaps = [], [], []
    while not run.done:
        run.step(1)
        alphas.append(paper_alpha(run))
        outputs.append(y * run.output_alpha())
        gaps.append(run.measures()["gap"])
    records = ref.lasvm_shortcut(y, Q, C, K, order, run.picks())
    for rec, a, o, gp in zip(records, alphas, outputs, gaps):
        np.testing.assert_allclose(a, rec["alpha"], rtol=0, atol=ALPHA_TOL)
        np.testing.assert_allclose(o, rec["output"], rtol=0, atol=ALPHA_TOL)
        assert abs(gp - rec["gap"]) <= GAP_TOL
    assert run.updates < run.iterations


def test_reference_gap_is_primal_minus_dual():
    """The reference's eq. 4 gap against P_t(w(alpha)) - D_t(alpha) from eqs. 1 and 2 at
    random alpha in [0, C]^t (1e-12 relative), and the normalised gap is 1 at alpha = 0."""
    _, _, y, Q = problem(41, "rbf")
    rng = np.random.default_rng(0)
    S = list(range(25))
    for C in (0.1, 1.0, 10.0):
        alpha = rng.uniform(0, C, y.size) * (rng.random(y.size) < 0.7)
        p, d = ref.primal(alpha, S, y, Q, C), ref.dual(alpha, S, y, Q)
        assert abs(ref.gap(alpha, S, y, Q, C) - (p - d)) <= 1e-12 * max(1.0, abs(p))
        assert ref.normalised_gap(np.zeros(y.size), S, y, Q, C) == pytest.approx(1.0)


def test_splitmix_matches_the_compiled_generator():
    """The reference's SplitMix64 gives the compiled generator's integers (exactly)."""
    from lasvm_cli.qp.online_core import RNG_SPLITMIX, make_rng, rand_below

    for seed in (0, 1, 12345):
        rng, mine = make_rng(RNG_SPLITMIX, seed), ref.SplitMix64(seed)
        for n in (1, 2, 7, 40, 1000):
            assert [int(rand_below(rng, np.int64(n))) for _ in range(20)] == \
                [mine.below(n) for _ in range(20)]


@pytest.mark.parametrize("seed, C, K, kernel", [(51, 1.0, 3, "rbf"), (52, 0.2, 2, "linear"),
                                                (53, 5.0, 4, "poly")])
def test_process_gain_is_theorem_3s_delta(seed, C, K, kernel):
    """Algorithm 2's line 4 raises D_t by Delta_{t,t}(alpha^t) (Theorem 3), whose closed form
    is 0 for g <= 0, g^2 / (2 q) for 0 < g / q <= C, C g - C^2 q / 2 above (g = g_t(alpha^t),
    q = ||x_t||^2; 1e-12 absolute); the collapsing sum makes delta_T <= D_T(alpha) at the end
    (to 1e-12 relative: with C = 0.2 every reprocess step can be null, and then they are equal)."""
    _, _, y, Q = problem(seed, kernel)
    order = shuffled(y.size, seed)
    records = ref.algorithm_2(y, Q, C, K, ref.FixedOrder(order), ref.SplitMix64(seed))
    alpha = np.zeros(y.size)
    for rec in records:
        x_t, S = rec["x_t"], list(order[:rec["t"]])
        g, q = ref.g(x_t, alpha, S, y, Q), Q[x_t, x_t]
        closed = 0.0 if g <= 0 else (g * g / (2 * q) if g / q <= C else C * g - C * C * q / 2)
        assert abs(rec["delta"] - closed) <= 1e-12
        alpha = rec["alpha"]
    delta_T = sum(rec["delta"] for rec in records)
    D_T = ref.dual(alpha, list(order), y, Q)
    assert 0.0 < delta_T <= D_T * (1 + 1e-12)
