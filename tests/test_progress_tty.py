"""Progress bars on a terminal (base/progress.py): stdout and stderr both on one pseudo-terminal,
as in an interactive shell. The screen the output leaves, replayed by a small terminal model,
must hold exactly the lines the same command prints without a terminal: every LIBSVM line at
the start of its own line, no bar left over, no line blanked by a bar's erase sequence."""

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios


from .conftest import HEART
from .test_cli_train import write_four_classes

WIDTH = 100
# the bars are drawn at once (no 1 s delay), so that short runs show them too
PRELUDE = "import lasvm_cli.base.progress as p; p.BAR_DELAY = 0; "
TRAIN = PRELUDE + "from lasvm_cli.cli.entry import svm_train; svm_train()"
GRID = (PRELUDE + "import lasvm_cli.training.distributed as d; d.dask_available = lambda: False; "
        "from lasvm_cli.cli.entry import lasvm; lasvm()")


def on_terminal(code, args, cwd):
    """Run ``python -c code args`` with stdout and stderr on one pty (WIDTH columns); the bytes
    the terminal received."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, WIDTH, 0, 0))
    env = dict(os.environ, COLUMNS=str(WIDTH), LASVM_SERVER="0", LASVM_COMPILE_NOTICE="0")
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, cwd=cwd, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait() == 0
    return b"".join(chunks).decode()


def screen(text, width=WIDTH):
    """The lines a terminal shows after ``text``: printable characters overwrite at the
    cursor and wrap past the last column, \\r returns to column 0, \\n moves down (the same
    column), ESC[nA up; other escape sequences change nothing here. Trailing blanks are
    dropped."""
    lines, row, col = [[]], 0, 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\x1b":
            m = re.match(r"\x1b\[(\d*)([A-Za-z])", text[i:])
            if m:
                if m.group(2) == "A":
                    row = max(row - int(m.group(1) or 1), 0)
                i += m.end()
                continue
        elif ch == "\r":
            col = 0
        elif ch == "\n":
            row += 1
        else:
            if col >= width:
                row, col = row + 1, 0
            while len(lines) <= row:
                lines.append([])
            line = lines[row]
            line.extend(" " * (col + 1 - len(line)))
            line[col] = ch
            col += 1
        while len(lines) <= row:
            lines.append([])
        i += 1
    out = ["".join(x).rstrip() for x in lines]
    while out and out[-1] == "":
        out.pop()
    return out


def off_terminal(code, args, cwd):
    """The lines of the same command without a terminal (stderr's first: they come before
    stdout's in these runs), as a WIDTH-column screen shows them."""
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         cwd=cwd, env=dict(os.environ, LASVM_SERVER="0",
                                           LASVM_COMPILE_NOTICE="0"), check=True)
    lines = res.stderr.splitlines() + res.stdout.splitlines()
    return [line[i:i + WIDTH].rstrip() for line in lines
            for i in range(0, max(len(line), 1), WIDTH)]


def test_screen_model():
    assert screen("abc\r  \rxy\r\nz") == ["xyc", "z"]  # the pty turns "\n" into "\r\n"
    assert screen("ab\nc") == ["ab", "  c"]
    assert screen("a" * (WIDTH + 2)) == ["a" * WIDTH, "aa"]


def test_svm_train_lines_start_their_own_lines_on_a_terminal(tmp_path):
    data = str(write_four_classes(tmp_path / "multi"))
    args = ["-c", "2", data, str(tmp_path / "m")]
    raw = on_terminal(TRAIN, args, tmp_path)
    assert "class 3 vs 1" in raw  # the bars were drawn
    expected = off_terminal(TRAIN, args, tmp_path)
    assert sum(x.startswith("optimization finished") for x in expected) == 6
    assert screen(raw) == expected


def test_svm_train_cross_validation_on_a_terminal(tmp_path):
    args = ["-v", "3", str(HEART)]
    raw = on_terminal(TRAIN, args, tmp_path)
    assert "class 1 vs -1" in raw
    assert screen(raw) == off_terminal(TRAIN, args, tmp_path)


def test_grid_lines_start_their_own_lines_on_a_terminal(tmp_path):
    args = ["grid", "-log2c", "-1,1,1", "-log2g", "-3,-1,1", "-out", "null", "-gnuplot",
            "null", str(HEART)]
    raw = on_terminal(GRID, args, tmp_path)
    assert "cell" in raw  # the bar was drawn
    expected = off_terminal(GRID, args, tmp_path)
    assert sum(x.startswith("[local] ") for x in expected) == 9 and len(expected) == 12
    assert screen(raw) == expected
