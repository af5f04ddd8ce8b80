"""The S2DO decomposition core of the all-in-one multi-class machines without bias (Trinh
2012, ch. 3-5; Dogan, Glasmachers & Igel 2011): one state, selection and two-variable step for
LLW and Crammer-Singer, batch and online, so that both machines and both solvers share them.
The dual, the state's arrays and the working-set selection:
docs/online.md#the-s2do-core-qps2dopy.
"""

from collections import namedtuple

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

from ..numerics.cache import cache_get, cache_swap, cache_swap_keep_prefix
from ..numerics.index import at, idx
from . import Scalars, slot
from .s2do_steps import edge, gain2, increase, solve_box, solve_triangle
from .select import first_argmax_above

_NJIT = dict(cache=True, nogil=True)

S2doState = namedtuple("S2doState", "A G S yc KD ist fst W L")

LLW, CS = 0, 1
KINDS = {"llw": LLW, "cs": CS}

# ist indices
(KIND, D, ACTIVE, ITER, MAX_ITER, SHRINKING, COUNTER, UNSHRUNK, N_SHRINK, N_RECON,
 N_TRIANGLE, N_SHRUNK, N_IST) = range(13)
# fst indices
C_, EPS, TARGET, VIOL, GAIN, N_FST = range(6)


class S2doScalars(Scalars):
    """An S2doState's scalars by name: ``S2doScalars(st).active`` is ``st.ist[ACTIVE]``."""
    __slots__ = ()
    d = slot("ist", D)
    active = slot("ist", ACTIVE)
    iterations = slot("ist", ITER)
    shrinks = slot("ist", N_SHRINK)
    shrunk_examples = slot("ist", N_SHRUNK)
    reconstructions = slot("ist", N_RECON)
    triangle_steps = slot("ist", N_TRIANGLE)
    C = slot("fst", C_, float)
    target = slot("fst", TARGET, float)
    violation = slot("fst", VIOL, float)
    gain = slot("fst", GAIN, float)
# return codes of s2do_run
RUNNING, OPTIMAL, MAX_ITER_REACHED = 0, 1, 2

SNAP = 1e-12  # a CS sum within SNAP C of C is C (Shark's updateVarsum; corrections 004-10)
# the second variable of a CS pair inside one pattern (the online solver's TWO_NEWS and
# random-pattern-s2do-pattern steps): by Algorithm 4's gain (corrections 004-5), or by the
# gradient, q = argmax_c (g_p - g_c), as Algorithms 8 and 9 print (corrections 004-15)
SECOND_GAIN, SECOND_GRADIENT = 0, 1


def make_state(kind, yc, d, diag, C, *, target=1.0, eps=1e-3, shrinking=True, max_iter=None):
    """An S2doState at a = 0 (g = v everywhere) for l examples of class indices ``yc``."""
    l = yc.shape[0]
    st = S2doState(A=np.zeros((l, d)), G=np.full((l, d), float(target if kind == LLW else 1.0)),
                   S=np.zeros(l), yc=np.ascontiguousarray(yc, np.int64).copy(),
                   KD=np.ascontiguousarray(diag, np.float64).copy(),
                   ist=np.zeros(N_IST, np.int64), fst=np.zeros(N_FST), W=np.zeros(l * d),
                   L=np.zeros((0, 4), np.int64))
    st.ist[KIND] = kind
    st.ist[D] = d
    st.ist[ACTIVE] = l
    st.ist[MAX_ITER] = max(10000000, 100 * l) if max_iter is None else int(max_iter)
    st.ist[SHRINKING] = int(bool(shrinking))
    st.ist[COUNTER] = min(l, 1000) + 1
    st.fst[C_] = C
    st.fst[EPS] = eps
    st.fst[TARGET] = target if kind == LLW else 1.0
    st.fst[VIOL] = np.inf
    return st


def with_step_log(st, n):
    """``st`` with a log of its next ``n`` steps (tests/test_s2do_reference.py): row 0 holds
    the count, row k + 1 the k-th call of :func:`step_after` as (example m, class p, example n,
    class q), the working pair by example ids (n = -1: a step on (m, p) alone; m = -1: nothing
    could move). The log records, it changes no step."""
    L = np.zeros((n + 1, 4), np.int64)
    return st._replace(L=L)


