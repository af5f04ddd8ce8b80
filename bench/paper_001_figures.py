"""Ertekin, Bottou & Giles (2011): Tables 3 and 4 over several example orders, and Figures 1, 5
and 8, resumable by part. Companion of bench/paper_001.py (same data, settings and measures).

    python bench/paper_001_figures.py [--part PART[,PART...]] [--seeds 0-4]
        [--rows adult=8000,mnist=8000] [--test-rows adult=8000] [--s -5,-2,-1,-0.5,0,0.5]
        [--out results/paper-001]

Parts (default: all, in this order; a part whose raw file exists is skipped, --redo reruns it):
  table3-DS  (DS in adult, mnist, banana, reuters, usps, usps-n): LIBSVM once (batch, no order),
             then for every seed (example order) FULL SVM (the first --full-svm-seeds only),
             LASVM-G, LASVM-NC, LASVM-I (one epoch, s = -1, solvers/lasvm_nc.py's defaults)
             and our LASVM (one epoch + finishing): accuracy, #SV, training time, PRBEP, AUC,
             g-means, kernel evaluations. LASVM-G is stepped in chunks and its duality gap
             recorded (untimed) for Fig. 1. Raw rows: OUT/raw/table3-DS.csv, OUT/raw/fig1-DS.csv.
  fig5-DS    LASVM-NC and LASVM-I for every s of --s (first seed only): test error and #SV.
             Raw rows: OUT/raw/fig5-DS.csv.
  time-DS    (not in the default list) training times only: LIBSVM, LASVM, LASVM-G, LASVM-NC,
             LASVM-I back to back, --time-repeats rounds. Raw rows: OUT/raw/time-DS.csv.
  report     Tables 3 and 4 (mean and min-max over the seeds, the paper's value beside),
             Fig. 1 (gap / instances seen, against instances seen), Fig. 5 (error against
             #SV; the convex solvers as single points from table3-DS's first seed), Fig. 8
             (training times as bars): OUT/table3.{md,csv}, OUT/table4.{md,csv},
             OUT/fig5.{md,csv}, OUT/fig8.csv, OUT/fig1.png, OUT/fig5.png, OUT/fig8.png,
             OUT/time_ratios.csv (time-DS parts), all of it in OUT/figures.md.

Rows: --rows subsamples a training set (rows drawn with seed 0, the same for every order),
--test-rows a test set; USPS-N's label noise is drawn with seed 0 as in bench/paper_001.py.
Timings exclude JIT compilation (warmed on 200 rows), the gap records and test evaluation;
compare them only within one run (the machine may be loaded).
"""

import argparse
import csv
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_lasvm import decision  # noqa: E402
from paper_001 import (DATASETS, ONLINE, PAPER, PAPER_NAMES, SETTINGS, _ORDER, load,  # noqa: E402
                       measures, warm)
from paper_tables import pyplot  # noqa: E402

from lasvm_cli.numerics.data import kernel_data  # noqa: E402
from lasvm_cli.numerics.kernels import RBF, make_params  # noqa: E402
from lasvm_cli.solvers.lasvm import LasvmRun  # noqa: E402
from lasvm_cli.solvers.lasvm_nc import LasvmGRun  # noqa: E402
from lasvm_cli.qp.online_core import CHUNK  # noqa: E402

METHODS = ("FULL SVM", "LASVM-G", "LASVM-NC", "LASVM-I", "LASVM", "LIBSVM")
ROW = ("dataset", "seed", "method", "s", "train", "test", "accuracy", "nsv", "time", "prbep",
       "auc", "gmeans", "kernel_m")
GAP_ROW = ("dataset", "seed", "train", "seen", "gap", "gap_per_seen", "sv")
PAPER_ROWS = {"adult": (32562, 16282), "banana": (4000, 1300), "mnist": (60000, 10000),
              "reuters": (7770, 3299), "usps": (7329, 1969), "usps-n": (7329, 1969)}


def parse_seeds(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b) + 1)) if b else [int(a)]
    return out


