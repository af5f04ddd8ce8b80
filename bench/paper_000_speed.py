"""LASVM x1 against our own SMO in CPU time, per phase (seed 000, Figure 8's time column).

    python bench/paper_000_speed.py [--only Waveform Banana USPS+N Adult] [--repeat 3]
        [--finishings smo reprocess reprocess-shrinking] [--out results/paper-000]

The paper has LASVM x1 at or below LIBSVM's time on waveform, USPS+N and adult (banana at
parity). Our SMO is not LIBSVM (it is faster), so this script asks the stricter question:
LASVM x1's time against our SMO's on the same rows, and where LASVM's time goes. For each
problem (bench/paper_000.py's set-up: Figure 7's gamma and C, 40 MB cache, tau = 0.001) and
each repeat, the trainers run one after the other in the same process, alternating: our SMO,
then LASVM x1 with each ``--finishing`` rule of ``--finishings``. Each is timed in CPU
seconds of this process (``time.process_time``), with one numba thread, which a machine
shared with other jobs disturbs far less than wall time does, and in wall seconds beside it.
LASVM's online phase and its finishing step are timed apart, with their kernel evaluations.
The JIT is warmed first (paper_000.warm_up).

The table gives, per problem and trainer, the median over the repeats and the range of the
ratio to the SMO of the same repeat. Writes results/paper-000/speed.md and .csv.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from paper_000 import CACHE_MB, TAU, kernel_sets, problem, warm_up  # noqa: E402
from paper_tables import RESULTS, Table  # noqa: E402

PAPER_TIMES = {"Waveform": (3.2, 2.7), "Banana": (9.9, 10.0), "Reuters": (24, 31.4),
               "USPS": (13.5, 15.9), "USPS+N": (305, 178), "Adult": (1079, 809)}


def timed(fn, *args, **kwargs):
    c, w = time.process_time(), time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.process_time() - c, time.perf_counter() - w


def smo(kd, kp, y, C):
    from lasvm_cli.solvers.csvc import solve_binary

    r, cpu, wall = timed(solve_binary, kd, kp, y, C, C, eps=TAU, cache_mb=CACHE_MB)
    return dict(cpu=cpu, wall=wall, evals=r.counters["kernel_evals"], sv=r.n_sv)


def lasvm(kd, kp, y, C, finishing):
    from lasvm_cli.solvers.lasvm import LasvmRun

    run = LasvmRun(kd, kp, y, C, C, eps=TAU, cache_mb=CACHE_MB, finishing=finishing)

    def online():
        run.begin()
        while run.online:
            run.step()

    _, cpu_on, wall_on = timed(online)
    evals_on = run.kernel_evals
    _, cpu_fin, wall_fin = timed(run.run_to_end)
    r = run.result()
    return dict(cpu=cpu_on + cpu_fin, wall=wall_on + wall_fin, evals=run.kernel_evals,
                sv=r.n_sv, cpu_online=cpu_on, evals_online=evals_on,
                finish_steps=r.counters["finish_steps"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=["Waveform", "Banana", "USPS+N", "Reuters"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--finishings", nargs="+", default=["smo", "reprocess", "reprocess-shrinking"])
    ap.add_argument("--out", default=str(RESULTS / "paper-000"), help="folder of speed.md/.csv")
    args = ap.parse_args()
    from lasvm_cli.numerics.kernels import RBF, make_params

    warm_up()
    table = Table("speed", "LASVM x1 against our SMO: CPU seconds (one numba thread)", [
        "data set", "trainer", "CPU (s)", "/ our SMO (range)", "wall (s)", "online CPU (s)",
        "kernel evals", "online kernel evals", "finishing steps", "SV",
        "paper: LIBSVM / LASVM x1 (s)"],
        f"Figure 7's settings, 40 MB cache, tau = {TAU}; median over {args.repeat} repeats, "
        f"trainers alternating within each repeat; ratio to the SMO of the same repeat.")
    trainers = ("ours, SMO",) + tuple(f"LASVM x1, --finishing {f}" for f in args.finishings)
    for name in args.only:
        tr, te, y_tr, _, gamma, C = problem(name)
        kd, _ = kernel_sets(tr, te)
        kp = make_params(RBF, gamma=gamma)
        runs = {t: [] for t in trainers}
        for _ in range(args.repeat):
            runs[trainers[0]].append(smo(kd, kp, y_tr, C))
            for t, fin in zip(trainers[1:], args.finishings):
                runs[t].append(lasvm(kd, kp, y_tr, C, fin))
            print(name, {t: round(v[-1]["cpu"], 2) for t, v in runs.items()}, file=sys.stderr,
                  flush=True)
        for t in trainers:
            rs = runs[t]
            ratios = [r["cpu"] / s["cpu"] for r, s in zip(rs, runs[trainers[0]])]

            def med(key, fmt="{:.2f}"):
                vals = [r[key] for r in rs if key in r]
                return fmt.format(statistics.median(vals)) if vals else ""

            table.add(**{"data set": name, "trainer": t, "CPU (s)": med("cpu"),
                         "/ our SMO (range)": f"{min(ratios):.2f}-{max(ratios):.2f}",
                         "wall (s)": med("wall"), "online CPU (s)": med("cpu_online"),
                         "kernel evals": med("evals", "{:,.0f}"),
                         "online kernel evals": med("evals_online", "{:,.0f}"),
                         "finishing steps": med("finish_steps", "{:,.0f}"), "SV": med("sv", "{:.0f}"),
                         "paper: LIBSVM / LASVM x1 (s)": "{} / {}".format(*PAPER_TIMES[name])})
    table.write(Path(args.out))


if __name__ == "__main__":
    main()
