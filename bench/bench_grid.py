"""lasvm grid on a local Dask cluster against LIBSVM's tools/grid.py with LIBSVM's svm-train,
same machine, same run: wall time of each, their ratio, and the best (C, gamma).

    python bench/bench_grid.py [--rows N] [--workers W] [--log2c -3,5,2] [--log2g -9,-1,2]
                               [--fold 5] [--grid-py /usr/bin/svm-grid]
                               [--svm-train /usr/bin/svm-train]

Data: adult's training set from $LASVM_DATA (default: the folder `lasvm data fetch` fills, see
docs/data.md), its first N rows (--rows, default all 32,561), written as a plain file both tools
read. The default grid is 5 x 5 with -v 5. LIBSVM's side is Debian's svm-grid (grid.py of LIBSVM
3.24) and svm-train (apt-get install libsvm-tools), run with grid.py's nr_local_worker set to W,
so both use W processes; ours is `lasvm grid --workers W` (a LocalCluster of W single-threaded
workers; the time includes starting the cluster and loading the JIT cache in every worker). Each
tool's final `best_c best_g best_rate` line is printed, and whether the per-cell rates agree.
"""

import argparse
import lzma
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lasvm_cli.tools.datasets import data_dir

REPO = Path(__file__).resolve().parent.parent
DATA = data_dir()  # $LASVM_DATA, else the cache folder (lasvm data fetch)


def libsvm_grid(grid_py, svm_train, workers, opts, path, cwd):
    code = ("import importlib.machinery as m, sys\n"
            f"g = m.SourceFileLoader('grid', {grid_py!r}).load_module()\n"
            f"g.nr_local_worker = {workers}\n"
            f"g.find_parameters({str(path)!r}, {opts + ['-svmtrain', svm_train, '-gnuplot', 'null', '-out', 'libsvm.out']!r})\n")
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                         check=True).stdout
    return time.perf_counter() - t, out


def ours(workers, opts, path, cwd):
    lasvm = Path(sys.executable).with_name("lasvm")
    t = time.perf_counter()
    out = subprocess.run([str(lasvm), "grid", *opts, "--workers", str(workers), "-gnuplot",
                          "null", "-out", "ours.out", str(path)], cwd=cwd, capture_output=True,
                         text=True, check=True).stdout
    return time.perf_counter() - t, out


def rates(out_file):
    cells = {}
    for line in Path(out_file).read_text().splitlines():
        c, g, r = re.findall(r"=([0-9.e+-]+)", line)
        cells[(float(c), float(g))] = float(r)
    return cells


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--log2c", default="-3,5,2")
    ap.add_argument("--log2g", default="-9,-1,2")
    ap.add_argument("--fold", default="5")
    ap.add_argument("--grid-py", default="/usr/bin/svm-grid")
    ap.add_argument("--svm-train", default="/usr/bin/svm-train")
    a = ap.parse_args()
    for tool in (a.grid_py, a.svm_train):
        if not Path(tool).exists():
            sys.exit(f"{tool} not found (apt-get install libsvm-tools)")
    with tempfile.TemporaryDirectory() as tmp:
        lines = lzma.open(DATA / "adult" / "train.svm.xz", "rt").read().splitlines(True)
        if a.rows:
            lines = lines[:a.rows]
        path = Path(tmp) / "adult"
        path.write_text("".join(lines))
        opts = ["-log2c", a.log2c, "-log2g", a.log2g, "-v", a.fold]
        print(f"adult, {len(lines)} rows, grid -log2c {a.log2c} -log2g {a.log2g} -v {a.fold}, "
              f"{a.workers} workers, {os.cpu_count()} cores", flush=True)
        t_ours, out_ours = ours(a.workers, opts, path, tmp)
        print(f"lasvm grid (Dask): {t_ours:.1f} s, best: {out_ours.splitlines()[-1]}", flush=True)
        t_lib, out_lib = libsvm_grid(a.grid_py, a.svm_train, a.workers, opts, path, tmp)
        print(f"LIBSVM grid.py + svm-train: {t_lib:.1f} s, best: {out_lib.splitlines()[-1]}")
        print(f"ratio ours/LIBSVM: {t_ours / t_lib:.3f}")
        r_ours, r_lib = rates(Path(tmp) / "ours.out"), rates(Path(tmp) / "libsvm.out")
        differ = {k: (r_ours[k], r_lib.get(k)) for k in r_ours if r_ours[k] != r_lib.get(k)}
        same_best = out_ours.splitlines()[-1].split()[:2] == out_lib.splitlines()[-1].split()[:2]
        print(f"identical best (C, gamma): {same_best}; cells whose rates differ "
              f"(ours, LIBSVM): {differ or 'none'}")


if __name__ == "__main__":
    main()
