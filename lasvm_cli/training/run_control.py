"""Long online runs: state save / resume, early stopping, snapshots and learning curves.

The algorithms stay in lasvm_cli/solvers/; this module steps their runs (the run protocol of
solvers/run.py: LASVM's LasvmRun, the LASVM-G family's LasvmGRun, the online S2DO solver's
S2doRun) between chunks of work, for the training layer's driver (lasvm_cli/training/driver.py):

* **State files** (``--save-state FILE``, ``--resume FILE``): an ``.npz`` written atomically
  (temporary file, fsync, rename) every ``--save-every`` seconds of wall clock, when the run
  stops and at its end. It holds the LasvmState arrays (positions = the cache's perm/pos, alpha,
  g, boxes, labels, the epoch's pool, label mask, scalar blocks, RNG words), the cache counters
  (the kernel rows are not saved: they are recomputed), the phase, the elapsed training time,
  the snapshot / trace positions, the parameters and a fingerprint of the training data (n,
  sum of labels, a hash of 16 rows). Resuming on other data or with other parameters (anything
  but ``--epochs`` and the stopping options) is a ParameterError. Every decision of the solver
  depends on the state arrays only, so a resumed run gives the same model, bit for bit, as an
  uninterrupted run with the same ``--seed``; a killed run loses the work since its last save,
  and Ctrl-C saves the state at the next chunk boundary before exiting (status 130).
* **Early stopping** (``--stop-iterations``, ``--stop-sv``, ``--stop-seconds``): the online
  phase ends at the first limit reached; the model is then the finished copy of the run (as
  LaSVM 1.1: finishing step unless ``--no-finish``), while the saved state is the online state
  at the stop, so ``--resume`` with a larger limit continues the same run. Limits are totals
  over the run (resumed sessions included).
* **Snapshots** (LaSVM 1.1's ``-T``/``-l``: ``--snapshots 1000,2000,5000 --snapshot-by
  iterations|sv|seconds``): at each value, a copy of the run is taken through the finishing
  step and written to ``MODEL.<value>`` (LIBSVM format, assembled by the trainer as the final
  model). As in LaSVM 1.1 the online phase stops at the last value.
* **Trace** (``--trace FILE``, ``--trace-every N``, ``--test FILE``): CSV rows of iterations,
  training seconds, kernel evaluations, support vectors, delta, dual objective W and test
  error of the current (online, unfinished) machine, every N iterations, plus a ``final`` row
  for the returned model; a run's own columns follow (``TRACE_EXTRA`` / ``trace_extra()``:
  the duality gap for LASVM-G & co.). Evaluation, snapshots and saving are not counted in
  the seconds.

Counting: *iterations* are PROCESS calls (online iterations, the 2 x 5 seeds included), *sv*
for stopping and snapshots is the size of the expansion S (LaSVM 1.1's ``lasvm_get_l``), the
trace's ``sv`` column the number of non-zero alphas; *seconds* are training seconds.

Multi-class: the binary machines of one-vs-one (k(k-1)/2 pairs, LIBSVM's order) or
one-vs-rest (k) run one after the other, each under the rules above: limits and snapshot values
apply to each machine's own iterations, expansion and seconds. The state file holds every
finished machine's state and the current machine's (a resume with a larger limit continues the
machines that stopped); a snapshot model ``MODEL.v`` is
assembled from every machine's model at v (a machine whose online phase ended before v gives
its final model) once the last machine reaches v; trace rows get a ``machine`` column ("1-2",
"3-rest") and test errors are each machine's own, on the test rows of its classes. When a
resumed run continues a machine that had stopped before the saved one, that machine's new rows
are appended after the rows already in the file (its earlier "final" row stays): select rows by
the ``machine`` column, as ``lasvm plot`` does.

All-in-one machines (``--multiclass llw|cs --solver online``): the same driver runs the online
S2DO solver's :class:`~lasvm_cli.solvers.s2do_online.S2doRun` as one machine over every class
, with the trace, the stopping limits and the snapshots; there
*iterations* are examples processed (TWO_NEWS steps), *sv* (stopping, snapshots and the trace's
column) the support patterns |W|, delta the KKT violation over W, the test error that of the
arg-max over the classes, and a stop or snapshot takes the current iterate (no finishing step).
Its trace adds the S2DO steps and the epoch. Its state file holds the S2DO state, the whole
kernel cache (rows included: the scheduling counts the kernel values computed, so cache hits
steer it), the step gains and counts, the epoch's order and both random generators (numpy's
for the orders, numba's for the step draws), so a resumed run is the uninterrupted one, bit
for bit; a larger ``--epochs`` continues a run that ended.

What it asks of a run: solvers/run.py's SavedRun, plus optionally ``TRACE_EXTRA`` /
``trace_extra()`` (the run's own trace columns) and ``class_expansion()`` (an all-in-one
machine: :meth:`TestSet.error_argmax`; else :meth:`TestSet.error` on ``coef_rho()``).
"""

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import signal
import threading
import time
import zipfile

