"""The warm server: one long-lived process per installation that has imported lasvm-cli, numpy
and numba and loaded every compiled function from numba's cache, and forks a worker for each
command that cli/handoff.py hands it.

A fork starts warm: the ~1-2 s that a fresh process spends importing numba, loading its typing
registries and its cached machine code are paid once here. The worker becomes the command:
it takes the client's standard streams (file descriptors passed over the socket), working
directory, environment, umask and argv, rebuilds ``sys.stdin/stdout/stderr`` as a fresh
interpreter would for those descriptors, and runs the same click command as the console
script; the server reports its exit status (or the signal that ended it) to the client.

Threads do not survive fork: loading cached parallel code launches numba's threading layer
(GNU OpenMP refuses to fork after that), so here numba's launch only registers the layer's
symbols, and each worker launches its own threads on first use (``_defer_thread_launch``).

One loop, no threads: ``selectors`` over the listening socket, each client's connection (a
client that disappears takes its worker with it) and a pidfd per worker (its exit). After a
worker ends, functions it compiled and cached are loaded too, so the next fork has them.
The server exits after ``idle`` seconds without a running command.
"""

import io
import json
import marshal
import os
import selectors
import signal
import socket
import struct
import sys
import time

_HEADER = struct.Struct("!I")
_COMMANDS = {"svm-train": "svm_train", "svm-predict": "svm_predict",
             "svm-scale": "svm_scale", "lasvm": "lasvm"}
_SKIPPED_MODULES = ("lasvm_cli.sklearn",)  # optional extras a command never needs


def main():
    if not (hasattr(os, "pidfd_open") and hasattr(socket, "recv_fds")):
        return  # Linux only (pidfds, descriptor passing): elsewhere commands run in-process
    config = json.loads(sys.argv[1])
    sys.path[:] = config["sys_path"]
    path = config["path"]
    lock = _single_instance(path + ".lock")
    if lock is None:
        return
    launch_threads = _defer_thread_launch()
    if launch_threads is None:
        return
    warm = CompiledCode()
    warm.load()
    _warm_first_calls()
    if _threads_launched():  # something compiled parallel code here: forks would fail
        return
    Server(_listen(path), path, warm, launch_threads, config["idle"]).serve()


def _single_instance(lock_path):
    """An exclusive lock held for the server's life (None when another server holds it);
    the file holds the server's process id (to stop it: kill that pid)."""
    import fcntl

    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _listen(path):
    """Listen on ``path``: bound under a temporary name and renamed into place, so a client
    never finds a socket that does not accept yet; a stale socket left by a dead server is
    replaced."""
    tmp = f"{path}.{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    listener.bind(tmp)
    listener.listen(64)
    os.replace(tmp, path)
    return listener


# --- numba: compiled code in, threads out ---------------------------------------------------

def _threading_library():
    """The threading-layer library numba's ``_launch_threads`` would choose (its rules:
    NUMBA_THREADING_LAYER by name, else the priority list), or None when the choice is not
    one of the named layers."""
    from numba.core import config

    chosen = str(config.THREADING_LAYER).lower()
    if chosen in ("tbb", "omp", "workqueue"):
        candidates = [chosen]
    elif chosen == "default":
        candidates = list(config.THREADING_LAYER_PRIORITY)
    else:
        return None
    for name in candidates:
        try:
            if name == "tbb":
                from numba.np.ufunc.parallel import _check_tbb_version_compatible

                _check_tbb_version_compatible()
                from numba.np.ufunc import tbbpool as library
            elif name == "omp":
                from numba.np.ufunc import omppool as library
            else:
                from numba.np.ufunc import workqueue as library
            return library
        except ImportError:
            continue
    return None


# the symbols numba's _launch_threads and _load_threading_functions give compiled code
_LAYER_SYMBOLS = {"numba_parallel_for": "parallel_for"}
_LAYER_SYMBOLS.update((name, name) for name in (
    "do_scheduling_signed", "do_scheduling_unsigned", "allocate_sched", "deallocate_sched",
    "get_num_threads", "set_num_threads", "get_thread_id", "set_parallel_chunksize",
    "get_parallel_chunksize", "get_sched_size"))


