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
from .svmlight import (SvmlightData, _compression, _concat, _indptr, _read_chunk,
                       open_binary, parse_block)

CHUNK_BYTES = 1 << 24  # text parsed at a time (as read_svmlight)


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
    plain = [(f, s) for f, s in zip(files, sizes) if _compression(f) is None]
    n_compressed = len(files) - len(plain)
    plain_bytes = sum(s for _, s in plain)
    budget = max(int(n_parts) - n_compressed, len(plain))
    parts = []
    for f, size in zip(files, sizes):
        if _compression(f) is not None:
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


def _blocks(path, start, end):
    """Blocks of complete lines of one part, with the offset where its first line starts."""
    if end is None:
        kind = _compression(path)
        with open_binary(path) as f:
            carry = b""
            while True:
                data = _read_chunk(f, CHUNK_BYTES, path, kind)
                if not data:
                    if carry:
                        yield 0, carry
                    return
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry += data
                    continue
                yield 0, carry + data[:cut + 1]
                carry = data[cut + 1:]
    else:
        with open(path, "rb") as f:
            yield from _owned_text(f, start, end)


def read_part(part, *, zero_based=False, check_norms=True):
    """The rows of one part ``(path, start, end)`` as SvmlightData (labels and CSR rows as
    read). Faults raise InputFormatError with the file's own line numbers."""
    path, start, end = part
    min_index = 0 if zero_based else 1
    ys, lens, idxs, vals = [], [], [], []
    max_index = 0
    line = 0  # lines of this part parsed so far
    first = 0
    try:
        for first, block in _blocks(path, start, end):
            buf = np.frombuffer(bytearray(block), dtype=np.uint8)
            nl = int(np.count_nonzero(buf == 10))
            if buf[-1] == 10:
                buf = buf[:-1]
            else:
                nl += 1
            y, rowlen, indices, values, mi = parse_block(buf, min_index, line + 1, path,
                                                         check_norms)
            line += nl
            ys.append(y)
            lens.append(rowlen)
            idxs.append(indices)
            vals.append(values)
            max_index = max(max_index, mi)
    except InputFormatError as e:
        if e.line is None or not first:
            raise
        raise InputFormatError(path, e.line + _lines_before(path, first), e.reason,
                               e.token) from None
    return SvmlightData(y=_concat(ys, np.float64), indptr=_indptr(_concat(lens, np.int64)),
                        indices=_concat(idxs, np.int32), values=_concat(vals, np.float64),
                        max_index=max_index)
