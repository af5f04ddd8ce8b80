"""LASVM: online SVM with PROCESS / REPROCESS direction searches (Bordes, Ertekin, Weston &
Bottou 2005, "Fast kernel classifiers with online and active learning", JMLR 6, §3-§4).

The QP (signed formulation, paper eq. 9; STYLE.md §6.2), for labels y_i = ±1:

    max_alpha  W(alpha) = sum_i alpha_i y_i - 1/2 sum_ij alpha_i alpha_j K_ij
    subject to sum_i alpha_i = 0,   A_i <= alpha_i <= B_i,
               A_i = min(0, y_i C_i),  B_i = max(0, y_i C_i),  C_i = Cp (y_i = +1) or Cn (y_i = -1)

with gradient g_i = y_i - sum_j alpha_j K_ij (LIBSVM's y_i G_i = -g_i). LIBSVM's dual objective
is 0.5 a'Qa - e'a = -W; ``sv_coef`` = alpha, ``rho`` = -b = -(g_max + g_min)/2.

Structure (STYLE.md §6.3). The expansion S is the position prefix [0, n_S); ``pos2ex``/``ex2pos``
map positions to example ids and back, and every reordering is reported to the kernel-row cache,
whose rows are float32 K values keyed by example id and valid over a prefix of the positions
(LaSVM 1.1's ``kcache``: rows over the current expansion). During finishing, [0, n_active) is the
active set and [n_active, n_S) holds shrunk support vectors (paper §3.2, "Implementation
Details").

State = a few arrays (:class:`LasvmState`), so a run can be saved and resumed between chunks:
positions (the cache's perm/pos arrays), alpha/g/A/B by position, the per-epoch pool of unseen
examples, the label mask, an int64 and a float64 scalar block and the RNG words. Everything
compiles into one entry point, :func:`lasvm_run`, called by :func:`solve_lasvm` in chunks of
~1000 iterations (progress callback, Ctrl-C).

Example order: each epoch draws the unseen examples uniformly (``pool`` with swap-removal,
la_svm.cpp:select); candidates for GRADIENT/ACTIVE/AUTOACTIVE are drawn with replacement, as in
LaSVM 1.1. ``rng="glibc"`` replaces splitmix64 by C's rand() so that ``seed=1`` replays LaSVM
1.1's order exactly (test_lasvm.py checks 1.1's heart_scale numbers that way).

Labels: ``labels_used`` counts distinct examples whose label was read: the processed example for
RANDOM/ACTIVE/AUTOACTIVE, every candidate for GRADIENT (its criterion y f(x) needs the label),
and the 2 x 5 seeds.

Deviations from the paper (each also marked in the code):
- PROCESS rejects an example whose gradient cannot form a violating pair before inserting it
  and drops its freshly computed row (as LaSVM 1.1 does); the paper inserts it and lets the next
  REPROCESS evict it with the same test.
- The delta_max loop also stops when REPROCESS finds no tau-violating pair (LaSVM 1.1 loops
  forever when delta_max < tau).
- After unshrinking, the gradient of a shrunk example is restarted from y_i (LaSVM 1.1 uses
  sign(alpha_i), which is -1 for alpha_i = 0 whatever the label).
- Finishing shrinks the active set every min(1000, n_S) steps as LaSVM 1.1 does (the paper's
  "Implementation Details"); its pair choice is REPROCESS's (maximal violating pair).

Kernel rows: the shared cache (lasvm_cli/cache.py) with LaSVM 1.1's policy, its two LASVM
entry points: :func:`_row` (cache_get_symmetric: a missing entry is copied from the cached row
of the other example when that pays, see cache.fill_pays) and :func:`_swap_keep_prefix`
(cache_swap_keep_prefix: a swap truncates or fills a row instead of dropping it).
"""

from collections import namedtuple

import numba
import numpy as np

from ..cache import (FILL, HITS, KERNEL_EVALS, MISSES, WIDTH, cache_cached_len,
                     cache_discard, cache_set_width, fill_pays)
from ..cache import cache_get_symmetric as _row  # LaSVM 1.1's rows: symmetric fill
from ..cache import cache_swap_keep_prefix as _swap_keep_prefix
from ..cache import make_cache as _make_cache
from ..qp.steps import step_pair  # the pure two-variable step shared with SMO

_NJIT = dict(cache=True, nogil=True)

N_SEED = 5        # seeds per class, LaSVM 1.1 (la_svm.cpp: first 5 of each class in file order)
AUTO_NEAR = 5     # AUTOACTIVE: stop sampling after this many candidates within 1 + delta/2
AUTO_MAX = 100    # AUTOACTIVE: at most this many candidates

