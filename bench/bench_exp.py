"""The exp of kernel rows (kernels.exp_inplace): LLVM's vectorisation of the scalar loop against
the product's explicit 8-wide lanes (ordered.exp_lanes).

The scalar loop (kernels._exp_block over the whole row: a Cody-Waite reduction, a degree-12
Horner chain in FMAs, 2^k in the exponent bits) is what exp_inplace ran before the lanes; LLVM
vectorises it only 4-wide on an AVX-512 machine (its preferred vector width). The lanes compute
the same operations in the same order, so both give the same bits (checked). Printed: ns an
element, the minimum over repeated timings (each timing refills the row, in both), and the
ratio. Usage: ``python bench/bench_exp.py``.
"""

import numba
import numpy as np

from bench_index import best_ns  # bench/ is the script's directory
from lasvm_cli.numerics.kernels import _exp_block, exp_inplace

N = 50_000  # about one ijcnn1 row


@numba.njit
def scalar_loop(x0, x, nbuf):
    x[:] = x0
    _exp_block(x, nbuf)


@numba.njit
def lanes(x0, x, nbuf):
    x[:] = x0
    exp_inplace(x)


def main():
    x0 = -np.random.default_rng(0).random(N) * 5.0  # RBF arguments -gamma |x - y|^2
    a, b, nbuf = np.empty(N), np.empty(N), np.empty(N, np.int64)
    scalar_loop(x0, a, nbuf)
    lanes(x0, b, nbuf)
    assert np.array_equal(a.view(np.int64), b.view(np.int64)), "the lanes changed a value"
    old = best_ns(scalar_loop, (x0, a, nbuf), n=N)
    new = best_ns(lanes, (x0, b, nbuf), n=N)
    print(f"exp of {N} elements: scalar loop {old:.3f} ns an element, 8-wide lanes {new:.3f}"
          f" ns, ratio {new / old:.2f} (same bits)")


if __name__ == "__main__":
    main()
