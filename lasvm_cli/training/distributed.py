"""Tasks on Dask (the optional ``dask`` extra): ``lasvm grid``'s cells, ``svm-train -v``'s
folds and the one-vs-one pairs of ``svm-train --workers``.

The core training path never imports this module: train.py takes a ``mapper(fn, shared,
tasks)`` and the callers that want Dask (cli/train.py, cli/grid.py) build one here. The data
(a :class:`~lasvm_cli.numerics.data.Problem`) are scattered once per run, to every worker
(``broadcast``), and each task receives them by reference, so they travel once, not once per
task. Task functions are plain module functions of lasvm_cli (``train.cv_fold_reported``, ...): a
worker imports lasvm_cli and loads the compiled kernels from its own Numba cache
(``NUMBA_CACHE_DIR`` is passed to the workers of a local cluster); compiled functions are never
pickled. Each task builds its own kernel cache (``-m``), so caches stay in their worker. A
worker lost mid-run is replaced by its nanny and Dask reruns its tasks on the others (the
scattered data live on every worker); results do not depend on where a task ran.
"""

import os

# Environment a local cluster's workers get from this process (the JIT cache, above all).
PROPAGATED_ENV = ("NUMBA_CACHE_DIR", "LASVM_DATA", "OMP_WAIT_POLICY", "PYTHONPATH")


def dask_available():
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        return False
    return True


def worker_env(n_workers):
    """Environment of a local worker: this process's JIT cache and data paths, and Numba's
    thread count split between the workers so that n workers do not each spawn one thread per
    core."""
    env = {k: os.environ[k] for k in PROPAGATED_ENV if k in os.environ}
    threads = str(max(1, (os.cpu_count() or 1) // max(1, n_workers)))
    env.setdefault("NUMBA_NUM_THREADS", os.environ.get("NUMBA_NUM_THREADS", threads))
    env.setdefault("OMP_NUM_THREADS", threads)
    return env


class DaskRunner:
    """A Dask client (on an existing scheduler, or on a LocalCluster it owns) that runs tasks
    ``fn(shared, task)``. Use as a context manager; ``close()`` shuts down an owned cluster."""

    def __init__(self, scheduler=None, workers=None, client=None):
        import logging

        from dask.distributed import Client, LocalCluster

        self.cluster = None
        if client is not None:
            self.client = client
        elif scheduler:
            self.client = Client(scheduler)
        else:
            n = int(workers or os.cpu_count() or 1)
            self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                        dashboard_address=":0", env=worker_env(n),
                                        silence_logs=logging.ERROR)
            self.client = Client(self.cluster)
        self._owns_client = client is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._owns_client:
            self.client.close()
            if self.cluster is not None:
                self.cluster.close()

    def scatter(self, shared):
        """The data on every worker, once: a future that tasks take in place of the data."""
        return self.client.scatter(shared, broadcast=True, hash=False)

    def submit(self, fn, shared_future, tasks):
        return [self.client.submit(fn, shared_future, t, pure=False) for t in tasks]

    def unordered(self, fn, shared, tasks):
        """Yield (index, result) as the tasks finish."""
        from dask.distributed import as_completed

        futures = self.submit(fn, self.scatter(shared), tasks)
        index = {f.key: i for i, f in enumerate(futures)}
        for f in as_completed(futures):
            yield index[f.key], f.result()

    def __call__(self, fn, shared, tasks):
        """A mapper for train.py: the results in the order of ``tasks``."""
        return self.client.gather(self.submit(fn, self.scatter(shared), tasks))


class SerialRunner:
    """The same interface in this process, one task after the other (no Dask)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def close(self):
        pass

    def unordered(self, fn, shared, tasks):
        for i, t in enumerate(tasks):
            yield i, fn(shared, t)

    def __call__(self, fn, shared, tasks):
        return [fn(shared, t) for t in tasks]
