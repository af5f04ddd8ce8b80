"""``lasvm server status`` and ``lasvm server stop``: the warm servers of this user in the
runtime folder this environment names (cli/handoff.py). A server is running while it holds
its lock file, which describes it (pid, interpreter, package, commands running, idle since)."""

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
        if not name.endswith(".sock.lock"):
            continue
        key = name[: -len(".sock.lock")]
        try:
            fd = folder.open_file(name, os.O_RDONLY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                found.append((key, None, None))  # nobody holds it: no server
                continue
            except BlockingIOError:
                pass
            try:
                description = json.loads(os.pread(fd, 1 << 16, 0))
            except ValueError:
                description = {}
            found.append((key, description, os.fstat(fd)))
        finally:
            os.close(fd)
    return found


def _describe(key, description, now):
    running = description.get("running", "?")
    if running == 0:
        idle = f"{now - description.get('idle_since', now):.0f} s"
    else:
        idle = "busy"
    return (f"{key}  pid {description.get('pid', '?')}  running {running}  idle {idle}  "
            f"package {description.get('package', '?')}  python {description.get('python', '?')}")


def status():
    folder = handoff.Folder.open()
    if folder is None:
        print("no private runtime folder: commands run without a warm server")
        return 0
    try:
        found = [entry for entry in servers(folder) if entry[1] is not None]
    finally:
        folder.close()
    if not found:
        print("no warm server is running")
    now = time.time()
    for key, description, _ in found:
        print(_describe(key, description, now))
    print(f"commands run from here use the server {handoff.server_key()}")
    return 0


def stop(wait=10.0):
    """Ask each server to stop (SIGTERM through a pidfd, after checking that the process holds
    the server's lock file open, so a reused pid is never signalled): it stops accepting
    commands at once and exits when its running commands end. Removes what dead servers left."""
    folder = handoff.Folder.open()
    if folder is None:
        print("no private runtime folder: no warm server to stop")
        return 0
    stopped = []
    try:
        for entry in servers(folder):
            key, description, st = entry
            if description is None:  # left by a server that died
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
                    stopped.append((key, pid, description.get("running", 0), pidfd))
                    continue
            except OSError:
                pass
            os.close(pidfd)
        deadline = time.monotonic() + wait
        for key, pid, running, pidfd in stopped:
            import select

            left = max(deadline - time.monotonic(), 0.0)
            ended = bool(select.select([pidfd], [], [], left)[0])
            os.close(pidfd)
            if ended:
                print(f"stopped the warm server {key} (pid {pid})")
            else:
                print(f"the warm server {key} (pid {pid}) accepts no more commands and exits "
                      f"when its running commands end")
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
