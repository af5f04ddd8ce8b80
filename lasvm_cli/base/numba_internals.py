"""Every use of a numba or llvmlite internal, each checked once at import.

numba changes its internals between minor releases without notice, so each use here is a
*feature* with a probe: at import the probe checks that the attributes it needs are there and
take the parameters it passes. A feature whose probe fails takes numba's plain path: the same
compiled arithmetic (the same models to the byte), only a slower compile, start-up or solver,
said in one line on stderr (:func:`notice`). The ``@intrinsic`` functions that fix the order of
the kernels' and solvers' sums have no plain path: without what they need :func:`notice`
stops the command with one line naming it. Patches touch lasvm-cli's own functions only.
``LASVM_NUMBA_PLAIN`` (``all`` or feature names) takes the plain path on purpose.
docs/compile-time.md has the table of features, the internals each uses and what its plain
path costs."""

import functools
import inspect
import os
import signal
import sys
import threading

import numba
from llvmlite import binding as llvm
from llvmlite import ir

from .errors import LasvmError

CACHE_STAMP = "cache-stamp"
BY_SYMBOL = "calls-by-symbol"
ON_DEMAND = "rows-on-demand"
EXCEPTION_EXITS = "exception-exits"
COMPILE_EVENTS = "compile-events"
WARM_SERVER = "warm-server"
RNG_STATE = "rng-state"
FEATURES = (CACHE_STAMP, BY_SYMBOL, ON_DEMAND, EXCEPTION_EXITS, COMPILE_EVENTS, WARM_SERVER,
            RNG_STATE)
PLAIN_ENV = "LASVM_NUMBA_PLAIN"
PACKAGE = "lasvm_cli"
_OWN_SYMBOL = f"_ZN{len(PACKAGE)}{PACKAGE}"  # itanium mangling of lasvm_cli.<anything>


class Missing(Exception):
    """An internal that is not there, or not as this module calls it."""


class UnavailableInternal(LasvmError):
    """A command needs something that this numba does not provide (exit status 1)."""


# ---------------------------------------------------------------------------------------------
# probes: each returns what its feature uses, or raises Missing


def _need(ok, what):
    if not ok:
        raise Missing(what)


def _attr(obj, *names):
    """The first of ``names`` that ``obj`` has."""
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    raise Missing(f"{getattr(obj, '__name__', obj)}.{names[0]}")


def _takes(func, *params, what=None):
    """``func`` can be called with ``len(params)`` positional arguments (self or cls aside),
    as this module calls it; ``params`` name them for the message."""
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        raise Missing(what or str(func)) from None
    if parameters and parameters[0].name in ("self", "cls"):
        parameters = parameters[1:]
    kinds = inspect.Parameter
    positional = [p for p in parameters
                  if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    spread = any(p.kind == kinds.VAR_POSITIONAL for p in parameters)
    required = [p for p in parameters if p.default is p.empty
                and p.kind not in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD)]
    _need((len(positional) >= len(params) or spread) and len(required) <= len(params)
          and all(p in positional[:len(params)] for p in required),
          f"{what or getattr(func, '__qualname__', func)}({', '.join(params)})")


def _uses(func, name):
    """Whether the code of ``func`` (or of a function nested in it) reads attribute ``name``:
    an attribute set in ``__init__`` is not visible on the class."""
    func = inspect.unwrap(func)
    code = getattr(func, "__code__", None)
    pending = [code] if code is not None else []
    while pending:
        code = pending.pop()
        if name in code.co_names:
            return True
        pending.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return False


def _probe_cache_stamp():
    from numba.core import caching

    impl = _attr(caching, "CacheImpl", "_CacheImpl")  # renamed in numba 0.6x
    _need(isinstance(getattr(impl, "_locator_classes", None), list),
          "CacheImpl._locator_classes")
    locators = [_attr(caching, name, "_" + name) for name in (
        "UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")]
    for locator in locators:
        _takes(locator.from_function, "py_func", "py_file",
               what=f"{locator.__name__}.from_function")
        _takes(locator.get_source_stamp, what=f"{locator.__name__}.get_source_stamp")
    index = caching.IndexDataCacheFile
    _takes(index._load_index, what="IndexDataCacheFile._load_index")
    _need(_uses(index.__init__, "_source_stamp"), "IndexDataCacheFile._source_stamp")
    from numba.core.dispatcher import Dispatcher

    _takes(Dispatcher.enable_caching, what="Dispatcher.enable_caching")
    return impl, locators, index


