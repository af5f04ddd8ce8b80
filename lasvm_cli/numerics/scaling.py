"""svm-scale's two passes over CSR rows (LIBSVM 3.37 ``svm-scale.c``), compiled: each
feature's range with C's tie rules for the implicit zeros of rows that do not list it, and
the scaled entries of a block of rows. tools/scale.py reads, writes and decides; these loops
only compute."""

import numpy as np
from numba import njit
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)

DBL_MAX = np.finfo(np.float64).max


@njit(cache=True)
def feature_ranges(y, indptr, col, values, n_feat):
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
def scaled_value(v, lo, hi, lower, upper):
    if v == lo:
        return lower
    if v == hi:
        return upper
    return lower + (upper - lower) * (v - lo) / (hi - lo)


@njit(cache=True)
def scale_rows(indptr, indices, col, values, r0, r1, fmin, fmax, lower, upper, zidx, zval):
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
                s = scaled_value(values[k - 1], lo, hi, lower, upper)
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
