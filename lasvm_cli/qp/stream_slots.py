"""The streams' compiled slot code (the Python side, the row source and the runs:
solvers/lasvm_stream.py, lasvm_g_stream.py, lasvm_ovr_stream.py): a stream's examples live in
the slots of a growable dense store, which the online core sees as its examples; these
functions write a block's rows into free slots, run the core's step (LASVM, the LASVM-G
family, one machine of the one-vs-rest stream) on them and free the slots that left S.
"""

from collections import namedtuple

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

from ..numerics.cache import cache_discard, cache_forget_from
from . import lasvm_g_core as G
from . import online_core as core
from .online_core import I_INSERTED, I_NS, SEL_RANDOM

_NJIT = dict(cache=True, nogil=True)

# int64 scalars of a slot store, ``sist`` (S_NFREE is index 0 of every stream's store:
# fill_slot's count of free slots)
S_NFREE, S_EVICTED, S_MAXNS = 0, 1, 2
N_SIST = 3

# a block's status (stream_block, g_stream_block)
ST_DONE, ST_MORE, ST_GROW, ST_YIELD = 0, 1, 2, 3

SlotStore = namedtuple("SlotStore", "core X xsq rowid free sist")
SlotStore.__doc__ = """The streaming solver's state: the online core's state over ``cap`` slots
(core: positions, alpha, g, boxes, labels by slot) and the store itself:

X [cap, width] float64 features of each slot's example; xsq [cap] their squared norms
rowid [cap] int64 0-based row of the example in the file (-1: free)
free [cap] int64 stack of free slots; sist [N_SIST] int64 scalars (S_*)
"""


# ---------------------------------------------------------------------------------------------
# slots and the two-class LASVM stream


@numba.njit(**_NJIT)
def fill_slot(X, xsq, rowid, free, sist, ckd, a, rid):
    """Row ``a`` of the block (CSR, its columns already X's) into a free slot of a dense slot
    store, with its squared norm and file row ``rid``; returns the slot. ``sist[S_NFREE]``
    counts the free slots (index 0 of every stream's scalar block)."""
    sist[S_NFREE] -= 1
    q = free[sist[S_NFREE]]
    xq = X[q]
    xq[:] = 0.0
    for t in range(ckd.indptr[a], ckd.indptr[a + 1]):
        xq[ckd.indices[t]] = ckd.values[t]
    xsq[q] = ckd.x_sq[a]
    rowid[q] = rid
    return q


@numba.njit(inline="always", **_NJIT)
def arrive(st, kc, q, y, Cp, Cn):
    """Slot q now holds a new example of label y = +-1: unlabeled, alpha 0, its box."""
    st.y[q] = y
    st.labeled[q] = 0
    p = st.ex2pos[q]
    st.alpha[p] = 0.0
    st.A[p] = 0.0 if y > 0 else -Cn
    st.B[p] = Cp if y > 0 else 0.0
    cache_forget_from(kc, p)  # cached entries at p were K(., previous example of the slot)


@numba.njit(**_NJIT)
def load_slot(ss, kc, ckd, a, ya, rowid, Cp, Cn):
    """Write row ``a`` of the block (label ya = +-1) into a free slot; returns the slot."""
    q = fill_slot(ss.X, ss.xsq, ss.rowid, ss.free, ss.sist, ckd, a, rowid)
    arrive(ss.core, kc, q, ya, Cp, Cn)
    return q


@numba.njit(**_NJIT)
def free_slot(ss, kc, q):
    cache_discard(kc, q)
    ss.rowid[q] = -1
    ss.free[ss.sist[S_NFREE]] = q
    ss.sist[S_NFREE] += 1


@numba.njit(**_NJIT)
def release(ss, kc, q, n_peak):
    """After an online step on slot q: free the slots that left the expansion (evicted ones sit
    at positions [n_S, n_peak), see online_core._evict; a rejected q beyond n_peak)."""
    st = ss.core
    n = st.ist[I_NS]
    for p in range(n, n_peak):
        free_slot(ss, kc, st.pos2ex[p])
    ss.sist[S_EVICTED] += n_peak - n
    if st.ex2pos[q] >= n_peak:
        free_slot(ss, kc, q)
    if n > ss.sist[S_MAXNS]:
        ss.sist[S_MAXNS] = n


@numba.njit(**_NJIT)
def step_on_slot(ss, kc, skd, kp, q, tau, delta_max, seeding):
    """The core's online step on slot q (PROCESS alone while seeding), then free the slots
    that left the expansion."""
    st = ss.core
    inserted = st.ist[I_INSERTED]
    n0 = st.ist[I_NS]
    if seeding:
        core.process(st, kc, skd, kp, q, tau)
    else:
        core.online_step(st, kc, skd, kp, q, tau, delta_max)
    release(ss, kc, q, n0 + st.ist[I_INSERTED] - inserted)


@numba.njit(**_NJIT)
def seed_block(ss, kc, skd, kp, ckd, cy, crowid, done, n_seed, Cp, Cn, tau):
    """PROCESS the first n_seed rows of each class of the block (no REPROCESS), marking them
    done (needs 2 n_seed free slots)."""
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
            q = load_slot(ss, kc, ckd, a, yk, crowid[a], Cp, Cn)
            step_on_slot(ss, kc, skd, kp, q, tau, 0.0, True)


