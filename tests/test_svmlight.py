"""Tests for the streaming svmlight reader and writer (lasvm_cli.io.svmlight)."""

import bz2
import gzip
import io
import lzma
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from lasvm_cli.tools.datasets import data_dir
from lasvm_cli.base.errors import InputFormatError
from lasvm_cli.io.svmlight import SvmlightData, read_svmlight, write_svmlight

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _write(tmp_path, text, name="d.svm"):
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(p)


def _rows(d):
    out = []
    for i in range(d.n):
        a, b = d.indptr[i], d.indptr[i + 1]
        out.append((d.y[i], list(zip(d.indices[a:b].tolist(), d.values[a:b].tolist()))))
    return out


def test_basic_shapes_and_dtypes(tmp_path):
    d = read_svmlight(_write(tmp_path, "1 1:0.5 3:2\n-1 2:1e3\n+1\n"))
    assert isinstance(d, SvmlightData)
    assert d.n == 3
    assert d.y.dtype == np.float64 and d.indptr.dtype == np.int64
    assert d.indices.dtype == np.int32 and d.values.dtype == np.float64
    assert d.indptr.tolist() == [0, 2, 3, 3]
    assert d.indices.tolist() == [1, 3, 2]
    assert d.values.tolist() == [0.5, 2.0, 1000.0]
    assert d.y.tolist() == [1.0, -1.0, 1.0]
    assert d.max_index == 3


def test_empty_file(tmp_path):
    d = read_svmlight(_write(tmp_path, ""))
    assert d.n == 0 and d.indptr.tolist() == [0] and d.max_index == 0
    assert d.indices.dtype == np.int32 and d.values.dtype == np.float64


@pytest.mark.parametrize(
    "text",
    [
        "1 1:2 3:4\n-1 2:5\n",  # plain
        "1\t1:2\t3:4\n-1\t2:5\n",  # tabs
        "1 1:2 3:4\r\n-1 2:5\r\n",  # CRLF
        "  1  1:2   3:4  \n\t-1 2:5 \t\n",  # leading/trailing blanks
        "1 1:2 3:4\n-1 2:5",  # no final newline
        "1 1:2 3:4 # a comment\n-1 2:5 #another one: with colon\n",  # trailing comments
    ],
)
def test_accepted_variants(tmp_path, text):
    d = read_svmlight(_write(tmp_path, text))
    assert _rows(d) == [(1.0, [(1, 2.0), (3, 4.0)]), (-1.0, [(2, 5.0)])]


def test_comment_lines_and_qid(tmp_path):
    text = "# header comment\n1 qid:3 1:2\n   # indented comment\n-1 qid:4 2:5\n3\n"
    d = read_svmlight(_write(tmp_path, text))
    assert _rows(d) == [(1.0, [(1, 2.0)]), (-1.0, [(2, 5.0)]), (3.0, [])]
    # comment lines still count for line numbers
    with pytest.raises(InputFormatError) as e:
        read_svmlight(_write(tmp_path, "# c\n# c\n1 2:1 1:1\n"))
    assert e.value.line == 3


@pytest.mark.parametrize(
    "label,value",
    [("+1", 1.0), ("1e0", 1.0), ("-1", -1.0), ("2.5", 2.5), ("+01e0", 1.0), ("-.5", -0.5),
     ("3.", 3.0), ("1E+2", 100.0), ("-0", -0.0)],
)
def test_labels(tmp_path, label, value):
    d = read_svmlight(_write(tmp_path, f"{label} 1:1\n"))
    assert d.y[0] == value
    assert np.signbit(d.y[0]) == np.signbit(value)


def test_zero_based_and_precomputed(tmp_path):
    p = _write(tmp_path, "1 0:1 2:3\n-1 0:2\n")
    for kw in ({"zero_based": True}, {"precomputed": True}):
        d = read_svmlight(p, **kw)
        assert d.indices.tolist() == [0, 2, 0]
        assert d.max_index == 2
    with pytest.raises(InputFormatError) as e:
        read_svmlight(p)
    assert (e.value.line, e.value.token) == (1, "0:1")
    assert "--zero-based" in e.value.reason


