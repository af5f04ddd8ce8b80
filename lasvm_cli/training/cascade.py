"""One SVM of any of LIBSVM's types (C-SVC, nu-SVC, one-class, epsilon-SVR, nu-SVR) trained
over partitions of its rows (``svm-train --partitions P``): the rows stay where they were
read, in P parts (io/byte_ranges.py), and the result is the SVM's exact optimum over all of
them, to LIBSVM's stopping rule at ``-e``.

After the Cascade SVM (Graf, Cosatto, Bottou, Durdanovic & Vapnik, NIPS 2004) and its
feedback loop, with the partitions' alphas as a warm start as in DC-SVM (Hsieh, Si & Dhillon,
ICML 2014). For each binary machine (each one-vs-one pair of classes):

1. **Partitions.** Each part solves its own rows of the machine with our SMO (qp/smo.py) and
   returns only its support vectors: rows, labels, alphas.
2. **Merge.** The parts' support vectors are merged pairwise up a tree (the Cascade SVM's
   layout) until two sets remain: each merge solves the union of two sets warm-started from
   their alphas, which are feasible for it (each set's satisfy y'a = 0 and the box), and keeps
   its support vectors; the merges of a level are independent tasks (on Dask, the workers').
   An odd set at a level goes up unmerged. The client then solves the working set W (the
   union of what remains) the same way. The SMO's gradient over W gives m_W = max over I_up
   of -y G and M_W = min over I_low of -y G (LIBSVM's m(a) and M(a)).
3. **Feedback.** The expansion (W's support vectors and their y alpha) goes to every part,
   which computes f(x_i) = sum_j y_j a_j K(x_i, x_j) where its rows live, so the gradient
   G_i = y_i f(x_i) - 1 of every row outside the expansion (all at alpha = 0), and returns its
   extremes (the largest -y G over I_up, the smallest over I_low) and the rows that violate:
   those beyond W's own extremes by more than -e, and its TOP_K most extreme of each side.
4. **Stop or repeat.** With the parts' extremes the client has LIBSVM's m(a) and M(a) over
   all rows: the run stops when m(a) - M(a) <= eps, LIBSVM's own stopping rule, so the model is
   what a single SMO over all rows would accept. Otherwise the returned rows join W (whose
   rows at alpha = 0 leave it: the parts check them again) and step 2 runs again. A row
   beyond W's extremes by more than eps, or the overall extreme pair (among every part's
   TOP_K), violates W's optimality, so each pass lowers the objective and the loop ends.

Each part keeps f and f_bar = sum over a_j = C of y_j C K(x_i, x_j) between passes (a state
that stays with it) and updates them with the rows whose coefficients changed: most support
vectors are bounded and stay at C. The rows it returns carry G and LIBSVM's G_bar, and W's own
rows keep the SMO's, so every merged solve after the first starts without a kernel row.

rho is W's (LIBSVM's calculate_rho: the mean of y G over free variables, all in W), or, with
no free variable, the middle of the overall [M(a), m(a)] as LIBSVM's. The early model
(``--early-model``) is step 2's first result, before any feedback.

**Regression** (:class:`Machine`) is the same scheme over LIBSVM's 2l variables: row i gives
alpha_i (y = +1, p_i = epsilon - z_i) and alpha*_i (y = -1, p_i = epsilon + z_i), both on
example i, so each part solves its rows' epsilon-SVR, the expansion's coefficient of an example
is alpha_i - alpha*_i, and a variable at alpha = 0 has G = y f(x_i) + p_i (C-SVC's p = -1 is
the case above). An example can hold two variables of W; they share one kernel row. nu-SVR
(p = -z, +z) adds e'a = C nu l, LIBSVM's Solver_NU: each part starts its rows at its own
share C nu l_k (LIBSVM's start), so the parts' alphas together hold the whole problem's total
and every merged solve, warm-started and moving pairs of one sign, keeps it; W's rows at
alpha = 0 leave it without changing it. Solver_NU stops on each sign alone (max(m+ - M+,
m- - M-) <= eps, the pairs it may move), so the check does too: a variable at 0 of sign +1
lies in I_up only and one of sign -1 in I_low only, and the parts' two extremes are the same
two numbers as above, compared with W's extremes of their own sign. rho and r (printed as
``epsilon = -r``) are calculate_rho_nu's, the bounds over every row when a sign has no free
variable.

**One-class** is the C-SVC scheme with every y = +1, p = 0, box [0, 1] and e'a = nu l: each
part starts its rows as LIBSVM starts a whole problem (the first floor(nu l_k) at 1, the next
at the fraction), so the parts' alphas together hold nu l; pair steps on y = +1 keep the sum,
so every merged problem is the whole problem restricted to W, and LIBSVM's Solver (its
stopping rule and calculate_rho) applies as for C-SVC. **nu-SVC** is a pair's rows with
p = 0, box [0, 1] on Solver_NU (as nu-SVR: per-sign stop and rho): each class starts at
nu l / 2 (LIBSVM's solve_nu_svc), which each part shares in proportion to its rows of that
class (feasible in every part exactly when nu is feasible for the pair); at the end alpha,
rho and obj are scaled by r as solve_nu_svc does (printed ``C = 1/r``).

Parts are handles: in this process (:class:`InProcess`, the default and what runs without Dask)
or futures on Dask workers (:class:`OnDask`), where each part is read by the worker that
holds it and its tasks run there; the client gets only support vectors, violators and
summaries. The tasks are pure functions of their inputs, so a worker lost mid-run (its tasks
rerun from the part's file) gives the same model, and in-process and Dask runs the same bits.
"""

import os
import pickle
import resource
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field

import numba
import numpy as np

from ..numerics import cache as kc
from ..numerics import kernels
from ..numerics.data import csr_take, kernel_data, kernel_data_like, squared_norms
from ..numerics.model import SVMModel
from ..qp import RUNNING, SmoScalars
from ..qp.smo import calculate_rho, make_state, objective, smo_init, smo_run
from ..solvers import kernel_params_for
from ..solvers.result import SolverResult, report_binary

TOP_K = 64  # extreme rows each part returns per side, beyond W's violators (step 3)
MAX_PASSES = 1000  # a guard only: every pass lowers the objective
CASCADE_CACHE_MB = 2048  # --cascade-cache's default: kernel values per process beyond -m


def _quiet(_msg):
    pass


def refused(params, precomputed=False):
    """What in ``params`` cannot be trained over partitions (option words; [] when all can):
    any svm type with our SMO, one-vs-one, no probability outputs, no precomputed kernel,
    float64 rows."""
    found = [(f"--solver {params.solver}", params.solver != "smo"),
             (f"--multiclass {params.multiclass}", params.multiclass != "ovo"),
             ("-b 1", bool(params.probability)),
             ("-t 4", params.kernel_type == 4 or precomputed),
             ("--x-storage float32", params.x_storage == "float32")]
    return [name for name, bad in found if bad]


# ---------------------------------------------------------------------------------------------
# Worker side: a part and its tasks (module functions: Dask pickles them by name)

