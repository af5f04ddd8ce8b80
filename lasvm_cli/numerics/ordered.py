"""Floating-point arithmetic in an order the source fixes: kernel values, and the bias-free gap.

Why: with fast-math's ``reassoc`` / ``contract`` flags LLVM chooses the summation order of a
dot product and where to fuse multiply-adds, and it chooses differently when a function is
compiled on its own (callers then link its cached code) than when it is inlined into a
caller. Kernel values then differ in the last bit with the JIT cache's compile history (which
process compiled which function first), and so do objectives and models (budgetfood
epsilon-SVR: -15652.077779 against ...785). Here nothing carries those flags; the order is
written out, so every compile context computes the same numbers:

- :func:`dense_dots`: x'X[targets[t]] for many targets, each dot summed column by column
  from 0.0 without FMA, which is LIBSVM's ``dot`` exactly (dense rows add exact zeros where
  LIBSVM's sparse rows skip a feature; that changes no sum). Speed comes from computing eight
  targets at once (:func:`_dots8`: four columns of four targets per vector operation) instead
  of letting LLVM reorder one target's sum.
- :func:`fma`: a fused multiply-add wherever the source writes one (the exp polynomial).
- :func:`gap_pass`: the bias-free gap loop's pass (qp/lasvm_g_core.py) in 8-wide vector
  lanes: the gradient update, the duality gap summed lane by lane in a fixed order, and the
  first maximal KKT violator; :func:`gap_pass_pair` the same with the largest violator of
  each direction apart (the two-variable REPROCESS step's pair).
"""

import numba
from llvmlite import ir
from numba import types
from numba.extending import intrinsic
import numpy as np
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)

BLOCK = 8  # targets per _dots8 call: two 4-wide accumulators, enough to hide the add latency


