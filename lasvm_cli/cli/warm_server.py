"""The warm server: one long-lived process per installation and process standing (the key,
cli/handoff.py) that has imported lasvm-cli, numpy and numba and loaded every compiled
function from numba's cache, and forks a worker for each command a client hands it.

A fork starts warm: the 1-2 s that a fresh process spends importing numba, loading its typing
registries and its cached machine code are paid once here. The worker becomes the command: it
takes the client's standard streams and working directory (descriptors passed over the
socket), environment, umask, soft limits, CPU affinity, I/O priority, signal mask and ignored
signals, rebuilds ``sys.stdin/stdout/stderr`` as a fresh interpreter would, and runs the command as
the console script does (cli/main.py's console_script); the server reports its exit status (or the signal that ended
it). A worker that cannot take on one of them refuses before the command starts, and the
client runs it in-process. The worker opens no path itself: the client opens what the
command touches, as the caller, over a socket pair of its own (cli/broker.py).

The conversation with a client: request (a frame of cli/broker.py's format) -> "ready" ->
"go" with the descriptors (standard streams, working directory, the worker's end of the open
broker) -> fork -> "started PID" (or "refused": stopping, stale, a failed fork or set-up) ->
"sig N" lines from the client, each sent to the worker through its pidfd -> "exit N" or
"signal N". A client that closes its end takes its worker with it; a worker dies with the
server (PR_SET_PDEATHSIG).

Threads do not survive fork: loading cached parallel code launches numba's threading layer
(GNU OpenMP refuses to fork after that), so here numba's launch only registers the layer's
symbols, and each worker launches its own threads on first use
(``numba_internals.defer_thread_launch``).

One loop, no threads, and nothing a client sends or does ends it: ``selectors`` over the
listening socket, each client's connection, each starting worker's status pipe and a pidfd per
worker. After a worker ends, functions it compiled and cached are loaded too, so the next fork
has them. The server exits after ``idle`` seconds without a command, when its socket is
replaced or removed, when a module it has loaded changes on disk, or on SIGTERM (``lasvm
server stop``), in each case after its running commands end; meanwhile ``KEY.PID.retiring``
describes it to ``lasvm server status``. A connection that has not sent its request and "go"
within 10 s is dropped, and when descriptors run out (EMFILE) the server stops accepting for
a moment instead of spinning. It logs to ``KEY.log`` in its folder (two files of at most
256 KiB).
"""

import errno
import io
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time

from . import broker, handoff

_HEADER = struct.Struct("!I")
_COMMANDS = {"svm-train": "svm_train", "svm-predict": "svm_predict",
             "svm-scale": "svm_scale", "lasvm": "lasvm"}
_SKIPPED_MODULES = ("lasvm_cli.sklearn",)  # optional extras a command never needs
_FORWARDABLE = frozenset(int(s) for s in (
    signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGSTOP,
    signal.SIGCONT, signal.SIGWINCH))
_MAX_REQUEST = 1 << 24
_HANDSHAKE_SECONDS = 10.0  # a client that has not sent its request and "go" by then is dropped
_ACCEPT_PAUSE = 0.5  # seconds without accepting after running out of descriptors
_GO_FDS = 5  # with "go": standard input, output, error, working directory, the broker's end
LOG_LIMIT = 256 * 1024


