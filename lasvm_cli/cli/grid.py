"""lasvm grid: LIBSVM's tools/grid.py (options, output lines, .out file, best line) with the
cells run as cross-validation tasks on Dask (tools/grid.py, training/distributed.py)."""

import sys

from ..base.errors import ParameterError
from ..base.progress import bar as progress_bar
from ..base.progress import close_bar
from .report import UsageExit, write_stdout

USAGE = """\
Usage: lasvm grid [grid_options] [svm_options] dataset

grid_options :
-log2c {begin,end,step | "null"} : set the range of c (default -5,15,2)
    begin,end,step -- c_range = 2^{begin,...,begin+k*step,...,end}
    "null"         -- do not grid with c
-log2g {begin,end,step | "null"} : set the range of g (default 3,-15,-2)
    begin,end,step -- g_range = 2^{begin,...,begin+k*step,...,end}
    "null"         -- do not grid with g
-v n : n-fold cross validation (default 5)
-svmtrain pathname : accepted and ignored (the cells run lasvm-cli's training, no svm-train binary)
-gnuplot {pathname | "null"} :
    pathname -- accepted: the contour is drawn with matplotlib
    "null"   -- do not plot
-out {pathname | "null"} : (default dataset.out)
    pathname -- set output file path and name
    "null"   -- do not output file
-png pathname : set graphic output file path and name (default dataset.png)
-resume [pathname] : resume the grid task using an existing output file (default pathname is dataset.out)
    This is experimental. Try this option only if some parameters have been checked for the SAME data.
--workers n : size of the local Dask cluster (default: one worker per core)
--scheduler address : run the cells on an existing Dask cluster (tcp://host:8786)

svm_options : additional options for svm-train (lasvm-cli's, LIBSVM's included)

With -s 3 or -s 4 (regression) each cell is scored by its cross-validation mean squared
error, the lowest best, and the lines, the .out file and the plot say mse instead of rate.
-s 2 (one-class SVM) is refused: its cross-validation has no measure to search by.
"""

NO_DASK = ("lasvm grid: Dask is not installed, so the cells run one after another in this "
           "process; for parallel cells: pip install 'lasvm-cli[dask]'")


def main(argv):
    from ..tools.grid import GridError, GridOptions, draw_contour, run_grid

    if len(argv) < 1:
        raise UsageExit(USAGE)
    try:
        options = GridOptions(argv[-1], argv[:-1])
    except GridError as e:
        raise ParameterError(f'{e}\nTry "lasvm grid" for more information.') from None
    problem, params, nr_fold = load(options)
    runner = make_runner(options)
    bar = None
    if _isatty(sys.stderr):
        from ..tools.grid import calculate_jobs

        jobs, resumed = calculate_jobs(options)
        total = sum(1 for line in jobs for cg in line if cg not in resumed)
        # write_stdout erases it while each [local] line is printed (progress.bars_cleared)
        bar = progress_bar(total=total, desc="grid", unit="cell")
    try:
        with runner:
            _, _, db, rep = run_grid(options, problem, params, nr_fold, runner, write_stdout,
                                     progress=bar)
    finally:
        if bar is not None:
            close_bar(bar)
    if options.plot and options.grid_with_c and options.grid_with_g:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            sys.stderr.write("matplotlib not installed: no contour plot "
                             "(pip install 'lasvm-cli[plot]')\n")
        else:
            draw_contour(db, rep, options)
    return 0


def load(options):
    """Read the data once and check svm-train's options on the first cell's command line
    (grid.py's ``svm-train -c C -g G -v n [svm_options] dataset``)."""
    from ..numerics.data import Problem
    from ..io.svmlight import read_svmlight
    from ..training.params import check_parameter
    from .train import check_data, check_kernel_range, parse_command_line

    argv = []
    if options.grid_with_c:
        argv += ["-c", "1"]
    if options.grid_with_g:
        argv += ["-g", "1"]
    argv += ["-v", options.fold] + options.pass_through + [options.dataset_pathname]
    o = parse_command_line(argv)
    p = o.params
    if p.svm_type == 2:  # svm-train -v would count predicted +1/-1 equal to the file's labels
        raise ParameterError("ERROR: lasvm grid: -s 2 (one-class SVM) has no cross-validation "
                             "measure to search by; use -s 0, 1 (accuracy) or -s 3, 4 (mean "
                             "squared error)")
    options.measure = "mse" if p.svm_type in (3, 4) else "rate"
    if o.stream:
        raise ParameterError("ERROR: --stream does not support cross validation (-v)")
    precomputed = p.kernel_type == 4
    try:
        data = read_svmlight(o.input_file, zero_based=o.zero_based or precomputed,
                             precomputed=precomputed, check_norms=not precomputed)
    except OSError:
        raise ParameterError(f"can't open input file {o.input_file}") from None
    check_data(data, o.input_file)
    if not options.grid_with_g and p.gamma == 0 and data.max_index > 0:
        p.gamma = 1.0 / data.max_index
    err = check_parameter(p)
    if err:
        raise ParameterError(f"ERROR: {err}")
    check_kernel_range(data, p)
    problem = Problem.from_svmlight(data, kernel_type=p.kernel_type, x_storage=p.x_storage)
    nr_fold = min(o.nr_fold, problem.n)
    return problem, p, nr_fold


def make_runner(options):
    from ..training.distributed import DaskRunner, SerialRunner, dask_available

    if not dask_available():
        if options.scheduler or options.workers:
            raise ParameterError("ERROR: --scheduler and --workers need Dask: "
                                 "pip install 'lasvm-cli[dask]'")
        sys.stderr.write(NO_DASK + "\n")
        return SerialRunner()
    return DaskRunner(scheduler=options.scheduler, workers=options.workers)


def _isatty(stream):
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
