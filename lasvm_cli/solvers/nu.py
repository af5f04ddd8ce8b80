"""nu-SVC and nu-SVR (LIBSVM's ``solve_nu_svc``, ``solve_nu_svr``) on Solver_NU
(qp/smo_nu.py), through qp/solve.py's solve_qp(nu=True).

* nu-SVC: min 0.5 a'Qa, y'a = 0, e'a = nu l, 0 <= a <= 1, from LIBSVM's start (per sign, the
  first examples at 1 until nu l / 2 is spent, one fractional); then with r from Solver_NU:
  coef = a y / r, rho / r, obj / r^2, bounds 1 / r; LIBSVM prints ``C = 1/r``.
* nu-SVR: epsilon-SVR's 2l variables (solvers/variables.py: svr_pairs), linear term (-z, z),
  e'a = C nu l, from a_i = a*_i = min(C, what is left of C nu l / 2); prints
  ``epsilon = -r``.
"""

import numpy as np

from ..qp import MAX_ITER_REACHED
from ..qp.solve import solve_qp
from .result import SolverResult
from .variables import one_per_example, svr_pairs


def nu_total(nu, l, C=1.0, start="libsvm"):
    """nu l C, the sum of the starting alphas: LIBSVM's product, or scikit-learn's sum of
    nu C_i over the rows ("sklearn"), rounded once per row."""
    if start == "sklearn":
        total = 0.0
        for _ in range(l):
            total += C * nu
        return total
    return C * nu * l


def nu_svc_start(y, nu, start="libsvm"):
    """solve_nu_svc's initial alpha."""
    l = y.shape[0]
    sum_pos = sum_neg = nu_total(nu, l, start=start) / 2
    alpha = np.empty(l)
    for i in range(l):
        if y[i] > 0:
            alpha[i] = min(1.0, sum_pos)
            sum_pos -= alpha[i]
        else:
            alpha[i] = min(1.0, sum_neg)
            sum_neg -= alpha[i]
    return alpha


def solve_nu_svc(kd, kp, y, nu, start="libsvm", **smo_options):
    """Train binary nu-SVC (y = +1/-1) on the rows of kd."""
    y = np.ascontiguousarray(y, np.float64)
    l = y.shape[0]
    alpha, rho, obj, status, counters = solve_qp(
        kd, kp, one_per_example(y), np.zeros(l), np.ones(l),
        alpha0=nu_svc_start(y, nu, start), nu=True, **smo_options)
    r = counters["r"]
    coef = alpha * (y / r)
    bound = 1 / r
    return SolverResult.binary(
        coef, rho / r, obj=obj / (r * r), n_iter=counters["iterations"],
        n_sv=int(np.count_nonzero(coef)), n_bsv=int(np.count_nonzero(np.abs(coef) >= bound)),
        hit_max_iter=status == MAX_ITER_REACHED, counters=counters, lines=[f"C = {bound:f}"])


def nu_svr_start(l, C, nu, start="libsvm"):
    """solve_nu_svr's initial alpha (2l variables: alpha then alpha*)."""
    alpha = np.empty(2 * l)
    total = nu_total(nu, l, C, start) / 2
    for i in range(l):
        alpha[i] = alpha[i + l] = min(total, C)
        total -= alpha[i]
    return alpha


def solve_nu_svr(kd, kp, z, C, nu, start="libsvm", **smo_options):
    """Train nu-SVR (cost C) on targets ``z`` of the rows of kd."""
    z = np.asarray(z, np.float64)
    l = z.shape[0]
    alpha, rho, obj, status, counters = solve_qp(
        kd, kp, svr_pairs(l), np.concatenate([-z, z]), np.full(2 * l, float(C)),
        alpha0=nu_svr_start(l, float(C), nu, start), nu=True, **smo_options)
    coef = alpha[:l] - alpha[l:]
    a = np.abs(coef)
    return SolverResult.binary(
        coef, rho, obj=obj, n_iter=counters["iterations"], n_sv=int(np.count_nonzero(a > 0)),
        n_bsv=int(np.count_nonzero(a >= C)), hit_max_iter=status == MAX_ITER_REACHED,
        counters=counters, lines=[f"epsilon = {-counters['r']:f}"])


def _options(params):
    return dict(eps=params.eps, shrinking=bool(params.shrinking), cache_mb=params.cache_size,
                max_iter=params.max_iter)


def nu_svc_from_params(machine, params, progress=None):
    """solve_nu_svc with svm-train's parameters (SOLVERS' entry for -s 1; Cp, Cn unused, as in
    LIBSVM)."""
    return solve_nu_svc(machine.kd, machine.kp, machine.y, params.nu, params.nu_start, progress=progress,
                        **_options(params))


def nu_svr_from_params(machine, params, progress=None):
    """solve_nu_svr with svm-train's parameters (SOLVERS' entry for -s 4)."""
    return solve_nu_svr(machine.kd, machine.kp, machine.y, params.C, params.nu, params.nu_start, progress=progress,
                        **_options(params))
