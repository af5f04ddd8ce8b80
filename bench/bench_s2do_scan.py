"""S2DO's second-variable scan (qp/s2do.py select_second): the old loop against the product's.

The old form kept a running argmax through branches per variable (which may move, then its
Algorithm-4 gain); the product writes every variable's gain into the state's scratch W in a
branch-free loop that vectorises and finds the first largest by an integer max over the gains'
order keys (qp.select.first_argmax_above). Both pick the same variable (checked). The states
are realistic: the online solver (--multiclass cs / llw --solver online, the thesis's C and
gamma) on usps, paused after 2,000, 5,000 and all 7,291 examples; the first variable is
select_first's. Printed: ns a variable (the minimum over repeated timings) and the ratio.
Data: $LASVM_DATA/usps (default: the folder `lasvm data fetch` fills, see docs/data.md).
Usage: ``python bench/bench_s2do_scan.py``.
"""


import numba
import numpy as np

from bench_index import best_ns  # bench/ is the script's directory
from lasvm_cli.numerics import cache as kc
from lasvm_cli.numerics.classes import group_classes
from lasvm_cli.numerics.data import Problem, subset
from lasvm_cli.tools.datasets import data_dir
from lasvm_cli.numerics.index import idx
from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.numerics.kernels import RBF, make_params
from lasvm_cli.qp import s2do
from lasvm_cli.qp.s2do import C_, CS, D, KIND, LLW, mcoef
from lasvm_cli.solvers.s2do_online import S2doRun

DATA = data_dir()  # $LASVM_DATA, else the cache folder (lasvm data fetch)
GAMMA = 0.0331574  # the thesis's usps gamma; C: LLW 100, CS 10 (bench/paper_004.py SETTINGS)


@numba.njit(inline="always")
def old_gain2(g1, g2, q11, q12, q22):
    det = q11 * q22 - q12 * q12
    if det <= 1e-12 * q11 * q22 or det <= 0.0:
        q11 += 1e-6
        q22 += 1e-6
        det = q11 * q22 - q12 * q12
    return (g1 * g1 * q22 - 2.0 * g1 * g2 * q12 + g2 * g2 * q11) / (2.0 * det)


@numba.njit
def old_select_second(st, K1, lo, hi, m, p, supports_only):
    """select_second before the branch-free loop, verbatim but for the gain's inlined copy."""
    d = st.ist[D]
    kind = st.ist[KIND]
    C = st.fst[C_]
    A, G, S, yc, KD = st.A, st.G, st.S, st.yc, st.KD
    diag = (1.0 - 1.0 / d) if kind == LLW else 2.0
    g1 = G[m, p]
    q11 = diag * KD[m]
    ym = yc[m]
    n, q, best = -1, -1, -1.0
    for t in range(lo, hi):
        u = idx(t)
        yt = yc[u]
        q22 = diag * KD[u]
        k = np.float64(K1[u])
        grow_all = kind == CS and (S[u] < C or t == m)
        for c in range(d):
            if c == yt or (t == m and c == p):
                continue
            a = A[u, c]
            if supports_only and a == 0.0:
                continue
            g = G[u, c]
            if g > 0.0:
                if not (grow_all or (kind == LLW and a < C)):
                    continue
            elif g < 0.0:
                if a <= 0.0:
                    continue
            else:
                continue
            v = old_gain2(g1, g, q11, mcoef(kind, d, ym, p, yt, c) * k, q22)
            if v > best:
                n, q, best = t, c, v
    return n, q


def states(kind, C, stops=(2000, 5000, 7291)):
    """(run, kd, kp) of the online solver on usps, paused after each number of examples."""
    p = Problem.from_svmlight(read_svmlight(str(DATA / "usps" / "train.svm.xz")))
    label, _, count, perm = group_classes(p.y)
    yc = np.repeat(np.arange(label.size), count).astype(np.int64)
    kd, kp = subset(p.kd, perm), make_params(RBF, 3, GAMMA, 0.0)
    run = S2doRun(kd, kp, yc, label.size, C, kind)
    run.begin()
    done = 0
    for stop in stops:
        while done < stop:
            done += run.step(stop - done)
        yield run, kd, kp


def main():
    print("| machine | support patterns | variables | old loop (ns a variable) | product |"
          " product / old |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, kind, C in (("CS", CS, 10.0), ("LLW", LLW, 100.0)):
        for run, kd, kp in states(kind, C):
            st = run.st
            nW = int(st.ist[s2do.ACTIVE])
            m, p, *_ = s2do.select_first(st, 0, nW, False)
            K1 = kc.cache_get(run.c, kd, kp, run.c.pex[m], nW)
            args = (st, K1, 0, nW, m, p, False)
            assert old_select_second(*args) == s2do.select_second(*args)  # the same choice
            n_var = nW * (int(st.ist[D]) - 1)
            t_old = best_ns(old_select_second, args, n_var, 50, 5)
            t_new = best_ns(s2do.select_second, args, n_var, 50, 5)
            print(f"| {name} | {nW} | {n_var} | {t_old:.2f} | {t_new:.2f} | {t_new / t_old:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
