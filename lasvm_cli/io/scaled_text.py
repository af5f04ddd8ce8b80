"""svm-scale's output lines, rendered by compiled code: the label as ``%.17g``, then
``index:%g `` per entry (C's ``printf``). The compiled ``%g`` covers the common values; a
value near a rounding tie, or of a huge or tiny magnitude, sends its row to Python's exact
formatting, so the bytes are always C's."""

import numpy as np
from numba import njit
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)


_P10 = np.array([10.0**k for k in range(23)], dtype=np.float64)


@njit(cache=True)
def _put_uint(buf, m, x):
    """Write the decimal digits of x >= 0 at buf[m:]; return the new end."""
    if x == 0:
        buf[m] = 48
        return m + 1
    k = 0
    t = x
    while t > 0:
        k += 1
        t //= 10
    end = m + k
    t = x
    for j in range(k):
        buf[end - 1 - j] = 48 + t % 10
        t //= 10
    return end


@njit(cache=True)
def _put_g(buf, m, v):
    """Write C's ``%g`` of v at buf[m:]; return the new end, or -1 when v needs the exact
    (slow) path: values near a rounding tie, huge/tiny magnitudes or non-finite values."""
    if v == 0.0:
        if np.signbit(v):
            buf[m] = 45
            m += 1
        buf[m] = 48
        return m + 1
    a = abs(v)
    if not (1e-280 < a < 1e280):
        return -1
    e = int(np.floor(np.log10(a)))
    r = 0
    for _ in range(4):
        p = 5 - e
        if p == 0:
            t = a
        elif 0 < p <= 22:
            t = a * _P10[p]
        elif -22 <= p < 0:
            t = a / _P10[-p]
        elif p > 22:
            t = a * 10.0**p
        else:
            t = a / 10.0 ** (-p)
        if t >= 1e6:
            e += 1
            continue
        if t < 1e5:
            e -= 1
            continue
        n = np.floor(t)
        frac = t - n
        if abs(frac - 0.5) < 1e-7:
            return -1
        r = int(n)
        if frac > 0.5:
            r += 1
        if r == 1000000:
            r = 100000
            e += 1
        break
    if r == 0:
        return -1
    if v < 0:
        buf[m] = 45
        m += 1
    # six digits of r, trailing zeros dropped
    digits = np.empty(6, dtype=np.uint8)
    t = r
    for j in range(6):
        digits[5 - j] = 48 + t % 10
        t //= 10
    nd = 6
    while nd > 1 and digits[nd - 1] == 48:
        nd -= 1
    if -4 <= e < 6:
        if e >= 0:
            for j in range(e + 1):
                buf[m] = digits[j] if j < nd else 48
                m += 1
            if nd > e + 1:
                buf[m] = 46
                m += 1
                for j in range(e + 1, nd):
                    buf[m] = digits[j]
                    m += 1
        else:
            buf[m] = 48
            buf[m + 1] = 46
            m += 2
            for _ in range(-e - 1):
                buf[m] = 48
                m += 1
            for j in range(nd):
                buf[m] = digits[j]
                m += 1
    else:
        buf[m] = digits[0]
        m += 1
        if nd > 1:
            buf[m] = 46
            m += 1
            for j in range(1, nd):
                buf[m] = digits[j]
                m += 1
        buf[m] = 101
        buf[m + 1] = 45 if e < 0 else 43
        m += 2
        x = abs(e)
        if x < 10:
            buf[m] = 48
            m += 1
        m = _put_uint(buf, m, x)
    return m


@njit(cache=True)
def _render(lab, lab_off, ptr, oidx, oval):
    """Rows as bytes: label, ' ', then 'index:%g ' per entry, then a newline.

    Returns (bytes, row_end offsets, rows that need the exact Python path)."""
    nr = ptr.shape[0] - 1
    cap = lab.shape[0] + nr * 2 + oidx.shape[0] * 26
    buf = np.empty(cap, dtype=np.uint8)
    row_end = np.empty(nr, dtype=np.int64)
    bad = np.zeros(nr, dtype=np.bool_)
    m = 0
    for r in range(nr):
        for k in range(lab_off[r], lab_off[r + 1]):
            buf[m] = lab[k]
            m += 1
        buf[m] = 32
        m += 1
        for k in range(ptr[r], ptr[r + 1]):
            m = _put_uint(buf, m, oidx[k])
            buf[m] = 58
            m2 = _put_g(buf, m + 1, oval[k])
            if m2 < 0:
                bad[r] = True
                m2 = m + 1
            m = m2
            buf[m] = 32
            m += 1
        buf[m] = 10
        m += 1
        row_end[r] = m
    return buf[:m].copy(), row_end, bad


def _format_rows_py(labels, ptr, oidx, oval):
    idx = oidx.tolist()
    val = oval.tolist()
    p = ptr.tolist()
    out = []
    for r, label in enumerate(labels):
        a, b = p[r], p[r + 1]
        args = [label]
        for k in range(a, b):
            args.append(idx[k])
            args.append(val[k])
        out.append(("%.17g " + "%d:%g " * (b - a) + "\n") % tuple(args))
    return out


def format_block(labels, ptr, oidx, oval) -> bytes:
    """The bytes svm-scale prints for a block of rows (``printf("%.17g ")``, ``"%d:%g "``)."""
    strs = ["%.17g" % t for t in labels]
    lab = "".join(strs).encode("ascii")
    lab_off = np.zeros(len(strs) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in strs], out=lab_off[1:])
    data, row_end, bad = _render(np.frombuffer(lab, dtype=np.uint8), lab_off, ptr, oidx, oval)
    if not bad.any():
        return data.tobytes()
    # rare: some value needs exact rounding; redo those rows with Python's formatting
    pieces = []
    start = 0
    for r in range(len(strs)):
        end = int(row_end[r])
        if bad[r]:
            pieces.append(_format_rows_py([labels[r]], ptr[r : r + 2] - ptr[r],
                                          oidx[ptr[r] : ptr[r + 1]],
                                          oval[ptr[r] : ptr[r + 1]])[0].encode("ascii"))
        else:
            pieces.append(data[start:end].tobytes())
        start = end
    return b"".join(pieces)
