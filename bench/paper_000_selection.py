"""make paper-000, example selection: Bordes, Ertekin, Weston & Bottou (2005), section 4.4,
Figures 11 to 15.

Four LASVM example selection criteria (paper section 4.4), our ``solve_lasvm`` selections:
RANDOM (plain LASVM), GRADIENT (smallest y f(x) of 50 random unprocessed examples), ACTIVE
(smallest |f(x)| of 50) and AUTOACTIVE (sample until 5 candidates lie within 1 + delta/2 of the
boundary, at most 100; smallest |f(x)|). Each curve is one online epoch. At each measuring
point the run is finished on a copy and measured, then continues (the paper: "run a predefined
number of online iterations, save the LASVM state, perform the finishing step, measure error
rates and number of support vectors, and restore the saved LASVM state"): this is
:meth:`LasvmRun.finished_copy`, the step svm-train's ``--snapshots`` takes
(lasvm_cli/training/run_control.py), driven here in-process so that the copy's finishing time is
measured too (the paper's times include it; the snapshot driver does not count it) and no model
file is written. Time = the online iterations so far + that finishing step (the copy starts with an
empty kernel cache; test-error evaluation is not counted). Iterations = PROCESS calls, the 2 x 5
seeds included.

* Adult (Figures 11 and 12; RBF gamma = 0.005, C = 100, tau = 0.001, 40 MB cache, Figure 7's
  settings): the 48,842 rows of the train and test files pooled and split at random, ``--runs``
  times (default 3; the paper: 65 splits); ``--adult-train N`` training rows (default 8,000;
  0: 32,561, the standard split's size), ``--adult-test N`` test rows of the rest (default
  8,000; 0: all the rest). LIBSVM (libsvm-official, same process) on each split gives the
  dashed line. Figure 11: test error against iterations and against seconds; Figure 12: against SVs.
* MNIST digit 8 against the rest (Figures 13 to 15; the paper's section 3.3 settings, as
  ``paper_000.py --mnist-figures``: gamma = 0.005, C = 1000, 256 MB cache, pixels / 255):
  RANDOM, GRADIENT and ACTIVE over ``--seeds`` example orders (default 2; the paper: 5), on
  ``--mnist-rows`` training rows drawn at random (default 3,000; 0: all 60,000, the paper's)
  and ``--mnist-test`` test rows (default 0: all 10,000), without noise (Figure 13) and with
  10% of the training labels flipped (Figure 14; the test labels stay clean); Figure 15: error
  and SVs of both conditions, LIBSVM trained on the clean and on the noisy labels. The paper
  does not say how its noise was drawn: ``--mnist-noise flip`` (default) flips 10% of the
  binary labels (as Figure 8's USPS+N here), ``--mnist-noise digits`` gives 10% of the training
  digits another digit at random before "8 against the rest" (about 2% of the binary labels
  change).

Writes results/paper-000/figure11-12.md|csv (Adult), figure13-15.md|csv (MNIST),
selection-summary.md|csv (per criterion: where its mean curve first reaches LIBSVM's error, and
its end of epoch) and, with matplotlib, results/paper-000-fig11.png ... -fig15.png.
``--only adult|mnist`` runs one part (the summary then holds that part only). Measuring points:
``--first`` (default 50) iterations, then ``--per-doubling`` (default 2) points per doubling, and
the end of the epoch. The default run takes 8 to 10 minutes here (Adult about 2, MNIST 6).
"""

import argparse
import copy
import sys
import time

import numpy as np

from paper_000 import (CACHE_MB, MNIST_C, MNIST_CACHE_MB, MNIST_GAMMA, PROBLEMS, TAU, flip_labels,
                       kernel_sets, mnist_data, run_libsvm, take_rows, test_error, warm_up)
from paper_tables import RESULTS, Table, pyplot, read_shared

CANDIDATES = 50
NAMES = {"random": "RANDOM", "gradient": "GRADIENT", "active": "ACTIVE",
         "autoactive": "AUTOACTIVE"}
ADULT_GAMMA, ADULT_C = PROBLEMS["Adult"][1:3]  # Figure 7's, as Figure 8 uses them
ADULT_SELECTIONS = ("random", "gradient", "active", "autoactive")
MNIST_DIGIT, MNIST_NOISE = 8, 0.10
MNIST_SELECTIONS = ("random", "gradient", "active")
NOISE_NAME = {"flip": f"{MNIST_NOISE:.0%} flipped", "digits": f"{MNIST_NOISE:.0%} digit noise"}
NOISE_TEXT = {"flip": f"{MNIST_NOISE:.0%} of the training labels (binary) flipped",
              "digits": f"{MNIST_NOISE:.0%} of the training digits replaced by another digit"}
