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
"""

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


def select_mg(alpha, G, Q, y, C, eps, previous):
    """The MG pair, or None at the stop: |mu*| < eps (paper section 2.3)."""
    B, _, _, mu_star = best_related_pair(alpha, G, Q, y, C, previous)
    if B is None or abs(mu_star) < eps:
        return None
    return B


def near_bound(alpha, C, i, eta):
    return alpha[i] <= eta * C[i] or alpha[i] >= C[i] - eta * C[i]


def select_hmg(alpha, G, Q, y, C, eps, previous, eta=ETA):
    """(pair or None, rule): paper section 2.4."""
    if previous is None:
        return select_mvp(alpha, G, y, C, eps), MVP
    b1, b2 = previous
    if near_bound(alpha, C, b1, eta) and near_bound(alpha, C, b2, eta):
        return select_mvp(alpha, G, y, C, eps), MVP
    return select_mg(alpha, G, Q, y, C, eps, previous), MG


def solve_hmg(K, y, C, eps=1e-3, eta=ETA, max_iter=100000):
    """The decomposition algorithm with HMG from alpha = 0. Returns (alpha, f, trace) with
    trace the list of (b1, b2, rule) of the iterations taken, in order."""
    y = np.asarray(y, np.float64)
    C = np.broadcast_to(np.asarray(C, np.float64), y.shape).copy()
    Q = K * np.outer(y, y)
    alpha = np.zeros(len(y))
    G = np.ones(len(y))  # grad f at alpha = 0
    previous, trace = None, []
    while len(trace) < max_iter:
        B, rule = select_hmg(alpha, G, Q, y, C, eps, previous, eta)
        if B is None:
            break
        smo_step(alpha, G, Q, y, C, *B)
        trace.append((int(B[0]), int(B[1]), rule))
        previous = B
    f = alpha.sum() - 0.5 * alpha @ Q @ alpha
    return alpha, f, trace
