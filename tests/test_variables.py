"""The variable layer (solvers/variables.py, cache.make_cache(var_example=...)): several
variables read their example's one cached row, through swaps; the SMO loop solves LIBSVM's
epsilon-SVR over 2l variables of l examples as libsvm-official does (with the same kernel
values: the same iterations, rho to 1e-12 relative)."""

import re

import numpy as np
import pytest

from lasvm_cli.numerics import cache as kc
from lasvm_cli.numerics.data import kernel_data
from lasvm_cli.numerics.kernels import PRECOMPUTED, RBF, KernelData, kernel_row_serial, make_params
from lasvm_cli.solvers.svr import solve_epsilon_svr
from lasvm_cli.solvers.variables import example_class_pairs, one_per_example, svr_pairs

from .conftest import libsvm_train_stdout, libsvm_x


def dense_problem(n=60, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    z = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    indptr = np.arange(0, n * d + 1, d, dtype=np.int64)
    indices = np.tile(np.arange(1, d + 1, dtype=np.int32), n)
    return X, z, indptr, indices, X.ravel().copy()


def brute_K(kd, kp, n):
    K = np.empty((n, n))
    for i in range(n):
        kernel_row_serial(kd, i, kd, np.arange(n), kp, K[i])
    return K


def test_layouts():
    v = svr_pairs(3)
    assert v.example.tolist() == [0, 1, 2, 0, 1, 2] and v.sign.tolist() == [1, 1, 1, -1, -1, -1]
    v = example_class_pairs(2, 3)
    assert v.example.tolist() == [0, 0, 0, 1, 1, 1] and v.klass.tolist() == [0, 1, 2, 0, 1, 2]
    v = one_per_example(np.array([1.0, -1.0]))
    assert v.example.tolist() == [0, 1] and v.sign.tolist() == [1.0, -1.0]


def test_variables_share_their_example_row():
    _, _, indptr, indices, values = dense_problem(20, 4)
    kd = kernel_data(indptr, indices, values, width=5)
    kp = make_params(RBF, gamma=0.5)
    K = brute_K(kd, kp, 20)
    var = svr_pairs(20)
    c = kc.make_cache(40, 1.0, np.float64, var_example=var.example)
    rng = np.random.default_rng(1)
    for _ in range(200):  # shrinking-like swaps, then rows of every example over all positions
        i, j = rng.integers(0, 40, 2)
        kc.cache_swap(c, i, j)
    for v in range(40):
        e = var.example[v]
        row = np.array(kc.cache_get(c, kd, kp, e, 40))
        np.testing.assert_allclose(row, K[e, var.example[c.perm]], rtol=1e-12)
    assert c.slot_of.shape == (20,)  # rows are keyed by example: at most 20 of them


def precomputed_rbf(X, gamma):
    """The RBF kernel matrix as a precomputed-kernel problem (column 0 = serial number), so
    LIBSVM and we read the same kernel values."""
    n = X.shape[0]
    K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    P = np.zeros((n, n + 1))
    P[:, 0] = np.arange(1, n + 1)
    P[:, 1:] = K
    kd = KernelData(P, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0), np.zeros(n))
    return kd, [{j: float(v) for j, v in enumerate(row)} for row in P]


def libsvm_run(X, z, opts):
    m, out = libsvm_train_stdout(X, z, opts)
    return m, int(re.findall(r"#iter = (\d+)", out)[-1]), float(re.findall(r"obj = (\S+),", out)[-1])


@pytest.mark.parametrize("shrinking", [1, 0])
def test_epsilon_svr_matches_libsvm_step_for_step(shrinking):
    """Same kernel values (precomputed): LIBSVM's iterations, objective and rho exactly."""
    X, z, *_ = dense_problem()
    kd, rows = precomputed_rbf(X, 0.2)
    r = solve_epsilon_svr(kd, make_params(PRECOMPUTED), z, C=2.0, p=0.1,
                          shrinking=bool(shrinking))
    m, it, obj = libsvm_run(rows, z, f"-s 3 -t 4 -c 2 -p 0.1 -h {shrinking}")
    assert r.n_iter == it
    assert r.obj == pytest.approx(obj, rel=1e-6)  # LIBSVM prints 6 decimals
    assert r.rho[0] == pytest.approx(m.rho[0], rel=1e-12)
    sv = np.array(m.get_sv_indices()) - 1
    np.testing.assert_allclose(r.coef[0][sv], np.array(m.get_sv_coef())[:, 0], rtol=1e-12)
    assert r.n_sv == m.l


def test_epsilon_svr_rbf_close_to_libsvm():
    """Our RBF rows (their last bits differ from LIBSVM's on these data): same optimum."""
    X, z, indptr, indices, values = dense_problem()
    kd = kernel_data(indptr, indices, values, width=6)
    r = solve_epsilon_svr(kd, make_params(RBF, gamma=0.2), z, C=2.0, p=0.1)
    m, it, obj = libsvm_run(libsvm_x(indptr, indices, values), z, "-s 3 -c 2 -p 0.1 -g 0.2")
    assert r.obj == pytest.approx(obj, rel=1e-5)
    assert r.rho[0] == pytest.approx(m.rho[0], abs=1e-3)
    assert r.n_sv == m.l
