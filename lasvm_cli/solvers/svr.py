"""epsilon-SVR (LIBSVM's ``solve_epsilon_svr``) on the SMO loop, over 2l variables of l examples:

    min 0.5 (a - a*)'K(a - a*) + eps sum (a + a*) - sum z (a - a*),  sum (a - a*) = 0,  0 <= a, a* <= C

Variable i is alpha_i (sign +1, linear term eps - z_i), variable i + l is alpha*_i (sign -1,
linear term eps + z_i), both on example i (solvers/variables.py: svr_pairs), so both read
example i's one cached kernel row. coef_i = alpha_i - alpha*_i, LIBSVM's rho and obj.

svm-train -s 3 reaches it through solvers.SOLVERS (``from_params``); --wss applies.
"""

import numpy as np

from ..qp import MAX_ITER_REACHED
from ..qp.solve import solve_qp
from .result import SolverResult
from .variables import svr_pairs


def solve_epsilon_svr(kd, kp, z, C, p, **smo_options):
    """Train epsilon-SVR (tube width ``p``, cost ``C``) on targets ``z`` of the rows of kd."""
    z = np.asarray(z, np.float64)
    l = z.shape[0]
    linear = np.concatenate([p - z, p + z])
    alpha, rho, obj, status, counters = solve_qp(kd, kp, svr_pairs(l), linear,
                                                 np.full(2 * l, float(C)), **smo_options)
    coef = alpha[:l] - alpha[l:]
    a = np.abs(coef)
    return SolverResult.binary(coef, rho, obj=obj, n_iter=counters["iterations"],
                               n_sv=int(np.count_nonzero(a > 0)),
                               n_bsv=int(np.count_nonzero(a >= C)), counters=counters,
                               hit_max_iter=status == MAX_ITER_REACHED)


def from_params(machine, params, progress=None):
    """solve_epsilon_svr with svm-train's parameters (SOLVERS' entry for -s 3)."""
    return solve_epsilon_svr(machine.kd, machine.kp, machine.y, params.C, params.p, eps=params.eps,
                             shrinking=bool(params.shrinking), cache_mb=params.cache_size,
                             wss=params.wss, max_iter=params.max_iter,
                             final_kkt_check=params.final_kkt_check, progress=progress)
