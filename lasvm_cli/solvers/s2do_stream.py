"""Streaming all-in-one machines: one sequential pass of the online S2DO solver
(solvers/s2do_online.py) over a training file larger than memory, any number of classes
(``svm-train --multiclass llw|cs --solver online --stream``).

The online solver's state is already an expansion: positions [0, |W|) of its S2doState are the
support patterns W (examples with some alpha > 0), their gradients are the only ones kept, and
one pass touches an example once (TWO_NEWS), then steps on W only (TWO_OLD, TWO_OLD_SUPPORTS).
An example outside W is never read again in the pass. This module keeps the state over
*slots* of a growable dense store instead of over every example of the file, as the LASVM
stream does (solvers/lasvm_stream.py):

* **Slots.** ``X [cap, width]`` holds the examples of W plus the one being processed (one
  column per feature index seen so far, in ascending order). The S2doState and the kernel-row
  cache are over the ``cap`` slots (a slot is the cache's example id). An arriving example is
  written into a free slot (its position is beyond W), the cached rows are cut to the prefix W
  (what the in-memory swap of the new example to position |W| does: see below), then the
  compiled pass (qp/s2do_epoch.py's ``run_epoch``, called by qp/stream_s2do.py) runs on that
  one example: TWO_NEWS and the old steps it draws. The slots beyond W afterwards (the
  example if it did not join W, patterns that left W) are freed. ``cap`` grows x1.5 + 64 when no slot is free; the cache is then
  re-cut to the new width with its rows kept (the scheduling counts kernel values computed, so
  dropping rows would change the run).
* **Classes** are discovered as they appear. The number of classes d of the machine is that of
  the first block of the file (at least 2); the class indices follow LIBSVM's order on that
  block (first appearance, {-1,+1} swapped). A class first seen later grows the machine by one
  class: a column of zero alphas for every pattern of W, and W's gradients recomputed for the
  new d (LLW's coupling 1/d changes every gradient; CS gains one constraint per pattern). The
  model's labels are LIBSVM's order over the whole file (first appearance; {-1,+1} swapped
  when they are the only two), its coefficient rows permuted to it.
* **Scheduling.** Algorithm 7's cost of a kernel value (FEATURE_WORK per feature) uses the
  mean number of stored features per row of the first block (the in-memory run uses its
  storage's: all columns when dense, the mean over the file when sparse).

Memory: the store (cap x width x 8 bytes, cap <= 1.5 (|W| + 1) + 64), the state (cap x d x 8 x
~3 bytes), the row cache (<= -m MB) and one block of text with its parsed rows.

How it relates to the in-memory one-pass run (``--epochs 1``): the in-memory run visits the
examples in a random permutation (``--seed``); the stream in file order. Driven in file order,
with the same d (every class in the first block), the same kernel cost and a cache holding
every row it is asked for (no eviction in either run), the in-memory run takes the same steps
on the same variables with the same random draws, and writes the same model file, byte for
byte (tests/test_stream.py). Other differences: a class appearing after the first block (see
above), a cache too small for the rows (the two runs evict other rows, so the kernel values
counted by the scheduling differ), data kept transposed in memory (KernelData.XT: whole rows
computed per example). There is no finishing step in either run.
"""

import numpy as np

from ..io.svmlight import iter_svmlight
from ..numerics import kernels
from ..numerics.cache import N_SLOTS, cache_copy_rows, cache_stats, make_cache
from ..numerics.data import squared_norms
from ..numerics.kernels import KernelData, kernel_diagonal
from ..numerics.model import SVMModel
from ..qp import s2do as core
from ..qp.s2do import S2doScalars
from ..qp.stream_s2do import N_SIST, S_MAXW, S_NEXT, stream_rows
from ..qp.stream_slots import S_EVICTED, S_NFREE, ST_GROW
from . import s2do_online as so
from .lasvm_stream import (StoredZeros, StreamError, check_one_pass, dense_kd, grown,
                           grown_free, label_order, line_of_row, sv_rows, widen)
from .s2do_batch import result_from_state


# ---------------------------------------------------------------------------------------------
# Python driver


