"""Feature storage for kernels: the CSR arrays from the reader, stored densely when that pays.

A kernel row scatters x_a into a dense buffer once, then costs, per target row, its stored
features when the targets are CSR and the full width when they are dense (vectorised about 4
ways). So dense storage wins only above about 1/4 density: usps and ijcnn1 are dense, while
adult (11%: sparse rows measured 2-3x faster than dense), mnist and reuters stay CSR. The choice
is made once, here, for training and prediction alike.

Binary data (every stored value exactly 1) with at most MAX_BIT_WORDS x 64 columns also get
their rows packed as bit sets (kernels.py: a popcount per word and a table lookup per kernel
value). That is a third copy of the rows, and a small one: 16 bytes per row for adult.

Large dense training sets are also kept in single precision (:attr:`KernelData.X32`): once X
no longer fits in the caches a kernel row is bound by memory bandwidth, and half the bytes is
nearly twice the rows. Their values are rounded to
float32 once, at reading; X then holds the rounded values in float64 and the squared norms are
theirs, so training sees one consistent data set, summed in float64 as before. Results differ
from float64 storage only through that rounding (objectives within 1e-6 relative, kernel values
within a unit or two of their float32 cache rounding); data whose values float32 holds exactly
(pixels, counts, binary data) give bit-identical results. ``x_storage`` chooses: "auto" (the
rule below), "float32" (any dense training set) or "float64" (LIBSVM's arithmetic exactly).
Models keep the values as read. Only training data are stored so; prediction and test sets keep
float64. The cost is memory: 12 bytes per cell (X and X32) where CSR takes 12 per stored value.

Memory follows the stored values, not the largest feature index. Kernels work on feature
columns: normally column c is feature index c, but when the index range is wide and sparse
(hashed or text features, indices up to 2^31 - 1) the distinct indices that occur are mapped in
order to columns 0..d-1 (index 0 always keeps column 0, so data whose indices 1..m all occur map
onto themselves) and :attr:`KernelData.cols` keeps the map. Everything sized by a width (dense
X, a kernel row's scatter buffer, bit sets) is then sized by d. Rows of another data set meet
these in kernel rows only after :func:`align` has put them in the same columns: features
without a column are dropped from the dot products and stay in the squared norms, which is
exact, since no row of the reference data has them. Models and files keep the file's indices
(:attr:`Problem.indices`, :func:`row_to_csr`).
"""

import numpy as np

from .kernels import NO_BITS, NO_COLS, NO_X32, NO_XT, PRECOMPUTED, KernelData, compile_rows_for

# Dense when the dense matrix is at most this many bytes and at least this fraction non-zero.
DENSE_MAX_BYTES = 4 << 30
DENSE_MIN_DENSITY = 0.25
# x_storage "auto": single precision once the float64 dense matrix reaches this size (below it,
# X stays in the CPU caches and float64 rows are as fast). Stored densely in single precision
# from this density on (a float32 cell is a third of a CSR entry's 12 bytes, and a dense row
# needs no scatter/gather).
SINGLE_MIN_BYTES = 32 << 20
SINGLE_MIN_DENSITY = 0.125

# Dense data of at most this many columns also keep X transposed (KernelData.XT), for rows
# against every example (kernels.kernel_row_all): a multiply-add down each column beats a dot
# of a few features per example. Sparse real-valued training rows are kept by column as well
# (KernelData.csc): a row against every example then visits only the examples sharing a
# feature, far fewer products on sparse text data.
XT_MAX_COLUMNS = 32
# Bit sets for binary data of at most this many 64-bit words per row (beyond, a CSR gather over
# the few stored features costs less than a popcount over every word).
MAX_BIT_WORDS = 16
# Columns are compacted when the index range is wider than this and at least twice the number
# of distinct indices (data below it keep column = index, as LIBSVM-sized data always do).
COMPACT_MIN_WIDTH = 1 << 16


def _empty_csr():
    return np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float64)


def squared_norms(indptr, values):
    """|x_i|^2 per CSR row, summed in stored order (rows without features, the last ones
    included, give 0)."""
    n = indptr.shape[0] - 1
    rows = np.repeat(np.arange(n), np.diff(indptr))
    return np.bincount(rows, weights=values * values, minlength=n).astype(np.float64)


def choose_dense(n_rows, width, nnz, kernel_type=None):
    if kernel_type == PRECOMPUTED:
        return True
    cells = max(n_rows * width, 1)
    return cells * 8 <= DENSE_MAX_BYTES and nnz / cells >= DENSE_MIN_DENSITY


