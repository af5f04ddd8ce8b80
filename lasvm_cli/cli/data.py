"""``lasvm data list | fetch | path``: the data sets of the benchmarks, paper reproductions and
tests (lasvm_cli/tools/datasets.py: the registry, the checks and the downloads; docs/data.md).

Every failure is one line ``lasvm data: ...`` on stderr and exit status 1 (130 for Ctrl-C),
no traceback; ``fetch`` goes on with the other sets after one fails. ``fetch all`` is every set
with a mirror, and without one every set with a public source (the others named on stderr,
not an error); ``fetch`` without a name is a usage error (mnist alone is 15 MB to download).
Status lines go to stdout (none with ``-q``); a download's bar goes to stderr, only when that
is a terminal."""

import os
import sys

from ..tools import datasets
from .report import write_stdout

PROG = "lasvm data"


def _error(text):
    from ..base.progress import bars_cleared

    with bars_cleared():
        sys.stderr.write(f"{PROG}: {text}\n")
        sys.stderr.flush()


def _guarded(fn):
    try:
        return fn()
    except datasets.DataError as e:
        _error(str(e))
        return 1
    except KeyboardInterrupt:
        _error("interrupted")
        return 130


def _where():
    folder = datasets.data_dir()
    how = f"${datasets.DATA_ENV}" if os.environ.get(datasets.DATA_ENV) else "default"
    return folder, how


def _mb(n):
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} kB"


def list_sets():
    def run():
        folder, how = _where()
        mirror = os.environ.get(datasets.MIRROR_ENV)
        lines = [f"data folder: {folder} ({how})\n",
                 f"mirror: {mirror} (${datasets.MIRROR_ENV})\n" if mirror else
                 f"mirror: none (--mirror URL or ${datasets.MIRROR_ENV})\n",
                 f"{'name':<12} {'files':<11} {'size':>8}  {'state':<8} source\n"]
        for name in datasets.names():
            ds = datasets.REGISTRY[name]
            state = datasets.cached_state(ds, folder)
            source = ds.source.where if ds.source else "mirror only"
            lines.append(f"{name:<12} {'+'.join(ds.parts):<11} {_mb(ds.xz_bytes):>8}  "
                         f"{state:<8} {source}\n")
        lines.append("size: the .svm.xz files; state: files present (fetch checks their "
                     "sha256)\n")
        write_stdout("".join(lines))
        return 0
    return _guarded(run)


def show_path(name=None):
    def run():
        folder = datasets.data_dir()
        if name is not None:
            if name not in datasets.REGISTRY:
                raise datasets.DataError(f"unknown data set {name} (known: "
                                         f"{' '.join(datasets.names())})")
            folder = folder / name
        write_stdout(f"{folder}\n")
        return 0
    return _guarded(run)


def fetch(names, mirror=None, timeout=datasets.TIMEOUT, quiet=False):
    def log(text):
        if not quiet:
            write_stdout(text + "\n")

    def run():
        sets = datasets.resolve(list(names))
        if "all" in names and mirror is None:  # 'all' without a mirror: what can be converted
            skipped = [ds.name for ds in sets if ds.source is None]
            sets = [ds for ds in sets if ds.source is not None]
            if skipped and not quiet:
                _error(f"skipping {', '.join(skipped)}: no public source to convert them from, "
                       f"only a mirror (--mirror URL or ${datasets.MIRROR_ENV})")
        folder = datasets.data_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise datasets.DataError(f"cannot create the data folder {folder}: "
                                     f"{e.strerror or e}") from None
        show = not quiet and datasets.stderr_is_terminal()
        failed = 0
        for ds in sets:
            try:
                got = datasets.fetch_one(ds, folder, mirror, timeout, show, log)
            except datasets.DataError as e:
                _error(str(e) if str(e).startswith(ds.name) else f"{ds.name}: {e}")
                failed += 1
                continue
            if got == "cached":
                log(f"{ds.name}: cached in {folder / ds.name} (sha256 checked)")
            else:
                log(f"{ds.name}: done, in {folder / ds.name} (sha256 checked)")
        return 1 if failed else 0
    return _guarded(run)
