"""Landlock for the tests: confine a process to the folders given, as a sandboxing tool (a
coding agent's, a CI runner's) confines the commands it runs. Raw system calls through ctypes
(no Python binding): landlock_create_ruleset, landlock_add_rule, landlock_restrict_self, after
prctl(PR_SET_NO_NEW_PRIVS), which Landlock requires of a process without CAP_SYS_ADMIN.

``abi()`` is 0 where the kernel has no Landlock (the tests then skip)."""

import ctypes
import os
import platform

# the same numbers on every architecture (the generic system call table's)
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
_MAKE_AND_REMOVE = 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048 | 4096  # dirs, files, nodes
_REFER, _TRUNCATE = 8192, 16384  # ABI 2, ABI 3
READ = EXECUTE | READ_FILE | READ_DIR


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi():
    """The kernel's Landlock ABI version, 0 without Landlock."""
    if platform.system() != "Linux":
        return 0
    version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0),
                              ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(version, 0)


def write_access():
    """Every right to change the file system the kernel's ABI knows."""
    rights = WRITE_FILE | _MAKE_AND_REMOVE
    if abi() >= 2:
        rights |= _REFER
    if abi() >= 3:
        rights |= _TRUNCATE
    return rights


def no_new_privileges():
    if _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")


def restrict(writable=(), readable=None):
    """Confine this process and its children: writes (every right of ``write_access``) only
    beneath the ``writable`` folders; with ``readable`` (folders), reads and execution only
    beneath those and the writable ones, else anywhere. Sets no-new-privileges first."""
    libc = _libc()
    handled = write_access() | (READ if readable is not None else 0)
    attr = ctypes.c_uint64(handled)  # landlock_ruleset_attr's first field: handled_access_fs
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(8),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        rules = [(path, handled) for path in writable]
        rules += [(path, READ) for path in readable or ()]
        for path, access in rules:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                if not os.path.isdir(path):
                    access &= ~READ_DIR & ~_MAKE_AND_REMOVE & ~_REFER
                rule = _PathBeneath(access, fd)
                if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule),
                                ctypes.c_uint32(0)) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        no_new_privileges()
        if libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