# the paper's own numbers (section 4.4, text): Adult, LIBSVM 11278 SVs; AUTOACTIVE reaches its
# accuracy with 2500 SVs after 150 s (a fifteenth of a RANDOM epoch)
PAPER_ADULT = ("the paper (65 splits, full size): GRADIENT \"performs very poorly\"; ACTIVE and "
               "AUTOACTIVE reach a lower error than LIBSVM after a few iterations, then rise "
               "towards it; AUTOACTIVE reaches LIBSVM's accuracy with 2,500 SVs instead of "
               "11,278, after 150 s, a fifteenth of a RANDOM epoch; RANDOM after one epoch "
               "replicates LIBSVM's error and SVs.")
PAPER_MNIST = ("the paper (5 seeds, 60,000 rows): clean, GRADIENT and ACTIVE perform similarly "
               "and need about RANDOM's time for a similar error; with 10% label noise "
               "GRADIENT converges chaotically, ACTIVE is undisturbed and reaches the error "
               "and SVs of LIBSVM on clean data; LIBSVM on noisy labels: slightly higher "
               "error, many more SVs; RANDOM replicates LIBSVM after one epoch.")


def checkpoints(total, first=50, per_doubling=1):
    """Measuring points (iterations): ``first``, then doubling (``per_doubling`` points per
    doubling), always ending at ``total``; sorted, distinct, all <= total."""
    points = set()
    k = 0
    while True:
        v = int(round(first * 2 ** (k / per_doubling)))
        if v >= total:
            break
        points.add(v)
        k += 1
    points.add(int(total))
    return sorted(p for p in points if p > 0)


def curve(kd, kd_te, kp, y_tr, y_te, C, selection, seed, points, cache_mb):
    """One online epoch of LASVM with ``selection``, finished and measured at each of
    ``points``: rows (iterations, seconds, SV, test error %)."""
    from lasvm_cli.solvers.lasvm import LasvmRun

    run = LasvmRun(kd, kp, y_tr, C, C, eps=TAU, cache_mb=cache_mb, epochs=1,
                   selection=selection, candidates=CANDIDATES, seed=seed)
    t0 = time.perf_counter()
    run.begin()
    online = time.perf_counter() - t0
    rows = []
    for target in points:
        while run.online and run.processed < target:
            t0 = time.perf_counter()
            run.step(min(run.CHUNK, target - run.processed))
            online += time.perf_counter() - t0
        t0 = time.perf_counter()
        fin = run.finished_copy()
        finishing = time.perf_counter() - t0
        coef, rho = fin.coef_rho()
        rows.append((run.processed, online + finishing, int(np.count_nonzero(coef)),
                     test_error(kd, kd_te, kp, coef, rho, y_te)))
        if not run.online:
            break
    return rows


def relabel_digits(digits, fraction, seed):
    """``digits`` (0-9) with ``fraction`` of them, drawn at random, replaced by another digit
    drawn uniformly."""
    digits = np.asarray(digits).copy()
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(digits), size=int(round(fraction * len(digits))), replace=False)
    digits[rows] = (digits[rows] + rng.integers(1, 10, size=rows.size)) % 10
    return digits


def noisy_labels(digits, clean, kind, seed=0):
    """The +-1 training labels with MNIST_NOISE label noise of ``kind`` (flip | digits)."""
    if kind == "flip":
        return flip_labels(clean, MNIST_NOISE, seed=seed)
    return np.where(relabel_digits(digits, MNIST_NOISE, seed) == MNIST_DIGIT, 1.0, -1.0)


def mean_curve(runs):
    """Mean (iterations, seconds, SV, error) by measuring point over runs of equal points."""
    n = min(len(r) for r in runs)
    return [tuple(float(np.mean([r[i][k] for r in runs])) for k in range(4)) for i in range(n)]


def stack_rows(a, b):
    """The rows of svmlight data ``a`` then ``b`` as one data set."""
    return type(a)(y=np.concatenate([a.y, b.y]), indptr=np.concatenate(
        [a.indptr, a.indptr[-1] + b.indptr[1:]]), indices=np.concatenate([a.indices, b.indices]),
        values=np.concatenate([a.values, b.values]), max_index=max(a.max_index, b.max_index))


