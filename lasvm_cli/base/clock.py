"""Seconds of a run without numba's compilation.

A cold run compiles (or loads from numba's cache) each jitted function the first time it is
called, inside the solver's first step; counted, that puts half a minute of compiling before a
trace's first row and into a run's reported seconds. A :class:`Clock` subtracts the time numba
spends holding its compiler lock (``numba:compiler_lock`` events: compiling or loading from the
cache, outermost only) while the clock runs, so a cold run's time axis is a warm run's. (A
numba without these events: the seconds include compiling; base/numba_internals.py.)
"""

import time

from .numba_internals import compile_timer, stop_compile_timer


class Clock:
    """Started at creation; ``seconds()`` is the time since, less compilation. Used as a
    context manager it stops at the block's end (``seconds()`` is then fixed)."""

    def __init__(self):
        self._compiling = compile_timer()
        self._t0 = time.perf_counter()
        self._stopped = None

    def seconds(self):
        if self._stopped is not None:
            return self._stopped
        compiling = self._compiling.duration if self._compiling.done else 0.0
        return time.perf_counter() - self._t0 - compiling

    def stop(self):
        if self._stopped is None:
            self._stopped = self.seconds()
            stop_compile_timer(self._compiling)
        return self._stopped

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