def pack_bits(indptr, indices, values, width):
    """uint64 [n, words] bit sets of binary rows (bit c of row i: feature c stored), or NO_BITS
    when a stored value is not exactly 1 or the rows need more than MAX_BIT_WORDS words."""
    n = indptr.shape[0] - 1
    if values.size == 0 or not np.all(values == 1.0):
        return NO_BITS
    width = max(int(width), int(indices.max()) + 1)
    words = (width + 63) // 64
    if words > MAX_BIT_WORDS:
        return NO_BITS
    cols = indices.astype(np.int64)
    keys = np.repeat(np.arange(n) * words, np.diff(indptr)) + (cols >> 6)  # flat word index
    vals = np.left_shift(np.uint64(1), (cols & 63).astype(np.uint64))
    if np.any(keys[1:] < keys[:-1]):  # indices not ascending within a row
        order = np.argsort(keys, kind="stable")
        keys, vals = keys[order], vals[order]
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    bits = np.zeros((n, words), np.uint64)
    bits.reshape(-1)[keys[starts]] = np.bitwise_or.reduceat(vals, starts)
    return bits


def feature_columns(indices, width):
    """The map column -> feature index (int32, ascending, starting with index 0) for rows
    with these indices in a space of ``width`` indices, or NO_COLS when column = index."""
    if width <= COMPACT_MIN_WIDTH:
        return NO_COLS
    cols = np.unique(np.concatenate([np.zeros(1, np.int32), np.asarray(indices, np.int32)]))
    if 2 * cols.size > width:
        return NO_COLS
    return cols


def single_precision(n_rows, width, values, kernel_type, x_storage):
    """Whether training rows are stored densely in float32 (module docstring): never for a
    precomputed kernel, binary data (bit sets serve them) or values beyond float32's range."""
    if x_storage == "float64" or kernel_type == PRECOMPUTED or values.size == 0:
        return False
    cells = max(n_rows * width, 1)
    if cells * 12 > DENSE_MAX_BYTES or values.size / cells < SINGLE_MIN_DENSITY:  # X and X32
        return False
    if x_storage == "auto" and cells * 8 < SINGLE_MIN_BYTES:
        return False
    magnitude = np.abs(values)
    return bool(magnitude.max() <= np.finfo(np.float32).max and np.any(values != 1.0))


def kernel_data(indptr, indices, values, width=None, dense=None, kernel_type=None,
                x_storage="float64", training=False):
    """KernelData for CSR rows; ``width`` = number of indices (largest index + 1 by default).

    Wide, sparse index ranges get compacted columns (module docstring); a precomputed kernel
    never does (its features are the serial numbers of the training rows). ``x_storage``:
    see the module docstring (training sets only). ``training``: rows a solver's cache reads,
    which may keep X transposed too (XT_MAX_COLUMNS); test sets never need it."""
    indptr = np.ascontiguousarray(indptr, np.int64)
    indices = np.ascontiguousarray(indices, np.int32)
    values = np.ascontiguousarray(values, np.float64)
    if width is None:
        width = int(indices.max()) + 1 if indices.size else 1
    cols = NO_COLS if kernel_type == PRECOMPUTED else feature_columns(indices, width)
    if cols.size:
        indices = np.searchsorted(cols, indices).astype(np.int32)
        width = cols.size
    single = dense is not False and single_precision(indptr.shape[0] - 1, width, values,
                                                     kernel_type, x_storage)
    if single:
        values = values.astype(np.float32).astype(np.float64)
    return _build(indptr, indices, values, width, True if single else dense, kernel_type, cols,
                  squared_norms(indptr, values), kernel_type != PRECOMPUTED, single, training)


def _build(indptr, indices, values, width, dense, kernel_type, cols, x_sq, with_bits,
           single=False, transposed=False):
    """KernelData of CSR rows whose indices are already columns (< width); ``single``: values
    already rounded to float32, kept as X32 too. The kernel rows' paths it can take are
    compiled (kernels.compile_rows_for)."""
    kd = _stored(indptr, indices, values, width, dense, kernel_type, cols, x_sq, with_bits,
                 single, transposed)
    compile_rows_for(kd)
    return kd


