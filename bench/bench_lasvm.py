"""LASVM x1 (one epoch + finishing) against LIBSVM 3.37 (libsvm-official, in-process), same run.

    python bench/bench_lasvm.py [adult] [mnist] [--mnist-rows 20000] [--cache-mb 256] [--seeds 5]

Data from $LASVM_DATA (default: the folder `lasvm data fetch` fills, see docs/data.md): adult
train/test with -c 100 -g 0.005 (the LASVM paper's setting); mnist 8-vs-rest, pixels/255, -c
1000 -g 0.005 on a random training sample. Prints one table: train time (s), ratio LASVM/LIBSVM,
test error (%), #SV, kernel evaluations (LIBSVM's are not exposed by the binding: "-"). LASVM's
example order is random: it runs with seeds 0..N-1 (--seeds) and prints one row per seed and
their mean (the error's range in brackets). Test decision values are computed with
lasvm_cli.numerics.kernels (the same for both models).
"""

import argparse
import sys
import time
from pathlib import Path

import numba
import numpy as np
from numba import prange

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lasvm_cli.numerics.data import kernel_data  # noqa: E402
from lasvm_cli.io.svmlight import read_svmlight  # noqa: E402
from lasvm_cli.numerics.kernels import RBF, kernel_row_serial, make_params  # noqa: E402
from lasvm_cli.solvers.lasvm import solve_lasvm  # noqa: E402


def data_dir():
    """The data folder (lasvm_cli.tools.datasets.data_dir: $LASVM_DATA, else the cache folder)."""
    from lasvm_cli.tools.datasets import data_dir as where

    return where()


@numba.njit(parallel=True, cache=True)
def _decision(kd_test, kd, sv, coef, rho, kp, out):
    for t in prange(out.shape[0]):
        row = np.empty(sv.shape[0])
        kernel_row_serial(kd_test, t, kd, sv, kp, row)
        s = 0.0
        for q in range(sv.shape[0]):
            s += coef[q] * row[q]
        out[t] = s - rho


def decision(kd, kp, sv, coef, rho, kd_test):
    out = np.empty(kd_test.x_sq.shape[0])
    _decision(kd_test, kd, np.asarray(sv, np.int64), np.asarray(coef, np.float64), float(rho),
              kp, out)
    return out


def libsvm_run(d, y, opts):
    from libsvm import svmutil

    import scipy.sparse as sp

    width = int(d.indices.max())
    X = sp.csr_matrix((d.values, d.indices - 1, d.indptr), shape=(len(d.indptr) - 1, width))
    t = time.perf_counter()
    m = svmutil.svm_train(svmutil.svm_problem(list(y), X), opts + " -q")
    secs = time.perf_counter() - t
    sv = np.asarray(m.get_sv_indices(), np.int64) - 1
    coef = np.array([c[0] for c in m.get_sv_coef()])
    sign = 1.0 if m.get_labels()[0] == 1 else -1.0  # decision > 0 means label[0]
    return secs, sv, sign * coef, sign * m.rho[0]


def sample(d, rows):
    starts, stops = d.indptr[rows], d.indptr[rows + 1]
    idx = np.concatenate([d.indices[a:b] for a, b in zip(starts, stops)])
    val = np.concatenate([d.values[a:b] for a, b in zip(starts, stops)])
    indptr = np.concatenate([[0], np.cumsum(stops - starts)]).astype(np.int64)
    d.indptr, d.indices, d.values, d.y = indptr, idx, val, d.y[rows]
    return d


