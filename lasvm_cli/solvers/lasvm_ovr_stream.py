"""Streaming one-vs-rest LASVM, any number of classes (``svm-train --solver lasvm --multiclass
ovr --stream``): :class:`OvrStreamRun` holds the k machines (class c against the rest, as
training/ovr.py) over one slot store fed by the row source (solvers/stream_source.py), each
row offered to every machine in the same pass, so the online driver steps them as one run.
Each machine driven in memory over the same rows in file order gives training/ovr.py's model
file, byte for byte (tests/test_stream.py). The shared store, the seeds, classes first seen
late and the caches' share of -m: docs/streaming.md#the-one-vs-rest-lasvm-stream.
"""

import numpy as np

from ..numerics import kernels
from ..numerics.cache import (FILL, HITS, KERNEL_EVALS, MISSES, N_SLOTS,
                              cache_positions_loaded, keeping_pays, make_cache, regrow_cache)
from ..numerics.classes import weighted_C
from ..numerics.data import squared_norms
from ..numerics.kernels import KernelData
from ..numerics.model import SVMModel
from ..qp import online_core as core
from ..qp.online_core import CHUNK, N_SEED, LasvmScalars
from ..qp.stream_slots import S_NFREE, free_unheld, load_rows, machine_rows
from .finishing import start_finishing
from .lasvm import PH_DONE, PH_FINISH, PH_ONLINE, PHASES, SAVED_FIELDS, result_of
from .stream_source import (RowSource, StoredZeros, StreamError, check_one_pass, dense_kd,
                            grown, grown_free, label_order, line_of_row, rows_over, sv_rows,
                            widen)
from .result import SolverResult, report_binary
from .run import Expansion
from .saved import load_into

GROUP = 256  # rows of a block loaded into slots at a time, then offered to every machine

# int64 scalars of the store (S_NFREE: qp/stream_slots.py's)
S_MAXLIVE = 1
N_SIST = 2


# ---------------------------------------------------------------------------------------------
# Python driver


class _Machine:
    """Class ``label`` against the rest: its online-core state and row cache over the slots."""

    def __init__(self, label, index, Cp, Cn, start_row, cap, cache_mb, fill):
        self.label, self.index, self.Cp, self.Cn = label, index, Cp, Cn
        self.start_row = start_row
        self.seeds = np.zeros(2, np.int64)
        self.kc = make_cache(cap, cache_mb)
        self.kc.meta[FILL] = int(fill)
        self.st = core.make_state(self.kc, np.zeros(cap), np.zeros(cap), np.zeros(cap))

    def grow(self, cap, cache_mb, fill):
        """Positions and state kept over cap >= the current slots; a new empty cache of
        cache_mb (counters kept)."""
        old_cap = self.kc.perm.shape[0]
        kc = regrow_cache(self, "kc", cap, cache_mb)
        kc.meta[FILL] = int(fill)
        old, new = self.st, core.make_state(kc, np.zeros(cap), np.zeros(cap), np.zeros(cap))
        for name in ("alpha", "g", "A", "B", "y", "labeled"):
            getattr(new, name)[:old_cap] = getattr(old, name)
        new.ist[:] = old.ist
        new.fst[:] = old.fst
        self.st = new


