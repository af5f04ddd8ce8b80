"""LASVM-G, LASVM-NC, LASVM-I and FULL SVM in memory (Ertekin, Bottou & Giles 2011): the
driver of their compiled iteration (qp/lasvm_g_core.py) as a LasvmRun, so that the online
driver's save/resume, stopping, snapshots and traces work unchanged. Defaults the paper leaves
open, how NC and I begin, what counts as an iteration:
docs/online.md#the-lasvm-g-family-in-memory-solverslasvm_ncpy.
"""

import numpy as np

from ..numerics.cache import KERNEL_EVALS, cache_positions_loaded, cache_set_width
from ..qp import REPROCESS_STEPS
from ..qp.lasvm_g_core import (M_FINISH, M_GAP, M_NEW_EPOCH, M_ONLINE, M_PURGE, N_GFS, N_GST,
                               START_CODES, V_FULL, VARIANTS, LasvmGScalars, g_run)
from ..qp.online_core import (CHUNK, MODE_DELTA, MODE_NEW_EPOCH, MODE_ONLINE, LasvmScalars,
                              fit_width)
from .lasvm import PH_DONE, PH_FINISH, PH_ONLINE, SAVED_FIELDS, LasvmRun, result_of, run_to_end

DEFAULTS = dict(ramp_s=-1.0, sv_threshold=10, ramp_start="convex", clean_every=50,
                clean_keep=100)
_MODES = {MODE_NEW_EPOCH: M_NEW_EPOCH, MODE_ONLINE: M_ONLINE, MODE_DELTA: M_GAP}
EXTRA_FIELDS = ("region", "gst", "gfs")


def st_epochs_left(st, epochs):
    return LasvmScalars(st).epoch < epochs