@numba.njit(**_NJIT)
def _log_step(st, ex_m, p, ex_n, q):
    L = st.L
    if L.shape[0] == 0:
        return
    k = L[0, 0] + 1
    if k < L.shape[0]:
        L[k, 0], L[k, 1], L[k, 2], L[k, 3] = ex_m, p, ex_n, q
        L[0, 0] = k


# ---------------------------------------------------------------------------------------------
# the formulation: M, the diagonal, the upper bound of one variable


@numba.njit(inline="always", **_NJIT)
def mcoef(kind, d, ym, p, yn, q):
    """M(y_m, p, y_n, q): Q_{(m,p),(n,q)} = M K(x_m, x_n) (thesis (4.5); corrections 004-4)."""
    if kind == LLW:
        return (1.0 if p == q else 0.0) - 1.0 / d
    return ((1.0 if ym == yn else 0.0) - (1.0 if ym == q else 0.0)
            - (1.0 if p == yn else 0.0) + (1.0 if p == q else 0.0))


@numba.njit(inline="always", **_NJIT)
def qdiag(st, t):
    """Q_{(t,c),(t,c)}: (1 - 1/d) K_tt (LLW), 2 K_tt (CS)."""
    if st.ist[KIND] == LLW:
        return (1.0 - 1.0 / st.ist[D]) * st.KD[t]
    return 2.0 * st.KD[t]


@numba.njit(inline="always", **_NJIT)
def upper(st, t, c):
    """U of variable (t, c) with the other variables fixed: C (LLW), C - S_t + a_{t,c} (CS)."""
    if st.ist[KIND] == LLW:
        return st.fst[C_]
    return st.fst[C_] - st.S[t] + st.A[t, c]


# ---------------------------------------------------------------------------------------------
# working-set selection


