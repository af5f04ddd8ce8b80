"""Streaming LASVM-G, LASVM-NC, LASVM-I and FULL SVM (``svm-train --solver
lasvm-g|lasvm-nc|lasvm-i|full-svm --stream``): :class:`LasvmGStreamRun` is solvers/lasvm_nc.py's
LasvmGRun over the LASVM stream's slot store and row source, driven as the in-memory run is.
Its decisions depend on S only, so driven in file order the in-memory run writes the same
model file, byte for byte (tests/test_stream.py). What the store holds and the end of the
pass: docs/streaming.md#lasvm-g--nc--i-and-full-svm.
"""

import numpy as np

from ..numerics import kernels
from ..numerics.classes import weighted_C
from ..qp import REPROCESS_STEPS
from ..qp import lasvm_g_core as G
from ..qp import online_core as core
from ..qp.online_core import LasvmScalars
from ..qp.stream_slots import g_stream_block
from .lasvm_nc import DEFAULTS, EXTRA_FIELDS, LasvmGRun
from .lasvm_stream import LasvmStreamRun
from .stream_source import StreamError, check_one_pass


def check_params(p):
    if p.solver not in G.VARIANTS:
        raise StreamError(f"unknown streaming solver {p.solver}")
    check_one_pass(p)
    if p.multiclass != "ovo":
        raise StreamError(f"--stream --solver {p.solver} supports two classes (no --multiclass)")


def options(p):
    opt = dict(DEFAULTS)
    for k in opt:
        v = getattr(p, k, None)
        if v is not None:
            opt[k] = v
    reprocess = getattr(p, "reprocess", None) or "one"
    if reprocess not in REPROCESS_STEPS:
        raise StreamError(f"unknown --reprocess {reprocess}")
    return opt, reprocess


class LasvmGStreamRun(LasvmStreamRun, LasvmGRun):
    """LasvmGRun (solvers/lasvm_nc.py) fed by the file in blocks, as LasvmStreamRun feeds
    LasvmRun: LasvmGRun's phases, measures and model (rho 0, its counters) over the store; the
    online step is its iteration on the next rows of the file, each in a free slot. No
    seeding: the first block waits for both classes only."""

    NEXT_ROW = 0  # ctl[0]: the next row of the current block (no window)

    def __init__(self, source, params, kp, weighted, *, solver, options, reprocess, eps=1e-3,
                 cache_mb=100.0, finish=False, zero_based=False, chunk_bytes=1 << 22,
                 config=None):
        super().__init__(source, params, kp, weighted, eps=eps, cache_mb=cache_mb,
                         finish=False, zero_based=zero_based, chunk_bytes=chunk_bytes,
                         config=config)
        self.TITLE = f"{solver} stream"
        self.solver = solver
        self.finish_tau = bool(finish)
        self._stopping = False
        self.options = options
        self._reprocess = reprocess
        LasvmScalars(self.store.ss.core).nobias = 1
        self.region = np.zeros(self.store.cap, np.uint8)
        self.gst = np.zeros(G.N_GST, np.int64)
        self.gfs = np.zeros(G.N_GFS)
        self._args = None

    def _start_labels(self):
        super()._start_labels()
        self._iteration_args()
        self.store.set_fill(self.kp)

    def _iteration_args(self):
        """lasvm_g_core's arguments, once C is known."""
        opt, store = self.options, self.store
        self._args = (np.int64(G.VARIANTS[self.solver]), float(opt["ramp_s"]),
                      np.int64(opt["sv_threshold"]), np.int64(G.START_CODES[opt["ramp_start"]]),
                      np.int64(opt["clean_every"]), np.int64(opt["clean_keep"]), store.Cp,
                      store.Cn, max(store.Cp, store.Cn), self._tau,
                      np.int64(self._reprocess == "pair"))

    def begin(self):
        """The first blocks, held until both classes have appeared."""
        self._first_rows(lambda _blocks, seen: len(seen) >= 2)

    def _stream_rows(self, n):
        store = self.store
        ckd, cy, rowid, _ = self._block
        return g_stream_block(store.ss, store.kc, store.kd(), self.kp, ckd, cy, rowid,
                              self.ctl, self.region, self.gst, self.gfs,
                              np.int64(min(int(n), core.CHUNK)), *self._args)

    def _grow(self):
        super()._grow()
        region = np.zeros(self.store.cap, np.uint8)
        region[:self.region.size] = self.region
        self.region = region

    def _model_extra(self, model):
        """The in-memory run's model: rho 0, Table 1's counters."""
        model.rho = np.zeros(1)  # no bias ("rho 0", not "-0")
        g, st = G.LasvmGScalars(self), self.store.ss.core
        n = LasvmScalars(st).n_s
        model.counters.update(
            seen=g.seen, admitted_left=g.admitted_left, admitted_right=g.admitted_right,
            admitted_ramp=g.admitted_ramp, skipped_left=g.skipped_left,
            skipped_right=g.skipped_right, cleaned_left=g.cleaned_left,
            cleaned_right=g.cleaned_right, cleaned_ramp=g.cleaned_ramp,
            outliers_flagged=g.outliers_flagged,
            expansion_sv=int(np.count_nonzero(st.alpha[:n])),
            gap=g.gap, gap_target=g.gap_target)

    def _restore_extra(self, d):
        for name in EXTRA_FIELDS:
            setattr(self, name, np.array(d[name]))
        self._iteration_args()


def start_stream_g(source, params, *, zero_based=False, chunk_bytes=1 << 22, warn=None):
    """The LasvmGStreamRun of svm-train's parameters (``params.solver``: LASVM-G, -NC, -I or
    FULL SVM) over the file ``source``: the SOLVERS rows' stream start for the four."""
    p = params
    check_params(p)
    opt, reprocess = options(p)
    warn = warn or (lambda _m: None)
    kp = kernels.make_params(p.kernel_type, p.degree, p.gamma, p.coef0)

    def weighted(label):
        Cw = weighted_C(p, label, warn)
        return float(Cw[0]), float(Cw[1])

    config = dict(solver=p.solver, eps=float(p.eps), finish=bool(p.finish_tau),
                  C=float(p.C), weights={str(k): float(v) for k, v in sorted(p.weights.items())},
                  reprocess=reprocess, **{k: v for k, v in opt.items()})
    return LasvmGStreamRun(source, p, kp, weighted, solver=p.solver, options=opt,
                           reprocess=reprocess, eps=p.eps, cache_mb=p.cache_size,
                           finish=p.finish_tau, zero_based=zero_based, chunk_bytes=chunk_bytes,
                           config=config)
