"""The open broker of the warm server: a served command's worker opens no path in its own name.

A worker is a fork of the server, not of the caller: a sandbox the caller runs in (Landlock,
seccomp, an LSM label), which no one can see from outside, does not confine it. So every
file-system call a command makes by path is made by the client, in the caller's own process,
and only the result crosses the socket: a descriptor (SCM_RIGHTS), a stat, a name, or the
caller's errno, which the worker raises as the OSError the call would have raised in-process.

``Broker.install`` (in the worker) replaces Python's path-taking calls (``open``, ``os.open``,
``os.stat``/``lstat``/``access``, ``replace``/``rename``/``unlink``/``rmdir``/``mkdir``/
``chmod``/``readlink``/``listdir``/``scandir``/``chdir``, ``os.path.realpath``) with requests
to the client; what is built on them (``pathlib``, ``os.path.exists``, ``tempfile``'s
temporary files, gzip/bz2/lzma, the atomic rename of outputs) follows. ``receive`` and
``Request.answer`` (in the client) take and answer one request. A call on a descriptor stays in the worker: it is the caller's
already (its standard streams, or one the client opened).

The frames (``pack``/``unpack``) are also the warm server's request format: a small tagged
encoding whose decoder allocates only what it has received (every length and count is checked
against the bytes left), unlike marshal, which allocates what a header announces.

This module is imported by every command's client: standard library only.
"""

import os
import socket
import struct

_U32 = struct.Struct("!I")
MAX_FRAME = 1 << 24
_MAX_DEPTH = 6
_MAX_NUMBER = 40  # characters of an int or float
_MAX_FDS = 2  # descriptors one broker request carries (a rename's two folders)


# --- the frames -----------------------------------------------------------------------------

def pack(value):
    """``value`` (None, bool, int, float, str, bytes, list, tuple, dict of str) as bytes."""
    out = []
    _pack(value, out)
    return b"".join(out)


def _pack(value, out):
    if value is None:
        out.append(b"N")
    elif value is True:
        out.append(b"T")
    elif value is False:
        out.append(b"F")
    elif type(value) is int:
        text = str(value).encode()
        out.append(b"i" + bytes([len(text)]) + text)
    elif type(value) is float:
        text = repr(value).encode()
        out.append(b"f" + bytes([len(text)]) + text)
    elif type(value) is str:
        data = value.encode("utf-8", "surrogatepass")  # a lone surrogate of an odd name too
        out.append(b"s" + _U32.pack(len(data)) + data)
    elif type(value) is bytes:
        out.append(b"b" + _U32.pack(len(value)) + value)
    elif type(value) in (list, tuple):
        out.append(b"l" + _U32.pack(len(value)))
        for item in value:
            _pack(item, out)
    elif type(value) is dict:
        out.append(b"d" + _U32.pack(len(value)))
        for key, item in value.items():
            _pack(str(key), out)
            _pack(item, out)
    else:
        raise TypeError(f"cannot pack {type(value).__name__}")


def unpack(data):
    """The value ``pack`` made; ValueError for anything else (trailing bytes included)."""
    value, end = _unpack(memoryview(data), 0, 0)
    if end != len(data):
        raise ValueError("trailing bytes")
    return value


def _unpack(data, at, depth):
    if at >= len(data):
        raise ValueError("truncated")
    tag = data[at]
    at += 1
    if tag == ord("N"):
        return None, at
    if tag == ord("T"):
        return True, at
    if tag == ord("F"):
        return False, at
    if tag in (ord("i"), ord("f")):
        if at >= len(data) or data[at] > _MAX_NUMBER or at + 1 + data[at] > len(data):
            raise ValueError("bad number")
        text = bytes(data[at + 1:at + 1 + data[at]]).decode("ascii")
        return (int(text) if tag == ord("i") else float(text)), at + 1 + data[at]
    if at + 4 > len(data):
        raise ValueError("truncated")
    (n,) = _U32.unpack_from(data, at)
    at += 4
    if tag in (ord("s"), ord("b")):
        if at + n > len(data):
            raise ValueError("truncated")
        raw = bytes(data[at:at + n])
        return (raw.decode("utf-8", "surrogatepass") if tag == ord("s") else raw), at + n
    if tag not in (ord("l"), ord("d")) or depth >= _MAX_DEPTH:
        raise ValueError("bad tag or too deep")
    if n > len(data) - at:  # every item takes a byte at least: nothing is allocated ahead
        raise ValueError("count beyond the data")
    if tag == ord("l"):
        items = []
        for _ in range(n):
            item, at = _unpack(data, at, depth + 1)
            items.append(item)
        return items, at
    mapping = {}
    for _ in range(n):
        key, at = _unpack(data, at, depth + 1)
        if type(key) is not str:
            raise ValueError("a key that is not a string")
        mapping[key], at = _unpack(data, at, depth + 1)
    return mapping, at


