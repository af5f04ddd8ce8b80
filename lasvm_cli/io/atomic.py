"""Output files: atomic replacement of regular files, writes straight through for the rest.

A regular file (or a path that does not exist yet) is written to a temporary file beside its
target, fsynced, then renamed over it: a reader never sees a partial file, also when the
process is killed mid-write (the rename is the commit point; a killed writer leaves only a
``.tmp`` file). A symbolic link is followed: its target is replaced and the link stays a link.

Anything else that already exists — a character device (``/dev/null``, a terminal), a named
pipe, a socket — is opened and written in place, so ``svm-predict test model /dev/stdout``
and ``mkfifo out; svm-predict test model out`` work. ``/dev/stdout`` and ``/dev/stderr`` (and
their ``/dev/fd``/``/proc/self/fd`` spellings) write through the process's own streams, in
order with what else the command prints there.

Every failure is an :class:`~lasvm_cli.base.errors.OutputError` (``can't write FILE: reason``),
which is also an OSError; :func:`output_problem` says before long work whether a path can be
written at all.
"""

import contextlib
import errno
import os
import stat
import sys
import tempfile

from ..base.errors import OutputError

_STD_STREAMS = {"/dev/stdout": 1, "/dev/fd/1": 1, "/proc/self/fd/1": 1,
                "/dev/stderr": 2, "/dev/fd/2": 2, "/proc/self/fd/2": 2}


def _stat(path):
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def output_problem(path):
    """Why ``path`` cannot be written as an output file (a short reason), or None.

    Checks what can be checked without writing: the name, an existing directory in the way,
    the folder it goes into (exists, is a folder, writable), write permission on an existing
    device or pipe. A full disk shows only when writing (an OutputError then)."""
    path = os.fspath(path)
    if path == "":
        return "empty file name"
    if path in _STD_STREAMS:
        return None
    try:
        st = _stat(path)
    except OSError as e:  # ENOTDIR (a file used as a folder), ELOOP, EACCES ...
        return e.strerror or str(e)
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            return "is a directory"
        if not stat.S_ISREG(st.st_mode):
            return None if os.access(path, os.W_OK) else "permission denied"
    directory = os.path.dirname(os.path.realpath(path))
    try:
        dst = os.stat(directory)
    except FileNotFoundError:
        return f"no such directory {_shown_dir(path, directory)}"
    except OSError as e:
        return f"{e.strerror} ({_shown_dir(path, directory)})"
    if not stat.S_ISDIR(dst.st_mode):
        return f"{_shown_dir(path, directory)} is not a directory"
    if not os.access(directory, os.W_OK | os.X_OK):
        return f"permission denied (directory {_shown_dir(path, directory)})"
    return None


def _shown_dir(path, resolved):
    """The folder as the user wrote it, when the path has one and no symlink changes it."""
    given = os.path.dirname(path)
    if given and os.path.realpath(given) == resolved:
        return given
    return resolved


def _reason(e):
    return e.strerror or str(e) or type(e).__name__


@contextlib.contextmanager
def atomic_write(path, mode="w", encoding="ascii", newline="\n"):
    """Context manager yielding a file object; a regular ``path`` appears only if the block
    succeeds. OSError from opening, writing, syncing or renaming becomes OutputError."""
    path = os.fspath(path)
    if path in _STD_STREAMS:
        stream = sys.stdout if _STD_STREAMS[path] == 1 else sys.stderr
        try:
            if "b" in mode:
                stream.flush()
                stream = stream.buffer
            yield stream
            stream.flush()
        except OutputError:
            raise
        except OSError as e:
            raise OutputError(path, _reason(e)) from None
        return
    try:
        st = _stat(path)
    except OSError as e:
        raise OutputError(path, _reason(e)) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(path, "is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        with _write_through(path, mode, encoding, newline) as f:
            yield f
        return
    target = os.path.realpath(path)  # a symlink keeps pointing at the new file
    directory = os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(target) + ".", suffix=".tmp",
                                   dir=directory)
    except OSError as e:
        problem = output_problem(path)
        raise OutputError(path, problem or _reason(e)) from None
    try:
        if "b" in mode:
            f = os.fdopen(fd, mode)
        else:
            f = os.fdopen(fd, mode, encoding=encoding, newline=newline)
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and not isinstance(e, OutputError) and \
                e.filename in (None, tmp, target):
            raise OutputError(path, _reason(e)) from None
        raise


@contextlib.contextmanager
def _write_through(path, mode, encoding, newline):
    try:
        if "b" in mode:
            f = open(path, mode)
        else:
            f = open(path, mode, encoding=encoding, newline=newline)
    except OSError as e:
        raise OutputError(path, _reason(e)) from None
    try:
        with f:
            yield f
            f.flush()
    except OutputError:
        raise
    except OSError as e:
        if e.errno == errno.EPIPE or e.filename in (None, path):
            raise OutputError(path, _reason(e)) from None
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
