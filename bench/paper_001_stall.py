"""LASVM-I's stall on adult and LASVM-NC against LASVM-I in sparsity, over seeds.

    python bench/paper_001_stall.py [--solvers lasvm-i,lasvm-nc] [--seeds 0-9]
        [--first N | --sample N --sample-seed S] [--checkpoints 500,1000,2000,4000]
        [--keep-order 4000] [--stop-at N] [--reference N] [--libsvm] [--ramp-start printed]
        [--out results/paper-001-stall]

adult (a9a, $LASVM_DATA) with the paper's C = 100, gamma = 0.005 (Table 2), one epoch, s = -1,
the defaults of solvers/lasvm_nc.py but for --ramp-start (default printed: the paper's blocks,
with which the stall of docs/reproductions/seed-001.md section 2 was measured; convex: the
initialisation stage, the solver's default), the paper's one-variable REPROCESS; --seeds are
LasvmGRun's seeds of the example order (svm-train --seed S draws another order from the same
seed: it trains on the rows grouped by class, as LIBSVM does). The whole training set by default; --first N
its first N rows; --sample N the N rows bench/paper_001.py --max-train N --seed S draws (the
README's Table 3 is --sample 8000 --sample-seed 0, order seed 0). The whole test set always.

After each checkpoint (examples drawn) and at the end, one CSV row per (solver, seed): #SV,
test error, the range of f = sum alpha K over the test rows and the share with |f| > 1, the
share of the training set inside the ramp region s <= z <= 1 (what LASVM-I would PROCESS),
sum alpha, examples PROCESSed and skipped so far, the draw of the last PROCESS, and over the
first --keep-order draws (stepped one at a time) the longest run of skipped draws. A run
"stalls" when nearly every example is skipped: with b = 0 and every K_ij in [0.87, 1], f is
nearly the constant sum alpha times K; once |f| > 1 with one sign almost everywhere, every
example of that class has z > 1 and every other z < -1 = s.

--reference N replays the first N draws of every run through the numpy reference of the
paper's pseudo-code (tests/reference_lasvm_nc.py) and compares decisions and alphas at the
checkpoints up to N. --libsvm trains LIBSVM on the same rows (#SV, test error).

Writes OUT/checkpoints.csv, OUT/orders.npz (the recorded orders), OUT/reference.txt and
OUT/libsvm.txt, and prints every row.
"""

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_lasvm import data_dir, decision, libsvm_run, sample  # noqa: E402

from lasvm_cli.numerics.data import kernel_data  # noqa: E402
from lasvm_cli.io.svmlight import read_svmlight  # noqa: E402
from lasvm_cli.numerics.kernels import RBF, make_params  # noqa: E402
from lasvm_cli.qp import lasvm_g_core as gc  # noqa: E402
from lasvm_cli.solvers.lasvm_nc import LasvmGRun  # noqa: E402

C, GAMMA = 100.0, 0.005  # the paper's Table 2 for adult

HEADER = ("solver", "seed", "drawn", "sv", "test_error", "f_min", "f_max", "share_abs_f_gt_1",
          "train_ramp_share", "sum_alpha", "processed", "skipped_left", "skipped_right",
          "last_process_at", "reprocess_steps", "longest_skip_run", "skip_run_start",
          "skip_run_sv")


def seeds_of(text):
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(s) for s in text.split(",")]


def longest_run(processed_flags):
    """(length, first draw, index into the flags) of the longest run of skipped draws."""
    best, start, cur = 0, 0, 0
    for t, p in enumerate(processed_flags):
        cur = 0 if p else cur + 1
        if cur > best:
            best, start = cur, t - cur + 1
    return best, start + 1, start


def dense_rows(d, rows, width):
    X = np.zeros((len(rows), width))
    for q, r in enumerate(rows):
        a, b = d.indptr[r], d.indptr[r + 1]
        X[q, d.indices[a:b]] = d.values[a:b]
    return X


