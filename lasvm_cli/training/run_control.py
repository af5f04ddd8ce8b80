"""The online driver of svm-train: each machine of a training (one for two classes or an
all-in-one machine, k(k-1)/2 for one-vs-one, k for one-vs-rest) driven in turn through the one
drive loop (drive.py) with the observers its options ask for: stopping limits, snapshots,
the trace, the state file and Ctrl-C, the progress bar. What spans the machines lives here:
resuming the machine a state file was saved in, the state file's blocks of every machine, the
snapshot models assembled from every machine's. The options and their meaning:
docs/solvers.md, "Long runs"; the loop's design: docs/architecture.md."""

import contextlib

from ..base.clock import Clock
from ..base.errors import ParameterError
from .drive import Drive, Progress, StopLimits
from .snapshots import SnapshotTaker, Snapshots
from .state_file import (StateSaver, check_resume, check_resume_family, check_resume_params,
                         data_fingerprint, load_state, result_from, result_meta,
                         run_parameters, save_state)
from .trace import COLUMNS, OnlineTrace, TraceFile


def _error(msg):
    raise ParameterError(f"ERROR: {msg}")


class OnlineControl:
    """Drives the run (solvers/run.py's SavedRun) of each machine of a training in turn: the
    training layer's driver (driver.py) calls :meth:`solve` once per machine, in the trainer's
    order. Limits and snapshot values apply to each machine's own iterations, expansion and
    seconds.

    ``machines``: (positive label, negative label or None for "the rest") of each machine, or
    the labels of an all-in-one machine's classes; ``build_model(results) -> SVMModel``
    assembles a model from one SolverResult per machine (the trainer's)."""

    def __init__(self, opts, machines=((1, -1),), test=None, build_model=None, info=None,
                 warn=None):
        self.o = opts
        self.machines = [tuple(m) for m in machines]
        self.test = test
        self.info = info or (lambda _m: None)
        self.warn = warn or (lambda _m: None)
        self.index = -1            # machine being driven
        self.results = []          # SolverResult of each finished machine
        self.finished = []         # (meta, arrays) state block of each finished machine
        self.fingerprints = []
        self.stop_reason = None
        self.snapshots = Snapshots(opts.snapshots, opts.snapshot_by, opts.model_file,
                                   build_model, len(self.machines), self.info, self.warn)
        self.saver = StateSaver(opts.save_state, opts.save_every, self._save, self.warn) \
            if opts.save_state else None
        self.trace = None          # the TraceFile, from the first machine on
        self.trace_offset = None   # where a resumed trace continues
        self._resume = None        # (meta, arrays) of --resume until its machine is reached
        self.drive_ = self._trace_rows = self._taker = None  # the current machine's

    @property
    def multi(self):
        return len(self.machines) > 1

    @property
    def snapshots_written(self):
        return self.snapshots.written

    def _machine_name(self):
        pos, neg = self.machines[self.index]
        return f"{pos:g}-{'rest' if neg is None else format(neg, 'g')}"

    def _finished(self, run):
        """The run's finished copy (one per position: a snapshot and a stop at the same
        iteration share it)."""
        if self._last is not None and self._last[0] == run.processed and run.online:
            return self._last[1]
        fin = run.finished_copy()
        self._last = (run.processed, fin)
        return fin

    # -- state file ---------------------------------------------------------------------------

    def _machine_block(self, run):
        """What the state file keeps of the current machine: its arrays and its place."""
        taken = self.snapshots.taken[self.index]
        arrays = run.state_arrays()
        for i, r in taken.items():
            arrays[f"snap_{i}_coef"] = r.coef
        meta = dict(phase=run.PHASES[run.phase], elapsed=self.drive_.elapsed,
                    snap_i=self._taker.next_value if self._taker else 0,
                    next_trace=self._trace_rows.next_row if self._trace_rows else 0,
                    fingerprint=self.fingerprints[self.index], params=self.params,
                    snapshots={str(i): result_meta(r) for i, r in taken.items()})
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
        offset = self.trace.offset if self.trace is not None else self.trace_offset
        save_state(self.o.save_state, run, dict(
            meta, trace_offset=offset, machine=self.index, n_machines=len(self.machines),
            finished=done), extra)

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
        returns None (no block), or ("finished" (a machine finished before the save) or
        "current" (the machine the save was made in), elapsed, snapshot index, next trace
        row)."""
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
        self.snapshots.taken[m] = {int(i): result_from(r, arrays[f"snap_{i}_coef"])
                                   for i, r in block.get("snapshots", {}).items()}
        elapsed = float(block["elapsed"])
        if m == saved:
            self._resume = None
        what = f"machine {self._machine_name()}: " if self.multi else ""
        self.info(f"resumed {self.o.resume}: {what}{block['phase']} phase, {run.processed} "
                  f"iterations, {elapsed:.3g} s")
        return ("finished" if m < saved else "current", elapsed,
                int(block.get("snap_i") or 0), int(block.get("next_trace") or 0))

    # -- one machine ----------------------------------------------------------------------------

    def solve(self, machine, params, progress=None):
        """Train the next machine: its solver's run (solvers.start), driven."""
        from ..solvers import start

        return self.drive(start(machine, params), progress)

    def close(self):
        self._close_trace()

    def _fingerprint(self, run):
        """What the state file records of the machine's training data."""
        return data_fingerprint(run.kd, run.labels)

    def _close_trace(self):
        if self.trace is not None:
            self.trace_offset = self.trace.offset
            self.trace.close()
            self.trace = None

    def drive(self, run, progress=None):
        o = self.o
        self.index += 1
        m = self.index
        self.fingerprints.append(self._fingerprint(run))
        self.params = run_parameters(run)
        self.snapshots.taken.append({})
        self.stop_reason, self._last = None, None
        if m == 0 and o.resume:
            self._load_resume()
        restored = self._restore(run) if self._resume is not None else None
        status, elapsed, snap_i, next_trace = restored or (None, 0.0, 0, 0)
        if restored is None:
            with Clock() as clock:
                run.begin()
            elapsed += clock.seconds()
        if o.trace and self.trace is None:
            self.trace = TraceFile(o.trace, COLUMNS + tuple(run.TRACE_EXTRA) +
                                   (("machine",) if self.multi else ()), self.trace_offset)
        drive = self.drive_ = Drive(run, self._observers(progress, snap_i, next_trace),
                                    elapsed)
        # a machine finished before the save, with nothing left to do, has its rows in the trace
        quiet = status == "finished" and (run.done or (run.online and drive.stop()))
        try:
            with self.saver.deferred_interrupt() if self.saver else contextlib.nullcontext():
                res = self._drive(drive, restored is not None, quiet)
        except BaseException:
            self._close_trace()
            raise
        if m == len(self.machines) - 1:
            self._close_trace()
        self.results.append(res)
        if m < len(self.machines) - 1:
            self.finished.append(self._machine_block(run))
        elif o.snapshots:
            self.snapshots.last(self.results)
        return res

    def _observers(self, progress, snap_i, next_trace):
        """The current machine's observers, in the order they act after a step and give
        their reasons to stop."""
        o, m = self.o, self.index
        observers = [Progress(progress)] if progress is not None else []
        observers.append(StopLimits(o.stop_iterations, o.stop_sv, o.stop_seconds))
        self._trace_rows = self._taker = None
        if self.trace is not None:
            error = None
            if self.test is not None:
                error = lambda run: self.test.error(run, self.machines[m])  # noqa: E731
            self._trace_rows = OnlineTrace(self.trace, o.trace_every, error,
                                           self._machine_name() if self.multi else None,
                                           next_trace)
            observers.append(self._trace_rows)
        if o.snapshots:
            self._taker = SnapshotTaker(self.snapshots, m, self._finished, self.results,
                                        snap_i)
            observers.append(self._taker)
        if self.saver is not None:
            observers.append(self.saver)
        return observers

    def _drive(self, drive, resumed, quiet):
        run = drive.run
        if not resumed:
            drive.start()  # the seeded machine: a trace row, snapshots the seeds reach
        drive.go()
        self.stop_reason = drive.stop_reason
        if self.stop_reason:
            self.info(f"stopped at {run.processed} iterations ({self.stop_reason})")
            with Clock() as clock:
                fin = self._finished(run)
            seconds = drive.elapsed + clock.seconds()
        else:
            fin, seconds = run, drive.elapsed
        if self._trace_rows is not None and not quiet:
            # the saved state points before the final row: a resumed run replaces it
            offset = self.trace.offset
            self._trace_rows.write(fin, seconds, "final")
            self.trace.offset = offset
        if self.saver is not None:
            self.saver.save(run)
        res = fin.result()
        res.counters["seconds"] = seconds
        return res
