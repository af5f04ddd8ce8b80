"""Bordes, Ertekin, Weston & Bottou (2005), section 4.5, Figure 16: active learning.

Test error against the number of labels read, for:

* LASVM ACTIVE 50: LASVM's active selection (the smallest |f(x)| of M = 50 random unlabeled
  training examples, drawn with replacement as LaSVM 1.1 does), one LASVM iteration (PROCESS,
  then REPROCESS once) per new label: ``LasvmRun(selection="active", candidates=50,
  label_budget=...)``, what ``svm-train --solver lasvm --selection active --candidates 50
  --label-budget N`` runs;
* LASVM ACTIVE ALL: the same, but the query is the unlabeled training example of smallest
  |f(x)| among all of them. The compiled selection draws candidates with replacement (at most
  as many draws as the pool holds), so it cannot search all; this script drives the same
  compiled LASVM iteration (online_core.online_step) on the example it chose from f(x) over
  the whole pool;
* RETRAIN ACTIVE ALL and RETRAIN ACTIVE 50 (the paper's "retraining approach", Campbell et al.
  2000, Schohn and Cohn 2000, Tong and Koller 2000): after each label, the SVM is trained
  again on all the labels so far (our SMO with LIBSVM's second-order selection, eps = 0.001,
  on the exact kernel matrix of the labeled examples; the paper warm-starts its solver, which
  changes the time, not the solution), and the next query is the unlabeled example of smallest
  |f(x)| among all or among 50 drawn at random (without replacement);
* RANDOM: the labels of random examples. Two curves: LASVM RANDOM (plain online LASVM: one
  iteration per random example) and RETRAIN RANDOM (an SVM trained on the same random labels).

The LASVM curves are measured at the state reached after that many labels, without the
finishing step (the paper's point: no retraining). Every method starts from the same ten
labels, LASVM's seeds: the first five examples of each class in the (random) training order.

Problems (Figure 7's settings, as bench/paper_000.py): USPS digit 0 against the rest (rows
scaled to unit length; RBF gamma = 2, C = 1000) and Reuters "money-fx" against the rest (RBF
gamma = 1, C = 1), tau = 0.001. Each split pools the train and test files and draws a random
training set of the train file's size (USPS 7,291, Reuters 7,770; the paper 7,329 and 7,700),
the rest being the test set (USPS 2,007, Reuters 3,299): "10 random choices of training and
test sets". ``--splits S`` (default 5), ``--labels L ...`` the measuring points (default up to
500 labels), ``--only usps|reuters``.

Writes results/paper-000/figure16-usps.md|csv and figure16-reuters.md|csv (mean test error
and its standard error over the splits, per method and label count), figure16-raw-F-L.csv
(every split of the batch F..L; ``--merge RAW ...`` makes the tables and the figure from
several batches' files, run side by side with ``--first-split``), figure16-time.md|csv
(seconds to reach the largest label count, as the paper's 917 s / 99 s / 9.6 s on Reuters)
and, with matplotlib, results/paper-000-fig16.png.
"""

import argparse
import sys
import time

import numpy as np

from paper_000 import PROBLEMS, labels
from paper_tables import RESULTS, Table, pyplot, read_shared, spread

TAU = 1e-3
M = 50
N_SEED = 5
LABELS = (10, 15, 20, 30, 40, 50, 70, 100, 150, 200, 300, 400, 500)
METHODS = ("LASVM ACTIVE ALL", "LASVM ACTIVE 50", "RETRAIN ACTIVE ALL", "RETRAIN ACTIVE 50",
           "LASVM RANDOM", "RETRAIN RANDOM")
SETS = {"usps": "USPS", "reuters": "Reuters"}
# The paper's Reuters times for 500 queried labels (Figure 16's text), seconds
PAPER_TIMES = {"RETRAIN ACTIVE ALL": 917, "LASVM ACTIVE ALL": 99, "LASVM ACTIVE 50": 9.6}


