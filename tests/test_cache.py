"""The kernel-row cache against a dict-based LRU model (after Shark's Test/LinAlg/LRUCache.cpp)."""

from collections import OrderedDict

import numpy as np
import pytest

from lasvm_cli.numerics import cache as kc
from lasvm_cli.numerics.kernels import make_params

from .conftest import precomputed


class Model:
    """LRU over example ids with per-row prefix lengths, capacity in rows."""

    def __init__(self, n, slots):
        self.rows = OrderedDict()
        self.slots = slots
        self.perm = list(range(n))
        self.hits = self.misses = self.evals = 0

    def get(self, k, length):
        if k in self.rows:
            self.rows.move_to_end(k)
            have = self.rows[k]
            if have >= length:
                self.hits += 1
                return
        else:
            if len(self.rows) == self.slots:
                self.rows.popitem(last=False)
            have = 0
        self.rows[k] = length
        self.misses += 1
        self.evals += length - have

    def swap(self, i, j):
        i, j = min(i, j), max(i, j)
        self.perm[i], self.perm[j] = self.perm[j], self.perm[i]
        for k in [k for k, ln in self.rows.items() if i < ln <= j]:
            del self.rows[k]

    def discard(self, k):
        self.rows.pop(k, None)


def check_same(c, model, M, n):
    assert list(c.perm) == model.perm
    assert all(c.pos[c.perm[t]] == t for t in range(n))
    assert kc.cache_stats(c)["cache_hits"] == model.hits
    assert kc.cache_stats(c)["cache_misses"] == model.misses
    assert kc.cache_stats(c)["kernel_evals"] == model.evals
    for k in range(n):
        assert kc.cache_cached_len(c, k) == model.rows.get(k, 0)
    # LRU order, least recent first
    S = c.key.shape[0]
    order, s = [], c.nxt[S]
    while s != S:
        order.append(int(c.key[s]))
        s = c.nxt[s]
    assert order == list(model.rows)
    w = c.meta[kc.WIDTH]
    for k, ln in model.rows.items():
        s = c.slot_of[k]
        row = c.buf[s * w:s * w + ln]
        np.testing.assert_array_equal(row, M[k, model.perm[:ln]].astype(c.buf.dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cache_matches_lru_model(dtype, seed):
    rng = np.random.default_rng(seed)
    n = 12
    M = rng.standard_normal((n, n))
    kd, kp = precomputed(M)
    slots = 3
    c = kc.make_cache(n, slots * n * np.dtype(dtype).itemsize / 2**20, dtype)
    assert c.meta[kc.N_SLOTS] == slots
    model = Model(n, slots)
    for _ in range(600):
        op = rng.random()
        if op < 0.6:
            k = int(rng.integers(n))
            length = int(rng.integers(1, n + 1))
            row = kc.cache_get(c, kd, kp, k, length)
            model.get(k, length)
            np.testing.assert_array_equal(row, M[k, model.perm[:length]].astype(dtype))
        elif op < 0.85:
            i, j = (int(v) for v in rng.integers(n, size=2))
            kc.cache_swap(c, i, j)
            model.swap(i, j)
        else:
            k = int(rng.integers(n))
            assert kc.cache_is_cached(c, k, 1) == (k in model.rows)
            kc.cache_discard(c, k)
            model.discard(k)
        check_same(c, model, M, n)


def test_two_most_recent_rows_stay_valid():
    rng = np.random.default_rng(5)
    n = 9
    M = rng.standard_normal((n, n))
    kd, kp = precomputed(M)
    c = kc.make_cache(n, 0.0, np.float32)  # minimum: two rows
    assert c.meta[kc.N_SLOTS] == 2
    prev = kc.cache_get(c, kd, kp, 0, n)
    for k in range(1, 40):
        k = k % n
        cur = kc.cache_get(c, kd, kp, k, n)
        np.testing.assert_array_equal(prev, M[(k - 1) % n].astype(np.float32))
        np.testing.assert_array_equal(cur, M[k].astype(np.float32))
        prev = cur


def random_rows_cache(rng, n, full_rows):
    """A random n x n precomputed kernel and a float32 cache holding ``full_rows`` rows of it."""
    M = rng.standard_normal((n, n))
    kd, kp = precomputed(M)
    return M, kd, kp, kc.make_cache(n, full_rows * n * 4 / 2**20, np.float32)


def test_set_width_keeps_recent_prefixes():
    n = 20
    M, kd, kp, c = random_rows_cache(np.random.default_rng(7), n, 4)
    for k in (3, 5, 7, 9):
        kc.cache_get(c, kd, kp, k, n)
    assert kc.cache_set_width(c, 5) == 16  # 80 floats / 5
    for k in (3, 5, 7, 9):
        assert kc.cache_cached_len(c, k) == 5
    for k in range(10, 20):  # fill the new slots; nothing recent is lost
        kc.cache_get(c, kd, kp, k, 5)
    for k in (3, 5, 7, 9):
        np.testing.assert_array_equal(kc.cache_get(c, kd, kp, k, 5), M[k, :5].astype(np.float32))
    assert kc.cache_set_width(c, n) == 4  # back to full rows: only the 4 most recent survive
    assert [k for k in range(n) if kc.cache_cached_len(c, k)] == [3, 5, 7, 9]
    evals = c.stats[kc.KERNEL_EVALS]
    np.testing.assert_array_equal(kc.cache_get(c, kd, kp, 7, n), M[7].astype(np.float32))
    assert c.stats[kc.KERNEL_EVALS] - evals == n - 5  # only the tail is computed
    kc.cache_clear(c)
    assert all(kc.cache_cached_len(c, k) == 0 for k in range(n))


@pytest.mark.parametrize("fill", [1, 0])
def test_symmetric_rows_fill_from_cached_rows(fill):
    # LaSVM 1.1's fill copies K(k, j) from j's cached row; with meta[FILL] = 0 every missing
    # entry is computed
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import RBF

    rng = np.random.default_rng(5)
    M = (rng.random((30, 10)) < 0.4) * (rng.random((30, 10)) + 0.5)
    indptr = np.concatenate([[0], np.cumsum((M != 0).sum(1))]).astype(np.int64)
    idx = np.concatenate([np.flatnonzero(r) for r in M]).astype(np.int32)
    kd = kernel_data(indptr, idx, M[M != 0], width=10)
    kp = make_params(RBF, gamma=0.2)
    c = kc.make_cache(30, 1.0)
    c.meta[kc.FILL] = fill
    scratch = kc.SymmetricScratch(np.zeros(30, np.int64), np.zeros(30, np.int64))
    kc.cache_symmetric_at(c, kd, kp, 3, 30, scratch)
    kc.cache_symmetric_at(c, kd, kp, 8, 30, scratch)
    before = kc.cache_stats(c)["kernel_evals"]
    base = kc.cache_symmetric_at(c, kd, kp, 11, 30, scratch)
    row = np.array(c.buf[base:base + 30], np.float64)
    d = ((M[11] - M) ** 2).sum(1)
    np.testing.assert_allclose(row, np.exp(-0.2 * d), rtol=1e-6)
    # entries 3 and 8 come from rows 3 and 8 with the fill
    assert kc.cache_stats(c)["kernel_evals"] - before == (28 if fill else 30)


def test_keeping_pays_for_costly_kernels_only():
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import RBF

    rng = np.random.default_rng(6)
    kp = make_params(RBF, gamma=0.1)

    def data(d, density, binary):
        M = (rng.random((50, d)) < density) * (1.0 if binary else rng.random((50, d)) + 0.5)
        indptr = np.concatenate([[0], np.cumsum((M != 0).sum(1))]).astype(np.int64)
        idx = np.concatenate([np.flatnonzero(r) for r in M]).astype(np.int32)
        return kernel_data(indptr, idx, M[M != 0], width=d)

    assert not kc.keeping_pays(data(120, 0.1, True), kp)     # bit sets (adult)
    assert not kc.keeping_pays(data(120, 0.1, False), kp)    # CSR, 12 features a row
    assert not kc.keeping_pays(data(22, 0.9, False), kp)     # dense, 22 columns (ijcnn1)
    assert kc.keeping_pays(data(784, 0.2, False), kp)        # CSR, ~150 features a row (mnist)


def test_rows_by_example_when_positions_outnumber_examples():
    """SVR's layout (variables i and i + n on example i): a row longer than the number of
    examples computes each example's value once (n evaluations, not 2n) and copies it to both
    positions, after any position swaps."""
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import RBF, kernel_value
    rng = np.random.default_rng(3)
    n, d = 50, 5
    X = rng.normal(size=(n, d))
    indptr = np.arange(0, n * d + 1, d, dtype=np.int64)
    kd = kernel_data(indptr, np.tile(np.arange(d, dtype=np.int32), n), X.ravel(), width=d,
                     dense=True, training=True)
    kp = make_params(RBF, 3, 0.2, 0.0)
    c = kc.make_cache(2 * n, 10, var_example=np.concatenate([np.arange(n), np.arange(n)]))
    for i, j in ((0, 2 * n - 1), (3, 60), (10, 11)):
        kc.cache_swap(c, i, j)
    for k in (0, 7, 49):
        row = kc.cache_get(c, kd, kp, k, 2 * n)
        want = [kernel_value(kd, k, kd, int(c.pex[t]), kp) for t in range(2 * n)]
        np.testing.assert_allclose(row, np.float32(want), rtol=2e-7)
    assert kc.cache_stats(c)["kernel_evals"] == 3 * n


def test_long_tails_by_example_for_few_dense_columns():
    """A tail over more than half the examples, on data kept transposed (KernelData.XT) or by
    column (KernelData.csc, sparse training rows), is computed for every example and copied
    to its positions (n evaluations); a shorter one, or any tail without either, only over its
    positions."""
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.numerics.kernels import RBF, kernel_value
    rng = np.random.default_rng(4)
    n, d = 60, 5
    X = rng.normal(size=(n, d))
    indptr = np.arange(0, n * d + 1, d, dtype=np.int64)
    for dense, training, full_row_evals in ((True, True, n), (False, True, n),
                                            (False, False, n - n // 3)):
        kd = kernel_data(indptr, np.tile(np.arange(d, dtype=np.int32), n), X.ravel(), width=d,
                         dense=dense, training=training)
        kp = make_params(RBF, 3, 0.2, 0.0)
        c = kc.make_cache(n, 10)
        kc.cache_swap(c, 0, n - 1)
        kc.cache_get(c, kd, kp, 5, n // 3)
        row = kc.cache_get(c, kd, kp, 5, n)
        want = [kernel_value(kd, 5, kd, int(c.pex[t]), kp) for t in range(n)]
        np.testing.assert_allclose(row, np.float32(want), rtol=2e-7)
        assert kc.cache_stats(c)["kernel_evals"] == n // 3 + full_row_evals


def test_set_width_moves_rows_in_place():
    # widening and narrowing in random orders, rows scattered over the slots by discards: every
    # row that survives a re-cut keeps its prefix (the rows move within the buffer, no copy)
    rng = np.random.default_rng(11)
    n = 40
    M, kd, kp, c = random_rows_cache(rng, n, 6)
    for _ in range(300):
        op = rng.integers(3)
        width = int(c.meta[kc.WIDTH])
        if op == 0:
            k = int(rng.integers(n))
            kc.cache_get(c, kd, kp, k, int(rng.integers(1, width + 1)))
        elif op == 1:
            kc.cache_discard(c, int(rng.integers(n)))
        else:
            kc.cache_set_width(c, int(rng.integers(1, n + 1)))
        w = int(c.meta[kc.WIDTH])
        for k in range(n):
            s = c.slot_of[k]
            if s >= 0:
                ln = c.length[s]
                assert ln <= w and ln <= c.meta[kc.LONGEST]
                np.testing.assert_array_equal(c.buf[s * w:s * w + ln], M[k, :ln].astype(np.float32))


def _smaps_entry(address):
    """The /proc/self/smaps block of the mapping that holds ``address``."""
    with open("/proc/self/smaps") as f:
        block, inside = [], False
        for line in f:
            head = line.split()[0]
            if "-" in head and all(c in "0123456789abcdef-" for c in head):
                if inside:
                    return block
                lo, hi = (int(v, 16) for v in head.split("-"))
                inside, block = lo <= address < hi, []
            if inside:
                block.append(line)
    return block if inside else []


def test_large_row_storage_asks_for_huge_pages():
    small = kc.row_storage(1000, np.float32)
    assert small.shape == (1000,) and small.dtype == np.float32 and small.flags.writeable
    size = (kc.HUGE_PAGE * 3) // 8 + 5  # float64 entries over three huge pages, not a multiple
    buf = kc.row_storage(size, np.float64)
    assert buf.shape == (size,) and buf.dtype == np.float64 and buf.flags.writeable
    buf[:] = 1.5  # every page writable
    assert buf.sum() == 1.5 * size
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            thp = f.read()
    except OSError:
        pytest.skip("no transparent huge pages on this system")
    if "[never]" in thp or not hasattr(__import__("mmap"), "MADV_HUGEPAGE"):
        pytest.skip("transparent huge pages are off")
    entry = "".join(_smaps_entry(buf.ctypes.data))
    assert "hg" in entry.split("VmFlags:")[1]  # madvise(MADV_HUGEPAGE) reached the mapping
    assert "hg" not in "".join(_smaps_entry(small.ctypes.data)).split("VmFlags:")[1]
