"""Streaming one-vs-rest LASVM: one sequential pass over a training file larger than memory,
any number of classes (``svm-train --solver lasvm --multiclass ovr --stream``).

k LASVM machines, one per class c ("c against the rest": +1 for class c with C times the
weight of c, -1 for every other class with C itself, as training/ovr.py), are fed in the same
pass: each example is offered to every machine, which runs the online core's step on it
(PROCESS then REPROCESS, the two-class stream's per-example step; compiled in
qp/stream_slots.py). The machines never
interact; what they share is where the examples live:

* **One slot store** (``X [cap, width]``, one column per feature index seen, as the two-class
  stream's). Each machine has its own online-core state and kernel-row cache over the slots
  (its own positions: its expansion S is a prefix of them). ``refs[q]`` counts the machines
  whose S holds slot q; the slot is freed when that count falls to 0 after every machine has
  seen the slot's example. The rows of a block go in by groups of ``GROUP`` rows: loaded into
  free slots, offered to each machine in turn (file order), then the slots no S kept are freed.
  ``cap`` grows x1.5 + 64 when fewer than a group's slots are free.
* **Seeds** (LaSVM 1.1 seeds S with the first 5 examples of each class, PROCESS without
  REPROCESS): machine c PROCESSes alone the first ``N_SEED`` examples of each side (c, rest) it
  sees, where they come in the file; every other example gets PROCESS + REPROCESS. Nothing is
  held back or reordered (a REPROCESS on an S of one side makes no step and evicts nothing).
* **Classes** appear as the blocks are read. Every class of the first block has its machine
  from the first row. A class first seen in a later block starts its machine at the first row
  of that block: it sees that block and the rest of the file, not the rows of earlier blocks
  (all "rest" examples for it; they cannot be read again, and replaying those still in some
  other machine's S would make a machine that depends on the others' choices). A file of one
  block (``chunk_bytes``, 4 MiB) thus gives every machine every row.
* **Finishing** per machine at the end, as the two-class stream (solvers/finishing.py over its
  S), or with ``--no-finish`` delta brought up to date.

The model is training/ovr.py's ``multiclass ovr``: labels in LIBSVM's order of first
appearance ({-1,+1} swapped when they are the only two), one shared SV list (the slots with a
nonzero coefficient in some machine, grouped by class in label order, file order within a
class), nSV per class, rho[c] = -b of machine c.

How it relates to the in-memory run: training/ovr.py trains its k machines one after the other,
each over every example in a random order (``--seed``). The machines here take the examples in
file order from their start row; driven in that order (same seeds, same start rows), the
in-memory core makes the same steps and training/ovr.py writes the same model file, byte for
byte (tests/test_stream.py). The row caches change no value (LASVM's decisions depend on S
only), so ``-m`` is shared: each machine's cache gets ``-m / k`` of the machines existing when
it is made.

Memory: the store (cap x width x 8 bytes, cap <= 1.5 (|union of the k S| + GROUP) + 64), k
states and cache indexes over the slots (about 150 bytes a slot each), the caches' rows (``-m``
in all) and one block of text with its parsed rows. Nothing grows with the file, only with the
union of the expansions. Only random selection (file order)
streams here: a candidate window would be a different one for each machine.
"""

import numpy as np

from ..numerics import kernels
from ..numerics.cache import (FILL, HITS, KERNEL_EVALS, MISSES, N_SLOTS, fill_pays, make_cache,
                              regrow_cache)
from ..numerics.classes import weighted_C
from ..numerics.data import squared_norms
from ..io.svmlight import iter_svmlight
from ..numerics.kernels import KernelData
from ..numerics.model import SVMModel
from ..qp import online_core as core
from ..qp.online_core import N_SEED, LasvmScalars
from ..qp.stream_slots import S_NFREE, free_unheld, load_rows, machine_rows
from .finishing import start_finishing
from .lasvm import result_of
from .lasvm_stream import (StoredZeros, StreamError, check_one_pass, dense_kd, grown,
                           grown_free, label_order, line_of_row, sv_rows, widen)
from .result import report_binary

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
        """Columns of X for these feature indices (lasvm_stream.widen)."""
        self.X, self.features, cols = widen(self.X, self.features, indices)
        return cols

    def add_machine(self, label, Cp, Cn, start_row, kp):
        if self.fill is None:  # decided once, on the first block's columns
            self.fill = fill_pays(self.kd(), kp)
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


