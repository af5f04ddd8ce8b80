"""Binary C-SVC (LIBSVM's ``solve_c_svc``): p = -1, bounds Cp for y = +1 and Cn for y = -1.

    min_a 0.5 a'Qa - e'a   s.t.  y'a = 0,  0 <= a_t <= (Cp if y_t = +1 else Cn)

Returns a SolverResult: coef = y_t a_t (the signed alpha of STYLE 6.2) for all l rows, LIBSVM's
rho and obj.
"""

import time

import numpy as np

from .. import cache as kc
from ..qp import (ITER, MAX_ITER_REACHED, N_FALLBACK, N_KKT_CONT, N_MG, N_MG_EXTRA_ROWS,
                  N_RECON, N_SHRINK, N_SHRUNK_VARS, N_WARN_H0, RUNNING, VIOL, WS_CODES)
from ..qp.select import kkt_gap
from ..qp.smo import calculate_rho, make_state, objective, smo_init, smo_run
from .result import SolverResult

CHUNK = 1000  # iterations per jitted call (LIBSVM's shrink interval)


def solve_binary(kd, kp, y, Cp, Cn, *, eps=1e-3, shrinking=True, cache_mb=100.0, wss="so",
                 max_iter=None, final_kkt_check=False, progress=None, cache_dtype=np.float32):
    """Train one binary C-SVC on the l rows of ``kd`` (y = +1/-1 as float64)."""
    t0 = time.perf_counter()
    y = np.ascontiguousarray(y, np.float64)
    l = y.shape[0]
    ws = WS_CODES[wss] if isinstance(wss, str) else int(wss)
    C = np.where(y > 0, float(Cp), float(Cn))
    st = make_state(kd, kp, y, -np.ones(l), C, ws=ws, eps=float(eps), shrinking=shrinking,
                    max_iter=max_iter, final_kkt_check=final_kkt_check)
    c = kc.make_cache(l, cache_mb, cache_dtype)
    smo_init(st, c, kd, kp)
    status = RUNNING
    while status == RUNNING:
        status = smo_run(st, c, kd, kp, CHUNK)
        if progress is not None:
            progress(int(st.ist[ITER]), float(st.fst[VIOL]))
    rho = float(calculate_rho(st))
    obj = float(objective(st))
    coef = np.zeros(l)
    coef[c.perm] = st.y * st.alpha
    a = np.abs(coef)
    yy = y
    n_sv = int(np.count_nonzero(a > 0))
    n_bsv = int(np.count_nonzero(((yy > 0) & (a >= Cp)) | ((yy < 0) & (a >= Cn))))
    ist = st.ist
    counters = dict(
        iterations=int(ist[ITER]), shrinks=int(ist[N_SHRINK]),
        shrunk_variables=int(ist[N_SHRUNK_VARS]), reconstructions=int(ist[N_RECON]),
        warn_h0=int(ist[N_WARN_H0]), mg_iterations=int(ist[N_MG]),
        mvp_fallbacks=int(ist[N_FALLBACK]), kkt_continuations=int(ist[N_KKT_CONT]),
        mg_extra_rows=int(ist[N_MG_EXTRA_ROWS]), kkt_gap=float(kkt_gap(st, l)),
        kernel_evals_diagonal=l, seconds=time.perf_counter() - t0,
        cache_rows=int(c.meta[kc.N_SLOTS]))
    counters.update(kc.cache_stats(c))
    counters["kernel_evals"] += l  # the diagonal QD
    return SolverResult.binary(coef, rho, obj=obj, n_iter=int(ist[ITER]), n_sv=n_sv,
                               n_bsv=n_bsv, hit_max_iter=status == MAX_ITER_REACHED,
                               counters=counters)


def solve_from_params(kd, kp, y, Cp, Cn, params, progress=None, control=None):
    """solve_binary with svm-train's parameters (the SOLVERS table's entry for "smo")."""
    return solve_binary(kd, kp, y, Cp, Cn, eps=params.eps, shrinking=bool(params.shrinking),
                        cache_mb=params.cache_size, wss=params.wss, max_iter=params.max_iter,
                        final_kkt_check=params.final_kkt_check, progress=progress)