@numba.njit(**_NJIT)
def select_first(st, lo, hi, supports_only):
    """The first variable over positions [lo, hi): (m, p, score) of the largest
    feasible-direction score (first in position order on ties), and for CS the best
    same-example pair at S = C: (pm, pup, pdown, pair score). ``supports_only``: only variables
    with a > 0 (TWO_OLD_SUPPORTS). Every variable's score goes to st.W in a branch-free loop,
    the largest is found on the scores' order keys (select.first_argmax_above), the CS pairs
    in a loop of their own: the single loop that kept a running argmax through branches on the
    gradient's sign cost about three times as much."""
    d = st.ist[D]
    cs = st.ist[KIND] == CS
    C = st.fst[C_]
    _first_scores(st.A, st.G, st.S, st.yc, lo, hi, d, cs, C, supports_only, st.W)
    i, best = first_argmax_above(st.W, (hi - lo) * d, 0.0)  # scores are never negative
    m, p = (lo + i // d, i % d) if i >= 0 else (-1, -1)
    if not cs:
        return m, p, best, -1, -1, -1, 0.0
    pm, pup, pdown, pbest = _cs_pairs(st.A, st.G, st.S, st.yc, lo, hi, d, C, supports_only)
    return m, p, best, pm, pup, pdown, pbest


@numba.njit(**_NJIT)
def _first_scores(A, G, S, yc, lo, hi, d, cs, C, supports_only, W):
    """W[(t - lo) d + c] = the score of (t, c): g if it may grow (g > 0; LLW: a < C; CS: S_t <
    C), -g if it may shrink (g < 0 and a > 0), else 0; 0 for c = y_t and, with
    ``supports_only``, for a = 0."""
    for t in range(lo, hi):
        u = idx(t)  # unsigned: no negative-index test per access (index.py)
        yt = yc[u]
        grow = not (cs and S[u] >= C)
        base = (t - lo) * d
        for c in range(d):
            a = A[u, c]
            g = G[u, c]
            score = g if (g > 0.0) & grow & (cs | (a < C)) else 0.0
            score = -g if (g < 0.0) & (a > 0.0) else score
            skip = (c == yt) | (supports_only & (a == 0.0))
            W[at(base, c)] = 0.0 if skip else score


@numba.njit(**_NJIT)
def _cs_pairs(A, G, S, yc, lo, hi, d, C, supports_only):
    """CS: the best pair "up c, down e" of one example at S_t = C, score g_c - g_e (e with a > 0,
    c != e), over positions [lo, hi): (t, c, e, score), first t on ties; (-1, -1, -1, 0)."""
    pm, pup, pdown, pbest = -1, -1, -1, 0.0
    for t in range(lo, hi):
        u = idx(t)
        if not S[u] >= C:
            continue
        yt = yc[u]
        up, down, cu, cd = -np.inf, np.inf, -1, -1
        for c in range(d):
            a = A[u, c]
            if c == yt or (supports_only and a == 0.0):
                continue
            g = G[u, c]
            if g > up:
                up, cu = g, c
            if a > 0.0 and g < down:
                down, cd = g, c
        if cd >= 0 and cu != cd and up - down > pbest:
            pm, pup, pdown, pbest = t, cu, cd, up - down
    return pm, pup, pdown, pbest


@numba.njit(**_NJIT)
def select_second(st, K1, lo, hi, m, p, supports_only):
    """The second variable over positions [lo, hi): the movable (n, q) != (m, p) of the largest
    unconstrained gain with (m, p) (Algorithm 4; first in position order on ties); K1 is m's
    kernel row. (-1, -1) if none. Every variable's gain goes to st.W (-1 where it cannot move),
    the largest is found on the gains' order keys: the loop that kept a running argmax through
    branches per variable took 7-9 ns a variable, this one 3 (usps, online CS and LLW)."""
    d = st.ist[D]
    kind = st.ist[KIND]
    ym = st.yc[m]
    # Q_{(m,p),(t,c)} = (row_t + col_c) K_mt: mcoef's terms in t (row_t) and in c (col_c),
    # hoisted out of the loop (mcoef per variable would put a branch and a lookup in the scan)
    col = np.empty(d)
    for c in range(d):
        col[c] = (1.0 if c == p else 0.0) - (1.0 if kind == CS and c == ym else 0.0)
    _second_gains(st, K1, lo, hi, m, p, supports_only, col, st.W,
                  np.empty(3 * SECOND_CHUNK * d))
    i, _ = first_argmax_above(st.W, (hi - lo) * d, -1.0)
    return (lo + i // d, i % d) if i >= 0 else (-1, -1)


# Examples per chunk of _second_gains: its per-variable terms (a few KB) stay in L1
SECOND_CHUNK = 64


@numba.njit(error_model="numpy", **_NJIT)
def _second_gains(st, K1, lo, hi, m, p, supports_only, col, W, X):
    """W[(t - lo) d + c] = gain2 of (m, p) with (t, c) where (t, c) may move, else -1.0, with no
    branch per variable, so the loop vectorises. (error_model numpy: no zero test per
    division: the ridge keeps every divisor positive.)

    Chunk by chunk of SECOND_CHUNK examples: first the terms of each example (its kernel value,
    Q's diagonal, its upper bound) are spread over its d variables (scratch X: q12, q22, cap),
    then the gains run as one flat loop over the chunk's variables, whose A and G are
    contiguous. A loop over one example's d variables vectorises only when d is at least the
    vector width (eight doubles): with d = 6 it ran wholly scalar, and with d = 10 its
    remainder of two did. The values, so the choice, are the same as the loop per example's."""
    d = st.ist[D]
    kind = st.ist[KIND]
    C = st.fst[C_]
    A, G, S, yc, KD = st.A, st.G, st.S, st.yc, st.KD
    Af = A.reshape(A.size)
    Gf = G.reshape(G.size)
    size = SECOND_CHUNK * d
    X12, X22, XC = X[:size], X[size:2 * size], X[2 * size:3 * size]
    diag = (1.0 - 1.0 / d) if kind == LLW else 2.0
    g1 = G[m, p]
    q11 = diag * KD[m]
    ym = yc[m]
    for t0 in range(lo, hi, SECOND_CHUNK):
        t1 = min(t0 + SECOND_CHUNK, hi)
        for t in range(t0, t1):
            u = idx(t)  # unsigned: no negative-index test per access (index.py)
            yt = yc[u]
            q22 = diag * KD[u]
            k = np.float64(K1[u])
            row = (-1.0 / d if kind == LLW
                   else (1.0 if yt == ym else 0.0) - (1.0 if yt == p else 0.0))
            # may grow below: LLW a < C; CS every variable of an example with S_t < C (and m's)
            cap = C if kind == LLW else (np.inf if S[u] < C or t == m else -1.0)
            base = (t - t0) * d
            for c in range(d):
                X12[at(base, c)] = (row + col[c]) * k
                X22[at(base, c)] = q22
                XC[at(base, c)] = cap
        src = idx(t0 * d)
        dst = (t0 - lo) * d
        for i in range((t1 - t0) * d):
            a = Af[src + idx(i)]
            g = Gf[src + idx(i)]
            v = gain2(g1, g, q11, X12[i], X22[i])
            moves = ((g > 0.0) & (a < XC[i])) | ((g < 0.0) & (a > 0.0))
            moves = moves & (v == v) & ((not supports_only) | (a != 0.0))
            W[at(dst, i)] = v + 0.0 if moves else -1.0  # + 0.0: -0.0 keys below +0.0
        for t in range(t0, t1):
            W[at((t - lo) * d, yc[idx(t)])] = -1.0
    if lo <= m < hi:
        W[at((m - lo) * d, p)] = -1.0


# ---------------------------------------------------------------------------------------------
# the step and the gradient update


@numba.njit(**_NJIT)
def update_gradient(st, hi, K1, m, p, mu1, K2, n, q, mu2):
    """g_{t,c} -= M(y_t, c, y_m, p) K_tm mu1 + M(y_t, c, y_n, q) K_tn mu2 for t in [0, hi)."""
    d = st.ist[D]
    G = st.G
    if st.ist[KIND] == LLW:
        for t in range(hi):
            a = mu1 * np.float64(K1[t])
            b = mu2 * np.float64(K2[t])
            s = (a + b) / d
            for c in range(d):
                G[t, c] += s
            G[t, p] -= a
            G[t, q] -= b
        return
    ym = st.yc[m]
    yn = st.yc[n]
    for t in range(hi):
        a = mu1 * np.float64(K1[t])
        b = mu2 * np.float64(K2[t])
        yt = st.yc[t]
        base = (a * ((1.0 if yt == ym else 0.0) - (1.0 if yt == p else 0.0))
                + b * ((1.0 if yt == yn else 0.0) - (1.0 if yt == q else 0.0)))
        for c in range(d):
            G[t, c] -= base
        G[t, ym] += a
        G[t, p] -= a
        G[t, yn] += b
        G[t, q] -= b


@numba.njit(inline="always", **_NJIT)
def _set_alpha(st, t, c, value):
    if value < 0.0:
        value = 0.0
    C = st.fst[C_]
    if value > C:
        value = C
    st.A[t, c] = value


@numba.njit(**_NJIT)
def _resum(st, t):
    """S_t from the alphas; for CS snapped to C (corrections 004-10; an LLW sum is unbounded)."""
    s = 0.0
    for c in range(st.ist[D]):
        s += st.A[t, c]
    C = st.fst[C_]
    if st.ist[KIND] == CS and s >= C * (1.0 - SNAP):
        s = C
    st.S[t] = s


@numba.njit(**_NJIT)
def solve_pair(st, K1, m, p, n, q):
    """The exact step on {(m, p), (n, q)} (n < 0: (m, p) alone); returns (mu1, mu2, dual
    increase). K1 is m's kernel row (K1[n] = K(x_m, x_n))."""
    kind = st.ist[KIND]
    d = st.ist[D]
    g1 = st.G[m, p]
    q11 = qdiag(st, m)
    a1 = st.A[m, p]
    if n < 0:
        mu1 = edge(g1, q11, -a1, upper(st, m, p) - a1)
        return mu1, 0.0, increase(g1, 0.0, q11, 0.0, 0.0, mu1, 0.0)
    g2 = st.G[n, q]
    q22 = qdiag(st, n)
    q12 = mcoef(kind, d, st.yc[m], p, st.yc[n], q) * np.float64(K1[n])
    a2 = st.A[n, q]
    if kind == CS and m == n:
        st.ist[N_TRIANGLE] += 1
        mu1, mu2 = solve_triangle(g1, g2, q11, q12, q22, a1, a2, st.fst[C_] - st.S[m])
    else:
        mu1, mu2 = solve_box(g1, g2, q11, q12, q22, -a1, upper(st, m, p) - a1,
                             -a2, upper(st, n, q) - a2)
    return mu1, mu2, increase(g1, g2, q11, q12, q22, mu1, mu2)


@numba.njit(**_NJIT)
def apply_step(st, hi, K1, m, p, mu1, K2, n, q, mu2):
    """a += mu on the two variables (n < 0: one), then the gradients of [0, hi)."""
    _set_alpha(st, m, p, st.A[m, p] + mu1)
    if n >= 0:
        _set_alpha(st, n, q, st.A[n, q] + mu2)
    _resum(st, m)
    if n >= 0 and n != m:
        _resum(st, n)
    if n < 0:
        update_gradient(st, hi, K1, m, p, mu1, K1, m, p, 0.0)
    else:
        update_gradient(st, hi, K1, m, p, mu1, K2, n, q, mu2)


# ---------------------------------------------------------------------------------------------
# gradients from scratch, shrinking


@numba.njit(**_NJIT)
def subtract_patterns(st, K, t_lo, t_hi, n_lo, n_hi, k_by_n):
    """g_t -= the contributions of the alphas of example n, for the positions t in
    [t_lo, t_hi) and n in [n_lo, n_hi); K(x_t, x_n) is K[n] (k_by_n: K is t's row) or K[t]
    (K is n's row)."""
    kind, d = st.ist[KIND], st.ist[D]
    G, A, S, yc = st.G, st.A, st.S, st.yc
    for t in range(t_lo, t_hi):
        yt = yc[t]
        for n in range(n_lo, n_hi):
            Sn = S[n]
            if Sn == 0.0:
                continue
            k = np.float64(K[n] if k_by_n else K[t])
            if kind == LLW:
                for c in range(d):
                    G[t, c] -= k * (A[n, c] - Sn / d)
                continue
            yn = yc[n]
            base = (Sn if yt == yn else 0.0) - A[n, yt]
            for c in range(d):
                G[t, c] -= k * (base + A[n, c])
            G[t, yn] += k * Sn


@numba.njit(**_NJIT)
def reset_gradient(st, t):
    v = st.fst[TARGET]
    for c in range(st.ist[D]):
        st.G[t, c] = v


@numba.njit(**_NJIT)
def gradient_from(st, t, K, hi):
    """g_t from scratch over the support examples in [0, hi), K[n] = K(x_t, x_n)."""
    reset_gradient(st, t)
    subtract_patterns(st, K, t, t + 1, 0, hi, True)


@numba.njit(**_NJIT)
def reconstruct(st, c, kd, kp, lo, hi):
    """Exact gradients of positions [lo, hi) from the support examples (full rows of those
    examples, or of the targets when there are fewer of them)."""
    l = st.yc.shape[0]
    if hi <= lo:
        return
    st.ist[N_RECON] += 1
    n_sup = 0
    for n in range(l):
        if st.S[n] > 0.0:
            n_sup += 1
    if n_sup <= hi - lo:
        for t in range(lo, hi):
            reset_gradient(st, t)
        for n in range(l):
            if st.S[n] > 0.0:
                K = cache_get(c, kd, kp, c.pex[n], hi)
                subtract_patterns(st, K, lo, hi, n, n + 1, False)
    else:
        for t in range(lo, hi):
            gradient_from(st, t, cache_get(c, kd, kp, c.pex[t], l), l)


@numba.njit(**_NJIT)
def swap_positions(st, c, i, j, keep_prefix):
    """Swap positions i and j in the state and the cache (the online driver keeps cached
    prefixes, LASVM's policy; batch shrinking drops rows that would get a hole)."""
    if i == j:
        return
    if keep_prefix:
        cache_swap_keep_prefix(c, i, j)
    else:
        cache_swap(c, i, j)
    d = st.ist[D]
    for k in range(d):
        t = st.A[i, k]
        st.A[i, k] = st.A[j, k]
        st.A[j, k] = t
        t = st.G[i, k]
        st.G[i, k] = st.G[j, k]
        st.G[j, k] = t
    t = st.S[i]
    st.S[i] = st.S[j]
    st.S[j] = t
    t = st.KD[i]
    st.KD[i] = st.KD[j]
    st.KD[j] = t
    y = st.yc[i]
    st.yc[i] = st.yc[j]
    st.yc[j] = y


@numba.njit(**_NJIT)
def _shrinkable(kind, d, C, eps, A, G, S, yc, t):
    """Shark's rule per variable (a = 0 and g < 0, or a = C and g > 0; corrections 004-11), all the
    variables of the example; CS per simplex: S = 0 and every g < 0, or S = C, the smallest
    gradient of its support above 0 and within eps of the largest."""
    yt = yc[t]
    if kind == LLW:
        for c in range(d):
            if c == yt:
                continue
            a = A[t, c]
            g = G[t, c]
            if not ((a <= 0.0 and g < 0.0) or (a >= C and g > 0.0)):
                return False
        return True
    up, down = -np.inf, np.inf
    for c in range(d):
        if c == yt:
            continue
        g = G[t, c]
        up = max(up, g)
        if A[t, c] > 0.0:
            down = min(down, g)
    if S[t] <= 0.0:
        return up < 0.0
    if S[t] >= C:
        return down > 0.0 and up - down < eps
    return False


@numba.njit(**_NJIT)
def shrink(st, c):
    active = st.ist[ACTIVE]
    kind, d, C, eps = st.ist[KIND], st.ist[D], st.fst[C_], st.fst[EPS]
    for t in range(active - 1, -1, -1):
        if _shrinkable(kind, d, C, eps, st.A, st.G, st.S, st.yc, t):
            active -= 1
            swap_positions(st, c, t, active, False)
    st.ist[N_SHRUNK] += st.ist[ACTIVE] - active
    st.ist[N_SHRINK] += 1
    st.ist[ACTIVE] = active


@numba.njit(**_NJIT)
def unshrink(st, c, kd, kp):
    l = st.yc.shape[0]
    reconstruct(st, c, kd, kp, st.ist[ACTIVE], l)
    st.ist[ACTIVE] = l


# ---------------------------------------------------------------------------------------------
# the batch loop (Algorithm 3 with shrinking)


@numba.njit(**_NJIT)
def select_and_step(st, c, kd, kp, lo, hi, supports_only, second_lo, second_hi, grad_hi,
                    second_rule):
    """One S2DO iteration: first variable in [lo, hi), second in [second_lo, second_hi) (CS
    pairs at S = C stay in one example; ``second_rule``: SECOND_GAIN or SECOND_GRADIENT), the
    step, gradients of [0, grad_hi). Returns (KKT violation of [lo, hi), dual increase, m, n);
    m = -1 when nothing can move."""
    m, p, best, pm, pup, pdown, pbest = select_first(st, lo, hi, supports_only)
    return step_after(st, c, kd, kp, m, p, best, pm, pup, pdown, pbest, supports_only,
                      second_lo, second_hi, grad_hi, second_rule)


@numba.njit(**_NJIT)
def gradient_second(st, m, p, supports_only):
    """Algorithms 8 (line 7) and 9 (line 36), the second variable of a CS pair inside pattern
    m: q = argmax_c (g_{m,p} - g_{m,c}), i.e. the smallest gradient among m's other variables
    (c != p, c != y_m; with ``supports_only``, a > 0; first on ties), whether or not it can
    move (the exact triangle step then moves what can). -1 if there is none (d = 2)."""
    q, low = -1, np.inf
    for c in range(st.ist[D]):
        if c == p or c == st.yc[m] or (supports_only and st.A[m, c] == 0.0):
            continue
        if st.G[m, c] < low:
            q, low = c, st.G[m, c]
    return q


@numba.njit(**_NJIT)
def step_after(st, c, kd, kp, m, p, best, pm, pup, pdown, pbest, supports_only, second_lo,
               second_hi, grad_hi, second_rule):
    """select_and_step after select_first (its results m ... pbest)."""
    viol = max(best, pbest)
    if viol <= 0.0:
        _log_step(st, -1, -1, -1, -1)
        return viol, 0.0, -1, -1
    if pbest > best:
        m = pm
        K1 = cache_get(c, kd, kp, c.pex[m], grad_hi)
        p, n, q = pup, pm, pdown
    else:
        K1 = cache_get(c, kd, kp, c.pex[m], grad_hi)
        if (second_rule == SECOND_GRADIENT and st.ist[KIND] == CS and second_lo == m
                and second_hi == m + 1):
            q = gradient_second(st, m, p, supports_only)
            n = m if q >= 0 else -1
        else:
            n, q = select_second(st, K1, second_lo, second_hi, m, p, supports_only)
    _log_step(st, c.pex[m], p, c.pex[n] if n >= 0 else -1, q)
    mu1, mu2, gain = solve_pair(st, K1, m, p, n, q)
    if n >= 0 and n != m:
        K2 = cache_get(c, kd, kp, c.pex[n], grad_hi)
        apply_step(st, grad_hi, cache_get(c, kd, kp, c.pex[m], grad_hi), m, p, mu1, K2, n, q,
                   mu2)
    else:
        apply_step(st, grad_hi, K1, m, p, mu1, K1, n, q, mu2)
    st.fst[GAIN] += gain
    return viol, gain, m, n


@numba.njit(**_NJIT)
def s2do_run(st, c, kd, kp, n_steps):
    """Up to n_steps iterations of batch S2DO; returns RUNNING, OPTIMAL or MAX_ITER_REACHED."""
    l = st.yc.shape[0]
    eps = st.fst[EPS]
    for _ in range(n_steps):
        if st.ist[SHRINKING]:
            st.ist[COUNTER] -= 1
            if st.ist[COUNTER] <= 0:
                st.ist[COUNTER] = min(l, 1000)
                shrink(st, c)
        active = st.ist[ACTIVE]
        m, p, best, pm, pup, pdown, pbest = select_first(st, 0, active, False)
        viol = max(best, pbest)
        st.fst[VIOL] = viol
        if viol < eps:
            if active < l:  # optimal on the shrunk problem: check the whole one
                unshrink(st, c, kd, kp)
                st.ist[COUNTER] = min(l, 1000)
                continue
            return OPTIMAL
        if st.ist[SHRINKING] and st.ist[UNSHRUNK] == 0 and viol <= 10.0 * eps:
            st.ist[UNSHRUNK] = 1
            if active < l:
                unshrink(st, c, kd, kp)
                continue
        step_after(st, c, kd, kp, m, p, best, pm, pup, pdown, pbest, False, 0, active, active,
                   SECOND_GAIN)
        st.ist[ITER] += 1
        if st.ist[ITER] >= st.ist[MAX_ITER]:
            return MAX_ITER_REACHED
    return RUNNING


@numba.njit(**_NJIT)
def dual_value(st, hi):
    """D = 0.5 sum a (v + g) over positions [0, hi) (corrections 004-9)."""
    v = st.fst[TARGET]
    d = st.ist[D]
    s = 0.0
    for t in range(hi):
        yt = st.yc[t]
        for c in range(d):
            if c != yt:
                s += st.A[t, c] * (v + st.G[t, c])
    return 0.5 * s


@numba.njit(**_NJIT)
def kkt_violation(st, hi):
    m, p, best, pm, pup, pdown, pbest = select_first(st, 0, hi, False)
    return max(best, pbest)
