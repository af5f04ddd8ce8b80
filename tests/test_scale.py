"""svm-scale: LIBSVM 3.37 behaviour (lasvm_cli.tools.scale, lasvm_cli.cli.scale, io.scale_file)."""

import io
import lzma
import os

import numpy as np
import pytest

from lasvm_cli.cli import scale as cli_scale
from lasvm_cli.cli.report import run_guarded
from lasvm_cli.tools.datasets import data_dir
from lasvm_cli.io.range_file import read_range_file

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DBL_MAX = np.finfo(np.float64).max


def run(argv, capsys):
    rc = run_guarded(cli_scale.main, [str(a) for a in argv])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def reference_scale(text, lower=-1.0, upper=1.0, y_range=None):
    """An independent, line-by-line transcription of svm-scale.c's formulas (no restore)."""
    rows = []
    for ln in text.splitlines():
        toks = ln.split()
        rows.append((float(toks[0]), [(int(t.split(":")[0]), float(t.split(":")[1]))
                                      for t in toks[1:]]))
    max_index = max([i for _, f in rows for i, _ in f] + [0])
    fmax = [-DBL_MAX] * (max_index + 1)
    fmin = [DBL_MAX] * (max_index + 1)
    y_min, y_max = DBL_MAX, -DBL_MAX
    for t, feats in rows:
        y_max = y_max if y_max > t else t
        y_min = y_min if y_min < t else t
        nxt = 1
        for i, v in feats:
            for j in range(nxt, i):
                fmax[j] = fmax[j] if fmax[j] > 0 else 0.0
                fmin[j] = fmin[j] if fmin[j] < 0 else 0.0
            fmax[i] = fmax[i] if fmax[i] > v else v
            fmin[i] = fmin[i] if fmin[i] < v else v
            nxt = i + 1
        for j in range(nxt, max_index + 1):
            fmax[j] = fmax[j] if fmax[j] > 0 else 0.0
            fmin[j] = fmin[j] if fmin[j] < 0 else 0.0

    def out(i, v):
        if fmax[i] == fmin[i]:
            return ""
        if v == fmin[i]:
            v = lower
        elif v == fmax[i]:
            v = upper
        else:
            v = lower + (upper - lower) * (v - fmin[i]) / (fmax[i] - fmin[i])
        return "%d:%g " % (i, v) if v != 0 else ""

    lines = []
    for t, feats in rows:
        if y_range is not None:
            yl, yu = y_range
            if t == y_min:
                t = yl
            elif t == y_max:
                t = yu
            else:
                t = yl + (yu - yl) * (t - y_min) / (y_max - y_min)
        s = "%.17g " % t
        nxt = 1
        for i, v in feats:
            for j in range(nxt, i):
                s += out(j, 0.0)
            s += out(i, v)
            nxt = i + 1
        for j in range(nxt, max_index + 1):
            s += out(j, 0.0)
        lines.append(s + "\n")
    rng = ""
    if y_range is not None:
        rng += "y\n%.17g %.17g\n%.17g %.17g\n" % (y_range[0], y_range[1], y_min, y_max)
    rng += "x\n%.17g %.17g\n" % (lower, upper)
    for i in range(1, max_index + 1):
        if fmin[i] != fmax[i]:
            rng += "%d %.17g %.17g\n" % (i, fmin[i], fmax[i])
    return "".join(lines), rng


def _heart_scale_text():
    local = os.path.join(REPO, "data", "heart_scale")
    if os.path.isfile(local):
        with open(local) as f:
            return f.read()
    base = str(data_dir())
    p = os.path.join(base, "heart_scale", "all.svm.xz")
    if not os.path.isfile(p):
        pytest.skip("heart_scale not found")
    with lzma.open(p, "rt") as f:
        return f.read()


def _random_text(seed, n=60, d=12, sparse=0.5):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        feats = []
        for i in range(1, d + 1):
            if rng.random() < sparse:
                v = float(rng.choice([0.0, 1.0, -2.5, rng.normal() * 100, rng.random()]))
                feats.append("%d:%.10g" % (i, v))
        lines.append(" ".join(["%g" % rng.integers(-3, 4)] + feats))
    return "\n".join(lines) + "\n"


