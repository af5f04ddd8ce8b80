"""Approximate incremental SVMs that track the optimum (Usunier, Bordes & Bottou, "Guarantees
for approximate incremental SVMs", AISTATS 2010; tests/reference_tracking.py replays it).

Algorithms 1 and 2, the LASVM-like variant of §5.2 and the batch counterpart (``ALGORITHMS``:
track1, track2, track2-lasvm, rcd), with their teachers and the cheap exact average of the K
iterates, as a schedule over the online core's clipped Newton step, gradient update and
kernel-row cache (online_core.newton_step): nothing here re-implements them. The QP, the
solvers, positions, averaging, teachers and counting: docs/solvers.md#tracking-solvers.
"""

from collections import namedtuple

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

from ..numerics.cache import (FILL, KERNEL_EVALS, WIDTH, cache_set_width, fill_pays, held,
                              make_cache)
from ..numerics.data import subset
from ..numerics.kernels import expansion_values, kernel_row
from ..qp.online_core import (I_NS, I_POOL, RNG_SPLITMIX, draw, make_state, newton_step, process,
                              rand_below, svc_boxes, swap_positions)
from . import DEFAULT_K, tracking_K
from .result import SolverResult
from .run import binary_expansion

_NJIT = dict(cache=True, nogil=True)

ALG_TRACK1, ALG_TRACK2, ALG_TRACK2_LASVM, ALG_RCD = 0, 1, 2, 3
ALGORITHMS = {"track1": ALG_TRACK1, "track2": ALG_TRACK2, "track2-lasvm": ALG_TRACK2_LASVM,
              "rcd": ALG_RCD}
TEACH_ORDER, TEACH_ACTIVE, TEACH_ADVERSARIAL = 0, 1, 2
TEACHER_CODES = {"sequential": TEACH_ORDER, "shuffle": TEACH_ORDER, "order-file": TEACH_ORDER,
                 "active": TEACH_ACTIVE, "adversarial": TEACH_ADVERSARIAL}
CHUNK = 256  # time steps (rcd: CHUNK * K coordinate steps) per call of the entry point

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


# ---------------------------------------------------------------------------------------------
# Measures from the gradient (eq. 4; corrections 002-1), in the signed formulation


def duality_measures(a, g, y, Ci):
    """(P, D, G) at coefficients ``a`` (signed) with gradient g = y - K a, on the seen set:
    P = 1/2 sum a (y - g) + sum C_i [y g]_+, D = 1/2 sum a (y + g), and the gap of eq. (4)
    G = sum max[(C_i - y a) y g, -(y a) y g] (every term >= 0)."""
    ap, gp = y * a, y * g  # the paper's alpha_i in [0, C_i] and g_i
    primal = 0.5 * float(np.dot(a, y - g)) + float(np.dot(Ci, np.maximum(gp, 0.0)))
    dual = 0.5 * float(np.dot(a, y + g))
    gap = float(np.sum(np.maximum((Ci - ap) * gp, -ap * gp)))
    return primal, dual, gap


# ---------------------------------------------------------------------------------------------
# The Python driver


