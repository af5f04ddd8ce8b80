"""Model files: LIBSVM 3.37 files read and written back byte-identically, the multiclass
extension, and clear errors for bad files."""

import lzma
import random
from pathlib import Path

import numpy as np
import pytest

from lasvm_cli.base.errors import ModelFormatError
from lasvm_cli.io.model_file import format_model, parse_model, read_model, write_model
from lasvm_cli.numerics.model import SVMModel

svmutil = pytest.importorskip("libsvm.svmutil")

REPO = Path(__file__).resolve().parent.parent


def data_dir():
    from lasvm_cli.tools.datasets import data_dir as where

    return where()


@pytest.fixture(scope="module")
def heart_problem():
    p = REPO / "data" / "heart_scale"
    if not p.exists():
        p = data_dir() / "heart_scale" / "all.svm.xz"
        if not p.exists():
            pytest.skip("heart_scale not available")
        with lzma.open(p, "rt") as f:
            import io

            return svmutil.svm_read_problem(io.StringIO(f.read()))
    return svmutil.svm_read_problem(str(p))


HEART_OPTIONS = [
    "", "-b 1", "-t 0 -c 0.1", "-t 1 -d 2 -g 0.1 -r 1", "-t 1 -d 4 -g 0.5 -r 0",
    "-t 3 -g 0.01 -r -0.5", "-s 1 -n 0.3", "-s 1 -n 0.3 -b 1", "-s 2", "-s 2 -b 1", "-s 3",
    "-s 3 -b 1", "-s 4 -p 0.2", "-c 1000 -g 2",
]


def roundtrip(m, tmp_path):
    ref = tmp_path / "ref.model"
    svmutil.svm_save_model(str(ref), m)
    ours = tmp_path / "ours.model"
    model = read_model(ref)
    write_model(model, ours)
    assert ours.read_bytes() == ref.read_bytes()
    return model


@pytest.mark.parametrize("options", HEART_OPTIONS)
def test_heart_roundtrip(heart_problem, tmp_path, options):
    y, x = heart_problem
    m = svmutil.svm_train(y, x, options + " -q")
    model = roundtrip(m, tmp_path)
    assert model.total_sv == m.get_nr_sv()
    assert model.check_probability_model() == bool(m.is_probability_model())


def test_multiclass_roundtrip(tmp_path):
    p = data_dir() / "usps" / "train.svm.xz"
    if not p.exists():
        pytest.skip("usps not available")
    with lzma.open(p, "rt") as f:
        lines = [next(f) for _ in range(2000)]
    lines = random.Random(3).sample(lines, 500)
    src = tmp_path / "usps500"
    src.write_text("".join(lines))
    y, x = svmutil.svm_read_problem(str(src))
    for options in ("-g 0.01", "-g 0.01 -b 1", "-s 1 -n 0.1 -t 1 -d 3 -g 0.01"):
        m = svmutil.svm_train(y, x, options + " -q")
        model = roundtrip(m, tmp_path)
        assert model.nr_class == 10
        assert list(model.label) == list(m.get_labels())
        assert list(model.nSV) == list(m.get_nr_sv_per_class()) if hasattr(
            m, "get_nr_sv_per_class") else True
        coef = np.array(m.get_sv_coef()).T
        np.testing.assert_array_equal(model.sv_coef, coef)


def test_negative_zero_and_relabelled_classes(tmp_path):
    # labels {2, 7, 3} in first-occurrence order; 3 classes give "-0" coefficients sometimes
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.repeat([2, 7, 3], 20).astype(float)
    X[y == 7] += 2
    m = svmutil.svm_train(list(y), [dict(enumerate(r, 1)) for r in X.tolist()], "-q -c 10")
    model = roundtrip(m, tmp_path)
    assert list(model.label) == [2, 7, 3]
    text = format_model(model)
    assert text.splitlines()[-1].endswith(" ")