def parse_rows(text):
    return {k: int(v) for k, v in (p.split("=") for p in text.split(",") if p)}


class Data:
    """A dataset prepared as bench/paper_001.py prepares it, sampled with data seed 0."""

    def __init__(self, name, args):
        ns = argparse.Namespace(seed=0, max_train=args.rows.get(name),
                                max_test=args.test_rows.get(name),
                                mnist_rows=args.rows.get("mnist", 60000))
        self.name = name
        self.tr, self.te, self.y_tr, self.y_te = load(name, ns)
        width = int(max(self.tr.max_index, self.te.max_index)) + 1
        dense = False if name in ("adult", "reuters") else None
        self.kd = kernel_data(self.tr.indptr, self.tr.indices, self.tr.values, width=width,
                              dense=dense, training=True)
        self.kd_te = kernel_data(self.te.indptr, self.te.indices, self.te.values, width=width,
                                 dense=dense)
        self.C, self.gamma = SETTINGS[name]
        self.kp = make_params(RBF, gamma=self.gamma)
        warm(self.kd, self.kp, self.y_tr, self.C, self.kd_te)

    def row(self, seed, method, s, dec, nsv, secs, kernel_m):
        return dict(dataset=self.name, seed=seed, method=method, s=s, train=self.y_tr.size,
                    test=self.y_te.size, **measures(dec, self.y_te), nsv=nsv, time=secs,
                    kernel_m=kernel_m)

    def evaluate(self, res):
        coef = res.coef[0]
        sv = np.flatnonzero(coef)
        if not sv.size:
            return np.zeros(self.y_te.size), 0
        return decision(self.kd, self.kp, sv, coef[sv], res.rho[0], self.kd_te), int(sv.size)


