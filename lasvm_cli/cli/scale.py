"""``svm-scale [options] data_filename``: LIBSVM 3.37's svm-scale; scaled data on stdout.

Options are parsed as svm-scale.c does: an argument starting with ``-`` is an option whose
letter is its second character (``-lower 0`` is ``-l 0``) and whose value is the next argument,
read with C's ``atof`` (the longest numeric prefix, 0 if none); ``-y`` takes two values. The
first argument not starting with ``-`` ends the options and must be the last one.
"""

from __future__ import annotations

import sys

from ..base.errors import OutputError, ParameterError
from ..base.options import atof
from .report import STDOUT_NAME, UsageExit

USAGE = (
    "Usage: svm-scale [options] data_filename\n"
    "options:\n"
    "-l lower : x scaling lower limit (default -1)\n"
    "-u upper : x scaling upper limit (default +1)\n"
    "-y y_lower y_upper : y scaling limits (default: no y scaling)\n"
    "-s save_filename : save scaling parameters to save_filename\n"
    "-r restore_filename : restore scaling parameters from restore_filename\n"
)

def parse_args(argv):
    """Return (options dict, data filename) or raise UsageExit / ParameterError."""
    lower, upper = -1.0, 1.0
    y_range = None
    save = restore = None
    i = 0
    n = len(argv)
    while i < n:
        arg = argv[i]
        if not arg.startswith("-"):
            break
        i += 1
        letter = arg[1:2]
        if letter not in ("l", "u", "y", "s", "r"):
            raise UsageExit(USAGE, "unknown option")
        if i >= n:  # C would read past argv; we print the usage
            raise UsageExit(USAGE)
        if letter == "l":
            lower = atof(argv[i])
        elif letter == "u":
            upper = atof(argv[i])
        elif letter == "y":
            if i + 1 >= n:
                raise UsageExit(USAGE)
            y_range = (atof(argv[i]), atof(argv[i + 1]))
            i += 1
        elif letter == "s":
            save = argv[i]
        else:
            restore = argv[i]
        i += 1
    if not (upper > lower) or (y_range is not None and not (y_range[1] > y_range[0])):
        raise ParameterError("inconsistent lower/upper specification")
    if restore is not None and save is not None:
        raise ParameterError("cannot use -r and -s simultaneously")
    if n != i + 1:
        raise UsageExit(USAGE)
    opts = dict(lower=lower, upper=upper, y_range=y_range, save_path=save, restore_path=restore)
    return opts, argv[i]


def main(argv: list[str]) -> int:
    opts, data_path = parse_args(argv)
    from ..tools.scale import scale_file
    from ..base.progress import announce_compilation

    announce_compilation("svm-scale")

    out = sys.stdout
    try:
        scale_file(data_path, out, sys.stderr, **opts)
        out.flush()
    except OutputError:
        raise
    except OSError as e:  # writing the scaled data: a full disk, a closed pipe
        if e.filename is not None or isinstance(e, BrokenPipeError):
            raise
        raise OutputError(STDOUT_NAME, e.strerror or str(e)) from None
    return 0
