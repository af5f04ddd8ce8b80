"""Let numba's reference-count pruning see exception exits that propagate a callee's error.

Numba increfs every array of every argument at a function's entry (a namedtuple of 14 arrays:
14 atomic increments, and 14 decrements at its exit) and relies on llvmlite's RefPrune pass
to remove the pairs. The pass's fan-out rule forgives an exit without the decref when that
exit raises, and recognises a raising block by the store to ``excinfo`` that numba tags with
``numba_exception_output``. Numba tags that store when a function raises itself, but not when
it passes on the error of a jitted function it called (``return_status_propagate``). So any
function that calls one which might fail (a kernel row, a cache fill) kept all of its pairs:
measured on banana's SMO, 125 atomic pairs per iteration, a quarter of its time.

This module tags the propagating store the same way, outside ``try`` blocks only (inside one,
the error continues into the handler instead of leaving the function). Pruning there is safe
for the same reason as for a raise: the caller holds the references for the whole call.
Imported by :mod:`lasvm_cli.base.jit_cache`, i.e. before any function of the package compiles;
a numba without this hook is left alone (only speed depends on it).

What else a function taking namedtuples of arrays needs for its pairs to go (the pass matches
an incref to a decref of the same value, and gives up on a path that meets any other decref
first): no views of an array in it (index the buffer at an offset: ``cache_row_at``); the
namedtuples passed whole to callees (``st.y`` as an argument is a temporary decref'd after
the call); no inlined helper taking them (its parameters are new references); and on each
path all of them used for the last time in the same place (``cache.held``), since numba
decrefs a variable at its last use and, where branches join, through a phi. Also observed,
not explained: one call of the builtin ``max(a, b)`` on two floats kept all 33 pairs of
select_nu (a conditional expression does not). Checked by counting (gdb breakpoints on
``NRT_incref``) and in the optimised IR: select_so, select_hmg, select_nu, _take_step and the
cache's row lookup keep none.
"""

from llvmlite import ir
from numba.core import callconv

_TAG = "numba_exception_output"


def _tag_propagating_store(propagate):
    def return_status_propagate(self, builder, status):
        block = builder.block
        start = len(block.instructions)
        propagate(self, builder, status)
        if getattr(builder, "_in_try_block", False):
            return
        for inst in block.instructions[start:]:
            if isinstance(inst, ir.StoreInstr) and inst.operands[1].name == "excinfo":
                inst.set_metadata(_TAG, builder.module.add_metadata([ir.IntType(1)(1)]))
    return_status_propagate.tagged = True
    return return_status_propagate


def install():
    conv = getattr(callconv, "CPUCallConv", None)
    original = getattr(conv, "return_status_propagate", None)
    if original is None or getattr(original, "tagged", False):
        return
    conv.return_status_propagate = _tag_propagating_store(original)


install()
