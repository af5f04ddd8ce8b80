"""LIBSVM's ``Solver_NU`` on the SMO core: nu-SVC and nu-SVR (svm.cpp, class Solver_NU).

The QP has two equality constraints (y'a = Delta_1, e'a = Delta_2), so a working pair must have
y_i = y_j. Compared with the C-SVC loop of :mod:`lasvm_cli.qp.smo`:

* selection (``select_working_set``): second order, i the maximal violator *within* y = +1
  (Gmaxp) and within y = -1 (Gmaxn), j minimising -(Gmax_y + y_jG_j)^2 / a over both signs
  with i taken from j's sign; stop when max(Gmaxp + Gmaxp2, Gmaxn + Gmaxn2) < eps;
* shrinking (``be_shrunk`` / ``do_shrinking``): four maxima, one per sign and bound;
* ``calculate_rho``: r1, r2 (one per sign, mean over free variables or the middle of the
  bounds), r = (r1 + r2) / 2 and rho = (r1 - r2) / 2.

The loop (``smo.smo_loop``), the step (two-variable update, G and G_bar), the gradient
reconstruction and the swaps are the C-SVC core's own functions. :func:`smo_run_nu` is a
separate compiled entry point, so the C-SVC path (``smo_run``) compiles exactly what it did
before. Working-set selection is always
LIBSVM's second-order rule here (``--wss`` does not apply).
"""

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

from ..numerics.cache import WIDTH, cache_row_at, cache_set_width, held
from . import ACTIVE, ADAPT_WIDTH, EPS, LAST_KIND, LOWER, N_SHRINK, N_SHRUNK_VARS, UNSHRINK, UPPER
from .smo import reconstruct_gradient, smo_loop, swap_positions
from .so_lanes import nu_max_violators, nu_partner

_NJIT = dict(cache=True, nogil=True)
INF = np.inf


@numba.njit(**_NJIT)
def select_nu(st, c, kd, kp):
    """Solver_NU::select_working_set; returns (i, j, violation), i = -1 when optimal.

    Shaped as select.select_so (two leaf scans in vector lanes, qp/so_lanes.py; rows as
    offsets into the cache's buffer, one last use of the namedtuples): numba then prunes their
    reference-count pairs."""
    active = st.ist[ACTIVE]
    st.ist[LAST_KIND] = 1
    ip, Gmaxp, inn, Gmaxn = nu_max_violators(st, active)
    if ip == -1 and inn == -1:
        return -1, -1, -INF  # LIBSVM: every grad_diff is -inf, max(...) < eps
    # the two most recently fetched rows stay cached together
    bp = cache_row_at(c, kd, kp, c.pex[ip if ip != -1 else inn], active)
    bn = cache_row_at(c, kd, kp, c.pex[inn if inn != -1 else ip], active)
    i, j, viol = nu_partner(st, c, bp, bn, ip, inn, Gmaxp, Gmaxn, active)
    held(c, kd)  # one last use of both (cache.held says why)
    if viol < st.fst[EPS] or j == -1:
        return -1, -1, viol
    return i, j, viol


@numba.njit(**_NJIT)
def _be_shrunk_nu(st, t, Gmax1, Gmax2, Gmax3, Gmax4):
    s = st.status[t]
    if s == UPPER:
        if st.y[t] > 0:
            return -st.G[t] > Gmax1
        return -st.G[t] > Gmax4
    if s == LOWER:
        if st.y[t] > 0:
            return st.G[t] > Gmax2
        return st.G[t] > Gmax3
    return False


@numba.njit(**_NJIT)
def do_shrinking_nu(st, c, kd, kp):
    """Solver_NU::do_shrinking."""
    y, G, status = st.y, st.G, st.status
    l = y.shape[0]
    active = st.ist[ACTIVE]
    Gmax1 = -INF  # max -y G, y = +1, not at upper bound
    Gmax2 = -INF  # max y G, y = +1, not at lower bound
    Gmax3 = -INF  # max -y G, y = -1, not at lower bound
    Gmax4 = -INF  # max y G, y = -1, not at upper bound
    for t in range(active):
        if status[t] != UPPER:
            if y[t] > 0:
                if -G[t] > Gmax1:
                    Gmax1 = -G[t]
            elif -G[t] > Gmax4:
                Gmax4 = -G[t]
        if status[t] != LOWER:
            if y[t] > 0:
                if G[t] > Gmax2:
                    Gmax2 = G[t]
            elif G[t] > Gmax3:
                Gmax3 = G[t]
    if st.ist[UNSHRINK] == 0 and max(Gmax1 + Gmax2, Gmax3 + Gmax4) <= st.fst[EPS] * 10.0:
        st.ist[UNSHRINK] = 1
        reconstruct_gradient(st, c, kd, kp)
        st.ist[ACTIVE] = l
        active = l
    before = active
    i = 0
    while i < active:
        if _be_shrunk_nu(st, i, Gmax1, Gmax2, Gmax3, Gmax4):
            active -= 1
            while active > i:
                if not _be_shrunk_nu(st, active, Gmax1, Gmax2, Gmax3, Gmax4):
                    swap_positions(st, c, i, active)
                    break
                active -= 1
        i += 1
    st.ist[ACTIVE] = active
    if st.ist[ADAPT_WIDTH] != 0 and 4 * active < 3 * c.meta[WIDTH]:
        cache_set_width(c, active)
    if active < before:
        st.ist[N_SHRINK] += 1
        st.ist[N_SHRUNK_VARS] += before - active


@numba.njit(**_NJIT)
def smo_run_nu(st, c, kd, kp, n_steps):
    """Solver::Solve with Solver_NU's selection and shrinking: at most ``n_steps``
    iterations; returns RUNNING, OPTIMAL or MAX_ITER_REACHED."""
    return smo_loop(st, c, kd, kp, n_steps, select_nu, do_shrinking_nu)


@numba.njit(**_NJIT)
def calculate_rho_nu(st):
    """Solver_NU::calculate_rho: returns (r, rho) = ((r1 + r2) / 2, (r1 - r2) / 2)."""
    y, G, status = st.y, st.G, st.status
    nr_free1 = 0
    nr_free2 = 0
    ub1 = INF
    ub2 = INF
    lb1 = -INF
    lb2 = -INF
    sum_free1 = 0.0
    sum_free2 = 0.0
    for t in range(st.ist[ACTIVE]):
        if y[t] > 0:
            if status[t] == UPPER:
                lb1 = max(lb1, G[t])
            elif status[t] == LOWER:
                ub1 = min(ub1, G[t])
            else:
                nr_free1 += 1
                sum_free1 += G[t]
        else:
            if status[t] == UPPER:
                lb2 = max(lb2, G[t])
            elif status[t] == LOWER:
                ub2 = min(ub2, G[t])
            else:
                nr_free2 += 1
                sum_free2 += G[t]
    r1 = sum_free1 / nr_free1 if nr_free1 > 0 else (ub1 + lb1) / 2.0
    r2 = sum_free2 / nr_free2 if nr_free2 > 0 else (ub2 + lb2) / 2.0
    return (r1 + r2) / 2.0, (r1 - r2) / 2.0
