"""Training with the tracking solvers (solvers/tracking.py: track1, track2, track2-lasvm, rcd;
Usunier, Bordes & Bottou 2010): the teacher's order in terms of the training file, repeated
runs, and the gap traces of ``--trace``.

svm-train trains the binary machines of one-vs-one (LIBSVM's pairs) or one-vs-rest through
train.train, whose driver (training/driver.py) hands each machine to :class:`TrackControl`;
each machine's rows are grouped by class there, so the fixed-order teachers are built here,
from the file rows of every machine the trainer lists:

* ``sequential``: file order (the machine's rows, in their order in the training file);
* ``shuffle``: a fresh permutation of them for each run (numpy, seed ``--seed`` + run);
* ``order-file``: ``--order FILE`` lists 1-based training rows (whitespace separated; ``#``
  starts a comment); each machine takes the listed rows that belong to it, in that order;
* ``active`` / ``adversarial``: pools drawn in the solver (its random stream: seed + run).

``--runs R`` repeats the run with seeds ``--seed`` .. ``--seed`` + R - 1 (fresh shuffles and
directions); the trace rows are the mean over the runs, row by row (same checkpoints); the
model is the first run's. Without ``--trace`` only the first run is made.

The first run is the online driver's (run_control.py's OnlineControl, which this control
extends): stopping limits, snapshots, the state file and Ctrl-C apply to it, and a resumed run
ends with the uninterrupted run's model. The state file also keeps its trace rows so far; the
other runs, which only average the trace, are made again after a resume (from their seeds:
the same rows), and are cut where the first run stopped.

Trace (``--trace FILE``, every ``--trace-every`` examples and at the end; rcd: every
``--trace-every`` x K steps): CSV columns ``TRACE_COLUMNS``, measured on the output classifier
(w(abar), or w(alpha) with ``--no-average``) over the examples seen so far S_t: P_t, D_t and
the normalised gap (P_t - D_t) / (C t) of eq. (4) (C t = the sum of the seen examples' C), the
test error of ``--test FILE``; kernel evaluations and seconds are the training's only (the
measures are computed apart and not counted; the teacher's kernel values are counted, and also
given alone). The file is written whole after each machine's runs.
"""

import dataclasses
import math

import numpy as np

from ..base.errors import ParameterError
from .drive import Drive, Observer, Progress, StopLimits
from .online_options import OnlineOptions
from .run_control import OnlineControl

TRACE_COLUMNS = ("t", "iterations", "updates", "sv", "primal", "dual", "gap", "test_error",
                 "kernel_evals", "teacher_kernel_evals", "seconds")


def _error(msg):
    raise ParameterError(f"ERROR: {msg}")


