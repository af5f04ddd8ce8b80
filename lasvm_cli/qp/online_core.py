"""The online core: LASVM's primitives (PROCESS, REPROCESS, eviction, the selection criteria),
compiled once for every online solver, with or without a bias, over per-variable boxes, so
that LASVM, the LASVM-G family, the tracking algorithms and the streams share one step and one
cache policy. The QP, positions, state and the deviations from the paper (each also marked in
the code): docs/online.md#the-online-core-qponline_corepy.
"""

from collections import namedtuple

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

from .. import qp
from ..base.rand import glibc_table
from ..numerics.cache import WIDTH, cache_discard, cache_set_width, held
from ..numerics.cache import cache_symmetric_at as _row_at  # LaSVM 1.1's rows: symmetric fill
from ..numerics.cache import cache_swap_keep_prefix as _swap_keep_prefix
from ..numerics.index import at
from ..numerics.ordered import violation
from . import Scalars, slot
from .steps import TAU, step_pair  # the pure two-variable step shared with SMO

_NJIT = dict(cache=True, nogil=True)

N_SEED = 5        # seeds per class, LaSVM 1.1 (la_svm.cpp: first 5 of each class in file order)
AUTO_NEAR = 5     # AUTOACTIVE: stop sampling after this many candidates within 1 + delta/2
AUTO_MAX = 100    # AUTOACTIVE: at most this many candidates
CHUNK = 1000      # iterations per call of the compiled entry point (progress, Ctrl-C, saving)
SHRINK_EVERY = 1000  # the shrinking finishing shrinks every min(SHRINK_EVERY, |S|) steps (LaSVM 1.1)

SEL_RANDOM, SEL_GRADIENT, SEL_ACTIVE, SEL_AUTOACTIVE = 0, 1, 2, 3
SELECTION_CODES = dict(zip(qp.SELECTIONS, (SEL_RANDOM, SEL_GRADIENT, SEL_ACTIVE, SEL_AUTOACTIVE)))

# int64 scalar block ``st.ist``
I_NS = 0          # size of the expansion S (positions [0, n_S))
I_POOL = 1        # examples not yet processed in this epoch: pool[:I_POOL]
I_STEPS = 2       # direction searches performed (PROCESS + REPROCESS + finishing)
I_PROCESSED = 3   # PROCESS calls
I_INSERTED = 4    # examples inserted into S by PROCESS
I_LABELS = 5      # labels used (distinct examples whose label was read)
I_EPOCH = 6       # epochs completed
I_REPROCESS = 7   # REPROCESS calls
I_FINISH_STEPS = 8  # steps of the finishing phase (SMO iterations with a bias)
I_NOBIAS = 9      # the formulation: 0 = with a bias (equality constraint), 1 = without
I_BAIL_PRINTED = 10  # 1: a REPROCESS that bails out does nothing (the paper's step 2); 0: it
                     # still evicts and recomputes delta (LaSVM 1.1, the default)
I_ACTIVE = 11     # the shrinking finishing's active prefix [0, I_ACTIVE) of S; 0 outside it
I_NEXT_SHRINK = 12  # the shrinking finishing shrinks when I_FINISH_STEPS reaches this
N_IST = 13

# float64 scalar block ``st.fst``
F_DELTA = 0       # delta = the largest violation after the last REPROCESS
N_FST = 2


class LasvmScalars(Scalars):
    """A LasvmState's scalars by name: ``LasvmScalars(st).n_s`` is ``st.ist[I_NS]``."""
    __slots__ = ()
    n_s = slot("ist", I_NS)
    pool = slot("ist", I_POOL)
    steps = slot("ist", I_STEPS)
    processed = slot("ist", I_PROCESSED)
    inserted = slot("ist", I_INSERTED)
    labels = slot("ist", I_LABELS)
    epoch = slot("ist", I_EPOCH)
    reprocess = slot("ist", I_REPROCESS)
    finish_steps = slot("ist", I_FINISH_STEPS)
    nobias = slot("ist", I_NOBIAS, bool)
    bail_printed = slot("ist", I_BAIL_PRINTED, bool)
    delta = slot("fst", F_DELTA, float)

LasvmState = namedtuple("LasvmState",
                        "pos2ex ex2pos alpha g A B y pool labeled ist fst rng t_pos t_ex")
LasvmState.__doc__ = """Online solver state (all arrays; positions are cache positions).

pos2ex, ex2pos  int64 [l]   position -> example id and back (the cache's perm and pos)
alpha, g        float64 [l] by position; meaningful on [0, n_S)
A, B            float64 [l] box of the variable at each position
y               float64 [l] labels (the linear term) by example id, read through ``labeled``
pool            int64 [l]   examples not yet processed this epoch: pool[:ist[I_POOL]]
labeled         uint8 [l]   1 once the label of the example has been read (active learning)
ist, fst        int64 [N_IST], float64 [N_FST] scalars (I_*, F_* constants)
rng             uint64 [N_RNG] random generator (make_rng)
t_pos, t_ex     int64 [l]   scratch (not part of the saved state)
"""

