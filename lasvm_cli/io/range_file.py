"""svm-scale's range file (``-s`` / ``-r``), written as LIBSVM 3.37 writes it.

Format::

    y                    (optional block, present when y was scaled)
    y_lower y_upper
    y_min y_max
    x
    lower upper
    index min max        (one line per non-constant feature, index >= 1, ascending)

All numbers are written with ``%.17g``. The reader is stricter than svm-scale.c's ``fscanf``
loop, which stops at the first line it cannot parse and then scales with whatever it read (an
empty or damaged file silently scales the data with their own ranges): every line must be part
of the format, so an empty file, a missing ``x`` block, a malformed line, trailing text, NaN or
infinity, lower >= upper, min > max, or indices that are not >= 1 and strictly ascending are
a :class:`ScaleFileError` ``ERROR: failed to read scaling parameters: FILE:LINE: reason
(token 'X')``. Blank lines are ignored.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..base.errors import LasvmError

# a decimal number as the data reader accepts it (no nan, inf, hex or underscores)
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_INDEX = re.compile(r"[+-]?\d+\Z")


class ScaleFileError(LasvmError):
    """The range file cannot be used (LIBSVM's ``ERROR: failed to read scaling parameters``
    with the file, line and reason)."""

    def __init__(self, path, line, reason, token=None):
        where = f"{path}:{line}" if line is not None else f"{path}"
        msg = f"ERROR: failed to read scaling parameters: {where}: {reason}"
        if token is not None:
            msg += f" (token '{token}')"
        super().__init__(msg)


@dataclass
class RangeFile:
    y: tuple | None = None  # (y_lower, y_upper, y_min, y_max)
    x: tuple | None = None  # (lower, upper)
    features: list = field(default_factory=list)  # [(index, min, max), ...] in file order
    max_index: int = 0  # the largest feature index listed


def _numbers(path, lineno, words, count, what):
    out = []
    for w in words[:count]:
        if not _NUMBER.match(w):
            raise ScaleFileError(path, lineno, f"expected {what}", w)
        v = float(w)
        if not math.isfinite(v):
            raise ScaleFileError(path, lineno, "number out of range", w)
        out.append(v)
    if len(words) < count:
        raise ScaleFileError(path, lineno, f"expected {what}")
    if len(words) > count:
        raise ScaleFileError(path, lineno, f"unexpected text after {what}", words[count])
    return out


def read_range_file(path) -> RangeFile:
    """Parse a range file; ScaleFileError when it is not one, OSError if unreadable."""
    path_text = str(path)
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("latin-1")
    lines = [(k + 1, line.split()) for k, line in enumerate(text.split("\n"))]
    lines = [(k, words) for k, words in lines if words]
    if not lines:
        raise ScaleFileError(path_text, None, "empty file: not an svm-scale range file "
                             "(svm-scale -s writes one)")
    out = RangeFile()
    pos = 0

    def next_line(what):
        nonlocal pos
        if pos >= len(lines):
            raise ScaleFileError(path_text, None, f"unexpected end of file: expected {what}")
        pos += 1
        return lines[pos - 1]

    k, words = next_line("'y' or 'x'")
    if words == ["y"]:
        k, words = next_line("'y_lower y_upper'")
        y_lower, y_upper = _numbers(path_text, k, words, 2, "'y_lower y_upper'")
        if not y_lower < y_upper:
            raise ScaleFileError(path_text, k, "y_lower must be below y_upper")
        k, words = next_line("'y_min y_max'")
        y_min, y_max = _numbers(path_text, k, words, 2, "'y_min y_max'")
        if y_min > y_max:
            raise ScaleFileError(path_text, k, "y_min is above y_max")
        out.y = (y_lower, y_upper, y_min, y_max)
        k, words = next_line("'x'")
    if words != ["x"]:
        raise ScaleFileError(path_text, k, "expected the line 'x'" +
                             ("" if out.y else " (or a 'y' block before it)"), words[0])
    k, words = next_line("'lower upper'")
    lower, upper = _numbers(path_text, k, words, 2, "'lower upper'")
    if not lower < upper:
        raise ScaleFileError(path_text, k, "lower must be below upper")
    out.x = (lower, upper)
    prev = 0
    while pos < len(lines):
        k, words = next_line("'index min max'")
        if not _INDEX.match(words[0]):
            raise ScaleFileError(path_text, k, "expected 'index min max'", words[0])
        idx = int(words[0])
        if idx < 1:
            raise ScaleFileError(path_text, k, "feature index must be >= 1", words[0])
        if idx <= prev:
            raise ScaleFileError(path_text, k, "feature indices must ascend strictly", words[0])
        lo, hi = _numbers(path_text, k, words[1:], 2, "'index min max'")
        if lo > hi:
            raise ScaleFileError(path_text, k, "min is above max", " ".join(words))
        out.features.append((idx, lo, hi))
        prev = idx
    out.max_index = prev
    return out


def format_range_file(lower, upper, feature_min, feature_max, max_index, y=None,
                      indices=None) -> str:
    """The text svm-scale ``-s`` writes; ``y`` is (y_lower, y_upper, y_min, y_max) or None.
    ``indices``: the feature index of each entry of feature_min/feature_max (ascending), for
    arrays that hold only the indices that occur; None: entry i is index i."""
    parts = []
    if y is not None:
        parts.append("y\n%.17g %.17g\n%.17g %.17g\n" % tuple(y))
    parts.append("x\n%.17g %.17g\n" % (lower, upper))
    if indices is None:
        indices = range(max_index + 1)
    else:
        indices = [int(i) for i in indices]
    for i, lo, hi in zip(indices, list(feature_min), list(feature_max)):
        if 1 <= i <= max_index and lo != hi:
            parts.append("%d %.17g %.17g\n" % (i, lo, hi))
    return "".join(parts)


def write_range_file(path, lower, upper, feature_min, feature_max, max_index, y=None,
                     indices=None) -> None:
    """Write the range file atomically."""
    from .atomic import atomic_write

    text = format_range_file(lower, upper, feature_min, feature_max, max_index, y, indices)
    with atomic_write(path) as f:
        f.write(text)
