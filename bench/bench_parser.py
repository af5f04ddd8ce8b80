"""Benchmark the svmlight reader against scikit-learn's compiled load_svmlight_file.

Usage: python bench/bench_parser.py [--repeat N]

Data comes from $LASVM_DATA (default: the folder `lasvm data fetch` fills, see docs/data.md).
The mnist and adult training files are decompressed to a temporary directory first, so xz is not
timed. JIT compile time (first call in this process) is reported apart. Peak memory of our
reader is measured in a fresh subprocess as the rise of the peak RSS (VmHWM, reset through
/proc/self/clear_refs) over the RSS just before the read, relative to the size of the arrays it
returns.
"""

import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

DATASETS = ["mnist", "adult"]

_MEM_CODE = r"""
import json, sys
from lasvm_cli.io.svmlight import read_svmlight
read_svmlight(sys.argv[2])  # load the JIT cache before the baseline
def status_kb(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the peak-RSS mark (VmHWM) to the current RSS
before = status_kb("VmRSS")
d = read_svmlight(sys.argv[1])
peak = status_kb("VmHWM")
arrays = d.y.nbytes + d.indptr.nbytes + d.indices.nbytes + d.values.nbytes
print(json.dumps({"rise_kb": peak - before, "arrays_bytes": arrays}))
"""


def _best(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from lasvm_cli.tools.datasets import data_dir as where

    data_dir = str(where().resolve())

    t = time.perf_counter()
    from lasvm_cli.io.svmlight import read_svmlight

    import_s = time.perf_counter() - t
    try:
        from sklearn.datasets import load_svmlight_file
    except ImportError:
        load_svmlight_file = None
        print("scikit-learn not installed: skipping the comparison")

    tmp = tempfile.mkdtemp(prefix="bench_parser.")
    try:
        tiny = os.path.join(tmp, "tiny.svm")
        with open(tiny, "w") as f:
            f.write("1 1:0.5 3:1e-3\n-1 2:12345678901234567890\n")
        t = time.perf_counter()
        read_svmlight(tiny)
        first_s = time.perf_counter() - t
        print(f"import lasvm_cli.io.svmlight: {import_s:.2f} s; first call (JIT compile or "
              f"cache load): {first_s:.2f} s")
        print(f"{'data':8s} {'MB':>7s} {'ours s':>8s} {'ours MB/s':>10s} {'sklearn s':>10s} "
              f"{'sk MB/s':>8s} {'ratio':>6s} {'peak/arrays':>12s}")
        for name in DATASETS:
            src = os.path.join(data_dir, name, "train.svm.xz")
            if not os.path.isfile(src):
                print(f"{name}: {src} not found, skipped")
                continue
            path = os.path.join(tmp, name + ".svm")
            with lzma.open(src, "rb") as fi, open(path, "wb") as fo:
                shutil.copyfileobj(fi, fo, 1 << 22)
            mb = os.path.getsize(path) / 1e6
            ours_s, d = _best(lambda: read_svmlight(path), args.repeat)
            row = f"{name:8s} {mb:7.1f} {ours_s:8.3f} {mb / ours_s:10.1f} "
            if load_svmlight_file is not None:
                sk_s, (X, y) = _best(lambda: load_svmlight_file(path), args.repeat)
                assert X.shape[0] == d.n and X.nnz == d.values.shape[0]
                row += f"{sk_s:10.3f} {mb / sk_s:8.1f} {sk_s / ours_s:6.2f} "
            else:
                row += f"{'-':>10s} {'-':>8s} {'-':>6s} "
            r = subprocess.run([sys.executable, "-c", _MEM_CODE, path, tiny], capture_output=True,
                               text=True, cwd=REPO)
            if r.returncode == 0:
                m = json.loads(r.stdout)
                ratio = m["rise_kb"] * 1024 / m["arrays_bytes"]
                row += f"{ratio:12.2f}"
                extra = (f"   (peak rise {m['rise_kb'] / 1024:.0f} MiB over arrays "
                         f"{m['arrays_bytes'] / 2**20:.0f} MiB)")
            else:
                row += f"{'?':>12s}"
                extra = "   (memory probe failed: " + r.stderr.strip().splitlines()[-1] + ")"
            print(row + extra)
        print("ratio = sklearn time / our time (higher is better for us); best of "
              f"{args.repeat}; sklearn returns 0-based CSR, we keep the file's indices.")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
