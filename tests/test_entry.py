"""The console scripts' process set-up (cli/entry.py), seen from a fresh interpreter: what a
command sets before numpy loads."""

import os
import subprocess
import sys

from .conftest import HEART

# Runs svm-train's console-script function in-process (no warm server), then reports, at exit,
# the BLAS thread setting it ran under and how many threads the process had.
_SCRIPT = """
import atexit, os, sys
from lasvm_cli.cli import entry, handoff
handoff.run_on_server = lambda prog, args: None
handoff.start_server = lambda: None
atexit.register(lambda: print(os.environ.get("OPENBLAS_NUM_THREADS"),
                              len(os.listdir("/proc/self/task")), "numpy" in sys.modules))
sys.argv = ["svm-train", "-q", sys.argv[1], sys.argv[2]]
entry.svm_train()
"""


def _run(tmp_path, **env_changes):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env.update(env_changes)
    out = subprocess.run([sys.executable, "-c", _SCRIPT, HEART, str(tmp_path / "m")], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    return out[0], int(out[1]), out[2] == "True"


def test_one_blas_thread_unless_the_user_says(tmp_path):
    setting, threads, numpy_loaded = _run(tmp_path)
    assert numpy_loaded and setting == "1"
    # OpenBLAS starts no worker of its own (numba's OpenMP pool starts only for rows longer
    # than heart_scale's)
    assert threads == 1
    assert _run(tmp_path, OPENBLAS_NUM_THREADS="2")[0] == "2"
