"""Streaming LASVM: one sequential pass over a training file larger than memory
(``svm-train --solver lasvm --stream``).

Same algorithm as :mod:`lasvm_cli.solvers.lasvm` (Bordes, Ertekin, Weston & Bottou 2005,
PROCESS / REPROCESS, then finishing with shrinking; LaSVM 1.1's rejection test, eviction and
tie rules), over a state that holds only the expansion S:

* **S store.** Every example of S keeps its own features in a *slot* of a growable dense store
  ``X [cap, width]`` (column c = feature index c as written in the file). PROCESS copies the
  new example's features into a free slot when it inserts it; REPROCESS's eviction frees the
  slot (evicted examples are gone: the pass never comes back to them). ``cap`` grows x1.5 when
  the slots run out, ``width`` grows to the largest feature index seen (the feature width is
  unknown until the end of the file). alpha, g, A, B, y are arrays by slot; ``pos2slot`` is the
  position order of lasvm.py (positions [0, n_S) = S, [0, n_active) during finishing), so
  argmax/argmin ties, eviction and shrinking swaps follow lasvm.py exactly.
* **Row cache.** float32 rows K(x_s, .) of S members, indexed by *slot* (so position swaps and
  evictions move nothing); an entry is NaN until computed. Filling a slot invalidates its
  column in every cached row; a missing entry is copied from the partner's row by symmetry
  when there (LaSVM 1.1's kcache), else computed with ``kernels.kernel_row_serial`` against the
  store. At most ``cache_mb`` MB of rows (and at most ``cap`` rows), least recently used out.
* **Stream.** :func:`lasvm_cli.io.svmlight.iter_svmlight` blocks (``chunk_bytes`` of text).
  Random selection processes every example as it arrives, in file order. Gradient / active /
  autoactive selection keep a window of the next ``candidates`` examples (100 for autoactive)
  and process the best one by the paper's criterion (y f(x) or |f(x)|), refilling the window
  from the stream; the window's leftover rows are carried into the next block.
* **Seeding** (LaSVM 1.1: PROCESS the first 5 examples of each class without REPROCESS): the
  first blocks are held until 5 of each class have been read (at most ``SEED_ROWS_MAX`` rows);
  the rest of those blocks is then processed in file order.

Memory: the store (cap x width x 8 bytes, cap <= 1.5 n_S + 64 at the peak n_S), the row cache
(<= -m MB), one block of text and its parsed rows, the window. Nothing grows with the file.

Deviations from the in-memory solver (see also the report in bench/bench_stream.py):
- Example order: file order (random selection), not a random permutation. With the same order
  the two agree up to float rounding (tests/test_stream.py).
- Candidates for gradient/active selection are the next M examples of the stream, each
  evaluated every iteration, instead of M draws with replacement from all unseen examples.
- gamma must be given (-g): its default 1/max_index needs the whole file before training.
- Labels: the two classes come from the first rows (LIBSVM's order: first occurrence, {-1,+1}
  swapped so +1 comes first); a third label is an input error naming the file and line.
- ``--epochs`` must be 1, ``--label-budget``, -v, -b and -t 4 are not supported.
"""

from collections import namedtuple

import numba
import numpy as np

from ..kernels import KernelData, kernel_row_serial
from ..qp.steps import step_pair
from .lasvm import bias_of

_NJIT = dict(cache=True, nogil=True)

N_SEED = 5
AUTO_NEAR = 5
AUTO_MAX = 100
SEED_ROWS_MAX = 200_000  # rows held at most while waiting for both classes / the seeds
SEL_RANDOM, SEL_GRADIENT, SEL_ACTIVE, SEL_AUTOACTIVE = 0, 1, 2, 3
SELECTIONS = {"random": SEL_RANDOM, "gradient": SEL_GRADIENT, "active": SEL_ACTIVE,
              "autoactive": SEL_AUTOACTIVE}

# int64 scalars st.ist
I_NS, I_NACT, I_STEPS, I_PROCESSED, I_INSERTED, I_REPROCESS = 0, 1, 2, 3, 4, 5
I_FITER, I_FSHRINK, I_FINISH_STEPS, I_NFREE, I_NCUSED, I_CLOCK = 6, 7, 8, 9, 10, 11
I_KEVALS, I_HITS, I_MISSES, I_EVICTED, I_MAXNS = 12, 13, 14, 15, 16
N_IST = 17
F_DELTA = 0
N_FST = 2