def train_stream_ovr(source, params, *, zero_based=False, info=None, warn=None, progress=None,
                     chunk_bytes=1 << 22):
    """One pass of k one-vs-rest LASVM machines over ``source`` (a svmlight file, read
    sequentially once), each finished unless ``params.finish`` is False. Returns an SVMModel
    (``multiclass ovr``, with ``counters``)."""
    info = info or (lambda _m: None)
    warn = warn or (lambda _m: None)
    p = params
    check_params(p)
    kp = kernels.make_params(p.kernel_type, p.degree, p.gamma, p.coef0)
    tau = float(p.eps)
    dmax = np.inf if p.delta_max is None else float(p.delta_max)
    store = _OvrStore(p.cache_size)
    store.bail_printed = p.bail_out == "printed"
    zeros = StoredZeros()
    index = {}  # label -> class index (order of first appearance)
    late = []  # (label, 0-based first row, 0-based start row of its machine)
    n_rows = 0
    slots = np.zeros(GROUP, np.int64)
    max_live = 0
    bar = progress("LASVM ovr stream") if progress else None
    blocks = iter_svmlight(source, zero_based=zero_based, chunk_bytes=chunk_bytes,
                           check_norms=True)
    try:
        for data in blocks:
            rowid = np.arange(n_rows, n_rows + data.n, dtype=np.int64)
            first_row = n_rows
            n_rows += data.n
            lab = np.trunc(data.y).astype(np.int64)
            ckd = KernelData(np.zeros((0, 0)), data.indptr, store.columns(data.indices),
                             data.values, squared_norms(data.indptr, data.values))
            zeros.offer(data.indptr, data.indices, data.values, rowid)
            del data
            u, first = np.unique(lab, return_index=True)
            for v, f in sorted(zip(u.tolist(), first.tolist()), key=lambda t: t[1]):
                if v in index:
                    continue
                index[v] = len(index)
                if first_row > 0:
                    late.append((v, first_row + f, first_row))
                # the rest's C is C itself: the weight of class c applies to its own examples
                Cp = float(p.C) * float(p.weights.get(v, 1.0))
                store.add_machine(v, Cp, float(p.C), first_row, kp)
            cls = np.array([index[v] for v in lab.tolist()], np.int64) if lab.size else \
                np.zeros(0, np.int64)
            for lo in range(0, cls.size, GROUP):
                hi = min(lo + GROUP, cls.size)
                if store.sist[S_NFREE] < hi - lo:
                    store.grow(hi - lo)
                sl = slots[:hi - lo]
                load_rows(store.X, store.xsq, store.rowid, store.free, store.sist, ckd, rowid,
                          lo, hi, sl)
                store.cls[sl] = cls[lo:hi]
                skd = store.kd()
                for m in store.machines:
                    core.fit_width(m.kc, m.st)
                    ya = np.where(cls[lo:hi] == m.index, 1.0, -1.0)
                    machine_rows(m.st, m.kc, skd, kp, sl, ya, m.seeds, store.refs, N_SEED,
                                 tau, dmax, m.Cp, m.Cn)
                max_live = max(max_live, free_unheld(store.rowid, store.refs, store.free,
                                                     store.sist))
                zeros.keep(store.rowid)
            if bar:
                bar.update(n_rows, int(sum(LasvmScalars(m.st).n_s for m in store.machines)))
        if not store.machines:
            raise StreamError("empty training file")
        if len(store.machines) < 2:
            raise StreamError("--stream --multiclass ovr needs at least two classes: the "
                              f"training file holds only label {store.machines[0].label}")
        skd = store.kd()
        for m in store.machines:
            if p.finish:
                core.fit_width(m.kc, m.st, finishing=True)
                start_finishing(m.st, m.kc, skd, kp, tau, rule=p.finishing).run()
            else:
                core.lasvm_run(m.st, m.kc, skd, kp, np.int64(core.MODE_DELTA), np.int64(0),
                               np.int64(0), np.int64(1), 0.0, np.inf, np.int64(1))
    finally:
        if bar:
            bar.close()
    label = label_order([m.label for m in store.machines])
    weighted_C(p, label, warn)  # its warnings for weights of labels not in the file
    for v, row, start in late:
        # rows are lines when the file cannot be read again (a stream) or has no comments
        line = line_of_row(source, row) if isinstance(source, str) else None
        sline = line_of_row(source, start) if line else None
        line, sline = line or row + 1, sline or start + 1
        info(f"class {v} first appears at line {line}, after the first block: its machine "
             f"starts at line {sline} (that block's first row) and never saw the rows before")
    return _model(store, zeros, p, label, n_rows, late, max_live, info, warn)


def _model(store, zeros, p, label, n_rows, late, max_live, info, warn):
    """training/ovr.py's model of the k machines over the store."""
    k = label.size
    by_label = {m.label: m for m in store.machines}
    machines = [by_label[int(v)] for v in label]
    final_of = np.empty(k, np.int64)  # class index (first appearance) -> label order
    final_of[[m.index for m in machines]] = np.arange(k)
    coef = np.zeros((k, store.cap))
    counters = {}
    for c, m in enumerate(machines):
        res = result_of(m.st, m.kc)  # coef by slot
        report_binary(res, m.Cp, m.Cn, n_rows - m.start_row, info, warn)
        coef[c] = res.coef[0]
        for name, value in res.counters.items():
            if isinstance(value, (int, np.integer)):
                counters[name] = counters.get(name, 0) + int(value)
        m.rho = res.rho[0]
    live = np.flatnonzero(store.rowid >= 0)
    sv = live[(coef[:, live] != 0).any(axis=0)]
    sv_cls = final_of[store.cls[sv]]
    order = np.lexsort((store.rowid[sv], sv_cls))
    sv, sv_cls = sv[order], sv_cls[order]
    indptr, indices, values = sv_rows(store.X, sv, store.features, zeros, store.rowid)
    model = SVMModel(
        svm_type="c_svc", kernel_type=p.kernel_type, degree=p.degree, gamma=p.gamma,
        coef0=p.coef0, nr_class=k, label=label.astype(np.int64),
        rho=np.array([m.rho for m in machines]),
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
    info(f"Total nSV = {int(sv.size)}")
    return model
