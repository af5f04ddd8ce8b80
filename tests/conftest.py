import os
from pathlib import Path

# libsvm-official is built with OpenMP: spin-waiting threads make the oracle runs many times
# slower on a busy machine (CI's two cores are shared). Passive waiting costs little when idle.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# the one-line notice of a first compilation (base/progress.py) would sit in the stderr that
# tests compare exactly, depending on the JIT cache's state; tests/test_outputs.py checks it
os.environ.setdefault("LASVM_COMPILE_NOTICE", "0")

# commands run as subprocesses run in-process and start no warm server (cli/handoff.py), so
# no server outlives the suite; tests/test_warm_server.py runs its own
os.environ.setdefault("LASVM_SERVER", "0")

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
HEART = REPO / "data" / "heart_scale"

# Every test file's tier, in this one table (docs/testing.md; tests/test_tiers.py fails on a
# file missing here): its tests carry the tier's marker, and "fast" adds them to the tier an
# engineer runs after each edit (`make test-fast`: under two minutes with a warm JIT cache).
#   unit    a function or module against a model of it (numpy, brute force, a table, the
#           sources), in process, no LIBSVM and no command line
#   oracle  a solver's results against an independent oracle: LIBSVM (libsvm-official), the
#           papers' pseudo-code in numpy (reference_*.py), LaSVM 1.1's runs, scipy's optima
#   cli     the commands and estimators as a user runs them: exit statuses, messages, output
#           files, streams, terminals, subprocesses, clusters, downloads
#   server  the warm server (cli/warm_server.py, cli/handoff.py) and its sandboxing
TIERS = {
    "test_bad_inputs.py": ("cli", "fast"),
    "test_bench_selection.py": ("unit", "fast"),
    "test_cache.py": ("unit", "fast"),
    "test_cli_train.py": ("oracle",),
    "test_clock.py": ("unit", "fast"),
    "test_data_fetch.py": ("cli",),
    "test_docs_links.py": ("unit", "fast"),
    "test_entry.py": ("cli",),
    "test_examples.py": ("cli",),
    "test_exception_exits.py": ("unit", "fast"),
    "test_fuzz_reader.py": ("unit", "fast"),
    "test_grid.py": ("oracle",),
    "test_imports.py": ("unit", "fast"),
    "test_jit_cache.py": ("unit",),
    "test_kernels.py": ("unit", "fast"),
    "test_lasvm.py": ("oracle",),
    "test_lasvm_nc.py": ("oracle",),
    "test_lasvm_nc_reference.py": ("oracle",),
    "test_lasvm_reference.py": ("oracle",),
    "test_model_file.py": ("unit", "fast"),
    "test_numba_internals.py": ("unit",),
    "test_online.py": ("cli",),
    "test_online_core.py": ("oracle", "fast"),
    "test_options.py": ("unit", "fast"),
    "test_oracle_train.py": ("oracle",),
    "test_outputs.py": ("cli",),
    "test_paper_000_cache_delta.py": ("unit", "fast"),
    "test_paper_001_figures.py": ("unit", "fast"),
    "test_paper_002_units.py": ("unit", "fast"),
    "test_partitions.py": ("oracle",),
    "test_precompile.py": ("cli",),
    "test_predict.py": ("oracle",),
    "test_probability.py": ("unit", "fast"),
    "test_progress_tty.py": ("cli",),
    "test_rand.py": ("unit", "fast"),
    "test_reference_hmg.py": ("oracle",),
    "test_reference_hmg_rows.py": ("oracle", "fast"),
    "test_run_protocol.py": ("unit",),
    "test_s2do.py": ("oracle",),
    "test_s2do_online_options.py": ("cli",),
    "test_s2do_reference.py": ("oracle",),
    "test_scalars.py": ("unit", "fast"),
    "test_scale.py": ("unit", "fast"),
    "test_select.py": ("unit", "fast"),
    "test_sklearn.py": ("cli",),
    "test_smo.py": ("oracle",),
    "test_steps.py": ("unit", "fast"),
    "test_stream.py": ("oracle",),
    "test_stream_allinone_driven.py": ("oracle",),
    "test_stream_driven.py": ("oracle",),
    "test_stream_ovr_driven.py": ("oracle",),
    "test_svm_types.py": ("oracle",),
    "test_svmlight.py": ("unit", "fast"),
    "test_sweep.py": ("oracle",),
    "test_tiers.py": ("unit", "fast"),
    "test_tracking.py": ("oracle",),
    "test_tracking_reference.py": ("oracle",),
    "test_tracking_resume.py": ("cli",),
    "test_train_argv.py": ("unit", "fast"),
    "test_variables.py": ("unit", "fast"),
    "test_warm_server.py": ("server",),
    "test_warm_server_sandbox.py": ("server",),
    "test_wide_indices.py": ("cli",),
    "test_x_storage.py": ("unit", "fast"),
}
TIER_NAMES = {
    "unit": "a function or module against a model of it, in process",
    "oracle": "a solver against LIBSVM, the papers' pseudo-code or an optimiser",
    "cli": "the commands and estimators as a user runs them",
    "server": "the warm server",
    "fast": "the tier run after each edit (make test-fast): under two minutes, warm JIT cache",
}


