"""Seed 004, the deviations settled (docs/reproductions/seed-004.md, sections 4, 9 and 10):

    python bench/paper_004_schedule.py strategies usps --train-rows 1000 --seeds 3
    python bench/paper_004_schedule.py cs-second usps --train-rows 2000 --seeds 3
    python bench/paper_004_schedule.py llw-optimum letter --train-rows 2000 --max-seconds 1800
    python bench/paper_004_schedule.py llw-lbfgs letter --train-rows 2000 --max-iter 4000

* ``strategies``: online LLW x1 with each working-set strategy under each ``--step-schedule``
  (blocks: ours, the gain per block of work; seconds: Algorithm 7 as printed, the gain after
  each step by wall-clock time; steps: the printed update by work; fixed: no draws, one block
  of each old step type per example, so every strategy gets the same old steps), beside the
  batch dual. Is "the three LLW strategies are not equal" the schedule's doing?
* ``cs-second``: online CS x1, the second variable of a pair inside one pattern by the gain
  (ours) or by argmax_c (g_p - g_c) (Algorithms 8 and 9 as printed), for the thesis's CS
  strategy and random-pattern-s2do-pattern (the two places the rule applies: TWO_NEWS, and
  that strategy's old steps), beside the batch dual.
* ``llw-optimum``: batch LLW (S2DO without shrinking, so that every gradient is exact) run
  towards -e in chunks, with the dual D, the primal P (so the gap P - D bounds how far D is
  from the optimum), the KKT violation and the test error at each checkpoint; then online x1,
  x2 and x4 beside it. Is LLW's letter error (13.5-16.6% against CS's 10.6%) one pass being far
  from the optimum, or the machine's? The batch run saves its state at each checkpoint and a
  later call continues it.
* ``llw-lbfgs``: the same LLW dual maximised by scipy's L-BFGS-B (another family of solver:
  quasi-Newton on the box), with checkpoints: does batch S2DO climb to the same optimum?

C and gamma are the thesis's (bench/paper_004.py SETTINGS), the data read as bench/paper_004.py
reads them (usps halved, letter unscaled, mnist / 255), a random subsample (seed 0) of
``--train-rows`` training and ``--test-rows`` test rows. Every run appends its row to
OUT/PART-DATA-ROWS.csv (default OUT: results/paper-004-schedule) as soon as it is done; a
rerun skips the rows already there (resumable). Times are those of a shared, loaded machine:
compare seconds only within one process.
"""

import argparse
import csv
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.paper_004 import SETTINGS, load  # noqa: E402
from lasvm_cli.numerics.data import subset  # noqa: E402
from lasvm_cli.training.params import TrainParams  # noqa: E402
from lasvm_cli.training.train import train  # noqa: E402

STRATEGIES = ("s2do-all", "random-pattern-s2do-all", "random-pattern-s2do-pattern")
SCHEDULES = ("blocks", "seconds", "steps", "fixed")


class Rows:
    """The CSV of one part: rows keyed by ``key``; done ones are skipped on a rerun."""

    def __init__(self, path):
        self.path = path
        self.rows = []
        if path.exists():
            with open(path) as f:
                self.rows = list(csv.DictReader(f))

    def done(self, key):
        return any(r["key"] == key for r in self.rows)

    def get(self, key):
        return next(r for r in self.rows if r["key"] == key)

    def add(self, row):
        self.rows.append({k: str(v) for k, v in row.items()})
        fields = list(dict.fromkeys(k for r in self.rows for k in r))
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(self.rows)
        tmp.replace(self.path)
        print(self.path.name, row, file=sys.stderr, flush=True)


