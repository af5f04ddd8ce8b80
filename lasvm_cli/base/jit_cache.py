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
stale by definition and is read as empty here (``_tolerant_index``).

Every module with cached jitted functions imports this module before its first decorator
(tests/test_imports.py checks that each function of the package is stamped this way).
"""

import ctypes
import functools
import hashlib
import importlib
import os

from llvmlite import binding as llvm
from llvmlite import ir
from numba.core import caching, cgutils, types
from numba.core.compiler import CompileResult
from numba.core.imputils import fix_returning_optional, impl_ret_new_ref
from numba.extending import intrinsic
from . import exception_exits  # noqa: F401 (before any function compiles: see the module)

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # lasvm_cli/
STAMP_PREFIX = "lasvm-cli:"


@functools.lru_cache(maxsize=None)
def package_stamp():
    """sha256 over the relative path and content of every .py file of the package."""
    digest = hashlib.sha256()
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


def _package_locator(base):
    """``base`` (one of numba's locators) for this package's files, with the package stamp."""

    def from_function(cls, py_func, py_file):
        if not _in_package(py_file):
            return None
        return super(locator, cls).from_function(py_func, py_file)

    locator = type(f"Package{base.__name__}", (base,), {
        "get_source_stamp": lambda self: package_stamp(),
        "from_function": classmethod(from_function),
    })
    return locator


def _tolerant_index(load_index):
    """numba's index loader, reading an index of ours that cannot be unpickled as empty."""

    @functools.wraps(load_index)
    def load(self):
        try:
            return load_index(self)
        except Exception:  # unpickling a stale index: any error of a missing module or type
            if not str(self._source_stamp).startswith(STAMP_PREFIX):
                raise
            return {}

    load.tolerant = True
    return load


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
    add_overload = dispatcher.add_overload

    def add_overload_by_symbol(cres):
        add_overload(cres)
        loader = _SymbolLoader(dispatcher.py_func.__module__, dispatcher.py_func.__qualname__,
                               tuple(cres.signature.args), cres.fndesc.llvm_func_name)
        impl = _call_by_symbol(cres.fndesc, loader)
        selector = dispatcher.targetctx._defns[cres.entry_point]
        selector.versions = [(sig, impl if sig == impl.signature else f)
                             for sig, f in selector.versions]
        selector._cache.clear()

    dispatcher.add_overload = add_overload_by_symbol
    return dispatcher


def _call_by_symbol(fndesc, loader):
    """numba's call of a user function (imputils.user_function) without its library."""

    def imp(context, builder, sig, args):
        context.active_code_library._reload_init.add(loader)
        func = context.declare_function(builder.module, fndesc)
        status, retval = context.call_conv.call_function(
            builder, func, fndesc.restype, fndesc.argtypes, args)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        retval = fix_returning_optional(context, builder, sig, status, retval)
        return impl_ret_new_ref(context, builder, fndesc.restype, retval)

    imp.signature = fndesc.argtypes
    imp.libs = ()
    return imp


class _SymbolLoader:
    """Picklable (a cached caller keeps it): load ``module.qualname`` for ``args`` and make
    its code answer to ``symbol``."""

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
        cres = dispatcher.overloads[self.args]
        name = cres.fndesc.llvm_func_name
        if name != self.symbol:
            llvm.add_symbol(self.symbol, cres.library.get_pointer_to_function(name))


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

    @intrinsic
    def call(typingctx, args):
        if not isinstance(args, types.BaseTuple):
            return None
        slot = _Slot(dispatcher.py_func.__module__, dispatcher.py_func.__qualname__,
                     tuple(args))
        slot.open()

        def codegen(context, builder, signature, llargs):
            context.active_code_library._reload_init.add(slot)
            address = builder.module.globals.get(slot.symbol)
            if address is None:  # a declaration: the slot's address is added by slot.open
                address = ir.GlobalVariable(builder.module, ir.IntType(64), slot.symbol)
            pointer = builder.load(address)
            ready = builder.icmp_unsigned("!=", pointer, pointer.type(0))
            with builder.if_then(ready):
                fnty = context.call_conv.get_function_type(types.none, slot.args)
                function = builder.inttoptr(pointer, fnty.as_pointer())
                values = [builder.extract_value(llargs[0], i) for i in range(len(slot.args))]
                status, _ = context.call_conv.call_function(builder, function, types.none,
                                                            slot.args, values)
                with cgutils.if_unlikely(builder, status.is_error):
                    context.call_conv.return_status_propagate(builder, status)
            return ready

        return types.boolean(args), codegen

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
            llvm.add_symbol(self.symbol, ctypes.addressof(value))
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
        value.value = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)


def _keep_reload_init(rebuild):
    """numba's CompileResult._rebuild, keeping the loaded library's reload_init.

    A caller compiled later links in a callee's library and inherits its reload_init from
    the library; numba rebuilds a library loaded from the cache without it, so a caller of a
    callee that calls a by_symbol function would not load that function first."""

    @functools.wraps(rebuild.__func__)
    def _rebuild(cls, *args):
        cres = rebuild.__func__(cls, *args)
        cres.library._reload_init.update(cres.reload_init or ())
        return cres

    _rebuild.keeps_reload_init = True
    return classmethod(_rebuild)


def _install():
    if not getattr(CompileResult._rebuild, "keeps_reload_init", False):
        CompileResult._rebuild = _keep_reload_init(CompileResult._rebuild)
    index_file = caching.IndexDataCacheFile
    if not getattr(index_file._load_index, "tolerant", False):
        index_file._load_index = _tolerant_index(index_file._load_index)
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in numba 0.6x
    if any(getattr(c, "__name__", "").startswith("Package") for c in impl._locator_classes):
        return
    ours = [_package_locator(base) for base in (caching.UserProvidedCacheLocator,
                                                 caching.InTreeCacheLocator,
                                                 caching.UserWideCacheLocator)]
    impl._locator_classes = ours + list(impl._locator_classes)


_install()
