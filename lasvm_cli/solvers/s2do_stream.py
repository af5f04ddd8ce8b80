"""Streaming all-in-one machines (``svm-train --multiclass llw|cs --solver online --stream``):
:class:`S2doStreamRun` is the online S2DO run (solvers/s2do_online.py's S2doRun) over a slot
store fed by the row source (solvers/stream_source.py). The online solver's state is already an
expansion (the support patterns W; an example outside W is never read again in the pass), so
the store holds W and the row being processed. Driven in file order, with every class in the
first block, the in-memory run writes the same model file (tests/test_stream.py). The slots,
classes first seen late, the scheduling's kernel cost and the state file:
docs/streaming.md#the-all-in-one-stream-llw-cs.
"""

import copy

import numpy as np

from ..base.numba_internals import rng_state, set_rng_state
from ..numerics import kernels
from ..numerics.cache import (KERNEL_EVALS, N_SLOTS, cache_copy_rows, cache_stats,
                              make_cache)
from ..numerics.data import squared_norms
from ..numerics.kernels import KernelData, kernel_diagonal
from ..numerics.model import SVMModel
from ..qp import s2do as core
from ..qp.s2do import S2doScalars
from ..qp.stream_s2do import N_SIST, S_MAXW, S_NEXT, stream_rows
from ..qp.stream_slots import S_EVICTED, S_NFREE, ST_GROW
from . import s2do_online as so
from .stream_source import (RowSource, StoredZeros, StreamError, check_one_pass, dense_kd,
                            grown, grown_free, label_order, line_of_row, rows_over, sv_rows,
                            widen)
from .run import Expansion
from .s2do_batch import coefficients, result_from_state
from .saved import load_into

_SAVING = "saving or resuming a streamed online multi-class run"


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
        """Columns of X for these feature indices (stream_source.widen)."""
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


# the stream's scalars in its state file: where the current block begins, rows read, the
# blocks' size
T_OFFSET, T_LINE, T_ROW0, T_ROWS, T_CHUNK = range(5)
STORE_FIELDS = ("X", "xsq", "rowid", "free", "sist")


