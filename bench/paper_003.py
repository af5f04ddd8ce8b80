"""make paper-003: Glasmachers & Igel (2006), "Maximum-gain working set selection for SVMs"
(JMLR 7, 2006).

The paper's MNIST problem: the 60,000 training digits, 0-4 (+1) against 5-9 (-1), raw pixels,
Gaussian kernel with sigma = 3,500 (gamma = 1/(2 sigma^2) = 4.08e-8), C = 50, eps = 1e-3.
Our three working-set selections (MVP = LIBSVM 2.71's, second order = LIBSVM 2.8's, HMG) and
LIBSVM 3.37 itself (libsvm-official, second order) in the same run:

* Table 2: 40 MB cache, shrinking on: iterations, time, f(alpha*) (the paper maximises f;
  LIBSVM prints obj = -f);
* Table 4: shrinking off, as percentages of the shrinking-on run;
* Table 5: cache 20 / 40 / 100 / 200 MB (the paper's Table 5 is connect-4, which is not
  available; the same study here on MNIST), and the paper's conclusion checked: HMG's time
  relative to second order falls as the cache shrinks.

``--rows N`` trains on a seeded random sample of N rows (the paper's 60,000 take hours per
run here: the tables say which sample ran). A sample's kernel matrix is (N / 60,000)^2 of the
paper's, so each cache size is scaled by that factor: the cache then holds the same fraction of
the kernel matrix as the paper's (40 MB: 0.28%), which is what the comparison is about
(``--unscaled-cache`` uses the paper's megabytes as they are). ``--trials T`` takes medians over T orderings of
the sample (the paper: 10, 1 for MNIST without shrinking). Writes results/paper-003/*.md|csv.
"""

import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

from paper_tables import RESULTS, Table, clock, read_shared

SIGMA = 3500.0
GAMMA = 1.0 / (2.0 * SIGMA ** 2)
C = 50.0
CACHES_MB = (20, 40, 100, 200)
OURS = (("MVP (LIBSVM 2.71)", "mvp"), ("second order (LIBSVM 2.8)", "so"), ("HMG", "hmg"))

# The paper's MNIST rows (60,000 examples; its Table 2): iterations, seconds, f(alpha*)
PAPER_TABLE2 = {"mvp": (185162, 13657, 143199.142), "so": (110441, 9957, 143199.146),
                "hmg": (152873, 7485, 143199.160)}
PAPER_TABLE4 = {"mvp": (187653, 94981), "so": (110470, 58213), "hmg": (155182, 41097)}
# Table 5 (connect-4, seconds) for the direction of the effect
PAPER_TABLE5 = {20: (958, 766, 656), 40: (916, 734, 633), 100: (758, 649, 583),
                200: (603, 547, 555)}


def mnist_problem(rows, seed):
    """(KernelData, y, X as scipy CSR for LIBSVM) of a seeded sample of MNIST's training set."""
    import scipy.sparse as sp

    data = read_shared("mnist")
    n = len(data.y)
    take = np.sort(np.random.default_rng(seed).choice(n, size=min(rows, n), replace=False))
    X = sp.csr_matrix((data.values, data.indices - 1, data.indptr),
                      shape=(n, int(data.indices.max())))[take]
    X.sort_indices()
    y = np.where(np.asarray(data.y)[take] <= 4, 1.0, -1.0)
    return X, y


def ordered(X, y, trial):
    """The sample in the order of trial ``trial`` (trial 0: as sampled)."""
    if trial == 0:
        return X, y
    order = np.random.default_rng(1000 + trial).permutation(len(y))
    return X[order], y[order]


def run_ours(X, y, wss, cache_mb, shrinking):
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import RBF, make_params
    from lasvm_cli.solvers.csvc import solve_binary

    kd = kernel_data(X.indptr, (X.indices + 1).astype(np.int32), X.data,  # file indices
                     width=X.shape[1] + 1)
    r, seconds = clock(solve_binary, kd, make_params(RBF, 3, GAMMA, 0.0), y, C, C,
                       cache_mb=cache_mb, wss=wss, shrinking=shrinking)
    return {"iterations": r.n_iter, "seconds": seconds, "f": -r.obj,
            "kernel_evals": r.counters["kernel_evals"]}


def run_libsvm(X, y, cache_mb, shrinking):
    """libsvm-official in this process; its iterations and objective read from its stdout."""
    from libsvm import svmutil

    opts = f"-c {C} -g {GAMMA!r} -m {cache_mb:.6g} -h {int(shrinking)}"
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = os.dup(1)
        os.dup2(tmp.fileno(), 1)
        try:
            _, seconds = clock(svmutil.svm_train, svmutil.svm_problem(list(y), X), opts)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        out = tmp.read().decode()
    iterations = int(out.split("#iter = ")[1].split()[0])
    obj = float(out.split("obj = ")[1].split(",")[0])
    return {"iterations": iterations, "seconds": seconds, "f": -obj}


