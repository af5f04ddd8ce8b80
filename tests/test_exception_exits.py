"""Exception exits (base/numba_internals.py, install_exception_exits): numba prunes the
reference-count pairs of a lasvm-cli function's array arguments even when it calls a jitted
function that may raise (the pattern of every solver's hot path); other packages' functions
compile as numba alone compiles them."""

from collections import namedtuple

import numba
import numpy as np
import pytest
from numba.core import callconv

import lasvm_cli.base.jit_cache  # noqa: F401 (installs the hook, as every jitted module does)
from lasvm_cli.base.numba_internals import EXCEPTION_EXITS, uses

pytestmark = pytest.mark.skipif(not uses(EXCEPTION_EXITS),
                                reason="numba's plain path: exception exits not tagged")

Arrays = namedtuple("Arrays", "a b c d")

SOURCE = '''
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
'''


def _compiled_in(module_name):
    """``caller`` of SOURCE, compiled as a function of module ``module_name``."""
    namespace = {"__name__": module_name, "numba": numba}
    exec(SOURCE, namespace)
    caller = namespace["caller"]
    t = Arrays(*(np.ones(10) for _ in range(4)))
    assert caller(t, 3) == 1.0
    return caller


def _refops_left(dispatcher):
    """NRT_incref calls left in the compiled body of the dispatcher's own function."""
    ir = dispatcher.inspect_llvm(dispatcher.signatures[0])
    body = [p for p in ir.split("\ndefine ")
            if dispatcher.__name__ in p.split("\n")[0] and "cpython" not in p.split("\n")[0]
            and "cfunc" not in p.split("\n")[0]]
    return sum(p.count("call void @NRT_incref") for p in body)


def test_the_hook_is_installed():
    assert getattr(callconv.CPUCallConv.return_status_propagate, "tagged", False)


def test_a_function_of_the_package_that_calls_a_raising_one_keeps_no_pairs():
    assert _refops_left(_compiled_in("lasvm_cli.exception_exits_probe")) == 0


def test_another_package_s_function_compiles_as_without_the_hook():
    """numba keeps the pairs of a function outside lasvm_cli: the tag is lasvm-cli's own."""
    assert _refops_left(_compiled_in("someone_else.module")) == 4
