"""base/numba_internals.py: each numba internal the package uses is checked at import; a numba
without one (simulated here by removing or changing it) takes numba's plain path for that
feature, says so in one line, and trains the same models; and the package leaves other
numba code in the process as it is."""

import inspect
import io
import json
import os
import re
import subprocess
import sys
import time

import numba
import pytest

from lasvm_cli.base import numba_internals as ni
from lasvm_cli.base.numba_internals import (BY_SYMBOL, CACHE_STAMP, COMPILE_EVENTS,
                                            EXCEPTION_EXITS, FEATURES, ON_DEMAND, RNG_STATE,
                                            WARM_SERVER, UnavailableInternal)

from .conftest import HEART, REPO

NUMBA = tuple(int(p) for p in numba.__version__.split(".")[:2])


# --- what each missing internal looks like -------------------------------------------------

def _without_locators(mp):
    from numba.core import caching

    for name in ("UserProvidedCacheLocator", "_UserProvidedCacheLocator"):
        mp.delattr(caching, name, raising=False)


def _lowering_without_reload_init(mp):
    """numba before 0.63: lowering does not carry a library's reload_init to its result."""
    from numba.core import typed_passes

    run_pass = typed_passes.NativeLowering.run_pass

    def other_run_pass(self, state):  # no functools.wraps: numba's own code is hidden
        return run_pass(self, state)

    mp.setattr(typed_passes.NativeLowering, "run_pass", other_run_pass)


def _selectors_moved(mp):
    from numba.core import base

    mp.delattr(base, "OverloadSelector")


def _propagate_changed(mp):
    from numba.core import callconv

    def return_status_propagate(self, builder, status, context):  # a third argument
        raise AssertionError("not called")

    mp.setattr(callconv.CPUCallConv, "return_status_propagate", return_status_propagate)


def _no_events(mp):
    from numba.core import event

    mp.delattr(event, "TimingListener")


def _no_thread_launch(mp):
    from numba.np.ufunc import parallel

    mp.delattr(parallel, "_launch_threads")


def _no_rng_state(mp):
    from numba import _helperlib

    mp.delattr(_helperlib, "rnd_get_state")


SIMULATED = {CACHE_STAMP: _without_locators, ON_DEMAND: _lowering_without_reload_init,
             BY_SYMBOL: _selectors_moved, EXCEPTION_EXITS: _propagate_changed,
             COMPILE_EVENTS: _no_events, WARM_SERVER: _no_thread_launch,
             RNG_STATE: _no_rng_state}


# the features that use the same internal too: calls by symbol need reload_init as rows on
# demand do, and both call through the call convention
SHARING = {ON_DEMAND: {BY_SYMBOL}, EXCEPTION_EXITS: {BY_SYMBOL, ON_DEMAND}}


def test_every_feature_has_a_simulation():
    assert set(SIMULATED) == set(FEATURES)


def test_the_tested_numbas_take_the_expected_paths():
    """numba >= 0.65 (tested up to 0.68): every feature on; 0.58-0.62: calls by symbol and
    rows on demand plain (no reload_init per code library before numba 0.63)."""
    assert ni.check("") == ni.PLAIN
    if NUMBA >= (0, 65):
        assert ni.PLAIN == {}
    else:
        assert set(ni.PLAIN) <= {BY_SYMBOL, ON_DEMAND}
    assert ni.check_essential() is None


@pytest.mark.parametrize("feature", FEATURES)
def test_a_missing_internal_takes_the_plain_path(feature, monkeypatch):
    SIMULATED[feature](monkeypatch)
    plain = ni.check("")
    assert feature in plain and plain[feature]
    assert set(plain) - {feature} - set(ni.PLAIN) <= SHARING.get(feature, set())


def test_an_unknown_numba_gets_the_plain_path_everywhere(monkeypatch):
    for simulate in SIMULATED.values():
        simulate(monkeypatch)
    assert set(ni.check("")) == set(FEATURES)


