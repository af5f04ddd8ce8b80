"""The online solver of the all-in-one machines (Trinh 2012, §4.2 for LLW, §5.2 for the unified
framework and Crammer-Singer, with corrections of the printed algorithms): LaRank-like
passes over the data with S2DO steps on the state of qp/s2do.py.

Positions [0, |W|) of the state are the support patterns W (examples with some alpha > 0);
their gradients (all d of them, corrections 004-13) are kept exact. One epoch visits every example
once, in a shuffled order (``--seed``):

* TWO_NEWS: the example's gradient is computed from W (one kernel row), then one S2DO step on
  two of its variables (Algorithm 6/8); it joins W if an alpha became positive. An example
  already in W (epochs >= 2) takes the step from its stored gradients.
* then TWO_OLD and TWO_OLD_SUPPORTS blocks (d steps each; variables of W, or only its support
  vectors) drawn by Algorithm 7's adaptive scheduling -- probability proportional to each step
  type's recent dual gain per unit of duration (decay beta = 0.05, floor eta = 0.05), TWO_NEWS
  included: drawing TWO_NEWS moves on to the next example.

``--step-schedule`` (corrections 004-12): ``blocks`` (the default) updates a step type's gain once
per block, with the block's increase over its *work* (variables visited, plus kernel values
computed weighted by their cost in features, kernels.row_work, times FEATURE_WORK), a
deterministic stand-in for seconds, so a run is repeatable with its --seed; ``seconds`` is
Algorithm 7 as printed: the gain updated after every elementary step (line 15 sits inside the
multiplier loop) with that step's wall-clock duration (a run is then not repeatable);
``steps``: the printed per-step update with the work as the duration; ``fixed``: no draws,
each example's TWO_NEWS followed by one block of each old step type (fixed scheduling with
the multipliers 1, d, d: every strategy gets the same old steps). The whole pass runs compiled.

``--strategy`` picks the old steps' working sets (Algorithm 6, 9, 10): s2do-all (S2DO over all
of V), random-pattern-s2do-all (first variable from a random pattern, second from V),
random-pattern-s2do-pattern (both from the random pattern). ``--cs-second gradient`` takes the
second variable of a Crammer-Singer pair inside one pattern (TWO_NEWS, and the old steps of
random-pattern-s2do-pattern) as Algorithms 8 and 9 print it, argmax_c (g_p - g_c), instead of
by the gain (corrections 004-15). A pattern whose alphas all return to 0 leaves W. ``--epochs n`` passes; ``inf``: until the KKT violation of the whole problem
(gradients of the examples outside W computed at the end of each pass) is below ``-e``.
"""

import copy
import json
import math

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..base.clock import Clock
from ..base.numba_internals import rng_state, set_rng_state
from ..numerics import cache as kc
from ..numerics.kernels import row_work
from ..qp import s2do as core
from .s2do_batch import coefficients, diagonal, result_from_state
from .run import Expansion
from .saved import load_into

_NJIT = dict(cache=True, nogil=True)
_SAVING = "saving or resuming an online multi-class run"

TWO_NEWS, TWO_OLD, TWO_OLD_SUPPORTS = 0, 1, 2
STEP_NAMES = ("two_news", "two_old", "two_old_supports")
S2DO_ALL, RP_S2DO_ALL, RP_S2DO_PATTERN = 0, 1, 2
STRATEGY_CODES = {"s2do-all": S2DO_ALL, "random-pattern-s2do-all": RP_S2DO_ALL,
                  "random-pattern-s2do-pattern": RP_S2DO_PATTERN}
DEFAULT_STRATEGY = {core.LLW: "s2do-all", core.CS: "random-pattern-s2do-all"}  # the thesis's
BLOCKS, STEPS, SECONDS, FIXED = 0, 1, 2, 3  # --step-schedule (see the module's docstring)
SCHEDULE_CODES = {"blocks": BLOCKS, "steps": STEPS, "seconds": SECONDS, "fixed": FIXED}
SECOND_CODES = {"gain": core.SECOND_GAIN, "gradient": core.SECOND_GRADIENT}  # --cs-second
SHORTEST = 1e-9  # a step's duration (work or seconds) is at least this in a per-step update
BETA = 0.05  # Algorithm 7's decay
ETA = 0.05  # the smallest selection probability of a step type (LaRank)
# The work of one gathered feature of a kernel value, in variables visited: measured with perf
# on full usps (256 dense features, online x1): a variable of the S2DO scans and updates took
# 1.8-1.9 ns, a kernel value 86 ns (CS) and 126 ns (LLW), i.e. 0.18 and 0.27 per feature.
# Weighing a feature as a whole variable made kernel values 4-6 times dearer than in seconds,
# and the schedule chose old steps far more often than the thesis's, which divides by seconds.
FEATURE_WORK = 0.25