def fit(problem, rows, test, test_rows, **options):
    """One training through svm-train's parameters; its test error, dual and counters."""
    params = replace(TrainParams(), **options)
    t0 = time.perf_counter()
    model = train(problem, params, rows=rows)
    seconds = time.perf_counter() - t0
    pred = model.predict(subset(test.kd, test_rows))
    c = model.counters
    return dict(error=100.0 * float((pred != test.y[test_rows]).mean()), dual=c["dual"],
                seconds=round(seconds, 3), evals=c["kernel_evals"],
                old_steps=c.get("two_old_steps", 0) + c.get("two_old_supports_steps", 0),
                support_patterns=c.get("support_patterns", int(model.sv_coef.shape[1])))


def batch_dual(out, problem, rows, test, test_rows, scheme, C, g, cache_mb, skip=False):
    """The batch run's dual (run once; ``skip``: none, NaN)."""
    key = f"{scheme} batch"
    if skip:
        return float("nan")
    if not out.done(key):
        r = fit(problem, rows, test, test_rows, multiclass=scheme, solver="smo", C=C, gamma=g,
                cache_size=cache_mb)
        out.add(dict(key=key, machine=scheme, run="batch", seed=0, **r))
    return float(out.get(key)["dual"])


def strategies(a, out, problem, rows, test, test_rows):
    C, g = SETTINGS[a.dataset][:2]
    D = batch_dual(out, problem, rows, test, test_rows, "llw", C, g, a.cache_mb, a.no_batch)
    for seed in range(1, a.seeds + 1):
        for schedule in a.schedules.split(","):
            for strategy in a.strategies.split(","):
                key = f"llw {strategy} {schedule} {seed}"
                if out.done(key):
                    continue
                r = fit(problem, rows, test, test_rows, multiclass="llw", solver="online",
                        C=C, gamma=g, cache_size=a.cache_mb, strategy=strategy,
                        schedule=schedule, seed=seed)
                out.add(dict(key=key, machine="llw", run=f"{strategy} {schedule}", seed=seed,
                             dual_pct=round(100 * r["dual"] / D, 3), **r))


def cs_second(a, out, problem, rows, test, test_rows):
    C, g = SETTINGS[a.dataset][2:]
    D = batch_dual(out, problem, rows, test, test_rows, "cs", C, g, a.cache_mb)
    for seed in range(1, a.seeds + 1):
        for strategy in ("random-pattern-s2do-all", "random-pattern-s2do-pattern"):
            for rule in ("gain", "gradient"):
                key = f"cs {strategy} {rule} {seed}"
                if out.done(key):
                    continue
                r = fit(problem, rows, test, test_rows, multiclass="cs", solver="online", C=C,
                        gamma=g, cache_size=a.cache_mb, strategy=strategy, cs_second=rule,
                        seed=seed)
                out.add(dict(key=key, machine="cs", run=f"{strategy} {rule}", seed=seed,
                             dual_pct=round(100 * r["dual"] / D, 3), **r))