def run_case(name, tr, te, y_tr, y_te, C, gamma, cache_mb, rows, dense=None, seeds=1):
    width = int(max(tr.max_index, te.max_index)) + 1
    # training rows stored as svm-train stores them (float32 for large dense data, data.py)
    kd = kernel_data(tr.indptr, tr.indices, tr.values, width=width, dense=dense,
                     x_storage="auto")
    kd_te = kernel_data(te.indptr, te.indices, te.values, width=width, dense=dense)
    kp = make_params(RBF, gamma=gamma)
    # warm the JIT outside the timings
    small = np.arange(min(200, len(y_tr)))
    from lasvm_cli.numerics.data import subset

    solve_lasvm(subset(kd, small), kp, y_tr[small], C, C, epochs=1)
    decision(kd, kp, small[:2], np.zeros(2), 0.0, kd_te)

    t_lib, sv_lib, coef_lib, rho_lib = libsvm_run(tr, y_tr, f"-c {C!r} -g {gamma!r} -m {cache_mb}")
    err_lib = 100 * np.mean(np.where(decision(kd, kp, sv_lib, coef_lib, rho_lib, kd_te) > 0, 1,
                                     -1) != y_te)
    rows.append((name, "LIBSVM", t_lib, 1.0, err_lib, len(sv_lib), "-", "-"))
    runs = []
    for seed in range(seeds):
        t = time.perf_counter()
        r = solve_lasvm(kd, kp, y_tr, C, C, epochs=1, finish=True, cache_mb=cache_mb, seed=seed)
        t_la = time.perf_counter() - t
        sv = np.flatnonzero(r.coef[0])
        err_la = 100 * np.mean(np.where(decision(kd, kp, sv, r.coef[0][sv], r.rho[0], kd_te) > 0, 1, -1)
                               != y_te)
        runs.append((t_la, err_la, r.n_sv, r.counters["kernel_evals"], -r.obj))
        rows.append((name, f"seed {seed}", t_la, t_la / t_lib, err_la, r.n_sv,
                      r.counters["kernel_evals"], f"{-r.obj:.6g}"))
    if seeds > 1:
        t_m, e_m, n_m, k_m, w_m = (float(np.mean(c)) for c in zip(*runs))
        errs = [e for _, e, *_ in runs]
        rows.append((name, "LASVMx1", t_m, t_m / t_lib, e_m, round(n_m), round(k_m),
                     f"[{min(errs):.2f}-{max(errs):.2f}]"))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=["adult", "mnist"])
    ap.add_argument("--mnist-rows", type=int, default=20000)
    ap.add_argument("--cache-mb", type=float, default=256.0)
    ap.add_argument("--seeds", type=int, default=5, help="LASVM runs with seeds 0..N-1")
    ap.add_argument("--storage", choices=["auto", "dense", "sparse"], default="auto",
                    help="feature storage for our kernels (auto: sparse for adult, whose rows "
                         "hold 14 of 123 features; lasvm_cli.numerics.data's rule otherwise)")
    args = ap.parse_args()
    rows = []
    dd = data_dir()
    for case in args.cases:
        if case == "adult":
            tr = read_svmlight(str(dd / "adult" / "train.svm.xz"))
            te = read_svmlight(str(dd / "adult" / "test.svm.xz"))
            run_case("adult", tr, te, np.where(tr.y > 0, 1.0, -1.0), np.where(te.y > 0, 1.0, -1.0),
                     100.0, 0.005, args.cache_mb, rows,
                     dense={"auto": False, "dense": True, "sparse": False}[args.storage],
                     seeds=args.seeds)
        elif case == "mnist":
            tr = read_svmlight(str(dd / "mnist" / "train.svm.xz"))
            te = read_svmlight(str(dd / "mnist" / "test.svm.xz"))
            rng = np.random.default_rng(0)
            keep = np.sort(rng.choice(len(tr.y), size=min(args.mnist_rows, len(tr.y)),
                                      replace=False))
            tr = sample(tr, keep)
            tr.values = tr.values / 255.0
            te.values = te.values / 255.0
            run_case(f"mnist8/{len(keep)}", tr, te, np.where(tr.y == 8, 1.0, -1.0),
                     np.where(te.y == 8, 1.0, -1.0), 1000.0, 0.005, args.cache_mb, rows,
                     dense={"auto": None, "dense": True, "sparse": False}[args.storage],
                     seeds=args.seeds)
        else:
            ap.error(f"unknown case {case}")
        print_table(rows)


def print_table(rows):
    print(f"{'data':<14}{'solver':<9}{'time s':>9}{'ratio':>7}{'err %':>8}{'#SV':>7}"
          f"{'k-evals':>14}{'dual W / err range':>20}")
    for name, solver, t, ratio, err, nsv, kev, w in rows:
        print(f"{name:<14}{solver:<9}{t:>9.2f}{ratio:>7.2f}{err:>8.2f}{nsv:>7}{kev:>14}{w:>20}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
