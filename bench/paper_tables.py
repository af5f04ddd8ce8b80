"""What bench/paper_000.py and bench/paper_003.py share: the shared data sets, the results
folder, and tables written as Markdown and CSV beside each other."""

import csv
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results"


def data_dir():
    """The data folder (lasvm_cli.tools.datasets.data_dir: $LASVM_DATA, else the cache folder)."""
    from lasvm_cli.tools.datasets import data_dir as where

    return where()


def read_shared(name, part="train"):
    """A shared data set as our reader returns it (Problem: y, indptr, indices, values)."""
    from lasvm_cli.io.svmlight import read_svmlight

    return read_svmlight(str(data_dir() / name / f"{part}.svm.xz"))


def clock(fn, *args, **kwargs):
    """(result, seconds) of one call."""
    t = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - t


def pyplot():
    """matplotlib.pyplot with the Agg backend, or None (and how to install it) without
    matplotlib: the tables are written all the same."""
    try:
        import matplotlib
    except ImportError:
        print("figures not drawn: matplotlib is missing (make .venv/.bench-extras, or "
              "pip install matplotlib); the tables are written", file=sys.stderr)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


class Table:
    """Rows of named columns, written as ``NAME.md`` and ``NAME.csv`` under ``folder``."""

    def __init__(self, name, title, columns, note=""):
        self.name, self.title, self.columns, self.note = name, title, list(columns), note
        self.rows = []

    def add(self, **values):
        self.rows.append([values.get(c, "") for c in self.columns])

    def markdown(self):
        lines = [f"### {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append("|" + "---|" * len(self.columns))
        for row in self.rows:
            lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
        return "\n".join(lines) + "\n"

    def write(self, folder):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{self.name}.md").write_text(self.markdown())
        with open(folder / f"{self.name}.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(self.columns)
            writer.writerows(self.rows)
        print(self.markdown(), flush=True)


def _cell(v):
    if isinstance(v, float):
        return f"{v:,.3f}" if abs(v) >= 1000 else f"{v:.4g}"
    return str(v)


def spread(values, fmt):
    """'median (min to max)' of a list."""
    if len(values) == 1:
        return fmt.format(values[0])
    return (f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))} to "
            f"{fmt.format(max(values))})")