def main(config):
    """Serve with ``config`` (key, idle, sys_path), which the starting command sent through
    the standard input (handoff.start_server)."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    if not (hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal")
            and hasattr(socket, "recv_fds")):
        return  # Linux only (pidfds, descriptor passing): elsewhere commands run in-process
    folder = handoff.Folder.open()
    if folder is None:
        return
    key = config["key"]
    lock = _single_instance(folder, f"{key}.sock.lock")
    if lock is None:
        return
    log = Log(folder, f"{key}.log")
    try:
        _raise_soft_limits()
        # after sys.path is the client's (imports numba)
        from ..base.numba_internals import defer_thread_launch, threads_launched

        launch_threads = defer_thread_launch()
        if launch_threads is None:
            log.write("numba's threading internals are not the expected ones: not serving")
            return
        warm = CompiledCode()
        warm.load()
        _warm_first_calls()
        if threads_launched():  # something compiled parallel code here: forks would fail
            log.write("numba's threads were launched while loading: not serving")
            return
        Server(folder, key, lock, log, warm, launch_threads, config["idle"]).serve()
    except BaseException:
        log.exception("the server failed")


def _single_instance(folder, name):
    """An exclusive lock held while the server accepts commands (None when another server
    holds it); the file describes the server (``Server._publish``)."""
    import fcntl

    try:
        fd = folder.open_file(name, os.O_RDWR | os.O_CREAT)
    except OSError:  # a symbolic link or another user's file there: no server
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _raise_soft_limits():
    """The soft limits of the command that started the server are that command's: the server
    runs under its hard limits (the key's), and each worker takes its client's soft ones."""
    import resource

    for r in handoff._limits():
        soft, hard = resource.getrlimit(r)
        if soft != hard and r != resource.RLIMIT_CORE:
            try:
                resource.setrlimit(r, (hard, hard))
            except (OSError, ValueError):
                pass


class Log:
    """``KEY.log`` in the server's folder, also the server's stderr; renamed to ``KEY.log.1``
    when it passes LOG_LIMIT bytes."""

    def __init__(self, folder, name):
        self.folder, self.name = folder, name
        self.fd = self._open()

    def _open(self):
        try:
            fd = self.folder.open_file(self.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except OSError:
            return None
        os.dup2(fd, 2)
        return fd

    def write(self, message):
        if self.fd is None:
            return
        try:
            if os.fstat(self.fd).st_size > LOG_LIMIT:
                self.folder.replace(self.name, self.name + ".1")
                os.close(self.fd)
                self.fd = self._open()
                if self.fd is None:
                    return
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            os.write(self.fd, f"{stamp} [{os.getpid()}] {message}\n".encode(errors="replace"))
        except OSError:
            pass

    def exception(self, context):
        import traceback

        self.write(f"{context}:\n{traceback.format_exc().rstrip()}")


# --- numba: compiled code in, threads out ---------------------------------------------------
# (the numba internals each of these uses: base/numba_internals.py)

def _warm_first_calls():
    """What every command's first calls do once per process, done here so the forks inherit it
    instead of each worker doing it again (a heart_scale svm-train's worker: 83 ms -> 15 ms):

    * numba's typeof finds the type of each argument through functools.singledispatch on its
      class, and the first dispatch of a class walks the ABC registry (about 1,100 subclass
      checks, 67 ms): dispatched here for numpy's arrays and scalars, Python's scalars and
      the package's named tuples (the kernel data, parameters, cache and solver states);
    * modules imported on first use: numpy.ma (numpy imports it lazily, and typeof checks an
      ndarray against its MaskedArray) and difflib (an unknown long option's "did you mean",
      cli/argv.py)."""
    import difflib  # noqa: F401

    import numpy as np
    import numpy.ma  # noqa: F401

    classes = {int, float, bool, complex, tuple, str, type(None), np.ndarray}
    classes.update(np.dtype(code).type for code in "?bBhHiIlLqQefd")
    for name, module in list(sys.modules.items()):
        if name.startswith("lasvm_cli"):
            classes.update(value for value in vars(module).values()
                           if isinstance(value, type) and issubclass(value, tuple)
                           and hasattr(value, "_fields"))
    from ..base import numba_internals

    numba_internals.warm_typeof(classes)


class CompiledCode:
    """Every jitted function of the package, with each signature found in numba's cache
    loaded (``Dispatcher.compile`` of a cached signature loads it; nothing is compiled)."""

    def __init__(self):
        self.dispatchers = []
        self.loaded = set()
        self.stamp = None

    def load(self):
        self._import_package()
        self.refresh()

    def _import_package(self):
        import importlib

        from ..base import numba_internals

        seen = set()
        for name in _module_names():
            try:
                module = importlib.import_module(name)
            except Exception:  # an optional extra missing: its commands load it themselves
                continue
            for value in list(vars(module).values()):
                if numba_internals.cached(value) and id(value) not in seen:
                    seen.add(id(value))
                    self.dispatchers.append(value)

    def refresh(self):
        """Load the cached signatures not loaded yet, when the cache folders changed."""
        from ..base import numba_internals

        stamp = self._cache_stamp()
        if stamp == self.stamp:
            return
        self.stamp = stamp
        for dispatcher in self.dispatchers:
            for signature in numba_internals.cached_signatures(dispatcher):
                if (id(dispatcher), signature) in self.loaded:
                    continue
                self.loaded.add((id(dispatcher), signature))
                try:
                    dispatcher.compile(signature)
                except Exception:
                    continue

    def _cache_stamp(self):
        from ..base import numba_internals

        folders = {numba_internals.cache_folder(d) for d in self.dispatchers}
        stamp = []
        for folder in sorted(folders):
            try:
                stamp.append(os.stat(folder).st_mtime_ns)
            except OSError:
                stamp.append(None)
        return tuple(stamp)


def _module_names():
    """The package's modules, skipping _SKIPPED_MODULES without importing them."""
    import pkgutil

    import lasvm_cli

    pending = [(lasvm_cli.__path__, "lasvm_cli.")]
    while pending:
        path, prefix = pending.pop()
        for info in pkgutil.iter_modules(path, prefix):
            if info.name.startswith(_SKIPPED_MODULES):
                continue
            yield info.name
            if info.ispkg:
                folder = os.path.join(info.module_finder.path, info.name.rpartition(".")[2])
                pending.append(([folder], info.name + "."))


# --- the loop -------------------------------------------------------------------------------

class Client:
    """One connection and, once confirmed, its worker. States: "request" (reading the
    request), "confirm" (sent "ready", waiting for "go"), "starting" (forked, waiting for the
    worker's set-up), "running", "orphan" (the client left; the worker is being killed)."""

    def __init__(self, conn, peer_pid):
        self.conn, self.peer_pid = conn, peer_pid
        self.state = "request"
        self.deadline = time.monotonic() + _HANDSHAKE_SECONDS
        self.data, self.fds, self.request = b"", [], None
        self.pid = self.pidfd = self.status_fd = None
        self.pending = []  # signals that arrived while the worker was setting up


class Server:
    def __init__(self, folder, key, lock, log, compiled, launch_threads, idle):
        self.folder, self.key, self.lock, self.log = folder, key, lock, log
        self.name = handoff.socket_name(key)
        self.compiled, self.launch_threads = compiled, launch_threads
        self.idle = float("inf") if idle is None else float(idle)
        self.selector = selectors.DefaultSelector()
        self.clients = set()
        self.running = 0
        self.started = time.time()
        self.last_active = time.monotonic()
        self.stopping = False
        self.retiring = None  # KEY.PID.retiring, once the lock is given up with commands left
        self.accept_paused = None  # monotonic time until which nothing is accepted
        self.loaded = _loaded_files()
        self.listener = _listen(folder, self.name)
        self.inode = folder.stat(self.name).st_ino
        self.ioprio = _IOPriority()
        self.pid = os.getpid()
        _libc()

    def serve(self):
        signal.signal(signal.SIGTERM, self._stop_requested)
        for signum in (signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))
        self._publish()
        self.log.write(f"serving {self.name} for {sys.executable}")
        while self._still_wanted():
            self._resume_accepting()
            timeout = 1.0 if self.accept_paused is None else _ACCEPT_PAUSE
            for key, _ in self.selector.select(timeout=timeout):
                kind, client = key.data
                try:
                    if kind == "accept":
                        self._accept()
                    elif kind == "client":
                        self._from_client(client)
                    elif kind == "status":
                        self._worker_set_up(client)
                    else:
                        self._worker_ended(client)
                except Exception:
                    self.log.exception(f"while serving a client ({kind})")
                    if client is not None:
                        self._abandon(client)
            self._expire_handshakes()
            if self.stopping and self.listener is not None:
                self._retire("stopped (SIGTERM)")
        self._retire("idle" if not self.stopping else "stopped")
        if self.retiring is not None:
            self.folder.unlink(self.retiring[0])
            os.close(self.retiring[1])
        self.log.write("exiting")

    def _stop_requested(self, signum, frame):
        self.stopping = True

    def _still_wanted(self):
        if self.clients:
            return True
        if self.stopping or self.listener is None:
            return False
        try:  # replaced (another server for this key) or removed: stop
            if self.folder.stat(self.name).st_ino != self.inode:
                return False
        except OSError:
            return False
        return time.monotonic() - self.last_active < self.idle

    def _retire(self, why):
        """Accept no more commands: the socket (if still ours) and the lock go, so a new
        server can start at once; running commands finish."""
        if self.listener is None:
            return
        self.log.write(f"no longer accepting commands: {why}")
        if self.accept_paused is None:
            self.selector.unregister(self.listener)
        self.accept_paused = None
        self.listener.close()
        self.listener = None
        try:
            if self.folder.stat(self.name).st_ino == self.inode:
                self.folder.unlink(self.name)
        except OSError:
            pass
        if self.running:  # described to `lasvm server status|stop` until they end
            name = f"{self.key}.{self.pid}.retiring"
            try:
                self.retiring = (name, self.folder.open_file(name, os.O_RDWR | os.O_CREAT))
                import fcntl

                fcntl.flock(self.retiring[1], fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                self.retiring = None
        os.close(self.lock)
        self.lock = None
        for client in list(self.clients):
            if client.state in ("request", "confirm"):
                self._send(client, "refused stopping\n")
                self._close(client)
        self._publish()

    def _publish(self):
        """What ``lasvm server status`` shows, in the lock file (or, retiring, its own)."""
        fd = self.lock if self.lock is not None else self.retiring and self.retiring[1]
        if not fd:
            return
        workers = sorted(c.pid for c in self.clients if c.pid is not None and
                         c.pidfd is not None)
        state = json.dumps({
            "pid": os.getpid(), "python": sys.executable,
            "package": os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            "started": self.started, "running": self.running, "workers": workers,
            "accepting": self.lock is not None,
            "idle_since": time.time() - (time.monotonic() - self.last_active)}).encode()
        try:
            os.pwrite(fd, state, 0)
            os.ftruncate(fd, len(state))
        except OSError:
            pass

    # --- the conversation ---

    def _accept(self):
        try:
            conn, _ = self.listener.accept()
        except OSError as e:
            if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                self._pause_accepting(e)
            return
        pid, uid, _ = handoff._PEERCRED.unpack(
            conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, handoff._PEERCRED.size))
        if uid != os.geteuid():
            self.log.write(f"refused a connection of uid {uid}")
            conn.close()
            return
        conn.setblocking(False)
        client = Client(conn, pid)
        self.clients.add(client)
        self.selector.register(conn, selectors.EVENT_READ, ("client", client))
        self.last_active = time.monotonic()

    def _pause_accepting(self, e):
        """Out of descriptors: the listener stays readable, so stop selecting it for a moment
        (the waiting connections stay in its backlog) rather than spin."""
        if self.accept_paused is None:
            self.log.write(f"not accepting for {_ACCEPT_PAUSE:g} s: {e.strerror}")
            self.selector.unregister(self.listener)
        self.accept_paused = time.monotonic() + _ACCEPT_PAUSE

    def _resume_accepting(self):
        if self.accept_paused is not None and time.monotonic() >= self.accept_paused:
            self.accept_paused = None
            if self.listener is not None:
                self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))

    def _from_client(self, client):
        if client.state == "request":
            self._read_request(client)
            return
        fds = []
        try:
            if client.state == "confirm":  # "go" brings the descriptors
                data, fds, _, _ = socket.recv_fds(client.conn, 4096, _GO_FDS)
            else:  # plain recv: the kernel discards descriptors sent out of place
                data = client.conn.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if fds:
            if client.data or client.fds or len(fds) != _GO_FDS:
                client.fds.extend(fds)
                self._drop(client, "descriptors out of place")
                return
            client.fds = fds
        if not data:  # the client left
            self._abandon(client)
            return
        client.data += data
        if client.state == "confirm":
            if not client.data.startswith(b"go\n"):
                if len(client.data) >= 3 or not client.fds:
                    self._drop(client, "expected go with its descriptors")
                return
            client.data = client.data[3:]
            self._start(client)
            if client.state not in ("starting", "running"):
                return
        self._messages(client)

    def _messages(self, client):
        """The client's "sig N" lines: each signal goes to the worker once it runs."""
        *lines, client.data = client.data.split(b"\n")
        for line in lines:
            kind, _, value = line.partition(b" ")
            if kind != b"sig" or not value.isdigit() or int(value) not in _FORWARDABLE:
                self.log.write(f"dropped a client: unexpected message {line[:40]!r}")
                self._abandon(client)
                return
            if client.state == "starting":
                client.pending.append(int(value))
            elif client.state == "running":
                self._signal(client, int(value))

    def _read_request(self, client):
        try:
            data = client.conn.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop(client, None)
            return
        client.data += data
        if len(client.data) < _HEADER.size:
            return
        (length,) = _HEADER.unpack_from(client.data)
        if length > _MAX_REQUEST:
            self._drop(client, "request too long")
            return
        if len(client.data) < _HEADER.size + length:
            return
        payload, client.data = client.data[_HEADER.size:], b""
        try:  # allocates only what was received, however large the counts in it
            request = broker.unpack(payload)
        except (ValueError, UnicodeDecodeError):
            request = None
        if not _valid_request(request):
            self._drop(client, "malformed request")
            return
        client.request = request
        refusal = self._refusal()
        if refusal:
            self._send(client, f"refused {refusal}\n")
            self._close(client)
            return
        if self._send(client, "ready\n"):
            client.state = "confirm"
        else:
            self._close(client)

    def _refusal(self):
        from ..base.numba_internals import threads_launched

        if threads_launched():
            return "threads"
        changed = _changed(self.loaded)
        if changed:
            self._retire(f"{changed} changed on disk")
            return "stale"
        return None

    def _start(self, client):
        request = client.request
        ioprio = self.ioprio.get(client.peer_pid)
        status_read, status_write = os.pipe()
        try:
            pid = os.fork()
        except OSError as e:  # a process limit (cgroup pids.max): the client runs it itself
            os.close(status_read)
            os.close(status_write)
            self.log.write(f"cannot fork a worker: {e.strerror}")
            self._send(client, "refused fork\n")
            self._close(client)
            return
        if pid == 0:
            os.close(status_read)
            self._become_worker(client, ioprio, status_write)  # never returns
        os.close(status_write)
        for fd in client.fds:
            os.close(fd)
        client.fds = []
        client.pid, client.pidfd = pid, os.pidfd_open(pid)
        client.status_fd = status_read
        client.state = "starting"
        self.running += 1
        self.selector.register(client.pidfd, selectors.EVENT_READ, ("exited", client))
        self.selector.register(status_read, selectors.EVENT_READ, ("status", client))
        self._publish()
        self.log.write(f"{request['prog']} {len(request['argv']) - 1} arguments: worker {pid}")

    def _worker_set_up(self, client):
        """The worker's word on its set-up: "ok" (the command runs) or why it could not become
        the client's process (the client then runs the command itself)."""
        word = b""
        try:
            word = os.read(client.status_fd, 512)
        except BlockingIOError:
            return
        except OSError:
            pass
        self.selector.unregister(client.status_fd)
        os.close(client.status_fd)
        client.status_fd = None
        if client.state != "starting":
            return
        if word == b"ok":
            client.state = "running"
            if not self._send(client, f"started {client.pid}\n"):
                self._abandon(client)
                return
            for signum in client.pending:
                self._signal(client, signum)
        else:
            self.log.write(f"worker {client.pid} refused: {word.decode(errors='replace')}")
            self._send(client, "refused set-up\n")
            client.state = "orphan"  # the worker exits by itself; nothing more is sent

    def _worker_ended(self, client):
        if client.status_fd is not None:
            os.set_blocking(client.status_fd, False)
            self._worker_set_up(client)
        self.selector.unregister(client.pidfd)
        os.close(client.pidfd)
        client.pidfd = None
        _, status = os.waitpid(client.pid, 0)
        if client.state == "running":
            if os.WIFSIGNALED(status):
                self._send(client, f"signal {os.WTERMSIG(status)}\n")
            else:
                self._send(client, f"exit {os.WEXITSTATUS(status)}\n")
        self.running -= 1
        self._close(client)
        self.last_active = time.monotonic()
        self._publish()
        self.compiled.refresh()  # what the worker compiled, for the next one

    def _signal(self, client, signum):
        try:
            signal.pidfd_send_signal(client.pidfd, signum)
        except OSError:
            pass

    def _abandon(self, client):
        """The client left (killed, or gone before the command started): end its command, as
        the command would have ended with the client's process."""
        if client.pidfd is not None:
            self._signal(client, signal.SIGKILL)
            client.state = "orphan"
            self._close_connection(client)
        else:
            self._close(client)

    def _drop(self, client, why):
        if why:
            self.log.write(f"dropped a client: {why}")
        self._close(client)

    def _expire_handshakes(self):
        now = time.monotonic()
        for client in list(self.clients):
            if client.state in ("request", "confirm") and now > client.deadline:
                self._drop(client, f"no {'request' if client.state == 'request' else 'go'}"
                                   f" in {_HANDSHAKE_SECONDS:g} s")

    def _send(self, client, text):
        if client.conn is None:
            return False
        try:
            client.conn.send(text.encode("ascii"))
            return True
        except OSError:
            return False

    def _close_connection(self, client):
        if client.conn is not None:
            self.selector.unregister(client.conn)
            client.conn.close()
            client.conn = None
        for fd in client.fds:
            _close(fd)
        client.fds = []

    def _close(self, client):
        """Forget a client whose worker (if any) has been reaped."""
        self._close_connection(client)
        if client.pidfd is None and client.status_fd is None:
            self.clients.discard(client)

    # --- the worker ---

    def _become_worker(self, client, ioprio, status):
        code = 1
        try:
            for key in list(self.selector.get_map().values()):
                _close(key.fileobj)
            self.selector.close()
            for fd in (self.lock, self.log.fd, self.folder.fd):
                if fd is not None:
                    _close(fd)
            for other in self.clients:
                if other is not client:
                    for fd in other.fds:
                        _close(fd)
            _die_with(self.pid)
            opens = _take_over_process(client.request, client.fds, ioprio)
            broker.Broker(opens).install()  # from here every path is opened by the client
        except BaseException as e:  # could not become the client's process: it runs it
            try:
                os.write(status, f"{type(e).__name__}: {e}".encode(errors="replace")[:500])
            finally:
                os._exit(1)
        try:
            os.write(status, b"ok")
            os.close(status)
            from ..base import numba_internals

            # this process's own threads, before any loaded code reaches a parallel region
            numba_internals.restore_thread_launch(self.launch_threads)
            code = _run_command(client.request)
        except KeyboardInterrupt:  # the client's Ctrl-C, forwarded once "ok" was written
            code = _interrupted()
        except BaseException as e:
            try:
                os.write(2, f"{client.request['prog']}: {e}\n".encode(errors="replace"))
            except OSError:
                pass
            code = 1
        finally:
            os._exit(code)


