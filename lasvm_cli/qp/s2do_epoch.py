"""The online S2DO solver's compiled pass (Trinh 2012, Algorithm 7 with the S2DO steps of
qp/s2do.py; the run and its options: solvers/s2do_online.py): TWO_NEWS on each example, then
blocks of TWO_OLD / TWO_OLD_SUPPORTS steps drawn by their dual gain per unit of duration, the
whole epoch compiled; docs/online.md says how the schedules measure a step's duration.
"""

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..numerics import cache as kc
from . import s2do as core

_NJIT = dict(cache=True, nogil=True)

TWO_NEWS, TWO_OLD, TWO_OLD_SUPPORTS = 0, 1, 2  # the step types
S2DO_ALL, RP_S2DO_ALL, RP_S2DO_PATTERN = 0, 1, 2  # --strategy: the old steps' working sets
BLOCKS, STEPS, SECONDS, FIXED = 0, 1, 2, 3  # --step-schedule
SHORTEST = 1e-9  # a step's duration (work or seconds) is at least this in a per-step update


@numba.njit(**_NJIT)
def seed(s):
    np.random.seed(s)


@intrinsic
def monotonic_ns(typingctx):
    """CLOCK_MONOTONIC in nanoseconds (libc's clock_gettime, a vDSO call of some 20 ns):
    the wall clock of ``--step-schedule seconds``, readable inside the compiled pass."""
    def codegen(context, builder, signature, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        timespec = ir.LiteralStructType([i64, i64])
        fnty = ir.FunctionType(i32, [i32, timespec.as_pointer()])
        fn = builder.module.globals.get("clock_gettime") or \
            ir.Function(builder.module, fnty, "clock_gettime")
        with builder.goto_entry_block():  # one slot per call site, not one per loop trip
            ts = builder.alloca(timespec)
        builder.call(fn, [ir.Constant(i32, 1), ts])  # CLOCK_MONOTONIC is 1 on Linux
        zero = ir.Constant(i32, 0)
        sec = builder.load(builder.gep(ts, [zero, zero], inbounds=True))
        nsec = builder.load(builder.gep(ts, [zero, ir.Constant(i32, 1)], inbounds=True))
        return builder.add(builder.mul(sec, ir.Constant(i64, 1000000000)), nsec)
    return types.int64(), codegen


@numba.njit(**_NJIT)
def _leave_if_empty(st, c, t):
    """Pattern at position t < |W| with every alpha at 0 leaves W (swapped to |W| - 1)."""
    nW = st.ist[core.ACTIVE]
    if 0 <= t < nW and st.S[t] == 0.0:
        nW -= 1
        core.swap_positions(st, c, t, nW, True)
        st.ist[core.ACTIVE] = nW


@numba.njit(**_NJIT)
def _leave(st, c, m, n):
    a, b = max(m, n), min(m, n)
    _leave_if_empty(st, c, a)
    if b != a:
        _leave_if_empty(st, c, b)


@numba.njit(**_NJIT)
def two_news(st, c, kd, kp, k, second_rule):
    """TWO_NEWS on example k; returns the dual increase."""
    nW = st.ist[core.ACTIVE]
    t = c.pos[k]
    if t < nW:  # already a support pattern: its gradients are stored
        viol, gain, m, n = core.select_and_step(st, c, kd, kp, t, t + 1, False, t, t + 1, nW,
                                                second_rule)
        _leave(st, c, m, n)
        return gain
    if t != nW:
        core.swap_positions(st, c, t, nW, True)
    core.gradient_from(st, nW, kc.cache_get(c, kd, kp, k, nW + 1), nW)
    viol, gain, m, n = core.select_and_step(st, c, kd, kp, nW, nW + 1, False, nW, nW + 1,
                                            nW + 1, second_rule)
    if st.S[nW] > 0.0:
        st.ist[core.ACTIVE] = nW + 1
    return gain


@numba.njit(**_NJIT)
def two_old(st, c, kd, kp, supports_only, strategy, second_rule):
    """TWO_OLD (supports_only False) or TWO_OLD_SUPPORTS on W; returns the dual increase."""
    nW = st.ist[core.ACTIVE]
    if nW == 0:
        return 0.0
    if strategy == S2DO_ALL:
        lo, hi, slo, shi = 0, nW, 0, nW
    else:
        i = np.random.randint(0, nW)
        lo, hi = i, i + 1
        slo, shi = (0, nW) if strategy == RP_S2DO_ALL else (i, i + 1)
    viol, gain, m, n = core.select_and_step(st, c, kd, kp, lo, hi, supports_only, slo, shi, nW,
                                            second_rule)
    _leave(st, c, m, n)
    return gain


@numba.njit(**_NJIT)
def _step_work(step, strategy, nW, d):
    """The work of one elementary step in variables visited: TWO_NEWS computes the new
    gradients (|W| d) and scans d; an old step scans its first and second ranges and updates
    the gradients of W."""
    if step == TWO_NEWS:
        return nW * d + 3 * d
    if strategy == S2DO_ALL:
        return 3 * nW * d
    if strategy == RP_S2DO_ALL:
        return 2 * nW * d + d
    return nW * d + 2 * d


@numba.njit(**_NJIT)
def run_block(st, c, kd, kp, step, strategy, k, mult, counts, kcost, rules, gains, beta, dlog):
    """``mult`` elementary steps of one type (k: the example of TWO_NEWS); returns (dual
    increase, work): variables visited plus kcost per kernel value computed. counts[step]
    counts the steps. ``rules``: (schedule, CS second rule); with the schedules ``steps`` and
    ``seconds`` each step updates gains[step] with its increase over its duration (work or
    wall-clock seconds). ``dlog`` (tests: the reference replays the durations; empty in
    every other run): dlog[0] counts the steps, dlog[i] is the i-th step's duration."""
    total = 0.0
    work = 0.0
    d = st.ist[core.D]
    schedule, second_rule = rules[0], rules[1]
    for _ in range(mult):
        evals = c.stats[kc.KERNEL_EVALS]
        visits = _step_work(step, strategy, st.ist[core.ACTIVE], d)
        work += visits
        t0 = monotonic_ns() if schedule == SECONDS else 0
        if step == TWO_NEWS:
            inc = two_news(st, c, kd, kp, k, second_rule)
        else:
            inc = two_old(st, c, kd, kp, step == TWO_OLD_SUPPORTS, strategy, second_rule)
        rows = kcost * (c.stats[kc.KERNEL_EVALS] - evals)
        work += rows
        duration = (monotonic_ns() - t0) * 1e-9 if schedule == SECONDS else visits + rows
        if schedule == STEPS or schedule == SECONDS:
            gains[step] = beta * inc / max(duration, SHORTEST) + (1.0 - beta) * gains[step]
        if dlog.shape[0] > 0:
            i = int(dlog[0]) + 1
            if i < dlog.shape[0]:
                dlog[i] = duration
                dlog[0] = i
        total += inc
        counts[step] += 1
        st.ist[core.ITER] += 1
    return total, work


@numba.njit(**_NJIT)
def draw(gains, eta):
    """A step type with probability gains / sum, each floored at eta (then renormalised)."""
    total = 0.0
    for s in range(3):
        total += max(gains[s], 0.0)
    p = np.empty(3)
    norm = 0.0
    for s in range(3):
        p[s] = max(max(gains[s], 0.0) / total if total > 0.0 else 1.0 / 3.0, eta)
        norm += p[s]
    u = np.random.random() * norm
    for s in range(3):
        u -= p[s]
        if u < 0.0:
            return s
    return 2


@numba.njit(**_NJIT)
def run_epoch(st, c, kd, kp, order, strategy, mult, gains, counts, kcost, beta, eta, rules,
              dlog):
    """One pass (Algorithm 7, lines 5-19): for each example TWO_NEWS, then blocks drawn by
    gain per unit of duration until TWO_NEWS is drawn again (``rules[0]``, the schedule:
    BLOCKS updates the gain after each block, by its work, STEPS and SECONDS after each step,
    in run_block; FIXED draws nothing: one block of TWO_OLD, then one of TWO_OLD_SUPPORTS)."""
    schedule = rules[0]
    for r in range(order.shape[0]):
        k = order[r]
        step = TWO_NEWS
        while True:
            gain, work = run_block(st, c, kd, kp, step, strategy, k, mult[step], counts, kcost,
                                   rules, gains, beta, dlog)
            if schedule == FIXED:
                if step == TWO_OLD_SUPPORTS:
                    break
                step += 1
                continue
            if schedule == BLOCKS:
                gains[step] = beta * gain / max(work, 1.0) + (1.0 - beta) * gains[step]
            step = draw(gains, eta)
            if step == TWO_NEWS:
                break