HAND = "1 1:0 2:5\n2 1:-0. 3:1\n3 2:5 3:1\n4 2:2.5\n"


def test_hand_checked_default(tmp_path, capsys):
    p = tmp_path / "h.svm"
    p.write_text(HAND)
    s = tmp_path / "h.range"
    rc, out, err = run(["-s", s, p], capsys)
    assert rc == 0 and err == ""
    # feature 1 is constant (0, -0, 0, 0) -> dropped; feature 2 in [0, 5]; 3 in [0, 1]
    assert out == "1 2:1 3:-1 \n2 2:-1 3:1 \n3 2:1 3:1 \n4 3:-1 \n"
    assert s.read_text() == "x\n-1 1\n2 0 5\n3 0 1\n"


def test_hand_checked_l0_y(tmp_path, capsys):
    p = tmp_path / "h.svm"
    p.write_text(HAND)
    rc, out, err = run(["-l", "0", "-u", "10", "-y", "-1", "1", p], capsys)
    assert rc == 0 and err == ""
    # y in [1, 4] -> [-1, 1]: 2 -> -1 + 2 * 1/3
    assert out == ("-1 2:10 \n%.17g 3:10 \n%.17g 2:10 3:10 \n1 2:5 \n"
                   % (-1 + 2.0 * 1 / 3, -1 + 2.0 * 2 / 3))


def test_nonzeros_warning(tmp_path, capsys):
    p = tmp_path / "h.svm"
    p.write_text(HAND)
    rc, out, err = run([p], capsys)
    # 7 listed entries (explicit zeros included) vs 7 written -> no warning
    assert err == ""
    p.write_text("1 1:1\n2 2:1\n3 3:1\n")
    rc, out, err = run([p], capsys)
    assert err == ("WARNING: original #nonzeros 3\n       > new      #nonzeros 9\n"
                   "If feature values are non-negative and sparse, use -l 0 rather than the "
                   "default -l -1\n")


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("opts", [{}, {"lower": 0.0, "upper": 1.0},
                                  {"lower": -3.0, "upper": 7.5, "y_range": (0.0, 1.0)}])
def test_matches_reference_random(tmp_path, capsys, seed, opts):
    text = _random_text(seed)
    p = tmp_path / "r.svm"
    p.write_text(text)
    s = tmp_path / "r.range"
    argv = ["-l", repr(opts.get("lower", -1.0)), "-u", repr(opts.get("upper", 1.0))]
    if "y_range" in opts:
        argv += ["-y", repr(opts["y_range"][0]), repr(opts["y_range"][1])]
    rc, out, err = run(argv + ["-s", s, p], capsys)
    want_out, want_rng = reference_scale(text, **opts)
    assert rc == 0
    assert out == want_out
    assert s.read_text() == want_rng
    # -r with the saved file reproduces the output exactly
    rc, out2, err2 = run(["-r", s, p], capsys)
    assert rc == 0 and out2 == want_out


def test_heart_scale_matches_reference(tmp_path, capsys):
    text = _heart_scale_text()
    p = tmp_path / "heart_scale"
    p.write_text(text)
    s = tmp_path / "hs.range"
    rc, out, err = run(["-s", s, p], capsys)
    want_out, want_rng = reference_scale(text)
    assert rc == 0 and out == want_out and s.read_text() == want_rng
    # heart_scale is already in [-1, 1]: every feature range is exactly -1 1
    assert s.read_text() == "x\n-1 1\n" + "".join("%d -1 1\n" % i for i in range(1, 14))
    rc, out2, _ = run(["-r", s, p], capsys)
    assert out2 == out
    # with -l 0 -u 1 -y, round trip through -s / -r
    s2 = tmp_path / "hs2.range"
    rc, out3, _ = run(["-l", "0", "-u", "1", "-y", "0", "1", "-s", s2, p], capsys)
    want3, rng3 = reference_scale(text, 0.0, 1.0, (0.0, 1.0))
    assert out3 == want3 and s2.read_text() == rng3
    assert s2.read_text().startswith("y\n0 1\n-1 1\nx\n0 1\n")
    rc, out4, _ = run(["-r", s2, p], capsys)
    assert out4 == out3


