"""The learning curve of an online run (--trace FILE): a CSV row of the current, unfinished
machine every --trace-every units of work, and a ``final`` row of the returned model. The file
is appended to across the machines of one training and cut back to the saved offset when a run
resumes, so a resumed run's file is the uninterrupted run's."""

import os

from .drive import Observer

COLUMNS = ("iterations", "seconds", "kernel_evals", "sv", "delta", "dual_objective",
           "test_error", "phase")


class TraceFile:
    """The CSV file: its header, rows, and the offset after the last row kept (a state file
    records it; ``offset`` given: a resumed run truncates the file there)."""

    def __init__(self, path, columns, offset=None):
        if offset is not None and os.path.exists(path):
            f = open(path, "r+", encoding="ascii", newline="\n")
            f.truncate(offset)  # drop rows written after the saved state
            f.seek(offset)
        else:
            f = open(path, "w", encoding="ascii", newline="\n")
            f.write(",".join(columns) + "\n")
        f.flush()
        self._f = f
        self.offset = f.tell()

    def write(self, cells):
        self._f.write(",".join(cells) + "\n")
        self._f.flush()
        self.offset = self._f.tell()

    def close(self):
        self._f.close()


def row(run, seconds, phase, test_error=None, machine=None, extra=False):
    """A trace row of ``run``'s current iterate: COLUMNS, the run's own columns (``extra``:
    its TRACE_EXTRA), and the machine's name."""
    cells = [str(run.processed), f"{seconds:.6f}", str(run.kernel_evals), str(run.trace_sv()),
             f"{run.delta():.10g}", f"{run.dual_objective():.12g}",
             "" if test_error is None else f"{test_error:.6g}", phase]
    cells += [f"{v:.10g}" for v in (run.trace_extra() if extra else ())]
    if machine is not None:
        cells.append(machine)
    return cells


class OnlineTrace(Observer):
    """A row every ``every`` units of work of the online phase, from the run's measures and
    the test set's error (``error(run)``, or None)."""

    def __init__(self, file, every, error=None, machine=None, next_row=0):
        self.file, self.every, self.error, self.machine = file, every, error, machine
        self.next_row = next_row  # the work at which the next row is due (in a state file)

    def room(self, run, drive):
        return self.next_row - run.processed

    def start(self, run, drive):
        self._maybe_row(run, drive)

    def after_step(self, run, drive):
        if drive.was_online and run.online:
            self._maybe_row(run, drive)

    def _maybe_row(self, run, drive):
        if run.processed >= self.next_row:
            self.write(run, drive.elapsed, "online")
            self.next_row = (run.processed // self.every + 1) * self.every

    def write(self, run, seconds, phase):
        err = self.error(run) if self.error is not None else None
        self.file.write(row(run, seconds, phase, err, self.machine, bool(run.TRACE_EXTRA)))
