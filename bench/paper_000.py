"""make paper-000: Bordes, Ertekin, Weston & Bottou (2005), "Fast kernel classifiers with online
and active learning" (JMLR 6, 2005): Figures 8 and 9.

Figure 7's problems and settings (RBF kernel, 40 MB cache, tau = 0.001), each trained by
LIBSVM 3.37 (libsvm-official, in this process), our batch SMO, and our LASVM x1 and x2 (one
or two online epochs, then the finishing step), tested on the test set:

* Figure 8: test error, support vectors, kernel calculations and training time (LIBSVM's
  kernel calls are not exposed by its binding; our SMO's count on the same problem stands
  beside it), the paper's figures beside ours;
* Figure 9: LASVM x1's relative variation of error, SVs and time between the end of the
  online epoch and the end of the finishing step.

Data (LASVM_DATA): waveform (class 0 against the rest), banana, reuters (its one category),
usps (digit 0 against the rest; rows scaled to unit length, which the paper's gamma = 2
needs: on the [-1, 1] pixels every point would be a support vector), usps+N (the same with 10%
of the training labels flipped, seed 0), adult. Forest is not among the shared data sets.
``--only NAME ...`` runs some; ``--seeds S`` averages LASVM over S example orders (the paper:
one); ``--finishing smo,reprocess`` runs LASVM with both finishing rules (svm-train's
``--finishing``; default smo). Writes results/paper-000/figure8.md|csv and figure9.md|csv.

``--mnist-figures`` runs Figures 1, 2 and 5 instead: the ten MNIST binary classifiers (digit d
against the nine others; the paper's section 3.3: RBF gamma = 0.005, C = 1000, tau = 0.001,
256 MB cache; pixels / 255, as the other MNIST scripts here) trained by LIBSVM, LASVM x1 and
LASVM x2, each tested on the test set. The paper trains on all 60,000 rows;
``--mnist-rows N`` (default 5000, about a minute here) draws N training rows at random (seed 0),
``--mnist-test N`` (default 0: all 10,000) test rows. Writes results/paper-000-mnist.md|csv
(test error, seconds and SVs per digit; the paper prints these only as bar charts) and, with
matplotlib, results/paper-000-fig1-error.png, -fig2-time.png and -fig5-sv.png.

Figures 6 (time against the kernel cache size) and 10 (banana against delta_max) are drawn by
bench/paper_000_cache_delta.py, Figures 11-15 (example selection) by
bench/paper_000_selection.py; make paper-000 runs both after this script. ``--mnist-figures``
also writes Figures 3 (time against the final number of SVs) and 4 (the ten classifiers
combined one against the rest) from the same runs: results/paper-000-mnist-fig3-4.md|csv and
results/paper-000-fig3-time-sv.png.
"""

import argparse
import sys
import time

import numpy as np

from paper_tables import RESULTS, Table, clock, pyplot, read_shared

CACHE_MB = 40
TAU = 1e-3
# name: (data set, gamma, C, how labels become +1 / -1, row scaling)
PROBLEMS = {
    "Waveform": ("waveform", 0.05, 1.0, "class0", None),
    "Banana": ("banana", 0.5, 316.0, "sign", None),
    "Reuters": ("reuters", 1.0, 1.0, "sign", None),
    "USPS": ("usps", 2.0, 1000.0, "class0", "unit"),
    "USPS+N": ("usps", 2.0, 10.0, "class0", "unit"),
    "Adult": ("adult", 0.005, 100.0, "sign", None),
}
# Figure 8: LIBSVM (error %, SV, kernel calls, seconds), LASVM x1 (the same)
PAPER_FIGURE8 = {
    "Waveform": ((8.82, 1006, "4.2M", 3.2), (8.68, 948, "2.2M", 2.7)),
    "Banana": ((9.96, 873, "6.8M", 9.9), (9.98, 869, "6.7M", 10.0)),
    "Reuters": ((2.76, 1493, "11.8M", 24), (2.76, 1504, "9.2M", 31.4)),
    "USPS": ((0.41, 236, "1.97M", 13.5), (0.43, 201, "1.08M", 15.9)),
    "USPS+N": ((0.41, 2750, "63M", 305), (0.53, 2572, "20M", 178)),
    "Adult": ((14.90, 11327, "1760M", 1079), (14.94, 11268, "626M", 809)),
}
# Figure 9: relative variation (error, SV, time) across the finishing step, percent
PAPER_FIGURE9 = {"Waveform": (-0, -0, 4), "Banana": (-79, -74, 185), "Reuters": (0, -0, 3),
                 "USPS": (0, -2, 0), "USPS+N": (-67, -33, 7), "Adult": (-13, -19, 80)}