def pytest_configure(config):
    for name, what in TIER_NAMES.items():
        config.addinivalue_line("markers", f"{name}: {what} (tests/conftest.py TIERS)")


def pytest_collection_modifyitems(config, items):
    """Each test gets its file's markers from TIERS; a slow test (-m slow) is never fast."""
    for item in items:
        for name in TIERS.get(item.path.name, ()):
            if name != "fast" or item.get_closest_marker("slow") is None:
                item.add_marker(name)


def precomputed(M):
    """KernelData whose precomputed kernel is exactly M (LIBSVM layout: column 0 = serial),
    and its KernelParams."""
    from lasvm_cli.numerics.kernels import PRECOMPUTED, KernelData, make_params
    n = M.shape[0]
    X = np.zeros((n, n + 1))
    X[:, 0] = np.arange(1, n + 1)
    X[:, 1:] = M
    e = np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float64)
    return KernelData(X, e[0], e[1], e[2], np.zeros(n)), make_params(PRECOMPUTED)


class RecordingBar:
    """A progress bar for the drive loop's tests (``progress=RecordingBar.into(calls)``):
    records its title, each update's count and its close; ``on_update()`` runs at each update
    (a look at the outputs between two steps)."""

    @classmethod
    def into(cls, calls, on_update=None):
        return lambda title: cls(title, calls, on_update)

    def __init__(self, title, calls, on_update=None):
        self.calls, self.on_update = calls, on_update
        calls.append(("title", title))

    def update(self, done, value=None):
        self.calls.append(("update", done))
        if self.on_update is not None:
            self.on_update()

    def close(self):
        self.calls.append(("close",))


def run_cli(command, args, code=0):
    """A click command (svm_train, svm_predict, lasvm ...) run in this process with click's
    CliRunner: its exit status must be ``code`` and its stderr free of tracebacks."""
    from click.testing import CliRunner

    result = CliRunner().invoke(command, [str(a) for a in args])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    assert "Traceback" not in result.stderr
    return result


def check_bad_input_mid_stream(tmp_path, rows_file, params, streamed, cli_options):
    """A stream's bad row after training began (the trace, a snapshot and state saves written
    before it), or a file of one class: FILE:LINE: ... or an ERROR: line, exit 1, and no
    model, trace, snapshot or state file; through ``streamed(path, params(**outputs),
    chunk_bytes, progress)`` and through svm-train with ``cli_options``."""
    from lasvm_cli.base.errors import InputFormatError
    from lasvm_cli.cli.main import svm_train

    lines = open(rows_file).read().splitlines()
    bad = tmp_path / "bad"
    bad.write_text("\n".join(lines[:150] + ["3 1:0.5 2:x"] + lines[150:]) + "\n")
    p = params(trace=str(tmp_path / "t"), snapshots="20,100000", model_file=str(tmp_path / "m"),
               save_state=str(tmp_path / "s"), save_every=0)
    seen = set()  # what the training had written, after each step
    look = RecordingBar.into([], lambda: seen.update(q.name for q in tmp_path.iterdir()))
    with pytest.raises(InputFormatError, match=f"{bad}:151: "):
        streamed(bad, p, chunk_bytes=900, progress=look)
    assert seen == {"bad", "t", "s", "m.20"}
    assert sorted(q.name for q in tmp_path.iterdir()) == ["bad"]
    outs = ["--trace", tmp_path / "t", "--snapshots", "20,100000", "--save-state",
            tmp_path / "s", "--save-every", 0]
    r = run_cli(svm_train, [*cli_options, *outs, bad, tmp_path / "m"], code=1)
    assert r.stderr.startswith(f"{bad}:151: "), r.stderr
    assert sorted(q.name for q in tmp_path.iterdir()) == ["bad"]
    one = tmp_path / "one"
    one.write_text("".join(f"3 1:{i / 40:.3f}\n" for i in range(60)))
    r = run_cli(svm_train, [*cli_options, *outs, one, tmp_path / "m"], code=1)
    assert "at least two classes" in r.stderr, r.stderr
    assert sorted(q.name for q in tmp_path.iterdir()) == ["bad", "one"]


