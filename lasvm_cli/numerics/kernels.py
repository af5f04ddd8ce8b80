"""Kernel functions over dense or sparse rows, LIBSVM's definitions (``-t 0..4``).

    0 linear       u'v
    1 polynomial   (gamma u'v + coef0)^degree
    2 RBF          exp(-gamma |u-v|^2)
    3 sigmoid      tanh(gamma u'v + coef0)
    4 precomputed  K(x_i, x_j) = value of feature ``serial(x_j)`` in row x_i (LIBSVM's layout:
                   every row starts with ``0:serial``)

One routine, :func:`kernel_row`, computes K(x_a, x_b) for many b in one call; it is what the
kernel-row cache calls on a miss, and what batch prediction calls. It runs serially or over all
cores (``prange``) depending on the work in the row, and never allocates per element.

Binary data (every stored value 1, as adult, a1a-a9a, w1a-w8a) also carry their rows as bit sets
(:attr:`KernelData.bits`). Then u'v = popcount(u & v) and |u-v|^2 = popcount(u ^ v) are small
integers, so a row costs a couple of popcounts and a table lookup per target instead of a gather
and an exp.
The values are the same numbers: the integer count is exact either way and the kernel of it is
taken from a table filled with the scalar formula (:func:`kernel_value`'s).

Data travel as :class:`KernelData`, a namedtuple of arrays (one compiled signature for dense
and sparse data: the unused representation is an empty array). RBF uses the dot form
``|u|^2 + |v|^2 - 2u'v`` with squared norms precomputed, as LIBSVM's ``Kernel`` class does during
training, followed by a vectorisable exp (see :func:`exp_inplace`).
"""

from collections import namedtuple

import numba
import numpy as np
from numba import prange, types
from numba.extending import intrinsic
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
from ..base.jit_cache import by_symbol, compile_on_demand, if_compiled
from .index import at, idx
from .ordered import EXP_COEFFS, LN2_HI, LN2_LO, LOG2E, dense_dots, exp_lanes, fma

LINEAR, POLY, RBF, SIGMOID, PRECOMPUTED = 0, 1, 2, 3, 4
KERNEL_NAMES = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")

# Start numba's thread pool now. A cached serial function (the SMO loop, the cache) that reaches
# a prange region (kernel_row_parallel) when it is loaded from the on-disk cache finds the pool
# not yet launched and crashes; numba launches it only when a parallel function is compiled or
# called from Python. get_num_threads() launches it.
numba.get_num_threads()

NO_BITS = np.zeros((0, 0), np.uint64)
NO_COLS = np.zeros(0, np.int32)
NO_X32 = np.zeros((0, 0), np.float32)
NO_XT = np.zeros((0, 0), np.float64)
NO_CSC = np.zeros(0, np.float64)

KernelData = namedtuple("KernelData", "X indptr indices values x_sq bits cols X32 XT csc",
                        defaults=(NO_BITS, NO_COLS, NO_X32, NO_XT, NO_CSC))
KernelData.__doc__ = """Rows of a data set, dense or sparse.

X        float64 [n, d] dense rows (column c holds feature column c), or shape (0, 0) when sparse
indptr   int64 [n+1], indices int32 [nnz] (feature columns), values float64 [nnz]: CSR rows
         (empty when dense)
x_sq     float64 [n] squared norms (RBF), of every feature of the row as read
bits     uint64 [n, words]: bit c of row i set when column c is stored (binary data only, as
         well as X or the CSR arrays); NO_BITS (shape (0, 0)) otherwise
cols     int32 [d]: the file's feature index of each column, when the index space is compacted
         (data.py: wide, sparse index ranges such as hashed features); NO_COLS (empty) when
         column c is feature index c. Kernels never read it: rows of two KernelData meet in one
         kernel row only when they share their columns (data.align).
X32      float32 [n, d]: X in single precision, for large dense training sets whose kernel rows
         are bound by memory bandwidth (data.py decides); X then holds these same values in
         float64, so every path computes with one set of numbers. NO_X32 (shape (0, 0))
         otherwise. Only the gather of a kernel row reads it; products are summed in float64.
XT       float64 [d, n]: X transposed, for dense data of few columns (data.py decides), so
         that a row against every example (:func:`kernel_row_all`) runs down contiguous
         columns; NO_XT (shape (0, 0)) otherwise.
csc      float64 [1 + (d+1) + 2 nnz]: the CSR rows by column, for sparse training sets of
         real values (data.py decides), so that a row against every example visits only the
         examples sharing a feature with it; NO_CSC (empty) otherwise. Packed in one array,
         [d, column starts (d+1), row numbers (nnz, ascending in each column), values (nnz)],
         integers exact in float64: every compiled function taking a KernelData pays for each
         of its arrays (three more fields made every first compilation about 6 s longer).
"""

