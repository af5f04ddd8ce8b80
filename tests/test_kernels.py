"""Kernel rows against numpy brute force, on dense and sparse storage, all-zero rows included."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lasvm_cli.base.numba_internals import ON_DEMAND, uses
from lasvm_cli.numerics import kernels as K
from lasvm_cli.numerics.data import kernel_data, subset


def random_csr(rng, n, d, density):
    M = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    M[0] = 0.0  # an all-zero row
    M[:, 0] = 0.0  # column 0 unused, as in 1-based files
    indptr = np.zeros(n + 1, np.int64)
    indices, values = [], []
    for i in range(n):
        nz = np.flatnonzero(M[i])
        indices.extend(nz)
        values.extend(M[i, nz])
        indptr[i + 1] = len(indices)
    return M, indptr, np.array(indices, np.int32), np.array(values, np.float64)


def brute(M1, M2, kind, degree, gamma, coef0):
    G = M1 @ M2.T
    if kind == K.LINEAR:
        return G
    if kind == K.POLY:
        return (gamma * G + coef0) ** degree
    if kind == K.RBF:
        d = (M1 ** 2).sum(1)[:, None] + (M2 ** 2).sum(1)[None, :] - 2 * G
        return np.exp(-gamma * np.maximum(d, 0))
    return np.tanh(gamma * G + coef0)


@pytest.mark.parametrize("kind", [K.LINEAR, K.POLY, K.RBF, K.SIGMOID])
@pytest.mark.parametrize("dense_a", [True, False])
@pytest.mark.parametrize("dense_b", [True, False])
@pytest.mark.parametrize("n", [7, 3000])  # serial and parallel paths
def test_rows_match_brute_force(kind, dense_a, dense_b, n):
    rng = np.random.default_rng(kind * 10 + n)
    d = 12
    M, indptr, idx, val = random_csr(rng, n, d, 0.4)
    A = kernel_data(indptr, idx, val, width=d, dense=dense_a)
    B = kernel_data(indptr, idx, val, width=d, dense=dense_b)
    assert_rows_match(A, B, M, M, kind, rng)


def assert_rows_match(A, B, MA, MB, kind, rng):
    """Rows 0..4 of A against all of B (dense matrices MA, MB) to 1e-13, serial and parallel,
    and a few kernel_value entries."""
    n = MB.shape[0]
    kp = K.make_params(kind, 3, 0.3, 0.5)
    want = brute(MA[:5], MB, kind, 3, 0.3, 0.5)
    targets = rng.permutation(n).astype(np.int64)
    out = np.empty(n)
    for a in range(5):
        K.kernel_row(A, a, B, targets, kp, out)
        np.testing.assert_allclose(out, want[a, targets], rtol=1e-13, atol=1e-13)
        if n > 1000:  # the parallel row itself (kernel_row takes it only for longer rows)
            K.kernel_row_parallel(A, a, B, targets, kp, out)
            np.testing.assert_allclose(out, want[a, targets], rtol=1e-13, atol=1e-13)
        for t in targets[:5]:
            assert K.kernel_value(A, a, B, t, kp) == pytest.approx(want[a, t], rel=1e-13, abs=1e-13)


def test_exp_is_accurate_over_its_range():
    x = -np.concatenate([np.linspace(0, 50, 20001), np.logspace(-12, np.log10(700), 5000)])
    y = x.copy()
    K.exp_inplace(y)
    # relative error grows with |x| through the reduction; 5e-14 is far below float32 cache rounding
    np.testing.assert_allclose(y, np.exp(x), rtol=5e-14, atol=0)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 17, 1031])
def test_exp_lanes_are_the_scalar_exp_bit_for_bit(n):
    """ordered.exp_lanes (8-wide vector lanes) computes kernels._exp_block's operations in its
    order: the same bits, the clamp at -708, 0, -0.0, -inf and subnormal-sized arguments
    included; exp_inplace on a slice leaves its neighbours alone."""
    from lasvm_cli.numerics.ordered import exp_lanes

    rng = np.random.default_rng(n)
    x = np.concatenate([-rng.random(n) * 30, -rng.random(n) * 800])
    x[::7] = 0.0
    x[1::11] = -0.0
    x[2::13] = -708.0
    x[3::17] = -np.inf
    x[4::19] = -1e-300
    want = x.copy()
    K._exp_block(want, np.empty(want.size, np.int64))
    got = x.copy()
    done = exp_lanes(got, got.size)
    assert done == got.size - got.size % 8
    assert np.array_equal(got[:done].view(np.int64), want[:done].view(np.int64))
    assert np.array_equal(got[done:], x[done:])  # the rest is the caller's
    both = np.concatenate([[5.0], x, [7.0]])
    K.exp_inplace(both[1:-1])
    assert np.array_equal(both[1:-1].view(np.int64), want.view(np.int64))
    assert both[0] == 5.0 and both[-1] == 7.0


def test_precomputed_kernel_uses_serial_numbers():
    # rows "label 0:serial 1:K(i,1) 2:K(i,2) 3:K(i,3)"
    Kmat = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 4.0]])
    rows = [np.concatenate([[i + 1], Kmat[i]]) for i in range(3)]
    indptr = np.arange(0, 13, 4, dtype=np.int64)
    idx = np.tile(np.arange(4, dtype=np.int32), 3)
    val = np.concatenate(rows)
    A = kernel_data(indptr, idx, val, kernel_type=K.PRECOMPUTED)
    kp = K.make_params(K.PRECOMPUTED)
    out = np.empty(3)
    for a in range(3):
        K.kernel_row(A, a, A, np.array([2, 0, 1], np.int64), kp, out)
        np.testing.assert_array_equal(out, Kmat[a, [2, 0, 1]])


def test_subset_keeps_rows():
    rng = np.random.default_rng(0)
    M, indptr, idx, val = random_csr(rng, 20, 6, 0.5)
    for dense in (True, False):
        kd = kernel_data(indptr, idx, val, width=6, dense=dense)
        sub = subset(kd, [3, 0, 7])
        kp = K.make_params(K.LINEAR)
        out = np.empty(3)
        K.kernel_row(sub, 0, sub, np.arange(3, dtype=np.int64), kp, out)
        np.testing.assert_allclose(out, M[[3, 0, 7]] @ M[3])


def test_the_parallel_row_is_the_serial_row_bit_for_bit():
    # kernel_row takes the serial row where the parallel one is not compiled (if_compiled):
    # the same values, dense and CSR
    rng = np.random.default_rng(5)
    for dense in (True, False):
        M, indptr, idx, val = random_csr(rng, 3000, 30, 0.5)
        kd = kernel_data(indptr, idx, val, width=30, dense=dense)
        targets = rng.permutation(3000).astype(np.int64)
        out, ref = np.empty(3000), np.empty(3000)
        for kind in (K.LINEAR, K.RBF):
            kp = K.make_params(kind, 3, 0.3, 0.5)
            for a in range(3):
                K.kernel_row_parallel(kd, a, kd, targets, kp, out)
                K.kernel_row_serial(kd, a, kd, targets, kp, ref)
                np.testing.assert_array_equal(out, ref)


ROW_PATHS_RUN = """
import sys
import numpy as np
from lasvm_cli.base import jit_cache
from lasvm_cli.cli import main
from lasvm_cli.numerics import kernels as K
from lasvm_cli.numerics.data import kernel_data

