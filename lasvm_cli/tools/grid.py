"""``lasvm grid``: LIBSVM's tools/grid.py over (C, gamma) cells, each cell one cross-validation
task (train.cv_accuracy, or train.cv_mse for regression) run in this process or on Dask
(lasvm_cli/training/distributed.py).

Kept from grid.py: the options, the order of the cells (calculate_jobs: coarse to fine),
the ``[local] c g rate (best c=..., g=..., rate=...)`` lines and their best-so-far rule, the
``.out`` file (``log2c=.. log2g=.. rate=..``), ``-resume`` and the final ``best_c best_g
best_rate`` line. Lines are printed in the order of the cells whatever order the tasks finish
in, so the output is grid.py's with one local worker (its default), line for line. The contour
plot is drawn with matplotlib (the plot extra) once at the end, instead of gnuplot.

Regression (-s 3, -s 4): grid.py would read svm-train's "Cross Validation Mean squared error"
line as a rate, and an accuracy of exact matches means nothing for real targets, so the cells
are scored by their cross-validation MSE, the lowest best, and every line, the ``.out`` file
and the plot say ``mse`` where classification says ``rate`` (LIBSVM's gridregression.py words).
"""

import os
import re


class GridError(Exception):
    """grid.py's IOError/ValueError: printed with 'Try "lasvm grid" for more information.'"""


class GridOptions:
    def __init__(self, dataset_pathname, options):
        self.fold = "5"
        self.c_begin, self.c_end, self.c_step = -5, 15, 2
        self.g_begin, self.g_end, self.g_step = 3, -15, -2
        self.grid_with_c, self.grid_with_g = True, True
        self.dataset_pathname = dataset_pathname
        self.dataset_title = os.path.split(dataset_pathname)[1]
        self.out_pathname = f"{self.dataset_title}.out"
        self.png_pathname = f"{self.dataset_title}.png"
        self.plot = True
        self.resume_pathname = None
        self.pass_through = []
        self.scheduler = None
        self.workers = None
        self.measure = "rate"  # "mse" for regression: set once svm-train's options are read
        self._parse(list(options))

    def _parse(self, options):
        i = 0
        value = lambda: options[i] if i < len(options) else _missing(options[i - 1])  # noqa
        while i < len(options):
            o = options[i]
            if o in ("-log2c", "-log2g"):
                i += 1
                v = value()
                axis = o[-1]
                if v == "null":
                    setattr(self, f"grid_with_{axis}", False)
                else:
                    try:
                        b, e, s = map(float, v.split(","))
                    except ValueError:
                        raise GridError(f"{o} needs begin,end,step or null, not '{v}'") from None
                    if s == 0:
                        raise GridError(f"{o}: step must not be 0")
                    setattr(self, f"{axis}_begin", b)
                    setattr(self, f"{axis}_end", e)
                    setattr(self, f"{axis}_step", s)
            elif o == "-v":
                i += 1
                self.fold = value()
            elif o in ("-c", "-g"):
                raise GridError("Use -log2c and -log2g.")
            elif o == "-svmtrain":  # grid.py's path to svm-train: ours runs in-process
                i += 1
                value()
            elif o == "-gnuplot":  # "null": no plot; a gnuplot path: the plot (matplotlib)
                i += 1
                self.plot = value() != "null"
            elif o == "-out":
                i += 1
                v = value()
                self.out_pathname = None if v == "null" else v
            elif o == "-png":
                i += 1
                self.png_pathname = value()
            elif o == "-resume":
                if i == len(options) - 1 or options[i + 1].startswith("-"):
                    self.resume_pathname = self.dataset_title + ".out"
                else:
                    i += 1
                    self.resume_pathname = options[i]
            elif o == "--scheduler":
                i += 1
                self.scheduler = value()
            elif o == "--workers":
                i += 1
                try:
                    self.workers = int(value())
                except ValueError:
                    raise GridError(f"--workers needs a number, not '{options[i]}'") from None
                if self.workers < 1:
                    raise GridError("--workers must be at least 1")
            else:
                self.pass_through.append(o)
            i += 1
        if not os.path.exists(self.dataset_pathname):
            raise GridError("dataset not found")
        if self.resume_pathname and not os.path.exists(self.resume_pathname):
            raise GridError("file for resumption not found")
        if not self.grid_with_c and not self.grid_with_g:
            raise GridError("-log2c and -log2g should not be null simultaneously")
        if self.scheduler and self.workers:
            raise GridError("--scheduler and --workers exclude each other (--workers sizes "
                            "the local cluster)")


