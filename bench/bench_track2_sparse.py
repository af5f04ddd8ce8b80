"""track2 -K 10 against our SMO on sparse binary problems, a generated one and a real one.

    python bench/bench_track2_sparse.py [--data generated,adult] [--rows 30000] [--repeat 1]
                                        [--solvers smo,track2,rcd,track2@plain] [-m MB]

``generated`` (fixed seed): 30,000 rows of 300 binary features, about 12 stored a row
(feature frequencies falling off with the feature's rank), a third positive, each class
with 25 planted features that a row draws about 40% of its features from, 2% of the labels
flipped. ``adult`` (the shared a9a, LASVM_DATA): 30,000 of its 32,561 training rows drawn at
random (seed 0), 123 binary features, 14 stored a row, a quarter positive; any other name
is a shared data set read the same way (two classes). Two orders of the same rows: the
file's own, every positive first, and a shuffled one. For each set the script prints what
sets the cost of an update: rows, stored values a row, how concentrated the feature
frequencies are (the share of stored values in the 10 most frequent features: a common
feature makes many rows' kernel values differ from 0), then each solver's SVs and kernel
evaluations (``--counters``).
Each solver trains with ``-c 1 -g 0.05`` through svm-train's own fit (the file
read and the JIT warm-up, on a tiny file first, are outside the times); the figure is the
ratio track2 / SMO within one repeat (the solvers alternate, so that both share the
machine's load), its range over the repeats. ``track2@plain`` is
track2 without renumbering the data in the teacher's order (TrackRun's by_position off): the
figure before that change, in the same run.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LASVM_SERVER", "0")

SOLVERS = {"smo": [], "track2": ["--solver", "track2", "-K", "10"],
           "rcd": ["--solver", "rcd", "-K", "10"]}


def make_problem(n=30000, d=300, per_row=12, seed=36, planted=0.4, noise=0.02):
    """(rows, y): rows a list of sorted int arrays (1-based feature indices), y in {+1, -1},
    deterministic in ``seed``. A third of the rows are positive; each stored feature of a row
    comes with probability ``planted`` from its class's own 25 planted features, otherwise from
    the common rank-decaying distribution; then a fraction ``noise`` of the labels flips."""
    rng = np.random.default_rng(seed)
    p = 1.0 / (np.arange(d) + 8.0) ** 0.7
    p /= p.sum()
    planted_sets = rng.choice(d, size=(2, 25), replace=False)
    y = np.where(rng.random(n) < 1.0 / 3.0, 1, -1)
    rows = []
    for i in range(n):
        k = int(rng.integers(per_row - 4, per_row + 5))
        own = planted_sets[0 if y[i] > 0 else 1]
        m = int(rng.binomial(k, planted))
        r = set(rng.choice(own, size=m, replace=False).tolist())
        while len(r) < k:
            r.add(int(rng.choice(d, p=p)))
        rows.append(np.array(sorted(r)))
    flip = rng.random(n) < noise
    y[flip] = -y[flip]
    return [r + 1 for r in rows], y


def real_problem(name, n, seed=0):
    """(rows, y) of ``n`` rows of the shared set ``name`` (bench/paper_tables.read_shared),
    drawn at random (seed 0), in the form of make_problem's (1-based binary features: the
    values are dropped, as adult's are all 1)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from paper_tables import read_shared

    d = read_shared(name)
    take = np.sort(np.random.default_rng(seed).choice(len(d.y), min(n, len(d.y)), False))
    rows = [np.asarray(d.indices[d.indptr[i]:d.indptr[i + 1]], np.int64) for i in take]
    labels = np.asarray(d.y)[take]
    y = np.where(labels == labels.max(), 1, -1)
    return rows, y


def describe(rows, y):
    """Rows, positives, stored values a row (mean, min-max), features used, the share of
    stored values in the 10 most frequent features."""
    lengths = np.array([len(r) for r in rows])
    counts = np.bincount(np.concatenate(rows))
    top = np.sort(counts)[::-1][:10].sum() / counts.sum()
    return (f"{len(y)} rows, {int((y > 0).sum())} positive, {lengths.mean():.1f} features a row "
            f"({lengths.min()}-{lengths.max()}), {int((counts > 0).sum())} features used, "
            f"{100 * top:.0f}% of the stored values in the 10 most frequent")