RNG_SPLITMIX, RNG_GLIBC = 0, 1
RNGS = {"splitmix64": RNG_SPLITMIX, "glibc": RNG_GLIBC}
N_RNG = 35  # rng[0] kind, rng[1] splitmix word, rng[2] front, rng[3] rear, rng[4:35] glibc table


def make_rng(kind, seed):
    """uint64 [N_RNG]: splitmix64 seeded with ``seed``, or glibc's rand() after srand(seed)
    (random_r TYPE_3 over lasvm_cli/base/rand.py's table; LaSVM 1.1 never calls srand, so seed 1
    gives its example order)."""
    rng = np.zeros(N_RNG, np.uint64)
    rng[0] = kind
    rng[1] = (int(seed) * 0x2545F4914F6CDD1D + 0x1234567) % (1 << 64)
    rng[2], rng[3] = 3, 0
    rng[4:] = glibc_table(seed)
    for _ in range(310):
        _rand(rng, np.int64(1))
    return rng


@numba.njit(inline="always", **_NJIT)
def _rand(rng, n):
    """Random integer in [0, n): splitmix64, or glibc rand() % n."""
    if rng[0] == RNG_GLIBC:
        f = rng[2]
        b = rng[3]
        v = (rng[4 + f] + rng[4 + b]) & np.uint64(0xFFFFFFFF)
        rng[4 + f] = v
        rng[2] = (f + np.uint64(1)) % np.uint64(31)
        rng[3] = (b + np.uint64(1)) % np.uint64(31)
        return np.int64(v >> np.uint64(1)) % n
    z = rng[1] + np.uint64(0x9E3779B97F4A7C15)
    rng[1] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z % np.uint64(n))


@numba.njit(**_NJIT)
def _draw(st, n):
    """_rand on the state's generator, in a function of its own: st.rng passed as an argument
    would be a new reference (see _swap_pos)."""
    return _rand(st.rng, n)


# ---------------------------------------------------------------------------------------------
# Violations: the maximal violating pair (with a bias) or variable (without)


@numba.njit(**_NJIT)
def _minmax(st, n):
    """(i, j): i = argmax_{p<n} g_p with alpha_p < B_p; j = argmin g_p with alpha_p > A_p
    (-1 when empty); first index wins ties, as in LaSVM 1.1."""
    i = -1
    j = -1
    gmax = -np.inf
    gmin = np.inf
    for p in range(n):
        gp = st.g[p]
        a = st.alpha[p]
        if gp > gmax and a < st.B[p]:
            gmax = gp
            i = p
        if gp < gmin and a > st.A[p]:
            gmin = gp
            j = p
    return i, j


@numba.njit(**_NJIT)
def _max_violator(st, n):
    """Without a bias: (k, v), k = argmax_{p<n} of the violation v_p = g_p where alpha_p < B_p
    and g_p > 0, -g_p where alpha_p > A_p and g_p < 0 (ordered.violation; first index wins
    ties); (-1, 0)."""
    k = -1
    best = 0.0
    for p in range(n):
        v = violation(st.g[p], st.alpha[p], st.A[p], st.B[p])
        if v > best:
            best = v
            k = p
    return k, best


@numba.njit(**_NJIT)
def _violation(st, n):
    """(i, j, delta) over [0, n): the maximal violating pair and g_i - g_j with a bias; the
    maximal violating variable (i, -1) and its violation without one. delta = 0 when none."""
    if st.ist[I_NOBIAS] != 0:
        k, v = _max_violator(st, n)
        return k, -1, v
    i, j = _minmax(st, n)
    if i >= 0 and j >= 0:
        return i, j, max(0.0, st.g[i] - st.g[j])
    return i, j, 0.0


@numba.njit(**_NJIT)
def _thresholds(st, n):
    """(g_up, g_down): a variable at alpha = 0 that can only decrease (increase) cannot move
    when its gradient is at least g_up (at most g_down): (g_max, g_min) of _minmax's pair with
    a bias (+inf / -inf when a side is empty), (0, 0) without one."""
    if st.ist[I_NOBIAS] != 0:
        return 0.0, 0.0
    i, j = _minmax(st, n)
    # read both unconditionally (g has l >= 1 entries), then choose: reading st.g in a branch
    # leaves a reference count numba cannot prune (numba_internals.py)
    g_i = st.g[max(i, 0)]
    g_j = st.g[max(j, 0)]
    return (g_i if i >= 0 else np.inf), (g_j if j >= 0 else -np.inf)


