"""bench/paper_000_cache_delta.py's pure helpers: the cache scaling of Figure 6 and its axis."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
fig = pytest.importorskip("paper_000_cache_delta")


def test_scaled_cache_keeps_the_share_of_the_kernel_matrix():
    ours, libsvm = fig.scaled_cache(1024, 60000)  # the paper's own size: unchanged
    assert ours == 1024 and libsvm == pytest.approx(1024 + 60000 * 32 / 2 ** 20)
    ours, libsvm = fig.scaled_cache(8, 6000)  # a tenth of the rows: a hundredth of the cache
    assert ours == pytest.approx(0.08)
    assert libsvm - ours == pytest.approx(6000 * 32 / 2 ** 20)  # LIBSVM's row headers


def test_relative_change_averages_per_classifier_percentages():
    assert fig.relative_change([2.0, 1.0], [1.0, 2.0]) == pytest.approx((100 - 50) / 2)
