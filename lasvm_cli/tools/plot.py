"""Learning curves from ``svm-train --trace`` files (Bordes et al. 2005, figures 11-15: test
error against training time, online iterations or support vectors; Usunier et al. 2010,
figures 2-3: the normalised duality gap of the tracking solvers against the examples seen).

matplotlib is an optional dependency (``pip install 'lasvm-cli[plot]'``); it is imported only
when a plot is drawn, with the Agg backend (no display needed).
"""

import csv
import os

from ..base.errors import LasvmError

X_AXES = {"time": ("seconds", "training time (s)"),
          "iterations": ("iterations", "online iterations"),
          "sv": ("sv", "support vectors"),
          "kernel": ("kernel_evals", "kernel evaluations"),
          "examples": ("t", "training examples t")}
# short names of y axes (--y also takes any numeric column of the trace by its name)
Y_AXES = {"error": "test_error", "dual": "dual_objective", "gap": "gap"}
# y axes with a label of their own
Y_LABELS = {"test_error": "test error", "dual_objective": "dual objective",
            "sv": "support vectors", "kernel_evals": "kernel evaluations",
            "prbep": "PRBEP (%)", "delta": "delta"}
MISSING_MPL = ("lasvm plot needs matplotlib: pip install 'lasvm-cli[plot]' "
               "(or pip install matplotlib)")


TEXT_COLUMNS = ("phase", "machine")


class PlotError(LasvmError):
    """A trace that cannot be read, or matplotlib missing."""


def read_trace(path):
    """Columns of a trace file (CSV or TSV with a header row) as a dict name -> list; numeric
    columns become floats (empty cells: None), ``phase`` and ``machine`` stay text."""
    try:
        with open(path, newline="") as f:
            text = f.read()
    except OSError as e:
        raise PlotError(f"can't open trace file {path}: {e.strerror}") from None
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise PlotError(f"{path}: empty trace file")
    delim = "\t" if "\t" in lines[0] else ","
    rows = list(csv.reader(lines, delimiter=delim))
    header = [h.strip() for h in rows[0]]
    if "iterations" not in header:
        raise PlotError(f"{path}: not a trace file (no 'iterations' column in the header)")
    cols = {h: [] for h in header}
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise PlotError(f"{path}:{n}: {len(row)} fields, the header has {len(header)}")
        for h, v in zip(header, row):
            v = v.strip()
            if h in TEXT_COLUMNS:
                cols[h].append(v)
                continue
            try:
                cols[h].append(float(v) if v != "" else None)
            except ValueError:
                raise PlotError(f"{path}:{n}: bad number '{v}' in column {h}") from None
    return cols


def curve(cols, x="time", y=None):
    """(xs, ys, y_label) for one trace: column ``y`` (a short name of Y_AXES or any numeric
    column), or by default the test error when the trace has it, else the dual objective
    (LASVM traces) or the gap (tracking traces); rows without a value are left out."""
    xcol, _ = X_AXES[x]
    if xcol not in cols:
        raise PlotError(f"trace has no '{xcol}' column")
    if y is not None:
        ycol = Y_AXES.get(y, y)
        if ycol not in cols or ycol in TEXT_COLUMNS:
            raise PlotError(f"trace has no numeric '{ycol}' column")
        ylabel = _y_label(cols, ycol)
    else:
        ycol = "test_error"
        if "test_error" not in cols or all(v is None for v in cols["test_error"]):
            ycol = "dual_objective" if "dual_objective" in cols else "gap"
        if ycol not in cols:
            raise PlotError("trace has neither test_error nor dual_objective nor gap")
        ylabel = _y_label(cols, ycol)
    pts = [(a, b) for a, b in zip(cols[xcol], cols[ycol]) if a is not None and b is not None]
    return [p[0] for p in pts], [p[1] for p in pts], ylabel


def _y_label(cols, ycol):
    """The axis label of column ``ycol``: a tracking trace's gap (it has the examples seen,
    ``t``) is the normalised gap of Usunier et al.; LASVM-G's is the duality gap itself."""
    if ycol == "gap":
        return "normalised duality gap (P_t - D_t)/(C t)" if "t" in cols else "duality gap"
    return Y_LABELS.get(ycol, ycol)


def by_machine(cols):
    """[(machine name or None, columns)]: a multi-class trace (``machine`` column) split into
    one trace per binary machine, in order of first appearance."""
    if "machine" not in cols:
        return [(None, cols)]
    names = list(dict.fromkeys(cols["machine"]))
    return [(m, {h: [v for v, k in zip(vals, cols["machine"]) if k == m]
                 for h, vals in cols.items()}) for m in names]


def plot_traces(paths, out, x="time", labels=None, title=None, logx=False, y=None,
                logy=False):
    """Draw the traces on one axis and save to ``out`` (format from its extension)."""
    if x not in X_AXES:
        raise PlotError(f"unknown x axis '{x}' (choose from {', '.join(X_AXES)})")
    traces = [read_trace(p) for p in paths]
    try:
        import matplotlib
    except ImportError:
        raise PlotError(MISSING_MPL) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ylabels = set()
    try:
        n_curves = 0
        for i, (path, trace) in enumerate(zip(paths, traces)):
            name = labels[i] if labels and i < len(labels) else \
                os.path.splitext(os.path.basename(path))[0]
            for machine, cols in by_machine(trace):
                xs, ys, ylabel = curve(cols, x, y)
                ylabels.add(ylabel)
                ax.plot(xs, ys, marker=".", markersize=3, linewidth=1.2,
                        label=name if machine is None else f"{name} {machine}")
                n_curves += 1
        ax.set_xlabel(X_AXES[x][1])
        ax.set_ylabel(" / ".join(sorted(ylabels)))
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        if title:
            ax.set_title(title)
        ax.grid(True, alpha=0.3)
        if n_curves > 1 or labels:
            ax.legend()
        fig.tight_layout()
        fig.savefig(out)
    finally:
        plt.close(fig)
    return out