class _Store:
    def __init__(self, kind, d, C, target, eps, cache_mb, cap=64):
        self.kind, self.cache_mb = kind, cache_mb
        self.c = make_cache(cap, cache_mb)
        self.st = core.make_state(kind, np.zeros(cap, np.int64), d, np.zeros(cap), C,
                                  target=target, eps=eps, shrinking=False)
        S2doScalars(self.st).active = 0
        self.X = np.zeros((cap, 1))
        self.xsq = np.zeros(cap)
        self.rowid = np.full(cap, -1, np.int64)
        self.free = np.arange(cap - 1, -1, -1, dtype=np.int64)
        self.sist = np.zeros(N_SIST, np.int64)
        self.sist[S_NFREE] = cap
        self.features = np.zeros(0, np.int64)

    @property
    def cap(self):
        return self.X.shape[0]

    @property
    def d(self):
        return S2doScalars(self.st).d

    def kd(self):
        return dense_kd(self.X, self.xsq)

    def columns(self, indices):
        """Columns of X for these feature indices (lasvm_stream.widen)."""
        self.X, self.features, cols = widen(self.X, self.features, indices)
        return cols

    def _state(self, cap, d):
        """A new state of cap positions and d classes holding the old one's positions."""
        old = self.st
        n, d0 = old.S.shape[0], old.A.shape[1]
        st = core.S2doState(A=np.zeros((cap, d)), G=np.full((cap, d), S2doScalars(old).target),
                            S=np.zeros(cap), yc=np.zeros(cap, np.int64), KD=np.zeros(cap),
                            ist=old.ist.copy(), fst=old.fst.copy(), W=np.zeros(cap * d),
                            L=old.L)
        st.A[:n, :d0] = old.A
        st.G[:n, :d0] = old.G
        st.S[:n] = old.S
        st.yc[:n] = old.yc
        st.KD[:n] = old.KD
        S2doScalars(st).d = d
        return st

    def grow(self):
        """More slots (x1.5 + 64): positions, state and cached rows kept."""
        old_cap = self.cap
        cap = old_cap + old_cap // 2 + 64
        c0 = self.c
        c = make_cache(cap, self.cache_mb)
        c.perm[:old_cap] = c0.perm
        c.pos[:old_cap] = c0.pos
        c.pex[:old_cap] = c0.pex
        c.stats[:] = c0.stats
        cache_copy_rows(c0, c)
        self.c = c
        self.st = self._state(cap, self.d)
        self.X, self.xsq, self.rowid = (grown(self.X, cap), grown(self.xsq, cap),
                                        grown(self.rowid, cap, -1))
        self.free, self.sist[S_NFREE] = grown_free(self.free, int(self.sist[S_NFREE]), old_cap,
                                                   cap)

    def add_class(self, kd, kp):
        """One more class: a zero column of alphas, W's gradients recomputed exactly."""
        self.st = self._state(self.cap, self.d + 1)
        nW = S2doScalars(self.st).active
        core.reconstruct(self.st, self.c, kd, kp, 0, nW)


class _Classes:
    """Class indices in order of first appearance ({-1,+1} swapped on the first block, as
    LIBSVM's order of that block); LIBSVM's order over the whole file at the end."""

    def __init__(self):
        self.seen = []  # labels in order of first appearance in the file
        self.index = {}  # label -> class index of the machine

    def add(self, y):
        lab = np.trunc(y).astype(np.int64)
        u, first = np.unique(lab, return_index=True)
        new = [int(v) for v in u[np.argsort(first, kind="stable")] if int(v) not in self.index]
        first_block = not self.seen
        self.seen += new
        order = list(new)
        if first_block and len(order) == 2 and order[0] == -1 and order[1] == 1:
            order = order[::-1]
        for v in order:
            self.index[v] = len(self.index)
        return lab, len(new)

    def final(self):
        return label_order(self.seen)


def check_params(p):
    if p.multiclass not in ("llw", "cs") or p.solver != "online":
        raise StreamError("the all-in-one stream is --multiclass llw|cs --solver online")
    check_one_pass(p)