@numba.njit(**_NJIT)
def stream_block(ss, kc, skd, kp, ckd, cy, crowid, done, win, ctl, last, sel, tau, delta_max,
                 Cp, Cn, n_iter):
    """Online iterations over the rows of one block: fill the window (slots) with the next
    rows, pick one (file order for random selection), then the core's online step on it.
    ctl = [window size, next row]. Returns ST_DONE (block used up), ST_MORE (window not full
    and more blocks to come), ST_GROW (no free slot) or ST_YIELD (n_iter iterations done)."""
    st = ss.core
    M = win.shape[0]
    nrows = cy.shape[0]
    it = 0
    while True:
        while ctl[0] < M and ctl[1] < nrows:
            a = ctl[1]
            if done[a] == 0:
                if ss.sist[S_NFREE] == 0:
                    return ST_GROW
                win[ctl[0]] = load_slot(ss, kc, ckd, a, cy[a], crowid[a], Cp, Cn)
                ctl[0] += 1
                done[a] = 1
            ctl[1] += 1
        nwin = ctl[0]
        if nwin == 0:
            return ST_DONE
        if nwin < M and not last:
            return ST_MORE
        if it >= n_iter:
            return ST_YIELD
        b = 0
        if sel != SEL_RANDOM and nwin > 1:
            scan = core.new_scan(st)
            for c in range(nwin):
                if core.scan_candidate(scan, c, core.criterion(st, kc, skd, kp, win[c], sel),
                                       sel):
                    break
            b = np.int64(scan[1])
        q = win[b]
        for c in range(b, nwin - 1):
            win[c] = win[c + 1]
        ctl[0] = nwin - 1
        step_on_slot(ss, kc, skd, kp, q, tau, delta_max, False)
        it += 1


# ---------------------------------------------------------------------------------------------
# the LASVM-G family's stream (lasvm_g_core's iteration, no bias)


@numba.njit(**_NJIT)
def g_stream_block(ss, kc, skd, kp, ckd, cy, crowid, ctl, region, gst, gfs, n_iter, variant,
                   s, sv_thr, start, clean_every, clean_keep, Cp, Cn, C, tau, pair):
    """The iteration on the block's rows from ctl[0], each in a free slot, then the slots that
    left S freed; at most n_iter rows (the cache's width is fitted for that many insertions).
    Returns ST_DONE, ST_GROW (no free slot) or ST_YIELD."""
    st = ss.core
    nrows = cy.shape[0]
    it = 0
    while ctl[0] < nrows:
        if it >= n_iter:
            return ST_YIELD
        if ss.sist[S_NFREE] == 0:
            return ST_GROW
        a = ctl[0]
        q = load_slot(ss, kc, ckd, a, cy[a], crowid[a], Cp, Cn)
        region[q] = 0
        n0 = st.ist[I_NS]
        inserted = st.ist[I_INSERTED]
        G.iteration(st, kc, skd, kp, q, variant, s, sv_thr, start, Cp, Cn, C, tau, pair, region,
                    gst, gfs)
        if variant != G.V_FULL and gst[G.G_SINCE_CLEAN] >= clean_every:
            G.clean(st, kc, clean_keep, gst, region)
            gst[G.G_SINCE_CLEAN] = 0
        release(ss, kc, q, n0 + st.ist[I_INSERTED] - inserted)
        ctl[0] = a + 1
        it += 1
    return ST_DONE


# ---------------------------------------------------------------------------------------------
# the one-vs-rest stream: k machines over one store (``refs`` counts the S holding a slot)


@numba.njit(**_NJIT)
def load_rows(X, xsq, rowid, free, sist, ckd, crowid, lo, hi, slots):
    """Rows [lo, hi) of the block into free slots (slots[t] for row lo + t)."""
    for a in range(lo, hi):
        slots[a - lo] = fill_slot(X, xsq, rowid, free, sist, ckd, a, crowid[a])


@numba.njit(**_NJIT)
def machine_rows(st, kc, skd, kp, slots, ya, seeds, refs, n_seed, tau, delta_max, Cp, Cn):
    """One machine's online steps on the examples in ``slots`` (labels ya = +-1 for it), in
    order: the slot's box set at its position (and the cached entries there, which belonged to
    the slot's previous example, cut), then PROCESS alone while the example's side has had
    fewer than n_seed seeds (seeds = [+1 side, -1 side]), PROCESS + REPROCESS otherwise.
    refs[q] counts the machines whose S holds q: +1 when q joins this S, -1 for each slot it
    evicts; the rows of the slots that left S leave this machine's cache."""
    for t in range(slots.shape[0]):
        q = slots[t]
        y = ya[t]
        arrive(st, kc, q, y, Cp, Cn)
        side = 0 if y > 0 else 1
        n0 = st.ist[I_NS]
        inserted = st.ist[I_INSERTED]
        if seeds[side] < n_seed:
            seeds[side] += 1
            core.process(st, kc, skd, kp, q, tau)
        else:
            core.online_step(st, kc, skd, kp, q, tau, delta_max)
        n = st.ist[I_NS]
        n_peak = n0 + st.ist[I_INSERTED] - inserted
        for r in range(n, n_peak):  # evicted (online_core._evict puts them there)
            s = st.pos2ex[r]
            cache_discard(kc, s)
            if s != q:  # q itself was not counted yet
                refs[s] -= 1
        if st.ex2pos[q] < n:
            refs[q] += 1
        else:
            cache_discard(kc, q)


@numba.njit(**_NJIT)
def free_unheld(rowid, refs, free, sist):
    """Free the loaded slots that no machine's S holds; returns the slots still live."""
    live = 0
    for q in range(rowid.shape[0]):
        if rowid[q] >= 0:
            if refs[q] == 0:
                rowid[q] = -1
                free[sist[S_NFREE]] = q
                sist[S_NFREE] += 1
            else:
                live += 1
    return live
