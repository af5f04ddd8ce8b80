"""Decision values, predictions and probabilities against libsvm-official, and the svm-predict CLI.

Models are trained by libsvm-official (LIBSVM 3.37) and saved with svm_save_model; LIBSVM's
svm_predict on the same model and data is the reference: labels identical, decision values and
probabilities within 1e-9 relative (atol 1e-12 near 0). Shared data come from ``LASVM_DATA``
(lasvm_cli.tools.datasets.data_dir); tests that need them skip when they are missing.
"""

import lzma
import random
from pathlib import Path

import numpy as np
import pytest

from lasvm_cli.numerics.data import kernel_data
from lasvm_cli.io.model_file import read_model
from lasvm_cli.io.svmlight import read_svmlight

svmutil = pytest.importorskip("libsvm.svmutil")

REPO = Path(__file__).resolve().parent.parent


def data_dir():
    from lasvm_cli.tools.datasets import data_dir as where

    return where()


def heart_file():
    p = REPO / "data" / "heart_scale"
    if p.exists():
        return p
    p = data_dir() / "heart_scale" / "all.svm.xz"
    if not p.exists():
        pytest.skip("heart_scale not available")
    return p


def shared_lines(name, part):
    p = data_dir() / name / f"{part}.svm.xz"
    if not p.exists():
        pytest.skip(f"{p} not available (set LASVM_DATA)")
    with lzma.open(p, "rt") as f:
        return f.readlines()


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("predict")


@pytest.fixture(scope="module")
def heart(work):
    src = heart_file()
    if str(src).endswith(".xz"):
        with lzma.open(src, "rt") as f:
            text = f.read()
        dst = work / "heart_scale"
        dst.write_text(text)
        return dst
    return src


@pytest.fixture(scope="module")
def usps(work):
    lines = shared_lines("usps", "train")
    rng = random.Random(0)
    sample = rng.sample(lines, 2000)
    train, test = work / "usps_train", work / "usps_test"
    train.write_text("".join(sample[:1500]))
    test.write_text("".join(sample[1500:]))
    return train, test


@pytest.fixture(scope="module")
def adult(work):
    tr = shared_lines("adult", "train")
    te = shared_lines("adult", "test")
    rng = random.Random(1)
    train, test = work / "adult_train", work / "adult_test"
    train.write_text("".join(rng.sample(tr, 3000)))
    test.write_text("".join(rng.sample(te, 1500)))
    return train, test


def train_libsvm(train_file, options, model_path):
    y, x = svmutil.svm_read_problem(str(train_file))
    m = svmutil.svm_train(y, x, options + " -q")
    svmutil.svm_save_model(str(model_path), m)
    return model_path


def libsvm_predict(test_file, model_path, prob):
    y, x = svmutil.svm_read_problem(str(test_file))
    m = svmutil.svm_load_model(str(model_path))
    labels, _, vals = svmutil.svm_predict(y, x, m, ("-b 1 " if prob else "") + "-q")
    return np.array(labels), np.array(vals, np.float64)


def ours(test_file, model_path, prob):
    model = read_model(model_path)
    d = read_svmlight(test_file, precomputed=model.kernel_type == 4)
    kd = kernel_data(d.indptr, d.indices, d.values, kernel_type=model.kernel_type)
    dec = model.decision_values(kd)
    if prob:
        labels, probs = model.predict_probability(kd, dec)
        return labels, probs, dec
    return model.predict_from_values(dec), dec, dec