class TrackRun:
    """One run of a tracking solver over the l examples of a binary problem (y = +1 / -1,
    boxes [0, Cp] / [-Cn, 0]); ``step(n)`` runs n time indices (rcd: n coordinate steps).

    algorithm  "track1" | "track2" | "track2-lasvm" | "rcd"
    K          steps per time index (rcd: the default length is K l steps)
    average    output w(abar) (default; rcd: the mean of all its iterates) or w(alpha)
    order      the example order of a fixed-order teacher (int array of example ids)
    teacher    "active" | "adversarial" (pool teachers) or a fixed order (``order``)
    max_examples  stop after that many examples (time indices)
    batch_iters   rcd's number of steps N
    literal    keep the literal running mean of line 8 and the examples of the steps (tests)
    cache_dtype  the kernel rows' type (float32 as LIBSVM; tests comparing the steps with a
               float64 reference use float64)
    by_position  run on a copy of the data whose rows are in the fixed order's order (None:
               for bit-set data), see :meth:`_by_position`; ids in and out of the methods stay
               the caller's
    """

    def __init__(self, kd, kp, y, Cp, Cn, *, algorithm="track1", K=DEFAULT_K, average=True,
                 teacher="shuffle", order=None, pool=50, max_examples=None, batch_iters=None,
                 seed=1, cache_mb=100.0, literal=False, cache_dtype=np.float32,
                 by_position=None):
        y = np.where(np.asarray(y) > 0, 1.0, -1.0)
        self.l = l = y.shape[0]
        self.algorithm = algorithm
        self.K = int(K)
        alg = ALGORITHMS[algorithm]
        code = TEACHER_CODES[teacher]
        if code == TEACH_ORDER:
            order = np.arange(l) if order is None else np.asarray(order, np.int64)
        else:
            order = np.zeros(0, np.int64)
        A, B = svc_boxes(y, Cp, Cn)
        self.Ci = B - A
        self.kd, self.kp = kd, kp  # the caller's rows (test errors, measures)
        self.perm = self.inv = None
        if code == TEACH_ORDER and alg != ALG_RCD and self._by_position(kd, order, by_position):
            kd, y, A, B, order = self._renumber(kd, y, A, B, order)
        self.kd_run = kd  # the rows the compiled run reads (renumbered or the caller's)
        self.kc = make_cache(l, cache_mb, dtype=cache_dtype)
        self.kc.meta[FILL] = int(fill_pays(kd, kp))
        self.st = make_state(self.kc, y, A, B, seed, RNG_SPLITMIX, bias=False)
        self.st.ist[I_POOL] = l  # the unseen examples: pool[:l] (pool teachers)
        limit = l if code != TEACH_ORDER else order.size
        if max_examples is not None:
            limit = min(limit, int(max_examples))
        tis = np.zeros(N_TIS, np.int64)
        tis[T_ALG], tis[T_K], tis[T_TEACHER], tis[T_POOL] = alg, self.K, code, int(pool)
        tis[T_AVERAGE], tis[T_LITERAL] = int(bool(average)), int(bool(literal))
        tis[T_LIMIT] = limit
        self.tr = TrackState(tis, np.ascontiguousarray(order, np.int64), np.zeros(l),
                             np.zeros(self.K + 1, np.int64), np.zeros(l if literal else 1),
                             np.zeros(l, np.int64), np.zeros(l), np.zeros(l),
                             np.zeros(l, np.int64), np.full(l, -1, np.int64), np.zeros(l),
                             np.full(self._steps_bound(limit, batch_iters) if literal else 1,
                                     -1, np.int64))
        if alg == ALG_RCD:  # every example seen from the start, g = y at alpha = 0
            tis[T_LIMIT] = self.K * l if batch_iters is None else int(batch_iters)
            tis[T_T] = l
            self.st.ist[I_NS] = l
            self.st.g[:] = self.st.y[self.st.pos2ex]
            cache_set_width(self.kc, np.int64(max(l, 1)))
        elif l:
            cache_set_width(self.kc, np.int64(min(l, 2 * CHUNK + 2)))

    @staticmethod
    def _by_position(kd, order, by_position):
        """Whether to run on the data renumbered in the teacher's order. A fixed order
        inserts example order[t] at position t and never moves it, so with example ids equal
        to positions a kernel row over the seen positions [0, t) reads the targets' rows in
        storage order instead of scattered over the data set: bit-set rows are a few words
        each, and reading them scattered, a cache miss per target, is most of their cost. The
        steps, the draws and every kernel value are the same: only the ids change. The order
        must name distinct examples (an identity order needs nothing)."""
        if by_position is None:
            by_position = kd.bits.shape[0] > 0
        if not by_position or order.size == 0:
            return False
        if np.array_equal(order, np.arange(order.size)):
            return False
        return np.unique(order).size == order.size

    def _renumber(self, kd, y, A, B, order):
        """The data, labels and boxes renumbered so that example t is order[t] (the examples
        outside the order after them, in their own order); self.perm maps the run's ids to
        the caller's, self.inv back."""
        l = self.l
        rest = np.ones(l, bool)
        rest[order] = False
        perm = np.concatenate([order, np.flatnonzero(rest)]).astype(np.int64)
        self.perm = perm
        self.inv = np.empty(l, np.int64)
        self.inv[perm] = np.arange(l)
        return (subset(kd, perm), y[perm], A[perm], B[perm],
                np.arange(order.size, dtype=np.int64))

    def _ids(self, ex):
        """The caller's example ids -> the run's."""
        return ex if self.inv is None else self.inv[ex]

    def _by_example(self, v):
        """Values by the run's example id -> by the caller's."""
        if self.perm is None:
            return v
        out = np.empty_like(v)
        out[self.perm] = v
        return out

    def _steps_bound(self, limit, batch_iters):
        """Coordinate steps of a whole run (PROCESS included): the size of the picks log."""
        if self.algorithm == "rcd":
            return self.K * self.l if batch_iters is None else int(batch_iters)
        return int(limit) * (self.K + 1)

    def picks(self):
        """The example of every coordinate step so far (``literal=True`` runs)."""
        picks = self.tr.picks[:self.iterations].copy()
        return picks if self.perm is None else self.perm[picks]

    # -- running ------------------------------------------------------------------------------

    @property
    def is_rcd(self):
        return self.algorithm == "rcd"

    def begin(self):
        """Load (or compile) the compiled code; the constructor made the state."""
        self.step(0)

    @property
    def CHUNK(self):
        """Time indices per step (rcd: coordinate steps, CHUNK of them per K)."""
        return CHUNK * (self.K if self.is_rcd else 1)

    @property
    def processed(self):
        """Examples seen (rcd: coordinate steps)."""
        return self.iterations if self.is_rcd else self.t

    @property
    def n_expansion(self):
        return self.n_sv

    @property
    def online(self):
        """No finishing phase: online until done."""
        return not self.done

    @property
    def done(self):
        tis = self.tr.tis
        if self.is_rcd:
            return tis[T_ITER] >= tis[T_LIMIT]
        return tis[T_T] >= tis[T_LIMIT]

    def _fit_width(self, n):
        """Rows cover the seen positions: at least t + n + 1 entries, doubled. Each widening
        moves every cached row: on adult (track2, K = 10, 512 MB) 25% slack made 15 of them,
        a quarter of the run, doubling 6 (0.25 s against 1.0 s) for 5% more kernel values
        (shorter rows early would let more of them stay)."""
        need = min(self.l, int(self.tr.tis[T_T]) + n + 1)
        if int(self.kc.meta[WIDTH]) < need:
            cache_set_width(self.kc, np.int64(min(self.l, 2 * need)))

    def step(self, n):
        """At most n time indices (rcd: n coordinate steps); returns how many ran."""
        if not self.is_rcd:
            self._fit_width(n)
        return int(track_run(self.st, self.kc, self.kd_run, self.kp, self.tr, np.int64(n)))

    # -- measures -----------------------------------------------------------------------------

    @property
    def t(self):
        return int(self.tr.tis[T_T])

    @property
    def iterations(self):
        return int(self.tr.tis[T_ITER])

    @property
    def updates(self):
        return int(self.tr.tis[T_UPD])

    @property
    def kernel_evals(self):
        return int(self.kc.stats[KERNEL_EVALS])

    @property
    def teacher_kernel_evals(self):
        return int(self.tr.tis[T_TEACH_EVALS])

    @property
    def n_sv(self):
        """Non-zero alphas (the live iterate)."""
        return int(np.count_nonzero(self.st.alpha[:self.t]))

    @property
    def averaged(self):
        return bool(self.tr.tis[T_AVERAGE]) and int(self.tr.tis[T_KCOUNT]) > 0

    def alpha(self):
        """alpha by example (signed)."""
        st = self.st
        a = np.zeros(self.l)
        a[st.pos2ex] = st.alpha
        return self._by_example(a)

    def output_alpha(self, averaged=None):
        """The output's coefficients by example: abar = alpha - S / k (or alpha)."""
        a = self.alpha()
        if (self.averaged if averaged is None else averaged) and self.tr.tis[T_KCOUNT] > 0:
            a -= self._by_example(self.tr.S) / float(self.tr.tis[T_KCOUNT])
        return a

    def coef_rho(self):
        return self.output_alpha(), 0.0

    def expansion(self):
        return binary_expansion(self.output_alpha(), 0.0)

    def seen(self):
        """Example ids of the seen set S_t."""
        seen = self.st.pos2ex[:self.t].copy()
        return seen if self.perm is None else self.perm[seen]

    def gradient(self, a, rows):
        """g = y - K a on ``rows`` (float64 kernel values; monitoring: not counted). Uses the
        maintained gradient when it is exact enough for the purpose (full-gradient variants:
        g(alpha) on every seen example, corrected on the <= K examples where abar differs).
        ``a`` and ``rows`` by the caller's ids, as the kernel values (self.kd)."""
        st = self.st
        rows_run = self._ids(np.asarray(rows, np.int64))
        full = self.algorithm != "track2-lasvm" and (not self.averaged or not self.is_rcd)
        if full:
            g = np.empty(rows.size)
            g[:] = st.g[st.ex2pos[rows_run]]
            diff = a - self.alpha()
            extra = np.flatnonzero(diff)
            if extra.size:
                out = np.zeros(rows.size)
                expansion_values(self.kd, rows.astype(np.int64), self.kd, extra.astype(np.int64),
                                 diff[extra], self.kp, out)
                g -= out
            return g
        sv = np.flatnonzero(a)
        out = np.zeros(rows.size)
        if sv.size:
            expansion_values(self.kd, rows.astype(np.int64), self.kd, sv.astype(np.int64),
                             a[sv], self.kp, out)
        return st.y[rows_run] - out

    def measures(self):
        """dict: t, P_t, D_t and the normalised gap (P_t - D_t) / (C t) (eq. 4, C t = sum of
        the seen C_i) of the output classifier on the seen set S_t."""
        rows = self.seen()
        a_all = self.output_alpha()
        a = a_all[rows]
        g = self.gradient(a_all, rows)
        primal, dual, gap = duality_measures(a, g, self.st.y[self._ids(rows)], self.Ci[rows])
        norm = float(self.Ci[rows].sum())
        return dict(t=self.t, primal=primal, dual=dual,
                    gap=gap / norm if norm > 0 else 0.0)

    def result(self):
        """SolverResult of the output (coef = abar or alpha by example, rho 0, obj = -D)."""
        a = self.output_alpha()
        rows = np.flatnonzero(a)
        dual = 0.0
        if rows.size:
            g = self.gradient(a, rows)
            dual = 0.5 * float(np.dot(a[rows], self.st.y[self._ids(rows)] + g))
        n_sv = int(rows.size)
        n_bsv = int(np.sum(np.abs(a[rows]) >= self.Ci[rows]))
        counters = dict(examples=self.t, iterations=self.iterations, updates=self.updates,
                        kernel_evals=self.kernel_evals,
                        teacher_kernel_evals=self.teacher_kernel_evals,
                        cache_hits=int(self.kc.stats[0]), cache_misses=int(self.kc.stats[1]),
                        n_sv=n_sv)
        return SolverResult.binary(a, 0.0, obj=-dual, n_iter=self.iterations, n_sv=n_sv,
                                   n_bsv=n_bsv, counters=counters)

    def literal_average(self):
        """The literal running mean of line 8 by example (``literal=True`` runs)."""
        return self._by_example(self.tr.abar.copy())