def _probe_reload_init():
    """What calls by symbol and rows on demand share: a loader added to the code library being
    lowered reaches the compile result (numba >= 0.63 keeps a ``_reload_init`` per library,
    inherited by the libraries that link it), runs before a cached library is loaded, and the
    call convention that calls a jitted function's native entry."""
    from numba.core import callconv, cgutils, codegen, typed_passes
    from numba.core.base import BaseContext
    from numba.core.compiler import CompileResult

    _need(_uses(codegen.CodeLibrary.__init__, "_reload_init"), "CodeLibrary._reload_init")
    _need(_uses(typed_passes.NativeLowering.run_pass, "_reload_init"),
          "NativeLowering: a library's _reload_init into the compile result")
    _need("reload_init" in getattr(CompileResult, "_fields", ()), "CompileResult.reload_init")
    _need(isinstance(inspect.getattr_static(CompileResult, "_rebuild", None), classmethod),
          "CompileResult._rebuild")
    _need(_uses(BaseContext.push_code_library, "_codelib_stack")
          and isinstance(inspect.getattr_static(BaseContext, "active_code_library", None),
                         property), "BaseContext.active_code_library")
    _takes(codegen.JITCodeLibrary.get_pointer_to_function, "name")
    conv = callconv.CPUCallConv
    _takes(conv.call_function, "builder", "callee", "resty", "argtys", "args")
    _takes(conv.return_status_propagate, "builder", "status")
    _takes(conv.get_function_type, "restype", "argtypes")
    _need(hasattr(cgutils, "if_unlikely"), "cgutils.if_unlikely")
    return CompileResult


def _probe_by_symbol():
    from numba.core import funcdesc, imputils
    from numba.core.base import BaseContext, OverloadSelector
    from numba.core.dispatcher import Dispatcher

    _probe_reload_init()
    _takes(Dispatcher.add_overload, "cres")
    _need(_uses(BaseContext.__init__, "_defns"), "BaseContext._defns")
    _need(_uses(OverloadSelector.__init__, "versions")
          and _uses(OverloadSelector.__init__, "_cache"), "OverloadSelector.versions/_cache")
    _takes(BaseContext.declare_function, "module", "fndesc")
    _need(_uses(funcdesc.FunctionDescriptor.__init__, "llvm_func_name")
          or hasattr(funcdesc.FunctionDescriptor, "llvm_func_name"),
          "FunctionDescriptor.llvm_func_name")
    _takes(imputils.fix_returning_optional, "context", "builder", "sig", "status", "retval")
    _takes(imputils.impl_ret_new_ref, "ctx", "builder", "retty", "ret")


def _probe_exception_exits():
    from numba.core import callconv
    from numba.core.itanium_mangler import mangle

    _takes(callconv.CPUCallConv.return_status_propagate, "builder", "status")
    _need(mangle(f"{PACKAGE}.m.f", ()).startswith(_OWN_SYMBOL), "itanium mangling")


def _probe_compile_events():
    from numba.core import event

    for name in ("Listener", "TimingListener", "register", "unregister"):
        _attr(event, name)
    _takes(event.register, "kind", "listener")
    _need(all(hasattr(event.TimingListener, a) for a in ("duration", "done")),
          "TimingListener.duration/done")


def _probe_warm_server():
    from numba.core import config
    from numba.core.caching import IndexDataCacheFile
    from numba.core.dispatcher import Dispatcher
    from numba.core.typing.typeof import typeof_impl
    from numba.np.ufunc import parallel

    for name in ("_launch_threads", "_is_initialized", "NUM_THREADS", "get_num_threads"):
        _attr(parallel, name)
    _need(_uses(parallel.get_num_threads, "_get_num_threads"), "parallel._get_num_threads")
    for name in ("THREADING_LAYER", "THREADING_LAYER_PRIORITY"):
        _attr(config, name)
    _attr(typeof_impl, "dispatch")
    _need(_uses(Dispatcher.enable_caching, "_cache"), "Dispatcher._cache")
    _takes(IndexDataCacheFile._load_index, what="IndexDataCacheFile._load_index")


