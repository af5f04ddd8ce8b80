"""The commands' side of the warm server (cli/warm_server.py): hand a command to it, or run
in-process and start one for the next command.

Why: a fresh process spends 1-2 s importing numba and loading its typing registries before the
first compiled function runs, which is the whole run on the small data people tune on. The
server has paid that once and forks a worker per command. A served command must be the
command the user ran, so everything a worker cannot take on from this process decides which
server serves it: the key (``server_key``) covers the installation, the start-up environment
and the process's standing (credentials, groups, capabilities, cgroup, namespaces, hard limits,
nice value, scheduling policy). What a worker can take on, it does before running the command:
the standard streams (passed as descriptors), directory, environment, umask, soft limits, CPU
affinity, I/O priority, signal mask and ignored signals (``_request``). Every path the command
touches is opened by this process, as the caller, and passed to the worker (the open broker,
cli/broker.py): a sandbox that no one can see from outside confines the command as it would
in-process.

A command whose standard streams include a terminal, or lack one (a closed descriptor), runs
in-process: a worker outside the caller's session cannot be the terminal's background job
(SIGTTIN, ``stty tostop``), and a person at a terminal does not notice the start-up.

The runtime folder is this user's alone and is used only through a descriptor (``Folder``):
nothing another user controls is followed or written. The client talks only to a server of its
own user (checked on the socket before anything is sent), and never runs a command twice: a
server that does not answer in time is left before the command is confirmed ("go"), and the
command then runs in-process. The caller's descriptors go with "go" only, so a stopped server
holds none of them.

This module runs before anything heavy is imported: standard library only.
"""

import hashlib
import os
import signal
import socket
import struct
import sys

from . import broker

IDLE_SECONDS = 300
ANSWER_SECONDS = 10.0  # a server that has not answered by then is taken as stuck
# environment read when the server's interpreter, numba, numpy's BLAS or OpenMP start up:
# a server started under other values would not behave as a fresh process does
_KEYED_PREFIXES = ("NUMBA_", "PYTHON", "OMP_", "GOMP_", "KMP_", "OPENBLAS_", "MKL_", "LC_")
_KEYED_NAMES = ("LANG", "LANGUAGE")
# what a worker imports from outside the package: an upgrade of any of them names a new server
_DEPENDENCIES = ("numba", "numpy", "llvmlite", "click", "tqdm")
# /proc/self/status lines a worker cannot change for itself
_STANDING = ("Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:",
             "NoNewPrivs:", "Seccomp:")
_NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts")
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_HEADER = struct.Struct("!I")
_FOREVER = 1e9  # seconds: a LASVM_SERVER_TIMEOUT or LASVM_SERVER_IDLE beyond it has no limit
_PEERCRED = struct.Struct("3i")  # pid, uid, gid


def enabled():
    return (os.environ.get("LASVM_SERVER", "1") != "0" and hasattr(socket, "send_fds")
            and sys.platform.startswith("linux") and os.path.isdir("/proc/self/fd"))


def required():
    return os.environ.get("LASVM_SERVER") == "require"


def idle_seconds():
    """LASVM_SERVER_IDLE; None: no limit."""
    return _seconds("LASVM_SERVER_IDLE", IDLE_SECONDS)


def answer_seconds():
    """LASVM_SERVER_TIMEOUT; None: no limit."""
    return _seconds("LASVM_SERVER_TIMEOUT", ANSWER_SECONDS)


def _seconds(name, default):
    """A positive number of seconds from the environment; ``inf`` (or anything beyond
    _FOREVER) means no limit; anything else is said once on stderr and the default used."""
    text = os.environ.get(name)
    if text is None:
        return float(default)
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:  # nan, zero, negative, not a number
        _notice(f"{name}={text!r} is not a positive number of seconds: using {default:g}")
        return float(default)
    return None if value > _FOREVER else value


_said = set()
_quiet = [False]


def _notice(text):
    """One line on stderr about the warm server, once per process and not with -q."""
    if text not in _said and not _quiet[0]:
        _said.add(text)
        try:
            sys.stderr.write(f"{_name()}: {text}\n")
        except (OSError, ValueError, AttributeError):
            pass


# --- the runtime folder ---------------------------------------------------------------------

