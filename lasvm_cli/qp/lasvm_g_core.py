"""LASVM-G, LASVM-NC, LASVM-I and FULL SVM (Ertekin, Bottou & Giles 2011): their compiled
iteration (the gap-driven REPROCESS loop, CLEAN, the ramp's boxes) on the online core's
bias-free step, so that all four are one loop with variant flags. The QP, the iteration in
the paper's names and the deviations (marked "[fix]" in the code; docs/corrections.md, seed
001): docs/online.md#lasvm-g--nc--i-and-full-svms-iteration-qplasvm_g_corepy.
"""

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

from ..numerics.cache import N_SLOTS, cache_discard, cache_symmetric_at, held
from ..numerics.index import idx
from ..numerics.ordered import gap_pass, gap_pass_pair
from .online_core import (F_DELTA, I_INSERTED, I_LABELS, I_NS, I_POOL, I_PROCESSED, I_REPROCESS,
                          I_STEPS, clipped_newton, expansion_at, land, max_violator, new_epoch,
                          newton_step, rand_below, subtract_row, swap_positions, take_from_pool)
from . import Scalars, slot
from .s2do_steps import solve_box
from .select import first_argmax_above

_NJIT = dict(cache=True, nogil=True)

V_FULL, V_G, V_NC, V_I = 0, 1, 2, 3
VARIANTS = {"full-svm": V_FULL, "lasvm-g": V_G, "lasvm-nc": V_NC, "lasvm-i": V_I}

# where an example arrived: z = y f(x) against the ramp region [s, 1]
R_MIDDLE, R_LEFT, R_RIGHT = 0, 1, 2

# how LASVM-NC and LASVM-I begin (corrections 001-10; svm-train --ramp-start)
START_PRINTED, START_CONVEX = 0, 1
START_CODES = {"printed": START_PRINTED, "convex": START_CONVEX}  # by --ramp-start name

NO_PARTNER_YET = -2  # gap_loop's pair step before its first partner search
GAP_CAP = 100000  # REPROCESS steps of one gap loop at most (counted in G_CAPPED)

# int64 counter block ``gst`` (the paper's Table 1, and the loop's own)
G_SEEN = 0         # examples drawn (online iterations: PROCESSed or skipped)
G_ADMIT_L = 1      # PROCESSed with z < s (left flat region of R_s)
G_ADMIT_R = 2      # PROCESSed with z > 1 (right flat region)
G_ADMIT_M = 3      # PROCESSed with s <= z <= 1
G_SKIP_L = 4       # LASVM-I: skipped, z < s
G_SKIP_R = 5       # LASVM-I: skipped, z > 1
G_CLEAN_L = 6      # removed by CLEAN, admitted from the left region
G_CLEAN_R = 7      # ... from the right region
G_CLEAN_M = 8      # ... from the ramp region
G_FLAGGED = 9      # LASVM-NC: arrivals given beta = C (outliers)
G_SINCE_CLEAN = 10  # PROCESS calls since the last CLEAN
G_BAILED = 11      # gap loops ended because REPROCESS found no tau-violating variable
G_CAPPED = 12      # gap loops ended by GAP_CAP
G_IN_S = 13        # examples drawn while already in S (later epochs)
G_NONCONVEX = 14   # -NC, -I: the draw (G_SEEN) that ended the convex stage; 0 while it runs
N_GST = 15

# float64 block ``gfs``
F_GAP = 0          # the duality gap after the last gap loop (or M_GAP)
F_TARGET = 1       # its threshold T = max(C, Ghat)
N_GFS = 2

M_NEW_EPOCH, M_ONLINE, M_GAP, M_FINISH, M_PURGE = range(5)


class LasvmGScalars(Scalars):
    """The LASVM-G family's counters and gap by name, on whatever holds its ``gst`` and
    ``gfs`` blocks (the run): ``LasvmGScalars(run).seen`` is ``run.gst[G_SEEN]``."""
    __slots__ = ()
    seen = slot("gst", G_SEEN)
    admitted_left = slot("gst", G_ADMIT_L)
    admitted_right = slot("gst", G_ADMIT_R)
    admitted_ramp = slot("gst", G_ADMIT_M)
    skipped_left = slot("gst", G_SKIP_L)
    skipped_right = slot("gst", G_SKIP_R)
    cleaned_left = slot("gst", G_CLEAN_L)
    cleaned_right = slot("gst", G_CLEAN_R)
    cleaned_ramp = slot("gst", G_CLEAN_M)
    outliers_flagged = slot("gst", G_FLAGGED)
    gap_loops_bailed = slot("gst", G_BAILED)
    gap_loops_capped = slot("gst", G_CAPPED)
    drawn_in_expansion = slot("gst", G_IN_S)
    nonconvex_from = slot("gst", G_NONCONVEX)
    gap = slot("gfs", F_GAP, float)
    gap_target = slot("gfs", F_TARGET, float)


