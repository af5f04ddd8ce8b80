"""The bias-free gap loop's scan (qp/lasvm_g_core.py step_scan): one loop against lanes.

Each REPROCESS step of LASVM-G / -NC / -I / FULL SVM updates g over the expansion S and then
needs the duality gap and the maximal KKT violator of S. The old form did all of it in one loop
that kept a running argmax (its branches and its chain of dependent compares kept the loop
scalar, about 25 instructions a position); the product's form: one pass in explicit vector
lanes (ordered.gap_pass: the update, the gap's sum lane by lane in a fixed order, and in each
lane the largest violation as integer bits, which vectorises (violations are never negative),
with its first position). Both give the same index and violation (checked) and the same gap to
rounding (the sums' orders differ). Printed: ns a position, the minimum over repeated timings,
for sizes of S that adult's LASVM-I and -NC reach. Usage: ``python bench/bench_gap_scan.py``.
"""

import numba
import numpy as np

from bench_index import best_ns  # bench/ is the script's directory
from lasvm_cli.numerics.index import at
from lasvm_cli.numerics.ordered import gap_pass, gap_term


@numba.njit
def one_loop(g, alpha, A, B, K, bk, mu, n):
    """The old single loop (lasvm_g_core.step_scan's scan before the vector lanes), verbatim."""
    s = 0.0
    j = -1
    best = 0.0
    for p in range(n):
        if mu != 0.0:
            g[p] -= mu * np.float64(K[at(bk, p)])
        gp = g[p]
        a = alpha[p]
        s += gap_term(gp, a, A[p], B[p])
        if gp > best and a < B[p]:
            best = gp
            j = p
        elif -gp > best and a > A[p]:
            best = -gp
            j = p
    return s, j, best


@numba.njit
def lanes(g, alpha, A, B, K, bk, mu, n):
    """The product's pass (ordered.gap_pass, what step_scan calls)."""
    return gap_pass(g, alpha, A, B, K, bk, mu, n)


def problem(n, seed=0):
    """Boxes [0, C] / [-C, 0] with C = 100, a third of the alphas at a bound, a third at 0
    (LASVM-I on adult: -c 100), gradients of the size the gap loop leaves, K in [0.87, 1]
    (adult's kernel values at gamma = 0.005)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    A, B = np.where(y > 0, 0.0, -100.0), np.where(y > 0, 100.0, 0.0)
    alpha = np.where(rng.random(n) < 0.3, A + B, rng.random(n) * (A + B))
    alpha[rng.random(n) < 0.3] = 0.0
    g = 0.1 * rng.standard_normal(n)
    K = (0.87 + 0.13 * rng.random(2 * n)).astype(np.float32)
    return g, alpha, A, B, K


def main():
    print("| positions in S | one loop (ns a position) | vector lanes | lanes / one |")
    print("|---:|---:|---:|---:|")
    for n in (2000, 5000, 12000):
        g, alpha, A, B, K = problem(n)
        g1, g3 = g.copy(), g.copy()
        s1, j1, v1 = one_loop(g1, alpha, A, B, K, n // 2, 1e-3, n)
        s3, j3, v3 = lanes(g3, alpha, A, B, K, n // 2, 1e-3, n)
        assert np.array_equal(g1, g3) and (j1, v1) == (j3, v3), n  # the same step either way
        assert abs(s1 - s3) <= 1e-12 * abs(s1), n
        # timed with a tiny step: the update runs, and g hardly moves between repetitions
        t1 = best_ns(one_loop, (g1, alpha, A, B, K, n // 2, 1e-12, n), n, 200, 20)
        t3 = best_ns(lanes, (g3, alpha, A, B, K, n // 2, 1e-12, n), n, 200, 20)
        print(f"| {n} | {t1:.2f} | {t3:.2f} | {t3 / t1:.2f} |", flush=True)


if __name__ == "__main__":
    main()
