"""The run protocol: a solver that trains in steps offers its training as a run object, which
the training layer's driver (training/run_control.py) begins, steps between its checks (traces,
stopping limits, snapshots, state files, Ctrl-C) and asks for its result. The solver knows
nothing of the driver; the driver knows runs only through these protocols.

* :class:`Run`: what every run offers (the LASVM family's, the online S2DO solver's and the
  tracking algorithms' runs): ``begin``, ``step(n)``, ``done``, its counters and ``result()``.
* :class:`SavedRun`: a run the online driver can stop, snapshot, trace and save: its phase,
  its measures for the trace, a finished copy for snapshots and stops, and its state as arrays
  for ``--save-state`` / ``--resume`` (LasvmRun, LasvmGRun, S2doRun).

A run's counters and measures are there once it has begun. tests/test_run_protocol.py checks
that each run class implements its protocol.
"""

from typing import Protocol, runtime_checkable


@runtime_checkable
class Run(Protocol):
    CHUNK: int            # examples (iterations) per step when the driver has no reason to stop

    def begin(self) -> None:
        """Make the state (and seed it); before the first step."""

    def step(self, n: int) -> object:
        """Do the next ``n`` units of work (fewer at the end)."""

    @property
    def done(self) -> bool:
        """Nothing left to do: result() is the final one."""

    @property
    def processed(self) -> int:
        """Units of work done: online iterations, examples, coordinate steps (rcd)."""

    @property
    def n_expansion(self) -> int:
        """Vectors in the current expansion."""

    @property
    def kernel_evals(self) -> int:
        """Kernel values computed so far."""

    def result(self):
        """The SolverResult of the current iterate (the final one when done)."""


@runtime_checkable
class SavedRun(Run, Protocol):
    PHASES: tuple         # names of the phases, in the state file
    labels: object        # the machine's labels (fingerprint of the training data)
    kd: object            # the machine's rows and kernel (test errors of the trace)
    kp: object
    config: dict          # what determines the result (a resume must match it), epochs aside
    epochs: object        # passes over the data (a resume may raise it)

    @property
    def online(self) -> bool:
        """In the online phase (stopping limits, snapshots and trace rows apply)."""

    @property
    def phase(self) -> int:
        """Index in PHASES."""

    def delta(self) -> float:
        """The KKT violation of the current iterate (the trace's delta)."""

    def dual_objective(self) -> float:
        """The dual objective of the current iterate."""

    def trace_sv(self) -> int:
        """The trace's sv column."""

    def finished_copy(self) -> "SavedRun":
        """An independent copy taken to the end of training (its model at a stop or a
        snapshot); the run itself goes on unchanged."""

    def state_arrays(self) -> dict:
        """The state as named arrays (copies), for the state file."""

    def load_state_arrays(self, arrays: dict, phase: int) -> None:
        """Put saved arrays back (after begin); the run goes on as the saved one would."""