def llw_optimum(a, out, problem, rows, test, test_rows):
    """Batch LLW towards -e with checkpoints (dual, primal, gap, violation, test error), then
    online x1, x2, x4."""
    from lasvm_cli.numerics import cache as kc
    from lasvm_cli.numerics.classes import group_classes
    from lasvm_cli.numerics.kernels import make_params
    from lasvm_cli.qp import s2do as core
    from lasvm_cli.solvers.s2do_batch import coefficients, diagonal

    C, g = SETTINGS[a.dataset][:2]
    label, _, count, perm = group_classes(problem.y[rows])
    grouped = rows[perm]
    yc = np.repeat(np.arange(label.size), count).astype(np.int64)
    d, l = label.size, yc.size
    kd = subset(problem.kd, grouped)
    kp = make_params(2, 3, g, 0.0)
    width = max(problem.max_index, test.max_index)

    def dense(p, r):
        import scipy.sparse as sp

        ip, ix, vals = p.csr_rows(r)
        return sp.csr_matrix((vals, ix - 1, ip), shape=(r.size, width)).toarray()

    X, Xt = dense(problem, grouped), dense(test, test_rows)
    # K(test, train) in numpy, once: the test errors of every checkpoint
    Kt = np.exp(-g * np.maximum((Xt ** 2).sum(1)[:, None] + (X ** 2).sum(1)[None, :]
                                - 2.0 * Xt @ X.T, 0.0))
    ty = test.y[test_rows]

    def error(A, S):
        coef = coefficients(core.LLW, A, S, yc)
        return 100.0 * float(np.mean(label[np.argmax(Kt @ coef.T, axis=1)] != ty))

    st = core.make_state(core.LLW, yc, d, diagonal(kd, kp, l), float(C), eps=a.eps,
                         shrinking=False, max_iter=10 ** 12)
    saved = out.path.with_name(out.path.stem + "-batch-state.npz")
    spent = 0.0
    if saved.exists():
        z = np.load(saved)
        for f in ("A", "G", "S", "ist", "fst"):
            getattr(st, f)[...] = z[f]
        spent = float(z["seconds"])
    c = kc.make_cache(l, a.cache_mb)
    v = st.fst[core.TARGET]
    chunk, status = 20000, core.RUNNING
    while status == core.RUNNING and spent < a.max_seconds:
        t0 = time.perf_counter()
        status = core.s2do_run(st, c, kd, kp, chunk)
        spent += time.perf_counter() - t0
        free = np.ones((l, d), bool)
        free[np.arange(l), yc] = False
        A, G = st.A[free], st.G[free]
        dual = float(core.dual_value(st, l))
        primal = float(0.5 * np.sum(A * (v - G)) + C * np.sum(np.maximum(G, 0.0)))
        it = int(st.ist[core.ITER])
        out.add(dict(key=f"batch {it}", run="batch", iterations=it, seconds=round(spent, 1),
                     dual=dual, primal=primal, gap_pct=round(100 * (primal - dual) / primal, 4),
                     violation=float(st.fst[core.VIOL]),
                     at_C_pct=round(100 * float(np.mean(A >= C)), 2),
                     zero_pct=round(100 * float(np.mean(A <= 0.0)), 2),
                     error=error(st.A, st.S), optimal=int(status == core.OPTIMAL)))
        np.savez(saved, A=st.A, G=st.G, S=st.S, ist=st.ist, fst=st.fst, seconds=spent)
        chunk = min(int(chunk * 1.5), 2000000)
    for epochs in (1, 2, 4):
        for seed in range(1, a.seeds + 1):
            key = f"online x{epochs} {seed}"
            if out.done(key):
                continue
            r = fit(problem, rows, test, test_rows, multiclass="llw", solver="online", C=C,
                    gamma=g, cache_size=a.cache_mb, epochs=epochs, seed=seed)
            out.add(dict(key=key, run=f"online x{epochs}", seed=seed, **r))