def first_block_kcost(indptr):
    """Algorithm 7's cost of a kernel value: FEATURE_WORK x the mean stored features of a row
    (kernels.row_work's sparse formula) over the first block."""
    n = max(indptr.shape[0] - 1, 1)
    return so.FEATURE_WORK * max(1, 1 + int(indptr[-1]) // n)


def train_stream_allinone(source, params, *, zero_based=False, info=None, warn=None,
                          progress=None, chunk_bytes=1 << 22):
    """One pass of the online S2DO solver (--multiclass llw|cs) over ``source``, read
    sequentially once. Returns an SVMModel (``multiclass llw|cs``, with ``counters``)."""
    info = info or (lambda _m: None)
    p = params
    check_params(p)
    kind = core.KINDS[p.multiclass]
    strategy = so.DEFAULT_STRATEGY[kind] if p.strategy is None else p.strategy
    code = so.STRATEGY_CODES[strategy]
    rules = np.array((so.SCHEDULE_CODES[p.schedule], so.SECOND_CODES[p.cs_second]), np.int64)
    kp = kernels.make_params(p.kernel_type, p.degree, p.gamma, p.coef0)
    classes = _Classes()
    store = None
    zeros = StoredZeros()
    gains = np.ones(3)
    counts = np.zeros(3, np.int64)
    kcost = None
    n_rows = 0
    late = []  # (label, 1-based line) of classes that grew the machine
    bar = progress(f"{p.multiclass} (online) stream") if progress else None
    blocks = iter_svmlight(source, zero_based=zero_based, chunk_bytes=chunk_bytes,
                           check_norms=True)
    try:
        for data in blocks:
            rowid = np.arange(n_rows, n_rows + data.n, dtype=np.int64)
            n_rows += data.n
            lab, n_new = classes.add(data.y)
            if store is None:
                d = max(len(classes.index), 2)
                store = _Store(kind, d, float(p.C), float(p.llw_target), float(p.eps),
                               p.cache_size)
                kcost = first_block_kcost(data.indptr)
                so.seed(int(p.seed))
            elif len(classes.index) > store.d:
                for v in classes.seen[-n_new:]:
                    if classes.index[v] >= store.d:
                        late.append((v, int(rowid[np.argmax(lab == v)])))
                        store.add_class(store.kd(), kp)
            mult = np.array((1, store.d, store.d), np.int64)
            cyc = np.array([classes.index[v] for v in lab.tolist()], np.int64) if lab.size \
                else np.zeros(0, np.int64)
            x_sq = squared_norms(data.indptr, data.values)
            ckd = KernelData(np.zeros((0, 0)), data.indptr, store.columns(data.indices),
                             data.values, x_sq)
            zeros.offer(data.indptr, data.indices, data.values, rowid)
            cdiag = np.zeros(data.n)
            kernel_diagonal(ckd, kp, cdiag)
            store.sist[S_NEXT] = 0
            while stream_rows(store.st, store.c, store.kd(), store.rowid, store.free,
                              store.sist, ckd, cyc, cdiag, rowid, kp, code, mult, gains,
                              counts, kcost, so.BETA, so.ETA, rules) == ST_GROW:
                store.grow()
            zeros.keep(store.rowid)
            del data, ckd
            if bar:
                bar.update(int(counts[so.TWO_NEWS]), S2doScalars(store.st).active)
    finally:
        if bar:
            bar.close()
    if store is None:
        raise StreamError("empty training file")
    if len(classes.seen) < 2:
        raise StreamError(f"--stream --multiclass {p.multiclass} needs at least two classes: "
                          f"the training file holds only label {classes.seen[0]}")
    for v, row in late:
        line = line_of_row(source, row) if isinstance(source, str) else None
        info(f"class {v} first appears at line {line if line else row + 1}, after the first "
             f"block: the machine grew to {classes.index[v] + 1} classes there")
    return _model(store, zeros, p, kind, strategy, classes, counts, kcost, n_rows, late, info)


def _model(store, zeros, p, kind, strategy, classes, counts, kcost, n_rows, late, info):
    from .s2do_batch import report_allinone

    st, c = store.st, store.c
    sc = S2doScalars(st)
    nW = sc.active
    counters = dict(iterations=sc.iterations, epochs=1, examples=int(counts[0]),
                    triangle_steps=sc.triangle_steps, seconds=None,
                    cache_rows=int(c.meta[N_SLOTS]), strategy=strategy)
    for s, name in enumerate(so.STEP_NAMES):
        counters[f"{name}_steps"] = int(counts[s])
    counters.update(cache_stats(c))
    counters["kernel_evals"] += n_rows  # the diagonal, as in memory
    res = result_from_state(st, c.perm, kind, counters, kkt_hi=nW)
    report_allinone(res, info)
    label = classes.final()
    k = label.size
    internal = np.array([classes.index[int(v)] for v in label], np.int64)  # final -> internal
    final_of = np.empty(store.d, np.int64)
    final_of[internal] = np.arange(k)
    coef = res.coef[internal]  # rows in the final label order (slot order columns)
    yc = np.zeros(store.cap, np.int64)
    yc[c.perm] = st.yc
    sv = np.flatnonzero((coef != 0).any(axis=0) & (store.rowid >= 0))
    cls = final_of[yc[sv]]
    sv = sv[np.lexsort((store.rowid[sv], cls))]
    cls = final_of[yc[sv]]
    indptr, indices, values = sv_rows(store.X, sv, store.features, zeros, store.rowid)
    model = SVMModel(
        svm_type="c_svc", kernel_type=p.kernel_type, degree=p.degree, gamma=p.gamma,
        coef0=p.coef0, nr_class=k, label=label, rho=np.zeros(k),
        nSV=np.bincount(cls, minlength=k).astype(np.int64), sv_coef=coef[:, sv].copy(),
        sv_indptr=indptr, sv_indices=indices, sv_values=values, multiclass=p.multiclass)
    model.sv_indices_train = store.rowid[sv] + 1
    model.counters = dict(res.counters, rows=int(n_rows), store_slots=store.cap,
                          store_width=int(store.X.shape[1]), max_expansion=int(
                              store.sist[S_MAXW]), left_expansion=int(store.sist[S_EVICTED]),
                          kernel_cost=float(kcost), classes_grown=len(late),
                          obj=float(res.obj))
    info(f"Total nSV = {int(sv.size)}")
    return model