def medians(runs):
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def warm_up():
    """Load (or compile) the SMO code on a tiny problem, so no table row pays for it."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.random((40, 5)))
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    for _, wss in OURS:
        run_ours(X, y, wss, 1, True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--unscaled-cache", action="store_true")
    args = ap.parse_args()
    out = RESULTS / "paper-003"
    X, y = mnist_problem(args.rows, args.seed)
    scale = 1.0 if args.unscaled_cache else (len(y) / 60000) ** 2

    def megabytes(paper_mb):
        return paper_mb * scale

    sample = (f"MNIST 0-4 against 5-9, {len(y):,} of the 60,000 training rows (seeded sample), "
              f"raw pixels, sigma = {SIGMA:g}, C = {C:g}; medians of {args.trials} "
              f"ordering(s). Paper: all 60,000 rows, medians of 10 (1 without shrinking). "
              + ("Caches as the paper's megabytes." if scale == 1.0 else
                 f"Caches scaled by (rows / 60,000)^2 = {scale:.3g} to hold the paper's fraction "
                 f"of the kernel matrix (40 MB -> {megabytes(40):.3g} MB)."))
    warm_up()

    def run(kind, cache_mb, shrinking):
        runs = []
        for t in range(args.trials):
            Xt, yt = ordered(X, y, t)
            mb = megabytes(cache_mb)
            runs.append(run_libsvm(Xt, yt, mb, shrinking) if kind == "libsvm"
                        else run_ours(Xt, yt, kind, mb, shrinking))
        return medians(runs)

    results = {}
    for cache_mb in CACHES_MB:
        for shrinking in ((True, False) if cache_mb == 40 else (True,)):
            for kind in ("libsvm", *(w for _, w in OURS)):
                results[kind, cache_mb, shrinking] = run(kind, cache_mb, shrinking)
                print(kind, cache_mb, shrinking, results[kind, cache_mb, shrinking],
                      file=sys.stderr, flush=True)

    lib = results["libsvm", 40, True]
    t2 = Table("table2", "Table 2: 40 MB cache (the paper's), shrinking on",
               ["algorithm", "iterations", "time (s)", "time / LIBSVM 3.37", "f(alpha*)",
                "paper: iterations", "paper: time (s)", "paper: f(alpha*)"], sample)
    t2.add(algorithm="LIBSVM 3.37 (libsvm-official, second order)",
           iterations=lib["iterations"], **{"time (s)": lib["seconds"],
                                             "time / LIBSVM 3.37": 1.0, "f(alpha*)": lib["f"]})
    for name, wss in OURS:
        r = results[wss, 40, True]
        p = PAPER_TABLE2[wss]
        t2.add(algorithm=f"ours, {name}", iterations=r["iterations"],
               **{"time (s)": r["seconds"], "time / LIBSVM 3.37": r["seconds"] / lib["seconds"],
                  "f(alpha*)": r["f"], "paper: iterations": p[0], "paper: time (s)": p[1],
                  "paper: f(alpha*)": p[2]})
    t2.write(out)

    t4 = Table("table4", "Table 4: shrinking off (percent of the shrinking-on run)",
               ["algorithm", "iterations", "%", "time (s)", "% time",
                "paper: iterations (%)", "paper: time (%)"], sample)
    for name, kind in (("LIBSVM 3.37", "libsvm"), *((f"ours, {n}", w) for n, w in OURS)):
        on, off = results[kind, 40, True], results[kind, 40, False]
        paper = PAPER_TABLE4.get(kind)
        t4.add(algorithm=name, iterations=off["iterations"],
               **{"%": f"{100 * off['iterations'] / on['iterations']:.1f}",
                  "time (s)": off["seconds"],
                  "% time": f"{100 * off['seconds'] / on['seconds']:.0f}",
                  "paper: iterations (%)": "" if paper is None else
                  f"{paper[0]:,} ({100 * paper[0] / PAPER_TABLE2[kind][0]:.1f})",
                  "paper: time (%)": "" if paper is None else
                  f"{paper[1]:,} ({100 * paper[1] / PAPER_TABLE2[kind][1]:.0f})"})
    t4.write(out)

    t5 = Table("table5", "Table 5: cache size, shrinking on (time in seconds)",
               ["cache (paper's MB)", "LIBSVM 3.37", "ours MVP", "ours second order", "ours HMG",
                "HMG / second order", "paper (connect-4): 2.71 / 2.8 / HMG",
                "paper: HMG / 2.8"], sample + " The paper's Table 5 is connect-4 (not "
               "available); its figures show the direction of the effect.")
    ratios = []
    for cache_mb in CACHES_MB:
        r = {k: results[k, cache_mb, True]["seconds"] for k in ("libsvm", "mvp", "so", "hmg")}
        ratios.append(r["hmg"] / r["so"])
        p = PAPER_TABLE5[cache_mb]
        t5.add(**{"cache (paper's MB)": cache_mb, "LIBSVM 3.37": r["libsvm"], "ours MVP": r["mvp"],
                  "ours second order": r["so"], "ours HMG": r["hmg"],
                  "HMG / second order": ratios[-1],
                  "paper (connect-4): 2.71 / 2.8 / HMG": " / ".join(map(str, p)),
                  "paper: HMG / 2.8": p[2] / p[1]})
    t5.write(out)
    # single timings on a shared machine vary by a few percent: a step within `noise` counts as flat
    noise = 0.05
    grows = ratios[0] < ratios[-1] and all(a <= b + noise for a, b in zip(ratios, ratios[1:]))
    by_size = ", ".join(f"{c} MB {q:.2f}" for c, q in zip(CACHES_MB, ratios))
    verdict = "holds" if grows else "does not hold on this sample"
    text = (f"The paper's conclusion (HMG's advantage over second order grows as the cache "
            f"shrinks) {verdict}: HMG's time / second order's time by cache size: {by_size} "
            f"(steps within {noise:.2f} count as flat).\n")
    (out / "conclusion.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