def _stored(indptr, indices, values, width, dense, kernel_type, cols, x_sq, with_bits, single,
            transposed):
    n = indptr.shape[0] - 1
    if dense is None:
        dense = choose_dense(n, width, values.size, kernel_type)
    bits = pack_bits(indptr, indices, values, width) if with_bits else NO_BITS
    if not dense:
        kd = KernelData(np.zeros((0, 0)), indptr, indices, values, x_sq, bits, cols)
        if (transposed and bits.shape[0] == 0 and kernel_type != PRECOMPUTED
                and 2 * 12 * values.size <= DENSE_MAX_BYTES):  # the rows twice, as for XT
            kd = kd._replace(**_by_column(indptr, indices, values, width))
        return kd
    X = np.zeros((max(n, 1) if n == 0 else n, max(width, 1)), np.float64)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    keep = indices < X.shape[1]
    X[rows[keep], indices[keep]] = values[keep]
    if n == 0:
        X = np.zeros((0, 0))
    empty = _empty_csr()
    X32 = X.astype(np.float32) if single and n > 0 else NO_X32
    XT = _transposed(X, kernel_type) if transposed else NO_XT
    return KernelData(X, empty[0], empty[1], empty[2], x_sq, bits, cols, X32, XT)


def _by_column(indptr, indices, values, width):
    """KernelData's csc field for CSR rows (training rows of sparse real-valued data: a row
    against every example then visits only the examples that share a feature with it;
    kernels.kernel_row_all): [d, column starts, row numbers, values], rows ascending within
    each column (a stable sort)."""
    order = np.argsort(indices, kind="stable")
    counts = np.bincount(indices, minlength=width)
    ptr = np.zeros(counts.size + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    rows = np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int64), np.diff(indptr))
    return dict(csc=np.concatenate([[counts.size], ptr, rows[order], values[order]]).astype(
        np.float64))


def _transposed(X, kernel_type):
    """KernelData.XT for dense rows X (NO_XT when not worth it, for a precomputed kernel, or
    when X and its copy would pass DENSE_MAX_BYTES)."""
    if (kernel_type == PRECOMPUTED or X.shape[0] == 0 or X.shape[1] > XT_MAX_COLUMNS
            or 2 * X.nbytes > DENSE_MAX_BYTES):
        return NO_XT
    return np.ascontiguousarray(X.T)


def n_columns(kd):
    """Width of kd's column space: what a row's scatter buffer may need."""
    if kd.cols.size:
        return kd.cols.size
    if kd.X.shape[0] > 0:
        return kd.X.shape[1]
    return int(kd.indices.max()) + 1 if kd.indices.size else 0


def original_csr(kd):
    """(indptr, indices, values) of every row of kd, with the file's feature indices (stored
    zeros of dense rows are not listed)."""
    if kd.X.shape[0] > 0:
        rows, c = np.nonzero(kd.X)
        values = kd.X[rows, c]
        indptr = np.zeros(kd.X.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=kd.X.shape[0]), out=indptr[1:])
        indices = c.astype(np.int32)
    else:
        indptr, indices, values = kd.indptr, kd.indices, kd.values
    if kd.cols.size:
        indices = kd.cols[indices]
    return indptr, indices, values


def kernel_data_like(ref, indptr, indices, values, x_sq=None):
    """Rows with the file's indices as KernelData in ref's columns and storage (dense when ref
    is), for kernel rows against ref's rows: a feature ref has no column for is dropped from
    the dot products and kept in the squared norm (x_sq, computed from ``values`` by
    default). Bit sets only when no feature was dropped (a popcount of |u-v|^2 needs all)."""
    indptr = np.ascontiguousarray(indptr, np.int64)
    indices = np.ascontiguousarray(indices, np.int32)
    values = np.ascontiguousarray(values, np.float64)
    if x_sq is None:
        x_sq = squared_norms(indptr, values)
    width = n_columns(ref)
    if ref.cols.size:
        pos = np.searchsorted(ref.cols, indices)
        keep = ref.cols[np.minimum(pos, width - 1)] == indices
        indices = pos.astype(np.int32)
    else:
        keep = indices < width
    if not keep.all():
        rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))[keep]
        indptr = np.zeros_like(indptr)
        np.cumsum(np.bincount(rows, minlength=indptr.shape[0] - 1), out=indptr[1:])
        indices, values = indices[keep], values[keep]
    with_bits = ref.bits.shape[0] > 0 and bool(keep.all())
    return _build(indptr, indices, values, width, ref.X.shape[0] > 0, None, ref.cols, x_sq,
                  with_bits)