@numba.njit(**_NJIT)
def _swap_pos(st, kc, p1, p2):
    # one array at a time, no tuple of them: a tuple of arrays is new references, whose
    # atomic reference counts stop numba's pruning of the arguments' (numba_internals.py)
    if p1 == p2:
        return
    _swap2(st.alpha, p1, p2)
    _swap2(st.g, p1, p2)
    _swap2(st.A, p1, p2)
    _swap2(st.B, p1, p2)
    _swap_keep_prefix(kc, p1, p2)


@numba.njit(inline="always", **_NJIT)
def _swap2(arr, p1, p2):
    t = arr[p1]
    arr[p1] = arr[p2]
    arr[p2] = t


# ---------------------------------------------------------------------------------------------
# Direction searches


@numba.njit(inline="always", **_NJIT)
def _land(value, bound, step, room):
    """value + step, exactly on the bound when the step is the room left (eviction and SV
    counts test alpha == A or B exactly)."""
    return bound if step == room else value + step


@numba.njit(**_NJIT)
def _direction_search(st, kc, kd, kp, i, j, tau):
    """One direction search over the active prefix, if (i, j) is tau-violating (Bordes et al.
    2005, PROCESS step 5 / REPROCESS step 3): a pair step on (i, j) with a bias, a clipped
    Newton step on i alone without one (j = -1). Returns 1 when a step was made."""
    if st.ist[I_NOBIAS] != 0:
        return _newton_step(st, kc, kd, kp, i, tau)
    if i < 0 or j < 0 or i == j:
        return 0
    if st.g[i] - st.g[j] <= tau:
        return 0
    n = st.ist[I_NS]
    # rows as offsets into the cache's buffer, not views (a view's reference count keeps
    # those of every argument: numba_internals.py)
    bi = _row_at(kc, kd, kp, st.pos2ex[i], n, st)
    bj = _row_at(kc, kd, kp, st.pos2ex[j], n, st)
    _pair_step(st, kc, n, i, j, bi, bj)
    held(kc, kd)  # one last use of the namedtuples, together (cache.held says why)
    held(kp, st)
    return 1


@numba.njit(**_NJIT)
def _pair_step(st, kc, n, i, j, bi, bj):
    """alpha_i += lambda, alpha_j -= lambda and the gradient over [0, n) (rows i and j are
    kc.buf[bi + p], kc.buf[bj + p])."""
    K = kc.buf
    curv = np.float64(K[bi + i]) + np.float64(K[bj + j]) - 2.0 * np.float64(K[bi + j])
    room_i = st.B[i] - st.alpha[i]
    room_j = st.alpha[j] - st.A[j]
    lam = step_pair(st.g[i], st.g[j], st.alpha[i], st.alpha[j], st.B[i], st.A[j], curv)
    st.alpha[i] = _land(st.alpha[i], st.B[i], lam, room_i)
    st.alpha[j] = _land(st.alpha[j], st.A[j], -lam, -room_j)
    # the one gradient update of the online core after a pair step: g_p -= d (K_ip - K_jp)
    g = st.g
    for p in range(n):
        g[p] -= lam * (np.float64(K[at(bi, p)]) - np.float64(K[at(bj, p)]))
    st.ist[I_STEPS] += 1


@numba.njit(**_NJIT)
def _newton_step(st, kc, kd, kp, k, tau):
    """Without a bias: alpha_k += mu, mu = g_k / K_kk clipped to [A_k - alpha_k, B_k - alpha_k]
    (K_kk <= TAU counts as TAU), if k violates by more than tau. Returns 1 when a step was made."""
    if k < 0:
        return 0
    gk = st.g[k]
    if not ((gk > tau and st.alpha[k] < st.B[k]) or (gk < -tau and st.alpha[k] > st.A[k])):
        return 0
    n = st.ist[I_NS]
    bk = _row_at(kc, kd, kp, st.pos2ex[k], n, st)  # an offset, as in _direction_search
    _newton_update(st, kc, n, k, bk)
    held(kc, kd)
    held(kp, st)
    return 1


@numba.njit(**_NJIT)
def _newton_update(st, kc, n, k, bk):
    """The clipped Newton step on k and the gradient over [0, n) (row k is kc.buf[bk + p])."""
    mu = _clipped_newton(st, k, np.float64(kc.buf[bk + k]))
    _subtract_row(st, kc, bk, mu, n)
    st.ist[I_STEPS] += 1


@numba.njit(**_NJIT)
def _subtract_row(st, kc, bk, mu, n):
    """The one gradient update of the online core after a variable's step mu:
    g_p -= mu K_kp over [0, n) (row k is kc.buf[bk + p], widened exactly to float64, no FMA).
    The namedtuples are passed whole (cache.held says why)."""
    g = st.g
    K = kc.buf
    for p in range(n):
        g[p] -= mu * np.float64(K[at(bk, p)])


