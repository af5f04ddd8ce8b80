"""The SMO loop (LIBSVM's ``Solver::Solve``, Fan, Chen & Lin 2005) over the shared row cache.

Solves  min_a 0.5 a'Qa + p'a  s.t. y'a = const, 0 <= a_t <= C_t  (see :mod:`lasvm_cli.qp`) from a
feasible start, exactly as LIBSVM 3.37 does: shrinking every min(l, 1000) iterations with its
``be_shrunk`` rules, one unshrink (gradient reconstruction from G_bar) the first time the
violation is <= 10 eps, a reconstruction and re-check whenever the shrunk problem looks optimal,
G_bar updated with full rows when a variable enters or leaves its upper bound, rows requested
over the active set only (``get_Q(i, active_size)``), and LIBSVM's ``calculate_rho``.

The row source is the cache over any KernelData: for tests, a precomputed kernel (kernels'
PRECOMPUTED kind) feeds any explicit PSD matrix through the same code path.

Python drives :func:`smo_run` in chunks (``n_steps`` iterations), so a progress callback and
Ctrl-C run between chunks; the chunking does not change the iterates.
"""

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

from ..numerics.cache import (WIDTH, cache_get, cache_row_at, cache_row_into, cache_set_width,
                              cache_swap)
from ..numerics.index import at
from ..numerics.kernels import kernel_diagonal, n_rows
from . import (ACTIVE, ADAPT_WIDTH, COUNTER, EPS, ETA, FINAL_KKT, FREE, ITER, LAST_KIND, LOWER,
               MAX_ITER, MAX_ITER_REACHED, N_FST, N_IST, N_MG_EXTRA_ROWS, N_RECON, N_SHRINK,
               N_SHRUNK_VARS, N_WARN_H0, OPTIMAL, PREV_I, PREV_J, RUNNING, SHRINKING, UNSHRINK,
               UPPER, VIOL, WS, WS_HMG, WS_MVP, WS_SO, SmoState)
from .select import select_hmg, select_mvp, select_so
from .steps import step_libsvm

_NJIT = dict(cache=True, nogil=True)
INF = np.inf
CACHE_MISSES = 1  # cache.stats index (kept local to avoid importing a private name)


def make_state(kd, kp, y, p, C, alpha0=None, *, ws=1, eps=1e-3, shrinking=True, max_iter=None,
               final_kkt_check=False, eta=1e-8, adapt_width=True, var_example=None):
    """SmoState for l variables (Python; converts dtypes at the boundary). ``y`` is each
    variable's sign; ``var_example`` its example (solvers/variables.py; default: variable t is
    example t), which gives the kernel diagonal QD."""
    l = y.shape[0]
    st = SmoState(
        alpha=np.zeros(l) if alpha0 is None else np.array(alpha0, np.float64),
        y=np.array(y, np.float64),  # a copy: shrinking permutes it
        G=np.zeros(l),
        G_bar=np.zeros(l),
        p=np.ascontiguousarray(p, np.float64).copy(),
        C=np.ascontiguousarray(C, np.float64).copy(),
        QD=np.zeros(l),
        status=np.zeros(l, np.int8),
        ist=np.zeros(N_IST, np.int64),
        fst=np.zeros(N_FST, np.float64),
        work=np.zeros(2 * l, np.float64),  # scratch: selection's candidates, G_bar's rows
    )
    if var_example is None:
        kernel_diagonal(kd, kp, st.QD)
    else:
        diag = np.zeros(n_rows(kd))
        kernel_diagonal(kd, kp, diag)
        st.QD[:] = diag[np.asarray(var_example)]
    ist = st.ist
    ist[ACTIVE] = l
    ist[COUNTER] = min(l, 1000) + 1
    ist[MAX_ITER] = max(10000000, 100 * l) if max_iter is None else int(max_iter)
    ist[PREV_I] = ist[PREV_J] = -1
    ist[SHRINKING] = int(bool(shrinking))
    ist[WS] = int(ws)
    ist[FINAL_KKT] = int(bool(final_kkt_check))
    st.fst[EPS] = eps
    st.fst[ETA] = eta
    st.fst[VIOL] = INF
    st.ist[ADAPT_WIDTH] = int(bool(adapt_width))
    return st


@numba.njit(inline="always", **_NJIT)
def _status_of(a, C):
    if a >= C:
        return UPPER
    if a <= 0.0:
        return LOWER
    return FREE