# stream_block status
ST_DONE, ST_MORE, ST_GROW, ST_YIELD = 0, 1, 2, 3

StreamState = namedtuple(
    "StreamState",
    "X xsq alpha g A B y rowid pos2slot free crow ckey cuse cbuf out64 tgt newrow ist fst")
StreamState.__doc__ = """Streaming LASVM state (arrays by slot unless said otherwise).

X [cap, width] float64 features of the slot's example; xsq [cap] squared norms
alpha, g, A, B, y [cap] float64; rowid [cap] int64 0-based row of the example in the file
pos2slot [cap] position -> slot (S = positions [0, n_S)); free [cap] stack of free slots
crow [cap] slot -> cache row or -1; ckey [nrows] cache row -> slot or -1; cuse [nrows] LRU clock
cbuf [nrows, cap] float32 kernel rows by slot, NaN = not computed
out64 [cap] float64, tgt [cap] int64, newrow [cap] float32: scratch
ist [N_IST] int64, fst [N_FST] float64: scalars (I_*, F_*)
"""


def _cache_rows(cap, cache_mb):
    return int(min(cap, max(2, int(float(cache_mb) * (1 << 20)) // (4 * cap))))


def make_stream_state(cap=64, width=1, cache_mb=100.0):
    cap = int(cap)
    nr = _cache_rows(cap, cache_mb)
    ist = np.zeros(N_IST, np.int64)
    ist[I_NFREE] = cap
    return StreamState(
        X=np.zeros((cap, max(int(width), 1))), xsq=np.zeros(cap), alpha=np.zeros(cap),
        g=np.zeros(cap), A=np.zeros(cap), B=np.zeros(cap), y=np.zeros(cap),
        rowid=np.full(cap, -1, np.int64), pos2slot=np.zeros(cap, np.int64),
        free=np.arange(cap - 1, -1, -1, dtype=np.int64), crow=np.full(cap, -1, np.int64),
        ckey=np.full(nr, -1, np.int64), cuse=np.full(nr, -1, np.int64),
        cbuf=np.full((nr, cap), np.nan, np.float32), out64=np.zeros(cap),
        tgt=np.zeros(cap, np.int64), newrow=np.zeros(cap, np.float32), ist=ist,
        fst=np.zeros(N_FST))


def grow_state(st, cap=None, width=None, cache_mb=100.0):
    """A copy of ``st`` with more slots and/or a wider store (cached rows are kept)."""
    old_cap, old_w = st.X.shape
    cap = old_cap if cap is None else int(cap)
    width = old_w if width is None else int(width)
    if cap == old_cap and width == old_w:
        return st
    new = make_stream_state(cap, width, cache_mb)
    new.X[:old_cap, :old_w] = st.X
    for name in ("xsq", "alpha", "g", "A", "B", "y", "rowid", "pos2slot"):
        getattr(new, name)[:old_cap] = getattr(st, name)
    new.ist[:] = st.ist
    new.fst[:] = st.fst
    # free slots: the old stack, then the new slots (highest first, so the lowest is popped)
    nf = int(st.ist[I_NFREE])
    extra = np.arange(cap - 1, old_cap - 1, -1, dtype=np.int64)
    new.free[:extra.size] = extra
    new.free[extra.size:extra.size + nf] = st.free[:nf]
    new.ist[I_NFREE] = nf + extra.size
    # cache rows: keep the most recently used that fit
    nr_old, nr_new = st.cbuf.shape[0], new.cbuf.shape[0]
    used = int(min(st.ist[I_NCUSED], nr_old))
    keep = np.argsort(-st.cuse[:used], kind="stable")[:nr_new]
    keep = keep[st.ckey[keep] >= 0]
    for r_new, r_old in enumerate(keep):
        new.cbuf[r_new, :old_cap] = st.cbuf[r_old]
        new.ckey[r_new] = st.ckey[r_old]
        new.cuse[r_new] = st.cuse[r_old]
        new.crow[st.ckey[r_old]] = r_new
    new.ist[I_NCUSED] = keep.size
    return new


def store_kd(st):
    return KernelData(st.X, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0), st.xsq)


# ---------------------------------------------------------------------------------------------
# row cache


@numba.njit(**_NJIT)
def _alloc_row(st, slot):
    """A cache row for ``slot`` (all NaN), evicting the least recently used row if needed."""
    nr = st.cbuf.shape[0]
    if st.ist[I_NCUSED] < nr:
        r = st.ist[I_NCUSED]
        st.ist[I_NCUSED] += 1
    else:
        r = 0
        best = st.cuse[0]
        for t in range(1, nr):
            if st.cuse[t] < best:
                best = st.cuse[t]
                r = t
        old = st.ckey[r]
        if old >= 0:
            st.crow[old] = -1
    st.ckey[r] = slot
    st.crow[slot] = r
    st.cbuf[r, :] = np.nan
    return r


@numba.njit(**_NJIT)
def _srow(st, skd, kp, slot, n):
    """float32 row K(x_slot, x_q) indexed by slot q, valid for the slots at positions < n."""
    r = st.crow[slot]
    if r < 0:
        r = _alloc_row(st, slot)
    st.ist[I_CLOCK] += 1
    st.cuse[r] = st.ist[I_CLOCK]
    row = st.cbuf[r]
    m = 0
    for p in range(n):
        q = st.pos2slot[p]
        v = row[q]
        if v != v:
            rq = st.crow[q]
            if rq >= 0 and q != slot:
                w = st.cbuf[rq, slot]
                if w == w:
                    row[q] = w
                    continue
            st.tgt[m] = q
            m += 1
    if m > 0:
        st.ist[I_MISSES] += 1
        kernel_row_serial(skd, slot, skd, st.tgt[:m], kp, st.out64)
        for t in range(m):
            row[st.tgt[t]] = np.float32(st.out64[t])
        st.ist[I_KEVALS] += m
    else:
        st.ist[I_HITS] += 1
    return row


@numba.njit(**_NJIT)
def _free_slot(st, q):
    r = st.crow[q]
    if r >= 0:
        st.crow[q] = -1
        st.ckey[r] = -1
        st.cuse[r] = -1
    st.rowid[q] = -1
    st.free[st.ist[I_NFREE]] = q
    st.ist[I_NFREE] += 1
    st.ist[I_EVICTED] += 1


@numba.njit(**_NJIT)
def _new_row(st, skd, kp, ckd, a, n):
    """st.newrow[slot] = float32 K(new example a of the block, slot) for positions < n."""
    for p in range(n):
        st.tgt[p] = st.pos2slot[p]
    if n > 0:
        kernel_row_serial(ckd, a, skd, st.tgt[:n], kp, st.out64)
        for p in range(n):
            st.newrow[st.tgt[p]] = np.float32(st.out64[p])
        st.ist[I_KEVALS] += n


# ---------------------------------------------------------------------------------------------
# LASVM steps (lasvm.py's, over slots)


@numba.njit(**_NJIT)
def _minmax(st, n):
    i = -1
    j = -1
    gmax = -np.inf
    gmin = np.inf
    for p in range(n):
        q = st.pos2slot[p]
        gp = st.g[q]
        a = st.alpha[q]
        if gp > gmax and a < st.B[q]:
            gmax = gp
            i = p
        if gp < gmin and a > st.A[q]:
            gmin = gp
            j = p
    return i, j


@numba.njit(inline="always", **_NJIT)
def _g_extremes(st, n):
    """(g_max, g_min) of _minmax's pair over [0, n), +inf / -inf when a side is empty."""
    i, j = _minmax(st, n)
    return ((st.g[st.pos2slot[i]] if i >= 0 else np.inf),
            (st.g[st.pos2slot[j]] if j >= 0 else -np.inf))


@numba.njit(inline="always", **_NJIT)
def _swap(st, p1, p2):
    t = st.pos2slot[p1]
    st.pos2slot[p1] = st.pos2slot[p2]
    st.pos2slot[p2] = t


@numba.njit(**_NJIT)
def _direction_search(st, skd, kp, i, j, tau):
    if i < 0 or j < 0 or i == j:
        return 0
    si = st.pos2slot[i]
    sj = st.pos2slot[j]
    if st.g[si] - st.g[sj] <= tau:
        return 0
    n = st.ist[I_NACT]
    ri = _srow(st, skd, kp, si, n)
    rj = _srow(st, skd, kp, sj, n)
    curv = np.float64(ri[si]) + np.float64(rj[sj]) - 2.0 * np.float64(ri[sj])
    room_i = st.B[si] - st.alpha[si]
    room_j = st.alpha[sj] - st.A[sj]
    lam = step_pair(st.g[si], st.g[sj], st.alpha[si], st.alpha[sj], st.B[si], st.A[sj], curv)
    st.alpha[si] = st.B[si] if lam == room_i else st.alpha[si] + lam
    st.alpha[sj] = st.A[sj] if lam == room_j else st.alpha[sj] - lam
    for p in range(n):
        q = st.pos2slot[p]
        st.g[q] -= lam * (np.float64(ri[q]) - np.float64(rj[q]))
    st.ist[I_STEPS] += 1
    return 1


@numba.njit(**_NJIT)
def _evict(st):
    """REPROCESS step 4; evicted examples leave the store (their slots are freed)."""
    n0 = st.ist[I_NS]
    n = n0
    gmax, gmin = _g_extremes(st, n)
    p = 0
    while p < n:
        q = st.pos2slot[p]
        if st.alpha[q] == 0.0 and ((st.g[q] >= gmax and st.B[q] <= 0.0) or
                                   (st.g[q] <= gmin and st.A[q] >= 0.0)):
            n -= 1
            _swap(st, p, n)
        else:
            p += 1
    for p in range(n, n0):
        _free_slot(st, st.pos2slot[p])
    st.ist[I_NS] = n
    st.ist[I_NACT] = n


@numba.njit(**_NJIT)
def _update_delta(st):
    i, j = _minmax(st, st.ist[I_NACT])
    if i >= 0 and j >= 0:
        st.fst[F_DELTA] = max(0.0, st.g[st.pos2slot[i]] - st.g[st.pos2slot[j]])
    else:
        st.fst[F_DELTA] = 0.0


@numba.njit(**_NJIT)
def _reprocess(st, skd, kp, tau):
    st.ist[I_REPROCESS] += 1
    i, j = _minmax(st, st.ist[I_NACT])
    status = _direction_search(st, skd, kp, i, j, tau)
    _evict(st)
    _update_delta(st)
    return status


@numba.njit(**_NJIT)
def _expansion_new(st, skd, kp, ckd, a):
    """sum_S alpha_s K(x_a, x_s) for example a of the current block (its row is left in
    st.newrow)."""
    n = st.ist[I_NS]
    _new_row(st, skd, kp, ckd, a, n)
    s = 0.0
    for p in range(n):
        q = st.pos2slot[p]
        s += st.alpha[q] * np.float64(st.newrow[q])
    return s


@numba.njit(**_NJIT)
def _process_new(st, skd, kp, ckd, a, yk, rowid, Cp, Cn, tau):
    """PROCESS(k) for example a of the current block (label yk = +-1). Needs a free slot."""
    st.ist[I_PROCESSED] += 1
    n = st.ist[I_NS]
    gk = yk - _expansion_new(st, skd, kp, ckd, a)
    i, j = _minmax(st, n)
    if i >= 0 and j >= 0:
        gi = st.g[st.pos2slot[i]]
        gj = st.g[st.pos2slot[j]]
        if gj < gi and ((yk > 0 and gk < gj) or (yk < 0 and gk > gi)):
            return 0  # LaSVM 1.1's rejection before insertion (as lasvm.py)
    # insert into a free slot: features, box, gradient
    st.ist[I_NFREE] -= 1
    q = st.free[st.ist[I_NFREE]]
    xq = st.X[q]
    xq[:] = 0.0
    for t in range(ckd.indptr[a], ckd.indptr[a + 1]):
        xq[ckd.indices[t]] = ckd.values[t]
    st.xsq[q] = ckd.x_sq[a]
    st.y[q] = yk
    st.A[q] = 0.0 if yk > 0 else -Cn
    st.B[q] = Cp if yk > 0 else 0.0
    st.alpha[q] = 0.0
    st.g[q] = gk
    st.rowid[q] = rowid
    for r in range(st.ist[I_NCUSED]):
        st.cbuf[r, q] = np.nan  # the slot holds a new example: its column is stale
    r = _alloc_row(st, q)
    for p in range(n):
        q2 = st.pos2slot[p]
        st.cbuf[r, q2] = st.newrow[q2]
    st.ist[I_CLOCK] += 1
    st.cuse[r] = st.ist[I_CLOCK]
    st.pos2slot[n] = q
    st.ist[I_NS] = n + 1
    st.ist[I_NACT] = n + 1
    st.ist[I_INSERTED] += 1
    if n + 1 > st.ist[I_MAXNS]:
        st.ist[I_MAXNS] = n + 1
    if yk > 0:
        return _direction_search(st, skd, kp, n, j, tau)
    return _direction_search(st, skd, kp, i, n, tau)


@numba.njit(**_NJIT)
def _decision_new(st, skd, kp, ckd, a):
    n = st.ist[I_NS]
    s = _expansion_new(st, skd, kp, ckd, a)
    i, j = _minmax(st, n)
    if i >= 0 and j >= 0:
        s += 0.5 * (st.g[st.pos2slot[i]] + st.g[st.pos2slot[j]])
    return s


@numba.njit(**_NJIT)
def seed_block(st, skd, kp, ckd, cy, crowid, done, n_seed, Cp, Cn, tau):
    """PROCESS the first n_seed rows of each class of the block (no REPROCESS), marking them
    done; returns the number of seeds (needs 2 n_seed free slots)."""
    c_pos = 0
    c_neg = 0
    for a in range(cy.shape[0]):
        if c_pos >= n_seed and c_neg >= n_seed:
            break
        yk = cy[a]
        if (yk > 0 and c_pos < n_seed) or (yk < 0 and c_neg < n_seed):
            if yk > 0:
                c_pos += 1
            else:
                c_neg += 1
            done[a] = 1
            _process_new(st, skd, kp, ckd, a, yk, crowid[a], Cp, Cn, tau)
    return c_pos + c_neg


@numba.njit(**_NJIT)
def stream_block(st, skd, kp, ckd, cy, crowid, done, win, ctl, last, sel, tau, delta_max,
                 Cp, Cn, n_iter):
    """Online iterations over the rows of one block: fill the window with the next rows, pick
    one (file order for random selection), PROCESS it, REPROCESS once, then while
    delta > delta_max. ctl = [window size, next row]. Returns ST_DONE (block used up),
    ST_MORE (window not full and more blocks to come: carry win[:ctl[0]] over), ST_GROW (no
    free slot) or ST_YIELD (n_iter iterations done)."""
    M = win.shape[0]
    nrows = cy.shape[0]
    it = 0
    while True:
        nwin = ctl[0]
        nxt = ctl[1]
        while nwin < M and nxt < nrows:
            if done[nxt] == 0:
                win[nwin] = nxt
                nwin += 1
            nxt += 1
        ctl[0] = nwin
        ctl[1] = nxt
        if nwin == 0:
            return ST_DONE
        if nwin < M and not last:
            return ST_MORE
        if st.ist[I_NFREE] == 0:
            return ST_GROW
        if it >= n_iter:
            return ST_YIELD
        b = 0
        if sel != SEL_RANDOM and nwin > 1:
            _update_delta(st)
            near = 1.0 + 0.5 * st.fst[F_DELTA]
            best = np.inf
            n_near = 0
            for c in range(nwin):
                a = win[c]
                f = _decision_new(st, skd, kp, ckd, a)
                crit = cy[a] * f if sel == SEL_GRADIENT else abs(f)
                if crit < best:
                    best = crit
                    b = c
                if sel == SEL_AUTOACTIVE and crit < near:
                    n_near += 1
                    if n_near >= AUTO_NEAR:
                        break
        a = win[b]
        for c in range(b, nwin - 1):
            win[c] = win[c + 1]
        ctl[0] = nwin - 1
        done[a] = 1
        _process_new(st, skd, kp, ckd, a, cy[a], crowid[a], Cp, Cn, tau)
        status = _reprocess(st, skd, kp, tau)
        while status == 1 and st.fst[F_DELTA] > delta_max:
            status = _reprocess(st, skd, kp, tau)
        it += 1


@numba.njit(**_NJIT)
def _shrink(st):
    n = st.ist[I_NACT]
    gmax, gmin = _g_extremes(st, n)
    p = 0
    while p < n:
        q = st.pos2slot[p]
        if (st.g[q] >= gmax and st.alpha[q] >= st.B[q]) or \
                (st.g[q] <= gmin and st.alpha[q] <= st.A[q]):
            n -= 1
            _swap(st, p, n)
        else:
            p += 1
    st.ist[I_NACT] = n


@numba.njit(**_NJIT)
def _unshrink(st, skd, kp):
    n = st.ist[I_NS]
    a = st.ist[I_NACT]
    if a >= n:
        return
    for p in range(a, n):
        q = st.pos2slot[p]
        st.g[q] = st.y[q]
    for p2 in range(n):
        q2 = st.pos2slot[p2]
        aq = st.alpha[q2]
        if aq == 0.0:
            continue
        cached = st.crow[q2] >= 0
        row = _srow(st, skd, kp, q2, n)
        for p in range(a, n):
            q = st.pos2slot[p]
            st.g[q] -= aq * np.float64(row[q])
        if not cached:
            r = st.crow[q2]
            st.crow[q2] = -1
            st.ckey[r] = -1
            st.cuse[r] = -1
    st.ist[I_NACT] = n


@numba.njit(**_NJIT)
def finish_block(st, skd, kp, tau, n_iter):
    """Finishing (lasvm.py's finish_run over the store): at most n_iter steps; 1 when done."""
    done = 0
    while done < n_iter:
        if st.ist[I_FITER] >= st.ist[I_FSHRINK]:
            _shrink(st)
            st.ist[I_FSHRINK] = st.ist[I_FITER] + min(1000, st.ist[I_NS])
        i, j = _minmax(st, st.ist[I_NACT])
        if _direction_search(st, skd, kp, i, j, tau) == 0:
            _unshrink(st, skd, kp)
            _evict(st)
            _update_delta(st)
            st.ist[I_FSHRINK] = st.ist[I_FITER]
            if st.fst[F_DELTA] <= tau:
                return 1
            continue
        st.ist[I_FITER] += 1
        st.ist[I_FINISH_STEPS] += 1
        done += 1
    return 0


@numba.njit(**_NJIT)
def delta_now(st):
    _update_delta(st)
    return st.fst[F_DELTA]


# ---------------------------------------------------------------------------------------------
# Python driver


class StreamError(ValueError):
    pass


def _csr_concat(parts):
    """Concatenate (y, indptr, indices, values, rowid) CSR blocks."""
    ys = [p[0] for p in parts]
    lens = [np.diff(p[1]) for p in parts]
    rl = np.concatenate(lens) if lens else np.zeros(0, np.int64)
    indptr = np.zeros(rl.size + 1, np.int64)
    np.cumsum(rl, out=indptr[1:])
    return (np.concatenate(ys), indptr, np.concatenate([p[2] for p in parts]).astype(np.int32),
            np.concatenate([p[3] for p in parts]), np.concatenate([p[4] for p in parts]))


def _take_rows(block, rows):
    y, indptr, indices, values, rowid = block
    rows = np.asarray(rows, np.int64)
    starts, stops = indptr[rows], indptr[rows + 1]
    ip = np.zeros(rows.size + 1, np.int64)
    np.cumsum(stops - starts, out=ip[1:])
    take = (np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)]) if rows.size
            else np.zeros(0, np.int64))
    return y[rows], ip, indices[take], values[take], rowid[rows]