@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c rounded once (LLVM's llvm.fma: one instruction on x86-64 with FMA)."""
    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return types.float64(types.float64, types.float64, types.float64), codegen


EXP_LANES = 8  # elements per vector step of exp_lanes: one AVX-512 register of doubles
# kernels._exp_block's constants (its docstring says why these)
EXP_COEFFS = (1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
              1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5,
              1.0, 1.0)
LOG2E, LN2_HI, LN2_LO = 1.4426950408889634, 0.693145751953125, 1.4286068203094173e-06


def _declare(module, fnty, name):
    """The function ``name`` of the module, declared if it is not there yet (an LLVM
    intrinsic: llvmlite's public IR API only)."""
    function = module.globals.get(name)
    return function if function is not None else ir.Function(module, fnty, name)


def _exp_lanes_codegen(context, builder, signature, args):
    xa = context.make_array(signature.args[0])(context, builder, args[0])
    n_vec = args[1]
    W = EXP_LANES
    i64, f64 = ir.IntType(64), ir.DoubleType()
    vec = ir.VectorType(f64, W)
    ivec = ir.VectorType(i64, W)
    mod = builder.module
    floor = _declare(mod, ir.FunctionType(vec, [vec]), f"llvm.floor.v{W}f64")
    fma_v = _declare(mod, ir.FunctionType(vec, [vec, vec, vec]), f"llvm.fma.v{W}f64")

    def const(v):
        return ir.Constant(vec, [float(v)] * W)

    def step(t, accs):
        ptr = builder.bitcast(builder.gep(xa.data, [t], inbounds=True), vec.as_pointer())
        v = builder.load(ptr, align=8)
        low = const(-708.0)
        v = builder.select(builder.fcmp_ordered("<", v, low), low, v)
        k = builder.call(floor, [builder.fadd(builder.fmul(v, const(LOG2E)), const(0.5))])
        r = builder.fsub(builder.fsub(v, builder.fmul(k, const(LN2_HI))),
                         builder.fmul(k, const(LN2_LO)))
        p = const(EXP_COEFFS[0])
        for c in EXP_COEFFS[1:]:
            p = builder.call(fma_v, [p, r, const(c)])
        bits = builder.shl(builder.add(builder.fptosi(k, ivec), ir.Constant(ivec, [1023] * W)),
                           ir.Constant(ivec, [52] * W))
        builder.store(builder.fmul(p, builder.bitcast(bits, vec)), ptr, align=8)
        return accs

    counted_loop(builder, "exp", i64(0), n_vec, W, [], step)
    return context.get_dummy_value()


@intrinsic
def _exp_lanes(typingctx, x, n_vec):
    if not (isinstance(x, types.Array) and x.ndim == 1 and x.dtype == types.float64
            and x.layout == "C"):
        return None
    return types.void(x, types.int64), _exp_lanes_codegen


def splat(builder, vec, value):
    """``value`` in every lane of a vector of type ``vec`` (IR builder helper, as counted_loop;
    qp/so_lanes.py uses both)."""
    i32 = ir.IntType(32)
    v = builder.insert_element(ir.Constant(vec, ir.Undefined), value, i32(0))
    return builder.shuffle_vector(v, ir.Constant(vec, ir.Undefined),
                                  ir.Constant(ir.VectorType(i32, vec.count), [0] * vec.count))


def _transpose4(builder, rows):
    """Four 4-vectors (one per target, four consecutive columns) -> four 4-vectors (one per
    column, four targets)."""
    i32 = ir.IntType(32)

    def mask(idx):
        return ir.Constant(ir.VectorType(i32, 4), idx)

    r0, r1, r2, r3 = rows
    t0 = builder.shuffle_vector(r0, r1, mask([0, 4, 2, 6]))
    t1 = builder.shuffle_vector(r0, r1, mask([1, 5, 3, 7]))
    t2 = builder.shuffle_vector(r2, r3, mask([0, 4, 2, 6]))
    t3 = builder.shuffle_vector(r2, r3, mask([1, 5, 3, 7]))
    return [builder.shuffle_vector(t0, t2, mask([0, 1, 4, 5])),
            builder.shuffle_vector(t1, t3, mask([0, 1, 4, 5])),
            builder.shuffle_vector(t0, t2, mask([2, 3, 6, 7])),
            builder.shuffle_vector(t1, t3, mask([2, 3, 6, 7]))]


def counted_loop(builder, name, start, stop, step, accs_in, body):
    """Emit ``for c in range(start, stop, step)`` carrying the values accs_in through it;
    ``body(c, accs)`` emits one iteration and returns the new values. Returns (c, accs) after
    the loop."""
    i64 = ir.IntType(64)
    before = builder.block
    head = builder.append_basic_block(name + ".head")
    loop = builder.append_basic_block(name + ".body")
    after = builder.append_basic_block(name + ".exit")
    builder.branch(head)
    builder.position_at_end(head)
    c = builder.phi(i64)
    accs = [builder.phi(a.type) for a in accs_in]
    c.add_incoming(start, before)
    for phi, a in zip(accs, accs_in):
        phi.add_incoming(a, before)
    builder.cbranch(builder.icmp_signed("<", c, stop), loop, after)
    builder.position_at_end(loop)
    new = body(c, accs)
    c_next = builder.add(c, i64(step))
    latch = builder.block
    builder.branch(head)
    c.add_incoming(c_next, latch)
    for phi, a in zip(accs, new):
        phi.add_incoming(a, latch)
    builder.position_at_end(after)
    return c, accs


def _dots8_codegen(context, builder, signature, args):
    x_ty, X_ty, targets_ty = signature.args[:3]
    xa = context.make_array(x_ty)(context, builder, args[0])
    Xa = context.make_array(X_ty)(context, builder, args[1])
    ta = context.make_array(targets_ty)(context, builder, args[2])
    t, d = args[3], args[4]
    i64, f64 = ir.IntType(64), ir.DoubleType()
    vec = ir.VectorType(f64, 4)
    elt = Xa.data.type.pointee  # double or float (X32: widened exactly to double)
    n_cols = builder.extract_value(Xa.shape, 1)
    rows = []
    for k in range(BLOCK):
        target = builder.load(builder.gep(ta.data, [builder.add(t, i64(k))], inbounds=True))
        target = builder.sext(target, i64) if target.type.width < 64 else target
        rows.append(builder.gep(Xa.data, [builder.mul(target, n_cols)], inbounds=True))

    def load_x(c):
        return splat(builder, vec, builder.load(builder.gep(xa.data, [c], inbounds=True)))

    def widened(value, vector_type):
        return builder.fpext(value, vector_type) if elt != f64 else value

    def four_columns(c, accs):
        # one vector load per target, transposed to one vector per column; each accumulator
        # lane (one target) adds its four products in column order
        xs = [load_x(builder.add(c, i64(j))) for j in range(4)]
        new = []
        for g, acc in enumerate(accs):
            loaded = []
            for k in range(4):
                p = builder.gep(rows[4 * g + k], [c], inbounds=True)
                v = builder.load(builder.bitcast(p, ir.VectorType(elt, 4).as_pointer()),
                                 align=4 if elt != f64 else 8)
                loaded.append(widened(v, vec))
            for j, column in enumerate(_transpose4(builder, loaded)):
                acc = builder.fadd(acc, builder.fmul(xs[j], column))
            new.append(acc)
        return new

    def one_column(c, accs):
        xc = load_x(c)
        new = []
        for g, acc in enumerate(accs):
            column = ir.Constant(vec, ir.Undefined)
            for k in range(4):
                e = builder.load(builder.gep(rows[4 * g + k], [c], inbounds=True))
                column = builder.insert_element(column, widened(e, f64), i64(k))
            new.append(builder.fadd(acc, builder.fmul(xc, column)))
        return new

    zero = ir.Constant(vec, [0.0] * 4)
    d4 = builder.and_(d, i64(-4))
    c, accs = counted_loop(builder, "dots8.by4", i64(0), d4, 4, [zero] * (BLOCK // 4),
                           four_columns)
    _, accs = counted_loop(builder, "dots8.by1", c, d, 1, accs, one_column)  # d % 4 left
    values = [builder.extract_element(accs[k // 4], i64(k % 4)) for k in range(BLOCK)]
    return context.make_tuple(builder, signature.return_type, values)


@intrinsic
def _dots8(typingctx, x, X, targets, t, d):
    """(x'X[targets[t + k]] for k < 8), each over columns 0..d-1 in order, from 0.0, no FMA.

    x: float64 [>= d], C order; X: float64 or float32 [n, >= d], C order; targets: int array."""
    if not (isinstance(x, types.Array) and x.ndim == 1 and x.layout == "C"
            and x.dtype == types.float64 and isinstance(X, types.Array) and X.ndim == 2
            and X.layout == "C" and X.dtype in (types.float64, types.float32)
            and isinstance(targets, types.Array) and targets.ndim == 1
            and isinstance(targets.dtype, types.Integer)):
        return None
    signature = types.UniTuple(types.float64, BLOCK)(x, X, targets, types.int64, types.int64)
    return signature, _dots8_codegen


@numba.njit(cache=True, nogil=True)
def dense_dots(x, X, targets, out, lo, hi):
    """out[t] = x'X[targets[t]] over the first min(len(x), X.shape[1]) columns, lo <= t < hi,
    each in LIBSVM's order (column order, from 0.0, no FMA)."""
    d = min(x.shape[0], X.shape[1])
    t = lo
    while t + BLOCK <= hi:
        v = _dots8(x, X, targets, t, d)
        for k in range(BLOCK):
            out[t + k] = v[k]
        t += BLOCK
    for r in range(t, hi):
        b = targets[r]
        s = 0.0
        for c in range(d):
            s += x[c] * X[b, c]
        out[r] = s


@numba.njit(inline="always", cache=True, nogil=True)
def gap_term(g, a, A, B):
    """A position's term of the bias-free duality gap (eq. 9 corrected: corrections 001-3),
    C_l max(0, y_l g_l) - alpha_l g_l - beta_l y_l g_l, from its gradient, alpha and box only:
    every box there is [0, C] or [-C, 0] (the four cases of y = +-1, beta = 0 or C), and in each
    the term is B max(0, g) - A max(0, -g) - alpha g (e.g. y = +1, beta = C, box [-C, 0]:
    C max(0, g) - alpha g - C g = C max(0, -g) - alpha g). Bit for bit the printed form where
    beta = 0 (LASVM-G, -I, FULL SVM); within rounding for LASVM-NC's outliers. Without y the
    loop reads no label through pos2ex: two random loads a position fewer. gap_pass's lanes
    compute the same, operation for operation."""
    up = g if g > 0.0 else 0.0
    down = -g if g < 0.0 else 0.0
    return (B * up - A * down) - a * g


GAP_LANES = 8  # positions per vector step of gap_pass: one AVX-512 register of doubles


def _lanes_first(builder, best, where, W):
    """The largest of the lanes' maxima (integer bits) and the first position among the lanes
    holding it; -1 when no lane's maximum is positive."""
    i64 = ir.IntType(64)
    b = [builder.extract_element(best, i64(k)) for k in range(W)]
    w = [builder.extract_element(where, i64(k)) for k in range(W)]
    top = b[0]
    for x in b[1:]:
        top = builder.select(builder.icmp_signed(">", x, top), x, top)
    first = i64(-1)
    for x, p in zip(b, w):
        earlier = builder.or_(builder.icmp_signed("<", first, i64(0)),
                              builder.icmp_signed("<", p, first))
        take = builder.and_(builder.icmp_signed("==", x, top), earlier)
        first = builder.select(take, p, first)
    return builder.select(builder.icmp_signed(">", top, i64(0)), first, i64(-1))


def _gap_pass_codegen(update, pair=False):
    """gap_pass's vector loop; with ``pair``, each lane keeps the largest violation of each
    direction (alpha < B with g > 0, alpha > A with g < 0) apart, and the pass returns the
    first position of each."""
    def codegen(context, builder, signature, args):
        ga, aa, Aa, Ba, Ka = (context.make_array(t)(context, builder, v)
                              for t, v in zip(signature.args[:5], args[:5]))
        bk, mu, n_vec = args[5], args[6], args[7]
        W = GAP_LANES
        i64, f64 = ir.IntType(64), ir.DoubleType()
        vec = ir.VectorType(f64, W)
        ivec = ir.VectorType(i64, W)
        zero = ir.Constant(vec, [0.0] * W)
        elt = Ka.data.type.pointee
        mus = splat(builder, vec, mu)
        lane_offsets = ir.Constant(ivec, list(range(W)))

        def ptr(array, t):
            return builder.bitcast(builder.gep(array.data, [t], inbounds=True), vec.as_pointer())

        def keep(bits_of, best, where, t):
            """The lane's largest violation so far (integer bits: a violation is never
            negative, so its bits order as integers; -0.0's are negative and never win) and
            the first position where it occurs."""
            bits = builder.bitcast(bits_of, ivec)
            larger = builder.icmp_signed(">", bits, best)
            return (builder.select(larger, bits, best),
                    builder.select(larger, builder.add(splat(builder, ivec, t), lane_offsets),
                                   where))

        def step(t, accs):
            total = accs[0]
            g = builder.load(ptr(ga, t), align=8)
            if update:  # g -= mu * K[bk + t] (K widened exactly to double), no FMA
                kp = builder.gep(Ka.data, [builder.add(bk, t)], inbounds=True)
                k = builder.load(builder.bitcast(kp, ir.VectorType(elt, W).as_pointer()),
                                 align=4 if elt != f64 else 8)
                k = builder.fpext(k, vec) if elt != f64 else k
                g = builder.fsub(g, builder.fmul(mus, k))
                builder.store(g, ptr(ga, t), align=8)
            a = builder.load(ptr(aa, t), align=8)
            lo = builder.load(ptr(Aa, t), align=8)
            hi = builder.load(ptr(Ba, t), align=8)
            neg = builder.fneg(g)
            up = builder.select(builder.fcmp_ordered("<", a, hi), g, zero)
            down = builder.select(builder.fcmp_ordered(">", a, lo), neg, zero)
            if pair:  # each direction apart
                kept = [*keep(up, accs[1], accs[2], t), *keep(down, accs[3], accs[4], t)]
            else:  # the larger of the two: the violation
                viol = builder.select(builder.fcmp_ordered(">", up, down), up, down)
                kept = list(keep(viol, accs[1], accs[2], t))
            gup = builder.select(builder.fcmp_ordered(">", g, zero), g, zero)
            gdown = builder.select(builder.fcmp_ordered("<", g, zero), neg, zero)
            term = builder.fsub(builder.fsub(builder.fmul(hi, gup), builder.fmul(lo, gdown)),
                                builder.fmul(a, g))
            return [builder.fadd(total, term), *kept]

        trackers = 2 if pair else 1
        start = [zero] + [ir.Constant(ivec, [0] * W), ir.Constant(ivec, [-1] * W)] * trackers
        _, accs = counted_loop(builder, "gap", i64(0), n_vec, W, start, step)
        # the gap: the lanes added pairwise, (l0 + l1) + (l2 + l3), ... up a binary tree
        lanes = [builder.extract_element(accs[0], i64(k)) for k in range(W)]
        while len(lanes) > 1:
            lanes = [builder.fadd(lanes[k], lanes[k + 1]) for k in range(0, len(lanes), 2)]
        firsts = [_lanes_first(builder, accs[1 + 2 * r], accs[2 + 2 * r], W)
                  for r in range(trackers)]
        return context.make_tuple(builder, signature.return_type, [lanes[0], *firsts])
    return codegen


def _gap_pass_typer(update, pair=False):
    def typer(typingctx, g, alpha, A, B, K, bk, mu, n_vec):
        if not all(isinstance(x, types.Array) and x.ndim == 1 and x.layout == "C"
                   and x.dtype == types.float64 for x in (g, alpha, A, B)):
            return None
        if not (isinstance(K, types.Array) and K.ndim == 1 and K.layout == "C"
                and K.dtype in (types.float64, types.float32)):
            return None
        result = types.Tuple([types.float64] + [types.int64] * (2 if pair else 1))
        sig = result(g, alpha, A, B, K, types.int64, types.float64, types.int64)
        return sig, _gap_pass_codegen(update, pair)
    return typer


_gap_pass_update = intrinsic(_gap_pass_typer(True))
_gap_pass_scan = intrinsic(_gap_pass_typer(False))
_gap_pass_pair_update = intrinsic(_gap_pass_typer(True, pair=True))


@numba.njit(inline="always", cache=True, nogil=True)
def violation(g, a, A, B):
    """How far a position violates its KKT condition: g where alpha < B and g > 0, -g where
    alpha > A and g < 0, else 0 (-0.0 where g = 0 and alpha > A); gap_pass's lanes compute the
    same, operation for operation."""
    up = g if a < B else 0.0
    down = -g if a > A else 0.0
    return up if up > down else down


@numba.njit(cache=True, nogil=True)
def gap_pass(g, alpha, A, B, K, bk, mu, n):
    """The bias-free gap loop's pass over positions [0, n) (qp/lasvm_g_core.py's terms):
    g[p] -= mu K[bk + p] (nothing when mu = 0); returns (gap, k, v): the sum of the gap terms
    (:func:`gap_term`), and the largest violation v (:func:`violation`) with k its first
    position, (-1, 0.0) when none is positive. Positions [0, n - n % GAP_LANES) run GAP_LANES
    at a time in vector lanes, term t to lane t % GAP_LANES, the lanes added pairwise up a
    binary tree ((l0 + l1) + (l2 + l3)) + ...; each lane keeps its largest violation (as
    integer bits) and where it first occurs; the rest one at a time, added after in order: one
    rounding whatever the compile context, no fast-math."""
    n_vec = n - n % GAP_LANES
    if mu != 0.0:
        s, k = _gap_pass_update(g, alpha, A, B, K, bk, mu, n_vec)
    else:
        s, k = _gap_pass_scan(g, alpha, A, B, K, bk, mu, n_vec)
    vk = violation(g[k], alpha[k], A[k], B[k]) if k >= 0 else 0.0
    tail = 0.0
    for p in range(n_vec, n):
        if mu != 0.0:
            g[p] -= mu * np.float64(K[bk + p])
        gp = g[p]
        a = alpha[p]
        v = violation(gp, a, A[p], B[p])
        if v > vk:  # later than every lane position: only a larger one replaces k
            k, vk = p, v
        tail += gap_term(gp, a, A[p], B[p])
    return s + tail, k, vk


@numba.njit(cache=True, nogil=True)
def gap_pass_pair(g, alpha, A, B, K, bk, mu, n):
    """:func:`gap_pass` with its update always made (mu = 0 leaves g as it is: g - 0 K = g),
    the largest violation of each direction kept apart (up: g where alpha < B and g > 0;
    down: -g where alpha > A and g < 0; a position violates one way at most). Returns
    (gap, k, v, j): the gap and (k, v) exactly as gap_pass's (the larger direction's first
    position; on a tie the earlier one, as the first maximal violation), and j the first
    position of the largest violation moving the other way from k (-1 when none): the
    two-variable REPROCESS step's next pair."""
    n_vec = n - n % GAP_LANES
    s, ku, kd = _gap_pass_pair_update(g, alpha, A, B, K, bk, mu, n_vec)
    vu = g[ku] if ku >= 0 else 0.0
    vd = -g[kd] if kd >= 0 else 0.0
    tail = 0.0
    for p in range(n_vec, n):
        g[p] -= mu * np.float64(K[bk + p])
        gp = g[p]
        a = alpha[p]
        if a < B[p] and gp > vu:  # later than every lane position: only a larger one wins
            ku, vu = p, gp
        if a > A[p] and -gp > vd:
            kd, vd = p, -gp
        tail += gap_term(gp, a, A[p], B[p])
    if vu > vd or (vu == vd and vu > 0.0 and ku < kd):
        return s + tail, ku, vu, (kd if vd > 0.0 else -1)
    if vd > 0.0:
        return s + tail, kd, vd, (ku if vu > 0.0 else -1)
    return s + tail, -1, 0.0, -1


@numba.njit(cache=True, nogil=True)
def exp_lanes(x, n):
    """x[t] = exp(x[t]) for t < n - n % EXP_LANES, EXP_LANES at a time in vector lanes: each
    lane computes kernels._exp_block's operations in its order (clamp at -708, Cody-Waite
    reduction, the FMA Horner chain, 2^k in the exponent bits), so values are bit for bit
    _exp_block's. Returns how many it did (the caller does the rest)."""
    n_vec = n - n % EXP_LANES
    _exp_lanes(x, n_vec)
    return n_vec