@numba.njit(**_NJIT)
def smo_init(st, c, kd, kp, gradient_known):
    """Statuses, G = Qa + p and G_bar from the starting a (full rows for a_t > 0). With
    ``gradient_known`` the caller has set G (LASVM's finishing starts from the online
    gradient): only the rows of the variables at their upper bound are needed, for G_bar."""
    l = st.y.shape[0]
    y, G, G_bar = st.y, st.G, st.G_bar
    for t in range(l):
        st.status[t] = _status_of(st.alpha[t], st.C[t])
        G_bar[t] = 0.0
        if not gradient_known:
            G[t] = st.p[t]
    for i in range(l):
        if st.status[i] == LOWER or (gradient_known and st.status[i] != UPPER):
            continue
        Ki = cache_get(c, kd, kp, c.pex[i], l)
        yi = y[i]
        if not gradient_known:
            ai = st.alpha[i]
            for t in range(l):
                G[t] += ai * (yi * y[t] * np.float64(Ki[t]))
        if st.status[i] == UPPER:
            for t in range(l):
                G_bar[t] += st.C[i] * (yi * y[t] * np.float64(Ki[t]))


@numba.njit(inline="always", **_NJIT)
def _swap(st, c, i, j):
    """LIBSVM's swap_index: every position-order array, and the cache's columns."""
    cache_swap(c, np.int64(i), np.int64(j))
    for a in (st.y, st.G, st.G_bar, st.alpha, st.p, st.C, st.QD):
        t = a[i]
        a[i] = a[j]
        a[j] = t
    s = st.status[i]
    st.status[i] = st.status[j]
    st.status[j] = s


@numba.njit(**_NJIT)
def reconstruct_gradient(st, c, kd, kp):
    """G on the inactive positions from G_bar and the free variables (LIBSVM's choice of loop)."""
    l = st.y.shape[0]
    active = st.ist[ACTIVE]
    if active == l:
        return
    y, G, alpha, status = st.y, st.G, st.alpha, st.status
    st.ist[N_RECON] += 1
    cache_set_width(c, l)  # rows may be requested at full length from here on
    for t in range(active, l):
        G[t] = st.G_bar[t] + st.p[t]
    nr_free = 0
    for t in range(active):
        if status[t] == FREE:
            nr_free += 1
    if 2 * nr_free < active:
        st.ist[N_WARN_H0] += 1
    if nr_free * l > 2 * active * (l - active):
        for i in range(active, l):
            Ki = cache_get(c, kd, kp, c.pex[i], active)
            yi = y[i]
            for t in range(active):
                if status[t] == FREE:
                    G[i] += alpha[t] * (yi * y[t] * np.float64(Ki[t]))
    else:
        for i in range(active):
            if status[i] == FREE:
                Ki = cache_get(c, kd, kp, c.pex[i], l)
                yi = y[i]
                ai = alpha[i]
                for t in range(active, l):
                    G[t] += ai * (yi * y[t] * np.float64(Ki[t]))


@numba.njit(inline="always", **_NJIT)
def _be_shrunk(st, t, Gmax1, Gmax2):
    s = st.status[t]
    if s == UPPER:
        if st.y[t] > 0:
            return -st.G[t] > Gmax1
        return -st.G[t] > Gmax2
    if s == LOWER:
        if st.y[t] > 0:
            return st.G[t] > Gmax2
        return st.G[t] > Gmax1
    return False


@numba.njit(inline="always", **_NJIT)
def _keep(st, c, t):
    """HMG never shrinks its previous working set (as Shark's HMG does)."""
    if st.ist[WS] != WS_HMG or st.ist[PREV_I] < 0:
        return False
    k = c.perm[t]
    return k == st.ist[PREV_I] or k == st.ist[PREV_J]