@numba.njit(**_NJIT)
def gap_of(st):
    """The duality gap J_beta(w) - G_beta(alpha) of the CCCP sub-problem over S: the sum of
    ordered.gap_term over S. Never negative for a feasible alpha (weak duality); for beta = 0 the
    hinge loss's gap."""
    return scan(st)[0]


@numba.njit(**_NJIT)
def gap_target(st):
    """(Ghat, #SV): eq. (8) over the SVs of S (alpha != 0), h_l = C_l y_l g_l; the radicand
    is clamped at 0 and Ghat = 0 without SVs (corrections 001-4)."""
    n = st.ist[I_NS]
    s1 = 0.0
    s2 = 0.0
    l = 0
    for p in range(n):
        if st.alpha[p] != 0.0:
            h = (st.B[p] - st.A[p]) * st.y[st.pos2ex[p]] * st.g[p]
            s1 += h
            s2 += h * h
            l += 1
    if l == 0:
        return 0.0, 0
    v = s2 - s1 * s1 / l
    return (np.sqrt(v) if v > 0.0 else 0.0), l


@numba.njit(**_NJIT)
def reprocess_g(st, kc, kd, kp, tau, pair):
    """REPROCESS without a bias (corrections 001-2): one clipped Newton step on the maximal
    KKT violator of S (with ``pair``: :func:`pair_scan` from it); no eviction (CLEAN does
    that). Returns 1 when a step was made, 0 when it bails out (no violation above tau)."""
    st.ist[I_REPROCESS] += 1
    k, v = max_violator(st, st.ist[I_NS])
    if pair == 0:
        return newton_step(st, kc, kd, kp, k, tau)
    if k < 0 or v <= tau:
        return 0
    pair_scan(st, kc, kd, kp, k, partner(st, kc, k))
    return 1


@numba.njit(**_NJIT)
def scan(st):
    """(gap, k, v) in one pass over S: gap_of(st) and the core's max_violator (k = -1, v = 0
    when no variable violates; the same order of sums and the same tie-breaking):
    ordered.gap_pass without a step (its unused row: st.g)."""
    return gap_pass(st.g, st.alpha, st.A, st.B, st.g, 0, 0.0, st.ist[I_NS])


@numba.njit(**_NJIT)
def step_scan(st, kc, kd, kp, k):
    """The core's clipped Newton step on variable k (online_core.clipped_newton: alpha_k +=
    mu = clip(g_k / K_kk, [A_k, B_k] - alpha_k), landing exactly on a bound), its gradient
    update fused with the next :func:`scan`: g_p -= mu K[bk + p] over S, then the gap and the
    maximal violator (first index on ties, as the core's max_violator), all in one pass in
    vector lanes (ordered.gap_pass: the lanes and their order fixed by the source, no
    fast-math; each lane keeps its largest violation as integer bits, which vectorises where a
    float max does not, and where it first occurs). The single loop that kept a running argmax
    and a running sum stayed scalar and cost about 3.8 ns a position (bench/bench_gap_scan.py)."""
    n = st.ist[I_NS]
    # row k as an offset into the cache's buffer, not a view (online_core._direction_search)
    bk = cache_symmetric_at(kc, kd, kp, st.pos2ex[k], n, st)
    mu = clipped_newton(st, k, np.float64(kc.buf[bk + k]))
    st.ist[I_STEPS] += 1
    res = gap_pass(st.g, st.alpha, st.A, st.B, kc.buf, bk, mu, n)
    held(kc, kd)  # one last use of the namedtuples (cache.held)
    held(kp, st)
    return res