class Part:
    """The rows of one part, read where the task runs (float64 rows: LIBSVM's arithmetic)."""

    def __init__(self, index, spec, data):
        self.index, self.spec = index, spec
        self.y = data.y
        self.indptr, self.indices, self.values = data.indptr, data.indices, data.values
        self.max_index = data.max_index
        self.kd = kernel_data(data.indptr, data.indices, data.values, width=data.max_index + 1,
                              x_storage="float64", training=True)

    def csr_rows(self, rows):
        return csr_take(self.indptr, self.indices, self.values, rows)

    def pair_rows(self, li, lj):
        """Rows of classes li then lj (each in file order, LIBSVM's grouping) and y = +1/-1."""
        labels = np.trunc(self.y).astype(np.int64)
        ri, rj = np.flatnonzero(labels == li), np.flatnonzero(labels == lj)
        return np.concatenate([ri, rj]), np.concatenate([np.ones(ri.size), -np.ones(rj.size)])


@dataclass(frozen=True)
class Machine:
    """One binary machine's QP, as every task builds it on its rows: ``svm_type`` 0 (C-SVC of
    class ``li``, y = +1, against ``lj``, y = -1, bounds Cp and Cn), 1 (nu-SVC of the same
    pair, bound 1, ``counts`` the whole problem's rows of li and lj), 2 (one-class, every row
    y = +1, bound 1), 3 (epsilon-SVR) or 4 (nu-SVR), both with bound C = Cp = Cn over
    LIBSVM's 2l variables."""
    svm_type: int
    li: int
    lj: int
    Cp: float
    Cn: float
    params: object
    counts: tuple = ()

    @property
    def nu(self):
        """Whether the QP has LIBSVM's second constraint with a pair's signs: Solver_NU."""
        return self.svm_type in (1, 4)

    def variables(self, part):
        """This machine's variables on ``part``: (ex, at, y, p) with ``ex`` the part's rows
        they use, ``at`` each variable's position in ``ex``, its sign y and linear term p."""
        if self.svm_type in (0, 1):
            ex, y = part.pair_rows(self.li, self.lj)
            p = -np.ones(ex.size) if self.svm_type == 0 else np.zeros(ex.size)  # nu-SVC: 0
            return ex, np.arange(ex.size), y, p
        if self.svm_type == 2:
            n = part.y.size
            return np.arange(n), np.arange(n), np.ones(n), np.zeros(n)
        z = part.y
        n = z.size
        tube = float(self.params.p) if self.svm_type == 3 else 0.0
        return (np.arange(n), np.concatenate([np.arange(n), np.arange(n)]),
                np.concatenate([np.ones(n), -np.ones(n)]), np.concatenate([tube - z, tube + z]))

    def C(self, y):
        return np.where(y > 0, float(self.Cp), float(self.Cn))

    def start(self, y):
        """A part's starting alphas: C-SVC and epsilon-SVR 0; nu-SVR and one-class LIBSVM's
        start on the part's own rows (its share C nu l_k, nu l_k of the whole problem's
        total); nu-SVC, per class, the part's share of nu l / 2 in proportion to its rows of
        that class, filled in row order as LIBSVM's (feasible: nu l / 2 is at most the
        class's rows when nu is feasible)."""
        nu, how = float(self.params.nu), self.params.nu_start
        if self.svm_type == 4:
            from ..solvers.nu import nu_svr_start

            return nu_svr_start(y.size // 2, float(self.Cp), nu, how)
        if self.svm_type == 2:
            from ..solvers.one_class import one_class_start

            return one_class_start(y.size, nu, how)
        alpha = np.zeros(y.size)
        if self.svm_type == 1:
            from ..solvers.nu import nu_total

            half = nu_total(nu, sum(self.counts), start=how) / 2
            for sign, n in zip((1.0, -1.0), self.counts):
                rows = np.flatnonzero(y == sign)
                if rows.size:  # min(1, what is left) in row order; subtracting 1 is exact
                    share = half * rows.size / n
                    alpha[rows] = np.clip(share - np.arange(rows.size), 0.0, 1.0)
        return alpha

    def solvable(self, y):
        """Whether a part's variables have anything to solve: a classification part needs
        both classes (C-SVC: with one alone, y'a = 0 holds only at a = 0; nu-SVC keeps its
        start); a one-class or regression part, a row."""
        if self.svm_type in (0, 1):
            return bool((y > 0).any() and (y < 0).any())
        return y.size > 0


def _keys(ids, y):
    """One number per variable: an example's alpha (y = +1) and alpha* (y = -1) differ."""
    return 2 * np.asarray(ids, np.int64) + (y < 0)


def _stats(t0, c0):
    """What a task reports: its wall and CPU seconds and its process's peak resident memory."""
    return dict(seconds=time.perf_counter() - t0, cpu=time.process_time() - c0,
                peak_rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)


def load_part(spec):
    """Task: read part ``spec`` = (index, (path, start, end), zero_based) where it runs (or
    take its rows, when ``spec[1]`` is an SvmlightData: rows the caller had in memory)."""
    from ..io.byte_ranges import read_part
    from ..io.svmlight import SvmlightData

    t0, c0 = time.perf_counter(), time.process_time()
    index, where, zero_based = spec
    data = where if isinstance(where, SvmlightData) else read_part(where,
                                                                  zero_based=zero_based)
    part = Part(index, None if data is where else where, data)
    part.load_stats = _stats(t0, c0)
    return part


def part_summary(part, _shared=None, _task=None, _state=None):
    """Task: what the client needs of a part before training (no rows): its row count, its
    labels in order of first appearance and their counts, its largest index, its bytes."""
    labels = np.trunc(part.y).astype(np.int64)
    uniq, first, counts = np.unique(labels, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    return dict(n=int(part.y.size), labels=uniq[order].tolist(), counts=counts[order].tolist(),
                max_index=int(part.max_index), nnz=int(part.values.size),
                nbytes=int(part.values.nbytes + part.indices.nbytes + part.indptr.nbytes
                           + part.y.nbytes), load=part.load_stats,
                rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024), None


@dataclass
class RowSet:
    """Variables sent to the client: their rows' global ids (file row numbers; a regression
    row can come twice, as alpha and alpha*), y = +1/-1, alphas, CSR rows, linear terms p,
    and (rows from a check) their gradient G and G_bar at the current expansion."""
    ids: np.ndarray
    y: np.ndarray
    alpha: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    G: np.ndarray | None = None
    G_bar: np.ndarray | None = None
    stats: dict = field(default_factory=dict)
    p: np.ndarray | None = None  # each variable's linear term (C-SVC: -1)

    @classmethod
    def of(cls, part, rows, ids, y, alpha, p, stats, G=None, G_bar=None):
        return cls(ids, y, alpha, *part.csr_rows(rows), G=G, G_bar=G_bar, stats=stats, p=p)


def solve_part(part, machine, task, _state=None):
    """Task (step 1): the Machine on this part's rows; ``task`` = the part's first global
    row. Returns its support vectors as a RowSet."""
    from ..numerics.data import subset

    t0, c0 = time.perf_counter(), time.process_time()
    ex, at, y, p = machine.variables(part)
    rows = ex[at]
    alpha = machine.start(y)
    n_iter = 0
    if machine.solvable(y):
        st, c = solve_w(subset(part.kd, ex), kernel_params_for(machine.params), y, p,
                        machine.C(y), machine.params, alpha, nu=machine.nu,
                        var_example=None if machine.svm_type == 0 else at)
        alpha[c.perm] = st.alpha
        n_iter = SmoScalars(st).iterations
    sv = np.flatnonzero(alpha > 0)
    stats = _stats(t0, c0)
    stats.update(iterations=n_iter, rows=int(ex.size))
    return RowSet.of(part, rows[sv], task + rows[sv], y[sv], alpha[sv], p[sv], stats), None


class CheckState:
    """What a part keeps between its checks of one machine: f = sum_j y_j a_j K(x_i, x_j) and
    f_bar = sum_{a_j = C} y_j C_j K(x_i, x_j) over its rows at the last check, and its kernel
    block: K(x_i, x_j) (float32, as LIBSVM caches kernel values) of its rows against the
    examples ``ids`` that the client sent (W's, each pass, before its merged SMO), in
    ``K[:, :len(ids)]``. Columns past len(ids) may belong to a later state sharing ``K``: a
    state never changes its own columns, so a task rerun from it gives the same values."""

    def __init__(self, f, f_bar, ids=None, K=None, grown=None):
        self.f, self.f_bar = f, f_bar
        self.ids = np.zeros(0, np.int64) if ids is None else ids
        self.K = K
        self.grown = grown  # the stats of the extension that made this state (reported once)

    @classmethod
    def empty(cls, n_rows):
        return cls(np.zeros(n_rows), np.zeros(n_rows))

    def nbytes(self):
        return 0 if self.K is None else self.K.nbytes


def extend_block(part, shared, task, state):
    """Task (before step 3, while the client solves W): add to this part's kernel block the
    columns of ``shared`` = (machine, (ids, CSR rows) of W's examples, budget in bytes) that
    it lacks, as many as the budget allows (on a Dask worker also half its memory limit).
    Returns the new state (f and f_bar unchanged). Computed at a lower priority: the client's
    merged SMO, the run's critical path, keeps its core where they share the cores."""
    # the room here, in the task's thread: only there does Dask know the worker
    room = _block_room(shared[2], state)
    return _at_low_priority(lambda: _extend_block(part, shared, state, room))


def _at_low_priority(fn):
    """fn() computed in a thread at nice 10, waited for here."""
    return _Later(fn, nice=10).get()


def _extend_block(part, shared, state, room):
    # this thread's CPU seconds: the process's include the merged SMO's in one process
    t0, c0 = time.perf_counter(), time.thread_time()
    machine, (ids, indptr, indices, values), _ = shared
    rows = machine.variables(part)[0]
    state = state or CheckState.empty(rows.size)
    new = np.flatnonzero(~np.isin(ids, state.ids))
    room //= max(4 * rows.size, 1)  # in columns
    new = new[:max(0, min(new.size, room - state.ids.size))]
    width = max(part.max_index, int(indices.max(initial=0))) + 1
    if new.size == 0 or rows.size == 0 or not kernels.expansion_blocks_fit(1, width):
        return state  # rows too wide for dense blocks: the checks take kernel rows
    have, n = state.ids.size, state.ids.size + new.size
    K = state.K
    if K is None or K.shape[1] < n:  # room for a later pass's violators: a quarter more
        cap = min(n + n // 4, room)
        K = np.empty((rows.size, cap), np.float32)
        if have:
            K[:, :have] = state.K[:, :have]
    step = max(1, kernels.EXPANSION_DENSE_MAX_BYTES // ((width + 2) * 8))  # dense columns
    for lo in range(0, new.size, step):
        cols = new[lo:lo + step]
        b_indptr, b_indices, b_values = csr_take(indptr, indices, values, cols)
        kernels.kernel_block((part.indptr, part.indices, part.values, part.kd.x_sq),
                             rows.astype(np.int64),
                             (b_indptr, b_indices, b_values, squared_norms(b_indptr, b_values)),
                             kernel_params_for(machine.params),
                             K[:, have + lo:have + lo + cols.size])
    stats = _stats(t0, 0.0)
    stats.update(cpu=time.thread_time() - c0, columns=int(new.size),
                 kernel_evals=int(rows.size * new.size))
    return CheckState(state.f, state.f_bar, np.concatenate([state.ids, ids[new]]), K, stats)


def _block_room(budget, state):
    """Bytes a part's kernel block (``state``: a CheckState or None) may hold: ``budget``, and
    on a Dask worker no more than takes its process to half the worker's memory limit (Dask
    spills at 60%)."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return budget
    limit = getattr(getattr(worker, "memory_manager", None), "memory_limit", None)
    if not limit:
        return budget
    import psutil

    rss = psutil.Process().memory_info().rss
    have = state.nbytes() if state is not None else 0
    return min(budget, have + max(0, limit // 2 - rss))


def _from_block(state, ids, coefs, out):
    """out += K[:, columns of ids] @ coefs (float64 sums of the block's float32 values) for the
    ``ids`` the block holds; returns the mask of those it does not."""
    if state.K is None or state.ids.size == 0 or ids.size == 0:
        return np.ones(ids.size, bool)
    order = np.argsort(state.ids)
    at = np.minimum(np.searchsorted(state.ids, ids, sorter=order), order.size - 1)
    held = state.ids[order[at]] == ids
    cols, c = order[at[held]], coefs[held]
    if cols.size:
        K = state.K
        step = max(64, (32 << 20) // (12 * cols.size))  # a chunk's two copies: about 32 MB
        for lo in range(0, K.shape[0], step):
            out[lo:lo + step] += np.take(K[lo:lo + step], cols, axis=1).astype(np.float64) @ c
    return ~held


def check_part(part, shared, task, state):
    """Task (step 3): the KKT check of this part's variables of the machine. ``shared`` =
    (machine, change, sv_keys, hi, lo, eps): ``change`` = (delta sum y a, delta sum y C [a =
    C], their example ids, CSR rows) of the examples whose coefficients changed since the last
    check, ``sv_keys`` the expansion's variables (_keys); a variable at 0 violates if it is in
    I_up with -y G > hi + eps or in I_low with -y G < lo - eps. ``state``: a CheckState (None:
    f and f_bar zero, no block), updated by the change alone: the bounded support vectors,
    most of them, rarely move, and the block's columns cost a product, not kernel values.
    ``task`` = the part's first global row. Returns ((RowSet of the violators and extremes
    with their G and G_bar, largest -y G over I_up, smallest over I_low), the new state)."""
    t0, c0 = time.perf_counter(), time.process_time()
    machine, (dcoef, dbar, d_ids, d_indptr, d_indices, d_values), sv_keys, hi, lo, eps = shared
    params = machine.params
    rows, at, y, p = machine.variables(part)  # f and f_bar are over the rows, G per variable
    rows64 = rows.astype(np.int64)
    state = state or CheckState.empty(rows.size)
    # copies: the state a rerun replays from must stay as it was
    f, f_bar = state.f.copy(), state.f_bar.copy()
    both = np.stack([dcoef, dbar], axis=1)
    add2 = np.zeros((rows.size, 2))
    rest = np.flatnonzero(_from_block(state, d_ids, both, add2))
    if rest.size < d_ids.size:
        d_indptr, d_indices, d_values = csr_take(d_indptr, d_indices, d_values, rest)
        dcoef, dbar, both = dcoef[rest], dbar[rest], both[rest]
    kp = kernel_params_for(params)
    evals = 0
    width = max(part.max_index, int(d_indices.max(initial=0))) + 1
    if rows.size and dcoef.size and kernels.expansion_blocks_fit(dcoef.size, width):
        kernels.expansion_by_blocks((part.indptr, part.indices, part.values, part.kd.x_sq),
                                    rows64, (d_indptr, d_indices, d_values,
                                             squared_norms(d_indptr, d_values)),
                                    both, kp, add2,
                                    threads=1 if _on_dask_worker() else numba.get_num_threads())
        evals = rows.size * dcoef.size
    elif rows.size and dcoef.size:  # rows too wide for a dense block: kernel rows
        d_kd = kernel_data_like(part.kd, d_indptr, d_indices, d_values)
        targets = np.arange(dcoef.size, dtype=np.int64)
        add = np.empty(rows.size)
        for k, coef in enumerate((dcoef, dbar)):
            nz = np.flatnonzero(coef)
            if nz.size:
                kernels.expansion_values(part.kd, rows64, d_kd, targets[nz], coef[nz], kp, add)
                add2[:, k] += add
                evals += rows.size * nz.size
    f += add2[:, 0]
    f_bar += add2[:, 1]
    G = y * f[at] + p
    outside = ~np.isin(_keys(task + rows[at], y), sv_keys)
    value = np.where(outside, -y * G, np.nan)  # -y_i G_i at alpha_i = 0
    up, low = outside & (y > 0), outside & (y < 0)  # at alpha = 0: I_up if y = +1, else I_low
    violates = (up & (value > hi + eps)) | (low & (value < lo - eps))
    pick = violates.copy()
    top = np.flatnonzero(up)
    pick[top[np.argsort(-value[top], kind="stable")[:TOP_K]]] = True
    bottom = np.flatnonzero(low)
    pick[bottom[np.argsort(value[bottom], kind="stable")[:TOP_K]]] = True
    m_p = float(value[up].max()) if up.any() else -np.inf
    M_p = float(value[low].min()) if low.any() else np.inf
    sel = np.flatnonzero(pick)
    stats = _stats(t0, c0)
    stats.update(rows=int(rows.size), kernel_evals=evals, violators=int(violates.sum()),
                 block=state.grown)
    found = RowSet.of(part, rows[at[sel]], task + rows[at[sel]], y[sel], np.zeros(sel.size),
                      p[sel], stats, G=G[sel], G_bar=y[sel] * f_bar[at[sel]])
    return (found, m_p, M_p), CheckState(f, f_bar, state.ids, state.K)


def merge_sets(sets, shared):
    """Task (step 2, the tree): the Machine of ``shared`` = (machine, width) on the union of
    ``sets`` (RowSets whose alphas are each feasible), warm-started from their alphas.
    Returns the union's support vectors with their alphas as a RowSet."""
    t0, c0 = time.perf_counter(), time.process_time()
    machine, width = shared
    W = _merge(sets)
    alpha = np.zeros(W.ids.size)
    n_iter = 0
    if machine.solvable(W.y):  # nu-SVC: sets of one class keep their feasible alphas
        wkd, at = _kernel_rows(W, width)
        st, c = solve_w(wkd, kernel_params_for(machine.params), W.y, W.p, machine.C(W.y),
                        machine.params, W.alpha, nu=machine.nu, var_example=at)
        alpha[c.perm] = st.alpha
        n_iter = SmoScalars(st).iterations
    else:
        alpha = W.alpha.copy()
    sv = np.flatnonzero(alpha > 0)
    kept = _take(W, sv)
    kept.alpha = alpha[sv]
    kept.stats = _stats(t0, c0)
    kept.stats.update(iterations=n_iter, rows=int(W.ids.size), sv=int(sv.size))
    return kept


def _on_dask_worker():
    """Whether this task runs on a Dask worker: a worker runs as many tasks at once as it has
    threads, so a task's own threads would only oversubscribe the cores."""
    try:
        from distributed import get_worker
    except ImportError:
        return False
    try:
        get_worker()
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# The SMO over a working set, warm-started

def solve_w(kd, kp, y, p, C, params, alpha0=None, G=None, G_bar=None, progress=None,
            nu=False, var_example=None, cache_mb=None):
    """Our SMO (LIBSVM's Solver, or Solver_NU with ``nu``) on variables of signs ``y``,
    linear terms ``p`` and bounds ``C`` from ``alpha0`` (feasible; None: 0), to params.eps;
    variable t is row ``var_example[t]`` of ``kd`` (None: row t). With ``G`` and ``G_bar``
    (the gradient and LIBSVM's G_bar at alpha0, known from the last pass) it starts without a
    kernel row. Its kernel cache is ``cache_mb`` MB (None: -m), never more than all its rows.
    Returns the SMO state and its cache (positions: c.perm)."""
    from ..qp import FREE, LOWER, UPPER, WS_CODES
    from ..solvers import solver_kwargs

    kw = solver_kwargs(params, "smo")
    l = y.size
    st = make_state(kd, kp, y, p, C, alpha0, ws=WS_CODES[kw.get("wss", "so")],
                    eps=float(params.eps), shrinking=bool(params.shrinking),
                    max_iter=kw.get("max_iter"), var_example=var_example)
    mb = params.cache_size if cache_mb is None else cache_mb
    c = kc.make_cache(l, mb, np.float32, var_example=var_example)
    if G is None:
        smo_init(st, c, kd, kp, False)
    else:  # smo_init's statuses, G and G_bar, from what the last pass knew
        st.status[:] = np.where(st.alpha >= C, UPPER, np.where(st.alpha <= 0.0, LOWER, FREE))
        st.G[:] = G
        st.G_bar[:] = G_bar
    run = smo_run
    if nu:  # imported here: a C-SVC run never loads Solver_NU
        from ..qp.smo_nu import smo_run_nu as run
    status = RUNNING
    while status == RUNNING:
        status = run(st, c, kd, kp, 1000)
        if progress is not None:
            progress()
    return st, c


def _kernel_rows(W, width):
    """(KernelData over W's examples, each variable's example or None when one each): an
    SVR example holding both its variables in W is one kernel row."""
    ids, first, at = np.unique(W.ids, return_index=True, return_inverse=True)
    rows = W if ids.size == W.ids.size else _take(W, first)
    kd = kernel_data(rows.indptr, rows.indices, rows.values, width=width, x_storage="float64",
                     training=True)
    if rows is W:
        return kd, None
    return kd, at.reshape(-1)


# ---------------------------------------------------------------------------------------------
# Where the parts live

class InProcess:
    """Parts held in this process, tasks run one after another (no Dask needed)."""

    client_holds_parts = True

    def load(self, specs):
        return [load_part(s) for s in specs]

    def release(self):
        pass

    def map(self, fn, parts, shared, tasks, states=None):
        """Yield fn(part, shared, task, state)'s first item, in part order; the second (a
        state that stays with the part) is in self.states once all are done."""
        states = states or [None] * len(parts)
        self.states = []
        for part, task, state in zip(parts, tasks, states):
            result, new_state = fn(part, shared, task, _now(state))
            self.states.append(new_state)
            yield result

    def processes(self):
        return 1

    def update(self, fn, parts, shared, tasks, states=None):
        """The parts' new states fn(part, shared, task, state), computed in a thread while this
        process goes on (the merged SMO: compiled code and BLAS run without the GIL); the
        next map waits for them."""
        states = states or [None] * len(parts)
        later = _Later(lambda: [fn(part, shared, task, _now(state))
                                for part, task, state in zip(parts, tasks, states)])
        return [_Item(later, k) for k in range(len(parts))]

    def run(self, fn, args_list):
        """fn(*args) for each args of ``args_list`` (pure tasks that take their inputs as
        arguments), in order."""
        return [fn(*args) for args in args_list]

    def close(self):
        pass


class _Later:
    """The value of ``fn()``, computed in a daemon thread (a Ctrl-C does not wait for it), at
    ``nice`` (on Linux a thread's own priority; elsewhere the thread runs as it is)."""

    def __init__(self, fn, nice=0):
        self.fn, self.nice, self.done = fn, nice, None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        if self.nice and sys.platform == "linux":
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)
            except OSError:
                pass
        try:
            self.done = (self.fn(), None)
        except BaseException as e:  # raised where the value is asked for
            self.done = (None, e)

    def get(self):
        self.thread.join()
        value, error = self.done
        if error is not None:
            raise error
        return value


class _Item:
    """Item k of a _Later's list."""

    def __init__(self, later, k):
        self.later, self.k = later, k

    def get(self):
        return self.later.get()[self.k]


def _now(state):
    return state.get() if isinstance(state, _Item) else state


def _given(x):
    return x


class OnDask:
    """Parts as futures on a Dask cluster: each read by the worker that runs its load task;
    every later task of a part, and the state it leaves (check_part's f), lives where the
    part does. ``shared`` travels once per call; only results travel to the client."""

    client_holds_parts = False

    def __init__(self, client):
        self.client = client
        self.kept = []

    def load(self, specs):
        return [self.client.submit(load_part, s, pure=False) for s in specs]

    def release(self):
        """Forget the shared inputs of the last machine's tasks. Until then they are kept: a
        check rerun after a worker is lost replays every earlier check of its part (its
        state's lineage), which reads them."""
        self.kept = []

    def map(self, fn, parts, shared, tasks, states=None):
        import operator

        from dask.distributed import as_completed

        client = self.client
        both = self.update(fn, parts, shared, tasks, states)
        results = [client.submit(operator.getitem, b, 0, pure=False) for b in both]
        self.states = [client.submit(operator.getitem, b, 1, pure=False) for b in both]
        done = {}
        pending = list(results)
        for f in as_completed(results):  # yielded in part order, as soon as possible
            done[f.key] = f.result()
            while pending and pending[0].key in done:
                yield done.pop(pending.pop(0).key)

    def processes(self):
        """The cluster's workers now."""
        return max(1, len(self.client.scheduler_info()["workers"]))

    def update(self, fn, parts, shared, tasks, states=None):
        """The parts' new states fn(part, shared, task, state) as futures: the workers compute
        them while the client goes on (the merged SMO), and the next map waits for them."""
        client = self.client
        states = states or [None] * len(parts)
        # a task that returns the inputs, not client.scatter: scattered data have no recipe
        # (lost with the workers that held them) and a broadcast fails on a worker just lost
        with warnings.catch_warnings():  # "large graph": the inputs travel once per call
            warnings.simplefilter("ignore", UserWarning)
            shared_f = client.submit(_given, shared, pure=False)
        self.kept.append(shared_f)
        return [client.submit(fn, p, shared_f, t, s, pure=False)
                for p, t, s in zip(parts, tasks, states)]

    def run(self, fn, args_list):
        """fn(*args) for each args of ``args_list`` on the workers, results in order. The
        inputs travel with the tasks (their recipe): a task lost with its worker reruns."""
        with warnings.catch_warnings():  # "large graph": the inputs travel once
            warnings.simplefilter("ignore", UserWarning)
            futures = [self.client.submit(fn, *args, pure=False) for args in args_list]
        return self.client.gather(futures)

    def close(self):
        pass


class CascadeBar:
    """The run's bar on stderr (the caller makes one only on a terminal): the stage (pass,
    partitions solved or checked of P, the merged SMO's iterations) and the overall violation
    m(a) - M(a) as the parts report."""

    def __init__(self, machine):
        self.machine, self.b = machine, None

    def stage(self, text, total):
        from ..base.progress import BAR_DELAY, bar

        if self.b is None:
            self.b = bar(delay=BAR_DELAY, dynamic_ncols=True)
        self.b.reset(total=total)
        self.b.set_description(f"{self.machine}: {text}", refresh=False)

    def step(self, n=1, violation=None):
        if violation is not None:
            self.b.set_postfix({"violation": f"{violation:.3g}"}, refresh=False)
        self.b.update(n)

    def close(self):
        from ..base.progress import close_bar

        if self.b is not None:
            close_bar(self.b)


def sizeof(obj):
    """Bytes an object takes on the wire (pickled), for the bytes-moved record."""
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


# ---------------------------------------------------------------------------------------------
# Client side

@dataclass
class Record:
    """What a run did, for --counters and bench/: passes, W sizes, per-task CPU seconds, bytes
    each way, peak resident memory of the parts' processes."""
    passes: list = field(default_factory=list)  # per pair: number of passes
    # (kind, pass, part, CPU seconds, seconds, bytes in, bytes out)
    tasks: list = field(default_factory=list)
    w_sizes: list = field(default_factory=list)
    # the tree's merges: (level, merge, rows, support vectors, iterations)
    merges: list = field(default_factory=list)
    client_seconds: float = 0.0  # the W solves (wall)
    # the W solves, CPU seconds of the client process (in one process with the parts' kernel
    # blocks' thread meanwhile), in all and per pass
    client_cpu: float = 0.0
    client_cpu_passes: list = field(default_factory=list)
    part_rss: dict = field(default_factory=dict)


class Cascade:
    """Trains models over the parts of ``sources`` (a path, glob, or list; or an SvmlightData
    of rows in memory, cut into ``n_parts`` blocks of rows), on ``executor``. ``labels``: the
    classes' order (default LIBSVM's: first appearance, +1 before -1)."""

    def __init__(self, sources, n_parts, executor=None, zero_based=False, labels=None,
                 cascade_cache=CASCADE_CACHE_MB):
        from ..io.byte_ranges import expand_sources, split_parts
        from ..io.svmlight import SvmlightData

        if isinstance(sources, SvmlightData):
            self.files = []
            self.specs = [(i, _row_block(sources, a, b), zero_based)
                          for i, (a, b) in enumerate(_blocks_of(sources.n, n_parts))]
        else:
            self.files = expand_sources(sources)
            self.specs = [(i, where, zero_based)
                          for i, where in enumerate(split_parts(self.files, n_parts))]
        self.executor = executor or InProcess()
        self.cascade_cache = float(cascade_cache)  # MB per process beyond -m
        self.parts = self.executor.load(self.specs)
        self.summaries = list(self.executor.map(part_summary, self.parts, None,
                                                [None] * len(self.parts)))
        n = np.array([s["n"] for s in self.summaries], np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(n)[:-1]]).astype(np.int64)
        self.n = int(n.sum())
        self.max_index = max([s["max_index"] for s in self.summaries] + [0])
        order, labels, counts = labels, [], {}
        for s in self.summaries:
            for lab, c in zip(s["labels"], s["counts"]):
                if lab not in counts:
                    labels.append(lab)
                    counts[lab] = 0
                counts[lab] += c
        if labels == [-1, 1]:
            labels = [1, -1]  # LIBSVM's svm_group_classes
        self.label = np.array(labels if order is None else order, np.int64)
        self.count = np.array([counts.get(lab, 0) for lab in self.label], np.int64)
        self.record = Record()
        for k, summary in enumerate(self.summaries):
            self._task("load", 0, k, summary["load"], sizeof(self.specs[k]), sizeof(summary))

    # -- one binary machine ---------------------------------------------------------------

    def train_pair(self, i, j, Cp, Cn, params, progress=None, early=False):
        """The exact C-SVC (nu-SVC with params.svm_type 1: bound 1, Cp and Cn unused, as
        LIBSVM's) of class label[i] (+1) against label[j] (-1) over every part. Returns
        (SolverResult over W's rows, W: the RowSet of its rows). ``early``: the first
        merge's result, before any check (steps 1 and 2 only)."""
        li, lj = int(self.label[i]), int(self.label[j])
        if params.svm_type == 1:
            machine = Machine(1, li, lj, 1.0, 1.0, params,
                              (int(self.count[i]), int(self.count[j])))
        else:
            machine = Machine(0, li, lj, Cp, Cn, params)
        return self.train_machine(machine, progress, early)

    def train_machine(self, machine, progress=None, early=False):
        """The exact optimum of ``machine`` (a Machine) over every part: (SolverResult over
        W's variables, W: the RowSet of its variables)."""
        params = machine.params
        kp = kernel_params_for(params)
        eps = float(params.eps)
        rec = self.record
        offsets = list(self.offsets)
        self.executor.release()
        shared_bytes = sizeof(machine)
        pieces = []
        if progress:
            progress.stage("pass 0, partitions solved", len(self.parts))
        for k, rs in enumerate(self.executor.map(solve_part, self.parts, machine, offsets)):
            pieces.append(rs)
            self._task("solve", 0, k, rs.stats, shared_bytes, sizeof(rs))
            if progress:
                progress.step()
        n_iter = sum(rs.stats["iterations"] for rs in pieces)
        pieces, tree_iter = self._tree(pieces, (machine, self.max_index + 1), progress)
        n_iter += tree_iter
        W = _merge(pieces)
        states = None
        last = _Expansion.empty()  # what the parts' states hold
        sent = np.zeros(0, np.int64)  # the examples whose kernel columns the parts were sent
        beyond_m = blocks = None  # --cascade-cache's use, decided on the first W
        for p in range(1, MAX_PASSES + 1):
            grow_bytes = 0
            wkd, at = _kernel_rows(W, self.max_index + 1)
            ids, first = np.unique(W.ids, return_index=True)  # an example once
            if beyond_m is None:
                beyond_m = self.cascade_cache > 0 and kc.keeping_pays(wkd, kp)
                blocks = beyond_m and not early and self._blocks_fit(machine, ids.size)
            if blocks:
                # the parts' kernel blocks gain W's new examples while the client solves W
                new = ~np.isin(ids, sent)
                if new.any():
                    rows = _take(W, first[new])
                    grow = (machine, (rows.ids, rows.indptr, rows.indices, rows.values),
                            self._block_budget())
                    grow_bytes = sizeof(grow)
                    states = self.executor.update(extend_block, self.parts, grow, offsets,
                                                  states)
                    sent = np.union1d(sent, ids[new])
            t0, c0 = time.perf_counter(), time.process_time()
            if progress:
                progress.stage(f"pass {p}, merged SMO on {W.ids.size} rows", None)
            C = machine.C(W.y)
            st, c = solve_w(wkd, kp, W.y, W.p, C, params, W.alpha, W.G, W.G_bar,
                            progress and (lambda: progress.step(1000)), nu=machine.nu,
                            var_example=at,
                            cache_mb=self._merged_cache_mb(params) if beyond_m else None)
            rec.client_seconds += time.perf_counter() - t0
            rec.client_cpu += time.process_time() - c0
            rec.client_cpu_passes.append(time.process_time() - c0)
            rec.w_sizes.append(int(W.ids.size))
            n_iter += SmoScalars(st).iterations
            alpha, G, G_bar = (np.zeros(W.ids.size) for _ in range(3))
            alpha[c.perm], G[c.perm], G_bar[c.perm] = st.alpha, st.G, st.G_bar
            ext = _extremes(st)
            if machine.nu:  # Solver_NU: each sign on its own
                hi, lo = ext[1], ext[2]  # M+ of W, m- of W
            else:
                hi, lo = min(ext[1], ext[3]), max(ext[0], ext[2])  # M_W, m_W
            m_out, M_out = -np.inf, np.inf  # the parts' extremes (variables at 0 outside W)
            if p == 1 and early:
                break
            now = _Expansion.of(W, alpha, C)
            check = (machine, now.change_from(last), now.keys, hi, lo, eps)
            check_bytes = sizeof(check)
            found = []
            if progress:
                progress.stage(f"pass {p}, W {W.ids.size}, partitions checked", len(self.parts))
            for k, (rs, m_p, M_p) in enumerate(self.executor.map(check_part, self.parts, check,
                                                                 offsets, states)):
                found.append(rs)
                m_out, M_out = max(m_out, m_p), min(M_out, M_p)
                self._task("check", p, k, rs.stats, check_bytes, sizeof((rs, m_p, M_p)))
                if rs.stats["block"]:
                    self._task("block", p, k, rs.stats["block"], grow_bytes, 0)
                if progress:
                    progress.step(violation=_violation(machine, ext, m_out, M_out))
            states, last = self.executor.states, now
            if _violation(machine, ext, m_out, M_out) <= eps:
                break
            sv = np.flatnonzero(alpha > 0)  # W's rows at alpha = 0 leave it (checked again)
            keep = _take(W, sv)
            keep.alpha, keep.G, keep.G_bar = alpha[sv], G[sv], G_bar[sv]
            W = _merge([keep] + found)
        rec.passes.append(p)
        coef = W.y * alpha
        if machine.svm_type >= 2:  # per example (W's ids sorted): alpha_i - alpha*_i
            ids, at = np.unique(W.ids, return_inverse=True)
            coef = np.zeros(ids.size)
            np.add.at(coef, at.reshape(-1), W.y * alpha)
        lines = [] if machine.svm_type == 2 else None  # one-class: no line before obj
        if machine.nu:
            r, rho = _rho_nu(st, m_out, M_out)
            lines = [f"epsilon = {-r:f}"]
        else:
            rho = float(calculate_rho(st))
            if not np.any((alpha > 0) & (alpha < C)):
                # no free variable: LIBSVM's middle, over every row
                rho = -(max(ext[0], ext[2], m_out) + min(ext[1], ext[3], M_out)) / 2.0
        obj = float(objective(st))
        bound = np.where(coef > 0, machine.Cp, machine.Cn) if machine.svm_type == 0 else \
            float(machine.Cp)
        if machine.svm_type == 1:  # solve_nu_svc: alpha, rho and obj scaled by r
            coef = alpha * (W.y / r)
            rho, obj, bound = rho / r, obj / (r * r), 1 / r
            lines = [f"C = {bound:f}"]
        res = SolverResult.binary(coef, rho, obj=obj, n_iter=n_iter,
                                  n_sv=int((coef != 0).sum()),
                                  n_bsv=int((np.abs(coef) >= bound).sum()),
                                  counters=dict(iterations=n_iter, passes=p,
                                                working_set=int(W.ids.size)), lines=lines)
        if machine.nu:  # Solver_NU's r, as the single-process solvers' counters
            res.counters["r"] = float(r)
        return res, W

    def _holders(self):
        """What shares --cascade-cache in a process: the parts it holds (their kernel blocks)
        and, in the client's process, the merged SMO (its kernel cache beyond -m). On Dask the
        client holds no part; in one process it shares with all P."""
        if self.executor.client_holds_parts:
            return len(self.parts) + 1
        return max(len(self.parts) / self.executor.processes(), 1)

    def _block_budget(self):
        """Bytes of kernel block per part: its process's --cascade-cache over the holders."""
        return int(self.cascade_cache * (1 << 20) / self._holders())

    def _blocks_fit(self, machine, m):
        """Whether every part's share of --cascade-cache holds at least half of the ``m``
        examples of ``machine``'s first W (its rows of the machine, 4 bytes a value): a block
        is built in full, each value computed and written once, and saves only the share of
        each check it holds."""
        def rows(s):  # the machine's rows on the part summarised by s
            if machine.svm_type >= 2:
                return s["n"]
            return sum(c for lab, c in zip(s["labels"], s["counts"])
                       if lab in (machine.li, machine.lj))

        return 4 * max(rows(s) for s in self.summaries) * m <= 2 * self._block_budget()

    def _merged_cache_mb(self, params):
        """The merged SMO's kernel cache: -m, or the client's share of --cascade-cache (all of
        it on Dask) when larger."""
        share = self.cascade_cache
        if self.executor.client_holds_parts:
            share /= self._holders()
        return max(float(params.cache_size), share)

    def _tree(self, sets, shared, progress=None):
        """Step 2's tree: merge ``sets`` pairwise, level by level, until two remain (an odd
        one goes up as it is); the merges of a level run through the executor. Returns (the
        sets left, the merges' iterations)."""
        n_iter, level = 0, 0
        while len(sets) > 2:
            level += 1
            args = [(sets[k:k + 2], shared) for k in range(0, len(sets) - 1, 2)]
            if progress:
                progress.stage(f"pass 0, tree level {level}, merges", len(args))
            merged = self.executor.run(merge_sets, args)
            for k, (a, rs) in enumerate(zip(args, merged)):
                self._task("merge", level, k, rs.stats, sizeof(a), sizeof(rs))
                self.record.merges.append((level, k, rs.stats["rows"], rs.stats["sv"],
                                           rs.stats["iterations"]))
                n_iter += rs.stats["iterations"]
                if progress:
                    progress.step()
            sets = merged + sets[len(args) * 2:]
        return sets, n_iter

    def _task(self, kind, p, k, stats, bytes_in, bytes_out):
        """Record a task; ``p`` is the pass (the tree's level for a merge), ``k`` the part
        (the merge's index in its level)."""
        rec = self.record
        stats.setdefault("peak_rss", 0)
        rec.tasks.append((kind, p, k, stats["cpu"], stats["seconds"], bytes_in, bytes_out))
        if kind != "merge":  # a merge belongs to no part
            rec.part_rss[k] = max(rec.part_rss.get(k, 0), stats["peak_rss"])

    # -- the model --------------------------------------------------------------------------

    def train(self, params, info=_quiet, warn=_quiet, progress=None, early=False):
        """LIBSVM's one-vs-one C-SVC or nu-SVC model over every part (binary: one pair), or
        its one-class, epsilon-SVR or nu-SVR model. An infeasible nu (nu-SVC) is a
        ValueError with LIBSVM's text."""
        from ..numerics.classes import weighted_C
        from .params import nu_infeasible

        if params.svm_type in (2, 3, 4):
            return self.train_single(params, info, warn, progress, early)
        if params.svm_type == 1 and nu_infeasible(params.nu, self.count):
            raise ValueError(nu_infeasible(params.nu, self.count))
        label = self.label
        k = label.size
        if k == 1:
            info("WARNING: training data in only one class. See README for details.")
        Cw = weighted_C(params, label, warn)
        results = []
        for i in range(k):
            for j in range(i + 1, k):
                bar = CascadeBar(f"class {label[i]} vs {label[j]}") if progress else None
                try:
                    res, W = self.train_pair(i, j, Cw[i], Cw[j], params, bar, early=early)
                finally:
                    if bar:
                        bar.close()
                report_binary(res, Cw[i], Cw[j], int(self.count[i] + self.count[j]), info,
                              warn)
                results.append((i, j, res, W))
        model = self._model(params, results)
        info(f"Total nSV = {int(model.nSV.sum())}")
        return model

    def train_single(self, params, info=_quiet, warn=_quiet, progress=None, early=False):
        """LIBSVM's one-class (-s 2, bound 1), epsilon-SVR (-s 3) or nu-SVR (-s 4) model over
        every part: one machine, nr_class 2, no label or nr_sv, SVs in file order
        (training/train.py's train_single)."""
        from ..base.options import SVM_TYPES

        C = 1.0 if params.svm_type == 2 else params.C
        machine = Machine(params.svm_type, 0, 0, C, C, params)
        bar = CascadeBar(SVM_TYPES[params.svm_type]) if progress else None
        try:
            res, W = self.train_machine(machine, bar, early=early)
        finally:
            if bar:
                bar.close()
        report_binary(res, C, C, self.n, info, warn)
        ids = np.unique(W.ids)  # res.coef's order
        coef = res.coef[0]
        sv = np.flatnonzero(coef)
        first = np.unique(W.ids, return_index=True)[1][sv]
        rows = _take(W, first)
        model = SVMModel(
            svm_type=SVM_TYPES[params.svm_type], kernel_type=params.kernel_type,
            degree=params.degree, gamma=params.gamma, coef0=params.coef0, nr_class=2,
            label=None, rho=res.rho[:1].copy(), nSV=None, sv_coef=coef[sv].reshape(1, -1),
            sv_indptr=rows.indptr.astype(np.int64), sv_indices=rows.indices,
            sv_values=rows.values)
        model.counters = dict(res.counters, partitions=len(self.parts))
        model.sv_indices_train = ids[sv] + 1
        return model

    def _model(self, params, results):
        """LIBSVM's one-vs-one layout: SVs grouped by class in label order, each class's in
        file order; the coefficient of an SV of class i in pair (i, j) in row j - 1, of class j
        in row i."""
        from ..training.params import SVM_TYPES

        k = self.label.size
        rows = {}  # global id -> (class, indptr slice of its RowSet)
        for i, j, res, W in results:
            nz = np.flatnonzero(res.coef[0])
            for t in nz:
                cls = i if W.y[t] > 0 else j
                rows.setdefault(int(W.ids[t]), (cls, W, t))
        order = sorted(rows, key=lambda g: (rows[g][0], g))
        column = {g: n for n, g in enumerate(order)}
        nSV = np.bincount([rows[g][0] for g in order], minlength=k).astype(np.int64)
        sv_coef = np.zeros((max(k - 1, 0), len(order)))
        counters = {}
        for i, j, res, W in results:
            for t in np.flatnonzero(res.coef[0]):
                g = int(W.ids[t])
                row = j - 1 if W.y[t] > 0 else i
                sv_coef[row, column[g]] = res.coef[0][t]
            for name, value in res.counters.items():
                counters[name] = counters.get(name, 0) + value
        indptr = np.zeros(len(order) + 1, np.int64)
        idx, val = [], []
        for n, g in enumerate(order):
            _, W, t = rows[g]
            a, b = W.indptr[t], W.indptr[t + 1]
            idx.append(W.indices[a:b])
            val.append(W.values[a:b])
            indptr[n + 1] = indptr[n] + (b - a)
        model = SVMModel(
            svm_type=SVM_TYPES[params.svm_type], kernel_type=params.kernel_type,
            degree=params.degree, gamma=params.gamma, coef0=params.coef0, nr_class=k,
            label=self.label, rho=np.array([res.rho[0] for _, _, res, _ in results]), nSV=nSV,
            sv_coef=sv_coef, sv_indptr=indptr,
            sv_indices=np.concatenate(idx) if idx else np.zeros(0, np.int32),
            sv_values=np.concatenate(val) if val else np.zeros(0))
        counters["partitions"] = len(self.parts)
        model.counters = counters
        model.sv_indices_train = np.array(order, np.int64) + 1
        return model


def _extremes(st):
    """(m+, M+, m-, M-) of an SMO state: the largest -y G over I_up and the smallest over
    I_low among the variables of sign +1, then of sign -1 (-inf, inf when empty). C-SVC's
    m(a) = max(m+, m-), M(a) = min(M+, M-); Solver_NU's stopping rule takes each sign alone."""
    from ..qp import LOWER, UPPER

    y, G, status = st.y, st.G, st.status
    v = -y * G
    up = np.where(y > 0, status != UPPER, status != LOWER)
    low = np.where(y > 0, status != LOWER, status != UPPER)
    out = []
    for sign in (y > 0, y < 0):
        out += [float(v[up & sign].max(initial=-np.inf)), float(v[low & sign].min(initial=np.inf))]
    return tuple(out)


def _violation(machine, ext, m_out, M_out):
    """LIBSVM's stopping quantity over every variable: W's extremes ``ext`` (_extremes) with
    the parts' ``m_out`` (largest -y G at 0, sign +1: in I_up) and ``M_out`` (smallest, sign
    -1: in I_low)."""
    if machine.nu:
        return max(max(ext[0], m_out) - ext[1], ext[2] - min(ext[3], M_out))
    return max(ext[0], ext[2], m_out) - min(ext[1], ext[3], M_out)


def _rho_nu(st, m_out, M_out):
    """Solver_NU's (r, rho) over every variable: calculate_rho_nu over W when each sign has a
    free variable (all free variables are in W); a sign without one takes the middle of its
    bounds, where the variables at 0 outside W count too (sign +1: their smallest G is
    -m_out; sign -1: M_out)."""
    from ..qp import FREE, LOWER, UPPER
    from ..qp.smo_nu import calculate_rho_nu

    y, G, status = st.y, st.G, st.status
    free = status == FREE
    if (free & (y > 0)).any() and (free & (y < 0)).any():
        r, rho = calculate_rho_nu(st)
        return float(r), float(rho)
    rs = []
    for sign, outside in ((y > 0, -m_out), (y < 0, M_out)):
        if (free & sign).any():
            rs.append(sum(G[free & sign].tolist()) / int((free & sign).sum()))
        else:
            ub = min(float(G[sign & (status == LOWER)].min(initial=np.inf)), outside)
            lb = float(G[sign & (status == UPPER)].max(initial=-np.inf))
            rs.append((ub + lb) / 2.0)
    r1, r2 = rs
    return (r1 + r2) / 2.0, (r1 - r2) / 2.0


def _blocks_of(n, n_parts):
    k = max(1, min(int(n_parts), n))
    cuts = [n * i // k for i in range(k + 1)]
    return list(zip(cuts, cuts[1:]))


def _row_block(data, a, b):
    from ..io.svmlight import SvmlightData

    lo, hi = data.indptr[a], data.indptr[b]
    indices = data.indices[lo:hi]
    return SvmlightData(y=data.y[a:b], indptr=data.indptr[a:b + 1] - lo, indices=indices,
                        values=data.values[lo:hi], max_index=int(indices.max()) if hi > lo else 0)


class _Expansion:
    """The expansion the parts hold: its examples (sorted ids, CSR rows), sum y a and
    sum y C [a = C] over each example's variables, and the variables (_keys) with a > 0."""

    def __init__(self, ids, coef, bar, rows, keys):
        self.ids, self.coef, self.bar, self.rows, self.keys = ids, coef, bar, rows, keys

    @classmethod
    def empty(cls):
        z = np.zeros(0)
        return cls(np.zeros(0, np.int64), z, z, RowSet(np.zeros(0, np.int64), z, z,
                                                       np.zeros(1, np.int64),
                                                       np.zeros(0, np.int32), z),
                   np.zeros(0, np.int64))

    @classmethod
    def of(cls, W, alpha, C):
        sv = np.flatnonzero(alpha > 0)
        ids, first, at = np.unique(W.ids[sv], return_index=True, return_inverse=True)
        at = at.reshape(-1)
        coef, bar = np.zeros(ids.size), np.zeros(ids.size)
        np.add.at(coef, at, W.y[sv] * alpha[sv])
        np.add.at(bar, at, np.where(alpha[sv] >= C[sv], W.y[sv] * C[sv], 0.0))
        return cls(ids, coef, bar, _take(W, sv[first]), np.sort(_keys(W.ids[sv], W.y[sv])))

    def change_from(self, last):
        """(delta y a, delta y C [a = C], example ids, CSR rows) over the examples whose values
        changed."""
        ids = np.union1d(self.ids, last.ids)
        coef, bar = np.zeros(ids.size), np.zeros(ids.size)
        here = np.searchsorted(ids, self.ids)
        there = np.searchsorted(ids, last.ids)
        coef[here] += self.coef
        bar[here] += self.bar
        coef[there] -= last.coef
        bar[there] -= last.bar
        moved = np.flatnonzero((coef != 0) | (bar != 0))
        ids = ids[moved]
        new = np.isin(ids, self.ids)
        rows = _merge([_take(self.rows, np.searchsorted(self.ids, ids[new])),
                       _take(last.rows, np.searchsorted(last.ids, ids[~new]))])
        # _merge orders by (y, id): put the deltas in the same order
        pos = np.searchsorted(ids, rows.ids)
        return coef[moved][pos], bar[moved][pos], rows.ids, rows.indptr, rows.indices, \
            rows.values


def _take(W, rows):
    return RowSet(W.ids[rows], W.y[rows], W.alpha[rows],
                  *csr_take(W.indptr, W.indices, W.values, rows),
                  p=None if W.p is None else W.p[rows])


def _merge(sets):
    """One RowSet of several (first occurrence of a variable wins), in LIBSVM's order: y = +1
    variables first, each side by file row."""
    ids = np.concatenate([s.ids for s in sets]).astype(np.int64)
    y = np.concatenate([s.y for s in sets])
    alpha = np.concatenate([s.alpha for s in sets])
    lens = np.concatenate([np.diff(s.indptr) for s in sets]).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    indices = np.concatenate([s.indices for s in sets]).astype(np.int32)
    values = np.concatenate([s.values for s in sets])
    _, first = np.unique(_keys(ids, y), return_index=True)
    first = first[np.lexsort((ids[first], -y[first]))]
    out = RowSet(ids[first], y[first], alpha[first], None, None, None)
    if all(s.p is not None for s in sets):
        out.p = np.concatenate([s.p for s in sets])[first]
    if all(s.G is not None for s in sets):
        out.G = np.concatenate([s.G for s in sets])[first]
        out.G_bar = np.concatenate([s.G_bar for s in sets])[first]
    out.indptr = np.zeros(first.size + 1, np.int64)
    np.cumsum(lens[first], out=out.indptr[1:])
    take = np.concatenate([np.arange(starts[t], starts[t] + lens[t]) for t in first]) \
        if first.size else np.zeros(0, np.int64)
    out.indices, out.values = indices[take], values[take]
    return out
