"""Streaming LASVM (``svm-train --solver lasvm --stream``): :class:`LasvmStreamRun` is
solvers/lasvm.py's LasvmRun over a slot store fed by the row source (solvers/stream_source.py),
so the online driver steps it as it steps the in-memory run. Its examples are slots that rows
enter as they are read and leave with the expansion: memory follows the expansion, not the
file. Driven in file order, the in-memory run makes the same steps (tests/test_stream.py).
The store, the candidate window, the seeding and the state file:
docs/streaming.md#the-two-class-lasvm-stream.
"""

import numpy as np

from ..numerics import kernels
from ..numerics.cache import (FILL, HITS, KERNEL_EVALS, MISSES, N_SLOTS, WIDTH,
                              cache_positions_loaded, keeping_pays, make_cache, regrow_cache)
from ..numerics.classes import weighted_C
from ..numerics.data import squared_norms
from ..numerics.kernels import KernelData
from ..numerics.model import SVMModel
from ..qp import online_core as core
from ..qp.online_core import (AUTO_MAX, CHUNK, N_SEED, SEL_AUTOACTIVE, SEL_RANDOM,
                              SELECTION_CODES, LasvmScalars, fit_width)
from ..qp.stream_slots import (N_SIST, S_EVICTED, S_MAXNS, S_NFREE, ST_DONE, ST_GROW, ST_MORE,
                               SlotStore, seed_block, stream_block)
from .finishing import start_finishing
from .lasvm import PH_FINISH, PH_ONLINE, SAVED_FIELDS, LasvmRun
from .saved import load_into
from .stream_source import (RowSource, StoredZeros, StreamError, check_one_pass, dense_kd,
                            grown, grown_free, label_order, rows_over, sv_rows, widen)

SEED_ROWS_MAX = 200_000  # rows held at most while waiting for both classes / the seeds

def _new_store(kc, cap, width, Cp, Cn):
    st = core.make_state(kc, np.zeros(cap), np.zeros(cap), np.zeros(cap))
    sist = np.zeros(N_SIST, np.int64)
    sist[S_NFREE] = cap
    return SlotStore(st, np.zeros((cap, max(int(width), 1))), np.zeros(cap),
                     np.full(cap, -1, np.int64), np.arange(cap - 1, -1, -1, dtype=np.int64),
                     sist)


# ---------------------------------------------------------------------------------------------
# Python driver


class _Store:
    """The slot store and its cache, grown in Python between compiled calls."""

    def __init__(self, cache_mb, Cp=1.0, Cn=1.0, cap=64, width=1):
        self.cache_mb = cache_mb
        self.Cp, self.Cn = Cp, Cn
        self.kc = make_cache(cap, cache_mb)
        self.ss = _new_store(self.kc, cap, width, Cp, Cn)
        self.fill = None
        self.features = np.zeros(0, np.int64)  # the feature index of each column of X

    @property
    def cap(self):
        return self.ss.X.shape[0]

    def kd(self):
        return dense_kd(self.ss.X, self.ss.xsq)

    def set_fill(self, kp):
        """The cache's symmetric fill where it pays (cache.keeping_pays), decided once."""
        if self.fill is None:
            self.fill = keeping_pays(self.kd(), kp)
        self.kc.meta[FILL] = int(self.fill)

    def fit_width(self, finishing=False):
        core.fit_width(self.kc, self.ss.core, finishing)

    def columns(self, indices):
        """The columns of X holding these feature indices (:func:`widen`)."""
        X, self.features, cols = widen(self.ss.X, self.features, indices)
        if X is not self.ss.X:
            self.ss = self.ss._replace(X=X)
        return cols

    def grow(self, free_needed=1):
        """More slots (x1.5 + 64): positions and slot contents kept, a new empty cache (the
        kernel counters carried over)."""
        ss, old_cap = self.ss, self.cap
        cap = old_cap + max(old_cap // 2 + 64, free_needed)
        kc = regrow_cache(self, "kc", cap, self.cache_mb)
        old, new = ss.core, core.make_state(kc, np.zeros(cap), np.zeros(cap), np.zeros(cap))
        for name in ("alpha", "g", "A", "B", "y", "labeled"):
            getattr(new, name)[:old_cap] = getattr(old, name)
        new.ist[:] = old.ist
        new.fst[:] = old.fst
        sist = ss.sist.copy()
        free, sist[S_NFREE] = grown_free(ss.free, int(ss.sist[S_NFREE]), old_cap, cap)
        self.ss = SlotStore(new, grown(ss.X, cap), grown(ss.xsq, cap), grown(ss.rowid, cap, -1),
                            free, sist)
        if self.fill is not None:
            kc.meta[FILL] = int(self.fill)


def _csr_concat(parts):
    """Concatenate (y, indptr, indices, values, rowid) CSR blocks."""
    ys = [p[0] for p in parts]
    lens = [np.diff(p[1]) for p in parts]
    rl = np.concatenate(lens) if lens else np.zeros(0, np.int64)
    indptr = np.zeros(rl.size + 1, np.int64)
    np.cumsum(rl, out=indptr[1:])
    return (np.concatenate(ys), indptr, np.concatenate([p[2] for p in parts]).astype(np.int32),
            np.concatenate([p[3] for p in parts]), np.concatenate([p[4] for p in parts]))


def _check_params(p):
    check_one_pass(p)
    if p.label_budget is not None:
        raise StreamError("--stream does not support --label-budget")
    if p.multiclass != "ovo":
        raise StreamError("--stream supports two classes (no --multiclass)")
    if p.selection not in SELECTION_CODES:
        raise StreamError(f"unknown selection '{p.selection}'")


_EMPTY = (np.zeros(0), np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0),
          np.zeros(0, np.int64))