def test_a_probe_that_fails_in_an_unexpected_way_is_a_missing_internal(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("something else")

    monkeypatch.setattr(inspect, "signature", broken)
    plain = ni.check("")
    assert plain[EXCEPTION_EXITS] == "something else"
    assert ni.check("all").keys() == set(FEATURES)


def test_the_plain_path_on_request():
    assert set(ni.check("all")) == set(FEATURES)
    assert set(ni.check(f"{WARM_SERVER}, {RNG_STATE}")) == {WARM_SERVER, RNG_STATE} | set(
        ni.PLAIN)


# --- the one line -----------------------------------------------------------------------------

@pytest.fixture
def plain(monkeypatch):
    """Set the features that take the plain path in this process (a fresh notice)."""
    monkeypatch.setattr(ni, "_notice", ni._PlainNotice())

    def set_plain(*features):  # besides those this numba takes anyway
        monkeypatch.setattr(ni, "PLAIN", {**ni.PLAIN, **{f: "simulated" for f in features}})

    return set_plain


def test_the_line_is_said_once_and_not_when_quiet(plain):
    plain(WARM_SERVER, EXCEPTION_EXITS)
    quiet = io.StringIO()
    ni.notice("svm-train", True, quiet)
    assert quiet.getvalue() == ""
    out = io.StringIO()
    for _ in range(2):
        ni.notice("svm-train", False, out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"svm-train: numba {numba.__version__}: numba's plain path for ")
    assert "exception-exits: simulated; warm-server: simulated (same results" in lines[0]


def test_a_compile_time_fallback_is_said_when_the_process_compiles(plain):
    plain(BY_SYMBOL, ON_DEMAND)
    out = io.StringIO()
    ni.notice("svm-predict", False, out)
    assert out.getvalue() == ""

    @numba.njit
    def compiled_here(x):
        return x + 1

    assert compiled_here(1) == 2
    assert out.getvalue().count("\n") == 1 and "calls-by-symbol" in out.getvalue()


def test_a_missing_rng_state_is_said_only_where_it_is_used(plain):
    plain(RNG_STATE)
    out = io.StringIO()
    ni.notice("svm-train", False, out)
    assert out.getvalue() == ""
    with pytest.raises(UnavailableInternal, match="saving .* numba's random generator"):
        ni.rng_state("saving a run")
    with pytest.raises(UnavailableInternal):
        ni.set_rng_state([0] * 625, "resuming a run")


def test_without_the_essential_api_a_command_stops_with_one_line(monkeypatch, tmp_path, capfd):
    from lasvm_cli.cli import train
    from lasvm_cli.cli.report import run_guarded

    monkeypatch.setattr(ni, "_ESSENTIAL_MISSING", "llvmlite IRBuilder.fma")
    model = tmp_path / "m"
    assert run_guarded(train.main, [str(HEART), str(model)]) == 1
    out, err = capfd.readouterr()
    assert out == "" and not model.exists()
    assert err == (f"numba {numba.__version__} lacks llvmlite IRBuilder.fma, which lasvm-cli's "
                   "compiled code needs (docs/compile-time.md lists the numba versions "
                   "tested)\n")


# --- the plain paths that need no compile -----------------------------------------------------

def test_without_events_the_clock_counts_everything(plain):
    from lasvm_cli.base.clock import Clock

    plain(COMPILE_EVENTS)
    with Clock() as clock:
        pass
    assert clock.seconds() >= 0.0


def test_a_ctrl_c_during_a_compile_is_held_until_the_outermost_compile_ends():
    """The SIGINT handler in place (Python's, or a run's own) gets a Ctrl-C that came while
    numba compiled once the outermost compile has ended, and is in place again; after it, a
    Ctrl-C is not held."""
    import signal

    from numba.core import event

    if not ni.uses(COMPILE_EVENTS):
        pytest.skip("numba's plain path for compile events")
    ni.hold_interrupts_while_compiling()
    seen = []
    before = signal.getsignal(signal.SIGINT)
    try:
        for handler in (signal.default_int_handler, lambda *a: seen.append("handler")):
            signal.signal(signal.SIGINT, handler)
            try:
                with event.trigger_event("numba:compile"):
                    with event.trigger_event("numba:compile"):
                        os.kill(os.getpid(), signal.SIGINT)
                        sum(range(10000))  # bytecodes at which a handler would run
                        seen.append("inner")
                    sum(range(10000))
                    seen.append("outer")
                seen.append("after")
            except KeyboardInterrupt:
                seen.append("KeyboardInterrupt")
            assert signal.getsignal(signal.SIGINT) is handler
        with pytest.raises(KeyboardInterrupt):
            signal.signal(signal.SIGINT, signal.default_int_handler)
            os.kill(os.getpid(), signal.SIGINT)
            sum(range(10000))
    finally:
        signal.signal(signal.SIGINT, before)
    assert seen == ["inner", "outer", "KeyboardInterrupt", "inner", "outer", "handler", "after"]


def test_ctrl_c_during_a_compile_ends_the_command_cleanly(tmp_path):
    """SIGINT while a first svm-scale compiles (a fresh cache): the compile in progress ends,
    then the command is interrupted as anywhere else: 'interrupted', status 130, no output.
    Raised inside the compile, the KeyboardInterrupt would be swallowed (the command
    finishes, status 0), leave numba's library half-made (a RuntimeError traceback, status
    1), or an LLVM module freed twice (a segfault at exit, status -11)."""
    import signal

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "jit"), LASVM_SERVER="0",
               LASVM_COMPILE_NOTICE="1")
    p = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "svm-scale"), HEART],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    notice = p.stderr.readline()
    assert b"compiling the numerical code" in notice
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=600)
    assert (p.returncode, out, err) == (130, b"", b"interrupted\n")