def _defer_thread_launch():
    """Make numba's thread launch register the layer's symbols only (what cached parallel
    code needs to link); returns numba's own launch, which a worker restores and calls.
    None when numba's internals are not the ones this was written against."""
    try:
        from llvmlite import binding as ll
        from numba.np.ufunc import parallel

        launch = parallel._launch_threads
        library = _threading_library()
    except (ImportError, AttributeError):
        return None
    if library is None or parallel._is_initialized:
        return None

    def register_symbols():
        for symbol, attribute in _LAYER_SYMBOLS.items():
            ll.add_symbol(symbol, getattr(library, attribute))
        # numba.get_num_threads() (kernels.py calls it at import) reads the launched layer
        parallel._get_num_threads = lambda: parallel.NUM_THREADS

    parallel._launch_threads = register_symbols
    return launch


def _threads_launched():
    from numba.np.ufunc import parallel

    return bool(parallel._is_initialized)


def _warm_first_calls():
    """What every command's first calls do once per process, done here so the forks inherit it
    instead of each worker doing it again (a heart_scale svm-train's worker: 83 ms -> 15 ms):

    * numba's typeof finds the type of each argument through functools.singledispatch on its
      class, and the first dispatch of a class walks the ABC registry (about 1,100 subclass
      checks, 67 ms): dispatched here for numpy's arrays and scalars, Python's scalars and
      the package's named tuples (the kernel data, parameters, cache and solver states);
    * modules imported on first use: numpy.ma (numpy imports it lazily, and typeof checks an
      ndarray against its MaskedArray) and difflib (click's option errors, raised and caught
      by the LIBSVM-style argv parsing)."""
    import difflib  # noqa: F401

    import numpy as np
    import numpy.ma  # noqa: F401

    try:  # numba's internal registry: if a release moves it, workers only lose the head start
        from numba.core.typing.typeof import typeof_impl
    except ImportError:
        return
    classes = {int, float, bool, complex, tuple, str, type(None), np.ndarray}
    classes.update(np.dtype(code).type for code in "?bBhHiIlLqQefd")
    for name, module in list(sys.modules.items()):
        if name.startswith("lasvm_cli"):
            classes.update(value for value in vars(module).values()
                           if isinstance(value, type) and issubclass(value, tuple)
                           and hasattr(value, "_fields"))
    for cls in classes:
        typeof_impl.dispatch(cls)


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

        from numba.core.dispatcher import Dispatcher

        seen = set()
        for name in _module_names():
            try:
                module = importlib.import_module(name)
            except Exception:  # an optional extra missing: its commands load it themselves
                continue
            for value in list(vars(module).values()):
                if (isinstance(value, Dispatcher) and value._cache is not None
                        and id(value) not in seen):
                    seen.add(id(value))
                    self.dispatchers.append(value)

    def refresh(self):
        """Load the cached signatures not loaded yet, when the cache folders changed."""
        stamp = self._cache_stamp()
        if stamp == self.stamp:
            return
        self.stamp = stamp
        for dispatcher in self.dispatchers:
            try:
                index = dispatcher._cache._cache_file._load_index()
                magic = dispatcher.targetctx.codegen().magic_tuple()
            except Exception:
                continue
            for key in index:
                signature = key[0]
                if key[1] != magic or (id(dispatcher), signature) in self.loaded:
                    continue
                self.loaded.add((id(dispatcher), signature))
                try:
                    dispatcher.compile(signature)
                except Exception:
                    continue

    def _cache_stamp(self):
        folders = {d._cache._cache_path for d in self.dispatchers}
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