def _listen(folder, name):
    """Listen on ``name`` in the folder: bound under a temporary name and renamed into place,
    so a client never finds a socket that does not accept yet; a stale socket left by a dead
    server is replaced."""
    tmp = f"{name}.{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    folder.unlink(tmp)
    listener.bind(folder.address(tmp))
    listener.listen(128)
    folder.replace(tmp, name)
    return listener


_MAX_ITEMS = 1 << 16  # arguments, environment variables, CPUs, limits, signals


def _valid_request(request):
    """The request's shape, as handoff._request makes it, within per-field caps."""
    def ints(value):
        return (isinstance(value, list) and len(value) <= _MAX_ITEMS
                and all(type(v) is int for v in value))

    def strs(value):
        return (isinstance(value, list) and len(value) <= _MAX_ITEMS
                and all(type(v) is str for v in value))

    return (isinstance(request, dict)
            and type(request.get("prog")) is str and request["prog"] in _COMMANDS
            and strs(request.get("argv")) and len(request["argv"]) >= 1
            and isinstance(request.get("env"), dict) and len(request["env"]) <= _MAX_ITEMS
            and all(type(v) is str for v in request["env"].values())
            and type(request.get("umask")) is int and 0 <= request["umask"] <= 0o777
            and isinstance(request.get("limits"), list) and len(request["limits"]) <= 64
            and all(ints(limit) and len(limit) == 3 for limit in request["limits"])
            and ints(request.get("affinity")) and request["affinity"] != []
            and type(request.get("nice")) is int
            and ints(request.get("ignored")) and ints(request.get("blocked"))
            and type(request.get("unbuffered")) is bool)