def write(path, rows, y, order):
    with open(path, "w") as f:
        for i in order:
            f.write(("+1" if y[i] > 0 else "-1") + "".join(f" {c}:1" for c in rows[i]) + "\n")


def load(path, args):
    from lasvm_cli.cli.train import parse_command_line
    from lasvm_cli.numerics.data import Problem
    from lasvm_cli.io.svmlight import read_svmlight

    o = parse_command_line(["-q"] + args + [str(path), os.devnull])
    p = o.params
    data = read_svmlight(str(path))
    problem = Problem.from_svmlight(data, kernel_type=p.kernel_type, x_storage=p.x_storage)
    return problem, p


def timed_fit(problem, p):
    """(seconds, model) of svm-train's fit."""
    from lasvm_cli.training.fit import fit

    t = time.perf_counter()
    model = fit(problem, p)
    return time.perf_counter() - t, model


def train(path, solver, kernel_args):
    from lasvm_cli.solvers.tracking import TrackRun

    name, _, variant = solver.partition("@")
    problem, p = load(path, kernel_args + SOLVERS[name])
    saved = TrackRun.__dict__["_by_position"]
    if variant == "plain":
        TrackRun._by_position = staticmethod(lambda kd, order, by_position: False)
    try:
        seconds, model = timed_fit(problem, p)
    finally:
        TrackRun._by_position = saved
    return seconds, int(model.sv_indptr.shape[0] - 1), int(model.counters["kernel_evals"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="generated,adult",
                    help="comma-separated: generated, adult (or another shared set)")
    ap.add_argument("--rows", type=int, default=30000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--solvers", default="smo,track2,rcd")
    ap.add_argument("-m", dest="cache_mb", default="100", help="svm-train's -m for every solver")
    a = ap.parse_args()
    solvers = a.solvers.split(",")
    kernel_args = ["-c", "1", "-g", "0.05", "-m", a.cache_mb]
    for data in a.data.split(","):
        rows, y = make_problem(a.rows) if data == "generated" else real_problem(data, a.rows)
        print(f"{data}: {describe(rows, y)}", flush=True)
        run_set(rows, y, solvers, kernel_args, a.repeat)


def run_set(rows, y, solvers, kernel_args, repeat):
    tmp = Path(tempfile.mkdtemp(prefix="track2-sparse-"))
    try:
        pos = np.flatnonzero(y > 0)
        neg = np.flatnonzero(y < 0)
        files = {"file order": tmp / "file.svm", "shuffled": tmp / "shuffled.svm"}
        write(files["file order"], rows, y, np.concatenate([pos, neg]))
        write(files["shuffled"], rows, y, np.random.default_rng(7).permutation(len(y)))
        write(tmp / "tiny.svm", rows, y, np.concatenate([pos[:60], neg[:60]]))
        t = time.perf_counter()
        for s in solvers:
            train(tmp / "tiny.svm", s, kernel_args)
        print(f"  warm-up {time.perf_counter() - t:.1f} s", flush=True)
        for name, path in files.items():
            res = {}
            times = {s: [] for s in solvers}
            for _ in range(repeat):  # alternating: the solvers share the machine's load
                for s in solvers:
                    sec, n_sv, evals = train(path, s, kernel_args)
                    times[s].append(sec)
                    res[s] = (min(times[s]), n_sv, evals)
            for s in solvers:
                best, n_sv, evals = res[s]
                print(f"  {name:10s} {s:12s} {best:7.2f} s  {n_sv:6d} SVs  "
                      f"{evals / 1e6:7.1f} M kernel evaluations", flush=True)
            if "smo" in res:
                # the ratio within each repeat (the same load), min-max over the repeats
                ratios = ", ".join(
                    f"{s}/smo " + "-".join(f"{f(r):.2f}" for f in (min, max))
                    for s in solvers if s != "smo"
                    for r in [[t / u for t, u in zip(times[s], times["smo"])]])
                print(f"  {name:10s} {ratios}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
