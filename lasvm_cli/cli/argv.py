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


def read_options(argv, usage, long_flags=(), long_values=(), short_flags="q"):
    """LIBSVM's option loop (svm-train.c, svm-predict.c): options come first and end at the
    first word not starting with '-' (or at '-' itself). Returns ([(name, value, word)],
    operands), where for

    - ``--name`` in ``long_flags``: value None;
    - ``--name`` in ``long_values``: the text after '=' or the next word;
    - ``-c...``: name '-c' (only the character after '-' counts, ``-cost 5`` is ``-c 5``),
      value the next word, or None for a letter in ``short_flags`` (``-q``); ``word`` is the
      option word itself (``-w1`` carries its class in it).

    A long option not listed, or a value missing at the end, is a UsageExit with ``usage``."""
    from .report import UsageExit

    found = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if not word.startswith("-") or word == "-":
            break
        if word.startswith("--"):
            name, eq, text = word.partition("=")
            if name in long_flags:
                text = None
            elif name not in long_values:
                raise UsageExit(usage, f"Unknown option: {word}")
            elif not eq:
                i += 1
                if i >= len(argv):
                    raise UsageExit(usage)
                text = argv[i]
            found.append((name, text, word))
        elif word[1] in short_flags:
            found.append(("-" + word[1], None, word))
        else:
            i += 1
            if i >= len(argv):
                raise UsageExit(usage)
            found.append(("-" + word[1], argv[i], word))
        i += 1
    return found, argv[i:]
