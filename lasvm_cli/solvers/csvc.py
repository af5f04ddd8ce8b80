"""Binary C-SVC (LIBSVM's ``solve_c_svc``): p = -1, bounds Cp for y = +1 and Cn for y = -1.

    min_a 0.5 a'Qa - e'a   s.t.  y'a = 0,  0 <= a_t <= (Cp if y_t = +1 else Cn)

One variable per example (solvers/variables.py), run to the end by qp/solve.py's
:func:`~lasvm_cli.qp.solve.solve_qp`. Returns a SolverResult: coef = y_t a_t (the signed alpha
of qp/steps.py) for all l rows, LIBSVM's rho and obj.
"""

import numpy as np

from ..qp import MAX_ITER_REACHED
from ..qp.solve import solve_qp
from .result import SolverResult
from .variables import one_per_example


def solve_binary(kd, kp, y, Cp, Cn, *, eps=1e-3, shrinking=True, cache_mb=100.0, wss="so",
                 max_iter=None, final_kkt_check=False, progress=None, cache_dtype=np.float32):
    """Train one binary C-SVC on the l rows of ``kd`` (y = +1/-1 as float64)."""
    y = np.ascontiguousarray(y, np.float64)
    l = y.shape[0]
    C = np.where(y > 0, float(Cp), float(Cn))
    alpha, rho, obj, status, counters = solve_qp(
        kd, kp, one_per_example(y), -np.ones(l), C, eps=eps, shrinking=shrinking,
        cache_mb=cache_mb, wss=wss, max_iter=max_iter, final_kkt_check=final_kkt_check,
        progress=progress, cache_dtype=cache_dtype)
    coef = y * alpha
    n_sv = int(np.count_nonzero(alpha > 0))
    n_bsv = int(np.count_nonzero(alpha >= C))
    return SolverResult.binary(coef, rho, obj=obj, n_iter=counters["iterations"], n_sv=n_sv,
                               n_bsv=n_bsv, hit_max_iter=status == MAX_ITER_REACHED,
                               counters=counters)


def from_params(machine, params, progress=None):
    """solve_binary with svm-train's parameters (the SOLVERS table's entry for "smo"): LIBSVM's
    -e, -h, -m, and the declared options of "smo" (solvers.SMO_OPTIONS: --wss, --max-iter,
    --final-kkt-check)."""
    from . import solver_kwargs

    kd, kp, y, Cp, Cn = machine[:5]
    return solve_binary(kd, kp, y, Cp, Cn, eps=params.eps, shrinking=bool(params.shrinking),
                        cache_mb=params.cache_size, progress=progress,
                        **solver_kwargs(params, "smo"))
