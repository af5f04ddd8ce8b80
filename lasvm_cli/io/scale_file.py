"""svm-scale's range file (``-s`` / ``-r``), read and written as LIBSVM 3.37 does.

Format::

    y                    (optional block, present when y was scaled)
    y_lower y_upper
    y_min y_max
    x
    lower upper
    index min max        (one line per non-constant feature, index >= 1)

All numbers are written with ``%.17g``. The reader follows svm-scale.c's ``fscanf`` logic:
the ``y`` block is read if the file starts with ``y``; the ``x`` block only if the next
character is ``x`` (otherwise nothing more is restored); feature lines are read until one does
not parse as ``int double double``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import LasvmError

_WS = re.compile(rb"\s*")
_INT = re.compile(rb"\s*([+-]?\d+)")
_FLOAT = re.compile(
    rb"\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.IGNORECASE
)


class ScaleFileError(LasvmError):
    """The range file cannot be used; the message is LIBSVM's text."""


@dataclass
class RangeFile:
    y: tuple | None = None  # (y_lower, y_upper, y_min, y_max)
    x: tuple | None = None  # (lower, upper); None when the file has no x block
    features: list = field(default_factory=list)  # [(index, min, max), ...] in file order
    max_index: int = 0  # what svm-scale's first pass finds (largest index in the file)


class _Scanner:
    """Just enough of C's fscanf: %d, %lf, whitespace directives, fgetc/ungetc, readline."""

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def getc(self):
        if self.pos >= len(self.data):
            return None
        c = self.data[self.pos : self.pos + 1]
        self.pos += 1
        return c

    def readline(self):
        k = self.data.find(b"\n", self.pos)
        self.pos = len(self.data) if k < 0 else k + 1

    def skip_ws(self):
        self.pos = _WS.match(self.data, self.pos).end()

    def int(self):
        m = _INT.match(self.data, self.pos)
        if not m:
            return None
        self.pos = m.end()
        return int(m.group(1))

    def float(self):
        m = _FLOAT.match(self.data, self.pos)
        if not m:
            return None
        self.pos = m.end()
        return float(m.group(1))

    def floats(self, count):
        """``fscanf("%lf %lf\\n")``-style: ``count`` numbers then whitespace; None on failure."""
        out = []
        for _ in range(count):
            v = self.float()
            if v is None:
                return None
            out.append(v)
        self.skip_ws()
        return out


def _first_pass_max_index(data: bytes) -> int:
    """svm-scale's pass 1 over the restore file: the largest feature index listed."""
    s = _Scanner(data)
    if s.getc() == b"y":
        s.readline()
        s.readline()
        s.readline()
    s.readline()
    s.readline()
    max_index = 0
    while True:
        idx = s.int()
        if idx is None:
            break
        max_index = max(max_index, idx)
        # "%d %*f %*f\n": suppressed conversions; a failure just ends this fscanf call
        if s.float() is not None and s.float() is not None:
            s.skip_ws()
    return max_index


def read_range_file(path) -> RangeFile:
    """Parse a range file; raises ScaleFileError as svm-scale would, OSError if unreadable."""
    with open(path, "rb") as f:
        data = f.read()
    out = RangeFile(max_index=_first_pass_max_index(data))
    s = _Scanner(data)
    c = s.getc()
    if c == b"y":
        a = s.floats(2)
        b = s.floats(2) if a is not None else None
        if a is None or b is None:
            raise ScaleFileError("ERROR: failed to read scaling parameters")
        out.y = (a[0], a[1], b[0], b[1])
    elif c is not None:
        s.pos -= 1
    if s.getc() == b"x":
        lu = s.floats(2)
        if lu is None:
            raise ScaleFileError("ERROR: failed to read scaling parameters")
        out.x = (lu[0], lu[1])
        while True:
            save = s.pos
            idx = s.int()
            if idx is None:
                break
            mm = s.floats(2)
            if mm is None:
                s.pos = save
                break
            out.features.append((idx, mm[0], mm[1]))
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
