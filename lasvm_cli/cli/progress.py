"""Progress bars on stderr (tqdm), shown only for runs that last, silenced by ``-q``."""

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


def progress_factory(quiet):
    """None when quiet, else a callable desc -> SolverProgress."""
    return None if quiet else SolverProgress
