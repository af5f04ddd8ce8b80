"""C-library number parsing for LIBSVM-style options (``atof``/``atoi`` read a numeric prefix
and give 0 for garbage, so ``-c abc`` ends in LIBSVM's ``ERROR: C <= 0``, as in LIBSVM)."""

import re

_FLOAT = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)",
                    re.IGNORECASE)
_INT = re.compile(r"\s*[+-]?\d+")


def atof(text):
    m = _FLOAT.match(text)
    return float(m.group(0)) if m else 0.0


def atoi(text):
    m = _INT.match(text)
    return int(m.group(0)) if m else 0
