"""One-class SVM (LIBSVM's ``solve_one_class``) on the SMO loop (LIBSVM's Solver, so --wss
applies):

    min 0.5 a'Ka,  e'a = nu l,  0 <= a <= 1

from LIBSVM's start: the first floor(nu l) examples at 1, the next one at nu l - floor(nu l).
coef = a; LIBSVM's rho and obj; no line between "optimization finished" and "obj = ".
"""

import numpy as np

from ..qp import MAX_ITER_REACHED
from .csvc import solve_qp
from .result import SolverResult
from .variables import one_per_example


def one_class_start(l, nu):
    """solve_one_class's initial alpha."""
    alpha = np.zeros(l)
    n = int(nu * l)
    alpha[:n] = 1.0
    if n < l:
        alpha[n] = nu * l - n
    return alpha


def solve_one_class(kd, kp, l, nu, **smo_options):
    """Train a one-class SVM on the l rows of kd."""
    alpha, rho, obj, status, counters = solve_qp(
        kd, kp, one_per_example(np.ones(l)), np.zeros(l), np.ones(l),
        alpha0=one_class_start(l, nu), **smo_options)
    return SolverResult.binary(
        alpha, rho, obj=obj, n_iter=counters["iterations"], n_sv=int(np.count_nonzero(alpha)),
        n_bsv=int(np.count_nonzero(alpha >= 1.0)), hit_max_iter=status == MAX_ITER_REACHED,
        counters=counters, lines=[])


def from_params(kd, kp, y, Cp, Cn, params, progress=None, control=None):
    """solve_one_class with svm-train's parameters (FORMULATIONS' entry for -s 2; y unused)."""
    return solve_one_class(kd, kp, len(y), params.nu, eps=params.eps,
                           shrinking=bool(params.shrinking), cache_mb=params.cache_size,
                           wss=params.wss, max_iter=params.max_iter,
                           final_kkt_check=params.final_kkt_check, progress=progress)
