"""The tracking algorithms' compiled time steps (Usunier, Bordes & Bottou 2010; the solver,
its run and its teachers' Python side: solvers/tracking.py): Algorithms 1 and 2, §5.2's
variant and batch rcd as a schedule over the online core's clipped Newton step, gradient
update and row cache (online_core.newton_step), with the cheap exact average of the K iterates.
"""

from collections import namedtuple

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)

from ..numerics.cache import KERNEL_EVALS, held
from ..numerics.kernels import kernel_row
from . import Scalars, slot
from .online_core import I_NS, I_POOL, draw, newton_step, process, rand_below, swap_positions

_NJIT = dict(cache=True, nogil=True)

ALG_TRACK1, ALG_TRACK2, ALG_TRACK2_LASVM, ALG_RCD = 0, 1, 2, 3
ALGORITHMS = {"track1": ALG_TRACK1, "track2": ALG_TRACK2, "track2-lasvm": ALG_TRACK2_LASVM,
              "rcd": ALG_RCD}
TEACH_ORDER, TEACH_ACTIVE, TEACH_ADVERSARIAL = 0, 1, 2
TEACHER_CODES = {"sequential": TEACH_ORDER, "shuffle": TEACH_ORDER, "order-file": TEACH_ORDER,
                 "active": TEACH_ACTIVE, "adversarial": TEACH_ADVERSARIAL}

# int64 scalar block ``tr.tis``
T_ALG = 0          # ALG_*
T_K = 1            # K: coordinate steps per time index (after PROCESS for Algorithm 2)
T_TEACHER = 2      # TEACH_*
T_POOL = 3         # pool size of the active / adversarial teachers
T_T = 4            # t: examples seen
T_NEXT = 5         # next entry of ``order`` (fixed-order teachers)
T_ITER = 6         # coordinate steps (PROCESS included; skipped draws of track2-lasvm too)
T_UPD = 7          # non-null updates
T_KCOUNT = 8       # iterates in the current mean (k of line 8; rcd: all steps so far)
T_AVERAGE = 9      # 1: the output (and the teacher's classifier) is w(abar); 0: w(alpha)
T_TEACH_EVALS = 10  # kernel values computed by the teacher
T_LITERAL = 11     # 1: also keep the literal running mean of line 8 (tests)
T_NTOUCH = 12      # entries of ``touched``
T_LIMIT = 13       # examples to see (rcd: coordinate steps to run)
T_NNZ = 14         # entries of ``nz``: the examples with alpha != 0
N_TIS = 15

TrackState = namedtuple("TrackState",
                        "tis order S touched abar tgt tcoef tout nz nz_at nz_coef picks")
TrackState.__doc__ = """Tracking state beside the online core's LasvmState (all arrays).

tis      int64 [N_TIS]  scalars (T_* constants)
order    int64 [T]      the example order of a fixed-order teacher (unused by pool teachers)
S        float64 [l]    sum_j a_j (j - 1) e_{i_j} by example: abar = alpha - S / k
touched  int64 [K + 1]  examples with S != 0 at this time index (reset list)
abar     float64 [l]    the literal running mean of line 8, by example (T_LITERAL only)
tgt, tcoef, tout        int64 / float64 [l] scratch: targets, coefficients, kernel values
nz       int64 [l]      the examples with alpha != 0, T_NNZ of them (in no particular order)
nz_at    int64 [l]      by example: its entry in nz, -1 when alpha = 0
nz_coef  float64 [l]    nz_coef[r] = alpha of example nz[r]: a new example's gradient reads
                        these m coefficients instead of passing over the t seen positions
picks    int64 [steps]  T_LITERAL only: the example of each coordinate step (PROCESS
                        included), in order, so that tests can compare the working examples
                        with the paper's pseudo-code (tests/reference_tracking.py)
"""


class TrackScalars(Scalars):
    """A TrackState's scalars by name: ``TrackScalars(tr).t`` is ``tr.tis[T_T]``."""
    __slots__ = ()
    algorithm = slot("tis", T_ALG)
    K = slot("tis", T_K)
    teacher = slot("tis", T_TEACHER)
    pool = slot("tis", T_POOL)
    t = slot("tis", T_T)
    iterations = slot("tis", T_ITER)
    updates = slot("tis", T_UPD)
    kcount = slot("tis", T_KCOUNT)
    average = slot("tis", T_AVERAGE)
    teach_evals = slot("tis", T_TEACH_EVALS)
    literal = slot("tis", T_LITERAL)
    limit = slot("tis", T_LIMIT)
    nnz = slot("tis", T_NNZ)


# ---------------------------------------------------------------------------------------------
# The classifier: gathered non-zero coefficients, evaluated on one example


@numba.njit(**_NJIT)
def _gather(st, tr, averaged):
    """Non-zero coefficients of w(abar) (or w(alpha)) over the seen positions [0, t) into
    tr.tgt (example ids) / tr.tcoef; returns their number.

    Branch-free (every position written, the count advanced by c != 0): the zeros and non-zeros
    are mixed, and a branch on them was mispredicted often enough to make this pass over every
    seen example a fifth of track2's time on adult."""
    k = tr.tis[T_KCOUNT]
    m = 0
    tgt, tcoef, pos2ex, alpha = tr.tgt, tr.tcoef, st.pos2ex, st.alpha
    for p in range(tr.tis[T_T]):
        ex = pos2ex[p]
        c = alpha[p]
        if averaged and k > 0:
            c -= tr.S[ex] / k
        tgt[m] = ex
        tcoef[m] = c
        m += c != 0.0
    return m