@numba.njit(inline="always", **_NJIT)
def do_shrinking(st, c, kd, kp):
    y, G, status = st.y, st.G, st.status
    l = y.shape[0]
    active = st.ist[ACTIVE]
    Gmax1 = -INF
    Gmax2 = -INF
    for t in range(active):
        if y[t] > 0:
            if status[t] != UPPER and -G[t] >= Gmax1:
                Gmax1 = -G[t]
            if status[t] != LOWER and G[t] >= Gmax2:
                Gmax2 = G[t]
        else:
            if status[t] != UPPER and -G[t] >= Gmax2:
                Gmax2 = -G[t]
            if status[t] != LOWER and G[t] >= Gmax1:
                Gmax1 = G[t]
    if st.ist[UNSHRINK] == 0 and Gmax1 + Gmax2 <= st.fst[EPS] * 10.0:
        st.ist[UNSHRINK] = 1
        reconstruct_gradient(st, c, kd, kp)
        st.ist[ACTIVE] = l
        active = l
    before = active
    i = 0
    while i < active:
        if _be_shrunk(st, i, Gmax1, Gmax2) and not _keep(st, c, i):
            active -= 1
            while active > i:
                if not (_be_shrunk(st, active, Gmax1, Gmax2) and not _keep(st, c, active)):
                    _swap(st, c, i, active)
                    break
                active -= 1
        i += 1
    st.ist[ACTIVE] = active
    if st.ist[ADAPT_WIDTH] != 0 and 4 * active < 3 * c.meta[WIDTH]:
        cache_set_width(c, active)  # short rows: the same memory holds more of them
    if active < before:
        st.ist[N_SHRINK] += 1
        st.ist[N_SHRUNK_VARS] += before - active


@numba.njit(inline="always", **_NJIT)
def _gbar_add(st, K, f):
    for t in range(st.y.shape[0]):
        st.G_bar[t] += st.y[t] * (np.float64(K[t]) * f)


@numba.njit(**_NJIT)
def _gbar_update(st, c, kd, kp, i, f):
    """G_bar += f y_i y K_i over all l positions (row cached when the cache's width allows)."""
    l = st.y.shape[0]
    if c.meta[WIDTH] >= l:
        _gbar_add(st, cache_get(c, kd, kp, c.pex[i], l), f)
    else:
        cache_row_into(c, kd, kp, c.pex[i], l, st.work)
        _gbar_add(st, st.work, f)


@numba.njit(**_NJIT)
def _update_pair(st, c, bi, bj, i, j, active):
    """LIBSVM's update of a_i, a_j (rows i and j are c.buf[bi + t], c.buf[bj + t]), G over the
    active part, and the two statuses."""
    y, G, alpha, status, C, QD, K = st.y, st.G, st.alpha, st.status, st.C, st.QD, c.buf
    old_ai = alpha[i]
    old_aj = alpha[j]
    quad_coef = QD[i] + QD[j] - 2.0 * np.float64(K[bi + j])
    ai, aj = step_libsvm(old_ai, old_aj, y[i], y[j], G[i], G[j], C[i], C[j], quad_coef)
    alpha[i] = ai
    alpha[j] = aj
    # Q_it * da_i = y_t * (K_it * (y_i da_i)) bit for bit (sign flips are exact)
    sdi = y[i] * (ai - old_ai)
    sdj = y[j] * (aj - old_aj)
    for t in range(active):
        G[t] += y[t] * (np.float64(K[at(bi, t)]) * sdi + np.float64(K[at(bj, t)]) * sdj)
    status[i] = _status_of(ai, C[i])
    status[j] = _status_of(aj, C[j])


@numba.njit(**_NJIT)
def _gbar_pair(st, c, kd, kp, i, j, ui, uj):
    """G_bar after a_i, a_j moved; ui, uj: whether each was at its upper bound before."""
    if ui != (st.status[i] == UPPER):
        _gbar_update(st, c, kd, kp, i, -st.C[i] * st.y[i] if ui else st.C[i] * st.y[i])
    if uj != (st.status[j] == UPPER):
        _gbar_update(st, c, kd, kp, j, -st.C[j] * st.y[j] if uj else st.C[j] * st.y[j])


@numba.njit(**_NJIT)
def _take_step(st, c, kd, kp, i, j):
    """LIBSVM's update of a_i, a_j, then G (active part) and G_bar (full rows on status change;
    LIBSVM keeps G_bar with -h 0 too, where nothing reads it: we do not).

    Small on purpose, its work in leaf functions over the arrays they use and rows as offsets
    into the cache's buffer: numba then drops the reference-count pairs of the namedtuple
    arguments (numba_internals.py); inlined, they cost about 90 atomic pairs an iteration."""
    active = st.ist[ACTIVE]
    bi = cache_row_at(c, kd, kp, c.pex[i], active)  # the two most recent rows stay cached
    bj = cache_row_at(c, kd, kp, c.pex[j], active)
    ui = st.status[i] == UPPER
    uj = st.status[j] == UPPER
    _update_pair(st, c, bi, bj, i, j, active)
    if st.ist[SHRINKING] != 0:  # G_bar only serves the gradient reconstruction after shrinking
        _gbar_pair(st, c, kd, kp, i, j, ui, uj)