@numba.njit(**_NJIT)
def _clipped_newton(st, k, curv):
    """alpha_k += mu, mu = g_k / K_kk clipped to [A_k - alpha_k, B_k - alpha_k] (K_kk <= TAU
    counts as TAU; curv: K_kk, float64); returns mu. The gradient is not updated."""
    mu = st.g[k] / (curv if curv > TAU else TAU)
    up = st.B[k] - st.alpha[k]
    down = st.A[k] - st.alpha[k]
    if mu > up:
        mu = up
    elif mu < down:
        mu = down
    st.alpha[k] = _land(st.alpha[k], st.B[k] if mu > 0 else st.A[k], mu, up if mu > 0 else down)
    return mu


# ---------------------------------------------------------------------------------------------
# PROCESS, REPROCESS and the decision


@numba.njit(**_NJIT)
def _evict(st, kc):
    """REPROCESS step 4: remove from S the examples with alpha = 0 that cannot move inward
    (with a bias: y = -1 and g >= g_max, y = +1 and g <= g_min; without: g against 0). They
    end at positions [n_S, old n_S), in the order evicted."""
    n = st.ist[I_NS]
    g_up, g_down = _thresholds(st, n)
    p = 0
    while p < n:
        if st.alpha[p] == 0.0 and ((st.g[p] >= g_up and st.B[p] <= 0.0) or
                                   (st.g[p] <= g_down and st.A[p] >= 0.0)):
            n -= 1
            _swap_pos(st, kc, p, n)
        else:
            p += 1
    st.ist[I_NS] = n


@numba.njit(**_NJIT)
def _update_delta(st):
    st.fst[F_DELTA] = _violation(st, st.ist[I_NS])[2]


@numba.njit(**_NJIT)
def reprocess(st, kc, kd, kp, tau):
    """LASVM REPROCESS (Bordes et al. 2005, §3.2): one direction search on the most violating
    pair (variable, without a bias) of S, eviction, then delta. Returns 1 when a step was made."""
    st.ist[I_REPROCESS] += 1
    i, j, _ = _violation(st, st.ist[I_NS])
    status = _direction_search(st, kc, kd, kp, i, j, tau)
    # deviation from paper (by default): after a bail-out (step 2), steps 4 and 5 still run,
    # as in LaSVM 1.1's lasvm_reprocess; I_BAIL_PRINTED makes the bail-out do nothing
    if status == 1 or st.ist[I_BAIL_PRINTED] == 0:
        _evict(st, kc)
        _update_delta(st)
    held(kc, kd)  # one last use of the namedtuples, together (cache.held says why)
    held(kp, st)
    return status


@numba.njit(**_NJIT)
def _expansion_at(st, kc, kd, kp, ex):
    """sum_{s in S} alpha_s K(x_ex, x_s) (the machine before its bias; reads no label)."""
    n = st.ist[I_NS]
    s = 0.0
    if n > 0:
        b = _row_at(kc, kd, kp, ex, n, st)  # an offset, as in _direction_search
        for p in range(n):
            s += st.alpha[p] * np.float64(kc.buf[at(b, p)])
    held(kc, kd)
    held(kp, st)
    return s


@numba.njit(**_NJIT)
def process(st, kc, kd, kp, ex, tau):
    """LASVM PROCESS(k) (Bordes et al. 2005, §3.2) on example ``ex``, whose box is already at
    its position. Returns 1 when a step was made."""
    st.ist[I_PROCESSED] += 1
    if st.labeled[ex] == 0:
        st.labeled[ex] = 1
        st.ist[I_LABELS] += 1
    n = st.ist[I_NS]
    pk = st.ex2pos[ex]
    if pk < n:  # step 1: already in S
        return 0
    gk = st.y[ex] - _expansion_at(st, kc, kd, kp, ex)
    up_only = st.A[pk] >= 0.0  # the box of k lets alpha_k only grow (y = +1 in LaSVM's boxes)
    down_only = st.B[pk] <= 0.0
    # deviation from paper: reject before inserting when k cannot move (cannot form a violating
    # pair with a partner, with a bias) and drop the row just computed (LaSVM 1.1,
    # lasvm_process); the paper inserts k and lets the next REPROCESS evict it by the same test.
    if st.ist[I_NOBIAS] != 0:
        reject = (up_only and gk <= 0.0) or (down_only and gk >= 0.0)
        i, j = n, -1  # step 5 without a bias: a Newton step on k
    else:
        i, j = _minmax(st, n)
        reject = (i >= 0 and j >= 0 and st.g[j] < st.g[i] and
                  ((up_only and gk < st.g[j]) or (down_only and gk > st.g[i])))
        # step 5 with i, j computed over S before k was added (k cannot be the partner)
        if up_only:
            i = n
        else:
            j = n
    status = 0
    if reject:
        cache_discard(kc, ex)
    else:
        _insert(st, kc, pk, n, gk)  # step 2
        status = _direction_search(st, kc, kd, kp, i, j, tau)  # steps 3-5
    held(kc, kd)  # one last use of the namedtuples on both paths (cache.held says why)
    held(kp, st)
    return status


