"""Feature indices near 2^31: memory and time follow the stored values, results equal those of
the same data with compact indices (svm-train with SMO and LASVM, svm-predict, svm-scale).

heart_scale (indices 1..13, all of them used) is moved to 2147483634 + 1..13 = ..635..647, so
the compacted columns of the wide file are the compact file's columns: training gives the same
model bit for bit, with the wide indices in it. gamma is given explicitly (its default,
1/max_index, depends on the index values).
"""

import re
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from lasvm_cli.numerics import kernels as K
from lasvm_cli.cli import predict as cli_predict
from lasvm_cli.cli import scale as cli_scale
from lasvm_cli.cli import train as cli_train
from lasvm_cli.cli.report import run_guarded
from lasvm_cli.numerics.data import COMPACT_MIN_WIDTH, Problem, align, kernel_data, n_columns
from lasvm_cli.io.svmlight import read_svmlight

REPO = Path(__file__).resolve().parent.parent
HEART = REPO / "data" / "heart_scale"
TOP = 2147483647
OFFSET = TOP - 13  # heart_scale's index 13 becomes 2^31 - 1


def widen_text(text, offset=OFFSET):
    """Every ``index:`` token of svmlight rows or model SV lines shifted by ``offset``."""
    return re.sub(r"(?<=\s)(\d+):", lambda m: f"{int(m.group(1)) + offset}:", text)


def widen_range(text, offset=OFFSET):
    """Feature lines of a range file (after the x block's two lines) shifted by ``offset``."""
    lines = text.splitlines(keepends=True)
    x = lines.index("x\n")
    for k in range(x + 2, len(lines)):
        i, rest = lines[k].split(" ", 1)
        lines[k] = f"{int(i) + offset} {rest}"
    return "".join(lines)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("wide")
    text = HEART.read_text()
    assert sorted({int(t.split(":")[0]) for t in text.split() if ":" in t}) == list(range(1, 14))
    (d / "compact.svm").write_text(text)
    (d / "wide.svm").write_text(widen_text(text))
    return d


def cli(module, argv, capsys):
    rc = run_guarded(module.main, [str(a) for a in argv])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    return cap.out


def test_kernel_data_compacts_wide_sparse_indices(files):
    compact = Problem.from_svmlight(read_svmlight(files / "compact.svm"))
    wide = Problem.from_svmlight(read_svmlight(files / "wide.svm"))
    assert wide.max_index == TOP and wide.indices.max() == TOP  # rows keep the file's indices
    assert wide.kd.cols.tolist() == [0] + list(range(OFFSET + 1, TOP + 1))
    assert compact.kd.cols.size == 0  # narrow data keep column = index
    for a, b in zip(compact.kd[:6], wide.kd[:6]):  # the same kernel storage
        np.testing.assert_array_equal(a, b)
    assert n_columns(wide.kd) == 14  # what a kernel row's scatter buffer may need
    # sparse storage of wide rows: the same when they stay CSR
    ip, idx, val = wide.indptr, wide.indices, wide.values
    kd = kernel_data(ip, idx, val, dense=False)
    assert kd.indices.max() == 13 and n_columns(kd) == 14
    ref = kernel_data(compact.indptr, compact.indices, compact.values, dense=False)
    out, want = np.empty(270), np.empty(270)
    kp = K.make_params(K.RBF, gamma=0.2)
    for a in (0, 5, 269):
        K.kernel_row(kd, a, kd, np.arange(270), kp, out)
        K.kernel_row(ref, a, ref, np.arange(270), kp, want)
        np.testing.assert_array_equal(out, want)


def test_compaction_rule():
    indptr = np.array([0, 2, 3], np.int64)
    values = np.ones(3)
    # narrow ranges keep their indices, even with gaps
    kd = kernel_data(indptr, np.array([1, COMPACT_MIN_WIDTH - 1, 5], np.int32), values)
    assert kd.cols.size == 0
    # wide and sparse: compacted, binary rows then get bit sets
    kd = kernel_data(indptr, np.array([1, TOP, 5], np.int32), values)
    assert kd.cols.tolist() == [0, 1, 5, TOP] and kd.bits.shape == (2, 1)
    # a precomputed kernel never (its features are serial numbers, stored densely)
    wide = 4 * COMPACT_MIN_WIDTH
    kd = kernel_data(indptr, np.array([0, wide, 0], np.int32), values, kernel_type=K.PRECOMPUTED)
    assert kd.cols.size == 0 and kd.X.shape == (2, wide + 1)