def train(run, gaps=None, points=40):
    """Run to the end, timing only begin/step; with ``gaps`` (a list) record (seen, gap, #SV)
    about ``points`` times during the epoch, untimed. Returns (SolverResult, seconds)."""
    secs = 0.0
    t = time.perf_counter()
    run.begin()
    secs += time.perf_counter() - t
    chunk = max(1, min(CHUNK, run.l // points)) if gaps is not None else CHUNK
    while not run.done:
        t = time.perf_counter()
        run.step(chunk)
        secs += time.perf_counter() - t
        if gaps is not None and run.online:
            gaps.append((run.processed, run.gap(), run.counters()["expansion_sv"]))
    if gaps is not None:
        gaps.append((run.processed, run.gap(), run.counters()["expansion_sv"]))
    return run.result(), secs


def libsvm_train(d, y, opts):
    """bench_lasvm.libsvm_run, but the clock covers svm_train only: building libsvm's problem
    (a Python loop over the rows, seconds on adult) is left out, as our solvers' timings leave
    out reading and packing the data."""
    from libsvm import svmutil

    import scipy.sparse as sp

    width = int(d.indices.max())
    X = sp.csr_matrix((d.values, d.indices - 1, d.indptr), shape=(len(d.indptr) - 1, width))
    prob = svmutil.svm_problem(list(y), X)
    t = time.perf_counter()
    m = svmutil.svm_train(prob, opts + " -q")
    secs = time.perf_counter() - t
    sv = np.asarray(m.get_sv_indices(), np.int64) - 1
    coef = np.array([c[0] for c in m.get_sv_coef()])
    sign = 1.0 if m.get_labels()[0] == 1 else -1.0  # decision > 0 means label[0]
    return secs, sv, sign * coef, sign * m.rho[0]


def write_rows(path, header, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    tmp.replace(path)


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def part_table3(name, args, raw):
    d = Data(name, args)
    print(f"== table3-{name}: {d.y_tr.size} train, {d.y_te.size} test, C = {d.C:g}, "
          f"gamma = {d.gamma:g}, seeds {args.seeds}", flush=True)
    rows, gap_rows = [], []
    secs, sv, coef, rho = libsvm_train(d.tr, d.y_tr, f"-c {d.C!r} -g {d.gamma!r} -m "
                                                     f"{args.cache_mb}")
    dec = decision(d.kd, d.kp, sv, coef, rho, d.kd_te)
    rows.append(d.row("", "LIBSVM", "", dec, int(sv.size), secs, float("nan")))
    print(f"   LIBSVM          {secs:8.2f} s  nSV {sv.size}", flush=True)
    for seed in args.seeds:
        for method in METHODS[:-1]:
            if method == "FULL SVM" and seed not in args.seeds[:args.full_svm_seeds]:
                continue
            if method == "LASVM":
                run = LasvmRun(d.kd, d.kp, d.y_tr, d.C, d.C, cache_mb=args.cache_mb, seed=seed)
            else:
                run = LasvmGRun(d.kd, d.kp, d.y_tr, d.C, d.C, solver=ONLINE[method],
                                cache_mb=args.cache_mb, seed=seed)
            gaps = [] if method == "LASVM-G" else None
            res, secs = train(run, gaps)
            dec, nsv = d.evaluate(res)
            s = -1.0 if method in ("LASVM-NC", "LASVM-I") else ""
            rows.append(d.row(seed, method, s, dec, nsv, secs,
                              res.counters["kernel_evals"] / 1e6))
            for seen, gap, nsv_t in gaps or ():
                gap_rows.append(dict(dataset=name, seed=seed, train=d.y_tr.size, seen=seen,
                                     gap=gap, gap_per_seen=gap / max(1, seen), sv=nsv_t))
            print(f"   seed {seed} {method:<9} {secs:8.2f} s  nSV {nsv:6d}  acc "
                  f"{rows[-1]['accuracy']:.2f}", flush=True)
    write_rows(raw / f"fig1-{name}.csv", GAP_ROW, gap_rows)
    write_rows(raw / f"table3-{name}.csv", ROW, rows)


def part_fig5(name, args, raw):
    d = Data(name, args)
    seed = args.seeds[0]
    print(f"== fig5-{name}: {d.y_tr.size} train, s in {args.s}, seed {seed}", flush=True)
    rows = []
    for s in args.s:
        for method in ("LASVM-NC", "LASVM-I"):
            run = LasvmGRun(d.kd, d.kp, d.y_tr, d.C, d.C, solver=ONLINE[method],
                            cache_mb=args.cache_mb, seed=seed, ramp_s=s)
            res, secs = train(run)
            dec, nsv = d.evaluate(res)
            rows.append(d.row(seed, method, s, dec, nsv, secs,
                              res.counters["kernel_evals"] / 1e6))
            print(f"   s {s:6g} {method:<9} {secs:8.2f} s  nSV {nsv:6d}  acc "
                  f"{rows[-1]['accuracy']:.2f}", flush=True)
    write_rows(raw / f"fig5-{name}.csv", ROW, rows)


def part_time(name, args, raw):
    """Training times only, LIBSVM and the online solvers back to back, --time-repeats rounds
    (round r uses order r): on a loaded machine the ratio within one round is steadier than
    Table 3's means, where LIBSVM runs once."""
    d = Data(name, args)
    print(f"== time-{name}: {d.y_tr.size} train, {args.time_repeats} rounds", flush=True)
    rows = []
    for r in range(args.time_repeats):
        secs, *_ = libsvm_train(d.tr, d.y_tr, f"-c {d.C!r} -g {d.gamma!r} -m {args.cache_mb}")
        rows.append(dict(dataset=name, round=r, method="LIBSVM", time=secs))
        for method in ("LASVM", "LASVM-G", "LASVM-NC", "LASVM-I"):
            if method == "LASVM":
                run = LasvmRun(d.kd, d.kp, d.y_tr, d.C, d.C, cache_mb=args.cache_mb, seed=r)
            else:
                run = LasvmGRun(d.kd, d.kp, d.y_tr, d.C, d.C, solver=ONLINE[method],
                                cache_mb=args.cache_mb, seed=r)
            _, secs = train(run)
            rows.append(dict(dataset=name, round=r, method=method, time=secs))
        print("   round", r, " ".join(f"{x['method']} {x['time']:.2f}" for x in rows[-5:]),
              flush=True)
    write_rows(raw / f"time-{name}.csv", ("dataset", "round", "method", "time"), rows)


def time_table(raw, out, names):
    """Per round, each method's time over LIBSVM's; median and range over the rounds."""
    lines = ["### Training time over LIBSVM's, measured back to back: median [min–max] over "
             "rounds (the paper's ratio from Table 3)", "",
             "| method | " + " | ".join(PAPER_NAMES[n] for n in names) + " |",
             "|---|" + "---:|" * len(names)]
    flat = []
    per = {n: read_rows(raw / f"time-{n}.csv") for n in names}
    for m in ("LASVM", "LASVM-G", "LASVM-NC", "LASVM-I"):
        cells = []
        for n in names:
            rounds = sorted({r["round"] for r in per[n]})
            t = {(r["round"], r["method"]): float(r["time"]) for r in per[n]}
            ratios = [t[(k, m)] / t[(k, "LIBSVM")] for k in rounds]
            p = PAPER["time"][m][n] / PAPER["time"]["LIBSVM"][n]
            cells.append(f"{statistics.median(ratios):.2f} [{min(ratios):.2f}–"
                         f"{max(ratios):.2f}] ({p:.2f})")
            flat.append(dict(dataset=n, method=m, median=statistics.median(ratios),
                             min=min(ratios), max=max(ratios), rounds=len(ratios), paper=p))
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lib = []
    for n in names:
        t = statistics.median(float(r["time"]) for r in per[n] if r["method"] == "LIBSVM")
        lib.append(f"{PAPER_NAMES[n]} {t:.3g} s")
    lines += ["", "LIBSVM's own time, median over rounds: " + ", ".join(lib), ""]
    with open(out / "time_ratios.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=("dataset", "method", "median", "min", "max", "rounds",
                                          "paper"))
        w.writeheader()
        w.writerows(flat)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# report

T3 = (("accuracy", "Accuracy (%)", "{:.2f}"), ("nsv", "# SV", "{:.0f}"),
      ("time", "Train time (s)", "{:.3g}"))
T4 = (("prbep", "PRBEP", "{:.2f}"), ("auc", "AUC", "{:.3f}"), ("gmeans", "G-means", "{:.2f}"),
      ("kernel_m", "# Kernel (x10^6)", "{:.3g}"))


def _f(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def summary(values):
    v = [x for x in values if not np.isnan(x)]
    if not v:
        return None
    return statistics.fmean(v), min(v), max(v), len(v)


def cell(fmt, summ, paper):
    if summ is None:
        o = "–"
    else:
        mean, lo, hi, n = summ
        o = fmt.format(mean) if n == 1 or lo == hi else \
            f"{fmt.format(mean)} [{fmt.format(lo)}–{fmt.format(hi)}]"
    return o + ("" if paper is None else f" ({fmt.format(paper)})")


def tables(rows, out, names):
    by = {}
    for r in rows:
        by.setdefault((r["dataset"], r["method"]), []).append(r)
    md, flat = [], []
    for tag, measures_, title in (("table3", T3, "Table 3"), ("table4", T4, "Table 4")):
        lines = [f"### {title}: ours, mean [min–max] over the orders (the paper's value)", ""]
        for key, label, fmt in measures_:
            lines.append(f"| {label} | " + " | ".join(PAPER_NAMES[n] for n in names) + " |")
            lines.append("|---|" + "---:|" * len(names))
            for m in METHODS:
                if not any((n, m) in by for n in names):
                    continue
                cells = []
                for n in names:
                    s = summary([_f(r[key]) for r in by.get((n, m), [])])
                    p = PAPER.get(key, {}).get(m, {}).get(n)
                    cells.append(cell(fmt, s, p))
                    if s:
                        flat.append(dict(table=tag, measure=key, dataset=n, method=m,
                                         mean=s[0], min=s[1], max=s[2], runs=s[3], paper=p))
                lines.append(f"| {m} | " + " | ".join(cells) + " |")
            lines.append("")
        text = "\n".join(lines)
        (out / f"{tag}.md").write_text(text)
        md.append(text)
        with open(out / f"{tag}.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=("table", "measure", "dataset", "method", "mean",
                                              "min", "max", "runs", "paper"))
            w.writeheader()
            for r in flat:
                if r["table"] == tag:
                    w.writerow(r)
    sizes = ["| dataset | train rows (paper) | test rows (paper) | orders |",
             "|---|---:|---:|---:|"]
    for n in names:
        rs = [r for r in rows if r["dataset"] == n]
        seeds = sorted({r["seed"] for r in rs if r["seed"] != ""})
        sizes.append(f"| {PAPER_NAMES[n]} | {rs[0]['train']} ({PAPER_ROWS[n][0]}) | "
                     f"{rs[0]['test']} ({PAPER_ROWS[n][1]}) | {len(seeds)} |")
    return "\n".join(sizes) + "\n\n" + "\n".join(md), flat


def claims(rows, names):
    """Per dataset, in how many orders: LASVM-NC has fewer SVs than LASVM-I, LASVM-I computes
    fewer kernel values than LASVM-NC, and each of them trains faster than LASVM (same order)."""
    lines = ["### The paper's comparisons, order by order (count of orders where it holds)", "",
             "| dataset | NC #SV < I #SV | I kernel < NC kernel | NC faster than LASVM | "
             "I faster than LASVM | I faster than NC |", "|---|---:|---:|---:|---:|---:|"]
    for n in names:
        by = {}
        for r in rows:
            if r["dataset"] == n and r["seed"] != "":
                by.setdefault(r["seed"], {})[r["method"]] = r
        seeds = [k for k, v in by.items() if all(m in v for m in ("LASVM-NC", "LASVM-I",
                                                                   "LASVM"))]

        def count(a, b, key):
            return f"{sum(_f(by[k][a][key]) < _f(by[k][b][key]) for k in seeds)} of {len(seeds)}"

        lines.append(f"| {PAPER_NAMES[n]} | {count('LASVM-NC', 'LASVM-I', 'nsv')} | "
                     f"{count('LASVM-I', 'LASVM-NC', 'kernel_m')} | "
                     f"{count('LASVM-NC', 'LASVM', 'time')} | "
                     f"{count('LASVM-I', 'LASVM', 'time')} | "
                     f"{count('LASVM-I', 'LASVM-NC', 'time')} |")
    return "\n".join(lines) + "\n"


def fig8(flat, out, names, plt):
    times = {(r["dataset"], r["method"]): r for r in flat if r["measure"] == "time"}
    with open(out / "fig8.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dataset", "method", "time_mean", "time_min", "time_max", "paper_time",
                    "ratio_to_libsvm", "paper_ratio_to_libsvm"])
        for n in names:
            lib = times.get((n, "LIBSVM"))
            for m in METHODS:
                r = times.get((n, m))
                if r is None:
                    continue
                p = PAPER["time"][m][n]
                w.writerow([n, m, r["mean"], r["min"], r["max"], p,
                            r["mean"] / lib["mean"] if lib else "",
                            p / PAPER["time"]["LIBSVM"][n]])
    if plt is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    width = 0.8 / len(METHODS)
    for ax, src, title in ((axes[0], "ours", "ours (loaded 2-core VM; mean of the orders)"),
                           (axes[1], "paper", "paper (Table 3)")):
        for k, m in enumerate(METHODS):
            vals = []
            for n in names:
                if src == "ours":
                    r = times.get((n, m))
                    vals.append(r["mean"] if r else 0.0)
                else:
                    vals.append(PAPER["time"][m][n])
            ax.bar(np.arange(len(names)) + (k - len(METHODS) / 2 + 0.5) * width, vals, width,
                   label=m)
        ax.set_xticks(np.arange(len(names)), [PAPER_NAMES[n] for n in names])
        ax.set_yscale("log")
        ax.set_ylabel("training time (s), log scale")
        ax.set_title(f"Fig. 8, {title}")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "fig8.png", dpi=110)
    plt.close(fig)