def labels(y, rule):
    y = np.asarray(y)
    return np.where(y == 0, 1.0, -1.0) if rule == "class0" else np.where(y > 0, 1.0, -1.0)


def unit_rows(d):
    norms = np.sqrt(np.add.reduceat(d.values ** 2, d.indptr[:-1])) if len(d.values) else 0
    counts = np.diff(d.indptr)
    d.values = d.values / np.repeat(np.where(counts > 0, norms, 1.0), counts)
    return d


def flip_labels(y, fraction, seed):
    y = y.copy()
    rng = np.random.default_rng(seed)
    flip = rng.choice(len(y), size=int(round(fraction * len(y))), replace=False)
    y[flip] = -y[flip]
    return y


def problem(name):
    dataset, gamma, C, rule, scaling = PROBLEMS[name]
    tr, te = read_shared(dataset, "train"), read_shared(dataset, "test")
    if scaling == "unit":
        tr, te = unit_rows(tr), unit_rows(te)
    y_tr, y_te = labels(tr.y, rule), labels(te.y, rule)
    if name == "USPS+N":
        y_tr = flip_labels(y_tr, 0.10, seed=0)
    return tr, te, y_tr, y_te, gamma, C


def kernel_sets(tr, te):
    from lasvm_cli.numerics.data import kernel_data

    width = int(max(tr.max_index, te.max_index)) + 1
    return (kernel_data(tr.indptr, tr.indices, tr.values, width=width, training=True),
            kernel_data(te.indptr, te.indices, te.values, width=width))


def decision_values(kd, kd_te, kp, coef, rho, n_test):
    """sum_i coef_i K(x_i, x) - rho on each test row."""
    from lasvm_cli.numerics.kernels import expansion_values

    sv = np.flatnonzero(coef).astype(np.int64)
    out = np.empty(n_test)
    expansion_values(kd_te, np.arange(n_test, dtype=np.int64), kd, sv,
                     np.ascontiguousarray(coef[sv], np.float64), kp, out)
    return out - rho


def test_error(kd, kd_te, kp, coef, rho, y_te):
    """Percent of test rows misclassified by sum_i coef_i K(x_i, x) - rho."""
    f = decision_values(kd, kd_te, kp, coef, rho, len(y_te))
    return 100.0 * np.mean(np.where(f > 0, 1.0, -1.0) != y_te)


def run_libsvm(tr, y_tr, gamma, C, n, cache_mb=CACHE_MB):
    import scipy.sparse as sp
    from libsvm import svmutil

    X = sp.csr_matrix((tr.values, tr.indices - 1, tr.indptr),
                      shape=(len(tr.indptr) - 1, int(tr.indices.max())))
    m, seconds = clock(svmutil.svm_train, svmutil.svm_problem(list(y_tr), X),
                       f"-q -c {C!r} -g {gamma!r} -m {cache_mb} -e {TAU}")
    coef = np.zeros(n)
    sign = 1.0 if m.get_labels()[0] == 1 else -1.0  # LIBSVM's decision > 0 means label[0]
    coef[np.asarray(m.get_sv_indices(), np.int64) - 1] = sign * np.array(
        [c[0] for c in m.get_sv_coef()])
    return coef, sign * m.rho[0], seconds