def test_alignment_drops_unknown_features_but_keeps_their_norm():
    # reference rows use features 3 and 2^31-1; test rows add 7 and 2^31-2, which no reference
    # row has: dot products without them, squared norms with them
    ref = kernel_data(np.array([0, 2, 3]), np.array([3, TOP, TOP], np.int32),
                      np.array([1.0, 2.0, -1.0]))
    test = kernel_data(np.array([0, 3, 5]), np.array([3, 7, TOP, 7, TOP - 1], np.int32),
                       np.array([0.5, 4.0, 1.5, 1.0, 2.0]))
    t = align(test, ref)
    assert t.cols is ref.cols and n_columns(t) == 3
    M_ref = np.array([[1.0, 2.0, 0, 0], [0, -1.0, 0, 0]])  # columns 3, TOP, 7, TOP-1
    M_test = np.array([[0.5, 1.5, 4.0, 0], [0, 0, 1.0, 2.0]])
    kp = K.make_params(K.RBF, gamma=0.1)
    out = np.empty(2)
    for a in range(2):
        K.kernel_row(t, a, ref, np.arange(2), kp, out)
        want = np.exp(-0.1 * ((M_test[a] - M_ref) ** 2).sum(1))
        np.testing.assert_allclose(out, want, rtol=1e-15)


# --stream keeps one store column per feature index that occurs (it kept one per index up to
# the largest: 1 TiB of slots here), so the wide file streams as the compact one
@pytest.mark.parametrize("solver", ["smo", "lasvm", "lasvm --stream"])
def test_train_equals_compact(files, tmp_path, capsys, solver):
    args = ["-g", "0.07", "-c", "2", "--solver", *solver.split(), "--seed", "3"]
    out_c = cli(cli_train, args + [files / "compact.svm", tmp_path / "c.model"], capsys)
    out_w = cli(cli_train, args + [files / "wide.svm", tmp_path / "w.model"], capsys)
    assert out_w == out_c
    wide_model = (tmp_path / "w.model").read_text()
    assert wide_model == widen_text((tmp_path / "c.model").read_text())
    assert str(TOP) in wide_model


def test_trace_test_error_equals_compact(files, tmp_path, capsys):
    # --trace --test: test rows put in the training data's (compacted) columns
    traces = []
    for name in ("compact", "wide"):
        cli(cli_train, ["-q", "-g", "0.07", "--solver", "lasvm",
                        "--trace", tmp_path / f"{name}.csv", "--trace-every", "50",
                        "--test", files / f"{name}.svm", files / f"{name}.svm",
                        tmp_path / f"{name}.model"], capsys)
        lines = (tmp_path / f"{name}.csv").read_text().splitlines()
        cols = lines[0].split(",")
        keep = [k for k, c in enumerate(cols) if c != "seconds"]
        traces.append([[row.split(",")[k] for k in keep] for row in lines])
        assert "test_error" in cols
    assert traces[1] == traces[0] and len(traces[0]) > 3


def test_train_extra_wide_feature(files, tmp_path, capsys):
    # heart_scale plus one feature of value 1 in every row: at index 14 or at 16777216 (the
    # issue's example), the same training; with LIBSVM's exact heart_scale numbers otherwise
    text = HEART.read_text()
    (tmp_path / "n.svm").write_text(re.sub(r" *\n", " 14:1\n", text))
    (tmp_path / "h.svm").write_text(re.sub(r" *\n", " 16777216:1\n", text))
    out_n = cli(cli_train, ["-g", str(1 / 13), tmp_path / "n.svm", tmp_path / "n.model"], capsys)
    out_h = cli(cli_train, ["-g", str(1 / 13), tmp_path / "h.svm", tmp_path / "h.model"], capsys)
    assert out_h == out_n and "obj = -100.877288, rho = 0.424462" in out_h
    assert (tmp_path / "h.model").read_text() == \
        (tmp_path / "n.model").read_text().replace(" 14:1 ", " 16777216:1 ")


