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

from ..base.errors import LasvmError
from ..io.range_file import ScaleFileError, read_range_file, write_range_file
from ..io.scaled_text import format_block
from ..io.svmlight import read_svmlight
from ..numerics.scaling import feature_ranges, scale_rows

__all__ = ["ScaleError", "ScaleFileError", "ScaleResult", "scale_file"]


class ScaleError(LasvmError):
    """svm-scale failures with LIBSVM's message (``can't open file X``)."""


@dataclass
class ScaleResult:
    num_nonzeros: int
    new_num_nonzeros: int


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
    fmin, fmax, y_min, y_max = feature_ranges(data.y, data.indptr, col, data.values, feats.shape[0])
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
        ptr, oidx, oval = scale_rows(data.indptr, data.indices, col, data.values, r0, r1,
                                      fmin, fmax, lower, upper, zidx, zval)
        new_num_nonzeros += int(ptr[-1])
        _emit(out, format_block(labels[r0:r1].tolist(), ptr, oidx, oval))
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