def test_sv_lines_equal_formatting_each_value(tmp_path):
    # The writer formats each distinct value once: repeated values, -0.0 beside 0.0, values
    # equal to 8 digits but not in their bits, subnormals, SVs without features, float32.
    rng = np.random.default_rng(4)
    pool = np.array([0.0, -0.0, 1.0, -1.0, 0.1, 0.1 + 1e-16, 5e-324, -2.5e-310, 1e30,
                     123456789.0, 0.3333333333333333, 2 / 3])
    counts = rng.integers(0, 6, size=40)
    counts[[0, 7, 39]] = 0
    indptr = np.concatenate([[0], np.cumsum(counts)])
    nnz = int(indptr[-1])
    values = np.concatenate([pool[rng.integers(0, pool.size, nnz - 10)], rng.normal(size=10)])
    values[:2] = [-0.0, 0.0]
    indices = np.concatenate([np.sort(rng.choice(1000, c, replace=False)) + 1
                              for c in counts]).astype(np.int32)
    coef = rng.normal(size=(2, 40))
    coef[0, :3] = -0.0
    for vals in (values, values.astype(np.float32)):
        model = SVMModel(svm_type="c_svc", kernel_type=2, degree=3, gamma=0.5, coef0=0.0,
                         nr_class=3,
                         label=np.array([1, 2, 3]), rho=np.zeros(3),
                         nSV=np.array([10, 10, 20]), sv_coef=coef, sv_indptr=indptr,
                         sv_indices=indices, sv_values=vals)
        expected = "".join(
            "".join("%.17g " % c for c in coef[:, i].tolist())
            + "".join("%d:%.8g " % (indices[p], vals[p]) for p in range(indptr[i], indptr[i + 1]))
            + "\n" for i in range(40))
        text = format_model(model)
        assert text.endswith("SV\n" + expected)
        assert ":-0 " in expected and ":0 " in expected and "-0 " in text.split("SV\n")[1][:4]
        back = parse_model(text)
        np.testing.assert_array_equal(back.sv_indptr, indptr)
        np.testing.assert_array_equal(back.sv_indices, indices)


def test_precomputed_roundtrip(heart_problem, tmp_path):
    y, x = heart_problem
    y = y[:80]
    X = np.zeros((80, 14))
    for i, d in enumerate(x[:80]):
        for k, v in d.items():
            X[i, k] = v
    K = X @ X.T
    xp = [{0: i + 1, **{j + 1: K[i, j] for j in range(80)}} for i in range(80)]
    m = svmutil.svm_train(y, xp, "-q -t 4")
    model = roundtrip(m, tmp_path)
    assert (model.sv_indices == 0).all()
    assert "0:" in (tmp_path / "ours.model").read_text().splitlines()[-1]


def test_single_class_model_roundtrip(tmp_path):
    text = ("svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 1\ntotal_sv 0\nrho\n"
            "label 4\nnr_sv 0\nSV\n")
    model = parse_model(text)
    assert format_model(model) == text


# ---------------------------------------------------------------------------------------------
# extension


def ovr_model():
    # 3 classes, 4 SVs in label order (class 5: 2 SVs, class 6: 1, class 8: 1), linear kernel
    coef = np.array([[1.0, 0.5, -1.0, -0.5],
                     [-0.25, -0.0, 1.0, -0.75],
                     [-0.5, -0.5, -0.5, 1.5]])
    return SVMModel("c_svc", 0, 3, 0.0, 0.0, 3, [5, 6, 8], [0.1, -0.2, 0.3], [2, 1, 1], coef,
                    [0, 2, 3, 5, 6], [1, 2, 1, 1, 3, 2], [1.0, 0.5, -1.0, 0.25, 2.0, 1.5],
                    multiclass="ovr")


