"""Signed against unsigned indices in numba's hot row loops (lasvm_cli/numerics/index.py).

Each loop is written twice, identically except for its index: ``K[base + t]`` / ``v[data[t]]``
(signed: numba tests for a negative index on every access) and ``K[at(base, t)]`` /
``v[idx(data[t])]`` (unsigned: no test). Both compute the same values (checked); printed: ns a
position, the minimum over repeated timings (the machine's noise only adds), and the ratio.
The loops are the package's shapes, not its functions: SO's scan (qp/select.py
_so_objectives), SMO's gradient update (qp/smo.py _update_pair), the online core's Newton
update (qp/online_core.py _newton_update) and the by-example copy (cache.py
_copy_by_example). Usage: ``python bench/bench_index.py``.
"""

import time

import numba
import numpy as np

from lasvm_cli.numerics.index import at, idx

N = 36000  # budgetfood's 2l positions
TAU = 1e-12
INF = np.inf


@numba.njit
def so_signed(y, G, status, QD, K, bi, Gmax, n, out):
    for t in range(n):
        grad_diff = Gmax + y[t] * G[t]
        in_low = status[t] != 0 if y[t] > 0 else status[t] != 1
        quad_coef = 1.0 + QD[t] - 2.0 * np.float64(K[bi + t])
        if not quad_coef > 0.0:
            quad_coef = TAU
        out[t] = -(grad_diff * grad_diff) / quad_coef if in_low and grad_diff > 0.0 else INF


@numba.njit
def so_unsigned(y, G, status, QD, K, bi, Gmax, n, out):
    for t in range(n):
        grad_diff = Gmax + y[t] * G[t]
        in_low = status[t] != 0 if y[t] > 0 else status[t] != 1
        quad_coef = 1.0 + QD[t] - 2.0 * np.float64(K[at(bi, t)])
        if not quad_coef > 0.0:
            quad_coef = TAU
        out[t] = -(grad_diff * grad_diff) / quad_coef if in_low and grad_diff > 0.0 else INF


@numba.njit
def update_signed(y, G, K, bi, bj, sdi, sdj, n):
    for t in range(n):
        G[t] += y[t] * (np.float64(K[bi + t]) * sdi + np.float64(K[bj + t]) * sdj)


@numba.njit
def update_unsigned(y, G, K, bi, bj, sdi, sdj, n):
    for t in range(n):
        G[t] += y[t] * (np.float64(K[at(bi, t)]) * sdi + np.float64(K[at(bj, t)]) * sdj)


@numba.njit
def newton_signed(g, K, bk, mu, n):
    for p in range(n):
        g[p] -= mu * np.float64(K[bk + p])


@numba.njit
def newton_unsigned(g, K, bk, mu, n):
    for p in range(n):
        g[p] -= mu * np.float64(K[at(bk, p)])


@numba.njit
def copy_signed(dest, base, have, length, src, pex):
    for t in range(have, length):
        dest[base + t] = src[pex[t]]


@numba.njit
def copy_unsigned(dest, base, have, length, src, pex):
    for t in range(have, length):
        dest[at(base, t)] = src[idx(pex[idx(t)])]


def best_ns(fn, args, n=N, repeats=300, inner=5):
    """ns a position of fn(*args) over n positions: the minimum over ``repeats`` timings of
    ``inner`` calls (the machine's noise only adds); bench_gap_scan.py uses it too."""
    fn(*args)
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            fn(*args)
        best = min(best, time.perf_counter() - t)
    return best / inner / n * 1e9


def main():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(N) < 0.5, 1.0, -1.0)
    G = rng.standard_normal(N)
    status = rng.integers(0, 3, N).astype(np.int8)
    QD = np.ones(N)
    K = rng.random(N * 8).astype(np.float32)  # rows at offsets, as in the cache's buffer
    pex = rng.permutation(np.concatenate([np.arange(N // 2), np.arange(N // 2)]))
    by_example = rng.random(N // 2)
    cases = {
        "SO scan": (so_signed, so_unsigned, lambda: (y, G, status, QD, K, 3 * N, 0.5, N,
                                                     np.empty(N)), -1),
        "SMO gradient update": (update_signed, update_unsigned,
                                lambda: (y, G.copy(), K, 2 * N, 5 * N, 1e-9, -1e-9, N), 1),
        "Newton update": (newton_signed, newton_unsigned,
                          lambda: (G.copy(), K, 4 * N, 1e-9, N), 0),
        "by-example copy": (copy_signed, copy_unsigned,
                            lambda: (np.zeros(2 * N, np.float32), N, 0, N, by_example, pex), 0),
    }
    print("| loop | signed (ns a position) | unsigned | unsigned / signed |")
    print("|---|---:|---:|---:|")
    for name, (signed, unsigned, make_args, result) in cases.items():
        a_s, a_u = make_args(), make_args()
        signed(*a_s)
        unsigned(*a_u)
        assert np.array_equal(a_s[result], a_u[result]), name  # the same values either way
        t_s, t_u = best_ns(signed, make_args()), best_ns(unsigned, make_args())
        print(f"| {name} | {t_s:.2f} | {t_u:.2f} | {t_u / t_s:.2f} |", flush=True)


if __name__ == "__main__":
    main()
