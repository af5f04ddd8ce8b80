"""The compiled all-in-one solvers (lasvm_cli/qp/s2do.py, lasvm_cli/solvers/s2do_online.py)
against Trinh's (2012) pseudo-code in plain numpy (tests/reference_s2do.py: Algorithm 3 with
Algorithms 4, 5 and 11 for batch S2DO on LLW and Crammer-Singer; Algorithm 7 with Algorithms
6, 9 and 10 for the online solver and its three working-set strategies).

The compiled runs keep float64 kernel rows (``cache_dtype=np.float64``) and log the working
pair of every step (``s2do.with_step_log``); the online runs weigh kernel values 0 in the
scheduler's work (the package's default weighs them by their features, a stand-in for the
thesis's seconds: the reference does not model the row cache), and the reference draws from
numba's generator state (MT19937, the same numbers as numpy's legacy generator). Tolerances,
the same in every test here:

* the working pairs (m, p), (n, q) by example and class: equal, in the same order, at every
  step;
* alpha after every step (batch) or after every example's steps (online): 1e-10 absolute
  (C <= 10; the compiled gradient is updated step by step, the reference recomputes
  g = v - Q alpha from its definition before every choice, so they differ by rounding only);
* the dual at the end: 1e-9 relative.
"""

import numpy as np
import pytest
from numba import _helperlib

from lasvm_cli.numerics import cache as kc
from lasvm_cli.numerics.data import kernel_data
from lasvm_cli.numerics.kernels import LINEAR, POLY, RBF, make_params
from lasvm_cli.qp import s2do as core
from lasvm_cli.solvers.s2do_batch import diagonal
from lasvm_cli.solvers.s2do_online import STRATEGY_CODES, S2doRun

from . import reference_s2do as ref

ALPHA_TOL, DUAL_RTOL = 1e-10, 1e-9
KINDS = {"llw": ref.LLW, "cs": ref.CS}


def problem(seed, kernel, n=30, d=3, f=None):
    """n examples of d classes in f dimensions (default max(4, d)) (class means apart, noise, so that some alphas
    end at C and some sums at C), values exact in float32. Returns (kd, kp, yc, K) with K the
    kernel matrix computed here in numpy."""
    f = max(4, d) if f is None else f
    rng = np.random.default_rng(seed)
    yc = np.arange(n) % d
    rng.shuffle(yc)
    X = rng.normal(size=(n, f)) * 0.6 + np.eye(d, f)[yc]
    X = X.astype(np.float32).astype(np.float64)
    if kernel == "rbf":
        kp = make_params(RBF, gamma=0.7)
        sq = (X ** 2).sum(1)
        K = np.exp(-0.7 * np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0))
    elif kernel == "linear":
        kp = make_params(LINEAR)
        K = X @ X.T
    else:
        kp = make_params(POLY, degree=2, gamma=0.5, coef0=1.0)
        K = (0.5 * X @ X.T + 1.0) ** 2
    indptr = np.arange(0, n * f + 1, f, dtype=np.int64)
    indices = np.tile(np.arange(f, dtype=np.int32), n)
    kd = kernel_data(indptr, indices, X.ravel(), width=f, training=True)
    return kd, kp, yc.astype(np.int64), K


def kernel_rows(kd, kp, l, K):
    """The package's kernel matrix (float64 rows), checked against numpy's K: the reference
    computes with it, so that both sides see the same kernel values to the last bit."""
    c = kc.make_cache(l, 10.0, np.float64)
    R = np.array([np.array(kc.cache_get(c, kd, kp, k, l)[:l]) for k in range(l)])
    np.testing.assert_allclose(R, K, rtol=0, atol=1e-12)
    return R


def logged_pairs(st):
    n = int(st.L[0, 0])
    return [tuple(int(v) for v in row) for row in st.L[1:n + 1]]


def by_example(st, c, l):
    A = np.zeros_like(st.A)
    A[c.pex[:l]] = st.A
    return A


