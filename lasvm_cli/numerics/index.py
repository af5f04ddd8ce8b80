"""Unsigned array indices for the hot row loops.

Numba, like Python, lets a negative index count from the end: for every signed integer index
it cannot prove non-negative it emits a test and a fix-up (``i < 0 ? i + n : i``) before the
load. A loop index from ``range(n)`` is provably non-negative; ``base + t`` (a row at an offset
in the cache's buffer, cache.cache_row_at) and ``table[targets[t]]`` (an index read from data)
are not, and the test per access keeps such loops from vectorising. With an unsigned index
numba emits no test. bench/bench_index.py times the loops both ways (36,000 positions, min
of 300 timings): SO's scan 0.94 -> 0.69 ns a position, SMO's gradient update 1.06 -> 0.33, the
online core's Newton update 0.57 -> 0.21, a row copied from by-example values 1.12 -> 0.53.

Every index passed here is non-negative; the values read are the same.
"""

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np


@numba.njit(inline="always", cache=True, nogil=True)
def at(base, t):
    """base + t as an unsigned index (entry t of the row at offset ``base``)."""
    return np.uint64(base) + np.uint64(t)


@numba.njit(inline="always", cache=True, nogil=True)
def idx(i):
    """i as an unsigned index (an index read from data: ``values[idx(targets[t])]``)."""
    return np.uint64(i)
