"""The driver: how the training layer trains each of a model's machines.

A trainer (train.py's one-vs-one and single machine, ovr.py, allinone.py) tells
the driver its machines and how a model is assembled from their results (``begin``), asks it
to train each machine in turn (``solve``), then ``end``\\s it. The driver chooses how:

* :data:`DIRECT` (no online option, cross-validation, the estimators' batch fits): the
  solver of the dispatch table (lasvm_cli/solvers SOLVERS) trains the machine to its end;
* :class:`Driver` of svm-train's parameters: with an online option (--trace, --save-state,
  --resume, stopping limits, --snapshots), the machine's run (the run protocol,
  solvers/run.py) is stepped by run_control.py's :class:`OnlineControl`; with a tracking
  solver, tracking_control.py's :class:`TrackControl` (an OnlineControl: the same options)
  starts its runs in the teacher's order in file terms, repeats them (--runs) and writes the
  gap trace.

The solvers never see the driver: it starts their runs (``solvers.start``) and steps them.
"""

from .. import solvers


class Direct:
    """Each machine trained by its solver to the end."""

    def begin(self, machines, assemble):
        pass

    def solve(self, machine, params, progress=None):
        return solvers.solve(machine, params, progress)

    def end(self):
        pass


DIRECT = Direct()


class Driver(Direct):
    """svm-train's driver for ``params`` on ``problem``. ``begin(machines, assemble)``:
    ``machines`` lists each machine's training-file rows and its labels ((positive, negative
    or None for the rest), or every class of an all-in-one machine); ``assemble(results) ->
    SVMModel`` makes a model from one SolverResult per machine (the snapshots')."""

    def __init__(self, problem, params, info=None, warn=None):
        """Checks the options and reads the files they name (test set, order file) first:
        an error comes before any training and any output."""
        from .online_options import OnlineOptions
        from .test_set import TestSet

        self.problem, self.params = problem, params
        self.info = info or (lambda _m: None)
        self.warn = warn or (lambda _m: None)
        self.control = None
        self.tracking = params.solver in solvers.TRACKING_SOLVERS
        self.order = None
        self.opts = OnlineOptions.from_params(params)
        if self.tracking and params.order_file:
            from .tracking_control import read_order

            self.order = read_order(params.order_file, problem.n)
        self.test = TestSet(params.test_file, problem) if params.test_file else None

    def begin(self, machines, assemble):
        p = self.params
        if self.tracking:
            from .tracking_control import TrackControl

            self.control = TrackControl(p, machines, self.opts, order=self.order,
                                        test=self.test, build_model=assemble, info=self.info,
                                        warn=self.warn)
        elif self.opts is not None:
            from .run_control import OnlineControl

            if not machines:
                raise_parameter_error(f"{', '.join(self.opts.used())}: the training data "
                                      "hold only one class")
            self.control = OnlineControl(self.opts, machines=[m for _, m in machines],
                                         test=self.test, build_model=assemble,
                                         info=self.info, warn=self.warn)

    def solve(self, machine, params, progress=None):
        if self.control is None:
            return solvers.solve(machine, params, progress)
        return self.control.solve(machine, params, progress)

    def end(self):
        if self.control is not None:
            self.control.close()


def drives(params):
    """True when svm-train's ``params`` need a :class:`Driver` (an online option or a
    tracking solver)."""
    from .online_options import online_requested

    return params.solver in solvers.TRACKING_SOLVERS or online_requested(params)


def raise_parameter_error(msg):
    from ..base.errors import ParameterError

    raise ParameterError(f"ERROR: {msg}")
