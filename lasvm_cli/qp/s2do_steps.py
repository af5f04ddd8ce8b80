"""S2DO's closed-form pieces (Trinh 2012, ch. 3 and §5.2.2, with corrections of the printed
algorithms): the unconstrained two-variable gain that
chooses the second variable (Algorithm 4), and the exact two-variable steps on a box
(Algorithm 5, corrected) and on a triangle (Algorithm 11, corrected).

All work on the sub-problem  max_mu  g'mu - 0.5 mu'Q_B mu  with Q_B = [[q11, q12], [q12, q22]],
the pre-step gradients g = (g1, g2), and bounds on the *steps* mu (not on alpha): a box
lo1 <= mu1 <= hi1, lo2 <= mu2 <= hi2 (lo = -alpha, hi = U - alpha), or the triangle
mu1 >= -a1, mu2 >= -a2, mu1 + mu2 <= s (s = U - a1 - a2). Shark's thresholds (1e-12) decide
when a curvature or determinant counts as zero (corrections 004-7).
"""

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)

_NJIT = dict(cache=True, nogil=True)
TINY = 1e-12
GAIN_RIDGE = 1e-6  # Shark: added to both diagonal entries of a (near) singular Q_B for the gain


@numba.njit(inline="always", **_NJIT)
def gain2(g1, g2, q11, q12, q22):
    """Algorithm 4 (corrections 004-6): 0.5 g_B' Q_B^-1 g_B, the increase at the unconstrained
    optimum; a (near) singular Q_B gets Shark's ridge instead of the thesis's infinite gain.
    The ridge is a select, not a branch (the same values: adding 0.0 changes nothing), so a
    loop of gains vectorises (s2do.select_second)."""
    det = q11 * q22 - q12 * q12
    ridge = GAIN_RIDGE if (det <= TINY * q11 * q22) | (det <= 0.0) else 0.0
    q11 += ridge
    q22 += ridge
    det = q11 * q22 - q12 * q12
    return (g1 * g1 * q22 - 2.0 * g1 * g2 * q12 + g2 * g2 * q11) / (2.0 * det)


@numba.njit(inline="always", **_NJIT)
def increase(g1, g2, q11, q12, q22, m1, m2):
    """The exact dual increase of a step: g'mu - 0.5 mu'Q_B mu (corrections 004-9)."""
    return g1 * m1 + g2 * m2 - 0.5 * (q11 * m1 * m1 + 2.0 * q12 * m1 * m2 + q22 * m2 * m2)


@numba.njit(inline="always", **_NJIT)
def edge(num, q, lo, hi):
    """One-variable maximiser of num*mu - 0.5 q mu^2 on [lo, hi]; zero curvature: the bound in
    the direction of num (corrections 004-7)."""
    if q > TINY:
        m = num / q
        if m < lo:
            return lo
        if m > hi:
            return hi
        return m
    if num > 0.0:
        return hi
    if num < 0.0:
        return lo
    return 0.0


@numba.njit(**_NJIT)
def solve_box(g1, g2, q11, q12, q22, lo1, hi1, lo2, hi2):
    """Algorithm 5, corrected: the exact step on the box; returns (mu1, mu2)."""
    det = q11 * q22 - q12 * q12
    if det > TINY and det > TINY * q11 * q22:
        m1 = (q22 * g1 - q12 * g2) / det
        m2 = (q11 * g2 - q12 * g1) / det
        if lo1 <= m1 <= hi1 and lo2 <= m2 <= hi2:
            return m1, m2
    # the optimum is on an edge: alpha_1 at U, alpha_1 at L, alpha_2 at U, alpha_2 at L
    b1 = hi1
    b2 = edge(g2 - q12 * hi1, q22, lo2, hi2)
    best = increase(g1, g2, q11, q12, q22, b1, b2)
    c1 = lo1
    c2 = edge(g2 - q12 * lo1, q22, lo2, hi2)
    v = increase(g1, g2, q11, q12, q22, c1, c2)
    if v > best:
        best, b1, b2 = v, c1, c2
    c2 = hi2
    c1 = edge(g1 - q12 * hi2, q11, lo1, hi1)
    v = increase(g1, g2, q11, q12, q22, c1, c2)
    if v > best:
        best, b1, b2 = v, c1, c2
    c2 = lo2
    c1 = edge(g1 - q12 * lo2, q11, lo1, hi1)
    v = increase(g1, g2, q11, q12, q22, c1, c2)
    if v > best:
        best, b1, b2 = v, c1, c2
    return b1, b2


@numba.njit(**_NJIT)
def solve_triangle(g1, g2, q11, q12, q22, a1, a2, s):
    """Algorithm 11, corrected: the exact step on mu1 >= -a1, mu2 >= -a2, mu1 + mu2 <= s
    (two variables of one Crammer-Singer example, s = U - a1 - a2); returns (mu1, mu2)."""
    det = q11 * q22 - q12 * q12
    if det > TINY and det > TINY * q11 * q22:
        m1 = (q22 * g1 - q12 * g2) / det
        m2 = (q11 * g2 - q12 * g1) / det  # the thesis prints the opposite sign
        if m1 >= -a1 and m2 >= -a2 and m1 + m2 <= s:
            return m1, m2
    # edge 1: alpha_1 = 0
    b1 = -a1
    b2 = edge(g2 + q12 * a1, q22, -a2, s + a1)
    best = increase(g1, g2, q11, q12, q22, b1, b2)
    # edge 2: alpha_2 = 0
    c2 = -a2
    c1 = edge(g1 + q12 * a2, q11, -a1, s + a2)
    v = increase(g1, g2, q11, q12, q22, c1, c2)
    if v > best:
        best, b1, b2 = v, c1, c2
    # edge 3: the sum at U (mu1 + mu2 = s)
    c1 = edge(g1 - g2 + s * (q22 - q12), q11 + q22 - 2.0 * q12, -a1, s + a2)
    c2 = s - c1
    v = increase(g1, g2, q11, q12, q22, c1, c2)
    if v > best:
        best, b1, b2 = v, c1, c2
    return b1, b2