# (file text, expected line, expected token (None: no token), reason fragment)
ERROR_CASES = [
    ("1 1:1\n\n-1 1:2\n", 2, None, "empty line"),
    ("1 1:1\n   \t\n", 2, None, "empty line"),
    ("1 1:1\r\n\r\n", 2, None, "empty line"),
    ("1 1:1\n-1 1:1\n\n", 3, None, "empty line"),
    ("abc 1:1\n", 1, "abc", "label"),
    ("1,2 1:1\n", 1, "1,2", "label"),
    ("1 1:1\n1e 2:3\n", 2, "1e", "label"),
    ("nan 1:1\n", 1, "nan", "NaN and infinity"),
    ("1 1:1\n-inf 1:1\n", 2, "-inf", "NaN and infinity"),
    ("1 1:NaN\n", 1, "1:NaN", "NaN and infinity"),
    ("1 1:1 2:infinity\n", 1, "2:infinity", "NaN and infinity"),
    ("1 1:1\n1 2:\n", 2, "2:", "missing feature value"),
    ("1 1:abc\n", 1, "1:abc", "not a number"),
    ("1 1:1.2.3\n", 1, "1:1.2.3", "not a number"),
    ("1 1:0x10\n", 1, "1:0x10", "not a number"),
    ("1 1:1e400\n", 1, "1:1e400", "out of range"),
    ("1 1:1\n1e400 1:1\n", 2, "1e400", "out of range"),
    ("1 1:-1.7976931348623159e308\n", 1, "1:-1.7976931348623159e308", "out of range"),
    ("1 -1:1\n", 1, "-1:1", "negative"),
    ("1 1:1 3:1 2:1\n", 1, "2:1", "ascend strictly"),
    ("1 1:1\n1 2:1 2:5\n", 2, "2:5", "ascend strictly"),
    ("1 1:1 foo\n", 1, "foo", "index:value"),
    ("1 1:1 foo 2:3\n", 1, "foo", "index:value"),
    ("1 a:1\n", 1, "a:1", "index"),
    ("1 :1\n", 1, ":1", "index"),
    ("1 1.5:1\n", 1, "1.5:1", "index"),
    ("1 99999999999:1\n", 1, "99999999999:1", "too large"),
    ("1 0:1\n", 1, "0:1", "index 0 is not allowed"),
    ("1 qid:x 1:1\n", 1, "qid:x", "qid"),
    ("# c\n\n", 2, None, "empty line"),
    ("1 1:2 3:4#tight\n", 1, "3:4#tight", "not a number"),
]


@pytest.mark.parametrize("text,line,token,reason", ERROR_CASES)
def test_errors(tmp_path, text, line, token, reason):
    p = _write(tmp_path, text)
    with pytest.raises(InputFormatError) as e:
        read_svmlight(p)
    err = e.value
    assert err.line == line
    assert err.token == token
    assert reason in err.reason
    assert err.path == p
    assert str(err).startswith(f"{p}:{line}: ")


@pytest.mark.parametrize("text,line,token,reason", ERROR_CASES)
def test_errors_tiny_chunks(tmp_path, text, line, token, reason):
    """Line numbers stay right when lines straddle chunk boundaries."""
    p = _write(tmp_path, "1 1:1\n" * 7 + text)
    with pytest.raises(InputFormatError) as e:
        read_svmlight(p, chunk_bytes=3)
    assert (e.value.line, e.value.token) == (line + 7, token)


def test_chunking_is_invisible(tmp_path):
    rng = np.random.default_rng(0)
    lines = []
    for i in range(300):
        k = int(rng.integers(0, 12))
        idx = np.sort(rng.choice(np.arange(1, 60), size=k, replace=False))
        vals = rng.normal(size=k) * 10.0 ** rng.integers(-5, 5, size=k)
        feats = " ".join(f"{a}:{v:.{int(rng.integers(1, 18))}g}" for a, v in zip(idx, vals))
        lines.append(f"{int(rng.integers(-3, 4))} {feats}".rstrip())
        if i % 50 == 7:
            lines.append("# comment")
    text = "\n".join(lines)
    p = _write(tmp_path, text)
    ref = read_svmlight(p, chunk_bytes=1 << 24)
    for cb in (1, 2, 7, 64, 1000):
        d = read_svmlight(p, chunk_bytes=cb)
        for a in ("y", "indptr", "indices", "values"):
            np.testing.assert_array_equal(getattr(d, a), getattr(ref, a))
        assert d.max_index == ref.max_index
    # and matches a Python reference parse
    expect = []
    for ln in lines:
        if ln.startswith("#"):
            continue
        toks = ln.split()
        expect.append((float(toks[0]), [(int(t.split(":")[0]), float(t.split(":")[1]))
                                        for t in toks[1:]]))
    assert _rows(ref) == expect


def _random_number_strings(rng, count):
    out = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.3:
            s = repr(rng.gauss(0.0, 1.0) * 10.0 ** rng.randint(-30, 30))
        elif kind < 0.5:
            s = "%.*g" % (rng.randint(1, 25), rng.uniform(-1e6, 1e6))
        elif kind < 0.7:
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 30)))
            point = rng.randint(0, len(digits))
            s = digits[:point] + "." + digits[point:] if point else digits
            if rng.random() < 0.5:
                s += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 330))
        elif kind < 0.8:
            s = "%de%d" % (rng.randint(1, 10**rng.randint(1, 19)), rng.randint(-340, 300))
        elif kind < 0.9:
            # near-halfway cases and subnormals
            s = repr(np.nextafter(rng.uniform(0, 1), 2.0)) + "0000000001"
        else:
            s = "%.17e" % (rng.random() * 2.0 ** rng.randint(-1074, 1000))
        if rng.random() < 0.3:
            s = rng.choice(["+", "-"]) + s.lstrip("+-")
        try:
            v = float(s)
        except ValueError:
            continue
        if np.isfinite(v):
            out.append(s)
    return out