def fig1(raw, out, names, plt):
    data = {}
    for n in names:
        p = raw / f"fig1-{n}.csv"
        if p.exists():
            data[n] = read_rows(p)
    if plt is None or not data:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n, rs in data.items():
        seeds = sorted({r["seed"] for r in rs})
        curves = [[(int(r["seen"]), float(r["gap"]) / max(1, int(r["seen"])))
                   for r in rs if r["seed"] == s] for s in seeds]
        k = min(len(c) for c in curves)
        x = np.array([c[i][0] for i in range(k) for c in curves[:1]])
        y = np.array([[c[i][1] for i in range(k)] for c in curves])
        ax.plot(x / int(rs[0]["train"]), y.mean(axis=0), label=f"{PAPER_NAMES[n]} "
                f"({rs[0]['train']} rows)")
    ax.set_yscale("log")
    ax.set_xlabel("fraction of the training set seen")
    ax.set_ylabel("(J(theta) - G(alpha)) / instances seen")
    ax.set_title("Fig. 1: LASVM-G's duality gap per training instance (mean over orders)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "fig1.png", dpi=110)
    plt.close(fig)


def fig5(raw, out, names, t3rows, plt):
    sweep, points = {}, {}
    for n in names:
        p = raw / f"fig5-{n}.csv"
        if p.exists():
            sweep[n] = read_rows(p)
            seed0 = sweep[n][0]["seed"]
            points[n] = [r for r in t3rows if r["dataset"] == n
                         and r["method"] in ("FULL SVM", "LASVM-G", "LASVM", "LIBSVM")
                         and r["seed"] in (seed0, "")]
    lines = ["### Fig. 5: test error (%) / #SV against s (one order)", ""]
    flat = []
    for n, rs in sweep.items():
        ss = sorted({float(r["s"]) for r in rs})
        lines.append(f"**{PAPER_NAMES[n]}** ({rs[0]['train']} rows)")
        lines.append("")
        lines.append("| method | " + " | ".join(f"s = {s:g}" for s in ss) + " |")
        lines.append("|---|" + "---:|" * len(ss))
        for m in ("LASVM-NC", "LASVM-I"):
            cells = []
            for s in ss:
                r = next(r for r in rs if r["method"] == m and float(r["s"]) == s)
                cells.append(f"{100 - float(r['accuracy']):.2f} / {int(r['nsv'])}")
                flat.append(dict(dataset=n, method=m, s=s, error=100 - float(r["accuracy"]),
                                 nsv=int(r["nsv"]), kernel_m=r["kernel_m"], time=r["time"]))
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        pts = ", ".join(f"{r['method']} {100 - float(r['accuracy']):.2f} / {r['nsv']}"
                        for r in points[n])
        for r in points[n]:
            flat.append(dict(dataset=n, method=r["method"], s="", error=100 - float(r["accuracy"]),
                             nsv=int(r["nsv"]), kernel_m=r["kernel_m"], time=r["time"]))
        lines += ["", f"Single points (same order): {pts}", ""]
    (out / "fig5.md").write_text("\n".join(lines))
    with open(out / "fig5.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=("dataset", "method", "s", "error", "nsv", "kernel_m",
                                          "time"))
        w.writeheader()
        w.writerows(flat)
    if plt is not None and sweep:
        k = len(sweep)
        cols = min(3, k)
        rws = (k + cols - 1) // cols
        fig, axes = plt.subplots(rws, cols, figsize=(5 * cols, 4 * rws), squeeze=False)
        for ax, (n, rs) in zip(axes.flat, sweep.items()):
            for m, mk in (("LASVM-NC", "o-"), ("LASVM-I", "s--")):
                pts = sorted(((float(r["s"]), int(r["nsv"]), 100 - float(r["accuracy"]))
                              for r in rs if r["method"] == m))
                ax.plot([p[1] for p in pts], [p[2] for p in pts], mk, label=m)
                for s, x, y in pts:
                    ax.annotate(f"{s:g}", (x, y), fontsize=7, textcoords="offset points",
                                xytext=(3, 3))
            for r, mk in zip(points[n], ("^", "v", "D", "*")):
                ax.plot([int(r["nsv"])], [100 - float(r["accuracy"])], mk, markersize=9,
                        label=r["method"])
            ax.set_xlabel("# SV")
            ax.set_ylabel("test error (%)")
            ax.set_title(f"{PAPER_NAMES[n]} ({rs[0]['train']} rows); labels: s")
            ax.legend(fontsize=7)
        for ax in list(axes.flat)[k:]:
            ax.axis("off")
        fig.suptitle("Fig. 5: test error against #SV for several s")
        fig.tight_layout()
        fig.savefig(out / "fig5.png", dpi=110)
        plt.close(fig)
    return "\n".join(lines)