def _probe_rng_state():
    from numba import _helperlib

    for name in ("rnd_get_state", "rnd_set_state", "rnd_get_np_state_ptr"):
        _attr(_helperlib, name)


_PROBES = {CACHE_STAMP: _probe_cache_stamp, BY_SYMBOL: _probe_by_symbol,
           ON_DEMAND: _probe_reload_init, EXCEPTION_EXITS: _probe_exception_exits,
           COMPILE_EVENTS: _probe_compile_events, WARM_SERVER: _probe_warm_server,
           RNG_STATE: _probe_rng_state}


def _probe_essential():
    """numba's extension API that the package's intrinsics are written in."""
    from numba.core.base import BaseContext
    from numba.extending import intrinsic  # noqa: F401

    for name in ("fma", "ctpop", "shuffle_vector", "insert_element", "extract_element",
                 "extract_value", "fptosi", "bitcast", "icmp_unsigned", "if_then"):
        _need(hasattr(ir.IRBuilder, name), f"llvmlite IRBuilder.{name}")
    _need(hasattr(ir, "VectorType"), "llvmlite ir.VectorType")
    for name in ("make_array", "make_tuple", "get_dummy_value"):
        _need(hasattr(BaseContext, name), f"BaseContext.{name}")


def check(requested=None):
    """{feature: why it takes the plain path} for this numba (``requested``: the value of
    LASVM_NUMBA_PLAIN, read from the environment when None)."""
    if requested is None:
        requested = os.environ.get(PLAIN_ENV, "")
    wanted = {w.strip() for w in requested.split(",") if w.strip()}
    plain = {}
    for feature, probe in _PROBES.items():
        if "all" in wanted or feature in wanted:
            plain[feature] = f"{PLAIN_ENV}={requested}"
            continue
        try:
            probe()
        except Exception as e:  # Missing, or whatever else an unknown numba raises
            plain[feature] = str(e) or type(e).__name__
    return plain


def check_essential():
    """None, or what this numba lacks of the API the package cannot do without."""
    try:
        _probe_essential()
    except Exception as e:
        return str(e) or type(e).__name__
    return None


PLAIN = check()
_ESSENTIAL_MISSING = check_essential()


def uses(feature):
    """Whether ``feature`` (one of FEATURES) is on: its internals are there and not refused."""
    return feature not in PLAIN


_COMPILED_BY = (BY_SYMBOL, ON_DEMAND, EXCEPTION_EXITS)  # the features that change machine code


def mode():
    """The features that change the compiled code and are on, as a string: part of the JIT
    cache's stamp, so code compiled with and without one never shares a cache entry."""
    return ",".join(f for f in _COMPILED_BY if f not in PLAIN)


# features whose plain path costs compile time only: said when the process compiles; the
# others (slower solvers, no warm server) are said at every command; rng-state when used
_SAID_AT_COMPILE = (CACHE_STAMP, BY_SYMBOL, ON_DEMAND)
_SAID_WHEN_USED = (RNG_STATE,)


class _PlainNotice:
    said = False
    registered = False
    settings = ("", True, None)

    def __call__(self):
        program, quiet, stream = self.settings
        shown = [f for f in FEATURES if f in PLAIN and f not in _SAID_WHEN_USED]
        if self.said or quiet or not shown:
            return
        self.said = True
        out = sys.stderr if stream is None else stream
        why = "; ".join(f"{f}: {PLAIN[f]}" for f in shown)
        out.write(f"{program}: numba {numba.__version__}: numba's plain path for {why} "
                  "(same results, slower; docs/compile-time.md)\n")
        out.flush()


_notice = _PlainNotice()


