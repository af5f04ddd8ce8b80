"""Approximate incremental SVMs that track the optimum (Usunier, Bordes & Bottou, "Guarantees
for approximate incremental SVMs", AISTATS 2010; tests/reference_tracking.py replays it).

Algorithms 1 and 2, the LASVM-like variant of §5.2 and the batch counterpart (``ALGORITHMS``:
track1, track2, track2-lasvm, rcd), with their teachers and the cheap exact average of the K
iterates, as a schedule over the online core's clipped Newton step, gradient update and
kernel-row cache (online_core.newton_step): nothing here re-implements them. The QP, the
solvers, positions, averaging, teachers and counting: docs/solvers.md#tracking-solvers.
"""

import copy
import hashlib

import numpy as np

from ..numerics.cache import (FILL, KERNEL_EVALS, WIDTH, cache_positions_loaded, cache_set_width,
                              keeping_pays, make_cache)
from ..numerics.data import subset
from ..numerics.kernels import expansion_values
from ..qp.online_core import RNG_SPLITMIX, LasvmScalars, make_state, svc_boxes
from ..qp.tracking_core import (ALG_RCD, ALGORITHMS, N_TIS, TEACH_ORDER, TEACHER_CODES,
                                TrackScalars, TrackState, track_run)
from . import DEFAULT_K, tracking_K
from .result import SolverResult
from .run import binary_expansion
from .saved import load_into

CHUNK = 256  # time steps (rcd: CHUNK * K coordinate steps) per call of the entry point
PHASES = ("online", "done")  # the state file's names of TrackRun.phase
# What a resumed run needs, saved by TrackRun.state_arrays: the online core's state (positions,
# alphas, gradients, boxes, the unseen pool, the random generator the pool teachers and rcd
# draw from, its scalars) and the tracking state's (its scalars: t, the teacher's next entry,
# counters, k of the mean; the order, the average's sum S and its touched list, the non-zero
# list; the literal mean and the picks of tests). t_pos/t_ex and tgt/tcoef/tout are scratch.
CORE_FIELDS = ("pos2ex", "ex2pos", "alpha", "g", "A", "B", "y", "pool", "labeled", "ist", "fst",
               "rng")
TRACK_FIELDS = ("tis", "order", "S", "touched", "abar", "nz", "nz_at", "nz_coef", "picks")


# ---------------------------------------------------------------------------------------------
# Measures from the gradient (eq. 4; corrections 002-1), in the signed formulation


def duality_measures(a, g, y, Ci):
    """(P, D, G) at coefficients ``a`` (signed) with gradient g = y - K a, on the seen set:
    P = 1/2 sum a (y - g) + sum C_i [y g]_+, D = 1/2 sum a (y + g), and the gap of eq. (4)
    G = sum max[(C_i - y a) y g, -(y a) y g] (every term >= 0)."""
    ap, gp = y * a, y * g  # the paper's alpha_i in [0, C_i] and g_i
    primal = 0.5 * float(np.dot(a, y - g)) + float(np.dot(Ci, np.maximum(gp, 0.0)))
    dual = 0.5 * float(np.dot(a, y + g))
    gap = float(np.sum(np.maximum((Ci - ap) * gp, -ap * gp)))
    return primal, dual, gap


# ---------------------------------------------------------------------------------------------
# The Python driver


