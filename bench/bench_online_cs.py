"""Online Crammer-Singer x1 against batch CS (issue 36 §3): the time ratio and test accuracy.

    python bench/bench_online_cs.py [sat] [usps] [letter] [mnist] [--mnist-rows N]
                                    [--repeat N] [--seed S] [-c C] [-g GAMMA] [-m MB]

Per data set, in one process: a warm-up of both runs on 60 rows (no timing includes loading
the JIT cache), then batch CS (``--multiclass cs``, S2DO with shrinking) and online CS x1
(``--multiclass cs --solver online``, one epoch, the thesis's random-pattern-s2do-all),
``--repeat`` times alternating, both with a kernel cache of ``-m`` MB (svm-train's default 100;
the thesis's tables used 3 GB); printed: each run's solver seconds (the model's counters),
kernel evaluations, old steps, test accuracy, and the ratio online / batch of the medians.

Data sets: ``sat``, a generated satimage-like problem (4,435 training and 2,000 test rows, 36
features in [-1, 1], six unbalanced classes with satimage's proportions, nonlinear class
structure: each class three blobs in a 4-dimensional latent space, mapped to 36 features by a
fixed random smooth map, noise, then scaled to [-1, 1]; seed fixed); RBF gamma 1, C 10. usps, letter and mnist as bench/paper_004.py reads them (its scaling and the thesis's
CS C and gamma); mnist a random subsample of ``--mnist-rows`` training rows (seed 0) and
2,000 test rows. Data: $LASVM_DATA (docs/data.md).
"""

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from lasvm_cli.numerics.data import Problem, subset  # noqa: E402
from lasvm_cli.training.params import TrainParams  # noqa: E402
from lasvm_cli.training.train import train  # noqa: E402

SAT_COUNTS = (1072, 479, 961, 415, 470, 1038)  # satimage's training classes (4,435 rows)
# C and gamma where batch CS converges fast and online CS x1 took longer than batch before
# the flat gains loop (the satimage-like case: 1.27 here, 1.29 there)
SAT_C, SAT_GAMMA = 10.0, 1.0


def satimage_like(n_test=2000, seed=36):
    """(train Problem, test Problem): see the module docstring."""
    rng = np.random.default_rng(seed)
    k, latent, feat = len(SAT_COUNTS), 4, 36
    n_train = sum(SAT_COUNTS)
    p = np.array(SAT_COUNTS, float) / n_train
    blobs = [rng.normal(0.0, 1.2, (3, latent)) for _ in range(k)]
    W1 = rng.normal(0.0, 1.0, (latent, 24))
    W2 = rng.normal(0.0, 1.0 / np.sqrt(24), (24, feat))

    def draw(counts):
        ys, zs = [], []
        for c, n in enumerate(counts):
            centre = blobs[c][rng.integers(0, 3, n)]
            zs.append(centre + rng.normal(0.0, 0.3, (n, latent)))
            ys.append(np.full(n, c + 1.0))
        z = np.vstack(zs)
        x = np.tanh(z @ W1) @ W2 + rng.normal(0.0, 0.05, (z.shape[0], feat))
        y = np.concatenate(ys)
        order = rng.permutation(y.size)
        return x[order], y[order]

    xtr, ytr = draw(SAT_COUNTS)
    xte, yte = draw(rng.multinomial(n_test, p))
    lo, hi = xtr.min(0), xtr.max(0)
    scale = lambda x: np.clip(2.0 * (x - lo) / (hi - lo) - 1.0, -1.0, 1.0)  # noqa: E731
    return dense_problem(scale(xtr), ytr), dense_problem(scale(xte), yte)


def dense_problem(x, y):
    n, f = x.shape
    indptr = np.arange(0, n * f + 1, f, dtype=np.int64)
    indices = np.tile(np.arange(1, f + 1, dtype=np.int32), n)
    return Problem(y, indptr, indices, x.ravel().astype(np.float64), f, kernel_type=2)


def load_set(name, mnist_rows):
    """(train, train rows, test, test rows, C, gamma)."""
    if name == "sat":
        tr, te = satimage_like()
        return tr, np.arange(tr.n), te, np.arange(te.n), SAT_C, SAT_GAMMA
    from paper_004 import SETTINGS, load

    rng = np.random.default_rng(0)
    rows = mnist_rows if name == "mnist" else 0
    tr, tr_rows = load(name, "train", rows, rng)
    te, te_rows = load(name, "test", 2000 if name == "mnist" else 0, rng)
    _, _, C, g = SETTINGS[name]
    return tr, tr_rows, te, te_rows, C, g


RUNS = {"batch": dict(solver="smo", shrinking=1),
        "online": dict(solver="online", strategy="random-pattern-s2do-all", epochs=1)}


def run(tr, rows, te, te_rows, C, gamma, kind, seed=1, cache_mb=100.0):
    params = replace(TrainParams(), multiclass="cs", C=C, gamma=gamma, seed=seed,
                     cache_size=cache_mb, **RUNS[kind])
    t0, c0 = time.perf_counter(), time.process_time()
    model = train(tr, params, rows=rows)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    acc = 100.0 * float((model.predict(subset(te.kd, te_rows)) == te.y[te_rows]).mean())
    c = model.counters
    return dict(seconds=c["seconds"], wall=wall, cpu=cpu, acc=acc, dual=c["dual"], it=c.get("iterations", 0),
                evals=c["kernel_evals"], sv=int(model.sv_coef.shape[1]),
                old=c.get("two_old_steps", 0) + c.get("two_old_supports_steps", 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sets", nargs="*", default=["sat", "usps", "letter", "mnist"])
    ap.add_argument("--mnist-rows", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-c", "--C", type=float, help="C for every set (default: the set's)")
    ap.add_argument("-g", "--gamma", type=float, help="gamma for every set (default: the set's)")
    ap.add_argument("-m", dest="cache_mb", type=float, default=100.0,
                    help="kernel cache in MB for both runs (default 100)")
    a = ap.parse_args()
    print(f"# pid {os.getpid()}", flush=True)
    for name in a.sets:
        tr, rows, te, te_rows, C, g = load_set(name, a.mnist_rows)
        C = a.C if a.C is not None else C
        g = a.gamma if a.gamma is not None else g
        for kind in RUNS:  # warm-up
            run(tr, rows[:60], te, te_rows[:5], C, g, kind)
        res = {"batch": [], "online": []}
        for _ in range(a.repeat):
            for kind in RUNS:
                r = run(tr, rows, te, te_rows, C, g, kind, a.seed, a.cache_mb)
                res[kind].append(r)
                print(f"{name} {kind}: " + " ".join(
                    f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in r.items()), flush=True)
        b = statistics.median(r["seconds"] for r in res["batch"])
        o = statistics.median(r["seconds"] for r in res["online"])
        bc = statistics.median(r["cpu"] for r in res["batch"])
        oc = statistics.median(r["cpu"] for r in res["online"])
        print(f"{name}: -m {a.cache_mb:g} rows {rows.size} classes {np.unique(tr.y[rows]).size} C {C} gamma {g:.4g}"
              f" | batch {b:.3f} s online {o:.3f} s ratio {o / b:.3f} (cpu {bc:.3f} / {oc:.3f} s:"
              f" {oc / bc:.3f}) | acc batch "
              f"{res['batch'][0]['acc']:.2f} online {res['online'][0]['acc']:.2f}"
              f" | dual online/batch {res['online'][0]['dual'] / res['batch'][0]['dual']:.4f}",
              flush=True)


if __name__ == "__main__":
    main()
