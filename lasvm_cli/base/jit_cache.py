"""Numba's on-disk cache, made stale by a change to any of the package's sources.

Numba checks a cached function against its own source file only. But a compiled function
carries the code of every jitted function it calls (and the module constants they read):
``smo_run_so`` holds ``cache_get``'s code, so after an edit to cache.py alone it would still
load the old ``cache_get`` from its cache entry, silently. Here every function of this package
is stamped with one digest over all of the package's .py files instead: any change to any of
them recompiles everything (once). Numba's own locators still choose the folder
(``NUMBA_CACHE_DIR``, the package's ``__pycache__``, or the user-wide cache).

An index written by another tree of the package can name a type that this tree no longer
has (a removed namedtuple in a signature): numba unpickles the whole index before it compares
stamps, so it would fail with an AttributeError instead of recompiling. Such an index is
stale by definition and is read as empty here.

Calls by symbol (:func:`by_symbol`) and functions compiled on demand (:func:`if_compiled`)
keep callees' code out of their callers' libraries, for compile time. What these need of
numba's internals is in :mod:`lasvm_cli.base.numba_internals`, which checks it at import;
where it is missing, each falls back to numba's plain linking (the same machine code for
the arithmetic, a slower first compile), and the stamp records which of them are on.

Every module with cached jitted functions imports this module before its first decorator
(tests/test_imports.py checks that each function of the package is stamped this way).
"""

import ctypes
import functools
import hashlib
import importlib
import os

import numba
from numba import types
from numba.extending import intrinsic

from . import numba_internals
from .numba_internals import BY_SYMBOL, CACHE_STAMP, EXCEPTION_EXITS, ON_DEMAND, uses

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # lasvm_cli/
STAMP_PREFIX = "lasvm-cli:"