KernelParams = namedtuple("KernelParams", "kind degree gamma coef0")
KernelParams.__doc__ = "kind (int, 0..4), degree (int), gamma (float), coef0 (float)."

# Work (row length x features per row) below which a row is computed serially: with the
# passive waiting lasvm-cli sets (lasvm_cli/__init__.py) a parallel region costs more to launch
# and wake than a row this small takes on one thread (bench/bench_threads.py measures it).
PARALLEL_MIN_WORK = 1 << 19

# No fast-math anywhere in kernel values: with reassoc/contract LLVM picks the summation order
# per compile context, and results then depend on the JIT cache's history (ordered.py).
_NJIT = dict(cache=True, nogil=True)


def make_params(kind, degree=3, gamma=0.0, coef0=0.0):
    """KernelParams with the exact scalar types every compiled function expects."""
    return KernelParams(np.int64(kind), np.int64(degree), np.float64(gamma), np.float64(coef0))


def is_dense(kd):
    return kd.X.shape[0] > 0 or kd.indptr.shape[0] <= 1


def n_rows(kd):
    return kd.X.shape[0] if kd.X.shape[0] > 0 else kd.indptr.shape[0] - 1


# ---------------------------------------------------------------------------------------------
# exp for arrays of non-positive arguments, vectorisable (llvmlite ships no SVML, so math.exp in
# a loop is a scalar libm call): Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, a degree-12
# Taylor polynomial (truncation error < 2e-16 relative) by Horner's rule in fused multiply-adds
# (3.2e-16 relative at most over [-20, 0]), and 2^n built in the exponent bits.


@numba.njit(**_NJIT)
def _exp_block(x, nbuf):
    """The scalar form of ordered.exp_lanes (the same operations in the same order, so the same
    values): the elements after its last full vector."""
    m = x.shape[0]
    for t in range(m):
        v = x[t]
        if v < -708.0:
            v = -708.0
        k = np.floor(v * LOG2E + 0.5)
        r = (v - k * LN2_HI) - k * LN2_LO
        p = EXP_COEFFS[0]
        for c in EXP_COEFFS[1:]:
            p = fma(p, r, c)
        x[t] = p
        nbuf[t] = (np.int64(k) + 1023) << 52
    scale = nbuf.view(np.float64)
    for t in range(m):
        x[t] = x[t] * scale[t]


@numba.njit(**_NJIT)
def exp_inplace(x):
    """x[t] = exp(x[t]) for x[t] <= 0 (values below -708 give exp(-708), i.e. about 3e-308):
    ordered.exp_lanes in vector lanes (8-wide, where LLVM's own vectorisation of the scalar
    loop stayed 4-wide: 1.57 -> 1.03 ns an element), the last few by _exp_block."""
    n = x.shape[0]
    done = exp_lanes(x, n)
    if done < n:
        _exp_block(x[done:], np.empty(n - done, np.int64))


# ---------------------------------------------------------------------------------------------
# dot products and squared distances between one row a of A and one row b of B


@numba.njit(**_NJIT)
def _dot_dense(xa, xb):
    s = 0.0
    for c in range(min(xa.shape[0], xb.shape[0])):
        s += xa[c] * xb[c]
    return s


