"""Batch prediction speed: libsvm-official's svm_predict against ours, same model, same machine.

The model is trained once by libsvm-official on adult's training set (``-c 100 -g 0.005``,
about 11,000 SVs; about 2 minutes) and cached in bench/results/ (gitignored). Then both
predictors run on adult's test set (16281 rows) in this process:

* libsvm: ``svm_predict(y, x, model, '-q')`` on the rows from ``svm_read_problem`` (the
  binding calls LIBSVM's C svm_predict_values row by row; its kernel loop is OpenMP-parallel
  over SVs in the binding's build).
* ours: ``SVMModel.decision_values`` + ``predict_from_values`` on KernelData from our reader.
  The first call (JIT compile or cache load) is timed separately, then the best of 3 runs.

Reading the data is not timed for either. Usage: ``python bench/bench_predict.py [--repeat N]``;
data from env LASVM_DATA (default: the folder `lasvm data fetch` fills, see docs/data.md).
"""

import argparse
import lzma
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"


def data_dir():
    """The data folder (lasvm_cli.tools.datasets.data_dir: $LASVM_DATA, else the cache folder)."""
    from lasvm_cli.tools.datasets import data_dir as where

    return where()


def decompressed(name, part):
    src = data_dir() / name / f"{part}.svm.xz"
    dst = RESULTS / f"{name}_{part}.svm"
    if not dst.exists():
        with lzma.open(src, "rb") as f, open(dst, "wb") as g:
            g.write(f.read())
    return dst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--options", default="-c 100 -g 0.005")
    args = ap.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    from libsvm import svmutil

    import numba

    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.io.model_file import read_model
    from lasvm_cli.io.svmlight import read_svmlight

    train = decompressed("adult", "train")
    test = decompressed("adult", "test")
    tag = args.options.replace(" ", "").replace("-", "_")
    model_path = RESULTS / f"adult{tag}.model"
    if not model_path.exists():
        print(f"training libsvm model on {train.name} ({args.options}) ...", flush=True)
        y, x = svmutil.svm_read_problem(str(train))
        t = time.perf_counter()
        m = svmutil.svm_train(y, x, args.options + " -q")
        print(f"  trained in {time.perf_counter() - t:.1f} s", flush=True)
        svmutil.svm_save_model(str(model_path), m)

    yt, xt = svmutil.svm_read_problem(str(test))
    lm = svmutil.svm_load_model(str(model_path))
    print(f"model {model_path.name}: {lm.get_nr_sv()} SVs; test set {len(yt)} rows; "
          f"numba threads {numba.get_num_threads()}, cpus {os.cpu_count()}", flush=True)

    t = time.perf_counter()
    ref_labels, (acc, _, _), ref_vals = svmutil.svm_predict(yt, xt, lm, "-q")
    t_libsvm = time.perf_counter() - t
    ref_vals = np.array(ref_vals)

    model = read_model(model_path)
    d = read_svmlight(test)
    kd = kernel_data(d.indptr, d.indices, d.values, kernel_type=model.kernel_type)
    model.sv_data()
    first = kernel_data(d.indptr[:2], d.indices[:d.indptr[1]], d.values[:d.indptr[1]],
                        width=kd.X.shape[1] if kd.X.shape[0] else None,
                        dense=kd.X.shape[0] > 0)
    t = time.perf_counter()
    model.predict_from_values(model.decision_values(first))
    t_jit = time.perf_counter() - t

    times = []
    for _ in range(max(args.repeat, 1)):
        t = time.perf_counter()
        dec = model.decision_values(kd)
        labels = model.predict_from_values(dec)
        times.append(time.perf_counter() - t)
    t_ours = min(times)

    same = bool(np.array_equal(labels, np.array(ref_labels)))
    err = float(np.max(np.abs(dec - ref_vals) / np.maximum(np.abs(ref_vals), 1e-12)))
    print(f"libsvm svm_predict      : {t_libsvm:8.3f} s  (accuracy {acc:g}%)")
    print(f"ours (JIT/cache load)   : {t_jit:8.3f} s  (first call, 1 row)")
    print(f"ours decision+predict   : {t_ours:8.3f} s  (best of {len(times)}: "
          + ", ".join(f"{v:.3f}" for v in times) + ")")
    print(f"speed-up libsvm/ours    : {t_libsvm / t_ours:8.2f}x")
    print(f"labels identical: {same}; max relative decision-value difference {err:.2e}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