def _line_of_row(source, row):
    """1-based line of the 0-based data row ``row`` (full-line # comments are not rows)."""
    from ..io.svmlight import _open_binary

    k = -1
    with _open_binary(source) as f:
        for lineno, line in enumerate(f, 1):
            if line.lstrip().startswith(b"#"):
                continue
            k += 1
            if k == row:
                return lineno
    return None


class _Labels:
    """The two class labels, LIBSVM's order: first occurrence, {-1,+1} swapped."""

    def __init__(self, source):
        self.source = source
        self.seen = []  # int labels in order of first occurrence

    def add(self, y, rowid):
        from ..errors import InputFormatError

        lab = np.trunc(y).astype(np.int64)
        u, first = np.unique(lab, return_index=True)
        for v, f in sorted(zip(u.tolist(), first.tolist()), key=lambda t: t[1]):
            if v in self.seen:
                continue
            if len(self.seen) == 2:
                line = _line_of_row(self.source, int(rowid[f]))
                raise InputFormatError(
                    self.source if isinstance(self.source, str) else str(self.source), line,
                    f"--stream supports two classes: third label {v} after "
                    f"{self.seen[0]} and {self.seen[1]}", None)
            self.seen.append(v)
        return lab

    def order(self):
        lab = list(self.seen)
        if len(lab) == 2 and lab[0] == -1 and lab[1] == 1:
            lab = lab[::-1]
        return np.array(lab, np.int64)


