"""Fuzz the svmlight reader against a strict reference: every token parsed on its own with a
regular expression and float(). Mutated copies of valid files (inserted, deleted and replaced
characters, special numbers, swapped tokens) must give the same arrays bit for bit, or the same
error at the same line with the same message and token. Small chunks make lines cross chunk
boundaries. Runs in a few seconds (one tokenizer compile, cached)."""

import math
import random
import re

import numpy as np
import pytest

from lasvm_cli.base.errors import InputFormatError
from lasvm_cli.io import svmlight
from lasvm_cli.io.svmlight import read_svmlight

_NUM = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_NANINF = re.compile(rb"[+-]?(?:nan|inf|infinity)\Z", re.IGNORECASE)
_BLANKS = b" \t\r\v\f"
M = svmlight._MESSAGES


class RefError(Exception):
    def __init__(self, line, reason, token):
        super().__init__(line, reason, token)
        self.line, self.reason, self.token = line, reason, token


def _number(tok):
    """('ok', value) | ('bad',) | ('naninf',) for one token, as the reader classifies it."""
    if _NANINF.match(tok):
        return ("naninf",)
    if not _NUM.match(tok):
        return ("bad",)
    return ("ok", float(tok))


def reference(data: bytes, min_index=1, check_norms=False):
    """(y, indptr, indices, values) or RefError(line, reason, token)."""
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    if not data:
        lines = []
    y, indptr, indices, values, row_lines = [], [0], [], [], []
    for lineno, line in enumerate(lines, 1):
        body = line.strip(_BLANKS)
        if not body:
            raise RefError(lineno, M[svmlight.E_EMPTY_LINE], None)
        if body.startswith(b"#"):
            continue
        toks = re.split(rb"[ \t\r\v\f]+", body)
        kind = _number(toks[0])
        if kind[0] != "ok":
            code = svmlight.E_BAD_LABEL if kind[0] == "bad" else svmlight.E_NAN_LABEL
            raise RefError(lineno, M[code], toks[0])
        if not math.isfinite(kind[1]):
            raise RefError(lineno, svmlight._OVERFLOW, toks[0])
        label = kind[1]
        prev = min_index - 1
        row_i, row_v = [], []
        for tok in toks[1:]:
            if tok.startswith(b"#"):
                break
            head, colon, val = tok.partition(b":")
            if not colon:
                raise RefError(lineno, M[svmlight.E_NOT_PAIR], tok)
            if head.lower() == b"qid":
                if not re.fullmatch(rb"[+-]?\d+", val):
                    raise RefError(lineno, M[svmlight.E_BAD_QID], tok)
                continue
            if not re.fullmatch(rb"[+-]?\d+", head):
                raise RefError(lineno, M[svmlight.E_BAD_INDEX], tok)
            idx = int(head)
            if idx < 0:
                raise RefError(lineno, M[svmlight.E_NEG_INDEX], tok)
            if idx > 2**31 - 1:
                raise RefError(lineno, M[svmlight.E_INDEX_RANGE], tok)
            if not val:
                raise RefError(lineno, M[svmlight.E_EMPTY_VALUE], tok)
            kind = _number(val)
            if kind[0] == "bad":
                raise RefError(lineno, M[svmlight.E_BAD_VALUE], tok)
            if kind[0] == "naninf":
                raise RefError(lineno, M[svmlight.E_NAN_VALUE], tok)
            if idx < min_index:
                raise RefError(lineno, M[svmlight.E_INDEX_ZERO], tok)
            if idx <= prev:
                raise RefError(lineno, M[svmlight.E_NOT_ASCENDING], tok)
            if not math.isfinite(kind[1]):
                raise RefError(lineno, svmlight._OVERFLOW, tok)
            prev = idx
            row_i.append(idx)
            row_v.append(kind[1])
        if check_norms and not math.fsum(v * v for v in row_v) <= svmlight.MAX_SQUARED_NORM:
            # only the line matters here: the reader's message gives the norm
            raise RefError(lineno, "feature values too large", None)
        y.append(label)
        indices += row_i
        values += row_v
        indptr.append(len(indices))
        row_lines.append(lineno)
    return y, indptr, indices, values


