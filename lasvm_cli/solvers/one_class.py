"""One-class SVM (LIBSVM's ``solve_one_class``) on the SMO loop (LIBSVM's Solver, so --wss
applies):

    min 0.5 a'Ka,  e'a = nu l,  0 <= a <= 1

from LIBSVM's start: the first floor(nu l) examples at 1, the next one at nu l - floor(nu l).
coef = a; LIBSVM's rho and obj; no line between "optimization finished" and "obj = ".
"""

import numpy as np

from ..qp import MAX_ITER_REACHED
from ..qp.solve import solve_qp
from .nu import nu_total
from .result import SolverResult
from .variables import one_per_example


def one_class_start(l, nu, start="libsvm"):
    """solve_one_class's initial alpha; "sklearn": scikit-learn's, which fills the rows in turn
    from the sum of nu over the rows (its last bit may differ from nu l)."""
    alpha = np.zeros(l)
    if start == "sklearn":
        left = nu_total(nu, l, start=start)
        i = 0
        while left > 0 and i < l:
            alpha[i] = min(1.0, left)
            left -= alpha[i]
            i += 1
        return alpha
    n = int(nu * l)
    alpha[:n] = 1.0
    if n < l:
        alpha[n] = nu * l - n
    return alpha


def solve_one_class(kd, kp, l, nu, start="libsvm", **smo_options):
    """Train a one-class SVM on the l rows of kd."""
    alpha, rho, obj, status, counters = solve_qp(
        kd, kp, one_per_example(np.ones(l)), np.zeros(l), np.ones(l),
        alpha0=one_class_start(l, nu, start), **smo_options)
    return SolverResult.binary(
        alpha, rho, obj=obj, n_iter=counters["iterations"], n_sv=int(np.count_nonzero(alpha)),
        n_bsv=int(np.count_nonzero(alpha >= 1.0)), hit_max_iter=status == MAX_ITER_REACHED,
        counters=counters, lines=[])


def from_params(machine, params, progress=None):
    """solve_one_class with svm-train's parameters (SOLVERS' entry for -s 2; y unused)."""
    return solve_one_class(machine.kd, machine.kp, len(machine.y), params.nu, params.nu_start, eps=params.eps,
                           shrinking=bool(params.shrinking), cache_mb=params.cache_size,
                           wss=params.wss, max_iter=params.max_iter,
                           final_kkt_check=params.final_kkt_check, progress=progress)