def read_order(path, n):
    """1-based training rows from an order file -> int64 array of 0-based rows."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        _error(f"can't open order file {path}: {e.strerror}")
    rows = []
    for number, line in enumerate(lines, start=1):
        for word in line.split("#", 1)[0].split():
            try:
                v = int(word)
            except ValueError:
                _error(f"{path}:{number}: '{word}' is not a row number")
            if not 1 <= v <= n:
                _error(f"{path}:{number}: row {v} out of range (the training file has {n} rows)")
            rows.append(v - 1)
    order = np.asarray(rows, np.int64)
    counts = np.bincount(order, minlength=n)
    if (counts > 1).any():
        _error(f"{path}: row {int(np.flatnonzero(counts > 1)[0]) + 1} is listed more than once")
    if order.size == 0:
        _error(f"{path}: no row numbers")
    return order


class TrackControl(OnlineControl):
    """Runs each binary machine (the driver calls :meth:`solve` once per machine, in the
    trainer's order; ``machines``: the trainer's list of (file rows, labels)) and writes the
    trace. ``params``: svm-train's; ``opts``: its online options (OnlineOptions, None when
    none is set), whose trace this control writes itself."""

    def __init__(self, params, machines, opts=None, order=None, test=None, build_model=None,
                 info=None, warn=None):
        opts = opts or OnlineOptions()
        super().__init__(dataclasses.replace(opts, trace=None, test_file=None),
                         machines=[labels for _, labels in machines], build_model=build_model,
                         info=info, warn=warn)
        self.train_params = params
        self.file_rows = [rows for rows, _ in machines]
        self.order = order  # file rows of the order-file teacher
        self.test = test
        self.trace_path = opts.trace
        self.trace_every = int(opts.trace_every)
        self._f = None
        self._gap = None           # the first run's GapTrace
        self._first = None         # the first run of the current machine
        self._saved_rows = []      # its trace rows in the state file (a resumed machine)

    def _order(self, file_rows, run):
        """The machine's fixed order (binary positions) for run ``run``, or None."""
        from ..solvers.tracking import shuffled

        teacher = self.train_params.teacher
        if self.train_params.solver == "rcd" or teacher in ("active", "adversarial"):
            return None
        if teacher == "order-file":
            position = np.full(int(max(file_rows.max(), self.order.max())) + 1, -1, np.int64)
            position[file_rows] = np.arange(file_rows.size)
            order = position[self.order]
            return order[order >= 0]
        order = np.argsort(file_rows, kind="stable").astype(np.int64)
        if teacher == "shuffle":
            order = order[shuffled(order.size, self.train_params.seed + run)]
        return order

    def solve(self, machine, params, progress=None):
        from ..solvers import start

        m = self.index + 1  # the machine OnlineControl.drive is about to drive
        file_rows, classes = self.file_rows[m], self.machines[m]
        error = None
        if self.test is not None:
            error = lambda run: self.test.error(run, classes)  # noqa: E731
        self._error, self._saved_rows = error, []
        first = self._first = start(machine, params, order=self._order(file_rows, 0))
        result = self.drive(first, progress)
        traces = []
        if self._gap is not None:
            self._gap.finish(first, result.counters["seconds"])
            traces.append(self._gap.rows)
            until = None if first.done else first.processed
            try:
                for r in range(1, params.runs):
                    run = start(machine, dataclasses.replace(params, seed=params.seed + r),
                                order=self._order(file_rows, r))
                    traces.append(trace_run(run, self.trace_every, error, until=until))
            except KeyboardInterrupt:
                if self.saver is None:
                    raise
                self.saver.interrupt()  # the state file holds the first run, at its end
            self._write(traces)
        return result

    # -- the first run's gap trace, an observer of OnlineControl's drive ----------------------

    def _observers(self, progress, snap_i, next_trace):
        observers = super()._observers(progress, snap_i, next_trace)
        self._gap = None
        if self.trace_path:
            run = self._first
            self._gap = GapTrace(_next_stop(self.trace_every * (run.K if run.is_rcd else 1)),
                                 self._error, self._saved_rows)
            # after the stopping limits, before snapshots and the state file (which keeps it)
            at = next(i for i, o in enumerate(observers) if isinstance(o, StopLimits))
            observers.insert(at + 1, self._gap)
        return observers

    def _restore(self, run):
        meta = self._resume[0]
        saved = meta.get("machine", 0)
        block = meta if self.index == saved else \
            meta["finished"][self.index] if self.index < saved else {}
        restored = super()._restore(run)
        if restored is not None:
            self._saved_rows = [dict(r) for r in block.get("track_rows", [])]
        return restored

    def _machine_block(self, run):
        meta, arrays = super()._machine_block(run)
        rows = self._gap.rows if self._gap is not None else []
        meta["track_rows"] = [{k: int(v) if isinstance(v, (int, np.integer)) else float(v)
                               for k, v in r.items()} for r in rows]
        return meta, arrays

    def _write(self, traces):
        """The mean of the runs' rows, row by row, appended to the trace file."""
        if self._f is None:
            self._f = open(self.trace_path, "w", encoding="ascii", newline="\n")
            self._f.write(",".join(TRACE_COLUMNS + (("machine",) if self.multi else ()))
                          + "\n")
        n_rows = min(len(rows) for rows in traces)
        name = self._machine_name() if self.multi else None
        for i in range(n_rows):
            cells = []
            for c in TRACE_COLUMNS:
                v = float(np.mean([rows[i][c] for rows in traces]))
                if c in ("t", "iterations", "updates", "sv", "kernel_evals",
                         "teacher_kernel_evals") and len(traces) == 1:
                    cells.append(str(int(v)))
                elif c == "test_error" and self.test is None:
                    cells.append("")
                else:
                    cells.append(f"{v:.10g}")
            if name is not None:
                cells.append(name)
            self._f.write(",".join(cells) + "\n")
        self._f.flush()

    def close(self):
        super().close()
        if self._f is not None:
            self._f.close()
            self._f = None