SEL_RANDOM, SEL_GRADIENT, SEL_ACTIVE, SEL_AUTOACTIVE = 0, 1, 2, 3
SELECTIONS = {"random": SEL_RANDOM, "gradient": SEL_GRADIENT, "active": SEL_ACTIVE,
              "autoactive": SEL_AUTOACTIVE}

# int64 scalar block ``st.ist``
I_NS = 0          # size of the expansion S (positions [0, n_S))
I_NACT = 1        # active size (== n_S outside finishing)
I_POOL = 2        # examples not yet processed in this epoch: pool[:I_POOL]
I_STEPS = 3       # direction searches performed (PROCESS + REPROCESS + finishing)
I_PROCESSED = 4   # PROCESS calls
I_INSERTED = 5    # examples inserted into S by PROCESS
I_LABELS = 6      # labels used (distinct examples whose label was read)
I_FITER = 7       # finishing: steps since finishing started
I_FSHRINK = 8     # finishing: step count at which to shrink next
I_EPOCH = 9       # epochs completed
I_REPROCESS = 10  # REPROCESS calls
I_FINISH_STEPS = 11
N_IST = 12

# float64 scalar block ``st.fst``
F_DELTA = 0       # delta = g_max - g_min after the last REPROCESS
N_FST = 2

LasvmState = namedtuple("LasvmState", "pos2ex ex2pos alpha g A B y pool labeled ist fst rng t_pos t_ex")
LasvmState.__doc__ = """LASVM solver state (all arrays; positions are cache positions).

pos2ex, ex2pos  int64 [l]   position -> example id and back
alpha, g        float64 [l] by position; meaningful on [0, n_S)
A, B            float64 [l] box of the example at each position
y               float64 [l] labels by example id (read only through ``labeled``)
pool            int64 [l]   examples not yet processed this epoch: pool[:ist[I_POOL]]
labeled         uint8 [l]   1 once the label of the example has been read (active learning)
ist, fst        int64 [N_IST], float64 [N_FST] scalars (I_*, F_* constants)
rng             uint64 [N_RNG] random generator (make_rng)
t_pos, t_ex     int64 [l]   scratch (not part of the saved state)
"""

# ---------------------------------------------------------------------------------------------
# Kernel rows: the shared cache (lasvm_cli/cache.py), whose perm/pos arrays are the solver's
# position order (st.pos2ex is cache.perm, st.ex2pos is cache.pos: the same arrays).


RNG_SPLITMIX, RNG_GLIBC = 0, 1
RNGS = {"splitmix64": RNG_SPLITMIX, "glibc": RNG_GLIBC}
N_RNG = 35  # rng[0] kind, rng[1] splitmix word, rng[2] front, rng[3] rear, rng[4:35] glibc table


def make_rng(kind, seed):
    """uint64 [N_RNG]: splitmix64 seeded with ``seed``, or glibc's rand() after srand(seed)
    (random_r TYPE_3; LaSVM 1.1 never calls srand, so seed 1 gives its example order)."""
    rng = np.zeros(N_RNG, np.uint64)
    rng[0] = kind
    rng[1] = (int(seed) * 0x2545F4914F6CDD1D + 0x1234567) % (1 << 64)
    r = [int(seed) & 0xFFFFFFFF] + [0] * 30
    if r[0] == 0:
        r[0] = 1
    for i in range(1, 31):
        hi, lo = divmod(r[i - 1], 127773)
        w = 16807 * lo - 2836 * hi
        r[i] = w + 2147483647 if w < 0 else w
    rng[2], rng[3] = 3, 0
    rng[4:] = r
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


@numba.njit(inline="always", **_NJIT)
def _g_extremes(st, n):
    """(g_max, g_min) of _minmax's pair over [0, n), +inf / -inf when a side is empty."""
    i, j = _minmax(st, n)
    return (st.g[i] if i >= 0 else np.inf), (st.g[j] if j >= 0 else -np.inf)


@numba.njit(inline="always", **_NJIT)
def _swap_pos(st, kc, p1, p2):
    if p1 == p2:
        return
    for arr in (st.alpha, st.g, st.A, st.B):
        t = arr[p1]
        arr[p1] = arr[p2]
        arr[p2] = t
    _swap_keep_prefix(kc, p1, p2)