def figure_rows(name, seeds, finishings=("smo",)):
    from lasvm_cli.numerics.kernels import RBF, make_params
    from lasvm_cli.solvers.csvc import solve_binary
    from lasvm_cli.solvers.lasvm import solve_lasvm

    tr, te, y_tr, y_te, gamma, C = problem(name)
    kd, kd_te = kernel_sets(tr, te)
    kp = make_params(RBF, gamma=gamma)
    n = len(y_tr)
    rows = {}
    coef, rho, seconds = run_libsvm(tr, y_tr, gamma, C, n)
    rows["LIBSVM"] = (test_error(kd, kd_te, kp, coef, rho, y_te), np.count_nonzero(coef),
                      None, seconds)
    r, seconds = clock(solve_binary, kd, kp, y_tr, C, C, eps=TAU, cache_mb=CACHE_MB)
    rows["ours, SMO"] = (test_error(kd, kd_te, kp, r.coef[0], r.rho[0], y_te), r.n_sv,
                         r.counters["kernel_evals"], seconds)
    for epochs in (1, 2):
        for finish, finishing in ([(False, "smo")] if epochs == 1 else []) + \
                [(True, f) for f in finishings]:
            runs = []
            for seed in range(seeds):
                r, seconds = clock(solve_lasvm, kd, kp, y_tr, C, C, eps=TAU, cache_mb=CACHE_MB,
                                   epochs=epochs, finish=finish, seed=seed,
                                   finishing=finishing)
                runs.append((test_error(kd, kd_te, kp, r.coef[0], r.rho[0], y_te), r.n_sv,
                             r.counters["kernel_evals"], seconds))
            rows[lasvm_label(epochs, finish, finishing, finishings)] = tuple(
                float(np.mean(c)) for c in zip(*runs))
        print(name, rows, file=sys.stderr, flush=True)
    return rows


def lasvm_label(epochs, finish, finishing, finishings):
    """The table's name of a LASVM run: "ours, LASVM x1", "... before finishing", and the
    finishing rule's name when more than one ran."""
    if not finish:
        return f"ours, LASVM x{epochs} before finishing"
    return f"ours, LASVM x{epochs}" + (f", --finishing {finishing}" if len(finishings) > 1
                                       else "")


# Figures 1, 2 and 5 (section 3.3): the ten MNIST "digit d against the rest" classifiers
MNIST_GAMMA, MNIST_C, MNIST_CACHE_MB = 0.005, 1000.0, 256
MNIST_TRAINERS = ("LIBSVM", "LASVM x1", "LASVM x2")
MNIST_FIGURES = {  # file suffix: (figure, column, axis label)
    "fig1-error": ("Figure 1", "error (%)", "test error (%)"),
    "fig2-time": ("Figure 2", "time (s)", "training time (s)"),
    "fig5-sv": ("Figure 5", "SV", "support vectors"),
}


def take_rows(d, rows):
    """The rows ``rows`` (sorted indices) of svmlight data ``d``, in place."""
    starts, stops = d.indptr[rows], d.indptr[rows + 1]
    counts = stops - starts
    pick = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + \
        np.arange(int(counts.sum()))
    d.indices, d.values, d.y = d.indices[pick], d.values[pick], np.asarray(d.y)[rows]
    d.indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return d


def mnist_data(train_rows, test_rows, seed=0):
    """MNIST train and test data, pixels / 255, subsampled at random (0: every row)."""
    tr, te = read_shared("mnist", "train"), read_shared("mnist", "test")
    rng = np.random.default_rng(seed)
    for d, n in ((tr, train_rows), (te, test_rows)):
        if n and n < len(d.y):
            take_rows(d, np.sort(rng.choice(len(d.y), n, replace=False)))
        d.values = d.values / 255.0
    return tr, te


def mnist_rows(tr, te, seeds):
    """{digit: {trainer: (error %, SV, seconds)}} for the ten one-against-the-rest problems,
    and {trainer: {digit: test decision values}} (LASVM: the first order's) for Figure 4."""
    from lasvm_cli.numerics.kernels import RBF, make_params
    from lasvm_cli.solvers.lasvm import solve_lasvm

    kd, kd_te = kernel_sets(tr, te)
    kp = make_params(RBF, gamma=MNIST_GAMMA)
    C, n, n_te = MNIST_C, len(tr.y), len(te.y)
    out, decisions = {}, {trainer: {} for trainer in MNIST_TRAINERS}
    for digit in range(10):
        y_tr = np.where(np.asarray(tr.y) == digit, 1.0, -1.0)
        y_te = np.where(np.asarray(te.y) == digit, 1.0, -1.0)
        coef, rho, seconds = run_libsvm(tr, y_tr, MNIST_GAMMA, C, n, MNIST_CACHE_MB)
        f = decision_values(kd, kd_te, kp, coef, rho, n_te)
        decisions["LIBSVM"][digit] = f
        rows = {"LIBSVM": (error_of(f, y_te), np.count_nonzero(coef), seconds)}
        for epochs in (1, 2):
            runs = []
            for seed in range(seeds):
                r, seconds = clock(solve_lasvm, kd, kp, y_tr, C, C, eps=TAU,
                                   cache_mb=MNIST_CACHE_MB, epochs=epochs, finish=True,
                                   seed=seed)
                f = decision_values(kd, kd_te, kp, r.coef[0], r.rho[0], n_te)
                if seed == 0:
                    decisions[f"LASVM x{epochs}"][digit] = f
                runs.append((error_of(f, y_te), r.n_sv, seconds))
            rows[f"LASVM x{epochs}"] = tuple(float(np.mean(c)) for c in zip(*runs))
        print("digit", digit, rows, file=sys.stderr, flush=True)
        out[digit] = rows
    return out, decisions


