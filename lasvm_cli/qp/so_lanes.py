"""SO's (WSS2's) two scans, one pass each, in 8-wide vector lanes: LIBSVM's answers bit for bit.
Solver_NU's (qp/smo_nu.py) are the same scans with i, m and i's row taken by each position's
sign (:func:`nu_max_violators`, :func:`nu_partner`); MVP's pair (LIBSVM 2.71's maximal
violating pair, :func:`mvp_pair`) is the first scan keeping the I_low side's position too.

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

from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
from ..numerics.ordered import counted_loop, splat
from . import LOWER, UPPER
from .steps import TAU

LANES = 8  # positions per vector step: one AVX-512 register of doubles
INF = np.inf


def _lanes_best(builder, best, larger):
    """The best of the lanes' values; ``larger`` is the ordered compare that makes a value
    better ('>' for a max, '<' for a min)."""
    i64 = ir.IntType(64)
    values = [builder.extract_element(best, i64(k)) for k in range(LANES)]
    top = values[0]
    for v in values[1:]:
        top = builder.select(builder.fcmp_ordered(larger, v, top), v, top)
    return top


def _lanes_last(builder, best, where, larger):
    """Merge the lanes: (best value, largest position among the lanes holding it)."""
    i64 = ir.IntType(64)
    values = [builder.extract_element(best, i64(k)) for k in range(LANES)]
    positions = [builder.extract_element(where, i64(k)) for k in range(LANES)]
    top = _lanes_best(builder, best, larger)
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
        """A double (a Python float or an IR value) in every lane."""
        if isinstance(value, float):
            value = ir.Constant(self.f64, value)
        return splat(self.b, self.vec, value)

    def load(self, array, t, offset=None):
        """Eight elements of ``array`` from t (+ offset), widened exactly to double."""
        b = self.b
        at = t if offset is None else b.add(offset, t)
        elt = array.data.type.pointee
        p = b.bitcast(b.gep(array.data, [at], inbounds=True),
                      ir.VectorType(elt, LANES).as_pointer())
        size = elt.width // 8 if isinstance(elt, ir.IntType) else (8 if elt == self.f64 else 4)
        v = b.load(p, align=size)
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
        """Each lane's (best, where) after positions t..t+7: a value that compares ``better``
        (">=" / "<=": a later position wins a tie) replaces the lane's best."""
        take = self.b.fcmp_ordered(better, value, best)
        return (self.b.select(take, value, best),
                self.b.select(take, self.positions(t), where))


# What the violator scan keeps (each a (position, value) pair but SO's -M):
SO = 0   # (i, m, -M): the last largest -y_t G_t over I_up, the largest y_t G_t over I_low
NU = 1   # (ip, mp, inn, mn): the last largest -y_t G_t over I_up within each sign apart
MVP = 2  # (i, m, j, -M): SO's, and j the last position of the largest y_t G_t over I_low


def _violator_codegen(mode):
    """The violator scan over positions [0, n_vec), keeping what ``mode`` says."""
    def codegen(context, builder, signature, args):
        L = _Lanes(context, builder, signature, args)
        ya, Ga, sa = L.arrays
        minus_inf = L.splat(-INF)
        nowhere = ir.Constant(L.ivec, [-1] * LANES)

        def step(t, accs):
            y = L.load(ya, t)
            yG = builder.fmul(y, L.load(Ga, t))  # y = +-1: exact
            in_up, in_low = L.sides(y, L.load(sa, t))
            up = builder.select(in_up, builder.fneg(yG), minus_inf)
            if mode == NU:
                positive = builder.fcmp_ordered(">", y, L.splat(0.0))
                return [*L.keep(">=", builder.select(positive, up, minus_inf), *accs[:2], t),
                        *L.keep(">=", builder.select(positive, minus_inf, up), *accs[2:], t)]
            kept = list(L.keep(">=", up, *accs[:2], t))
            low = builder.select(in_low, yG, minus_inf)
            if mode == MVP:
                return kept + list(L.keep(">=", low, *accs[2:], t))
            best_low = accs[2]
            return kept + [builder.select(builder.fcmp_ordered(">", low, best_low), low, best_low)]

        start = [minus_inf, nowhere] * 2 if mode != SO else [minus_inf, nowhere, minus_inf]
        _, accs = counted_loop(builder, "violator", L.i64(0), args[3], LANES, start, step)
        top, i = _lanes_last(builder, accs[0], accs[1], ">")
        if mode == SO:
            values = [i, top, _lanes_best(builder, accs[2], ">")]
        else:
            top_2, i_2 = _lanes_last(builder, accs[2], accs[3], ">")
            values = [i, top, i_2, top_2]
        return context.make_tuple(builder, signature.return_type, values)
    return codegen


def _violator_typer(mode):
    def typer(typingctx, y, G, status, n_vec):
        if not (_is_vector(y, types.float64) and _is_vector(G, types.float64)
                and _is_vector(status, types.int8)):
            return None
        result = (types.Tuple((types.int64, types.float64, types.float64)) if mode == SO else
                  types.Tuple((types.int64, types.float64) * 2))
        return result(y, G, status, types.int64), _violator_codegen(mode)
    return typer