def send_frame(sock, value, fds=()):
    """One frame (length, then the packed value), descriptors riding on its first bytes."""
    payload = pack(value)
    message = _U32.pack(len(payload)) + payload
    sent = socket.send_fds(sock, [message], list(fds)) if fds else sock.send(message)
    sock.sendall(message[sent:])


def receive_frame(sock, max_fds=0, limit=MAX_FRAME):
    """(value, descriptors) of one frame; EOFError when the peer has closed before one
    began, ValueError (its descriptors closed) for a malformed one."""
    if max_fds:
        data, fds, _, _ = socket.recv_fds(sock, 1 << 16, max_fds)
    else:
        data, fds = sock.recv(1 << 16), []
    try:
        if not data:
            raise EOFError
        while len(data) < _U32.size:
            more = sock.recv(_U32.size - len(data))
            if not more:
                raise ValueError("truncated frame")
            data += more
        (length,) = _U32.unpack_from(data)
        if length > limit:
            raise ValueError("frame too long")
        chunks, have = [data[_U32.size:]], len(data) - _U32.size
        while have < length:
            more = sock.recv(min(length - have, 1 << 20))
            if not more:
                raise ValueError("truncated frame")
            chunks.append(more)
            have += len(more)
        body = b"".join(chunks)
        if have != length:
            raise ValueError("frame longer than announced")
        return unpack(body), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


# --- the client: the caller's calls ---------------------------------------------------------

def _stat_fields(st):
    extra = {name: getattr(st, name) for name in _STAT_EXTRA if hasattr(st, name)}
    return [list(st), extra]


_STAT_EXTRA = ("st_atime", "st_mtime", "st_ctime", "st_atime_ns", "st_mtime_ns",
               "st_ctime_ns", "st_blksize", "st_blocks", "st_rdev")


def _realpath(path, strict):
    return os.path.realpath(path, strict=strict) if strict else os.path.realpath(path)


def _chdir(path):
    os.chdir(path)  # relative names the worker sends later resolve where it now is
    return os.open(".", os.O_RDONLY | os.O_DIRECTORY)


# request -> (the call, whether its result is a descriptor to pass)
_CALLS = {
    "open": (lambda p, flags, mode, d: os.open(p, flags, mode, dir_fd=d), True),
    "stat": (lambda p, follow, d: _stat_fields(os.stat(p, dir_fd=d, follow_symlinks=follow)),
             False),
    "access": (lambda p, mode, d, effective, follow: os.access(
        p, mode, dir_fd=d, effective_ids=effective, follow_symlinks=follow), False),
    "replace": (lambda src, dst, sd, dd: os.replace(src, dst, src_dir_fd=sd, dst_dir_fd=dd),
                False),
    "rename": (lambda src, dst, sd, dd: os.rename(src, dst, src_dir_fd=sd, dst_dir_fd=dd),
               False),
    "unlink": (lambda p, d: os.unlink(p, dir_fd=d), False),
    "rmdir": (lambda p, d: os.rmdir(p, dir_fd=d), False),
    "mkdir": (lambda p, mode, d: os.mkdir(p, mode, dir_fd=d), False),
    "chmod": (lambda p, mode, d, follow: os.chmod(p, mode, dir_fd=d, follow_symlinks=follow),
              False),
    "readlink": (lambda p, d: os.readlink(p, dir_fd=d), False),
    "listdir": (lambda p: os.listdir(p), False),
    "opendir": (lambda p: os.open(p, os.O_RDONLY | os.O_DIRECTORY), True),
    "realpath": (_realpath, False),
    "chdir": (_chdir, True),
}