def error_of(f, y):
    return 100.0 * np.mean(np.where(f > 0, 1.0, -1.0) != y)


def multiclass_error(decisions, y_te):
    """Figure 4: the ten classifiers combined one against the rest (the largest value wins)."""
    f = np.stack([decisions[d] for d in range(10)], axis=1)
    return 100.0 * np.mean(np.argmax(f, axis=1) != np.asarray(y_te).astype(int))


def linear_fit(sv, seconds):
    """Figure 3: seconds = a + b SV by least squares; (a, b, R^2)."""
    sv, seconds = np.asarray(sv, float), np.asarray(seconds, float)
    b, a = np.polyfit(sv, seconds, 1)
    residual = seconds - (a + b * sv)
    r2 = 1.0 - residual @ residual / max(((seconds - seconds.mean()) ** 2).sum(), 1e-300)
    return a, b, r2


def mnist_bars(results, out, train_rows):
    """Grouped bars per digit, one PNG per figure; False (and how to install) without
    matplotlib."""
    plt = pyplot()
    if plt is None:
        return False
    x = np.arange(10)
    width = 0.8 / len(MNIST_TRAINERS)
    for suffix, (figure, column, axis) in MNIST_FIGURES.items():
        k = ("error (%)", "SV", "time (s)").index(column)
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        for i, trainer in enumerate(MNIST_TRAINERS):
            ax.bar(x + (i - 1) * width, [results[d][trainer][k] for d in range(10)], width,
                   label=trainer)
        ax.set_xticks(x)
        ax.set_xlabel("digit (against the nine others)")
        ax.set_ylabel(axis)
        ax.set_title(f"{figure}: MNIST binary classifiers ({train_rows:,} training rows)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out / f"paper-000-{suffix}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print("wrote", path, flush=True)
    return True


def mnist_main(args):
    t0 = time.perf_counter()
    tr, te = mnist_data(args.mnist_rows, args.mnist_test)
    results, decisions = mnist_rows(tr, te, args.seeds)
    whole = time.perf_counter() - t0
    share = MNIST_CACHE_MB * 2 ** 20 / (4.0 * len(tr.y) ** 2)  # float32 kernel entries
    paper_share = MNIST_CACHE_MB * 2 ** 20 / (4.0 * 60000 ** 2)
    cache_share = (f"The cache holds {min(share, 1):.0%} of this sample's kernel matrix (the "
                   f"paper's, {paper_share:.1%} of its): times here favour LIBSVM, which needs "
                   "the larger cache (the paper's Figure 6).")
    note = (f"Paper section 3.3, Figures 1, 2 and 5: RBF gamma = {MNIST_GAMMA}, C = {MNIST_C:g}, "
            f"tau = {TAU}, {MNIST_CACHE_MB} MB cache, pixels / 255. Trained on {len(tr.y):,} "
            f"training rows drawn at random (seed 0) of the 60,000 the paper used; tested on "
            f"{len(te.y):,} test rows. {cache_share} LASVM = one (x1) or two (x2) online "
            f"epochs, then the finishing step, averaged over {args.seeds} example order(s); "
            "LIBSVM = libsvm-official 3.37 in the same run. The paper prints these per-digit "
            "values only as bar charts (\"figure only\"); its Figure 4 gives the ten "
            "classifiers combined (1-vs-rest, all 60,000 rows, a 2005 machine): LIBSVM "
            "1.36% / 17400 s, LASVM x1 1.42% / 4950 s, LASVM x2 1.36% / 12210 s. "
            f"Whole run: {whole:.0f} s.")
    columns = ["digit"]
    for trainer in MNIST_TRAINERS:
        columns += [f"{trainer}: error (%)", f"{trainer}: time (s)", f"{trainer}: SV"]
    columns += ["paper: error, time, SV"]
    table = Table("paper-000-mnist", "Figures 1, 2 and 5: the ten MNIST binary classifiers",
                  columns, note)
    for digit in range(10):
        cells = {"digit": digit, "paper: error, time, SV": "figure only"}
        for trainer in MNIST_TRAINERS:
            err, sv, seconds = results[digit][trainer]
            cells.update({f"{trainer}: error (%)": float(err), f"{trainer}: time (s)": seconds,
                          f"{trainer}: SV": int(sv)})
        table.add(**cells)
    sums = {"digit": "sum of ten (time, SV); mean (error)", "paper: error, time, SV": ""}
    for trainer in MNIST_TRAINERS:
        cols = list(zip(*(results[d][trainer] for d in range(10))))
        sums.update({f"{trainer}: error (%)": float(np.mean(cols[0])),
                     f"{trainer}: time (s)": float(np.sum(cols[2])),
                     f"{trainer}: SV": int(np.sum(cols[1]))})
    table.add(**sums)
    RESULTS.mkdir(parents=True, exist_ok=True)
    table.write(RESULTS)
    mnist_bars(results, RESULTS, len(tr.y))
    figures_3_4(results, decisions, te.y, len(tr.y), RESULTS)


# Figure 4 (MNIST, the ten classifiers one against the rest, all 60,000 rows): error %, seconds
PAPER_FIGURE4 = {"LIBSVM": (1.36, 17400), "LASVM x1": (1.42, 4950), "LASVM x2": (1.36, 12210)}


def figures_3_4(results, decisions, y_te, train_rows, out):
    """Figure 3 (time against the final number of SVs over the ten problems, a straight line
    fitted per trainer) and Figure 4 (the ten classifiers combined)."""
    note = (f"The same runs as Figures 1, 2 and 5 ({train_rows:,} training rows). Figure 3 "
            "fits seconds = a + b SV over the ten problems by least squares (the paper: "
            "\"both LIBSVM and LASVM x1 show a linear dependency\"). Figure 4 combines the "
            "ten classifiers one against the rest (LASVM: the first example order); the "
            "paper's numbers are for 60,000 rows on a 2005 machine: compare the ratios.")
    table = Table("paper-000-mnist-fig3-4", "Figures 3 and 4: time against SVs, and multiclass",
                  ["trainer", "fig 3: seconds per 1,000 SV (b)", "fig 3: intercept a (s)",
                   "fig 3: R^2", "fig 4: error (%)", "fig 4: time (s)", "fig 4: time / LIBSVM",
                   "paper: error (%)", "paper: time (s)", "paper: time / LIBSVM"], note)
    lib_time = sum(results[d]["LIBSVM"][2] for d in range(10))
    fits = {}
    for trainer in MNIST_TRAINERS:
        sv = [results[d][trainer][1] for d in range(10)]
        seconds = [results[d][trainer][2] for d in range(10)]
        a, b, r2 = fits[trainer] = linear_fit(sv, seconds)
        p_err, p_time = PAPER_FIGURE4[trainer]
        table.add(**{"trainer": trainer, "fig 3: seconds per 1,000 SV (b)": 1000 * b,
                     "fig 3: intercept a (s)": a, "fig 3: R^2": r2,
                     "fig 4: error (%)": multiclass_error(decisions[trainer], y_te),
                     "fig 4: time (s)": sum(seconds), "fig 4: time / LIBSVM":
                     sum(seconds) / lib_time, "paper: error (%)": p_err,
                     "paper: time (s)": p_time,
                     "paper: time / LIBSVM": p_time / PAPER_FIGURE4["LIBSVM"][1]})
    table.write(out)
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for trainer in MNIST_TRAINERS[:2]:  # the paper's figure: LIBSVM and LASVM x1
        sv = np.array([results[d][trainer][1] for d in range(10)], float)
        seconds = [results[d][trainer][2] for d in range(10)]
        a, b, _ = fits[trainer]
        ax.scatter(sv, seconds, label=trainer)
        xs = np.array([sv.min(), sv.max()])
        ax.plot(xs, a + b * xs, lw=1)
    ax.set_xlabel("support vectors")
    ax.set_ylabel("training time (s)")
    ax.set_title(f"Figure 3: MNIST binary classifiers ({train_rows:,} rows)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "paper-000-fig3-time-sv.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path, flush=True)


def warm_up():
    """Load (or compile) the solvers on a tiny problem, so no timing pays for it."""
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import RBF, expansion_values, make_params
    from lasvm_cli.solvers.csvc import solve_binary
    from lasvm_cli.solvers.lasvm import solve_lasvm

    rng = np.random.default_rng(0)
    values = rng.random(200)
    kd = kernel_data(np.arange(0, 201, 5, dtype=np.int64),
                     np.tile(np.arange(1, 6, dtype=np.int32), 40), values, width=6)
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    kp = make_params(RBF, gamma=0.5)
    solve_binary(kd, kp, y, 1.0, 1.0)
    solve_lasvm(kd, kp, y, 1.0, 1.0)
    expansion_values(kd, np.arange(40, dtype=np.int64), kd, np.arange(40, dtype=np.int64),
                     np.ones(40), kp, np.empty(40))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=list(PROBLEMS), choices=list(PROBLEMS))
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--finishing", default="smo",
                    help="LASVM's finishing rule(s), comma-separated: smo, reprocess or "
                         "smo,reprocess (Figure 9 then has a row for each)")
    ap.add_argument("--mnist-figures", action="store_true",
                    help="Figures 1-5 (the ten MNIST binary classifiers) instead of 8, 9")
    ap.add_argument("--mnist-rows", type=int, default=5000,
                    help="MNIST training rows drawn at random (0: all 60,000, the paper's)")
    ap.add_argument("--mnist-test", type=int, default=0,
                    help="MNIST test rows drawn at random (0: all 10,000)")
    args = ap.parse_args()
    warm_up()
    if args.mnist_figures:
        mnist_main(args)
        return
    note = (f"RBF kernel, 40 MB cache, tau = {TAU}; LASVM averaged over {args.seeds} example "
            "order(s); LIBSVM = libsvm-official 3.37 in the same run. Paper: its Figure 8 "
            "(a 2005 machine: compare ratios, not seconds).")
    f8 = Table("figure8", "Figure 8: LIBSVM against LASVM", [
        "data set", "trainer", "error (%)", "SV", "kernel calls", "time (s)",
        "time / LIBSVM", "time / our SMO", "paper: error (%)", "paper: SV", "paper: kernel calls",
        "paper: time (s)"], note)
    f9 = Table("figure9", "Figure 9: LASVM x1 across the finishing step (relative variation)", [
        "data set", "finishing", "error", "SV", "kernel calls", "time", "paper: error",
        "paper: SV", "paper: time"], note)
    finishings = tuple(args.finishing.split(","))
    for name in args.only:
        rows = figure_rows(name, args.seeds, finishings)
        lib_seconds = rows["LIBSVM"][3]
        paper = dict(zip(("LIBSVM", lasvm_label(1, True, finishings[0], finishings)),
                         PAPER_FIGURE8[name]))
        for trainer, (err, sv, kcalc, seconds) in rows.items():
            if trainer.endswith("before finishing"):
                continue
            p = paper.get(trainer, ("",) * 4)
            f8.add(**{"data set": name, "trainer": trainer, "error (%)": err, "SV": int(sv),
                      "kernel calls": "-" if kcalc is None else f"{kcalc / 1e6:.2f}M",
                      "time (s)": seconds, "time / LIBSVM": seconds / lib_seconds,
                      "time / our SMO": seconds / rows["ours, SMO"][3],
                      "paper: error (%)": p[0], "paper: SV": p[1], "paper: kernel calls": p[2],
                      "paper: time (s)": p[3]})
        before = rows["ours, LASVM x1 before finishing"]
        for finishing in finishings:
            after = rows[lasvm_label(1, True, finishing, finishings)]
            change = [f"{100 * (a - b) / b:+.0f}%" if b else "-" for a, b in
                      ((after[0], before[0]), (after[1], before[1]), (after[2], before[2]),
                       (after[3], before[3]))]
            p9 = PAPER_FIGURE9[name]
            f9.add(**{"data set": name, "finishing": finishing, "error": change[0],
                      "SV": change[1], "kernel calls": change[2], "time": change[3],
                      "paper: error": f"{p9[0]:+d}%", "paper: SV": f"{p9[1]:+d}%",
                      "paper: time": f"{p9[2]:+d}%"})
    out = RESULTS / "paper-000"
    f8.write(out)
    f9.write(out)


if __name__ == "__main__":
    main()
