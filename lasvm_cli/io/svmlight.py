"""Streaming svmlight / LIBSVM data reader and writer.

The reader decodes the file in chunks (16 MiB by default). Each chunk is cut at its last
newline; the rest is carried over to the next chunk. A Numba tokenizer walks the bytes of a
chunk once, validates every token and converts numbers itself when that is exact (Clinger's
fast path: at most 15 significant digits and a power of ten up to 1e22, which covers what
LIBSVM tools and ``%g`` writers produce). Tokens outside the fast path (long mantissas, big
exponents) are located by the tokenizer and converted afterwards by Python's ``float``, so
every number equals ``float(token)`` exactly.

Per-chunk arrays are concatenated once at the end, so peak memory stays near twice the final
arrays plus one chunk.

Accepted, as LIBSVM accepts: space or tab separators (``\\r``, ``\\v``, ``\\f`` count as blanks,
so CRLF files work), leading/trailing blanks, no final newline, label-only rows (an all-zero
row), a trailing ``# comment``. Also accepted (LIBSVM rejects them): full-line ``#`` comments
(skipped but counted for line numbers) and ``qid:N`` tokens (ignored).

Rejected with :class:`~lasvm_cli.base.errors.InputFormatError` (1-based line numbers): empty or
blank lines, bad labels, bad or empty values, NaN and infinity, numbers out of the float64
range, negative indices, indices that do not ascend strictly, tokens that are not
``index:value``, and index 0 unless ``zero_based`` or ``precomputed``; with ``check_norms``,
rows whose squared norm would make kernel values overflow. A truncated or damaged ``.gz``,
``.bz2`` or ``.xz`` file is an InputFormatError naming the file and the fault (no line).
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import os
import re
import sys
import zlib
from dataclasses import dataclass

import numpy as np
from numba import njit
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)

from ..base.errors import InputFormatError

__all__ = ["SvmlightData", "iter_svmlight", "read_svmlight", "write_svmlight"]


@dataclass
class SvmlightData:
    """A sparse data set in CSR form; ``indices`` are the feature indices as written."""

    y: np.ndarray  # float64 [n]
    indptr: np.ndarray  # int64 [n+1]
    indices: np.ndarray  # int32 [nnz]
    values: np.ndarray  # float64 [nnz]
    max_index: int  # largest index seen (0 if none)

    @property
    def n(self) -> int:
        return int(self.y.shape[0])


# ---------------------------------------------------------------------------------------------
# Numba tokenizer

# error codes returned by the tokenizer; messages below
E_OK = 0
E_EMPTY_LINE = 1
E_BAD_LABEL = 2
E_NAN_LABEL = 3
E_NOT_PAIR = 4
E_BAD_INDEX = 5
E_NEG_INDEX = 6
E_INDEX_RANGE = 7
E_EMPTY_VALUE = 8
E_BAD_VALUE = 9
E_NAN_VALUE = 10
E_INDEX_ZERO = 11
E_NOT_ASCENDING = 12
E_BAD_QID = 13

_MESSAGES = {
    E_EMPTY_LINE: "empty line",
    E_BAD_LABEL: "label is not a number",
    E_NAN_LABEL: "NaN and infinity are not allowed",
    E_NOT_PAIR: "expected index:value",
    E_BAD_INDEX: "feature index is not an integer",
    E_NEG_INDEX: "negative feature index",
    E_INDEX_RANGE: "feature index is too large",
    E_EMPTY_VALUE: "missing feature value",
    E_BAD_VALUE: "feature value is not a number",
    E_NAN_VALUE: "NaN and infinity are not allowed",
    E_INDEX_ZERO: "index 0 is not allowed (use --zero-based for 0-based files)",
    E_NOT_ASCENDING: "feature indices must ascend strictly",
    E_BAD_QID: "qid must be an integer",
}
_OVERFLOW = "number out of range"

_POW10 = np.array([10.0**k for k in range(23)], dtype=np.float64)  # all exact in float64

# number parser status
_NUM_OK = 0
_NUM_SLOW = 1  # valid syntax, convert with Python float()
_NUM_BAD = 2
_NUM_NANINF = 3


@njit(cache=True, inline="always")
def _is_blank(c):
    # isspace() minus newline: space, \t, \v, \f, \r
    return c == 32 or c == 9 or c == 11 or c == 12 or c == 13


@njit(cache=True, inline="always")
def _lower(c):
    if 65 <= c <= 90:
        return c + 32
    return c


@njit(cache=True, inline="always")
def _is_nan_or_inf(buf, p, e):
    """True if buf[p:e] is nan, inf or infinity (any case)."""
    m = e - p
    if m == 3:
        a = _lower(buf[p])
        b = _lower(buf[p + 1])
        c = _lower(buf[p + 2])
        return (a == 110 and b == 97 and c == 110) or (a == 105 and b == 110 and c == 102)
    if m == 8:
        word = (105, 110, 102, 105, 110, 105, 116, 121)  # "infinity"
        for k in range(8):
            if _lower(buf[p + k]) != word[k]:
                return False
        return True
    return False


@njit(cache=True)
def _parse_number(buf, s, e):
    """Parse the decimal number buf[s:e] (non-empty); returns (status, value)."""
    p = s
    neg = False
    c = buf[p]
    if c == 43 or c == 45:  # + -
        neg = c == 45
        p += 1
    if p < e and (buf[p] == 110 or buf[p] == 78 or buf[p] == 105 or buf[p] == 73):  # n N i I
        if _is_nan_or_inf(buf, p, e):
            return _NUM_NANINF, 0.0
        return _NUM_BAD, 0.0
    mant = 0
    nsig = 0  # significant digits accumulated (leading zeros skipped)
    ndig = 0  # digits seen at all (integer + fraction)
    dexp = 0  # decimal exponent adjustment from digits after the point / dropped digits
    while p < e:
        d = np.int64(buf[p]) - 48
        if d < 0 or d > 9:
            break
        ndig += 1
        if nsig > 0 or d != 0:
            if nsig < 18:
                mant = mant * 10 + d
            else:
                dexp += 1
            nsig += 1
        p += 1
    if p < e and buf[p] == 46:  # .
        p += 1
        while p < e:
            d = np.int64(buf[p]) - 48
            if d < 0 or d > 9:
                break
            ndig += 1
            if nsig > 0 or d != 0:
                if nsig < 18:
                    mant = mant * 10 + d
                    dexp -= 1
                nsig += 1
            else:
                dexp -= 1
            p += 1
    if ndig == 0:
        return _NUM_BAD, 0.0
    exp = 0
    if p < e and (buf[p] == 101 or buf[p] == 69):  # e E
        p += 1
        eneg = False
        if p < e and (buf[p] == 43 or buf[p] == 45):
            eneg = buf[p] == 45
            p += 1
        if p >= e or not (48 <= buf[p] <= 57):
            return _NUM_BAD, 0.0
        while p < e and 48 <= buf[p] <= 57:
            if exp < 100000:
                exp = exp * 10 + (buf[p] - 48)
            p += 1
        if eneg:
            exp = -exp
    if p != e:
        return _NUM_BAD, 0.0
    if nsig == 0:
        return _NUM_OK, -0.0 if neg else 0.0
    if nsig > 15:
        return _NUM_SLOW, 0.0
    e10 = dexp + exp
    v = float(mant)  # exact: mant < 1e15 < 2**53
    if e10 == 0:
        pass
    elif 0 < e10 <= 22:
        v = v * _POW10[e10]
    elif -22 <= e10 < 0:
        v = v / _POW10[-e10]
    else:
        return _NUM_SLOW, 0.0
    return _NUM_OK, -v if neg else v


@njit(cache=True)
def _grown(slow):
    """``slow`` with twice the rows. Copied element by element: a slice assignment from an
    array makes numba compile its shape-mismatch message (string formatting), some seconds
    of every first run."""
    grown = np.empty((2 * slow.shape[0], slow.shape[1]), dtype=slow.dtype)
    for i in range(slow.shape[0]):
        for j in range(slow.shape[1]):
            grown[i, j] = slow[i, j]
    return grown


@njit(cache=True)
def _tokenize(buf, min_index, line_base):
    """Parse every line of ``buf``: its newlines separate lines, so it holds at least one.

    Returns (y, rowlen, indices, values, max_index, slow, nslow, err, err_line, err_s, err_e).
    ``slow`` rows are (start, end, target, line, token start): target >= 0 is a position in ``values``,
    target < 0 means label ``-target - 1``. On error the arrays hold what was parsed before it.
    """
    n = buf.shape[0]
    nlines = 1
    ncolon = 0
    for k in range(n):
        c = buf[k]
        if c == 10:
            nlines += 1
        elif c == 58:
            ncolon += 1
    y = np.empty(nlines, dtype=np.float64)
    rowlen = np.empty(nlines, dtype=np.int64)
    indices = np.empty(ncolon, dtype=np.int32)
    values = np.empty(ncolon, dtype=np.float64)
    slow = np.empty((16, 5), dtype=np.int64)
    nslow = 0
    nrow = 0
    nnz = 0
    max_index = 0
    line = line_base - 1
    p = 0
    err = 0
    err_s = 0
    err_e = 0
    te = 0
    while True:  # buf holds at least one line; every newline starts another
        line += 1
        # line spans [p, eol)
        eol = p
        while eol < n and buf[eol] != 10:
            eol += 1
        q = p
        while q < eol and _is_blank(buf[q]):
            q += 1
        if q == eol:
            err = E_EMPTY_LINE
            err_s = p
            err_e = p
            break
        if buf[q] == 35:  # '#': comment line
            if eol >= n:
                break
            p = eol + 1
            continue
        # label
        ts = q
        while q < eol and not _is_blank(buf[q]):
            q += 1
        st, v = _parse_number(buf, ts, q)
        if st == _NUM_BAD:
            err = E_BAD_LABEL
        elif st == _NUM_NANINF:
            err = E_NAN_LABEL
        if err != 0:
            err_s = ts
            err_e = q
            break
        if st == _NUM_SLOW:
            if nslow == slow.shape[0]:
                slow = _grown(slow)
            slow[nslow, 0] = ts
            slow[nslow, 1] = q
            slow[nslow, 2] = -nrow - 1
            slow[nslow, 3] = line
            slow[nslow, 4] = ts
            nslow += 1
        y[nrow] = v
        row_start = nnz
        prev = min_index - 1
        while True:
            while q < eol and _is_blank(buf[q]):
                q += 1
            if q >= eol or buf[q] == 35:
                break
            ts = q
            colon = -1
            while q < eol and not _is_blank(buf[q]):
                if buf[q] == 58 and colon < 0:
                    colon = q
                q += 1
            te = q
            if colon < 0:
                err = E_NOT_PAIR
                break
            # qid:N is ignored
            if (
                colon - ts == 3
                and _lower(buf[ts]) == 113
                and _lower(buf[ts + 1]) == 105
                and _lower(buf[ts + 2]) == 100
            ):
                k = colon + 1
                if k < te and (buf[k] == 43 or buf[k] == 45):
                    k += 1
                if k == te:
                    err = E_BAD_QID
                    break
                while k < te and 48 <= buf[k] <= 57:
                    k += 1
                if k != te:
                    err = E_BAD_QID
                    break
                continue
            # index
            k = ts
            ineg = False
            if buf[k] == 43 or buf[k] == 45:
                ineg = buf[k] == 45
                k += 1
            if k == colon:
                err = E_BAD_INDEX
                break
            idx = 0
            while k < colon and 48 <= buf[k] <= 57:
                if idx <= 2147483647:
                    idx = idx * 10 + (buf[k] - 48)
                k += 1
            if k != colon:
                err = E_BAD_INDEX
                break
            if ineg and idx != 0:
                err = E_NEG_INDEX
                break
            if idx > 2147483647:
                err = E_INDEX_RANGE
                break
            # value
            if colon + 1 == te:
                err = E_EMPTY_VALUE
                break
            st, v = _parse_number(buf, colon + 1, te)
            if st == _NUM_BAD:
                err = E_BAD_VALUE
                break
            if st == _NUM_NANINF:
                err = E_NAN_VALUE
                break
            if idx < min_index:
                err = E_INDEX_ZERO
                break
            if idx <= prev:
                err = E_NOT_ASCENDING
                break
            prev = idx
            if st == _NUM_SLOW:
                if nslow == slow.shape[0]:
                    slow = _grown(slow)
                slow[nslow, 0] = colon + 1
                slow[nslow, 1] = te
                slow[nslow, 2] = nnz
                slow[nslow, 3] = line
                slow[nslow, 4] = ts
                nslow += 1
            indices[nnz] = idx
            values[nnz] = v
            nnz += 1
            if idx > max_index:
                max_index = idx
        if err != 0:
            err_s = ts
            err_e = te
            break
        rowlen[nrow] = nnz - row_start
        nrow += 1
        if eol >= n:
            break
        p = eol + 1
    return (y[:nrow].copy(), rowlen[:nrow].copy(), indices[:nnz].copy(), values[:nnz].copy(),
            max_index, slow, nslow, err, line, err_s, err_e)


# ---------------------------------------------------------------------------------------------
# Python driver


def _compression(source):
    """'gzip', 'bzip2', 'xz' or None, from the file name (as the reader opens it)."""
    if isinstance(source, (str, os.PathLike)) and os.fspath(source) != "-":
        path = os.fspath(source)
        if path.endswith(".gz"):
            return "gzip"
        if path.endswith(".bz2"):
            return "bzip2"
        if path.endswith(".xz") or path.endswith(".lzma"):
            return "xz"
    return None


@contextlib.contextmanager
def open_binary(source):
    if isinstance(source, (str, os.PathLike)) and os.fspath(source) == "-":
        yield sys.stdin.buffer
        return
    path = os.fspath(source)
    kind = _compression(path)
    if kind == "gzip":
        f = gzip.open(path, "rb")
    elif kind == "bzip2":
        f = bz2.open(path, "rb")
    elif kind == "xz":
        f = lzma.open(path, "rb")
    else:
        f = open(path, "rb")
    with f:
        yield f


def _read_chunk(f, size, name, kind):
    """``f.read(size)``; a damaged compressed stream or a failing read is an InputFormatError
    naming the file (opening errors stay OSError: the CLI says it can't open the file)."""
    try:
        return f.read(size)
    except EOFError:
        raise InputFormatError(name, None, f"truncated {kind} file: the compressed data end "
                               "before the end-of-stream marker") from None
    except (OSError, lzma.LZMAError, zlib.error) as e:
        detail = getattr(e, "strerror", None) or str(e) or type(e).__name__
        if kind is None:
            raise InputFormatError(name, None, f"read error: {detail}") from None
        raise InputFormatError(name, None, f"not a valid {kind} file, or a damaged one: "
                               f"{detail}") from None


def _display_name(source):
    if isinstance(source, (str, os.PathLike)) and os.fspath(source) == "-":
        return "<stdin>"
    return os.fspath(source)


def _token_text(buf, s, e):
    text = bytes(buf[s:e]).decode("utf-8", errors="replace")
    if len(text) > 60:
        text = text[:57] + "..."
    return text


def parse_block(buf, min_index, line_base, name, check_norms=False):
    """Tokenize one block of complete lines; returns (y, rowlen, indices, values, max_index).
    (Model files read their SV lines with it too: io/model_file.py.)

    The first fault in file order wins: a syntax error, a slow token that overflows, or (with
    ``check_norms``) a row whose squared norm is too large."""
    (y, rowlen, indices, values, max_index, slow, nslow, err, err_line, err_s, err_e) = _tokenize(
        buf, min_index, line_base
    )
    problem = None  # (line, reason, token) of the first fault found by the tokenizer or here
    if err != E_OK:
        token = None if err == E_EMPTY_LINE else _token_text(buf, err_s, err_e)
        problem = (int(err_line), _MESSAGES[int(err)], token)
    # slow tokens are in file order and all precede the tokenizer's error (if any); on an
    # error the arrays stop at its line, where only values already stored have a slot
    for k in range(nslow):
        s, e, target, line, ts = (int(x) for x in slow[k])
        v = float(bytes(buf[s:e]))
        if not np.isfinite(v):
            problem = (line, _OVERFLOW, _token_text(buf, ts, e))
            break
        if target >= 0:
            if target < values.shape[0]:
                values[target] = v
        elif -target - 1 < y.shape[0]:
            y[-target - 1] = v
    if check_norms:
        complete = int(rowlen.sum())
        found = _norm_problem(rowlen, values[:complete], buf, line_base)
        if found is not None and (problem is None or found[0] < problem[0]):
            problem = found
    if problem is not None:
        raise InputFormatError(name, *problem)
    return y, rowlen, indices, values, int(max_index)


# A row whose squared norm exceeds this makes kernel values overflow float64 (the RBF
# kernel's |x|^2 + |z|^2 - 2 x.z reaches four times it; 1/8 of DBL_MAX leaves room for rounding)
MAX_SQUARED_NORM = float(np.finfo(np.float64).max) / 8


def _norm_problem(rowlen, values, buf, line_base):
    """(line, reason, token) of the first row of the block whose squared norm is too large for
    kernels (MAX_SQUARED_NORM), its token the row's largest value; None when there is none.
    Rows whose values overflowed hold 0 there (the overflow is reported on its own)."""
    if values.size == 0:
        return None
    biggest = float(np.max(np.abs(values)))
    if biggest * biggest * int(rowlen.max()) <= MAX_SQUARED_NORM:
        return None
    with np.errstate(over="ignore"):
        rows = np.repeat(np.arange(rowlen.size), rowlen)
        sq = np.bincount(rows, weights=values * values, minlength=rowlen.size)
    bad = np.flatnonzero(~(sq <= MAX_SQUARED_NORM))
    if bad.size == 0:
        return None
    r = int(bad[0])
    row = -1
    for k, text in enumerate(bytes(buf).split(b"\n")):
        if not text.strip(b" \t\r\v\f").startswith(b"#"):
            row += 1
            if row == r:
                break
    token, top = None, -1.0
    for tok in text.split()[1:]:
        if tok.startswith(b"#"):
            break
        head, _, val = tok.partition(b":")
        if head.lower() != b"qid" and abs(float(val)) > top:
            token, top = tok.decode("ascii", "replace"), abs(float(val))
    return (line_base + k, f"feature values too large: the squared norm of this row is "
            f"{sq[r]:.3g}, over {MAX_SQUARED_NORM:.3g}, so kernel values would overflow "
            "(scale the data, e.g. with svm-scale)", token)


# LIBSVM's README writes a precomputed-kernel test row as "<label> 0:? 1:K(x,x1) ...": the
# serial number of a test row is never read ("? can be any value"). Read as 0:0.
_SERIAL_PLACEHOLDER = re.compile(rb"(^|[ \t])0:\?(?=[ \t\r\n]|$)", re.M)


def _parsed_blocks(source, zero_based, precomputed, chunk_bytes, check_norms=False,
                   start=(0, 1), positions=None):
    """Parse ``source`` chunk by chunk: yields (y, rowlen, indices, values, max_index) for each
    block of complete lines, in file order, holding one block of text at a time. ``start``:
    (byte offset of a line start, its line number) to begin at; ``positions``: a list that
    receives (byte offset, line) of each block's first line before the block is yielded."""
    name = _display_name(source)
    min_index = 0 if (zero_based or precomputed) else 1
    chunk_bytes = max(int(chunk_bytes), 1)
    offset, line_base = int(start[0]), int(start[1])
    kind = _compression(source)
    with open_binary(source) as f:
        _skip(f, offset, name, kind)
        carry = b""
        eof = False
        # the reads stay on the chunk_bytes grid of the whole file, so that a stream begun at
        # a block's offset reads the blocks a stream begun at 0 reads from there (a resumed
        # all-in-one stream grows its classes where the first reading did: at a block's start)
        size = chunk_bytes - offset % chunk_bytes
        while not eof:
            data = _read_chunk(f, size, name, kind)
            size = chunk_bytes
            if not data:
                eof = True
                block = carry
                carry = b""
            else:
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry = carry + data
                    continue
                block = carry + data[: cut + 1]
                carry = data[cut + 1 :]
            del data
            if not block:
                continue
            if precomputed and b"0:?" in block:
                block = _SERIAL_PLACEHOLDER.sub(rb"\g<1>0:0", block)
            # the block holds complete lines; drop its final newline so no phantom line follows
            if positions is not None:
                positions.append((offset, line_base))
            offset += len(block)
            buf = np.frombuffer(bytearray(block), dtype=np.uint8)
            del block
            nl = int(np.count_nonzero(buf == 10))
            if buf[-1] == 10:
                buf = buf[:-1]
            else:
                nl += 1  # last line without newline (end of file)
            parsed = parse_block(buf, min_index, line_base, name, check_norms)
            line_base += nl
            del buf
            yield parsed


def _skip(f, offset, name, kind):
    """Move ``f`` to byte ``offset`` of its (decompressed) text: a seek, or reading past the
    bytes where the file cannot seek (a pipe)."""
    if offset <= 0:
        return
    if f.seekable():
        f.seek(offset)
        return
    while offset > 0:
        data = _read_chunk(f, min(offset, 1 << 22), name, kind)
        if not data:
            return
        offset -= len(data)


def _indptr(rowlen):
    indptr = np.zeros(rowlen.shape[0] + 1, dtype=np.int64)
    np.cumsum(rowlen, out=indptr[1:])
    return indptr


def read_svmlight(source, *, zero_based=False, precomputed=False, chunk_bytes=1 << 24,
                  check_norms=False):
    """Read a LIBSVM/svmlight file (path, ``.gz``/``.bz2``/``.xz`` path, or ``"-"`` for stdin).

    ``indices`` keep the numbering of the file; index 0 is accepted only when ``zero_based``
    or ``precomputed`` is set. Raises :class:`InputFormatError` with a 1-based line number
    (without one for a damaged compressed file). ``check_norms`` also rejects rows whose
    squared norm exceeds :data:`MAX_SQUARED_NORM` (values such as 1e200, whose kernel values
    overflow float64; svm-train and svm-predict set it, svm-scale does not).
    Blocks are parsed one at a time and concatenated once at the end (peak memory about twice
    the final arrays).
    """
    ys, lens, idxs, vals = [], [], [], []
    max_index = 0
    for y, rowlen, indices, values, mi in _parsed_blocks(source, zero_based, precomputed,
                                                          chunk_bytes, check_norms):
        ys.append(y)
        lens.append(rowlen)
        idxs.append(indices)
        vals.append(values)
        max_index = max(max_index, mi)
    y = _concat(ys, np.float64)
    indptr = _indptr(_concat(lens, np.int64))
    del lens
    indices = _concat(idxs, np.int32)
    del idxs
    values = _concat(vals, np.float64)
    del vals
    return SvmlightData(y=y, indptr=indptr, indices=indices, values=values, max_index=max_index)


def iter_svmlight(source, *, zero_based=False, precomputed=False, chunk_bytes=1 << 22,
                  check_norms=False, start=(0, 1), positions=None):
    """Read a LIBSVM/svmlight file as a sequence of :class:`SvmlightData` blocks of complete
    rows (about ``chunk_bytes`` of text each), in file order, never holding more than one block:
    for one pass over files larger than memory (``svm-train --stream``). Same sources, checks
    and errors as :func:`read_svmlight`; each block's ``max_index`` is its own largest index.
    ``start`` = (byte offset, line number) of a line to begin at (a resumed stream);
    ``positions``, a list, receives each yielded block's (byte offset, line number).
    """
    for y, rowlen, indices, values, mi in _parsed_blocks(source, zero_based, precomputed,
                                                          chunk_bytes, check_norms, start,
                                                          positions):
        if y.shape[0]:
            yield SvmlightData(y=y, indptr=_indptr(rowlen), indices=indices, values=values,
                               max_index=mi)
        elif positions:
            positions.pop()  # a block of comment lines only: no rows, not yielded


def _concat(parts, dtype):
    if not parts:
        return np.empty(0, dtype=dtype)
    if len(parts) == 1:
        return np.ascontiguousarray(parts[0], dtype=dtype)
    out = np.concatenate(parts).astype(dtype, copy=False)
    parts.clear()
    return out


# ---------------------------------------------------------------------------------------------
# Writer


def write_svmlight(dest, y, indptr, indices, values, *, label_format="%.17g",
                   value_format="%.17g"):
    """Write CSR rows as ``label index:value ...`` lines; atomic when ``dest`` is a path."""
    if hasattr(dest, "write"):
        _write_rows(dest, y, indptr, indices, values, label_format, value_format)
        return
    from .atomic import atomic_write

    with atomic_write(dest) as f:
        _write_rows(f, y, indptr, indices, values, label_format, value_format)


def _write_rows(f, y, indptr, indices, values, label_format, value_format):
    y = np.asarray(y, dtype=np.float64)
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices).tolist()
    values = np.asarray(values, dtype=np.float64).tolist()
    pair = " %d:" + value_format
    lines = []
    ptr = indptr.tolist()
    for i, label in enumerate(y.tolist()):
        a, b = ptr[i], ptr[i + 1]
        args = [label]
        for k in range(a, b):
            args.append(indices[k])
            args.append(values[k])
        lines.append((label_format + pair * (b - a) + "\n") % tuple(args))
        if len(lines) >= 4096:
            f.write("".join(lines))
            lines.clear()
    if lines:
        f.write("".join(lines))
