"""Atomic file output: write to a temporary file beside the target, fsync, then rename.

A reader never sees a partial file, also when the process is killed mid-write: the rename is
the commit point, and a killed writer leaves only a ``.tmp`` file that the next run replaces.
"""

import contextlib
import os
import tempfile


@contextlib.contextmanager
def atomic_write(path, mode="w", encoding="ascii", newline="\n"):
    """Context manager yielding a file object; ``path`` appears only if the block succeeds."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        if "b" in mode:
            f = os.fdopen(fd, mode)
        else:
            f = os.fdopen(fd, mode, encoding=encoding, newline=newline)
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
