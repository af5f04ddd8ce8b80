"""The training entry point of svm-train: batch training (lasvm_cli/train.py), the online
driver (lasvm_cli/online.py: save/resume, stopping, snapshots, traces) when one of its options
is set, or the tracking solvers' driver (lasvm_cli/track.py: teachers, runs, gap traces).
Neither module imports the other's caller: online.py and track.py wrap train.py."""

from .online import online_requested


def fit(problem, params, rows=None, info=None, warn=None, progress=None, rng=None, mapper=None):
    """Train a model on ``problem`` (or its ``rows``) with ``params``; returns an SVMModel.
    ``mapper``: runs batch training's one-vs-one pairs as tasks (lasvm_cli/distributed.py)."""
    from .solvers import TRACKING_SOLVERS

    if params.solver in TRACKING_SOLVERS:
        from .track import train_tracking

        return train_tracking(problem, params, rows, info, warn, progress, rng)
    if online_requested(params):
        from .online import train_online

        return train_online(problem, params, rows, info, warn, progress, rng)
    from .train import train

    quiet = lambda _m: None  # noqa: E731
    return train(problem, params, rows, info or quiet, warn or quiet, progress, rng,
                 mapper=mapper)
