"""make paper-000, Figures 6 and 10 of Bordes, Ertekin, Weston & Bottou (2005)
(JMLR 6, 2005): the kernel cache size and delta_max.

* Figure 6 (``--figure 6``): LIBSVM's and LASVM x1's training times as functions of the kernel
  cache size, 8 MB to 1 GB, as the relative change with respect to LIBSVM with 1 GB, averaged
  over the ten MNIST "digit d against the nine others" classifiers (section 3.3's settings:
  RBF gamma = 0.005, C = 1000, tau = 0.001; pixels / 255). The paper trains on all 60,000
  rows; ``--mnist-rows N`` (default 2000) draws N of them at random (seed 0, through
  ``paper_000.mnist_data``, as ``--mnist-figures`` does). A cache of M MB holds a far larger part of a
  sample's kernel matrix than of the paper's, so each paper size is scaled to hold the same
  fraction of the matrix (float32 entries): M * (N / 60000)^2 MB of rows for both solvers,
  LIBSVM's -m adding its 32-byte header per row (N * 32 bytes), which LIBSVM takes out of
  the cache before storing any entry; each solver keeps at least two rows whatever the size.
  ``--cache-mb`` picks the paper's sizes to run (default 8, 32, 128, 512 and 1024, every other
  one of the paper's eight: LIBSVM with a small cache takes most of the run's time, about five
  minutes), ``--digits`` some of the ten classifiers.
* Figure 10 (``--figure 10``): Banana (Figure 7's gamma = 0.5, C = 316, 40 MB cache) with
  REPROCESS repeated until delta < delta_max after each PROCESS (svm-train's ``--delta-max``),
  test error, training time and support vectors measured after one epoch without the
  finishing step, after one epoch and finishing, and after two epochs and finishing; LIBSVM's
  values as markers on the right. ``--delta-max X ...`` sets the values (the unmodified
  LASVM, a single REPROCESS, is drawn at the left as "inf"; default inf, 30, 10, 5, 3, 2,
  1, 0.3 and 0.1: about three minutes, most of it at 0.1).

Both by default. Writes results/paper-000/figure6.md|csv and figure10.md|csv and, with
matplotlib, results/paper-000-fig6-cache.png and results/paper-000-fig10-deltamax.png.
"""

import argparse
import sys
import time

import numpy as np

from paper_000 import (CACHE_MB, MNIST_C, MNIST_GAMMA, TAU, kernel_sets, mnist_data, problem,
                       run_libsvm, test_error, warm_up)
from paper_tables import RESULTS, Table, clock, pyplot

# Figure 6: the paper's cache sizes (MB; 1024 is the reference) and training set; the default
# run takes every other one (LIBSVM with a small cache dominates its time)
PAPER_CACHE_MB = (8, 16, 32, 64, 128, 256, 512, 1024)
CACHE_MB_DEFAULT = (8, 32, 128, 512, 1024)
PAPER_MNIST_ROWS = 60000
LIBSVM_HEAD_BYTES = 32  # sizeof(head_t) in svm.cpp's Cache on a 64-bit machine
FIG6_TRAINERS = ("LIBSVM", "LASVM x1")

# Figure 10: delta_max values, None = the unmodified LASVM (one REPROCESS per PROCESS)
DELTA_MAX = (None, 30.0, 10.0, 5.0, 3.0, 2.0, 1.0, 0.3, 0.1)
FIG10_RUNS = {  # label: (epochs, finishing step)
    "x1 before finishing": (1, False),
    "x1": (1, True),
    "x2": (2, True),
}
FIG10_MEASURES = ("error (%)", "time (s)", "SV")


def scaled_cache(paper_mb, rows):
    """(our cache_mb, LIBSVM's -m) holding the fraction of a ``rows``-row kernel matrix that
    ``paper_mb`` held of the paper's 60,000-row one; LIBSVM's adds its row headers."""
    ours = paper_mb * (rows / PAPER_MNIST_ROWS) ** 2
    return ours, ours + rows * LIBSVM_HEAD_BYTES / 2 ** 20


