"""Progress bars on stderr (tqdm): only when stderr is a terminal, for runs that last, never
with ``-q``.

Not on a pipe or a file: a caller such as LIBSVM's ``tools/grid.py`` pipes svm-train's stderr
and never reads it, and a bar refreshed ten times a second fills a 64 KiB pipe in minutes,
after which svm-train blocks for ever. Without a terminal, stderr carries only the bounded
messages (warnings, errors, ``--counters``)."""

import sys


class SolverProgress:
    """A bar for one solver run: ``update(iterations, measure)`` between chunks of work."""

    def __init__(self, desc, unit="it", measure="viol"):
        from tqdm import tqdm

        self._bar = tqdm(desc=desc, unit=unit, file=sys.stderr, delay=1.0, leave=False,
                         dynamic_ncols=True)
        self._done = 0
        self._measure = measure

    def update(self, done, value=None):
        self._bar.update(max(int(done) - self._done, 0))
        self._done = int(done)
        if value is not None:
            self._bar.set_postfix({self._measure: f"{value:.3g}"}, refresh=False)

    def close(self):
        self._bar.close()


def progress_factory(quiet, stream=None):
    """A callable desc -> SolverProgress, or None when quiet or when ``stream`` (default
    sys.stderr) is not a terminal."""
    stream = sys.stderr if stream is None else stream
    if quiet or not _isatty(stream):
        return None
    return SolverProgress


def _isatty(stream):
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False
