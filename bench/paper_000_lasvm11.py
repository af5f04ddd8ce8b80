"""LASVM x1 beside LaSVM 1.1 (Bottou's la_svm) and our SMO, in the same example orders
(seed 000; Bordes et al. 2005, Figures 7-9).

    LASVM11_BIN=/path/to/built/la_svm python bench/paper_000_lasvm11.py \
        [--only Banana USPS ...] [--orders 3] [--rows N] [--gamma G]
        [--bail-outs lasvm11,printed] [--finishings reprocess,smo,reprocess-shrinking]
        [--out results/paper-000-lasvm11]

For every problem of Figure 7 (bench/paper_000.py's set-up: RBF, its gamma and C, 40 MB
cache, tau = 0.001) and every order o < --orders, the training rows are permuted (seed o) and
written to OUT/NAME-o.train.svm (labels +1/-1, values printed to round-trip), so that la_svm
and we read the same numbers. LaSVM 1.1 draws its examples with C's rand() never seeded;
ours replays that order with rng="glibc", seed=1 (online_core.make_rng), and its kernel-row
policy with symmetric_fill=True: on the same file both visit the same examples in the same
order (the first 5 of each class in file order as seeds, then rand() % unseen).

Rows, one per order:

* ``LaSVM 1.1 -o 0|1``: la_svm -g G -c C -m 40 -e 0.001 (-o 0: online epoch only, -o 1: with
  its finishing). SVs, ||w||^2 (its dual W), kcalcs as it prints them; the test error of the
  model it saves (read by LIBSVM's svm_load_model; la_svm drops at save time the SVs with
  |alpha| < max|alpha|/1000); the time is the wall time minus that of a run stopped after one
  example (``-T 0 -l 1``: reading the file).
* ``ours, online``: the same epoch; then ``ours, finish=reprocess`` (the paper's step 3 and
  LaSVM 1.1's rule) and ``ours, finish=smo`` (our default, solvers/finishing.py), and with
  ``--finishings`` also ``ours, finish=reprocess-shrinking`` (the paper's step 3 with its
  shrinking, LaSVM 1.1's lasvm_finish).
* ``ours, SMO``: our batch SMO (solvers/csvc.py), the same kernel and cache.

Kernel evaluations: ours count every K(x_i, x_j) computed (kernel_evals); la_svm counts calls
of its kernel function. Writes OUT/lasvm11.csv and prints one line per run. Without
LASVM11_BIN (or when it is absent) the LaSVM 1.1 rows are skipped. --rows N keeps N training
rows (drawn at random, seed 0) for large problems; --gamma G replaces Figure 7's gamma (USPS+N
at gamma = 0.5: docs/reproductions/seed-000.md, section 1). ``--bail-outs lasvm11,printed``
adds our rows with the paper's REPROCESS bail-out (``bail_out="printed"``, svm-train's
``--bail-out printed``: a REPROCESS that finds no tau-violating pair does nothing), marked
", printed bail-out".
"""

import argparse
import csv
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from paper_000 import problem, take_rows, test_error  # noqa: E402

CACHE_MB = 40
TAU = 1e-3


def write_svm(path, d, y, order):
    with open(path, "w") as f:
        for i in order:
            a, b = d.indptr[i], d.indptr[i + 1]
            feats = " ".join(f"{j}:{float(v)!r}" for j, v in zip(d.indices[a:b], d.values[a:b]))
            f.write(f"{int(y[i]):d} {feats}\n")


def lasvm11(binary, train, test, gamma, C, finish, workdir):
    """One la_svm run: dict of its printed numbers, test error and time."""
    from libsvm import svmutil

    model = workdir / (Path(train).stem + f".o{finish}.model")
    args = [binary, "-g", repr(gamma), "-c", repr(C), "-m", str(CACHE_MB), "-e", repr(TAU),
            "-o", str(finish), str(train), str(model)]
    t = time.perf_counter()
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - t
    t = time.perf_counter()
    subprocess.run(args[:-2] + ["-T", "0", "-l", "1", str(train), str(model) + ".load"],
                   capture_output=True, text=True, check=True)
    load = time.perf_counter() - t
    y_te, x_te = svmutil.svm_read_problem(str(test))
    _, (acc, _, _), _ = svmutil.svm_predict(y_te, x_te, svmutil.svm_load_model(str(model)),
                                            "-q")
    return dict(sv=int(re.search(r"nSVs=(\d+)", out)[1]),
                dual=float(re.search(r"\|\|w\|\|\^2=(\S+)", out)[1]),
                kcalcs=int(re.search(r"kcalcs=(\d+)", out)[1]),
                error=100.0 - acc, seconds=wall - load)


