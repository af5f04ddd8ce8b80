"""The training file as a row source for every stream (``svm-train --stream``): blocks read
in file order (:class:`RowSource`), where each begins (so that a saved stream reads on from
there), the labels met, and the pieces every stream's dense slot store shares: its columns
(the feature indices seen, in ascending order, so that memory follows the features that occur
and a dot product sums in LIBSVM's order), its growth, the zeros stored in its rows
(:class:`StoredZeros`) and the model's sparse support vectors (:func:`sv_rows`). The streams
(solvers/lasvm_stream.py, lasvm_g_stream.py, lasvm_ovr_stream.py, s2do_stream.py) are each a
run fed by this source."""

import numpy as np

from ..base.errors import InputFormatError
from ..io.svmlight import iter_svmlight, open_binary
from ..numerics import kernels
from ..numerics.data import squared_norms
from ..numerics.kernels import KernelData, compile_rows_for


class StreamError(ValueError):
    pass


class RowSource:
    """The training file read in blocks, in file order: each block's rows numbered (0-based
    file rows), their labels checked (:class:`Labels`), and where the block begins, (byte
    offset, line, first row), so that a saved stream reads on from there. ``start``: that
    position (a resumed stream), ``labels``: the labels seen before it; ``two_classes``
    False: the labels are not checked (a one-vs-rest stream takes any number)."""

    def __init__(self, source, *, zero_based=False, chunk_bytes=1 << 22, start=(0, 1, 0),
                 labels=(), two_classes=True):
        self.source = source
        self.labels = None  # any number of classes (``two_classes`` False): no labels kept
        if two_classes:
            self.labels = Labels(source)
            self.labels.seen = [int(v) for v in labels]
        self.n_rows = int(start[2])
        self._positions = []
        # rows whose squared norm would overflow the kernels are input errors (FILE:LINE), as
        # in memory
        self._blocks = iter_svmlight(source, zero_based=zero_based, chunk_bytes=chunk_bytes,
                                     check_norms=True, start=(int(start[0]), int(start[1])),
                                     positions=self._positions)

    def next(self):
        """(block, position) of the next block, or None at the end of the file; block = (y,
        indptr, indices, values, rowid), position = (byte offset, line, first row)."""
        data = next(self._blocks, None)
        if data is None:
            return None
        rowid = np.arange(self.n_rows, self.n_rows + data.n, dtype=np.int64)
        position = self._positions[-1] + (self.n_rows,)
        self.n_rows += data.n
        if self.labels is not None:
            self.labels.add(data.y, rowid)
        return (data.y, data.indptr, data.indices, data.values, rowid), position


class Labels:
    """The two class labels, LIBSVM's order: first occurrence, {-1,+1} swapped."""

    def __init__(self, source):
        self.source = source
        self.seen = []  # int labels in order of first occurrence

    def add(self, y, rowid):
        lab = np.trunc(y).astype(np.int64)
        u, first = np.unique(lab, return_index=True)
        for v, f in sorted(zip(u.tolist(), first.tolist()), key=lambda t: t[1]):
            if v in self.seen:
                continue
            if len(self.seen) == 2:
                line = line_of_row(self.source, int(rowid[f]))
                raise InputFormatError(
                    self.source if isinstance(self.source, str) else str(self.source), line,
                    f"--stream supports two classes: third label {v} after "
                    f"{self.seen[0]} and {self.seen[1]} (more classes stream with "
                    "--multiclass ovr --solver lasvm or --multiclass llw|cs --solver online)",
                    None)
            self.seen.append(v)
        return lab

    def order(self):
        return label_order(self.seen)


def label_order(seen):
    """The model's labels: LIBSVM's order of first appearance, except that {-1, +1} in that
    order is written +1 first, as svm_group_classes does."""
    lab = list(seen)
    if len(lab) == 2 and lab[0] == -1 and lab[1] == 1:
        lab = lab[::-1]
    return np.array(lab, np.int64)


class StoredZeros:
    """Entries stored with the value 0 (``3:0``) in the rows a stream's store holds. LIBSVM
    writes them in a model's SVs, as the in-memory path does, but the dense store cannot tell
    them from absent features. They are kept by file row, and only while their row is in the
    store, so that memory stays bounded by the store."""

    def __init__(self):
        self.by_row = {}   # file row in the store -> its feature indices stored as 0
        self.block = {}    # the same for the rows of the block being trained on
        self.block_rows = np.zeros(0, np.int64)  # the block's keys

    def offer(self, indptr, indices, values, rowid):
        """The block about to be trained on (CSR rows, their file rows)."""
        zero = np.flatnonzero(values == 0.0)
        rows = np.searchsorted(indptr, zero, side="right") - 1
        cut = np.flatnonzero(np.diff(rows)) + 1
        self.block = {int(rowid[r[0]]): indices[z] for r, z in
                      zip(np.split(rows, cut), np.split(zero, cut)) if r.size}
        self.block_rows = np.fromiter(self.block, np.int64, len(self.block))

    def keep(self, store_rowid):
        """After a compiled call: keep the rows now in the store (its slots' file rows)."""
        if not self.by_row and not self.block:
            return
        live = store_rowid[store_rowid >= 0]
        if self.by_row:
            rows = np.fromiter(self.by_row, np.int64, len(self.by_row))
            for r in rows[~np.isin(rows, live)].tolist():
                del self.by_row[r]
        for r in self.block_rows[np.isin(self.block_rows, live)].tolist():
            self.by_row[r] = self.block[r]

    def arrays(self):
        """The rows held, as a state file's arrays: file rows, offsets, feature indices."""
        rows = np.fromiter(self.by_row, np.int64, len(self.by_row))
        idx = [np.asarray(self.by_row[r], np.int64) for r in rows.tolist()]
        return dict(zero_rows=rows,
                    zero_ptr=np.cumsum([0] + [a.size for a in idx]).astype(np.int64),
                    zero_idx=np.concatenate(idx) if idx else np.zeros(0, np.int64))

    @classmethod
    def from_arrays(cls, d):
        """The rows held of a state file's :meth:`arrays` (no block being trained on)."""
        zeros = cls()
        zr, zp, zi = (np.asarray(d[k], np.int64) for k in ("zero_rows", "zero_ptr", "zero_idx"))
        zeros.by_row = {int(r): zi[zp[k]:zp[k + 1]].astype(np.int32)
                        for k, r in enumerate(zr.tolist())}
        return zeros


