"""Feature storage for kernels: the CSR arrays from the reader, stored densely when that pays.

A kernel row scatters x_a into a dense buffer once, then costs, per target row, its stored
features when the targets are CSR and the full width when they are dense (vectorised about 4
ways). So dense storage wins only above about 1/4 density: usps and ijcnn1 are dense, while
adult (11%: sparse rows measured 2-3x faster than dense), mnist and reuters stay CSR. The choice
is made once, here, for training and prediction alike.

Binary data (every stored value exactly 1) with at most MAX_BIT_WORDS x 64 columns also get
their rows packed as bit sets (kernels.py: a popcount per word and a table lookup per kernel
value). That is a third copy of the rows, and a small one: 16 bytes per row for adult.
"""

import numpy as np

from .kernels import NO_BITS, PRECOMPUTED, KernelData

# Dense when the dense matrix is at most this many bytes and at least this fraction non-zero.
DENSE_MAX_BYTES = 4 << 30
DENSE_MIN_DENSITY = 0.25
# Bit sets for binary data of at most this many 64-bit words per row (beyond, a CSR gather over
# the few stored features costs less than a popcount over every word).
MAX_BIT_WORDS = 16


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


def kernel_data(indptr, indices, values, width=None, dense=None, kernel_type=None):
    """KernelData for CSR rows; ``width`` = number of columns (largest index + 1 by default)."""
    indptr = np.ascontiguousarray(indptr, np.int64)
    indices = np.ascontiguousarray(indices, np.int32)
    values = np.ascontiguousarray(values, np.float64)
    n = indptr.shape[0] - 1
    if width is None:
        width = int(indices.max()) + 1 if indices.size else 1
    if dense is None:
        dense = choose_dense(n, width, values.size, kernel_type)
    x_sq = squared_norms(indptr, values)
    bits = NO_BITS if kernel_type == PRECOMPUTED else pack_bits(indptr, indices, values, width)
    if not dense:
        return KernelData(np.zeros((0, 0)), indptr, indices, values, x_sq, bits)
    X = np.zeros((max(n, 1) if n == 0 else n, max(width, 1)), np.float64)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    keep = indices < X.shape[1]
    X[rows[keep], indices[keep]] = values[keep]
    if n == 0:
        X = np.zeros((0, 0))
    empty = _empty_csr()
    return KernelData(X, empty[0], empty[1], empty[2], x_sq, bits)


def subset(kd, rows):
    """KernelData holding the given rows (used by one-vs-one sub-problems and CV folds)."""
    rows = np.asarray(rows, np.int64)
    if kd.X.shape[0] > 0:
        e = _empty_csr()
        return KernelData(np.ascontiguousarray(kd.X[rows]), e[0], e[1], e[2], kd.x_sq[rows].copy(),
                          _rows_of(kd.bits, rows))
    starts, stops = kd.indptr[rows], kd.indptr[rows + 1]
    lengths = stops - starts
    indptr = np.zeros(rows.size + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    take = np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)]) if rows.size else \
        np.zeros(0, np.int64)
    return KernelData(kd.X, indptr, kd.indices[take].copy(), kd.values[take].copy(),
                      kd.x_sq[rows].copy(), _rows_of(kd.bits, rows))


def _rows_of(bits, rows):
    return np.ascontiguousarray(bits[rows]) if bits.shape[0] > 0 else NO_BITS


def row_to_csr(kd, i):
    """(indices, values) of row i, whichever storage (for writing SVs into model files)."""
    if kd.X.shape[0] > 0:
        nz = np.flatnonzero(kd.X[i])
        return nz.astype(np.int32), kd.X[i, nz]
    lo, hi = kd.indptr[i], kd.indptr[i + 1]
    return kd.indices[lo:hi], kd.values[lo:hi]


class Problem:
    """A training set: labels, the rows as read (CSR, for writing SVs) and their kernel storage."""

    def __init__(self, y, indptr, indices, values, max_index, kernel_type=None, dense=None):
        self.y = np.asarray(y, np.float64)
        self.indptr = np.asarray(indptr, np.int64)
        self.indices = np.asarray(indices, np.int32)
        self.values = np.asarray(values, np.float64)
        self.max_index = int(max_index)
        self.kd = kernel_data(self.indptr, self.indices, self.values, width=self.max_index + 1,
                              dense=dense, kernel_type=kernel_type)

    @classmethod
    def from_svmlight(cls, data, kernel_type=None, dense=None):
        return cls(data.y, data.indptr, data.indices, data.values, data.max_index,
                   kernel_type=kernel_type, dense=dense)

    @property
    def n(self):
        return self.y.shape[0]

    def csr_rows(self, rows):
        """CSR arrays (indptr, indices, values) of the given rows, in that order."""
        rows = np.asarray(rows, np.int64)
        starts, stops = self.indptr[rows], self.indptr[rows + 1]
        indptr = np.zeros(rows.size + 1, np.int64)
        np.cumsum(stops - starts, out=indptr[1:])
        if rows.size == 0:
            return indptr, np.zeros(0, np.int32), np.zeros(0, np.float64)
        take = np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)])
        return indptr, self.indices[take], self.values[take]
