"""Hybrid maximum-gain (HMG) working-set selection and the SMO step, in plain numpy, written
straight from Glasmachers & Igel (2006), "Maximum-Gain Working Set Selection for SVMs", JMLR 7,
sections 1.2-2.4, with the paper's names and its sign convention:

    maximize  f(alpha) = 1'alpha - 1/2 alpha'Q alpha   s.t.  y'alpha = 0,  0 <= alpha_i <= C_i,
    Q_ij = y_i y_j K_ij,   G := grad f(alpha) = 1 - Q alpha              (paper eq. 1)

(the compiled core minimises LIBSVM's 1/2 a'Qa - 1'a with gradient Qa - 1 = -G: the same
problem, so the same alphas; its f is minus LIBSVM's obj).

One iteration t of the decomposition algorithm (paper section 1.2):

* working pair B = {b1, b2}, w_B = (1, -y_b1 y_b2) (paper section 2.1);
* mu_max = (G_b1 - y_b1 y_b2 G_b2) / (Q_b1b1 + Q_b2b2 - 2 y_b1 y_b2 Q_b1b2), clipped to the
  feasible segment: mu*; alpha_B <- alpha_B + mu* w_B; G <- G - Q (alpha_new - alpha_old)
  (eq. 2);
* gain g_B = 1/2 (Q_b1b1 + Q_b2b2 - 2 y_b1 y_b2 Q_b1b2) mu* (2 mu_max - mu*)  (eq. 3);
* MVP (LIBSVM 2.71, paper section 1.3): b1 = argmax_{i in I} y_i G_i, b2 = argmin_{i in J}
  y_i G_i with I = {y = +1, alpha < C} u {y = -1, alpha > 0} and J = {y = +1, alpha > 0} u
  {y = -1, alpha < C}; stop when y_b1 G_b1 - y_b2 G_b2 < eps;
* MG (section 2.3): B^(t) = argmax g_B over B = {b1, b}, b1 in B^(t-1), b outside B^(t-1);
  stop when |mu*_B| < eps (or no pair gains anything);
* HMG (section 2.4): in the first iteration an arbitrary pair with y_b1 != y_b2 (here MVP's,
  which is such a pair at alpha = 0); later, MVP when BOTH variables of B^(t-1) are no more
  than eta*C from a bound (Figure 2's grey corners), MG otherwise; the stopping test is the one
  of the rule used in the iteration. eta = 1e-8 as in the paper.

What the paper leaves open, fixed here as its LIBSVM-based implementation has it (and as the
compiled core does):

* ties: MVP takes the last index on ties (LIBSVM's ``>=`` scans); MG scans the pairs of
  b1 = the first variable of B^(t-1) before those of b2, each over b = 0..l-1, and keeps the
  first of equal gains (strict ``>``, starting from gain 0). The new B^(t) is ordered (p, b)
  with p the reused variable, so its first variable is scanned first in the next MG step;
* a clipped variable is set to its bound exactly (Figure 1: "moved along the line onto the
  box boundary"), so that "at the bound" is an exact test;
* the paper assumes every principal 2x2 minor of Q positive definite (section 3.1), so the
  curvature Q_b1b1 + Q_b2b2 - 2 y_b1 y_b2 Q_b1b2 > 0: the reference raises if it is not.

Per-variable C (class weights) is allowed; the paper's eta*C then uses each variable's C_i.

Section 4.6's two variants of MG's pair set (experiments on this reference only; the compiled
solver has the paper's two-row HMG alone), chosen by ``rows``:

* ``None`` (the default): the paper's HMG above, scanned pair by pair in Python;
* ``"two"``: the same pairs, scanned one row at a time with numpy (the same pairs, gains and
  ties, so the same trace: tests/test_reference_hmg_rows.py checks it), for the bench;
* ``"one"``: "the gain using only one matrix row corresponding to one element of the working
  set. The element chosen was alternated in every iteration such that a selected variable was
  used in exactly two successive iterations": the pairs (p, b) with p = the second variable of
  B^(t-1) and b not in B^(t-1) (section 2.5's "l - 2 pairs"). The second variable of an MG pair
  (p, b) is the newcomer b, so each variable is the fixed one in the iteration after it entered
  and then leaves; after an MVP step (b1, b2) the fixed one is b2 (the paper does not say);
* ``"cache"``: "the gain for every cached matrix element available": the pairs (i, b) with row
  i in the row cache (``RowCache``: the rows the gradient updates computed, least recently used
  first out; ``capacity=None`` keeps every row) and b != i, except B^(t-1) itself, cached rows in
  ascending order and b ascending, the first of equal gains. With every row of Q cached
  (``prefill``), this is the exact greedy policy w.r.t. the gain over all pairs.

HMG's MVP fallback (both previous variables within eta*C of a bound) and the stopping rules are
the same for every variant.
"""