def ours(kd, kd_te, kp, y, y_te, C, finishing, bail_out="lasvm11"):
    """Our LASVM x1 in LaSVM 1.1's order: (online-phase row, finished row)."""
    from lasvm_cli.solvers.lasvm import LasvmRun

    t = time.perf_counter()
    run = LasvmRun(kd, kp, y, C, C, eps=TAU, cache_mb=CACHE_MB, rng="glibc", seed=1,
                   symmetric_fill=True, finishing=finishing, bail_out=bail_out)
    run.begin()
    while run.online:
        run.step()
    t_online = time.perf_counter() - t
    coef, rho = run.coef_rho()
    online = dict(sv=int(np.count_nonzero(coef)), dual=run.dual_objective(),
                  kcalcs=run.kernel_evals, seconds=t_online,
                  error=test_error(kd, kd_te, kp, coef, rho, y_te))
    t = time.perf_counter()
    run.run_to_end()
    t_finish = time.perf_counter() - t
    r = run.result()
    done = dict(sv=r.n_sv, dual=-r.obj, kcalcs=run.kernel_evals, seconds=t_online + t_finish,
                error=test_error(kd, kd_te, kp, r.coef[0], r.rho[0], y_te),
                finish_steps=r.counters["finish_steps"])
    return online, done


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=["Banana", "USPS", "USPS+N", "Reuters"])
    ap.add_argument("--orders", type=int, default=3)
    ap.add_argument("--rows", type=int, default=0)
    ap.add_argument("--gamma", type=float, default=None)
    ap.add_argument("--bail-outs", default="lasvm11",
                    help="comma-separated: lasvm11 (LaSVM 1.1's REPROCESS bail-out, the "
                         "default) and/or printed (the paper's: a bail-out does nothing)")
    ap.add_argument("--finishings", default="reprocess,smo",
                    help="comma-separated finishing rules of our rows (the first also gives "
                         "the online row): reprocess, smo, reprocess-shrinking")
    ap.add_argument("--out", default="results/paper-000-lasvm11")
    args = ap.parse_args(argv)
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.io.svmlight import read_svmlight
    from lasvm_cli.numerics.kernels import RBF, make_params
    from lasvm_cli.solvers.csvc import solve_binary

    binary = os.environ.get("LASVM11_BIN")
    if binary and not Path(binary).is_file():
        binary = None
    if binary is None:
        print("LASVM11_BIN unset or absent: LaSVM 1.1 rows skipped", file=sys.stderr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fields = ["problem", "order", "trainer", "sv", "dual", "kcalcs", "error", "seconds",
              "finish_steps"]
    with open(out / "lasvm11.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fields)
        w.writeheader()

        def emit(row):
            w.writerow(row)
            f.flush()
            print(*(row.get(k, "") for k in fields), flush=True)

        for name in args.only:
            tr, te, y_tr, y_te, gamma, C = problem(name)
            gamma = gamma if args.gamma is None else args.gamma
            if args.rows and args.rows < len(y_tr):
                keep = np.sort(np.random.default_rng(0).choice(len(y_tr), args.rows, False))
                tr, y_tr = take_rows(tr, keep), y_tr[keep]
            test = out / f"{name}.test.svm"
            write_svm(test, te, y_te, range(len(y_te)))
            width = int(max(tr.max_index, te.max_index)) + 1
            kp = make_params(RBF, gamma=gamma)
            for o in range(args.orders):
                train = out / f"{name}-{o}.train.svm"
                write_svm(train, tr, y_tr, np.random.default_rng(o).permutation(len(y_tr)))
                d = read_svmlight(str(train))
                y = np.where(d.y > 0, 1.0, -1.0)
                kd = kernel_data(d.indptr, d.indices, d.values, width=width, training=True)
                dt = read_svmlight(str(test))
                kd_te = kernel_data(dt.indptr, dt.indices, dt.values, width=width)
                yt = np.where(dt.y > 0, 1.0, -1.0)
                base = dict(problem=name, order=o)
                if o == 0:
                    t = time.perf_counter()
                    r = solve_binary(kd, kp, y, C, C, eps=TAU, cache_mb=CACHE_MB)
                    sec = time.perf_counter() - t
                    emit(dict(base, trainer="ours, SMO", sv=r.n_sv, dual=-r.obj,
                              kcalcs=r.counters["kernel_evals"], seconds=round(sec, 3),
                              error=round(test_error(kd, kd_te, kp, r.coef[0], r.rho[0], yt),
                                          3)))
                for bail_out in args.bail_outs.split(","):
                    tail = "" if bail_out == "lasvm11" else ", printed bail-out"
                    finishings = args.finishings.split(",")
                    for finishing in finishings:
                        online, done = ours(kd, kd_te, kp, y, yt, C, finishing, bail_out)
                        if finishing == finishings[0]:
                            emit(dict(base, trainer="ours, online" + tail, **online))
                        emit(dict(base, trainer=f"ours, finish={finishing}" + tail, **done))
                if binary:
                    for fin in (0, 1):
                        emit(dict(base, trainer=f"LaSVM 1.1 -o {fin}",
                                  **lasvm11(binary, train, test, gamma, C, fin, out)))


if __name__ == "__main__":
    main()