def llw_lbfgs(a, out, problem, rows, test, test_rows):
    """The LLW dual maximised by scipy's L-BFGS-B, a solver of another family than S2DO, as
    an independent check of batch S2DO's optimum: Q a = K (A - S/d) in numpy (the box [0, C],
    alpha_{n,y_n} fixed at 0), checkpoints every 200 iterations with the dual, the KKT
    violation (S2DO's feasible-direction measure) and the test error."""
    from scipy.optimize import minimize

    from lasvm_cli.numerics.classes import group_classes
    from lasvm_cli.qp import s2do as core
    from lasvm_cli.solvers.s2do_batch import coefficients

    C, g = SETTINGS[a.dataset][:2]
    label, _, count, perm = group_classes(problem.y[rows])
    grouped = rows[perm]
    yc = np.repeat(np.arange(label.size), count).astype(np.int64)
    d, l = label.size, yc.size
    width = max(problem.max_index, test.max_index)

    def dense(p, r):
        import scipy.sparse as sp

        ip, ix, vals = p.csr_rows(r)
        return sp.csr_matrix((vals, ix - 1, ip), shape=(r.size, width)).toarray()

    def rbf(U, V):
        return np.exp(-g * np.maximum((U ** 2).sum(1)[:, None] + (V ** 2).sum(1)[None, :]
                                      - 2.0 * U @ V.T, 0.0))

    X, Xt = dense(problem, grouped), dense(test, test_rows)
    K, Kt = rbf(X, X), rbf(Xt, X)
    ty = test.y[test_rows]
    free = np.ones((l, d), bool)
    free[np.arange(l), yc] = False
    bounds = [(0.0, C if f else 0.0) for f in free.ravel()]

    def negdual(x):
        A = x.reshape(l, d)
        QA = K @ (A - A.sum(1)[:, None] / d)
        G = (1.0 - QA) * free  # g = v - Q a, target v = 1
        return -float(np.sum(A * (1.0 + G)) / 2.0), -G.ravel()

    state = dict(it=0, seconds=0.0)
    saved = out.path.with_name(out.path.stem + "-x.npy")
    x0 = np.load(saved) if saved.exists() else np.zeros(l * d)
    done = {int(r["iterations"]) for r in out.rows}
    start = max(done) if done else 0
    t0 = time.perf_counter()

    def checkpoint(x):
        state["it"] += 1
        it = start + state["it"]
        if state["it"] % 200:
            return
        A = x.reshape(l, d)
        D, G = negdual(x)
        G = -G.reshape(l, d)
        viol = float(np.max(np.where(free & (((G > 0) & (A < C)) | ((G < 0) & (A > 0))),
                                     np.abs(G), 0.0)))
        coef = coefficients(core.LLW, A, A.sum(1), yc)
        err = 100.0 * float(np.mean(label[np.argmax(Kt @ coef.T, axis=1)] != ty))
        np.save(saved, x)
        out.add(dict(key=f"lbfgs {it}", run="lbfgs", iterations=it,
                     seconds=round(time.perf_counter() - t0, 1), dual=-D, violation=viol,
                     error=err))

    minimize(negdual, x0, jac=True, method="L-BFGS-B", bounds=bounds, callback=checkpoint,
             options=dict(maxiter=a.max_iter, maxfun=2 * a.max_iter, ftol=1e-16, gtol=1e-5,
                          maxcor=20))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("part", choices=("strategies", "cs-second", "llw-optimum", "llw-lbfgs"))
    ap.add_argument("dataset", choices=tuple(SETTINGS))
    ap.add_argument("--train-rows", type=int, default=1000)
    ap.add_argument("--test-rows", type=int, default=None)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--schedules", default=",".join(SCHEDULES))
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--no-batch", action="store_true",
                    help="strategies: no batch run (letter's LLW does not reach -e in hours)")
    ap.add_argument("--cache-mb", type=float, default=500.0)
    ap.add_argument("--eps", type=float, default=1e-3)
    ap.add_argument("--max-seconds", type=float, default=1800.0,
                    help="llw-optimum: the batch run's budget (it continues on a rerun)")
    ap.add_argument("--max-iter", type=int, default=4000, help="llw-lbfgs: L-BFGS-B iterations")
    ap.add_argument("--out", default=str(REPO / "results" / "paper-004-schedule"))
    a = ap.parse_args(argv)
    folder = Path(a.out)
    folder.mkdir(parents=True, exist_ok=True)
    out = Rows(folder / f"{a.part}-{a.dataset}-{a.train_rows}.csv")
    rng = np.random.default_rng(0)
    problem, rows = load(a.dataset, "train", a.train_rows, rng)
    test, test_rows = load(a.dataset, "test", a.test_rows, rng)
    {"strategies": strategies, "cs-second": cs_second,
     "llw-optimum": llw_optimum, "llw-lbfgs": llw_lbfgs}[a.part](a, out, problem, rows, test,
                                                              test_rows)


if __name__ == "__main__":
    main()