# The violator scan over positions [0, n_vec), n_vec a multiple of LANES, for each mode
_violator_lanes = intrinsic(_violator_typer(SO))
_nu_violator_lanes = intrinsic(_violator_typer(NU))
_mvp_lanes = intrinsic(_violator_typer(MVP))


def _partner_codegen(nu):
    """The partner scan: (j, its objective); ``nu`` (Solver_NU): i's row, QD_i and m by the
    sign of each position (rows at bp and bn), and also the largest m_y + y_t G_t over I_low
    (LIBSVM's max(Gmaxp + Gmaxp2, Gmaxn + Gmaxn2): rounding is monotonic)."""
    def codegen(context, builder, signature, args):
        L = _Lanes(context, builder, signature, args)
        ya, Ga, sa, QDa, Ka = L.arrays
        zero, two, tau = L.splat(0.0), L.splat(2.0), L.splat(TAU)
        plus_inf, minus_inf = L.splat(INF), L.splat(-INF)
        if nu:
            bp, bn = args[5], args[6]
            QDp, QDn, Gmaxp, Gmaxn = (L.splat(v) for v in args[7:11])
        else:
            bp = args[5]
            QDi, Gmax = L.splat(args[6]), L.splat(args[7])

        def step(t, accs):
            y = L.load(ya, t)
            yG = builder.fmul(y, L.load(Ga, t))
            if nu:
                positive = builder.fcmp_ordered(">", y, zero)
                Gmax_y = builder.select(positive, Gmaxp, Gmaxn)
                QD_i = builder.select(positive, QDp, QDn)
                K = builder.select(positive, L.load(Ka, t, offset=bp), L.load(Ka, t, offset=bn))
            else:
                Gmax_y, QD_i, K = Gmax, QDi, L.load(Ka, t, offset=bp)
            grad_diff = builder.fadd(Gmax_y, yG)  # m - G_t for y_t = -1: the same rounding
            _, in_low = L.sides(y, L.load(sa, t))
            quad_coef = builder.fsub(builder.fadd(QD_i, L.load(QDa, t)), builder.fmul(two, K))
            quad_coef = builder.select(builder.fcmp_ordered(">", quad_coef, zero), quad_coef, tau)
            obj_diff = builder.fdiv(builder.fneg(builder.fmul(grad_diff, grad_diff)), quad_coef)
            eligible = builder.and_(in_low, builder.fcmp_ordered(">", grad_diff, zero))
            kept = list(L.keep("<=", builder.select(eligible, obj_diff, plus_inf), *accs[:2], t))
            if nu:
                gain = builder.select(in_low, grad_diff, minus_inf)
                kept.append(builder.select(builder.fcmp_ordered(">", gain, accs[2]), gain, accs[2]))
            return kept

        start = [plus_inf, ir.Constant(L.ivec, [-1] * LANES)] + ([minus_inf] if nu else [])
        _, accs = counted_loop(builder, "partner", L.i64(0), args[-1], LANES, start, step)
        top, j = _lanes_last(builder, accs[0], accs[1], "<")
        values = [j, top] + ([_lanes_best(builder, accs[2], ">")] if nu else [])
        return context.make_tuple(builder, signature.return_type, values)
    return codegen


def _rows_ok(y, G, status, QD, K):
    return (_is_vector(y, types.float64) and _is_vector(G, types.float64)
            and _is_vector(status, types.int8) and _is_vector(QD, types.float64)
            and (_is_vector(K, types.float32) or _is_vector(K, types.float64)))


@intrinsic
def _partner_lanes(typingctx, y, G, status, QD, K, bi, QDi, Gmax, n_vec):
    """(j, its objective) over positions [0, n_vec), row i in K[bi:] (see the module)."""
    if not _rows_ok(y, G, status, QD, K):
        return None
    sig = types.Tuple((types.int64, types.float64))(
        y, G, status, QD, K, types.int64, types.float64, types.float64, types.int64)
    return sig, _partner_codegen(False)


@intrinsic
def _nu_partner_lanes(typingctx, y, G, status, QD, K, bp, bn, QDp, QDn, Gmaxp, Gmaxn, n_vec):
    """(j, its objective, the largest gain) over positions [0, n_vec), rows ip and inn in K[bp:]
    and K[bn:] (see the module)."""
    if not _rows_ok(y, G, status, QD, K):
        return None
    f, i = types.float64, types.int64
    sig = types.Tuple((i, f, f))(y, G, status, QD, K, i, i, f, f, f, f, i)
    return sig, _partner_codegen(True)


def _is_vector(x, dtype):
    return isinstance(x, types.Array) and x.ndim == 1 and x.layout == "C" and x.dtype == dtype


@numba.njit(inline="always", cache=True, nogil=True)
def _sides(y, s):
    if y > 0:
        return s != UPPER, s != LOWER
    return s != LOWER, s != UPPER


