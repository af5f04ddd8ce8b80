"""Peak memory of svm-train --stream vs the file size: --solver lasvm (two classes) or, with
``--classes k``, the online all-in-one machines (``--multiclass llw|cs --solver online``).

Generates a synthetic two-class file (``--dim`` dense features; the class is a 2-d pattern of
well separated clusters, the other features small noise, so the number of SVs stays moderate)
of about ``--gb`` GiB in a temp dir (``--blocks`` blocks of ``--block-rows`` distinct rows, cycled
verbatim: the file repeats them, as "mnist repeated" would), then runs under
``/usr/bin/time -v``:

* ``--stream`` on the big file,
* ``--stream`` and the in-memory path (``--solver lasvm``) on a small file (first rows),

and prints file size, rows, nSV and peak RSS ("Maximum resident set size"). The big file is
deleted at the end.

    python bench/bench_stream.py --gb 3 [--dim 100] [--tmp /tmp]

Result (--gb 3 --small-mb 500, -g 0.05 -c 1; 2-core shared VM):

    | run                   | file size | rows      | nSV | peak RSS  | wall  |
    |-----------------------|----------:|----------:|----:|----------:|------:|
    | stream, big file      | 3,081 MiB | 3,420,000 | 408 |   205 MiB | 199 s |
    | stream, small file    |   500 MiB |   555,079 | 248 |   188 MiB |  17 s |
    | in memory, small file |   500 MiB |   555,079 | 246 | 3,063 MiB |  26 s |

About 180 MiB of each streaming figure is the interpreter with numpy/numba/llvmlite (a 10 MiB
file gives 182 MiB); the rest is the S store (slots x width x 8 bytes), the row cache (<= -m;
rows of slots x 4 bytes) and one 4 MiB block of text with its parsed rows. The in-memory path
holds the CSR arrays, the kernel storage of all rows and per-example solver arrays (~6x the
file size here).

Multi-class mode (``--classes k [--multiclass llw|cs|ovr] [--limit-mb M]``): the rows come
from k clusters (centres on a circle in the first two features, labels 1..k in a shuffled order
of first appearance); the runs are ``--multiclass llw|cs --solver online`` (or, with
``--multiclass ovr``, one-vs-rest ``--solver lasvm``) with ``--stream`` on the big file and the
small one, and without on the small one (the in-memory one pass). With
``--limit-mb`` the big file's streamed run has its address space capped (RLIMIT_AS, set in the
child before exec: a run that needs more fails with MemoryError instead of swapping), so a file
several times the limit shows that the run does not hold it. The peak RSS is ru_maxrss of the
child (as /usr/bin/time -v reports it).

Result (--classes 4 --multiclass cs --gb 3 --limit-mb 512 --small-mb 100, -g 0.05 -c 1;
2-core VM shared with other jobs):

    | run | file size | rows | nSV | peak RSS | wall |
    |---|---:|---:|---:|---:|---:|
    | stream, big file (RLIMIT_AS 512 MiB) | 3,079 MiB | 3,420,000 | 206 | 199 MiB | 1118 s |
    | stream, small file | 100 MiB | 111,076 | 122 | 196 MiB | 22 s |
    | in memory, small file | 100 MiB | 111,076 | 126 | 770 MiB | 28 s |

(the big file is 6.0 times the address-space limit; --multiclass llw keeps many more support
patterns on this data, 1160 at 67k rows, and is much slower per row: see docs/streaming.md)

Result (--classes 4 --multiclass ovr --gb 3 --limit-mb 1024 --small-mb 200, -g 0.05 -c 1;
2-core VM loaded by other jobs, 2026-11-28):

    | run | file size | rows | nSV | peak RSS | wall |
    |---|---:|---:|---:|---:|---:|
    | stream, big file (RLIMIT_AS 1,024 MiB) | 3,079 MiB | 3,420,000 | 800 | 232 MiB | 284 s |
    | stream, small file | 200 MiB | 222,152 | 347 | 210 MiB | 7 s |
    | in memory, small file | 200 MiB | 222,152 | 355 | 1,400 MiB | 12 s |

(the big file is 3.0 times the limit; under 512 and 768 MiB the streamed run stopped with out
of memory: see docs/streaming.md)
"""

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def make_block(rng, n, dim):
    y = rng.choice([-1, 1], n)
    # class +1: clusters at (+-2, +2), class -1: at (+-2, -2); std 0.5: separated by 4 std
    cx = rng.choice([-2.0, 2.0], n)
    X = np.empty((n, dim))
    X[:, 0] = cx + 0.5 * rng.standard_normal(n)
    X[:, 1] = 2.0 * y + 0.5 * rng.standard_normal(n)
    X[:, 2:] = 0.1 * rng.standard_normal((n, dim - 2))
    fmt = "%d " + " ".join(f"{c + 1}:%.3f" for c in range(dim)) + "\n"
    rows = [fmt % ((int(y[i]),) + tuple(X[i])) for i in range(n)]
    return "".join(rows).encode()