def test_predict_equals_compact(files, tmp_path, capsys):
    for name in ("compact", "wide"):
        cli(cli_train, ["-g", "0.07", files / f"{name}.svm", tmp_path / f"{name}.model"], capsys)
    res = {}
    for name in ("compact", "wide"):
        stdout = cli(cli_predict, ["--decision-values", tmp_path / f"{name}.dv",
                                   files / f"{name}.svm", tmp_path / f"{name}.model",
                                   tmp_path / f"{name}.out"], capsys)
        res[name] = (stdout, (tmp_path / f"{name}.out").read_text(),
                     np.loadtxt(tmp_path / f"{name}.dv"))
    assert res["wide"][:2] == res["compact"][:2]
    np.testing.assert_allclose(res["wide"][2], res["compact"][2], rtol=1e-13, atol=1e-15)
    # a compact model against test rows with one more feature that no SV has: at index 14 or at
    # 2^31 - 1 (dropped from the dot products, kept in the squared norms), the same values
    text = HEART.read_text()
    (tmp_path / "t14.svm").write_text(re.sub(r" *\n", " 14:0.5\n", text))
    (tmp_path / "tw.svm").write_text(re.sub(r" *\n", f" {TOP}:0.5\n", text))
    dv = []
    for name in ("t14", "tw"):
        cli(cli_predict, ["-q", "--decision-values", tmp_path / f"{name}.dv",
                          tmp_path / f"{name}.svm", tmp_path / "compact.model",
                          tmp_path / f"{name}.out"], capsys)
        dv.append(np.loadtxt(tmp_path / f"{name}.dv"))
    np.testing.assert_allclose(dv[1], dv[0], rtol=1e-13, atol=1e-15)
    assert (tmp_path / "tw.out").read_text() == (tmp_path / "t14.out").read_text()


@pytest.mark.parametrize("opts", [[], ["-l", "0", "-y", "-1", "1"]])
def test_scale_equals_compact(files, tmp_path, capsys, opts):
    out = {}
    for name in ("compact", "wide"):
        rng = tmp_path / f"{name}.range"
        out[name] = cli(cli_scale, opts + ["-s", rng, files / f"{name}.svm"], capsys)
        again = cli(cli_scale, ["-r", rng, files / f"{name}.svm"], capsys)
        assert again == out[name]
    assert out["wide"] == widen_text(out["compact"])
    assert (tmp_path / "wide.range").read_text() == \
        widen_range((tmp_path / "compact.range").read_text())


def test_scale_restore_warns_for_wide_unseen_features(tmp_path, capsys):
    data = tmp_path / "d.svm"
    data.write_text(f"1 5:1 {TOP - 1}:2 {TOP}:3\n2 5:2 {TOP - 1}:4\n")
    rng = tmp_path / "r.range"
    rng.write_text(f"x\n0 1\n5 0 2\n{TOP - 5} -1 1\n")
    rc = run_guarded(cli_scale.main, ["-r", str(rng), str(data)])
    cap = capsys.readouterr()
    assert rc == 0
    # TOP-1 and TOP vary in the data and are not in the range file: warned about, scaled to 0;
    # TOP-5 is only in the range file: its 0 scales to 0.5 in every row
    assert cap.err == "".join(
        f"WARNING: feature index {i} appeared in file {data} was not seen in the scaling factor "
        f"file {rng}. The feature is scaled to 0.\n" for i in (TOP - 1, TOP))
    assert cap.out == f"1 5:0.5 {TOP - 5}:0.5 \n2 5:1 {TOP - 5}:0.5 \n"


MEMORY_SCRIPT = textwrap.dedent("""
    import contextlib, io, resource, sys
    from lasvm_cli.cli import predict, scale, train
    from lasvm_cli.cli.report import run_guarded
    data, work = sys.argv[1], sys.argv[2]
    with contextlib.redirect_stdout(io.StringIO()):
        assert run_guarded(train.main, ["-q", "-g", "0.07", data, work + "/m"]) == 0
        assert run_guarded(train.main, ["-q", "-g", "0.07", "--solver", "lasvm", data,
                                        work + "/l"]) == 0
        assert run_guarded(predict.main, [data, work + "/m", work + "/o"]) == 0
        assert run_guarded(scale.main, ["-s", work + "/r", data]) == 0
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
""")


def test_memory_bounded_with_index_2_pow_31_minus_1(tmp_path):
    # heart_scale with 2147483647:1 on every row: the old code allocated a 16 GiB scatter buffer
    # per kernel row (svm-train) and 7 arrays of 2^31 entries (svm-scale). Run under a 3 GiB
    # address-space limit, peak RSS compared with the same commands on plain heart_scale.
    data = tmp_path / "w.svm"
    data.write_text(re.sub(r" *\n", f" {TOP}:1\n", HEART.read_text()))
    limit = 3 << 30

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    # Both files once first, to warm the JIT cache (a cold cache puts numba's compilation, over
    # 1 GiB of LLVM at its peak, into the process); then measured: the wide-index run must not
    # need more than the plain one + 256 MiB.
    def peak(path, limit=None):
        res = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, str(path), str(tmp_path)],
                             capture_output=True, text=True, timeout=900,
                             preexec_fn=cap if limit else None)
        assert res.returncode == 0, res.stderr[-2000:]
        return int(res.stdout.split()[-1])

    peak(HEART)
    peak(data, limit)
    plain_mib = peak(HEART)
    wide_mib = peak(data, limit)
    assert wide_mib < plain_mib + 256, (wide_mib, plain_mib)
