"""All-in-one multi-class machines without bias, LLW and Crammer-Singer (qp/s2do.py): the batch
S2DO adapter, and the result both solvers (batch and online, solvers/s2do_online.py) return.

The problem: the l rows of ``kd`` with class indices ``yc`` in [0, d). The result is a
SolverResult with d coefficient rows over the l examples, decision value
f_c(x) = sum_n coef[c, n] K(x_n, x), rho = 0:

* LLW: f_c = -sum_n (a_{n,c} - abar_n) K(x_n, .), abar_n = S_n / d (corrections 004-3: the
  scores are the negated alphas; the abar term is the same for every class, so the arg-max is
  argmin_c sum_n a_{n,c} K);
* CS: f_c = sum_n beta_n^c K(x_n, .), beta_n^{y_n} = S_n, beta_n^c = -a_{n,c} (corrections 004-4).

``obj`` is LIBSVM's sign convention, -D (the minimised 0.5 a'Qa - v'a); ``counters`` carry the
dual D itself.
"""


import numpy as np

from ..base.clock import Clock
from ..numerics import cache as kc
from ..numerics.kernels import kernel_diagonal
from ..qp import s2do as core
from .result import SolverResult

CHUNK = 1000  # iterations per jitted call


def coefficients(kind, A, S, yc):
    """The d x l coefficient rows of f_c from alphas A [l, d] and sums S [l] (example order)."""
    l, d = A.shape
    if kind == core.LLW:
        coef = -(A - S[:, None] / d).T
    else:
        coef = -A.T
        coef[yc, np.arange(l)] = S
    return coef + 0.0  # no -0 in model files


def result_from_state(st, perm, kind, counters, hit_max_iter=False, kkt_hi=None):
    """SolverResult from a state whose positions ``perm`` map to examples; gradients of the
    positions with alphas must be exact (the dual), those of [0, kkt_hi) (default: all) for
    the KKT violation (the online solver's gradients outside W are not kept)."""
    l = perm.shape[0]
    A = np.zeros_like(st.A)
    S = np.zeros(l)
    yc = np.zeros(l, np.int64)
    A[perm] = st.A
    S[perm] = st.S
    yc[perm] = st.yc
    dual = float(core.dual_value(st, l))
    kkt_hi = l if kkt_hi is None else kkt_hi
    coef = coefficients(kind, A, S, yc)
    C = core.S2doScalars(st).C
    n_sv = int(np.count_nonzero(A > 0))
    n_bsv = int(np.count_nonzero(A >= C)) if kind == core.LLW else int(np.count_nonzero(S >= C))
    counters = dict(counters, dual=dual, kkt_violation=float(core.kkt_violation(st, kkt_hi)),
                    support_patterns=int(np.count_nonzero(S > 0)))
    return SolverResult(coef=coef, rho=np.zeros(coef.shape[0]), obj=-dual,
                        n_iter=int(counters.get("iterations", 0)), n_sv=n_sv, n_bsv=n_bsv,
                        hit_max_iter=hit_max_iter, counters=counters)


def diagonal(kd, kp, l):
    diag = np.zeros(l)
    kernel_diagonal(kd, kp, diag)
    return diag


def solve_batch(kd, kp, yc, d, C, kind, *, eps=1e-3, shrinking=True, cache_mb=100.0,
                max_iter=None, target=1.0, progress=None, cache_dtype=np.float32, trace=None,
                chunk=CHUNK):
    """Batch S2DO (Algorithm 3 with shrinking) to a KKT violation below ``eps``.
    ``trace(seconds, kernel_evals, dual)`` is called every ``chunk`` iterations (the dual is
    the sum of the steps' exact increases, D(0) = 0)."""
    clock = Clock()
    yc = np.ascontiguousarray(yc, np.int64)
    l = yc.shape[0]
    st = core.make_state(kind, yc, d, diagonal(kd, kp, l), float(C), target=target, eps=eps,
                         shrinking=shrinking, max_iter=max_iter)
    c = kc.make_cache(l, cache_mb, cache_dtype)
    status = core.RUNNING
    while status == core.RUNNING:
        status = core.s2do_run(st, c, kd, kp, chunk)
        if trace is not None:
            trace(clock.seconds(), int(c.stats[kc.KERNEL_EVALS]),
                  core.S2doScalars(st).gain)
        if progress is not None:
            progress(core.S2doScalars(st).iterations, core.S2doScalars(st).violation)
    if core.S2doScalars(st).active < l:  # stopped at max_iter while shrunk: exact gradients for D
        core.unshrink(st, c, kd, kp)
    sc = core.S2doScalars(st)
    counters = dict(iterations=sc.iterations, shrinks=sc.shrinks,
                    shrunk_examples=sc.shrunk_examples, reconstructions=sc.reconstructions,
                    triangle_steps=sc.triangle_steps,
                    seconds=clock.stop(), cache_rows=int(c.meta[kc.N_SLOTS]))
    counters.update(kc.cache_stats(c))
    counters["kernel_evals"] += l  # the diagonal
    return result_from_state(st, c.perm, kind, counters,
                             hit_max_iter=status == core.MAX_ITER_REACHED)


def report_allinone(res, info):
    """What svm-train prints of an all-in-one machine's training (LIBSVM's lines and the
    dual, the KKT violation and the support patterns)."""
    c = res.counters
    info(f"optimization finished, #iter = {res.n_iter}")
    info(f"obj = {res.obj:f}, dual = {c['dual']:f}, KKT violation = {c['kkt_violation']:g}")
    info(f"nSV = {res.n_sv}, nBSV = {res.n_bsv}, support patterns = {c['support_patterns']}")



def from_params(machine, params, progress=None):
    """solve_batch with svm-train's parameters (--multiclass llw|cs, --solver smo): -c, -e, -h,
    -m and the declared options of "s2do" (solvers: --max-iter, --llw-target)."""
    from . import solver_kwargs

    return solve_batch(machine.kd, machine.kp, machine.y, machine.n_classes, params.C, core.KINDS[params.multiclass],
                       eps=params.eps, shrinking=bool(params.shrinking),
                       cache_mb=params.cache_size, progress=progress,
                       **solver_kwargs(params, "s2do"))
