"""SO's (WSS2's) two scans, one pass each, in 8-wide vector lanes: LIBSVM's answers bit for bit.

LIBSVM's ``select_working_set`` walks the active positions twice, branching on each one's
sign and status: the maximal violator i (the last t of largest -y_t G_t over I_up), then its
partner j (the last t of smallest -(m + y_t G_t)^2 / a_it over I_low with m + y_t G_t > 0).
Here each walk is one pass over the arrays, eight positions at a time: every lane keeps its
best value so far and the last position holding it (LIBSVM's ``>=`` / ``<=``, so a later
position wins a tie), and the lanes are merged at the end: the best value, and among the lanes
holding it the largest position. Float equality ties -0.0 with +0.0, as LIBSVM's compares do,
so the position found is LIBSVM's. The values are computed with LIBSVM's operations in its
order (no FMA), positions past the last multiple of eight one at a time after the lanes.
Ineligible positions carry -inf (i) or +inf (j) and never hold a finite best.

Why: written as loops over scalars these scans are each several passes (candidates written
to a work array, a max, a search for its last index); on banana's many cheap iterations they
were 60% of the time.
"""

import numba
from llvmlite import ir
from numba import types
from numba.extending import intrinsic
import numpy as np

from .. import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
from ..ordered import counted_loop, splat
from . import LOWER, UPPER
from .steps import TAU

LANES = 8  # positions per vector step: one AVX-512 register of doubles
INF = np.inf


def _lanes_last(builder, best, where, larger):
    """Merge the lanes: (best value, largest position among the lanes holding it); ``larger``
    is the ordered compare that makes a value better ('>' for a max, '<' for a min)."""
    i64 = ir.IntType(64)
    values = [builder.extract_element(best, i64(k)) for k in range(LANES)]
    positions = [builder.extract_element(where, i64(k)) for k in range(LANES)]
    top = values[0]
    for v in values[1:]:
        top = builder.select(builder.fcmp_ordered(larger, v, top), v, top)
    last = i64(-1)
    for v, p in zip(values, positions):
        take = builder.and_(builder.fcmp_ordered("==", v, top),
                            builder.icmp_signed(">", p, last))
        last = builder.select(take, p, last)
    return top, last


class _Lanes:
    """Loads and the sign/status tests both scans share."""

    def __init__(self, context, builder, signature, args):
        self.b = builder
        self.arrays = [context.make_array(t)(context, builder, v)
                       for t, v in zip(signature.args, args) if isinstance(t, types.Array)]
        self.i64 = ir.IntType(64)
        self.f64 = ir.DoubleType()
        self.vec = ir.VectorType(self.f64, LANES)
        self.ivec = ir.VectorType(self.i64, LANES)
        self.offsets = ir.Constant(self.ivec, list(range(LANES)))

    def splat(self, value):
        return splat(self.b, self.vec, ir.Constant(self.f64, value)
                      if isinstance(value, float) else value)

    def load(self, array, t, offset=None):
        """Eight elements of ``array`` from t (+ offset), widened exactly to double."""
        b = self.b
        at = t if offset is None else b.add(offset, t)
        elt = array.data.type.pointee
        p = b.bitcast(b.gep(array.data, [at], inbounds=True), ir.VectorType(elt, LANES).as_pointer())
        v = b.load(p, align=elt.width // 8 if isinstance(elt, ir.IntType) else
                   (8 if elt == self.f64 else 4))
        return b.fpext(v, self.vec) if isinstance(elt, ir.FloatType) else v

    def positions(self, t):
        return self.b.add(splat(self.b, self.ivec, t), self.offsets)

    def sides(self, y, status):
        """(in I_up, in I_low) per lane: y_t = +1 and a_t < C_t, or y_t = -1 and a_t > 0; the
        mirror image."""
        b = self.b
        i8 = status.type.element
        positive = b.fcmp_ordered(">", y, self.splat(0.0))
        not_upper = b.icmp_signed("!=", status, splat(b, status.type, ir.Constant(i8, UPPER)))
        not_lower = b.icmp_signed("!=", status, splat(b, status.type, ir.Constant(i8, LOWER)))
        return (b.select(positive, not_upper, not_lower),
                b.select(positive, not_lower, not_upper))

    def keep(self, better, value, best, where, t):
        take = self.b.fcmp_ordered(better, value, best)
        return (self.b.select(take, value, best),
                self.b.select(take, self.positions(t), where))


def _violator_codegen(context, builder, signature, args):
    L = _Lanes(context, builder, signature, args)
    ya, Ga, sa = L.arrays
    minus_inf = L.splat(-INF)

    def step(t, accs):
        best_up, where_up, best_low = accs
        y = L.load(ya, t)
        yG = builder.fmul(y, L.load(Ga, t))  # y = +-1: exact
        in_up, in_low = L.sides(y, L.load(sa, t))
        up = builder.select(in_up, builder.fneg(yG), minus_inf)
        low = builder.select(in_low, yG, minus_inf)
        best_up, where_up = L.keep(">=", up, best_up, where_up, t)
        best_low = builder.select(builder.fcmp_ordered(">", low, best_low), low, best_low)
        return [best_up, where_up, best_low]

    start = [minus_inf, ir.Constant(L.ivec, [-1] * LANES), minus_inf]
    _, (best_up, where_up, best_low) = counted_loop(builder, "violator", L.i64(0), args[3],
                                                     LANES, start, step)
    top, i = _lanes_last(builder, best_up, where_up, ">")
    low, _ = _lanes_last(builder, best_low, where_up, ">")
    return context.make_tuple(builder, signature.return_type, [i, top, low])