@numba.njit(**_NJIT)
def seed(s):
    np.random.seed(s)


@intrinsic
def monotonic_ns(typingctx):
    """CLOCK_MONOTONIC in nanoseconds (libc's clock_gettime, a vDSO call of some 20 ns):
    the wall clock of ``--step-schedule seconds``, readable inside the compiled pass."""
    def codegen(context, builder, signature, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        timespec = ir.LiteralStructType([i64, i64])
        fnty = ir.FunctionType(i32, [i32, timespec.as_pointer()])
        fn = builder.module.globals.get("clock_gettime") or \
            ir.Function(builder.module, fnty, "clock_gettime")
        with builder.goto_entry_block():  # one slot per call site, not one per loop trip
            ts = builder.alloca(timespec)
        builder.call(fn, [ir.Constant(i32, 1), ts])  # CLOCK_MONOTONIC is 1 on Linux
        zero = ir.Constant(i32, 0)
        sec = builder.load(builder.gep(ts, [zero, zero], inbounds=True))
        nsec = builder.load(builder.gep(ts, [zero, ir.Constant(i32, 1)], inbounds=True))
        return builder.add(builder.mul(sec, ir.Constant(i64, 1000000000)), nsec)
    return types.int64(), codegen


@numba.njit(**_NJIT)
def _leave_if_empty(st, c, t):
    """Pattern at position t < |W| with every alpha at 0 leaves W (swapped to |W| - 1)."""
    nW = st.ist[core.ACTIVE]
    if 0 <= t < nW and st.S[t] == 0.0:
        nW -= 1
        core.swap_positions(st, c, t, nW, True)
        st.ist[core.ACTIVE] = nW


@numba.njit(**_NJIT)
def _leave(st, c, m, n):
    a, b = max(m, n), min(m, n)
    _leave_if_empty(st, c, a)
    if b != a:
        _leave_if_empty(st, c, b)


@numba.njit(**_NJIT)
def two_news(st, c, kd, kp, k, second_rule):
    """TWO_NEWS on example k; returns the dual increase."""
    nW = st.ist[core.ACTIVE]
    t = c.pos[k]
    if t < nW:  # already a support pattern: its gradients are stored
        viol, gain, m, n = core.select_and_step(st, c, kd, kp, t, t + 1, False, t, t + 1, nW,
                                                second_rule)
        _leave(st, c, m, n)
        return gain
    if t != nW:
        core.swap_positions(st, c, t, nW, True)
    core.gradient_from(st, nW, kc.cache_get(c, kd, kp, k, nW + 1), nW)
    viol, gain, m, n = core.select_and_step(st, c, kd, kp, nW, nW + 1, False, nW, nW + 1,
                                            nW + 1, second_rule)
    if st.S[nW] > 0.0:
        st.ist[core.ACTIVE] = nW + 1
    return gain


@numba.njit(**_NJIT)
def two_old(st, c, kd, kp, supports_only, strategy, second_rule):
    """TWO_OLD (supports_only False) or TWO_OLD_SUPPORTS on W; returns the dual increase."""
    nW = st.ist[core.ACTIVE]
    if nW == 0:
        return 0.0
    if strategy == S2DO_ALL:
        lo, hi, slo, shi = 0, nW, 0, nW
    else:
        i = np.random.randint(0, nW)
        lo, hi = i, i + 1
        slo, shi = (0, nW) if strategy == RP_S2DO_ALL else (i, i + 1)
    viol, gain, m, n = core.select_and_step(st, c, kd, kp, lo, hi, supports_only, slo, shi, nW,
                                            second_rule)
    _leave(st, c, m, n)
    return gain


@numba.njit(**_NJIT)
def _step_work(step, strategy, nW, d):
    """The work of one elementary step in variables visited: TWO_NEWS computes the new
    gradients (|W| d) and scans d; an old step scans its first and second ranges and updates
    the gradients of W."""
    if step == TWO_NEWS:
        return nW * d + 3 * d
    if strategy == S2DO_ALL:
        return 3 * nW * d
    if strategy == RP_S2DO_ALL:
        return 2 * nW * d + d
    return nW * d + 2 * d


@numba.njit(**_NJIT)
def run_block(st, c, kd, kp, step, strategy, k, mult, counts, kcost, rules, gains, beta, dlog):
    """``mult`` elementary steps of one type (k: the example of TWO_NEWS); returns (dual
    increase, work): variables visited plus kcost per kernel value computed. counts[step]
    counts the steps. ``rules``: (schedule, CS second rule); with the schedules ``steps`` and
    ``seconds`` each step updates gains[step] with its increase over its duration (work or
    wall-clock seconds). ``dlog`` (tests: the reference replays the durations; empty in
    every other run): dlog[0] counts the steps, dlog[i] is the i-th step's duration."""
    total = 0.0
    work = 0.0
    d = st.ist[core.D]
    schedule, second_rule = rules[0], rules[1]
    for _ in range(mult):
        evals = c.stats[kc.KERNEL_EVALS]
        visits = _step_work(step, strategy, st.ist[core.ACTIVE], d)
        work += visits
        t0 = monotonic_ns() if schedule == SECONDS else 0
        if step == TWO_NEWS:
            inc = two_news(st, c, kd, kp, k, second_rule)
        else:
            inc = two_old(st, c, kd, kp, step == TWO_OLD_SUPPORTS, strategy, second_rule)
        rows = kcost * (c.stats[kc.KERNEL_EVALS] - evals)
        work += rows
        duration = (monotonic_ns() - t0) * 1e-9 if schedule == SECONDS else visits + rows
        if schedule == STEPS or schedule == SECONDS:
            gains[step] = beta * inc / max(duration, SHORTEST) + (1.0 - beta) * gains[step]
        if dlog.shape[0] > 0:
            i = int(dlog[0]) + 1
            if i < dlog.shape[0]:
                dlog[i] = duration
                dlog[0] = i
        total += inc
        counts[step] += 1
        st.ist[core.ITER] += 1
    return total, work


@numba.njit(**_NJIT)
def draw(gains, eta):
    """A step type with probability gains / sum, each floored at eta (then renormalised)."""
    total = 0.0
    for s in range(3):
        total += max(gains[s], 0.0)
    p = np.empty(3)
    norm = 0.0
    for s in range(3):
        p[s] = max(max(gains[s], 0.0) / total if total > 0.0 else 1.0 / 3.0, eta)
        norm += p[s]
    u = np.random.random() * norm
    for s in range(3):
        u -= p[s]
        if u < 0.0:
            return s
    return 2


@numba.njit(**_NJIT)
def run_epoch(st, c, kd, kp, order, strategy, mult, gains, counts, kcost, beta, eta, rules,
              dlog):
    """One pass (Algorithm 7, lines 5-19): for each example TWO_NEWS, then blocks drawn by
    gain per unit of duration until TWO_NEWS is drawn again (``rules[0]``, the schedule:
    BLOCKS updates the gain after each block, by its work, STEPS and SECONDS after each step,
    in run_block; FIXED draws nothing: one block of TWO_OLD, then one of TWO_OLD_SUPPORTS)."""
    schedule = rules[0]
    for r in range(order.shape[0]):
        k = order[r]
        step = TWO_NEWS
        while True:
            gain, work = run_block(st, c, kd, kp, step, strategy, k, mult[step], counts, kcost,
                                   rules, gains, beta, dlog)
            if schedule == FIXED:
                if step == TWO_OLD_SUPPORTS:
                    break
                step += 1
                continue
            if schedule == BLOCKS:
                gains[step] = beta * gain / max(work, 1.0) + (1.0 - beta) * gains[step]
            step = draw(gains, eta)
            if step == TWO_NEWS:
                break


class S2doRun:
    """One online S2DO run as a Python driver over the compiled pass: ``begin()`` makes the
    state and seeds, each ``step(n)`` visits the next ``n`` examples of the current epoch
    (:func:`run_epoch` on a slice of the epoch's order) and ends epochs. The compiled pass keeps
    every decision in the state (the step gains, the counts, numba's RNG, the epoch's order),
    so cutting an epoch into slices does not change the iterates: a run driven in chunks by
    training/run_control.py (traces, early stopping, snapshots) gives the same model as a whole
    pass. The measures it offers that driver:

    * ``processed``: examples processed (TWO_NEWS steps, one per example and epoch) -- the
      trace's and ``--stop-iterations``' *iterations*; ``s2do_steps`` counts every S2DO step;
    * ``n_expansion``: |W|, the support patterns (examples with some alpha > 0), which is the
      model's number of support vectors -- the trace's ``sv`` and ``--stop-sv``'s measure;
    * ``delta()``: the KKT violation over W; ``dual_objective()``: the dual D (exact over W).

    There is no finishing step: the model at a stop or snapshot is the current iterate.
    ``state_arrays()`` / ``load_state_arrays()`` save and restore the run between steps
    (--save-state / --resume), bit for bit."""

    TRACE_EXTRA = ("s2do_steps", "epoch")
    CHUNK = 1000  # examples per compiled call when a driver has no reason to stop sooner
    PHASES = ("online", "done")  # the state file's names of self.phase
    SAVED_FIELDS = ("A", "G", "S", "yc", "KD", "ist", "fst")  # of the S2doState

    def __init__(self, kd, kp, yc, d, C, kind, *, eps=1e-3, epochs=1, strategy=None,
                 cache_mb=100.0, target=1.0, seed_value=1, multipliers=None,
                 schedule="blocks", cs_second="gain", cache_dtype=np.float32, progress=None):
        self.kd, self.kp = kd, kp
        self.labels = np.ascontiguousarray(yc, np.int64)
        self.l = self.labels.shape[0]
        self.d, self.kind = int(d), kind
        self.strategy = DEFAULT_STRATEGY[kind] if strategy is None else strategy
        self._code = STRATEGY_CODES[self.strategy]
        self._mult = np.array((1, d, d) if multipliers is None else multipliers, np.int64)
        self.schedule, self.cs_second = schedule, cs_second
        self._rules = np.array((SCHEDULE_CODES[schedule], SECOND_CODES[cs_second]), np.int64)
        self.dlog = np.zeros(0)  # the steps' durations (tests: with_duration_log)
        self.epochs = epochs
        self.eps = float(eps)
        self.config = dict(multiclass=("llw", "cs")[kind], C=float(C), eps=float(eps),
                           epochs=epochs, strategy=self.strategy, target=float(target),
                           seed=int(seed_value), multipliers=self._mult.tolist(),
                           schedule=schedule, cs_second=cs_second,
                           cache_mb=float(cache_mb), cache_dtype=np.dtype(cache_dtype).name)
        self._C, self._target, self._cache_mb = float(C), float(target), cache_mb
        self._cache_dtype = cache_dtype
        self._seed = int(seed_value)
        self.progress = progress
        self.st = self.c = None
        self.epoch, self.optimal, self.done = 0, False, False
        self._order, self._r = None, 0

    @property
    def online(self):
        return not self.done

    @property
    def phase(self):
        return int(self.done)

    def _setup(self):
        l = self.l
        self.st = core.make_state(self.kind, self.labels, self.d, diagonal(self.kd, self.kp, l),
                                  self._C, target=self._target, eps=self.eps, shrinking=False)
        self.st.ist[core.ACTIVE] = 0  # W is empty
        self.c = kc.make_cache(l, self._cache_mb, self._cache_dtype)
        self._rng = np.random.default_rng(self._seed)
        self._gains = np.ones(3)  # Algorithm 7's stepGains
        self._counts = np.zeros(3, np.int64)
        self._kcost = FEATURE_WORK * max(1, row_work(self.kd, self.kd, self.kp, 1))
        self.epoch, self.optimal, self._order, self._r = 0, False, None, 0

    def begin(self):
        self._setup()
        seed(self._seed)
        self.done = self.epochs <= 0 or self.l == 0

    def with_duration_log(self, n):
        """Record the durations of the next ``n`` elementary steps in ``self.dlog`` (tests:
        the reference replays Algorithm 7 with the durations the run measured)."""
        self.dlog = np.zeros(n + 1)
        return self

    def step(self, n=CHUNK):
        """Visit the next ``n`` examples of the epoch (fewer at its end), then end the epoch
        if it is over. Returns the examples visited."""
        if self.done:
            return 0
        if self._order is None:
            self._order, self._r = self._rng.permutation(self.l).astype(np.int64), 0
        part = self._order[self._r:self._r + max(int(n), 1)]
        run_epoch(self.st, self.c, self.kd, self.kp, part, self._code, self._mult, self._gains,
                  self._counts, self._kcost, BETA, ETA, self._rules, self.dlog)
        self._r += part.shape[0]
        if self._r >= self.l:
            self._end_epoch()
        return part.shape[0]

    def _end_epoch(self):
        self._order = None
        self.epoch += 1
        if self.progress is not None:
            self.progress(self.epoch, float("nan"))
        if self.epochs == math.inf:
            nW = int(self.st.ist[core.ACTIVE])
            core.reconstruct(self.st, self.c, self.kd, self.kp, nW, self.l)  # outside W
            if float(core.kkt_violation(self.st, self.l)) < self.eps:
                self.optimal = True
        self.done = self.optimal or self.epoch >= self.epochs

    @property
    def epoch_fraction(self):
        """Epochs done, with the fraction of the current one."""
        return self.epoch + (self._r / self.l if self._order is not None else 0.0)

    def run_to_end(self, n=None):
        while not self.done:
            self.step(self.l if n is None else n)
        return self

    # -- measures ----------------------------------------------------------------------------

    @property
    def processed(self):
        return int(self._counts[TWO_NEWS])

    @property
    def n_expansion(self):
        return int(self.st.ist[core.ACTIVE])

    @property
    def kernel_evals(self):
        return int(self.c.stats[kc.KERNEL_EVALS]) + self.l  # with the diagonal

    def trace_sv(self):
        return self.n_expansion

    def delta(self):
        return float(core.kkt_violation(self.st, self.n_expansion))

    def dual_objective(self):
        return float(core.dual_value(self.st, self.n_expansion))

    def trace_extra(self):
        return (int(self.st.ist[core.ITER]), self.epoch_fraction)

    # -- save / restore (training/run_control.py's state files) ----------------------------------

    def state_arrays(self):
        """Copies of everything the rest of the run depends on: the S2DO state (position
        order), the whole kernel cache (its rows too: Algorithm 7's work counts the kernel
        values computed, so the cache's hits steer the scheduling), the step gains and counts,
        the epoch's order and place, and both random generators (numpy's for the epochs'
        orders, numba's for the step draws and random patterns)."""
        d = {f"s2do_{name}": np.array(getattr(self.st, name)) for name in self.SAVED_FIELDS}
        d.update({f"cache_{f}": np.array(getattr(self.c, f)) for f in self.c._fields
                  if f != "scratch"})
        d.update(gains=np.array(self._gains),
                 counts=np.array(self._counts),
                 order=np.zeros(0, np.int64) if self._order is None else np.array(self._order),
                 scalars=np.array([self._r, self.epoch, int(self.optimal),
                                   int(self._order is not None)], np.int64),
                 np_rng=np.array(json.dumps(self._rng.bit_generator.state)))
        d["numba_rng"] = np.array(rng_state(_SAVING), np.int64)
        return d

    def load_state_arrays(self, d, phase):
        """A run (not begun) continues from :meth:`state_arrays`. ``phase`` is recomputed
        from the epochs (a larger --epochs continues a run that ended)."""
        self._setup()
        for name in self.SAVED_FIELDS:
            load_into(getattr(self.st, name), d[f"s2do_{name}"], name)
        for f in self.c._fields:
            if f != "scratch":
                load_into(getattr(self.c, f), d[f"cache_{f}"], f"cache_{f}")
        load_into(self._gains, d["gains"], "gains")
        load_into(self._counts, d["counts"], "counts")
        r, epoch, optimal, has_order = (int(v) for v in np.asarray(d["scalars"]))
        self._r, self.epoch, self.optimal = r, epoch, bool(optimal)
        self._order = np.array(d["order"], np.int64) if has_order else None
        if self._order is not None and self._order.shape != (self.l,):
            raise ValueError(f"state array order: {self._order.shape}, expected ({self.l},)")
        self._rng.bit_generator.state = json.loads(str(d["np_rng"]))
        set_rng_state(np.asarray(d["numba_rng"]), _SAVING)
        self.done = self.optimal or self.epoch >= self.epochs or self.l == 0

    def finished_copy(self):
        """No finishing step: the model of a stop or a snapshot is the current iterate, in a
        copy of its own (the state, the cache's positions and counters; not its kernel rows:
        a finished copy is read, never stepped)."""
        other = copy.copy(self)
        other.st = type(self.st)(*(np.array(a) for a in self.st))
        other.c = self.c._replace(**{f: np.array(getattr(self.c, f))
                                     for f in ("perm", "pos", "meta", "stats")})
        other._counts = self._counts.copy()
        other._order = None if self._order is None else self._order.copy()
        other.done = True
        return other

    def expansion(self):
        ex, coef = self.class_expansion()
        return Expansion(ex.astype(np.int64), coef, np.zeros(coef.shape[0]))

    def class_expansion(self):
        """W in example order (as the model's SVs) and each class's coefficients over it:
        f_c(x) = sum_w coef[c, w] K(x, x_w) (the expansion of a trace's test error)."""
        nW = self.n_expansion
        order = np.argsort(self.c.perm[:nW])
        ex = self.c.perm[:nW][order]
        coef = coefficients(self.kind, self.st.A[:nW][order], self.st.S[:nW][order],
                            self.st.yc[:nW][order])
        return ex, coef

    def result(self, seconds=None):
        st, c = self.st, self.c
        counters = dict(iterations=int(st.ist[core.ITER]), epochs=self.epoch,
                        examples=self.processed, triangle_steps=int(st.ist[core.N_TRIANGLE]),
                        seconds=seconds, cache_rows=int(c.meta[kc.N_SLOTS]),
                        strategy=self.strategy)
        for s, name in enumerate(STEP_NAMES):
            counters[f"{name}_steps"] = int(self._counts[s])
        counters.update(kc.cache_stats(c))
        counters["kernel_evals"] += self.l  # the diagonal
        return result_from_state(st, c.perm, self.kind, counters,
                                 kkt_hi=self.l if self.optimal else self.n_expansion)


def solve_online(kd, kp, yc, d, C, kind, *, eps=1e-3, epochs=1, strategy=None, cache_mb=100.0,
                 target=1.0, seed_value=1, multipliers=None, schedule="blocks",
                 cs_second="gain", progress=None, cache_dtype=np.float32, trace=None,
                 trace_parts=10):
    """The online solver; ``epochs`` may be math.inf (until the KKT violation < eps).
    ``trace(seconds, kernel_evals, dual, epoch)`` is called ``trace_parts`` times per pass
    (the dual is the sum of the steps' exact increases)."""
    clock = Clock()
    run = S2doRun(kd, kp, yc, d, C, kind, eps=eps, epochs=epochs, strategy=strategy,
                  cache_mb=cache_mb, target=target, seed_value=seed_value,
                  multipliers=multipliers, schedule=schedule, cs_second=cs_second,
                  cache_dtype=cache_dtype, progress=progress)
    run.begin()
    l = run.l
    parts = trace_parts if trace is not None else 1
    while not run.done:
        epoch = run.epoch
        for i in range(parts):  # the slices of np.array_split(order, parts)
            size = l // parts + (1 if i < l % parts else 0)
            if size:
                run.step(size)
            if trace is not None:
                trace(clock.seconds(), int(run.c.stats[kc.KERNEL_EVALS]),
                      float(run.st.fst[core.GAIN]), epoch + (i + 1) / parts)
    return run.result(clock.stop())


def _options(params):
    """S2doRun's arguments from svm-train's parameters (--multiclass llw|cs, --solver
    online): -e, -m, --seed, --epochs, --strategy, --llw-target, --step-schedule, --cs-second."""
    return dict(eps=params.eps, epochs=params.epochs, strategy=params.strategy,
                cache_mb=params.cache_size, target=params.llw_target, seed_value=params.seed,
                schedule=params.schedule, cs_second=params.cs_second)


def start(machine, params):
    """The S2doRun of svm-train's parameters on ``machine`` (class indices in y)."""
    return S2doRun(machine.kd, machine.kp, machine.y, machine.n_classes, params.C,
                   core.KINDS[params.multiclass], **_options(params))


def from_params(machine, params, progress=None):
    """solve_online with svm-train's parameters."""
    return solve_online(machine.kd, machine.kp, machine.y, machine.n_classes, params.C,
                        core.KINDS[params.multiclass], progress=progress, **_options(params))
