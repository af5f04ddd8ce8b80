"""The warm server (cli/warm_server.py, cli/handoff.py): a command handed to it behaves as the
same command run in-process: the same stdout, stderr, exit status and output files, signals
forwarded, a killed client takes its worker with it, and a dead server's socket is no
obstacle. Runs the installed console scripts as a user does."""

import marshal
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import HEART

BIN = Path(sys.executable).parent
pytestmark = pytest.mark.skipif(not (BIN / "svm-train").exists(),
                                reason="console scripts not installed beside this python")


def _env(runtime, mode):
    env = os.environ.copy()
    env.update(LASVM_RUNTIME_DIR=str(runtime), LASVM_SERVER=mode, LASVM_SERVER_IDLE="300")
    return env


def _lock_files(runtime):
    return list(Path(runtime).glob(f"lasvm-cli-{os.getuid()}/*.sock.lock"))


def _server_pid(runtime):
    for lock in _lock_files(runtime):
        text = lock.read_text().strip()
        if text:
            return int(text)
    return None


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    """A private runtime folder with a warm server started the way users start one: by a
    command that found none (it runs in-process and starts one as it exits)."""
    runtime = tmp_path_factory.mktemp("runtime")
    model = runtime / "first.model"
    subprocess.run([BIN / "svm-train", "-q", HEART, model], env=_env(runtime, "1"),
                   check=True)
    deadline = time.monotonic() + 300  # a first load of the compiled code on a busy machine
    sockets = []
    while time.monotonic() < deadline and not sockets:
        time.sleep(0.2)
        sockets = list(runtime.glob(f"lasvm-cli-{os.getuid()}/*.sock"))
    assert sockets, "no warm server started"
    yield runtime
    pid = _server_pid(runtime)
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def _both(runtime, tmp_path, argv, stdin=None, outputs=()):
    """Run argv in-process and on the server, each in its own copy of the working folder;
    returns the two results and the two folders."""
    results = []
    for mode in ("0", "require"):
        work = tmp_path / mode
        work.mkdir()
        shutil.copy(HEART, work / "heart")
        r = subprocess.run([BIN / argv[0], *argv[1:]], cwd=work, env=_env(runtime, mode),
                           input=stdin, capture_output=True, timeout=600)
        results.append((r, work))
    (local, local_dir), (served, served_dir) = results
    assert served.returncode == local.returncode, served.stderr
    assert served.stdout == local.stdout
    assert served.stderr == local.stderr
    for name in outputs:
        assert (served_dir / name).read_bytes() == (local_dir / name).read_bytes()
    return local, served