class TrackRun:
    """One run of a tracking solver over the l examples of a binary problem (y = +1 / -1,
    boxes [0, Cp] / [-Cn, 0]); ``step(n)`` runs n time indices (rcd: n coordinate steps).

    algorithm  "track1" | "track2" | "track2-lasvm" | "rcd"
    K          steps per time index (rcd: the default length is K l steps)
    average    output w(abar) (default; rcd: the mean of all its iterates) or w(alpha)
    order      the example order of a fixed-order teacher (int array of example ids)
    teacher    "active" | "adversarial" (pool teachers) or a fixed order (``order``)
    max_examples  stop after that many examples (time indices)
    batch_iters   rcd's number of steps N
    literal    keep the literal running mean of line 8 and the examples of the steps (tests)
    cache_dtype  the kernel rows' type (float32 as LIBSVM; tests comparing the steps with a
               float64 reference use float64)
    by_position  run on a copy of the data whose rows are in the fixed order's order (None:
               for bit-set data), see :meth:`_by_position`; ids in and out of the methods stay
               the caller's

    The state is arrays only (``state_arrays``), so the online driver can stop, snapshot, save
    and resume a run (training/run_control.py); the step sizes do not change the result.
    """

    PHASES = PHASES
    epochs = 1  # one pass of the teacher (a resume cannot raise it: --max-examples is config)

    def __init__(self, kd, kp, y, Cp, Cn, *, algorithm="track1", K=DEFAULT_K, average=True,
                 teacher="shuffle", order=None, pool=50, max_examples=None, batch_iters=None,
                 seed=1, cache_mb=100.0, literal=False, cache_dtype=np.float32,
                 by_position=None):
        y = np.where(np.asarray(y) > 0, 1.0, -1.0)
        self.l = l = y.shape[0]
        self.labels = y  # by the caller's ids (the state file's fingerprint of the data)
        self.algorithm = algorithm
        self.K = int(K)
        alg = ALGORITHMS[algorithm]
        code = TEACHER_CODES[teacher]
        if code == TEACH_ORDER:
            order = np.arange(l) if order is None else np.asarray(order, np.int64)
        else:
            order = np.zeros(0, np.int64)
        self.config = dict(algorithm=algorithm, K=self.K, average=bool(average),
                           teacher=teacher, Cp=float(Cp), Cn=float(Cn), seed=int(seed),
                           max_examples=None if max_examples is None else int(max_examples),
                           batch_iters=None if batch_iters is None else int(batch_iters))
        if code == TEACH_ORDER:  # the order itself (a shuffle's seed, an --order file)
            self.config["order"] = hashlib.sha256(
                np.ascontiguousarray(order, np.int64).tobytes()).hexdigest()[:32]
        else:
            self.config["pool"] = int(pool)
        A, B = svc_boxes(y, Cp, Cn)
        self.Ci = B - A
        self.kd, self.kp = kd, kp  # the caller's rows (test errors, measures)
        self.perm = self.inv = None
        if code == TEACH_ORDER and alg != ALG_RCD and self._by_position(kd, order, by_position):
            kd, y, A, B, order = self._renumber(kd, y, A, B, order)
        self.kd_run = kd  # the rows the compiled run reads (renumbered or the caller's)
        self.kc = make_cache(l, cache_mb, dtype=cache_dtype)
        self.kc.meta[FILL] = int(keeping_pays(kd, kp))
        self.st = make_state(self.kc, y, A, B, seed, RNG_SPLITMIX, bias=False)
        LasvmScalars(self.st).pool = l  # the unseen examples: pool[:l] (pool teachers)
        limit = l if code != TEACH_ORDER else order.size
        if max_examples is not None:
            limit = min(limit, int(max_examples))
        self.tr = TrackState(np.zeros(N_TIS, np.int64), np.ascontiguousarray(order, np.int64),
                             np.zeros(l),
                             np.zeros(self.K + 1, np.int64), np.zeros(l if literal else 1),
                             np.zeros(l, np.int64), np.zeros(l), np.zeros(l),
                             np.zeros(l, np.int64), np.full(l, -1, np.int64), np.zeros(l),
                             np.full(self._steps_bound(limit, batch_iters) if literal else 1,
                                     -1, np.int64))
        sc = self.scalars
        sc.algorithm, sc.K, sc.teacher, sc.pool = alg, self.K, code, int(pool)
        sc.average, sc.literal, sc.limit = int(bool(average)), int(bool(literal)), limit
        if alg == ALG_RCD:  # every example seen from the start, g = y at alpha = 0
            sc.limit = self.K * l if batch_iters is None else int(batch_iters)
            sc.t = l
            LasvmScalars(self.st).n_s = l
            self.st.g[:] = self.st.y[self.st.pos2ex]
            cache_set_width(self.kc, np.int64(max(l, 1)))
        elif l:
            cache_set_width(self.kc, np.int64(min(l, 2 * CHUNK + 2)))

    @staticmethod
    def _by_position(kd, order, by_position):
        """Whether to run on the data renumbered in the teacher's order. A fixed order
        inserts example order[t] at position t and never moves it, so with example ids equal
        to positions a kernel row over the seen positions [0, t) reads the targets' rows in
        storage order instead of scattered over the data set: bit-set rows are a few words
        each, and reading them scattered, a cache miss per target, is most of their cost. The
        steps, the draws and every kernel value are the same: only the ids change. The order
        must name distinct examples (an identity order needs nothing)."""
        if by_position is None:
            by_position = kd.bits.shape[0] > 0
        if not by_position or order.size == 0:
            return False
        if np.array_equal(order, np.arange(order.size)):
            return False
        return np.unique(order).size == order.size

    def _renumber(self, kd, y, A, B, order):
        """The data, labels and boxes renumbered so that example t is order[t] (the examples
        outside the order after them, in their own order); self.perm maps the run's ids to
        the caller's, self.inv back."""
        l = self.l
        rest = np.ones(l, bool)
        rest[order] = False
        perm = np.concatenate([order, np.flatnonzero(rest)]).astype(np.int64)
        self.perm = perm
        self.inv = np.empty(l, np.int64)
        self.inv[perm] = np.arange(l)
        return (subset(kd, perm), y[perm], A[perm], B[perm],
                np.arange(order.size, dtype=np.int64))

    def _ids(self, ex):
        """The caller's example ids -> the run's."""
        return ex if self.inv is None else self.inv[ex]

    def _by_example(self, v):
        """Values by the run's example id -> by the caller's."""
        if self.perm is None:
            return v
        out = np.empty_like(v)
        out[self.perm] = v
        return out

    def _steps_bound(self, limit, batch_iters):
        """Coordinate steps of a whole run (PROCESS included): the size of the picks log."""
        if self.algorithm == "rcd":
            return self.K * self.l if batch_iters is None else int(batch_iters)
        return int(limit) * (self.K + 1)

    def picks(self):
        """The example of every coordinate step so far (``literal=True`` runs)."""
        picks = self.tr.picks[:self.iterations].copy()
        return picks if self.perm is None else self.perm[picks]

    # -- running ------------------------------------------------------------------------------

    @property
    def is_rcd(self):
        return self.algorithm == "rcd"

    def begin(self):
        """Load (or compile) the compiled code; the constructor made the state."""
        self.step(0)

    @property
    def CHUNK(self):
        """Time indices per step (rcd: coordinate steps, CHUNK of them per K)."""
        return CHUNK * (self.K if self.is_rcd else 1)

    @property
    def processed(self):
        """Examples seen (rcd: coordinate steps)."""
        return self.iterations if self.is_rcd else self.t

    @property
    def n_expansion(self):
        return self.n_sv

    @property
    def online(self):
        """No finishing phase: online until done."""
        return not self.done

    @property
    def scalars(self):
        """The tracking state's scalars by name (qp/tracking_core.py's TrackScalars)."""
        return TrackScalars(self.tr)

    @property
    def done(self):
        sc = self.scalars
        return (sc.iterations if self.is_rcd else sc.t) >= sc.limit

    @property
    def phase(self):
        """Index in PHASES: online until done (no finishing phase)."""
        return int(self.done)

    def _fit_width(self, n):
        """Rows cover the seen positions: at least t + n + 1 entries, doubled. Each widening
        moves every cached row: on adult (track2, K = 10, 512 MB) 25% slack made 15 of them,
        a quarter of the run, doubling 6 (0.25 s against 1.0 s) for 5% more kernel values
        (shorter rows early would let more of them stay)."""
        need = min(self.l, self.scalars.t + n + 1)
        if int(self.kc.meta[WIDTH]) < need:
            cache_set_width(self.kc, np.int64(min(self.l, 2 * need)))

    def step(self, n):
        """At most n time indices (rcd: n coordinate steps); returns how many ran."""
        if not self.is_rcd:
            self._fit_width(n)
        return int(track_run(self.st, self.kc, self.kd_run, self.kp, self.tr, np.int64(n)))

    # -- measures -----------------------------------------------------------------------------

    @property
    def t(self):
        return self.scalars.t

    @property
    def iterations(self):
        return self.scalars.iterations

    @property
    def updates(self):
        return self.scalars.updates

    @property
    def kernel_evals(self):
        return int(self.kc.stats[KERNEL_EVALS])

    @property
    def teacher_kernel_evals(self):
        return self.scalars.teach_evals

    @property
    def n_sv(self):
        """Non-zero alphas (the live iterate)."""
        return int(np.count_nonzero(self.st.alpha[:self.t]))

    @property
    def averaged(self):
        return bool(self.scalars.average) and self.scalars.kcount > 0

    def alpha(self):
        """alpha by example (signed)."""
        st = self.st
        a = np.zeros(self.l)
        a[st.pos2ex] = st.alpha
        return self._by_example(a)

    def output_alpha(self, averaged=None):
        """The output's coefficients by example: abar = alpha - S / k (or alpha)."""
        a = self.alpha()
        if (self.averaged if averaged is None else averaged) and self.scalars.kcount > 0:
            a -= self._by_example(self.tr.S) / float(self.scalars.kcount)
        return a

    def coef_rho(self):
        return self.output_alpha(), 0.0

    def expansion(self):
        return binary_expansion(self.output_alpha(), 0.0)

    def seen(self):
        """Example ids of the seen set S_t."""
        seen = self.st.pos2ex[:self.t].copy()
        return seen if self.perm is None else self.perm[seen]

    def gradient(self, a, rows):
        """g = y - K a on ``rows`` (float64 kernel values; monitoring: not counted). Uses the
        maintained gradient when it is exact enough for the purpose (full-gradient variants:
        g(alpha) on every seen example, corrected on the <= K examples where abar differs).
        ``a`` and ``rows`` by the caller's ids, as the kernel values (self.kd)."""
        st = self.st
        rows_run = self._ids(np.asarray(rows, np.int64))
        full = self.algorithm != "track2-lasvm" and (not self.averaged or not self.is_rcd)
        if full:
            g = np.empty(rows.size)
            g[:] = st.g[st.ex2pos[rows_run]]
            diff = a - self.alpha()
            extra = np.flatnonzero(diff)
            if extra.size:
                out = np.zeros(rows.size)
                expansion_values(self.kd, rows.astype(np.int64), self.kd, extra.astype(np.int64),
                                 diff[extra], self.kp, out)
                g -= out
            return g
        sv = np.flatnonzero(a)
        out = np.zeros(rows.size)
        if sv.size:
            expansion_values(self.kd, rows.astype(np.int64), self.kd, sv.astype(np.int64),
                             a[sv], self.kp, out)
        return st.y[rows_run] - out

    def measures(self):
        """dict: t, P_t, D_t and the normalised gap (P_t - D_t) / (C t) (eq. 4, C t = sum of
        the seen C_i) of the output classifier on the seen set S_t."""
        rows = self.seen()
        a_all = self.output_alpha()
        a = a_all[rows]
        g = self.gradient(a_all, rows)
        primal, dual, gap = duality_measures(a, g, self.st.y[self._ids(rows)], self.Ci[rows])
        norm = float(self.Ci[rows].sum())
        return dict(t=self.t, primal=primal, dual=dual,
                    gap=gap / norm if norm > 0 else 0.0)

    def result(self):
        """SolverResult of the output (coef = abar or alpha by example, rho 0, obj = -D)."""
        a = self.output_alpha()
        rows = np.flatnonzero(a)
        dual = 0.0
        if rows.size:
            g = self.gradient(a, rows)
            dual = 0.5 * float(np.dot(a[rows], self.st.y[self._ids(rows)] + g))
        n_sv = int(rows.size)
        n_bsv = int(np.sum(np.abs(a[rows]) >= self.Ci[rows]))
        counters = dict(examples=self.t, iterations=self.iterations, updates=self.updates,
                        kernel_evals=self.kernel_evals,
                        teacher_kernel_evals=self.teacher_kernel_evals,
                        cache_hits=int(self.kc.stats[0]), cache_misses=int(self.kc.stats[1]),
                        n_sv=n_sv)
        return SolverResult.binary(a, 0.0, obj=-dual, n_iter=self.iterations, n_sv=n_sv,
                                   n_bsv=n_bsv, counters=counters)

    # -- save / restore ------------------------------------------------------------------------

    def state_arrays(self):
        """Copies of the state arrays and cache counters (the kernel rows are not saved)."""
        d = {name: np.array(getattr(self.st, name)) for name in CORE_FIELDS}
        d.update({name: np.array(getattr(self.tr, name)) for name in TRACK_FIELDS})
        d["cache_stats"] = np.array(self.kc.stats)
        return d

    def load_state_arrays(self, d, phase):
        """Overwrite the state of a fresh run (in place: the compiled code sees the same
        arrays) with arrays from :meth:`state_arrays`; the cache starts empty, its rows are
        recomputed (the same values: the model does not depend on what was cached). The phase
        follows from the arrays."""
        for name in CORE_FIELDS:
            load_into(getattr(self.st, name), d[name], name)
        for name in TRACK_FIELDS:
            load_into(getattr(self.tr, name), d[name], name)
        load_into(self.kc.stats, d["cache_stats"], "cache_stats")
        cache_positions_loaded(self.kc)  # pos2ex/ex2pos are the cache's perm/pos

    def finished_copy(self):
        """No finishing step: the model of a stop or a snapshot is the current output, in a
        copy of its own (the state, the cache's positions and counters; not its kernel rows: a
        finished copy is read, never stepped), done where it was taken."""
        other = copy.copy(self)
        other.kc = self.kc._replace(**{f: np.array(getattr(self.kc, f))
                                       for f in ("perm", "pos", "meta", "stats")})
        other.st = self.st._replace(pos2ex=other.kc.perm, ex2pos=other.kc.pos,
                                    **{f: np.array(getattr(self.st, f)) for f in CORE_FIELDS
                                       if f not in ("pos2ex", "ex2pos")})
        other.tr = type(self.tr)(*(np.array(a) for a in self.tr))
        other.scalars.limit = self.processed
        return other

    def literal_average(self):
        """The literal running mean of line 8 by example (``literal=True`` runs)."""
        return self._by_example(self.tr.abar.copy())


