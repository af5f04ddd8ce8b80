"""One LRU kernel-row cache shared by every solver (LIBSVM's ``Cache``, keyed by example id).

Rows hold K (not Q = yyK) so that the binary SMO, LASVM and multi-class solvers can share one
cache; they are keyed by example and their entries follow the solver's position order, valid as
prefixes, so a longer request computes only the missing tail, and shrinking re-cuts the buffer
into shorter rows (LIBSVM's variable-length rows). The state is a namedtuple of arrays so that
every function is jitted with ``cache=True``. The manual (state arrays, API, counting) is
docs/kernel-cache.md.
"""

import mmap
from collections import namedtuple

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
from ..base.jit_cache import by_symbol
import numpy as np

from .index import at, idx
from .kernels import kernel_row, kernel_row_all, row_work

KernelCache = namedtuple(
    "KernelCache", "buf perm pos vex pex slot_of key length prev nxt free meta stats scratch")

N_SLOTS, WIDTH, N_USED, N_FREE, FILL, LONGEST = 0, 1, 2, 3, 4, 5
HITS, MISSES, KERNEL_EVALS, ROWS_DROPPED = 0, 1, 2, 3

_NJIT = dict(cache=True, nogil=True)


HUGE_PAGE = 2 << 20


def row_storage(size, dtype):
    """np.empty(size, dtype) on transparent huge pages where Linux offers them (madvise mode).
    A cache fills its storage row by row, and every first touch of a 4 KiB page is a page
    fault; on 2 MiB pages the same bytes take 512 times fewer, which is most of the cost of
    filling a large cache (docs/kernel-cache.md#storage). Elsewhere, and below one huge page,
    plain np.empty."""
    dtype = np.dtype(dtype)
    nbytes = int(size) * dtype.itemsize
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is None or nbytes < HUGE_PAGE:
        return np.empty(size, dtype)
    try:  # private: a shared anonymous map is shmem, which has its own (usually off) setting
        m = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        m.madvise(advice)
    except (OSError, ValueError):
        return np.empty(size, dtype)
    return np.frombuffer(m, dtype, count=size)  # the array holds the map; unmapped with it