CASES = {
    "train": (["svm-train", "heart", "m"], ["m"]),
    "train-quiet-relative-model": (["svm-train", "-q", "-c", "4", "heart"], ["heart.model"]),
    "cross-validation": (["svm-train", "-v", "5", "heart"], []),
    "lasvm": (["svm-train", "--solver", "lasvm", "heart", "m"], ["m"]),
    "nu-svr": (["svm-train", "-s", "4", "heart", "m"], ["m"]),
    "usage": (["svm-train"], []),
    "bad-option": (["svm-train", "-t", "9", "heart"], []),
    "missing-file": (["svm-train", "nothere"], []),
    "scale": (["svm-scale", "-l", "0", "heart"], []),
    "lasvm-help": (["lasvm", "--help"], []),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_in_process(runtime, tmp_path, name):
    argv, outputs = CASES[name]
    _both(runtime, tmp_path, argv, outputs=outputs)


def test_predict(runtime, tmp_path):
    model = tmp_path / "heart.model"
    subprocess.run([BIN / "svm-train", "-q", HEART, model], env=_env(runtime, "0"), check=True)
    _both(runtime, tmp_path, ["svm-predict", "heart", str(model), "out"], outputs=["out"])


@pytest.mark.parametrize("payload", [b"not marshal data", marshal.dumps(["a", "list"]), b""])
def test_malformed_request_is_dropped(runtime, tmp_path, payload):
    """A request that is not a marshal-encoded dict closes that connection only: the server
    goes on serving the next command."""
    import socket
    import struct

    path = next(runtime.glob(f"lasvm-cli-{os.getuid()}/*.sock"))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock, open(os.devnull) as null:
        sock.settimeout(30)
        sock.connect(str(path))
        socket.send_fds(sock, [struct.pack("!I", len(payload)) + payload], [null.fileno()] * 3)
        assert sock.recv(100) == b""  # closed, no reply
    r = subprocess.run([BIN / "svm-train", "-q", HEART, tmp_path / "m"],
                       env=_env(runtime, "require"), capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr


def test_standard_input(runtime, tmp_path):
    """The worker reads the client's standard input (a bad file: the same error)."""
    local, served = _both(runtime, tmp_path, ["svm-train", "/dev/stdin", "m"],
                          stdin=b"1 1:2\n-1 1:x\n")
    assert served.returncode == 1 and b"1:x" in served.stderr


# a command that runs until it is stopped: a million LASVM epochs over heart_scale
ENDLESS = ["svm-train", "--solver", "lasvm", "--epochs", "1000000", str(HEART)]


def _workers_of(server_pid):
    workers = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == server_pid:
                workers.append(int(entry.name))
    return workers


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a shell's background jobs ignore it


def test_ctrl_c_is_forwarded(runtime, tmp_path):
    """SIGINT to the client interrupts the worker: 'interrupted', status 130, as in-process."""
    p = subprocess.Popen([BIN / ENDLESS[0], *ENDLESS[1:], tmp_path / "m"],
                         env=_env(runtime, "require"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=_default_sigint)
    time.sleep(2.0)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert err.decode().strip().endswith("interrupted")
    assert not (tmp_path / "m").exists()


def _state(pid):
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]


def _wait_state(pid, states, timeout=10.0):
    deadline = time.monotonic() + timeout
    while _state(pid) not in states and time.monotonic() < deadline:
        time.sleep(0.02)
    return _state(pid)


def _own_job():
    """As a shell starts a job: a process group of its own, whose parent (this test) is in
    another group of the session. The kernel discards SIGTSTP in an orphaned group (as under
    some CI runners), which a job never is."""
    _default_sigint()
    os.setpgid(0, 0)


def test_ctrl_z_stops_and_continues_the_worker(runtime, tmp_path):
    """Ctrl-Z (SIGTSTP) stops the client and its worker (which sits outside the terminal's
    process group); SIGCONT (the shell's fg / bg) continues both; the command then ends as
    usual."""
    server = _server_pid(runtime)
    p = subprocess.Popen([BIN / ENDLESS[0], *ENDLESS[1:], tmp_path / "m"],
                         env=_env(runtime, "require"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=_own_job)
    deadline = time.monotonic() + 30
    while not _workers_of(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    (worker,) = _workers_of(server)
    try:
        p.send_signal(signal.SIGTSTP)
        assert _wait_state(p.pid, "T") == "T"
        assert _wait_state(worker, "T") == "T"
        p.send_signal(signal.SIGCONT)
        assert _wait_state(worker, "RS") in "RS"
        assert _wait_state(p.pid, "RS") in "RS"
    except AssertionError:
        os.kill(worker, signal.SIGKILL)
        p.kill()
        raise
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert not (tmp_path / "m").exists()


def test_killed_client_ends_its_worker(runtime, tmp_path):
    server = _server_pid(runtime)
    p = subprocess.Popen([BIN / ENDLESS[0], *ENDLESS[1:], tmp_path / "m"],
                         env=_env(runtime, "require"), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not _workers_of(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _workers_of(server), "the command did not start on the server"
    p.kill()
    p.wait()
    deadline = time.monotonic() + 10
    while _workers_of(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _workers_of(server)
    assert not (tmp_path / "m").exists()


def test_dead_server_socket_runs_in_process(tmp_path):
    """A socket file left by a killed server: the command runs in-process (and starts a new
    server, which replaces the stale socket)."""
    runtime = tmp_path / "rt"
    folder = runtime / f"lasvm-cli-{os.getuid()}"
    folder.mkdir(parents=True, mode=0o700)
    code = "from lasvm_cli.cli.handoff import socket_path; print(socket_path())"
    path = subprocess.run([BIN / "python", "-c", code], env=_env(runtime, "1"),
                          capture_output=True, text=True, check=True).stdout.strip()
    import socket

    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)
    stale.close()  # bound, never listening: connect() is refused
    env = _env(runtime, "1")
    env["LASVM_SERVER_IDLE"] = "5"
    r = subprocess.run([BIN / "svm-train", "-q", HEART, tmp_path / "m"], env=env,
                       capture_output=True)
    assert r.returncode == 0 and (tmp_path / "m").exists()


def test_key_follows_numba_configuration(tmp_path):
    code = "from lasvm_cli.cli.handoff import server_key; print(server_key())"

    def key(**extra):
        env = _env(tmp_path, "1")
        env.update(extra)
        return subprocess.run([BIN / "python", "-c", code], env=env, capture_output=True,
                              text=True, check=True).stdout

    assert key() == key(LASVM_DATA="/elsewhere")
    assert key() != key(NUMBA_NUM_THREADS="1")
    assert key() != key(OMP_WAIT_POLICY="ACTIVE")


_TYPEOF_SCRIPT = """
import cProfile, pstats, sys
import numpy as np
from lasvm_cli.cli import warm_server
warm_server.CompiledCode()._import_package()  # the package's modules, as the server has them
if sys.argv[1] == "warm":
    warm_server._warm_first_calls()
imported = ["numpy.ma" in sys.modules, "difflib" in sys.modules]
from numba import typeof
from lasvm_cli.cache import make_cache
from lasvm_cli.data import kernel_data
from lasvm_cli.kernels import RBF, make_params
kd = kernel_data(np.array([0, 1, 2]), np.array([0, 1], np.int32), np.array([1.0, 2.0]), width=2,
                 training=True)
values = [kd, make_params(RBF, 3, 0.5, 0.0), make_cache(4, 1), np.zeros(3), np.zeros(3, np.int8),
          np.float64(1.0), 1, 1.0, True]
profile = cProfile.Profile()
profile.enable()
for v in values:
    typeof(v)
profile.disable()
stats = pstats.Stats(profile).stats
print(sum(n for (_, _, name), (_, n, *_) in stats.items() if "_abc_subclasscheck" in name),
      *imported)
"""


def test_server_dispatches_typeof_before_forking():
    """The warm server's _warm_first_calls leaves a worker's first typeof of the package's
    named tuples, arrays and scalars almost none of the ABC registry walk a cold process
    does (19 subclass checks against 899 here), and has imported what commands import on
    first use."""
    def run(mode):
        out = subprocess.run([sys.executable, "-c", _TYPEOF_SCRIPT, mode], capture_output=True,
                             text=True, check=True, timeout=600).stdout.split()
        return int(out[0]), out[1] == "True", out[2] == "True"

    warm, cold = run("warm"), run("cold")
    assert warm[1:] == (True, True) and cold[1:] == (False, False)
    assert 10 * warm[0] < cold[0]