def test_iris_like_range_file(tmp_path, capsys):
    """The anchors' iris example: %.17g numbers in the range file."""
    p = tmp_path / "iris.svm"
    p.write_text("1 1:4.3 2:2 3:1 4:0.1\n2 1:7.9 2:4.4 3:6.9 4:2.5\n3 1:5 2:3 3:4 4:1\n")
    s = tmp_path / "iris.range"
    rc, out, err = run(["-s", s, p], capsys)
    assert s.read_text() == ("x\n-1 1\n1 4.2999999999999998 7.9000000000000004\n"
                             "2 2 4.4000000000000004\n3 1 6.9000000000000004\n"
                             "4 0.10000000000000001 2.5\n")
    assert out.splitlines()[0] == "1 1:-1 2:-1 3:-1 4:-1 "
    assert out.splitlines()[1] == "2 1:1 2:1 3:1 4:1 "


def test_restore_with_y_block_and_unseen_feature(tmp_path, capsys):
    r = tmp_path / "r.range"
    r.write_text("y\n0 1\n1 3\nx\n0 1\n1 0 10\n3 -1 1\n")
    p = tmp_path / "d.svm"
    p.write_text("1 1:5 2:7 3:1\n3 1:10 2:8\n2 4:3\n")
    rc, out, err = run(["-r", r, p], capsys)
    assert rc == 0
    # feature 2 (range 0..8 in the data) and 4 (0..3) are not in the range file -> scaled to 0
    assert err == "".join(
        f"WARNING: feature index {i} appeared in file {p} was not seen in the scaling factor "
        f"file {r}. The feature is scaled to 0.\n" for i in (2, 4))
    # x: lower 0 upper 1, f1 in [0,10], f3 in [-1,1] (0 -> 0.5); y: [1,3] -> [0,1]
    assert out == "0 1:0.5 3:1 \n1 1:1 3:0.5 \n0.5 3:0.5 \n"


def test_restore_file_index_beyond_data(tmp_path, capsys):
    r = tmp_path / "r.range"
    r.write_text("x\n-1 1\n1 0 2\n5 0 4\n")
    p = tmp_path / "d.svm"
    p.write_text("1 1:1\n")
    rc, out, err = run(["-r", r, p], capsys)
    # max_index comes from the range file too: feature 5's zero scales to -1
    assert out == "1 5:-1 \n" and err == ""


def test_range_file_reader(tmp_path):
    r = tmp_path / "r.range"
    r.write_text("y\n-1 1\n0 5\nx\n0 1\n2 0.5 1.5\n7 -3 3\n\n9 1 2\n")
    rf = read_range_file(r)
    assert rf.y == (-1.0, 1.0, 0.0, 5.0) and rf.x == (0.0, 1.0)
    assert rf.features == [(2, 0.5, 1.5), (7, -3.0, 3.0), (9, 1.0, 2.0)]
    assert rf.max_index == 9


@pytest.mark.parametrize("text,where", [
    ("y\n0\n", ":2: expected 'y_lower y_upper'"),
    ("y\n0 1\nx\n", ":3: expected 'y_min y_max' (token 'x')"),
    ("x\nfoo bar\n", ":2: expected 'lower upper' (token 'foo')"),
    ("", ": empty file"),
    ("x\n-1 1\n2 0.5 1.5\n7 -3 3\ngarbage\n9 1 2\n", ":5: expected 'index min max' "
     "(token 'garbage')"),
    ("x\n-1 1\n1 0 nan\n", ":3: expected 'index min max' (token 'nan')"),
    ("1 0 1\n", ":1: expected the line 'x'"),
])
def test_bad_range_file(tmp_path, capsys, text, where):
    """svm-scale.c stops reading at the first line it cannot parse and scales with what it
    read (an empty file: the data's own ranges); every line must parse here."""
    r = tmp_path / "r.range"
    r.write_text(text)
    p = tmp_path / "d.svm"
    p.write_text("1 1:1\n")
    rc, out, err = run(["-r", r, p], capsys)
    assert rc == 1 and out == ""
    assert err.startswith(f"ERROR: failed to read scaling parameters: {r}{where}"), err