def test_ovr_roundtrip_and_layout(tmp_path):
    model = ovr_model()
    path = tmp_path / "ovr.model"
    write_model(model, path)
    text = path.read_text()
    lines = text.splitlines()
    assert lines[:8] == ["svm_type c_svc", "multiclass ovr", "kernel_type linear", "nr_class 3",
                         "total_sv 4", "rho 0.10000000000000001 -0.20000000000000001 "
                         "0.29999999999999999", "label 5 6 8", "nr_sv 2 1 1"]
    assert lines[8] == "SV"
    assert lines[9] == "1 -0.25 -0.5 1:1 2:0.5 "
    assert lines[10] == "0.5 -0 -0.5 1:-1 "
    back = read_model(path)
    assert back.multiclass == "ovr"
    np.testing.assert_array_equal(back.sv_coef, model.sv_coef)
    write_model(back, tmp_path / "again.model")
    assert (tmp_path / "again.model").read_bytes() == path.read_bytes()


def test_ovr_decision_and_predict():
    from lasvm_cli.numerics.data import kernel_data

    model = ovr_model()
    T = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 0.0], [-1.0, 2.0, 0.5]])
    indptr, indices, values = [0], [], []
    for r in T:
        nz = np.flatnonzero(r)
        indices += list(nz + 1)
        values += list(r[nz])
        indptr.append(len(indices))
    kd = kernel_data(np.array(indptr), np.array(indices), np.array(values))
    dec = model.decision_values(kd)
    # dense reference: f_c(x) = sum_i coef[c,i] <sv_i, x> - rho[c]
    SV = np.zeros((4, 4))
    for i in range(4):
        for p in range(model.sv_indptr[i], model.sv_indptr[i + 1]):
            SV[i, model.sv_indices[p]] = model.sv_values[p]
    Tp = np.hstack([np.zeros((4, 1)), T])
    ref = (Tp @ SV.T) @ model.sv_coef.T - model.rho
    np.testing.assert_allclose(dec, ref, rtol=1e-12, atol=1e-12)
    pred = model.predict(kd)
    np.testing.assert_array_equal(pred, model.label[np.argmax(ref, axis=1)].astype(float))
    # all-zero row: values are -rho = (-0.1, 0.2, -0.3) -> class 6; ties go to the first class
    assert pred[2] == 6.0
    assert model.predict_from_values(np.array([[1.0, 1.0, 0.0]]))[0] == 5.0


def test_libsvm_rejects_extension(tmp_path):
    path = tmp_path / "ovr.model"
    write_model(ovr_model(), path)
    assert svmutil.svm_load_model(str(path)) is None


def test_binary_nobias_is_plain_libsvm(tmp_path):
    model = SVMModel("c_svc", 2, 3, 0.5, 0.0, 2, [1, -1], [0.0], [1, 1], [[1.0, -1.0]],
                     [0, 1, 2], [1, 2], [1.0, 1.0], multiclass="binary_nobias")
    path = tmp_path / "nb.model"
    write_model(model, path)
    assert "multiclass" not in path.read_text()
    assert svmutil.svm_load_model(str(path)) is not None


# ---------------------------------------------------------------------------------------------
# errors

GOOD = ("svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0.1\n"
        "label 1 -1\nnr_sv 1 1\nSV\n1 1:0.5 2:1 \n-1 1:-0.5 \n")


def test_good_text_parses():
    m = parse_model(GOOD, "g.model")
    assert m.total_sv == 2 and m.gamma == 0.5 and list(m.label) == [1, -1]


