"""The online solver of the all-in-one machines (Trinh 2012, §4.2 for LLW, §5.2 for the unified
framework and Crammer-Singer; corrections: research/seed-004-multiclass.md §3, §4): LaRank-like
passes over the data with S2DO steps on the state of qp/s2do.py.

Positions [0, |W|) of the state are the support patterns W (examples with some alpha > 0);
their gradients (all d of them, report §3.3) are kept exact. One epoch visits every example
once, in a shuffled order (``--seed``):

* TWO_NEWS: the example's gradient is computed from W (one kernel row), then one S2DO step on
  two of its variables (Algorithm 6/8); it joins W if an alpha became positive. An example
  already in W (epochs >= 2) takes the step from its stored gradients.
* then TWO_OLD and TWO_OLD_SUPPORTS blocks (d steps each; variables of W, or only its support
  vectors) drawn by Algorithm 7's adaptive scheduling -- probability proportional to each step
  type's recent dual gain per unit of work (decay beta = 0.05, floor eta = 0.05), TWO_NEWS
  included: drawing TWO_NEWS moves on to the next example. The thesis divides by wall-clock
  seconds; the work here (variables visited, plus kernel values computed weighted by their
  cost in features, kernels.row_work) is its deterministic stand-in (report §3.4, P9), so a run
  is repeatable with its --seed, and the whole pass runs compiled.

``--strategy`` picks the old steps' working sets (Algorithm 6, 9, 10): s2do-all (S2DO over all
of V), random-pattern-s2do-all (first variable from a random pattern, second from V),
random-pattern-s2do-pattern (both from the random pattern). A pattern whose alphas all return
to 0 leaves W. ``--epochs n`` passes; ``inf``: until the KKT violation of the whole problem
(gradients of the examples outside W computed at the end of each pass) is below ``-e``.
"""

import math
import time

import numba
from .. import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

from .. import cache as kc
from ..qp import s2do as core
from ..kernels import row_work
from .allinone import diagonal, result_from_state

_NJIT = dict(cache=True, nogil=True)

TWO_NEWS, TWO_OLD, TWO_OLD_SUPPORTS = 0, 1, 2
STEP_NAMES = ("two_news", "two_old", "two_old_supports")
S2DO_ALL, RP_S2DO_ALL, RP_S2DO_PATTERN = 0, 1, 2
STRATEGY_CODES = {"s2do-all": S2DO_ALL, "random-pattern-s2do-all": RP_S2DO_ALL,
                  "random-pattern-s2do-pattern": RP_S2DO_PATTERN}
DEFAULT_STRATEGY = {core.LLW: "s2do-all", core.CS: "random-pattern-s2do-all"}  # the thesis's
BETA = 0.05  # Algorithm 7's decay
ETA = 0.05  # the smallest selection probability of a step type (LaRank)


@numba.njit(**_NJIT)
def seed(s):
    np.random.seed(s)


@numba.njit(**_NJIT)
def _leave_if_empty(st, c, t):
    """Pattern at position t < |W| with every alpha at 0 leaves W (swapped to |W| - 1)."""
    nW = st.ist[core.ACTIVE]
    if 0 <= t < nW and st.S[t] == 0.0:
        nW -= 1
        core.swap_positions(st, c, t, nW, True)
        st.ist[core.ACTIVE] = nW


@numba.njit(**_NJIT)
def _leave(st, c, m, n):
    a, b = max(m, n), min(m, n)
    _leave_if_empty(st, c, a)
    if b != a:
        _leave_if_empty(st, c, b)


@numba.njit(**_NJIT)
def two_news(st, c, kd, kp, k):
    """TWO_NEWS on example k; returns the dual increase."""
    nW = st.ist[core.ACTIVE]
    t = c.pos[k]
    if t < nW:  # already a support pattern: its gradients are stored
        viol, gain, m, n = core.select_and_step(st, c, kd, kp, t, t + 1, False, t, t + 1, nW)
        _leave(st, c, m, n)
        return gain
    if t != nW:
        core.swap_positions(st, c, t, nW, True)
    core.gradient_from(st, nW, kc.cache_get(c, kd, kp, k, nW + 1), nW)
    viol, gain, m, n = core.select_and_step(st, c, kd, kp, nW, nW + 1, False, nW, nW + 1,
                                            nW + 1)
    if st.S[nW] > 0.0:
        st.ist[core.ACTIVE] = nW + 1
    return gain


@numba.njit(**_NJIT)
def two_old(st, c, kd, kp, supports_only, strategy):
    """TWO_OLD (supports_only False) or TWO_OLD_SUPPORTS on W; returns the dual increase."""
    nW = st.ist[core.ACTIVE]
    if nW == 0:
        return 0.0
    if strategy == S2DO_ALL:
        lo, hi, slo, shi = 0, nW, 0, nW
    else:
        i = np.random.randint(0, nW)
        lo, hi = i, i + 1
        slo, shi = (0, nW) if strategy == RP_S2DO_ALL else (i, i + 1)
    viol, gain, m, n = core.select_and_step(st, c, kd, kp, lo, hi, supports_only, slo, shi, nW)
    _leave(st, c, m, n)
    return gain


@numba.njit(**_NJIT)
def _step_work(step, strategy, nW, d):
    """The work of one elementary step in variables visited: TWO_NEWS computes the new
    gradients (|W| d) and scans d; an old step scans its first and second ranges and updates
    the gradients of W."""
    if step == TWO_NEWS:
        return nW * d + 3 * d
    if strategy == S2DO_ALL:
        return 3 * nW * d
    if strategy == RP_S2DO_ALL:
        return 2 * nW * d + d
    return nW * d + 2 * d