@numba.njit(**_NJIT)
def _insert(st, kc, pk, n, gk):
    """PROCESS step 2: the example at position pk enters S at position n, alpha 0, gradient gk."""
    _swap_pos(st, kc, pk, n)
    st.alpha[n] = 0.0
    st.g[n] = gk
    st.ist[I_NS] = n + 1
    st.ist[I_INSERTED] += 1


@numba.njit(**_NJIT)
def _bias_now(st, n):
    """b over [0, n): (g_i + g_j)/2 of the maximal violating pair with a bias (0 when a side
    is empty, as LaSVM 1.1's decision), 0 without one."""
    if st.ist[I_NOBIAS] != 0:
        return 0.0
    i, j = _minmax(st, n)
    if i >= 0 and j >= 0:
        return 0.5 * (st.g[i] + st.g[j])
    return 0.0


@numba.njit(**_NJIT)
def _decision(st, kc, kd, kp, ex):
    """Current y_hat(x_ex) = sum_S alpha_s K(x_ex, x_s) + b (reads no label)."""
    f = _expansion_at(st, kc, kd, kp, ex)
    b = _bias_now(st, st.ist[I_NS])
    held(kc, kd)  # one last use of the namedtuples, together (cache.held says why)
    held(kp, st)
    return f + b


@numba.njit(**_NJIT)
def criterion(st, kc, kd, kp, ex, selection):
    """Smaller is better (paper §4.4): y f(x) for GRADIENT (reads the label), |f(x)| for
    ACTIVE and AUTOACTIVE."""
    if selection == SEL_GRADIENT:
        return st.y[ex] * _decision(st, kc, kd, kp, ex)
    return abs(_decision(st, kc, kd, kp, ex))


@numba.njit(inline="always", **_NJIT)
def new_scan(st):
    """A scan over candidates: [best criterion, its index (-1), candidates near the boundary,
    AUTOACTIVE's margin 1 + delta/2 (paper §4.4)]. delta is the last REPROCESS's (its step 5),
    0 before the first one; it is not recomputed here."""
    scan = np.empty(4)
    scan[0] = np.inf
    scan[1] = -1.0
    scan[2] = 0.0
    scan[3] = 1.0 + 0.5 * st.fst[F_DELTA]
    return scan


@numba.njit(inline="always", **_NJIT)
def scan_candidate(scan, c, crit, selection):
    """Candidate c with criterion crit: keep the best (smallest, the first among equals).
    Returns True when sampling should stop: AUTOACTIVE has seen AUTO_NEAR candidates within
    its margin (paper §4.4)."""
    if crit < scan[0] or scan[1] < 0:
        scan[0] = crit
        scan[1] = c
    if selection == SEL_AUTOACTIVE and crit < scan[3]:
        scan[2] += 1
        return scan[2] >= AUTO_NEAR
    return False


@numba.njit(**_NJIT)
def online_step(st, kc, kd, kp, ex, tau, delta_max):
    """One online iteration on example ``ex`` (paper §3.2 step 2): PROCESS(ex), REPROCESS once,
    then REPROCESS while delta > delta_max."""
    process(st, kc, kd, kp, ex, tau)
    status = reprocess(st, kc, kd, kp, tau)
    # deviation from paper: the delta_max loop also stops once REPROCESS finds no
    # tau-violating pair (LaSVM 1.1 loops forever for delta_max < tau)
    while status == 1 and st.fst[F_DELTA] > delta_max:
        status = reprocess(st, kc, kd, kp, tau)


# ---------------------------------------------------------------------------------------------
# In-memory example selection (the streaming driver selects from its window instead)


@numba.njit(**_NJIT)
def _take(st, r):
    """Remove pool[r] from the pool of unseen examples (swap with the last, as LaSVM 1.1)."""
    m = st.ist[I_POOL] - 1
    ex = st.pool[r]
    st.pool[r] = st.pool[m]
    st.pool[m] = ex
    st.ist[I_POOL] = m
    return ex


@numba.njit(**_NJIT)
def _select(st, kc, kd, kp, selection, candidates, label_budget):
    """Pick the next example among the unseen ones (Bordes et al. 2005, §4.4): RANDOM, GRADIENT
    (smallest y f(x) of ``candidates`` random ones), ACTIVE (smallest |f(x)|), AUTOACTIVE (sample
    until AUTO_NEAR candidates lie within 1 + delta/2 of the boundary, at most AUTO_MAX).
    Candidates are drawn with replacement (LaSVM 1.1, la_svm.cpp:select)."""
    if selection == SEL_RANDOM:
        r = _draw(st, st.ist[I_POOL])
    else:
        r = _scan_pool(st, kc, kd, kp, selection, candidates, label_budget)
    ex = -1
    if r >= 0:
        ex = _take(st, r)
    held(kc, kd)  # one last use of the namedtuples on every path (cache.held says why)
    held(kp, st)
    return ex