BATCH = [(seed, kind, C, kernel, d) for seed, (kind, C, kernel, d) in enumerate([
    ("llw", 1.0, "rbf", 3), ("llw", 10.0, "rbf", 4), ("llw", 0.3, "linear", 3),
    ("llw", 2.0, "poly", 5), ("cs", 1.0, "rbf", 3), ("cs", 10.0, "rbf", 4),
    ("cs", 0.5, "linear", 3), ("cs", 2.0, "poly", 5), ("llw", 1.0, "rbf", 7),
    ("cs", 3.0, "rbf", 8)])]


@pytest.mark.parametrize("seed, kind, C, kernel, d", BATCH)
def test_batch_s2do_takes_the_papers_steps(seed, kind, C, kernel, d):
    """Batch S2DO without shrinking to eps 1e-3: the same working pair at every step (for CS
    the same-example pairs at S = C included), the same alphas after it (1e-10), the same
    number of steps and the same dual."""
    kd, kp, yc, K = problem(seed, kernel, d=d)
    l = yc.size
    pb = ref.Problem(kernel_rows(kd, kp, l, K), yc, d, KINDS[kind], C)
    records = ref.batch(pb, eps=1e-3)
    st = core.make_state(KINDS[kind], yc, d, diagonal(kd, kp, l), C, eps=1e-3, shrinking=False)
    st = core.with_step_log(st, len(records) + 10)
    c = kc.make_cache(l, 10.0, np.float64)
    for i, (pair, A) in enumerate(records):
        status = core.s2do_run(st, c, kd, kp, 1)
        assert status == core.RUNNING, f"the compiled run stopped at step {i}"
        assert logged_pairs(st)[i] == pair, f"step {i}"
        np.testing.assert_allclose(by_example(st, c, l), A, rtol=0, atol=ALPHA_TOL)
    assert core.s2do_run(st, c, kd, kp, 1) == core.OPTIMAL
    assert len(logged_pairs(st)) == len(records)
    D = float(core.dual_value(st, l))
    assert abs(D - pb.dual(records[-1][1])) <= DUAL_RTOL * abs(D)
    G = np.zeros_like(st.G)
    G[c.pex[:l]] = st.G  # the kept gradients against g = v - Q alpha from its definition
    np.testing.assert_allclose(G[pb.free], pb.gradient(records[-1][1])[pb.free], rtol=0,
                               atol=1e-9)
    if kind == "cs":  # the triangle (same-example) steps were exercised
        assert int(st.ist[core.N_TRIANGLE]) > 0


# the compiled run's options -> the reference's reading of them
UPDATE = {"blocks": "block", "steps": "step", "seconds": "step", "fixed": "step"}


def replay(seed, kind, C, kernel, d, epochs, strategy, schedule, cs_second, n=30,
           reference=ref.Online):
    """The compiled online run beside ``reference`` (tests/reference_s2do.py's Algorithm 7),
    example by example: after each, the same steps (TWO_NEWS, the drawn blocks and their
    random patterns: the same working pairs in the same order), the same alphas (1e-10), the
    same support patterns W in the same order; at the end the same dual. The reference is
    handed the durations the compiled run measured (its clock or its work count, one per
    elementary step); everything else it decides itself. An AssertionError names the first
    example where the two part."""
    kd, kp, yc, K = problem(seed, kernel, n=n, d=d)
    l = yc.size
    run = S2doRun(kd, kp, yc, d, C, KINDS[kind], eps=1e-3, epochs=epochs, strategy=strategy,
                  cache_mb=10.0, seed_value=seed, cache_dtype=np.float64, schedule=schedule,
                  cs_second=cs_second)
    run.begin()
    run.st = core.with_step_log(run.st, 200000)
    run.with_duration_log(200000)
    index, key = _helperlib.rnd_get_state(_helperlib.rnd_get_np_state_ptr())
    rs = np.random.RandomState()
    rs.set_state(("MT19937", np.array(key, np.uint32), index))
    used = [0]

    def durations():
        used[0] += 1
        assert used[0] <= run.dlog[0], "the reference takes more steps than the run"
        return float(run.dlog[used[0]])

    pb = ref.Problem(kernel_rows(kd, kp, l, K), yc, d, KINDS[kind], C)
    online = reference(pb, STRATEGY_CODES[strategy], rs, durations, update=UPDATE[schedule],
                       second=cs_second, schedule="fixed" if schedule == "fixed" else "adaptive")
    order_rng = np.random.default_rng(seed)
    done = 0
    for epoch in range(epochs):
        for k in order_rng.permutation(l):
            run.step(1)
            online.example(int(k))
            pairs = logged_pairs(run.st)
            assert pairs == [rec[1] for rec in online.log], f"epoch {epoch}, example {k}"
            assert used[0] == run.dlog[0], f"epoch {epoch}, example {k}: steps taken"
            assert len(pairs) > done or online.log == []
            done = len(pairs)
            np.testing.assert_allclose(by_example(run.st, run.c, l), online.st.A, rtol=0,
                                       atol=ALPHA_TOL)
            nW = run.n_expansion
            assert list(run.c.pex[:nW]) == online.W
    assert run.done
    D = run.dual_objective()
    assert abs(D - pb.dual(online.st.A)) <= DUAL_RTOL * abs(D)
    return online