from collections import OrderedDict

import numpy as np

ETA = 1e-8
MVP, MG = 0, 2  # the rule used in an iteration (the compiled core's ist[LAST_KIND] codes)


def step_on_pair(alpha, G, Q, y, C, b1, b2):
    """mu_max, mu* and the gain g_B of B = {b1, b2} with w_B = (1, -y_b1 y_b2) (paper 2.1, 2.2),
    and the bounds of the feasible segment [L, U]."""
    s = y[b1] * y[b2]
    curvature = Q[b1, b1] + Q[b2, b2] - 2.0 * s * Q[b1, b2]
    if not curvature > 0.0:
        raise ValueError(f"curvature {curvature} <= 0 on {{{b1}, {b2}}}: the paper assumes "
                         "positive definite 2x2 minors")
    mu_max = (G[b1] - s * G[b2]) / curvature
    # alpha_b1 + mu in [0, C_b1] and alpha_b2 - s mu in [0, C_b2]
    L1, U1 = -alpha[b1], C[b1] - alpha[b1]
    L2, U2 = (alpha[b2] - C[b2], alpha[b2]) if s > 0 else (-alpha[b2], C[b2] - alpha[b2])
    L, U = max(L1, L2), min(U1, U2)
    mu_star = min(max(mu_max, L), U)
    gain = 0.5 * curvature * mu_star * (2.0 * mu_max - mu_star)
    return mu_max, mu_star, gain, (L1, U1, L2, U2)


def smo_step(alpha, G, Q, y, C, b1, b2):
    """alpha_B <- alpha_B + mu* w_B and G <- G - Q (alpha_new - alpha_old) (eq. 2), in place."""
    _, mu_star, _, (L1, U1, L2, U2) = step_on_pair(alpha, G, Q, y, C, b1, b2)
    s = y[b1] * y[b2]
    old1, old2 = alpha[b1], alpha[b2]
    alpha[b1] = 0.0 if mu_star == L1 else C[b1] if mu_star == U1 else old1 + mu_star
    if mu_star == (L2 if s > 0 else U2):
        alpha[b2] = C[b2]
    elif mu_star == (U2 if s > 0 else L2):
        alpha[b2] = 0.0
    else:
        alpha[b2] = old2 - s * mu_star
    G -= Q[:, b1] * (alpha[b1] - old1) + Q[:, b2] * (alpha[b2] - old2)


def select_mvp(alpha, G, y, C, eps):
    """(b1, b2) or None at the stop (paper section 1.3), last index on ties."""
    yG = y * G
    I = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    J = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    if not I.any() or not J.any():
        return None
    b1 = np.flatnonzero(I & (yG == yG[I].max()))[-1]
    b2 = np.flatnonzero(J & (yG == yG[J].min()))[-1]
    if yG[b1] - yG[b2] < eps:
        return None
    return b1, b2


def best_related_pair(alpha, G, Q, y, C, previous):
    """(B, g_B, mu_max, mu*) of the pair B = (p, b), p in B^(t-1) = previous, b not in it, of
    largest gain; B is None when no such pair gains anything (paper section 2.3)."""
    best = (None, 0.0, 0.0, 0.0)
    for p in previous:
        for b in range(len(alpha)):
            if b in previous:
                continue
            mu_max, mu_star, gain, _ = step_on_pair(alpha, G, Q, y, C, p, b)
            if gain > best[1]:
                best = ((p, b), gain, mu_max, mu_star)
    return best


def select_mg(alpha, G, Q, y, C, eps, previous, rows=None, cache=None):
    """The MG pair, or None at the stop: |mu*| < eps (paper section 2.3)."""
    B, _, _, mu_star = best_pair(alpha, G, Q, y, C, previous, rows, cache)
    if B is None or abs(mu_star) < eps:
        return None
    return B