def relative_change(seconds, reference):
    """Percent change of each digit's ``seconds`` against ``reference``, averaged (the
    paper's Figure 6 axis)."""
    seconds, reference = np.asarray(seconds, float), np.asarray(reference, float)
    return float(np.mean(100.0 * (seconds - reference) / reference))


def cache_times(tr, sizes, digits, seeds):
    """{paper MB: {trainer: [seconds per digit]}} for the paper's cache ``sizes`` (MB) on
    training data ``tr``."""
    from lasvm_cli.numerics.kernels import RBF, make_params
    from lasvm_cli.solvers.lasvm import solve_lasvm

    kd, _ = kernel_sets(tr, tr)
    kp = make_params(RBF, gamma=MNIST_GAMMA)
    n = len(tr.y)
    out = {mb: {t: [] for t in FIG6_TRAINERS} for mb in sizes}
    for digit in digits:
        y = np.where(np.asarray(tr.y) == digit, 1.0, -1.0)
        for mb in sizes:
            ours, libsvm_mb = scaled_cache(mb, n)
            out[mb]["LIBSVM"].append(run_libsvm(tr, y, MNIST_GAMMA, MNIST_C, n, libsvm_mb)[2])
            out[mb]["LASVM x1"].append(float(np.mean([
                clock(solve_lasvm, kd, kp, y, MNIST_C, MNIST_C, eps=TAU, cache_mb=ours,
                      epochs=1, finish=True, seed=seed)[1] for seed in range(seeds)])))
            print(f"digit {digit} cache {mb} MB (ours {ours:.3g} MB):",
                  {t: round(out[mb][t][-1], 3) for t in FIG6_TRAINERS}, file=sys.stderr,
                  flush=True)
    return out


def figure6(args):
    t0 = time.perf_counter()
    tr, _ = mnist_data(args.mnist_rows, 1)
    n = len(tr.y)
    sizes = sorted(set(args.cache_mb) | {1024})
    times = cache_times(tr, sizes, args.digits, args.seeds)
    whole = time.perf_counter() - t0
    reference = times[1024]["LIBSVM"]
    matrix_mb = 4.0 * n * n / 2 ** 20
    smallest = scaled_cache(min(sizes), n)
    headers = (": at the smallest size they alone outweigh the scaled cache"
               if smallest[1] - smallest[0] > smallest[0] else "")
    note = (f"Paper Figure 6: ten MNIST one-against-the-rest classifiers (RBF gamma = "
            f"{MNIST_GAMMA}, C = {MNIST_C:g}, tau = {TAU}, pixels / 255), training time against "
            f"the kernel cache size, as the change relative to LIBSVM with 1 GB averaged over "
            f"the classifiers. Here: digits {', '.join(map(str, args.digits))}, {n:,} training "
            f"rows drawn at random (seed 0) of the paper's 60,000. Cache sizes are scaled to "
            f"keep the paper's fraction of the kernel matrix (float32 entries; this sample's "
            f"matrix is {matrix_mb:.1f} MB, the paper's "
            f"{4.0 * PAPER_MNIST_ROWS ** 2 / 2 ** 30:.1f} GB): paper size x (n / 60000)^2 for "
            f"our LASVM, plus n x {LIBSVM_HEAD_BYTES} bytes of row headers for LIBSVM's -m "
            f"(LIBSVM takes them out of the cache first{headers}); either solver keeps at least "
            f"two rows (a row is {4 * n / 2 ** 20:.4f} MB here). LASVM x1 = one online "
            f"epoch and the finishing step, averaged over {args.seeds} example order(s); "
            f"LIBSVM = libsvm-official 3.37 in the same run, shrinking on. The paper: \"LASVM "
            f"with a 8MB cache runs slightly faster than LIBSVM with a 1024MB cache\" (its plot "
            f"gives no other number). Whole run: {whole:.0f} s.")
    table = Table("figure6", "Figure 6: training time against the kernel cache size",
                  ["paper cache (MB)", "share of the kernel matrix", "our cache (MB)",
                   "LIBSVM -m (MB)", "LIBSVM: time (s)", "LASVM x1: time (s)",
                   "LIBSVM: change vs 1 GB LIBSVM (%)", "LASVM x1: change vs 1 GB LIBSVM (%)"],
                  note)
    curves = {t: [] for t in FIG6_TRAINERS}
    for mb in sizes:
        ours, libsvm_mb = scaled_cache(mb, n)
        row = {"paper cache (MB)": mb, "share of the kernel matrix": f"{ours / matrix_mb:.3%}",
               "our cache (MB)": ours, "LIBSVM -m (MB)": libsvm_mb}
        for trainer in FIG6_TRAINERS:
            change = relative_change(times[mb][trainer], reference)
            curves[trainer].append(change)
            row[f"{trainer}: time (s)"] = float(np.sum(times[mb][trainer]))
            row[f"{trainer}: change vs 1 GB LIBSVM (%)"] = change
        table.add(**row)
    table.write(RESULTS / "paper-000")
    plot6(sizes, curves, n)