STRATEGIES = ("s2do-all", "random-pattern-s2do-all", "random-pattern-s2do-pattern")
# (kind, C, kernel, d, epochs): d up to 8, more classes than the thesis's usps and mnist have
# per pattern (letter: 26)
PROBLEMS = [("llw", 1.0, "rbf", 3, 1), ("llw", 10.0, "rbf", 7, 2), ("llw", 0.5, "linear", 3, 2),
            ("cs", 1.0, "rbf", 3, 1), ("cs", 10.0, "rbf", 8, 2), ("cs", 2.0, "poly", 5, 2)]
# Algorithm 7 as printed (the gain after every step; durations the work count, so that a case
# repeats) with Algorithms 8/9's second variable: every problem, every strategy
PRINTED = [(seed, *pb, strategy, "steps", "gradient")
           for seed, pb in enumerate(PROBLEMS, start=20) for strategy in STRATEGIES]
# the package's default (corrections 004-5, 004-12), wall-clock seconds, fixed scheduling
OTHERS = [(20, "llw", 1.0, "rbf", 3, 1, "s2do-all", "blocks", "gain"),
          (21, "llw", 10.0, "rbf", 7, 2, "random-pattern-s2do-all", "blocks", "gain"),
          (24, "cs", 10.0, "rbf", 8, 2, "random-pattern-s2do-all", "blocks", "gain"),
          (25, "cs", 2.0, "poly", 5, 2, "random-pattern-s2do-pattern", "blocks", "gain"),
          (24, "cs", 10.0, "rbf", 8, 1, "random-pattern-s2do-pattern", "seconds", "gradient"),
          (21, "llw", 10.0, "rbf", 7, 1, "s2do-all", "seconds", "gain"),
          (22, "llw", 0.5, "linear", 3, 1, "random-pattern-s2do-pattern", "fixed", "gain"),
          (25, "cs", 2.0, "poly", 5, 1, "random-pattern-s2do-all", "fixed", "gradient")]


@pytest.mark.parametrize("seed, kind, C, kernel, d, epochs, strategy, schedule, cs_second",
                         PRINTED + OTHERS)
def test_online_pass_takes_the_papers_steps(seed, kind, C, kernel, d, epochs, strategy,
                                            schedule, cs_second):
    """Algorithm 7 (one or two epochs, each strategy), as printed and with the package's
    corrections: the compiled run replays the reference step by step (see replay)."""
    online = replay(seed, kind, C, kernel, d, epochs, strategy, schedule, cs_second)
    steps = {s for s, _, _ in online.log}
    assert ref.TWO_NEWS in steps and (steps & {ref.TWO_OLD, ref.TWO_OLD_SUPPORTS})


