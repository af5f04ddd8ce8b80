"""LASVM in memory (Bordes, Ertekin, Weston & Bottou 2005): the driver of the online core
(qp/online_core.py) over the training rows, with the shared kernel-row cache.

:class:`LasvmRun` is a resumable phase machine (seeding, epochs of PROCESS + REPROCESS over
examples chosen by the selection rule, finishing) over the core's state arrays; the compiled
entry point :func:`~lasvm_cli.qp.online_core.lasvm_run` is called in chunks of CHUNK
iterations (progress callback, Ctrl-C, state saving between chunks).

Example order: each epoch draws the unseen examples uniformly (``pool`` with swap-removal,
la_svm.cpp:select); candidates for GRADIENT/ACTIVE/AUTOACTIVE are drawn with replacement, as in
LaSVM 1.1. ``rng="glibc"`` replaces splitmix64 by C's rand() so that ``seed=1`` replays LaSVM
1.1's order exactly (test_lasvm.py checks 1.1's heart_scale numbers that way).

Labels: ``labels_used`` counts distinct examples whose label was read: the processed example for
RANDOM/ACTIVE/AUTOACTIVE, every candidate for GRADIENT (its criterion y f(x) needs the label),
and the 2 x 5 seeds.
"""

from types import SimpleNamespace

import numpy as np

from ..numerics.cache import (FILL, HITS, KERNEL_EVALS, MISSES, cache_positions_loaded,
                              cache_set_width, keeping_pays, make_cache)
from ..qp.online_core import (CHUNK, MODE_DELTA, MODE_NEW_EPOCH, MODE_ONLINE, MODE_SEED, N_SEED,
                              RNGS, SELECTION_CODES, LasvmScalars, bias, dual_objective,
                              fit_width, lasvm_run, make_state, svc_boxes, sv_counts)
from ..qp import BAIL_OUTS, FINISHINGS
from .finishing import start_finishing
from .result import SolverResult
from .run import binary_expansion
from .saved import load_into


def result_of(st, kc):
    """The SolverResult of a run's state (coef = alpha by example, rho = -b, LIBSVM's obj)."""
    l = st.y.shape[0]
    sc = LasvmScalars(st)
    n = sc.n_s
    coef = np.zeros(l)
    coef[st.pos2ex[:n]] = st.alpha[:n]
    n_sv, n_bsv = sv_counts(st)
    counters = dict(
        iterations=sc.steps, processed=sc.processed, inserted=sc.inserted,
        reprocess=sc.reprocess, finish_steps=sc.finish_steps, epochs=sc.epoch,
        kernel_evals=int(kc.stats[KERNEL_EVALS]), cache_hits=int(kc.stats[HITS]),
        cache_misses=int(kc.stats[MISSES]), n_sv=n_sv,
        labels_used=sc.labels, delta=sc.delta)
    return SolverResult.binary(coef, -bias(st), obj=-dual_objective(st),
                               n_iter=sc.steps, n_sv=n_sv, n_bsv=n_bsv,
                               counters=counters)


PH_ONLINE, PH_FINISH, PH_DONE = 0, 1, 2
PHASES = ("online", "finish", "done")
# state arrays saved by LasvmRun.state_arrays (t_pos/t_ex are scratch)
SAVED_FIELDS = ("pos2ex", "ex2pos", "alpha", "g", "A", "B", "y", "pool", "labeled", "ist", "fst",
                "rng")


