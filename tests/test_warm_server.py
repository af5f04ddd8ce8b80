"""The warm server (cli/warm_server.py, cli/handoff.py): a command handed to it behaves as the
same command run in-process: the same stdout, stderr, exit status and output files, signals
forwarded, a killed client takes its worker with it, and a dead server's socket is no
obstacle. Runs the installed console scripts as a user does."""

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


_FIRST = {}  # runtime folder -> the socket name of the first server seen there


def _socket(runtime):
    """The socket of the server that a plain command in ``runtime`` uses: the first one
    started there. Some tests start servers of other settings beside it (another nice value,
    another cgroup), and a killed one leaves its socket file behind, so "any socket" is not
    this one."""
    folder = Path(runtime) / f"lasvm-cli-{os.getuid()}"
    if runtime not in _FIRST:
        (first,) = folder.glob("*.sock")
        _FIRST[runtime] = first.name
    return folder / _FIRST[runtime]


def _server_pid(runtime):
    """The pid of the server behind ``_socket(runtime)``, or None when it is not running."""
    import json

    try:
        pid = json.loads(Path(f"{_socket(runtime)}.lock").read_text())["pid"]
    except (ValueError, KeyError, OSError):
        return None
    return pid if Path(f"/proc/{pid}").exists() else None


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    """A private runtime folder with a warm server started the way users start one: by a
    command that found none (it runs in-process and starts one as it exits)."""
    runtime = tmp_path_factory.mktemp("runtime")
    runtime.chmod(0o700)  # a runtime folder is accepted only when private
    model = runtime / "first.model"
    subprocess.run([BIN / "svm-train", "-q", HEART, model], env=_env(runtime, "1"),
                   check=True)
    deadline = time.monotonic() + 300  # a first load of the compiled code on a busy machine
    sockets = []
    while time.monotonic() < deadline and not sockets:
        time.sleep(0.2)
        sockets = list(runtime.glob(f"lasvm-cli-{os.getuid()}/*.sock"))
    assert sockets, "no warm server started"
    _socket(runtime)
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
    "stream-driven": (["svm-train", "-q", "--stream", "--solver", "lasvm", "-g", "0.07",
                       "--trace", "t", "--snapshots", "100,150", "--save-state", "s", "heart",
                       "m"], ["m", "m.100", "m.150"]),
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


def _frame(value):
    from lasvm_cli.cli import broker

    return broker.pack(value)


@pytest.mark.parametrize("payload", [b"not a frame", _frame(["a", "list"]), b""],
                         ids=["garbage", "list", "empty"])
def test_malformed_request_is_dropped(runtime, tmp_path, payload):
    """A request that is not a frame of a dict closes that connection only: the server goes
    on serving the next command."""
    import socket
    import struct

    path = _socket(runtime)
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


def _mapped(pid, name):
    try:
        return name in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("mode", ["0", "require"])
def test_ctrl_c_at_start_up(runtime, tmp_path, mode):
    """SIGINT as early as the command can get it: in-process while numpy loads (its library
    is mapped, the command's module is still importing), served as soon as the worker
    exists. 'interrupted' and status 130 as for a Ctrl-C in the run, never click's 'Aborted!'
    with 1 nor a traceback."""
    for attempt in range(3):
        model = tmp_path / f"m{attempt}"
        p = subprocess.Popen([BIN / ENDLESS[0], *ENDLESS[1:], model], env=_env(runtime, mode),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=_default_sigint)
        server = _server_pid(runtime)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                _mapped(p.pid, "_multiarray_umath") if mode == "0" else _workers_of(server)):
            time.sleep(0.001)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        assert (p.returncode, out, err.decode()) == (130, b"", "interrupted\n")
        assert not model.exists()


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