def test_without_the_thread_launch_there_is_no_warm_server(plain):
    from numba.np.ufunc import parallel

    plain(WARM_SERVER)
    launch = parallel._launch_threads
    assert ni.defer_thread_launch() is None
    assert parallel._launch_threads is launch


def test_without_the_rng_state_an_online_run_cannot_be_saved(plain, tmp_path, capfd):
    """The state of numba's generator is part of an online multi-class run's state: without
    it --save-state is refused with one line (and no state file), the run itself unchanged."""
    from lasvm_cli.cli import train
    from lasvm_cli.cli.report import run_guarded

    plain(RNG_STATE)
    state = tmp_path / "state"
    args = ["-q", "--multiclass", "cs", "--solver", "online", "--stop-iterations", "30"]
    assert run_guarded(train.main, args + ["--save-state", str(state), str(HEART),
                                           str(tmp_path / "m")]) == 1
    out, err = capfd.readouterr()
    assert not state.exists()
    assert err.startswith("saving or resuming an online multi-class run needs the state of "
                          "numba's random generator")
    assert err.count("\n") == 1


# --- models on the plain path -----------------------------------------------------------------

COMPILED_BY = f"{CACHE_STAMP},{BY_SYMBOL},{ON_DEMAND},{EXCEPTION_EXITS}"


def _train(tmp_path, name, plain, cache, *args):
    env = dict(os.environ, LASVM_NUMBA_PLAIN=plain, LASVM_SERVER="0")
    if cache:
        env["NUMBA_CACHE_DIR"] = str(cache)
    model = tmp_path / name
    code = ("import sys; from lasvm_cli.cli import main; "
            "sys.argv = ['svm-train'] + sys.argv[1:]; main.svm_train()")
    r = subprocess.run([sys.executable, "-c", code, "-q", *args, str(HEART), str(model)],
                       env=env, capture_output=True, text=True, timeout=3600)
    assert r.returncode == 0, r.stderr
    return model.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("args", [(), ("--solver", "lasvm"), ("-s", "3", "-b", "1")])
def test_the_plain_path_trains_the_same_models(args, tmp_path_factory):
    """Every feature that changes the compiled code off (what numba 0.58-0.62 do for two of
    them), from an empty cache of its own: the same model file, byte for byte. (CI trains a
    larger matrix this way: .ci/run's floor environment.)"""
    plain_cache = tmp_path_factory.getbasetemp() / "plain-cache"
    tmp = tmp_path_factory.mktemp("plain")
    assert _train(tmp, "plain", COMPILED_BY, plain_cache, *args) == _train(tmp, "on", "", None,
                                                                             *args)


# --- other numba code in the process ----------------------------------------------------------

OTHER_MODULE = '''
import numba
import numpy as np


@numba.njit(cache=True)
def may_raise(a, k):
    if k < 0:
        raise ValueError("negative index")
    return a[k] * 2.0


@numba.njit(cache=True)
def total(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += may_raise(a, i)
    return s
'''

PROBE = '''
import json, os, sys
sys.path.insert(0, sys.argv[1])
if sys.argv[2] == "with":
    import lasvm_cli.cli.train, lasvm_cli.cli.predict, lasvm_cli.solvers.s2do_online  # noqa
    import lasvm_cli.base.clock, lasvm_cli.base.progress  # noqa
    lasvm_cli.base.progress.announce_compilation("probe", quiet=True)
    lasvm_cli.base.clock.Clock().stop()
import numpy as np
import other
value = other.total(np.arange(6.0))
sig = other.total.signatures[0]
ir = other.total.inspect_llvm(sig) if other.total.stats.cache_misses else None
files = sorted(os.path.relpath(os.path.join(r, f), os.environ["NUMBA_CACHE_DIR"])
               for r, _, fs in os.walk(os.environ["NUMBA_CACHE_DIR"]) for f in fs)
print(json.dumps(dict(value=value, hits=len(other.total.stats.cache_hits),
                      misses=len(other.total.stats.cache_misses), ir=ir, files=files)))
'''


