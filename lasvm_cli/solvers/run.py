"""The run protocol: a solver that trains in steps offers its training as a run object, which
the training layer's one drive loop (training/drive.py) steps between its observers (traces,
stopping limits, snapshots, state files, Ctrl-C, progress). The solver knows nothing of the
loop; the loop and its observers know runs only through these protocols, which
tests/test_run_protocol.py checks with mypy and at run time.

* :class:`Run`: every run (LASVM's, its bias-free family's, the online S2DO solver's, the
  tracking algorithms').
* :class:`ResumableRun`: a run the online driver can stop, snapshot, save and resume.
* :class:`SavedRun`: a resumable run whose trace is LASVM's (delta, dual objective).
* :class:`TrackedRun`: a tracking algorithm's resumable run, whose trace is the gap of its
  output.
"""

from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np


class Expansion(NamedTuple):
    """A machine's current iterate as an expansion over training rows: decision value c is
    sum_j coef[c, j] K(x, x_sv[j]) - rho[c]; one row for a binary machine (positive side:
    label +1), one per class for an all-in-one machine (arg-max)."""
    sv: np.ndarray     # int64 training rows
    coef: np.ndarray   # float64 [rows, sv.size]
    rho: np.ndarray    # float64 [rows]


def binary_expansion(coef, rho):
    """The Expansion of a binary machine's coefficients by example and its rho."""
    sv = np.flatnonzero(coef).astype(np.int64)
    return Expansion(sv, np.ascontiguousarray(coef[sv])[None, :], np.array([float(rho)]))


# Data members are declared as read-only properties: a class attribute, an instance attribute or
# a property of a run class all provide one.


@runtime_checkable
class Run(Protocol):
    @property
    def CHUNK(self) -> int:
        """Units of work per step when the driver has no reason to stop sooner."""

    def begin(self) -> None:
        """Make the state (and seed it); before the first step."""

    def step(self, n: int) -> Any:
        """Do the next ``n`` units of work (fewer at the end), or one change of phase."""

    @property
    def done(self) -> bool:
        """Nothing left to do: result() is the final one."""

    @property
    def online(self) -> bool:
        """In the online phase: stopping limits, snapshots and trace rows apply (a run's
        finishing phase, if it has one, follows it)."""

    @property
    def processed(self) -> int:
        """Units of work done: online iterations, examples, coordinate steps (rcd)."""

    @property
    def n_expansion(self) -> int:
        """Vectors in the current expansion."""

    @property
    def kernel_evals(self) -> int:
        """Kernel values computed so far."""

    def expansion(self) -> Expansion:
        """The current iterate (a trace's test error)."""

    def result(self) -> Any:
        """The SolverResult of the current iterate (the final one when done)."""


@runtime_checkable
class ResumableRun(Run, Protocol):
    @property
    def PHASES(self) -> tuple:
        """Names of the phases, in the state file."""

    @property
    def labels(self) -> Any:
        """The machine's labels (the training data's fingerprint)."""

    @property
    def kd(self) -> Any:
        """The machine's rows (the fingerprint, test errors of the trace)."""

    @property
    def kp(self) -> Any:
        """The machine's kernel."""

    @property
    def config(self) -> dict:
        """What determines the result (a resume must match it), epochs aside."""

    @property
    def epochs(self) -> Any:
        """Passes over the data (a resume may raise it)."""

    @property
    def phase(self) -> int:
        """Index in PHASES."""

    def finished_copy(self) -> "ResumableRun":
        """An independent copy taken to the end of training (its model at a stop or a
        snapshot); the run itself goes on unchanged."""

    def state_arrays(self) -> dict:
        """The state as named arrays (copies), for the state file."""

    def load_state_arrays(self, arrays: dict, phase: int) -> None:
        """Put saved arrays back (after begin); the run goes on as the saved one would."""


@runtime_checkable
class SavedRun(ResumableRun, Protocol):
    @property
    def TRACE_EXTRA(self) -> tuple:
        """The run's own trace columns (trace_extra's values)."""

    def delta(self) -> float:
        """The KKT violation of the current iterate (the trace's delta)."""

    def dual_objective(self) -> float:
        """The dual objective of the current iterate."""

    def trace_sv(self) -> int:
        """The trace's sv column."""

    def trace_extra(self) -> tuple:
        """The values of TRACE_EXTRA's columns."""

    def finished_copy(self) -> "SavedRun":
        """An independent copy taken to the end of training (its model at a stop, a snapshot
        or the trace's final row)."""


@runtime_checkable
class TrackedRun(ResumableRun, Protocol):
    @property
    def K(self) -> int:
        """Coordinate steps per example."""

    @property
    def kd(self) -> Any:
        """The rows of the test error (the caller's order)."""

    @property
    def kp(self) -> Any:
        """The kernel."""

    @property
    def is_rcd(self) -> bool:
        """Batch random coordinate ascent: processed counts steps, not examples."""

    @property
    def t(self) -> int:
        """Examples seen."""

    @property
    def iterations(self) -> int:
        """Coordinate steps."""

    @property
    def updates(self) -> int:
        """Coordinate steps that moved their alpha."""

    @property
    def teacher_kernel_evals(self) -> int:
        """Kernel values the teacher computed to choose examples."""

    def measures(self) -> dict:
        """Primal, dual and gap of the output over the seen examples (eq. (4)), and t."""

    def output_alpha(self) -> np.ndarray:
        """The output's coefficients by example."""
