"""USPS+N of Bordes et al. (2005), Figure 7: which noise model and C give
the paper's LIBSVM test error of 0.41%?

    python bench/paper_000_usps_noise.py [--noise binary,digit] [--C 1,10]
        [--noise-seeds 0,1,2] [--gamma 2] [--out results/paper-000-usps-noise.csv]

The paper: USPS, class "0" against the rest, RBF gamma = 2, C = 10, "10% training label
noise" (clean USPS: C = 1000, LIBSVM 0.41%, 236 SVs; USPS+N: LIBSVM 0.41%, 2750 SVs). The
rows are scaled to unit norm as in bench/paper_000.py (gamma = 2 on the [-1, 1] pixels gives
K ~ 0). Two readings of the noise, applied to the training labels only:

    binary  10% of the rows get the other label of the binary task (bench/paper_000.py)
    digit   10% of the rows get another digit, uniformly among the nine others, before the
            task "0 against the rest" is formed: only the rows whose change crosses the
            0 / not-0 line become noisy for the binary task (about 2.5% of them)

``none`` trains on the clean labels. ``--gamma`` tries other kernel widths (the paper's clean
USPS has 236 SVs at C = 1000 where ours has 556: its kernel is smoother than ours).

LIBSVM 3.37 (libsvm-official) with tau = 0.001 and a 40 MB cache, as Figure 7. One line per
run: noise, seed, C, gamma, binary labels changed, test error, SVs, bounded SVs, seconds.
"""

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from paper_000 import (clock, kernel_sets, labels, read_shared, test_error,  # noqa: E402
                       unit_rows)

CACHE_MB = 40
TAU = 0.001


def binary_noise(y01, fraction, seed):
    """10% of the binary labels flipped (bench/paper_000.py's flip_labels)."""
    rng = np.random.default_rng(seed)
    y = y01.copy()
    flip = rng.choice(len(y), size=int(round(fraction * len(y))), replace=False)
    y[flip] = -y[flip]
    return y


def digit_noise(digits, fraction, seed):
    """10% of the digit labels replaced by one of the nine other digits, then "0 vs rest"."""
    rng = np.random.default_rng(seed)
    d = np.asarray(digits, np.int64).copy()
    rows = rng.choice(len(d), size=int(round(fraction * len(d))), replace=False)
    d[rows] = (d[rows] + rng.integers(1, 10, size=len(rows))) % 10
    return labels(d, "class0")


def libsvm(tr, y, C, gamma):
    import scipy.sparse as sp
    from libsvm import svmutil

    X = sp.csr_matrix((tr.values, tr.indices - 1, tr.indptr),
                      shape=(len(tr.indptr) - 1, int(tr.indices.max())))
    m, seconds = clock(svmutil.svm_train, svmutil.svm_problem(list(y), X),
                       f"-q -c {C!r} -g {gamma!r} -m {CACHE_MB} -e {TAU}")
    coef = np.zeros(len(y))
    sign = 1.0 if m.get_labels()[0] == 1 else -1.0
    coef[np.asarray(m.get_sv_indices(), np.int64) - 1] = sign * np.array(
        [c[0] for c in m.get_sv_coef()])
    return coef, sign * m.rho[0], seconds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--noise", default="binary,digit")
    ap.add_argument("--C", default="1,10")
    ap.add_argument("--noise-seeds", default="0,1,2")
    ap.add_argument("--gamma", default="2")
    ap.add_argument("--out", default="results/paper-000-usps-noise.csv")
    args = ap.parse_args(argv)
    from lasvm_cli.numerics.kernels import RBF, make_params

    tr, te = unit_rows(read_shared("usps", "train")), unit_rows(read_shared("usps", "test"))
    y_clean, y_te = labels(tr.y, "class0"), labels(te.y, "class0")
    kd, kd_te = kernel_sets(tr, te)
    def kp_of(gamma):
        return make_params(RBF, gamma=gamma)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fields = ["noise", "seed", "C", "gamma", "changed", "error", "sv", "bsv", "seconds"]
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        for noise in args.noise.split(","):
            seeds = [0] if noise == "none" else [int(s) for s in args.noise_seeds.split(",")]
            for seed in seeds:
                if noise == "none":
                    y = y_clean
                elif noise == "binary":
                    y = binary_noise(y_clean, 0.10, seed)
                else:
                    y = digit_noise(tr.y, 0.10, seed)
                for C, gamma in [(float(c), float(g)) for g in args.gamma.split(",")
                                 for c in args.C.split(",")]:
                    coef, rho, sec = libsvm(tr, y, C, gamma)
                    err = test_error(kd, kd_te, kp_of(gamma), coef, rho, y_te)
                    row = [noise, seed, C, gamma, int(np.sum(y != y_clean)), round(err, 3),
                           int(np.count_nonzero(coef)),
                           int(np.sum(np.abs(coef) >= C * (1 - 1e-12))), round(sec, 2)]
                    w.writerow(row)
                    f.flush()
                    print(*row, flush=True)


if __name__ == "__main__":
    main()
