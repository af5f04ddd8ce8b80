"""The scripts in examples/ run as documented on the bundled data."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(tmp_path, *cmd):
    env = dict(os.environ, OUT=str(tmp_path / "out"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    r = subprocess.run(list(cmd), cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_learning_curves(tmp_path):
    out = _run(tmp_path, "sh", "examples/learning_curves.sh")
    assert out.count(",final") == 2
    for name in ("random.csv", "active.csv"):
        assert (tmp_path / "out" / name).exists()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "out" / "curves.png").read_bytes()[:4] == b"\x89PNG"


def test_stop_and_resume(tmp_path):
    out = _run(tmp_path, "sh", "examples/stop_and_resume.sh")
    assert "resumed == uninterrupted" in out
    assert (tmp_path / "out" / "stopped.model.50").exists()


def test_active_learning(tmp_path):
    out = _run(tmp_path, "sh", "examples/active_learning.sh", "data/heart_scale",
               "data/heart_scale", "40")
    assert "labels_used = 40" in out and out.count("Accuracy = ") == 2
    lines = out.splitlines()
    assert lines[1].startswith("active (40 labels chosen by LASVM): Accuracy = ")
    assert lines[2].startswith("random (40 examples drawn at random): Accuracy = ")


def test_readme_grid_example_keeps_make_demo_outputs_and_is_ignored():
    """The README's first ``lasvm grid`` example writes neither file of ``make demo``
    (heart_scale.model, heart_scale.out), and git ignores what it writes."""
    import fnmatch
    import re
    import shlex

    from lasvm_cli.tools.grid import GridOptions

    readme = (REPO / "README.md").read_text()
    command = re.search(r"^lasvm grid (.*?(?:\\\n.*?)*)(?:#|$)", readme, re.M).group(1)
    words = shlex.split(command.replace("\\\n", " "))
    options = GridOptions(str(REPO / words[-1]), words[:-1])
    demo = re.search(r"^demo:.*\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(), re.M)
    demo_outputs = {w for line in demo.group(1).splitlines() for w in line.split()[1:]
                    if not w.startswith("data/")}
    assert demo_outputs >= {"heart_scale.model", "heart_scale.out"}
    written = {options.out_pathname, options.png_pathname}
    assert not written & demo_outputs
    ignored = [line for line in (REPO / ".gitignore").read_text().splitlines() if line]
    for name in written | demo_outputs:
        assert any(fnmatch.fnmatch(name, pattern) for pattern in ignored), name


@pytest.mark.parametrize("args", [[], ["data/heart_scale", "data/heart_scale"]])
def test_python_api(tmp_path, args):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = dict(os.environ, OUT=str(tmp_path / "out"))
    out = subprocess.run([sys.executable, str(REPO / "examples" / "python_api.py")]
                         + [str(REPO / a) for a in args], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "smo    nSV   132  accuracy 86.67%" in out.stdout
    assert "lasvm" in out.stdout
    # into $OUT, as the other examples; nothing in the working directory
    assert (tmp_path / "out" / "smo.model").exists()
    assert (tmp_path / "out" / "lasvm.model").exists()
    assert list(cwd.iterdir()) == []