calling = [False]  # inside a call: a signal that ends the command may interrupt it


class Request:
    """One request of the worker, received: ``answer`` makes the call as this process (the
    caller) and sends back its result or its errno."""

    def __init__(self, message, fds):
        self.message, self.fds = message, fds

    def answer(self, sock):
        """True once answered (or the worker gone); False when the client's handler of a
        signal that ends the command interrupted the call (a named pipe without a writer
        blocks its open): then no answer is sent, as the worker is ending, and the caller
        retries the call if the worker still waits for it (handoff._wait_for_worker)."""
        number = self.message[0] if isinstance(self.message, list) and self.message else None
        result, gives_fd = None, False
        try:
            number, name, args, dir_fds = self.message
            call, gives_fd = _CALLS[name]
            args = [self.fds[a] if i in dir_fds else a for i, a in enumerate(args)]
            calling[0] = True
            try:
                result = call(*args)
            finally:
                calling[0] = False
        except InterruptedError:  # raised by the signal handler: PEP 475 retries the rest
            return False
        except OSError as e:
            reply, gives_fd = [number, "err", e.errno or 0, e.strerror or str(e)], False
        except Exception as e:  # a request this module would not make: refused, not obeyed
            reply, gives_fd = [number, "value", str(e)], False
        else:
            reply = [number, "ok", None if gives_fd else result]
        try:
            send_frame(sock, reply, [result] if gives_fd else ())
        except OSError:
            pass
        finally:
            if gives_fd:
                os.close(result)
        self.close()
        return True

    def close(self):
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def receive(sock):
    """The worker's next request, or None when it has closed its end (or sent nonsense)."""
    try:
        return Request(*receive_frame(sock, _MAX_FDS))
    except (EOFError, ValueError, OSError):
        return None


# --- the worker: the calls it sends ---------------------------------------------------------

