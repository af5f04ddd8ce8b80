"""The training entry point of svm-train: train.train with the driver its options need
(lasvm_cli/training/driver.py: online options and tracking solvers), or the direct one."""


def fit(problem, params, rows=None, info=None, warn=None, progress=None, rng=None, mapper=None):
    """Train a model on ``problem`` (or its ``rows``) with ``params``; returns an SVMModel.
    ``mapper``: runs batch training's one-vs-one pairs as tasks (training/distributed.py)."""
    from .driver import DIRECT, Driver, drives
    from .train import train

    quiet = lambda _m: None  # noqa: E731
    info, warn = info or quiet, warn or quiet
    driver = Driver(problem, params, info, warn) if drives(params) else DIRECT
    model = train(problem, params, rows, info, warn, progress, rng, driver=driver,
                  mapper=mapper if driver is DIRECT else None)
    if driver is not DIRECT and driver.control is not None:
        model.online = driver.control  # what the run did: stop reason, snapshots written
    return model
