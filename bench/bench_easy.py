"""LIBSVM's tools/easy.py end to end (svm-scale, grid.py's 110-cell grid with -v 5, svm-train,
svm-predict) with our binaries against LIBSVM's, same machine, same run.

easy.py and grid.py are Debian's (libsvm-tools 3.24: /usr/bin/svm-easy, /usr/bin/svm-grid),
run unchanged except that easy.py's gnuplot is switched off (grid.py's ``-gnuplot null``).
easy.py calls its programs as ../svm-scale, ../svm-train and ../svm-predict: each side gets a
folder whose parent holds links to its binaries (LIBSVM's from /usr/bin; ours the installed
console scripts, with the warm server as users get it: started by the first command).
Reports the wall time of the whole easy.py run, the best (c, g) and CV rate grid.py chose and
the test accuracy, for each side, and how many of grid.py's cells got the same CV rate on both
sides (the differing ones are printed). Usage: ``python bench/bench_easy.py [banana] [usps]
[--rows N]``; data from LASVM_DATA; ``--rows N`` trains on N training rows drawn at random
(seed 0, file order kept; the test file whole): easy.py's 110-cell grid on all 7,291 usps rows
takes LIBSVM alone about two hours on a 2-core machine. Writes bench/results/easy.md.
"""

import argparse
import lzma
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
BIN = Path(sys.executable).parent
LIBSVM = Path("/usr/bin")


def data_dir():
    """The data folder (lasvm_cli.tools.datasets.data_dir: $LASVM_DATA, else the cache folder)."""
    from lasvm_cli.tools.datasets import data_dir as where

    return where()


def unpacked(name, part, folder, rows=None):
    """The data set's part as a plain file in folder; ``rows``: that many lines drawn at random
    (seed 0), in file order."""
    dst = folder / f"{name}.{part}"
    with lzma.open(data_dir() / name / f"{part}.svm.xz", "rb") as f:
        data = f.read()
    if rows:
        lines = data.splitlines(keepends=True)
        if rows < len(lines):
            keep = sorted(random.Random(0).sample(range(len(lines)), rows))
            data = b"".join(lines[k] for k in keep)
    dst.write_bytes(data)
    return dst


def side(root, binaries, name):
    """root/NAME/{svm-scale,svm-train,svm-predict} links and root/NAME/run with easy.py and
    grid.py; returns the run folder."""
    top = root / name
    run = top / "run"
    run.mkdir(parents=True)
    for program in ("svm-scale", "svm-train", "svm-predict"):
        os.symlink(binaries / program, top / program)
    easy = Path(shutil.which("svm-easy")).read_text()
    easy = re.sub(r'gnuplot_exe = "/usr/bin/gnuplot"', 'gnuplot_exe = "null"', easy)
    (run / "easy.py").write_text(easy)
    shutil.copy(shutil.which("svm-grid"), run / "grid.py")
    os.chmod(run / "grid.py", 0o755)
    (run / "null").write_text("")  # easy.py asserts that its gnuplot path exists
    return run


def easy(run, train, test, env):
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "easy.py", str(train), str(test)], cwd=run, env=env,
                       capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t
    best = re.search(r"Best c=(\S+), g=(\S+) CV rate=(\S+)", r.stdout)
    accuracy = re.search(r"Accuracy = (\S+)", r.stdout)
    return seconds, best.groups() if best else None, accuracy.group(1) if accuracy else None


def grid_cells(run):
    """{(log2c, log2g): CV rate} from grid.py's .out file in the run folder."""
    cells = {}
    for out in run.glob("*.out"):
        for line in out.read_text().splitlines():
            m = re.match(r"log2c=(\S+) log2g=(\S+) rate=(\S+)", line)
            if m:
                cells[(m.group(1), m.group(2))] = m.group(3)
    return cells


def differing_cells(theirs, ours):
    """Cells whose rates differ, as 'c, g: LIBSVM / ours' strings."""
    return [f"log2c={c} log2g={g}: {theirs[c, g]} / {ours.get((c, g))}"
            for c, g in sorted(theirs) if ours.get((c, g)) != theirs[c, g]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="*", default=["banana", "usps"])
    ap.add_argument("--rows", type=int, default=None, help="training rows drawn at random")
    args = ap.parse_args()
    if not (shutil.which("svm-easy") and (LIBSVM / "svm-train").exists()):
        raise SystemExit("needs Debian's libsvm-tools (apt-get install libsvm-tools)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = ["| data | LIBSVM 3.24 binaries (s) | ours (s) | ratio | best c, g, CV rate "
             "(LIBSVM / ours) | test accuracy (LIBSVM / ours) | grid cells with equal CV rates |",
             "|---|---|---|---|---|---|---|"]
    for name in args.data:
        root = Path(tempfile.mkdtemp(prefix="bench-easy-"))
        train, test = unpacked(name, "train", root, args.rows), unpacked(name, "test", root)
        env = dict(os.environ, LASVM_RUNTIME_DIR=str(root / "runtime"))
        run_theirs, run_ours = side(root, LIBSVM, "libsvm"), side(root, BIN, "ours")
        theirs = easy(run_theirs, train, test, env)
        ours = easy(run_ours, train, test, env)
        cells_theirs, cells_ours = grid_cells(run_theirs), grid_cells(run_ours)
        differ = differing_cells(cells_theirs, cells_ours)
        label = f"{name} ({args.rows} training rows)" if args.rows else name
        lines.append(f"| {label} | {theirs[0]:.1f} | {ours[0]:.1f} | {ours[0] / theirs[0]:.2f} | "
                     f"{theirs[1]} / {ours[1]} | {theirs[2]} / {ours[2]} | "
                     f"{len(cells_theirs) - len(differ)} of {len(cells_theirs)} |")
        print(lines[-1], flush=True)
        for cell in differ:
            print(f"  differs: {cell}", flush=True)
        for lock in (root / "runtime").glob("*/*.sock.lock"):
            try:
                os.kill(int(lock.read_text()), 15)
            except (ValueError, OSError):
                pass
        shutil.rmtree(root, ignore_errors=True)
    text = "\n".join(lines) + "\n"
    print(text)
    (RESULTS / "easy.md").write_text(text)


if __name__ == "__main__":
    main()
