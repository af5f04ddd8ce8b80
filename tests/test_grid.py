"""lasvm grid against LIBSVM's tools/grid.py with LIBSVM's svm-train (Debian's libsvm-tools:
svm-grid, svm-train 3.24), and the Dask back end (lasvm_cli/training/distributed.py): cells, -v
folds and one-vs-one pairs as tasks give the serial results; data scattered once; a worker killed
mid-grid changes nothing. One small LocalCluster (2 worker processes, 1 thread each) serves
the module."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lasvm_cli.cli.main import lasvm, svm_train

from .conftest import HEART, run_cli as run
from .test_cli_train import write_four_classes

GRID = ["-log2c", "-1,1,1", "-log2g", "-3,-1,1", "-v", "5"]
# LIBSVM 3.24's grid.py with its svm-train on heart_scale, GRID (Debian's svm-grid, glibc)
LIBSVM_LINES = """\
[local] 0.0 -2.0 80.7407 (best c=1.0, g=0.25, rate=80.7407)
[local] 0.0 -3.0 81.8519 (best c=1.0, g=0.125, rate=81.8519)
[local] -1.0 -2.0 81.1111 (best c=1.0, g=0.125, rate=81.8519)
[local] -1.0 -3.0 82.963 (best c=0.5, g=0.125, rate=82.963)
[local] 0.0 -1.0 77.037 (best c=0.5, g=0.125, rate=82.963)
[local] -1.0 -1.0 78.8889 (best c=0.5, g=0.125, rate=82.963)
[local] 1.0 -2.0 77.037 (best c=0.5, g=0.125, rate=82.963)
[local] 1.0 -3.0 80.0 (best c=0.5, g=0.125, rate=82.963)
[local] 1.0 -1.0 76.2963 (best c=0.5, g=0.125, rate=82.963)
0.5 0.125 82.963
"""


def out_lines(text):
    return "".join(f"log2c={c} log2g={g} rate={r}\n" for c, g, r in
                   (line[len("[local] "):].split()[:3] for line in text.splitlines()[:-1]))


def test_grid_on_dask_prints_libsvm_grid_py_lines(client, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = run(lasvm, ["grid", *GRID, "--scheduler", client.scheduler.address, str(HEART)])
    assert res.stdout == LIBSVM_LINES
    assert res.stderr == ""  # no bar off a terminal, no Dask log lines
    assert (tmp_path / "heart_scale.out").read_text() == out_lines(LIBSVM_LINES)
    assert (tmp_path / "heart_scale.png").stat().st_size > 0  # matplotlib's contour


@pytest.mark.skipif(not (shutil.which("svm-grid") and Path("/usr/bin/svm-train").exists()),
                    reason="LIBSVM's svm-grid / svm-train not installed (apt-get install "
                           "libsvm-tools)")
def test_grid_equals_libsvm_grid_py_with_libsvm_svm_train(client, tmp_path, monkeypatch):
    """The oracle run live: Debian's grid.py with LIBSVM's own svm-train, then ours on Dask."""
    monkeypatch.chdir(tmp_path)
    theirs = subprocess.run([sys.executable, shutil.which("svm-grid"), *GRID, "-svmtrain",
                             "/usr/bin/svm-train", "-gnuplot", "null", "-out", "libsvm.out",
                             str(HEART)], capture_output=True, text=True, check=True)
    ours = run(lasvm, ["grid", *GRID, "--scheduler", client.scheduler.address, "-out",
                       "ours.out", "-gnuplot", "null", str(HEART)])
    assert ours.stdout == theirs.stdout
    assert (tmp_path / "ours.out").read_text() == (tmp_path / "libsvm.out").read_text()
    assert ours.stdout == LIBSVM_LINES


def test_grid_without_dask_runs_cells_in_process(tmp_path, monkeypatch):
    import lasvm_cli.training.distributed as d

    monkeypatch.setattr(d, "dask_available", lambda: False)
    monkeypatch.chdir(tmp_path)
    res = run(lasvm, ["grid", *GRID, "-out", "null", "-gnuplot", "null", str(HEART)])
    assert res.stdout == LIBSVM_LINES
    assert res.stderr.count("\n") == 1 and "pip install 'lasvm-cli[dask]'" in res.stderr
    assert not (tmp_path / "heart_scale.out").exists()


def test_grid_bar_over_cells_on_a_terminal_only(tmp_path, monkeypatch):
    import lasvm_cli.cli.grid as cli_grid
    import lasvm_cli.training.distributed as d

    monkeypatch.setattr(d, "dask_available", lambda: False)
    monkeypatch.setattr(cli_grid, "_isatty", lambda stream: True)
    monkeypatch.chdir(tmp_path)
    res = run(lasvm, ["grid", *GRID, "-out", "null", "-gnuplot", "null", str(HEART)])
    assert res.stdout == LIBSVM_LINES
    assert "grid:" in res.stderr and "/9 [" in res.stderr and "cell/s" in res.stderr


def test_grid_resume_and_one_axis(tmp_path, monkeypatch):
    import lasvm_cli.training.distributed as d

    monkeypatch.setattr(d, "dask_available", lambda: False)
    monkeypatch.chdir(tmp_path)
    done = out_lines(LIBSVM_LINES).splitlines(keepends=True)
    (tmp_path / "heart_scale.out").write_text("".join(done[:4]))
    res = run(lasvm, ["grid", *GRID, "-resume", "-gnuplot", "null", str(HEART)])
    lines = res.stdout.splitlines()
    assert [x.split(" (")[0] for x in lines[:4]] == \
        [x.split(" (")[0].replace("[local]", "[resumed]") for x in LIBSVM_LINES.splitlines()[:4]]
    assert lines[4:] == LIBSVM_LINES.splitlines()[4:]
    assert (tmp_path / "heart_scale.out").read_text() == out_lines(LIBSVM_LINES)
    res = run(lasvm, ["grid", "-log2c", "-1,1,1", "-log2g", "null", "-out", "null",
                      str(HEART)])
    assert res.stdout.splitlines()[-1].split()[0] in ("0.5", "1.0", "2.0")
    assert res.stdout.splitlines()[0].startswith("[local] 0.0 ")


def test_grid_errors_as_grid_py(tmp_path):
    res = run(lasvm, ["grid", "-c", "1", str(HEART)], code=1)
    assert res.stderr == 'Use -log2c and -log2g.\nTry "lasvm grid" for more information.\n'
    res = run(lasvm, ["grid", str(tmp_path / "missing")], code=1)
    assert res.stderr.startswith("dataset not found\n")


def test_data_scattered_once_for_all_cells(client):
    from lasvm_cli.cli.grid import load
    from lasvm_cli.training.distributed import DaskRunner
    from lasvm_cli.tools.grid import GridOptions, run_grid

    options = GridOptions(str(HEART), GRID + ["-out", "null"])
    problem, params, nr_fold = load(options)
    runner = DaskRunner(client=client)
    scattered, submitted = [], []
    scatter, submit = runner.scatter, runner.submit
    runner.scatter = lambda shared: scattered.append(shared) or scatter(shared)
    runner.submit = lambda fn, f, tasks: submitted.append(len(tasks)) or submit(fn, f, tasks)
    lines = []
    run_grid(options, problem, params, nr_fold, runner, lines.append)
    assert "".join(lines) == LIBSVM_LINES
    assert len(scattered) == 1 and submitted == [9]


def test_cross_validation_folds_on_dask_equal_serial(client, tmp_path, multi_path):
    address = client.scheduler.address
    res = run(svm_train, ["-q", "-v", "5", "--scheduler", address, str(HEART)])
    assert res.stdout == "Cross Validation Accuracy = 82.963%\n"  # LIBSVM 3.37's
    for opts in (["-q", "-v", "5", "-b", "1"], ["-q", "-v", "4", "-c", "2"],
                 ["-v", "3", "-b", "1"]):  # without -q: every fold's lines, in fold order
        serial = run(svm_train, [*opts, multi_path]).stdout
        dask = run(svm_train, [*opts, "--scheduler", address, multi_path]).stdout
        assert dask == serial
    assert serial.count("optimization finished") == 3 * 6 * 6  # folds x pairs x (5 + 1)


@pytest.fixture
def multi_path(tmp_path):
    return str(write_four_classes(tmp_path / "multi"))


def test_one_vs_one_pairs_on_workers_give_the_serial_model(tmp_path, multi_path):
    pytest.importorskip("dask.distributed")
    serial, dask = tmp_path / "serial.model", tmp_path / "dask.model"
    for extra, model in (([], serial), (["--workers", "2"], dask)):
        out = run(svm_train, ["-c", "2", "-b", "1", "-w2", "3", *extra, multi_path,
                              str(model)]).stdout
        if not extra:
            serial_out = out
    assert out == serial_out  # LIBSVM's lines, pair by pair, in order
    assert dask.read_bytes() == serial.read_bytes()


def test_core_training_path_loads_no_dask(tmp_path):
    code = ("import sys; from lasvm_cli.cli.report import run_guarded; "
            "from lasvm_cli.cli.train import main; "
            f"assert run_guarded(main, ['-q', {str(HEART)!r}, {str(tmp_path / 'm')!r}]) == 0; "
            "assert not [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed') "
            "or m in ('lasvm_cli.training.distributed', 'lasvm_cli.tools.grid')], 'loaded'")
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ.copy())


def test_worker_killed_mid_grid_changes_nothing(client):
    """SIGKILL a worker process while it runs cells: its nanny restarts it, Dask reruns its
    cells (the data are on every worker), and the grid's output is unchanged."""
    from lasvm_cli.cli.grid import load
    from lasvm_cli.training.distributed import DaskRunner
    from lasvm_cli.tools.grid import GridOptions, run_grid

    grid = ["-log2c", "-2,2,1", "-log2g", "-5,-1,1", "-v", "5", "-out", "null"]
    options = GridOptions(str(HEART), grid)
    problem, params, nr_fold = load(options)
    expected = []
    from lasvm_cli.training.distributed import SerialRunner

    run_grid(options, problem, params, nr_fold, SerialRunner(), expected.append)

    runner = DaskRunner(client=client)
    unordered = runner.unordered
    killed = []

    def killing(fn, shared, tasks):
        for n, item in enumerate(unordered(fn, shared, tasks)):
            if n == 0:
                busy = [w for w, keys in client.processing().items() if keys]
                pids = client.run(os.getpid, workers=busy[:1])
                for pid in pids.values():
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            yield item

    runner.unordered = killing
    lines = []
    run_grid(options, problem, params, nr_fold, runner, lines.append)
    assert killed, "no worker was busy"
    assert lines == expected
    client.wait_for_workers(2, timeout=60)
    assert not set(client.run(os.getpid).values()) & set(killed)