def train_stream(source, params, *, zero_based=False, info=None, warn=None, progress=None,
                 chunk_bytes=1 << 22, n_iter=20000):
    """One pass of LASVM over ``source`` (a svmlight file, read sequentially once), finishing
    unless ``params.finish`` is False. Returns (SVMModel, counters)."""
    from .. import kernels
    from ..io.svmlight import iter_svmlight
    from ..train import weighted_C

    info = info or (lambda _m: None)
    warn = warn or (lambda _m: None)
    p = params
    if p.kernel_type == kernels.PRECOMPUTED:
        raise StreamError("--stream does not support precomputed kernels (-t 4)")
    if p.kernel_type in (1, 2, 3) and p.gamma == 0:
        raise StreamError("--stream needs -g: the default gamma 1/num_features needs the whole "
                          "file before training")
    if p.epochs != 1:
        raise StreamError("--stream makes one pass over the file (--epochs must be 1)")
    if p.label_budget is not None:
        raise StreamError("--stream does not support --label-budget")
    if p.probability:
        raise StreamError("--stream does not support probability estimates (-b 1)")
    if p.multiclass != "ovo":
        raise StreamError("--stream supports two classes (no --multiclass)")
    if p.selection not in SELECTIONS:
        raise StreamError(f"unknown selection '{p.selection}'")
    sel = SELECTIONS[p.selection]
    M = 1 if sel == SEL_RANDOM else (AUTO_MAX if sel == SEL_AUTOACTIVE else int(p.candidates))
    kp = kernels.make_params(p.kernel_type, p.degree, p.gamma, p.coef0)
    tau = float(p.eps)
    dmax = np.inf if p.delta_max is None else float(p.delta_max)
    from ..data import squared_norms

    labels = _Labels(source)
    st = make_stream_state(64, 1, p.cache_size)
    blocks = iter_svmlight(source, zero_based=zero_based, chunk_bytes=chunk_bytes)
    n_rows = 0
    Cp = Cn = None
    label = None
    pending = []  # blocks held until the seeds are known
    win = np.zeros(M, np.int64)
    ctl = np.zeros(2, np.int64)
    carry = None
    seeded = False
    bar = progress("LASVM stream") if progress else None

    def ensure_width(st, need):
        if need > st.X.shape[1]:
            st = grow_state(st, width=need, cache_mb=p.cache_size)
        return st

    def run_block(st, block, last):
        y, indptr, indices, values, rowid = block
        nonlocal seeded
        ckd = KernelData(np.zeros((0, 0)), indptr, indices.astype(np.int32), values,
                         squared_norms(indptr, values))
        lab = np.trunc(y).astype(np.int64)
        cy = np.where(lab == label[0], 1.0, -1.0)
        done = np.zeros(y.size, np.uint8)
        if not seeded:
            if st.ist[I_NFREE] < 2 * N_SEED:
                st = grow_state(st, cap=st.X.shape[0] + 2 * N_SEED, cache_mb=p.cache_size)
            seed_block(st, store_kd(st), kp, ckd, cy, rowid, done, N_SEED, Cp, Cn, tau)
            seeded = True
        ctl[1] = 0
        while True:
            status = stream_block(st, store_kd(st), kp, ckd, cy, rowid, done, win, ctl, last,
                                  sel, tau, dmax, Cp, Cn, n_iter)
            if status == ST_GROW:
                cap = st.X.shape[0]
                st = grow_state(st, cap=cap + cap // 2 + 64, cache_mb=p.cache_size)
            elif status == ST_YIELD:
                if bar:
                    bar.update(int(st.ist[I_PROCESSED]), int(st.ist[I_NS]))
            else:
                break
        leftover = None
        if status == ST_MORE and ctl[0] > 0:
            leftover = _take_rows(block, win[:ctl[0]].copy())
        ctl[0] = 0
        if bar:
            bar.update(int(st.ist[I_PROCESSED]), int(st.ist[I_NS]))
        return st, leftover

    def start(st):
        nonlocal Cp, Cn, label
        label = labels.order()
        if label.size < 2:
            raise StreamError("--stream supports two classes: the training file holds only "
                              f"label {label[0]}" if label.size else "empty training file")
        Cw = weighted_C(p, label, warn)
        Cp, Cn = float(Cw[0]), float(Cw[1])

    def seeds_ready(parts):
        lab = np.concatenate([np.trunc(b[0]).astype(np.int64) for b in parts])
        s = set(labels.seen)
        if len(s) < 2:
            return False
        return all(int((lab == v).sum()) >= N_SEED for v in s)

    try:
        for data in blocks:
            rowid = np.arange(n_rows, n_rows + data.n, dtype=np.int64)
            n_rows += data.n
            labels.add(data.y, rowid)
            st = ensure_width(st, data.max_index + 1)
            block = (data.y, data.indptr, data.indices, data.values, rowid)
            del data
            if not seeded:
                pending.append(block)
                held = sum(b[0].size for b in pending)
                if not seeds_ready(pending) and not (held >= SEED_ROWS_MAX and
                                                    len(labels.seen) == 2):
                    if held >= SEED_ROWS_MAX:
                        raise StreamError(f"--stream: the first {held} rows hold one class "
                                          "only; both classes must appear near the start")
                    continue
                start(st)
                block = _csr_concat(pending) if len(pending) > 1 else pending[0]
                pending = []
            if carry is not None:
                block = _csr_concat([carry, block])
            st, carry = run_block(st, block, False)
            del block
        if not seeded:
            if not pending:
                raise StreamError("empty training file")
            start(st)
            block = _csr_concat(pending) if len(pending) > 1 else pending[0]
            pending = []
            st, carry = run_block(st, block, True)
        if carry is not None:
            st, carry = run_block(st, carry, True)
        if p.finish:
            st.ist[I_FSHRINK] = st.ist[I_FITER]
            skd = store_kd(st)
            while not finish_block(st, skd, kp, tau, n_iter):
                if bar:
                    bar.update(int(st.ist[I_PROCESSED]), int(st.ist[I_NS]))
        else:
            delta_now(st)
    finally:
        if bar:
            bar.close()
    return _model_from_state(st, p, label, Cp, Cn, n_rows, info)


def dual_objective(st):
    """W(alpha) = 1/2 sum_S alpha_i (g_i + y_i) (lasvm.py's, LaSVM 1.1's lasvm_get_w2)."""
    n = int(st.ist[I_NS])
    s = st.pos2slot[:n]
    return 0.5 * float(np.dot(st.alpha[s], st.g[s] + st.y[s]))


def bias(st):
    s = st.pos2slot[:int(st.ist[I_NS])]
    return bias_of(st.alpha[s], st.g[s], st.A[s], st.B[s])


def _model_from_state(st, p, label, Cp, Cn, n_rows, info):
    from ..model import SVMModel

    n = int(st.ist[I_NS])
    slots = st.pos2slot[:n]
    a = st.alpha[slots]
    sv = a != 0.0
    bsv = sv & ((a == st.A[slots]) | (a == st.B[slots]))
    rho = -bias(st)
    obj = -dual_objective(st)
    n_iter = int(st.ist[I_STEPS])
    info(f"optimization finished, #iter = {n_iter}")
    if Cp == Cn:
        info(f"nu = {np.abs(a).sum() / (Cp * n_rows):f}")
    info(f"obj = {obj:f}, rho = {rho:f}")
    info(f"nSV = {int(sv.sum())}, nBSV = {int(bsv.sum())}")
    svs = slots[sv]
    # SVs grouped by class (label order: y = +1 is label[0]), file order within a class
    order = np.lexsort((st.rowid[svs], -st.y[svs]))
    svs = svs[order]
    total = svs.size
    info(f"Total nSV = {total}")
    Xs = st.X[svs]
    nz = Xs != 0.0
    indptr = np.zeros(total + 1, np.int64)
    np.cumsum(nz.sum(axis=1), out=indptr[1:])
    rows, cols = np.nonzero(nz)
    model = SVMModel(
        svm_type="c_svc", kernel_type=p.kernel_type, degree=p.degree, gamma=p.gamma,
        coef0=p.coef0, nr_class=2, label=label,
        rho=np.array([rho]), nSV=np.array([int((st.y[svs] > 0).sum()),
                                           int((st.y[svs] < 0).sum())], np.int64),
        sv_coef=st.alpha[svs].reshape(1, -1), sv_indptr=indptr,
        sv_indices=cols.astype(np.int32), sv_values=Xs[rows, cols])
    model.sv_indices_train = st.rowid[svs] + 1
    counters = dict(
        iterations=n_iter, processed=int(st.ist[I_PROCESSED]), inserted=int(st.ist[I_INSERTED]),
        reprocess=int(st.ist[I_REPROCESS]), finish_steps=int(st.ist[I_FINISH_STEPS]),
        evicted=int(st.ist[I_EVICTED]), max_expansion=int(st.ist[I_MAXNS]),
        kernel_evals=int(st.ist[I_KEVALS]), cache_hits=int(st.ist[I_HITS]),
        cache_misses=int(st.ist[I_MISSES]), n_sv=int(total), rows=int(n_rows),
        store_slots=int(st.X.shape[0]), store_width=int(st.X.shape[1]),
        cache_rows=int(st.cbuf.shape[0]), delta=float(st.fst[F_DELTA]), obj=obj)
    model.counters = counters
    return model