def train(path):
    sys.argv = ["svm-train", "-q", path, path + ".model"]
    try:
        main.svm_train()
    except SystemExit as e:
        assert e.code in (0, None)

def asked():
    return [(jit_cache.compiled_on_demand(f), len(f.overloads)) for f in K.ROW_PATHS_ON_DEMAND]

def filled(f):  # slots of f that callers compiled or loaded here read, with an address
    key = (f.py_func.__module__, f.py_func.__qualname__)
    return sum(v.value != 0 for v, slot in jit_cache._SLOTS.values() if slot.key == key)

small, wide = sys.argv[1:3]
train(small)
print(asked())
rng = np.random.default_rng(0)
ptr = np.arange(0, 3001 * 4, 4)
binary = kernel_data(ptr, rng.integers(0, 100, 12000).astype(np.int32) // 4 * 4 + np.tile(
    np.arange(4, dtype=np.int32), 3000), np.ones(12000))
print(binary.bits.shape[0] > 0, asked()[0][0])
real = kernel_data(ptr, binary.indices, rng.random(12000), dense=False, training=True)
print(real.csc.shape[0] > 0, asked()[1][0])
train(wide)
print(asked()[2][0], filled(K.kernel_row_parallel) > 0)
"""


@pytest.mark.skipif(not uses(ON_DEMAND), reason="numba's plain path: every row path compiled")
def test_the_optional_row_paths_compile_only_for_data_that_use_them(tmp_path):
    """A default training on small dense data neither compiles nor loads the bit-set rows,
    the whole row by column or the parallel row; data that can use one asks for it
    (kernels.compile_rows_for), and training on rows long enough reaches the parallel row's
    compiled code. In a fresh process: these requests last for the process."""
    rng = np.random.default_rng(1)
    with open(tmp_path / "wide.svm", "w") as f:  # 2,200 x 256 dense: a row is 563,200 > 2^19
        for i in range(2200):
            f.write(f"{1 if i % 2 else -1} " + " ".join(
                f"{j + 1}:{v:.3f}" for j, v in enumerate(rng.random(256))) + "\n")
    heart = Path(__file__).parent.parent / "data" / "heart_scale"
    r = subprocess.run([sys.executable, "-c", ROW_PATHS_RUN, str(heart),
                        str(tmp_path / "wide.svm")], capture_output=True, text=True, timeout=900,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:4] == [
        "[(False, 0), (False, 0), (False, 0)]", "True True", "True True", "True True"]


def test_one_compiled_signature_per_function():
    # row targets are int64 everywhere (cache positions, SV lists): one compiled variant each
    for fn in (K.kernel_row, K.kernel_value):
        assert len(fn.signatures) <= 1, fn.signatures


# ---------------------------------------------------------------------------------------------
# binary data as bit sets


def random_binary_csr(rng, n, d, density):
    M = (rng.random((n, d)) < density).astype(np.float64)
    M[0] = 0.0  # an all-zero row
    M[:, 0] = 0.0
    indptr = np.concatenate([[0], np.cumsum((M != 0).sum(1))]).astype(np.int64)
    idx = np.concatenate([np.flatnonzero(r) for r in M]).astype(np.int32)
    return M, indptr, idx, np.ones(idx.size)


@pytest.mark.parametrize("kind", [K.LINEAR, K.POLY, K.RBF, K.SIGMOID])
@pytest.mark.parametrize("d", [5, 64, 123, 150, 256, 300])  # words: 1, 1 (bit 63), 2, 3, 4 (bit 255), 5
@pytest.mark.parametrize("n", [9, 20000])  # serial and parallel paths
def test_bit_rows_match_brute_force_and_csr(kind, d, n):
    rng = np.random.default_rng(kind + d + n)
    M, indptr, idx, val = random_binary_csr(rng, n, d, 0.15)
    kd = kernel_data(indptr, idx, val, width=d)
    assert kd.bits.shape == (n, (d + 63) // 64)
    plain = kd._replace(bits=K.NO_BITS)
    kp = K.make_params(kind, 3, 0.05, 0.5)
    want = brute(M[:3], M, kind, 3, 0.05, 0.5)
    targets = rng.permutation(n).astype(np.int64)
    out, ref = np.empty(n), np.empty(n)
    for a in range(3):
        K.kernel_row(kd, a, kd, targets, kp, out)
        K.kernel_row(plain, a, plain, targets, kp, ref)
        np.testing.assert_allclose(out, want[a, targets], rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(out, ref, rtol=2e-16 * 8, atol=0)
        K.kernel_row_serial(kd, a, kd, targets, kp, ref)
        np.testing.assert_array_equal(out, ref)


def test_bits_only_for_binary_narrow_data():
    rng = np.random.default_rng(1)
    M, indptr, idx, val = random_binary_csr(rng, 30, 20, 0.3)
    assert kernel_data(indptr, idx, val).bits.shape == (30, 1)
    assert kernel_data(indptr, idx, val, dense=True).bits.shape == (30, 1)  # with X as well
    assert kernel_data(indptr, idx, 2.0 * val).bits.shape == (0, 0)  # a value other than 1
    assert kernel_data(indptr, idx, val, kernel_type=K.PRECOMPUTED).bits.shape == (0, 0)
    wide = idx.copy()
    wide[-1] = 64 * 16  # needs 17 words
    assert kernel_data(indptr, wide, val).bits.shape == (0, 0)
    assert subset(kernel_data(indptr, idx, val), [4, 2]).bits.shape == (2, 1)


def test_bit_rows_fall_back_when_storages_differ():
    # a model's SVs with bits against test rows without (a non-binary value), or with another
    # number of words: the CSR/dense path gives the kernel
    rng = np.random.default_rng(2)
    M, indptr, idx, val = random_binary_csr(rng, 40, 70, 0.2)
    A = kernel_data(indptr, idx, val, width=70)
    B_val = val.copy()
    B_val[3] = 0.5
    M_b = M.copy()
    M_b[np.repeat(np.arange(40), np.diff(indptr))[3], idx[3]] = 0.5
    B = kernel_data(indptr, idx, B_val, width=70)
    M_n = M[:5].copy()
    M_n[:, 60:] = 0.0
    ip_n = np.concatenate([[0], np.cumsum((M_n != 0).sum(1))]).astype(np.int64)
    idx_n = np.concatenate([np.flatnonzero(r) for r in M_n]).astype(np.int32)
    narrow = kernel_data(ip_n, idx_n, np.ones(idx_n.size), width=60)
    assert B.bits.shape == (0, 0) and narrow.bits.shape[1] != A.bits.shape[1]
    kp = K.make_params(K.RBF, gamma=0.1)
    out = np.empty(40)
    K.kernel_row(A, 1, B, np.arange(40, dtype=np.int64), kp, out)
    np.testing.assert_allclose(out, brute(M[1:2], M_b, K.RBF, 3, 0.1, 0)[0], rtol=1e-13)
    out5 = np.empty(5)
    K.kernel_row(A, 1, narrow, np.arange(5, dtype=np.int64), kp, out5)
    np.testing.assert_allclose(out5, brute(M[1:2], M_n, K.RBF, 3, 0.1, 0)[0], rtol=1e-13)


def test_squared_norms_with_empty_rows_anywhere():
    from lasvm_cli.numerics.data import squared_norms

    # rows: empty, (1, 2), empty, (3), empty, empty: LIBSVM files may end with feature-less rows
    indptr = np.array([0, 0, 2, 2, 3, 3, 3], np.int64)
    np.testing.assert_array_equal(squared_norms(indptr, np.array([1.0, 2.0, 3.0])),
                                  [0, 5, 0, 9, 0, 0])
    np.testing.assert_array_equal(squared_norms(np.zeros(3, np.int64), np.zeros(0)), [0, 0])


@pytest.mark.parametrize("dense", [True, False])
def test_rbf_diagonal_is_exactly_one(dense):
    # LIBSVM's QD for RBF is exp(-gamma (|x|^2 + |x|^2 - 2 x'x)) = 1 exactly (|x|^2 comes from
    # the same dot); a last-bit difference in QD (our dense dot contracts into FMA) changed the
    # SMO path on banana fold 0 at -c 0.5 -g 8 (697 iterations against LIBSVM's 712)
    rng = np.random.default_rng(5)
    M, indptr, idx, val = random_csr(rng, 400, 3, 1.0)  # two features (column 0 unused)
    A = kernel_data(indptr, idx, val, width=3, dense=dense)
    out = np.zeros(400)
    K.kernel_diagonal(A, K.make_params(K.RBF, 3, 8.0, 0.0), out)
    np.testing.assert_array_equal(out, 1.0)


@pytest.mark.parametrize("dense", [True, False])
def test_diagonal_takes_xx_summed_as_libsvm(dense):
    # LIBSVM's QD for the other kernels: its dot(x, x), products summed in order without FMA
    rng = np.random.default_rng(6)
    M, indptr, idx, val = random_csr(rng, 300, 9, 0.8)
    A = kernel_data(indptr, idx, val, width=9, dense=dense)
    xx = np.zeros(300)
    for i in range(300):
        for v in val[indptr[i]:indptr[i + 1]]:
            xx[i] += v * v
    out = np.zeros(300)
    K.kernel_diagonal(A, K.make_params(K.LINEAR), out)
    np.testing.assert_array_equal(out, xx)
    K.kernel_diagonal(A, K.make_params(K.POLY, 3, 0.5, 1.0), out)
    b = 0.5 * xx + 1.0
    np.testing.assert_array_equal(out, b * (b * b))  # LIBSVM's powi(b, 3)


# ---------------------------------------------------------------------------------------------
# whole rows by column (KernelData.XT: dense data of few columns)


@pytest.mark.parametrize("kind", [K.LINEAR, K.POLY, K.RBF, K.SIGMOID])
@pytest.mark.parametrize("d", [2, 7, 16])
def test_whole_rows_by_column_match_rows(kind, d):
    rng = np.random.default_rng(d + kind)
    M, indptr, idx, val = random_csr(rng, 300, d, 0.7)
    kd = kernel_data(indptr, idx, val, width=d, dense=True, training=True)
    assert kd.XT.shape == (d, 300)
    kp = K.make_params(kind, 3, 0.3, 0.5)
    out = np.empty(300)
    ref = np.empty(300)
    for a in (0, 1, 17, 299):
        K.kernel_row_all(kd, a, kp, out)
        K.kernel_row(kd, a, kd, np.arange(300), kp, ref)
        np.testing.assert_array_equal(out, ref)  # both sum in LIBSVM's order


def test_whole_rows_in_blocks_match_rows():
    rng = np.random.default_rng(9)
    n = 2 * K.ROW_ALL_BLOCK + 77  # three blocks, the last one short
    M, indptr, idx, val = random_csr(rng, n, 9, 0.7)
    kd = kernel_data(indptr, idx, val, width=9, dense=True, training=True)
    kp = K.make_params(K.RBF, 3, 0.3, 0.0)
    ref, out = np.empty(n), np.empty(n)
    K.kernel_row(kd, 11, kd, np.arange(n), kp, ref)
    K.kernel_row_all(kd, 11, kp, out)
    np.testing.assert_array_equal(out, ref)


def test_whole_row_dots_are_summed_in_column_order():
    """x_a'x_b as LIBSVM's dot sums it: products in column order, no FMA, no reassociation."""
    rng = np.random.default_rng(5)
    M, indptr, idx, val = random_csr(rng, 200, 12, 0.9)
    kd = kernel_data(indptr, idx, val, width=12, dense=True, training=True)
    out = np.empty(200)
    K.kernel_row_all(kd, 3, K.make_params(K.LINEAR), out)
    for b in range(200):
        s = 0.0
        for c in range(12):
            if M[3, c] != 0.0:
                s += M[3, c] * M[b, c]
        assert out[b] == s


def test_transposed_rows_only_for_few_dense_columns():
    from lasvm_cli.numerics.data import XT_MAX_COLUMNS
    rng = np.random.default_rng(1)
    for d, dense, training, has in ((XT_MAX_COLUMNS, True, True, True),
                                    (XT_MAX_COLUMNS, True, False, False),  # a test set
                                    (XT_MAX_COLUMNS + 1, True, True, False),
                                    (8, False, True, False)):
        M, indptr, idx, val = random_csr(rng, 40, d, 0.8)
        kd = kernel_data(indptr, idx, val, width=d, dense=dense, training=training)
        assert (kd.XT.shape[0] > 0) == has
        if has:
            sub = subset(kd, [5, 0, 9])
            np.testing.assert_array_equal(sub.XT, sub.X.T)


@pytest.mark.parametrize("kind", [K.LINEAR, K.POLY, K.RBF, K.SIGMOID])
def test_sparse_whole_rows_by_column_match_rows(kind):
    # sparse real-valued training rows are also kept by column (KernelData.csc): a whole row
    # from the columns equals the row by gather bit for bit (both sum LIBSVM's way), also for
    # a subset (one-vs-one pairs, folds) and for wide indices mapped onto compact columns
    rng = np.random.default_rng(kind)
    M, indptr, idx, val = random_csr(rng, 300, 40, 0.1)
    for width, spread in ((40, 1), (1 << 20, 20000)):  # indices 0..39, or up to 780,000
        kd = kernel_data(indptr, idx * np.int32(spread), val, width=width, dense=False,
                         training=True)
        assert kd.csc.shape[0] > 0
        kp = K.make_params(kind, 3, 0.3, 0.5)
        for data in (kd, subset(kd, [7, 0, 299, 150, 3])):
            n = data.x_sq.shape[0]
            out, ref = np.empty(n), np.empty(n)
            for a in (0, 1, n - 1):
                K.kernel_row_all(data, a, kp, out)
                K.kernel_row(data, a, data, np.arange(n), kp, ref)
                np.testing.assert_array_equal(out, ref)
    # binary data keep their bit sets instead; test sets and precomputed kernels neither
    M, indptr, idx, val = random_csr(rng, 30, 40, 0.1)
    assert kernel_data(indptr, idx, np.ones_like(val), width=40, dense=False,
                       training=True).csc.shape[0] == 0
    assert kernel_data(indptr, idx, val, width=40, dense=False).csc.shape[0] == 0


# ---------------------------------------------------------------------------------------------
# LIBSVM's summation order on every path (ordered.py), so the numbers cannot depend on where
# LLVM compiled or inlined a function (the JIT cache's history)


def libsvm_dot(u, v):
    """LIBSVM's dot: the products of the features both rows store, added in column order."""
    s = 0.0
    for x, y in zip(u, v):
        if x != 0.0 and y != 0.0:
            s += float(x) * float(y)
    return s