def _missing(option):
    raise GridError(f"{option} needs a value")


def range_f(begin, end, step):
    """grid.py's range over floats, end included."""
    seq = []
    while True:
        if step > 0 and begin > end:
            break
        if step < 0 and begin < end:
            break
        seq.append(begin)
        begin = begin + step
    return seq


def permute_sequence(seq):
    n = len(seq)
    if n <= 1:
        return seq
    mid = int(n / 2)
    left = permute_sequence(seq[:mid])
    right = permute_sequence(seq[mid + 1:])
    ret = [seq[mid]]
    while left or right:
        if left:
            ret.append(left.pop(0))
        if right:
            ret.append(right.pop(0))
    return ret


def calculate_jobs(options):
    """grid.py's job lines (coarse to fine) and the rates read back from a -resume file."""
    c_seq = permute_sequence(range_f(options.c_begin, options.c_end, options.c_step))
    g_seq = permute_sequence(range_f(options.g_begin, options.g_end, options.g_step))
    if not options.grid_with_c:
        c_seq = [None]
    if not options.grid_with_g:
        g_seq = [None]
    nr_c, nr_g = float(len(c_seq)), float(len(g_seq))
    i, j = 0, 0
    jobs = []
    while i < nr_c or j < nr_g:
        if i / nr_c < j / nr_g:
            jobs.append([(c_seq[i], g_seq[k]) for k in range(0, j)])
            i += 1
        else:
            jobs.append([(c_seq[k], g_seq[j]) for k in range(0, i)])
            j += 1
    resumed = {}
    if options.resume_pathname is None:
        return jobs, resumed
    # an MSE may be printed with an exponent (%g); grid.py's own pattern for rates is kept
    pattern = r"rate=([0-9.]+)" if options.measure == "rate" else r"mse=([0-9.eE+-]+)"
    with open(options.resume_pathname) as f:
        for line in f:
            line = line.strip()
            rst = re.findall(pattern, line)
            if not rst:
                continue
            rate = float(rst[0])
            c = g = None
            rst = re.findall(r"log2c=([0-9.-]+)", line)
            if rst:
                c = float(rst[0])
            rst = re.findall(r"log2g=([0-9.-]+)", line)
            if rst:
                g = float(rst[0])
            resumed[(c, g)] = rate
    return jobs, resumed


def cell_params(base, c, g):
    """Training parameters of cell (log2 C, log2 gamma): grid.py's ``-c 2**c -g 2**g``."""
    import dataclasses

    p = dataclasses.replace(base, weights=dict(base.weights))
    if c is not None:
        p.C = 2.0 ** c
    if g is not None:
        p.gamma = 2.0 ** g
    return p


class Reporter:
    """grid.py's update_param: the best so far, one stdout line per cell, the .out file.
    ``best_rate`` holds the best MSE when options.measure is "mse" (lowest wins)."""

    def __init__(self, options, out, write):
        self.options = options
        self.out = out
        self.write = write
        self.measure = options.measure
        self.best_rate = -1 if self.measure == "rate" else None
        self.best_c, self.best_g = None, None

    def better(self, rate):
        if self.measure == "rate":
            return rate > self.best_rate
        return self.best_rate is None or rate < self.best_rate

    def update(self, c, g, rate, worker, resumed):
        if self.better(rate) or (rate == self.best_rate and g == self.best_g
                                 and c < self.best_c):
            self.best_rate, self.best_c, self.best_g = rate, c, g
        line = "[{0}] {1} {2} (best ".format(worker, " ".join(str(x) for x in [c, g]
                                                            if x is not None), rate)
        out_line = ""
        if c is not None:
            line += f"c={2.0 ** self.best_c}, "
            out_line += f"log2c={c} "
        if g is not None:
            line += f"g={2.0 ** self.best_g}, "
            out_line += f"log2g={g} "
        line += f"{self.measure}={self.best_rate})"
        self.write(line + "\n")
        if self.out is not None and not resumed:
            self.out.write(out_line + f"{self.measure}={rate}\n")
            self.out.flush()

    def final_line(self):
        best = []
        if self.best_c is not None:
            best.append(2.0 ** self.best_c)
        if self.best_g is not None:
            best.append(2.0 ** self.best_g)
        return "{0} {1}".format(" ".join(map(str, best)), self.best_rate)