def pooled(name):
    """(X as CSR, 0-based columns; y +1/-1; gamma; C; training size) of train + test."""
    import scipy.sparse as sp

    dataset, gamma, C, rule, scaling = PROBLEMS[SETS[name]]
    parts = [read_shared(dataset, p) for p in ("train", "test")]
    width = int(max(p.max_index for p in parts))
    X = sp.vstack([sp.csr_matrix((p.values, p.indices - 1, p.indptr),
                                 shape=(len(p.y), width)) for p in parts]).tocsr()
    if scaling == "unit":
        norms = np.sqrt(np.asarray(X.multiply(X).sum(1))).ravel()
        X = sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ X
        X = X.tocsr()
    X.sort_indices()
    y = np.concatenate([labels(p.y, rule) for p in parts])
    return X, y, gamma, C, len(parts[0].y)


class Columns:
    """Kernel columns K(x_all, x_j) of the split's rows (training rows first, then test),
    computed once each."""

    def __init__(self, X, gamma):
        self.X, self.gamma = X, gamma
        self.sq = np.asarray(X.multiply(X).sum(1)).ravel()
        self.cols = {}

    def __call__(self, j):
        j = int(j)
        c = self.cols.get(j)
        if c is None:
            dot = np.asarray((self.X @ self.X[j].T).todense()).ravel()
            c = np.exp(-self.gamma * np.maximum(self.sq + self.sq[j] - 2.0 * dot, 0.0))
            c[j] = 1.0
            self.cols[j] = c
        return c

    def matrix(self, js, rows):
        """K(x_rows, x_js) as a len(rows) x len(js) array."""
        if not len(js):
            return np.zeros((len(rows), 0))
        return np.column_stack([self(j)[rows] for j in js])


def seeds(y_tr):
    """LASVM's seeds: the first N_SEED examples of each class in training order."""
    pos = np.flatnonzero(y_tr > 0)[:N_SEED]
    neg = np.flatnonzero(y_tr < 0)[:N_SEED]
    return sorted(np.concatenate([pos, neg]).tolist())


def test_error(cols, coef_idx, coef, rho, test, y_te):
    f = cols.matrix(coef_idx, test) @ coef - rho if len(coef_idx) else -rho * np.ones(len(test))
    return 100.0 * np.mean(np.where(f > 0, 1.0, -1.0) != y_te)


def precomputed(Kmat):
    """KernelData and params whose precomputed kernel is Kmat (LIBSVM's layout)."""
    from lasvm_cli.numerics.kernels import PRECOMPUTED, KernelData, make_params

    n = Kmat.shape[0]
    X = np.zeros((n, n + 1))
    X[:, 0] = np.arange(1, n + 1)
    X[:, 1:] = Kmat
    e = np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float64)
    return KernelData(X, e[0], e[1], e[2], np.zeros(n)), make_params(PRECOMPUTED)


def svm_on(cols, labeled, y_tr, C):
    """(coef over ``labeled``, rho) of the SVM trained on the labeled examples."""
    from lasvm_cli.solvers.csvc import solve_binary

    K = cols.matrix(labeled, labeled)
    kd, kp = precomputed((K + K.T) / 2)
    r = solve_binary(kd, kp, y_tr[labeled], C, C, eps=TAU, cache_mb=50.0)
    return r.coef[0], float(r.rho[0])


def run_retrain(cols, y_tr, C, n_tr, test, y_te, mode, rng, points):
    """RETRAIN ACTIVE ALL / 50 / RANDOM: the error at each label count in ``points``."""
    labeled = seeds(y_tr)
    unl = np.ones(n_tr, bool)
    unl[labeled] = False
    out = {}
    while True:
        coef, rho = svm_on(cols, labeled, y_tr, C)
        if len(labeled) in points:
            out[len(labeled)] = test_error(cols, labeled, coef, rho, test, y_te)
        if len(labeled) >= max(points):
            return out
        pool = np.flatnonzero(unl)
        if mode == "random":
            k = int(rng.choice(pool))
        else:
            cand = pool if mode == "all" else rng.choice(pool, size=min(M, len(pool)),
                                                        replace=False)
            f = cols.matrix(labeled, cand) @ coef - rho
            k = int(cand[np.argmin(np.abs(f))])
        labeled.append(k)
        unl[k] = False


def lasvm_state_error(run, cols, test, y_te):
    coef, rho = run.coef_rho()
    nz = np.flatnonzero(coef)
    return test_error(cols, nz, coef[nz], rho, test, y_te)


