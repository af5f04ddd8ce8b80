"""The warm server and a sandbox (Landlock, which no one can see from outside the process): a
served command is confined exactly as its caller is, because the worker opens no path in its
own name: the client opens, creates and renames what the command touches (cli/broker.py).

One server, itself confined to the installation and its runtime folder (it cannot read or
write the tests' folders), serves every test here: what its workers can do with the tests'
files, the client did for them."""

import os
import shutil
import signal
import subprocess
import sys

import pytest

from . import landlock
from .conftest import HEART
from .test_warm_server import BIN, _env, _server_pid, _wait_for_socket

pytestmark = [
    pytest.mark.skipif(not (BIN / "svm-train").exists(),
                       reason="console scripts not installed beside this python"),
    pytest.mark.skipif(landlock.abi() == 0, reason="the kernel has no Landlock"),
]


def _installation():
    """What the server's interpreter reads: the interpreter and its libraries, the
    environment's packages, the package (its numba cache beside it or NUMBA_CACHE_DIR), the
    system's libraries and configuration, /proc, /sys, /dev."""
    import lasvm_cli

    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix,
               os.path.dirname(os.path.realpath(sys.executable)),
               os.path.dirname(os.path.dirname(os.path.abspath(lasvm_cli.__file__))),
               "/usr", "/lib", "/lib64", "/etc", "/proc", "/sys", "/dev"}
    folders.update(p for p in sys.path if p)
    if os.environ.get("NUMBA_CACHE_DIR"):
        folders.add(os.environ["NUMBA_CACHE_DIR"])
    return sorted(f for f in folders if os.path.isdir(f))


def _numba_cache():
    """Where numba keeps the compiled code (beside the package, or NUMBA_CACHE_DIR): a
    process that cannot write there cannot load it either (numba refuses a read-only
    cache), so a sandbox for these commands allows it."""
    import lasvm_cli

    folders = [os.path.dirname(os.path.abspath(lasvm_cli.__file__))]
    if os.environ.get("NUMBA_CACHE_DIR"):
        folders.append(os.environ["NUMBA_CACHE_DIR"])
    return folders


def _beneath(path, folders):
    path = os.path.realpath(path)
    return any(path == os.path.realpath(f) or path.startswith(os.path.realpath(f) + os.sep)
               for f in folders)


def _confine(writable, readable=None):
    def confine():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        landlock.restrict([str(p) for p in writable],
                          None if readable is None else [str(p) for p in readable])
    return confine


def _no_new_privileges():
    """What Landlock needs of a process without CAP_SYS_ADMIN; part of the server's key, so
    the confined server below serves these clients."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    landlock.no_new_privileges()


@pytest.fixture(scope="module")
def confined_server(tmp_path_factory):
    """A runtime folder whose server is confined by Landlock to the installation (reading)
    and its runtime folder (writing), started as users start one: by a first command, run
    in-process under that ruleset."""
    root = tmp_path_factory.mktemp("sandbox")
    runtime, first = root / "rt", root / "first"
    runtime.mkdir(mode=0o700)
    first.mkdir()
    installation = _installation()
    if _beneath(root, installation):
        pytest.skip("the tests' folders lie inside the installation")
    writable = [runtime, first, "/dev", *_numba_cache()]
    subprocess.run([BIN / "svm-train", "-q", HEART, first / "m"], env=_env(runtime, "1"),
                   preexec_fn=_confine(writable, installation + [HEART.parent]), check=True,
                   timeout=600)
    _wait_for_socket(runtime, set())
    yield runtime
    pid = _server_pid(runtime)
    if pid:
        os.kill(pid, signal.SIGTERM)


def _run(runtime, mode, argv, cwd, preexec):
    r = subprocess.run([BIN / argv[0], *argv[1:]], cwd=cwd, env=_env(runtime, mode),
                       capture_output=True, preexec_fn=preexec, timeout=600)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("argv, outputs", [
    (["svm-train", "heart", "m"], ["m"]),
    (["svm-predict", "heart", "model", "out"], ["out"]),
    (["svm-scale", "-s", "range", "heart"], ["range"]),
    (["svm-train", "missing", "m"], []),
], ids=["train", "predict", "scale-save", "missing"])
def test_confined_server_serves_files_it_cannot_open(confined_server, tmp_path, argv, outputs):
    """The server cannot open the tests' folders, its workers neither: a served command
    there works (or fails) exactly as in-process, since the client opens every file."""
    model = tmp_path / "model"
    subprocess.run([BIN / "svm-train", "-q", HEART, model], env=_env(confined_server, "0"),
                   check=True)
    results = []
    for mode in ("0", "require"):
        work = tmp_path / mode
        work.mkdir()
        shutil.copy(HEART, work / "heart")
        shutil.copy(model, work / "model")
        results.append((_run(confined_server, mode, argv, work, _no_new_privileges), work))
    (local, local_dir), (served, served_dir) = results
    assert served == local, served[2]
    for name in outputs:
        assert (served_dir / name).read_bytes() == (local_dir / name).read_bytes()


def test_confined_client_writes_only_where_it_may(confined_server, tmp_path):
    """A command under a ruleset that allows writes only in folder A (and what numba needs
    in-process: its cache, /dev/shm for its threads' start-up lock): its model goes into A,
    and into B it is refused (`Permission denied`, status 1), served as in-process; nothing
    appears in B."""
    allowed, denied = tmp_path / "A", tmp_path / "B"
    allowed.mkdir()
    denied.mkdir()
    shm = ["/dev/shm"] if os.path.isdir("/dev/shm") else []
    confine = _confine([allowed, *_numba_cache(), *shm])
    for folder, status in ((allowed, 0), (denied, 1)):
        local = _run(confined_server, "0", ["svm-train", HEART, folder / "local"], tmp_path,
                     confine)
        served = _run(confined_server, "require", ["svm-train", HEART, folder / "served"],
                      tmp_path, confine)
        assert local[0] == status, local[2]
        assert served[:2] == local[:2]
        assert served[2].replace(b"served", b"local") == local[2]
    assert (allowed / "served").read_bytes() == (allowed / "local").read_bytes()
    assert b"Permission denied" in local[2]
    assert list(denied.iterdir()) == []
