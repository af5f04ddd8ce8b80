"""Numba's on-disk cache is stamped with the whole package (lasvm_cli/base/jit_cache.py): a
compiled function carries the code of the functions it calls from other modules, so an edit to any
module must recompile it, not just an edit to its own file."""

import importlib
import os
import pickle
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import numba

import lasvm_cli
from lasvm_cli.base import jit_cache

PACKAGE = Path(lasvm_cli.__file__).parent

# run from a copy of the package (not the editable install), report the JIT cache's verdict
PROBE = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in str(f)]
sys.path.insert(0, sys.argv[1])
import numpy as np
from lasvm_cli.numerics import kernels
from lasvm_cli.base import jit_cache
assert kernels.__file__.startswith(sys.argv[1])
kernels.exp_inplace(np.zeros(3))
st = kernels.exp_inplace.stats
print(len(st.cache_hits), len(st.cache_misses), jit_cache.package_stamp())
"""


def test_the_stamp_covers_the_whole_package():
    """jit_cache.py sits in base/: its digest is over every .py file from the package's top."""
    assert jit_cache.PACKAGE_DIR == str(PACKAGE.resolve())


def test_every_cached_function_is_stamped_with_the_package():
    for info in pkgutil.walk_packages([str(PACKAGE)], "lasvm_cli."):
        if info.name.startswith(("lasvm_cli.sklearn", "lasvm_cli.cli.warm_server")):
            continue  # optional extras / the server: no jitted code
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            cache = getattr(value, "_cache", None)
            if getattr(value, "py_func", None) is None or cache is None or \
                    value.py_func.__module__ != info.name or not hasattr(cache, "_impl"):
                continue
            locator = cache._impl.locator
            assert type(locator).__name__.startswith("Package"), (info.name, value)
            assert locator.get_source_stamp() == jit_cache.package_stamp()


def test_an_edit_to_another_module_recompiles(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(PACKAGE, tree / "lasvm_cli", ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "jit"))

    def probe():
        out = subprocess.run([sys.executable, "-c", PROBE, str(tree)], env=env,
                             capture_output=True, text=True, check=True).stdout.split()
        return int(out[0]), int(out[1]), out[2]

    hits, misses, stamp = probe()
    assert (hits, misses) == (0, 1)  # compiled
    assert probe() == (1, 0, stamp)  # loaded
    with open(tree / "lasvm_cli" / "rand.py", "a") as f:  # no jitted code of kernels' in it
        f.write("\n# edited\n")
    hits, misses, new_stamp = probe()
    assert (hits, misses) == (0, 1) and new_stamp != stamp  # compiled again


def test_an_index_naming_a_missing_type_recompiles(tmp_path):
    """An index written by another tree whose signatures name a type this tree lacks: numba
    unpickles it before comparing stamps; it must be read as stale, not raise."""
    tree = tmp_path / "tree"
    shutil.copytree(PACKAGE, tree / "lasvm_cli", ignore=shutil.ignore_patterns("__pycache__"))
    jit = tmp_path / "jit"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(jit))

    def probe():
        run = subprocess.run([sys.executable, "-c", PROBE, str(tree)], env=env,
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-2000:]
        out = run.stdout.split()
        return int(out[0]), int(out[1])

    assert probe() == (0, 1)
    indexes = list(jit.rglob("*exp_inplace*.nbi"))
    assert indexes
    for index in indexes:  # numba's version header, then a pickle of a type that is gone
        index.write_bytes(pickle.dumps(numba.__version__)
                          + b"\x80\x04clasvm_cli.numerics.kernels\nGoneType\n.")
    assert probe() == (0, 1)  # compiled again
    assert probe() == (1, 0)  # and the new index is read


def test_no_function_is_compiled_for_a_literal_argument(tmp_path):
    """A constant argument in a jitted call (``f(x, 0)``) makes numba compile the callee once
    more for ``Literal[int](0)`` beside its int64 signature: another compilation, and a second
    copy linked into every caller above it (docs/compile-time.md). svm-train's default path
    passes none (``np.int64(0)`` where a constant is meant). In a process of its own: other
    tests' solvers, loaded in this one, may have such signatures."""
    env = dict(os.environ, LASVM_SERVER="0")
    out = subprocess.run([sys.executable, "-c", LITERAL_PROBE,
                          str(PACKAGE.parent / "data" / "heart_scale"), str(tmp_path / "model")],
                         env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", out.stdout


LITERAL_PROBE = """
import sys
from numba.core import types
from lasvm_cli.cli import main

data, model = sys.argv[1:]
sys.argv = ["svm-train", "-q", data, model]
try:
    main.svm_train()
except SystemExit as e:
    assert e.code in (0, None), e.code
for name, module in list(sys.modules.items()):
    if not name.startswith("lasvm_cli"):
        continue
    for value in list(vars(module).values()):
        if getattr(value, "py_func", None) is None or not hasattr(value, "signatures"):
            continue
        for sig in value.signatures:
            if any(isinstance(t, types.Literal) for t in sig):
                print(f"{value.py_func.__qualname__}{sig}")
"""