def test_numbers_equal_python_float(tmp_path):
    rng = random.Random(1234)
    nums = _random_number_strings(rng, 20000)
    nums += ["0", "-0", "0.0", "1e-400", "4.9e-324", "2.2250738585072011e-308",
             "1.7976931348623157e308", "9007199254740993", "0.1", "123456789012345678901234567890",
             "1e22", "1e23", "8.98846567431158e307", "000000000000000000000000001.5",
             ".000000000000000000000000000000000000000001", "179769313486231570000e288"]
    text = "".join(f"{s} 1:{t}\n" for s, t in zip(nums, reversed(nums)))
    d = read_svmlight(_write(tmp_path, text), chunk_bytes=4096)
    want_y = np.array([float(s) for s in nums])
    want_v = np.array([float(s) for s in reversed(nums)])
    # bit-exact, signed zeros included
    assert d.y.view(np.int64).tolist() == want_y.view(np.int64).tolist()
    assert d.values.view(np.int64).tolist() == want_v.view(np.int64).tolist()


@pytest.mark.parametrize("ext,opener", [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)])
def test_compressed(tmp_path, ext, opener):
    p = str(tmp_path / ("d.svm" + ext))
    with opener(p, "wb") as f:
        f.write(b"1 1:2 3:4\n-1 2:5\n")
    d = read_svmlight(p, chunk_bytes=5)
    assert _rows(d) == [(1.0, [(1, 2.0), (3, 4.0)]), (-1.0, [(2, 5.0)])]


def test_stdin():
    code = (
        "import sys; from lasvm_cli.io.svmlight import read_svmlight\n"
        "from lasvm_cli.base.errors import InputFormatError\n"
        "d = read_svmlight('-'); print(d.n, d.indices.tolist())\n"
    )
    r = subprocess.run([sys.executable, "-c", code], input=b"1 1:2\n-1 3:4\n",
                       capture_output=True, check=True)
    assert r.stdout.decode().split() == ["2", "[1,", "3]"]
    r = subprocess.run([sys.executable, "-c", code], input=b"1 1:2\n-1 3:x\n",
                       capture_output=True)
    assert r.returncode != 0
    assert b"<stdin>:2: feature value is not a number (token '3:x')" in r.stderr


def test_pathlike(tmp_path):
    p = tmp_path / "d.svm"
    p.write_text("1 2:3\n")
    assert read_svmlight(p).indices.tolist() == [2]


def test_writer_round_trip(tmp_path):
    rng = np.random.default_rng(5)
    n = 50
    lens = rng.integers(0, 6, size=n)
    indptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    indices = np.concatenate([np.sort(rng.choice(np.arange(1, 30), size=k, replace=False))
                              for k in lens]).astype(np.int32)
    values = rng.normal(size=indptr[-1]) * 1e-3
    y = rng.integers(-2, 3, size=n).astype(np.float64) + 0.25
    p = str(tmp_path / "w.svm")
    write_svmlight(p, y, indptr, indices, values)
    d = read_svmlight(p)
    np.testing.assert_array_equal(d.y, y)
    np.testing.assert_array_equal(d.indptr, indptr)
    np.testing.assert_array_equal(d.indices, indices)
    np.testing.assert_array_equal(d.values, values)  # %.17g round-trips exactly
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_writer_text_file_and_formats():
    buf = io.StringIO()
    write_svmlight(buf, [1.0, -1.0], [0, 2, 2], [1, 4], [0.5, 1.0 / 3.0],
                   label_format="%g", value_format="%.6g")
    assert buf.getvalue() == "1 1:0.5 4:0.333333\n-1\n"


def _heart_scale_path():
    local = os.path.join(REPO, "data", "heart_scale")
    if os.path.isfile(local):
        return local
    base = str(data_dir())
    for cand in (os.path.join(base, "heart_scale", "all.svm.xz"),
                 os.path.join(base, "heart_scale", "heart_scale")):
        if os.path.isfile(cand):
            return cand
    pytest.skip("heart_scale not found")


def test_heart_scale_matches_libsvm_reader():
    path = _heart_scale_path()
    d = read_svmlight(path)
    assert d.n == 270 and d.max_index == 13
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        lines = f.read().splitlines()
    for i, ln in enumerate(lines):
        toks = ln.split()
        assert d.y[i] == float(toks[0])
        a, b = d.indptr[i], d.indptr[i + 1]
        assert d.indices[a:b].tolist() == [int(t.split(":")[0]) for t in toks[1:]]
        assert d.values[a:b].tolist() == [float(t.split(":")[1]) for t in toks[1:]]