import numpy as np

from ..base.clock import Clock
from ..base.errors import ParameterError, ReportedInterrupt
from ..solvers import DRIVER_OPTIONS

STATE_VERSION = 2  # 2: the online core's scalar block gained I_NOBIAS
# the all-in-one machines' online solver (--multiclass llw|cs --solver online): one machine
# over every class, driven as one run (solvers/s2do_online.py's S2doRun)
ALL_IN_ONE_ONLINE = ("llw", "cs")
GRAIN = 100  # online iterations between checks of sv / seconds criteria
TRACE_COLUMNS = ("iterations", "seconds", "kernel_evals", "sv", "delta", "dual_objective",
                 "test_error", "phase")

# TrainParams field -> command-line option (for messages), from the driver options' rows: those
# without a default, whose presence asks for the driver (the others only tune it)
OPTION_NAMES = {o.field: o.flags[0] for o in DRIVER_OPTIONS if o.default is None}
SNAPSHOT_BY = next(o.choices for o in DRIVER_OPTIONS if o.field == "snapshot_by")


# One field per DRIVER_OPTIONS row (its name and default), and the model file (--snapshots'
# file names): the rows are the one declaration of these options.
_OptionFields = dataclasses.make_dataclass(
    "_OptionFields", [(o.field, object, dataclasses.field(default=o.default))
                      for o in DRIVER_OPTIONS] + [("model_file", object, None)])


@dataclasses.dataclass
class OnlineOptions(_OptionFields):
    """The online driver's options, normalised: numbers typed, --snapshots a sorted tuple."""

    def __post_init__(self):
        self.save_every, self.trace_every = float(self.save_every), int(self.trace_every)
        self.snapshots = parse_snapshots(self.snapshots)

    @classmethod
    def from_params(cls, p):
        """Options from TrainParams (missing fields read as unset); None when none is set."""
        if not online_requested(p):
            return None
        o = cls(**{f.name: getattr(p, f.name, f.default) for f in dataclasses.fields(cls)})
        o.check()
        return o

    def check(self):
        if self.snapshot_by not in SNAPSHOT_BY:
            _error(f"unknown --snapshot-by '{self.snapshot_by}' (choose from "
                   f"{', '.join(SNAPSHOT_BY)})")
        if self.trace_every < 1:
            _error("--trace-every < 1")
        if self.save_every < 0:
            _error("--save-every < 0")
        for name in ("stop_iterations", "stop_sv", "stop_seconds"):
            v = getattr(self, name)
            if v is not None and v < 0:
                _error(f"{OPTION_NAMES[name]} < 0")
        if self.snapshots and not self.model_file:
            _error("--snapshots needs a model file name")
        if self.test_file and not self.trace:
            _error("--test needs --trace")

    def used(self):
        return [OPTION_NAMES[f] for f in OPTION_NAMES if getattr(self, f)]


def online_requested(p):
    """True when any option of this module is set on TrainParams ``p``."""
    return any(getattr(p, f, None) not in (None, "", ()) for f in OPTION_NAMES)


def parse_snapshots(text):
    """'1000,2000,5000' (commas or spaces) -> sorted tuple of positive floats."""
    if text is None or text == "":
        return ()
    if isinstance(text, (list, tuple)):
        items = list(text)
    else:
        items = [t for t in str(text).replace(",", " ").split() if t]
    try:
        values = sorted(float(t) for t in items)
    except ValueError:
        _error(f"invalid value '{text}' for --snapshots (a list such as 1000,2000,5000)")
    if any(not math.isfinite(v) or v < 0 for v in values):
        _error(f"invalid value '{text}' for --snapshots (values must be >= 0)")
    return tuple(values)