class LasvmRun:
    """One LASVM run as a resumable phase machine over :class:`LasvmState` (the Python driver
    of :func:`lasvm_run`). ``begin()`` seeds; each ``step(n)`` runs at most ``n`` online
    iterations (PROCESS calls) or ``n`` finishing steps, ends epochs and switches phases:
    online -> finish (or done with ``finish=False``) -> done. Between steps the whole run is
    ``state_arrays()`` + ``phase``, so it can be saved and resumed (training/run_control.py), and
    ``fork()`` gives an independent copy (finishing a snapshot without disturbing the run).
    Chunk sizes do not change the result: every decision depends on the state arrays only."""

    CHUNK = CHUNK  # online iterations per compiled call when the driver has no reason to stop
    PHASES = PHASES  # the state file's names of self.phase
    TRACE_EXTRA: tuple = ()  # no trace columns of its own

    def __init__(self, kd, kp, y, Cp, Cn, *, eps=1e-3, cache_mb=100.0, epochs=1, finish=True,
                 selection="random", candidates=50, delta_max=None, seed=0, label_budget=None,
                 rng="splitmix64", symmetric_fill="auto", bias=True, boxes=None,
                 finishing="smo", bail_out="lasvm11"):
        if selection not in SELECTION_CODES:
            raise ValueError(
                f"unknown selection {selection!r} (expected one of {sorted(SELECTION_CODES)})")
        if rng not in RNGS:
            raise ValueError(f"unknown rng {rng!r} (expected one of {sorted(RNGS)})")
        if finishing not in FINISHINGS:
            raise ValueError(f"unknown finishing {finishing!r} (expected one of {FINISHINGS})")
        if bail_out not in BAIL_OUTS:
            raise ValueError(f"unknown bail_out {bail_out!r} (expected one of {BAIL_OUTS})")
        if label_budget is not None and selection == "random":
            selection = "active"
        self.kd, self.kp = kd, kp
        self.Cp, self.Cn = float(Cp), float(Cn)
        self.config = dict(eps=float(eps), epochs=int(epochs), finish=bool(finish),
                           selection=selection, candidates=int(candidates),
                           delta_max=None if delta_max is None else float(delta_max),
                           seed=int(seed), label_budget=None if label_budget is None
                           else int(label_budget), rng=rng, Cp=float(Cp), Cn=float(Cn),
                           bias=bool(bias), finishing=finishing, bail_out=bail_out)
        self.cache_mb = cache_mb
        y = np.asarray(y)
        self.l = l = y.shape[0]
        self.epochs = int(epochs)
        self.finish = bool(finish)
        self._finishing = finishing
        self._tau = float(eps)
        self._dmax = np.inf if delta_max is None else float(delta_max)
        self._budget = np.int64(l + 1 if label_budget is None else int(label_budget))
        self._sel = np.int64(SELECTION_CODES[selection])
        self._cand = np.int64(candidates)
        self._fill = keeping_pays(kd, kp) if symmetric_fill == "auto" else bool(symmetric_fill)
        self.kc = self._new_cache(cache_mb)
        A, B = svc_boxes(y, Cp, Cn) if boxes is None else boxes
        yy = np.where(y > 0, 1.0, -1.0)
        self.st = make_state(self.kc, yy, A, B, seed, RNGS[rng], bias=bias,
                             bail_printed=bail_out == "printed")
        self.phase = PH_ONLINE
        self._width_ready = False
        self._finish = None  # the finishing run (solvers/finishing.py) once in PH_FINISH

    def _new_cache(self, cache_mb):
        kc = make_cache(self.l, cache_mb)
        kc.meta[FILL] = int(self._fill)
        return kc

    def _run(self, mode, n_iter):
        return lasvm_run(self.st, self.kc, self.kd, self.kp, np.int64(mode), np.int64(n_iter),
                         self._sel, self._cand, self._tau, self._dmax, self._budget)

    # -- phases ------------------------------------------------------------------------------

    def begin(self):
        """First epoch's pool and the 2 x N_SEED seeds."""
        self._run(MODE_NEW_EPOCH, 0)
        cache_set_width(self.kc, np.int64(min(self.l, 2 * N_SEED + CHUNK + 2)))
        self._run(MODE_SEED, N_SEED)

    @property
    def done(self):
        return self.phase == PH_DONE

    @property
    def online(self):
        return self.phase == PH_ONLINE

    def step(self, n=CHUNK):
        """Advance by at most ``n`` online iterations or ``n`` finishing steps (or one phase
        change: end of epoch, start of finishing). Returns the online iterations run."""
        st = self.st
        if self.phase == PH_ONLINE:
            sc = LasvmScalars(st)
            if sc.pool > 0 and sc.labels < self._budget:
                fit_width(self.kc, st)
                return int(self._run(MODE_ONLINE, n))
            sc.epoch += 1
            if sc.labels < self._budget and sc.epoch < self.epochs:
                self._run(MODE_NEW_EPOCH, 0)
            else:
                self.end_online()
            return 0
        if self.phase == PH_FINISH:
            if not self._width_ready:
                fit_width(self.kc, st, finishing=True)
                self._width_ready = True
            if self._finish is None:
                self._finish = start_finishing(st, self.kc, self.kd, self.kp, self._tau,
                                               rule=self._finishing)
            if self._finish.step(n):
                self.phase = PH_DONE
        return 0

    def end_online(self):
        """Leave the online phase now (all epochs done, label budget, or an early stop)."""
        if self.phase != PH_ONLINE:
            return
        if self.finish:
            self.phase = PH_FINISH
            self._width_ready = False
            self._finish = None
        else:
            self._run(MODE_DELTA, 0)
            self.phase = PH_DONE

    def run_to_end(self, progress=None, n=CHUNK):
        while not self.done:
            online = self.online and LasvmScalars(self.st).pool > 0 and \
                LasvmScalars(self.st).labels < self._budget
            self.step(n)
            if progress is not None and (online or (self.phase == PH_FINISH)):
                progress(LasvmScalars(self.st).processed, LasvmScalars(self.st).n_s)
        return self

    # -- measures ----------------------------------------------------------------------------

    @property
    def processed(self):
        """PROCESS calls so far (online iterations, the 2 x N_SEED seeds included)."""
        return LasvmScalars(self.st).processed

    @property
    def n_expansion(self):
        """|S|, the size of the expansion (LaSVM 1.1's lasvm_get_l)."""
        return LasvmScalars(self.st).n_s

    @property
    def kernel_evals(self):
        return int(self.kc.stats[KERNEL_EVALS])

    @property
    def labels(self):
        return self.st.y

    def trace_sv(self):
        """The trace's sv column: the non-zero alphas."""
        return int(np.count_nonzero(self.coef_rho()[0]))

    def dual_objective(self):
        return float(dual_objective(self.st))

    def delta(self):
        """delta = g_max - g_min over S (recomputed; the state keeps the last REPROCESS's,
        which AUTOACTIVE's margin reads, so that a trace changes no step)."""
        scalars = LasvmScalars(self.st)
        kept = scalars.delta
        self._run(MODE_DELTA, 0)
        d = scalars.delta
        scalars.delta = kept
        return d

    def coef_rho(self):
        """(coef by example, rho) of the current expansion; valid outside finishing."""
        st = self.st
        n = LasvmScalars(st).n_s
        coef = np.zeros(self.l)
        coef[st.pos2ex[:n]] = st.alpha[:n]
        return coef, -bias(st)

    def expansion(self):
        return binary_expansion(*self.coef_rho())

    def trace_extra(self):
        return ()

    def result(self):
        return result_of(self.st, self.kc)

    # -- save / restore ------------------------------------------------------------------------

    def state_arrays(self):
        """Copies of the state arrays and cache counters (the kernel rows are not saved)."""
        d = {name: np.array(getattr(self.st, name)) for name in SAVED_FIELDS}
        d["cache_stats"] = np.array(self.kc.stats)
        if self._finish is not None:
            d.update(self._finish.arrays())
        return d

    def load_state_arrays(self, d, phase):
        """Overwrite the state (in place: the compiled code sees the same arrays) with arrays
        from :meth:`state_arrays`; the cache starts empty, its rows are recomputed."""
        for name in SAVED_FIELDS:
            load_into(getattr(self.st, name), d[name], name)
        cache_positions_loaded(self.kc)  # pos2ex/ex2pos are the cache's perm/pos
        if "cache_stats" in d:
            self.kc.stats[:] = np.asarray(d["cache_stats"])
        self.phase = int(phase)
        self._width_ready = False
        self._finish = None
        if self.phase == PH_FINISH:
            fit_width(self.kc, self.st, finishing=True)
            self._width_ready = True
            self._finish = start_finishing(self.st, self.kc, self.kd, self.kp, self._tau, d,
                                           rule=self._finishing)
        if self.phase == PH_ONLINE:
            n_s = LasvmScalars(self.st).n_s
            cache_set_width(self.kc, np.int64(min(self.l, n_s + CHUNK + 2 + n_s // 4)))

    def fork(self, cache_mb=None):
        """An independent copy of this run (own state arrays and an empty cache)."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.kc = self._new_cache(self.cache_mb if cache_mb is None else cache_mb)
        other.st = self.st._replace(pos2ex=other.kc.perm, ex2pos=other.kc.pos,
                                    **{f: np.array(getattr(self.st, f)) for f in SAVED_FIELDS
                                       if f not in ("pos2ex", "ex2pos")},
                                    t_pos=np.zeros(self.l, np.int64),
                                    t_ex=np.zeros(self.l, np.int64))
        other.load_state_arrays(self.state_arrays(), self.phase)
        return other

    # -- an epoch fed in batches (OnlineSVC.partial_fit) ------------------------------------------

    @property
    def epoch_left(self):
        """Examples not yet drawn in this epoch (its pool)."""
        return LasvmScalars(self.st).pool

    def kept_expansion(self):
        """What LASVM keeps between examples: the expansion S in position order (alpha,
        gradient, boxes) and its rows (``rows``: example ids), the core's scalars, its random
        generator and cache counters."""
        st = self.st
        n = LasvmScalars(st).n_s
        return dict(rows=st.pos2ex[:n].copy(), alpha=st.alpha[:n].copy(), g=st.g[:n].copy(), A=st.A[:n].copy(),
                    B=st.B[:n].copy(), ist=st.ist.copy(), fst=st.fst.copy(),
                    rng=st.rng.copy(), cache_stats=self.kc.stats.copy())

    def continue_with(self, kept):
        """Instead of ``begin``: the epoch goes on from ``kept`` (:meth:`kept_expansion` of an
        earlier run), whose expansion is this run's first rows, with the rows after them as
        the epoch's pool. A new example has alpha 0 and changes no gradient, so the gradients
        carry over."""
        n_s, l = kept["alpha"].size, self.l
        d = self.state_arrays()
        d["pos2ex"][:] = np.arange(l)
        d["ex2pos"][:] = np.arange(l)
        for name in ("alpha", "g", "A", "B"):
            d[name][:n_s] = kept[name]
        d["pool"][:] = np.concatenate([np.arange(n_s, l), np.arange(n_s)])
        d["labeled"][:n_s] = 1
        d["ist"][:] = kept["ist"]
        sc = LasvmScalars(SimpleNamespace(ist=d["ist"]))
        sc.n_s, sc.pool, sc.epoch = n_s, l - n_s, 0
        sc.labels = n_s  # labels read in this run (its budget is the run's rows)
        d["fst"][:] = kept["fst"]
        d["rng"][:] = kept["rng"]
        d["cache_stats"][:] = kept["cache_stats"]
        self.load_state_arrays(d, PH_ONLINE)

    def finished_copy(self):
        """The model this run would give if its online phase ended now: a fork taken through
        the finishing step (LaSVM 1.1's intermediate models: save alpha/g, finish, save the
        model, restore). Without finishing, a fork with delta computed."""
        other = self.fork()
        other.end_online()
        return other.run_to_end()


def solve_lasvm(kd, kp, y, Cp, Cn, *, eps=1e-3, cache_mb=100.0, epochs=1, finish=True,
                selection="random", candidates=50, delta_max=None, seed=0,
                label_budget=None, progress=None, rng="splitmix64",
                symmetric_fill="auto", bias=True, boxes=None, finishing="smo",
                bail_out="lasvm11"):
    """Train a binary SVM with LASVM (Bordes et al. 2005): seeding, ``epochs`` passes of
    PROCESS + REPROCESS over examples chosen by ``selection``, then (``finish``) REPROCESS
    until delta <= tau = ``eps``.

    kd, kp      KernelData / KernelParams of the l training rows
    y           labels, +1 (box [0, Cp]) or -1 (box [-Cn, 0])
    selection   "random" | "gradient" | "active" | "autoactive" (paper §4.4)
    candidates  sample size M for gradient / active selection
    delta_max   after each PROCESS, REPROCESS while delta > delta_max (paper §3.5); None = once
    label_budget  read at most this many labels (active learning, paper §4.2); with the default
                "random" selection the active criterion is used to choose the examples
    progress    callable(n_processed, n_sv) called between chunks of ~1000 iterations
    rng         "splitmix64" (default) or "glibc": C rand() after srand(seed); with seed=1 this
                is LaSVM 1.1's example order (it never seeds rand)
    symmetric_fill  "auto" (cache.keeping_pays), True or False: LaSVM 1.1's copying of missing
                row entries from cached rows (True with rng="glibc", seed=1 replays LaSVM 1.1's
                kernel-evaluation count too)
    bias        False: the bias-free formulation of the online core (no equality constraint,
                one-variable steps, rho = 0; LASVM-G's and the tracking algorithms')
    boxes       (A, B) by example instead of LaSVM's [0, Cp] / [-Cn, 0] (a solver may move
                them later, between chunks, through run.st.A / run.st.B by position)
    finishing   "smo" (default): the finishing step is the SMO loop over S with second-order
                selection and shrinking (solvers/finishing.py); "reprocess": the paper's
                step 3 as printed and LaSVM 1.1's, REPROCESS (maximal violating pairs) until
                delta <= tau; "reprocess-shrinking": the same on an active part of S with
                the shrinking of the paper's implementation notes (LaSVM 1.1's
                lasvm_finish, going on while S has a tau-violating pair). All stop at the
                same rule; they reach different tau-approximate solutions at different costs
                (docs/reproductions/seed-000.md)
    bail_out    "lasvm11" (default): a REPROCESS that finds no tau-violating pair still evicts
                and recomputes delta, as LaSVM 1.1 does; "printed": it does nothing, the
                paper's step 2 (docs/corrections.md, 000-6)

    Returns a SolverResult (coef = alpha by example, rho = -b, obj = LIBSVM's 0.5a'Qa - e'a).
    """
    run = LasvmRun(kd, kp, y, Cp, Cn, eps=eps, cache_mb=cache_mb, epochs=epochs, finish=finish,
                   selection=selection, candidates=candidates, delta_max=delta_max, seed=seed,
                   label_budget=label_budget, rng=rng, symmetric_fill=symmetric_fill,
                   bias=bias, boxes=boxes, finishing=finishing, bail_out=bail_out)
    return run_to_end(run, progress)


def run_to_end(run, progress=None):
    """``run`` from its beginning to its end, in one go; its SolverResult."""
    run.begin()
    run.run_to_end(progress)
    return run.result()


def start(machine, params):
    """The LasvmRun of svm-train's parameters (the SOLVERS table's entry for "lasvm"): -e, -m,
    --seed and the declared options of "lasvm" (solvers.LASVM_OPTIONS: --epochs, --no-finish,
    --finishing, --bail-out, --selection, --candidates, --delta-max, --label-budget)."""
    from . import solver_kwargs

    kd, kp, y, Cp, Cn = machine[:5]
    return LasvmRun(kd, kp, y, Cp, Cn, eps=params.eps, cache_mb=params.cache_size,
                    seed=params.seed, **solver_kwargs(params, "lasvm"))


def from_params(machine, params, progress=None):
    """:func:`start`'s run to its end."""
    return run_to_end(start(machine, params), progress)