@pytest.fixture(scope="module")
def client():
    """A Dask client of a LocalCluster of two worker processes, one thread each (the dask
    extra: skipped without it), shared by a test module."""
    pytest.importorskip("dask.distributed")
    import logging

    from dask.distributed import Client, LocalCluster

    from lasvm_cli.training.distributed import worker_env

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0", env=worker_env(2),
                           silence_logs=logging.ERROR)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def shared_data_dir():
    """The data folder: ``LASVM_DATA``, else the cache folder ``lasvm data fetch`` fills."""
    from lasvm_cli.tools.datasets import data_dir

    return data_dir()


@pytest.fixture(scope="session")
def heart_path():
    return str(HEART)


def shared_file(name, part):
    """Path of a shared data file (``LASVM_DATA``), or skip the test when it is missing."""
    path = shared_data_dir() / name / f"{part}.svm.xz"
    if not path.exists():
        pytest.skip(f"{path} not available (lasvm data fetch {name}, or set LASVM_DATA)")
    return path


def libsvm_or_skip():
    return pytest.importorskip("libsvm.svmutil")


def libsvm_x(indptr, indices, values):
    """Rows for libsvm-official: a scipy CSR matrix whose column c is file index c + 1
    (the binding adds 1 to scipy column numbers)."""
    import scipy.sparse as sp

    width = int(indices.max()) if len(indices) else 1
    return sp.csr_matrix((values, np.asarray(indices) - 1, indptr), shape=(len(indptr) - 1, width))


def libsvm_problem(y, indptr, indices, values):
    """A libsvm-official problem from CSR arrays (file indices)."""
    svmutil = libsvm_or_skip()
    return svmutil.svm_problem(np.asarray(y), libsvm_x(indptr, indices, values))


def libsvm_train_stdout(X, y, opts):
    """libsvm-official's svm_train in-process, its C stdout captured: (model, stdout text)."""
    import tempfile

    svmutil = libsvm_or_skip()
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        fd = os.dup(1)
        os.dup2(tmp.fileno(), 1)
        try:
            m = svmutil.svm_train(svmutil.svm_problem(list(y), X), opts)
        finally:
            os.dup2(fd, 1)
            os.close(fd)
        tmp.seek(0)
        return m, tmp.read().decode()


def heart_rbf_gram():
    """heart_scale with labels +-1, RBF gamma 1/13, and its whole kernel matrix:
    (kd, kp, y, K), for the bias-free online solvers' oracles."""
    from lasvm_cli.numerics.data import Problem
    from lasvm_cli.io.svmlight import read_svmlight
    from lasvm_cli.numerics.kernels import RBF, kernel_row_serial, make_params

    d = read_svmlight(str(HEART))
    kd = Problem.from_svmlight(d).kd
    y = np.where(d.y > 0, 1.0, -1.0)
    kp = make_params(RBF, gamma=1 / 13)
    K = np.empty((y.size, y.size))
    for i in range(y.size):
        kernel_row_serial(kd, i, kd, np.arange(y.size), kp, K[i])
    return kd, kp, y, K


def dual(K, y, alpha):
    """W(alpha) = y'alpha - alpha'K alpha / 2 of the bias-free dual."""
    return float(y @ alpha - 0.5 * alpha @ K @ alpha)


def box_qp_optimum(K, y, A, B, tol=1e-10):
    """Coordinate ascent on the bias-free box dual in float64, to a violation below tol:
    (alpha, W(alpha)). The oracle of the bias-free solvers."""
    alpha = np.zeros(y.size)
    g = y.copy()
    for _ in range(20000):
        for k in range(y.size):
            mu = min(max(g[k] / K[k, k], A[k] - alpha[k]), B[k] - alpha[k])
            if mu != 0.0:
                alpha[k] += mu
                g -= mu * K[:, k]
        viol = np.maximum(np.where(alpha < B, g, 0.0), np.where(alpha > A, -g, 0.0))
        if viol.max() < tol:
            return alpha, dual(K, y, alpha)
    raise AssertionError("the oracle did not converge")