def adult_split(pool, n_train, n_test, seed):
    """Random disjoint training and test rows of ``pool`` (0: all the rest for the test)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(pool.y))
    n_train = n_train or 32561
    rest = order[n_train:]
    te_rows = rest[:n_test] if n_test else rest
    return (take_rows(copy.copy(pool), np.sort(order[:n_train])),
            take_rows(copy.copy(pool), np.sort(te_rows)))


def adult_curves(args):
    """{criterion: [mean curve]}, {"LIBSVM": (error, SV, seconds)}, sizes."""
    from lasvm_cli.numerics.kernels import RBF, make_params

    pool = stack_rows(read_shared("adult", "train"), read_shared("adult", "test"))
    kp = make_params(RBF, gamma=ADULT_GAMMA)
    runs = {s: [] for s in ADULT_SELECTIONS}
    lib = []
    for split in range(args.runs):
        tr, te = adult_split(pool, args.adult_train, args.adult_test, seed=split)
        y_tr, y_te = np.where(tr.y > 0, 1.0, -1.0), np.where(te.y > 0, 1.0, -1.0)
        kd, kd_te = kernel_sets(tr, te)
        coef, rho, seconds = run_libsvm(tr, y_tr, ADULT_GAMMA, ADULT_C, len(y_tr))
        lib.append((test_error(kd, kd_te, kp, coef, rho, y_te), np.count_nonzero(coef),
                    seconds))
        points = checkpoints(len(y_tr), args.first, args.per_doubling)
        for s in ADULT_SELECTIONS:
            runs[s].append(curve(kd, kd_te, kp, y_tr, y_te, ADULT_C, s, split, points,
                                 CACHE_MB))
            print(f"adult split {split} {s}: end {runs[s][-1][-1]}", file=sys.stderr,
                  flush=True)
        print(f"adult split {split} LIBSVM {lib[-1]}", file=sys.stderr, flush=True)
    means = {NAMES[s]: mean_curve(r) for s, r in runs.items()}
    return means, {"LIBSVM": tuple(float(np.mean(c)) for c in zip(*lib))}, (len(y_tr), len(y_te))


def mnist_curves(args):
    """{(condition, criterion): [mean curve]}, {"LIBSVM, condition": (error, SV, seconds)}."""
    from lasvm_cli.numerics.kernels import RBF, make_params

    tr, te = mnist_data(args.mnist_rows, args.mnist_test)
    kd, kd_te = kernel_sets(tr, te)
    kp = make_params(RBF, gamma=MNIST_GAMMA)
    clean = np.where(np.asarray(tr.y) == MNIST_DIGIT, 1.0, -1.0)
    y_te = np.where(np.asarray(te.y) == MNIST_DIGIT, 1.0, -1.0)
    labels = {"clean": clean,
              NOISE_NAME[args.mnist_noise]: noisy_labels(tr.y, clean, args.mnist_noise)}
    points = checkpoints(len(clean), args.first, args.per_doubling)
    means, lib = {}, {}
    for cond, y_tr in labels.items():
        coef, rho, seconds = run_libsvm(tr, y_tr, MNIST_GAMMA, MNIST_C, len(y_tr),
                                        MNIST_CACHE_MB)
        lib[f"LIBSVM, {cond}"] = (test_error(kd, kd_te, kp, coef, rho, y_te),
                                  float(np.count_nonzero(coef)), seconds)
        print(f"mnist {cond} LIBSVM {lib[f'LIBSVM, {cond}']}", file=sys.stderr, flush=True)
        for s in MNIST_SELECTIONS:
            runs = [curve(kd, kd_te, kp, y_tr, y_te, MNIST_C, s, seed, points, MNIST_CACHE_MB)
                    for seed in range(args.seeds)]
            means[(cond, NAMES[s])] = mean_curve(runs)
            print(f"mnist {cond} {s}: end {means[(cond, NAMES[s])][-1]}", file=sys.stderr,
                  flush=True)
    return means, lib, (len(clean), len(y_te))


def reach(curve_rows, target):
    """The first measuring point whose error is <= target (to rounding), or None."""
    return next((r for r in curve_rows if r[3] <= target + 1e-9), None)


def summary_rows(table, part, curves, lib_error):
    """Per curve: where it first reaches LIBSVM's error, its lowest error, its end of epoch."""
    for name, rows in curves.items():
        hit = reach(rows, lib_error)
        best = min(rows, key=lambda r: r[3])
        table.add(**{
            "problem": part, "criterion": name, "LIBSVM error (%)": lib_error,
            "reaches it at: iterations": "not reached" if hit is None else int(hit[0]),
            "seconds": "" if hit is None else hit[1],
            "SV": "" if hit is None else int(round(hit[2])),
            "lowest error (%)": best[3], "at iterations": int(best[0]),
            "end of epoch: error (%)": rows[-1][3], "end: SV": int(round(rows[-1][2])),
            "end: seconds": rows[-1][1]})


