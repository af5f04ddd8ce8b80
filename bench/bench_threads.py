"""Threads on a busy machine: `svm-train` with numba's default threads against one thread,
alone and beside one CPU-bound process (a Python busy loop), wall time of the whole command.

Runs (svm-train's command line, in-process: LASVM_SERVER=0):

* ijcnn1, first 20,000 rows, LASVM: ``--solver lasvm --seed 1 -c 32 -g 2``
* adult (32,561 rows, bit-set rows): ``-c 1 -g 0.005``
* mnist, first 10,000 rows, pixels / 255, 10 classes: ``-c 10 -g 0.02``
* usps (7,291 rows, 10 classes): defaults

Goals (the reliability issue): the default never slower than one thread, and a run beside
one busy process at most 2.5x the same run alone. The last column is GNU OpenMP's own
default (spinning waits), which lasvm-cli replaced with passive waiting. One run per cell (the machine's noise is
up to 2x between sittings, so compare within a row). Writes bench/results/threads.md.
Usage: ``python bench/bench_threads.py [case ...]``; data from LASVM_DATA.
"""

import argparse
import lzma
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
BIN = Path(sys.executable).parent


def data_dir():
    """The data folder (lasvm_cli.tools.datasets.data_dir: $LASVM_DATA, else the cache folder)."""
    from lasvm_cli.tools.datasets import data_dir as where

    return where()


def prepared(name, rows=None, divide=None):
    tag = f"{name}_{rows or 'all'}{'_scaled' if divide else ''}.svm"
    dst = RESULTS / tag
    if dst.exists():
        return dst
    out = []
    with lzma.open(data_dir() / name / "train.svm.xz", "rt") as f:
        for i, line in enumerate(f):
            if rows is not None and i >= rows:
                break
            if divide:
                label, *feats = line.split()
                feats = [f"{k}:{float(v) / divide:.6g}" for k, v in
                         (t.split(":") for t in feats)]
                line = " ".join([label, *feats]) + "\n"
            out.append(line)
    dst.write_text("".join(out))
    return dst


CASES = {
    "ijcnn1": (lambda: prepared("ijcnn1", 20000), ["--solver", "lasvm", "--seed", "1", "-c",
                                                    "32", "-g", "2"]),
    "adult": (lambda: prepared("adult"), ["-c", "1", "-g", "0.005"]),
    "mnist": (lambda: prepared("mnist", 10000, 255.0), ["-c", "10", "-g", "0.02"]),
    "usps": (lambda: prepared("usps"), []),
}


def run(args, data, threads, busy, policy=None):
    env = dict(os.environ, LASVM_SERVER="0", LASVM_COMPILE_NOTICE="0")
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    if threads:
        env["NUMBA_NUM_THREADS"] = str(threads)
    burner = None
    if busy:
        burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.5)
    try:
        t = time.perf_counter()
        subprocess.run([BIN / "svm-train", "-q", *args, data, RESULTS / "threads.model"],
                       env=env, check=True)
        return time.perf_counter() - t
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=list(CASES))
    args = ap.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = ["| run | default threads (s) | 1 thread (s) | default / 1 thread | "
             "default beside a busy process (s) | beside / alone | 1 thread beside (s) | "
             "spinning (OMP_WAIT_POLICY=ACTIVE) beside (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for case in args.cases:
        data_of, options = CASES[case]
        data = data_of()
        run(options, data, None, False)  # load the compiled code into the OS page cache
        alone = run(options, data, None, False)
        single = run(options, data, 1, False)
        beside = run(options, data, None, True)
        single_beside = run(options, data, 1, True)
        spinning = run(options, data, None, True, "ACTIVE")
        lines.append(f"| {case} `{' '.join(options)}` | {alone:.2f} | {single:.2f} | "
                     f"{alone / single:.2f} | {beside:.2f} | {beside / alone:.2f} | "
                     f"{single_beside:.2f} | {spinning:.2f} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    (RESULTS / "threads.md").write_text(text)


if __name__ == "__main__":
    main()