def run_grid(options, problem, base_params, nr_fold, runner, write, progress=None):
    """Run every cell not resumed on ``runner`` (distributed.DaskRunner or SerialRunner);
    report in grid.py's order. Returns (best_rate, {'c': C, 'g': gamma}, db) where db lists
    (log2c, log2g, rate) per cell (the MSE when options.measure is "mse")."""
    from ..training.train import cv_accuracy, cv_mse

    score = cv_accuracy if options.measure == "rate" else cv_mse
    jobs, resumed = calculate_jobs(options)
    out = None
    if options.out_pathname:
        out = open(options.out_pathname, "a" if options.resume_pathname else "w")
    try:
        rep = Reporter(options, out, write)
        for (c, g), rate in resumed.items():
            rep.update(c, g, rate, "resumed", True)
        cells = []
        for line in jobs:
            for cg in line:
                if cg not in resumed and cg not in cells:
                    cells.append(cg)
        tasks = [(cell_params(base_params, c, g), nr_fold) for c, g in cells]
        done = dict(resumed)
        reported = set()
        order = [cg for line in jobs for cg in line]
        next_report = 0
        db = []
        for index, rate in runner.unordered(score, problem, tasks):
            done[cells[index]] = rate
            if progress is not None:
                progress.update(1)
            while next_report < len(order) and order[next_report] in done:
                cg = order[next_report]
                if cg not in resumed and cg not in reported:
                    rep.update(cg[0], cg[1], done[cg], "local", False)
                    reported.add(cg)
                next_report += 1
        for cg in order:
            db.append((cg[0], cg[1], done[cg]))
    finally:
        if out is not None:
            out.close()
    best_param = {}
    if rep.best_c is not None:
        best_param["c"] = 2.0 ** rep.best_c
    if rep.best_g is not None:
        best_param["g"] = 2.0 ** rep.best_g
    write(rep.final_line() + "\n")
    return rep.best_rate, best_param, db, rep


def contour_title(rep, options):
    """grid.py's plot title; for regression the best cell's MSE instead of its accuracy."""
    best = f"accuracy = {rep.best_rate}%" if rep.measure == "rate" else f"mse = {rep.best_rate}"
    return (f"{options.dataset_title}\nBest log2(C) = {rep.best_c}  log2(gamma) = "
            f"{rep.best_g}  {best}\nC = {2.0 ** rep.best_c}  gamma = {2.0 ** rep.best_g}")


def draw_contour(db, rep, options):
    """grid.py's contour plot (its gnuplot script's levels, labels and title) with matplotlib,
    written to options.png_pathname. Nothing is drawn when every cell shares its C, gamma or
    rate (grid.py draws nothing then either). For MSEs matplotlib chooses the levels: grid.py's
    are half-percent steps of accuracy up to 100."""
    if not db or not (options.grid_with_c and options.grid_with_g):
        return False
    if all(x[0] == db[0][0] for x in db) or all(x[1] == db[0][1] for x in db) \
            or all(x[2] == db[0][2] for x in db):
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    cs = sorted({x[0] for x in db})
    gs = sorted({x[1] for x in db})
    Z = np.full((len(gs), len(cs)), np.nan)
    for c, g, rate in db:
        Z[gs.index(g), cs.index(c)] = rate
    levels = None
    if rep.measure == "rate":
        begin_level = round(max(x[2] for x in db)) - 3
        levels = np.arange(begin_level, 100 + 1e-9, 0.5)
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    cont = ax.contour(cs, gs, Z, levels=levels)
    if rep.measure == "rate":
        ax.clabel(cont, fontsize=7)
    else:  # MSEs such as 0.00866: the default format would show "0.0"
        ax.clabel(cont, fontsize=7, fmt="%.3g")
    ax.set_xlabel("log2(C)")
    ax.set_ylabel("log2(gamma)")
    ax.set_xlim(options.c_begin, options.c_end)
    ax.set_ylim(min(options.g_begin, options.g_end), max(options.g_begin, options.g_end))
    if options.g_begin > options.g_end:
        ax.invert_yaxis()
    ax.set_title(contour_title(rep, options), fontsize=9)
    fig.tight_layout()
    fig.savefig(options.png_pathname)
    plt.close(fig)
    return True
