"""The test set of a trace (--test FILE): its rows in the training data's storage and feature
columns, and the test error of a run's current machine."""

import numpy as np

from ..base.errors import ParameterError


def _error(msg):
    raise ParameterError(f"ERROR: {msg}")


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

    def error(self, run, machine):
        """Test error of the run's current iterate (its ``expansion()``). A binary machine
        (one row of coefficients): ``machine`` = (positive label, negative label, or None for
        "the rest"), on the test rows of those classes, positive where f > 0. An all-in-one
        machine (a row per class): ``machine`` = its classes' labels in class-index order,
        the arg-max over them on every test row, as svm-predict decides."""
        from ..numerics.kernels import expansion_values

        sv, coef, rho = run.expansion()
        if coef.shape[0] == 1:
            pos, neg = machine
            labels = np.trunc(self.y)
            rows = np.arange(self.n) if neg is None else \
                np.flatnonzero((labels == pos) | (labels == neg))
            truth = labels[rows] == pos
        else:
            rows = np.arange(self.n)
        if rows.size == 0:
            return float("nan")
        dec = np.zeros((coef.shape[0], rows.size))
        if sv.size:
            for c in range(coef.shape[0]):
                expansion_values(self.kd, rows.astype(np.int64), run.kd, sv,
                                 np.ascontiguousarray(coef[c]), run.kp, dec[c])
        if coef.shape[0] == 1:
            return float(np.mean((dec[0] - rho[0] > 0) != truth))
        pred = np.asarray(machine, np.float64)[np.argmax(dec, axis=0)]
        return float(np.mean(pred != self.y))