@intrinsic
def _violator_lanes(typingctx, y, G, status, n_vec):
    """(i, m, -M) over positions [0, n_vec), n_vec a multiple of LANES (see the module)."""
    if not (_is_vector(y, types.float64) and _is_vector(G, types.float64)
            and _is_vector(status, types.int8)):
        return None
    sig = types.Tuple((types.int64, types.float64, types.float64))(y, G, status, types.int64)
    return sig, _violator_codegen


def _partner_codegen(context, builder, signature, args):
    L = _Lanes(context, builder, signature, args)
    ya, Ga, sa, QDa, Ka = L.arrays
    QDi, Gmax = L.splat(args[6]), L.splat(args[7])
    zero, two, tau, plus_inf = L.splat(0.0), L.splat(2.0), L.splat(TAU), L.splat(INF)

    def step(t, accs):
        best, where = accs
        y = L.load(ya, t)
        grad_diff = builder.fadd(Gmax, builder.fmul(y, L.load(Ga, t)))
        _, in_low = L.sides(y, L.load(sa, t))
        K = L.load(Ka, t, offset=args[5])
        quad_coef = builder.fsub(builder.fadd(QDi, L.load(QDa, t)), builder.fmul(two, K))
        quad_coef = builder.select(builder.fcmp_ordered(">", quad_coef, zero), quad_coef, tau)
        obj_diff = builder.fdiv(builder.fneg(builder.fmul(grad_diff, grad_diff)), quad_coef)
        eligible = builder.and_(in_low, builder.fcmp_ordered(">", grad_diff, zero))
        return list(L.keep("<=", builder.select(eligible, obj_diff, plus_inf), best, where, t))

    start = [plus_inf, ir.Constant(L.ivec, [-1] * LANES)]
    _, (best, where) = counted_loop(builder, "partner", L.i64(0), args[8], LANES, start, step)
    top, j = _lanes_last(builder, best, where, "<")
    return context.make_tuple(builder, signature.return_type, [j, top])


@intrinsic
def _partner_lanes(typingctx, y, G, status, QD, K, bi, QDi, Gmax, n_vec):
    """(j, its objective) over positions [0, n_vec), row i in K[bi:] (see the module)."""
    if not (_is_vector(y, types.float64) and _is_vector(G, types.float64)
            and _is_vector(status, types.int8) and _is_vector(QD, types.float64)
            and (_is_vector(K, types.float32) or _is_vector(K, types.float64))):
        return None
    sig = types.Tuple((types.int64, types.float64))(
        y, G, status, QD, K, types.int64, types.float64, types.float64, types.int64)
    return sig, _partner_codegen


def _is_vector(x, dtype):
    return isinstance(x, types.Array) and x.ndim == 1 and x.layout == "C" and x.dtype == dtype


@numba.njit(inline="always", cache=True, nogil=True)
def _sides(y, s):
    if y > 0:
        return s != UPPER, s != LOWER
    return s != LOWER, s != UPPER


@numba.njit(cache=True, nogil=True)
def max_violator(st, n):
    """LIBSVM's i over positions [0, n) of the SMO state st: (i, m, -M) with m = max over I_up
    of -y_t G_t (i the last position holding it; -1 and -inf when I_up is empty) and -M = max
    over I_low of y_t G_t (-inf when empty)."""
    y, G, status = st.y, st.G, st.status
    n_vec = n - n % LANES
    i, m, low = _violator_lanes(y, G, status, n_vec)
    if m > -INF:
        m = -(y[i] * G[i])  # the value at i itself: +0.0 and -0.0 tie in the lanes' max
    else:
        i = -1  # (ineligible positions hold -inf; their lanes may point at one)
    for t in range(n_vec, n):
        yG = y[t] * G[t]
        in_up, in_low = _sides(y[t], status[t])
        if in_up and -yG >= m:
            i, m = t, -yG
        if in_low and yG > low:
            low = yG
    return i, m, low


@numba.njit(cache=True, nogil=True)
def so_partner(st, c, bi, i, Gmax, n):
    """WSS2's j for i over positions [0, n) (row i is the cache's c.buf[bi + t]): the last t
    in I_low with m + y_t G_t > 0 of smallest -(m + y_t G_t)^2 / a_it, a_it = QD_i + QD_t -
    2 K_it (TAU when <= 0); -1 when none qualifies."""
    y, G, status, QD, K = st.y, st.G, st.status, st.QD, c.buf
    n_vec = n - n % LANES
    QDi = QD[i]
    j, best = _partner_lanes(y, G, status, QD, K, bi, QDi, Gmax, n_vec)
    if best == INF:
        j = -1
    for t in range(n_vec, n):
        grad_diff = Gmax + y[t] * G[t]
        in_low = _sides(y[t], status[t])[1]
        quad_coef = QDi + QD[t] - 2.0 * np.float64(K[bi + t])
        if not quad_coef > 0.0:
            quad_coef = TAU
        obj_diff = -(grad_diff * grad_diff) / quad_coef
        if in_low and grad_diff > 0.0 and obj_diff <= best:
            j, best = t, obj_diff
    return j
