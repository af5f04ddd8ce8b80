"""The one drive loop of every run that trains in steps (solvers/run.py's protocol): LASVM and
its bias-free family, the online S2DO solver and the tracking algorithms, in memory or fed by a
stream. The loop steps the run and hands each step to its observers (the trace, snapshots,
state files, stopping limits, Ctrl-C, the progress bar), so a new observer is a class here or
beside its concern, and no observer has a loop of its own.

An observer sees the run only through the protocol. While the run is in its online phase the
loop asks every observer how far it may go (``room``) and whether the online phase must end
(``stop``); after each step it calls ``after_step``. Training seconds count the steps only
(less numba's compilation, base/clock.py): what observers do in between is not training.
"""

import math

from ..base.clock import Clock


class Observer:
    """What the drive loop asks of an observer; each method's default is "nothing to say"."""

    def room(self, run, drive):
        """Units of work (the run's ``processed``) the run may do before this observer must
        see it again; consulted in the online phase only."""
        return math.inf

    def stop(self, run, drive):
        """The reason to end the online phase now, or None; consulted in the online phase."""
        return None

    def start(self, run, drive):
        """Before the first step of a fresh (not resumed) run in its online phase."""

    def after_step(self, run, drive):
        """After each step; ``drive.was_online``: the step began in the online phase."""


class Drive:
    """Steps a begun ``run`` to its end, or to the end of its online phase when an observer
    says ``stop`` (``stop_reason``). ``elapsed``: training seconds so far (a resumed run
    starts from its saved seconds)."""

    def __init__(self, run, observers=(), elapsed=0.0):
        self.run = run
        self.observers = tuple(observers)
        self.elapsed = float(elapsed)
        self.stop_reason = None
        self.was_online = False

    def start(self):
        """The observers' look at the fresh run before its first step (the seeded machine:
        a first trace row, snapshots at values the seeds reach)."""
        if self.run.online:
            for o in self.observers:
                o.start(self.run, self)

    def stop(self):
        """The first observer's reason to end the online phase now, or None."""
        for o in self.observers:
            reason = o.stop(self.run, self)
            if reason:
                return reason
        return None

    def go(self):
        run = self.run
        while not run.done:
            n = run.CHUNK
            if run.online:
                self.stop_reason = self.stop()
                if self.stop_reason:
                    break
                n = max(int(min([n] + [o.room(run, self) for o in self.observers])), 1)
            self.was_online = run.online
            with Clock() as clock:
                run.step(n)
            self.elapsed += clock.seconds()
            for o in self.observers:
                o.after_step(run, self)
        return self


class Progress(Observer):
    """The progress bar's callback, ``progress(processed, n_expansion)`` after each step."""

    def __init__(self, progress):
        self.progress = progress

    def after_step(self, run, drive):
        self.progress(run.processed, run.n_expansion)


GRAIN = 100  # units of work between looks at criteria that a chunk cannot aim at (sv, seconds)


class StopLimits(Observer):
    """--stop-iterations, --stop-sv, --stop-seconds: the online phase ends at the first limit
    reached (limits on the run's totals, resumed sessions included)."""

    def __init__(self, iterations=None, sv=None, seconds=None):
        self.iterations, self.sv, self.seconds = iterations, sv, seconds

    def room(self, run, drive):
        n = math.inf
        if self.iterations is not None:
            n = self.iterations - run.processed
        if self.sv is not None or self.seconds is not None:
            n = min(n, GRAIN)
        return n

    def stop(self, run, drive):
        if self.iterations is not None and run.processed >= self.iterations:
            return f"--stop-iterations {self.iterations}"
        if self.sv is not None and run.n_expansion >= self.sv:
            return f"--stop-sv {self.sv}"
        if self.seconds is not None and drive.elapsed >= self.seconds:
            return f"--stop-seconds {self.seconds:g}"
        return None
