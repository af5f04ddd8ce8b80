"""bench/paper_000_selection.py's pure helpers (make paper-000's Figures 11-15): the measuring
points and the digit relabelling of the noisy MNIST condition."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from paper_000_selection import checkpoints, relabel_digits  # noqa: E402


def test_checkpoints_double_and_end_at_the_epoch():
    assert checkpoints(1000, first=50) == [50, 100, 200, 400, 800, 1000]
    assert checkpoints(400, first=50, per_doubling=2) == [50, 71, 100, 141, 200, 283, 400]
    assert checkpoints(30, first=50) == [30]


def test_relabel_digits_changes_the_fraction_to_other_digits():
    digits = np.arange(1000) % 10
    noisy = relabel_digits(digits, 0.1, seed=0)
    assert np.count_nonzero(noisy != digits) == 100
    assert noisy.min() >= 0 and noisy.max() <= 9