def sv_rows(X, svs, features, zeros=None, rowid=None):
    """The stored rows ``svs`` of the dense slot matrix ``X`` (columns: the feature indices
    ``features``) as a model's CSR SVs: (indptr, indices, values), zeros left out except the
    entries ``zeros`` (StoredZeros) holds for their file rows ``rowid[svs]``."""
    Xs = X[svs]
    nz = Xs != 0.0
    if zeros is not None and zeros.by_row:
        for i, r in enumerate(rowid[svs].tolist()):
            f = zeros.by_row.get(r)
            if f is not None:
                nz[i, np.searchsorted(features, f)] = True
    indptr = np.zeros(svs.size + 1, np.int64)
    np.cumsum(nz.sum(axis=1), out=indptr[1:])
    rows, cols = np.nonzero(nz)
    return indptr, features[cols].astype(np.int32), Xs[rows, cols]


def check_one_pass(p):
    """What no streamed run can do, whichever solver: the whole file before training
    (precomputed kernels, the default gamma), more than one pass, -b 1's folds."""
    if p.kernel_type == kernels.PRECOMPUTED:
        raise StreamError("--stream does not support precomputed kernels (-t 4)")
    if p.kernel_type in (1, 2, 3) and p.gamma == 0:
        raise StreamError("--stream needs -g: the default gamma 1/num_features needs the whole "
                          "file before training")
    if p.epochs != 1:
        raise StreamError("--stream makes one pass over the file (--epochs must be 1)")
    if p.probability:
        raise StreamError("--stream does not support probability estimates (-b 1)")


def line_of_row(source, row):
    """1-based line of the 0-based data row ``row`` (full-line # comments are not rows)."""
    k = -1
    with open_binary(source) as f:
        for lineno, line in enumerate(f, 1):
            if line.lstrip().startswith(b"#"):
                continue
            k += 1
            if k == row:
                return lineno
    return None


def dense_kd(X, xsq):
    """KernelData over a dense slot store: its rows X and their squared norms (the kernel
    rows' parallel path compiled once the store is large enough for it)."""
    kd = KernelData(X, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0), xsq)
    compile_rows_for(kd)
    return kd


def rows_over(features, indptr, indices, values):
    """KernelData of CSR rows (feature indices as in the file) over a store's columns
    ``features`` (features the store has not seen dropped: their columns are zero in every
    stored row)."""
    n = indptr.size - 1
    X = np.zeros((n, max(features.size, 1)))
    row = np.repeat(np.arange(n), np.diff(indptr))
    at = np.searchsorted(features, indices)
    known = (at < features.size) & (features[np.minimum(at, features.size - 1)] == indices) \
        if features.size else np.zeros(indices.size, bool)
    X[row[known], at[known]] = values[known]
    return dense_kd(X, squared_norms(indptr, values))


def widen(X, features, indices):
    """(X, features, the columns of ``indices``): the feature indices not seen before inserted
    as columns of X, in order (old columns move right; cached rows stay valid: every dot
    product keeps its terms and their order, the new columns hold zeros). ``features``: the
    feature index of each column."""
    seen = np.union1d(features, indices)
    if seen.size > features.size:
        wider = np.zeros((X.shape[0], seen.size))
        wider[:, np.searchsorted(seen, features)] = X[:, :features.size]
        X, features = wider, seen
    return X, features, np.searchsorted(features, indices).astype(np.int32)


def grown(a, cap, fill=0):
    """``a`` (rows first) grown to ``cap`` rows, the new ones set to ``fill``."""
    out = np.full((cap,) + a.shape[1:], fill, a.dtype)
    out[:a.shape[0]] = a
    return out


def grown_free(free, nfree, old_cap, cap):
    """(free list, count) of a store grown from old_cap to cap slots: the new slots go under
    the old free ones, so the old are used first."""
    extra = np.arange(cap - 1, old_cap - 1, -1, dtype=np.int64)
    out = np.zeros(cap, np.int64)
    out[:extra.size] = extra
    out[extra.size:extra.size + nfree] = free[:nfree]
    return out, nfree + extra.size
