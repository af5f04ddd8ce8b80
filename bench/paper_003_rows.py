"""Glasmachers & Igel (2006), section 4.6, Tables 6 and 7: how many cached rows MG looks at.

The paper compares its HMG (the gain over the two cached rows of the previous working set)
with two variants:

* Table 6, one row: the gain over the row of one element of the previous working set,
  alternating so that each selected variable is used in exactly two successive iterations.
  Paper: more iterations (spam 14,023 against 10,563; connect-4 83,305 against 50,281), a
  slightly lower final f, and "far more" unshrinking events;
* Table 7, whole cache: the gain over every cached row (with the whole matrix cached, the exact
  greedy policy w.r.t. the gain). Paper: 31% fewer iterations on spam, 0% on connect-4.

Spam and connect-4 are not among the shared data sets, and the variants exist only in the
numpy reference (tests/reference_hmg.py, ``rows``), which has no shrinking. So this script runs
the reference on seeded random subsamples of four shared problems (bench/paper_000.py's
settings: waveform class 0 against the rest, banana, USPS digit 0 against the rest on unit-length
rows, adult), duplicates removed (the paper assumes positive definite 2x2 minors), eps = 1e-3,
eta = 1e-8, four selections:

* two rows (HMG, the paper's), one row, whole cache with an unlimited row cache (the rows the
  gradient updates have computed so far; the spam case: its matrix fits in the cache), and the
  exact greedy policy (every row cached from the start: Table 7's bound).

Each run goes on past the paper's stop to second order's accuracy (``final_kkt_check``: an MG
stop with an MVP gap >= eps takes an MVP step and HMG goes on), so one run gives both:

* at the paper's stop (|mu*| < eps in an MG iteration, or the MVP gap < eps in an MVP one):
  iterations, f, and the MVP gap there;
* at the MVP gap < eps: iterations, f, and the number of false stops ("continuations": MG
  stops that were not optimal). Without shrinking there is no unshrinking; a false stop is
  what an unshrinking event is on a shrunk problem: the selection found no pair worth taking
  while one was left. The paper blames the one-row variant's time on those;
* new rows of Q computed (row misses with an unlimited cache: each row counted once).

    python bench/paper_003_rows.py --rows 500 --seeds 3
"""

import argparse
import sys
import time

import numpy as np

from paper_000 import PROBLEMS, labels
from paper_tables import RESULTS, REPO, Table, read_shared, spread

sys.path.insert(0, str(REPO))
from tests import reference_hmg as ref  # noqa: E402

EPS = 1e-3
NAMES = ("Waveform", "Banana", "USPS", "Adult")
VARIANTS = (("two rows", dict(rows="two")), ("one row", dict(rows="one")),
            ("whole cache", dict(rows="cache")), ("exact greedy", dict(rows="cache",
                                                                       prefill=True)))
PAPER6 = {"spam": ((10563, 27019.140), (14023, 27019.134)),
          "connect-4": ((50281, 13557.536), (83305, 13557.529))}
PAPER7 = {"spam": ((10563, 27019.140), (7280, 27019.143), 31),
          "connect-4": ((50281, 13557.536), (51285, 13557.538), 0)}


def dense(problem):
    X = np.zeros((len(problem.y), int(problem.indices.max()) + 1))
    rows = np.repeat(np.arange(len(problem.y)), np.diff(problem.indptr))
    X[rows, problem.indices] = problem.values
    return X


def pool(name):
    """(X, y, gamma, C) of the whole training set, duplicate rows removed (the first kept)."""
    dataset, gamma, C, rule, scaling = PROBLEMS[name]
    tr = read_shared(dataset, "train")
    X, y = dense(tr), labels(tr.y, rule)
    if scaling == "unit":
        X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
    _, first = np.unique(X, axis=0, return_index=True)
    keep = np.sort(first)
    return X[keep], y[keep], gamma, C


def sample(X, y, gamma, rows, seed):
    take = np.random.default_rng(seed).choice(len(y), size=min(rows, len(y)), replace=False)
    Xs, ys = X[take], y[take]
    sq = (Xs ** 2).sum(1)
    K = np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2.0 * Xs @ Xs.T, 0.0))
    np.fill_diagonal(K, 1.0)
    return (K + K.T) / 2, ys


