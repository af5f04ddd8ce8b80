"""Would a tree merge shorten the partitions' merged solve? (docs/benchmarks.md, "One SVM over
partitions"; the Cascade SVM's own layout.)

    python bench/partitions_tree_probe.py TRAIN_FILE --parts 8 -c 10 -g 3.0757e-07

svm-train --partitions merges every part's support vectors into one working set W and solves
it on the client (the first pass's merged SMO). The Cascade SVM merges them pairwise up a tree
instead: each merge a warm-started SMO on two sets' support vectors, the merges of a level
independent of each other (on a cluster they run on the workers). This probe runs step 1 (the
parts' solves), then both layouts of the first merge, in this process, and reports for each
merge its rows, CPU seconds, iterations and support vectors: the flat merge's CPU against the
tree's total and its critical path (the slowest merge of each level, summed). The checks and
later passes, which follow either layout, are not run. Writes one JSON line to
results/partitions/tree-probe.json.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lasvm_cli.numerics.data import kernel_data  # noqa: E402
from lasvm_cli.numerics.kernels import make_params  # noqa: E402
from lasvm_cli.qp import SmoScalars  # noqa: E402
from lasvm_cli.training.cascade import (Cascade, InProcess, Machine, _merge,  # noqa: E402
                                        _take, solve_part, solve_w)
from lasvm_cli.training.params import TrainParams  # noqa: E402


def merged_solve(cascade, sets, kp, params):
    """The warm-started SMO on the union of ``sets``; returns (its support vectors as a
    RowSet, what it cost)."""
    W = _merge(sets)
    c0 = time.process_time()
    wkd = kernel_data(W.indptr, W.indices, W.values, width=cascade.max_index + 1,
                      x_storage="float64", training=True)
    st, c = solve_w(wkd, kp, W.y, W.p, np.full(W.y.size, params.C), params, W.alpha)
    cpu = time.process_time() - c0
    alpha = np.zeros(W.ids.size)
    alpha[c.perm] = st.alpha
    sv = np.flatnonzero(alpha > 0)
    kept = _take(W, sv)
    kept.alpha = alpha[sv]
    return kept, dict(rows=int(W.ids.size), cpu=round(cpu, 2),
                      iterations=int(SmoScalars(st).iterations), sv=int(sv.size))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train")
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("-c", type=float, default=1.0)
    ap.add_argument("-g", type=float, required=True)
    ap.add_argument("-m", type=float, default=100.0)
    ap.add_argument("--out", default=str(ROOT / "results" / "partitions" / "tree-probe.json"))
    a = ap.parse_args(argv)
    params = TrainParams(C=a.c, gamma=a.g, cache_size=a.m)
    kp = make_params(2, 3, a.g, 0.0)
    cascade = Cascade(a.train, a.parts, InProcess())
    li, lj = int(cascade.label[0]), int(cascade.label[1])
    shared = Machine(0, li, lj, a.c, a.c, params)
    c0 = time.process_time()
    pieces = [rs for rs in cascade.executor.map(solve_part, cascade.parts, shared,
                                                list(cascade.offsets))]
    step1 = time.process_time() - c0
    _, flat = merged_solve(cascade, pieces, kp, params)
    levels, level = [], pieces
    while len(level) > 1:
        merges = [merged_solve(cascade, level[k:k + 2], kp, params)
                  for k in range(0, len(level), 2)]
        levels.append([cost for _, cost in merges])
        level = [kept for kept, _ in merges]
    tree_cpu = sum(cost["cpu"] for merges in levels for cost in merges)
    tree_path = sum(max(cost["cpu"] for cost in merges) for merges in levels)
    row = dict(train=a.train, parts=a.parts, C=a.c, gamma=a.g, step1_cpu=round(step1, 2),
               part_svs=[int(rs.ids.size) for rs in pieces], flat=flat, tree=levels,
               tree_cpu=round(tree_cpu, 2), tree_critical_path=round(tree_path, 2),
               when=time.strftime("%Y-%m-%d %H:%M"))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row, indent=1))


if __name__ == "__main__":
    main()
