"""Progress bars on stderr (tqdm): only when stderr is a terminal, for runs that last, never
with ``-q``.

Not on a pipe or a file: a caller such as LIBSVM's ``tools/grid.py`` pipes svm-train's stderr
and never reads it, and a bar refreshed ten times a second fills a 64 KiB pipe in minutes,
after which svm-train blocks for ever. Without a terminal, stderr carries only the bounded
messages (warnings, errors, ``--counters``).

On a terminal stdout and stderr share the screen: a line printed while a bar is drawn would
start after the bar's text. Every bar is therefore made with ``bar()`` (listed while open), and
whatever prints a line does it inside ``bars_cleared()``, tqdm's ``clear()`` then its
``refresh()``, as ``tqdm.write`` does (cli/report.py's write_stdout and the stderr writers)."""

import os
import sys
from contextlib import contextmanager

BAR_DELAY = 1.0  # seconds before a bar is first drawn: short runs never show one
_open_bars = []  # tqdm bars made by bar() and not closed yet


def bar(**kwargs):
    """A tqdm bar on stderr that bars_cleared() takes off the screen while a line is printed;
    close it with close_bar()."""
    from tqdm import tqdm

    b = tqdm(file=sys.stderr, leave=False, **kwargs)
    _open_bars.append(b)
    return b


def close_bar(b):
    if b in _open_bars:
        _open_bars.remove(b)
    b.close()


def _drawn(b):
    """tqdm's own test (tqdm.close): a bar still inside its delay has never been drawn."""
    return getattr(b, "last_print_t", 0) >= b.start_t + b.delay and not b.disable


@contextmanager
def bars_cleared():
    """Erase the drawn bars (the cursor back at the start of their line), let the caller print,
    then draw them again below what it printed."""
    cleared = [b for b in _open_bars if _drawn(b)]
    for b in cleared:
        b.clear()
    try:
        yield
    finally:
        for b in cleared:
            b.refresh()


class SolverProgress:
    """A bar for one solver run: ``update(iterations, measure)`` between chunks of work. The
    bar starts at the first update, after the first chunk: a first run's JIT compilation
    (inside that chunk) is not counted as work."""

    def __init__(self, desc, unit="it", measure="viol"):
        self._desc, self._unit = desc, unit
        self._bar = None
        self._done = 0
        self._measure = measure

    def update(self, done, value=None):
        if self._bar is None:
            self._bar = bar(desc=self._desc, unit=self._unit, delay=BAR_DELAY,
                            dynamic_ncols=True)
        self._bar.update(max(int(done) - self._done, 0))
        self._done = int(done)
        if value is not None:
            self._bar.set_postfix({self._measure: f"{value:.3g}"}, refresh=False)

    def close(self):
        if self._bar is not None:
            close_bar(self._bar)


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


COMPILE_NOTICE = ("{program}: compiling the numerical code for this machine (once after an "
                  "install or upgrade; later runs load it from the cache)")
# when numba found no folder it may write its cache to (numba_internals.UNCACHED)
UNCACHED_NOTICE = ("{program}: compiling the numerical code for this machine: numba can write "
                   "its cache to no folder here (NUMBA_CACHE_DIR, the package's __pycache__, "
                   "~/.cache/numba), so every run compiles again")
_notice = None  # the process's one compile listener (base/numba_internals.py), once registered


class _CompileNotice:
    said = False
    settings = ("", True, None)

    def __call__(self):
        program, quiet, stream = self.settings
        if not self.said and not quiet:
            from .numba_internals import UNCACHED

            self.said = True
            out = sys.stderr if stream is None else stream
            text = UNCACHED_NOTICE if UNCACHED else COMPILE_NOTICE
            out.write(text.format(program=program) + "\n")
            out.flush()


def announce_compilation(program, quiet=False, stream=None):
    """Print COMPILE_NOTICE once on stderr when this process first compiles jitted code (a
    first run after install spends up to a minute there, silent otherwise). Nothing when the
    compiled code loads from numba's cache (no compile event fires), with ``-q``, or with
    LASVM_COMPILE_NOTICE=0 in the environment. One bounded line, also on a pipe. Before it,
    once, the line that says this numba takes numba's plain path somewhere
    (numba_internals.notice), under the same conditions; a numba without the API the
    compiled code needs raises its error here. From here on a Ctrl-C during one of numba's
    LLVM calls takes effect when it returns (numba_internals.hold_interrupts_while_compiling)."""
    global _notice
    from . import numba_internals

    quiet = quiet or os.environ.get("LASVM_COMPILE_NOTICE", "1") == "0"
    numba_internals.notice(program, quiet, stream)
    numba_internals.hold_interrupts_while_compiling()
    if _notice is None:
        _notice = _CompileNotice()
        numba_internals.on_first_compile(_notice)
    _notice.settings = (program, quiet, stream)