def run(K, y, C, variant):
    info = {}
    t = time.perf_counter()
    _, f, trace = ref.solve_hmg(K, y, C, eps=EPS, final_kkt_check=True, info=info,
                                max_iter=200000, **variant)
    it0, f0, gap0 = info["first_stop"]
    return {"iterations": it0, "f": float(f0), "gap": gap0, "iterations_kkt": len(trace),
            "f_kkt": float(f), "continuations": info["continuations"],
            "rows": len(y) if variant.get("prefill") else info["row_misses"],
            "mg": sum(r == ref.MG for *_, r in trace), "seconds": time.perf_counter() - t}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=500)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--only", nargs="+", default=list(NAMES))
    ap.add_argument("--variants", nargs="+", default=[v for v, _ in VARIANTS])
    args = ap.parse_args()
    variants = [(v, kw) for v, kw in VARIANTS if v in args.variants]
    note = (f"Numpy reference (tests/reference_hmg.py), no shrinking, eps = {EPS:g}, "
            f"{args.rows} rows drawn at random without duplicates, seeds 0..{args.seeds - 1}; "
            "median (min to max) over the seeds, ratios and differences within each seed. "
            "'paper's stop': where the paper's rules stop; 'to gap < eps': the same run "
            "continued with MVP steps at MG stops until the MVP gap is < eps; 'false stops': "
            "those continuations. Rows: rows of Q computed (exact greedy: all, cached from the start).")
    table = Table("rows", "Section 4.6: two rows, one row, whole cache, exact greedy",
                  ["problem", "gamma, C", "selection", "iterations (paper's stop)",
                   "/ two rows", "f - two rows'", "MVP gap at the stop",
                   "iterations to gap < eps", "/ two rows (to gap < eps)",
                   "f - two rows' (to gap < eps)", "false stops", "rows of Q computed",
                   "MG share"], note)
    raw = []
    for name in args.only:
        X, y, gamma, C = pool(name)
        res = {v: [] for v, _ in variants}
        for seed in range(args.seeds):
            K, ys = sample(X, y, gamma, args.rows, seed)
            for v, kw in variants:
                r = run(K, ys, C, kw)
                res[v].append(r)
                raw.append((name, seed, v, r))
                print(name, seed, v, {k: (round(x, 4) if isinstance(x, float) else x)
                                      for k, x in r.items()}, file=sys.stderr, flush=True)
        base = res[variants[0][0]]
        for v, _ in variants:
            rs = res[v]
            table.add(**{
                "problem": name, "gamma, C": f"{gamma:g}, {C:g}", "selection": v,
                "iterations (paper's stop)": spread([r["iterations"] for r in rs], "{:,.0f}"),
                "/ two rows": spread([r["iterations"] / b["iterations"]
                                      for r, b in zip(rs, base)], "{:.3f}"),
                "f - two rows'": spread([r["f"] - b["f"] for r, b in zip(rs, base)],
                                        "{:+.4f}"),
                "MVP gap at the stop": spread([r["gap"] for r in rs], "{:.4f}"),
                "iterations to gap < eps": spread([r["iterations_kkt"] for r in rs], "{:,.0f}"),
                "/ two rows (to gap < eps)": spread([r["iterations_kkt"] / b["iterations_kkt"]
                                                    for r, b in zip(rs, base)], "{:.3f}"),
                "f - two rows' (to gap < eps)": spread([r["f_kkt"] - b["f_kkt"]
                                                       for r, b in zip(rs, base)], "{:+.4f}"),
                "false stops": spread([r["continuations"] for r in rs], "{:.0f}"),
                "rows of Q computed": spread([r["rows"] for r in rs], "{:,.0f}"),
                "MG share": spread([r["mg"] / r["iterations_kkt"] for r in rs], "{:.3f}")})
    table.write(RESULTS / "paper-003")
    paper = Table("rows-paper", "The paper's Tables 6 and 7 (spam, connect-4; shrinking on)",
                  ["data set", "two rows: iterations", "two rows: f", "one row: iterations",
                   "one row / two", "one row: f", "whole cache: iterations",
                   "whole cache / two", "whole cache: f"])
    for d in PAPER6:
        (i2, f2), (i1, f1) = PAPER6[d]
        _, (iw, fw), _ = PAPER7[d]
        paper.add(**{"data set": d, "two rows: iterations": f"{i2:,}", "two rows: f": f2,
                     "one row: iterations": f"{i1:,}", "one row / two": f"{i1 / i2:.3f}",
                     "one row: f": f1, "whole cache: iterations": f"{iw:,}",
                     "whole cache / two": f"{iw / i2:.3f}", "whole cache: f": fw})
    paper.write(RESULTS / "paper-003")
    with open(RESULTS / "paper-003" / "rows-raw.csv", "w") as fh:
        keys = list(raw[0][3])
        fh.write(",".join(["problem", "seed", "selection"] + keys) + "\n")
        for name, seed, v, r in raw:
            fh.write(",".join([name, str(seed), v] + [repr(r[k]) for k in keys]) + "\n")


if __name__ == "__main__":
    main()