@numba.njit(**_NJIT)
def _scan_pool(st, kc, kd, kp, selection, candidates, label_budget):
    """_select's GRADIENT, ACTIVE and AUTOACTIVE: the pool index of the best candidate, -1
    when none (a function of its own: the scan array's reference count stays here)."""
    m = st.ist[I_POOL]
    n_cand = AUTO_MAX if selection == SEL_AUTOACTIVE else candidates
    n_cand = min(n_cand, m)
    scan = new_scan(st)
    for c in range(n_cand):
        r = _draw(st, m)
        ex = st.pool[r]
        if selection == SEL_GRADIENT and st.labeled[ex] == 0:
            if st.ist[I_LABELS] >= label_budget:
                continue
            st.labeled[ex] = 1
            st.ist[I_LABELS] += 1
        if scan_candidate(scan, r, criterion(st, kc, kd, kp, ex, selection), selection):
            break
    if scan[1] < 0:
        return -1
    return np.int64(scan[1])


@numba.njit(**_NJIT)
def online_run(st, kc, kd, kp, n_iter, selection, candidates, tau, delta_max, label_budget):
    """At most n_iter online iterations of the current epoch: select k, then online_step(k).
    Returns the number of iterations run (fewer when the epoch's pool or the budget runs out)."""
    done = 0
    while done < n_iter and st.ist[I_POOL] > 0:
        if st.ist[I_LABELS] >= label_budget:
            break
        ex = _select(st, kc, kd, kp, selection, candidates, label_budget)
        if ex < 0:
            break
        if st.labeled[ex] == 0 and st.ist[I_LABELS] >= label_budget:
            break
        online_step(st, kc, kd, kp, ex, tau, delta_max)
        done += 1
    return done


@numba.njit(**_NJIT)
def seed_run(st, kc, kd, kp, n_seed, tau):
    """Initialisation: PROCESS the first n_seed examples of each class in file order
    (LaSVM 1.1, la_svm.cpp; the paper: "seed S with a few examples of each class"), taking
    them out of the pool of the first epoch. Call after new_epoch."""
    c_pos = 0
    c_neg = 0
    for ex in range(st.y.shape[0]):
        if c_pos >= n_seed and c_neg >= n_seed:
            break
        if (st.y[ex] > 0 and c_pos < n_seed) or (st.y[ex] < 0 and c_neg < n_seed):
            if st.y[ex] > 0:
                c_pos += 1
            else:
                c_neg += 1
            process(st, kc, kd, kp, ex, tau)
            # seeds leave the pool of the first epoch (la_svm.cpp make_old: swap with the last)
            m = st.ist[I_POOL]
            for r in range(m):
                if st.pool[r] == ex:
                    st.pool[r] = st.pool[m - 1]
                    st.pool[m - 1] = ex
                    st.ist[I_POOL] = m - 1
                    break


# ---------------------------------------------------------------------------------------------
# Finishing without a bias (with a bias, solvers/finishing.py runs the shared SMO loop on S)


@numba.njit(**_NJIT)
def reprocess_run(st, kc, kd, kp, tau, n_iter):
    """REPROCESS until it finds no tau-violating pair (variable, without a bias), at most n_iter
    steps; returns 1 when finished. The paper's step 3 repeats REPROCESS until delta <= tau:
    that is the same stop, since delta is the violation of the pair just found, except after
    a bail-out that leaves delta unchanged (``I_BAIL_PRINTED``), where only this stop ends."""
    for _ in range(n_iter):
        if reprocess(st, kc, kd, kp, tau) == 0:
            return 1
        st.ist[I_FINISH_STEPS] += 1
    return 0


@numba.njit(**_NJIT)
def _shrink(st, kc, a):
    """The shrinking finishing's shrink over the active prefix [0, a): a variable at the bound
    it would move past (alpha = B and g >= g_max, alpha = A and g <= g_min; 0 for both without
    a bias) leaves it, swapped with the last active one (LaSVM 1.1's shrink). Returns the new a."""
    g_up, g_down = _thresholds(st, a)
    p = 0
    while p < a:
        if (st.g[p] >= g_up and st.alpha[p] >= st.B[p]) or \
                (st.g[p] <= g_down and st.alpha[p] <= st.A[p]):
            a -= 1
            _swap_pos(st, kc, p, a)
        else:
            p += 1
    return a