@numba.njit(**_NJIT)
def partner(st, kc, k):
    """The partner of the maximal violator k: the largest violator moving the other way, the
    first position of the largest -g over alpha > A when k goes up (g_k > 0), of the largest
    g over alpha < B when it goes down; -1 when there is none, or when the cache holds fewer
    than two rows (the first row must survive the second's fetch: the cache evicts its least
    recently used row and never moves one in use). Without a bias this is SMO's maximal
    violating pair (LIBSVM's WSS 1 with y folded into g), whose step moves along e_k - e_j,
    across K's nearly constant part. (The partner of the largest unconstrained two-variable
    gain, Trinh's Algorithm 4, took 2.5x the steps on adult.) Each pair step's own pass finds
    the next partner (ordered.gap_pass_pair); this pass is for the first step of a gap loop:
    the violations into kc.scratch (free between row fetches) in a branch-free loop that
    vectorises, then qp.select.first_argmax_above."""
    n = st.ist[I_NS]
    if k < 0 or kc.meta[N_SLOTS] < 2:
        return -1
    g = st.g
    out = kc.scratch
    s = 1.0 if g[k] > 0.0 else -1.0
    for p in range(n):
        u = idx(p)
        v = -s * g[u]
        movable = (st.alpha[u] > st.A[u]) if s > 0.0 else (st.alpha[u] < st.B[u])
        out[u] = v if movable & (v > 0.0) else 0.0
    out[k] = 0.0
    return first_argmax_above(out, n, 0.0)[0]


@numba.njit(**_NJIT)
def _pair_step(st, k1, k2, q11, q12, q22):
    """The exact step on the box of (alpha_k1, alpha_k2) (S2DO's Algorithm 5, corrected:
    qp.s2do_steps.solve_box), each alpha landing exactly on a bound it reaches; returns the
    steps (mu1, mu2). The gradient is not updated."""
    a1 = st.alpha[k1]
    a2 = st.alpha[k2]
    lo1, hi1 = st.A[k1] - a1, st.B[k1] - a1
    lo2, hi2 = st.A[k2] - a2, st.B[k2] - a2
    m1, m2 = solve_box(st.g[k1], st.g[k2], q11, q12, q22, lo1, hi1, lo2, hi2)
    st.alpha[k1] = land(a1, st.B[k1] if m1 > 0 else st.A[k1], m1, hi1 if m1 > 0 else lo1)
    st.alpha[k2] = land(a2, st.B[k2] if m2 > 0 else st.A[k2], m2, hi2 if m2 > 0 else lo2)
    return m1, m2


@numba.njit(**_NJIT)
def pair_scan(st, kc, kd, kp, k, j):
    """REPROCESS on two variables (``pair``, docs/online.md; a deviation from the paper): k,
    the maximal violator the paper's REPROCESS steps on, and its partner j (:func:`partner`),
    the exact step on their box (:func:`_pair_step`), then the gradient update
    g -= mu_k K_k. - mu_j K_j. with the next scan and the next pair fused into its second half
    (ordered.gap_pass_pair). The one-variable :func:`step_scan` when j < 0. Returns
    (gap, k, v, j) for the next step."""
    n = st.ist[I_NS]
    if j < 0:
        gap, k2, v2 = step_scan(st, kc, kd, kp, k)
        res = (gap, k2, v2, partner(st, kc, k2))
    else:
        b1 = cache_symmetric_at(kc, kd, kp, st.pos2ex[k], n, st)
        b2 = cache_symmetric_at(kc, kd, kp, st.pos2ex[j], n, st)
        m1, m2 = _pair_step(st, k, j, np.float64(kc.buf[b1 + k]), np.float64(kc.buf[b1 + j]),
                            np.float64(kc.buf[b2 + j]))
        st.ist[I_STEPS] += 1
        subtract_row(st, kc, b1, m1, n)
        res = gap_pass_pair(st.g, st.alpha, st.A, st.B, kc.buf, b2, m2, n)
    held(kc, kd)  # one last use of the namedtuples (cache.held)
    held(kp, st)
    return res


@numba.njit(**_NJIT)
def pair_violates(st, tau):
    """REPROCESS's step 2 (paper §4.2, corrections 001-2): whether (i, j) is a tau-violating
    pair, g_max - g_min > tau with g_max = max(0, g over alpha < B) and g_min = min(0, g over
    alpha > A). Both sides may violate by less than tau and the pair by more; the step is
    then still the maximal violator's (the larger side: the paper's t)."""
    g_max = 0.0
    g_min = 0.0
    for p in range(st.ist[I_NS]):
        if st.alpha[p] < st.B[p] and st.g[p] > g_max:
            g_max = st.g[p]
        if st.alpha[p] > st.A[p] and st.g[p] < g_min:
            g_min = st.g[p]
    return g_max - g_min > tau


