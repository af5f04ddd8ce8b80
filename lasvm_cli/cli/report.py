"""One place that maps library errors to messages and exit codes (after black's Report).

Every expected failure ends here as one message on stderr and exit status 1 (130 for Ctrl-C),
never a traceback: LasvmError subclasses carry their text (``FILE:LINE: reason (token 'X')``,
``can't write FILE: reason`` ...); an OSError that escapes is reported with its file and
reason. When standard output itself cannot be written (a full disk, a closed pipe), it is
pointed at /dev/null so that Python's final flush does not fail a second time.
"""

import errno
import os
import sys

from ..base.errors import LasvmError, OutputError, ReportedInterrupt
from ..base.progress import bars_cleared


STDOUT_NAME = "standard output"  # OutputError.path when stdout itself failed


class UsageExit(Exception):
    """Raised by a parser to print its usage on stdout and exit 1, as LIBSVM's exit_with_help."""

    def __init__(self, usage, prefix=None):
        self.usage = usage
        self.prefix = prefix
        super().__init__(prefix or "usage")


def write_stdout(text):
    """Write ``text`` to stdout and flush (a progress bar on the terminal erased first, then
    drawn below it); an OutputError naming standard output on failure."""
    try:
        with bars_cleared():
            sys.stdout.write(text)
            sys.stdout.flush()
    except OSError as e:
        _drop_stdout()
        raise OutputError(STDOUT_NAME, e.strerror or str(e)) from None


def _drop_stdout():
    """Point file descriptor 1 at /dev/null (stdout failed; what is buffered is lost)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except OSError:
        pass


def _flush_stdout():
    """Flush stdout; False (and stdout dropped) when it cannot be written."""
    try:
        sys.stdout.flush()
        return True
    except OSError:
        _drop_stdout()
        return False


def _stderr(text):
    try:
        with bars_cleared():
            sys.stderr.write(text.rstrip("\n") + "\n")
            sys.stderr.flush()
    except OSError:
        pass


class _ClosedStdout:
    """sys.stdout when descriptor 1 was closed at start (Python leaves None there): a write
    fails as one to a closed descriptor does (EBADF), so the command ends with "can't write
    standard output" as for any stdout that cannot be written; with nothing written (svm-train
    -q) it runs to the end."""

    def write(self, text):
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    def flush(self):
        pass

    def fileno(self):
        raise ValueError("standard output is closed")


class _ClosedStdin:
    """sys.stdin when descriptor 0 was closed at start: a read (``-`` as the input file) fails
    as one from a closed descriptor does, naming standard input."""

    def read(self, *_):
        raise OSError(errno.EBADF, os.strerror(errno.EBADF), "standard input")

    readline = readinto = read1 = read

    @property
    def buffer(self):
        return self

    def fileno(self):
        raise ValueError("standard input is closed")


def run_guarded(main, argv):
    """Run ``main(argv) -> int``; turn expected errors into LIBSVM-style output and status 1."""
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    if sys.stdin is None:
        sys.stdin = _ClosedStdin()
    try:
        code = main(argv) or 0
        if not _flush_stdout():
            _stderr("can't write standard output")
            return 1
        return code
    except UsageExit as e:
        if e.prefix:
            _stderr(e.prefix)
        try:
            sys.stdout.write(e.usage)
        except OSError:
            pass
        _flush_stdout()
        return 1
    except LasvmError as e:
        if isinstance(e, OutputError) and e.path == STDOUT_NAME:
            _drop_stdout()
        _flush_stdout()
        _stderr(str(e))
        return e.exit_code
    except KeyboardInterrupt as e:
        if not isinstance(e, ReportedInterrupt):
            _stderr("interrupted")
        return 130
    except MemoryError as e:  # numpy names the allocation that failed; no traceback
        _flush_stdout()
        _stderr(f"out of memory: {e}" if str(e) else "out of memory")
        return 1
    except BrokenPipeError:
        _drop_stdout()
        return 1
    except OSError as e:  # an I/O failure the command did not anticipate: no traceback
        _flush_stdout()
        if e.errno == errno.EPIPE:
            return 1
        where = f"{e.filename}: " if e.filename else ""
        _stderr(f"{where}{e.strerror or e}")
        return 1
