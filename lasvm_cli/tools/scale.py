"""svm-scale's logic (LIBSVM 3.37 ``svm-scale.c``), as a library: no argv, no exits.

The data file is read once with :func:`read_svmlight` (``zero_based=True``, so bad input gives
a ``FILE:LINE`` error instead of LIBSVM's silent misreads), then the three passes of
svm-scale.c run on the arrays:

* ranges: for every index ``1..max_index`` the min and max over all rows, where a row that
  does not list a feature contributes a 0 (index 0 only gets its listed values); labels too.
  ``max_index`` also covers the indices of a ``-r`` file. Ties between ``0.0`` and ``-0.0``
  resolve as C's ``max``/``min`` macros do (the later one wins). The arrays hold one entry per
  index that occurs in the data or the range file (an index that occurs in neither is constant
  0, which svm-scale neither writes nor scales), so memory follows the data, not max_index
  (indices up to 2^31 - 1).
* restore (``-r``) or save (``-s``) the ranges;
* output, as produced: label ``%.17g``, then ``index:%g`` for every non-constant feature whose
  scaled value is not 0 (a value equal to the min/max maps to exactly lower/upper), each
  followed by a space, then a newline.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np
from numba import njit
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)

from ..base.errors import LasvmError
from ..io.range_file import ScaleFileError, read_range_file, write_range_file
from ..io.svmlight import read_svmlight

__all__ = ["ScaleError", "ScaleFileError", "ScaleResult", "scale_file"]

DBL_MAX = np.finfo(np.float64).max


class ScaleError(LasvmError):
    """svm-scale failures with LIBSVM's message (``can't open file X``)."""


@dataclass
class ScaleResult:
    num_nonzeros: int
    new_num_nonzeros: int


@njit(cache=True)
def _ranges(y, indptr, col, values, n_feat):
    """svm-scale pass 2: (feature_min, feature_max, y_min, y_max) with C's tie rules, per
    feature column (``col``: the column of each stored value; column 0 is index 0, every other
    column a feature index >= 1)."""
    n = y.shape[0]
    fmin = np.full(n_feat, DBL_MAX)
    fmax = np.full(n_feat, -DBL_MAX)
    count = np.zeros(n_feat, dtype=np.int64)
    last_present = np.full(n_feat, -1, dtype=np.int64)
    run = np.zeros(n_feat, dtype=np.int64)  # consecutive rows ending at last_present
    last_zero_row = np.full(n_feat, -1, dtype=np.int64)
    last_zero_val = np.zeros(n_feat)
    y_min = DBL_MAX
    y_max = -DBL_MAX
    for r in range(n):
        t = y[r]
        y_max = y_max if y_max > t else t
        y_min = y_min if y_min < t else t
        for k in range(indptr[r], indptr[r + 1]):
            i = col[k]
            v = values[k]
            fmax[i] = fmax[i] if fmax[i] > v else v
            fmin[i] = fmin[i] if fmin[i] < v else v
            count[i] += 1
            if last_present[i] == r - 1:
                run[i] += 1
            else:
                run[i] = 1
            last_present[i] = r
            if v == 0.0:
                last_zero_row[i] = r
                last_zero_val[i] = v
    # rows that do not list feature i >= 1 contribute an implicit +0.0
    for i in range(1, n_feat):
        if count[i] >= n:
            continue
        if last_present[i] != n - 1:
            last_missing = n - 1
        else:
            last_missing = n - 1 - run[i]
        if not fmax[i] > 0.0:
            if fmax[i] < 0.0 or last_missing > last_zero_row[i]:
                fmax[i] = 0.0
            else:
                fmax[i] = last_zero_val[i]
        if not fmin[i] < 0.0:
            if fmin[i] > 0.0 or last_missing > last_zero_row[i]:
                fmin[i] = 0.0
            else:
                fmin[i] = last_zero_val[i]
    return fmin, fmax, y_min, y_max


@njit(cache=True, inline="always")
def _scaled(v, lo, hi, lower, upper):
    if v == lo:
        return lower
    if v == hi:
        return upper
    return lower + (upper - lower) * (v - lo) / (hi - lo)


@njit(cache=True)
def _scale_rows(indptr, indices, col, values, r0, r1, fmin, fmax, lower, upper, zidx, zval):
    """Scaled nonzero entries of rows r0..r1-1: (ptr, idx, val), ptr relative to the block.

    ``col``: the feature column of each stored value (its min/max in fmin/fmax).
    ``zidx``/``zval``: the features (ascending indices >= 1) whose implicit 0 scales to
    non-zero, and that value; they are merged with the row's listed entries.
    """
    nr = r1 - r0
    cap = (indptr[r1] - indptr[r0]) + nr * zidx.shape[0]
    ptr = np.zeros(nr + 1, dtype=np.int64)
    oidx = np.empty(cap, dtype=np.int64)
    oval = np.empty(cap, dtype=np.float64)
    m = 0
    nz = zidx.shape[0]
    for r in range(r0, r1):
        k = indptr[r]
        kend = indptr[r + 1]
        z = 0
        while k < kend or z < nz:
            if k < kend and (z >= nz or indices[k] <= zidx[z]):
                i = indices[k]
                if z < nz and zidx[z] == i:
                    z += 1
                lo = fmin[col[k]]
                hi = fmax[col[k]]
                k += 1
                if hi == lo:
                    continue
                s = _scaled(values[k - 1], lo, hi, lower, upper)
            else:
                i = zidx[z]
                s = zval[z]
                z += 1
            if s != 0.0:
                oidx[m] = i
                oval[m] = s
                m += 1
        ptr[r - r0 + 1] = m
    return ptr, oidx[:m].copy(), oval[:m].copy()


_P10 = np.array([10.0**k for k in range(23)], dtype=np.float64)


@njit(cache=True)
def _put_uint(buf, m, x):
    """Write the decimal digits of x >= 0 at buf[m:]; return the new end."""
    if x == 0:
        buf[m] = 48
        return m + 1
    k = 0
    t = x
    while t > 0:
        k += 1
        t //= 10
    end = m + k
    t = x
    for j in range(k):
        buf[end - 1 - j] = 48 + t % 10
        t //= 10
    return end


@njit(cache=True)
def _put_g(buf, m, v):
    """Write C's ``%g`` of v at buf[m:]; return the new end, or -1 when v needs the exact
    (slow) path: values near a rounding tie, huge/tiny magnitudes or non-finite values."""
    if v == 0.0:
        if np.signbit(v):
            buf[m] = 45
            m += 1
        buf[m] = 48
        return m + 1
    a = abs(v)
    if not (1e-280 < a < 1e280):
        return -1
    e = int(np.floor(np.log10(a)))
    r = 0
    for _ in range(4):
        p = 5 - e
        if p == 0:
            t = a
        elif 0 < p <= 22:
            t = a * _P10[p]
        elif -22 <= p < 0:
            t = a / _P10[-p]
        elif p > 22:
            t = a * 10.0**p
        else:
            t = a / 10.0 ** (-p)
        if t >= 1e6:
            e += 1
            continue
        if t < 1e5:
            e -= 1
            continue
        n = np.floor(t)
        frac = t - n
        if abs(frac - 0.5) < 1e-7:
            return -1
        r = int(n)
        if frac > 0.5:
            r += 1
        if r == 1000000:
            r = 100000
            e += 1
        break
    if r == 0:
        return -1
    if v < 0:
        buf[m] = 45
        m += 1
    # six digits of r, trailing zeros dropped
    digits = np.empty(6, dtype=np.uint8)
    t = r
    for j in range(6):
        digits[5 - j] = 48 + t % 10
        t //= 10
    nd = 6
    while nd > 1 and digits[nd - 1] == 48:
        nd -= 1
    if -4 <= e < 6:
        if e >= 0:
            for j in range(e + 1):
                buf[m] = digits[j] if j < nd else 48
                m += 1
            if nd > e + 1:
                buf[m] = 46
                m += 1
                for j in range(e + 1, nd):
                    buf[m] = digits[j]
                    m += 1
        else:
            buf[m] = 48
            buf[m + 1] = 46
            m += 2
            for _ in range(-e - 1):
                buf[m] = 48
                m += 1
            for j in range(nd):
                buf[m] = digits[j]
                m += 1
    else:
        buf[m] = digits[0]
        m += 1
        if nd > 1:
            buf[m] = 46
            m += 1
            for j in range(1, nd):
                buf[m] = digits[j]
                m += 1
        buf[m] = 101
        buf[m + 1] = 45 if e < 0 else 43
        m += 2
        x = abs(e)
        if x < 10:
            buf[m] = 48
            m += 1
        m = _put_uint(buf, m, x)
    return m


@njit(cache=True)
def _render(lab, lab_off, ptr, oidx, oval):
    """Rows as bytes: label, ' ', then 'index:%g ' per entry, then a newline.

    Returns (bytes, row_end offsets, rows that need the exact Python path)."""
    nr = ptr.shape[0] - 1
    cap = lab.shape[0] + nr * 2 + oidx.shape[0] * 26
    buf = np.empty(cap, dtype=np.uint8)
    row_end = np.empty(nr, dtype=np.int64)
    bad = np.zeros(nr, dtype=np.bool_)
    m = 0
    for r in range(nr):
        for k in range(lab_off[r], lab_off[r + 1]):
            buf[m] = lab[k]
            m += 1
        buf[m] = 32
        m += 1
        for k in range(ptr[r], ptr[r + 1]):
            m = _put_uint(buf, m, oidx[k])
            buf[m] = 58
            m2 = _put_g(buf, m + 1, oval[k])
            if m2 < 0:
                bad[r] = True
                m2 = m + 1
            m = m2
            buf[m] = 32
            m += 1
        buf[m] = 10
        m += 1
        row_end[r] = m
    return buf[:m].copy(), row_end, bad


def _format_rows_py(labels, ptr, oidx, oval):
    idx = oidx.tolist()
    val = oval.tolist()
    p = ptr.tolist()
    out = []
    for r, label in enumerate(labels):
        a, b = p[r], p[r + 1]
        args = [label]
        for k in range(a, b):
            args.append(idx[k])
            args.append(val[k])
        out.append(("%.17g " + "%d:%g " * (b - a) + "\n") % tuple(args))
    return out


def _format_block(labels, ptr, oidx, oval) -> bytes:
    """The bytes svm-scale prints for a block of rows (``printf("%.17g ")``, ``"%d:%g "``)."""
    strs = ["%.17g" % t for t in labels]
    lab = "".join(strs).encode("ascii")
    lab_off = np.zeros(len(strs) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in strs], out=lab_off[1:])
    data, row_end, bad = _render(np.frombuffer(lab, dtype=np.uint8), lab_off, ptr, oidx, oval)
    if not bad.any():
        return data.tobytes()
    # rare: some value needs exact rounding; redo those rows with Python's formatting
    pieces = []
    start = 0
    for r in range(len(strs)):
        end = int(row_end[r])
        if bad[r]:
            pieces.append(_format_rows_py([labels[r]], ptr[r : r + 2] - ptr[r],
                                          oidx[ptr[r] : ptr[r + 1]],
                                          oval[ptr[r] : ptr[r + 1]])[0].encode("ascii"))
        else:
            pieces.append(data[start:end].tobytes())
        start = end
    return b"".join(pieces)


def _emit(out, data: bytes):
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        out.flush()
        buffer.write(data)
    else:
        out.write(data.decode("ascii"))


def scale_file(data_path, out, err=None, *, lower=-1.0, upper=1.0, y_range=None,
               save_path=None, restore_path=None, block_rows=4096) -> ScaleResult:
    """Scale ``data_path`` as ``svm-scale`` does, writing the data to the text stream ``out``
    as it is produced and warnings to ``err`` (default sys.stderr).

    ``y_range`` is ``(y_lower, y_upper)`` or None. Option checks (lower < upper, -r with -s)
    belong to the caller. Raises ScaleError / ScaleFileError / InputFormatError.
    """
    if err is None:
        err = sys.stderr
    data_name = os.fspath(data_path)
    if not os.path.isfile(data_name) or not os.access(data_name, os.R_OK):
        raise ScaleError(f"can't open file {data_name}")
    if save_path is not None:
        from ..io.atomic import output_problem

        problem = output_problem(save_path)
        if problem:
            raise ScaleError(f"can't open file {os.fspath(save_path)}: {problem}")
    rng = None
    max_index = 0
    if restore_path is not None:
        try:
            rng = read_range_file(restore_path)
        except OSError:
            raise ScaleError(f"can't open file {os.fspath(restore_path)}") from None
        max_index = max(max_index, rng.max_index)
    try:
        data = read_svmlight(data_name, zero_based=True)
    except OSError:
        raise ScaleError(f"can't open file {data_name}") from None
    max_index = max(max_index, data.max_index)
    num_nonzeros = int(data.indices.shape[0])
    min_index = min(1, int(data.indices.min())) if num_nonzeros else 1
    if min_index < 1:
        err.write(f"WARNING: minimal feature index is {min_index}, but indices should start "
                  "from 1\n")

    # Feature columns: 0 (index 0), then the indices >= 1 of the data and of the range file,
    # ascending. svm-scale sizes its arrays by max_index; any other index in 1..max_index is
    # constant 0 (so neither written, nor scaled, nor warned about) unless the data are empty,
    # where every index gets LIBSVM's treatment of an unseen feature.
    if data.n == 0:
        feats = np.arange(max_index + 1, dtype=np.int64)
    else:
        listed = [idx for idx, _, _ in rng.features if 0 <= idx <= max_index] if rng else []
        feats = np.unique(np.concatenate([np.zeros(1, np.int64), data.indices.astype(np.int64),
                                          np.array(listed, np.int64)]))
    col = np.searchsorted(feats, data.indices).astype(np.int64)
    fmin, fmax, y_min, y_max = _ranges(data.y, data.indptr, col, data.values, feats.shape[0])
    y_scaling = y_range is not None
    y_lower, y_upper = (y_range if y_scaling else (0.0, 0.0))

    if rng is not None:
        if rng.y is not None:
            y_lower, y_upper, y_min, y_max = rng.y
            y_scaling = True
        if rng.x is not None:
            lower, upper = rng.x
            restore_name = os.fspath(restore_path)
            next_index = 1
            for idx, lo, hi in rng.features:
                if idx < 0 or idx > max_index:
                    continue
                gap = range(np.searchsorted(feats, next_index), np.searchsorted(feats, idx))
                for c in gap:
                    _unseen(err, fmin, fmax, c, feats, data_name, restore_name)
                c = np.searchsorted(feats, idx)
                fmin[c] = lo
                fmax[c] = hi
                next_index = idx + 1
            for c in range(np.searchsorted(feats, next_index), feats.shape[0]):
                _unseen(err, fmin, fmax, c, feats, data_name, restore_name)

    if save_path is not None:
        y_block = (y_lower, y_upper, y_min, y_max) if y_scaling else None
        try:
            write_range_file(save_path, lower, upper, fmin, fmax, max_index, y_block,
                             indices=feats)
        except OSError as e:
            reason = getattr(e, "reason", None) or e.strerror or str(e)
            raise ScaleError(f"can't open file {os.fspath(save_path)}: {reason}") from None
        if min_index < 1:
            err.write("WARNING: scaling factors with indices smaller than 1 are not stored to "
                      f"the file {os.fspath(save_path)}.\n")

    # pass 3: scale, writing as we go
    labels = data.y
    if y_scaling:
        with np.errstate(all="ignore"):
            scaled_y = y_lower + (y_upper - y_lower) * (labels - y_min) / (y_max - y_min)
        labels = np.where(labels == y_min, y_lower, np.where(labels == y_max, y_upper, scaled_y))
    lower = float(lower)
    upper = float(upper)
    lo = fmin[1:]
    hi = fmax[1:]
    with np.errstate(all="ignore"):
        zs = np.where(0.0 == lo, lower,
                      np.where(0.0 == hi, upper, lower + (upper - lower) * (0.0 - lo) / (hi - lo)))
    keep = (lo != hi) & (zs != 0.0)
    zidx = feats[1:][keep]
    zval = zs[keep].astype(np.float64)
    new_num_nonzeros = 0
    n = data.n
    for r0 in range(0, n, block_rows):
        r1 = min(n, r0 + block_rows)
        ptr, oidx, oval = _scale_rows(data.indptr, data.indices, col, data.values, r0, r1,
                                      fmin, fmax, lower, upper, zidx, zval)
        new_num_nonzeros += int(ptr[-1])
        _emit(out, _format_block(labels[r0:r1].tolist(), ptr, oidx, oval))
    if new_num_nonzeros > num_nonzeros:
        err.write(f"WARNING: original #nonzeros {num_nonzeros}\n"
                  f"       > new      #nonzeros {new_num_nonzeros}\n"
                  "If feature values are non-negative and sparse, use -l 0 rather than the "
                  "default -l -1\n")
    return ScaleResult(num_nonzeros, new_num_nonzeros)


def _unseen(err, fmin, fmax, c, feats, data_name, restore_name):
    if fmin[c] != fmax[c]:
        err.write(f"WARNING: feature index {feats[c]} appeared in file {data_name} was not seen "
                  f"in the scaling factor file {restore_name}. The feature is scaled to 0.\n")
        fmin[c] = 0.0
        fmax[c] = 0.0