@numba.njit(inline="always", cache=True, nogil=True)
def _own_value(y, G, t, best, sign):
    """A lanes' best and its position t made exact: (t, sign * y_t G_t), the value at t itself
    (+0.0 and -0.0 tie in the lanes' compares, so the best may carry another lane's sign of
    zero), or (-1, -inf) where no eligible position held one (ineligible positions hold -inf;
    a lane may point at one)."""
    if best > -INF:
        return t, sign * (y[t] * G[t])
    return -1, -INF


@numba.njit(cache=True, nogil=True)
def max_violator(st, n):
    """LIBSVM's i over positions [0, n) of the SMO state st: (i, m, -M) with m = max over I_up
    of -y_t G_t (i the last position holding it; -1 and -inf when I_up is empty) and -M = max
    over I_low of y_t G_t (-inf when empty)."""
    y, G, status = st.y, st.G, st.status
    n_vec = n - n % LANES
    i, m, low = _violator_lanes(y, G, status, n_vec)
    i, m = _own_value(y, G, i, m, -1.0)
    for t in range(n_vec, n):
        yG = y[t] * G[t]
        in_up, in_low = _sides(y[t], status[t])
        if in_up and -yG >= m:
            i, m = t, -yG
        if in_low and yG > low:
            low = yG
    return i, m, low


@numba.njit(cache=True, nogil=True)
def mvp_pair(st, n):
    """LIBSVM 2.71's maximal violating pair over positions [0, n): (i, m, j, -M), i as
    max_violator's and j the last position of -M = max over I_low of y_t G_t (-1 and -inf
    where a side is empty)."""
    y, G, status = st.y, st.G, st.status
    n_vec = n - n % LANES
    i, m, j, low = _mvp_lanes(y, G, status, n_vec)
    i, m = _own_value(y, G, i, m, -1.0)
    j, low = _own_value(y, G, j, low, 1.0)
    for t in range(n_vec, n):
        yG = y[t] * G[t]
        in_up, in_low = _sides(y[t], status[t])
        if in_up and -yG >= m:
            i, m = t, -yG
        if in_low and yG >= low:
            j, low = t, yG
    return i, m, j, low


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


@numba.njit(cache=True, nogil=True)
def nu_max_violators(st, n):
    """Solver_NU's first scan over positions [0, n): (ip, mp, inn, mn), the last largest
    -y_t G_t over I_up among y = +1 (ip) and among y = -1 (inn); -1 and -inf where none."""
    y, G, status = st.y, st.G, st.status
    n_vec = n - n % LANES
    ip, mp, inn, mn = _nu_violator_lanes(y, G, status, n_vec)
    ip, mp = _own_value(y, G, ip, mp, -1.0)
    inn, mn = _own_value(y, G, inn, mn, -1.0)
    for t in range(n_vec, n):
        up = -(y[t] * G[t])
        if _sides(y[t], status[t])[0]:
            if y[t] > 0 and up >= mp:
                ip, mp = t, up
            elif y[t] < 0 and up >= mn:
                inn, mn = t, up
    return ip, mp, inn, mn


@numba.njit(cache=True, nogil=True)
def nu_partner(st, c, bp, bn, ip, inn, Gmaxp, Gmaxn, n):
    """Solver_NU's second scan over positions [0, n): (i, j, violation), j the last smallest
    -(m_y + y_t G_t)^2 / a_it over I_low with m_y + y_t G_t > 0, i and m_y by t's sign (ip and
    Gmaxp, rows at c.buf[bp:], for y = +1; inn, Gmaxn, c.buf[bn:] for y = -1), i taken from j's
    sign; the violation is the largest m_y + y_t G_t over I_low."""
    y, G, status, QD, K = st.y, st.G, st.status, st.QD, c.buf
    n_vec = n - n % LANES
    QDp = QD[max(ip, 0)]  # (unused where there is no ip: m_y = -inf there, nothing qualifies)
    QDn = QD[max(inn, 0)]
    j, best, gain = _nu_partner_lanes(y, G, status, QD, K, bp, bn, QDp, QDn, Gmaxp, Gmaxn, n_vec)
    if best == INF:
        j = -1
    for t in range(n_vec, n):
        pos = y[t] > 0
        grad_diff = (Gmaxp if pos else Gmaxn) + y[t] * G[t]
        movable = _sides(y[t], status[t])[1]
        quad_coef = (QDp if pos else QDn) + QD[t] - 2.0 * np.float64(K[(bp if pos else bn) + t])
        if not quad_coef > 0.0:
            quad_coef = TAU
        obj_diff = -(grad_diff * grad_diff) / quad_coef
        if movable and grad_diff > 0.0 and obj_diff <= best:
            j, best = t, obj_diff
        if movable and grad_diff > gain:
            gain = grad_diff
    y_j = y[max(j, 0)]  # read on every path (a last use in one branch only keeps the pairs)
    return (ip if j >= 0 and y_j > 0 else inn), j, gain