@pytest.mark.parametrize("text, line, words", [
    (GOOD.replace("gamma 0.5", "gamma 0.5\nfoo 3"), 4, "unknown text in model file: [foo]"),
    (GOOD.replace("gamma 0.5", "gamma abc"), 3, "bad number 'abc'"),
    (GOOD.replace("svm_type c_svc", "svm_type c_svx"), 1, "unknown svm type"),
    (GOOD.replace("kernel_type rbf", "kernel_type gauss"), 2, "unknown kernel"),
    (GOOD.replace("nr_sv 1 1", "nr_sv 1 2"), None, "does not add up to total_sv"),
    (GOOD.replace("1 1:0.5 2:1 \n", ""), 11, "only 1 SV lines"),
    (GOOD.replace("-1 1:-0.5", "-1 1:-0.5 2-3"), 11, "bad SV feature '2-3'"),
    (GOOD.replace("-1 1:-0.5", "x 1:-0.5"), 11, "bad SV coefficient 'x'"),
    (GOOD.replace("SV\n1 1:0.5 2:1 \n-1 1:-0.5 \n", ""), None, "no 'SV' line"),
    (GOOD.replace("nr_class 2\n", "").replace("rho 0.1", "rho 0.1\nnr_class 2"), 5,
     "'rho' before 'nr_class'"),
    (GOOD.replace("gamma 0.5\n", ""), None, "missing 'gamma'"),
    (GOOD.replace("label 1 -1\n", ""), None, "missing 'label'"),
    (GOOD.replace("label 1 -1", "label 1 x"), 7, "bad integer 'x'"),
    ("svm_type c_svc\nmulticlass ovx\n", 2, "unknown multiclass scheme"),
])
def test_bad_model_files(tmp_path, text, line, words):
    path = tmp_path / "bad.model"
    path.write_text(text)
    with pytest.raises(ModelFormatError) as err:
        read_model(path)
    assert words in str(err.value)
    assert str(err.value).startswith(str(path) + (f":{line}:" if line else ":"))
    assert err.value.line == line


def test_write_is_atomic(tmp_path):
    model = parse_model(GOOD)
    with pytest.raises(OSError):
        write_model(model, tmp_path / "nodir" / "m.model")
    path = tmp_path / "m.model"
    path.write_text("old")
    write_model(model, path)
    assert path.read_text() == format_model(model)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.model"]


def _parse_outcome(text):
    try:
        m = parse_model(text, "m")
    except ModelFormatError as e:
        return str(e)
    return [getattr(m, f).tobytes() for f in ("sv_coef", "sv_indptr", "sv_indices",
                                               "sv_values")]


def test_tokenized_sv_lines_agree_with_the_python_parse(monkeypatch):
    # SV lines go through the svmlight reader's tokenizer; whatever it takes must parse
    # exactly as the Python parse does, and whatever it refuses falls back to that parse
    # (same errors).
    # Mutated copies of a 3-class model: inserted, deleted and replaced characters.
    from lasvm_cli.io import model_file

    rng = random.Random(7)
    base = GOOD.replace("nr_class 2", "nr_class 3").replace("label 1 -1", "label 1 -1 2")
    base = base.replace("rho 0.1", "rho 0.1 0.2 -0.3").replace("nr_sv 1 1", "nr_sv 1 1 1")
    base = base.replace("total_sv 2", "total_sv 3").split("SV\n")[0] + "SV\n" + (
        "0.10000000000000001 -2 1:0.5 2:1 \n"
        "-1 -0 1:-0.5 7:1e-05 12:+3 \n"
        "3.5E-3 0.33333333333333331 2:0.25 3:.5 4:5. \r\n")
    alphabet = "0123456789.:+-eE _\t\r\nx,"
    texts = [base]
    head, sv = base.split("SV\n")
    for _ in range(600):
        chars = list(sv)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(chars))
            op = rng.random()
            if op < 0.4:
                chars.insert(at, rng.choice(alphabet))
            elif op < 0.7:
                del chars[at]
            else:
                chars[at] = rng.choice(alphabet)
        texts.append(head + "SV\n" + "".join(chars))
    compiled = [_parse_outcome(t) for t in texts]
    monkeypatch.setattr(model_file, "_scanned_sv_block", lambda *args: None)
    python = [_parse_outcome(t) for t in texts]
    assert compiled == python
    assert not isinstance(python[0], str)
    accepted = sum(not isinstance(o, str) for o in python)
    assert 60 < accepted < 540  # both kinds of outcome were exercised
