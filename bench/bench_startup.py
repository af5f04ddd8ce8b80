"""Start-up: a whole `svm-train` / `svm-predict` command, wall time, as a grid search sees it.

Each command runs as a fresh process, as a user or grid.py runs it, on heart_scale (270 rows)
and on the first 2,000 rows of usps (256 dense features, 10 classes: 45 one-vs-one machines),
with default parameters:

* LIBSVM: Debian's `svm-train` / `svm-predict` (libsvm-tools 3.24, /usr/bin), when installed;
* ours, warm server: the installed console scripts with a warm server running (the default
  after the first command; cli/warm_server.py);
* ours, in-process: the same with LASVM_SERVER=0 (numba imported and the compiled code
  loaded from its cache by every command).

Median of ``--repeat`` runs each. With ``--cold``, also the first run after an install: an
empty numba cache (a fresh NUMBA_CACHE_DIR), `svm-train` then `svm-predict` on heart_scale,
in-process as a first command is; and make's installation: `lasvm compile` into an empty cache,
then the same two commands. Writes bench/results/startup.md. Usage:
``python bench/bench_startup.py [--repeat N] [--cold]``; data from LASVM_DATA.
"""

import argparse
import lzma
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
BIN = Path(sys.executable).parent
LIBSVM = Path("/usr/bin")


def data_dir():
    """The data folder (lasvm_cli.tools.datasets.data_dir: $LASVM_DATA, else the cache folder)."""
    from lasvm_cli.tools.datasets import data_dir as where

    return where()


def usps_head(rows=2000):
    dst = RESULTS / f"usps_{rows}.svm"
    if not dst.exists():
        with lzma.open(data_dir() / "usps" / "train.svm.xz", "rt") as f:
            lines = [next(f) for _ in range(rows)]
        dst.write_text("".join(lines))
    return dst


def timed(cmd, env, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([str(c) for c in cmd], env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def wait_for_server(env, data, work):
    """Start a server as users do (a command that finds none) and wait until one answers."""
    subprocess.run([BIN / "svm-train", "-q", data, work / "first.model"], env=env, check=True)
    probe = dict(env, LASVM_SERVER="require")
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        r = subprocess.run([BIN / "svm-train", "-q", data, work / "probe.model"], env=probe,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            return
        time.sleep(0.5)
    raise SystemExit("no warm server answered")


def commands(binary_dir, data, work, tag):
    model, out = work / f"{tag}.model", work / f"{tag}.out"
    return ([binary_dir / "svm-train", data, model],
            [binary_dir / "svm-predict", data, model, out])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cold", action="store_true")
    args = ap.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    sets = {"heart_scale": REPO / "data" / "heart_scale", "usps 2,000 rows": usps_head()}
    work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    base = os.environ.copy()
    base.update(LASVM_RUNTIME_DIR=str(work / "runtime"), LASVM_COMPILE_NOTICE="0")
    served = dict(base, LASVM_SERVER="1")
    local = dict(base, LASVM_SERVER="0")
    wait_for_server(served, sets["heart_scale"], work)
    rows = []
    for name, data in sets.items():
        for i, step in enumerate(("svm-train", "svm-predict")):
            row = {"data": name, "command": step}
            if (LIBSVM / "svm-train").exists():
                row["libsvm"] = timed(commands(LIBSVM, data, work, "libsvm")[i], base,
                                      args.repeat)
            row["server"] = timed(commands(BIN, data, work, "served")[i], served, args.repeat)
            row["local"] = timed(commands(BIN, data, work, "local")[i], local, args.repeat)
            rows.append(row)
    lines = ["| data | command | LIBSVM 3.24 (s) | ours, warm server (s) | ratio | "
             "ours, in-process (s) | ratio |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lib = r.get("libsvm")
        ratio = (lambda x: f"{x / lib:.1f}" if lib else "-")
        lines.append(f"| {r['data']} | {r['command']} | {lib if lib is None else f'{lib:.3f}'}"
                     f" | {r['server']:.3f} | {ratio(r['server'])} | {r['local']:.3f} | "
                     f"{ratio(r['local'])} |")
    if args.cold:
        cold = dict(local, NUMBA_CACHE_DIR=str(work / "empty-cache"))
        train, predict = commands(BIN, sets["heart_scale"], work, "cold")
        lines += ["", "| first run after install (empty numba cache) | wall (s) |",
                  "|---|---|",
                  f"| svm-train heart_scale | {timed(train, cold, 1):.1f} |",
                  f"| svm-predict heart_scale (after it) | {timed(predict, cold, 1):.1f} |"]
        # make's installation: `lasvm compile` into an empty cache, then the first commands
        aot = dict(local, NUMBA_CACHE_DIR=str(work / "compiled-cache"))
        train, predict = commands(BIN, sets["heart_scale"], work, "aot")
        lines += ["", "| make's installation: `lasvm compile`, then the first runs | wall (s) |",
                  "|---|---|",
                  f"| lasvm compile (one process per core) | "
                  f"{timed([BIN / 'lasvm', 'compile'], aot, 1):.1f} |",
                  f"| first svm-train heart_scale | {timed(train, aot, 1):.2f} |",
                  f"| first svm-predict heart_scale | {timed(predict, aot, 1):.2f} |"]
    text = "\n".join(lines) + "\n"
    print(text)
    (RESULTS / "startup.md").write_text(text)
    _stop_server(work / "runtime")
    shutil.rmtree(work, ignore_errors=True)


def _stop_server(runtime):
    for lock in runtime.glob("*/*.sock.lock"):
        try:
            os.kill(int(lock.read_text()), 15)
        except (ValueError, OSError):
            pass


if __name__ == "__main__":
    main()