class Folder:
    """This user's private folder for server sockets, locks and logs, held open: every name in
    it is reached through the descriptor (``*at`` calls, no symbolic link followed), so a
    folder swapped after the check is never used. ``address(name)`` is a socket address that
    resolves through the descriptor too (``/proc/self/fd/N/name``)."""

    def __init__(self, fd):
        self.fd = fd

    problem = None  # why the last ``open`` found no folder

    @classmethod
    def open(cls):
        """``$LASVM_RUNTIME_DIR`` or ``$XDG_RUNTIME_DIR`` when it is a folder of this user's
        with mode 0700, else ``/tmp``; inside it ``lasvm-cli-UID``, made or accepted only as a
        real folder of this user's with mode 0700. None when no such folder can be had
        (``Folder.problem`` says why). A runtime dir named in the environment but not
        usable is said once on stderr."""
        variable = next((name for name in ("LASVM_RUNTIME_DIR", "XDG_RUNTIME_DIR")
                         if os.environ.get(name)), None)
        for parent, private in ((variable and os.environ[variable], True), (SHARED, False)):
            if not parent:
                continue
            fd, problem = _open_folder(parent, private)
            if fd is not None:
                return cls(fd)
            Folder.problem = problem
            if private:
                _notice(f"{variable}={parent}: {problem}: the warm server's folder is in "
                        f"{SHARED} instead")
        return None

    def path(self):
        try:
            return os.readlink(f"/proc/self/fd/{self.fd}")
        except OSError:
            return "?"

    def address(self, name):
        return f"/proc/self/fd/{self.fd}/{name}"

    def open_file(self, name, flags, mode=0o600):
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=self.fd)

    def stat(self, name):
        return os.stat(name, dir_fd=self.fd, follow_symlinks=False)

    def names(self):
        return os.listdir(self.fd)

    def unlink(self, name):
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            pass

    def replace(self, old, new):
        os.replace(old, new, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def close(self):
        os.close(self.fd)


SHARED = "/tmp"  # the folder's parent where the environment names no private one


def _open_folder(parent, private):
    """(the descriptor of ``parent/lasvm-cli-UID`` after the checks of ``Folder.open``, None)
    or (None, why not). ``private``: the parent itself must be this user's with mode 0700 (a
    runtime dir named by the environment, which anyone may have set); /tmp is shared and
    sticky."""
    uid = os.geteuid()
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        top = os.open(parent, flags)
    except OSError as e:
        return None, f"cannot open it ({e.strerror})"
    name = f"lasvm-cli-{uid}"
    try:
        if private:
            problem = _not_private(os.fstat(top), uid)
            if problem:
                return None, problem
        try:
            os.mkdir(name, 0o700, dir_fd=top)
        except FileExistsError:
            pass
        fd = os.open(name, flags | os.O_NOFOLLOW, dir_fd=top)
    except OSError as e:
        where = os.path.join(parent, name)
        try:  # whose it is says more than EACCES (another user's folder of mode 0700)
            st = os.stat(name, dir_fd=top, follow_symlinks=False)
        except OSError:
            return None, f"{where}: {e.strerror}"
        import stat

        if stat.S_ISLNK(st.st_mode):
            return None, f"{where} is a symbolic link"
        return None, f"{where} {_not_private(st, uid) or e.strerror}"
    finally:
        os.close(top)
    problem = _not_private(os.fstat(fd), uid)
    if not problem:
        return fd, None
    os.close(fd)
    return None, f"{os.path.join(parent, name)} {problem}"


def _not_private(st, uid):
    """Why a folder is not this user's private one, or None."""
    import stat

    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if st.st_uid != uid:
        return f"belongs to uid {st.st_uid}, not to this user (uid {uid})"
    if st.st_mode & 0o077:
        return f"has mode {stat.S_IMODE(st.st_mode):04o}, not 0700"
    return None


# --- which server ---------------------------------------------------------------------------

def server_key():
    """A digest of what a server's behaviour depends on and a worker cannot change for itself
    (module docstring)."""
    h = hashlib.sha256()
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h.update(repr((sys.executable, sys.version, package, sys.path)).encode())
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                _stamp(h, os.path.join(root, name))
    for entry in sys.path:  # the dependencies' installs, found without importing them
        for dependency in _DEPENDENCIES:
            _stamp(h, os.path.join(entry or ".", dependency, "__init__.py"))
    for name in sorted(os.environ):
        if name.startswith(_KEYED_PREFIXES) or name in _KEYED_NAMES:
            h.update(f"{name}={os.environ[name]}\0".encode())
    h.update(repr(process_standing()).encode())
    return h.hexdigest()[:20]


def process_standing():
    """What this process may do and how it is scheduled, where a forked worker could not take
    it on: credentials, groups, capabilities, no-new-privileges and seccomp, cgroup,
    namespaces, OOM score adjustment, hard limits, nice value, scheduling policy, and the
    number of CPUs it may run on (numba sizes its thread pool by it when it loads)."""
    import resource

    with open("/proc/self/status") as f:
        status = [line for line in f if line.startswith(_STANDING)]
    standing = [status, _read("/proc/self/cgroup"), _read("/proc/self/oom_score_adj")]
    for name in _NAMESPACES:
        try:
            standing.append(os.readlink(f"/proc/self/ns/{name}"))
        except OSError:
            standing.append(None)
    standing.append([resource.getrlimit(r)[1] for r in _limits()])
    standing.append(os.getpriority(os.PRIO_PROCESS, 0))
    standing.append(os.sched_getscheduler(0))
    standing.append(len(os.sched_getaffinity(0)))  # numba's default thread count
    return standing


def _limits():
    import resource

    return sorted(getattr(resource, name) for name in dir(resource)
                  if name.startswith("RLIMIT_"))


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _stamp(h, path):
    try:
        st = os.stat(path)
    except OSError:
        return
    h.update(f"{path}:{st.st_size}:{st.st_mtime_ns}\0".encode())


def socket_name(key):
    return f"{key}.sock"


# --- handing a command over -----------------------------------------------------------------

class _Lines:
    """Lines from the server: one read can hold several (a quick command's start and end)."""

    def __init__(self, sock):
        self.sock, self.buffer, self.ended = sock, b"", False

    def complete(self):
        return b"\n" in self.buffer or self.ended

    def fill(self):
        """Read what the server has sent (blocking); at its end, ``ended``."""
        chunk = self.sock.recv(256)
        self.buffer += chunk
        self.ended = not chunk

    def next(self):
        while not self.complete():
            self.fill()
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("ascii", "replace").strip()


def run_on_server(prog, args):
    """Run command ``prog`` with ``args`` on a warm server; returns its exit status, or None
    when no server ran it (none running, disabled, stuck, or it refused before starting the
    command; a terminal or a closed descriptor among the standard streams), in which case the
    caller runs it in-process."""
    if not enabled() or not _streams_servable():  # first: nothing opened yet
        return None
    _quiet[0] = "-q" in args
    folder = Folder.open()
    if folder is None:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    saved = {}
    ours = theirs = None
    try:
        try:
            request = _request(prog, args)
            sock.settimeout(answer_seconds())
            sock.connect(folder.address(socket_name(server_key())))
        finally:
            folder.close()
        if _peer_uid(sock) != os.geteuid():  # not our server: send it nothing
            raise ConnectionRefusedError
        payload = broker.pack(request)
        sock.sendall(_HEADER.pack(len(payload)) + payload)
        lines = _Lines(sock)
        if lines.next() != "ready":
            raise ConnectionRefusedError
        sock.settimeout(None)  # from here the server has the command: no second run
        # the caller's streams and folder, and the worker's end of the open broker: only now,
        # so a server that stops before this holds nothing of the caller's
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        here = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            saved = _forward_signals(sock)  # from "go" on, a signal is the worker's
            sent = socket.send_fds(sock, [b"go\n"], [0, 1, 2, here, theirs.fileno()])
            sock.sendall(b"go\n"[sent:])
        finally:
            os.close(here)
            theirs.close()
        started = lines.next()
    except socket.timeout:
        sock.close()
        if ours is not None:
            ours.close()
        seconds = answer_seconds()
        if "-q" not in args:
            sys.stderr.write(f"{_name()}: the warm server did not answer in "
                             f"{seconds:g} s: running in this process\n")
        return None
    except OSError:
        sock.close()
        if ours is not None:
            ours.close()
        _restore(saved)
        return None
    if started.startswith("refused"):  # refused before the command ran: in-process
        sock.close()
        ours.close()
        _restore(saved)
        return None
    if not started.startswith("started"):  # gone after "go": the command may have begun
        sock.close()
        ours.close()
        return _server_gone()
    return _wait_for_worker(sock, lines, ours)


def _streams_servable():
    """Whether descriptors 0-2 are all open and none is a terminal (module docstring)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            return False
        if os.isatty(fd):
            return False
    return True


def _peer_uid(sock):
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    return _PEERCRED.unpack(creds)[1]


def _name():
    return os.path.basename(sys.argv[0])


def _request(prog, args):
    """The command and what the worker takes on from this process (module docstring). Signals
    this process ignores were ignored when it started (nohup, a script's background job), but
    SIGPIPE and SIGXFSZ, which Python ignores itself."""
    import resource

    umask = os.umask(0)
    os.umask(umask)
    ignored = [int(s) for s in signal.valid_signals()
               if s not in (signal.SIGKILL, signal.SIGSTOP)
               and signal.getsignal(s) is signal.SIG_IGN]
    return {"prog": prog, "argv": [sys.argv[0], *args],
            "env": dict(os.environ), "umask": umask,
            "limits": [[r, *resource.getrlimit(r)] for r in _limits()],
            "affinity": sorted(os.sched_getaffinity(0)),
            "nice": os.getpriority(os.PRIO_PROCESS, 0),
            "ignored": ignored,
            "blocked": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
            # PYTHONUNBUFFERED or -u (sys.flags does not show it; the stream made by it does)
            "unbuffered": bool(getattr(sys.__stdout__, "write_through", False))}


def _forward_signals(sock):
    """Send the signals this process gets to the worker (through the server, which holds it by
    a pidfd). A signal this process ignores is not forwarded: the worker ignores it too.
    Returns the handlers replaced, for ``_restore``."""

    def forward(signum, frame=None):
        try:
            sock.sendall(f"sig {signum}\n".encode())
        except OSError:
            pass
        if signum in _FORWARDED and broker.calling[0]:
            # the worker is ending (or handling it): a blocked open for it must not keep
            # this process waiting for ever
            raise InterruptedError(4, "Interrupted system call")  # EINTR

    def suspend(signum, frame):
        """Ctrl-Z: the worker is outside the terminal's process group, so stop it, then stop
        as the shell expects; on `fg`/`bg` (SIGCONT) continue it."""
        forward(signal.SIGSTOP)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # returns once continued
        signal.signal(signum, suspend)
        forward(signal.SIGCONT)

    handlers = {signum: forward for signum in _FORWARDED}
    handlers[signal.SIGTSTP] = suspend
    saved = {}
    for signum, handler in handlers.items():
        if signal.getsignal(signum) is not signal.SIG_IGN:
            saved[signum] = signal.signal(signum, handler)
    for signum in (signal.SIGCONT, signal.SIGWINCH):  # a bar's width follows the terminal
        saved[signum] = signal.signal(signum, forward)
    return saved


def _restore(saved):
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def _wait_for_worker(sock, lines, opens):
    """Open what the worker asks for (``opens``: the open broker) until the server reports how
    the worker ended; exit as it did. A call interrupted by a signal that ends the command is
    retried after a moment in which the worker neither ended nor asked anything else (it
    survived the signal and still waits), as PEP 475 retries it in-process."""
    import select

    waiting, pending = [sock, opens], None
    try:
        while not lines.complete():
            readable = select.select(waiting, [], [], None if pending is None else 0.5)[0]
            if opens in readable:
                if pending is not None:  # the worker has moved on
                    pending.close()
                pending = broker.receive(opens)
                if pending is None:  # the worker has ended (or closed its end)
                    waiting.remove(opens)
            if sock in readable:
                lines.fill()
            elif pending is not None and pending.answer(opens):
                pending = None
        status = lines.next()
    except OSError:
        status = ""
    if pending is not None:
        pending.close()
    sock.close()
    opens.close()
    kind, _, value = status.partition(" ")
    if kind == "exit":
        return int(value)
    if kind == "signal":  # die of the same signal, so the caller sees what it would have
        signum = int(value)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return 128 + signum
    return _server_gone()


def _server_gone():
    """The server went away mid-command; its worker dies with it (PR_SET_PDEATHSIG)."""
    sys.stderr.write(f"{_name()}: the warm server stopped during the command (set "
                     "LASVM_SERVER=0 to run without it)\n")
    return 1


def start_server():
    """Start a warm server for this installation and process standing in the background,
    detached from this process (its own session, no terminal, standard streams on
    /dev/null; it logs to its folder). It exits at once when another is starting or running,
    and after ``idle_seconds`` without a command. Not from a command at a terminal (it would
    not use one)."""
    if not enabled() or not _streams_servable():
        return
    folder = Folder.open()
    if folder is None:
        return
    folder.close()
    import json
    import subprocess

    # the server's sys.path is made this process's (the key covers it), so a worker imports
    # what this command would have imported; it goes through a pipe, not the command line,
    # which every user sees
    code = ("import json, sys; config = json.load(sys.stdin); sys.path[:] = config['sys_path']"
            "; from lasvm_cli.cli.warm_server import main; main(config)")
    config = json.dumps({"key": server_key(), "idle": idle_seconds(), "sys_path": sys.path})
    try:
        server = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True, close_fds=True, cwd="/")
    except OSError:
        return
    try:
        server.stdin.write(config.encode())
        server.stdin.close()
    except OSError:
        pass