def reference_replay(kd, kp, y, order, solver, checkpoints, tau, start):
    """The numpy reference of the paper's pseudo-code (tests/reference_lasvm_nc.py) over the
    draws ``order``, the kernel rows from the library's kernel_row_serial rounded to float32
    (the compiled cache's rows). Returns {draw: (#SV, processed, skipped L, skipped R,
    alpha by example)} at the checkpoints, and the processed flag of every draw."""
    sys.path.insert(0, str(REPO / "tests"))
    from reference_lasvm_nc import ReferenceLasvm

    from lasvm_cli.numerics.kernels import kernel_row_serial

    K = np.empty((order.size, order.size))
    for q, ex in enumerate(order):
        kernel_row_serial(kd, int(ex), kd, order, kp, K[q])
    K = K.astype(np.float32).astype(np.float64)
    ref = ReferenceLasvm(K, y[order], C, solver, tau=tau, start=start)
    out, flags, skl, skr = {}, [], 0, 0
    for t in range(order.size):
        rec = ref.online_iteration(t)
        flags.append(rec["action"] == "process")
        if rec["action"] == "skip":
            skl += rec["z"] < ref.s
            skr += rec["z"] > 1
        if t + 1 in checkpoints:
            alpha = {int(order[e]): ref.alpha[e] for e in ref.S}
            out[t + 1] = (ref.n_sv(), sum(flags), skl, skr, alpha)
    return out, flags


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--solvers", default="lasvm-i")
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--first", type=int, default=0, help="the first N training rows (0: all)")
    ap.add_argument("--sample", type=int, default=0,
                    help="N training rows drawn as bench/paper_001.py draws them")
    ap.add_argument("--sample-seed", type=int, default=0, help="paper_001.py's --seed")
    ap.add_argument("--checkpoints", default="500,1000,2000,4000")
    ap.add_argument("--keep-order", type=int, default=4000,
                    help="draws stepped one at a time (order and skip runs recorded)")
    ap.add_argument("--reference", type=int, default=0,
                    help="replay the first N draws of every run through the numpy reference")
    ap.add_argument("--stop-at", type=int, default=0,
                    help="end every run after this many draws (0: one whole epoch)")
    ap.add_argument("--libsvm", action="store_true",
                    help="also LIBSVM (libsvm-official) on the same rows: #SV and test error")
    ap.add_argument("--ramp-start", default="printed", choices=("printed", "convex"))
    ap.add_argument("--out", default=str(REPO / "results" / "paper-001-stall"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dd = data_dir()
    tr = read_svmlight(str(dd / "adult" / "train.svm.xz"))
    te = read_svmlight(str(dd / "adult" / "test.svm.xz"))
    y = np.where(tr.y > 0, 1.0, -1.0)
    y_te = np.where(te.y > 0, 1.0, -1.0)
    width = int(max(tr.max_index, te.max_index)) + 1
    kd = kernel_data(tr.indptr, tr.indices, tr.values, width=width, dense=False, training=True)
    kd_te = kernel_data(te.indptr, te.indices, te.values, width=width, dense=False)
    rows = None
    if args.first:
        rows = np.arange(args.first)
    elif args.sample:  # bench/paper_001.py's load(): the same generator, the same call
        rng = np.random.default_rng(args.sample_seed)
        rows = np.sort(rng.choice(y.size, args.sample, replace=False))
    if rows is not None:
        from lasvm_cli.numerics.data import subset
        kd, y = subset(kd, rows), y[rows]
    kp = make_params(RBF, gamma=GAMMA)
    if args.libsvm:
        d = tr if rows is None else sample(tr, rows)
        secs, sv, coef, rho = libsvm_run(d, y, f"-c {C!r} -g {GAMMA!r} -m 500")
        f = decision(kd, kp, sv, coef, rho, kd_te)
        line = (f"LIBSVM on {y.size} rows: #SV {sv.size} test error "
                f"{np.mean(np.where(f > 0, 1.0, -1.0) != y_te):.4f} ({secs:.1f} s)")
        print(line, flush=True)
        (out / "libsvm.txt").write_text(line + "\n")
    checkpoints = [int(c) for c in args.checkpoints.split(",") if int(c) < y.size] + [y.size]
    if args.stop_at:
        checkpoints = [c for c in checkpoints if c < args.stop_at] + [args.stop_at]
    orders = {}
    table = []
    ref_lines = []
    for solver in args.solvers.split(","):
        for seed in seeds_of(args.seeds):
            run = LasvmGRun(kd, kp, y, C, C, solver=solver, seed=seed,
                            ramp_start=args.ramp_start)
            run.begin()
            order, flags, snaps = [], [], {}
            last_process = 0
            for goal in checkpoints:
                while run.online and run.processed < goal:
                    processed = int(run.st.ist[gc.I_PROCESSED])
                    if len(order) < args.keep_order:  # one draw at a time: record the order
                        before = run.st.labeled.copy()
                        run.step(1)
                        order.append(int(np.flatnonzero(run.st.labeled != before)[0]))
                        flags.append(int(run.st.ist[gc.I_PROCESSED]) > processed)
                    else:  # the last PROCESS is then known to within 100 draws
                        run.step(min(100, goal - run.processed))
                    if int(run.st.ist[gc.I_PROCESSED]) > processed:
                        last_process = run.processed
                if not run.online and not run.done:
                    run.step(1)  # the end: CLEAN(0)
                coef, _ = run.coef_rho()
                sv = np.flatnonzero(coef)
                if goal <= args.reference:
                    snaps[goal] = {int(e): coef[e] for e in sv}
                f = decision(kd, kp, sv, coef[sv], 0.0, kd_te) if sv.size else \
                    np.zeros(y_te.size)
                f_tr = decision(kd, kp, sv, coef[sv], 0.0, kd) if sv.size else \
                    np.zeros(y.size)
                z_tr = y * f_tr
                c = run.counters()
                length, first, at = longest_run(flags)
                table.append((solver, seed, run.processed, sv.size,
                              float(np.mean(np.where(f > 0, 1.0, -1.0) != y_te)),
                              float(f.min()), float(f.max()), float(np.mean(np.abs(f) > 1)),
                              float(np.mean((z_tr >= -1.0) & (z_tr <= 1.0))),
                              float(coef.sum()), int(run.st.ist[gc.I_PROCESSED]),
                              c["skipped_left"], c["skipped_right"], last_process,
                              int(run.st.ist[gc.I_STEPS]), length, first,
                              int(sum(flags[:at]))))
                r = table[-1]
                print(f"{solver} seed {seed} drawn {r[2]:6d}: #SV {r[3]:5d} err {r[4]:.4f} "
                      f"f in [{r[5]:.3f}, {r[6]:.3f}] |f|>1 {r[7]:.3f} ramp(train) {r[8]:.4f} "
                      f"sum_alpha {r[9]:.3f} processed {r[10]} skipped {r[11]}/{r[12]} "
                      f"last PROCESS at {r[13]}; longest skip run {r[15]} from draw {r[16]} "
                      f"({r[17]} PROCESSed before it)", flush=True)
            orders[f"{solver}_{seed}"] = np.array(order, np.int64)
            if args.reference:
                o = np.array(order[:args.reference], np.int64)
                got, rflags = reference_replay(kd, kp, y, o, solver, set(snaps), run._tau,
                                               args.ramp_start)
                for goal in sorted(got):
                    n_sv, n_proc, skl, skr, alpha = got[goal]
                    ours = snaps[goal]
                    keys = set(ours) | set(alpha)
                    diff = max((abs(ours.get(k, 0.0) - alpha.get(k, 0.0)) for k in keys),
                               default=0.0)
                    length, first, at = longest_run(rflags[:goal])
                    line = (f"reference {solver} seed {seed} drawn {goal}: #SV {n_sv} "
                            f"processed {n_proc} skipped {skl}/{skr}; longest skip run "
                            f"{length} from draw {first}; max |alpha_ours - alpha_ref| "
                            f"{diff:.3g}; same PROCESS/skip decisions: "
                            f"{rflags[:goal] == flags[:goal]}")
                    print(line, flush=True)
                    ref_lines.append(line)
    with open(out / "checkpoints.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerows(table)
    if ref_lines:
        (out / "reference.txt").write_text("\n".join(ref_lines) + "\n")
    np.savez(out / "orders.npz", **orders)


if __name__ == "__main__":
    main()
