"""Streaming LASVM-G, LASVM-NC, LASVM-I and FULL SVM: one sequential pass over a two-class
training file larger than memory (``svm-train --solver lasvm-g|lasvm-nc|lasvm-i|full-svm
--stream``).

The iteration is lasvm_g_core's (:func:`lasvm_g_core.iteration`: the admission test on
y f(x), PROCESS without a bias, the gap-driven REPROCESS loop, CLEAN every ``clean_every``
PROCESS calls), over the slot store of the LASVM stream (solvers/lasvm_stream.py: ``X [cap,
width]``, the online core's state and the row cache over the slots). Each example of the file
is written into a free slot, the iteration runs on it, then the slots that left the expansion
S are freed: the example itself when LASVM-I skips it, the non-SVs CLEAN removed. The store
holds S (the SVs plus at most ``clean_keep + clean_every`` non-SVs for LASVM-G/-NC/-I; FULL SVM
never cleans, so its S keeps every example PROCESSed: memory grows with the file) and one block.

At the end, as in memory: CLEAN(0) (every non-SV dropped; not FULL SVM) and, with
``--finish-tau``, REPROCESS until no variable violates by more than tau (the in-memory run's
end-of-epoch finishing, of its one epoch).

How it relates to the in-memory run (``--epochs 1``): that draws the examples in a random
order (``--seed``); the stream takes them in file order. The iteration's decisions depend on S
only (never on the examples outside it, nor on the cache, whose hits change no value), so
driven in file order the in-memory run makes the same steps and writes the same model file,
byte for byte (tests/test_stream.py). Labels: LIBSVM's order (first occurrence, {-1,+1}
swapped); blocks are held until both classes have appeared (at most SEED_ROWS_MAX rows); a
third label is an input error naming its line.
"""

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

from ..io.svmlight import iter_svmlight
from ..numerics import kernels
from ..numerics.classes import weighted_C
from ..numerics.data import squared_norms
from ..numerics.kernels import KernelData
from ..qp import REPROCESS_STEPS
from ..qp import lasvm_g_core as G
from ..qp import online_core as core
from .lasvm_nc import DEFAULTS
from .lasvm_stream import (S_NFREE, SEED_ROWS_MAX, Labels, Store, StreamError, check_one_pass,
                           StoredZeros, csr_concat, load_slot, model_from_store, release)

_NJIT = dict(cache=True, nogil=True)

ST_DONE, ST_GROW, ST_YIELD = 0, 1, 2


@numba.njit(**_NJIT)
def g_stream_block(ss, kc, skd, kp, ckd, cy, crowid, ctl, region, gst, gfs, n_iter, variant,
                   s, sv_thr, start, clean_every, clean_keep, Cp, Cn, C, tau, pair):
    """The iteration on the block's rows from ctl[0], each in a free slot, then the slots that
    left S freed; at most n_iter rows (the cache's width is fitted for that many insertions).
    Returns ST_DONE, ST_GROW (no free slot) or ST_YIELD."""
    st = ss.core
    nrows = cy.shape[0]
    it = 0
    while ctl[0] < nrows:
        if it >= n_iter:
            return ST_YIELD
        if ss.sist[S_NFREE] == 0:
            return ST_GROW
        a = ctl[0]
        q = load_slot(ss, kc, ckd, a, cy[a], crowid[a], Cp, Cn)
        region[q] = 0
        n0 = st.ist[core.I_NS]
        inserted = st.ist[core.I_INSERTED]
        G.iteration(st, kc, skd, kp, q, variant, s, sv_thr, start, Cp, Cn, C, tau, pair, region,
                    gst, gfs)
        if variant != G.V_FULL and gst[G.G_SINCE_CLEAN] >= clean_every:
            G.clean(st, kc, clean_keep, gst, region)
            gst[G.G_SINCE_CLEAN] = 0
        release(ss, kc, q, n0 + st.ist[core.I_INSERTED] - inserted)
        ctl[0] = a + 1
        it += 1
    return ST_DONE


@numba.njit(**_NJIT)
def g_end(ss, kc, skd, kp, region, gst, gfs, n_iter, variant, s, sv_thr, start, clean_every,
          clean_keep, Cp, Cn, C, tau, pair, mode):
    """lasvm_g_core.g_run's M_FINISH / M_PURGE / M_GAP over the store; after a purge, the
    slots CLEAN(0) removed are freed."""
    st = ss.core
    n0 = st.ist[core.I_NS]
    r = G.g_run(st, kc, skd, kp, region, gst, gfs, mode, n_iter, variant, s, sv_thr, start,
                clean_every, clean_keep, Cp, Cn, C, tau, pair)
    if mode == G.M_PURGE:
        for p in range(st.ist[core.I_NS], n0):
            q = st.pos2ex[p]
            ss.rowid[q] = -1
    return r


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