@numba.njit(**_NJIT)
def _direction_search(st, kc, kd, kp, i, j, tau):
    """Pair step on positions (i, j) over the active prefix, if (i, j) is tau-violating:
    Bordes et al. 2005, PROCESS step 5 / REPROCESS step 3. Returns 1 when a step was made."""
    if i < 0 or j < 0 or i == j:
        return 0
    if st.g[i] - st.g[j] <= tau:
        return 0
    n = st.ist[I_NACT]
    ri = _row(kc, kd, kp, st.pos2ex[i], n, st.t_pos, st.t_ex)
    rj = _row(kc, kd, kp, st.pos2ex[j], n, st.t_pos, st.t_ex)
    curv = np.float64(ri[i]) + np.float64(rj[j]) - 2.0 * np.float64(ri[j])
    room_i = st.B[i] - st.alpha[i]
    room_j = st.alpha[j] - st.A[j]
    lam = step_pair(st.g[i], st.g[j], st.alpha[i], st.alpha[j], st.B[i], st.A[j], curv)
    # land exactly on the bounds (eviction and SV counts test alpha == A or B exactly)
    st.alpha[i] = st.B[i] if lam == room_i else st.alpha[i] + lam
    st.alpha[j] = st.A[j] if lam == room_j else st.alpha[j] - lam
    g = st.g
    for p in range(n):
        g[p] -= lam * (np.float64(ri[p]) - np.float64(rj[p]))
    st.ist[I_STEPS] += 1
    return 1


@numba.njit(**_NJIT)
def _evict(st, kc):
    """REPROCESS step 4: remove from S the examples with alpha = 0 whose gradient says they
    cannot re-enter (y = -1 and g >= g_max, y = +1 and g <= g_min)."""
    n = st.ist[I_NS]
    gmax, gmin = _g_extremes(st, n)
    p = 0
    while p < n:
        if st.alpha[p] == 0.0 and ((st.g[p] >= gmax and st.B[p] <= 0.0) or
                                   (st.g[p] <= gmin and st.A[p] >= 0.0)):
            n -= 1
            _swap_pos(st, kc, p, n)
        else:
            p += 1
    st.ist[I_NS] = n
    st.ist[I_NACT] = n


@numba.njit(inline="always", **_NJIT)
def _update_delta(st):
    i, j = _minmax(st, st.ist[I_NACT])
    if i >= 0 and j >= 0:
        st.fst[F_DELTA] = max(0.0, st.g[i] - st.g[j])
    else:
        st.fst[F_DELTA] = 0.0


@numba.njit(**_NJIT)
def _reprocess(st, kc, kd, kp, tau):
    """LASVM REPROCESS (Bordes et al. 2005, §3.2): one direction search on the most violating
    pair of S, eviction, then b and delta. Returns 1 when a step was made."""
    st.ist[I_REPROCESS] += 1
    i, j = _minmax(st, st.ist[I_NACT])
    status = _direction_search(st, kc, kd, kp, i, j, tau)
    _evict(st, kc)
    _update_delta(st)
    return status


@numba.njit(**_NJIT)
def _expansion_at(st, kc, kd, kp, ex):
    """sum_{s in S} alpha_s K(x_ex, x_s) (the machine before its bias; reads no label)."""
    n = st.ist[I_NS]
    s = 0.0
    if n > 0:
        row = _row(kc, kd, kp, ex, n, st.t_pos, st.t_ex)
        for p in range(n):
            s += st.alpha[p] * np.float64(row[p])
    return s


@numba.njit(**_NJIT)
def _gradient_of(st, kc, kd, kp, ex):
    """g_ex = y - sum_{s in S} alpha_s K(x_ex, x_s) (uses the label)."""
    return st.y[ex] - _expansion_at(st, kc, kd, kp, ex)


@numba.njit(**_NJIT)
def _process(st, kc, kd, kp, ex, tau):
    """LASVM PROCESS(k) (Bordes et al. 2005, §3.2). Returns 1 when a step was made."""
    st.ist[I_PROCESSED] += 1
    if st.labeled[ex] == 0:
        st.labeled[ex] = 1
        st.ist[I_LABELS] += 1
    n = st.ist[I_NS]
    if st.ex2pos[ex] < n:  # step 1: already in S
        return 0
    yk = st.y[ex]
    gk = _gradient_of(st, kc, kd, kp, ex)
    i, j = _minmax(st, n)
    # deviation from paper: reject before inserting when (k, partner) cannot be a violating pair
    # and drop the row just computed (LaSVM 1.1, lasvm_process); the paper inserts k and lets
    # the next REPROCESS evict it by the same test.
    if i >= 0 and j >= 0 and st.g[j] < st.g[i]:
        if (yk > 0 and gk < st.g[j]) or (yk < 0 and gk > st.g[i]):
            cache_discard(kc, ex)
            return 0
    # step 2: insert at position n
    _swap_pos(st, kc, st.ex2pos[ex], n)
    st.alpha[n] = 0.0
    st.g[n] = gk
    st.ist[I_NS] = n + 1
    st.ist[I_NACT] = n + 1
    st.ist[I_INSERTED] += 1
    # steps 3-5 (i, j were computed over S before k was added; k cannot be the partner)
    if yk > 0:
        return _direction_search(st, kc, kd, kp, n, j, tau)
    return _direction_search(st, kc, kd, kp, i, n, tau)