class Broker:
    """The worker's end: each path-taking call becomes a request the client answers."""

    def __init__(self, sock):
        import threading

        self.sock = sock
        self.lock = threading.Lock()
        self.number = 0

    def call(self, name, args, dir_fds=(), filenames=()):
        """The result of ``name(*args)`` made by the client. ``dir_fds``: positions in
        ``args`` of descriptors (folders) that travel with the request. ``filenames``: what
        an OSError names, as the call in-process would."""
        fds = [args[i] for i in dir_fds if args[i] is not None]
        positions = [i for i in dir_fds if args[i] is not None]
        sent = [None if i in positions else a for i, a in enumerate(args)]
        for k, i in enumerate(positions):
            sent[i] = k
        with self.lock:
            # numbered: a call interrupted while it waited (Ctrl-C raises KeyboardInterrupt
            # between the calls below) leaves its reply behind, which the next call skips
            self.number += 1
            send_frame(self.sock, [self.number, name, sent, positions], fds)
            while True:
                reply, received = receive_frame(self.sock, 1)
                if reply[0] == self.number:
                    break
                for fd in received:
                    os.close(fd)
        kind = reply[1]
        if kind == "err":
            for fd in received:
                os.close(fd)
            raise OSError(reply[2], reply[3], *filenames)
        if kind == "value":
            raise ValueError(reply[2])
        return received[0] if received else reply[2]

    # the replacements of os's calls: the same signatures

    def install(self):
        """Route this process's path-taking calls through the client (module docstring)."""
        import builtins
        import io
        import posixpath
        import sys

        real = {name: getattr(os, name) for name in (
            "open", "stat", "lstat", "access", "replace", "rename", "unlink", "remove",
            "rmdir", "mkdir", "chmod", "readlink", "listdir", "scandir", "chdir")}
        real_open = io.open
        broker = self

        def by_path(path):
            return not isinstance(path, int)

        def name_of(path):
            path = os.fspath(path)
            if ("\0" if isinstance(path, str) else b"\0") in path:
                raise ValueError("embedded null byte")
            return path

        def os_open(path, flags, mode=0o777, *, dir_fd=None):
            return broker.call("open", [name_of(path), flags, mode, dir_fd], [3], [path])

        def stat(path, *, dir_fd=None, follow_symlinks=True):
            if not by_path(path):
                return real["stat"](path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
            fields, extra = broker.call("stat", [name_of(path), follow_symlinks, dir_fd], [2],
                                        [path])
            return os.stat_result(fields, extra)

        def lstat(path, *, dir_fd=None):
            return stat(path, dir_fd=dir_fd, follow_symlinks=False)

        def access(path, mode, *, dir_fd=None, effective_ids=False, follow_symlinks=True):
            if not by_path(path):
                return real["access"](path, mode, dir_fd=dir_fd, effective_ids=effective_ids,
                                      follow_symlinks=follow_symlinks)
            return broker.call("access", [name_of(path), mode, dir_fd, effective_ids,
                                          follow_symlinks], [2], [path])

        def two_names(call):
            def rename(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
                return broker.call(call, [name_of(src), name_of(dst), src_dir_fd, dst_dir_fd],
                                   [2, 3], [src, dst])
            return rename

        def unlink(path, *, dir_fd=None):
            return broker.call("unlink", [name_of(path), dir_fd], [1], [path])

        def rmdir(path, *, dir_fd=None):
            return broker.call("rmdir", [name_of(path), dir_fd], [1], [path])

        def mkdir(path, mode=0o777, *, dir_fd=None):
            return broker.call("mkdir", [name_of(path), mode, dir_fd], [2], [path])

        def chmod(path, mode, *, dir_fd=None, follow_symlinks=True):
            if not by_path(path):
                return real["chmod"](path, mode)
            return broker.call("chmod", [name_of(path), mode, dir_fd, follow_symlinks], [2],
                               [path])

        def readlink(path, *, dir_fd=None):
            return broker.call("readlink", [name_of(path), dir_fd], [1], [path])

        def listdir(path="."):
            if not by_path(path):
                return real["listdir"](path)
            return broker.call("listdir", [name_of(path)], (), [path])

        def scandir(path="."):
            if not by_path(path):
                return real["scandir"](path)
            fd = broker.call("opendir", [name_of(path)], (), [path])
            return _FolderEntries(real["scandir"](fd), fd)

        def chdir(path):
            if not by_path(path):
                return real["chdir"](path)
            fd = broker.call("chdir", [name_of(path)], (), [path])
            try:
                real["chdir"](fd)
            finally:
                os.close(fd)

        def realpath(path, *, strict=False):
            path = os.fspath(path)
            return broker.call("realpath", [name_of(path), strict], (), [path])

        def opener(path, flags):
            return os_open(path, flags, 0o666)

        def open_(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None,
                  closefd=True, opener=None):
            if opener is None and by_path(file):
                opener = open_opener
            return real_open(file, mode, buffering, encoding, errors, newline, closefd,
                             opener)

        open_opener = opener
        replaced = {"open": os_open, "stat": stat, "lstat": lstat, "access": access,
                    "replace": two_names("replace"), "rename": two_names("rename"),
                    "unlink": unlink, "remove": unlink, "rmdir": rmdir, "mkdir": mkdir,
                    "chmod": chmod, "readlink": readlink, "listdir": listdir,
                    "scandir": scandir, "chdir": chdir}
        for name, function in replaced.items():
            setattr(os, name, function)
            for support in (os.supports_dir_fd, os.supports_fd, os.supports_follow_symlinks,
                            os.supports_effective_ids):
                if real[name] in support:
                    support.add(function)
        posixpath.realpath = realpath
        builtins.open = io.open = open_
        bz2 = sys.modules.get("bz2")
        if bz2 is not None and hasattr(bz2, "_builtin_open"):
            bz2._builtin_open = open_  # bound when bz2 was imported


class _FolderEntries:
    """``os.scandir`` of a folder the client opened: its entries, and the descriptor closed
    with it."""

    def __init__(self, entries, fd):
        self.entries, self.fd = entries, fd

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.entries)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.entries.close()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
