"""All-in-one multi-class training, ``--multiclass llw|cs`` (Trinh 2012): one machine over all
classes, no bias, written in the model file extension ``multiclass llw|cs`` (k coefficient rows,
rho 0, prediction by the arg-max of f_c). ``--solver smo`` trains with batch S2DO
(solvers/s2do_batch.py), ``--solver online`` with the LaRank-like online solver
(solvers/s2do_online.py). Reached through train.MULTICLASS_TRAINERS, imported on first use.
"""

import numpy as np

from ..base.errors import ParameterError
from ..numerics.classes import group_classes
from ..numerics.data import subset, sv_arrays
from ..numerics.model import SVMModel
from ..solvers import machine_of
from ..solvers.s2do_batch import report_allinone
from .driver import DIRECT


def train_allinone(problem, params, rows, info, warn, progress, rng, driver=DIRECT):
    """A ``multiclass llw|cs`` model on ``problem`` (or its ``rows``): one machine over the
    classes, trained by ``driver`` (the online solver's run under --trace, stopping limits,
    snapshots and state files: lasvm_cli/training/driver.py)."""
    if params.probability:
        raise ParameterError(f"ERROR: probability estimates (-b 1) are not available for "
                             f"--multiclass {params.multiclass}; they are supported with "
                             "--multiclass ovo")
    rows = np.arange(problem.n) if rows is None else np.asarray(rows, np.int64)
    label, start, count, perm = group_classes(problem.y[rows])
    grouped = rows[perm]
    k = label.size
    yc = np.repeat(np.arange(k), count).astype(np.int64)
    kd = subset(problem.kd, grouped)
    if k < 2:
        info("WARNING: training data in only one class. See README for details.")

    def assemble(results):
        res, = results
        coef = res.coef[:k]
        sv_local = np.flatnonzero((coef != 0).any(axis=0))
        nSV = np.bincount(yc[sv_local], minlength=k).astype(np.int64)
        sv_indptr, sv_indices, sv_values = sv_arrays(problem, params.kernel_type,
                                                     grouped[sv_local])
        model = SVMModel(
            svm_type="c_svc", kernel_type=params.kernel_type, degree=params.degree,
            gamma=params.gamma, coef0=params.coef0, nr_class=k, label=label.astype(np.int64),
            rho=np.zeros(k), nSV=nSV, sv_coef=coef[:, sv_local].copy(),
            sv_indptr=sv_indptr, sv_indices=sv_indices, sv_values=sv_values,
            multiclass=params.multiclass)
        model.counters = dict(res.counters)
        model.sv_indices_train = grouped[sv_local] + 1
        return model

    driver.begin([(grouped, tuple(label))], assemble)
    bar = progress(f"{params.multiclass} ({params.solver})") if progress else None
    res = driver.solve(machine_of(kd, yc, params.C, params.C, params, max(k, 2)), params,
                       bar.update if bar else None)
    if bar:
        bar.close()
    driver.end()
    if res.hit_max_iter:
        warn("\nWARNING: reaching max number of iterations")
    report_allinone(res, info)
    model = assemble([res])
    info(f"Total nSV = {int(np.sum(model.nSV))}")
    return model