def test_svm_train_workers_options_checked(monkeypatch):
    import lasvm_cli.training.distributed as d

    res = run(svm_train, ["--workers", "0", "-v", "5", str(HEART)], code=1)
    assert res.stderr == "ERROR: --workers must be at least 1\n"
    res = run(svm_train, ["--workers", "2", "--scheduler", "tcp://x:1", str(HEART)], code=1)
    assert "exclude each other" in res.stderr
    res = run(svm_train, ["--workers", "2", "--solver", "lasvm", "--stop-sv", "5", str(HEART)],
              code=1)
    assert res.stderr.startswith("ERROR: --workers and --scheduler: only for batch training")
    monkeypatch.setattr(d, "dask_available", lambda: False)
    res = run(svm_train, ["-q", "--workers", "2", "-v", "5", str(HEART)], code=1)
    assert res.stderr == ("ERROR: --workers and --scheduler need Dask: "
                          "pip install 'lasvm-cli[dask]'\n")


# -- regression: cells scored by cross-validation MSE ------------------------------------------

REGRESSION_GRID = ["-log2c", "-1,1,1", "-log2g", "-2,0,1", "-v", "5"]


def write_regression(path):
    """150 rows, y = sin(x1) + x2 / 2 + noise: real targets that no prediction hits exactly."""
    import numpy as np

    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(150, 3))
    y = np.sin(3 * X[:, 0]) + 0.5 * X[:, 1] + rng.normal(scale=0.1, size=150)
    path.write_text("".join(f"{t:.6f} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in
                                                 enumerate(x)) + "\n" for t, x in zip(y, X)))
    return path