def align(kd, ref, kernel_type=None):
    """kd's rows in the columns of ref, for kernel rows between the two (test rows against a
    model's SVs): kd itself when the two already share their columns and kd is not wider than
    ref (or than COMPACT_MIN_WIDTH), else :func:`kernel_data_like` of kd's rows."""
    if kernel_type == PRECOMPUTED:
        return kd
    if kd.cols.size == 0 and ref.cols.size == 0:
        if kd.X.shape[0] > 0 or n_columns(kd) <= max(n_columns(ref), COMPACT_MIN_WIDTH):
            return kd
    elif kd.cols is ref.cols or np.array_equal(kd.cols, ref.cols):
        return kd
    return kernel_data_like(ref, *original_csr(kd), x_sq=kd.x_sq)


def csr_take(indptr, indices, values, rows):
    """CSR arrays (indptr, indices, values) of the given rows of a CSR matrix, in that order."""
    rows = np.asarray(rows, np.int64)
    starts, stops = indptr[rows], indptr[rows + 1]
    out = np.zeros(rows.size + 1, np.int64)
    np.cumsum(stops - starts, out=out[1:])
    take = np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)]) if rows.size else \
        np.zeros(0, np.int64)
    return out, indices[take], values[take]


def subset(kd, rows):
    """KernelData holding the given rows (used by one-vs-one sub-problems and CV folds)."""
    rows = np.asarray(rows, np.int64)
    if kd.X.shape[0] > 0:
        e = _empty_csr()
        X32 = np.ascontiguousarray(kd.X32[rows]) if kd.X32.shape[0] > 0 else NO_X32
        XT = np.ascontiguousarray(kd.XT[:, rows]) if kd.XT.shape[0] > 0 else NO_XT
        return KernelData(np.ascontiguousarray(kd.X[rows]), e[0], e[1], e[2], kd.x_sq[rows].copy(),
                          _rows_of(kd.bits, rows), kd.cols, X32, XT)
    indptr, indices, values = csr_take(kd.indptr, kd.indices, kd.values, rows)
    sub = KernelData(kd.X, indptr, indices, values, kd.x_sq[rows].copy(),
                     _rows_of(kd.bits, rows), kd.cols)
    if kd.csc.shape[0] > 0:
        sub = sub._replace(**_by_column(sub.indptr, sub.indices, sub.values, int(kd.csc[0])))
    return sub


def _rows_of(bits, rows):
    return np.ascontiguousarray(bits[rows]) if bits.shape[0] > 0 else NO_BITS


def row_to_csr(kd, i):
    """(indices, values) of row i with the file's indices, whichever storage (for writing SVs
    into model files)."""
    if kd.X.shape[0] > 0:
        nz = np.flatnonzero(kd.X[i])
        idx, val = nz.astype(np.int32), kd.X[i, nz]
    else:
        lo, hi = kd.indptr[i], kd.indptr[i + 1]
        idx, val = kd.indices[lo:hi], kd.values[lo:hi]
    return (kd.cols[idx] if kd.cols.size else idx), val


class Problem:
    """A training set: labels, the rows as read (CSR with the file's indices, for writing SVs)
    and their kernel storage (columns compacted for wide index ranges, see the module)."""

    def __init__(self, y, indptr, indices, values, max_index, kernel_type=None, dense=None,
                 x_storage="auto"):
        self.y = np.asarray(y, np.float64)
        self.indptr = np.asarray(indptr, np.int64)
        self.indices = np.asarray(indices, np.int32)
        self.values = np.asarray(values, np.float64)
        self.max_index = int(max_index)
        self.kd = kernel_data(self.indptr, self.indices, self.values, width=self.max_index + 1,
                              dense=dense, kernel_type=kernel_type, x_storage=x_storage,
                              training=True)

    @classmethod
    def from_svmlight(cls, data, kernel_type=None, dense=None, x_storage="auto"):
        return cls(data.y, data.indptr, data.indices, data.values, data.max_index,
                   kernel_type=kernel_type, dense=dense, x_storage=x_storage)

    @property
    def n(self):
        return self.y.shape[0]

    def csr_rows(self, rows):
        """CSR arrays (indptr, indices, values) of the given rows, in that order."""
        return csr_take(self.indptr, self.indices, self.values, rows)


def sv_arrays(problem, kernel_type, sv_rows):
    """CSR arrays of the support vectors ``sv_rows`` of ``problem`` for a model (LIBSVM stores
    only 0:serial for a precomputed kernel)."""
    if kernel_type == PRECOMPUTED:
        n = sv_rows.size
        values = problem.kd.X[sv_rows, 0].copy() if n else np.zeros(0)
        return np.arange(n + 1, dtype=np.int64), np.zeros(n, np.int32), values
    return problem.csr_rows(sv_rows)
