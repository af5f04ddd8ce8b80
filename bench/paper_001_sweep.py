"""LASVM-NC and LASVM-I over a grid of C and gamma and many example orders: how often each
returns a one-class machine where batch SMO learns, with the paper's printed start
(``--ramp-start printed``) and with the convex initialisation stage (the default; corrections
001-10).

    python bench/paper_001_sweep.py [--part adult-orders,adult,ijcnn1,reuters,mnist|report]
        [--orders 3] [--adult-orders 60] [--rows adult=2000,...] [--out results/paper-001-sweep]

Parts (each a list of runs; every (data set, C, gamma) writes OUT/raw/PART-C-GAMMA.csv and is
skipped when that file exists, so an interrupted sweep resumes where it stopped):

  adult-orders  adult at the paper's C = 100, gamma = 0.005, --adult-orders orders, 4,000 rows
  adult         adult (a9a, 24% positive), gamma 0.005 / 0.05 / 0.5, C 1 / 100
  ijcnn1        ijcnn1 (10% positive, 22 dense features), gamma 0.005 / 0.05 / 0.5, C 4 / 100
  reuters       reuters money-fx (7% positive, unit-norm tf-idf), gamma 0.05 / 0.5 / 5, C 1 / 100
  mnist         mnist digit 8 against the rest (10% positive), pixels / 255,
                gamma 0.001 / 0.01 / 0.05, C 1 / 100
  report        OUT/table.md from every raw file there (and prints it)

Every grid point trains our batch SMO once (the convex, biased reference: does the task admit
a two-class machine?), LASVM-G on the first orders, and LASVM-NC and LASVM-I with both starts
on --orders orders (LasvmGRun seeds 0..n-1; one epoch, s = -1, S = 10, the defaults of
solvers/lasvm_nc.py). Training rows are drawn with numpy's default_rng(0) (--rows, default
adult 2,000, ijcnn1 3,000, reuters 3,000, mnist 2,000: sized for minutes on a busy 2-core
host; the test rows likewise, --test-rows), the same rows for every run of a data set.

A machine is "one-class" when it predicts one label for every test row. Raw rows: data set,
C, gamma, solver, start, order, #SV, test accuracy, share predicted positive, one_class,
majority rate, seconds, the draw that ended the convex stage, the gap loops GAP_CAP ended
(corrections 001-5).
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

from bench_lasvm import data_dir, decision  # noqa: E402

from lasvm_cli.io.svmlight import read_svmlight  # noqa: E402
from lasvm_cli.numerics.data import kernel_data, subset  # noqa: E402
from lasvm_cli.numerics.kernels import RBF, make_params  # noqa: E402
from lasvm_cli.solvers.csvc import solve_binary  # noqa: E402
from lasvm_cli.solvers.lasvm_nc import solve_lasvm_g  # noqa: E402

# data set: (file folder, positive label (None: the file's +1), scale, grid gammas, grid Cs)
DATA = {
    "adult": ("adult", None, 1.0, (0.005, 0.05, 0.5), (1.0, 100.0)),
    "ijcnn1": ("ijcnn1", None, 1.0, (0.005, 0.05, 0.5), (4.0, 100.0)),
    "reuters": ("reuters", None, 1.0, (0.05, 0.5, 5.0), (1.0, 100.0)),
    "mnist": ("mnist", 8.0, 1 / 255, (0.001, 0.01, 0.05), (1.0, 100.0)),
}
ROWS = {"adult": 2000, "ijcnn1": 3000, "reuters": 3000, "mnist": 2000}
TEST_ROWS = {"adult": 4000, "ijcnn1": 4000, "reuters": 0, "mnist": 2000}
ADULT_ORDERS_ROWS = 4000  # adult-orders: its training rows (--rows adult=N sets the grid's)
PARTS = ("adult-orders", "adult", "ijcnn1", "reuters", "mnist")
HEADER = ("data", "C", "gamma", "solver", "start", "order", "sv", "accuracy", "share_positive",
          "one_class", "majority", "seconds", "nonconvex_from", "gap_loops_capped")
G_ORDERS = 2  # LASVM-G orders per grid point (it has no start to compare)


def sizes(text, base):
    out = dict(base)
    for item in filter(None, text.split(",")):
        k, v = item.split("=")
        out[k] = int(v)
    return out


def load(name, rows, test_rows):
    folder, pos, scale, _, _ = DATA[name]
    dd = data_dir()
    tr = read_svmlight(str(dd / folder / "train.svm.xz"))
    te = read_svmlight(str(dd / folder / "test.svm.xz"))
    is_pos = (lambda v: v == pos) if pos is not None else (lambda v: v > 0)
    y, y_te = np.where(is_pos(tr.y), 1.0, -1.0), np.where(is_pos(te.y), 1.0, -1.0)
    width = int(max(tr.max_index, te.max_index)) + 1
    kd = kernel_data(tr.indptr, tr.indices, tr.values * scale, width=width, dense=False,
                     training=True)
    kd_te = kernel_data(te.indptr, te.indices, te.values * scale, width=width, dense=False)
    rng = np.random.default_rng(0)
    if rows and rows < y.size:
        r = np.sort(rng.choice(y.size, rows, replace=False))
        kd, y = subset(kd, r), y[r]
    if test_rows and test_rows < y_te.size:
        r = np.sort(rng.choice(y_te.size, test_rows, replace=False))
        kd_te, y_te = subset(kd_te, r), y_te[r]
    return kd, y, kd_te, y_te


def measure(kd, kp, coef, rho, kd_te, y_te):
    sv = np.flatnonzero(coef)
    f = decision(kd, kp, sv, coef[sv], rho, kd_te) if sv.size else np.full(y_te.size, -rho)
    pred = np.where(f > 0, 1.0, -1.0)
    share = float(np.mean(pred > 0))
    return sv.size, float(np.mean(pred == y_te)), share, int(share in (0.0, 1.0))


def grid_point(name, data, C, gamma, orders, path):
    kd, y, kd_te, y_te = data
    kp = make_params(RBF, gamma=gamma)
    majority = max(np.mean(y_te > 0), np.mean(y_te < 0))
    rows = []

    def row(solver, start, order, res, rho, secs):
        nsv, acc, share, one = measure(kd, kp, res.coef[0], rho, kd_te, y_te)
        c = res.counters
        rows.append((name, C, gamma, solver, start, order, nsv, f"{acc:.5f}", f"{share:.5f}",
                     one, f"{majority:.5f}", f"{secs:.2f}", c.get("nonconvex_from", ""),
                     c.get("gap_loops_capped", "")))
        print(f"{name} C={C:g} g={gamma:g} {solver:8s} {start:7s} order {order:2d}: "
              f"#SV {nsv:5d} acc {acc:.4f} positive {share:.3f}{' ONE-CLASS' if one else ''}"
              f" ({secs:.1f} s)", flush=True)

    t = time.perf_counter()
    res = solve_binary(kd, kp, y, C, C)
    row("smo", "", 0, res, float(res.rho[0]), time.perf_counter() - t)
    runs = [("lasvm-g", "", o) for o in range(min(G_ORDERS, orders))]
    runs += [(s, start, o) for s in ("lasvm-nc", "lasvm-i") for start in ("printed", "convex")
             for o in range(orders)]
    for solver, start, order in runs:
        opts = dict(ramp_start=start) if start else {}
        t = time.perf_counter()
        res = solve_lasvm_g(kd, kp, y, C, C, solver=solver, seed=order, **opts)
        row(solver, start, order, res, 0.0, time.perf_counter() - t)
    tmp = path.with_suffix(".part")
    with open(tmp, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerows(rows)
    tmp.rename(path)


def run_part(part, args, raw):
    name = "adult" if part == "adult-orders" else part
    _, _, _, gammas, Cs = DATA[name]
    grid = [(100.0, 0.005)] if part == "adult-orders" else [(C, g) for g in gammas for C in Cs]
    orders = args.adult_orders if part == "adult-orders" else args.orders
    todo = [(C, g, raw / f"{part}-C{C:g}-g{g:g}.csv") for C, g in grid]
    todo = [t for t in todo if not t[2].exists()]
    if not todo:
        print(f"{part}: done (raw files present)", flush=True)
        return
    rows = ADULT_ORDERS_ROWS if part == "adult-orders" else args.rows[name]
    data = load(name, rows, args.test_rows[name])
    print(f"{part}: {data[1].size} training rows ({np.mean(data[1] > 0):.1%} positive), "
          f"{data[3].size} test rows", flush=True)
    for C, g, path in todo:
        grid_point(name, data, C, g, orders, path)


def report(raw, out):
    rows = []
    for p in sorted(raw.glob("*.csv")):
        with open(p) as fh:
            part = p.name.split("-C")[0]
            rows += [dict(r, part=part) for r in csv.DictReader(fh)]
    keys = []
    for r in rows:
        k = (r["part"], float(r["C"]), float(r["gamma"]))
        if k not in keys:
            keys.append(k)
    lines = ["| part | C | gamma | SMO acc (majority) | LASVM-G acc | "
             "NC printed: one-class / acc | NC convex | I printed | I convex |",
             "|---|---:|---:|---|---|---|---|---|---|"]
    total = {}
    for k in keys:
        sel = [r for r in rows if (r["part"], float(r["C"]), float(r["gamma"])) == k]
        smo = next(r for r in sel if r["solver"] == "smo")
        learns = not int(smo["one_class"])

        def cell(solver, start):
            rs = [r for r in sel if r["solver"] == solver and r["start"] == start]
            if not rs:
                return "-"
            one = sum(int(r["one_class"]) for r in rs)
            acc = [float(r["accuracy"]) * 100 for r in rs]
            if learns:
                t = total.setdefault((solver, start), [0, 0])
                t[0] += one
                t[1] += len(rs)
            return f"{one}/{len(rs)} / {np.mean(acc):.2f} [{min(acc):.2f}-{max(acc):.2f}]"

        g = [float(r["accuracy"]) * 100 for r in sel if r["solver"] == "lasvm-g"]
        lines.append(f"| {k[0]} | {k[1]:g} | {k[2]:g} | {float(smo['accuracy']) * 100:.2f}"
                     f"{'' if learns else ' (one-class)'} ({float(smo['majority']) * 100:.2f})"
                     f" | {np.mean(g):.2f} | {cell('lasvm-nc', 'printed')} | "
                     f"{cell('lasvm-nc', 'convex')} | {cell('lasvm-i', 'printed')} | "
                     f"{cell('lasvm-i', 'convex')} |")
    capped = sum(int(r["gap_loops_capped"] or 0) for r in rows)
    lines.append("")
    lines.append(f"Gap loops ended by GAP_CAP over all {len(rows)} runs: {capped}.")
    lines.append("One-class machines where SMO learns (all grid points and orders): "
                 + ", ".join(f"{s} {st}: {one} of {n}" for (s, st), (one, n) in
                             sorted(total.items())))
    text = "\n".join(lines) + "\n"
    (out / "table.md").write_text(text)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", default=",".join(PARTS) + ",report")
    ap.add_argument("--orders", type=int, default=3, help="orders per grid point")
    ap.add_argument("--adult-orders", type=int, default=60, help="orders of adult-orders")
    ap.add_argument("--rows", default="", help="training rows, e.g. adult=4000 (0: all)")
    ap.add_argument("--test-rows", default="", help="test rows, e.g. mnist=2000 (0: all)")
    ap.add_argument("--out", default=str(REPO / "results" / "paper-001-sweep"))
    args = ap.parse_args()
    args.rows, args.test_rows = sizes(args.rows, ROWS), sizes(args.test_rows, TEST_ROWS)
    out = Path(args.out)
    raw = out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for part in args.part.split(","):
        if part == "report":
            report(raw, out)
        elif part in PARTS:
            run_part(part, args, raw)
        else:
            ap.error(f"unknown part {part!r} (choose from {', '.join(PARTS)}, report)")


if __name__ == "__main__":
    main()