@pytest.mark.parametrize("svm_type", ["3", "4"])
def test_regression_grid_searches_by_cross_validation_mse(tmp_path, monkeypatch, svm_type):
    import lasvm_cli.training.distributed as d

    monkeypatch.setattr(d, "dask_available", lambda: False)
    monkeypatch.chdir(tmp_path)
    data = str(write_regression(tmp_path / "reg"))
    res = run(lasvm, ["grid", "-s", svm_type, *REGRESSION_GRID, "-gnuplot", "null", data])
    lines = res.stdout.splitlines()
    cells = [line.split(" (")[0].split()[1:] for line in lines[:-1]]
    assert len(cells) == 9 and all(" mse=" in line and "rate" not in line
                                   for line in lines[:-1])
    mse = {(float(c), float(g)): float(m) for c, g, m in cells}
    assert len(set(mse.values())) > 1
    # each cell's value is what svm-train -v prints for it
    for (c, g), value in list(mse.items())[:2]:
        out = run(svm_train, ["-q", "-s", svm_type, "-v", "5", "-c", str(2 ** c), "-g",
                              str(2 ** g), data]).stdout
        assert out.splitlines()[0] == f"Cross Validation Mean squared error = {value:g}"
    (best_c, best_g), best = min(mse.items(), key=lambda kv: kv[1])
    assert lines[-1] == f"{2.0 ** best_c} {2.0 ** best_g} {best}"
    assert lines[-2].endswith(f"(best c={2.0 ** best_c}, g={2.0 ** best_g}, mse={best})")
    assert (tmp_path / "reg.out").read_text() == "".join(
        f"log2c={c} log2g={g} mse={m}\n" for c, g, m in cells)
    # -resume reads the MSEs back: the best cell stays the best
    out = (tmp_path / "reg.out").read_text().splitlines(keepends=True)
    (tmp_path / "reg.out").write_text("".join(out[:5]))
    res = run(lasvm, ["grid", "-s", svm_type, *REGRESSION_GRID, "-resume", "-gnuplot", "null",
                      data])
    assert res.stdout.count("[resumed]") == 5 and res.stdout.count("[local]") == 4
    assert res.stdout.splitlines()[-1] == lines[-1]


def test_regression_grid_plot_says_mse(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from lasvm_cli.tools.grid import GridOptions, Reporter, contour_title, draw_contour

    data = str(write_regression(tmp_path / "reg"))
    options = GridOptions(data, ["-png", str(tmp_path / "reg.png")])
    options.measure = "mse"
    rep = Reporter(options, None, lambda _line: None)
    db = [(c, g, 0.1 + 0.01 * c * c + 0.02 * g * g) for c in (-1.0, 0.0, 1.0)
          for g in (-2.0, -1.0, 0.0)]
    for c, g, m in db:
        rep.update(c, g, m, "local", False)
    assert (rep.best_c, rep.best_g, rep.best_rate) == (0.0, 0.0, 0.1)
    title = contour_title(rep, options)
    assert "mse = 0.1" in title and "accuracy" not in title
    assert draw_contour(db, rep, options) and (tmp_path / "reg.png").stat().st_size > 0


def test_one_class_grid_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = run(lasvm, ["grid", "-s", "2", str(HEART)], code=1)
    assert res.stderr.startswith("ERROR: lasvm grid: -s 2 (one-class SVM) has no "
                                 "cross-validation measure")
    assert res.stdout == "" and list(tmp_path.iterdir()) == []  # no .out file, no plot
