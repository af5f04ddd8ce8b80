"""Binary C-SVC (LIBSVM's ``solve_c_svc``): p = -1, bounds Cp for y = +1 and Cn for y = -1.

    min_a 0.5 a'Qa - e'a   s.t.  y'a = 0,  0 <= a_t <= (Cp if y_t = +1 else Cn)

One variable per example (solvers/variables.py). :func:`solve_qp` runs the SMO loop to the end on
any such QP over a set of variables; the formulation adapters (this one, svr.py) build p, C and
the variables and read the result. Returns a SolverResult: coef = y_t a_t (the signed alpha of
qp/steps.py) for all l rows, LIBSVM's rho and obj.
"""


import numpy as np

from .. import cache as kc
from ..clock import Clock
from ..qp import (ITER, MAX_ITER_REACHED, N_FALLBACK, N_KKT_CONT, N_MG, N_MG_EXTRA_ROWS,
                  N_RECON, N_SHRINK, N_SHRUNK_VARS, N_WARN_H0, RUNNING, VIOL, WS_CODES)
from ..qp.select import kkt_gap
from ..qp.smo import calculate_rho, make_state, objective, smo_init, smo_run
from .result import SolverResult
from .variables import one_per_example

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
        from ..qp.smo_nu import calculate_rho_nu, smo_run_nu
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