def gains_with(alpha, G, Q, y, C, p):
    """(mu_max, mu*, g) of the pairs (p, b) for every b at once: step_on_pair's formulas,
    operation for operation (so the same floats); the entry b = p is meaningless."""
    s = y[p] * y
    curvature = Q[p, p] + np.diagonal(Q) - 2.0 * s * Q[p]
    with np.errstate(divide="ignore", invalid="ignore"):
        mu_max = (G[p] - s * G) / curvature
    L1, U1 = -alpha[p], C[p] - alpha[p]
    L2 = np.where(s > 0, alpha - C, -alpha)
    U2 = np.where(s > 0, alpha, C - alpha)
    L, U = np.maximum(L1, L2), np.minimum(U1, U2)
    mu_star = np.minimum(np.maximum(mu_max, L), U)
    gain = 0.5 * curvature * mu_star * (2.0 * mu_max - mu_star)
    bad = ~(curvature > 0.0)
    bad[p] = False
    if bad.any():
        b = int(np.flatnonzero(bad)[0])
        raise ValueError(f"curvature {curvature[b]} <= 0 on {{{p}, {b}}}: the paper assumes "
                         "positive definite 2x2 minors")
    return mu_max, mu_star, gain


def gains_with_rows(alpha, G, Q, y, C, ps):
    """gains_with for the rows ps at once: arrays of shape (len(ps), l)."""
    s = y[ps, None] * y[None, :]
    curvature = Q[ps, ps][:, None] + np.diagonal(Q)[None, :] - 2.0 * s * Q[ps]
    with np.errstate(divide="ignore", invalid="ignore"):
        mu_max = (G[ps, None] - s * G[None, :]) / curvature
    L1, U1 = -alpha[ps, None], C[ps, None] - alpha[ps, None]
    L2 = np.where(s > 0, alpha - C, -alpha)
    U2 = np.where(s > 0, alpha, C - alpha)
    L, U = np.maximum(L1, L2), np.minimum(U1, U2)
    mu_star = np.minimum(np.maximum(mu_max, L), U)
    gain = 0.5 * curvature * mu_star * (2.0 * mu_max - mu_star)
    bad = ~(curvature > 0.0)
    bad[np.arange(len(ps)), ps] = False
    if bad.any():
        r, b = np.argwhere(bad)[0]
        raise ValueError(f"curvature {curvature[r, b]} <= 0 on {{{ps[r]}, {b}}}: the paper "
                         "assumes positive definite 2x2 minors")
    return mu_max, mu_star, gain


class RowCache:
    """The rows of Q computed so far, least recently used first (LIBSVM's cache, by rows):
    ``get`` is a gradient update's request; a miss computes the row (``misses`` counts them)
    and, when more than ``capacity`` rows are held, drops the least recently used one.
    ``capacity=None``: every row stays; ``prefill``: every row is there from the start."""

    def __init__(self, n, capacity=None, prefill=False):
        self.capacity = capacity
        self.rows = OrderedDict((i, None) for i in range(n)) if prefill else OrderedDict()
        self.misses = self.hits = 0

    def get(self, i):
        i = int(i)
        if i in self.rows:
            self.hits += 1
            self.rows.move_to_end(i)
            return
        self.misses += 1
        self.rows[i] = None
        if self.capacity is not None and len(self.rows) > self.capacity:
            self.rows.popitem(last=False)


def best_pair_over_rows(alpha, G, Q, y, C, scan, exclude):
    """(B, g_B, mu_max, mu*) of the pair (p, b) of largest gain, p over ``scan`` in its order,
    b ascending, b != p and b not in ``exclude[p]`` (a set per p), the first of equal gains
    (strict >, from gain 0), as best_related_pair. B is None when no pair gains anything."""
    best = (None, 0.0, 0.0, 0.0)
    if len(scan) > 2:  # all rows at once: the same floats, and argmax's first of equal gains
        mu_max, mu_star, gain = gains_with_rows(alpha, G, Q, y, C, np.asarray(scan))
        for r, p in enumerate(scan):
            gain[r, p] = -np.inf
            for b in exclude.get(p, ()):
                gain[r, b] = -np.inf
        r, b = np.unravel_index(int(np.argmax(gain)), gain.shape)
        if gain[r, b] > 0.0:
            best = ((int(scan[r]), int(b)), float(gain[r, b]), float(mu_max[r, b]),
                    float(mu_star[r, b]))
        return best
    for p in scan:
        mu_max, mu_star, gain = gains_with(alpha, G, Q, y, C, p)
        gain = gain.copy()
        gain[p] = -np.inf
        for b in exclude.get(p, ()):
            gain[b] = -np.inf
        b = int(np.argmax(gain))
        if gain[b] > best[1]:
            best = ((int(p), b), float(gain[b]), float(mu_max[b]), float(mu_star[b]))
    return best


