"""Binary C-SVC training time: our solve_binary against LIBSVM 3.37 (libsvm-official, in-process).

    python bench/bench_train.py [case ...]   cases: adult adult_c100 ijcnn1 reuters usps mnist20k
                                             mnist20k_f64 (--x-storage float64 beside it)
                                             budgetfood_svr banana_iter adult_nusvc
                                             adult_oneclass budgetfood4k_nusvr

Data: $LASVM_DATA (default: the folder `lasvm data fetch` fills, see docs/data.md). Times are
training only (no parsing), LIBSVM via its Python binding with -q. The JIT warm-up (cache load
or cold compile) is timed apart on a tiny problem first.
"""

import lzma
import os
import sys
import time
from pathlib import Path

import numpy as np

from lasvm_cli.tools.datasets import data_dir

ROOT = Path(__file__).resolve().parents[1]
DATA = data_dir()  # $LASVM_DATA, else the cache folder (lasvm data fetch)


def load(name, n=None):
    from sklearn.datasets import load_svmlight_file
    with lzma.open(DATA / name / "train.svm.xz", "rb") as f:
        X, y = load_svmlight_file(f)
    X = X.tocsr()
    if n is not None:
        X, y = X[:n], y[:n]
    X.sort_indices()
    return X, y


def warmup():
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import RBF, make_params
    from lasvm_cli.solvers.csvc import solve_binary
    import scipy.sparse as sp
    t = time.perf_counter()
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.random((40, 4)))
    y = np.where(rng.random(40) > 0.5, 1.0, -1.0)
    kd = kernel_data(X.indptr, X.indices, X.data, width=4)
    for ws in ("so", "hmg"):
        solve_binary(kd, make_params(RBF, 3, 0.5, 0.0), y, 1.0, 1.0, wss=ws)
    return time.perf_counter() - t


def run_case(label, X, y, gamma, C, cache_mb, wss_list=("so",), x_storage="auto"):
    from libsvm import svmutil
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import RBF, make_params
    from lasvm_cli.solvers.csvc import solve_binary
    yb = np.where(y == y[0], 1.0, -1.0)
    t = time.perf_counter()
    # svm-train's storage rule (data.py: float32 rows for large dense data)
    kd = kernel_data(X.indptr, X.indices, X.data, width=X.shape[1], x_storage=x_storage,
                     training=True)
    t_kd = time.perf_counter() - t
    storage = ("float32 dense" if kd.X32.shape[0] else "float64 dense" if kd.X.shape[0]
               else "float64 CSR")
    kp = make_params(RBF, 3, gamma, 0.0)
    prob = svmutil.svm_problem(list(yb), X)
    opts = f"-q -c {C} -g {gamma!r} -m {cache_mb}"
    t = time.perf_counter()
    m = svmutil.svm_train(prob, opts)
    t_lib = time.perf_counter() - t
    print(f"{label}: l={X.shape[0]} LIBSVM {opts}: {t_lib:.2f} s, nSV {m.l}, rho {m.rho[0]:.6f}")
    for ws in wss_list:
        t = time.perf_counter()
        r = solve_binary(kd, kp, yb, C, C, cache_mb=cache_mb, wss=ws)
        t_ours = time.perf_counter() - t
        c = r.counters
        print(f"  ours {ws:>3} ({storage}): {t_ours:.2f} s (+{t_kd:.2f} s storage) ratio"
              f" {t_ours / t_lib:.2f}"
              f" | #iter {r.n_iter} obj {r.obj:.6f} rho {r.rho[0]:.6f} nSV {r.n_sv} nBSV {r.n_bsv}"
              f" | kernel evals {c['kernel_evals'] / 1e6:.1f} M, misses {c['cache_misses']},"
              f" hits {c['cache_hits']}, cache rows {c['cache_rows']}, reconstructions"
              f" {c['reconstructions']}, mg {c['mg_iterations']}, kkt gap {c['kkt_gap']:.2e}")
        sys.stdout.flush()


def run_multiclass(label, name, opts_extra=""):
    """Whole one-vs-one training through lasvm_cli.training.train (all k(k-1)/2 pairs)
    against LIBSVM."""
    from libsvm import svmutil
    from lasvm_cli.numerics.data import Problem
    from lasvm_cli.io.svmlight import read_svmlight
    from lasvm_cli.training.params import TrainParams
    from lasvm_cli.training.train import train

    d = read_svmlight(DATA / name / "train.svm.xz")
    X, y = load(name)
    opts = f"-q -g {1.0 / d.max_index!r} {opts_extra}".strip()
    t = time.perf_counter()
    m = svmutil.svm_train(svmutil.svm_problem(list(y), X), opts)
    t_lib = time.perf_counter() - t
    print(f"{label}: l={d.n} LIBSVM {opts}: {t_lib:.2f} s, total nSV {m.l}")
    params = TrainParams(gamma=1.0 / d.max_index)
    t = time.perf_counter()
    problem = Problem.from_svmlight(d)
    model = train(problem, params)
    t_ours = time.perf_counter() - t
    c = model.counters
    print(f"  ours  so: {t_ours:.2f} s ratio {t_ours / t_lib:.2f} | total nSV {model.total_sv}"
          f" | kernel evals {c['kernel_evals'] / 1e6:.1f} M, iterations {c['iterations']}")
    sys.stdout.flush()