def run_lasvm(kd, kp, cols, y_tr, C, test, y_te, mode, seed, points):
    """LASVM ACTIVE 50 (compiled selection), LASVM RANDOM, or LASVM ACTIVE ALL (the same
    compiled iteration on the example of smallest |f(x)| over the whole pool)."""
    from lasvm_cli.solvers.lasvm import LasvmRun
    from lasvm_cli.qp.online_core import I_LABELS, I_POOL, _take, fit_width, online_step

    top = max(points)
    if mode == "random":
        run = LasvmRun(kd, kp, y_tr, C, C, eps=TAU, cache_mb=40.0, selection="random",
                       seed=seed)
    else:
        run = LasvmRun(kd, kp, y_tr, C, C, eps=TAU, cache_mb=40.0, selection="active",
                       candidates=M, label_budget=top + 1, seed=seed)
    run.begin()
    st = run.st
    assert sorted(np.flatnonzero(st.labeled).tolist()) == seeds(y_tr)
    out = {}
    while True:
        n_lab = int(st.ist[I_LABELS])
        if n_lab in points:
            out[n_lab] = lasvm_state_error(run, cols, test, y_te)
        if n_lab >= top:
            return out
        if mode == "all":
            pool = np.array(st.pool[:st.ist[I_POOL]])
            coef, rho = run.coef_rho()
            nz = np.flatnonzero(coef)
            f = cols.matrix(nz, pool) @ coef[nz] - rho if len(nz) else -rho * np.ones(len(pool))
            r = int(np.argmin(np.abs(f)))
            fit_width(run.kc, st)
            ex = _take(st, np.int64(r))
            online_step(st, run.kc, kd, kp, np.int64(ex), TAU, np.inf)
        else:
            nxt = min(p for p in points if p > n_lab)
            run.step(nxt - n_lab)
        assert int(st.ist[I_LABELS]) > n_lab


def split(X, y, n_tr, s):
    order = np.random.default_rng(100 + s).permutation(len(y))
    Xs, ys = X[order], y[order]
    return Xs, ys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--labels", type=int, nargs="+", default=list(LABELS))
    ap.add_argument("--only", nargs="+", default=list(SETS))
    ap.add_argument("--methods", nargs="+", default=list(METHODS))
    ap.add_argument("--first-split", type=int, default=0,
                    help="run splits F .. F + splits - 1 (to run batches side by side)")
    ap.add_argument("--merge", nargs="+", metavar="RAW",
                    help="no runs: the tables and figure from these raw CSV files")
    args = ap.parse_args()
    if args.merge:
        raw = []
        for path in args.merge:
            with open(path) as fh:
                next(fh)
                for line in fh:
                    p, s, m, L, e, sec = line.rstrip("\n").split(",")
                    e = e.removeprefix("np.float64(").removesuffix(")")
                    raw.append((p, int(s), m, int(L), float(e), float(sec)))
        args.only = [n for n in SETS if any(r[0] == n for r in raw)]
        args.methods = [m for m in METHODS if any(r[2] == m for r in raw)]
        args.splits = len({(r[0], r[1]) for r in raw}) // len(args.only)
        points = sorted({r[3] for r in raw})
        times = sorted({(r[0], r[1], r[2], r[5]) for r in raw})
        write(raw, times, points, args, "figure16-raw-merged.csv")
        return
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import RBF, make_params

    points = sorted(set(args.labels))
    raw = []  # (problem, split, method, labels, error)
    times = []  # (problem, split, method, seconds)
    for name in args.only:
        X, y, gamma, C, n_tr = pooled(name)
        for s in range(args.first_split, args.first_split + args.splits):
            Xs, ys = split(X, y, n_tr, s)
            Xtr = Xs[:n_tr]
            test = np.arange(n_tr, len(ys))
            y_tr, y_te = ys[:n_tr], ys[n_tr:]
            kd = kernel_data(Xtr.indptr, (Xtr.indices + 1).astype(np.int32), Xtr.data,
                             width=Xtr.shape[1] + 1, training=True)
            kp = make_params(RBF, gamma=gamma)
            cols = Columns(Xs, gamma)
            for method in args.methods:
                rng = np.random.default_rng(1000 * s + METHODS.index(method))
                t, c = time.perf_counter(), time.process_time()
                if method.startswith("LASVM"):
                    mode = {"LASVM ACTIVE ALL": "all", "LASVM ACTIVE 50": "50",
                            "LASVM RANDOM": "random"}[method]
                    out = run_lasvm(kd, kp, cols, y_tr, C, test, y_te, mode, s + 1, points)
                else:
                    mode = {"RETRAIN ACTIVE ALL": "all", "RETRAIN ACTIVE 50": "50",
                            "RETRAIN RANDOM": "random"}[method]
                    out = run_retrain(cols, y_tr, C, n_tr, test, y_te, mode, rng, points)
                seconds = time.perf_counter() - t
                cpu = time.process_time() - c
                times.append((name, s, method, seconds))
                for L in points:
                    raw.append((name, s, method, L, out[L], seconds))
                print(name, s, method, f"{seconds:.1f}s wall {cpu:.1f}s cpu",
                      " ".join(f"{L}:{out[L]:.2f}" for L in points), file=sys.stderr,
                      flush=True)
    last = args.first_split + args.splits - 1
    write(raw, times, points, args, f"figure16-raw-{args.first_split}-{last}.csv")