def _loaded_files():
    """The file of each top-level module loaded here, with its size and time: a change means
    an upgrade the key may not cover (a dependency of a dependency)."""
    stamps = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if "." in name or not path:
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        stamps[path] = (st.st_size, st.st_mtime_ns)
    return stamps


def _changed(stamps):
    for path, stamp in stamps.items():
        try:
            st = os.stat(path)
        except OSError:
            return path
        if (st.st_size, st.st_mtime_ns) != stamp:
            return path
    return None


def _close(fileobj):
    try:
        if isinstance(fileobj, int):
            os.close(fileobj)
        else:
            fileobj.close()
    except OSError:
        pass


# --- process attributes that need libc --------------------------------------------------------

_IOPRIO_CALLS = {"x86_64": (251, 252), "aarch64": (30, 31)}  # ioprio_set, ioprio_get
_IOPRIO_WHO_PROCESS = 1
_PR_SET_PDEATHSIG = 1


_LIBC = []


def _libc():
    """The C library, loaded once in the server (ctypes is already imported by numba's)."""
    if not _LIBC:
        import ctypes

        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


class _IOPriority:
    """A process's I/O priority (ionice), read and set with the raw system calls (no Python
    API); None where the machine's call numbers are not known here."""

    def __init__(self):
        import platform

        self.calls = _IOPRIO_CALLS.get(platform.machine())
        self.libc = _libc() if self.calls else None

    def get(self, pid):
        if self.libc is None:
            return None
        value = self.libc.syscall(self.calls[1], _IOPRIO_WHO_PROCESS, pid)
        return None if value < 0 else value