@numba.njit(**_NJIT)
def gap_loop(st, kc, kd, kp, target, tau, gst, gfs, gap, k, v, pair):
    """while Gap > T: REPROCESS (paper §4.3), until REPROCESS bails out (no tau-violating
    pair: :func:`pair_violates`) or GAP_CAP steps (deviation from paper: the guards;
    corrections 001-5). (gap, k, v): the :func:`scan` of S at the start; each REPROCESS is one
    :func:`step_scan` (with ``pair``: one :func:`pair_scan`)."""
    steps = 0
    j = NO_PARTNER_YET  # found when the loop first steps (most loops of LASVM-NC make none)
    while gap > target:
        if steps >= GAP_CAP:
            gst[G_CAPPED] += 1
            break
        st.ist[I_REPROCESS] += 1
        if v <= tau and not pair_violates(st, tau):  # v > tau: the pair violates by >= v
            gst[G_BAILED] += 1
            break
        if pair == 0:
            gap, k, v = step_scan(st, kc, kd, kp, k)
        else:
            if j == NO_PARTNER_YET:
                j = partner(st, kc, k)
            gap, k, v, j = pair_scan(st, kc, kd, kp, k, j)
        steps += 1
    gfs[F_GAP] = gap
    gfs[F_TARGET] = target


@numba.njit(**_NJIT)
def clean(st, kc, m, gst, region):
    """CLEAN(m) (paper §4.2, corrections 001-6): when S holds more than m non-SVs (alpha = 0),
    remove the #non-SV - m of them with the largest |g| (the farthest from the margin, on
    either side); they leave S for positions [n_S, old n_S). Table 1's counters by the region
    each removed example arrived from."""
    n = st.ist[I_NS]
    cnt = 0
    for p in range(n):
        if st.alpha[p] == 0.0:
            cnt += 1
    if cnt <= m:
        return
    where = np.empty(cnt, np.int64)
    key = np.empty(cnt)
    q = 0
    for p in range(n):
        if st.alpha[p] == 0.0:
            where[q] = p
            key[q] = -abs(st.g[p])
            q += 1
    order = np.argsort(key, kind="mergesort")  # largest |g| first, ties by position
    mark = np.zeros(n, np.uint8)
    for r in range(cnt - m):
        mark[where[order[r]]] = 1
    p = 0
    while p < n:
        if mark[p] == 1:
            n -= 1
            swap_positions(st, kc, p, n)
            mark[p] = mark[n]
            mark[n] = 0
            reg = region[st.pos2ex[n]]
            if reg == R_LEFT:
                gst[G_CLEAN_L] += 1
            elif reg == R_RIGHT:
                gst[G_CLEAN_R] += 1
            else:
                gst[G_CLEAN_M] += 1
        else:
            p += 1
    st.ist[I_NS] = n


@numba.njit(**_NJIT)
def process_g(st, kc, kd, kp, ex, f):
    """PROCESS(i) without a bias (corrections 001-1): insert ``ex`` (its box already at its
    position) at the end of S with alpha = 0, g = y - f, then one clipped Newton step, taken
    whatever g (no bail-out, no tau: the paper's PROCESS always inserts and steps). Returns
    the :func:`scan` of S after it."""
    st.ist[I_PROCESSED] += 1
    n = st.ist[I_NS]
    swap_positions(st, kc, st.ex2pos[ex], n)
    st.alpha[n] = 0.0
    gk = st.y[ex] - f
    st.g[n] = gk
    st.ist[I_NS] = n + 1
    st.ist[I_INSERTED] += 1
    if (gk > 0.0 and st.B[n] > 0.0) or (gk < 0.0 and st.A[n] < 0.0):
        return step_scan(st, kc, kd, kp, n)
    return scan(st)


@numba.njit(**_NJIT)
def convex_stage_over(st, sv_thr):
    """Whether LASVM-NC's and LASVM-I's convex initialisation stage is over (corrections
    001-10): S holds more than sv_thr SVs of each class."""
    n_pos = 0
    n_neg = 0
    for p in range(st.ist[I_NS]):
        if st.alpha[p] != 0.0:
            if st.y[st.pos2ex[p]] > 0.0:
                n_pos += 1
            else:
                n_neg += 1
    return n_pos > sv_thr and n_neg > sv_thr