def notice(program, quiet=False, stream=None, now=False):
    """One line on stderr, once per process and not when quiet, that names the features that
    take the plain path and why: when the process first compiles if they cost compile time
    only (and not ``now``), else now. Raises UnavailableInternal when the essential API is
    missing."""
    if _ESSENTIAL_MISSING is not None:
        raise UnavailableInternal(
            f"numba {numba.__version__} lacks {_ESSENTIAL_MISSING}, which lasvm-cli's "
            "compiled code needs (docs/compile-time.md lists the numba versions tested)")
    _notice.settings = (program, quiet, stream)
    plain = [f for f in PLAIN if f not in _SAID_WHEN_USED]
    if not plain:
        return
    if not now and uses(COMPILE_EVENTS) and all(f in _SAID_AT_COMPILE for f in plain):
        if not _notice.registered:
            _notice.registered = True
            on_first_compile(_notice)
    else:
        _notice()


# ---------------------------------------------------------------------------------------------
# cache-stamp: the package's stamp on every function of the package (base/jit_cache.py)


def install_cache_stamp(in_package, stamp, is_ours):
    """Locators that answer for files ``in_package(path)`` with ``stamp()`` as the source stamp,
    ahead of numba's; and numba's index loader reading an index ``is_ours(source_stamp)`` that
    cannot be unpickled as empty (stale by definition). Other functions are left to numba's
    locators and loader as they are."""
    impl, bases, index_file = _probe_cache_stamp()

    def package_locator(base):
        def from_function(cls, py_func, py_file):
            if not in_package(py_file):
                return None
            return super(locator, cls).from_function(py_func, py_file)

        locator = type(f"Package{base.__name__.lstrip('_')}", (base,), {
            "get_source_stamp": lambda self: stamp(),
            "from_function": classmethod(from_function),
        })
        return locator

    def tolerant(load_index):
        @functools.wraps(load_index)
        def load(self):
            try:
                return load_index(self)
            except Exception:  # unpickling a stale index: any error of a missing module or type
                if not is_ours(self._source_stamp):
                    raise
                return {}

        load.tolerant = True
        return load

    if not getattr(index_file._load_index, "tolerant", False):
        index_file._load_index = tolerant(index_file._load_index)
    if not any(getattr(c, "__name__", "").startswith("Package") for c in impl._locator_classes):
        impl._locator_classes = [package_locator(b) for b in bases] + list(impl._locator_classes)


# functions of the package numba found no folder to cache in (compiled in memory instead)
UNCACHED = []


def install_cache_fallback(is_ours):
    """A function of ours (``is_ours(module name)``) for which numba finds no writable cache
    folder (NUMBA_CACHE_DIR, the package's __pycache__ and the user-wide cache all refused: a
    sandbox that lets a command write only in its own folder, a read-only install run by a
    user without a home) compiles in memory, as a function without ``cache=True`` does,
    instead of failing its module's import; it is listed in UNCACHED for the compile notice."""
    from numba.core.dispatcher import Dispatcher

    enable = Dispatcher.enable_caching
    if getattr(enable, "falls_back", False):
        return

    @functools.wraps(enable)
    def enable_caching(self):
        try:
            enable(self)
        except RuntimeError as e:
            if "no locator available" not in str(e) or not is_ours(self.py_func.__module__):
                raise
            UNCACHED.append(f"{self.py_func.__module__}.{self.py_func.__qualname__}")

    enable_caching.falls_back = True
    Dispatcher.enable_caching = enable_caching


def package_locator_of(dispatcher):
    """The locator numba chose for a cached dispatcher (tests)."""
    return dispatcher._cache._impl.locator


# ---------------------------------------------------------------------------------------------
# calls by symbol and rows on demand (base/jit_cache.py)


def install_reload_init_keeper(is_ours):
    """numba's CompileResult._rebuild, keeping the loaders of ours (``is_ours(loader)``) in the
    rebuilt library's reload_init.

    A caller compiled later links in a callee's library and inherits its reload_init from
    the library; numba rebuilds a library loaded from the cache without it, so a caller of a
    callee that calls a by_symbol function would not load that function first. Other
    functions' libraries are rebuilt exactly as numba does."""
    result = _probe_reload_init()
    rebuild = result._rebuild
    if getattr(rebuild, "keeps_reload_init", False):
        return

    @functools.wraps(rebuild.__func__)
    def _rebuild(cls, *args, **kwargs):
        cres = rebuild.__func__(cls, *args, **kwargs)
        ours = [fn for fn in (cres.reload_init or ()) if is_ours(fn)]
        if ours:
            cres.library._reload_init.update(ours)
        return cres

    _rebuild.keeps_reload_init = True
    result._rebuild = classmethod(_rebuild)


