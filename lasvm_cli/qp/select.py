"""Working-set selection: MVP, SO (LIBSVM's WSS2) and HMG, one signature for all.

    select_*(st, c, kd, kp) -> (i, j, violation)       i = -1 means "optimal, stop"

over the active positions [0, active). Notation (LIBSVM, minimisation, G = Qa + p):
I_up = {t | y_t = +1, a_t < C_t} u {t | y_t = -1, a_t > 0}, I_low the mirror image,
m = max_{I_up} -y_t G_t, M = min_{I_low} -y_t G_t; the pair is violating when m - M > 0.

* MVP (Keerthi et al. 2001; LIBSVM 2.71): i = argmax m, j = argmin M; stop when m - M < eps.
  Needs no kernel row.
* SO (Fan, Chen & Lin 2005, WSS2; svm.cpp ``select_working_set``): i as MVP, then
  j = argmin_{t in I_low, -y_tG_t < m} -(m + y_tG_t)^2 / a_it with a_it = QD_i + QD_t - 2 K_it
  (TAU = 1e-12 when a_it <= 0); ties: ``>=`` for i and ``<=`` for j, i.e. the last index wins,
  as in LIBSVM. Stop when m - M < eps or no j qualifies. Needs row i. Each of its two scans
  is one pass over the positions in vector lanes (qp/so_lanes.py), LIBSVM's pair bit for bit.
* HMG (Glasmachers & Igel 2006, section 2.4; tests/reference_hmg.py): with the previous
  working set {p1, p2} (example ids, kept in ist[PREV_I], ist[PREV_J]):
  - if there is none, or either has been shrunk, or both a_p are within eta*C_p of a bound
    (eta = 1e-8): one MVP step (the paper's fallback; MVP rather than SO because that is the
    algorithm the paper proves convergent and evaluates; Shark's SO fallback is a deviation);
  - else MG: the pair {p, b}, p in {p1, p2}, b active and not in {p1, p2}, of largest exact
    clipped gain (steps.pair_gain); stop when |mu*| < eps (the paper's MG stopping rule).
    Uses only rows p1 and p2, both cached by the previous update: at most one new row (b's)
    per MG iteration.
  - ``final_kkt_check`` (ist[FINAL_KKT]; not in the paper, on in svm-train and the
    estimators, ``--mg-stop`` turns it off): an MG stop is accepted only if the MVP gap is
    < eps as well, otherwise an MVP step is taken.
"""

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

from ..numerics.cache import cache_row_at, held
from ..numerics.index import at
from . import (ACTIVE, ETA, EPS, FINAL_KKT, FREE, LAST_KIND, N_FALLBACK, N_KKT_CONT, N_MG, PREV_I,
               PREV_J)
from .so_lanes import max_violator, mvp_pair, so_partner
from .steps import pair_gain

_NJIT = dict(cache=True, nogil=True)
INF = np.inf


@numba.njit(**_NJIT)
def select_mvp(st, c, kd, kp):
    # i = argmax m over I_up, j = argmax -M over I_low, the last position on ties (one pass
    # in vector lanes: qp/so_lanes.py)
    imax, Gmax, jmax, Gmax2 = mvp_pair(st, st.ist[ACTIVE])
    viol = Gmax + Gmax2
    st.ist[LAST_KIND] = 0
    if viol < st.fst[EPS] or imax < 0 or jmax < 0:
        return -1, -1, viol
    return imax, jmax, viol


MAGNITUDE = np.int64(0x7FFFFFFFFFFFFFFF)
SEARCH_BLOCK = 64  # entries first_argmax_above compares at once looking for the max


@numba.njit(inline="always", **_NJIT)
def order_key(bits):
    """An int64 that orders doubles as their values order (bits: the double's bit pattern): a
    non-negative double's bits already do; a negative one's magnitude bits are flipped, so more
    negative is smaller. The map is its own inverse. -0.0 comes just below +0.0 (a float
    compare ties them), and a NaN with the sign bit clear above +inf."""
    return bits ^ ((bits >> 63) & MAGNITUDE)


@numba.njit(inline="always", **_NJIT)
def _block_holds(bits, t, target):
    """Whether bits[t:t + SEARCH_BLOCK] holds target: a fixed-length loop with no exit, which
    vectorises where the element-by-element search cannot."""
    hit = False
    for j in range(SEARCH_BLOCK):
        hit |= bits[t + j] == target
    return hit


@numba.njit(**_NJIT)
def first_argmax_above(v, n, floor):
    """(t, m): m = max(v[:n]) and t its first index when m > floor; (-1, floor) otherwise. The
    max runs on the values' order keys: an integer max vectorises where a float one does not
    (a float max over eight scalar lanes took about twice as long); the index is then a search
    for the max's bit pattern, a block of SEARCH_BLOCK entries at a time (entry by entry it
    took as long as the max itself). Callers store no NaN, and store +0.0 rather than -0.0 when the floor is
    below zero (order_key puts -0.0 lower)."""
    if n <= 0:
        return -1, floor
    bits = v.view(np.int64)
    m = order_key(bits[0])
    for t in range(1, n):
        x = order_key(bits[t])
        m = x if x > m else m
    target = order_key(m)
    t = 0
    while t + SEARCH_BLOCK <= n and not _block_holds(bits, t, target):
        t += SEARCH_BLOCK
    while bits[t] != target:
        t += 1
    return (t, v[t]) if v[t] > floor else (-1, floor)