def run_type(label, name, opts, rows=None):
    """Any svm-train options (the other svm types, -s 1..4; banana's iteration limit) through
    lasvm_cli.training.train against LIBSVM's svm_train, the same options, on the first ``rows``
    rows (default all); training only (parsing excluded from both)."""
    import tempfile
    from libsvm import svmutil
    from lasvm_cli.cli.train import parse_command_line
    from lasvm_cli.numerics.data import Problem
    from lasvm_cli.io.svmlight import read_svmlight
    from lasvm_cli.training.train import train

    path = DATA / name / "train.svm.xz"
    if rows is not None:
        with lzma.open(path, "rb") as f, tempfile.NamedTemporaryFile(suffix=".svm",
                                                                     delete=False) as out:
            out.writelines(line for _, line in zip(range(rows), f))
        path = Path(out.name)
    d = read_svmlight(path)
    if rows is not None:
        os.unlink(path)
    X, y = load(name, rows)
    o = parse_command_line(opts.split() + ["x"])
    p = o.params
    if p.gamma == 0:
        p.gamma = 1.0 / d.max_index
    lib_opts = f"-q {opts} -g {p.gamma!r}"
    t = time.perf_counter()
    m = svmutil.svm_train(svmutil.svm_problem(list(y), X), lib_opts)
    t_lib = time.perf_counter() - t
    print(f"{label}: l={d.n} LIBSVM {lib_opts}: {t_lib:.2f} s, nSV {m.l}, rho {m.rho[0]:.6f}")
    problem = Problem.from_svmlight(d, kernel_type=p.kernel_type)
    lines = []
    t = time.perf_counter()
    model = train(problem, p, info=lines.append)
    t_ours = time.perf_counter() - t
    c = model.counters
    objs = [ln for ln in lines if ln.startswith("obj")]
    print(f"  ours: {t_ours:.2f} s ratio {t_ours / t_lib:.2f} | {objs[-1]} | nSV {model.total_sv}"
          f" | kernel evals {c['kernel_evals'] / 1e6:.1f} M, iterations {c['iterations']}")
    sys.stdout.flush()


# whole-trainer cases, any svm-train options: the other svm types, and banana's 10 M cheap
# iterations (two features, the iteration limit reached: SMO's per-iteration cost)
TYPE_CASES = {
    "budgetfood_svr": ("budgetfood epsilon-SVR -c 10 -p 0.01", "budgetfood", "-s 3 -c 10 -p 0.01"),
    "banana_iter": ("banana C-SVC -c 32768 -g 8 (10 M iterations)", "banana", "-c 32768 -g 8"),
    "adult_nusvc": ("adult nu-SVC -n 0.3", "adult", "-s 1 -n 0.3"),
    "adult_oneclass": ("adult one-class -n 0.1", "adult", "-s 2 -n 0.1"),
    # Solver_NU's per-iteration cost: 8,000 variables, rows all cached, the 10 M iteration cap
    "budgetfood4k_nusvr": ("budgetfood first 4,000 rows nu-SVR (10 M iterations)", "budgetfood",
                           "-s 4 -n 0.5 -c 1000 -g 8 -m 400", 4000),
}


def dataset_of(case):
    if case in TYPE_CASES:
        return TYPE_CASES[case][1]
    return {"adult_c100": "adult", "mnist20k": "mnist", "mnist20k_f64": "mnist"}.get(case, case)


def main(cases):
    missing = [c for c in cases if not (DATA / dataset_of(c) / "train.svm.xz").exists()]
    for case in missing:
        print(f"skipped {case}: {dataset_of(case)} is not in {DATA} "
              f"(lasvm data fetch {dataset_of(case)})")
    cases = [c for c in cases if c not in missing]
    print(f"JIT warm-up: {warmup():.2f} s")
    if "adult" in cases or "adult_c100" in cases:
        X, y = load("adult")
        if "adult" in cases:
            run_case("adult defaults", X, y, 1 / 123, 1, 100)
        if "adult_c100" in cases:
            run_case("adult -c 100 -g 0.005 -m 40", X, y, 0.005, 100, 40)
    if "ijcnn1" in cases:
        X, y = load("ijcnn1")
        run_case("ijcnn1 defaults", X, y, 1 / 22, 1, 100)
    if "reuters" in cases:  # sparse real-valued (tf-idf); seed 000's C and gamma
        X, y = load("reuters")
        run_case("reuters -c 1 -g 0.5", X, y, 0.5, 1, 100)
    if "usps" in cases:
        run_multiclass("usps 10 classes, defaults", "usps")
    if "mnist20k" in cases or "mnist20k_f64" in cases:
        X, y = load("mnist", 20000)
        X = X / 255.0
        X = X.tocsr()
        y = np.where(y <= 4, 1.0, -1.0)
        storages = [s for s, case in (("auto", "mnist20k"), ("float64", "mnist20k_f64"))
                    if case in cases]
        for x_storage in storages:  # LIBSVM runs again beside each: ratios from one run
            run_case(f"mnist 0-4 vs 5-9 20k /255 (--x-storage {x_storage})", X, y, 0.02, 10, 20,
                     ("so", "hmg"), x_storage)
    for case in cases:
        if case in TYPE_CASES:
            run_type(*TYPE_CASES[case])


if __name__ == "__main__":
    main(sys.argv[1:] or ["adult", "adult_c100", "ijcnn1", "reuters", "usps", "mnist20k", *TYPE_CASES])
