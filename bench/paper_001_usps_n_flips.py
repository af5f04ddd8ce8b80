"""Where USPS-N's flipped labels end up (section 6 of docs/reproductions/seed-001.md): for one
order, the number of SVs, of flipped examples among them, of outliers LASVM-NC flagged, and of
flipped examples with z = y f(x) < -1 at the end, for LASVM-G, LASVM-NC and LASVM-I.

    python bench/paper_001_usps_n_flips.py [--seed 0]

Data as bench/paper_001.py (digit 0 against the rest, unit-norm rows, 10% of the training labels
flipped with data seed 0; C = 1, gamma = 2, s = -1).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_lasvm import decision  # noqa: E402
from paper_001 import load  # noqa: E402
from paper_001_figures import Data, train  # noqa: E402

from lasvm_cli.solvers.lasvm_nc import LasvmGRun  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="example order")
    args = ap.parse_args()
    d = Data("usps-n", argparse.Namespace(rows={}, test_rows={}, cache_mb=256.0))
    _, _, y_clean, _ = load("usps", argparse.Namespace(seed=0, max_train=None, max_test=None,
                                                       mnist_rows=0))
    flipped = y_clean != d.y_tr
    print(f"usps-n: {d.y_tr.size} rows, {int(flipped.sum())} labels flipped, order {args.seed}")
    for solver in ("lasvm-g", "lasvm-nc", "lasvm-i"):
        run = LasvmGRun(d.kd, d.kp, d.y_tr, d.C, d.C, solver=solver, cache_mb=256.0,
                        seed=args.seed)
        res, _ = train(run)
        c = run.counters()
        coef = res.coef[0]
        sv = np.flatnonzero(coef)
        z = d.y_tr * decision(d.kd, d.kp, sv, coef[sv], res.rho[0], d.kd)
        print(f"{solver:9} SVs {sv.size:5d}  flipped among them {int(flipped[sv].sum()):4d}  "
              f"NC outliers flagged {c['outliers_flagged']:4d}  I skipped left/right "
              f"{c['skipped_left']}/{c['skipped_right']}  flipped with z < -1 "
              f"{int((z[flipped] < -1).sum()):4d}")


if __name__ == "__main__":
    main()
