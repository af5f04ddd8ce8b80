"""The all-in-one machines' stream, compiled (the Python side: solvers/s2do_stream.py): one
block's rows, each written into a free slot of the store (stream_slots.fill_slot), then the
online S2DO pass on that one example (s2do_epoch.run_epoch), then its slots beyond W freed.
"""

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

from ..numerics.cache import cache_discard, cache_forget_from
from . import s2do as core
from .s2do_epoch import run_epoch
from .stream_slots import ST_DONE, ST_GROW, S_EVICTED, S_NFREE, fill_slot

_NJIT = dict(cache=True, nogil=True)

# int64 scalars of the all-in-one stream's store, ``sist`` (S_NFREE and S_EVICTED as in
# stream_slots' store)
S_MAXW, S_NEXT = 2, 3
N_SIST = 4


@numba.njit(**_NJIT)
def drop_slot(c, rowid, free, sist, q):
    cache_discard(c, q)
    rowid[q] = -1
    free[sist[S_NFREE]] = q
    sist[S_NFREE] += 1


@numba.njit(**_NJIT)
def stream_rows(st, c, kd, rowid, free, sist, ckd, cyc, cdiag, crowid, kp, strategy, mult,
                gains, counts, kcost, beta, eta, rules):
    """The pass over the rows of one block from row sist[S_NEXT]: each into a free slot, then
    the online pass on that one example, then its slots beyond W freed. Returns ST_DONE or
    ST_GROW (no free slot: grow the store and call again)."""
    X, xsq = kd.X, kd.x_sq
    order = np.zeros(1, np.int64)
    dlog = np.zeros(0)
    target = st.fst[core.TARGET]
    d = st.ist[core.D]
    nrows = cyc.shape[0]
    while sist[S_NEXT] < nrows:
        a = sist[S_NEXT]
        if sist[S_NFREE] == 0:
            return ST_GROW
        q = fill_slot(X, xsq, rowid, free, sist, ckd, a, crowid[a])
        p = c.pos[q]
        for k in range(d):
            st.A[p, k] = 0.0
            st.G[p, k] = target
        st.S[p] = 0.0
        st.yc[p] = cyc[a]
        st.KD[p] = cdiag[a]
        nW = st.ist[core.ACTIVE]
        # in memory, the new example (never asked for) sits beyond every cached prefix, and
        # its swap to position |W| cuts the rows longer than |W| to |W| (its own row is not
        # cached to fill the entry by symmetry): the same cut here
        cache_forget_from(c, nW)
        order[0] = q
        run_epoch(st, c, kd, kp, order, strategy, mult, gains, counts, kcost, beta, eta,
                     rules, dlog)
        n_after = st.ist[core.ACTIVE]
        for t in range(n_after, nW + 1):
            drop_slot(c, rowid, free, sist, c.perm[t])
        sist[S_EVICTED] += nW - min(n_after, nW)
        if n_after > sist[S_MAXW]:
            sist[S_MAXW] = n_after
        sist[S_NEXT] = a + 1
    return ST_DONE
