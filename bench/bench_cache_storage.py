"""The kernel cache's storage on transparent huge pages against plain 4 KiB pages, same run.

    python bench/bench_cache_storage.py [case ...] [--repeat 3]
        cases: adult adult_m1000 ijcnn1 ijcnn1_m1000 usps sparse sparse_m1000
               sparse_track2 sparse_track2_m1000 sparse_track2_k1_m1000 (default: all)

A cache fills its row storage as rows are computed, and each first touch of a 4 KiB page is a
page fault. ``numerics/cache.row_storage`` asks Linux for 2 MiB pages (madvise), which need 512
times fewer faults. Each case trains through svm-train's own fit (file read outside the time),
alternately with the storage of the product and with plain ``np.empty``, ``--repeat`` times;
printed: the medians and the ratio huge / plain. Both models are compared byte for byte.

Data: adult, ijcnn1 and usps from $LASVM_DATA (docs/data.md), svm-train's defaults (RBF, C 1,
gamma 1/features) but ``-m``; ``sparse`` is bench_track2_sparse.py's generated binary problem
(30,000 rows, 300 binary features, file order), ``-c 1 -g 0.05``, SMO or track2 with K 10
(``k1``: K 1, which fills the cache with few reuses).
"""

import argparse
import lzma
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("LASVM_SERVER", "0")

from lasvm_cli.tools.datasets import data_dir  # noqa: E402

SPARSE = ["-c", "1", "-g", "0.05"]
TRACK2 = SPARSE + ["--solver", "track2", "-K", "10"]
CASES = {
    "adult": ("adult", []), "adult_m1000": ("adult", ["-m", "1000"]),
    "ijcnn1": ("ijcnn1", []), "ijcnn1_m1000": ("ijcnn1", ["-m", "1000"]),
    "usps": ("usps", []),
    "sparse": ("sparse", SPARSE), "sparse_m1000": ("sparse", SPARSE + ["-m", "1000"]),
    "sparse_track2": ("sparse", TRACK2), "sparse_track2_m1000": ("sparse", TRACK2 + ["-m", "1000"]),
    "sparse_track2_k1_m1000": ("sparse", SPARSE + ["--solver", "track2", "-K", "1", "-m", "1000"]),
}


def data_file(name, tmp):
    path = tmp / f"{name}.svm"
    if not path.exists():
        if name == "sparse":
            from bench_track2_sparse import make_problem, write
            rows, y = make_problem()
            write(path, rows, y, np.concatenate([np.flatnonzero(y > 0), np.flatnonzero(y < 0)]))
        else:
            with lzma.open(data_dir() / name / "train.svm.xz", "rb") as f, open(path, "wb") as o:
                shutil.copyfileobj(f, o)
    return path


def train(path, args, plain):
    """Solver seconds and the model's file bytes, with plain or huge-page storage."""
    from bench_track2_sparse import load, timed_fit
    from lasvm_cli.io.model_file import write_model
    from lasvm_cli.numerics import cache

    problem, p = load(path, args)
    kept = cache.row_storage
    if plain:
        cache.row_storage = lambda size, dtype: np.empty(size, dtype)
    try:
        seconds, model = timed_fit(problem, p)
    finally:
        cache.row_storage = kept
    out = path.with_suffix(".model")
    write_model(model, str(out))
    return seconds, out.read_bytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=list(CASES))
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="cache-storage-"))
    try:
        for case in a.cases:
            name, args = CASES[case]
            path = data_file(name, tmp)
            train(path, args, False)  # JIT cache load
            times = {False: [], True: []}
            models = {}
            for r in range(a.repeat):
                for plain in ((False, True) if r % 2 == 0 else (True, False)):
                    sec, models[plain] = train(path, args, plain)
                    times[plain].append(sec)
            huge, plain = statistics.median(times[False]), statistics.median(times[True])
            same = "same" if models[False] == models[True] else "DIFFER"
            print(f"{case:24s} huge {huge:7.3f} s  plain {plain:7.3f} s  huge/plain "
                  f"{huge / plain:.2f}  models {same}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