def banana_runs(delta_max, seeds):
    """({label: (error %, seconds, SV)} by delta_max, LIBSVM's (error %, seconds, SV))."""
    from lasvm_cli.numerics.kernels import RBF, make_params
    from lasvm_cli.solvers.lasvm import solve_lasvm

    tr, te, y_tr, y_te, gamma, C = problem("Banana")
    kd, kd_te = kernel_sets(tr, te)
    kp = make_params(RBF, gamma=gamma)
    coef, rho, seconds = run_libsvm(tr, y_tr, gamma, C, len(y_tr))
    libsvm = (test_error(kd, kd_te, kp, coef, rho, y_te), seconds, np.count_nonzero(coef))
    print("LIBSVM", libsvm, file=sys.stderr, flush=True)
    out = {}
    for dmax in delta_max:
        out[dmax] = {}
        for label, (epochs, finish) in FIG10_RUNS.items():
            runs = []
            for seed in range(seeds):
                r, seconds = clock(solve_lasvm, kd, kp, y_tr, C, C, eps=TAU, cache_mb=CACHE_MB,
                                   epochs=epochs, finish=finish, delta_max=dmax, seed=seed)
                runs.append((test_error(kd, kd_te, kp, r.coef[0], r.rho[0], y_te), seconds,
                             r.n_sv))
            out[dmax][label] = tuple(float(np.mean(c)) for c in zip(*runs))
        print("delta_max", dmax, out[dmax], file=sys.stderr, flush=True)
    return out, libsvm


def figure10(args):
    t0 = time.perf_counter()
    results, libsvm = banana_runs(args.delta_max, args.seeds)
    whole = time.perf_counter() - t0
    note = (f"Paper Figure 10: Banana (RBF gamma = 0.5, C = 316, tau = {TAU}, 40 MB cache), "
            "REPROCESS repeated after each PROCESS until delta < delta_max (svm-train "
            "--delta-max; \"inf\": once, the unmodified LASVM; the loop also stops when no "
            "tau-violating pair is left). LASVM averaged over "
            f"{args.seeds} example order(s); LIBSVM = libsvm-official 3.37 in the same run: "
            f"{libsvm[0]:.2f}% error, {libsvm[1]:.2f} s, {int(libsvm[2])} SV. The paper: two "
            "epochs and finishing reach the SVM error whatever delta_max; small delta_max costs "
            "time and, after one epoch and finishing, accuracy (support vectors discarded too "
            "aggressively); a sweet spot near delta_max = 3 where one epoch alone almost "
            f"matches the SVM and finishing is fast (its plot gives no numbers). Whole run: "
            f"{whole:.0f} s.")
    columns = ["delta_max"] + [f"{label}: {m}" for label in FIG10_RUNS for m in FIG10_MEASURES]
    table = Table("figure10", "Figure 10: Banana against delta_max", columns, note)
    for dmax, rows in results.items():
        cells = {"delta_max": "inf" if dmax is None else dmax}
        for label, values in rows.items():
            for m, v in zip(FIG10_MEASURES, values):
                cells[f"{label}: {m}"] = int(v) if m == "SV" else v
        table.add(**cells)
    table.add(**{"delta_max": "LIBSVM", **{f"x1: {m}": (int(v) if m == "SV" else float(v))
                                            for m, v in zip(FIG10_MEASURES, libsvm)}})
    table.write(RESULTS / "paper-000")
    plot10(results, libsvm)