def trace_row(run, seconds, error=None):
    """One trace row of ``run`` (TRACE_COLUMNS): measures of the output classifier on S_t;
    ``error(run)`` gives the test error (NaN without it)."""
    m = run.measures()
    return dict(t=m["t"], iterations=run.iterations, updates=run.updates,
                sv=int(np.count_nonzero(run.output_alpha())), primal=m["primal"],
                dual=m["dual"], gap=m["gap"],
                test_error=float("nan") if error is None else error(run),
                kernel_evals=run.kernel_evals, teacher_kernel_evals=run.teacher_kernel_evals,
                seconds=seconds)


class GapTrace(Observer):
    """The trace rows of a tracking run: at each position ``next_stop`` gives (examples; rcd:
    coordinate steps) and at the end; ``rows``: those of a saved run, which this one goes
    on."""

    def __init__(self, next_stop, error=None, rows=()):
        self.next_stop, self.error = next_stop, error
        self.rows = list(rows)
        self._due = None  # the position of the next row

    def room(self, run, drive):
        self._due = self.next_stop(run.processed) if self.next_stop else None
        return math.inf if self._due is None else self._due - run.processed

    def after_step(self, run, drive):
        if run.processed == self._due or run.done:
            self.rows.append(trace_row(run, drive.elapsed, self.error))

    def finish(self, run, seconds):
        """A last row where the run ended between rows (a stop, or no row at all)."""
        at = "iterations" if run.is_rcd else "t"  # the row's processed
        if not self.rows or self.rows[-1][at] != run.processed:
            self.rows.append(trace_row(run, seconds, self.error))


def trace_run(run, every=None, error=None, progress=None, at=None, until=None):
    """Run a TrackRun to its end (``until``: to that position, examples; rcd: steps); with
    ``every``, a trace row every ``every`` examples (rcd: every ``every`` x K steps) and at the
    end; with ``at`` instead, a row at each of those positions (examples; rcd: steps) and at
    the end. Training seconds exclude the rows' measures (and the loading of the compiled
    code). Returns the rows (the last one alone, measured at the end, without ``every`` or
    ``at``)."""
    next_stop = _next_stop(every * (run.K if run.is_rcd else 1) if every else None, at)
    observers = [Progress(progress)] if progress is not None else []
    if until is not None:
        observers.append(StopLimits(iterations=until))
    trace = GapTrace(next_stop, error)
    observers.append(trace)
    run.begin()  # loads (or compiles) the jitted code outside the clock
    drive = Drive(run, observers).go()
    trace.finish(run, drive.elapsed)
    return trace.rows


def _next_stop(step, at=None):
    """position -> the next trace position after it (None: no more), or None for no trace."""
    if at is not None:
        at = np.unique(np.asarray(at, np.int64))

        def next_of(p):
            i = int(np.searchsorted(at, p, "right"))
            return int(at[i]) if i < at.size else None

        return next_of
    if step:
        return lambda p: (p // step + 1) * step
    return None
