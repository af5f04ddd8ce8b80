"""Glasmachers & Igel (2006) on all of MNIST: how often does HMG with the paper's stopping rule
(``--mg-stop``: an MG iteration stops when |mu*| < eps) stop early?

On 3,000-20,000-row samples the paper's rule stopped early in 2 of 5, 4 of 5 and 3 of 3
orderings (docs/reproductions/seed-003.md, section 2): |mu*| measures the clipped step, so a
best related pair whose variable lies within eps of its bound stops the run however large
the violation left. This study runs the paper's own problem, all 60,000 training rows (0-4
against 5-9, raw pixels, sigma = 3,500, C = 50, eps = 1e-3, shrinking on), with the paper's
10 orderings (ordering 0: the file's order; ordering t: a seeded permutation,
paper_003.ordered), HMG with ``final_kkt_check=False``. For each run: iterations, MG
iterations, f(alpha*) (the paper's 143,199.160 for HMG, 143,199.146 for second order), the
MVP gap at the stop (an early stop leaves it well above eps: "early" = above 2 eps, as
paper_003_iterations.py counts), the shrinking counters and the time.

Resumable: one line per ordering is appended to OUT (default
results/paper-003/mg-stop-60000.csv) when the run ends, and orderings already there are
skipped. A run takes about an hour on a quiet 2-core machine (more on a busy one); iterations
do not depend on the cache, so it is large (``--cache-mb``, default 3000).

    nice -n 10 python bench/paper_003_mg_stop.py [--orderings 0 1 2 ...] [--rows 60000]
    python bench/paper_003_mg_stop.py --summary      # the table of what has run
"""

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

from paper_003 import GAMMA, C, mnist_problem, ordered
from paper_tables import RESULTS

EPS = 1e-3
FIELDS = ["rows", "ordering", "iterations", "mg_iterations", "mvp_fallbacks", "f", "gap",
          "early", "shrinks", "shrunk_variables", "kernel_evals", "seconds"]
PAPER = "paper (60,000 rows, median of 10): HMG 152,873 iterations, f 143,199.160"


def run(X, y, cache_mb):
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import RBF, make_params
    from lasvm_cli.solvers.csvc import solve_binary

    kd = kernel_data(X.indptr, (X.indices + 1).astype(np.int32), X.data, width=X.shape[1] + 1)
    t = time.perf_counter()
    r = solve_binary(kd, make_params(RBF, 3, GAMMA, 0.0), y, C, C, eps=EPS, cache_mb=cache_mb,
                     wss="hmg", shrinking=True, final_kkt_check=False)
    seconds = time.perf_counter() - t
    c = r.counters
    return {"iterations": r.n_iter, "mg_iterations": c["mg_iterations"],
            "mvp_fallbacks": c["mvp_fallbacks"], "f": -r.obj, "gap": c["kkt_gap"],
            "early": int(c["kkt_gap"] > 2 * EPS), "shrinks": c["shrinks"],
            "shrunk_variables": c["shrunk_variables"], "kernel_evals": c["kernel_evals"],
            "seconds": round(seconds, 1)}


def done_rows(out):
    if not out.exists():
        return []
    with open(out) as f:
        return list(csv.DictReader(f))


def summary(rows):
    if not rows:
        return "no ordering has run yet"
    early = sum(int(r["early"]) for r in rows)
    lines = [f"{len(rows)} ordering(s) of {rows[0]['rows']} rows; stopped early (MVP gap > "
             f"2 eps) in {early}", PAPER]
    for r in sorted(rows, key=lambda r: int(r["ordering"])):
        lines.append(f"ordering {r['ordering']}: {int(r['iterations']):,} iterations "
                     f"({int(r['mg_iterations']):,} MG), f {float(r['f']):,.3f}, MVP gap "
                     f"{float(r['gap']):.4f}, {int(r['shrunk_variables']):,} variables shrunk "
                     f"in {r['shrinks']} shrinks, {float(r['seconds']):,.0f} s")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orderings", type=int, nargs="+", default=list(range(10)))
    ap.add_argument("--rows", type=int, default=60000)
    ap.add_argument("--seed", type=int, default=3, help="the sample's seed (paper_003.py's); "
                    "with all rows the sample is the whole set in file order")
    ap.add_argument("--cache-mb", type=float, default=3000.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--summary", action="store_true", help="print what has run and exit")
    args = ap.parse_args()
    out = Path(args.out) if args.out else RESULTS / "paper-003" / f"mg-stop-{args.rows}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.summary:
        print(summary(done_rows(out)))
        return
    have = {int(r["ordering"]) for r in done_rows(out)}
    todo = [t for t in args.orderings if t not in have]
    if not todo:
        print(summary(done_rows(out)))
        return
    X, y = mnist_problem(args.rows, args.seed)
    for t in todo:
        Xt, yt = ordered(X, y, t)
        row = dict(rows=args.rows, ordering=t, **run(Xt, yt, args.cache_mb))
        new = not out.exists()
        with open(out, "a", newline="") as f:
            w = csv.DictWriter(f, FIELDS)
            if new:
                w.writeheader()
            w.writerow(row)
        print(row, file=sys.stderr, flush=True)
    print(summary(done_rows(out)))


if __name__ == "__main__":
    main()