class S2doStreamRun:
    """The online S2DO run (solvers/s2do_online.py's S2doRun) fed by the file: the examples
    are the slots of a :class:`_Store` that rows enter as they are read, in file order, and
    leave when they leave W. ``begin()`` reads the first block (the machine's classes, the
    kernel cost, the seed); each ``step(n)`` takes the next ``n`` rows of the current block
    (qp/stream_s2do.py's ``stream_rows`` on a prefix of the block), or reads the next block
    (the classes it brings first grow the machine); the run is done at the end of the file.
    A step never runs past a block, and cutting a block into steps changes no iterate (every
    decision is in the state), so a run driven with traces, stops and snapshots, or saved and
    resumed, ends with the uninterrupted stream's model. The measures are S2doRun's
    (``processed``: examples, ``n_expansion``: |W|). The saved state: the store, the whole
    row cache (the scheduling counts the kernel values computed), the classes, the step gains
    and counts, numba's generator, and where the current block begins; a resumed stream reads
    the file on from there."""

    CHUNK = so.S2doRun.CHUNK
    PHASES = so.S2doRun.PHASES
    TRACE_EXTRA = so.S2doRun.TRACE_EXTRA
    SAVED_FIELDS = so.S2doRun.SAVED_FIELDS

    def __init__(self, source, params, kp, kind, strategy, *, zero_based=False,
                 chunk_bytes=1 << 22):
        p = params
        self.source_name, self.kp, self.kind = source, kp, kind
        self._p = p  # the model file's kernel fields
        self.strategy = strategy
        self._code = so.STRATEGY_CODES[strategy]
        self._rules = np.array((so.SCHEDULE_CODES[p.schedule], so.SECOND_CODES[p.cs_second]),
                               np.int64)
        self._C, self._target, self._eps = float(p.C), float(p.llw_target), float(p.eps)
        self._seed = int(p.seed)
        self.cache_mb = p.cache_size
        self._zero_based, self._chunk = zero_based, int(chunk_bytes)
        self.TITLE = f"{p.multiclass} (online) stream"
        self.config = dict(multiclass=p.multiclass, C=self._C, eps=self._eps, strategy=strategy,
                           target=self._target, seed=self._seed, schedule=p.schedule,
                           cs_second=p.cs_second, cache_mb=float(p.cache_size), stream=True)
        self.epochs = 1
        self.classes = _Classes()
        self.store = None
        self.zeros = StoredZeros()
        self._gains = np.ones(3)  # Algorithm 7's stepGains
        self._counts = np.zeros(3, np.int64)
        self._kcost = None
        self.late = []  # (label, file row) of the classes that grew the machine
        self.n_rows = 0  # rows read
        self._source = None
        self._block = None  # the current block: (ckd, cyc, cdiag, rowid)
        self._position = (0, 1, 0)
        self.done = False

    # -- the run's state and measures ---------------------------------------------------------

    @property
    def online(self):
        return not self.done

    @property
    def phase(self):
        return int(self.done)

    @property
    def st(self):
        return self.store.st

    @property
    def kd(self):
        """The store's rows (a trace's test error: the expansion's ``sv`` are slots)."""
        return self.store.kd()

    @property
    def labels(self):
        """The machine's class labels in class-index order (NaN for a class of the first
        block's two that no row has had yet)."""
        lab = np.full(self.store.d if self.store is not None else 0, np.nan)
        for v, k in self.classes.index.items():
            lab[k] = v
        return lab

    @property
    def processed(self):
        return int(self._counts[so.TWO_NEWS])

    @property
    def n_expansion(self):
        return S2doScalars(self.store.st).active

    @property
    def kernel_evals(self):
        return int(self.store.c.stats[KERNEL_EVALS]) + self.n_rows  # with the diagonal

    def trace_sv(self):
        return self.n_expansion

    def delta(self):
        return float(core.kkt_violation(self.store.st, self.n_expansion))

    def dual_objective(self):
        return float(core.dual_value(self.store.st, self.n_expansion))

    def trace_extra(self):
        return (S2doScalars(self.store.st).iterations, float(self.done))

    # -- the rows ------------------------------------------------------------------------------

    def _open(self, start=(0, 1, 0)):
        self._source = RowSource(self.source_name, zero_based=self._zero_based,
                                 chunk_bytes=self._chunk, start=start, two_classes=False)

    def begin(self):
        """Read the first block: the machine's classes (at least 2), the kernel cost of the
        scheduling, the seed of the step draws."""
        self._open()
        got = self._source.next()
        if got is None:
            raise StreamError("empty training file")
        y, indptr = got[0][:2]
        self.classes.add(y)
        d = max(len(self.classes.index), 2)
        self.store = _Store(self.kind, d, self._C, self._target, self._eps, self.cache_mb)
        self._kcost = first_block_kcost(indptr)
        so.seed(self._seed)
        self._take(*got, grow=False)

    def _take(self, block, position, grow=True):
        """Make ``block`` (the row source's) the current block: a class it brings grows the
        machine (``grow``: a block read for the first time), its columns in the store, its
        stored zeros offered."""
        store = self.store
        y, indptr, indices, values, rowid = block
        lab, n_new = self.classes.add(y) if grow else (np.trunc(y).astype(np.int64), 0)
        if n_new and len(self.classes.index) > store.d:
            for v in self.classes.seen[-n_new:]:
                if self.classes.index[v] >= store.d:
                    self.late.append((v, int(rowid[np.argmax(lab == v)])))
                    store.add_class(store.kd(), self.kp)
        cyc = np.array([self.classes.index[v] for v in lab.tolist()], np.int64)
        ckd = KernelData(np.zeros((0, 0)), indptr, store.columns(indices), values,
                         squared_norms(indptr, values))
        self.zeros.offer(indptr, indices, values, rowid)
        cdiag = np.zeros(y.size)
        kernel_diagonal(ckd, self.kp, cdiag)
        self._block = (ckd, cyc, cdiag, rowid)
        self._position = position
        self.n_rows = int(rowid[-1]) + 1
        store.sist[S_NEXT] = 0

    def step(self, n=CHUNK):
        """The online pass on the next ``n`` rows of the current block (fewer at its end), or,
        the block taken, the next block read (the end of the file ends the run). Returns the
        rows processed."""
        if self.done:
            return 0
        store = self.store
        ckd, cyc, cdiag, rowid = self._block
        a = int(store.sist[S_NEXT])
        if a >= cyc.size:
            got = self._source.next()
            if got is None:
                self.done, self._source = True, None
            else:
                self._take(*got)
            return 0
        end = min(cyc.size, a + max(int(n), 1))
        mult = np.array((1, store.d, store.d), np.int64)
        # stream_rows takes the rows up to the end of the labels it is given: a prefix
        while stream_rows(store.st, store.c, store.kd(), store.rowid, store.free, store.sist,
                          ckd, cyc[:end], cdiag, rowid, self.kp, self._code, mult, self._gains,
                          self._counts, self._kcost, so.BETA, so.ETA, self._rules) == ST_GROW:
            store.grow()
        self.zeros.keep(store.rowid)
        return end - a

    # -- the model ----------------------------------------------------------------------------

    def expansion(self):
        """W by slot and each class's coefficients over it (class-index order):
        f_c(x) = sum_w coef[c, w] K(x, x_w), the arg-max over c decides."""
        st, c = self.store.st, self.store.c
        nW = self.n_expansion
        order = np.argsort(c.perm[:nW])
        coef = coefficients(self.kind, st.A[:nW][order], st.S[:nW][order], st.yc[:nW][order])
        return Expansion(c.perm[:nW][order].astype(np.int64), coef, np.zeros(coef.shape[0]))

    def rows_like(self, indptr, indices, values):
        """KernelData of CSR rows over the store's columns (a test set's rows)."""
        return rows_over(self.store.features, indptr, indices, values)

    def result(self):
        """The SolverResult of the current iterate with its model (``model``: the SVs are the
        store's rows) and svm-train's lines about it (``model_lines``): the classes that grew
        the machine, LIBSVM's summary."""
        p = self._p
        if len(self.classes.seen) < 2:
            held = "the training file holds" if self.done else \
                f"the first {self.n_rows} rows hold"
            raise StreamError(f"--stream --multiclass {p.multiclass} needs at least two "
                              f"classes: {held} only label {self.classes.seen[0]}")
        lines = []
        for v, row in self.late:
            line = line_of_row(self.source_name, row) if isinstance(self.source_name, str) \
                else None
            lines.append(f"class {v} first appears at line {line if line else row + 1}, after "
                         f"the first block: the machine grew to {self.classes.index[v] + 1} "
                         "classes there")
        res, model = _model(self.store, self.zeros, p, self.kind, self.strategy, self.classes,
                            self._counts, self._kcost, self.n_rows, self.late, lines.append)
        res.model, res.model_lines = model, lines
        return res

    def finished_copy(self):
        """No finishing step: the model of a stop or a snapshot is the current iterate, in a
        copy of its own that reads no more of the file (not the cache's rows: it is read,
        never stepped)."""
        other = copy.copy(self)
        store = other.store = copy.copy(self.store)
        store.st = type(store.st)(*(np.array(a) for a in store.st))
        store.c = store.c._replace(**{f: np.array(getattr(store.c, f))
                                      for f in ("perm", "pos", "meta", "stats")})
        for name in ("X", "xsq", "rowid", "free", "sist", "features"):
            setattr(store, name, np.array(getattr(store, name)))
        other.zeros = copy.copy(self.zeros)
        other.zeros.by_row = dict(self.zeros.by_row)
        other.classes = copy.deepcopy(self.classes)
        other._counts = self._counts.copy()
        other.late = list(self.late)
        other._source = other._block = None
        other.done = True
        return other

    # -- save / restore (training/run_control.py's state files) ---------------------------------

    def state_arrays(self):
        store, c = self.store, self.store.c
        d = {f"s2do_{name}": np.array(getattr(store.st, name)) for name in self.SAVED_FIELDS}
        d.update({f"cache_{f}": np.array(getattr(c, f)) for f in c._fields if f != "scratch"})
        d.update({name: np.array(getattr(store, name)) for name in STORE_FIELDS})
        d["features"] = store.features.copy()
        d["gains"], d["counts"] = self._gains.copy(), self._counts.copy()
        d["kernel_cost"] = np.array([self._kcost], np.float64)
        offset, line, row0 = self._position
        d["stream"] = np.array([offset, line, row0, self.n_rows, self._chunk], np.int64)
        d["classes_seen"] = np.array(self.classes.seen, np.int64)
        d["classes_index"] = np.array([self.classes.index[v] for v in self.classes.seen],
                                      np.int64)
        d["late"] = np.array(self.late, np.int64).reshape(-1, 2)
        d.update(self.zeros.arrays())
        d["numba_rng"] = np.array(rng_state(_SAVING), np.int64)
        return d

    def load_state_arrays(self, d, phase):
        """A run (not begun) continues from :meth:`state_arrays`: in the online phase it reads
        the file on from the start of the block it was saved in (with the saved run's block
        size, so its blocks are the saved run's), that block's rows already taken skipped."""
        A = np.asarray(d["s2do_A"])
        cap, n_classes = A.shape
        store = _Store(self.kind, n_classes, self._C, self._target, self._eps, self.cache_mb,
                       cap=cap)
        for name in self.SAVED_FIELDS:
            load_into(getattr(store.st, name), d[f"s2do_{name}"], name)
        for f in store.c._fields:
            if f != "scratch":
                load_into(getattr(store.c, f), d[f"cache_{f}"], f"cache_{f}")
        store.X = np.array(d["X"], np.float64)
        for name in ("xsq", "rowid", "free", "sist"):
            load_into(getattr(store, name), d[name], name)
        store.features = np.array(d["features"], np.int64)
        self.store = store
        load_into(self._gains, d["gains"], "gains")
        load_into(self._counts, d["counts"], "counts")
        self._kcost = float(np.asarray(d["kernel_cost"])[0])
        t = [int(v) for v in np.asarray(d["stream"])]
        self.classes = _Classes()
        self.classes.seen = [int(v) for v in np.asarray(d["classes_seen"])]
        self.classes.index = {v: int(k) for v, k in
                              zip(self.classes.seen, np.asarray(d["classes_index"]).tolist())}
        self.late = [(int(v), int(r)) for v, r in np.asarray(d["late"]).tolist()]
        self.zeros = StoredZeros.from_arrays(d)
        self._chunk = t[T_CHUNK]
        self._position = (t[T_OFFSET], t[T_LINE], t[T_ROW0])
        self.done = bool(phase)
        if not self.done:
            next_row = int(store.sist[S_NEXT])
            self._open(self._position)
            got = self._source.next()
            if got is None or got[0][0].size < next_row:
                raise StreamError(f"{self.source_name}: the file ends before the row the "
                                  "state was saved at")
            self._take(*got, grow=False)
            store.sist[S_NEXT] = next_row
        self.n_rows = t[T_ROWS]
        set_rng_state(np.asarray(d["numba_rng"]), _SAVING)


def start_stream_allinone(source, params, *, zero_based=False, chunk_bytes=1 << 22,
                          warn=None):
    """The S2doStreamRun of svm-train's parameters over the file ``source`` (the SOLVERS row's
    stream start for "online", --multiclass llw|cs): -c, -e, -m, --seed, --strategy,
    --llw-target, --step-schedule, --cs-second and the kernel."""
    p = params
    check_params(p)
    kind = core.KINDS[p.multiclass]
    strategy = so.DEFAULT_STRATEGY[kind] if p.strategy is None else p.strategy
    kp = kernels.make_params(p.kernel_type, p.degree, p.gamma, p.coef0)
    return S2doStreamRun(source, p, kp, kind, strategy, zero_based=zero_based,
                         chunk_bytes=chunk_bytes)


def _model(store, zeros, p, kind, strategy, classes, counts, kcost, n_rows, late, info):
    """(SolverResult, SVMModel) of the store's current iterate; LIBSVM's lines to ``info``."""
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
    return res, model