def snapshot_path(model_file, value):
    return f"{model_file}.{value:g}"


def _error(msg):
    raise ParameterError(f"ERROR: {msg}")


# ---------------------------------------------------------------------------------------------
# fingerprint, parameters and the state file


def data_fingerprint(kd, y):
    """n, sum of the +-1 labels and a sha256 of 16 evenly spaced rows (storage independent)."""
    from ..numerics.data import row_to_csr
    from ..numerics.kernels import n_rows

    n = int(n_rows(kd))
    h = hashlib.sha256()
    for i in sorted(set(np.linspace(0, max(n - 1, 0), 16).astype(np.int64).tolist())):
        if n == 0:
            break
        idx, val = row_to_csr(kd, i)
        h.update(np.asarray(idx, np.int64).tobytes())
        h.update(np.asarray(val, np.float64).tobytes())
        h.update(np.float64(y[i]).tobytes())
    return dict(n=n, label_sum=float(np.sum(y)), rows_sha256=h.hexdigest()[:32])


def run_parameters(run):
    """What determines the run's result (everything but the number of epochs)."""
    kp = run.kp
    d = dict(run.config)
    d.pop("epochs", None)
    d.update(kernel_type=int(kp.kind), degree=int(kp.degree), gamma=float(kp.gamma),
             coef0=float(kp.coef0))
    return d


def save_state(path, run, meta, extra=None):
    """Write the run's state, ``meta`` (JSON-able) and the ``extra`` arrays to ``path``
    atomically."""
    from ..io.atomic import atomic_write

    arrays = run.state_arrays()
    arrays.update(extra or {})
    meta = dict(meta, version=STATE_VERSION, phase=run.PHASES[run.phase], epochs=run.epochs)
    arrays["meta"] = np.array(json.dumps(meta))
    with atomic_write(path, mode="wb") as f:
        np.savez(f, **arrays)