def _no_addresses(ir):
    """The IR without the object addresses older numbas write into it (a process's own)."""
    return re.sub(r"0x[0-9a-f]+", "0x", ir)


def test_other_numba_code_compiles_caches_and_runs_as_without_lasvm_cli(tmp_path):
    """An unrelated @njit(cache=True) function beside lasvm_cli, each setting in fresh
    processes with its own cache: compiled to the same LLVM IR, cached in the same files,
    loaded from the cache by the next process, the same value."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "other.py").write_text(OTHER_MODULE)
    runs = {}
    for setting in ("without", "with"):
        cache = tmp_path / f"cache-{setting}"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
        env.pop("LASVM_NUMBA_PLAIN", None)
        for attempt in ("cold", "warm"):
            r = subprocess.run([sys.executable, "-c", PROBE, str(source), setting], env=env,
                               capture_output=True, text=True, timeout=600, cwd=tmp_path)
            assert r.returncode == 0, r.stderr
            runs[setting, attempt] = json.loads(r.stdout)
    for setting in ("without", "with"):
        cold, warm = runs[setting, "cold"], runs[setting, "warm"]
        assert (cold["hits"], cold["misses"]) == (0, 1)
        assert (warm["hits"], warm["misses"]) == (1, 0)
        assert cold["value"] == warm["value"] == 30.0
    assert _no_addresses(runs["with", "cold"]["ir"]) == _no_addresses(
        runs["without", "cold"]["ir"])
    assert runs["with", "cold"]["files"] == runs["without", "cold"]["files"]
    assert runs["with", "warm"]["files"] == runs["without", "warm"]["files"]


def test_the_suite_s_environment_does_not_ask_for_the_plain_path():
    """LASVM_NUMBA_PLAIN is for users and the tests above; a suite run with it set would test
    the plain path only."""
    assert not os.environ.get("LASVM_NUMBA_PLAIN")


INTERNAL_IMPORTS = ("from numba.core", "import numba.core", "from numba.np", "_helperlib",
                    "llvmlite import binding", "from numba import _")


def test_the_module_is_the_one_place_of_numba_internals():
    """No other module of the package imports numba's internals (numba.core, numba.np,
    numba._helperlib) or llvmlite's binding; llvmlite's IR and numba's public API are used
    freely."""
    offenders = []
    for path in sorted((REPO / "lasvm_cli").rglob("*.py")):
        if path.name == "numba_internals.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if any(s in code for s in INTERNAL_IMPORTS):
                offenders.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert offenders == []


# --- no folder to cache in --------------------------------------------------------------------

_UNCACHED_PROBE = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
from tests import landlock
src, work = sys.argv[2], sys.argv[3]
landlock.restrict([work])  # writes only in the command's own folder
os.environ["HOME"] = work + "-home"  # and no user-wide cache: outside the writable folder
import numba
from lasvm_cli.base import jit_cache, numba_internals  # noqa: F401 (installs the fallback)
out = {}
for module in ("lasvm_cli.toy", "another_package.toy"):
    scope = {"__name__": module}
    exec(compile(open(src).read(), src, "exec"), scope)
    try:
        f = numba.njit(cache=True)(scope["twice"])
        out[module] = f(21)
    except RuntimeError as e:
        out[module] = str(e)[:40]
out["uncached"] = numba_internals.UNCACHED
print(json.dumps(out))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX")
def test_a_function_with_no_cache_folder_compiles_in_memory(tmp_path):
    """A sandbox that lets a command write only in its own folder (no NUMBA_CACHE_DIR, no
    writable __pycache__, no home): a function of the package compiles in memory and runs (its
    module imports instead of failing), and is listed for the compile notice; another
    package's function fails there as numba makes it fail."""
    from . import landlock

    if landlock.abi() == 0:
        pytest.skip("the kernel has no Landlock")
    src = tmp_path / "src" / "toy.py"
    src.parent.mkdir()
    src.write_text("def twice(x):\n    return 2 * x\n")
    os.chmod(src.parent, 0o555)  # the in-tree cache: not writable (root ignores modes,
    work = tmp_path / "work"     # Landlock does not)
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    r = subprocess.run([sys.executable, "-c", _UNCACHED_PROBE, str(REPO), str(src), str(work)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out["lasvm_cli.toy"] == 42
    assert out["another_package.toy"].startswith("cannot cache function")
    assert out["uncached"] == ["lasvm_cli.toy.twice"]