@numba.njit(**_NJIT)
def _unshrink(st, kc, kd, kp, a, n):
    """The gradient of the inactive positions [a, n), stale since they left, from scratch:
    g_p = y_p - sum_q alpha_q K_qp over the rows of the support vectors q of S, taken in
    position order (LaSVM 1.1's unshrink; a row cached over the active prefix only computes
    its tail)."""
    for p in range(a, n):
        st.g[p] = st.y[st.pos2ex[p]]
    for q in range(n):
        aq = st.alpha[q]
        if aq != 0.0:
            b = _row_at(kc, kd, kp, st.pos2ex[q], n, st)  # an offset, as in _direction_search
            for p in range(a, n):
                st.g[p] -= aq * np.float64(kc.buf[at(b, p)])
    held(kc, kd)
    held(kp, st)


@numba.njit(**_NJIT)
def reprocess_shrinking_run(st, kc, kd, kp, tau, n_iter):
    """The finishing step with the paper's shrinking (Bordes et al. 2005, §3.2's implementation
    notes; LaSVM 1.1's lasvm_finish): REPROCESS's direction searches on the most violating pair
    of an active part of S, without eviction; every min(SHRINK_EVERY, |S|) steps the variables
    stuck at a bound leave the active part (_shrink). When the active part has no tau-violating
    pair, the others come back with their gradients recomputed (_unshrink), and the loop goes
    on while S has one (the paper's "as long as the merged set contains tau-violating pairs";
    LaSVM 1.1 stops at the first unshrink); then S is evicted and delta computed, as after
    REPROCESS. At most n_iter searches or unshrinks; returns 1 when finished. Between calls
    the active prefix is ist[I_ACTIVE] (the gradients after it are stale) and S is whole."""
    n = st.ist[I_NS]
    a = st.ist[I_ACTIVE]
    if a <= 0 or a > n:  # the finishing starts: all of S is active, a shrink comes first
        a = n
        st.ist[I_NEXT_SHRINK] = st.ist[I_FINISH_STEPS]
    for _ in range(n_iter):
        if st.ist[I_FINISH_STEPS] >= st.ist[I_NEXT_SHRINK]:
            a = _shrink(st, kc, a)
            st.ist[I_NEXT_SHRINK] = st.ist[I_FINISH_STEPS] + min(SHRINK_EVERY, n)
        i, j, _ = _violation(st, a)
        st.ist[I_NS] = a  # the direction search's rows and gradient update: the active part
        status = _direction_search(st, kc, kd, kp, i, j, tau)
        st.ist[I_NS] = n
        if status == 1:
            st.ist[I_FINISH_STEPS] += 1
        elif a < n:
            _unshrink(st, kc, kd, kp, a, n)
            a = n
            st.ist[I_NEXT_SHRINK] = st.ist[I_FINISH_STEPS] + min(SHRINK_EVERY, n)
        else:
            _evict(st, kc)
            _update_delta(st)
            st.ist[I_ACTIVE] = 0
            held(kc, kd)
            held(kp, st)
            return 1
    st.ist[I_ACTIVE] = a
    held(kc, kd)
    held(kp, st)
    return 0


@numba.njit(inline="always", **_NJIT)
def new_epoch(st):
    l = st.pool.shape[0]
    for t in range(l):
        st.pool[t] = t
    st.ist[I_POOL] = l


MODE_SEED, MODE_ONLINE, MODE_FINISH, MODE_NEW_EPOCH, MODE_DELTA, MODE_EVICT, MODE_FINISH_SHRINK = \
    range(7)


@numba.njit(**_NJIT)
def lasvm_run(st, kc, kd, kp, mode, n_iter, selection, candidates, tau, delta_max, label_budget):
    """The one compiled entry point of the in-memory driver (every helper above is inlined
    into it, so the solver compiles once): MODE_SEED (n_iter = seeds per class), MODE_ONLINE
    (at most n_iter online iterations; returns how many ran), MODE_FINISH (finishing without
    a bias: at most n_iter REPROCESS steps; returns 1 when finished), MODE_NEW_EPOCH,
    MODE_DELTA (recompute delta), MODE_EVICT (eviction, then delta: after SMO finishing),
    MODE_FINISH_SHRINK (the finishing with shrinking: at most n_iter steps; 1 when finished)."""
    if mode == MODE_SEED:
        seed_run(st, kc, kd, kp, n_iter, tau)
        return 0
    if mode == MODE_ONLINE:
        return online_run(st, kc, kd, kp, n_iter, selection, candidates, tau, delta_max,
                          label_budget)
    if mode == MODE_FINISH:
        return reprocess_run(st, kc, kd, kp, tau, n_iter)
    if mode == MODE_FINISH_SHRINK:
        return reprocess_shrinking_run(st, kc, kd, kp, tau, n_iter)
    if mode == MODE_NEW_EPOCH:
        new_epoch(st)
        return 0
    if mode == MODE_EVICT:
        _evict(st, kc)
    _update_delta(st)
    return 0


# ---------------------------------------------------------------------------------------------
# Python side: state, measures of the expansion, cache width


