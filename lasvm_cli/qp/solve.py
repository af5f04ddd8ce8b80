"""The SMO loop run to its end on any QP of its form over a set of variables (LIBSVM's
``Solver::Solve`` as the formulations call it): the formulation adapters of lasvm_cli/solvers
(C-SVC, epsilon-SVR, nu-SVC, nu-SVR, one-class) build p, C and the variables and read the
result."""

import numpy as np

from ..base.clock import Clock
from ..numerics import cache as kc
from . import (ITER, N_FALLBACK, N_KKT_CONT, N_MG, N_MG_EXTRA_ROWS, N_RECON, N_SHRINK,
               N_SHRUNK_VARS, N_WARN_H0, RUNNING, VIOL, WS_CODES)
from .select import kkt_gap
from .smo import calculate_rho, make_state, objective, smo_init, smo_run

CHUNK = 1000  # iterations per jitted call (LIBSVM's shrink interval)


def solve_qp(kd, kp, variables, p, C, *, eps=1e-3, shrinking=True, cache_mb=100.0, wss="so",
             max_iter=None, final_kkt_check=False, progress=None, cache_dtype=np.float32,
             alpha0=None, nu=False):
    """min 0.5 a'Qa + p'a, y'a = const, 0 <= a <= C over ``variables`` (their signs are y, their
    examples the rows of kd) with the SMO loop, from ``alpha0`` (feasible; default 0).
    ``nu``: LIBSVM's Solver_NU (qp/smo_nu.py: the second constraint e'a = const; ``wss`` is
    ignored) instead of Solver; its r is returned as counters["r"].
    Returns (alpha by variable, rho, obj, status, counters)."""
    clock = Clock()
    m = variables.example.shape[0]
    ws = WS_CODES[wss] if isinstance(wss, str) else int(wss)
    st = make_state(kd, kp, variables.sign, p, C, alpha0, ws=ws, eps=float(eps),
                    shrinking=shrinking, max_iter=max_iter, final_kkt_check=final_kkt_check,
                    var_example=variables.example)
    c = kc.make_cache(m, cache_mb, cache_dtype, var_example=variables.example)
    smo_init(st, c, kd, kp, False)
    run = smo_run
    if nu:  # imported here: a C-SVC run never loads (or compiles) Solver_NU
        from .smo_nu import calculate_rho_nu, smo_run_nu
        run = smo_run_nu
    status = RUNNING
    while status == RUNNING:
        status = run(st, c, kd, kp, CHUNK)
        if progress is not None:
            progress(int(st.ist[ITER]), float(st.fst[VIOL]))
    alpha = np.zeros(m)
    alpha[c.perm] = st.alpha
    ist = st.ist
    counters = dict(
        iterations=int(ist[ITER]), shrinks=int(ist[N_SHRINK]),
        shrunk_variables=int(ist[N_SHRUNK_VARS]), reconstructions=int(ist[N_RECON]),
        warn_h0=int(ist[N_WARN_H0]), mg_iterations=int(ist[N_MG]),
        mvp_fallbacks=int(ist[N_FALLBACK]), kkt_continuations=int(ist[N_KKT_CONT]),
        mg_extra_rows=int(ist[N_MG_EXTRA_ROWS]), kkt_gap=float(kkt_gap(st, m)),
        kernel_evals_diagonal=m, seconds=clock.stop(),
        cache_rows=int(c.meta[kc.N_SLOTS]))
    counters.update(kc.cache_stats(c))
    counters["kernel_evals"] += m  # the diagonal QD
    if nu:
        r, rho = calculate_rho_nu(st)
        counters["r"] = float(r)
    else:
        rho = calculate_rho(st)
    return alpha, float(rho), float(objective(st)), status, counters
