"""Seed 004's strategy probe (docs/reproductions/seed-004.md, section 4): the dual online x1
reaches (% of batch's, 3 seeds) with the TWO_OLD / TWO_OLD_SUPPORTS multipliers d, 4 d and
16 d, each strategy, LLW then CS, on 1,000 random usps rows with the thesis's C and gamma.
Data from $LASVM_DATA. ``python bench/paper_004_strategy_probe.py``
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.paper_004 import SETTINGS, load  # noqa: E402
from lasvm_cli.numerics.classes import group_classes  # noqa: E402
from lasvm_cli.numerics.data import subset  # noqa: E402
from lasvm_cli.numerics.kernels import make_params  # noqa: E402
from lasvm_cli.qp.s2do import CS, LLW  # noqa: E402
from lasvm_cli.solvers.s2do_batch import solve_batch  # noqa: E402
from lasvm_cli.solvers.s2do_online import solve_online  # noqa: E402

problem, rows = load("usps", "train", 1000, np.random.default_rng(0))
label, _, count, perm = group_classes(problem.y[rows])
g = rows[perm]
yc = np.repeat(np.arange(label.size), count).astype(np.int64)
d = label.size
kd = subset(problem.kd, g)
llw_C, llw_g, cs_C, cs_g = SETTINGS["usps"]
for kind, C, gam in ((LLW, llw_C, llw_g), (CS, cs_C, cs_g)):
    kp = make_params(2, 3, gam, 0.0)
    b = solve_batch(kd, kp, yc, d, C, kind)
    D = b.counters["dual"]
    print("kind", kind, "batch dual", D, flush=True)
    for strat in ("s2do-all", "random-pattern-s2do-all", "random-pattern-s2do-pattern"):
        for mult in (1, 4, 16):
            duals, olds = [], []
            for sd in (1, 2, 3):
                r = solve_online(kd, kp, yc, d, C, kind, strategy=strat, seed_value=sd,
                                 multipliers=(1, mult * d, mult * d))
                duals.append(r.counters["dual"] / D * 100)
                olds.append(r.counters["two_old_steps"] + r.counters["two_old_supports_steps"])
            print(kind, strat, f"mult x{mult}", f"dual % of batch {np.mean(duals):.2f} "
                  f"[{min(duals):.2f}-{max(duals):.2f}]", f"old steps {np.mean(olds):.0f}",
                  flush=True)