@numba.njit(**_NJIT)
def _dot_sparse(ia, va, ib, vb):
    """Two-pointer merge of two sorted sparse rows."""
    s = 0.0
    p = 0
    q = 0
    while p < ia.shape[0] and q < ib.shape[0]:
        if ia[p] == ib[q]:
            s += va[p] * vb[q]
            p += 1
            q += 1
        elif ia[p] < ib[q]:
            p += 1
        else:
            q += 1
    return s


@numba.njit(**_NJIT)
def _dot_dense_sparse(xa, ib, vb):
    s = 0.0
    for q in range(ib.shape[0]):
        c = ib[q]
        if c < xa.shape[0]:
            s += xa[c] * vb[q]
    return s


@numba.njit(**_NJIT)
def dot(A, a, B, b):
    """u'v for row a of A and row b of B, whichever storage each uses."""
    if A.X.shape[0] > 0:
        if B.X.shape[0] > 0:
            return _dot_dense(A.X[a], B.X[b])
        lo, hi = B.indptr[b], B.indptr[b + 1]
        return _dot_dense_sparse(A.X[a], B.indices[lo:hi], B.values[lo:hi])
    lo, hi = A.indptr[a], A.indptr[a + 1]
    if B.X.shape[0] > 0:
        return _dot_dense_sparse(B.X[b], A.indices[lo:hi], A.values[lo:hi])
    lo2, hi2 = B.indptr[b], B.indptr[b + 1]
    return _dot_sparse(A.indices[lo:hi], A.values[lo:hi], B.indices[lo2:hi2], B.values[lo2:hi2])


@numba.njit(**_NJIT)
def _feature(A, a, index):
    """Value of feature ``index`` in row a of A (0 when absent)."""
    if A.X.shape[0] > 0:
        return A.X[a, index] if index < A.X.shape[1] else 0.0
    lo, hi = A.indptr[a], A.indptr[a + 1]
    p = np.searchsorted(A.indices[lo:hi], index)
    if p < hi - lo and A.indices[lo + p] == index:
        return A.values[lo + p]
    return 0.0


@numba.njit(**_NJIT)
def _finish(kind, kp, s, sq_a, sq_b):
    """Turn the dot product s into the kernel value (RBF is exponentiated by the caller)."""
    if kind == LINEAR:
        return s
    if kind == POLY:
        return (kp.gamma * s + kp.coef0) ** kp.degree
    if kind == RBF:
        d = sq_a + sq_b - 2.0 * s
        return -kp.gamma * d if d > 0.0 else 0.0
    return np.tanh(kp.gamma * s + kp.coef0)  # SIGMOID


@numba.njit(**_NJIT)
def kernel_value(A, a, B, b, kp):
    """K(x_a, x_b) for row a of A and row b of B."""
    if kp.kind == PRECOMPUTED:
        return _feature(A, a, np.int64(_feature(B, b, np.int64(0))))
    v = _finish(kp.kind, kp, dot(A, a, B, b), A.x_sq[a], B.x_sq[b])
    return np.exp(v) if kp.kind == RBF else v