class LasvmGRun(LasvmRun):
    """One run of ``solver`` ("lasvm-g", "full-svm", "lasvm-nc" or "lasvm-i") as LasvmRun's
    resumable phase machine: epochs (each followed, with ``finish``, by REPROCESS to tau),
    then done."""

    TRACE_EXTRA = ("gap",)

    def __init__(self, kd, kp, y, Cp, Cn, *, solver="lasvm-g", ramp_s=None, sv_threshold=None,
                 ramp_start=None, clean_every=None, clean_keep=None, eps=1e-3, cache_mb=100.0,
                 epochs=1, finish=False, seed=0, rng="splitmix64", symmetric_fill="auto",
                 reprocess="one"):
        if solver not in VARIANTS:
            raise ValueError(f"unknown solver {solver!r} (expected one of {sorted(VARIANTS)})")
        if reprocess not in REPROCESS_STEPS:  # "one" (the paper's) or "pair" (lasvm_g_core)
            raise ValueError(f"unknown reprocess {reprocess!r} (expected one of "
                             f"{REPROCESS_STEPS})")
        super().__init__(kd, kp, y, Cp, Cn, eps=eps, cache_mb=cache_mb, epochs=epochs,
                         finish=False, seed=seed, rng=rng, symmetric_fill=symmetric_fill,
                         bias=False)
        opt = dict(DEFAULTS)
        opt.update({k: v for k, v in dict(ramp_s=ramp_s, sv_threshold=sv_threshold,
                                          ramp_start=ramp_start, clean_every=clean_every,
                                          clean_keep=clean_keep).items() if v is not None})
        self.solver = solver
        self.finish_tau = bool(finish)
        self._stopping = False  # end_online was called: no further epoch
        self.options = opt
        self.config.update(solver=solver, finish=bool(finish), ramp_s=float(opt["ramp_s"]),
                           sv_threshold=int(opt["sv_threshold"]),
                           ramp_start=opt["ramp_start"],
                           clean_every=int(opt["clean_every"]),
                           clean_keep=int(opt["clean_keep"]), reprocess=reprocess)
        if opt["ramp_start"] not in START_CODES:
            raise ValueError(f"unknown ramp_start {opt['ramp_start']!r} (expected one of "
                             f"{sorted(START_CODES)})")
        self._args = (np.int64(VARIANTS[solver]), float(opt["ramp_s"]),
                      np.int64(opt["sv_threshold"]),
                      np.int64(START_CODES[opt["ramp_start"]]),
                      np.int64(opt["clean_every"]),
                      np.int64(opt["clean_keep"]), float(Cp), float(Cn), max(float(Cp),
                                                                              float(Cn)),
                      self._tau, np.int64(reprocess == "pair"))
        self.region = np.zeros(self.l, np.uint8)  # arrival region of each example (R_*)
        self.gst = np.zeros(N_GST, np.int64)
        self.gfs = np.zeros(N_GFS)

    def _g(self, mode, n_iter):
        return g_run(self.st, self.kc, self.kd, self.kp, self.region, self.gst, self.gfs,
                     np.int64(mode), np.int64(n_iter), *self._args)

    def _run(self, mode, n_iter):
        return self._g(_MODES[mode], n_iter)

    # -- phases ------------------------------------------------------------------------------

    def begin(self):
        """First epoch's pool; S starts empty (paper §4.3: alpha = 0, no seeding)."""
        self._g(M_NEW_EPOCH, 0)
        cache_set_width(self.kc, np.int64(min(self.l, CHUNK + 2)))

    def step(self, n=CHUNK):
        """At most ``n`` examples drawn (or ``n`` REPROCESS steps of an epoch's finishing), or
        one phase change: end of an epoch (with ``finish``: its finishing first), end. ``n``
        is capped at CHUNK (the cache width is fitted for that many insertions)."""
        st = self.st
        n = min(int(n), CHUNK)
        if self.phase == PH_ONLINE:
            if LasvmScalars(st).pool > 0:
                fit_width(self.kc, st)
                return int(self._g(M_ONLINE, n))
            LasvmScalars(st).epoch += 1
            if self.finish_tau:
                self.phase = PH_FINISH
            else:
                self._after_epoch()
        elif self.phase == PH_FINISH:
            if self._g(M_FINISH, n):
                self._after_epoch()
        return 0

    def _after_epoch(self):
        if not self._stopping and st_epochs_left(self.st, self.epochs):
            self.phase = PH_ONLINE
            self._g(M_NEW_EPOCH, 0)
        else:
            self._end()

    def end_online(self):
        """Leave the online phase now (an early stop): finishing (``finish``), then done."""
        if self.phase != PH_ONLINE:
            return
        self._stopping = True
        if self.finish_tau:
            self.phase = PH_FINISH
        else:
            self._end()

    def _end(self):
        """Drop the non-SVs left in S (not FULL SVM), bring the gap up to date."""
        self._g(M_PURGE if self._args[0] != V_FULL else M_GAP, 0)
        self.phase = PH_DONE

    # -- measures ----------------------------------------------------------------------------

    @property
    def processed(self):
        """Examples drawn so far (PROCESSed or skipped)."""
        return LasvmGScalars(self).seen

    def gap(self):
        """The duality gap of the current expansion (lasvm_g_core.gap_of), recomputed."""
        self._g(M_GAP, 0)
        return LasvmGScalars(self).gap

    def trace_extra(self):
        return (self.gap(),)

    def counters(self):
        """The paper's Table 1 columns and the gap loop's counters."""
        st, g = self.st, LasvmGScalars(self)
        n = LasvmScalars(st).n_s
        n_sv = int(np.count_nonzero(st.alpha[:n]))
        return dict(
            seen=g.seen, admitted_left=g.admitted_left, admitted_right=g.admitted_right,
            admitted_ramp=g.admitted_ramp, skipped_left=g.skipped_left,
            skipped_right=g.skipped_right, cleaned_left=g.cleaned_left,
            cleaned_right=g.cleaned_right, cleaned_ramp=g.cleaned_ramp,
            outliers_flagged=g.outliers_flagged, expansion_sv=n_sv, expansion_non_sv=n - n_sv,
            gap_loops_bailed=g.gap_loops_bailed, gap_loops_capped=g.gap_loops_capped,
            drawn_in_expansion=g.drawn_in_expansion, nonconvex_from=g.nonconvex_from,
            gap=g.gap, gap_target=g.gap_target)

    def result(self):
        res = result_of(self.st, self.kc)
        res.rho[:] = 0.0  # no bias (and "rho 0" in the model file, not "-0")
        res.counters.update(self.counters())
        res.counters["kernel_evals"] = int(self.kc.stats[KERNEL_EVALS])
        return res

    # -- save / restore ------------------------------------------------------------------------

    def state_arrays(self):
        d = super().state_arrays()
        d.update({name: np.array(getattr(self, name)) for name in EXTRA_FIELDS})
        return d

    def load_state_arrays(self, d, phase):
        for name in SAVED_FIELDS + EXTRA_FIELDS:
            dst = self.st._asdict()[name] if name in SAVED_FIELDS else getattr(self, name)
            src = np.asarray(d[name])
            if src.shape != dst.shape or src.dtype != dst.dtype:
                raise ValueError(f"state array {name}: {src.dtype}{src.shape}, expected "
                                 f"{dst.dtype}{dst.shape}")
            dst[:] = src
        cache_positions_loaded(self.kc)
        if "cache_stats" in d:
            self.kc.stats[:] = np.asarray(d["cache_stats"])
        self.phase = int(phase)
        self._finish = None
        n_s = LasvmScalars(self.st).n_s
        cache_set_width(self.kc, np.int64(min(self.l, n_s + CHUNK + 2 + n_s // 4)))

    def fork(self, cache_mb=None):
        """An independent copy (LasvmRun.fork, plus the counters and regions of its own)."""
        saved = {name: np.array(getattr(self, name)) for name in EXTRA_FIELDS}
        other = super().fork(cache_mb)
        for name, value in saved.items():
            setattr(other, name, value)
        return other


def solve_lasvm_g(kd, kp, y, Cp, Cn, *, solver="lasvm-g", progress=None, **options):
    """Train one binary machine with ``solver`` ("lasvm-g", "full-svm", "lasvm-nc",
    "lasvm-i"); ``options``: LasvmGRun's (ramp_s, sv_threshold, clean_every, clean_keep, eps,
    cache_mb, epochs, finish, seed, rng). Returns a SolverResult (coef = alpha by example,
    rho = 0, obj = -G(alpha), Table 1's counters)."""
    return run_to_end(LasvmGRun(kd, kp, y, Cp, Cn, solver=solver, **options), progress)


def start(machine, params):
    """The LasvmGRun of svm-train's parameters (the SOLVERS entry of the four solvers): -e,
    -m, --seed and the declared options of the four (solvers.LASVM_G_OPTIONS and --epochs)."""
    from . import solver_kwargs

    kd, kp, y, Cp, Cn = machine[:5]
    return LasvmGRun(kd, kp, y, Cp, Cn, solver=params.solver, eps=params.eps,
                     cache_mb=params.cache_size, seed=params.seed,
                     **solver_kwargs(params, params.solver))


def from_params(machine, params, progress=None):
    """:func:`start`'s run to its end."""
    return run_to_end(start(machine, params), progress)
