"""``lasvm server status`` and ``lasvm server stop``: the warm servers of this user in the
runtime folder this environment names (cli/handoff.py), which both name first. A server is
running while it holds its lock file, which describes it (pid, interpreter, package, commands
running and their workers, idle since); a server that no longer accepts commands but still
runs some holds ``KEY.PID.retiring`` instead."""

import fcntl
import json
import os
import signal
import time

from . import handoff


def servers(folder):
    """(key, description, the lock file's stat) for each lock file; description is None when
    no server holds the lock."""
    found = []
    for name in sorted(folder.names()):
        if not name.endswith((".sock.lock", ".retiring")):
            continue
        try:
            fd = folder.open_file(name, os.O_RDONLY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                found.append((name, None, None))  # nobody holds it: no server
                continue
            except BlockingIOError:
                pass
            try:
                description = json.loads(os.pread(fd, 1 << 16, 0))
            except ValueError:
                description = {}
            found.append((name, description, os.fstat(fd)))
        finally:
            os.close(fd)
    return found


def _key(name):
    return name.split(".")[0]


def _describe(name, description, now):
    running = description.get("running", "?")
    if running == 0:
        idle = f"{now - description.get('idle_since', now):.0f} s"
    else:
        idle = "busy"
    workers = " ".join(str(pid) for pid in description.get("workers", []))
    state = "" if description.get("accepting", True) else "  stopping"
    return (f"{_key(name)}  pid {description.get('pid', '?')}{state}  running {running}"
            f"{f' (workers {workers})' if workers else ''}  idle {idle}  "
            f"package {description.get('package', '?')}  python {description.get('python', '?')}")


def _open_folder():
    """The runtime folder, after saying which it is (or why there is none)."""
    folder = handoff.Folder.open()
    if folder is None:
        print(f"no private runtime folder ({handoff.Folder.problem}): commands run without a "
              "warm server")
    else:
        print(f"runtime folder {folder.path()}")
    return folder


def status():
    folder = _open_folder()
    if folder is None:
        return 0
    try:
        found = [entry for entry in servers(folder) if entry[1] is not None]
    finally:
        folder.close()
    if not found:
        print("no warm server is running")
    now = time.time()
    for name, description, _ in found:
        print(_describe(name, description, now))
    print(f"commands run from here use the server {handoff.server_key()}")
    return 0


def stop(wait=10.0):
    """Ask each server to stop (SIGTERM through a pidfd, after checking that the process holds
    the server's lock file open, so a reused pid is never signalled): it stops accepting
    commands at once and exits when its running commands end. Removes what dead servers left."""
    folder = _open_folder()
    if folder is None:
        return 0
    stopped = []
    try:
        for entry in servers(folder):
            name, description, st = entry
            key = _key(name)
            if description is None:  # left by a server that died
                if name.endswith(".retiring"):
                    folder.unlink(name)
                else:
                    for suffix in (".sock", ".sock.lock"):
                        folder.unlink(key + suffix)
                continue
            pid = description.get("pid")
            if type(pid) is not int:
                continue
            try:
                pidfd = os.pidfd_open(pid)
            except OSError:
                continue
            try:
                if _holds(pid, st):
                    signal.pidfd_send_signal(pidfd, signal.SIGTERM)
                    stopped.append((key, pid, description.get("workers", []), pidfd))
                    continue
            except OSError:
                pass
            os.close(pidfd)
        # a server running commands exits only when they end: no use waiting long for it
        deadline = time.monotonic() + (wait if all(not s[2] for s in stopped) else 1.0)
        for key, pid, workers, pidfd in stopped:
            import select

            left = max(deadline - time.monotonic(), 0.0)
            ended = bool(select.select([pidfd], [], [], left)[0])
            os.close(pidfd)
            if ended:
                print(f"stopped the warm server {key} (pid {pid})")
            else:
                running = " ".join(str(w) for w in workers) or "?"
                print(f"the warm server {key} (pid {pid}) accepts no more commands and exits "
                      f"when its running commands end (workers {running})")
    finally:
        folder.close()
    if not stopped:
        print("no warm server is running")
    return 0


def _holds(pid, st):
    """Whether process ``pid`` has the lock file ``st`` open (it is that server)."""
    folder = f"/proc/{pid}/fd"
    for fd in os.listdir(folder):
        try:
            other = os.stat(os.path.join(folder, fd))
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return True
    return False