def run_options(params):
    """TrackRun keyword arguments from svm-train's parameters (no order: the caller's)."""
    K, err = tracking_K(params)
    if err:
        raise ValueError(err)
    rcd = params.solver == "rcd"
    average = (not rcd) if params.average is None else bool(params.average)
    return dict(algorithm=params.solver, K=K, average=average,
                teacher="shuffle" if rcd else params.teacher, pool=params.pool,
                max_examples=params.max_examples, batch_iters=params.batch_iters,
                seed=params.seed, cache_mb=params.cache_size)


def shuffled(l, seed):
    """The shuffle teacher's order: a permutation of range(l) from ``seed``."""
    return np.random.default_rng(int(seed)).permutation(int(l)).astype(np.int64)


def start(machine, params, order="rows"):
    """The TrackRun of svm-train's parameters (the SOLVERS table's entry): ``order``: the
    fixed-order teacher's order in the machine's rows ("rows": the rows' order, shuffled
    with --seed for the shuffle teacher); the training layer passes the order in the
    training file's terms (lasvm_cli/training/tracking_control.py)."""
    kd, kp, y, Cp, Cn = machine[:5]
    if isinstance(order, str):
        order = shuffled(len(y), params.seed) if params.teacher == "shuffle" else None
    return TrackRun(kd, kp, y, Cp, Cn, order=order, **run_options(params))


def from_params(machine, params, progress=None):
    """:func:`start`'s run to its end."""
    run = start(machine, params)
    while not run.done:
        run.step(run.CHUNK)
        if progress is not None:
            progress(run.processed, run.n_expansion)
    return run.result()
