"""Pure two-variable steps and the pair gain (no state, no rows: scalars in, scalars out).

Two forms of the same sub-problem, min over the line through (alpha_i, alpha_j) that keeps the
equality constraint:

* :func:`step_libsvm`: LIBSVM's update (Fan, Chen & Lin 2005; svm.cpp ``Solver::Solve``) in its
  unsigned form, 0 <= a <= C, gradient G = Q a + p of 0.5 a'Qa + p'a with Q_ij = y_i y_j K_ij.
  The SMO core uses it so that its arithmetic, and hence its iterations, match LIBSVM's exactly.
* :func:`step_pair` and :func:`pair_gain`: the signed form (Bordes et al. 2005 eq. 9),
  alpha_i = y_i a_i in [A_i, B_i], g_i = y_i - sum_j alpha_j K_ij, direction +1 on i, -1 on j.
  The two are tied by alpha = y a and g_i = -y_i G_i (tests/test_steps.py pins it).

Gain on the line: Glasmachers & Igel 2006, eq. (3): with curvature kappa = K_ii + K_jj - 2 K_ij
and slope w = g_i - g_j, the clipped step mu* in [L, U] gains  mu* w - kappa mu*^2 / 2  (valid
for kappa <= 0 too, where the step goes to the bound the slope points at).
"""

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)

_NJIT = dict(cache=True, nogil=True)

TAU = 1e-12


@numba.njit(**_NJIT)
def step_libsvm(ai, aj, yi, yj, Gi, Gj, Ci, Cj, quad_coef):
    """LIBSVM's clipped two-variable update; returns the new (a_i, a_j).

    ``quad_coef`` = QD_i + QD_j - 2 K_ij (the caller computes it from the cached row, so the
    rounding is LIBSVM's); replaced by TAU when <= 0.
    """
    if quad_coef <= 0.0:
        quad_coef = TAU
    if yi != yj:
        delta = (-Gi - Gj) / quad_coef
        diff = ai - aj
        ai += delta
        aj += delta
        if diff > 0.0:
            if aj < 0.0:
                aj = 0.0
                ai = diff
        else:
            if ai < 0.0:
                ai = 0.0
                aj = -diff
        if diff > Ci - Cj:
            if ai > Ci:
                ai = Ci
                aj = Ci - diff
        else:
            if aj > Cj:
                aj = Cj
                ai = Cj + diff
    else:
        delta = (Gi - Gj) / quad_coef
        s = ai + aj
        ai -= delta
        aj += delta
        if s > Ci:
            if ai > Ci:
                ai = Ci
                aj = s - Ci
        else:
            if aj < 0.0:
                aj = 0.0
                ai = s
        if s > Cj:
            if aj > Cj:
                aj = Cj
                ai = s - Cj
        else:
            if ai < 0.0:
                ai = 0.0
                aj = s
    return ai, aj


@numba.njit(**_NJIT)
def step_pair(gi, gj, ai, aj, Bi, Aj, kappa):
    """SMO/LASVM line step in the signed form: lambda >= 0 moving alpha_i up, alpha_j down.

    lambda = min{(g_i - g_j) / max(kappa, TAU), B_i - alpha_i, alpha_j - A_j}
    (Bordes et al. 2005, section 3.1), for a violating pair (g_i > g_j).
    """
    lam = (gi - gj) / (kappa if kappa > TAU else TAU)
    if Bi - ai < lam:
        lam = Bi - ai
    if aj - Aj < lam:
        lam = aj - Aj
    return lam


@numba.njit(**_NJIT)
def pair_gain(gi, gj, ai, aj, Ai, Bi, Aj, Bj, kappa):
    """(gain, mu*) of the pair (i, j) in the signed form: alpha_i += mu*, alpha_j -= mu*.

    mu* maximises the dual on the feasible segment L <= mu <= U with
    U = min(B_i - alpha_i, alpha_j - A_j), L = max(A_i - alpha_i, alpha_j - B_j);
    gain = mu* w - kappa mu*^2 / 2 with w = g_i - g_j (Glasmachers & Igel 2006, eq. 3).
    """
    U = Bi - ai
    t = aj - Aj
    if t < U:
        U = t
    L = Ai - ai
    t = aj - Bj
    if t > L:
        L = t
    w = gi - gj
    if kappa > TAU:
        mu = w / kappa
        if mu > U:
            mu = U
        elif mu < L:
            mu = L
    else:
        mu = U if w > 0.0 else (L if w < 0.0 else 0.0)
    return mu * w - 0.5 * kappa * mu * mu, mu
