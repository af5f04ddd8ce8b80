"""svm-train --partitions against our single-process SMO, in the same run (docs/benchmarks.md).

For each set: single-process SMO (training/fit.py, LIBSVM's Solver), then the cascade over P
parts in this process and on a LocalCluster of N workers (training/cascade.py), each in a
fresh child process (compile loading included in neither: the JIT cache is warm), alternating
``--repeat`` times. Reported per run: wall seconds, objective, nSV, test accuracy (regression
sets: test mean squared error), passes, and
for the cascade every task's CPU seconds and bytes each way, the client's W solves, peak
resident memory of the client and of each part's worker; from the per-task CPU seconds, the
critical path projected to 4, 16 and 64 workers (a projection, stated as such: each stage's
measured task CPU seconds list-scheduled on W workers, plus the client's serial W solves (CPU
seconds), plus the bytes at 1 GB/s; the parts stay as measured, P of them). The stages follow
one another: pass 0's solves, each level of the tree's merges (a level's merges in parallel),
each pass's checks; the tree's merges (level, rows, support vectors, iterations) are recorded
too. The early model (--early-model) is trained too and its test accuracy reported.

    python bench/bench_partitions.py                     # ijcnn1, adult, banana, generated
    python bench/bench_partitions.py --sets gen --rows 200000 --parts 8 --workers 2
    python bench/bench_partitions.py --sets budgetfood,budgetfood-nu --parts 4 --repeat 2
    python bench/bench_partitions.py --sets ijcnn1-nu,ijcnn1-oc --parts 4

Raw JSON lines go to results/partitions/ (one file per set and run; existing ones are kept,
so an interrupted run resumes). Data: $LASVM_DATA (see docs/data.md).
"""

import argparse
import json
import lzma
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "partitions"
SETS = {  # name: (train, test, svm-train options)
    "ijcnn1": ("ijcnn1/train.svm.xz", "ijcnn1/test.svm.xz", dict(C=1.0)),
    "adult": ("adult/train.svm.xz", "adult/test.svm.xz", dict(C=1.0)),
    "banana": ("banana/train.svm.xz", "banana/test.svm.xz", dict(C=0.5, gamma=8.0)),
    "mnist": ("mnist/train.svm.xz", "mnist/test.svm.xz", dict(C=10.0, gamma=0.02 / 255**2)),
    "gen": (None, None, dict(C=1.0, gamma=0.1)),
    # regression (test MSE in place of accuracy), LIBSVM's defaults: -p 0.1, -n 0.5
    "budgetfood": ("budgetfood/train.svm.xz", "budgetfood/test.svm.xz", dict(s=3)),
    "budgetfood-nu": ("budgetfood/train.svm.xz", "budgetfood/test.svm.xz", dict(s=4)),
    # nu-SVC (nu at most 0.19 on ijcnn1: 4,853 of 49,990 rows are +1) and one-class (the
    # test set's share of rows predicted inliers in place of accuracy)
    "ijcnn1-nu": ("ijcnn1/train.svm.xz", "ijcnn1/test.svm.xz", dict(s=1, nu=0.1)),
    "ijcnn1-oc": ("ijcnn1/train.svm.xz", "ijcnn1/test.svm.xz", dict(s=2, nu=0.1)),
}


def plain_copy(name, rel, work, binary_mnist=False):
    """The shared .xz file uncompressed under ``work`` (byte ranges need a plain file); mnist
    as a binary task (odd digits, +1, against even ones, -1)."""
    src = Path(os.environ.get("LASVM_DATA", Path.home() / ".cache/lasvm-cli/data")) / rel
    dst = work / (name + "." + Path(rel).name.replace(".xz", ""))
    if not dst.exists():
        with lzma.open(src, "rt") as f, open(dst, "w") as g:
            for line in f:
                if binary_mnist:
                    label, rest = line.split(" ", 1)
                    line = ("1 " if int(label) % 2 else "-1 ") + rest
                g.write(line)
    return str(dst)


def gen_name(rows, noise, d=10, digits=5):
    return f"gen{rows}n{noise:g}" + (f"d{d}x{digits}" if (d, digits) != (10, 5) else "")