class Server:
    def __init__(self, listener, path, compiled, launch_threads, idle):
        self.listener, self.path = listener, path
        self.compiled, self.launch_threads = compiled, launch_threads
        self.idle = float(idle)
        self.selector = selectors.DefaultSelector()
        self.workers = {}  # pid -> (client connection, pidfd)
        self.last_active = time.monotonic()
        self.inode = os.stat(path).st_ino

    def serve(self):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))
        while self._still_wanted():
            for key, _ in self.selector.select(timeout=1.0):
                kind, pid = key.data
                if kind == "accept":
                    self._accept()
                elif kind == "exited":
                    self._finish(pid)
                else:  # "client": the client's end closed (or it sent something): it died
                    self._client_gone(pid)
        self._stop()

    def _still_wanted(self):
        if self.workers:
            return True
        try:  # replaced (another server for this key) or removed: stop
            if os.stat(self.path).st_ino != self.inode:
                return False
        except OSError:
            return False
        return time.monotonic() - self.last_active < self.idle

    def _stop(self):
        try:
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except OSError:
            pass

    def _accept(self):
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.last_active = time.monotonic()
        try:
            conn.settimeout(5.0)
            if not _same_user(conn):
                raise OSError("another user")
            request, fds = _receive(conn)
        except (OSError, ValueError):
            conn.close()
            return
        if _threads_launched() or request.get("prog") not in _COMMANDS:
            _send(conn, "refused\n")
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        pid = os.fork()
        if pid == 0:
            self._become_worker(request, fds, conn)  # never returns
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.workers[pid] = (conn, pidfd)
        _send(conn, f"pid {pid}\n")
        conn.setblocking(False)
        self.selector.register(pidfd, selectors.EVENT_READ, ("exited", pid))
        self.selector.register(conn, selectors.EVENT_READ, ("client", pid))

    def _finish(self, pid):
        conn, pidfd = self.workers.pop(pid)
        self.selector.unregister(pidfd)
        self.selector.unregister(conn)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            reply = f"signal {os.WTERMSIG(status)}\n"
        else:
            reply = f"exit {os.WEXITSTATUS(status)}\n"
        try:
            conn.setblocking(True)
            _send(conn, reply)
        except OSError:
            pass
        conn.close()
        self.last_active = time.monotonic()
        self.compiled.refresh()  # what the worker compiled, for the next one

    def _client_gone(self, pid):
        """The client closed its end before its command ended (killed): end the command, as
        the in-process command would have ended with it."""
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

    def _become_worker(self, request, fds, conn):
        code = 1
        try:
            for key in list(self.selector.get_map().values()):
                if key.fileobj is not self.listener:
                    _close(key.fileobj)
            self.selector.close()
            self.listener.close()
            conn.close()
            _take_over_process(request, fds)
            from numba.np.ufunc import parallel

            parallel._launch_threads = self.launch_threads  # this process's own threads,
            self.launch_threads()  # before any loaded code reaches a parallel region
            code = _run_command(request)
        except BaseException as e:  # could not become the client's process (a lost cwd...)
            try:
                os.write(2, f"{request.get('prog')}: {e}\n".encode(errors="replace"))
            except OSError:
                pass
            code = 1
        finally:
            os._exit(code)


def _close(fileobj):
    try:
        if isinstance(fileobj, int):
            os.close(fileobj)
        else:
            fileobj.close()
    except OSError:
        pass


def _same_user(conn):
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    return uid == os.getuid()


def _receive(conn):
    """The client's request (a marshal-encoded dict after a length header: the client and the
    server run the same interpreter, the key says so) and its three standard streams."""
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        raise ValueError("expected three file descriptors")
    if len(data) < _HEADER.size:
        raise ValueError("short request")
    (length,) = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    while len(payload) < length:
        chunk = conn.recv(length - len(payload))
        if not chunk:
            raise ValueError("short request")
        payload += chunk
    try:
        request = marshal.loads(payload)
    except (EOFError, TypeError, ValueError):  # not marshal data
        request = None
    if not isinstance(request, dict):
        for fd in fds:
            os.close(fd)
        raise ValueError("malformed request")
    return request, fds


def _send(conn, text):
    conn.sendall(text.encode("ascii"))


# --- the worker -----------------------------------------------------------------------------

def _take_over_process(request, fds):
    """Become the client's process: its standard streams, directory, environment, umask."""
    os.setsid()  # out of the server's session; the client forwards its signals
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as Python sets it at start-up
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    os.chdir(request["cwd"])
    _fresh_stdio()
    sys.argv = list(request["argv"])


def _fresh_stdio():
    """sys.stdin/stdout/stderr over descriptors 0-2 as a fresh interpreter makes them:
    stdout line-buffered on a terminal only, stderr always line-buffered."""
    def stream(fd, mode, old, line_buffering):
        raw = io.FileIO(fd, mode, closefd=False)
        buffered = io.BufferedReader(raw) if mode == "rb" else io.BufferedWriter(raw)
        return io.TextIOWrapper(buffered, encoding=old.encoding, errors=old.errors,
                                newline=None if mode == "rb" else "\n",
                                line_buffering=line_buffering)

    sys.stdin = sys.__stdin__ = stream(0, "rb", sys.__stdin__, False)
    sys.stdout = sys.__stdout__ = stream(1, "wb", sys.__stdout__, os.isatty(1))
    sys.stderr = sys.__stderr__ = stream(2, "wb", sys.__stderr__, True)


def _run_command(request):
    """Run the console script's command; its exit status as the interpreter would give it."""
    import atexit

    from . import main as commands

    command = getattr(commands, _COMMANDS[request["prog"]])
    try:
        command()
        code = 0
    except SystemExit as e:
        code = _exit_status(e.code)
    except KeyboardInterrupt:
        _flush_all()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()  # what interpreter shutdown would run (os._exit skips it)
    if not _flush_all() and code == 0:
        code = 120  # the interpreter's status when flushing stdout fails at exit
    return code


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