@functools.lru_cache(maxsize=None)
def package_stamp():
    """sha256 over the compile features on (numba_internals.mode) and the relative path and
    content of every .py file of the package."""
    digest = hashlib.sha256(numba_internals.mode().encode() + b"\0")
    for root, dirs, files in os.walk(PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                digest.update(os.path.relpath(path, PACKAGE_DIR).encode() + b"\0")
                with open(path, "rb") as f:
                    digest.update(f.read())
                digest.update(b"\0")
    return STAMP_PREFIX + digest.hexdigest()


def _in_package(py_file):
    return os.path.abspath(py_file).startswith(PACKAGE_DIR + os.sep)


def by_symbol(dispatcher):
    """Callers of this jitted function call it by its symbol instead of linking in its code.

    Numba links the code of every callee into each caller's library, and LLVM then optimises
    and emits it again there: a kernel row called from fifteen libraries up the solver's call
    chain is compiled fifteen times. Code reached by symbol is compiled once; callers lose
    only the inlining, so this is for functions large enough that LLVM would not inline them.

    A caller's cached object code then refers to this function's symbol, which must be loaded
    before it: each caller records a loader (its ``reload_init``, kept in its cache entry) that
    compiles or loads this function first. The symbol's name carries a number that numba
    counts per process; when the loaded function has another name than the one the caller
    was compiled against, the loader registers the address under the caller's name.
    """
    if uses(BY_SYMBOL):
        numba_internals.route_calls_by_symbol(dispatcher, lambda cres: _SymbolLoader(
            dispatcher.py_func.__module__, dispatcher.py_func.__qualname__,
            tuple(cres.signature.args), numba_internals.symbol_of(cres)))
    return dispatcher


class _SymbolLoader:
    """Picklable (a cached caller keeps it): load ``module.qualname`` for ``args`` and make
    its code answer to ``symbol``."""

    lasvm_loader = True  # numba_internals keeps these in a library loaded from the cache

    def __init__(self, module, qualname, args, symbol):
        self.module, self.qualname, self.args, self.symbol = module, qualname, args, symbol

    def _key(self):
        return (self.module, self.qualname, str(self.args), self.symbol)

    def __eq__(self, other):
        return isinstance(other, _SymbolLoader) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __call__(self):
        dispatcher = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            dispatcher = getattr(dispatcher, part)
        dispatcher.compile(self.args)
        name, address = numba_internals.symbol_and_address(dispatcher.overloads[self.args])
        if name != self.symbol:
            numba_internals.add_symbol(self.symbol, address)


# ---------------------------------------------------------------------------------------------
# functions compiled on demand


def if_compiled(dispatcher):
    """A jitted call of ``dispatcher`` (a function returning nothing) that happens only once
    the function has been compiled on demand (:func:`compile_on_demand`).

    ``call = if_compiled(f)`` at module level; then, in jitted code, ``call((x, y, out))`` calls
    ``f(x, y, out)`` and returns True, or returns False without calling it when ``f`` has not
    been asked for in this process; the caller then takes its other path. Merely referring to
    a function compiles it with its caller, and each command's first run pays for every branch
    it contains: a parallel kernel row or bit-set rows that small data never reach. This
    call reads the function's address from a slot of its own instead (one per argument
    types), which stays 0 until the process asks for the function, typically when it builds
    data that can use it (numerics/data.py). The slot is a symbol of its own, so a caller's
    cached code refers to the slot, never to the function's code; each caller records a
    loader in its ``reload_init`` that opens the slot before its cached code is linked."""

    if not uses(ON_DEMAND):
        return _always_call(dispatcher)

    @intrinsic
    def call(typingctx, args):
        if not isinstance(args, types.BaseTuple):
            return None
        slot = _Slot(dispatcher.py_func.__module__, dispatcher.py_func.__qualname__,
                     tuple(args))
        slot.open()
        return types.boolean(args), numba_internals.call_through_slot(slot, types.none)

    return call


def _always_call(dispatcher):
    """if_compiled's plain path (numba without the internals of slots): the call is compiled
    with its caller and always made, as if every function had been asked for."""

    @numba.njit
    def call(args):
        dispatcher(*args)
        return True

    return call


_SLOTS = {}      # symbol -> (ctypes.c_uint64: the function's address or 0, its _Slot)
_WANTED = set()  # (module, qualname) of the functions compile_on_demand has asked for


def compile_on_demand(*dispatchers):
    """Compile (or load from the cache) each function for every slot of it this process has
    opened, and for every slot opened later: from now on ``if_compiled`` calls it."""
    for dispatcher in dispatchers:
        key = (dispatcher.py_func.__module__, dispatcher.py_func.__qualname__)
        if key in _WANTED:
            continue
        _WANTED.add(key)
        for _, slot in list(_SLOTS.values()):
            if slot.key == key:
                slot.fill()


def compiled_on_demand(dispatcher):
    """Whether ``compile_on_demand`` has asked for this function in this process."""
    return (dispatcher.py_func.__module__, dispatcher.py_func.__qualname__) in _WANTED


class _Slot:
    """The address of ``module.qualname`` compiled for ``args``; picklable (a cached caller
    keeps it and calls it before its code is loaded)."""

    lasvm_loader = True  # numba_internals keeps these in a library loaded from the cache

    def __init__(self, module, qualname, args):
        self.module, self.qualname, self.args = module, qualname, args
        self.key = (module, qualname)
        name = f"{module}.{qualname}{args}".encode()
        self.symbol = "lasvm_slot_" + hashlib.sha256(name).hexdigest()[:24]

    def __eq__(self, other):
        return isinstance(other, _Slot) and self.symbol == other.symbol

    def __hash__(self):
        return hash(self.symbol)

    def __call__(self):
        self.open()

    def open(self):
        """Give the slot its address in this process (once), filled if the function is
        wanted."""
        if self.symbol not in _SLOTS:
            value = ctypes.c_uint64(0)
            _SLOTS[self.symbol] = (value, self)
            numba_internals.add_symbol(self.symbol, ctypes.addressof(value))
        if self.key in _WANTED:
            self.fill()

    def fill(self):
        value = _SLOTS[self.symbol][0]
        if value.value:
            return
        dispatcher = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            dispatcher = getattr(dispatcher, part)
        dispatcher.compile(self.args)
        cres = dispatcher.overloads[self.args]
        if cres.signature.return_type != types.none:
            raise TypeError(f"{self.qualname} returns {cres.signature.return_type}: "
                            "if_compiled calls functions that return nothing")
        value.value = numba_internals.symbol_and_address(cres)[1]


def _install():
    if uses(CACHE_STAMP):
        numba_internals.install_cache_stamp(
            _in_package, package_stamp, lambda stamp: str(stamp).startswith(STAMP_PREFIX))
        numba_internals.install_cache_fallback(
            lambda module: module.split(".")[0] == numba_internals.PACKAGE)
    if uses(BY_SYMBOL) or uses(ON_DEMAND):
        numba_internals.install_reload_init_keeper(
            lambda loader: getattr(loader, "lasvm_loader", False))
    if uses(EXCEPTION_EXITS):  # before any function of the package compiles
        numba_internals.install_exception_exits()


_install()
