"""svmlight training data split into parts that separate processes read on their own: byte
ranges of plain files, whole compressed files (``svm-train --partitions``,
training/cascade.py).

A part is ``(path, start, end)``; ``end`` None means the whole file (a compressed file cannot
be entered in the middle: it is always one part). A byte range [start, end) owns the lines
that *start* inside it: the reader skips the partial line it begins in (which belongs to the
range before) and reads past ``end`` to the end of the last line it owns, so consecutive ranges
hold every line exactly once, in file order, whatever the cut points. Each reader opens only its
own file and reads only about its own bytes; nothing is gathered in one place.

Errors name the file and its line as :func:`~lasvm_cli.io.svmlight.read_svmlight` does: the
part knows only its own lines, so on a fault the newlines before ``start`` are counted (only
then) to give the line number in the file.
"""

import glob as _glob
import os

import numpy as np

from ..base.errors import InputFormatError
from .svmlight import SvmlightData, iter_svmlight, parse_block

CHUNK_BYTES = 1 << 24  # text parsed at a time (as read_svmlight)
COMPRESSED = (".gz", ".bz2", ".xz", ".lzma")  # the suffixes the reader decompresses


def compressed(path):
    return os.fspath(path).endswith(COMPRESSED)


def expand_sources(sources):
    """The training files of ``sources`` (a path, a glob pattern, or a list of them), in the
    order given, each pattern's matches sorted. A pattern that matches nothing, or a path that
    is not a readable file, is an error naming it."""
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    files = []
    for s in sources:
        s = os.fspath(s)
        if s == "-":
            raise InputFormatError("<stdin>", None, "partitions are read from files, not from "
                                   "standard input")
        if _glob.has_magic(s) and not os.path.exists(s):
            found = sorted(_glob.glob(s))
            if not found:
                raise FileNotFoundError(2, "no file matches", s)
            files += found
        else:
            files.append(s)
    for f in files:
        if not os.path.isfile(f):
            raise FileNotFoundError(2, "not a file", f)
    return files


def split_parts(files, n_parts):
    """About ``n_parts`` parts over ``files``: one per compressed file, the plain files' bytes
    cut into ranges in proportion to their sizes (at least one range per non-empty file, at
    most one per 4 KiB). Returns [(path, start, end)] in file order."""
    sizes = [os.path.getsize(f) for f in files]
    plain = [(f, s) for f, s in zip(files, sizes) if not compressed(f)]
    n_compressed = len(files) - len(plain)
    plain_bytes = sum(s for _, s in plain)
    budget = max(int(n_parts) - n_compressed, len(plain))
    parts = []
    for f, size in zip(files, sizes):
        if compressed(f):
            parts.append((f, 0, None))
            continue
        k = max(1, round(budget * size / plain_bytes)) if plain_bytes else 1
        k = max(1, min(k, size // 4096 or 1))
        cuts = [size * i // k for i in range(k + 1)]
        parts += [(f, cuts[i], cuts[i + 1]) for i in range(k)]
    return parts


def _owned_text(f, start, end):
    """Yield the bytes of the lines that start in [start, end) of the open plain file ``f``, in
    blocks of complete lines (about CHUNK_BYTES each). Returns the offset of the first one."""
    if start > 0:
        f.seek(start - 1)
        if f.read(1) != b"\n":
            f.readline()  # the line under way at ``start`` belongs to the range before
    pos = f.tell()
    first = pos
    carry = b""
    while pos < end:
        data = f.read(min(CHUNK_BYTES, end - pos))
        if not data:
            break
        pos += len(data)
        if pos >= end and not data.endswith(b"\n"):
            data += f.readline()  # the last line owned runs past ``end``
        cut = data.rfind(b"\n")
        if cut < 0:
            carry += data
            continue
        yield first, carry + data[:cut + 1]
        carry = data[cut + 1:]
    if carry:
        yield first, carry


def _lines_before(path, offset):
    """Number of newlines in the first ``offset`` bytes of ``path`` (for an error's line)."""
    n = 0
    with open(path, "rb") as f:
        left = offset
        while left > 0:
            data = f.read(min(CHUNK_BYTES, left))
            if not data:
                break
            n += data.count(b"\n")
            left -= len(data)
    return n


def _cat(parts, dtype):
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


def read_part(part, *, zero_based=False, check_norms=True):
    """The rows of one part ``(path, start, end)`` as SvmlightData (labels and CSR rows as
    read); ``end`` None: the whole file, plain or compressed (read_svmlight's reader). Faults
    raise InputFormatError with the file's own line numbers."""
    path, start, end = part
    if end is None:
        blocks = list(iter_svmlight(path, zero_based=zero_based, check_norms=check_norms,
                                    chunk_bytes=CHUNK_BYTES))
    else:
        blocks = list(_range_blocks(path, start, end, zero_based, check_norms))
    lens = _cat([np.diff(b.indptr) for b in blocks], np.int64)
    indptr = np.zeros(lens.size + 1, np.int64)
    np.cumsum(lens, out=indptr[1:])
    return SvmlightData(y=_cat([b.y for b in blocks], np.float64), indptr=indptr,
                        indices=_cat([b.indices for b in blocks], np.int32),
                        values=_cat([b.values for b in blocks], np.float64),
                        max_index=max([b.max_index for b in blocks] + [0]))


def _range_blocks(path, start, end, zero_based, check_norms):
    """SvmlightData blocks of the lines of plain ``path`` that start in [start, end)."""
    min_index = 0 if zero_based else 1
    line = 0  # lines of this part parsed so far
    first = 0
    with open(path, "rb") as f:
        try:
            for first, block in _owned_text(f, start, end):
                buf = np.frombuffer(bytearray(block), dtype=np.uint8)
                nl = int(np.count_nonzero(buf == 10))
                if buf[-1] == 10:
                    buf = buf[:-1]
                else:
                    nl += 1
                y, rowlen, indices, values, mi = parse_block(buf, min_index, line + 1, path,
                                                             check_norms)
                line += nl
                indptr = np.zeros(rowlen.size + 1, np.int64)
                np.cumsum(rowlen, out=indptr[1:])
                yield SvmlightData(y=y, indptr=indptr, indices=indices, values=values,
                                   max_index=mi)
        except InputFormatError as e:
            if e.line is None or not first:
                raise
            raise InputFormatError(path, e.line + _lines_before(path, first), e.reason,
                                   e.token) from None