class _BlockUpdate(ref.Online):
    """The gain once per block (the package's default) where the run updates it per step."""
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.update = "block"


class _SecondByGain(ref.Online):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.second = "gain"


class _NoFloor(ref.Online):
    """Line 17 without LaRank's floor eta."""
    def next_step(self):
        g = np.maximum(self.gains, 0.0)
        return int(np.searchsorted(np.cumsum(g / g.sum()), self.rs.random_sample(),
                                   side="right"))


class _OtherBeta(ref.Online):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.beta = 0.1


class _PatternBySortedW(ref.Online):
    """The random pattern drawn from W sorted by example instead of W's order."""
    def pick_pattern(self):
        return sorted(self.W)[self.rs.randint(0, len(self.W))]


class _SupportsFirst(ref.Online):
    """Fixed scheduling with TWO_OLD_SUPPORTS before TWO_OLD."""
    def example(self, k):
        for step in (ref.TWO_NEWS, ref.TWO_OLD_SUPPORTS, ref.TWO_OLD):
            self.block(step, k)


class _SecondByLargestGradient(ref.Online):
    """The second variable by the largest gradient instead of the smallest (Algorithm 8 line
    7 read as argmax_c g_c)."""
    def __init__(self, pb, *args, **kw):
        super().__init__(pb, *args, **kw)
        state = self.st

        def by_gradient(G, m, p, supports_only):
            cands = [c for c in range(pb.d) if pb.free[m, c] and c != p
                     and not (supports_only and state.A[m, c] == 0.0)]
            return (m, max(cands, key=lambda c: (G[m, c], -c))) if cands else (-1, -1)
        state.by_gradient = by_gradient


MUTANTS = [  # (mutant, the case it must fail on)
    (_BlockUpdate, (21, "llw", 10.0, "rbf", 7, 1, "s2do-all", "steps", "gain")),
    (_SecondByGain, (24, "cs", 10.0, "rbf", 8, 1, "random-pattern-s2do-all", "steps",
                     "gradient")),
    (_SecondByLargestGradient, (24, "cs", 10.0, "rbf", 8, 1, "random-pattern-s2do-pattern", "steps",
                         "gradient")),
    # the floor eta matters where one type's share of the gains falls below it: with
    # durations in seconds (rates far above the initial gains of 1); the work counts of these
    # small problems keep the three shares near a third
    (_NoFloor, (24, "cs", 10.0, "rbf", 8, 2, "random-pattern-s2do-pattern", "seconds",
                "gradient")),
    (_OtherBeta, (20, "llw", 1.0, "rbf", 3, 1, "s2do-all", "steps", "gradient")),
    (_PatternBySortedW, (21, "llw", 10.0, "rbf", 7, 1, "random-pattern-s2do-pattern", "steps",
                         "gain")),
    (_SupportsFirst, (22, "llw", 0.5, "linear", 3, 1, "s2do-all", "fixed", "gain")),
]


@pytest.mark.parametrize("mutant, case", MUTANTS, ids=[m.__name__ for m, _ in MUTANTS])
def test_a_changed_rule_fails_the_replay(mutant, case):
    """The replay is a test that can fail: the reference with one rule changed (the gain's
    update, the CS second variable, the draw's floor, beta, the random pattern, the fixed
    order) parts from the compiled run."""
    with pytest.raises(AssertionError):
        replay(*case, reference=mutant)


def test_the_step_log_changes_no_step():
    """A run with the step log and one without: the same alphas, bit for bit."""
    kd, kp, yc, K = problem(3, "rbf", d=4)
    runs = []
    for log in (False, True):
        run = S2doRun(kd, kp, yc, 4, 2.0, core.CS, epochs=2, seed_value=3)
        run.begin()
        if log:
            run.st = core.with_step_log(run.st, 100000)
        run.run_to_end()
        runs.append(by_example(run.st, run.c, yc.size))
    np.testing.assert_array_equal(runs[0], runs[1])
