"""Training rows in single precision (data.py, KernelData.X32): the rule that chooses it, kernel
rows over rounded values against brute force, results against float64 storage and LIBSVM."""

import numpy as np
import pytest

from lasvm_cli.numerics import data as D
from lasvm_cli.numerics import kernels as K
from lasvm_cli.cli.main import svm_train
from lasvm_cli.numerics.data import Problem, kernel_data, subset
from lasvm_cli.io.model_file import read_model
from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.solvers.csvc import solve_binary

from .conftest import libsvm_or_skip, libsvm_train_stdout, libsvm_x
from .test_cli_train import run
from .test_kernels import assert_rows_match, random_csr


def test_auto_keeps_float64_below_the_size_limit():
    rng = np.random.default_rng(0)
    _, indptr, idx, val = random_csr(rng, 50, 8, 0.6)
    assert kernel_data(indptr, idx, val, width=8, x_storage="auto").X32.shape == (0, 0)
    assert kernel_data(indptr, idx, val, width=8).X32.shape == (0, 0)  # float64 by default
    kd = kernel_data(indptr, idx, val, width=8, x_storage="float32")
    assert kd.X32.shape == (50, 8) and kd.X32.dtype == np.float32


def test_auto_takes_float32_for_large_dense_data(monkeypatch):
    rng = np.random.default_rng(1)
    _, indptr, idx, val = random_csr(rng, 400, 16, 0.3)
    monkeypatch.setattr(D, "SINGLE_MIN_BYTES", 400 * 16 * 8)
    kd = kernel_data(indptr, idx, val, width=16, x_storage="auto")
    assert kd.X32.shape == (400, 16)
    # rows float64 would keep as CSR are stored densely in float32 (a cell is 4 bytes)
    _, indptr, idx, val = random_csr(rng, 400, 16, 0.15)
    assert not D.choose_dense(400, 16, val.size)
    kd = kernel_data(indptr, idx, val, width=16, x_storage="auto")
    assert kd.X32.shape == (400, 16) and kd.X.shape == (400, 16)


@pytest.mark.parametrize("case", ["binary", "precomputed", "huge", "sparse", "forced_csr"])
def test_float32_is_never_used_where_it_cannot_serve(case):
    rng = np.random.default_rng(2)
    _, indptr, idx, val = random_csr(rng, 60, 10, 0.5)
    kw = dict(width=10, x_storage="float32")
    if case == "binary":
        val = np.ones_like(val)
    elif case == "precomputed":
        kw["kernel_type"] = K.PRECOMPUTED
    elif case == "huge":
        val = val.copy()
        val[3] = 1e39  # beyond float32's range
    elif case == "sparse":
        _, indptr, idx, val = random_csr(rng, 60, 200, 0.02)
        kw["width"] = 200
    elif case == "forced_csr":
        kw["dense"] = False
    kd = kernel_data(indptr, idx, val, **kw)
    assert kd.X32.shape == (0, 0)
    if case == "huge":
        assert kd.X.max() == 1e39


@pytest.mark.parametrize("kind", [K.LINEAR, K.POLY, K.RBF, K.SIGMOID])
@pytest.mark.parametrize("n", [7, 3000])  # serial and parallel rows
def test_rows_are_the_kernel_of_the_rounded_values(kind, n):
    rng = np.random.default_rng(kind + n)
    d = 12
    M, indptr, idx, val = random_csr(rng, n, d, 0.6)
    A = kernel_data(indptr, idx, val, width=d, x_storage="float32")
    M32 = M.astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(A.X, M32)
    np.testing.assert_allclose(A.x_sq, (M32 ** 2).sum(1), rtol=1e-14)
    assert_rows_match(A, A, M32, M32, kind, rng)
    # test rows in float64 against training rows in float32 (LASVM's --test)
    B = kernel_data(indptr, idx, val, width=d)
    assert_rows_match(B, A, M, M32, kind, rng)
    sub = subset(A, [4, 0, 2])
    np.testing.assert_array_equal(sub.X32, A.X32[[4, 0, 2]])


def dense_problem(rng, n, d, step=None):
    M = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7)
    if step is not None:
        M = np.round(M / step) * step  # values float32 holds exactly
    y = np.where(M[:, :3].sum(1) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    indptr = np.concatenate([[0], np.cumsum((M != 0).sum(1))]).astype(np.int64)
    idx = np.concatenate([np.flatnonzero(r) for r in M]).astype(np.int32)
    val = M[M != 0]
    return y, indptr, idx, val


def test_exactly_representable_values_give_identical_results():
    y, indptr, idx, val = dense_problem(np.random.default_rng(3), 300, 10, step=1 / 64)
    kp = K.make_params(K.RBF, 3, 0.1, 0.0)
    results = []
    for storage in ("float64", "float32"):
        kd = kernel_data(indptr, idx, val, width=10, x_storage=storage)
        results.append(solve_binary(kd, kp, y, 1.0, 1.0))
    r64, r32 = results
    assert r32.n_iter == r64.n_iter and r32.obj == r64.obj
    np.testing.assert_array_equal(r32.coef, r64.coef)
    np.testing.assert_array_equal(r32.rho, r64.rho)


def test_rounded_values_keep_libsvms_objective():
    # values float32 cannot hold: results move by the rounding only (the tolerance of the
    # issue: objectives within 1e-6 relative of LIBSVM's float64 run)
    libsvm_or_skip()
    y, indptr, idx, val = dense_problem(np.random.default_rng(4), 600, 20)
    kd = kernel_data(indptr, idx + 1, val, width=21, x_storage="float32")
    assert kd.X32.shape[0] == 600
    r = solve_binary(kd, K.make_params(K.RBF, 3, 0.05, 0.0), y, 10.0, 10.0)
    m, out = libsvm_train_stdout(libsvm_x(indptr, idx + 1, val), y, "-c 10 -g 0.05")
    lines = out.splitlines()
    obj = float(next(ln for ln in lines if ln.startswith("obj")).split(",")[0].split("=")[1])
    assert r.obj == pytest.approx(obj, rel=1e-6)
    assert r.n_sv == pytest.approx(m.l, rel=0.02)


def test_cli_option_and_model_values_as_read(heart_path, tmp_path):
    model = tmp_path / "m"
    run(svm_train, ["-q", "--x-storage", "float32", heart_path, str(model)])
    data = read_svmlight(heart_path)
    rows = {tuple(np.round(data.values[data.indptr[i]:data.indptr[i + 1]], 12))
            for i in range(data.n)}
    m = read_model(str(model))
    for i in range(m.total_sv):  # every SV keeps the file's values, not float32's
        lo, hi = m.sv_indptr[i], m.sv_indptr[i + 1]
        assert tuple(np.round(m.sv_values[lo:hi], 12)) in rows
    res = run(svm_train, ["--x-storage", "half", heart_path, str(tmp_path / "n")], code=1)
    assert "unknown --x-storage 'half'" in res.stderr
    assert not (tmp_path / "n").exists()


def test_problem_uses_the_rule(monkeypatch, heart_path):
    data = read_svmlight(heart_path)
    assert Problem.from_svmlight(data).kd.X32.shape == (0, 0)  # 270 x 14: far below the limit
    monkeypatch.setattr(D, "SINGLE_MIN_BYTES", 1)
    assert Problem.from_svmlight(data).kd.X32.shape == (270, 14)
    assert Problem.from_svmlight(data, x_storage="float64").kd.X32.shape == (0, 0)
