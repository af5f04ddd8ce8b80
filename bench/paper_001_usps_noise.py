"""USPS-N: does flipping 10% of the training labels change a hinge-loss SVM's test
accuracy, and under which set-up?

    python bench/paper_001_usps_noise.py [--digits 0-9] [--C 1,100] [--noise-seeds 0,1,2]
        [--methods LIBSVM,full-svm,lasvm-nc,lasvm-i] [--online-digits 0]
        [--out results/paper-001-usps-noise]

USPS (the 7291 / 2007 split, $LASVM_DATA), one digit against the rest, every row scaled to
unit norm, RBF gamma = 2 (bench/paper_001.py's set-up; the paper's C = 1 and gamma = 2). For
every digit and C: LIBSVM (libsvm-official) on the clean labels and on each noisy copy (10% of
the training labels flipped, uniformly at random, seeded as bench/paper_001.py flips them when
the noise seed is its --seed); the test labels stay clean. For --online-digits also the online
solvers among --methods (ours: one epoch, --seed 0, s = -1, solvers/lasvm_nc.py's defaults).
Writes OUT/usps_noise.csv and prints one line per run.
"""

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_lasvm import data_dir, decision, libsvm_run  # noqa: E402

from lasvm_cli.numerics.data import kernel_data  # noqa: E402
from lasvm_cli.io.svmlight import read_svmlight  # noqa: E402
from lasvm_cli.numerics.kernels import RBF, make_params  # noqa: E402
from lasvm_cli.solvers.lasvm_nc import solve_lasvm_g  # noqa: E402

GAMMA = 2.0


def ints(text):
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(s) for s in text.split(",") if s != ""]


def unit_norm(d):
    norms = np.sqrt(np.add.reduceat(d.values ** 2, d.indptr[:-1]))
    d.values = d.values / np.repeat(norms, np.diff(d.indptr))
    return d


def flipped(y, seed):
    """bench/paper_001.py's USPS-N: default_rng(seed), 10% of the rows flipped."""
    rng = np.random.default_rng(seed)
    flip = rng.choice(y.size, int(round(0.1 * y.size)), replace=False)
    y = y.copy()
    y[flip] *= -1
    return y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--digits", default="0-9")
    ap.add_argument("--C", default="1,100")
    ap.add_argument("--noise-seeds", default="0,1,2")
    ap.add_argument("--methods", default="LIBSVM,full-svm")
    ap.add_argument("--online-digits", default="0")
    ap.add_argument("--out", default=str(REPO / "results" / "paper-001-usps-noise"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dd = data_dir()
    tr = unit_norm(read_svmlight(str(dd / "usps" / "train.svm.xz")))
    te = unit_norm(read_svmlight(str(dd / "usps" / "test.svm.xz")))
    width = int(max(tr.max_index, te.max_index)) + 1
    kd = kernel_data(tr.indptr, tr.indices, tr.values, width=width, training=True)
    kd_te = kernel_data(te.indptr, te.indices, te.values, width=width)
    kp = make_params(RBF, gamma=GAMMA)
    digits_tr, digits_te = tr.y.copy(), te.y.copy()
    rows = []
    for digit in ints(args.digits):
        y_clean = np.where(digits_tr == digit, 1.0, -1.0)
        y_te = np.where(digits_te == digit, 1.0, -1.0)
        for C in [float(c) for c in args.C.split(",")]:
            labelings = [("clean", y_clean)] + [(f"noisy{s}", flipped(y_clean, s))
                                                 for s in ints(args.noise_seeds)]
            for name, y in labelings:
                methods = [m for m in args.methods.split(",")
                           if m == "LIBSVM" or digit in ints(args.online_digits)]
                for method in methods:
                    t = time.perf_counter()
                    if method == "LIBSVM":
                        tr.y = y
                        _, sv, coef, rho = libsvm_run(tr, y, f"-c {C!r} -g {GAMMA!r} -m 200")
                    else:
                        r = solve_lasvm_g(kd, kp, y, C, C, solver=method, seed=0)
                        sv = np.flatnonzero(r.coef[0])
                        coef, rho = r.coef[0][sv], 0.0
                    secs = time.perf_counter() - t
                    dec = decision(kd, kp, sv, coef, rho, kd_te)
                    acc = 100 * float(np.mean(np.where(dec > 0, 1.0, -1.0) == y_te))
                    flipped_sv = int(np.sum(y[sv] != y_clean[sv]))
                    at_bound = int(np.sum(np.isclose(np.abs(coef), C)))
                    rows.append((digit, C, name, method, acc, sv.size, flipped_sv, at_bound,
                                 round(secs, 3)))
                    print(f"digit {digit} C {C:g} {name:7s} {method:8s} acc {acc:.2f} "
                          f"#SV {sv.size} (flipped {flipped_sv}, |coef| = C {at_bound}) "
                          f"{secs:.1f} s", flush=True)
    with open(out / "usps_noise.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(("digit", "C", "labels", "method", "accuracy", "sv", "flipped_sv",
                    "sv_at_bound", "seconds"))
        w.writerows(rows)


if __name__ == "__main__":
    main()