VALID = [
    b"+1 1:0.708333 2:1 3:1 4:-0.320755 5:-0.105023\n-1 1:0.583333 2:-1 3:0.333333 6:-1\n"
    b"1 2:1 7:0.5 # a comment\n-1\n",
    b"# header comment\n3 qid:7 1:1e-3 10:-2.5E+2\n2\t2:.5\t3:7.\r\n1 1:0 \n",
    b"0.5 1:1.00000000000000001 2:123456789012345678 3:1e22 4:1e23\n-2 5:4e-320 6:1e-400\n",
    b"1 1:1 2:2 3:3 4:4 5:5 6:6 7:7 8:8 9:9 10:10 11:11 12:12 13:13 14:14 15:15 16:16",
]
SPECIAL = [b"nan", b"-inf", b"Infinity", b"1e400", b"-1e-400", b"4e-320", b"1.00000000000000001",
           b"123456789012345678901", b"1e200", b"-0", b"+.5", b"5.", b"1e", b"1e+", b".", b"+",
           b"0x10", b"1_000", b"2147483648", b"-3", b"0", b"qid:x", b"#", b"1:2:3", b"", b"9e22",
           b"1.7976931348623157e308", b"1.8e308", b"2.2250738585072014e-308"]
ALPHABET = b"0123456789:. \t\n\r#-+eEnaifqdx\x00\xff"


def mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        pos = rng.randrange(len(b) + 1)
        if op == 0:
            b[pos:pos] = bytes([rng.choice(ALPHABET)])
        elif op == 1 and b:
            del b[min(pos, len(b) - 1)]
        elif op == 2:  # replace the number-ish run at pos with a special token
            start, end = pos, pos
            while start > 0 and b[start - 1] not in b" \t\n:":
                start -= 1
            while end < len(b) and b[end] not in b" \t\n:":
                end += 1
            b[start:end] = rng.choice(SPECIAL)
        elif op == 3:  # swap two tokens of a line
            lines = bytes(b).split(b"\n")
            k = rng.randrange(len(lines))
            toks = lines[k].split(b" ")
            if len(toks) > 2:
                i, j = rng.sample(range(len(toks)), 2)
                toks[i], toks[j] = toks[j], toks[i]
                lines[k] = b" ".join(toks)
            b = bytearray(b"\n".join(lines))
        else:  # duplicate a slice
            end = min(len(b), pos + rng.randint(1, 12))
            b[pos:pos] = b[pos:end]
    return bytes(b)


def _compare(data, path, rng):
    min_index = rng.choice([0, 1])
    check_norms = rng.random() < 0.5
    path.write_bytes(data)
    try:
        want = reference(data, min_index, check_norms)
    except RefError as e:
        want = e
    chunk = rng.choice([1 << 24, rng.randint(1, 40)])
    try:
        got = read_svmlight(path, zero_based=min_index == 0, chunk_bytes=chunk,
                            check_norms=check_norms)
    except InputFormatError as e:
        assert isinstance(want, RefError), (data, e)
        assert (e.line, e.reason.split(":")[0].split(",")[0]) == \
            (want.line, want.reason.split(":")[0].split(",")[0]), (data, e, want.reason)
        if want.token is not None:
            text = want.token.decode("utf-8", "replace")
            assert e.token == (text if len(text) <= 60 else text[:57] + "..."), (data, e)
        return "error"
    assert not isinstance(want, RefError), (data, want.line, want.reason, want.token)
    y, indptr, indices, values = want
    np.testing.assert_array_equal(got.y, np.array(y, np.float64))
    np.testing.assert_array_equal(got.indptr, np.array(indptr, np.int64))
    np.testing.assert_array_equal(got.indices, np.array(indices, np.int32))
    assert got.values.tobytes() == np.array(values, np.float64).tobytes()  # bit for bit, -0.0
    assert got.max_index == max(indices, default=0)
    return "ok"


def test_reference_agrees_on_valid_files(tmp_path):
    rng = random.Random(0)
    for data in VALID:
        assert _compare(data, tmp_path / "v.svm", rng) == "ok"


@pytest.mark.parametrize("seed", range(4))
def test_fuzz_mutated_files(tmp_path, seed):
    rng = random.Random(seed)
    outcomes = {"ok": 0, "error": 0}
    for k in range(300):
        data = mutate(rng.choice(VALID), rng)
        outcomes[_compare(data, tmp_path / "f.svm", rng)] += 1
    # the mutations reach both sides (a fuzzer that only ever errors tests little)
    assert outcomes["ok"] >= 20 and outcomes["error"] >= 100, outcomes