@numba.njit(inline="always", **_NJIT)
def smo_loop(st, c, kd, kp, n_steps, select_pair, shrink):
    """LIBSVM's Solver::Solve: at most ``n_steps`` iterations choosing pairs with
    ``select_pair`` (a select_* of qp/select.py, or Solver_NU's select_nu) and shrinking with
    ``shrink`` (do_shrinking, or Solver_NU's); returns RUNNING, OPTIMAL or MAX_ITER_REACHED.
    Inlined into each entry point below (and qp/smo_nu.py's), so each compiles its own rules.

    Counters in st.ist: ITER, N_SHRINK, N_RECON, N_MG, N_FALLBACK, N_MG_EXTRA_ROWS (MG
    iterations that computed more than one row in selection + update: must stay 0 without
    shrinking, where no tails need extending).
    """
    ist = st.ist
    l = st.y.shape[0]
    steps = 0
    while ist[ITER] < ist[MAX_ITER]:
        if steps >= n_steps:
            return RUNNING
        ist[COUNTER] -= 1
        if ist[COUNTER] == 0:
            ist[COUNTER] = min(l, 1000)
            if ist[SHRINKING] != 0:
                shrink(st, c, kd, kp)
        misses0 = c.stats[CACHE_MISSES]
        i, j, viol = select_pair(st, c, kd, kp)
        if i < 0:
            reconstruct_gradient(st, c, kd, kp)
            ist[ACTIVE] = l
            misses0 = c.stats[CACHE_MISSES]
            i, j, viol = select_pair(st, c, kd, kp)
            if i < 0:
                st.fst[VIOL] = viol
                return OPTIMAL
            ist[COUNTER] = 1
        st.fst[VIOL] = viol
        ist[ITER] += 1
        steps += 1
        _take_step(st, c, kd, kp, i, j)
        if ist[LAST_KIND] == 2 and c.stats[CACHE_MISSES] - misses0 > 1:
            ist[N_MG_EXTRA_ROWS] += 1
        ist[PREV_I] = c.perm[i]
        ist[PREV_J] = c.perm[j]
    if ist[ACTIVE] < l:
        reconstruct_gradient(st, c, kd, kp)
        ist[ACTIVE] = l
    return MAX_ITER_REACHED


@numba.njit(**_NJIT)
def smo_run_mvp(st, c, kd, kp, n_steps):
    return smo_loop(st, c, kd, kp, n_steps, select_mvp, do_shrinking)


@numba.njit(**_NJIT)
def smo_run_so(st, c, kd, kp, n_steps):
    return smo_loop(st, c, kd, kp, n_steps, select_so, do_shrinking)


@numba.njit(**_NJIT)
def smo_run_hmg(st, c, kd, kp, n_steps):
    return smo_loop(st, c, kd, kp, n_steps, select_hmg, do_shrinking)


_SMO_RUN = {WS_MVP: smo_run_mvp, WS_SO: smo_run_so, WS_HMG: smo_run_hmg}


def smo_run(st, c, kd, kp, n_steps):
    """The SMO loop with st's working-set selection (ist[WS]). One compiled entry point per
    selection, so a run compiles only the rule it uses (a first run's JIT time)."""
    return _SMO_RUN[int(st.ist[WS])](st, c, kd, kp, n_steps)


@numba.njit(**_NJIT)
def calculate_rho(st):
    """LIBSVM's rho: the mean of y_t G_t over free variables, else the middle of [lb, ub]."""
    y, G, status = st.y, st.G, st.status
    nr_free = 0
    ub = INF
    lb = -INF
    sum_free = 0.0
    for t in range(st.ist[ACTIVE]):
        yG = y[t] * G[t]
        if status[t] == UPPER:
            if y[t] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif status[t] == LOWER:
            if y[t] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            nr_free += 1
            sum_free += yG
    if nr_free > 0:
        return sum_free / nr_free
    return (ub + lb) / 2.0


@numba.njit(**_NJIT)
def objective(st):
    """0.5 a'Qa + p'a = 0.5 sum_t a_t (G_t + p_t) (needs the full gradient)."""
    v = 0.0
    for t in range(st.y.shape[0]):
        v += st.alpha[t] * (st.G[t] + st.p[t])
    return v / 2.0


# Public name of the swap for Solver_NU's shrinking (qp/smo_nu.py); the C-SVC loop above calls
# the same compiled function.
swap_positions = _swap