@numba.njit(**_NJIT)
def select_so(st, c, kd, kp):
    # Two leaf scans (so_lanes.py), row i as an offset into the cache's buffer, the
    # namedtuples passed whole and their last uses together: numba then prunes all 32
    # reference-count pairs of the arguments (36 atomic pairs an iteration otherwise; see
    # numba_internals.py for the rules).
    active = st.ist[ACTIVE]
    st.ist[LAST_KIND] = 1
    i, Gmax, Gmax2 = max_violator(st, active)
    if i < 0:
        return -1, -1, -INF
    bi = cache_row_at(c, kd, kp, c.pex[i], active)
    j = so_partner(st, c, bi, i, Gmax, active)
    held(c, kd)  # one last use of both (cache.held says why)
    viol = Gmax + Gmax2
    if viol < st.fst[EPS] or j < 0:
        return -1, -1, viol
    return i, j, viol


@numba.njit(**_NJIT)
def _near_bound(st, t):
    a = st.alpha[t]
    ec = st.fst[ETA] * st.C[t]
    return a <= ec or a >= st.C[t] - ec


@numba.njit(**_NJIT)
def _mg_scan(st, c, bp, p, q, best_gain, best_p, best_b, best_mu):
    """Best gain over pairs {p, b}, b active, b not in {p, q} (signed form, steps.pair_gain);
    row p is c.buf[bp + t]."""
    y, G, alpha, C, QD, K = st.y, st.G, st.alpha, st.C, st.QD, c.buf
    active = st.ist[ACTIVE]
    yp = y[p]
    gp = -yp * G[p]
    ap = yp * alpha[p]
    Ap = 0.0 if yp > 0 else -C[p]
    Bp = C[p] if yp > 0 else 0.0
    QDp = QD[p]
    for b in range(active):
        if b == p or b == q:
            continue
        yb = y[b]
        kappa = QDp + QD[b] - 2.0 * np.float64(K[at(bp, b)])
        if yb > 0:
            gain, mu = pair_gain(gp, -G[b], ap, alpha[b], Ap, Bp, 0.0, C[b], kappa)
        else:
            gain, mu = pair_gain(gp, G[b], ap, -alpha[b], Ap, Bp, -C[b], 0.0, kappa)
        if gain > best_gain:
            best_gain = gain
            best_p = p
            best_b = b
            best_mu = mu
    return best_gain, best_p, best_b, best_mu


@numba.njit(**_NJIT)
def _mg_pair(st, c, kd, kp, k1, k2, p1, p2):
    """MG's pair {p, b} of largest gain, p in {p1, p2} (example ids k1, k2), and its mu."""
    active = st.ist[ACTIVE]
    b1 = cache_row_at(c, kd, kp, c.vex[k1], active)  # both cached by the previous update
    b2 = cache_row_at(c, kd, kp, c.vex[k2], active)
    g, bp, bb, mu = _mg_scan(st, c, b1, p1, p2, 0.0, -1, -1, 0.0)
    g, bp, bb, mu = _mg_scan(st, c, b2, p2, p1, g, bp, bb, mu)
    held(c, kd)  # one last use of both (cache.held says why)
    return bp, bb, mu


@numba.njit(**_NJIT)
def select_hmg(st, c, kd, kp):
    # Rows as offsets, the namedtuples passed whole and their last uses together, as
    # select_so: numba then prunes the arguments' reference-count pairs.
    active = st.ist[ACTIVE]
    k1 = st.ist[PREV_I]
    k2 = st.ist[PREV_J]
    use_mvp = k1 < 0
    p1 = p2 = -1
    if not use_mvp:
        p1 = c.pos[k1]
        p2 = c.pos[k2]
        use_mvp = p1 >= active or p2 >= active or (_near_bound(st, p1) and _near_bound(st, p2))
    if use_mvp:
        i, j, viol = select_mvp(st, c, kd, kp)
        st.ist[N_FALLBACK] += i >= 0  # a fallback step taken (no branch, no call: see above)
        return i, j, viol
    bp, bb, mu = _mg_pair(st, c, kd, kp, k1, k2, p1, p2)
    st.ist[LAST_KIND] = 2
    viol = abs(mu)
    if bp >= 0 and viol >= st.fst[EPS]:
        st.ist[N_MG] += 1
        return bp, bb, viol
    i, j, v2 = -1, -1, viol
    if st.ist[FINAL_KKT] != 0:
        i, j, v2 = select_mvp(st, c, kd, kp)
    st.ist[N_KKT_CONT] += i >= 0
    st.ist[N_FALLBACK] += i >= 0
    held(c, kd)
    if i >= 0:
        return i, j, v2
    return -1, -1, viol


@numba.njit(**_NJIT)
def kkt_gap(st, n):
    """m(a) - M(a) over positions [0, n) (the MVP violation; <= eps at an SO/MVP exit)."""
    _, m, minus_M = max_violator(st, n)
    return m + minus_M


_ = FREE  # re-exported names used by callers