def route_calls_by_symbol(dispatcher, make_loader):
    """Make the callers of ``dispatcher`` call each of its overloads by its symbol.

    ``make_loader(cres)`` gives the picklable loader a caller records in its reload_init."""
    add_overload = dispatcher.add_overload

    def add_overload_by_symbol(cres):
        add_overload(cres)
        impl = _call_by_symbol(cres.fndesc, make_loader(cres))
        selector = dispatcher.targetctx._defns[cres.entry_point]
        selector.versions = [(sig, impl if sig == impl.signature else f)
                             for sig, f in selector.versions]
        selector._cache.clear()

    dispatcher.add_overload = add_overload_by_symbol


def _call_by_symbol(fndesc, loader):
    """numba's call of a user function (imputils.user_function) without its library."""
    from numba.core import cgutils
    from numba.core.imputils import fix_returning_optional, impl_ret_new_ref

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


def symbol_of(cres):
    """The native symbol of a compiled overload."""
    return cres.fndesc.llvm_func_name


def symbol_and_address(cres):
    """The native symbol of a compiled overload and its address in this process."""
    name = cres.fndesc.llvm_func_name
    return name, cres.library.get_pointer_to_function(name)


def call_through_slot(slot, none_type):
    """Codegen of an ``@intrinsic`` that calls the function whose address ``slot.symbol``
    holds (a 64-bit global) with the tuple's items, if that address is not 0; returns whether
    it called. ``slot`` goes into the caller's reload_init (it opens the slot before the
    caller's cached code is linked)."""
    from numba.core import cgutils

    def codegen(context, builder, signature, llargs):
        context.active_code_library._reload_init.add(slot)
        address = builder.module.globals.get(slot.symbol)
        if address is None:  # a declaration: the slot's address is added by slot.open
            address = ir.GlobalVariable(builder.module, ir.IntType(64), slot.symbol)
        pointer = builder.load(address)
        ready = builder.icmp_unsigned("!=", pointer, pointer.type(0))
        with builder.if_then(ready):
            fnty = context.call_conv.get_function_type(none_type, slot.args)
            function = builder.inttoptr(pointer, fnty.as_pointer())
            values = [builder.extract_value(llargs[0], i) for i in range(len(slot.args))]
            status, _ = context.call_conv.call_function(builder, function, none_type,
                                                        slot.args, values)
            with cgutils.if_unlikely(builder, status.is_error):
                context.call_conv.return_status_propagate(builder, status)
        return ready

    return codegen


def add_symbol(name, address):
    """llvmlite's process-wide symbol table (public API): ``name`` resolves to ``address``."""
    llvm.add_symbol(name, address)


# ---------------------------------------------------------------------------------------------
# exception exits


_TAG = "numba_exception_output"