def check_against_libsvm(train_file, test_file, options, tmp, prob=False, regression=False):
    mpath = train_libsvm(train_file, options, tmp / ("m" + options.replace(" ", "_")))
    ref_labels, ref_vals = libsvm_predict(test_file, mpath, prob)
    labels, vals, _ = ours(test_file, mpath, prob)
    vals = np.asarray(vals).reshape(ref_vals.shape)
    if regression:
        np.testing.assert_allclose(labels, ref_labels, rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_array_equal(labels, ref_labels)
    np.testing.assert_allclose(vals, ref_vals, rtol=1e-9, atol=1e-12)
    return mpath


@pytest.mark.parametrize("options", [
    "-c 1", "-t 0 -c 0.1", "-t 1 -d 2 -g 0.1 -r 1", "-t 3 -g 0.01 -r -0.5", "-s 1 -n 0.3",
])
def test_heart_classification(heart, work, options):
    check_against_libsvm(heart, heart, options, work)


@pytest.mark.parametrize("options", ["-s 3", "-s 4 -t 1 -d 2 -g 0.1", "-s 3 -b 1"])
def test_heart_regression(heart, work, options):
    check_against_libsvm(heart, heart, options, work, regression=True)


def test_heart_one_class(heart, work):
    check_against_libsvm(heart, heart, "-s 2 -n 0.2", work)


def test_heart_one_class_probability(heart, work):
    check_against_libsvm(heart, heart, "-s 2 -b 1", work, prob=True)


def test_heart_probability(heart, work):
    check_against_libsvm(heart, heart, "-b 1", work, prob=True)


def test_heart_precomputed(heart, work):
    d = read_svmlight(heart)
    X = kernel_data(d.indptr, d.indices, d.values, dense=True).X
    K = X @ X.T
    path = work / "heart_pre"
    with open(path, "w") as f:
        for i in range(K.shape[0]):
            f.write("%g 0:%d " % (d.y[i], i + 1)
                    + " ".join("%d:%.17g" % (j + 1, K[i, j]) for j in range(K.shape[0])) + "\n")
    check_against_libsvm(path, path, "-t 4", work)


def test_usps_multiclass(usps, work):
    train, test = usps
    check_against_libsvm(train, test, "-g 0.01 -c 10", work)


def test_usps_multiclass_probability(usps, work):
    train, test = usps
    small = work / "usps_small"
    small.write_text("".join(Path(train).read_text().splitlines(True)[:600]))
    check_against_libsvm(small, test, "-g 0.01 -b 1", work, prob=True)


def test_adult(adult, work):
    train, test = adult
    check_against_libsvm(train, test, "-c 10 -g 0.05", work)


def test_adult_probability(adult, work):
    train, test = adult
    check_against_libsvm(train, test, "-b 1", work, prob=True)


def test_ovo_vote_ties_go_to_earlier_label():
    from lasvm_cli.numerics.model import SVMModel

    # 3 classes, each pair a 1-SV machine with constant decision values chosen for a 3-way tie
    m = SVMModel("c_svc", 0, 3, 0.0, 0.0, 3, [5, 7, 9], [0.0, 0.0, 0.0], [1, 1, 1],
                 np.zeros((2, 3)), [0, 1, 2, 3], [1, 1, 1], [1.0, 1.0, 1.0])
    dec = np.array([[1.0, -1.0, 1.0],    # 5 beats 7, 9 beats 5, 7 beats 9: tie -> 5
                    [-1.0, -1.0, 1.0],   # 7: 1+1, 9: 1 -> 7
                    [0.0, 0.0, 0.0]])    # value 0 votes for j: 7 gets 1, 9 gets 2 -> 9
    np.testing.assert_array_equal(m.predict_from_values(dec), [5.0, 7.0, 9.0])


# ---------------------------------------------------------------------------------------------
# svm-predict CLI


def run_cli(args):
    from click.testing import CliRunner

    from lasvm_cli.cli.main import svm_predict

    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 always separates stderr
        runner = CliRunner()
    res = runner.invoke(svm_predict, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def heart_models(heart, work):
    return {
        "plain": train_libsvm(heart, "", work / "cli_plain.model"),
        "prob": train_libsvm(heart, "-b 1", work / "cli_prob.model"),
        "oc": train_libsvm(heart, "-s 2 -b 1", work / "cli_oc.model"),
        "svr": train_libsvm(heart, "-s 3 -b 1", work / "cli_svr.model"),
    }


def test_cli_plain(heart, heart_models, tmp_path):
    out = tmp_path / "out"
    code, stdout, stderr = run_cli([heart, heart_models["plain"], out])
    assert code == 0
    ref_labels, _ = libsvm_predict(heart, heart_models["plain"], False)
    assert out.read_text() == "".join("%.17g\n" % v for v in ref_labels)
    y = read_svmlight(heart).y
    correct = int((ref_labels == y).sum())
    assert stdout == "Accuracy = %g%% (%d/%d) (classification)\n" % (
        correct / len(y) * 100, correct, len(y))


def test_cli_quiet_and_decision_values(heart, heart_models, tmp_path):
    out, dv = tmp_path / "out", tmp_path / "dv"
    code, stdout, _ = run_cli(["-q", "--decision-values", dv, heart, heart_models["plain"], out])
    assert code == 0 and stdout == ""
    _, ref = libsvm_predict(heart, heart_models["plain"], False)
    got = np.loadtxt(dv).reshape(ref.shape)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_cli_probability(heart, heart_models, tmp_path):
    out = tmp_path / "out"
    code, stdout, _ = run_cli(["-b", "1", heart, heart_models["prob"], out])
    assert code == 0 and stdout.startswith("Accuracy = ")
    lines = out.read_text().splitlines()
    assert lines[0] == "labels 1 -1"
    labels, probs = libsvm_predict(heart, heart_models["prob"], True)
    assert len(lines) == len(labels) + 1
    for line, lab, p in zip(lines[1:], labels, probs):
        f = line.split()
        assert f[0] == "%g" % lab
        np.testing.assert_allclose([float(v) for v in f[1:]], p, rtol=2e-5)


def test_cli_probability_disabled_message(heart, heart_models, tmp_path):
    code, stdout, _ = run_cli([heart, heart_models["prob"], tmp_path / "o"])
    assert code == 0
    assert stdout.startswith("Model supports probability estimates, but disabled in "
                             "prediction.\nAccuracy = ")
    code, stdout, _ = run_cli(["-q", heart, heart_models["prob"], tmp_path / "o"])
    assert stdout == ""


def test_cli_no_probability_model(heart, heart_models, tmp_path):
    out = tmp_path / "o"
    code, stdout, stderr = run_cli(["-b", "1", heart, heart_models["plain"], out])
    assert code == 1
    assert stderr == "Model does not support probabiliy estimates\n"
    assert not out.exists()


def test_cli_one_class_probability(heart, heart_models, tmp_path):
    out = tmp_path / "o"
    code, stdout, _ = run_cli(["-b", "1", heart, heart_models["oc"], out])
    assert code == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "label normal outlier"
    labels, probs = libsvm_predict(heart, heart_models["oc"], True)
    assert lines[1:] == ["%g %g %g" % (lab, p[0], p[1]) for lab, p in zip(labels, probs)]


def test_cli_svr(heart, heart_models, tmp_path):
    out = tmp_path / "o"
    code, stdout, _ = run_cli(["-b", "1", heart, heart_models["svr"], out])
    assert code == 0
    sigma = read_model(heart_models["svr"]).probA[0]
    ref, _ = libsvm_predict(heart, heart_models["svr"], False)
    y = read_svmlight(heart).y
    n = len(y)
    mse = float(np.sum((ref - y) ** 2)) / n
    lines = stdout.splitlines()
    assert lines[0] == "Prob. model for test data: target value = predicted value + z,"
    assert lines[1] == "z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma=%g" % sigma
    assert lines[2] == "Mean squared error = %g (regression)" % mse
    assert lines[3].startswith("Squared correlation coefficient = ")
    got = np.array([float(v) for v in out.read_text().split()])
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_cli_usage_and_errors(heart, heart_models, tmp_path):
    from lasvm_cli.cli.predict import USAGE

    code, stdout, _ = run_cli([])
    assert code == 1 and stdout == USAGE
    code, stdout, stderr = run_cli(["-x", "1", heart, heart_models["plain"], tmp_path / "o"])
    assert code == 1 and stdout == USAGE and "Unknown option: -x" in stderr
    code, stdout, _ = run_cli([heart, heart_models["plain"]])
    assert code == 1 and stdout == USAGE
    code, _, stderr = run_cli([tmp_path / "missing", heart_models["plain"], tmp_path / "o"])
    assert code == 1 and stderr == f"can't open input file {tmp_path / 'missing'}\n"
    code, _, stderr = run_cli([heart, tmp_path / "nomodel", tmp_path / "o"])
    assert code == 1 and stderr == f"can't open model file {tmp_path / 'nomodel'}\n"
    bad = tmp_path / "bad.model"
    bad.write_text("svm_type c_svc\nfoo 1\n")
    code, _, stderr = run_cli([heart, bad, tmp_path / "o"])
    assert code == 1
    assert stderr.endswith(f"can't open model file {bad}\n") and "[foo]" in stderr
    code, _, stderr = run_cli([heart, heart_models["plain"], tmp_path / "nodir" / "o"])
    assert code == 1 and stderr == (f"can't open output file {tmp_path / 'nodir' / 'o'}: "
                                    f"no such directory {tmp_path / 'nodir'}\n")
    assert not (tmp_path / "o").exists()


def test_cli_bad_test_file_leaves_no_output(heart, heart_models, tmp_path):
    bad = tmp_path / "bad_test"
    lines = Path(heart).read_text().splitlines(True)
    bad.write_text("".join(lines[:4]) + "1 3:abc\n" + "".join(lines[4:10]))
    out = tmp_path / "o"
    code, stdout, stderr = run_cli([bad, heart_models["plain"], out])
    assert code == 1
    assert stderr.startswith(f"{bad}:5: ")
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad_test"]


def test_cli_empty_test_file(heart_models, tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("")
    code, stdout, _ = run_cli([empty, heart_models["plain"], tmp_path / "o"])
    assert code == 0
    assert stdout == "Accuracy = -nan% (0/0) (classification)\n"
    assert (tmp_path / "o").read_text() == ""