# the stream's scalars in its state file: where the current block begins, whether it is the
# empty one after the end of the file, the cache's symmetric fill, rows read
T_OFFSET, T_LINE, T_ROW0, T_LAST, T_FILL, T_ROWS = range(6)
STORE_FIELDS = ("X", "xsq", "rowid", "free", "sist")


class LasvmStreamRun(LasvmRun):
    """LASVM's run (solvers/lasvm.py) fed by a :class:`RowSource`: the examples are the slots
    of a store (:class:`Store`) that rows enter as they are read, in file order, and leave
    when they leave the expansion. What LasvmRun does with its state (finishing, delta, the
    dual, the measures, the phases) it does here over the store; only the online phase's
    ``step`` differs: the next rows of the file instead of draws from a pool. A step never
    runs past a block, so the saved state is the store, the window and where the current
    block begins (a resumed stream reads the file on from there)."""

    TITLE = "LASVM stream"
    NEXT_ROW = 1  # ctl[NEXT_ROW]: the next row of the current block (ctl[0]: the window's size)

    def __init__(self, source, params, kp, weighted, *, eps=1e-3, cache_mb=100.0, finish=True,
                 selection="random", candidates=50, delta_max=None, finishing="smo",
                 bail_out="lasvm11", zero_based=False, chunk_bytes=1 << 22, config=None):
        self.source_name, self.kp = source, kp
        self._p = params  # the model file's kernel fields
        self._weighted = weighted  # label order -> (Cp, Cn)
        self._read = dict(zero_based=zero_based, chunk_bytes=chunk_bytes)
        self.config = dict(config or {}, stream=True)
        self.cache_mb = cache_mb
        self.epochs = 1
        self.finish = bool(finish)
        self._finishing = finishing
        self._tau = float(eps)
        self._dmax = np.inf if delta_max is None else float(delta_max)
        self._budget = np.int64(np.iinfo(np.int64).max)
        self._sel = SELECTION_CODES[selection]
        self._cand = np.int64(candidates)
        M = 1 if self._sel == SEL_RANDOM else (AUTO_MAX if self._sel == SEL_AUTOACTIVE
                                               else int(candidates))
        self._bail_printed = int(bail_out == "printed")
        self.store = _Store(cache_mb)
        LasvmScalars(self.store.ss.core).bail_printed = self._bail_printed
        self.zeros = StoredZeros()
        self.source = None
        self.label = None
        self.win = np.zeros(M, np.int64)
        self.ctl = np.zeros(self.NEXT_ROW + 1, np.int64)
        self._block = None      # the current block: (ckd, cy, rowid, done), its position
        self._position = (0, 1, 0)
        self._last = False      # the current block is the empty one after the file's end
        self._done_later = np.zeros(0, np.int64)  # seeds beyond a resumed block's start
        self._rows = 0          # rows read (a fork's, which reads no more)
        self.phase = PH_ONLINE
        self._width_ready = False
        self._finish = None

    # the state LasvmRun works on is the store's
    @property
    def st(self):
        return self.store.ss.core

    @property
    def kc(self):
        return self.store.kc

    @property
    def kd(self):
        return self.store.kd()

    @property
    def l(self):
        return self.store.cap

    @property
    def n_rows(self):
        """Rows read so far."""
        return self.source.n_rows if self.source is not None else self._rows

    # -- the rows -----------------------------------------------------------------------------

    def _open(self, start=(0, 1, 0), labels=()):
        self.source = RowSource(self.source_name, start=start, labels=labels, **self._read)

    def _set_block(self, block, position, last=False):
        """Make ``block`` the current one: its columns in the store, its stored zeros offered,
        its labels +-1."""
        y, indptr, indices, values, rowid = block
        store = self.store
        ckd = KernelData(np.zeros((0, 0)), indptr, store.columns(indices), values,
                         squared_norms(indptr, values))
        self.zeros.offer(indptr, indices, values, rowid)
        cy = np.where(np.trunc(y).astype(np.int64) == self.label[0], 1.0, -1.0)
        done = np.zeros(y.size, np.uint8)
        if self._done_later.size:
            done[np.isin(rowid, self._done_later)] = 1
        self._block = (ckd, cy, rowid, done)
        self._position = position
        self._last = last
        self.ctl[self.NEXT_ROW] = 0

    def _next_block(self):
        got = self.source.next()
        if got is None:  # the window's last rows (they live in slots): a block with no rows
            self._set_block(_EMPTY, (0, 0, self.source.n_rows), last=True)
        else:
            self._set_block(*got)

    def _start_labels(self):
        label = self.source.labels.order()
        if label.size < 2:
            raise StreamError("--stream supports two classes: the training file holds only "
                              f"label {label[0]}" if label.size else "empty training file")
        self.label = label
        self.store.Cp, self.store.Cn = self._weighted(label)
        self.Cp, self.Cn = self.store.Cp, self.store.Cn

    # -- phases -------------------------------------------------------------------------------

    def _first_rows(self, ready):
        """Open the file and read blocks until ``ready(blocks, labels seen)`` (at most
        SEED_ROWS_MAX rows held); they are the first block, the labels are known."""
        self._open()
        pending, first = [], None
        while True:
            got = self.source.next()
            if got is None:
                break
            pending.append(got[0])
            first = first or got[1]
            seen = self.source.labels.seen
            if ready(pending, seen):
                break
            held = sum(b[0].size for b in pending)
            if held >= SEED_ROWS_MAX:
                if len(seen) == 2:
                    break
                raise StreamError(f"--stream: the first {held} rows hold one class only; "
                                  "both classes must appear near the start")
        if not pending:
            raise StreamError("empty training file")
        self._start_labels()
        self._set_block(_csr_concat(pending) if len(pending) > 1 else pending[0], first)

    def begin(self):
        """Read blocks until 5 rows of each class are held (at most SEED_ROWS_MAX rows), PROCESS
        them (LaSVM 1.1's seeding, no REPROCESS); the rest of those rows is the first block."""
        self._first_rows(_seeds_ready)
        store = self.store
        if store.ss.sist[S_NFREE] < 2 * N_SEED:
            store.grow(2 * N_SEED)
        store.set_fill(self.kp)
        store.fit_width()
        ckd, cy, rowid, done = self._block
        seed_block(store.ss, store.kc, store.kd(), self.kp, ckd, cy, rowid, done, N_SEED,
                   store.Cp, store.Cn, self._tau)
        self.zeros.keep(store.ss.rowid)

    def step(self, n=CHUNK):
        """At most ``n`` online iterations on the current block's rows (or the next block, or
        the end of the online phase); in the finishing phase, LasvmRun's step."""
        if self.phase != PH_ONLINE:
            return super().step(n)
        if self._block is None:
            self._next_block()
            return 0
        before = self.processed
        self.store.fit_width()
        status = self._stream_rows(n)
        self.zeros.keep(self.store.ss.rowid)
        if status == ST_GROW:
            self._grow()
        elif status in (ST_DONE, ST_MORE):
            if self._last:  # the pass is over: its one epoch ends (as in memory)
                self._rows = self.n_rows
                self.source = None
                LasvmScalars(self.st).epoch += 1
                self.end_online()
            else:
                self._block = None
        return self.processed - before

    def _stream_rows(self, n):
        """The compiled online iterations over the current block (stream_block's status)."""
        store = self.store
        ckd, cy, rowid, done = self._block
        return stream_block(store.ss, store.kc, store.kd(), self.kp, ckd, cy, rowid, done,
                            self.win, self.ctl, self._last, self._sel, self._tau, self._dmax,
                            store.Cp, store.Cn, int(n))

    def _grow(self):
        self.store.grow()

    # -- the model ------------------------------------------------------------------------------

    def result(self):
        """The SolverResult of the current iterate (coef by slot) with its model (``model``:
        the SVs are the store's rows) and LIBSVM's lines about it (``model_lines``)."""
        res = super().result()
        lines = []
        model = _model_from_store(self.store, self._p, self.label, self.n_rows, lines.append,
                                  self.zeros)
        res.model, res.model_lines = model, lines
        self._model_extra(model)
        return res

    def _model_extra(self, model):
        """What a subclass adds to the model (its counters)."""

    def rows_like(self, indptr, indices, values):
        """KernelData of CSR rows (feature indices as in the file) over the store's columns
        (a test set's rows against the current expansion)."""
        return rows_over(self.store.features, indptr, indices, values)

    # -- save / restore -------------------------------------------------------------------------

    def state_arrays(self):
        d = super().state_arrays()
        ss = self.store.ss
        d.update({name: np.array(getattr(ss, name)) for name in STORE_FIELDS})
        d["features"] = self.store.features.copy()
        d["win"], d["ctl"] = self.win.copy(), self.ctl.copy()
        offset, line, row0 = self._position
        d["stream"] = np.array([offset, line, row0, int(self._last), int(bool(self.store.fill)),
                                self.n_rows], np.int64)
        d["labels_seen"] = np.array(self.source.labels.seen if self.source is not None
                                    else self.label, np.int64)
        later = np.zeros(0, np.int64)
        if self._block is not None:
            _, _, rowid, done = self._block
            rest = np.arange(rowid.size) >= self.ctl[self.NEXT_ROW]
            later = rowid[rest & (done == 1)]
        d["done_later"] = later
        d.update(self.zeros.arrays())
        return d

    def _restore(self, d, phase):
        """The store, window, stored zeros and phase of ``d`` (state_arrays), a new empty
        cache; the file is not reopened."""
        t = np.asarray(d["stream"])
        X = np.asarray(d["X"])
        store = _Store(self.cache_mb, cap=X.shape[0], width=X.shape[1])
        store.fill = bool(t[T_FILL])
        store.kc.meta[FILL] = int(store.fill)
        ss = store.ss
        for name in SAVED_FIELDS:
            load_into(getattr(ss.core, name), d[name], name)
        cache_positions_loaded(store.kc)
        for name in STORE_FIELDS:
            load_into(getattr(ss, name), d[name], name)
        store.features = np.array(d["features"], np.int64)
        if "cache_stats" in d:
            store.kc.stats[:] = np.asarray(d["cache_stats"])
        self.store = store
        self.win = np.array(d["win"], np.int64)
        self.ctl = np.array(d["ctl"], np.int64)
        self.label = label_order(np.asarray(d["labels_seen"]).tolist())
        self._seen = [int(v) for v in np.asarray(d["labels_seen"])]
        store.Cp, store.Cn = self._weighted(self.label)
        self.Cp, self.Cn = store.Cp, store.Cn
        self.zeros = StoredZeros.from_arrays(d)
        self._position = (int(t[T_OFFSET]), int(t[T_LINE]), int(t[T_ROW0]))
        self._last = bool(t[T_LAST])
        self._rows = int(t[T_ROWS])
        self._done_later = np.array(d["done_later"], np.int64)
        self._block = None
        self.source = None
        self.phase = int(phase)
        self._width_ready = False
        self._finish = None
        self._restore_extra(d)

    def _restore_extra(self, d):
        """The finishing step of a run saved in it."""
        if self.phase == PH_FINISH:
            st = self.store.ss.core
            fit_width(self.store.kc, st, finishing=True)
            self._width_ready = True
            self._finish = start_finishing(st, self.store.kc, self.store.kd(), self.kp,
                                           self._tau, d, rule=self._finishing)

    def load_state_arrays(self, d, phase):
        """Put a saved stream back: its store, and in the online phase the file read on from
        the start of the block it was saved in (the rows of that block it had taken
        skipped)."""
        self._restore(d, phase)
        if self.phase != PH_ONLINE:
            return
        consumed = int(self.ctl[self.NEXT_ROW])
        if self._last:
            self._set_block(_EMPTY, self._position, last=True)
            self.ctl[self.NEXT_ROW] = consumed
            return
        self._open(self._position, self._seen)
        got = self.source.next()
        while got is not None and consumed > got[0][0].size:
            consumed -= got[0][0].size
            got = self.source.next()
        if got is None:
            raise StreamError(f"{self.source_name}: the file ends before the row the state "
                              "was saved at")
        self._set_block(*got)
        self.ctl[self.NEXT_ROW] = consumed

    def fork(self, cache_mb=None):
        """An independent copy (own store and an empty cache) that reads no more of the file:
        its online phase can only end (a snapshot's or a stop's model)."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        if cache_mb is not None:
            other.cache_mb = cache_mb
        other._restore(self.state_arrays(), self.phase)
        other._rows = self.n_rows
        return other


def _seeds_ready(parts, seen):
    if len(seen) < 2:
        return False
    lab = np.concatenate([np.trunc(b[0]).astype(np.int64) for b in parts])
    return all(int((lab == v).sum()) >= N_SEED for v in seen)


def start_stream(source, params, *, zero_based=False, chunk_bytes=1 << 22, warn=None):
    """The LasvmStreamRun of svm-train's parameters over the file ``source`` (the SOLVERS
    row's stream start for "lasvm", two classes): -e, -m, -c and -wi, the kernel, and the
    declared options of "lasvm" that one pass allows."""
    p = params
    _check_params(p)
    warn = warn or (lambda _m: None)
    kp = kernels.make_params(p.kernel_type, p.degree, p.gamma, p.coef0)

    def weighted(label):
        Cw = weighted_C(p, label, warn)
        return float(Cw[0]), float(Cw[1])

    config = dict(eps=float(p.eps), finish=bool(p.finish), selection=p.selection,
                  candidates=int(p.candidates), delta_max=None if p.delta_max is None
                  else float(p.delta_max), C=float(p.C),
                  weights={str(k): float(v) for k, v in sorted(p.weights.items())},
                  finishing=p.finishing, bail_out=p.bail_out)
    return LasvmStreamRun(source, p, kp, weighted, eps=p.eps, cache_mb=p.cache_size,
                          finish=p.finish, selection=p.selection, candidates=p.candidates,
                          delta_max=p.delta_max, finishing=p.finishing, bail_out=p.bail_out,
                          zero_based=zero_based, chunk_bytes=chunk_bytes, config=config)


def _model_from_store(store, p, label, n_rows, info, zeros=None):
    ss, kc = store.ss, store.kc
    st = ss.core
    slots, a, _, _, _, y = core.expansion(st)
    n_sv, n_bsv = core.sv_counts(st)
    rho = -core.bias(st)
    obj = -core.dual_objective(st)
    sc = LasvmScalars(st)
    n_iter = sc.steps
    info(f"optimization finished, #iter = {n_iter}")
    if store.Cp == store.Cn:
        info(f"nu = {np.abs(a).sum() / (store.Cp * n_rows):f}")
    info(f"obj = {obj:f}, rho = {rho:f}")
    info(f"nSV = {n_sv}, nBSV = {n_bsv}")
    sv = a != 0.0
    svs, coef, ysv = slots[sv], a[sv], y[sv]
    # SVs grouped by class (label order: y = +1 is label[0]), file order within a class
    order = np.lexsort((ss.rowid[svs], -ysv))
    svs, coef, ysv = svs[order], coef[order], ysv[order]
    info(f"Total nSV = {svs.size}")
    indptr, indices, values = sv_rows(ss.X, svs, store.features, zeros, ss.rowid)
    model = SVMModel(
        svm_type="c_svc", kernel_type=p.kernel_type, degree=p.degree, gamma=p.gamma,
        coef0=p.coef0, nr_class=2, label=label,
        rho=np.array([rho]), nSV=np.array([int((ysv > 0).sum()), int((ysv < 0).sum())], np.int64),
        sv_coef=coef.reshape(1, -1), sv_indptr=indptr, sv_indices=indices, sv_values=values)
    model.sv_indices_train = ss.rowid[svs] + 1
    model.counters = dict(
        iterations=n_iter, processed=sc.processed, inserted=sc.inserted,
        reprocess=sc.reprocess, finish_steps=sc.finish_steps, evicted=int(ss.sist[S_EVICTED]),
        max_expansion=int(ss.sist[S_MAXNS]), kernel_evals=int(kc.stats[KERNEL_EVALS]),
        cache_hits=int(kc.stats[HITS]), cache_misses=int(kc.stats[MISSES]), n_sv=int(svs.size),
        rows=int(n_rows), store_slots=store.cap, store_width=int(ss.X.shape[1]),
        cache_rows=int(kc.meta[N_SLOTS]), cache_width=int(kc.meta[WIDTH]),
        delta=sc.delta, obj=obj)
    return model