def train_stream_g(source, params, *, zero_based=False, info=None, warn=None, progress=None,
                   chunk_bytes=1 << 22, n_iter=core.CHUNK):
    """One pass of ``params.solver`` (LASVM-G, -NC, -I, FULL SVM) over ``source``. Returns an
    SVMModel (rho 0, with ``counters``)."""
    info = info or (lambda _m: None)
    warn = warn or (lambda _m: None)
    p = params
    check_params(p)
    opt, reprocess = options(p)
    kp = kernels.make_params(p.kernel_type, p.degree, p.gamma, p.coef0)
    tau = float(p.eps)
    labels = Labels(source)
    store = Store(p.cache_size)
    zeros = StoredZeros()
    store.ss.core.ist[core.I_NOBIAS] = 1
    region = np.zeros(store.cap, np.uint8)
    gst = np.zeros(G.N_GST, np.int64)
    gfs = np.zeros(G.N_GFS)
    ctl = np.zeros(1, np.int64)
    args = None
    label = None
    pending = []
    n_rows = 0
    bar = progress(f"{p.solver} stream") if progress else None

    def grow():
        nonlocal region
        store.grow()
        r = np.zeros(store.cap, np.uint8)
        r[:region.size] = region
        region = r

    def start():
        nonlocal label, args
        label = labels.order()
        if label.size < 2:
            raise StreamError("--stream supports two classes: the training file holds only "
                              f"label {label[0]}" if label.size else "empty training file")
        Cw = weighted_C(p, label, warn)
        store.Cp, store.Cn = float(Cw[0]), float(Cw[1])
        args = (np.int64(G.VARIANTS[p.solver]), float(opt["ramp_s"]),
                np.int64(opt["sv_threshold"]), np.int64(G.START_CODES[opt["ramp_start"]]),
                np.int64(opt["clean_every"]), np.int64(opt["clean_keep"]), store.Cp, store.Cn,
                max(store.Cp, store.Cn), tau, np.int64(reprocess == "pair"))
        store.set_fill(kp)

    def run_block(block):
        y, indptr, indices, values, rowid = block
        ckd = KernelData(np.zeros((0, 0)), indptr, store.columns(indices), values,
                         squared_norms(indptr, values))
        zeros.offer(indptr, indices, values, rowid)
        cy = np.where(np.trunc(y).astype(np.int64) == label[0], 1.0, -1.0)
        ctl[0] = 0
        while True:
            store.fit_width()
            st = g_stream_block(store.ss, store.kc, store.kd(), kp, ckd, cy, rowid, ctl, region,
                                gst, gfs, np.int64(n_iter), *args)
            zeros.keep(store.ss.rowid)
            if st == ST_GROW:
                grow()
            elif st == ST_DONE:
                break
        if bar:
            bar.update(int(gst[G.G_SEEN]), int(store.ss.core.ist[core.I_NS]))

    def end(mode, n=0):
        return g_end(store.ss, store.kc, store.kd(), kp, region, gst, gfs, np.int64(n), *args,
                     np.int64(mode))

    try:
        for data in iter_svmlight(source, zero_based=zero_based, chunk_bytes=chunk_bytes,
                                  check_norms=True):
            rowid = np.arange(n_rows, n_rows + data.n, dtype=np.int64)
            n_rows += data.n
            labels.add(data.y, rowid)
            block = (data.y, data.indptr, data.indices, data.values, rowid)
            del data
            if label is None:
                pending.append(block)
                held = sum(b[0].size for b in pending)
                if len(labels.seen) < 2:
                    if held >= SEED_ROWS_MAX:
                        raise StreamError(f"--stream: the first {held} rows hold one class "
                                          "only; both classes must appear near the start")
                    continue
                start()
                block = csr_concat(pending) if len(pending) > 1 else pending[0]
                pending = []
            run_block(block)
            del block
        if label is None:
            if not pending:
                raise StreamError("empty training file")
            start()
            run_block(csr_concat(pending) if len(pending) > 1 else pending[0])
            pending = []
        if p.finish_tau:
            store.fit_width(finishing=True)
            while not end(G.M_FINISH, core.CHUNK):
                pass
        end(G.M_PURGE if args[0] != G.V_FULL else G.M_GAP)
    finally:
        if bar:
            bar.close()
    model = model_from_store(store, p, label, n_rows, info, zeros)
    model.rho = np.zeros(1)  # no bias ("rho 0", not "-0")
    st = store.ss.core
    n = int(st.ist[core.I_NS])
    model.counters.update(
        seen=int(gst[G.G_SEEN]), admitted_left=int(gst[G.G_ADMIT_L]),
        admitted_right=int(gst[G.G_ADMIT_R]), admitted_ramp=int(gst[G.G_ADMIT_M]),
        skipped_left=int(gst[G.G_SKIP_L]), skipped_right=int(gst[G.G_SKIP_R]),
        cleaned_left=int(gst[G.G_CLEAN_L]), cleaned_right=int(gst[G.G_CLEAN_R]),
        cleaned_ramp=int(gst[G.G_CLEAN_M]), outliers_flagged=int(gst[G.G_FLAGGED]),
        expansion_sv=int(np.count_nonzero(st.alpha[:n])),
        gap=float(gfs[G.F_GAP]), gap_target=float(gfs[G.F_TARGET]))
    return model