def generated(work, rows, noise, d=10, seed=0, digits=5):
    """A two-class problem of ``rows`` rows (and a test set of rows/5): two Gaussian mixtures
    in d dimensions (8 centres, alternately +1 and -1, spread ``noise``), values written with
    ``digits`` decimals, written once."""
    paths = []
    for part, n, s in (("train", rows, seed), ("test", max(rows // 5, 1000), seed + 1)):
        path = work / f"{gen_name(rows, noise, d, digits)}.{part}"
        paths.append(str(path))
        if path.exists():
            continue
        rng = np.random.default_rng(s)
        centers = np.random.default_rng(99).normal(scale=1.0, size=(8, d))
        comp = rng.integers(0, 8, n)
        X = centers[comp] + rng.normal(scale=noise, size=(n, d))
        y = np.where(comp % 2 == 0, 1, -1)
        with open(path, "w") as f:
            for c, x in zip(y, X):
                f.write(f"{c} " + " ".join(f"{j + 1}:{v:.{digits}f}" for j, v in enumerate(x))
                        + "\n")
    return paths


def params_of(opts, eps):
    from lasvm_cli.training.params import TrainParams

    p = TrainParams()
    p.svm_type = opts.get("s", 0)
    p.C = opts.get("C", 1.0)
    p.gamma = opts.get("gamma", 0.0)
    p.p = opts.get("p", 0.1)
    p.nu = opts.get("nu", 0.5)
    p.cache_size = opts.get("m", 100)
    p.eps = eps
    return p


def score(model, test):
    """dict(acc=test accuracy in %) of a classifier, dict(mse=test mean squared error) of a
    regression model, dict(inliers=% of test rows predicted +1) of a one-class model."""
    from lasvm_cli.io.svmlight import read_svmlight
    from lasvm_cli.numerics.data import kernel_data

    data = read_svmlight(test, check_norms=True)
    kd = kernel_data(data.indptr, data.indices, data.values)
    if model.svm_type in ("epsilon_svr", "nu_svr"):
        return dict(mse=float(((model.predict(kd) - data.y) ** 2).mean()))
    if model.svm_type == "one_class":
        return dict(inliers=float((model.predict(kd) > 0).mean() * 100))
    return dict(acc=float((model.predict(kd) == data.y).mean() * 100))


def score_text(run):
    if "inliers" in run:
        return f"inliers {run['inliers']:.2f}%"
    return f"{run['acc']:.2f}" if "acc" in run else f"MSE {run['mse']:.6g}"


def obj_of(lines):
    return [float(l.split()[2].rstrip(",")) for l in lines if l.startswith("obj = ")]


def warm_up(svm_type=0):
    """Load the compiled code a training uses (numba's cache) in this process: svm-train
    -s svm_type on heart_scale (its labels as targets for regression), with --partitions 2
    and without. Returns its seconds."""
    import tempfile

    from lasvm_cli.cli.train import main

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        for parts in (["--partitions", "2"], []):
            main(["-q", "-s", str(svm_type)] + parts + [str(ROOT / "data" / "heart_scale"),
                                                       d + "/m"])
    return time.perf_counter() - t0


def one_smo(train, test, opts, eps):
    """Child: single-process SMO on the whole file (after the same warm-up)."""
    from lasvm_cli.io.svmlight import read_svmlight
    from lasvm_cli.numerics.data import Problem
    from lasvm_cli.training.fit import fit

    warm_seconds = warm_up(opts.get("s", 0))
    t0, c0 = time.perf_counter(), time.process_time()
    data = read_svmlight(train, check_norms=True)
    p = params_of(opts, eps)
    if p.gamma == 0:
        p.gamma = 1.0 / data.max_index
    problem = Problem.from_svmlight(data, x_storage="float64")
    lines = []
    model = fit(problem, p, info=lines.append)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(kind="smo", seconds=seconds, cpu=cpu, obj=obj_of(lines)[0],
                nsv=int(model.sv_coef.shape[1]), **score(model, test),
                warm_up_seconds=warm_seconds,
                peak_rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)


def one_cascade(train, test, opts, eps, parts, workers, early, memory_limit):
    """Child: the cascade over ``parts`` parts, in this process (workers 0) or on a
    LocalCluster of ``workers`` processes."""
    import logging

    from lasvm_cli.training.cascade import Cascade, InProcess, OnDask

    cluster = client = None
    t0 = time.perf_counter()
    if workers:
        from dask.distributed import Client, LocalCluster

        from lasvm_cli.training.distributed import worker_env

        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0", env=worker_env(workers),
                               silence_logs=logging.ERROR, memory_limit=memory_limit or "auto")
        client = Client(cluster)
        # a long-lived cluster is warm
        warm_seconds = max(client.run(warm_up, opts.get("s", 0)).values())
        t0 = time.perf_counter()
    else:
        warm_seconds = warm_up(opts.get("s", 0))
        t0 = time.perf_counter()
    c0 = time.process_time()
    cc = opts.get("cascade_cache")  # --cascade-cache MB (None: the default)
    cas = Cascade(train, parts, OnDask(client) if client else InProcess(),
                  **({} if cc is None else dict(cascade_cache=cc)))
    p = params_of(opts, eps)
    if p.gamma == 0:
        p.gamma = 1.0 / cas.max_index
    lines = []
    model = cas.train(p, info=lines.append, early=early)
    seconds, client_cpu = time.perf_counter() - t0, time.process_time() - c0
    client_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # before the test
    rec = cas.record
    out = dict(kind="early" if early else "cascade", parts=parts, workers=workers,
               seconds=seconds, obj=obj_of(lines)[0], nsv=int(model.sv_coef.shape[1]),
               **score(model, test), passes=rec.passes, w_sizes=rec.w_sizes,
               merges=rec.merges,
               client_w_seconds=rec.client_seconds, client_w_cpu=rec.client_cpu,
               client_cpu_passes=rec.client_cpu_passes,
               client_cpu=client_cpu, tasks=rec.tasks,
               cpu=client_cpu + (sum(t[3] for t in rec.tasks) if workers else 0.0),
               part_rss={str(k): v for k, v in rec.part_rss.items()},
               data_bytes=sum(s["nbytes"] for s in cas.summaries),
               text_bytes=sum(os.path.getsize(f) for f in cas.files),
               client_peak_rss=client_peak, warm_up_seconds=warm_seconds)
    if client:
        client.close()
        cluster.close()
    return out


def makespan(costs, w):
    """List scheduling (longest first) of task costs on w workers."""
    loads = [0.0] * w
    for c in sorted(costs, reverse=True):
        loads[loads.index(min(loads))] += c
    return max(loads)


def projection(run, workers, bandwidth=1e9):
    """Critical path with ``workers`` workers: per stage (pass 0's solves, each level of the
    tree's merges, each pass's checks) the measured task CPU seconds list-scheduled, plus the
    client's W solves (each pass's alongside its parts' kernel-block extensions, which run
    meanwhile), plus every byte moved at ``bandwidth``."""
    stages = {}
    moved = 0
    for kind, p, k, cpu, sec, b_in, b_out in run["tasks"]:
        stages.setdefault((kind, p), []).append(cpu)
        moved += b_in + b_out
    client = run.get("client_cpu_passes") or [run["client_w_cpu"]]
    blocks = [makespan(stages.pop(("block", p), []), workers) for p in range(1, len(client) + 1)]
    return (sum(makespan(c, workers) for c in stages.values())
            + sum(max(c, b) for c, b in zip(client, blocks)) + moved / bandwidth)


def child(args):
    opts = json.loads(args.opts)
    if args.one == "smo":
        res = one_smo(args.train, args.test, opts, args.eps)
    else:
        res = one_cascade(args.train, args.test, opts, args.eps, args.parts, args.workers,
                          args.one == "early", args.memory_limit)
    print(json.dumps(res))


def run_child(kind, train, test, opts, eps, parts=0, workers=0, memory_limit=None):
    cmd = [sys.executable, __file__, "--one", kind, "--train", train, "--test", test,
           "--opts", json.dumps(opts), "--eps", str(eps), "--parts", str(parts),
           "--workers", str(workers)]
    if memory_limit:
        cmd += ["--memory-limit", memory_limit]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def libsvm_growth(train, sizes, opts, eps):
    """LIBSVM's svm-train (Debian's libsvm-tools, 3.24) on the first n rows of ``train`` for
    each n of ``sizes``: wall and CPU seconds (its process), and the growth exponent between
    the two largest, t ~ n^k, to extrapolate to all rows (stated as an extrapolation)."""
    import shutil
    import tempfile

    exe = shutil.which("svm-train", path="/usr/bin") or "/usr/bin/svm-train"
    out = []
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            sub = Path(d) / f"sub{n}"
            with open(train) as f, open(sub, "w") as g:
                for _, line in zip(range(n), f):
                    g.write(line)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            res = subprocess.run([exe, "-c", str(opts.get("C", 1.0)), "-g",
                                  str(opts.get("gamma", 0.1)), "-e", str(eps), str(sub),
                                  str(sub) + ".model"], capture_output=True, text=True,
                                 check=True)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            obj = obj_of(res.stdout.splitlines())[0]
            out.append(dict(rows=n, seconds=wall, cpu=cpu, obj=obj))
            print(json.dumps(out[-1]), flush=True)
    (a, b) = out[-2:]
    k = np.log(b["cpu"] / a["cpu"]) / np.log(b["rows"] / a["rows"])
    return dict(points=out, exponent=float(k))


def dask_only(name, train, test, opts, args):
    """The run on Dask alone (its workers' memory_limit, peak memory against the file)."""
    path = OUT / (f"{name}.P{args.parts}.W{args.workers}.ML{args.memory_limit}.dask-only.json")
    if path.exists():
        print(path.read_text().strip())
        return
    run = run_child("cascade", train, test, opts, args.eps, args.parts, args.workers,
                    args.memory_limit)
    record = dict(set=name, rows=sum(1 for _ in open(train)), uptime=os.getloadavg(),
                  memory_limit=args.memory_limit, runs=[run],
                  when=time.strftime("%Y-%m-%d %H:%M"))
    path.write_text(json.dumps(record) + "\n")
    print(json.dumps(record))


def memory_table():
    """The --dask-only runs; sizes in MB of 10^6 bytes, as Dask's memory_limit counts."""
    print("| set | rows | file MB | P | workers | memory_limit | worker peak MB | "
          "client peak MB | rows in memory MB | wall s / CPU s | obj | nSV | passes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in sorted(OUT.glob("*.dask-only.json")):
        r = json.loads(path.read_text())
        run = r["runs"][0]
        print(f"| {r['set']} | {r['rows']:,} | {run['text_bytes'] / 1e6:.0f} | "
              f"{run['parts']} | {run['workers']} | {r['memory_limit']} | "
              f"{max(run['part_rss'].values()) / 1e6:.0f} | "
              f"{run['client_peak_rss'] / 1e6:.0f} | {run['data_bytes'] / 1e6:.0f} | "
              f"{run['seconds']:.0f} / {run['cpu']:.0f} | {run['obj']:.6g} | {run['nsv']} | "
              f"{run['passes'][0]} |")


def table():
    """Markdown tables of every record under results/partitions/ (docs/benchmarks.md)."""
    rows, scale = [], []
    for path in sorted(OUT.glob("*.run*.json")):
        r = json.loads(path.read_text())
        smo, dask_run, local, early = r["runs"]
        mb = sum(t[5] + t[6] for t in local["tasks"]) / 1e6
        words = path.name.split(".")
        cache = [f"`-m {w[1:]}`" for w in words if w[:1] == "m" and w[1:].isdigit()]
        cache += [f"`--cascade-cache {w[2:]}`" for w in words if w[:2] == "cc" and w[2:].isdigit()]
        name = r["set"] + (f" ({', '.join(cache)})" if cache else "")
        rows.append(
            f"| {name} | {r['rows']:,} | {local['parts']} | {smo['seconds']:.1f} / "
            f"{smo['cpu']:.1f} | {dask_run['seconds']:.1f} / {dask_run['cpu']:.1f} | "
            f"**{dask_run['ratio']:.2f}** / {dask_run['cpu_ratio']:.2f} | "
            f"{local['seconds']:.1f} / {local['cpu']:.1f} | **{local['ratio']:.2f}** / "
            f"{local['cpu_ratio']:.2f} | {local['obj_rel']:.1e} | {smo['nsv']} / {local['nsv']} | "
            f"{score_text(smo)} / {score_text(local)} / {score_text(early)} | "
            f"{local['passes'][0]} | {r['uptime'][0]:.0f} |")
        proj = dask_run["projected"]  # in one process the kernel blocks' thread shares the
        # client's CPU seconds; a worker's are its own
        part_rss = max(dask_run["part_rss"].values()) / 2**20
        scale.append(
            f"| {name} | {local['parts']} | {mb:.1f} | "
            + " | ".join(f"{proj[str(w)] if str(w) in proj else proj[w]:.1f}"
                         for w in (1, 2, 4, 16, 64))
            + f" | {r['runs'][0]['peak_rss'] / 2**20:.0f} | {part_rss:.0f} | "
            f"{dask_run['client_peak_rss'] / 2**20:.0f} | {local['data_bytes'] / 2**20:.0f} |")
    print("| set | rows | P | SMO s wall / CPU | Dask 2 workers wall / CPU | ratio wall / CPU | "
          "in-process wall / CPU | ratio wall / CPU | obj rel. diff | nSV SMO / ours | "
          "test acc. (or MSE) SMO / ours / early | passes | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    print()
    print("| set | P | MB moved | path, 1 worker (CPU s) | 2 | 4 | 16 | 64 | "
          "SMO peak MB | worker peak MB | client peak MB | rows in memory MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(scale))
    print()
    memory_table()


def main():
    if sys.argv[1:] == ["--table"]:
        return table()
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="banana,adult,ijcnn1,gen")
    ap.add_argument("--rows", type=int, default=100000, help="rows of the generated set")
    ap.add_argument("--noise", type=float, default=0.5, help="spread of the generated set")
    ap.add_argument("--dims", type=int, default=10, help="features of the generated set")
    ap.add_argument("--digits", type=int, default=5, help="its values' decimals in the file")
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--eps", type=float, default=1e-3)
    ap.add_argument("--cache", type=float, default=100, help="-m MB of every SMO")
    ap.add_argument("--cascade-cache", type=float, default=None,
                    help="svm-train's --cascade-cache MB (default: its default)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--memory-limit", default=None, help="Dask worker memory_limit")
    ap.add_argument("--dask-only", action="store_true",
                    help="only the run on Dask (a set too large for the others: memory)")
    ap.add_argument("--libsvm", default=None,
                    help="row counts n1,n2,...: LIBSVM on the generated set's first rows")
    ap.add_argument("--one"), ap.add_argument("--train"), ap.add_argument("--test")
    ap.add_argument("--opts")
    args = ap.parse_args()
    if args.one:
        return child(args)
    OUT.mkdir(parents=True, exist_ok=True)
    work = ROOT / "results" / "partitions" / "data"
    work.mkdir(exist_ok=True)
    if args.libsvm:
        train, _ = generated(work, args.rows, args.noise)
        res = libsvm_growth(train, [int(n) for n in args.libsvm.split(",")], SETS["gen"][2],
                            args.eps)
        res.update(set=f"gen{args.rows}n{args.noise:g}", uptime=os.getloadavg())
        (OUT / f"libsvm.gen{args.rows}n{args.noise:g}.json").write_text(json.dumps(res) + "\n")
        print(json.dumps(res))
        return
    for name in args.sets.split(","):
        rel_train, rel_test, opts = SETS[name]
        if args.cache != 100:
            opts = dict(opts, m=args.cache)
        if args.cascade_cache is not None:
            opts = dict(opts, cascade_cache=args.cascade_cache)
        if name == "gen":
            train, test = generated(work, args.rows, args.noise, args.dims, digits=args.digits)
            name = gen_name(args.rows, args.noise, args.dims, args.digits)
        else:
            train = plain_copy(name, rel_train, work, name == "mnist")
            test = plain_copy(name, rel_test, work, name == "mnist")
        if args.dask_only:
            dask_only(name, train, test, opts, args)
            continue
        for r in range(args.repeat):
            limit = f".ML{args.memory_limit}" if args.memory_limit else ""
            limit += f".m{args.cache:g}" if args.cache != 100 else ""
            limit += f".cc{args.cascade_cache:g}" if args.cascade_cache is not None else ""
            path = OUT / f"{name}.P{args.parts}.W{args.workers}{limit}.run{r}.json"
            if path.exists():
                print(path.read_text().strip())
                continue
            runs = [run_child("smo", train, test, opts, args.eps),
                    run_child("cascade", train, test, opts, args.eps, args.parts, args.workers,
                              args.memory_limit),
                    run_child("cascade", train, test, opts, args.eps, args.parts, 0),
                    run_child("early", train, test, opts, args.eps, args.parts, 0)]
            smo = runs[0]
            for run in runs[1:]:
                run["ratio"] = run["seconds"] / smo["seconds"]
                run["cpu_ratio"] = run["cpu"] / smo["cpu"]
                run["obj_rel"] = abs(run["obj"] / smo["obj"] - 1)
                run["projected"] = {w: projection(run, w) for w in (1, 2, 4, 16, 64)}
            record = dict(set=name, rows=sum(1 for _ in open(train)), uptime=os.getloadavg(),
                          runs=runs, when=time.strftime("%Y-%m-%d %H:%M"))
            path.write_text(json.dumps(record) + "\n")
            print(json.dumps(record))


if __name__ == "__main__":
    main()
