"""Seconds of a run without numba's compilation.

A cold run compiles (or loads from numba's cache) each jitted function the first time it is
called, inside the solver's first step; counted, that puts half a minute of compiling before a
trace's first row and into a run's reported seconds. A :class:`Clock` subtracts the time numba
spends holding its compiler lock (``numba:compiler_lock`` events: compiling or loading from the
cache, outermost only) while the clock runs, so a cold run's time axis is a warm run's.
"""

import time

from numba.core import event


class Clock:
    """Started at creation; ``seconds()`` is the time since, less compilation. Used as a
    context manager it stops at the block's end (``seconds()`` is then fixed)."""

    def __init__(self):
        self._compiling = event.TimingListener()
        event.register("numba:compiler_lock", self._compiling)
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
            event.unregister("numba:compiler_lock", self._compiling)
        return self._stopped

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