@numba.njit(**_NJIT)
def _decision(st, kc, kd, kp, ex):
    """Current y_hat(x_ex) = sum_S alpha_s K(x_ex, x_s) + b, b = (g_max + g_min)/2 (no label)."""
    s = _expansion_at(st, kc, kd, kp, ex)
    i, j = _minmax(st, st.ist[I_NS])
    if i >= 0 and j >= 0:
        s += 0.5 * (st.g[i] + st.g[j])
    return s


@numba.njit(inline="always", **_NJIT)
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
    m = st.ist[I_POOL]
    if selection == SEL_RANDOM:
        return _take(st, _rand(st.rng, m))
    n_cand = candidates
    if selection == SEL_AUTOACTIVE:
        n_cand = AUTO_MAX
    if n_cand > m:
        n_cand = m
    _update_delta(st)
    near = 1.0 + 0.5 * st.fst[F_DELTA]
    best = np.inf
    best_r = -1
    n_near = 0
    for c in range(n_cand):
        r = _rand(st.rng, m)
        ex = st.pool[r]
        if selection == SEL_GRADIENT:
            if st.labeled[ex] == 0:
                if st.ist[I_LABELS] >= label_budget:
                    continue
                st.labeled[ex] = 1
                st.ist[I_LABELS] += 1
            crit = st.y[ex] * _decision(st, kc, kd, kp, ex)
        else:
            crit = abs(_decision(st, kc, kd, kp, ex))
        if crit < best or best_r < 0:
            best = crit
            best_r = r
        if selection == SEL_AUTOACTIVE and crit < near:
            n_near += 1
            if n_near >= AUTO_NEAR:
                break
    if best_r < 0:
        return -1
    return _take(st, best_r)


