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

import functools
import hashlib
import os

from numba.core import caching
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


def _install():
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
