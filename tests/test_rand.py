"""Our glibc rand() against the C library's own (the oracle), where the platform has glibc."""

import ctypes
import ctypes.util
import platform

import pytest

from lasvm_cli.base.rand import GlibcRand


def test_known_first_values_for_seed_1():
    g = GlibcRand(1)
    assert [g.rand() for _ in range(3)] == [1804289383, 846930886, 1681692777]


@pytest.mark.skipif(platform.system() != "Linux", reason="needs glibc")
@pytest.mark.parametrize("seed", [1, 2, 12345, 2**31 - 1, 2**32 - 5])
def test_matches_libc(seed):
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.srand(ctypes.c_uint(seed))
    g = GlibcRand(seed)
    assert [g.rand() for _ in range(2000)] == [libc.rand() for _ in range(2000)]