def _set_ioprio(value):
    import platform

    calls = _IOPRIO_CALLS.get(platform.machine())
    if value is None or calls is None:
        return
    if _libc().syscall(calls[0], _IOPRIO_WHO_PROCESS, 0, value) != 0:
        import ctypes

        raise OSError(ctypes.get_errno(), "cannot set the I/O priority")


def _die_with(server_pid):
    """A worker is killed when the server dies, so no command runs on without its client
    being told."""
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != server_pid:  # the server died before the call
        os._exit(1)


# --- the worker -----------------------------------------------------------------------------

def _take_over_process(request, fds, ioprio):
    """Become the client's process: its standard streams, signal dispositions and mask,
    directory, environment, umask, nice value, CPU affinity, I/O priority and limits. Returns
    the worker's end of the open broker (a socket)."""
    import resource

    stdin, stdout, stderr, directory, opens = fds

    os.setsid()  # out of the server's session; the client forwards its signals
    ignored = set(request["ignored"])
    for signum in signal.valid_signals():
        if signum in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(signum, signal.SIG_IGN if signum in ignored else signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    for signum in (signal.SIGPIPE, signal.SIGXFSZ):  # as Python sets them at start-up
        signal.signal(signum, signal.SIG_IGN)
    if signal.SIGINT not in ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, request["blocked"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    os.fchdir(directory)  # the caller's folder itself, not a path to it
    if os.getpriority(os.PRIO_PROCESS, 0) != request["nice"]:
        os.setpriority(os.PRIO_PROCESS, 0, request["nice"])
    os.sched_setaffinity(0, request["affinity"])
    _set_ioprio(ioprio)
    for r, soft, hard in request["limits"]:
        if resource.getrlimit(r) != (soft, hard):
            resource.setrlimit(r, (soft, hard))
    # The streams last: whoever finds the process by its standard input (ps, /proc, a
    # supervisor) sees it already under all of the caller's settings.
    for target, fd in enumerate((stdin, stdout, stderr)):
        os.dup2(fd, target)
        os.close(fd)
    os.close(directory)
    _fresh_stdio(request["unbuffered"])
    sys.argv = list(request["argv"])
    return socket.socket(fileno=opens)


def _fresh_stdio(unbuffered):
    """sys.stdin/stdout/stderr over descriptors 0-2 as a fresh interpreter makes them: stdout
    line-buffered on a terminal only, stderr always line-buffered; with ``unbuffered``
    (PYTHONUNBUFFERED, python -u) both written straight through, unbuffered."""
    def stream(fd, mode, old, line_buffering):
        raw = io.FileIO(fd, mode, closefd=False)
        if mode == "rb":
            buffered = io.BufferedReader(raw)
        elif unbuffered:
            buffered = raw
        else:
            buffered = io.BufferedWriter(raw)
        return io.TextIOWrapper(buffered, encoding=old.encoding, errors=old.errors,
                                newline="\n", line_buffering=line_buffering and not unbuffered,
                                write_through=unbuffered and mode == "wb")

    sys.stdin = sys.__stdin__ = stream(0, "rb", sys.__stdin__, False)
    sys.stdout = sys.__stdout__ = stream(1, "wb", sys.__stdout__, os.isatty(1))
    sys.stderr = sys.__stderr__ = stream(2, "wb", sys.__stderr__, True)


def _run_command(request):
    """Run the console script's command; its exit status as the interpreter would give it."""
    import atexit

    from . import main as commands

    try:
        commands.console_script(_COMMANDS[request["prog"]], sys.argv[1:])
        code = 0
    except SystemExit as e:
        code = _exit_status(e.code)
    except KeyboardInterrupt:
        code = _interrupted()
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()  # what interpreter shutdown would run (os._exit skips it)
    if not _flush_all() and code == 0:
        code = 120  # the interpreter's status when flushing stdout fails at exit
    return code


def _interrupted():
    """A Ctrl-C that came before the command's own guard (cli/report.py) took it: the end
    the console script gives it in-process (cli/entry.py)."""
    _flush_all()
    try:
        os.write(2, b"interrupted\n")
    except OSError:
        pass
    return 130


def _exit_status(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(f"{code}\n")
    except OSError:
        pass
    return 1


def _flush_all():
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            ok = False
    return ok