def make_block_multi(rng, n, dim, labels):
    """k clusters: class c centred at radius 3, angle 2 pi c / k in features 1-2 (std 0.5),
    the other features small noise."""
    k = len(labels)
    yc = rng.integers(0, k, n)
    X = np.empty((n, dim))
    X[:, 0] = 3.0 * np.cos(2 * np.pi * yc / k) + 0.5 * rng.standard_normal(n)
    X[:, 1] = 3.0 * np.sin(2 * np.pi * yc / k) + 0.5 * rng.standard_normal(n)
    X[:, 2:] = 0.1 * rng.standard_normal((n, dim - 2))
    y = np.asarray(labels)[yc]
    fmt = "%d " + " ".join(f"{c + 1}:%.3f" for c in range(dim)) + "\n"
    rows = [fmt % ((int(y[i]),) + tuple(X[i])) for i in range(n)]
    return "".join(rows).encode()


def write_file(path, gb, dim, block_rows, n_blocks, seed=0, classes=0):
    rng = np.random.default_rng(seed)
    if classes:
        labels = rng.permutation(np.arange(1, classes + 1))
        blocks = [make_block_multi(rng, block_rows, dim, labels) for _ in range(n_blocks)]
    else:
        blocks = [make_block(rng, block_rows, dim) for _ in range(n_blocks)]
    target = int(gb * (1 << 30))
    size = 0
    rows = 0
    k = 0
    with open(path, "wb") as f:
        while size < target:
            b = blocks[k % n_blocks]
            f.write(b)
            size += len(b)
            rows += block_rows
            k += 1
    return size, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=3.0)
    ap.add_argument("--small-mb", type=float, default=100.0)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--block-rows", type=int, default=20000)
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--tmp", default="/tmp")
    ap.add_argument("-g", type=float, default=0.05)
    ap.add_argument("-c", type=float, default=1.0)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--classes", type=int, default=0,
                    help="k > 2: a k-class file, trained as --multiclass says")
    ap.add_argument("--multiclass", default="cs", choices=("llw", "cs", "ovr"),
                    help="with --classes: the all-in-one machines (llw, cs: --solver online) "
                    "or one-vs-rest LASVM (ovr: --solver lasvm)")
    ap.add_argument("--limit-mb", type=float, default=None,
                    help="address-space limit (RLIMIT_AS) of the big file's streamed run")
    a = ap.parse_args()
    # ours: the one beside this interpreter (a PATH may find LIBSVM's svm-train first)
    beside = Path(sys.executable).with_name("svm-train")
    exe = str(beside) if beside.exists() else shutil.which("svm-train") or "svm-train"
    d = tempfile.mkdtemp(prefix="bench_stream_", dir=a.tmp)
    try:
        big = os.path.join(d, "big.svm")
        small = os.path.join(d, "small.svm")
        t = time.time()
        size, rows = write_file(big, a.gb, a.dim, a.block_rows, a.blocks, classes=a.classes)
        print(f"generated {size / 2**30:.2f} GiB, {rows} rows in {time.time() - t:.0f} s",
              flush=True)
        with open(big, "rb") as f, open(small, "wb") as g:
            n_small = 0
            while g.tell() < a.small_mb * (1 << 20):
                g.write(f.readline())
                n_small += 1
        s_size = os.path.getsize(small)
        opts = ["-g", str(a.g), "-c", str(a.c), "-q"]
        solver = ["--solver", "lasvm"] if not a.classes else \
            ["--multiclass", a.multiclass, "--solver",
             "lasvm" if a.multiclass == "ovr" else "online"]
        limit = None if a.limit_mb is None else int(a.limit_mb * (1 << 20))
        if limit is not None:
            print(f"big file / address-space limit: {size / limit:.1f}", flush=True)
        results = []
        for label, cmd, fsize, n, lim in [
            ("stream, big file" + (f" (RLIMIT_AS {a.limit_mb:,.0f} MiB)" if limit else ""),
             [exe] + solver + ["--stream"] + opts + [big, os.path.join(d, "m1")], size, rows,
             limit),
            ("stream, small file", [exe] + solver + ["--stream"] + opts +
             [small, os.path.join(d, "m2")], s_size, n_small, None),
            ("in memory, small file", [exe] + solver + opts +
             [small, os.path.join(d, "m3")], s_size, n_small, None),
        ]:
            # -q silences the nSV lines: count SVs from the model file instead
            rss, _, wall = timed_q(cmd, lim)
            nsv = total_sv(cmd[-1])
            results.append((label, fsize, n, nsv, rss, wall))
            print(f"{label}: done in {wall:.0f} s", flush=True)
        print()
        print("| run | file size | rows | nSV | peak RSS | wall |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, fsize, n, nsv, rss, wall in results:
            print(f"| {label} | {fsize / 2**20:,.0f} MiB | {n:,} | {nsv} | "
                  f"{rss / 1024:,.0f} MiB | {wall:.0f} s |")
    finally:
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)


def timed_q(cmd, limit=None):
    """(peak RSS in KiB, None, wall seconds) of ``cmd`` under /usr/bin/time -v; ``limit``: its
    RLIMIT_AS in bytes (set in the child before exec, inherited by the command)."""

    def cap():
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    t = time.time()
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True,
                       preexec_fn=cap)
    wall = time.time() - t
    _check(r, cmd)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return rss, None, wall


def _check(r, cmd):
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit(f"failed: {' '.join(cmd)}")


def total_sv(model_path):
    with open(model_path) as f:
        for line in f:
            if line.startswith("total_sv"):
                return int(line.split()[1])
    return -1


if __name__ == "__main__":
    main()