@numba.njit(**_NJIT)
def run_block(st, c, kd, kp, step, strategy, k, mult, counts, kcost):
    """``mult`` elementary steps of one type (k: the example of TWO_NEWS); returns (dual
    increase, work): variables visited plus kcost per kernel value computed. counts[step]
    counts the steps."""
    total = 0.0
    work = 0.0
    d = st.ist[core.D]
    for _ in range(mult):
        evals = c.stats[kc.KERNEL_EVALS]
        work += _step_work(step, strategy, st.ist[core.ACTIVE], d)
        if step == TWO_NEWS:
            total += two_news(st, c, kd, kp, k)
        else:
            total += two_old(st, c, kd, kp, step == TWO_OLD_SUPPORTS, strategy)
        work += kcost * (c.stats[kc.KERNEL_EVALS] - evals)
        counts[step] += 1
        st.ist[core.ITER] += 1
    return total, work


@numba.njit(**_NJIT)
def draw(gains, eta):
    """A step type with probability gains / sum, each floored at eta (then renormalised)."""
    total = 0.0
    for s in range(3):
        total += max(gains[s], 0.0)
    p = np.empty(3)
    norm = 0.0
    for s in range(3):
        p[s] = max(max(gains[s], 0.0) / total if total > 0.0 else 1.0 / 3.0, eta)
        norm += p[s]
    u = np.random.random() * norm
    for s in range(3):
        u -= p[s]
        if u < 0.0:
            return s
    return 2


@numba.njit(**_NJIT)
def run_epoch(st, c, kd, kp, order, strategy, mult, gains, counts, kcost, beta, eta):
    """One pass (Algorithm 7, lines 5-19): for each example TWO_NEWS, then blocks drawn by
    gain per work unit until TWO_NEWS is drawn again."""
    for r in range(order.shape[0]):
        k = order[r]
        step = TWO_NEWS
        while True:
            gain, work = run_block(st, c, kd, kp, step, strategy, k, mult[step], counts, kcost)
            gains[step] = beta * gain / max(work, 1.0) + (1.0 - beta) * gains[step]
            step = draw(gains, eta)
            if step == TWO_NEWS:
                break


def solve_online(kd, kp, yc, d, C, kind, *, eps=1e-3, epochs=1, strategy=None, cache_mb=100.0,
                 target=1.0, seed_value=1, multipliers=None, progress=None,
                 cache_dtype=np.float32, trace=None, trace_parts=10):
    """The online solver; ``epochs`` may be math.inf (until the KKT violation < eps).
    ``trace(seconds, kernel_evals, dual, epoch)`` is called ``trace_parts`` times per pass
    (the dual is the sum of the steps' exact increases)."""
    t0 = time.perf_counter()
    yc = np.ascontiguousarray(yc, np.int64)
    l = yc.shape[0]
    strategy = DEFAULT_STRATEGY[kind] if strategy is None else strategy
    code = STRATEGY_CODES[strategy]
    mult = np.array((1, d, d) if multipliers is None else multipliers, np.int64)
    st = core.make_state(kind, yc, d, diagonal(kd, kp, l), float(C), target=target, eps=eps,
                         shrinking=False)
    st.ist[core.ACTIVE] = 0  # W is empty
    c = kc.make_cache(l, cache_mb, cache_dtype)
    rng = np.random.default_rng(seed_value)
    seed(int(seed_value))
    gains = np.ones(3)  # Algorithm 7's stepGains
    counts = np.zeros(3, np.int64)
    kcost = float(max(1, row_work(kd, kd, kp, 1)))
    epoch, viol, optimal = 0, math.inf, False
    while epoch < epochs:
        order = rng.permutation(l).astype(np.int64)
        parts = np.array_split(order, trace_parts if trace is not None else 1)
        for i, part in enumerate(parts):
            run_epoch(st, c, kd, kp, part, code, mult, gains, counts, kcost, BETA, ETA)
            if trace is not None:
                trace(time.perf_counter() - t0, int(c.stats[kc.KERNEL_EVALS]),
                      float(st.fst[core.GAIN]), epoch + (i + 1) / len(parts))
        epoch += 1
        if progress is not None:
            progress(epoch, float("nan"))
        if epochs == math.inf:
            nW = int(st.ist[core.ACTIVE])
            core.reconstruct(st, c, kd, kp, nW, l)  # the examples outside W
            viol = float(core.kkt_violation(st, l))
            if viol < eps:
                optimal = True
                break
    counters = dict(iterations=int(st.ist[core.ITER]), epochs=epoch,
                    triangle_steps=int(st.ist[core.N_TRIANGLE]),
                    seconds=time.perf_counter() - t0, cache_rows=int(c.meta[kc.N_SLOTS]),
                    strategy=strategy)
    for s, name in enumerate(STEP_NAMES):
        counters[f"{name}_steps"] = int(counts[s])
    counters.update(kc.cache_stats(c))
    counters["kernel_evals"] += l  # the diagonal
    return result_from_state(st, c.perm, kind, counters,
                             kkt_hi=l if optimal else int(st.ist[core.ACTIVE]))


def solve_from_params(kd, kp, yc, d, params, progress=None):
    """solve_online with svm-train's parameters (--multiclass llw|cs, --solver online)."""
    return solve_online(kd, kp, yc, d, params.C, core.KINDS[params.multiclass],
                        eps=params.eps, epochs=params.epochs, strategy=params.strategy,
                        cache_mb=params.cache_size, target=params.llw_target,
                        seed_value=params.seed, progress=progress)