def part_report(args, raw, out):
    names = [n for n in _ORDER if (raw / f"table3-{n}.csv").exists()]
    rows = [r for n in names for r in read_rows(raw / f"table3-{n}.csv")]
    plt = pyplot()
    text, flat = tables(rows, out, names) if rows else ("", [])
    if rows:
        fig8(flat, out, names, plt)
        text += "\n" + claims(rows, names)
    fig1(raw, out, names, plt)
    text += "\n" + fig5(raw, out, [n for n in _ORDER if (raw / f"fig5-{n}.csv").exists()],
                        rows, plt)
    tnames = [n for n in _ORDER if (raw / f"time-{n}.csv").exists()]
    if tnames:
        text += "\n" + time_table(raw, out, tnames)
    (out / "figures.md").write_text(text)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default=",".join([f"table3-{n}" for n in DATASETS] +
                                                [f"fig5-{n}" for n in DATASETS] + ["report"]))
    ap.add_argument("--seeds", default="0-4", help="example orders, e.g. 0-4 or 0,3")
    ap.add_argument("--rows", default="", help="training rows per dataset, e.g. adult=8000")
    ap.add_argument("--test-rows", default="", help="test rows per dataset")
    ap.add_argument("--s", default="-5,-2,-1,-0.5,0,0.5", help="ramp s values for fig5")
    ap.add_argument("--full-svm-seeds", type=int, default=None,
                    help="run FULL SVM (no CLEAN: the slowest) on the first N orders only")
    ap.add_argument("--time-repeats", type=int, default=3, help="rounds of a time-DS part")
    ap.add_argument("--cache-mb", type=float, default=256.0)
    ap.add_argument("--redo", action="store_true", help="rerun parts whose raw file exists")
    ap.add_argument("--out", default=str(REPO / "results" / "paper-001"))
    args = ap.parse_args()
    args.seeds = parse_seeds(args.seeds)
    args.rows, args.test_rows = parse_rows(args.rows), parse_rows(args.test_rows)
    args.s = [float(s) for s in args.s.split(",")]
    out = Path(args.out)
    raw = out / "raw"
    for part in args.part.split(","):
        kind, _, name = part.partition("-")
        if kind == "report":
            part_report(args, raw, out)
            continue
        if kind not in ("table3", "fig5", "time") or name not in DATASETS:
            ap.error(f"unknown part {part}")
        if (raw / f"{part}.csv").exists() and not args.redo:
            print(f"== {part}: done ({raw / f'{part}.csv'}), skipped", flush=True)
            continue
        t = time.perf_counter()
        dict(table3=part_table3, fig5=part_fig5, time=part_time)[kind](name, args, raw)
        print(f"== {part}: {time.perf_counter() - t:.0f} s", flush=True)


if __name__ == "__main__":
    main()