def candidate_rows(previous, rows, cache):
    """(scan, exclude) of the MG pair set of variant ``rows`` (see the module's docstring)."""
    p1, p2 = int(previous[0]), int(previous[1])
    if rows == "two":
        return (p1, p2), {p1: {p2}, p2: {p1}}
    if rows == "one":
        return (p2,), {p2: {p1}}
    if rows == "cache":
        return sorted(cache.rows), {p1: {p2}, p2: {p1}}
    raise ValueError(f"rows: None, 'two', 'one' or 'cache', not {rows!r}")


def best_pair(alpha, G, Q, y, C, previous, rows=None, cache=None):
    """best_related_pair for the default; otherwise the best pair of variant ``rows``."""
    if rows is None:
        return best_related_pair(alpha, G, Q, y, C, previous)
    scan, exclude = candidate_rows(previous, rows, cache)
    return best_pair_over_rows(alpha, G, Q, y, C, scan, exclude)


def near_bound(alpha, C, i, eta):
    return alpha[i] <= eta * C[i] or alpha[i] >= C[i] - eta * C[i]


def select_hmg(alpha, G, Q, y, C, eps, previous, eta=ETA, rows=None, cache=None):
    """(pair or None, rule): paper section 2.4 (``rows``, ``cache``: section 4.6's variants)."""
    if previous is None:
        return select_mvp(alpha, G, y, C, eps), MVP
    b1, b2 = previous
    if near_bound(alpha, C, b1, eta) and near_bound(alpha, C, b2, eta):
        return select_mvp(alpha, G, y, C, eps), MVP
    return select_mg(alpha, G, Q, y, C, eps, previous, rows, cache), MG


def mvp_gap(alpha, G, y, C):
    """max_{i in I} y_i G_i - min_{j in J} y_j G_j (0 when I or J is empty)."""
    yG = y * G
    I = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    J = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    return float(yG[I].max() - yG[J].min()) if I.any() and J.any() else 0.0


def solve_hmg(K, y, C, eps=1e-3, eta=ETA, max_iter=100000, rows=None, cache_rows=None,
              prefill=False, final_kkt_check=False, info=None):
    """The decomposition algorithm with HMG from alpha = 0. Returns (alpha, f, trace) with
    trace the list of (b1, b2, rule) of the iterations taken, in order.

    ``rows``: the MG pair set (None: the paper's; "two", "one", "cache": section 4.6, see the
    module's docstring); ``cache_rows``, ``prefill``: the RowCache (capacity in rows; None: all).
    ``final_kkt_check`` (not in the paper): an MG stop is accepted only when the MVP gap is
    < eps as well, otherwise an MVP step is taken (a "continuation") and HMG goes on.
    ``info``: a dict, filled with row misses and hits, continuations, the MVP gap at the
    stop, and first_stop = (iterations, f, MVP gap) at the first stop of the paper's rules
    (with ``final_kkt_check``, where the run without it would have ended)."""
    y = np.asarray(y, np.float64)
    C = np.broadcast_to(np.asarray(C, np.float64), y.shape).copy()
    Q = K * np.outer(y, y)
    alpha = np.zeros(len(y))
    G = np.ones(len(y))  # grad f at alpha = 0
    cache = RowCache(len(y), cache_rows, prefill)
    previous, trace, continuations = None, [], 0
    while len(trace) < max_iter:
        B, rule = select_hmg(alpha, G, Q, y, C, eps, previous, eta, rows, cache)
        if B is None and info is not None and "first_stop" not in info:
            info["first_stop"] = (len(trace), alpha.sum() - 0.5 * alpha @ Q @ alpha,
                                  mvp_gap(alpha, G, y, C))
        if B is None and final_kkt_check and rule == MG:
            B = select_mvp(alpha, G, y, C, eps)
            rule = MVP
            continuations += B is not None
        if B is None:
            break
        cache.get(B[0])
        cache.get(B[1])
        smo_step(alpha, G, Q, y, C, *B)
        trace.append((int(B[0]), int(B[1]), rule))
        previous = B
    f = alpha.sum() - 0.5 * alpha @ Q @ alpha
    if info is not None:
        info.update(row_misses=cache.misses, row_hits=cache.hits, continuations=continuations,
                    gap=mvp_gap(alpha, G, y, C))
    return alpha, f, trace
