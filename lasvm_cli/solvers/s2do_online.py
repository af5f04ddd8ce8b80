"""The online solver of the all-in-one machines (Trinh 2012, §4.2, §5.2, with corrections of
the printed algorithms): LaRank-like passes of S2DO steps on qp/s2do.py's state; this module
is its run (options, state, saving), the compiled epoch is qp/s2do_epoch.py. Step types,
schedules, strategies and --epochs inf:
docs/online.md#the-online-s2do-solver-solverss2do_onlinepy-qps2do_epochpy.
"""

import copy
import json
import math

import numpy as np

from ..base.clock import Clock
from ..base.numba_internals import rng_state, set_rng_state
from ..numerics import cache as kc
from ..numerics.kernels import row_work
from ..qp import s2do as core
from ..qp.s2do_epoch import (BLOCKS, FIXED, RP_S2DO_ALL, RP_S2DO_PATTERN, S2DO_ALL,
                             SECONDS, STEPS, TWO_NEWS, run_epoch, seed)
from .s2do_batch import coefficients, diagonal, result_from_state
from .run import Expansion
from .saved import load_into

_SAVING = "saving or resuming an online multi-class run"

STEP_NAMES = ("two_news", "two_old", "two_old_supports")  # TWO_NEWS ... in order
STRATEGY_CODES = {"s2do-all": S2DO_ALL, "random-pattern-s2do-all": RP_S2DO_ALL,
                  "random-pattern-s2do-pattern": RP_S2DO_PATTERN}
DEFAULT_STRATEGY = {core.LLW: "s2do-all", core.CS: "random-pattern-s2do-all"}  # the thesis's
SCHEDULE_CODES = {"blocks": BLOCKS, "steps": STEPS, "seconds": SECONDS, "fixed": FIXED}
SECOND_CODES = {"gain": core.SECOND_GAIN, "gradient": core.SECOND_GRADIENT}  # --cs-second
BETA = 0.05  # Algorithm 7's decay
ETA = 0.05  # the smallest selection probability of a step type (LaRank)
# The work of one gathered feature of a kernel value, in variables visited: measured with perf
# on full usps (256 dense features, online x1): a variable of the S2DO scans and updates took
# 1.8-1.9 ns, a kernel value 86 ns (CS) and 126 ns (LLW), i.e. 0.18 and 0.27 per feature.
# Weighing a feature as a whole variable made kernel values 4-6 times dearer than in seconds,
# and the schedule chose old steps far more often than the thesis's, which divides by seconds.
FEATURE_WORK = 0.25


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
        core.S2doScalars(self.st).active = 0  # W is empty
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
            nW = core.S2doScalars(self.st).active
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
        return core.S2doScalars(self.st).active

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
        return (core.S2doScalars(self.st).iterations, self.epoch_fraction)

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
        counters = dict(iterations=core.S2doScalars(st).iterations, epochs=self.epoch,
                        examples=self.processed, triangle_steps=core.S2doScalars(st).triangle_steps,
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
                      core.S2doScalars(run.st).gain, epoch + (i + 1) / parts)
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