def run_options(params):
    """TrackRun keyword arguments from svm-train's parameters (no order: the caller's)."""
    K, err = tracking_K(params)
    if err:
        raise ValueError(err)
    rcd = params.solver == "rcd"
    average = (not rcd) if params.average is None else bool(params.average)
    return dict(algorithm=params.solver, K=K, average=average,
                teacher="shuffle" if rcd else params.teacher, pool=params.pool,
                max_examples=params.max_examples, batch_iters=params.batch_iters,
                seed=params.seed, cache_mb=params.cache_size)


def shuffled(l, seed):
    """The shuffle teacher's order: a permutation of range(l) from ``seed``."""
    return np.random.default_rng(int(seed)).permutation(int(l)).astype(np.int64)


def start(machine, params, order="rows"):
    """The TrackRun of svm-train's parameters (the SOLVERS table's entry): ``order``: the
    fixed-order teacher's order in the machine's rows ("rows": the rows' order, shuffled
    with --seed for the shuffle teacher); the training layer passes the order in the
    training file's terms (lasvm_cli/training/tracking_control.py)."""
    kd, kp, y, Cp, Cn = machine[:5]
    if isinstance(order, str):
        order = shuffled(len(y), params.seed) if params.teacher == "shuffle" else None
    return TrackRun(kd, kp, y, Cp, Cn, order=order, **run_options(params))


def from_params(machine, params, progress=None):
    """:func:`start`'s run to its end."""
    run = start(machine, params)
    while not run.done:
        run.step(run.CHUNK)
        if progress is not None:
            progress(run.processed, run.n_expansion)
    return run.result()