def load_state(path):
    """(meta dict, arrays dict) from a state file; ParameterError when it is not one."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(str(arrays.pop("meta")))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        _error(f"cannot read LASVM state file {path}: {e}")
    if meta.get("version") != STATE_VERSION:
        _error(f"{path}: unsupported LASVM state version {meta.get('version')}")
    return meta, arrays


def check_resume(path, meta, fingerprint, params):
    check_resume_family(path, meta, params)  # first: another family labels the data otherwise
    if meta["fingerprint"] != fingerprint:
        _error(f"{path}: the state was saved for other training data (state: "
               f"{_fp_text(meta['fingerprint'])}; this data: {_fp_text(fingerprint)})")
    check_resume_params(path, meta, params)


def _run_kind(params):
    if "multiclass" in params:
        return f"--multiclass {params['multiclass']} --solver online"
    return "a LASVM-family solver"


def check_resume_family(path, meta, params):
    saved = meta["params"]
    if ("multiclass" in saved) != ("multiclass" in params):
        _error(f"{path}: the state was saved by {_run_kind(saved)}, not by "
               f"{_run_kind(params)} as this run")


def check_resume_params(path, meta, params):
    saved = meta["params"]
    diff = [f"{k} {saved.get(k)!r} (now {v!r})" for k, v in params.items()
            if saved.get(k) != v]
    if diff:
        _error(f"{path}: the state was saved with other parameters: " + ", ".join(diff))


def _fp_text(fp):
    return f"n = {fp['n']}, sum of labels = {fp['label_sum']:g}, rows {fp['rows_sha256'][:12]}"


# ---------------------------------------------------------------------------------------------
# test set for the trace


class TestSet:
    """Test rows in the training data's storage and feature columns (dense/sparse) and their
    labels."""

    def __init__(self, path, problem, zero_based=False):
        from ..numerics.data import kernel_data_like
        from ..io.svmlight import read_svmlight

        try:
            d = read_svmlight(path, zero_based=zero_based)
        except OSError:
            _error(f"can't open test file {path}")
        self.kd = kernel_data_like(problem.kd, d.indptr, d.indices, d.values)
        self.y = np.asarray(d.y, np.float64)
        self.n = self.y.shape[0]

    def error(self, run, pos, neg=None):
        """Test error of the run's current binary machine, positive side = class ``pos``, on
        the test rows of classes pos and neg (``neg`` None: every row, "pos against the
        rest")."""
        from ..numerics.kernels import expansion_values

        labels = np.trunc(self.y)
        rows = np.arange(self.n) if neg is None else \
            np.flatnonzero((labels == pos) | (labels == neg))
        if rows.size == 0:
            return float("nan")
        coef, rho = run.coef_rho()
        sv = np.flatnonzero(coef)
        out = np.zeros(rows.size)
        if sv.size:
            expansion_values(self.kd, rows.astype(np.int64), run.kd, sv.astype(np.int64),
                             coef[sv], run.kp, out)
        return float(np.mean((out - rho > 0) != (labels[rows] == pos)))

    def error_argmax(self, run, labels):
        """Test error of an all-in-one machine (``run.class_expansion()``): the arg-max of
        f_c over the classes ``labels`` (those of class indices 0, 1, ...), as svm-predict
        decides."""
        from ..numerics.kernels import expansion_values

        if self.n == 0:
            return float("nan")
        ex, coef = run.class_expansion()
        dec = np.zeros((len(labels), self.n))
        rows = np.arange(self.n, dtype=np.int64)
        if ex.size:
            for cls in range(len(labels)):
                expansion_values(self.kd, rows, run.kd, ex, np.ascontiguousarray(coef[cls]),
                                 run.kp, dec[cls])
        pred = np.asarray(labels, np.float64)[np.argmax(dec, axis=0)]
        return float(np.mean(pred != self.y))


# ---------------------------------------------------------------------------------------------
# the driver


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _result_meta(res):
    """JSON-able fields of a SolverResult (its coef is saved as an array)."""
    d = {f.name: _plain(getattr(res, f.name)) for f in dataclasses.fields(res)
         if f.name != "coef"}
    d["rho"] = [float(v) for v in res.rho]
    d["counters"] = {k: _plain(v) for k, v in d["counters"].items()}
    return d


def _result_from(meta, coef):
    from ..solvers.result import SolverResult

    meta = dict(meta, rho=np.asarray(meta["rho"], np.float64))
    return SolverResult(coef=np.asarray(coef, np.float64).reshape(meta["rho"].size, -1), **meta)


class OnlineControl:
    """Drives the run (solvers/run.py's SavedRun) of each machine of a training set in turn
    (one for two classes or an all-in-one machine, k(k-1)/2 for one-vs-one, k for
    one-vs-rest): the training layer's driver (training/driver.py) calls :meth:`solve` once
    per machine, in the trainer's order.

    Per machine: resume, stopping, snapshots, trace rows (limits and snapshot values apply to
    each machine's own iterations, expansion and seconds). Across machines: the state file
    (every finished machine's state and the current one's) and the snapshot models.

    ``machines``: (positive label, negative label or None for "the rest") of each machine, or
    the labels of an all-in-one machine's classes; ``build_model(results) -> SVMModel``
    assembles a model from one SolverResult per machine (the trainer's).
    A snapshot model MODEL.v is written once the last machine reaches v (at once for two
    classes); a machine whose online phase ended before v contributes its final model, and
    MODEL.v is not written when no machine reached v."""

    def __init__(self, opts, machines=((1, -1),), test=None, build_model=None, info=None,
                 warn=None):
        self.o = opts
        self.machines = [tuple(m) for m in machines]
        self.test = test
        self.build_model = build_model
        self.info = info or (lambda _m: None)
        self.warn = warn or (lambda _m: None)
        self.index = -1            # machine being driven
        self.results = []          # BinaryResult of each finished machine
        self.finished = []         # (meta, arrays) state block of each finished machine
        self.snap_results = []     # per machine: {snapshot number: BinaryResult}
        self.fingerprints = []
        self.snapshots_written = []
        self.trace_offset = None
        self._trace_f = None
        self._resume = None        # (meta, arrays) of --resume until its machine is reached
        self._last_save = None
        self.stop_reason = None
        self.interrupted = False
        self._extra = ()           # the solver's own trace columns (LASVM-G & co.: the gap)

    @property
    def multi(self):
        return len(self.machines) > 1

    # -- measures of the current machine ---------------------------------------------------

    def _measure(self, run, by):
        if by == "iterations":
            return run.processed
        if by == "sv":
            return run.n_expansion
        return self.elapsed

    def _stop(self, run):
        o = self.o
        if o.stop_iterations is not None and run.processed >= o.stop_iterations:
            return f"--stop-iterations {o.stop_iterations}"
        if o.stop_sv is not None and run.n_expansion >= o.stop_sv:
            return f"--stop-sv {o.stop_sv}"
        if o.stop_seconds is not None and self.elapsed >= o.stop_seconds:
            return f"--stop-seconds {o.stop_seconds:g}"
        if o.snapshots and self.snap_i >= len(o.snapshots):
            return f"last snapshot ({o.snapshot_by} {o.snapshots[-1]:g})"
        return None

    def _chunk(self, run):
        o = self.o
        p = run.processed
        n = run.CHUNK
        if o.trace:
            n = min(n, self.next_trace - p)
        if o.stop_iterations is not None:
            n = min(n, o.stop_iterations - p)
        if o.snapshots and self.snap_i < len(o.snapshots):
            if o.snapshot_by == "iterations":
                n = min(n, math.ceil(o.snapshots[self.snap_i]) - p)
            else:
                n = min(n, GRAIN)
        if o.stop_sv is not None or o.stop_seconds is not None:
            n = min(n, GRAIN)
        return max(int(n), 1)

    # -- trace ---------------------------------------------------------------------------------

    def _columns(self):
        return TRACE_COLUMNS + self._extra + (("machine",) if self.multi else ())

    def _open_trace(self):
        path = self.o.trace
        if self.trace_offset is not None and os.path.exists(path):
            f = open(path, "r+", encoding="ascii", newline="\n")
            f.truncate(self.trace_offset)  # drop rows written after the saved state
            f.seek(self.trace_offset)
        else:
            f = open(path, "w", encoding="ascii", newline="\n")
            f.write(",".join(self._columns()) + "\n")
        f.flush()
        self._trace_f = f
        self.trace_offset = f.tell()

    def _machine_name(self):
        pos, neg = self.machines[self.index]
        return f"{pos:g}-{'rest' if neg is None else format(neg, 'g')}"

    def _test_error(self, run):
        machine = self.machines[self.index]
        if hasattr(run, "class_expansion"):  # an all-in-one machine: arg-max over its classes
            return self.test.error_argmax(run, machine)
        return self.test.error(run, *machine)

    def _trace_row(self, run, seconds, phase, kernel_evals=None):
        err = None
        if self.test is not None:
            err = self._test_error(run)
        row = [str(run.processed), f"{seconds:.6f}",
               str(run.kernel_evals if kernel_evals is None else kernel_evals),
               str(run.trace_sv()), f"{run.delta():.10g}",
               f"{run.dual_objective():.12g}", "" if err is None else f"{err:.6g}", phase]
        row += [f"{v:.10g}" for v in (run.trace_extra() if self._extra else ())]
        if self.multi:
            row.append(self._machine_name())
        self._trace_f.write(",".join(row) + "\n")
        self._trace_f.flush()
        self.trace_offset = self._trace_f.tell()

    # -- snapshots -------------------------------------------------------------------------------

    def _finished(self, run):
        if self._last is not None and self._last[0] == run.processed and run.online:
            return self._last[1]
        fin = run.finished_copy()
        self._last = (run.processed, fin)
        return fin

    def _snapshots(self, run):
        o = self.o
        taken = self.snap_results[self.index]
        while self.snap_i < len(o.snapshots) and \
                self._measure(run, o.snapshot_by) >= o.snapshots[self.snap_i]:
            taken[self.snap_i] = self._finished(run).result()
            if self.index == len(self.machines) - 1:
                self._write_snapshot(self.snap_i, run)
            self.snap_i += 1

    def _write_snapshot(self, i, run=None):
        """MODEL.v from every machine's model at v (its final one when it ended before)."""
        from ..io.model_file import write_model

        o = self.o
        value = o.snapshots[i]
        path = snapshot_path(o.model_file, value)
        per_machine = [snaps.get(i, res) for snaps, res in
                       zip(self.snap_results, self.results + [None])]
        model = self.build_model(per_machine)
        write_model(model, path)
        entry = dict(path=path, value=value)
        if run is not None:
            entry.update(iterations=run.processed, expansion=run.n_expansion,
                         seconds=self.elapsed)
        self.snapshots_written.append(entry)
        where = (f"iterations {run.processed}, expansion {run.n_expansion}, "
                 f"{self.elapsed:.3g} s, " if run is not None and not self.multi else "")
        self.info(f"snapshot {path}: {where}nSV {int(np.sum(model.nSV))}")

    def _last_snapshots(self):
        """After the last machine: the values it never reached (written when another machine
        reached them, else a warning)."""
        o = self.o
        for i in range(len(o.snapshots)):
            if i in self.snap_results[-1]:
                continue
            if any(i in snaps for snaps in self.snap_results):
                self._write_snapshot(i)
            else:
                self.warn(f"WARNING: snapshot at {o.snapshot_by} {o.snapshots[i]:g} not "
                          f"reached ({snapshot_path(o.model_file, o.snapshots[i])} not written)")

    # -- state ------------------------------------------------------------------------------------

    def _machine_block(self, run):
        """What the state file keeps of the current machine: its arrays and its place."""
        taken = self.snap_results[self.index]
        arrays = run.state_arrays()
        for i, r in taken.items():
            arrays[f"snap_{i}_coef"] = r.coef
        meta = dict(phase=run.PHASES[run.phase], elapsed=self.elapsed, snap_i=self.snap_i,
                    next_trace=self.next_trace, fingerprint=self.fingerprints[self.index],
                    params=self.params,
                    snapshots={str(i): _result_meta(r) for i, r in taken.items()})
        return meta, arrays

    def _save(self, run):
        """The state file: the current machine's block at the top level (the whole file for
        two classes), each finished machine's block under its number (``m0_alpha``, ...)."""
        meta, arrays = self._machine_block(run)
        meta.pop("phase")
        extra = {k: v for k, v in arrays.items() if k.startswith("snap_")}
        done = []
        for q, (q_meta, q_arrays) in enumerate(self.finished):
            done.append(q_meta)
            extra.update({f"m{q}_{k}": v for k, v in q_arrays.items()})
        save_state(self.o.save_state, run, dict(
            meta, trace_offset=self.trace_offset, machine=self.index,
            n_machines=len(self.machines), finished=done), extra)
        self._last_save = time.monotonic()

    def _load_resume(self):
        meta, arrays = load_state(self.o.resume)
        n = meta.get("n_machines", 1)
        if n != len(self.machines):
            if "params" in meta:  # another solver or scheme: say so, not the machine count
                check_resume_family(self.o.resume, meta, self.params)
                check_resume_params(self.o.resume, meta, self.params)
            _error(f"{self.o.resume}: the state was saved for {n} binary machine(s), this "
                   f"training set has {len(self.machines)}")
        self._resume = (meta, arrays)
        self.trace_offset = meta.get("trace_offset")

    def _restore(self, run):
        """Put machine ``index``'s saved block (if the state file has one) into ``run``;
        returns None (no block), "finished" (a machine finished before the save) or
        "current" (the machine the save was made in)."""
        meta, arrays = self._resume
        m = self.index
        saved = meta.get("machine", 0)
        if m > saved:
            return None
        if m < saved:
            block = meta["finished"][m]
            prefix = f"m{m}_"
            arrays = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
        else:
            block = meta
        check_resume(self.o.resume, block, self.fingerprints[m], self.params)
        try:
            run.load_state_arrays(arrays, run.PHASES.index(block["phase"]))
        except (ValueError, KeyError) as e:
            _error(f"{self.o.resume}: {e}")
        self.snap_results[m] = {int(i): _result_from(r, arrays[f"snap_{i}_coef"])
                                for i, r in block.get("snapshots", {}).items()}
        self.elapsed = float(block["elapsed"])
        self.snap_i = int(block.get("snap_i") or 0)
        self.next_trace = int(block.get("next_trace") or 0)
        if m == saved:
            self._resume = None
        what = f"machine {self._machine_name()}: " if self.multi else ""
        self.info(f"resumed {self.o.resume}: {what}{block['phase']} phase, {run.processed} "
                  f"iterations, {self.elapsed:.3g} s")
        return "finished" if m < saved else "current"

    # -- main loop -------------------------------------------------------------------------------

    def solve(self, machine, params, progress=None):
        """Train the next machine: its solver's run (solvers.start), driven."""
        from ..solvers import start

        return self.drive(start(machine, params), progress)

    def close(self):
        self._close_trace()

    def drive(self, run, progress=None):
        o = self.o
        self.index += 1
        m = self.index
        self.fingerprints.append(data_fingerprint(run.kd, run.labels))
        self._extra = tuple(getattr(run, "TRACE_EXTRA", ()))
        self.params = run_parameters(run)
        self.snap_results.append({})
        self.elapsed, self.snap_i, self.next_trace = 0.0, 0, 0
        self.stop_reason, self._last = None, None
        if self._last_save is None:
            self._last_save = time.monotonic()
            if o.resume:
                self._load_resume()
        restored = self._restore(run) if self._resume is not None else None
        resumed = restored is not None
        if not resumed:
            with Clock() as clock:
                run.begin()
            self.elapsed += clock.seconds()
        # a machine finished before the save, with nothing left to do, has its rows in the trace
        quiet = restored == "finished" and (run.done or (run.online and self._stop(run)))
        if o.trace and self._trace_f is None:
            self._open_trace()
        try:
            with self._deferred_interrupt():
                res = self._loop(run, progress, resumed, quiet)
        except BaseException:
            self._close_trace()
            raise
        if m == len(self.machines) - 1:
            self._close_trace()
        self.results.append(res)
        if m < len(self.machines) - 1:
            meta, arrays = self._machine_block(run)
            self.finished.append((meta, arrays))
        elif o.snapshots:
            self._last_snapshots()
        return res

    @contextlib.contextmanager
    def _deferred_interrupt(self):
        """With --save-state, Ctrl-C (SIGINT) only sets a flag, read between chunks where the
        arrays are consistent: the state is saved there, then KeyboardInterrupt goes on
        (svm-train exits with 130)."""
        self.interrupted = False
        previous = None
        if self.o.save_state and threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGINT,
                                     lambda *_: setattr(self, "interrupted", True))
        try:
            yield
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    def _check_interrupt(self, run):
        if self.interrupted:
            self._save(run)
            self.warn(f"interrupted: state saved to {self.o.save_state} (--resume "
                      f"{self.o.save_state} continues the run)")
            raise ReportedInterrupt

    def _close_trace(self):
        if self._trace_f is not None:
            self._trace_f.close()
            self._trace_f = None

    def _after_online_chunk(self, run):
        o = self.o
        if o.trace and run.processed >= self.next_trace:
            self._trace_row(run, self.elapsed, "online")
            self.next_trace = (run.processed // o.trace_every + 1) * o.trace_every
        if o.snapshots:
            self._snapshots(run)

    def _loop(self, run, progress, resumed, quiet=False):
        o = self.o
        if run.online and not resumed:
            self._after_online_chunk(run)  # the seeded machine, snapshots <= the seeds
        while not run.done:
            if run.online:
                self.stop_reason = self._stop(run)
                if self.stop_reason:
                    break
                n = self._chunk(run)
            else:
                n = 1000
            was_online = run.online
            with Clock() as clock:
                run.step(n)
            self.elapsed += clock.seconds()
            if progress is not None:
                progress(run.processed, run.n_expansion)
            if was_online and run.online:
                self._after_online_chunk(run)
            if o.save_state and time.monotonic() - self._last_save >= o.save_every:
                self._save(run)
            self._check_interrupt(run)
        if self.stop_reason:
            self.info(f"stopped at {run.processed} iterations ({self.stop_reason})")
            with Clock() as clock:
                fin = self._finished(run)
            seconds = self.elapsed + clock.seconds()
        else:
            fin, seconds = run, self.elapsed
        if o.trace and not quiet:
            # the saved state points before the final row: a resumed run replaces it
            offset = self.trace_offset
            self._trace_row(fin, seconds, "final")
            self.trace_offset = offset
        if o.save_state:
            self._save(run)
        res = fin.result()
        res.counters["seconds"] = seconds
        return res