@numba.njit(**_NJIT)
def _expansion(kc, kd, kp, out, ex, targets, coef):
    """sum_r coef[r] K(x_ex, x_targets[r]) (len(targets) kernel values into ``out``, counted
    as training evaluations): the teacher's classifier over the gathered coefficients, and a
    full-gradient variant's g_t over the kept list of non-zero alphas (tr.nz / nz_coef: no
    pass over the t seen positions, which was a twelfth of track2's time)."""
    m = targets.shape[0]
    if m == 0:
        return 0.0
    kernel_row(kd, ex, kd, targets, kp, out[:m])
    kc.stats[KERNEL_EVALS] += m
    s = 0.0
    for r in range(m):
        s += coef[r] * out[r]
    return s


@numba.njit(**_NJIT)
def _track_nonzero(tr, ex, before, after):
    """Keep tr.nz / nz_at / nz_coef after example ex's alpha went from ``before`` to ``after``:
    a new non-zero joins at the end, one back at zero takes the last entry's place. (Arrays
    taken once and held to the end: no reference counts, see numba_internals.py.)"""
    nz, nz_at, coef, tis = tr.nz, tr.nz_at, tr.nz_coef, tr.tis
    n = tis[T_NNZ]
    r = nz_at[ex]
    if after != 0.0:
        if r < 0:
            r = n
            nz[r] = ex
            nz_at[ex] = r
            tis[T_NNZ] = n + 1
        coef[r] = after
    elif before != 0.0:
        moved = nz[n - 1]
        nz[r] = moved
        coef[r] = coef[n - 1]
        nz_at[moved] = r
        nz_at[ex] = -1
        tis[T_NNZ] = n - 1
    held(nz, nz_at)
    held(coef, tis)


# ---------------------------------------------------------------------------------------------
# Teachers


@numba.njit(**_NJIT)
def _next_example(st, kc, kd, kp, tr):
    """The teacher's next unseen example: the next entry of ``order``, or the best of a pool of
    P unseen examples (drawn without replacement: a partial Fisher-Yates over pool[:m]) for the
    classifier output at the previous time index: smallest |f(x)| (active) or largest hinge
    loss [1 - y f(x)]_+ (adversarial); first candidate among equals."""
    teacher = tr.tis[T_TEACHER]
    if teacher == TEACH_ORDER:
        i = tr.tis[T_NEXT]
        tr.tis[T_NEXT] = i + 1
        return tr.order[i]
    m = st.ist[I_POOL]
    n_cand = min(tr.tis[T_POOL], m)
    for c in range(n_cand):
        r = c + rand_below(st.rng, m - c)
        e = st.pool[c]
        st.pool[c] = st.pool[r]
        st.pool[r] = e
    n_t = _gather(st, tr, tr.tis[T_AVERAGE] != 0)
    before = kc.stats[KERNEL_EVALS]
    best = -1
    best_v = 0.0
    for c in range(n_cand):
        ex = st.pool[c]
        f = _expansion(kc, kd, kp, tr.tout, ex, tr.tgt[:n_t], tr.tcoef)
        if teacher == TEACH_ACTIVE:
            v = abs(f)
        else:
            v = -max(0.0, 1.0 - st.y[ex] * f)
        if best < 0 or v < best_v:
            best = c
            best_v = v
    tr.tis[T_TEACH_EVALS] += kc.stats[KERNEL_EVALS] - before
    ex = st.pool[best]  # take it out of the unseen pool (swap with the last)
    st.pool[best] = st.pool[m - 1]
    st.pool[m - 1] = ex
    st.ist[I_POOL] = m - 1
    return ex


# ---------------------------------------------------------------------------------------------
# Steps and the running mean


@numba.njit(inline="always", **_NJIT)
def _reset_average(tr):
    """Line 8 restarts at each time index: S = 0 (through the touched list), k = 0."""
    for r in range(tr.tis[T_NTOUCH]):
        tr.S[tr.touched[r]] = 0.0
    tr.tis[T_NTOUCH] = 0
    tr.tis[T_KCOUNT] = 0


@numba.njit(**_NJIT)
def _average(st, tr, ex, a, k):
    """Line 8 after step k changed example ex by a: S += a (k - 1) e_ex (so that abar =
    alpha - S / k); with T_LITERAL, also abar <- ((k-1)/k) abar + alpha / k literally."""
    if a != 0.0 and k > 1:
        if tr.tis[T_ALG] != ALG_RCD and tr.S[ex] == 0.0:
            tr.touched[tr.tis[T_NTOUCH]] = ex
            tr.tis[T_NTOUCH] += 1
        tr.S[ex] += a * (k - 1)
    tr.tis[T_KCOUNT] = k
    if tr.tis[T_LITERAL] != 0:
        w = (k - 1.0) / k
        for p in range(tr.tis[T_T]):
            e = st.pos2ex[p]
            tr.abar[e] = w * tr.abar[e] + st.alpha[p] / k