def plot6(sizes, curves, rows):
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for trainer, marker in zip(FIG6_TRAINERS, "os"):
        ax.plot(sizes, curves[trainer], marker=marker, label=trainer)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [f"{mb:g}" for mb in sizes])
    ax.set_xlabel(f"kernel cache, paper's MB (scaled to {rows:,} rows: same share of the matrix)")
    ax.set_ylabel("time change vs LIBSVM 1 GB (%)")
    ax.set_title(f"Figure 6: MNIST, ten one-against-the-rest classifiers ({rows:,} rows)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, plt, RESULTS / "paper-000-fig6-cache.png")


def plot10(results, libsvm):
    plt = pyplot()
    if plt is None:
        return
    finite = [d for d in results if d is not None]
    inf_x = 3 * max(finite) if finite else 1.0  # where "inf" is drawn
    xs = [inf_x if d is None else d for d in results]
    lib_x = min(finite) / 3 if finite else 1.0
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for k, (ax, measure) in enumerate(zip(axes, FIG10_MEASURES)):
        for label, marker in zip(FIG10_RUNS, "o^s"):
            ax.plot(xs, [results[d][label][k] for d in results], marker=marker,
                    label=f"LASVM {label}")
        ax.plot([lib_x], [libsvm[k]], marker="<", ms=12, color="k", ls="", label="LIBSVM")
        ax.set_xscale("log")
        ax.invert_xaxis()  # the paper: small delta_max (SimpleSVM-like) on the right
        ticks = sorted(set(xs))
        ax.set_xticks(ticks, ["inf" if x == inf_x else f"{x:g}" for x in ticks], rotation=45,
                      fontsize=8)
        ax.minorticks_off()
        ax.set_xlabel("delta_max")
        ax.set_ylabel(measure)
    axes[0].legend(fontsize=7)
    fig.suptitle("Figure 10: Banana, REPROCESS until delta < delta_max")
    fig.tight_layout()
    save(fig, plt, RESULTS / "paper-000-fig10-deltamax.png")


def save(fig, plt, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--figure", nargs="*", type=int, default=[6, 10], choices=[6, 10])
    ap.add_argument("--seeds", type=int, default=1, help="LASVM example orders averaged")
    ap.add_argument("--mnist-rows", type=int, default=2000,
                    help="Figure 6: MNIST training rows drawn at random (0: all 60,000)")
    ap.add_argument("--cache-mb", nargs="*", type=float, default=list(CACHE_MB_DEFAULT),
                    help="Figure 6: the paper's cache sizes to run, scaled (1024 always; the "
                    f"paper's: {' '.join(map(str, PAPER_CACHE_MB))}; scaled to --mnist-rows)")
    ap.add_argument("--digits", nargs="*", type=int, default=list(range(10)),
                    choices=range(10), help="Figure 6: the classifiers averaged")
    ap.add_argument("--delta-max", nargs="*", type=lambda v: None if v == "inf" else float(v),
                    default=list(DELTA_MAX), help="Figure 10: delta_max values (inf: once)")
    args = ap.parse_args()
    warm_up()
    if 6 in args.figure:
        figure6(args)
    if 10 in args.figure:
        figure10(args)


if __name__ == "__main__":
    main()