def make_cache(n, cache_mb, dtype=np.float32, var_example=None):
    """An empty cache for ``n`` variables and ``cache_mb`` MB (2**20 bytes) of row storage;
    ``var_example`` int [n]: the example of each variable (default: variable t is example t)."""
    n = int(n)
    vex = np.arange(n, dtype=np.int64) if var_example is None else \
        np.ascontiguousarray(var_example, np.int64)
    if vex.shape != (n,):
        raise ValueError("var_example needs one example per variable")
    n_ex = int(vex.max()) + 1 if n else 0
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError("cache rows are float32 or float64")
    width = max(n, 1)
    budget = int(float(cache_mb) * (1 << 20)) // dtype.itemsize
    budget = max(min(budget, width * max(n, 2)), 2 * width)  # never more than all rows
    n_slots = min(budget // width, max(n, 2))
    budget = max(budget, n_slots * width)
    meta = np.zeros(6, np.int64)
    meta[N_SLOTS] = n_slots
    meta[WIDTH] = width
    meta[N_FREE] = n_slots
    meta[FILL] = 1
    m = max(n, 2)
    c = KernelCache(
        buf=row_storage(budget, dtype),
        perm=np.arange(n, dtype=np.int64),
        pos=np.arange(n, dtype=np.int64),
        vex=vex,
        pex=vex.copy(),
        slot_of=np.full(n_ex, -1, np.int64),
        key=np.full(m, -1, np.int64),
        length=np.zeros(m, np.int64),
        prev=np.full(m + 1, m, np.int64),
        nxt=np.full(m + 1, m, np.int64),
        free=np.concatenate([np.arange(n_slots - 1, -1, -1), np.zeros(m - n_slots)]).astype(
            np.int64),
        meta=meta,
        stats=np.zeros(4, np.int64),
        scratch=np.empty(max(n, 1), np.float64),
    )
    return c


def regrow_cache(owner, name, n, cache_mb):
    """Replace the cache ``owner.<name>`` by an empty one over n variables (at least as many)
    whose first positions continue it: perm, pos, pex and the counters carried, rows dropped
    (a stream's store grown to more slots, or given a smaller share of -m). The old cache is
    released before the new storage is taken, so that together they never exceed -m; the
    caller holds no other reference to it. Returns the new cache."""
    old = getattr(owner, name)
    m = old.perm.shape[0]
    perm, pos, pex, stats = old.perm, old.pos, old.pex, old.stats
    setattr(owner, name, None)
    del old
    c = make_cache(n, cache_mb)
    c.perm[:m] = perm
    c.pos[:m] = pos
    c.pex[:m] = pex
    c.stats[:] = stats
    setattr(owner, name, c)
    return c


def cache_positions_loaded(c):
    """perm and pos were overwritten from outside (a solver state loaded from a file): bring
    the example of each position, pex, in line. Cached rows must be dropped before (a fresh
    cache has none)."""
    c.pex[:] = c.vex[c.perm]


def cache_stats(c):
    s = c.stats
    return dict(cache_hits=int(s[HITS]), cache_misses=int(s[MISSES]),
                kernel_evals=int(s[KERNEL_EVALS]), rows_dropped=int(s[ROWS_DROPPED]))


# ---------------------------------------------------------------------------------------------
# LRU list over slots: sentinel S = len(key); nxt[S] = least recent, prev[S] = most recent.
# Slots never move while in use (returned views stay valid); free slots sit on a stack.


@numba.njit(**_NJIT)
def _lru_unlink(c, s):
    p = c.prev[s]
    q = c.nxt[s]
    c.nxt[p] = q
    c.prev[q] = p


@numba.njit(**_NJIT)
def _lru_append(c, s):
    S = c.key.shape[0]
    last = c.prev[S]
    c.nxt[last] = s
    c.prev[s] = last
    c.nxt[s] = S
    c.prev[S] = s


@numba.njit(**_NJIT)
def _drop_slot(c, s):
    """Free slot s: unlink it, forget its key, push it on the free stack."""
    _lru_unlink(c, s)
    c.slot_of[c.key[s]] = -1
    c.key[s] = -1
    c.length[s] = 0
    c.free[c.meta[N_FREE]] = s
    c.meta[N_FREE] += 1
    c.meta[N_USED] -= 1


@numba.njit(**_NJIT)
def cache_cached_len(c, k):
    s = c.slot_of[k]
    return c.length[s] if s >= 0 else 0


@numba.njit(**_NJIT)
def cache_is_cached(c, k, length):
    s = c.slot_of[k]
    return s >= 0 and c.length[s] >= length


@numba.njit(**_NJIT)
def cache_discard(c, k):
    s = c.slot_of[k]
    if s >= 0:
        _drop_slot(c, s)


@numba.njit(**_NJIT)
def cache_forget_from(c, p):
    """Cut every cached row to at most the prefix [0, p): the example at position p changed
    (the streaming solver reuses a slot for a new example)."""
    for s in range(c.meta[N_SLOTS]):
        if c.key[s] >= 0 and c.length[s] > p:
            c.length[s] = p


@numba.njit(**_NJIT)
def cache_clear(c):
    S = c.key.shape[0]
    while c.nxt[S] != S:
        _drop_slot(c, c.nxt[S])


@numba.njit(**_NJIT)
def cache_copy_rows(old, new):
    """The rows of cache ``old`` into ``new`` (whose rows are at least as wide), least recent
    first, so the LRU order carries over (the streaming all-in-one machines, whose scheduling
    counts the kernel values computed, grow their slots without dropping a row)."""
    S = old.key.shape[0]
    w_old = old.meta[WIDTH]
    w_new = new.meta[WIDTH]
    s = old.nxt[S]
    while s != S:
        k = old.key[s]
        ln = old.length[s]
        t, _ = _lookup(new, k)
        for r in range(ln):
            new.buf[t * w_new + r] = old.buf[s * w_old + r]
        _set_length(new, t, ln)
        s = old.nxt[s]


@numba.njit(**_NJIT)
def _lookup(c, k):
    """Slot of example k's row, made the most recent; a fresh empty slot (the least recent
    row evicted when none is free) if k has none. Returns (slot, cached length)."""
    s = c.slot_of[k]
    if s >= 0:
        _lru_unlink(c, s)
        _lru_append(c, s)
        return s, c.length[s]
    if c.meta[N_FREE] == 0:
        _drop_slot(c, c.nxt[c.key.shape[0]])  # least recently used
    c.meta[N_FREE] -= 1
    s = c.free[c.meta[N_FREE]]
    c.meta[N_USED] += 1
    c.key[s] = k
    c.length[s] = 0
    c.slot_of[k] = s
    _lru_append(c, s)
    return s, 0


@numba.njit(inline="always", **_NJIT)
def _set_length(c, s, length):
    """Slot s now holds a row over [0, length); LONGEST stays an upper bound of every row."""
    c.length[s] = length
    if length > c.meta[LONGEST]:
        c.meta[LONGEST] = length


@numba.njit(inline="always", **_NJIT)
def _compute_tail(c, kd, kp, k, s, have, length):
    """Compute entries [have, length) of k's row in slot s."""
    base = s * c.meta[WIDTH]
    if _by_example(c, kd, length - have):
        _copy_by_example(c, kd, kp, k, c.buf, base, have, length)
    else:
        c.stats[KERNEL_EVALS] += length - have
        out = c.scratch[have:length]
        kernel_row(kd, k, kd, c.pex[have:length], kp, out)
        for r in range(length - have):
            c.buf[at(base + have, r)] = out[r]
    _set_length(c, s, length)


@numba.njit(inline="always", **_NJIT)
def _by_example(c, kd, m):
    """Whether m entries of a row are computed for every example and copied to their positions
    (_copy_by_example): when the positions outnumber the examples (SVR's 2l variables, the
    all-in-one machines), or cover more than half of them on data kept transposed
    (KernelData.XT: a whole row there costs about 7 ns an example against about 10-16 ns a
    position for ijcnn1's 22 features) or by column (KernelData.csc: only the examples that
    share a feature are visited)."""
    n_ex = c.slot_of.shape[0]
    return m > n_ex or (2 * m > n_ex and (kd.XT.shape[0] > 0 or kd.csc.shape[0] > 0))


@by_symbol
@numba.njit(**_NJIT)
def _copy_by_example(c, kd, kp, k, dest, base, have, length):
    """dest[base + t] = K(x_k, x_pex[t]) for t in [have, length), each example's value computed
    once (kernels.kernel_row_all): LIBSVM's SVR_Q computes l values per row of its 2l
    variables too."""
    n_ex = c.slot_of.shape[0]
    c.stats[KERNEL_EVALS] += n_ex
    by_example = c.scratch[:n_ex]
    kernel_row_all(kd, k, kp, by_example)
    pex = c.pex
    for t in range(have, length):
        dest[at(base, t)] = by_example[idx(pex[idx(t)])]


@numba.njit(**_NJIT)
def _hit(c, k, length):
    """Slot holding k's row over [0, length) (made the most recent, counted as a hit), or -1."""
    s = c.slot_of[k]
    if s < 0 or c.length[s] < length:
        return -1
    _lru_unlink(c, s)
    _lru_append(c, s)
    c.stats[HITS] += 1
    return s


@by_symbol
@numba.njit(**_NJIT)
def _fill(c, kd, kp, k, length):
    """Slot of k's row, computed (or its tail) over [0, length): the miss path, after _hit
    found no row that long."""
    s, have = _lookup(c, k)
    c.stats[MISSES] += 1
    _compute_tail(c, kd, kp, k, s, have, length)
    return s


@numba.njit(inline="always", **_NJIT)
def held(a, b):
    """A last use of a and b where a function's branches join (see cache_row_at)."""


@by_symbol
@numba.njit(**_NJIT)
def cache_row_at(c, kd, kp, k, length):
    """Offset in ``c.buf`` of example k's row over positions [0, length) (a hit, or computed):
    entry t is ``c.buf[base + t]``. Hot loops index the buffer this way instead of taking a
    view: a view is a new array reference, and the atomic reference-count pair it costs stops
    numba's pruning of every other pair around it (an unpruned decref between an incref and
    its decref keeps both). For the same reason ``held`` makes the end the last use of c and
    kd: numba decrefs a variable at its last use, and where that differs between branches the
    decref goes through a phi the pruning cannot match."""
    w = c.meta[WIDTH]
    if length > w:
        length = w  # callers never ask beyond the width they set; guard anyway
    s = _hit(c, k, length)
    if s < 0:
        s = _fill(c, kd, kp, k, length)
    held(c, kd)
    return s * w


@numba.njit(inline="always", **_NJIT)
def cache_get(c, kd, kp, k, length):
    """Row of example k over positions [0, length) (a view into the cache)."""
    base = cache_row_at(c, kd, kp, k, length)
    return c.buf[base:base + min(length, c.meta[WIDTH])]


@by_symbol
@numba.njit(**_NJIT)
def cache_row_into(c, kd, kp, k, length, out):
    """out[:length] = row of example k (values rounded to the cache's dtype), without storing it.

    For rows longer than the current width (LIBSVM's full-length G_bar rows while shrunk): the
    cached prefix is copied, the rest computed (counted as a miss and as kernel evaluations).
    """
    s = c.slot_of[k]
    have = 0
    if s >= 0:
        have = min(c.length[s], length)
        base = s * c.meta[WIDTH]
        for t in range(have):
            out[t] = c.buf[at(base, t)]
    if have >= length:
        c.stats[HITS] += 1
        return
    c.stats[MISSES] += 1
    if _by_example(c, kd, length - have):
        # through a row of the cache's dtype: the values rounded below anyway, and one
        # signature of _copy_by_example (its dest c.buf's type) instead of two
        row = np.empty(length, c.buf.dtype)
        _copy_by_example(c, kd, kp, k, row, np.int64(0), have, length)
        for t in range(have, length):
            out[t] = row[t]
    else:
        c.stats[KERNEL_EVALS] += length - have
        kernel_row(kd, k, kd, c.pex[have:length], kp, out[have:length])
    tmp = np.empty(1, c.buf.dtype)
    for t in range(have, length):
        tmp[0] = out[t]
        out[t] = tmp[0]


@numba.njit(**_NJIT)
def _swap_positions(c, i, j):
    """Swap positions i != j in perm/pos/pex; returns (min, max, variable now at max, variable
    now at min)."""
    if i > j:
        i, j = j, i
    ki = c.perm[i]
    kj = c.perm[j]
    c.perm[i] = kj
    c.perm[j] = ki
    c.pos[kj] = i
    c.pos[ki] = j
    e = c.pex[i]
    c.pex[i] = c.pex[j]
    c.pex[j] = e
    return i, j, ki, kj


@numba.njit(**_NJIT)
def cache_swap(c, i, j):
    """The solver swapped positions i and j: keep perm/pos and every cached column in step."""
    if i == j:
        return
    i, j, ki, kj = _swap_positions(c, i, j)
    w = c.meta[WIDTH]
    S = c.key.shape[0]
    s = c.nxt[S] if i < c.meta[LONGEST] else S  # no row reaches position i: nothing to swap
    while s != S:
        nx = c.nxt[s]
        ln = c.length[s]
        if ln > i:
            if ln > j:
                b = s * w
                t = c.buf[at(b, i)]
                c.buf[at(b, i)] = c.buf[at(b, j)]
                c.buf[at(b, j)] = t
            else:
                # give up this row (LIBSVM does the same): its prefix would have a hole at i
                c.stats[ROWS_DROPPED] += 1
                _drop_slot(c, s)
        s = nx


@numba.njit(**_NJIT)
def _move_rows(buf, old, length, w_old, width):
    """Row r (slot old[r], old[r] increasing) moves from old[r] * w_old to r * width, in place.

    A row moving right can only land on the sources of later rows that move right too (their
    destinations lie at least a width further on), and a row moving left only on those of
    earlier rows moving left: so the right movers go last to first, copied backwards, then the
    left movers first to last, copied forwards. (A temporary copy of the rows, as before, cost
    fresh pages of up to the whole budget at every widening: the tracking solvers widen about
    twenty times a pass.)"""
    used = old.shape[0]
    for r in range(used - 1, -1, -1):
        a = r * width
        b = old[r] * w_old
        if a > b:
            for t in range(length[old[r]] - 1, -1, -1):
                buf[a + t] = buf[b + t]
    for r in range(used):
        a = r * width
        b = old[r] * w_old
        if a < b:
            for t in range(length[old[r]]):
                buf[a + t] = buf[b + t]


@by_symbol
@numba.njit(**_NJIT)
def cache_set_width(c, width):
    """Re-cut the storage into rows of ``width`` entries; returns the new number of slots.

    Rows longer than ``width`` are truncated; when fewer rows fit, the least recent go.
    Invalidates every row view handed out before.
    """
    n = c.perm.shape[0]
    width = max(1, min(width, n))
    budget = c.buf.shape[0]
    n_new = min(budget // width, c.key.shape[0])
    if n_new < 2:  # cannot happen for width <= n (make_cache reserves two full rows)
        n_new = 2
    w_old = c.meta[WIDTH]
    if width == w_old:
        return c.meta[N_SLOTS]
    S = c.key.shape[0]
    while c.meta[N_USED] > n_new:
        _drop_slot(c, c.nxt[S])
    # renumber used slots 0..used-1 in increasing old-slot order
    used = c.meta[N_USED]
    old = np.empty(used, np.int64)
    r = 0
    for s in range(c.meta[N_SLOTS]):
        if c.key[s] >= 0:
            old[r] = s
            r += 1
    for r in range(used):
        if c.length[old[r]] > width:
            c.length[old[r]] = width
    _move_rows(c.buf, old, c.length, w_old, width)
    # rebuild key/length/slot_of and the LRU links under the new numbering
    newnum = np.full(c.key.shape[0] + 1, -1, np.int64)
    for r in range(used):
        newnum[old[r]] = r
    keys = c.key[old].copy()
    lens = c.length[old].copy()
    order = np.empty(used, np.int64)  # new slot numbers, least recent first
    s = c.nxt[S]
    r = 0
    while s != S:
        order[r] = newnum[s]
        r += 1
        s = c.nxt[s]
    c.key[:] = -1
    c.length[:] = 0
    for r in range(used):
        c.key[r] = keys[r]
        c.length[r] = lens[r]
        c.slot_of[keys[r]] = r
    c.nxt[S] = S
    c.prev[S] = S
    for r in range(used):
        _lru_append(c, order[r])
    c.meta[WIDTH] = width
    c.meta[LONGEST] = min(c.meta[LONGEST], width)
    c.meta[N_SLOTS] = n_new
    c.meta[N_FREE] = 0
    for s in range(n_new - 1, used - 1, -1):
        c.free[c.meta[N_FREE]] = s
        c.meta[N_FREE] += 1
    return n_new


# ---------------------------------------------------------------------------------------------
# LASVM's policy (LaSVM 1.1 kcache.c): rows over the current expansion, kept across swaps.
# Both functions find an example's column by its position (pos[k]): one variable per example.

KEEP_MIN_WORK = 32  # kernel values are kept beyond need only where they cost more per entry


def keeping_pays(kd, kp):
    """Whether keeping kernel values for these data beats computing them again: a kept value
    is read back at random from storage (~100 ns when it misses the CPU cache) and first
    written to fresh memory (its page faults), more than a kernel value of at most
    KEEP_MIN_WORK gathered features costs (kernels.row_work per entry): bit-set rows (a
    popcount, ~5 ns), adult as CSR (14 features), ijcnn1 (22). Measured: LASVM's symmetric
    fill (cache_symmetric_at), one epoch without it: adult bit sets 15.4 -> 10.5 s online
    phase, adult CSR 46 -> 33 s, ijcnn1 20.0 -> 18.4 s; --partitions' values beyond -m
    (training/cascade.py) on 2 Dask workers: 500,000 generated rows (10 features) 1.5 to 2.7
    times slower with them, adult 3 times. mnist (150 features per row) keeps both."""
    return bool(row_work(kd, kd, kp, 1) > KEEP_MIN_WORK)


@numba.njit(**_NJIT)
def cache_swap_keep_prefix(c, i, j):
    """cache_swap, except that a row covering position min(i, j) but not max(i, j) gets its new
    entry by symmetry or is cut to the prefix [0, min(i, j)), instead of being dropped (LaSVM
    1.1 kcache.c:xswap).

    LASVM needs this: after evictions, most support-vector rows are longer than n_S, and every
    insertion swaps position n_S with a position beyond them; dropping those rows would empty
    the cache at each PROCESS."""
    if i == j:
        return
    i, j, ki, kj = _swap_positions(c, i, j)
    _keep_prefix_columns(c, i, j, ki, kj)


@numba.njit(**_NJIT)
def _keep_prefix_columns(c, i, j, ki, kj):
    """cache_swap_keep_prefix's walk over the rows, after positions i < j were swapped (ki, kj:
    the variables now at j and i). A leaf with no early exit, its arrays taken once before the
    loop: c.buf read in a branch is a new reference each time, and an exit that skips the loop
    joins the paths through a phi; either keeps numba's reference counts (cache_row_at)."""
    w = c.meta[WIDTH]
    buf, key, length, slot_of, pos = c.buf, c.key, c.length, c.slot_of, c.pos
    # walk the slots in index order (sequential reads of key/length; the LRU list order does
    # not matter here and chasing its links costs a cache miss per row); none when no row
    # reaches position i (the tracking solvers' insertions: their rows end at the seen set)
    n_walk = c.meta[N_SLOTS] if i < c.meta[LONGEST] else 0
    for s in range(n_walk):
        if key[s] < 0:
            continue
        ln = length[s]
        if ln <= i:
            continue
        if ln > j:
            b = s * w
            t = buf[at(b, i)]
            buf[at(b, i)] = buf[at(b, j)]
            buf[at(b, j)] = t
        elif ln > i:
            # the entry at i is now K(e, kj): copy it from kj's row by symmetry when that row
            # covers e's position (kcache.c:xswap), otherwise keep the prefix [0, i)
            e = key[s]
            sj = slot_of[kj]
            pe = pos[e]
            if e != ki and e != kj and sj >= 0 and length[sj] > pe:
                buf[at(s * w, i)] = buf[at(sj * w, pe)]
            else:
                length[s] = i


@numba.njit(**_NJIT)
def _fill_symmetric(c, kd, kp, k, length, scratch):
    """Slot of k's row over [0, length): cache_symmetric_at's miss path with the fill on. The
    views that kernel_row takes, and their reference counts, only when it computes values."""
    s, have = _lookup(c, k)
    c.stats[MISSES] += 1
    m = _copy_symmetric(c, k, s, have, length, scratch)
    if m > 0:
        _compute_missing(c, kd, kp, k, s, m, scratch)
    _set_length(c, s, length)
    held(c, kd)  # one last use of the namedtuples on both paths
    held(kp, scratch)
    return s


@numba.njit(**_NJIT)
def _copy_symmetric(c, k, s, have, length, scratch):
    """Entries [have, length) of k's row in slot s copied from the cached rows that cover k's
    position (kcache.c:lasvm_kcache_query_row); the others listed in scratch.t_pos (position)
    and scratch.t_ex (example). Returns how many are listed. Arrays taken before the loop, as
    in _keep_prefix_columns."""
    t_pos, t_ex = scratch.t_pos, scratch.t_ex
    buf, pex, slot_of, lengths = c.buf, c.pex, c.slot_of, c.length
    w = c.meta[WIDTH]
    base = s * w
    q = c.pos[k]
    m = 0
    for t in range(have, length):
        j = pex[idx(t)]
        sj = slot_of[idx(j)]
        if j != k and sj >= 0 and lengths[idx(sj)] > q:
            buf[at(base, t)] = buf[at(sj * w, q)]
        else:
            t_pos[m] = t
            t_ex[m] = j
            m += 1
    return m


@numba.njit(**_NJIT)
def _compute_missing(c, kd, kp, k, s, m, scratch):
    """The m entries of k's row (slot s) that _copy_symmetric listed, computed."""
    out = c.scratch[:m]
    kernel_row(kd, k, kd, scratch.t_ex[:m], kp, out)  # serial or prange by row length
    base = s * c.meta[WIDTH]
    t_pos = scratch.t_pos
    for r in range(m):
        c.buf[at(base, t_pos[r])] = out[r]
    c.stats[KERNEL_EVALS] += m


@numba.njit(**_NJIT)
def cache_symmetric_at(c, kd, kp, k, length, scratch):
    """Offset in ``c.buf`` of K(x_k, x_perm[t]) for t < length: entry t is ``c.buf[base + t]``.

    Same contract and bookkeeping as cache_row_at, plus LaSVM 1.1's symmetric
    fill (kcache.c:lasvm_kcache_query_row): a missing entry K(k, j) is copied from the cached
    row of j when that row covers k's position, and only the rest is computed (one
    kernel_row call over the gathered targets). ``scratch``: any namedtuple with int64 [l]
    arrays ``t_pos`` and ``t_ex`` (the online solvers' state), passed whole so that the hot
    hit path keeps no reference count (see cache_row_at). Raises when ``length`` exceeds the
    row width (cache_get caps it). The fill is on while ``c.meta[FILL]`` is 1 (the default;
    :func:`keeping_pays` tells when it is worth it); with 0 every missing entry is computed."""
    w = c.meta[WIDTH]
    if length > w:
        raise ValueError("kernel row longer than the cache width")
    s = _hit(c, k, length)
    if s < 0:
        if c.meta[FILL] == 0:
            s = _fill(c, kd, kp, k, length)  # every missing entry computed
        else:
            s = _fill_symmetric(c, kd, kp, k, length, scratch)
    held(c, kd)
    held(kp, scratch)
    return s * w


# scratch for cache_symmetric_at outside the online solvers (whose state carries t_pos, t_ex)
SymmetricScratch = namedtuple("SymmetricScratch", "t_pos t_ex")