@numba.njit(inline="always", **_NJIT)
def _record_pick(tr, ex):
    """T_LITERAL runs log the example of step T_ITER (tests)."""
    if tr.tis[T_LITERAL] != 0 and tr.tis[T_ITER] < tr.picks.shape[0]:
        tr.picks[tr.tis[T_ITER]] = ex


@numba.njit(**_NJIT)
def _coordinate_step(st, kc, kd, kp, tr, k):
    """Lines 6-8: one eq. (3) step on a seen example drawn uniformly (step k of the mean).
    (The namedtuples go whole to the callees and are last used together: numba then prunes
    their 50 reference-count pairs a step; numba_internals.py says why.)"""
    p = draw(st, tr.tis[T_T])
    ex = st.pos2ex[p]
    before = st.alpha[p]
    status = _step_at(st, kc, kd, kp, tr, p)
    after = st.alpha[st.ex2pos[ex]]
    if status != 0:
        _track_nonzero(tr, ex, before, after)
    _record_pick(tr, ex)
    tr.tis[T_ITER] += 1
    tr.tis[T_UPD] += status
    _average(st, tr, ex, after - before, k)
    held(kc, kd)
    held(kp, st)


@numba.njit(**_NJIT)
def _step_at(st, kc, kd, kp, tr, p):
    """The step on position p; track2-lasvm: a draw outside S is skipped (§5.2 (ii)), an
    example back at alpha = 0 leaves S (§5.2 (i)). Returns 1 when alpha moved."""
    status = 0
    if tr.tis[T_ALG] == ALG_TRACK2_LASVM:
        n_s = st.ist[I_NS]
        if p < n_s:
            status = newton_step(st, kc, kd, kp, p, 0.0)
            if status != 0 and st.alpha[p] == 0.0:
                swap_positions(st, kc, p, n_s - 1)
                st.ist[I_NS] = n_s - 1
    else:
        status = newton_step(st, kc, kd, kp, p, 0.0)
    held(kc, kd)
    held(kp, st)
    return status


@numba.njit(**_NJIT)
def _insert(st, kc, kd, kp, tr, ex):
    """x_t joins the seen set at position t. Full variants: g_t = y_t - sum_j alpha_j K_tj
    (over the non-zero alphas), then PROCESS (line 4) for Algorithm 2. track2-lasvm: the online
    core's PROCESS over S (§5.2: inserted into S only when it moves). Returns 1 when PROCESS
    made a step, -1 when there is no PROCESS (Algorithm 1)."""
    t = tr.tis[T_T]
    swap_positions(st, kc, st.ex2pos[ex], t)
    tr.tis[T_T] = t + 1
    alg = tr.tis[T_ALG]
    if alg == ALG_TRACK2_LASVM:
        status = process(st, kc, kd, kp, ex, 0.0)
        _track_nonzero(tr, ex, 0.0, st.alpha[st.ex2pos[ex]])
        return status
    st.alpha[t] = 0.0
    m = tr.tis[T_NNZ]  # the non-zero alphas (alpha_t = 0: position t adds nothing)
    st.g[t] = st.y[ex] - _expansion(kc, kd, kp, tr.tout, ex, tr.nz[:m], tr.nz_coef)
    st.ist[I_NS] = t + 1
    if alg == ALG_TRACK2:
        status = newton_step(st, kc, kd, kp, t, 0.0)
        _track_nonzero(tr, ex, 0.0, st.alpha[t])
        return status
    return -1


@numba.njit(**_NJIT)
def _time_step(st, kc, kd, kp, tr):
    """One time index of Algorithm 1 / 2 / §5.2: the teacher's example, PROCESS, K steps."""
    ex = _next_example(st, kc, kd, kp, tr)
    _reset_average(tr)
    status = _insert(st, kc, kd, kp, tr, ex)
    if status >= 0:
        _record_pick(tr, ex)
        tr.tis[T_ITER] += 1
        tr.tis[T_UPD] += status
    if tr.tis[T_LITERAL] != 0:
        for p in range(tr.tis[T_T]):
            tr.abar[st.pos2ex[p]] = st.alpha[p]
    for k in range(1, tr.tis[T_K] + 1):
        _coordinate_step(st, kc, kd, kp, tr, k)


@numba.njit(**_NJIT)
def track_run(st, kc, kd, kp, tr, n):
    """The compiled entry point: at most n time indices (rcd: n coordinate steps) until
    T_LIMIT; returns how many ran."""
    if tr.tis[T_ALG] == ALG_RCD:
        n = min(n, tr.tis[T_LIMIT] - tr.tis[T_ITER])
        for _ in range(n):
            _coordinate_step(st, kc, kd, kp, tr, tr.tis[T_ITER] + 1)
        return n
    done = 0
    while done < n and tr.tis[T_T] < tr.tis[T_LIMIT]:
        _time_step(st, kc, kd, kp, tr)
        done += 1
    return done
