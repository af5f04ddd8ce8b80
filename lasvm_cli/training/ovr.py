"""One-vs-rest multi-class training (the LASVM paper's MNIST setup), written in the model
file extension ``multiclass ovr``: k binary machines "class c against the rest" over one shared
SV list, decision value c = sum_s sv_coef[c][s] K(x, s) - rho[c], prediction by arg-max."""

import numpy as np

from ..base.errors import ParameterError
from ..numerics.classes import group_classes, weighted_C
from ..numerics.data import subset
from ..numerics.model import SVMModel
from ..solvers import machine_of
from ..solvers.result import report_binary
from .driver import DIRECT
from .params import TrainParams


def train_ovr(problem, params: TrainParams, rows, info, warn, progress, rng, driver=DIRECT):
    if params.probability:
        raise ParameterError("ERROR: probability estimates (-b 1) need --multiclass ovo")
    rows = np.arange(problem.n) if rows is None else np.asarray(rows, np.int64)
    label, start, count, perm = group_classes(problem.y[rows])
    grouped = rows[perm]
    k = label.size
    class_of = np.repeat(np.arange(k), count)
    Cw = weighted_C(params, label, warn)
    sub_kd = subset(problem.kd, grouped)

    def assemble(results):
        return _ovr_model(problem, params, grouped, label, class_of, results)

    driver.begin([(grouped, (label[c], None)) for c in range(k)], assemble)
    results = []
    for c in range(k):
        y = np.where(class_of == c, 1.0, -1.0)
        bar = progress(f"class {label[c]} vs rest") if progress else None
        # the rest's C is C itself: the weight of class c applies to its own examples
        res = driver.solve(machine_of(sub_kd, y, Cw[c], params.C, params), params,
                           bar.update if bar else None)
        if bar:
            bar.close()
        report_binary(res, Cw[c], params.C, grouped.size, info, warn)
        results.append(res)
    driver.end()
    model = assemble(results)
    info(f"Total nSV = {int(model.nSV.sum())}")
    return model


def _ovr_model(problem, params, grouped, label, class_of, results):
    """The one-vs-rest model of the k machines' SolverResults."""
    k = label.size
    counters = {}
    for res in results:
        for name, value in res.counters.items():
            counters[name] = counters.get(name, 0) + value
    coef = np.vstack([res.coef[0] for res in results])
    sv_local = np.flatnonzero((coef != 0).any(axis=0))
    nSV = np.bincount(class_of[sv_local], minlength=k).astype(np.int64)
    sv_indptr, sv_indices, sv_values = problem.csr_rows(grouped[sv_local])
    model = SVMModel(
        svm_type="c_svc", kernel_type=params.kernel_type, degree=params.degree,
        gamma=params.gamma, coef0=params.coef0, nr_class=k, label=label.astype(np.int64),
        rho=np.array([res.rho[0] for res in results]), nSV=nSV,
        sv_coef=coef[:, sv_local].copy(), sv_indptr=sv_indptr, sv_indices=sv_indices,
        sv_values=sv_values, multiclass="ovr")
    model.counters = counters
    model.sv_indices_train = grouped[sv_local] + 1  # training row of each SV, 1-based
    return model