@numba.njit(**_NJIT)
def iteration(st, kc, kd, kp, ex, variant, s, sv_thr, start, Cp, Cn, C, tau, pair, region, gst,
              gfs):
    """One online iteration of LASVM-G / -NC / -I / FULL SVM on example ``ex`` (module
    docstring)."""
    gst[G_SEEN] += 1
    if st.labeled[ex] == 0:
        st.labeled[ex] = 1
        st.ist[I_LABELS] += 1
    n = st.ist[I_NS]
    pk = st.ex2pos[ex]
    target = 0.0
    if pk < n:  # deviation from paper (corrections 001-8): drawn again while in S: no PROCESS
        gst[G_IN_S] += 1
        ghat, _ = gap_target(st)
        gap, k, v = scan(st)
        gap_loop(st, kc, kd, kp, max(C, ghat), tau, gst, gfs, gap, k, v, pair)
        return
    y = st.y[ex]
    f = expansion_at(st, kc, kd, kp, ex)  # f_i = sum_S alpha_s K(x_i, x_s)
    z = y * f
    reg = R_LEFT if z < s else (R_RIGHT if z > 1.0 else R_MIDDLE)
    ramp = variant == V_NC or variant == V_I
    if ramp and start == START_CONVEX and gst[G_NONCONVEX] == 0:  # corrections 001-10
        if convex_stage_over(st, sv_thr):
            gst[G_NONCONVEX] = gst[G_SEEN]
        else:
            ramp = False  # the convex stage: this iteration is LASVM-G's
    if ramp and variant == V_I and reg != R_MIDDLE:  # LASVM-I (§6): only s <= z <= 1
        gst[G_SKIP_L if reg == R_LEFT else G_SKIP_R] += 1
        cache_discard(kc, ex)
        return
    ghat, n_sv = gap_target(st)  # eq. (8), on the model before x_i
    target = max(C, ghat)
    c = Cp if y > 0 else Cn
    beta = 0.0
    # LASVM-NC (§5.2): an outlier, frozen; as printed, once #SV > S_thr at this example
    if ramp and variant == V_NC and z < s and (start == START_CONVEX or n_sv > sv_thr):
        beta = c
        gst[G_FLAGGED] += 1
    st.A[pk] = min(0.0, c * y) - beta * y  # eq. (17)
    st.B[pk] = max(0.0, c * y) - beta * y
    region[ex] = reg
    gst[G_ADMIT_L if reg == R_LEFT else (G_ADMIT_R if reg == R_RIGHT else G_ADMIT_M)] += 1
    gap, k, v = process_g(st, kc, kd, kp, ex, f)
    gap_loop(st, kc, kd, kp, target, tau, gst, gfs, gap, k, v, pair)
    gst[G_SINCE_CLEAN] += 1


@numba.njit(**_NJIT)
def g_run(st, kc, kd, kp, region, gst, gfs, mode, n_iter, variant, s, sv_thr, start,
          clean_every, clean_keep, Cp, Cn, C, tau, pair):
    """The one compiled entry point of the LASVM-G family: M_NEW_EPOCH; M_ONLINE (at most
    n_iter examples drawn in random order from the epoch's unseen ones, CLEAN every
    clean_every PROCESS calls except for FULL SVM; returns how many); M_GAP (gap and delta
    brought up to date); M_FINISH (REPROCESS until no tau-violating variable, at most n_iter
    steps; returns 1 when finished); M_PURGE (CLEAN(0): drop every non-SV, corrections 001-7).
    ``pair``: 1 for two-variable REPROCESS steps (docs/online.md), 0 for the paper's."""
    if mode == M_NEW_EPOCH:
        new_epoch(st)
        return 0
    if mode == M_ONLINE:
        done = 0
        while done < n_iter and st.ist[I_POOL] > 0:
            ex = take_from_pool(st, rand_below(st.rng, st.ist[I_POOL]))
            iteration(st, kc, kd, kp, ex, variant, s, sv_thr, start, Cp, Cn, C, tau, pair, region,
                      gst, gfs)
            if variant != V_FULL and gst[G_SINCE_CLEAN] >= clean_every:
                clean(st, kc, clean_keep, gst, region)
                gst[G_SINCE_CLEAN] = 0
            done += 1
        return done
    if mode == M_FINISH:
        for _ in range(n_iter):
            if reprocess_g(st, kc, kd, kp, tau, pair) == 0:
                return 1
        return 0
    if mode == M_PURGE:
        clean(st, kc, 0, gst, region)
    gfs[F_GAP] = gap_of(st)
    st.fst[F_DELTA] = max_violator(st, st.ist[I_NS])[1]
    return 0