@numba.njit(**_NJIT)
def online_run(st, kc, kd, kp, n_iter, selection, candidates, tau, delta_max, label_budget):
    """At most n_iter online iterations of the current epoch (Bordes et al. 2005, §3.2 step 2):
    select k, PROCESS(k), REPROCESS once, then REPROCESS while delta > delta_max.
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
        _process(st, kc, kd, kp, ex, tau)
        status = _reprocess(st, kc, kd, kp, tau)
        # deviation from paper: the delta_max loop also stops once REPROCESS finds no
        # tau-violating pair (LaSVM 1.1 loops forever for delta_max < tau)
        while status == 1 and st.fst[F_DELTA] > delta_max:
            status = _reprocess(st, kc, kd, kp, tau)
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
            _process(st, kc, kd, kp, ex, tau)
            # seeds leave the pool of the first epoch (la_svm.cpp make_old: swap with the last)
            m = st.ist[I_POOL]
            for r in range(m):
                if st.pool[r] == ex:
                    st.pool[r] = st.pool[m - 1]
                    st.pool[m - 1] = ex
                    st.ist[I_POOL] = m - 1
                    break


@numba.njit(**_NJIT)
def _shrink(st, kc):
    """Finishing: move bounded examples that cannot move inward to the inactive set."""
    n = st.ist[I_NACT]
    gmax, gmin = _g_extremes(st, n)
    p = 0
    while p < n:
        if (st.g[p] >= gmax and st.alpha[p] >= st.B[p]) or \
                (st.g[p] <= gmin and st.alpha[p] <= st.A[p]):
            n -= 1
            _swap_pos(st, kc, p, n)
        else:
            p += 1
    st.ist[I_NACT] = n


@numba.njit(**_NJIT)
def _unshrink(st, kc, kd, kp):
    """Recompute the gradient of the inactive examples [n_act, n_S) and reactivate them."""
    n = st.ist[I_NS]
    a = st.ist[I_NACT]
    if a >= n:
        return
    for p in range(a, n):
        # deviation from LaSVM 1.1: restart from y (1.1 uses sign(alpha), -1 for alpha = 0)
        st.g[p] = st.y[st.pos2ex[p]]
    for q in range(n):
        aq = st.alpha[q]
        if aq == 0.0:
            continue
        ex = st.pos2ex[q]
        cached = cache_cached_len(kc, ex) > 0
        row = _row(kc, kd, kp, ex, n, st.t_pos, st.t_ex)
        for p in range(a, n):
            st.g[p] -= aq * np.float64(row[p])
        if not cached:
            cache_discard(kc, ex)
    st.ist[I_NACT] = n


@numba.njit(**_NJIT)
def finish_run(st, kc, kd, kp, tau, n_iter):
    """Finishing step (Bordes et al. 2005, §3.2 step 3, with the shrinking of "Implementation
    Details"): REPROCESS over the active set, shrinking every min(1000, n_S) steps; when the
    active set has no tau-violating pair, unshrink, evict, and stop if delta <= tau.
    Runs at most n_iter steps; returns 1 when finished."""
    done = 0
    while done < n_iter:
        if st.ist[I_FITER] >= st.ist[I_FSHRINK]:
            _shrink(st, kc)
            st.ist[I_FSHRINK] = st.ist[I_FITER] + min(1000, st.ist[I_NS])
        i, j = _minmax(st, st.ist[I_NACT])
        if _direction_search(st, kc, kd, kp, i, j, tau) == 0:
            _unshrink(st, kc, kd, kp)
            _evict(st, kc)
            _update_delta(st)
            st.ist[I_FSHRINK] = st.ist[I_FITER]
            if st.fst[F_DELTA] <= tau:
                return 1
            continue
        st.ist[I_FITER] += 1
        st.ist[I_FINISH_STEPS] += 1
        done += 1
    return 0


@numba.njit(inline="always", **_NJIT)
def new_epoch(st):
    l = st.pool.shape[0]
    for t in range(l):
        st.pool[t] = t
    st.ist[I_POOL] = l


MODE_SEED, MODE_ONLINE, MODE_FINISH, MODE_NEW_EPOCH, MODE_DELTA = 0, 1, 2, 3, 4


@numba.njit(**_NJIT)
def lasvm_run(st, kc, kd, kp, mode, n_iter, selection, candidates, tau, delta_max, label_budget):
    """The one compiled entry point (every helper above is inlined into it, so the solver
    compiles once): MODE_SEED (n_iter = seeds per class), MODE_ONLINE (at most n_iter online
    iterations; returns how many ran), MODE_FINISH (at most n_iter finishing steps; returns 1
    when finished), MODE_NEW_EPOCH, MODE_DELTA (recompute delta)."""
    if mode == MODE_SEED:
        seed_run(st, kc, kd, kp, n_iter, tau)
        return 0
    if mode == MODE_ONLINE:
        return online_run(st, kc, kd, kp, n_iter, selection, candidates, tau, delta_max,
                          label_budget)
    if mode == MODE_FINISH:
        return finish_run(st, kc, kd, kp, tau, n_iter)
    if mode == MODE_NEW_EPOCH:
        new_epoch(st)
        return 0
    _update_delta(st)
    return 0


# ---------------------------------------------------------------------------------------------
# Python driver


def make_state(kc, y, Cp, Cn, seed, rng=RNG_SPLITMIX):
    """Fresh state; positions are the cache's perm/pos arrays (shared, not copied)."""
    l = y.shape[0]
    yy = np.where(np.asarray(y) > 0, 1.0, -1.0).astype(np.float64)
    A = np.where(yy > 0, 0.0, -float(Cn))
    B = np.where(yy > 0, float(Cp), 0.0)
    st = LasvmState(kc.perm, kc.pos,
                    np.zeros(l), np.zeros(l), A, B, yy, np.arange(l, dtype=np.int64),
                    np.zeros(l, np.uint8), np.zeros(N_IST, np.int64), np.zeros(N_FST),
                    make_rng(rng, seed),
                    np.zeros(l, np.int64), np.zeros(l, np.int64))
    return st


def _binary_result_class():
    try:
        from .csvc import BinaryResult  # imported late: csvc may import this module
    except ImportError:  # csvc.py not landed yet: same fields
        import dataclasses

        BinaryResult = dataclasses.make_dataclass("BinaryResult", [
            "coef", "rho", "obj", "n_iter", "n_sv", "n_bsv", "upper_bound_p", "upper_bound_n",
            "hit_max_iter", "counters"])
    return BinaryResult


def dual_objective(st):
    """W(alpha) = sum alpha_i y_i - 1/2 alpha'K alpha = 1/2 sum_S alpha_i (g_i + y_i)
    (LaSVM 1.1, lasvm_get_w2); needs g valid on all of S (outside finishing, or after it)."""
    n = int(st.ist[I_NS])
    a = st.alpha[:n]
    return 0.5 * float(np.dot(a, st.g[:n] + st.y[st.pos2ex[:n]]))


def bias(st):
    """b = (g_max + g_min)/2 over S (paper eq. 10); rho = -b."""
    n = int(st.ist[I_NS])
    return bias_of(st.alpha[:n], st.g[:n], st.A[:n], st.B[:n])


def bias_of(a, g, A, B):
    """b from the expansion's alpha, gradient and box (numpy arrays, any order): the middle of
    g_max over alpha < B and g_min over alpha > A, or the one that exists."""
    up = a < B
    down = a > A
    if up.any() and down.any():
        return 0.5 * (g[up].max() + g[down].min())
    if up.any():
        return float(g[up].max())
    if down.any():
        return float(g[down].min())
    return 0.0


def _result_from_state(st, kc, Cp, Cn):
    BinaryResult = _binary_result_class()

    l = st.y.shape[0]
    n = int(st.ist[I_NS])
    coef = np.zeros(l)
    coef[st.pos2ex[:n]] = st.alpha[:n]
    b = bias(st)
    a = st.alpha[:n]
    sv = a != 0.0
    bsv = sv & ((a == st.A[:n]) | (a == st.B[:n]))
    counters = dict(
        iterations=int(st.ist[I_STEPS]), processed=int(st.ist[I_PROCESSED]),
        inserted=int(st.ist[I_INSERTED]), reprocess=int(st.ist[I_REPROCESS]),
        finish_steps=int(st.ist[I_FINISH_STEPS]), epochs=int(st.ist[I_EPOCH]),
        kernel_evals=int(kc.stats[KERNEL_EVALS]), cache_hits=int(kc.stats[HITS]),
        cache_misses=int(kc.stats[MISSES]), n_sv=int(sv.sum()),
        labels_used=int(st.ist[I_LABELS]), delta=float(st.fst[F_DELTA]))
    return BinaryResult(coef=coef, rho=-b, obj=-float(dual_objective(st)),
                        n_iter=int(st.ist[I_STEPS]), n_sv=int(sv.sum()), n_bsv=int(bsv.sum()),
                        upper_bound_p=float(Cp), upper_bound_n=float(Cn), hit_max_iter=False,
                        counters=counters)


CHUNK = 1000


def _fit_width(kc, st, l, finishing=False):
    """Cut the cache into rows just long enough for the next chunk (rows cover [0, n_S + 1) at
    most, LaSVM's "rows over the current expansion"), so the same memory holds more rows.
    Online: at least n_S + CHUNK + 2 (a chunk inserts at most CHUNK examples), grown with 25%
    slack (each re-cut copies the buffer); finishing: n_S exactly (S only shrinks)."""
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


PH_ONLINE, PH_FINISH, PH_DONE = 0, 1, 2
PHASES = ("online", "finish", "done")
# state arrays saved by LasvmRun.state_arrays (t_pos/t_ex are scratch)
SAVED_FIELDS = ("pos2ex", "ex2pos", "alpha", "g", "A", "B", "y", "pool", "labeled", "ist", "fst",
                "rng")


class LasvmRun:
    """One LASVM run as a resumable phase machine over :class:`LasvmState` (the Python driver
    of :func:`lasvm_run`). ``begin()`` seeds; each ``step(n)`` runs at most ``n`` online
    iterations (PROCESS calls) or ``n`` finishing steps, ends epochs and switches phases:
    online -> finish (or done with ``finish=False``) -> done. Between steps the whole run is
    ``state_arrays()`` + ``phase``, so it can be saved and resumed (lasvm_cli/online.py), and
    ``fork()`` gives an independent copy (finishing a snapshot without disturbing the run).
    Chunk sizes do not change the result: every decision depends on the state arrays only."""

    def __init__(self, kd, kp, y, Cp, Cn, *, eps=1e-3, cache_mb=100.0, epochs=1, finish=True,
                 selection="random", candidates=50, delta_max=None, seed=0, label_budget=None,
                 rng="splitmix64", symmetric_fill="auto"):
        if selection not in SELECTIONS:
            raise ValueError(
                f"unknown selection {selection!r} (expected one of {sorted(SELECTIONS)})")
        if rng not in RNGS:
            raise ValueError(f"unknown rng {rng!r} (expected one of {sorted(RNGS)})")
        if label_budget is not None and selection == "random":
            selection = "active"
        self.kd, self.kp = kd, kp
        self.Cp, self.Cn = float(Cp), float(Cn)
        self.config = dict(eps=float(eps), epochs=int(epochs), finish=bool(finish),
                           selection=selection, candidates=int(candidates),
                           delta_max=None if delta_max is None else float(delta_max),
                           seed=int(seed), label_budget=None if label_budget is None
                           else int(label_budget), rng=rng, Cp=float(Cp), Cn=float(Cn))
        self.cache_mb = cache_mb
        y = np.asarray(y)
        self.l = l = y.shape[0]
        self.epochs = int(epochs)
        self.finish = bool(finish)
        self._tau = float(eps)
        self._dmax = np.inf if delta_max is None else float(delta_max)
        self._budget = np.int64(l + 1 if label_budget is None else int(label_budget))
        self._sel = np.int64(SELECTIONS[selection])
        self._cand = np.int64(candidates)
        self._fill = fill_pays(kd, kp) if symmetric_fill == "auto" else bool(symmetric_fill)
        self.kc = self._new_cache(cache_mb)
        self.st = make_state(self.kc, y, Cp, Cn, seed, RNGS[rng])
        self.phase = PH_ONLINE
        self._width_ready = False

    def _new_cache(self, cache_mb):
        kc = _make_cache(self.l, cache_mb)
        kc.meta[FILL] = int(self._fill)
        return kc

    def _run(self, mode, n_iter):
        return lasvm_run(self.st, self.kc, self.kd, self.kp, np.int64(mode), np.int64(n_iter),
                         self._sel, self._cand, self._tau, self._dmax, self._budget)

    # -- phases ------------------------------------------------------------------------------

    def begin(self):
        """First epoch's pool and the 2 x N_SEED seeds."""
        self._run(MODE_NEW_EPOCH, 0)
        cache_set_width(self.kc, np.int64(min(self.l, 2 * N_SEED + CHUNK + 2)))
        self._run(MODE_SEED, N_SEED)

    @property
    def done(self):
        return self.phase == PH_DONE

    @property
    def online(self):
        return self.phase == PH_ONLINE

    def step(self, n=CHUNK):
        """Advance by at most ``n`` online iterations or ``n`` finishing steps (or one phase
        change: end of epoch, start of finishing). Returns the online iterations run."""
        st = self.st
        if self.phase == PH_ONLINE:
            if st.ist[I_POOL] > 0 and st.ist[I_LABELS] < self._budget:
                _fit_width(self.kc, st, self.l)
                return int(self._run(MODE_ONLINE, n))
            st.ist[I_EPOCH] += 1
            if st.ist[I_LABELS] < self._budget and st.ist[I_EPOCH] < self.epochs:
                self._run(MODE_NEW_EPOCH, 0)
            else:
                self.end_online()
            return 0
        if self.phase == PH_FINISH:
            if not self._width_ready:
                _fit_width(self.kc, st, self.l, finishing=True)
                self._width_ready = True
            if self._run(MODE_FINISH, n):
                self.phase = PH_DONE
        return 0

    def end_online(self):
        """Leave the online phase now (all epochs done, label budget, or an early stop)."""
        if self.phase != PH_ONLINE:
            return
        if self.finish:
            self.st.ist[I_FSHRINK] = self.st.ist[I_FITER]
            self.phase = PH_FINISH
            self._width_ready = False
        else:
            self._run(MODE_DELTA, 0)
            self.phase = PH_DONE

    def run_to_end(self, progress=None, n=CHUNK):
        while not self.done:
            online = self.online and self.st.ist[I_POOL] > 0 and \
                self.st.ist[I_LABELS] < self._budget
            self.step(n)
            if progress is not None and (online or (self.phase == PH_FINISH)):
                progress(int(self.st.ist[I_PROCESSED]), int(self.st.ist[I_NS]))
        return self

    # -- measures ----------------------------------------------------------------------------

    @property
    def processed(self):
        """PROCESS calls so far (online iterations, the 2 x N_SEED seeds included)."""
        return int(self.st.ist[I_PROCESSED])

    @property
    def n_expansion(self):
        """|S|, the size of the expansion (LaSVM 1.1's lasvm_get_l)."""
        return int(self.st.ist[I_NS])

    @property
    def kernel_evals(self):
        return int(self.kc.stats[KERNEL_EVALS])

    def delta(self):
        """delta = g_max - g_min over the active set (recomputed)."""
        self._run(MODE_DELTA, 0)
        return float(self.st.fst[F_DELTA])

    def coef_rho(self):
        """(coef by example, rho) of the current expansion; valid outside finishing."""
        st = self.st
        n = int(st.ist[I_NS])
        coef = np.zeros(self.l)
        coef[st.pos2ex[:n]] = st.alpha[:n]
        return coef, -bias(st)

    def result(self):
        return _result_from_state(self.st, self.kc, self.Cp, self.Cn)

    # -- save / restore ------------------------------------------------------------------------

    def state_arrays(self):
        """Copies of the state arrays and cache counters (the kernel rows are not saved)."""
        d = {name: np.array(getattr(self.st, name)) for name in SAVED_FIELDS}
        d["cache_stats"] = np.array(self.kc.stats)
        return d

    def load_state_arrays(self, d, phase):
        """Overwrite the state (in place: the compiled code sees the same arrays) with arrays
        from :meth:`state_arrays`; the cache starts empty, its rows are recomputed."""
        for name in SAVED_FIELDS:
            dst = getattr(self.st, name)
            src = np.asarray(d[name])
            if src.shape != dst.shape or src.dtype != dst.dtype:
                raise ValueError(f"state array {name}: {src.dtype}{src.shape}, expected "
                                 f"{dst.dtype}{dst.shape}")
            dst[:] = src
        if "cache_stats" in d:
            self.kc.stats[:] = np.asarray(d["cache_stats"])
        self.phase = int(phase)
        self._width_ready = False
        if self.phase == PH_ONLINE:
            n_s = int(self.st.ist[I_NS])
            cache_set_width(self.kc, np.int64(min(self.l, n_s + CHUNK + 2 + n_s // 4)))

    def fork(self, cache_mb=None):
        """An independent copy of this run (own state arrays and an empty cache)."""
        other = object.__new__(LasvmRun)
        other.__dict__.update(self.__dict__)
        other.kc = self._new_cache(self.cache_mb if cache_mb is None else cache_mb)
        other.st = self.st._replace(pos2ex=other.kc.perm, ex2pos=other.kc.pos,
                                    **{f: np.array(getattr(self.st, f)) for f in SAVED_FIELDS
                                       if f not in ("pos2ex", "ex2pos")},
                                    t_pos=np.zeros(self.l, np.int64),
                                    t_ex=np.zeros(self.l, np.int64))
        other.load_state_arrays(self.state_arrays(), self.phase)
        return other

    def finished_copy(self):
        """The model this run would give if its online phase ended now: a fork taken through
        the finishing step (LaSVM 1.1's intermediate models: save alpha/g, finish, save the
        model, restore). Without finishing, a fork with delta computed."""
        other = self.fork()
        other.end_online()
        return other.run_to_end()


def solve_lasvm(kd, kp, y, Cp, Cn, *, eps=1e-3, cache_mb=100.0, epochs=1, finish=True,
                selection="random", candidates=50, delta_max=None, seed=0,
                label_budget=None, progress=None, rng="splitmix64", control=None,
                symmetric_fill="auto"):
    """Train a binary SVM with LASVM (Bordes et al. 2005): seeding, ``epochs`` passes of
    PROCESS + REPROCESS over examples chosen by ``selection``, then (``finish``) REPROCESS
    until delta <= tau = ``eps``.

    kd, kp      KernelData / KernelParams of the l training rows
    y           labels, +1 (box [0, Cp]) or -1 (box [-Cn, 0])
    selection   "random" | "gradient" | "active" | "autoactive" (paper §4.4)
    candidates  sample size M for gradient / active selection
    delta_max   after each PROCESS, REPROCESS while delta > delta_max (paper §3.5); None = once
    label_budget  read at most this many labels (active learning, paper §4.2); with the default
                "random" selection the active criterion is used to choose the examples
    progress    callable(n_processed, n_sv) called between chunks of ~1000 iterations
    rng         "splitmix64" (default) or "glibc": C rand() after srand(seed); with seed=1 this
                is LaSVM 1.1's example order (it never seeds rand)
    symmetric_fill  "auto" (cache.fill_pays), True or False: LaSVM 1.1's copying of missing
                row entries from cached rows (True with rng="glibc", seed=1 replays LaSVM 1.1's
                kernel-evaluation count too)
    control     None, or an object whose ``drive(run, progress) -> BinaryResult`` runs the
                :class:`LasvmRun` (lasvm_cli/online.py: save/resume, early stopping,
                snapshots, trace)

    Returns a BinaryResult (coef = alpha by example, rho = -b, obj = LIBSVM's 0.5a'Qa - e'a).
    """
    run = LasvmRun(kd, kp, y, Cp, Cn, eps=eps, cache_mb=cache_mb, epochs=epochs, finish=finish,
                   selection=selection, candidates=candidates, delta_max=delta_max, seed=seed,
                   label_budget=label_budget, rng=rng, symmetric_fill=symmetric_fill)
    if control is not None:
        return control.drive(run, progress)
    run.begin()
    run.run_to_end(progress)
    return run.result()