def make_state(kc, y, A, B, seed=0, rng=RNG_SPLITMIX, bias=True, bail_printed=False):
    """Fresh state over the cache's positions (its perm/pos arrays are shared, not copied).
    ``y`` the labels (the linear term) and ``A``/``B`` the boxes, by example id;
    ``bail_printed``: a REPROCESS that bails out does nothing (the paper's step 2)."""
    l = y.shape[0]
    st = LasvmState(kc.perm, kc.pos,
                    np.zeros(l), np.zeros(l), np.array(A, np.float64), np.array(B, np.float64),
                    np.array(y, np.float64), np.arange(l, dtype=np.int64),
                    np.zeros(l, np.uint8), np.zeros(N_IST, np.int64), np.zeros(N_FST),
                    make_rng(rng, seed), np.zeros(l, np.int64), np.zeros(l, np.int64))
    st.ist[I_NOBIAS] = 0 if bias else 1
    st.ist[I_BAIL_PRINTED] = int(bool(bail_printed))
    return st


def svc_boxes(y, Cp, Cn):
    """LaSVM's boxes for labels y = +-1: [0, Cp] for +1, [-Cn, 0] for -1."""
    y = np.asarray(y)
    return np.where(y > 0, 0.0, -float(Cn)), np.where(y > 0, float(Cp), 0.0)


def expansion(st):
    """(positions, alpha, g, A, B, y) of the expansion S, as numpy views / copies."""
    n = int(st.ist[I_NS])
    return (st.pos2ex[:n], st.alpha[:n], st.g[:n], st.A[:n], st.B[:n], st.y[st.pos2ex[:n]])


def dual_objective(st):
    """W(alpha) = sum alpha_i y_i - 1/2 alpha'K alpha = 1/2 sum_S alpha_i (g_i + y_i)
    (LaSVM 1.1, lasvm_get_w2); needs g valid on all of S (outside finishing, or after it)."""
    _, a, g, _, _, y = expansion(st)
    return 0.5 * float(np.dot(a, g + y))


def bias(st):
    """b over S: the middle of g_max over alpha < B and g_min over alpha > A, or the one that
    exists (paper eq. 10); 0 without a bias. rho = -b."""
    if st.ist[I_NOBIAS]:
        return 0.0
    _, a, g, A, B, _ = expansion(st)
    up = a < B
    down = a > A
    if up.any() and down.any():
        return 0.5 * (g[up].max() + g[down].min())
    if up.any():
        return float(g[up].max())
    if down.any():
        return float(g[down].min())
    return 0.0


def sv_counts(st):
    """(nSV, nBSV) of the expansion: alpha != 0, and alpha at A or B among them."""
    _, a, _, A, B, _ = expansion(st)
    sv = a != 0.0
    return int(sv.sum()), int((sv & ((a == A) | (a == B))).sum())


def fit_width(kc, st, finishing=False):
    """Cut the cache into rows just long enough for the next chunk (rows cover [0, n_S + 1) at
    most, LaSVM's "rows over the current expansion"), so the same memory holds more rows.
    Online: at least n_S + CHUNK + 2 (a chunk inserts at most CHUNK examples), grown with 25%
    slack (each re-cut copies the buffer); finishing: n_S exactly (S only shrinks)."""
    l = kc.perm.shape[0]
    n_s = int(st.ist[I_NS])
    w = int(kc.meta[WIDTH])
    if finishing:
        target = min(l, max(n_s, 1))
        if target < w:
            cache_set_width(kc, np.int64(target))
        return
    need = min(l, n_s + CHUNK + 2)
    if w < need:
        cache_set_width(kc, np.int64(min(l, need + n_s // 4)))


# ---------------------------------------------------------------------------------------------
# Public names of the primitives, for the online solvers built on this core in modules of their
# own, which compile into their own entry points (a run of --solver lasvm never loads them):
# qp/lasvm_g_core.py (LASVM-G, -NC, -I and FULL SVM, seed 001) and solvers/tracking.py
# (the tracking algorithms, seed 002). The same jitted functions, not copies, so that the
# clipped Newton step, the gradient update, the position swaps and the random stream exist once.

max_violator = _max_violator      # the maximal KKT violator without a bias: (k, violation)
expansion_at = _expansion_at      # sum over S of alpha_s K(x, x_s): the machine before its bias
newton_step = _newton_step        # alpha_k += clip(g_k / K_kk) and the gradient update over [0, n_S)
clipped_newton = _clipped_newton  # the same step without the gradient update (a caller fuses it)
subtract_row = _subtract_row      # that gradient update, g -= mu K_k., for a step made elsewhere
land = _land                      # alpha + step, exactly on the bound when the step is the room
swap_positions = _swap_pos        # swap two positions (state arrays and the cache's columns)
take_from_pool = _take            # remove pool[r] from the epoch's unseen examples
rand_below = _rand                # random integer in [0, n) from the state's generator
draw = _draw                      # the same on st.rng, taking the state whole (no reference counts)