def write(raw, times, points, args, raw_name):
    folder = RESULTS / "paper-000"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / raw_name, "w") as fh:
        fh.write("problem,split,method,labels,test_error_percent,seconds\n")
        for r in raw:
            fh.write(f"{r[0]},{r[1]},{r[2]},{r[3]},{float(r[4])!r},{float(r[5])!r}\n")
    errs = {}
    for name, s, method, L, e, _ in raw:
        errs.setdefault((name, method, L), []).append(e)
    show = [p for p in points if p in (10, 20, 30, 50, 100, 200, 300, 500)] or points
    note = (f"Mean test error (%) over {args.splits} random splits (standard error of the "
            "mean in brackets). Same ten seed labels for every method; LASVM measured "
            "without the finishing step.")
    for name in args.only:
        table = Table(f"figure16-{name}", f"Figure 16, {SETS[name]}: test error (%) against "
                      "the number of labels", ["method"] + [f"{L} labels" for L in show], note)
        for method in args.methods:
            row = {"method": method}
            for L in show:
                v = np.array(errs[(name, method, L)])
                se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
                row[f"{L} labels"] = f"{v.mean():.2f} ({se:.2f})"
            table.add(**row)
        table.write(folder)
        med = Table(f"figure16-{name}-median", f"Figure 16, {SETS[name]}: median test error "
                    "(%) (min to max) over the splits", ["method"] + [f"{L} labels" for L in show])
        for method in args.methods:
            med.add(method=method, **{f"{L} labels": spread(errs[(name, method, L)], "{:.2f}")
                                      for L in show})
        med.write(folder)
    tt = Table("figure16-time", f"Seconds to reach {max(points)} labels (mean over splits; "
               "this machine is shared, so indicative; the paper's Reuters times beside)",
               ["problem", "method", "seconds", "paper (Reuters, 500 labels)"])
    for name in args.only:
        for method in args.methods:
            v = [t for p, s, m, t in times if p == name and m == method]
            tt.add(problem=SETS[name], method=method, seconds=f"{np.mean(v):.2f}",
                   **{"paper (Reuters, 500 labels)": PAPER_TIMES.get(method, "")
                      if name == "reuters" else ""})
    tt.write(folder)
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(2, len(args.only), figsize=(6 * len(args.only), 9),
                             squeeze=False)
    styles = {"LASVM ACTIVE ALL": "-o", "LASVM ACTIVE 50": "-s", "RETRAIN ACTIVE ALL": "--o",
              "RETRAIN ACTIVE 50": "--s", "LASVM RANDOM": "-^", "RETRAIN RANDOM": "--^"}
    for row, (stat, f) in enumerate((("mean", np.mean), ("median", np.median))):
        for ax, name in zip(axes[row], args.only):
            for method in args.methods:
                m = [f(errs[(name, method, L)]) for L in points]
                ax.plot(points, m, styles[method], label=method, markersize=3)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("number of labels")
            ax.set_ylabel(f"test error (%), {stat}")
            ax.set_title(f"{SETS[name]} ({stat} over {args.splits} random splits)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / "paper-000-fig16.png", dpi=110)


if __name__ == "__main__":
    main()