def test_zero_index_warnings(tmp_path, capsys):
    p = tmp_path / "z.svm"
    p.write_text("1 0:4 1:1\n2 0:3 1:2\n")
    s = tmp_path / "z.range"
    rc, out, err = run(["-s", s, p], capsys)
    assert rc == 0
    assert err == ("WARNING: minimal feature index is 0, but indices should start from 1\n"
                   f"WARNING: scaling factors with indices smaller than 1 are not stored to the "
                   f"file {s}.\n")
    assert out == "1 0:1 1:-1 \n2 0:-1 1:1 \n"
    assert s.read_text() == "x\n-1 1\n1 1 2\n"


@pytest.mark.parametrize(
    "argv,stderr_text,usage",
    [
        (["-x", "1", "f"], "unknown option\n", True),
        (["-", "f"], "unknown option\n", True),
        ([], "", True),
        (["-l", "0"], "", True),
        (["a", "b"], "", True),
        (["-l", "1", "-u", "1", "f"], "inconsistent lower/upper specification\n", False),
        (["-y", "2", "1", "f"], "inconsistent lower/upper specification\n", False),
        (["-s", "a", "-r", "b", "f"], "cannot use -r and -s simultaneously\n", False),
        (["/nonexistent/file"], "can't open file /nonexistent/file\n", False),
    ],
)
def test_cli_errors(capsys, argv, stderr_text, usage):
    rc, out, err = run(argv, capsys)
    assert rc == 1
    assert err == stderr_text
    assert (out == cli_scale.USAGE) if usage else out == ""


def test_missing_restore_file(tmp_path, capsys):
    p = tmp_path / "d.svm"
    p.write_text("1 1:1\n")
    rc, out, err = run(["-r", tmp_path / "nope", p], capsys)
    assert rc == 1 and err == f"can't open file {tmp_path / 'nope'}\n"


def test_bad_input_gives_file_line(tmp_path, capsys):
    p = tmp_path / "d.svm"
    p.write_text("1 1:1\n2 2:x\n")
    rc, out, err = run([p], capsys)
    assert rc == 1 and out == ""
    assert err == f"{p}:2: feature value is not a number (token '2:x')\n"


def test_atof_and_option_spelling(tmp_path, capsys):
    assert cli_scale.atof("0.5abc") == 0.5 and cli_scale.atof("abc") == 0.0
    assert cli_scale.atof("1e3") == 1000.0 and cli_scale.atof("-2") == -2.0
    p = tmp_path / "h.svm"
    p.write_text(HAND)
    rc1, out1, _ = run(["-lower", "0", "-upper", "2x", p], capsys)
    rc2, out2, _ = run(["-l", "0", "-u", "2", p], capsys)
    assert rc1 == rc2 == 0 and out1 == out2


def test_library_streams(tmp_path):
    from lasvm_cli.tools.scale import scale_file

    p = tmp_path / "h.svm"
    p.write_text(HAND)
    out, err = io.StringIO(), io.StringIO()
    res = scale_file(str(p), out, err, block_rows=1)
    assert out.getvalue() == reference_scale(HAND)[0]
    assert res.num_nonzeros == 7 and res.new_num_nonzeros == 7


def test_fast_g_formatter_matches_printf():
    """The Numba %g writer equals C/Python '%g' or asks for the exact path (-1)."""
    import random

    from lasvm_cli.io.scaled_text import _put_g

    buf = np.empty(64, dtype=np.uint8)
    rng = random.Random(7)
    vals = [1e-5, 1e-4, 99999.95, 999999.5, 9999995.0, 123456.5, 0.1, 1e6, 1e5, 1e-300,
            -0.0, 2.5e-5, 999999.4999, 0.000123456789, -123.456789e10]
    for _ in range(50000):
        k = rng.random()
        if k < 0.4:
            vals.append(rng.gauss(0, 1) * 10.0 ** rng.randint(-12, 12))
        elif k < 0.6:
            vals.append(rng.randint(-10**7, 10**7) / 10 ** rng.randint(0, 9))
        elif k < 0.8:
            vals.append((2 * rng.random() - 1) * 10.0 ** rng.randint(-300, 300))
        else:
            vals.append(-1 + 2 * rng.randint(0, 255) / 255.0)
    fast = 0
    for v in vals:
        m = _put_g(buf, 0, v)
        if m >= 0:
            fast += 1
            assert buf[:m].tobytes().decode() == "%g" % v, v
    assert fast > len(vals) // 2