def _kill_client_and_expect_no_worker(p, server, model):
    """kill -9 of the client ``p``: within 10 s the server has no worker left, and no model
    was written."""
    p.kill()
    p.wait()
    deadline = time.monotonic() + 10
    while _workers_of(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _workers_of(server)
    assert not model.exists()


def test_killed_client_ends_its_worker(runtime, tmp_path):
    server = _server_pid(runtime)
    p = subprocess.Popen([BIN / ENDLESS[0], *ENDLESS[1:], tmp_path / "m"],
                         env=_env(runtime, "require"), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not _workers_of(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _workers_of(server), "the command did not start on the server"
    _kill_client_and_expect_no_worker(p, server, tmp_path / "m")


def test_dead_server_socket_runs_in_process(tmp_path):
    """A socket file left by a killed server: the command runs in-process (and starts a new
    server, which replaces the stale socket)."""
    runtime = tmp_path / "rt"
    folder = runtime / f"lasvm-cli-{os.getuid()}"
    folder.mkdir(parents=True, mode=0o700)
    runtime.chmod(0o700)
    path = folder / f"{_key(runtime)}.sock"
    import socket

    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # bound, never listening: connect() is refused
    env = _env(runtime, "1")
    env["LASVM_SERVER_IDLE"] = "5"
    r = subprocess.run([BIN / "svm-train", "-q", HEART, tmp_path / "m"], env=env,
                       capture_output=True)
    assert r.returncode == 0 and (tmp_path / "m").exists()


def _key(runtime, **extra):
    """The key of the server that a console script would use in this environment (computed
    by one: the key covers the interpreter and sys.path)."""
    env = _env(runtime, "1")
    env.update(extra)
    out = subprocess.run([BIN / "lasvm", "server", "status"], env=env, capture_output=True,
                         text=True, check=True).stdout
    return out.splitlines()[-1].rpartition(" ")[2]


def test_key_follows_numba_configuration(tmp_path):
    tmp_path.chmod(0o700)
    assert _key(tmp_path) == _key(tmp_path, LASVM_DATA="/elsewhere")
    assert _key(tmp_path) != _key(tmp_path, NUMBA_NUM_THREADS="1")
    assert _key(tmp_path) != _key(tmp_path, OMP_WAIT_POLICY="ACTIVE")


_TYPEOF_SCRIPT = """
import cProfile, pstats, sys
import numpy as np
from lasvm_cli.cli import warm_server
warm_server.CompiledCode()._import_package()  # the package's modules, as the server has them
if sys.argv[1] == "warm":
    warm_server._warm_first_calls()
imported = ["numpy.ma" in sys.modules, "difflib" in sys.modules]
from numba import typeof
from lasvm_cli.numerics.cache import make_cache
from lasvm_cli.numerics.data import kernel_data
from lasvm_cli.numerics.kernels import RBF, make_params
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


# --- the server survives its clients ------------------------------------------------------

def _served(runtime, tmp_path, name="m"):
    """A served command runs (the server is alive and serving)."""
    r = subprocess.run([BIN / "svm-train", "-q", HEART, tmp_path / name],
                       env=_env(runtime, "require"), capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r


def _log(runtime):
    return "".join(p.read_text(errors="replace")
                   for p in Path(runtime).glob(f"lasvm-cli-{os.getuid()}/*.log*"))


@pytest.mark.parametrize("request_", [
    {"prog": ["svm-train"]},
    {"prog": "svm-train", "argv": "svm-train", "env": {}, "umask": 18},
    {"prog": "svm-train", "argv": ["svm-train"], "env": {"A": 1}, "umask": 18,
     "limits": [], "affinity": [0], "nice": 0, "ignored": [], "blocked": [],
     "unbuffered": False},
    {"prog": "rm", "argv": ["rm"], "env": {}, "umask": 18, "limits": [],
     "affinity": [0], "nice": 0, "ignored": [], "blocked": [], "unbuffered": False},
], ids=["prog-list", "argv-str", "env-int", "unknown-prog"])
def test_request_of_the_wrong_shape_is_dropped(runtime, tmp_path, request_):
    """A valid frame of the wrong shape closes that connection, is logged, and the server
    serves the next command."""
    import socket
    import struct

    payload = _frame(request_)
    path = _socket(runtime)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock, open(os.devnull) as null:
        sock.settimeout(30)
        sock.connect(str(path))
        socket.send_fds(sock, [struct.pack("!I", len(payload)) + payload], [null.fileno()] * 3)
        assert sock.recv(100) == b""
    _served(runtime, tmp_path)
    assert "dropped a client: malformed request" in _log(runtime)


def test_client_that_leaves_before_the_answer(runtime, tmp_path):
    """A client killed while the server is stopped (it has not answered yet): the server,
    continued, is not hurt, and the abandoned command never runs (no output, no model)."""
    server = _server_pid(runtime)
    os.kill(server, signal.SIGSTOP)
    try:  # output to files, read after the command (pipes: test_stopped_server_holds_no_descriptor)
        with open(tmp_path / "out", "wb") as out:
            r = subprocess.run(["timeout", "1", BIN / "svm-train", HEART, tmp_path / "gone"],
                               env=_env(runtime, "require"), stdout=out, stderr=out)
    finally:
        os.kill(server, signal.SIGCONT)
    assert r.returncode == 124
    _served(runtime, tmp_path)
    time.sleep(1.0)
    assert not (tmp_path / "gone").exists() and (tmp_path / "out").read_bytes() == b""
    assert _server_pid(runtime) == server


@pytest.mark.parametrize("quiet", [False, True])
def test_stuck_server_runs_the_command_in_process(runtime, tmp_path, quiet):
    """A server that does not answer (stopped) within LASVM_SERVER_TIMEOUT: the command runs
    in-process, saying so in one line unless -q; the server, continued, runs nothing twice."""
    server = _server_pid(runtime)
    env = _env(runtime, "1")
    env["LASVM_SERVER_TIMEOUT"] = "1"
    argv = [BIN / "svm-train", *(["-q"] if quiet else []), HEART, tmp_path / "m"]
    local = subprocess.run(argv, env=_env(runtime, "0"), capture_output=True)
    os.kill(server, signal.SIGSTOP)
    try:  # output to files, read after the command (pipes: test_stopped_server_holds_no_descriptor)
        with open(tmp_path / "out", "wb") as out, open(tmp_path / "err", "wb") as err:
            r = subprocess.run(argv, env=env, stdout=out, stderr=err, timeout=600)
    finally:
        os.kill(server, signal.SIGCONT)
    assert r.returncode == 0 and (tmp_path / "out").read_bytes() == local.stdout
    said = (tmp_path / "err").read_text().splitlines()
    assert said == ([] if quiet else
                    ["svm-train: the warm server did not answer in 1 s: running in this "
                     "process"])
    _served(runtime, tmp_path, "after")
    assert _server_pid(runtime) == server and not _workers_of(server)


def test_many_commands_at_once(runtime, tmp_path):
    """100 commands started together: every one served, status 0, output as in-process (a
    quick worker's start and end reach the client in one read)."""
    model = tmp_path / "heart.model"
    subprocess.run([BIN / "svm-train", "-q", HEART, model], env=_env(runtime, "0"), check=True)
    local = subprocess.run([BIN / "svm-predict", HEART, model, tmp_path / "local.out"],
                           env=_env(runtime, "0"), capture_output=True, check=True)
    commands = [subprocess.Popen([BIN / "svm-predict", HEART, model, tmp_path / f"{i}.out"],
                                 env=_env(runtime, "require"), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE) for i in range(100)]
    expected = (tmp_path / "local.out").read_bytes()
    for i, p in enumerate(commands):
        out, err = p.communicate(timeout=600)
        assert (p.returncode, out, err) == (0, local.stdout, local.stderr)
        assert (tmp_path / f"{i}.out").read_bytes() == expected


# --- a served command runs as the command would have run ----------------------------------

def _attributes(pid):
    """What a process may do and how it is scheduled, as /proc shows it."""
    status = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        status[name] = value.strip()
    wanted = ("Umask", "Uid", "Gid", "Groups", "SigBlk", "SigIgn", "Cpus_allowed_list",
              "NoNewPrivs", "CapEff")
    io = subprocess.run(["ionice", "-p", str(pid)], capture_output=True, text=True).stdout
    return {"limits": Path(f"/proc/{pid}/limits").read_text(),
            "cgroup": Path(f"/proc/{pid}/cgroup").read_text(),
            "nice": os.getpriority(os.PRIO_PROCESS, pid),
            "ionice": io.strip(),
            **{name: status.get(name) for name in wanted}}


def _reading_process(client, pipe_inode, timeout=120):
    """The process that runs the command: the client itself or its worker (the process other
    than the client whose standard input is our pipe)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == client:
                continue
            try:
                if os.readlink(entry / "fd" / "0") == f"pipe:[{pipe_inode}]":
                    return int(entry.name)
            except OSError:
                continue
        time.sleep(0.05)
    raise AssertionError("no worker reads the command's input")


def _attributes_of_command(runtime, mode, preexec, tmp_path, served=None):
    """Start `svm-train /dev/stdin` (it waits on its input), read the attributes of the
    process that runs it (the client in-process, else its worker), then end it."""
    read, write = os.pipe()
    p = subprocess.Popen([BIN / "svm-train", "-q", "/dev/stdin", tmp_path / "m"], stdin=read,
                         env=_env(runtime, mode), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, preexec_fn=preexec)
    os.close(read)
    try:
        if not (served if served is not None else mode == "require"):
            time.sleep(1.0)  # reading its input, or about to
            runner = p.pid
        else:
            runner = _reading_process(p.pid, os.fstat(write).st_ino)
        return _attributes(runner)
    finally:
        os.close(write)
        p.wait(timeout=600)


def _user_settings():
    """What a user sets before a command without changing its server (soft limits, ignored
    and blocked signals, umask, I/O priority): the worker takes them on."""
    import resource

    for r, soft in ((resource.RLIMIT_FSIZE, 1 << 20), (resource.RLIMIT_CPU, 1000),
                    (resource.RLIMIT_AS, 8 << 30), (resource.RLIMIT_NOFILE, 200)):
        resource.setrlimit(r, (soft, resource.getrlimit(r)[1]))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # nohup
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    os.umask(0o027)
    subprocess.run(["ionice", "-c", "3", "-p", str(os.getpid())], check=True)


def test_worker_takes_the_callers_settings(runtime, tmp_path):
    """Soft limits (ulimit -S), nohup's ignored SIGHUP, a blocked signal, the umask and the
    I/O priority (ionice) are the caller's in the worker, and do not leak into the next
    command's worker."""
    local = _attributes_of_command(runtime, "0", _user_settings, tmp_path)
    served = _attributes_of_command(runtime, "require", _user_settings, tmp_path)
    assert served == local
    plain_local = _attributes_of_command(runtime, "0", _default_sigint, tmp_path)
    plain_served = _attributes_of_command(runtime, "require", _default_sigint, tmp_path)
    assert plain_served == plain_local and plain_served != served


def _wait_for_socket(runtime, before, timeout=600):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sockets = set(Path(runtime).glob(f"lasvm-cli-{os.getuid()}/*.sock")) - before
        if sockets:
            return sockets
        time.sleep(0.2)
    raise AssertionError("no server started")


def _keyed_settings(cpu):
    """What a worker could not take on from its server: a higher nice value, lower hard
    limits, other supplementary groups (as root), fewer CPUs (numba sizes its threads by
    them): a server of their own. The CPU itself (taskset) the worker takes on."""
    import resource

    def settings():
        _default_sigint()
        os.nice(5)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 21))
        if os.geteuid() == 0:
            os.setgroups([65534])
        os.sched_setaffinity(0, {cpu})

    return settings


def test_settings_a_worker_cannot_take_get_their_own_server(runtime, tmp_path):
    """nice, hard limits (bash's `ulimit -f` sets both), supplementary groups (setpriv
    --groups) and the number of CPUs name another server, started under them, whose worker
    has them; a command on another single CPU uses that server, on its own CPU."""
    cpus = sorted(os.sched_getaffinity(0))
    before = set(Path(runtime).glob(f"lasvm-cli-{os.getuid()}/*.sock"))
    local = _attributes_of_command(runtime, "1", _keyed_settings(cpus[-1]), tmp_path,
                                   served=False)
    _wait_for_socket(runtime, before)
    served = _attributes_of_command(runtime, "require", _keyed_settings(cpus[-1]), tmp_path)
    assert served == local and served["nice"] == os.getpriority(os.PRIO_PROCESS, 0) + 5
    local = _attributes_of_command(runtime, "0", _keyed_settings(cpus[0]), tmp_path)
    served = _attributes_of_command(runtime, "require", _keyed_settings(cpus[0]), tmp_path)
    assert served == local and served["Cpus_allowed_list"] == str(cpus[0])


def _file_limit():
    import resource

    _default_sigint()
    resource.setrlimit(resource.RLIMIT_FSIZE, (1, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def test_file_size_limit(runtime, tmp_path):
    """`ulimit -S -f`: the model cannot be written, served as in-process (the same error)."""
    results = []
    for mode in ("0", "require"):
        out = tmp_path / f"{mode}.model"
        r = subprocess.run([BIN / "svm-train", "-q", HEART, out], env=_env(runtime, mode),
                           capture_output=True, preexec_fn=_file_limit, timeout=600)
        results.append((r.returncode, r.stdout, r.stderr.replace(str(out).encode(), b"M")))
    assert results[0] == results[1]
    assert results[0][0] == 1 and b"File too large" in results[0][2]


def _nohup():
    _own_job()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


@pytest.mark.parametrize("mode", ["0", "require"])
def test_nohup_command_survives_sighup(runtime, tmp_path, mode):
    """nohup (SIGHUP ignored): a SIGHUP to the command changes nothing, in-process or served;
    the command then ends on SIGINT as usual."""
    p = subprocess.Popen([BIN / ENDLESS[0], *ENDLESS[1:], tmp_path / "m"],
                         env=_env(runtime, mode), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=_nohup)
    time.sleep(3.0)
    p.send_signal(signal.SIGHUP)
    time.sleep(1.0)
    assert p.poll() is None
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err


def _cgroup(tmp_name):
    """A cgroup (v1 pids or v2 unified) of our own, or None."""
    for root in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup/unified"),
                 Path("/sys/fs/cgroup")):
        if (root / "cgroup.procs").exists():
            group = root / tmp_name
            try:
                group.mkdir(exist_ok=True)
            except OSError:
                continue
            if os.access(group / "cgroup.procs", os.W_OK):
                return group
            group.rmdir()
    return None


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a cgroup")
def test_command_in_another_cgroup_gets_its_own_server(runtime, tmp_path):
    """A command in another cgroup (a cluster job's) is served by a server inside that
    cgroup: the worker is bounded as the command is, and ends with the job."""
    group = _cgroup(f"lasvm-test-{os.getpid()}")
    if group is None:
        pytest.skip("no writable cgroup hierarchy")

    def enter():
        _default_sigint()
        (group / "cgroup.procs").write_text(f"{os.getpid()}\n")

    try:
        before = set(Path(runtime).glob(f"lasvm-cli-{os.getuid()}/*.sock"))
        local = _attributes_of_command(runtime, "1", enter, tmp_path, served=False)
        (new,) = _wait_for_socket(runtime, before)
        served = _attributes_of_command(runtime, "require", enter, tmp_path)
        assert served == local and group.name in served["cgroup"]
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            os.kill(int(pid), signal.SIGKILL)  # the server of that "job" ends with it
        deadline = time.monotonic() + 30
        while (group / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.1)
        group.rmdir()


# --- the runtime folder and the server's identity -----------------------------------------

def _folder_path(env):
    from lasvm_cli.cli import handoff

    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        folder = handoff.Folder.open()
        try:
            return os.readlink(f"/proc/self/fd/{folder.fd}")
        finally:
            folder.close()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value


def test_runtime_folder_must_be_private(tmp_path):
    """A runtime dir open to others, or a symbolic link where the private folder should be,
    is not used: the per-user folder under /tmp is, checked the same way."""
    fallback = f"/tmp/lasvm-cli-{os.geteuid()}"
    good = tmp_path / "good"
    good.mkdir(mode=0o700)
    assert _folder_path({"LASVM_RUNTIME_DIR": str(good)}) == str(good / f"lasvm-cli-{os.geteuid()}")
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    assert _folder_path({"LASVM_RUNTIME_DIR": str(shared)}) == fallback
    linked = tmp_path / "linked"
    linked.mkdir(mode=0o700)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (linked / f"lasvm-cli-{os.geteuid()}").symlink_to(tmp_path / "elsewhere")
    assert _folder_path({"LASVM_RUNTIME_DIR": str(linked)}) == fallback


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a second user (root can make one own a folder)")
def test_runtime_dir_of_another_user_is_not_used(tmp_path):
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    os.chown(other, 65534, 65534)
    assert _folder_path({"LASVM_RUNTIME_DIR": str(other)}) == f"/tmp/lasvm-cli-{os.geteuid()}"


def test_lock_file_link_is_not_followed(tmp_path):
    """A symbolic link planted as the server's lock file: the server does not start, and the
    file it points to is untouched."""
    runtime = tmp_path / "rt"
    folder = runtime / f"lasvm-cli-{os.getuid()}"
    folder.mkdir(parents=True, mode=0o700)
    runtime.chmod(0o700)
    victim = tmp_path / "victim"
    victim.write_text("secret\n")
    victim.chmod(0o600)
    (folder / f"{_key(runtime)}.sock.lock").symlink_to(victim)
    env = _env(runtime, "1")
    r = subprocess.run([BIN / "svm-train", "-q", HEART, tmp_path / "m"], env=env,
                       capture_output=True, timeout=600)
    assert r.returncode == 0
    time.sleep(3.0)  # a server would have taken its lock by now
    assert victim.read_text() == "secret\n"
    assert not list(folder.glob("*.sock"))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a second user for the impostor")
def test_client_sends_nothing_to_another_users_server(tmp_path):
    """A socket of another user's at the server's address: the client checks the peer's uid
    before sending, so the impostor receives no byte and no descriptor."""
    import socket

    runtime = tmp_path / "rt"
    folder = runtime / f"lasvm-cli-{os.getuid()}"
    folder.mkdir(parents=True, mode=0o700)
    runtime.chmod(0o700)
    path = str(folder / f"{_key(runtime)}.sock")
    report_read, report_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the impostor: listens as nobody, reports what a client sent
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(path)
            os.setgid(65534)
            os.setuid(65534)
            sock.listen(1)
            os.write(report_write, b"L")
            sock.settimeout(60)
            conn, _ = sock.accept()
            conn.settimeout(10)
            data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
            os.write(report_write, f"{len(data)} {len(fds)}".encode())
        finally:
            os._exit(0)
    os.close(report_write)
    assert os.read(report_read, 1) == b"L"
    r = subprocess.run([BIN / "svm-train", "-q", HEART, tmp_path / "m"],
                       env=_env(runtime, "require"), capture_output=True, timeout=600)
    report = os.read(report_read, 100)
    os.waitpid(pid, 0)
    assert report == b"0 0"
    assert r.returncode == 1 and b"no warm server took the command" in r.stderr


def test_key_covers_every_dependency_a_worker_imports(tmp_path):
    """An upgrade of click or tqdm (their files change) names a new server."""
    fake = tmp_path / "site"
    for name in ("click", "tqdm"):
        (fake / name).mkdir(parents=True)
        (fake / name / "__init__.py").write_text("")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from lasvm_cli.cli.handoff import server_key; print(server_key())")

    def key():
        return subprocess.run([BIN / "python", "-c", code, fake], capture_output=True,
                              text=True, check=True).stdout

    first = key()
    assert key() == first
    for name in ("click", "tqdm"):
        os.utime(fake / name / "__init__.py", ns=(1, time.time_ns()))
        assert key() != first
        first = key()


def test_server_status_and_stop(tmp_path):
    """`lasvm server status` names its folder and lists the running server; `lasvm server
    stop` stops it and removes its socket; status then says none runs. A server stopped while
    a command runs stays listed, with its worker, until the command ends."""
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    env = _env(runtime, "1")

    def lasvm_server(what):
        return subprocess.run([BIN / "lasvm", "server", what], env=env, capture_output=True,
                              text=True, check=True).stdout

    subprocess.run([BIN / "svm-train", "-q", HEART, tmp_path / "m"], env=env, check=True)
    _wait_for_socket(runtime, set())
    pid = _server_pid(runtime)
    status = lasvm_server("status")
    assert status.splitlines()[0] == f"runtime folder {runtime}/lasvm-cli-{os.getuid()}"
    assert f"pid {pid}" in status and "running 0" in status
    stop = lasvm_server("stop")
    assert "stopped the warm server" in stop and f"(pid {pid})" in stop
    assert not Path(f"/proc/{pid}").exists() or _state(pid) == "Z"
    assert not list(runtime.glob(f"lasvm-cli-{os.getuid()}/*.sock"))
    assert lasvm_server("status").splitlines()[1] == "no warm server is running"

    subprocess.run([BIN / "svm-train", "-q", HEART, tmp_path / "m"], env=env, check=True)
    _wait_for_socket(runtime, set())
    pid = _server_pid(runtime)
    p = subprocess.Popen([BIN / ENDLESS[0], *ENDLESS[1:], tmp_path / "long"],
                         env=_env(runtime, "require"), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, preexec_fn=_default_sigint)
    try:
        deadline = time.monotonic() + 30
        while not _workers_of(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        (worker,) = _workers_of(pid)
        assert f"running 1 (workers {worker})" in lasvm_server("status")
        stop = lasvm_server("stop")
        assert (f"(pid {pid}) accepts no more commands and exits when its running commands "
                f"end (workers {worker})") in stop
        status = lasvm_server("status")
        assert f"pid {pid}  stopping  running 1 (workers {worker})" in status
    finally:
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=60)
    assert p.returncode == 130
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists() and _state(pid) != "Z" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lasvm_server("status").splitlines()[1] == "no warm server is running"


# --- the open broker: the client opens, as the caller -------------------------------------

def test_frames_round_trip_and_bombs_are_refused():
    """The request and broker frames: every value a request holds comes back as it went,
    odd names included; a count or length beyond the bytes received is refused before
    anything is allocated for it."""
    import struct

    from lasvm_cli.cli import broker

    value = {"argv": ["svm-train", "caf\udce9", ""], "env": {"A": "b=c", "\u00e9": "x"},
             "n": [-1, 0, 2 ** 70], "f": [1.5, float("inf")], "b": [b"\0\xff", True, None]}
    assert broker.unpack(broker.pack(value)) == value
    for bomb in (b"l" + struct.pack("!I", 2 ** 31 - 1), b"s" + struct.pack("!I", 2 ** 31 - 1),
                 b"d" + struct.pack("!I", 1000) + b"N", b"i\xff" + b"9" * 300, b"l" * 100,
                 broker.pack([1]) + b"N"):
        with pytest.raises(ValueError):
            broker.unpack(bomb)


def _vm(pid, field):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def test_request_allocates_only_what_was_received(runtime, tmp_path):
    """A 9-byte request announcing 2^27 items (marshal's tuple code, then the same in the
    frame format): the server's peak memory does not grow by what the count announces, and
    the next command is served at once."""
    import socket
    import struct

    server = _server_pid(runtime)
    before = _vm(server, "VmHWM")
    path = _socket(runtime)
    for payload in (b"(" + struct.pack("<i", 2 ** 27), b"l" + struct.pack("!I", 2 ** 27)):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(str(path))
            sock.sendall(struct.pack("!I", len(payload)) + payload)
            assert sock.recv(100) == b""
    t = time.monotonic()
    _served(runtime, tmp_path)
    assert time.monotonic() - t < 30
    assert _vm(server, "VmHWM") - before < 256 << 20


def _with_pipe_of(path):
    """A pipe whose read end carries ``path``'s bytes (as bash's <(cat path) makes one)."""
    read, write = os.pipe()
    writer = subprocess.Popen(["cat", str(path)], stdout=write)
    os.close(write)
    return read, writer


@pytest.mark.parametrize("kind", ["process-substitution", "inherited-file"])
def test_descriptor_paths_are_the_callers(runtime, tmp_path, kind):
    """`svm-train <(cat data) m` (/dev/fd/63, a pipe) and `svm-train /dev/fd/3 m 3<data`: the
    descriptor is the caller's, so the worker's copy comes from the client (in-process and
    served alike, the same model)."""
    results = []
    for mode in ("0", "require"):
        if kind == "process-substitution":
            fd, writer = _with_pipe_of(HEART)
        else:
            fd, writer = os.open(HEART, os.O_RDONLY), None
        try:
            r = subprocess.run([BIN / "svm-train", f"/dev/fd/{fd}", tmp_path / f"{mode}.m"],
                               env=_env(runtime, mode), capture_output=True, pass_fds=[fd],
                               timeout=600)
        finally:
            os.close(fd)
            if writer:
                writer.wait()
        results.append((r.returncode, r.stdout, r.stderr))
    assert results[0] == results[1] and results[0][0] == 0, results[1][2]
    assert (tmp_path / "0.m").read_bytes() == (tmp_path / "require.m").read_bytes()


def _both_existing(runtime, tmp_path, argv):
    results = []
    for mode in ("0", "require"):
        work = tmp_path / mode
        work.mkdir(exist_ok=True)
        shutil.copy(HEART, work / "heart")
        r = subprocess.run([BIN / argv[0], *argv[1:]], cwd=work, env=_env(runtime, mode),
                           capture_output=True, timeout=600)
        results.append((r.returncode, r.stdout, r.stderr))
    assert results[0] == results[1]
    return results[0]


@pytest.mark.parametrize("argv", [
    ["svm-train", "-q", "missing", "m"],
    ["svm-train", "-q", "heart", "nodir/m"],
    ["svm-predict", "heart", "heart", "out"],
    ["svm-scale", "-r", "missing", "heart"],
    ["svm-scale", "-s", "nodir/range", "heart"],
    ["svm-train", "-q", "heart", "link"],
], ids=["missing-input", "missing-folder", "model-not-a-model", "range-missing",
        "range-unwritable", "model-through-symlink"])
def test_errors_and_outputs_through_the_broker(runtime, tmp_path, argv):
    """Missing files and folders, a bad model, a model written through a symbolic link (the
    link stays, its target is replaced): served as in-process."""
    for mode in ("0", "require"):
        (tmp_path / mode).mkdir()
        (tmp_path / mode / "target").write_text("old\n")
        (tmp_path / mode / "link").symlink_to("target")
    _both_existing(runtime, tmp_path, argv)
    for mode in ("0", "require"):
        assert (tmp_path / mode / "link").is_symlink()
    assert ((tmp_path / "0" / "target").read_bytes()
            == (tmp_path / "require" / "target").read_bytes())


def _wait_until_opening_a_fifo(pid, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/wchan").read_text() == "wait_for_partner":
            return
        time.sleep(0.05)
    raise AssertionError("the command never waited on the named pipe")


def test_ctrl_c_while_opening_a_named_pipe(runtime, tmp_path):
    """`svm-train fifo m` with no writer blocks in open(); Ctrl-C ends it ('interrupted',
    status 130) served as in-process: the client's blocked open is interrupted too."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    results = []
    for mode in ("0", "require"):
        p = subprocess.Popen([BIN / "svm-train", fifo, tmp_path / "m"], env=_env(runtime, mode),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=_default_sigint)
        _wait_until_opening_a_fifo(p.pid)  # the client opens it, served or not
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        results.append((p.returncode, out, err))
    assert results[0] == results[1] and results[0][0] == 130, results
    assert not (tmp_path / "m").exists()


# --- callers that could hang or orphan a command ------------------------------------------

def _closing(fd):
    def close():
        _default_sigint()
        os.close(fd)
    return close


@pytest.mark.parametrize("fd", [0, 1])
def test_closed_standard_stream(runtime, tmp_path, fd):
    """`svm-train - m <&-` (and a closed stdout): served or not, the command ends at once as
    in-process does (it runs in-process: the client's socket must not become the command's
    stream), without a traceback; a closed stdout is one that cannot be written."""
    results = []
    for mode in ("0", "1"):
        with open(HEART, "rb") as data:
            r = subprocess.run([BIN / "svm-train", "-", tmp_path / f"{mode}.m"],
                               env=_env(runtime, mode), stdin=data, capture_output=True,
                               preexec_fn=_closing(fd), timeout=120)
        results.append((r.returncode, r.stdout, r.stderr))
    assert results[0] == results[1]
    assert fd != 0 or results[0][0] == 1
    assert b"Traceback" not in results[0][2]
    if fd == 1:  # as any stdout that cannot be written; with -q nothing is written
        assert results[0][0] == 1
        assert results[0][2].endswith(b"can't write standard output: Bad file descriptor\n")
        quiet = subprocess.run([BIN / "svm-train", "-q", HEART, tmp_path / "q.m"],
                               env=_env(runtime, "1"), capture_output=True,
                               preexec_fn=_closing(1), timeout=120)
        assert (quiet.returncode, quiet.stderr) == (0, b"") and (tmp_path / "q.m").exists()


def test_killed_client_with_closed_stdin_leaves_no_worker(runtime, tmp_path):
    """A long command with stdin closed, its client killed with kill -9: nothing runs on and
    no model appears."""
    server = _server_pid(runtime)
    p = subprocess.Popen([BIN / ENDLESS[0], *ENDLESS[1:], tmp_path / "m"],
                         env=_env(runtime, "1"), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, preexec_fn=_closing(0))
    time.sleep(2.0)
    _kill_client_and_expect_no_worker(p, server, tmp_path / "m")


def test_stopped_server_holds_no_descriptor(runtime, tmp_path):
    """`svm-train data m | cat` while the server is stopped: the client gives up after
    LASVM_SERVER_TIMEOUT and runs the command itself; the pipe ends when it does (the server
    never got the caller's descriptors), and the server, continued, runs nothing."""
    server = _server_pid(runtime)
    local = subprocess.run([BIN / "svm-train", HEART, tmp_path / "local"],
                           env=_env(runtime, "0"), capture_output=True, check=True)
    env = _env(runtime, "1")
    env["LASVM_SERVER_TIMEOUT"] = "1"
    os.kill(server, signal.SIGSTOP)
    try:
        p = subprocess.Popen([BIN / "svm-train", HEART, tmp_path / "m"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out, _ = p.communicate(timeout=120)  # EOF: no copy of the pipe in the server
    finally:
        os.kill(server, signal.SIGCONT)
    assert p.returncode == 0 and out == local.stdout
    _served(runtime, tmp_path, "after")
    assert _server_pid(runtime) == server and not _workers_of(server)


def _pids_cgroup(name):
    for root in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
        if (root / "cgroup.procs").exists() and os.access(root, os.W_OK):
            group = root / name
            try:
                group.mkdir(exist_ok=True)
            except OSError:
                continue
            if (group / "pids.max").exists():
                return root, group
            group.rmdir()
    return None, None


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a cgroup")
def test_failed_fork_runs_in_process(runtime, tmp_path):
    """A server that cannot fork (its cgroup's pids.max reached) refuses: the command runs
    in-process, the same output, no word of a server that stopped; the server serves again
    once it can fork."""
    server = _server_pid(runtime)
    root, group = _pids_cgroup(f"lasvm-fork-{os.getpid()}")
    if group is None:
        pytest.skip("no writable pids cgroup")
    before = [line for line in Path(f"/proc/{server}/cgroup").read_text().splitlines()
              if ":pids:" in line or line.startswith("0::")]
    home = root / before[0].split(":", 2)[2].lstrip("/") if before else root
    local = subprocess.run([BIN / "svm-train", HEART, tmp_path / "local"],
                           env=_env(runtime, "0"), capture_output=True, check=True)
    try:
        (group / "cgroup.procs").write_text(f"{server}\n")
        (group / "pids.max").write_text((group / "pids.current").read_text())
        r = subprocess.run([BIN / "svm-train", HEART, tmp_path / "m"], env=_env(runtime, "1"),
                           capture_output=True, timeout=600)
    finally:
        (home / "cgroup.procs").write_text(f"{server}\n")
        group.rmdir()
    assert (r.returncode, r.stdout, r.stderr) == (0, local.stdout, local.stderr)
    assert "cannot fork a worker" in _log(runtime)
    _served(runtime, tmp_path, "after")


def test_server_timeout_is_validated(runtime, tmp_path):
    """LASVM_SERVER_TIMEOUT=inf or 1e300 waits without a limit; nan, a negative number, zero
    or a word is said on stderr once and the default used; the command is served either way
    (`inf` failed every command with OverflowError)."""
    local = subprocess.run([BIN / "svm-train", HEART, tmp_path / "local"],
                           env=_env(runtime, "0"), capture_output=True, check=True)
    for value in ("inf", "1e300", "nan", "-1", "0", "ten"):
        env = _env(runtime, "require")
        env["LASVM_SERVER_TIMEOUT"] = value
        r = subprocess.run([BIN / "svm-train", HEART, tmp_path / "m"], env=env,
                           capture_output=True, timeout=600)
        assert (r.returncode, r.stdout) == (0, local.stdout), r.stderr
        said = r.stderr.decode().splitlines()
        if value in ("inf", "1e300"):
            assert said == []
        else:
            assert said == [f"svm-train: LASVM_SERVER_TIMEOUT={value!r} is not a positive "
                            "number of seconds: using 10"]


# --- a local process cannot stall the server -----------------------------------------------

def _cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _sleeps(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    return 0


def test_out_of_descriptors_backs_off_and_idle_connections_drop(runtime, tmp_path):
    """Idle connections held while the server's `ulimit -n` is reached: the server does not
    spin on its readable listener (EMFILE), it drops the idle ones after its handshake
    timeout, and then serves again."""
    import resource
    import socket

    server = _server_pid(runtime)
    path = str(_socket(runtime))
    soft, hard = resource.prlimit(server, resource.RLIMIT_NOFILE)
    open_now = len(os.listdir(f"/proc/{server}/fd"))
    idle = []
    try:
        resource.prlimit(server, resource.RLIMIT_NOFILE, (open_now + 3, hard))
        for _ in range(8):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(path)
            idle.append(sock)
        time.sleep(0.5)
        cpu, sleeps = _cpu_seconds(server), _sleeps(server)
        time.sleep(3.0)
        # spinning: CPU as the busy host allows it, and no sleep at all; backing off: sleeps
        assert _cpu_seconds(server) - cpu < 0.3 and _sleeps(server) - sleeps >= 2
        idle[0].settimeout(30)
        assert idle[0].recv(10) == b""  # dropped after the handshake timeout
    finally:
        for sock in idle:
            sock.close()
        resource.prlimit(server, resource.RLIMIT_NOFILE, (soft, hard))
    _served(runtime, tmp_path)


# --- terminals and streams -----------------------------------------------------------------

_BACKGROUND_JOB = r"""
import os, signal, subprocess, sys, time
# a session with the pty as its terminal, this process its foreground job; the command a
# background job of it, reading the terminal, as `svm-train - m &` at a shell
os.setsid()
import fcntl, termios
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
def background():
    os.setpgid(0, 0)
p = subprocess.Popen(sys.argv[1:], preexec_fn=background)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    pid, status = os.waitpid(p.pid, os.WUNTRACED | os.WNOHANG)
    if pid and os.WIFSTOPPED(status):
        print("stopped", signal.Signals(os.WSTOPSIG(status)).name, flush=True)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        break
    if pid:
        print("ended", status, flush=True)
        break
    time.sleep(0.05)
else:
    print("still running", flush=True)
    p.kill()
"""


def test_background_job_reading_the_terminal_stops(runtime, tmp_path):
    """`svm-train - m &` at a terminal: the command stops on SIGTTIN (`Stopped (tty input)`)
    as in-process, instead of a worker outside the terminal's session eating the shell's
    input."""
    import pty

    results = []
    for mode in ("0", "1"):
        main, tty = pty.openpty()
        try:
            r = subprocess.run([sys.executable, "-c", _BACKGROUND_JOB, BIN / "svm-train", "-",
                                tmp_path / f"{mode}.m"], env=_env(runtime, mode), stdin=tty,
                               stdout=subprocess.PIPE, stderr=tty, timeout=120)
        finally:
            os.close(tty)
            os.close(main)
        results.append(r.stdout)
    assert results[0] == results[1] == b"stopped SIGTTIN\n"


def _server_for(runtime, env, tmp_path):
    """Make sure a server for ``env`` runs in ``runtime`` (its key may differ from the
    module's): a first command starts it."""
    out = subprocess.run([BIN / "lasvm", "server", "status"], env=env, capture_output=True,
                         text=True, check=True).stdout
    key = out.splitlines()[-1].rpartition(" ")[2]
    socket_path = Path(runtime) / f"lasvm-cli-{os.getuid()}" / f"{key}.sock"
    if not socket_path.exists():
        subprocess.run([BIN / "svm-train", "-q", HEART, tmp_path / "first"],
                       env=dict(env, LASVM_SERVER="1"), check=True, timeout=600)
        deadline = time.monotonic() + 600
        while not socket_path.exists() and time.monotonic() < deadline:
            time.sleep(0.2)


def test_unbuffered_output_reaches_the_worker(runtime, tmp_path):
    """PYTHONUNBUFFERED=1: stdout is written as it is printed, so with stdout and stderr on
    one pipe the lines interleave as in-process (buffered, stdout comes last)."""
    data = tmp_path / "counts"  # non-negative and sparse: -l -1 adds nonzeros, a warning
    data.write_text("1 1:1 2:3\n-1 1:2\n1 2:5\n")
    outputs = {}
    for unbuffered in (True, False):
        env = _env(runtime, "0")
        env.pop("PYTHONUNBUFFERED", None)
        if unbuffered:
            env["PYTHONUNBUFFERED"] = "1"
        for mode in ("0", "require"):
            env["LASVM_SERVER"] = mode
            if mode == "require":
                _server_for(runtime, env, tmp_path)
            r = subprocess.run([BIN / "svm-scale", data], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=600)
            outputs[unbuffered, mode] = (r.returncode, r.stdout)
    assert outputs[True, "0"] == outputs[True, "require"]
    assert outputs[False, "0"] == outputs[False, "require"]
    assert outputs[True, "0"] != outputs[False, "0"]  # the check can tell the two apart


# --- the runtime folder, said ----------------------------------------------------------------

def test_runtime_dir_of_the_wrong_mode_is_said_once(tmp_path):
    """LASVM_RUNTIME_DIR open to others: one line on stderr names it and the folder used
    instead; `lasvm server status` names the folder it looks in."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    env = _env(shared, "1")
    env["LASVM_SERVER_IDLE"] = "1"  # the server it starts in /tmp goes at once
    r = subprocess.run([BIN / "lasvm", "server", "status"], env=env, capture_output=True,
                       text=True, check=True)
    fallback = f"/tmp/lasvm-cli-{os.geteuid()}"
    assert r.stderr.splitlines() == [
        f"lasvm: LASVM_RUNTIME_DIR={shared}: has mode 0755, not 0700: the warm server's "
        "folder is in /tmp instead"]
    assert r.stdout.splitlines()[0] == f"runtime folder {fallback}"
    local = subprocess.run([BIN / "svm-train", HEART, tmp_path / "local"],
                           env=_env(shared, "0"), capture_output=True, check=True)
    r = subprocess.run([BIN / "svm-train", HEART, tmp_path / "m"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout == local.stdout.decode()
    assert r.stderr.splitlines() == [
        f"svm-train: LASVM_RUNTIME_DIR={shared}: has mode 0755, not 0700: the warm server's "
        "folder is in /tmp instead"]


def test_server_command_line_shows_no_paths(runtime):
    """The server's sys.path comes through a pipe: `ps` shows none of its entries."""
    argv = Path(f"/proc/{_server_pid(runtime)}/cmdline").read_bytes().decode().split("\0")
    cmdline = " ".join(argv[1:])  # after the interpreter's own path
    entries = [p for p in sys.path if p and len(p) > 1]
    assert entries and not any(p in cmdline for p in entries)
    assert "site-packages" not in cmdline and str(Path(__file__).parent.parent) not in cmdline


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a folder to another user")
def test_shared_folder_of_another_user_is_explained(tmp_path, monkeypatch, capsys):
    """Another user made /tmp/lasvm-cli-UID: no server can run, and `lasvm server status`
    says why (and commands run in-process)."""
    from lasvm_cli.cli import handoff, server

    folder = tmp_path / f"lasvm-cli-{os.geteuid()}"
    folder.mkdir(mode=0o700)
    os.chown(folder, 65534, 65534)
    monkeypatch.setattr(handoff, "SHARED", str(tmp_path))
    monkeypatch.delenv("LASVM_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    server.status()
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (f"no private runtime folder ({folder} belongs to uid 65534, not to this "
                     f"user (uid {os.geteuid()})): commands run without a warm server")