def install_exception_exits():
    """Let numba's reference-count pruning see the exits of lasvm-cli's functions that
    propagate a callee's error.

    Numba increfs every array of every argument at a function's entry (a namedtuple of 14
    arrays: 14 atomic increments, and 14 decrements at its exit) and relies on llvmlite's
    RefPrune pass to remove the pairs. The pass's fan-out rule forgives an exit without the
    decref when that exit raises, and recognises a raising block by the store to ``excinfo``
    that numba tags with ``numba_exception_output``. Numba tags that store when a function
    raises itself, but not when it passes on the error of a jitted function it called
    (``return_status_propagate``). So any function that calls one which might fail (a kernel
    row, a cache fill) kept all of its pairs: measured on banana's SMO, 125 atomic pairs per
    iteration, a quarter of its time.

    This tags the propagating store the same way, outside ``try`` blocks only (inside one, the
    error continues into the handler instead of leaving the function), and only in functions
    whose symbol is lasvm-cli's. Pruning there is safe for the same reason as for a raise:
    the caller holds the references for the whole call. Installed before any function of the
    package compiles (base/jit_cache.py imports this module first).

    What else a function taking namedtuples of arrays needs for its pairs to go (the pass
    matches an incref to a decref of the same value, and gives up on a path that meets any
    other decref first): no views of an array in it (index the buffer at an offset:
    ``cache_row_at``); the namedtuples passed whole to callees (``st.y`` as an argument is a
    temporary decref'd after the call); no inlined helper taking them (its parameters are new
    references); and on each path all of them used for the last time in the same place
    (``cache.held``), since numba decrefs a variable at its last use and, where branches
    join, through a phi. Also observed, not explained: one call of the builtin ``max(a, b)``
    on two floats kept all 33 pairs of select_nu (a conditional expression does not). Checked
    by counting (gdb breakpoints on ``NRT_incref``) and in the optimised IR: select_so,
    select_hmg, select_nu, _take_step and the cache's row lookup keep none."""
    from numba.core import callconv

    conv = callconv.CPUCallConv
    propagate = conv.return_status_propagate
    if getattr(propagate, "tagged", False):
        return

    def return_status_propagate(self, builder, status):
        block = builder.block
        start = len(block.instructions)
        propagate(self, builder, status)
        if (getattr(builder, "_in_try_block", False)
                or not builder.function.name.startswith(_OWN_SYMBOL)):
            return
        for inst in block.instructions[start:]:
            if isinstance(inst, ir.StoreInstr) and inst.operands[1].name == "excinfo":
                inst.set_metadata(_TAG, builder.module.add_metadata([ir.IntType(1)(1)]))

    return_status_propagate.tagged = True
    conv.return_status_propagate = return_status_propagate


# ---------------------------------------------------------------------------------------------
# compile events (base/clock.py, base/progress.py)


class _NoCompileTime:
    """A TimingListener that never hears a compile (numba without events)."""

    done = False
    duration = 0.0


def compile_timer():
    """A listener of numba's compiler lock (compiling or loading from the cache, outermost
    only), registered; stop it with :func:`stop_compile_timer`. ``.done`` / ``.duration``."""
    if not uses(COMPILE_EVENTS):
        return _NoCompileTime()
    from numba.core import event

    listener = event.TimingListener()
    event.register("numba:compiler_lock", listener)
    return listener


def stop_compile_timer(listener):
    if isinstance(listener, _NoCompileTime):
        return
    from numba.core import event

    event.unregister("numba:compiler_lock", listener)


def on_first_compile(callback):
    """Call ``callback()`` when this process starts compiling a function (each time; the
    callback decides whether to act). Nothing happens without numba's events."""
    if not uses(COMPILE_EVENTS):
        return
    from numba.core import event

    class CompileListener(event.Listener):
        def on_start(self, ev):
            callback()

        def on_end(self, ev):
            pass

    event.register("numba:compile", CompileListener())


class _HoldInterrupts:
    """The listener behind :func:`hold_interrupts_while_compiling`, on numba's compile events
    (which loading from the cache does not fire)."""

    def __init__(self):
        self.depth = 0  # nested compiles in the main thread
        self.previous = None  # the SIGINT handler replaced during the outermost compile
        self.caught = False

    def hold(self, signum, frame):
        self.caught = True

    def compile_start(self):
        if threading.current_thread() is not threading.main_thread():
            return
        self.depth += 1
        handler = signal.getsignal(signal.SIGINT)
        if self.depth == 1 and callable(handler):
            self.previous = handler
            signal.signal(signal.SIGINT, self.hold)

    def compile_end(self):
        if threading.current_thread() is not threading.main_thread() or self.depth == 0:
            return
        self.depth -= 1
        if self.depth == 0 and self.previous is not None:
            handler, self.previous = self.previous, None
            signal.signal(signal.SIGINT, handler)
            if self.caught:
                # handed over here, where numba's compile is whole: the function just compiled
                # is not saved to the cache (numba saves it after this event)
                self.caught = False
                handler(signal.SIGINT, sys._getframe(1))


_holding = []