def curve_table(name, title, note, curves, lib, key_cols):
    """One row per curve and measuring point, then LIBSVM's rows."""
    table = Table(name, title, key_cols + ["iterations", "seconds", "SV", "error (%)"], note)
    for key, rows in curves.items():
        key = key if isinstance(key, tuple) else (key,)
        for it, seconds, sv, err in rows:
            table.add(**dict(zip(key_cols, key)), iterations=int(it), seconds=seconds,
                      SV=int(round(sv)), **{"error (%)": err})
    for trainer, (err, sv, seconds) in lib.items():
        table.add(**{key_cols[-1]: trainer, "iterations": "-", "seconds": seconds,
                     "SV": int(round(sv)), "error (%)": err})
    return table


def _lines(ax, curves, x, y, lib=None, lib_y=None):
    """One line per curve (x, y: column numbers of the curve rows), LIBSVM dashed."""
    for name, rows in curves.items():
        ax.plot([r[x] for r in rows], [r[y] for r in rows], marker=".", label=name)
    for label, (value, style) in (lib or {}).items():
        ax.axhline(value, linestyle=style, color="k", linewidth=1, label=label)
    if x in (0, 1, 2) and y != 2:
        ax.set_xscale("log")


AXES = {0: "online iterations", 1: "seconds (online + finishing)", 2: "support vectors",
        3: "test error (%)"}


def draw(path, title, panels):
    """panels: [(curves, x, y, {label: (value, line style)})] side by side."""
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(max(5.2 * len(panels), 8.0), 3.8),
                             squeeze=False)
    for ax, (curves, x, y, lib) in zip(axes[0], panels):
        _lines(ax, curves, x, y, lib)
        ax.set_xlabel(AXES[x])
        ax.set_ylabel(AXES[y])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path, flush=True)


def adult_part(args, summary):
    t0 = time.perf_counter()
    curves, lib, (n_tr, n_te) = adult_curves(args)
    whole = time.perf_counter() - t0
    lib_err, lib_sv, lib_s = lib["LIBSVM"]
    note = (f"Adult, RBF gamma = {ADULT_GAMMA}, C = {ADULT_C:g}, tau = {TAU}, {CACHE_MB} MB "
            f"cache, {CANDIDATES} candidates (AUTOACTIVE: up to 100). Subsampled: {args.runs} "
            f"random splits of the pooled 48,842 rows (the paper: 65), each {n_tr:,} training "
            f"rows (the paper: 32,561) and {n_te:,} test rows of the rest; curves and LIBSVM "
            "(libsvm-official 3.37, same process) averaged over the splits, one example order "
            "per split. Each point: the run's online iterations so far, finished on a copy "
            "(time = online + finishing, a 2005 machine in the paper: compare shapes). "
            f"LIBSVM: {lib_err:.3f}% error, {lib_sv:.0f} SVs, {lib_s:.1f} s. Whole part: "
            f"{whole:.0f} s. Compare {PAPER_ADULT}")
    curve_table("figure11-12", "Figures 11 and 12: example selection on Adult", note, curves,
                lib, ["criterion"]).write(RESULTS / "paper-000")
    summary_rows(summary, f"Adult ({n_tr:,} rows)", curves, lib_err)
    line = {"LIBSVM": (lib_err, "--")}
    draw(RESULTS / "paper-000-fig11.png",
         f"Figure 11: Adult, {args.runs} random splits of {n_tr:,} training rows",
         [(curves, 0, 3, line), (curves, 1, 3, line)])
    draw(RESULTS / "paper-000-fig12.png", f"Figure 12: Adult, error against support vectors "
         f"({args.runs} splits, {n_tr:,} rows; LIBSVM: {lib_sv:.0f} SVs)", [(curves, 2, 3, line)])
    return whole


