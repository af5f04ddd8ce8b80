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
import pytest

import lasvm_cli
from lasvm_cli.base import jit_cache
from lasvm_cli.base.numba_internals import BY_SYMBOL, CACHE_STAMP, ON_DEMAND, uses

# each part needs numba's internals for it (base/numba_internals.py); without them the package
# takes numba's plain path, which tests/test_numba_internals.py checks
needs = {f: pytest.mark.skipif(not uses(f), reason=f"numba's plain path for {f}")
         for f in (BY_SYMBOL, CACHE_STAMP, ON_DEMAND)}

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


@needs[CACHE_STAMP]
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


@needs[CACHE_STAMP]
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
    edited = tree / "lasvm_cli" / "base" / "rand.py"  # an existing module the probe does not use
    assert edited.exists()
    with open(edited, "a") as f:
        f.write("\n# edited\n")
    hits, misses, new_stamp = probe()
    assert (hits, misses) == (0, 1) and new_stamp != stamp  # compiled again


@needs[CACHE_STAMP]
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


# by_symbol: three modules in a folder of their own, numba's cache in another
BY_SYMBOL_MODULES = {
    "bs_leaf.py": """
import numba
import numpy as np
from lasvm_cli.base.jit_cache import by_symbol

@by_symbol
@numba.njit(cache=True)
def leaf(x, out):
    for i in range(x.shape[0]):
        out[i] = np.exp(-0.5 * x[i]) + np.sqrt(abs(x[i]))
    return out.sum()
""",
    "bs_mid.py": """
import numba
from bs_leaf import leaf

@numba.njit(cache=True)
def mid(x, out):
    return leaf(x, out) + 2.0 * leaf(x[::-1].copy(), out)
""",
    "bs_top.py": """
import numba
from bs_mid import mid

@numba.njit(cache=True)
def top(x, out):
    s = 0.0
    for k in range(3):
        s += (k + 1) * mid(x, out)
    return s
""",
}

BY_SYMBOL_RUN = """
import sys
import numba
import numpy as np
sys.path.insert(0, sys.argv[1])
if sys.argv[2] == "shifted":  # other functions first: numba numbers this run's names otherwise
    for k in range(7):
        numba.njit(lambda v: v + 1)(k)
from bs_top import top
from bs_mid import mid
from bs_leaf import leaf
x = np.linspace(-2.0, 2.0, 1001)
value = (mid if sys.argv[2] == "mid" else top)(x, np.empty_like(x))
linked = [cres.library.get_llvm_str() for d in (top, mid) for sig, cres in d.overloads.items()
          if d.stats.cache_misses.get(sig)]  # compiled here (a library from the cache has no IR)
leaf_name = next(iter(leaf.overloads.values())).fndesc.llvm_func_name
renamed = any(getattr(f, "symbol", leaf_name) != leaf_name
              for cres in top.overloads.values() for f in cres.reload_init)
print(repr(value), len(top.stats.cache_hits), len(leaf.stats.cache_hits),
      sum("define" in line and "bs_leaf" in line and "leaf" in line.split("(")[0]
          for ir in linked for line in ir.splitlines() if line.startswith("define")),
      int(renamed))
"""


def toy_runner(folder, modules, script):
    """run(mode): the stdout of ``script`` run in a fresh process with ``modules`` written
    into ``folder`` on its path and numba's cache in folder/cache."""
    for name, text in modules.items():
        (folder / name).write_text(text)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / "cache")}

    def run(mode):
        r = subprocess.run([sys.executable, "-c", script, str(folder), mode],
                           env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        return r.stdout

    return run


@needs[BY_SYMBOL]
def test_by_symbol_callers_call_the_one_copy_and_load_it_from_the_cache(tmp_path):
    """A by_symbol function's code stays out of its callers' libraries; a caller loaded from
    the cache loads it first: also a caller that linked in a callee loaded from the cache, and
    also when the function is compiled anew in a process that numbers it differently (its
    cache entry gone)."""
    script = toy_runner(tmp_path, BY_SYMBOL_MODULES, BY_SYMBOL_RUN)

    def run(mode):
        value, top_hits, leaf_hits, leaf_bodies, renamed = script(mode).split()
        return float(value), int(top_hits), int(leaf_hits), int(leaf_bodies), int(renamed)

    x = __import__("numpy").linspace(-2.0, 2.0, 1001)
    leaf = __import__("numpy").exp(-0.5 * x) + __import__("numpy").sqrt(abs(x))
    expected_mid = leaf.sum() + 2.0 * leaf[::-1].sum()
    expected = 6.0 * expected_mid
    value, _, _, bodies, _ = run("mid")  # mid and leaf compiled, cached
    assert abs(value - expected_mid) <= 1e-9 * abs(expected_mid) and bodies == 0
    # top compiled, linking in mid loaded from the cache: it must inherit mid's loader of leaf
    value, top_hits, _, bodies, _ = run("plain")
    assert abs(value - expected) <= 1e-9 * abs(expected) and top_hits == 0 and bodies == 0
    assert run("plain") == (value, 1, 1, 0, 0)  # top and leaf from the cache
    for f in (tmp_path / "cache").rglob("*leaf*"):
        f.unlink()
    # top from the cache, leaf compiled anew under another name, reached under top's
    assert run("shifted") == (value, 1, 0, 0, 1)



# if_compiled / compile_on_demand: a leaf the caller calls only once asked for
ON_DEMAND_MODULES = {
    "od_leaf.py": """
import numba
from lasvm_cli.base.jit_cache import if_compiled

@numba.njit(cache=True, parallel=True)
def leaf(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = 2.0 * x[i]

leaf_if_compiled = if_compiled(leaf)
""",
    "od_top.py": """
import numba
from od_leaf import leaf_if_compiled

@numba.njit(cache=True)
def top(x, out):
    if leaf_if_compiled((x, out)):
        return 1
    out[:] = -1.0
    return 0
""",
}

ON_DEMAND_RUN = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from lasvm_cli.base.jit_cache import compile_on_demand
from od_leaf import leaf
if sys.argv[2] == "early":  # asked for before top is compiled or loaded
    compile_on_demand(leaf)
from od_top import top
x = np.arange(5.0)
out = np.empty(5)
first = top(x, out), out.tolist(), len(leaf.overloads)
if sys.argv[2] == "late":  # asked for after top has run without it
    compile_on_demand(leaf)
print(repr((first, top(x, out), out.tolist(), len(top.stats.cache_hits))))
"""


@needs[ON_DEMAND]
def test_if_compiled_calls_a_function_only_once_it_is_asked_for(tmp_path):
    """A caller of if_compiled(leaf) takes its other path, leaf not even compiled, until the
    process asks for leaf (before or after the caller is compiled or loaded from the cache);
    then it calls leaf's compiled code. Run in fresh processes over one cache."""
    script = toy_runner(tmp_path, ON_DEMAND_MODULES, ON_DEMAND_RUN)

    def run(mode):
        return eval(script(mode))

    skipped = (0, [-1.0] * 5, 0)
    doubled = [0.0, 2.0, 4.0, 6.0, 8.0]
    assert run("never") == (skipped, 0, [-1.0] * 5, 0)  # top compiled, leaf never
    assert run("late") == (skipped, 1, doubled, 1)      # top from the cache, leaf compiled
    assert run("late") == (skipped, 1, doubled, 1)      # both from the cache
    assert run("early")[1:] == (1, doubled, 1)
    shutil.rmtree(tmp_path / "cache")
    first, called, values, hits = run("early")          # top compiled with leaf asked for
    assert first[:2] == (1, doubled) and (called, values, hits) == (1, doubled, 0)
