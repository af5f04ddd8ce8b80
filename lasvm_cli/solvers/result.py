"""The one result every solver returns, and LIBSVM's lines about it.

A solver trains m machines over the l examples of its problem (m = 1 for a binary machine, k
for an all-in-one multi-class machine):

    decision_c(x) = sum_t coef[c, t] K(x_t, x) - rho[c]

``coef`` is float64 [m, l] (for C-SVC: y_t alpha_t, LIBSVM's sv_coef, zero for non-SVs), ``rho``
float64 [m] (LIBSVM's rho = -b; 0 for machines without a bias). ``obj`` is the dual objective
as LIBSVM prints it (0.5 a'Qa + p'a), ``counters`` what ``--counters`` prints.
"""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class SolverResult:
    coef: np.ndarray       # float64 [m, l]
    rho: np.ndarray        # float64 [m]
    obj: float
    n_iter: int
    n_sv: int
    n_bsv: int
    hit_max_iter: bool = False
    counters: dict = field(default_factory=dict)
    # LIBSVM's line after "optimization finished" (nu-SVC "C = ...", nu-SVR "epsilon = ...",
    # one-class none); None: C-SVC's / epsilon-SVR's "nu = ..." (when Cp == Cn)
    lines: list | None = None

    @classmethod
    def binary(cls, coef, rho, **fields):
        """A one-machine result from coef [l] and a scalar rho."""
        return cls(coef=np.asarray(coef, np.float64).reshape(1, -1),
                   rho=np.array([float(rho)]), **fields)

    @property
    def m(self):
        return self.coef.shape[0]


def report_binary(res, Cp, Cn, l, info, warn):
    """LIBSVM's info lines after one solve (svm_train_one and solve_c_svc & co.)."""
    if res.counters.get("warn_h0"):
        info("\nWARNING: using -h 0 may be faster")  # LIBSVM: info(), at gradient reconstruction
    if res.hit_max_iter:
        warn("\nWARNING: reaching max number of iterations")
    info(f"optimization finished, #iter = {res.n_iter}")
    if res.lines is not None:
        for line in res.lines:
            info(line)
    elif Cp == Cn:
        info(f"nu = {np.abs(res.coef[0]).sum() / (Cp * l):f}")
    info(f"obj = {res.obj:f}, rho = {res.rho[0]:f}")
    info(f"nSV = {res.n_sv}, nBSV = {res.n_bsv}")