def mnist_part(args, summary):
    t0 = time.perf_counter()
    curves, lib, (n_tr, n_te) = mnist_curves(args)
    whole = time.perf_counter() - t0
    note = (f"MNIST digit {MNIST_DIGIT} against the rest, RBF gamma = {MNIST_GAMMA}, C = "
            f"{MNIST_C:g}, tau = {TAU}, {MNIST_CACHE_MB} MB cache, pixels / 255, "
            f"{CANDIDATES} candidates. Subsampled: {n_tr:,} training rows drawn at random "
            f"(seed 0; the paper: all 60,000), {n_te:,} test rows, curves averaged over "
            f"{args.seeds} example order(s) (the paper: 5). Noise: "
            f"{NOISE_TEXT[args.mnist_noise]} at random (seed 0), test labels clean. LIBSVM = "
            "libsvm-official 3.37 in the same run, on each label set. " +
            "; ".join(f"{k}: {e:.3f}% error, {sv:.0f} SVs, {s:.1f} s" for k, (e, sv, s) in
                      lib.items()) + f". Whole part: {whole:.0f} s. Compare {PAPER_MNIST}")
    curve_table("figure13-15", "Figures 13 to 15: example selection on MNIST (8 against the "
                "rest)", note, curves, lib, ["labels", "criterion"]).write(RESULTS / "paper-000")
    clean_err = lib["LIBSVM, clean"][0]
    noisy = NOISE_NAME[args.mnist_noise]
    for cond in ("clean", noisy):
        summary_rows(summary, f"MNIST 8, {cond} ({n_tr:,} rows)",
                     {name: rows for (c, name), rows in curves.items() if c == cond},
                     clean_err)
    lines = {k: (v[0], "--" if k.endswith("clean") else ":") for k, v in lib.items()}
    size = f"{n_tr:,} training rows, {args.seeds} order(s)"
    for fig, cond in ((13, "clean"), (14, noisy)):
        sub = {name: rows for (c, name), rows in curves.items() if c == cond}
        draw(RESULTS / f"paper-000-fig{fig}.png", f"Figure {fig}: MNIST 8 against the rest, "
             f"{cond} training labels ({size})", [(sub, 0, 3, lines), (sub, 1, 3, lines)])
    both = {f"{name}, {cond}": rows for (cond, name), rows in curves.items()}
    svs = {f"{k} ({v[1]:.0f} SVs)": (v[0], s) for k, (v, s) in
           ((k, (lib[k], lines[k][1])) for k in lib)}
    draw(RESULTS / "paper-000-fig15.png", f"Figure 15: MNIST 8, error and SVs, clean and "
         f"{noisy} ({size})", [(both, 2, 3, svs), (both, 0, 2, {})])
    return whole


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("adult", "mnist"))
    ap.add_argument("--runs", type=int, default=3, help="Adult random splits (the paper: 65)")
    ap.add_argument("--adult-train", type=int, default=8000,
                    help="Adult training rows per split (0: 32,561, the paper's)")
    ap.add_argument("--adult-test", type=int, default=8000,
                    help="Adult test rows per split, of the rest (0: all the rest)")
    ap.add_argument("--seeds", type=int, default=2,
                    help="MNIST example orders averaged (the paper: 5)")
    ap.add_argument("--mnist-rows", type=int, default=3000,
                    help="MNIST training rows drawn at random (0: all 60,000, the paper's)")
    ap.add_argument("--mnist-test", type=int, default=0,
                    help="MNIST test rows drawn at random (0: all 10,000)")
    ap.add_argument("--mnist-noise", choices=("flip", "digits"), default="flip",
                    help="10%% noise: flip binary labels (default) or relabel digits")
    ap.add_argument("--first", type=int, default=50, help="first measuring point (iterations)")
    ap.add_argument("--per-doubling", type=int, default=2,
                    help="measuring points per doubling of the iterations")
    args = ap.parse_args()
    warm_up()
    summary = Table("selection-summary", "Figures 11 to 15: where each criterion reaches "
                    "LIBSVM's error (on MNIST: LIBSVM on clean labels)", [
                        "problem", "criterion", "LIBSVM error (%)",
                        "reaches it at: iterations", "seconds", "SV", "lowest error (%)",
                        "at iterations", "end of epoch: error (%)", "end: SV", "end: seconds"],
                    "Mean curves of figure11-12 and figure13-15 (their notes give the sizes); "
                    "a point is one measurement after the finishing step.")
    if args.only in (None, "adult"):
        adult_part(args, summary)
    if args.only in (None, "mnist"):
        mnist_part(args, summary)
    summary.write(RESULTS / "paper-000")


if __name__ == "__main__":
    main()