@pytest.mark.parametrize("storage", ["float64", "float32", "sparse"])
@pytest.mark.parametrize("d", [1, 3, 4, 7, 9, 22, 61])
def test_row_dots_are_summed_as_libsvm(storage, d):
    rng = np.random.default_rng(100 + d)
    M, indptr, idx, val = random_csr(rng, 120, d + 1, 0.8)
    kd = kernel_data(indptr, idx, val, width=d + 1, dense=storage != "sparse",
                     x_storage=storage if storage != "sparse" else "float64")
    assert (kd.X32.shape[0] > 0) == (storage == "float32")
    rows = kd.X if storage != "sparse" else M  # X holds the float32-rounded values for X32
    targets = rng.permutation(np.concatenate([np.arange(120), [5, 5, 77]]))[:8 * 13 + 5]
    kp = K.make_params(K.LINEAR)
    out = np.empty(targets.shape[0])
    for a in (0, 1, 64):
        want = [libsvm_dot(rows[a], rows[b]) for b in targets]
        K.kernel_row_serial(kd, a, kd, targets, kp, out)
        np.testing.assert_array_equal(out, want)
        K.kernel_row_parallel(kd, a, kd, targets, kp, out)
        np.testing.assert_array_equal(out, want)
        assert K.kernel_value(kd, a, kd, int(targets[3]), kp) == want[3]


def test_no_fast_math_in_compiled_code():
    """fastmath's reassoc/contract let LLVM pick the rounding per compile context; no jitted
    function of the package may carry it (kernels.py's note)."""
    import importlib
    import pkgutil

    import numba.core.registry
    import lasvm_cli
    flagged, checked = [], 0
    for info in pkgutil.walk_packages(lasvm_cli.__path__, "lasvm_cli."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed: no jitted code there
            continue
        for name, obj in vars(module).items():
            if isinstance(obj, numba.core.registry.CPUDispatcher) and obj.__module__ == info.name:
                checked += 1
                if obj.targetoptions.get("fastmath"):
                    flagged.append(f"{info.name}.{name}")
    assert checked > 50
    assert flagged == []
