"""The commands' side of the warm server (cli/warm_server.py): hand a command to it, or run
in-process and start one for the next command.

Why: a fresh process spends ~1-2 s importing numba and loading its typing registries before
the first compiled function runs, which is the whole run on the small data people tune on (a
grid calls svm-train thousands of times). The warm server has paid that once; it forks a worker
per command that runs the command exactly as this process would (same argv, working directory,
environment, umask, and this process's own stdin / stdout / stderr, passed as file descriptors),
and this process waits for the worker's exit status and exits with it, forwarding the signals
it receives to the worker (Ctrl-C, kill, Ctrl-Z and the continue that follows, window size).

This module runs before anything heavy is imported: standard library only, no numpy or numba.

A server serves one installation and configuration: its socket is named by a key over the
interpreter, the package's source files (path, size, mtime), numba's and numpy's installs and
the environment variables read when numba, numpy or OpenMP load. A change to any of them
names a new server; the old one exits when idle. ``LASVM_SERVER=0`` runs every command
in-process and starts no server; ``LASVM_SERVER=require`` fails (exit status 1) when no server
takes the command (tests use it to know which path ran); ``LASVM_SERVER_IDLE`` sets the idle time in seconds after
which a server exits (default 300).
"""

import hashlib
import marshal
import os
import signal
import socket
import struct
import sys

IDLE_SECONDS = 300
# environment read when the server's interpreter, numba, numpy's BLAS or OpenMP start up:
# a server started under other values would not behave as a fresh process does
_KEYED_PREFIXES = ("NUMBA_", "PYTHON", "OMP_", "GOMP_", "KMP_", "OPENBLAS_", "MKL_", "LC_")
_KEYED_NAMES = ("LANG", "LANGUAGE")
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_HEADER = struct.Struct("!I")


def enabled():
    return (os.environ.get("LASVM_SERVER", "1") != "0" and hasattr(socket, "send_fds")
            and sys.platform.startswith("linux"))


def required():
    return os.environ.get("LASVM_SERVER") == "require"


def idle_seconds():
    try:
        return max(float(os.environ.get("LASVM_SERVER_IDLE", IDLE_SECONDS)), 1.0)
    except ValueError:
        return float(IDLE_SECONDS)


def runtime_dir():
    """This user's private folder for server sockets (mode 0700), or None when it cannot be
    made private (then no server is used)."""
    base = (os.environ.get("LASVM_RUNTIME_DIR") or os.environ.get("XDG_RUNTIME_DIR")
            or "/tmp")
    path = os.path.join(base, f"lasvm-cli-{os.getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return None
    import stat

    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return path


def server_key():
    """A digest of what a server's behaviour depends on (module docstring)."""
    h = hashlib.sha256()
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h.update(repr((sys.executable, sys.version, package, sys.path)).encode())
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                _stamp(h, os.path.join(root, name))
    for entry in sys.path:  # numba's and numpy's installs, found without importing them
        for dependency in ("numba", "numpy", "llvmlite"):
            _stamp(h, os.path.join(entry or ".", dependency, "__init__.py"))
    for name in sorted(os.environ):
        if name.startswith(_KEYED_PREFIXES) or name in _KEYED_NAMES:
            h.update(f"{name}={os.environ[name]}\0".encode())
    return h.hexdigest()[:20]


def _stamp(h, path):
    try:
        st = os.stat(path)
    except OSError:
        return
    h.update(f"{path}:{st.st_size}:{st.st_mtime_ns}\0".encode())


def socket_path():
    folder = runtime_dir()
    return None if folder is None else os.path.join(folder, f"{server_key()}.sock")


def run_on_server(prog, args):
    """Run command ``prog`` with ``args`` on a warm server; returns its exit status, or None
    when no server took the command (none running, disabled, or it refused before starting
    the command), in which case the caller runs it in-process."""
    if not enabled():
        return None
    path = socket_path()
    if path is None:
        return None
    try:
        request = _request(prog, args)
    except OSError:  # no working directory, a closed standard stream...
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        payload = marshal.dumps(request)  # builtin: json would import re (~7 ms a command)
        socket.send_fds(sock, [_HEADER.pack(len(payload)) + payload], [0, 1, 2])
        reply = _read_line(sock)
    except OSError:
        sock.close()
        return None
    if not reply.startswith("pid "):  # refused (for example a stale server): in-process
        sock.close()
        return None
    return _wait_for_worker(sock, int(reply[4:]))


def _request(prog, args):
    for fd in (0, 1, 2):
        os.fstat(fd)
    umask = os.umask(0)
    os.umask(umask)
    return {"prog": prog, "argv": [sys.argv[0], *args], "cwd": os.getcwd(),
            "env": dict(os.environ), "umask": umask}


def _read_line(sock):
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(64)
        if not chunk:
            break
        data += chunk
    return data.decode("ascii", "replace").strip()


def _wait_for_worker(sock, pid):
    """Forward signals to the worker until the server reports how it ended; exit as it did."""

    def forward(signum, frame):
        try:
            os.kill(pid, signum)
        except OSError:
            pass

    def suspend(signum, frame):
        """Ctrl-Z: the worker is outside the terminal's process group, so stop it, then stop
        as the shell expects; on `fg`/`bg` (SIGCONT) continue it."""
        forward(signal.SIGSTOP, frame)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # returns once continued
        signal.signal(signum, suspend)
        forward(signal.SIGCONT, frame)

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    signal.signal(signal.SIGTSTP, suspend)
    for signum in (signal.SIGCONT, signal.SIGWINCH):  # a bar's width follows the terminal
        signal.signal(signum, forward)
    try:
        status = _read_line(sock)
    except OSError:
        status = ""
    sock.close()
    kind, _, value = status.partition(" ")
    if kind == "exit":
        return int(value)
    if kind == "signal":  # die of the same signal, so the caller sees what it would have
        signum = int(value)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return 128 + signum
    try:  # the server went away mid-command: do not leave the worker running alone
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    sys.stderr.write(f"{os.path.basename(sys.argv[0])}: the warm server stopped during "
                     "the command (set LASVM_SERVER=0 to run without it)\n")
    return 1


def start_server():
    """Start a warm server for this installation in the background, detached from this
    process (its own session, no terminal, standard streams on /dev/null). It exits at once
    when another is starting or running, and after ``idle_seconds`` without a command."""
    if not enabled():
        return
    path = socket_path()
    if path is None:
        return
    import subprocess

    # the server's sys.path is made this process's (the key covers it), so a worker imports
    # what this command would have imported
    import json

    code = "from lasvm_cli.cli.warm_server import main; main()"
    config = json.dumps({"path": path, "idle": idle_seconds(), "sys_path": sys.path})
    try:
        subprocess.Popen([sys.executable, "-c", code, config], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True, cwd="/")
    except OSError:
        pass