# ---------------------------------------------------------------------------------------------
# binary rows as bit sets


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of a uint64 (LLVM's ctpop: one POPCNT instruction on x86-64)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


@numba.njit(**_NJIT)
def both_bits(A, B, kp):
    """Whether rows of A against rows of B can use the bit-set path."""
    return (A.bits.shape[0] > 0 and B.bits.shape[0] > 0 and A.bits.shape[1] == B.bits.shape[1]
            and kp.kind != PRECOMPUTED)


@numba.njit(**_NJIT)
def _bits_table(kp, n_bits):
    """table[d] = the kernel of the integer count d: |u-v|^2 for RBF, u'v otherwise."""
    table = np.empty(n_bits + 1, np.float64)
    for d in range(n_bits + 1):
        if kp.kind == RBF:
            table[d] = np.exp(_finish(kp.kind, kp, 0.0, np.float64(d), 0.0))
        else:
            table[d] = _finish(kp.kind, kp, np.float64(d), 0.0, 0.0)
    return table


@numba.njit(**_NJIT)
def _bits_row(A, a, B, targets, kp, table, out, lo_t, hi_t):
    """out[t] = table[count of x_a against y_targets[t]] for lo_t <= t < hi_t. Rows of one to
    four words (up to 256 features; adult's 123 take two) run with the word count a constant,
    so the compiler unrolls the inner loop and keeps x_a in registers: adult, a row against
    every example, about 1.4 ns a target against 2.1 with the count read from the array."""
    words = A.bits.shape[1]
    xor = kp.kind == RBF
    if words == 1:
        _bits_words(A.bits, a, B.bits, targets, table, out, lo_t, hi_t, 1, xor)
    elif words == 2:
        _bits_words(A.bits, a, B.bits, targets, table, out, lo_t, hi_t, 2, xor)
    elif words == 3:
        _bits_words(A.bits, a, B.bits, targets, table, out, lo_t, hi_t, 3, xor)
    elif words == 4:
        _bits_words(A.bits, a, B.bits, targets, table, out, lo_t, hi_t, 4, xor)
    else:
        _bits_words(A.bits, a, B.bits, targets, table, out, lo_t, hi_t, words, xor)


@numba.njit(inline="always", **_NJIT)
def _bits_words(a_bits, a, b_bits, targets, table, out, lo_t, hi_t, words, xor):
    """_bits_row's loop over rows of ``words`` words (a constant where the caller passes one):
    popcount(u ^ v) = |u - v|^2 (xor) or popcount(u & v) = u'v."""
    fa = a_bits.ravel()
    fb = b_bits.ravel()
    base_a = words * a
    for t in range(lo_t, hi_t):
        base_b = words * targets[idx(t)]
        d = np.uint64(0)
        if xor:
            for w in range(words):
                d += popcount(fa[at(base_a, w)] ^ fb[at(base_b, w)])
        else:
            for w in range(words):
                d += popcount(fa[at(base_a, w)] & fb[at(base_b, w)])
        out[idx(t)] = table[d]


bits_row_if_compiled = if_compiled(_bits_row)


# ---------------------------------------------------------------------------------------------
# rows: out[t] = K(x_a, y_{targets[t]}); the sparse-row path scatters x_a into a dense buffer
# once and gathers per target (faster than merging the two sorted index lists)


@by_symbol
@numba.njit(**_NJIT)
def _row_pre_exp(A, a, B, targets, kp, scatter, out, lo_t, hi_t):
    kind = kp.kind
    sq_a = A.x_sq[a]
    b_dense = B.X.shape[0] > 0
    if kind == PRECOMPUTED:
        for t in range(lo_t, hi_t):
            out[t] = _feature(A, a, np.int64(_feature(B, targets[t], np.int64(0))))
        return
    # dot products first, kernel second: each loop without a branch per target (a dot loop with
    # nothing else in it vectorises; CSR rows are no slower for it)
    if B.X32.shape[0] > 0:  # half the bytes per target row: twice the rows where X is in DRAM
        dense_dots(scatter, B.X32, targets, out, lo_t, hi_t)
    elif b_dense:
        dense_dots(scatter, B.X, targets, out, lo_t, hi_t)
    else:
        for t in range(lo_t, hi_t):
            b = idx(targets[idx(t)])  # unsigned indices throughout (index.py)
            s = 0.0
            for q in range(B.indptr[b], B.indptr[b + 1]):
                c = B.indices[idx(q)]
                if c < scatter.shape[0]:
                    s += scatter[idx(c)] * B.values[idx(q)]
            out[idx(t)] = s
    for t in range(lo_t, hi_t):
        u = idx(t)
        out[u] = _finish(kind, kp, out[u], sq_a, B.x_sq[idx(targets[u])])


@numba.njit(**_NJIT)
def _scatter_row(A, a, width):
    if A.X.shape[0] > 0:
        return A.X[a, :width].copy() if width < A.X.shape[1] else A.X[a]
    buf = np.zeros(width, np.float64)
    for p in range(A.indptr[a], A.indptr[a + 1]):
        c = A.indices[p]
        if c < width:
            buf[c] = A.values[p]
    return buf


@numba.njit(**_NJIT)
def _scatter_width(A, a):
    """Columns x_a needs in its scatter buffer: up to its own largest index (sparse rows are
    sorted), so the gather loop's bound check skips every other column. O(1): the whole data
    set is never scanned per row."""
    if A.X.shape[0] > 0:
        return A.X.shape[1]
    lo, hi = A.indptr[a], A.indptr[a + 1]
    return A.indices[hi - 1] + 1 if hi > lo else 0


@by_symbol
@numba.njit(**_NJIT)
def kernel_row_serial(A, a, B, targets, kp, out):
    if both_bits(A, B, kp):
        table = _bits_table(kp, 64 * A.bits.shape[1])
        if bits_row_if_compiled((A, a, B, targets, kp, table, out, np.int64(0),
                                 targets.shape[0])):
            return
    scatter = _scatter_row(A, a, _scatter_width(A, a))
    _row_pre_exp(A, a, B, targets, kp, scatter, out, np.int64(0), targets.shape[0])
    if kp.kind == RBF:
        exp_inplace(out[: targets.shape[0]])


@numba.njit(parallel=True, **_NJIT)
def kernel_row_parallel(A, a, B, targets, kp, out):
    """kernel_row_serial over all cores, for dense and CSR rows (bit-set rows stay serial)."""
    scatter = _scatter_row(A, a, _scatter_width(A, a))
    m = targets.shape[0]
    n_blocks = (m + 511) // 512
    for blk in prange(n_blocks):
        lo = blk * 512
        hi = min(lo + 512, m)
        _row_pre_exp(A, a, B, targets, kp, scatter, out, lo, hi)
        if kp.kind == RBF:
            exp_inplace(out[lo:hi])


kernel_row_parallel_if_compiled = if_compiled(kernel_row_parallel)


@numba.njit(**_NJIT)
def row_work(A, B, kp, m):
    """Rough cost of a row of m targets, in gathered features: m times the mean number of
    stored features; bit-set rows count one per word."""
    if both_bits(A, B, kp):
        return m * B.bits.shape[1]
    if B.X.shape[0] > 0:
        return m * B.X.shape[1]
    n = B.indptr.shape[0] - 1
    return m * (1 + B.indices.shape[0] // max(n, 1))


@numba.njit(**_NJIT)
def kernel_row(A, a, B, targets, kp, out):
    """out[t] = K(row a of A, row targets[t] of B) for t < len(targets); counts nothing itself.

    Callers that count kernel evaluations add ``len(targets)``. Bit-set rows always run
    serially: on adult (2 words) the serial row is as fast as a parallel one even over all
    32,561 targets (~200 M evaluations/s), and a second prange body would add to the JIT time.
    """
    if (not both_bits(A, B, kp) and row_work(A, B, kp, targets.shape[0]) >= PARALLEL_MIN_WORK
            and kernel_row_parallel_if_compiled((A, a, B, targets, kp, out))):
        return
    kernel_row_serial(A, a, B, targets, kp, out)


# Examples per block of a whole row (kernel_row_all): the block's values stay in L1 from the
# column passes through the kernel and the exp. (The blocks are not shared over the cores: a
# parallel loop here adds to the first compile of every command that trains, for a gain on
# few problems; docs/kernel-cache.md.)
ROW_ALL_BLOCK = 2048


@by_symbol
@numba.njit(**_NJIT)
def _row_all_block(A, a, kp, out, lo, hi):
    """out[b] = K(x_a, x_b) for lo <= b < hi from X transposed: a vectorised multiply-add down
    each column instead of a short dot per example (budgetfood's 7 columns: about 3x faster).
    The products are summed in column order without FMA, as LIBSVM's dot sums them. Indexed
    in place, unsigned (index.py), not through views: a view per column and block cost two
    atomic reference counts each."""
    for b in range(lo, hi):
        out[idx(b)] = 0.0
    XT = A.XT
    for c in range(XT.shape[0]):
        v = XT[c, a]
        if v != 0.0:  # LIBSVM's sparse dot adds only the features both rows store
            for b in range(lo, hi):
                out[idx(b)] += v * XT[c, idx(b)]
    kind = kp.kind
    sq_a = A.x_sq[a]
    x_sq = A.x_sq
    for b in range(lo, hi):
        u = idx(b)
        out[u] = _finish(kind, kp, out[u], sq_a, x_sq[u])
    if kind == RBF:
        exp_inplace(out[lo:hi])


@numba.njit(**_NJIT)
def _row_all_csc(A, a, kp, out):
    """out[b] = K(x_a, x_b) for b < len(out) from the rows by column: for each feature of x_a,
    in ascending order, its column's examples get x_a's value times theirs, so each dot product
    sums the features both rows store in LIBSVM's order, bit for bit, and the work is the
    length of those columns, not every stored value (reuters: 13x fewer products)."""
    n = out.shape[0]
    for b in range(n):
        out[b] = 0.0
    csc = A.csc
    d = np.int64(csc[0])
    nnz = np.int64(csc[d + 1])
    rows0 = d + 2  # where the row numbers start; the values follow them
    vals0 = rows0 + nnz
    for q in range(A.indptr[a], A.indptr[a + 1]):
        v = A.values[q]
        f = A.indices[q]
        for r in range(np.int64(csc[idx(1 + f)]), np.int64(csc[idx(2 + f)])):
            b = np.int64(csc[at(rows0, r)])
            if b < n:
                out[idx(b)] += v * csc[at(vals0, r)]
    kind = kp.kind
    sq_a = A.x_sq[a]
    for b in range(n):
        out[b] = _finish(kind, kp, out[b], sq_a, A.x_sq[b])
    if kind == RBF:
        exp_inplace(out)


row_all_csc_if_compiled = if_compiled(_row_all_csc)


ROW_PATHS_ON_DEMAND = (_bits_row, _row_all_csc, kernel_row_parallel)


def compile_rows_for(kd):
    """Compile the paths of a kernel row that rows against kd's can take and small data
    never reach (each called through ``if_compiled``: a command's first run compiles only
    what its data use): bit-set rows, the whole row by column, and the parallel row once a
    row against all of kd's rows is PARALLEL_MIN_WORK (row_work's measure). Whatever builds
    a KernelData that solvers or predictions read calls this (numerics/data.py, the
    streams' stores). Without it a row takes its plain serial path: the same values as the
    parallel row and the whole row by column, but RBF values a few units in the last place
    from the bit-set rows' table: data._build, the one place that packs bit sets, calls it."""
    if kd.bits.shape[0] > 0:
        compile_on_demand(_bits_row)
    if kd.csc.shape[0] > 0:
        compile_on_demand(_row_all_csc)
    if kd.X.shape[0] > 0:
        work = kd.X.shape[0] * kd.X.shape[1]
    else:
        n = kd.indptr.shape[0] - 1
        work = n * (1 + kd.indices.shape[0] // max(n, 1))
    if work >= PARALLEL_MIN_WORK:
        compile_on_demand(kernel_row_parallel)


@numba.njit(**_NJIT)
def kernel_row_all(A, a, kp, out):
    """out[b] = K(x_a, x_b) for rows b < len(out) of A, in row order (a row by example: SVR's
    and the all-in-one machines' cache rows, where positions outnumber examples; sparse data
    kept by column too)."""
    if kp.kind != PRECOMPUTED and A.csc.shape[0] > 0 and row_all_csc_if_compiled((A, a, kp, out)):
        return
    if A.XT.shape[0] == 0 or kp.kind == PRECOMPUTED:
        kernel_row(A, a, A, np.arange(out.shape[0]), kp, out)
        return
    n = out.shape[0]
    for lo in range(0, n, ROW_ALL_BLOCK):
        _row_all_block(A, a, kp, out, lo, min(lo + ROW_ALL_BLOCK, n))


@numba.njit(**_NJIT)
def kernel_diagonal(A, kp, out):
    """out[i] = K(x_i, x_i) for every row of A, as LIBSVM's QD: x_i'x_i is x_sq[i], the products
    summed in stored order without FMA, as LIBSVM's dot sums them (and as kernel rows sum
    them: ordered.dense_dots). A last-bit difference in QD changes quad_coef, hence the steps, and
    SMO's path some hundred iterations on (banana's easy.py cell -c 0.5 -g 8: iteration 477 of
    712). RBF is then exactly 1: LIBSVM's exp(-gamma (|x|^2 + |x|^2 - 2 x'x)) of d = 0.
    A precomputed kernel's K(i, i) is read as kernel_value reads it, without calling
    kernel_value: its dot products would be compiled into every training for nothing."""
    for i in range(out.shape[0]):
        if kp.kind == PRECOMPUTED:
            out[i] = _feature(A, i, np.int64(_feature(A, i, np.int64(0))))
        elif kp.kind == RBF:
            out[i] = 1.0
        else:
            out[i] = _finish(kp.kind, kp, A.x_sq[i], 0.0, 0.0)


@numba.njit(parallel=True, **_NJIT)
def expansion_values(A, a_rows, B, b_rows, coef, kp, out):
    """out[r] = sum_t coef[t] K(row a_rows[r] of A, row b_rows[t] of B): a kernel expansion
    (a binary decision function before its bias) evaluated on many rows, parallel over rows."""
    m = a_rows.shape[0]
    n_blocks = (m + 63) // 64
    for blk in prange(n_blocks):
        buf = np.empty(b_rows.shape[0], np.float64)
        for r in range(blk * 64, min(blk * 64 + 64, m)):
            kernel_row_serial(A, a_rows[r], B, b_rows, kp, buf)
            s = 0.0
            for t in range(b_rows.shape[0]):
                s += coef[t] * buf[t]
            out[r] = s


# ---------------------------------------------------------------------------------------------
# A kernel expansion over many rows at once, by blocks of dense matrix products (BLAS): the
# KKT check of training over partitions (training/cascade.py) evaluates every row of a part
# against every support vector, n x nSV kernel values, where expansion_values' row-by-row
# kernel rows pay a dot product and a call per value. Here a block of rows and all the
# expansion's rows meet in one product; for RBF the squared norms ride in two extra columns,
# so the product gives -gamma |x - s|^2 directly, then exp_inplace and one more product with
# the coefficients. The sums run in another order than expansion_values' (differences of a
# few units in the last place, far below any -e).

EXPANSION_BLOCK_BYTES = 256 << 10  # a block's kernel values and dense rows: in cache
EXPANSION_DENSE_MAX_BYTES = 256 << 20  # the expansion's rows, dense; wider data: row by row


def dense_rows(indptr, indices, values, rows, width, out=None):
    """Rows ``rows`` of a CSR matrix as a dense float64 [len(rows), width] array (in ``out``,
    zeroed first, when given)."""
    starts = indptr[rows]
    lens = indptr[rows + 1] - starts
    if out is None:
        out = np.zeros((rows.shape[0], width))
    else:
        out[:] = 0.0
    total = int(lens.sum())
    if total:
        which = np.repeat(np.arange(rows.shape[0]), lens)
        first = np.cumsum(lens) - lens
        at = np.arange(total) - np.repeat(first, lens) + np.repeat(starts, lens)
        out[which, indices[at]] = values[at]
    return out


def expansion_blocks_fit(n_terms, width):
    """Whether :func:`expansion_by_blocks` takes an expansion of ``n_terms`` rows of ``width``
    features (their dense form within EXPANSION_DENSE_MAX_BYTES)."""
    return n_terms * (width + 2) * 8 <= EXPANSION_DENSE_MAX_BYTES


def expansion_by_blocks(a, a_rows, b, coefs, kp, out, threads=1):
    """out[r, :] += sum_t coefs[t, :] K(row a_rows[r] of a, row t of b), for CSR row sets
    a and b = (indptr, indices, values, x_sq) of one feature index space, ``coefs`` [m, k]
    (k expansions at once), kernels 0-3 (no precomputed kernel). ``threads``: blocks of rows
    at once, each product on one BLAS thread (threadpoolctl, where installed, holds BLAS to
    one: a threaded BLAS spins on a busy host, 8x the CPU seconds of one thread)."""
    def add(lo, Kb):
        out[lo:lo + Kb.shape[0]] += Kb @ coefs

    _each_block(a, a_rows, b, kp, add, threads)


def kernel_block(a, a_rows, b, kp, out, threads=1):
    """out[r, t] = K(row a_rows[r] of a, row t of b), as :func:`expansion_by_blocks` computes
    them (``out`` may be float32 and a view: the kernel values a part keeps between checks)."""
    def put(lo, Kb):
        out[lo:lo + Kb.shape[0]] = Kb

    _each_block(a, a_rows, b, kp, put, threads)


def _each_block(a, a_rows, b, kp, use, threads):
    """use(lo, Kb) for each block of rows a_rows[lo:lo + len(Kb)], Kb[r, t] = K(row a_rows[lo
    + r] of a, row t of b) (a buffer reused for the next block)."""
    a_indptr, a_indices, a_values, a_sq = a
    b_indptr, b_indices, b_values, b_sq = b
    m = b_indptr.shape[0] - 1
    if m == 0 or a_rows.shape[0] == 0:
        return
    width = 1 + int(max(a_indices.max(initial=0), b_indices.max(initial=0)))
    S = dense_rows(b_indptr, b_indices, b_values, np.arange(m), width + 2)
    rbf = kp.kind == RBF
    if rbf:  # [x, |x|^2, 1] . [2g s, -g, -g |s|^2] = -g |x - s|^2
        S[:, :width] *= 2.0 * kp.gamma
        S[:, width] = -kp.gamma
        S[:, width + 1] = -kp.gamma * b_sq
    ST = np.ascontiguousarray(S.T)
    del S
    step = max(64, EXPANSION_BLOCK_BYTES // (8 * max(m, width + 2)))  # K's and X's bytes

    def blocks(starts):
        # buffers made once: with a low malloc trim threshold (Dask's workers set one) a fresh
        # block of kernel values is a fresh mapping, and its page faults took 2.3x the check
        X, K = np.empty((step, width + 2)), np.empty((step, m))
        for lo in starts:
            rows = a_rows[lo:lo + step]
            n = rows.shape[0]
            Xb, Kb = X[:n], K[:n]
            dense_rows(a_indptr, a_indices, a_values, rows, width + 2, out=Xb)
            if rbf:
                Xb[:, width] = a_sq[rows]
                Xb[:, width + 1] = 1.0
            np.matmul(Xb, ST, out=Kb)
            if rbf:
                np.minimum(Kb, 0.0, out=Kb)  # rounding: the distance is never negative
                exp_inplace(Kb.reshape(-1))
            elif kp.kind == POLY:
                Kb *= kp.gamma
                Kb += kp.coef0
                Kb **= kp.degree
            elif kp.kind == SIGMOID:
                Kb *= kp.gamma
                Kb += kp.coef0
                np.tanh(Kb, out=Kb)
            use(lo, Kb)

    starts = list(range(0, a_rows.shape[0], step))
    with _one_blas_thread():
        if threads > 1 and len(starts) > 1:  # numpy's products and exp_inplace drop the GIL
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(blocks, [starts[t::threads] for t in range(threads)]))
        else:
            blocks(starts)


def _one_blas_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")