def hold_interrupts_while_compiling():
    """A Ctrl-C while numba compiles in the main thread takes effect when the outermost
    compile ends: the command's own handler gets it then (exit 130, or a run's saved state).
    Raised inside a compile, a KeyboardInterrupt can land between an LLVM call and the
    llvmlite object that owns its result (a module freed twice: a segfault at exit), in an
    object's ``__del__`` or LLVM's object-cache callback (swallowed: the command ignores the
    Ctrl-C, or fails later with numba's "no compiled object yet"). Once per process; nothing
    without numba's events."""
    if _holding or not uses(COMPILE_EVENTS):
        return
    from numba.core import event

    hold = _HoldInterrupts()

    class Compile(event.Listener):
        def on_start(self, ev):
            hold.compile_start()

        def on_end(self, ev):
            hold.compile_end()

    _holding.append(hold)
    event.register("numba:compile", Compile())


# ---------------------------------------------------------------------------------------------
# the warm server's process (cli/warm_server.py): compiled code in, threads out


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


def defer_thread_launch():
    """Make numba's thread launch register the layer's symbols only (what cached parallel
    code needs to link); returns numba's own launch, which a worker restores and calls
    (:func:`restore_thread_launch`). None when numba's internals are not the ones this was
    written against: then there is no warm server. The warm server's process only."""
    if not uses(WARM_SERVER):
        return None
    try:
        from numba.np.ufunc import parallel

        launch = parallel._launch_threads
        library = _threading_library()
    except (ImportError, AttributeError):
        return None
    if library is None or parallel._is_initialized:
        return None
    missing = [a for a in _LAYER_SYMBOLS.values() if not hasattr(library, a)]
    if missing:
        return None

    def register_symbols():
        for symbol, attribute in _LAYER_SYMBOLS.items():
            llvm.add_symbol(symbol, getattr(library, attribute))
        # numba.get_num_threads() (kernels.py calls it at import) reads the launched layer
        parallel._get_num_threads = lambda: parallel.NUM_THREADS

    parallel._launch_threads = register_symbols
    return launch


def restore_thread_launch(launch):
    """In a worker: numba's own launch back, and called (this process's own threads), before
    any loaded code reaches a parallel region."""
    from numba.np.ufunc import parallel

    parallel._launch_threads = launch
    launch()


def threads_launched():
    from numba.np.ufunc import parallel

    return bool(parallel._is_initialized)


def warm_typeof(classes):
    """numba's typeof finds the type of each argument through functools.singledispatch on its
    class, and the first dispatch of a class walks the ABC registry (about 1,100 subclass
    checks, 67 ms): dispatched here once for ``classes``, so forks inherit the answers."""
    if not uses(WARM_SERVER):
        return
    from numba.core.typing.typeof import typeof_impl

    for cls in classes:
        typeof_impl.dispatch(cls)


def cached(value):
    """Whether ``value`` is a jitted function that caches to disk (``cache=True``)."""
    from numba.core.dispatcher import Dispatcher

    return (isinstance(value, Dispatcher) and getattr(value, "_cache", None) is not None
            and hasattr(value._cache, "_cache_file"))


def cached_signatures(dispatcher):
    """The signatures of ``dispatcher`` that numba's cache holds for this machine (empty when
    the index cannot be read)."""
    try:
        index = dispatcher._cache._cache_file._load_index()
        magic = dispatcher.targetctx.codegen().magic_tuple()
    except Exception:
        return []
    return [key[0] for key in index if key[1] == magic]


def cache_folder(dispatcher):
    return dispatcher._cache._cache_path


# ---------------------------------------------------------------------------------------------
# the state of numba's random generator (solvers/s2do_online.py)


def _rng_unavailable(what):
    return UnavailableInternal(
        f"{what} needs the state of numba's random generator, which numba "
        f"{numba.__version__} does not expose ({PLAIN.get(RNG_STATE)})")


def rng_state(what):
    """numba's generator state of this thread as a list of ints (index, then the key)."""
    if not uses(RNG_STATE):
        raise _rng_unavailable(what)
    from numba import _helperlib

    index, key = _helperlib.rnd_get_state(_helperlib.rnd_get_np_state_ptr())
    return [int(index)] + [int(v) for v in key]


def set_rng_state(words, what):
    if not uses(RNG_STATE):
        raise _rng_unavailable(what)
    from numba import _helperlib

    _helperlib.rnd_set_state(_helperlib.rnd_get_np_state_ptr(),
                             (int(words[0]), [int(v) for v in words[1:]]))
