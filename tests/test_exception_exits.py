"""exception_exits: numba prunes the reference-count pairs of a function's array arguments even
when it calls a jitted function that may raise (the pattern of every solver's hot path)."""

from collections import namedtuple

import numba
import numpy as np
from numba.core import callconv

import lasvm_cli.base.jit_cache  # noqa: F401 (installs the hook, as every jitted module does)

Arrays = namedtuple("Arrays", "a b c d")


def _refops_left(dispatcher):
    """NRT_incref calls left in the compiled body of the dispatcher's own function."""
    ir = dispatcher.inspect_llvm(dispatcher.signatures[0])
    body = [p for p in ir.split("\ndefine ")
            if dispatcher.__name__ in p.split("\n")[0] and "cpython" not in p.split("\n")[0]
            and "cfunc" not in p.split("\n")[0]]
    return sum(p.count("call void @NRT_incref") for p in body)


def test_the_hook_is_installed():
    assert getattr(callconv.CPUCallConv.return_status_propagate, "tagged", False)


def test_a_function_that_calls_a_raising_one_keeps_no_pairs():
    @numba.njit
    def may_raise(t, k):
        if k < 0:
            raise ValueError("negative")
        return t.a[k] + 1.0

    @numba.njit
    def caller(t, k):  # without the hook: 4 pairs (a, b, c, d) at every call
        if t.b[k] > 5.0:
            return may_raise(t, k)
        return t.c[k]

    t = Arrays(*(np.ones(10) for _ in range(4)))
    assert caller(t, 3) == 1.0
    assert _refops_left(caller) == 0