class _OvrStore:
    """The shared slots (features, squared norms, file row, class, machines holding each)."""

    def __init__(self, cache_mb, cap=64):
        self.cache_mb = cache_mb
        self.X = np.zeros((cap, 1))
        self.xsq = np.zeros(cap)
        self.rowid = np.full(cap, -1, np.int64)
        self.cls = np.zeros(cap, np.int64)  # class index (order of first appearance)
        self.refs = np.zeros(cap, np.int64)
        self.free = np.arange(cap - 1, -1, -1, dtype=np.int64)
        self.sist = np.zeros(N_SIST, np.int64)
        self.sist[S_NFREE] = cap
        self.features = np.zeros(0, np.int64)
        self.machines = []
        self.fill = None
        self.bail_printed = False

    @property
    def cap(self):
        return self.X.shape[0]

    def kd(self):
        return dense_kd(self.X, self.xsq)

    def machine_mb(self):
        return self.cache_mb / max(len(self.machines), 1)

    def columns(self, indices):
        """Columns of X for these feature indices (stream_source.widen)."""
        self.X, self.features, cols = widen(self.X, self.features, indices)
        return cols

    def add_machine(self, label, Cp, Cn, start_row, kp):
        if self.fill is None:  # decided once, on the first block's columns
            self.fill = keeping_pays(self.kd(), kp)
        share = self.cache_mb / (len(self.machines) + 1)
        for m in self.machines:  # -m holds for all machines together: the new one's share
            m.grow(self.cap, share, self.fill)  # comes out of theirs (their rows dropped)
        self.machines.append(_Machine(label, len(self.machines), Cp, Cn, start_row, self.cap,
                                      share, self.fill))
        # the paper's bail-out (--bail-out printed): in ist, which grow() copies
        LasvmScalars(self.machines[-1].st).bail_printed = int(self.bail_printed)

    def grow(self, free_needed):
        old_cap = self.cap
        cap = old_cap + max(old_cap // 2 + 64, free_needed)
        for m in self.machines:
            m.grow(cap, self.machine_mb(), self.fill)
        for name, fillv in (("X", 0.0), ("xsq", 0.0), ("rowid", -1), ("cls", 0), ("refs", 0)):
            setattr(self, name, grown(getattr(self, name), cap, fillv))
        self.free, self.sist[S_NFREE] = grown_free(self.free, int(self.sist[S_NFREE]), old_cap,
                                                   cap)


def check_params(p):
    check_one_pass(p)
    if p.multiclass != "ovr" or p.solver != "lasvm":
        raise StreamError("the one-vs-rest stream is --multiclass ovr --solver lasvm")
    if p.label_budget is not None:
        raise StreamError("--stream does not support --label-budget")
    if p.selection != "random":
        raise StreamError("--stream --multiclass ovr takes the examples in file order "
                          "(--selection random): a candidate window would differ per machine")


# the stream's scalars in its state file: where the current block begins, the next row of the
# block, the group of rows in the slots, the peak of live slots, the blocks' size, the
# symmetric fill (-1: not decided), the machine being finished, the file read to its end
(T_OFFSET, T_LINE, T_ROW0, T_NEXT, T_LO, T_HI, T_MAXLIVE, T_CHUNK, T_FILL, T_FINISHING,
 T_PASS_OVER) = range(11)
STORE_FIELDS = ("X", "xsq", "rowid", "cls", "refs", "free", "sist")
# each machine's scalars: class index, label, start row, seeds of its two sides
M_INDEX, M_LABEL, M_START, M_SEED_POS, M_SEED_NEG = range(5)


class OvrStreamRun:
    """The k one-vs-rest LASVM machines over one pass of the file, as one run the online driver
    steps (solvers/run.py's SavedRun). ``begin()`` reads the first block (a machine for each of
    its classes); each ``step(n)`` offers the next ``n`` rows of the current group to every
    machine in turn (a group is loaded into the slots when the previous one is done and freed
    once every machine has seen it, so the slots, and every machine's steps, are the
    uninterrupted pass's however the rows are cut into steps), or reads the next block (a
    machine for each class it brings first). At the end of the file the finishing phase
    finishes the machines one after the other (``step(n)``: n finishing steps of the current
    one). ``processed`` counts rows of the pass, ``n_expansion`` the union of the k expansions.
    The saved state: the store, every machine's core state and seeds, the classes, and where
    the current block begins; a resumed run reads the file on from there with the saved run's
    block size (a class first seen in a block starts its machine at that block's first row, so
    the blocks must be the first reading's: io/svmlight.py keeps the reads on the file's grid
    of that size). The caches start empty (LASVM's steps depend on S only)."""

    CHUNK = CHUNK
    PHASES = PHASES
    TRACE_EXTRA: tuple = ()
    ARG_MAX = True  # a test row's class: the arg-max over the machines, even with one machine

    def __init__(self, source, params, kp, *, zero_based=False, chunk_bytes=1 << 22,
                 warn=None):
        p = params
        self.source_name, self.kp, self._p = source, kp, p
        self._warn = warn or (lambda _m: None)
        self._tau = float(p.eps)
        self._dmax = np.inf if p.delta_max is None else float(p.delta_max)
        self.finish = bool(p.finish)
        self._finishing = p.finishing
        self._zero_based, self._chunk = zero_based, int(chunk_bytes)
        self.cache_mb = p.cache_size
        self.TITLE = "LASVM ovr stream"
        self.config = dict(multiclass="ovr", eps=self._tau, finish=self.finish,
                           finishing=p.finishing, bail_out=p.bail_out, C=float(p.C),
                           delta_max=None if p.delta_max is None else float(p.delta_max),
                           weights={str(k): float(v) for k, v in sorted(p.weights.items())},
                           stream=True)
        self.epochs = 1
        self.store = _OvrStore(p.cache_size)
        self.store.bail_printed = p.bail_out == "printed"
        self.zeros = StoredZeros()
        self.index = {}  # label -> class index (order of first appearance)
        self.late = []  # (label, 0-based first row, 0-based start row of its machine)
        self.source = None
        self._block = None  # the current block: (ckd, class index of each row, file rows)
        self._position = (0, 1, 0)  # where it begins: byte offset, line, first row
        self._next = self._lo = self._hi = 0  # its next row; the group [lo, hi) in the slots
        self._slots = np.zeros(GROUP, np.int64)  # the group's slots
        self.max_live = 0
        self._pass_over = False  # the file was read to its end
        self.phase = PH_ONLINE
        self._fm = 0  # the machine being finished
        self._finish = None
        self._once = dict(warned=False, lines={})  # shared with copies: warnings, line numbers

    # -- the run's state and measures ---------------------------------------------------------

    @property
    def done(self):
        return self.phase == PH_DONE

    @property
    def online(self):
        return self.phase == PH_ONLINE

    @property
    def processed(self):
        """Rows of the pass offered to every machine."""
        return int(self._position[T_ROW0]) + self._next

    def _expansions(self, nonzero=False):
        """The slots of each machine's S (``nonzero``: those with alpha != 0)."""
        out = []
        for m in self.store.machines:
            n = LasvmScalars(m.st).n_s
            s = m.st.pos2ex[:n]
            out.append(s[m.st.alpha[:n] != 0.0] if nonzero else s)
        return out

    @property
    def n_expansion(self):
        """|union of the k expansions S| (the slots the store must keep)."""
        parts = self._expansions()
        return int(np.unique(np.concatenate(parts)).size) if parts else 0

    @property
    def kernel_evals(self):
        return sum(int(m.kc.stats[KERNEL_EVALS]) for m in self.store.machines)

    @property
    def kd(self):
        """The store's rows (a trace's test error: the expansion's ``sv`` are slots)."""
        return self.store.kd()

    def _machines(self):
        """The machines in the model's label order, and that order."""
        label = label_order([m.label for m in self.store.machines])
        by_label = {m.label: m for m in self.store.machines}
        return [by_label[int(v)] for v in label], label

    @property
    def labels(self):
        """The machines' labels in the model's order (the rows of :meth:`expansion`)."""
        return self._machines()[1].astype(np.float64)

    def trace_sv(self):
        """The union of the machines' nonzero alphas."""
        parts = self._expansions(nonzero=True)
        return int(np.unique(np.concatenate(parts)).size) if parts else 0

    def delta(self):
        """The largest of the machines' deltas (recomputed, the kept ones restored, as
        LasvmRun.delta)."""
        d, skd = 0.0, self.store.kd()
        for m in self.store.machines:
            sc = LasvmScalars(m.st)
            kept = sc.delta
            _delta(m, skd, self.kp)
            d = max(d, sc.delta)
            sc.delta = kept
        return d

    def dual_objective(self):
        """The sum of the machines' duals (the k problems are independent)."""
        return float(sum(core.dual_objective(m.st) for m in self.store.machines))

    def trace_extra(self):
        return ()

    # -- the rows ------------------------------------------------------------------------------

    def _open(self, start=(0, 1, 0)):
        self.source = RowSource(self.source_name, zero_based=self._zero_based,
                                chunk_bytes=self._chunk, start=start, two_classes=False)

    def begin(self):
        """Open the file and read its first block (a machine for each of its classes)."""
        self._open()
        self._read_block()

    def _read_block(self):
        """The next block, or at the end of the file the end of the pass."""
        got = self.source.next()
        if got is None:
            self.source = None
            self._pass_over = True
            self.end_online()
        else:
            self._take(*got)

    def _take(self, block, position, new=True):
        """Make ``block`` the current one: its columns in the store, its stored zeros offered,
        a machine for each class it brings first (``new``: a block read for the first time),
        starting at its first row."""
        p, store = self._p, self.store
        y, indptr, indices, values, rowid = block
        first_row = int(position[T_ROW0])
        lab = np.trunc(y).astype(np.int64)
        ckd = KernelData(np.zeros((0, 0)), indptr, store.columns(indices), values,
                         squared_norms(indptr, values))
        self.zeros.offer(indptr, indices, values, rowid)
        if new:
            u, first = np.unique(lab, return_index=True)
            for v, f in sorted(zip(u.tolist(), first.tolist()), key=lambda t: t[1]):
                if v in self.index:
                    continue
                self.index[v] = len(self.index)
                if first_row > 0:
                    self.late.append((v, first_row + f, first_row))
                # the rest's C is C itself: the weight of class c applies to its own examples
                Cp = float(p.C) * float(p.weights.get(v, 1.0))
                store.add_machine(v, Cp, float(p.C), first_row, self.kp)
        cls = np.array([self.index[v] for v in lab.tolist()], np.int64) if lab.size else \
            np.zeros(0, np.int64)
        self._block = (ckd, cls, rowid)
        self._position = tuple(int(v) for v in position)
        self._next = self._lo = self._hi = 0

    def step(self, n=CHUNK):
        """The next ``n`` rows of the current group (fewer at its end) offered to every
        machine, or the next block read (the end of the file ends the pass); in the finishing
        phase ``n`` finishing steps of the current machine. Returns the rows offered."""
        if self.phase == PH_FINISH:
            self._finish_step(n)
            return 0
        if self.phase != PH_ONLINE:
            return 0
        ckd, cls, rowid = self._block
        if self._next >= cls.size:
            self._read_block()
            return 0
        store = self.store
        if self._next == self._hi:  # the next group of the block into free slots
            lo, hi = self._next, min(self._next + GROUP, cls.size)
            if store.sist[S_NFREE] < hi - lo:
                store.grow(hi - lo)
            load_rows(store.X, store.xsq, store.rowid, store.free, store.sist, ckd, rowid,
                      lo, hi, self._slots[:hi - lo])
            store.cls[self._slots[:hi - lo]] = cls[lo:hi]
            self._lo, self._hi = lo, hi
        a, b = self._next, min(self._hi, self._next + max(int(n), 1))
        sl = self._slots[a - self._lo:b - self._lo]
        skd = store.kd()
        for m in store.machines:
            core.fit_width(m.kc, m.st)
            ya = np.where(cls[a:b] == m.index, 1.0, -1.0)
            machine_rows(m.st, m.kc, skd, self.kp, sl, ya, m.seeds, store.refs, N_SEED,
                         self._tau, self._dmax, m.Cp, m.Cn)
        self._next = b
        if b == self._hi:  # every machine has seen the group: the slots no S kept are freed
            self.max_live = max(self.max_live, free_unheld(store.rowid, store.refs, store.free,
                                                           store.sist))
            self.zeros.keep(store.rowid)
        return b - a

    def end_online(self):
        """End of the pass (or an early stop): the finishing phase, or with --no-finish every
        machine's delta brought up to date."""
        if self.phase != PH_ONLINE:
            return
        machines = self.store.machines
        if not machines:
            raise StreamError("empty training file")
        if len(machines) < 2:
            held = "the training file holds" if self._pass_over else \
                f"the first {self.processed} rows hold"
            raise StreamError("--stream --multiclass ovr needs at least two classes: "
                              f"{held} only label {machines[0].label}")
        self.source = None
        if self.finish:
            self.phase, self._fm, self._finish = PH_FINISH, 0, None
            return
        skd = self.store.kd()
        for m in machines:
            _delta(m, skd, self.kp)
        self.phase = PH_DONE

    def _finish_step(self, n):
        m = self.store.machines[self._fm]
        if self._finish is None:
            core.fit_width(m.kc, m.st, finishing=True)
            self._finish = start_finishing(m.st, m.kc, self.store.kd(), self.kp, self._tau,
                                           rule=self._finishing)
        if self._finish.step(n):
            self._finish = None
            self._fm += 1
            if self._fm == len(self.store.machines):
                self.phase = PH_DONE

    # -- the model ----------------------------------------------------------------------------

    def expansion(self):
        """The union of the machines' SVs (slots) and each machine's coefficients over it, in
        the model's label order, rho = -b of each: the arg-max decides, as svm-predict decides
        a ``multiclass ovr`` model."""
        machines, _ = self._machines()
        parts = self._expansions(nonzero=True)
        sv = np.unique(np.concatenate(parts)).astype(np.int64) if parts else \
            np.zeros(0, np.int64)
        coef = np.zeros((len(machines), sv.size))
        rho = np.zeros(len(machines))
        for c, m in enumerate(machines):
            n = LasvmScalars(m.st).n_s
            a = np.zeros(self.store.cap)
            a[m.st.pos2ex[:n]] = m.st.alpha[:n]
            coef[c] = a[sv]
            rho[c] = -core.bias(m.st)
        return Expansion(sv, coef, rho)

    def rows_like(self, indptr, indices, values):
        """KernelData of CSR rows over the store's columns (a test set's rows)."""
        return rows_over(self.store.features, indptr, indices, values)

    def result(self):
        """The SolverResult of the machines (coef [k, slots], the model's label order) with the
        model (``model``: training/ovr.py's ``multiclass ovr``, the SVs the store's rows) and
        svm-train's lines about it (``model_lines``): the machines that started late, each
        machine's LIBSVM lines, "Total nSV"."""
        machines, label = self._machines()
        if self._pass_over and not self._once["warned"]:
            self._once["warned"] = True
            weighted_C(self._p, label, self._warn)  # weights of labels not in the file
        lines = []
        for v, row, start in self.late:
            lines.append(f"class {v} first appears at line {self._line(row)}, after the first "
                         f"block: its machine starts at line {self._line(start)} (that "
                         "block's first row) and never saw the rows before")
        return _model(self.store, machines, label, self.zeros, self._p, self.processed,
                      self.late, self.max_live, lines, self._warn)

    def _line(self, row):
        """The file line of a 0-based row (rows are lines when the file cannot be read again,
        a stream, or has no comments); looked up once."""
        lines = self._once["lines"]
        if row not in lines:
            line = line_of_row(self.source_name, row) if isinstance(self.source_name, str) \
                else None
            lines[row] = line or row + 1
        return lines[row]

    def finished_copy(self):
        """The model this run would give if the pass ended now: a copy (its own store and
        machines, empty caches) that reads no more of the file, taken through the finishing
        step of every machine."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._restore(self.state_arrays(), self.phase)
        other.source = None
        other.end_online()
        while not other.done:
            other.step(other.CHUNK)
        return other

    # -- save / restore (training/run_control.py's state files) ---------------------------------

    def state_arrays(self):
        store = self.store
        d = {name: np.array(getattr(store, name)) for name in STORE_FIELDS}
        d["features"] = store.features.copy()
        d["group_slots"] = self._slots[:self._hi - self._lo].copy()
        offset, line, row0 = self._position
        fill = -1 if store.fill is None else int(store.fill)
        d["stream"] = np.array([offset, line, row0, self._next, self._lo, self._hi,
                                self.max_live, self._chunk, fill, self._fm,
                                int(self._pass_over)], np.int64)
        d["machines"] = np.array([[m.index, m.label, m.start_row, m.seeds[0], m.seeds[1]]
                                  for m in store.machines], np.int64).reshape(-1, 5)
        d["machine_C"] = np.array([[m.Cp, m.Cn] for m in store.machines]).reshape(-1, 2)
        for j, m in enumerate(store.machines):
            for name in SAVED_FIELDS:
                d[f"machine{j}_{name}"] = np.array(getattr(m.st, name))
            d[f"machine{j}_cache_stats"] = np.array(m.kc.stats)
        if self._finish is not None:
            d.update({f"machine{self._fm}_{k}": v for k, v in self._finish.arrays().items()})
        d["late"] = np.array(self.late, np.int64).reshape(-1, 3)
        d.update(self.zeros.arrays())
        return d

    def _restore(self, d, phase):
        """The store, machines, classes, stored zeros and phase of ``d`` (state_arrays), empty
        caches; the file is not reopened."""
        X = np.asarray(d["X"])
        t = [int(v) for v in np.asarray(d["stream"])]
        store = _OvrStore(self.cache_mb, cap=X.shape[0])
        store.bail_printed = self.store.bail_printed
        store.X = np.array(X, np.float64)
        for name in STORE_FIELDS[1:]:
            load_into(getattr(store, name), d[name], name)
        store.features = np.array(d["features"], np.int64)
        store.fill = None if t[T_FILL] < 0 else bool(t[T_FILL])
        ms, mc = np.asarray(d["machines"], np.int64), np.asarray(d["machine_C"], np.float64)
        share = self.cache_mb / max(len(ms), 1)  # the caches of -m / k each, empty
        for j, (row, (Cp, Cn)) in enumerate(zip(ms.tolist(), mc.tolist())):
            m = _Machine(int(row[M_LABEL]), int(row[M_INDEX]), float(Cp), float(Cn),
                         int(row[M_START]), store.cap, share, bool(store.fill))
            store.machines.append(m)
            m.seeds[:] = (row[M_SEED_POS], row[M_SEED_NEG])
            for name in SAVED_FIELDS:
                load_into(getattr(m.st, name), d[f"machine{j}_{name}"], name)
            cache_positions_loaded(m.kc)
            m.kc.stats[:] = np.asarray(d[f"machine{j}_cache_stats"])
        self.store = store
        self.index = {m.label: m.index for m in store.machines}
        self.late = [tuple(int(v) for v in r) for r in np.asarray(d["late"]).tolist()]
        self.zeros = StoredZeros.from_arrays(d)
        self._position = (t[T_OFFSET], t[T_LINE], t[T_ROW0])
        self._next, self._lo, self._hi = t[T_NEXT], t[T_LO], t[T_HI]
        self._slots = np.zeros(GROUP, np.int64)
        self._slots[:self._hi - self._lo] = np.asarray(d["group_slots"], np.int64)
        self.max_live, self._chunk = t[T_MAXLIVE], t[T_CHUNK]
        self._fm, self._pass_over = t[T_FINISHING], bool(t[T_PASS_OVER])
        self._block = None
        self.source = None
        self.phase = int(phase)
        self._finish = None
        if self.phase == PH_FINISH:
            m = store.machines[self._fm]
            prefix = f"machine{self._fm}_"
            saved = {k[len(prefix):]: v for k, v in d.items() if k.startswith(prefix)}
            core.fit_width(m.kc, m.st, finishing=True)
            self._finish = start_finishing(m.st, m.kc, store.kd(), self.kp, self._tau, saved,
                                           rule=self._finishing)

    def load_state_arrays(self, d, phase):
        """A run (not begun) continues from :meth:`state_arrays`: in the online phase it reads
        the file on from the start of the block it was saved in, with the saved run's block
        size (so its blocks are the saved run's); the rows of that block already offered are
        skipped, the group in the slots goes on."""
        self._restore(d, phase)
        if self.phase != PH_ONLINE:
            return
        nxt, lo, hi = self._next, self._lo, self._hi
        self._open(self._position)
        got = self.source.next()
        if got is None or got[0][0].size < nxt:
            raise StreamError(f"{self.source_name}: the file ends before the row the state "
                              "was saved at")
        self._take(*got, new=False)
        self._next, self._lo, self._hi = nxt, lo, hi


def _delta(m, skd, kp):
    """Machine m's delta recomputed (the core's MODE_DELTA)."""
    core.lasvm_run(m.st, m.kc, skd, kp, np.int64(core.MODE_DELTA), np.int64(0), np.int64(0),
                   np.int64(1), 0.0, np.inf, np.int64(1))


def start_stream_ovr(source, params, *, zero_based=False, chunk_bytes=1 << 22, warn=None):
    """The OvrStreamRun of svm-train's parameters over the file ``source`` (the SOLVERS row's
    stream start for "lasvm", --multiclass ovr): -c, -wi, -e, -m, the kernel, and the declared
    options of "lasvm" that one pass of k machines allows."""
    p = params
    check_params(p)
    kp = kernels.make_params(p.kernel_type, p.degree, p.gamma, p.coef0)
    return OvrStreamRun(source, p, kp, zero_based=zero_based, chunk_bytes=chunk_bytes,
                        warn=warn)


def _model(store, machines, label, zeros, p, n_rows, late, max_live, lines, warn):
    """training/ovr.py's model of the k machines (``machines``: in ``label``'s order) over the
    store: (SolverResult with ``model`` and ``model_lines``); LIBSVM's lines of each machine
    and "Total nSV" appended to ``lines``."""
    k = label.size
    final_of = np.empty(k, np.int64)  # class index (first appearance) -> label order
    final_of[[m.index for m in machines]] = np.arange(k)
    coef = np.zeros((k, store.cap))
    rho = np.zeros(k)
    counters = {}
    obj, n_iter, n_bsv = 0.0, 0, 0
    for c, m in enumerate(machines):
        res = result_of(m.st, m.kc)  # coef by slot
        report_binary(res, m.Cp, m.Cn, n_rows - m.start_row, lines.append, warn)
        coef[c] = res.coef[0]
        for name, value in res.counters.items():
            if isinstance(value, (int, np.integer)):
                counters[name] = counters.get(name, 0) + int(value)
        rho[c] = res.rho[0]
        obj, n_iter, n_bsv = obj + res.obj, n_iter + res.n_iter, n_bsv + res.n_bsv
    live = np.flatnonzero(store.rowid >= 0)
    sv = live[(coef[:, live] != 0).any(axis=0)]
    sv_cls = final_of[store.cls[sv]]
    order = np.lexsort((store.rowid[sv], sv_cls))
    sv, sv_cls = sv[order], sv_cls[order]
    indptr, indices, values = sv_rows(store.X, sv, store.features, zeros, store.rowid)
    model = SVMModel(
        svm_type="c_svc", kernel_type=p.kernel_type, degree=p.degree, gamma=p.gamma,
        coef0=p.coef0, nr_class=k, label=label.astype(np.int64), rho=rho.copy(),
        nSV=np.bincount(sv_cls, minlength=k).astype(np.int64), sv_coef=coef[:, sv].copy(),
        sv_indptr=indptr, sv_indices=indices, sv_values=values, multiclass="ovr")
    model.sv_indices_train = store.rowid[sv] + 1
    counters.update(rows=int(n_rows), store_slots=store.cap, store_width=int(store.X.shape[1]),
                    max_live_slots=int(max_live), classes_late=len(late),
                    start_rows=[int(m.start_row) for m in machines],
                    cache_rows=sum(int(m.kc.meta[N_SLOTS]) for m in machines),
                    kernel_evals=sum(int(m.kc.stats[KERNEL_EVALS]) for m in machines),
                    cache_hits=sum(int(m.kc.stats[HITS]) for m in machines),
                    cache_misses=sum(int(m.kc.stats[MISSES]) for m in machines),
                    n_sv=int(sv.size))
    model.counters = counters
    lines.append(f"Total nSV = {int(sv.size)}")
    res = SolverResult(coef=coef, rho=rho, obj=float(obj), n_iter=int(n_iter),
                       n_sv=int(sv.size), n_bsv=int(n_bsv), counters=dict(counters))
    res.model, res.model_lines = model, lines
    return res
