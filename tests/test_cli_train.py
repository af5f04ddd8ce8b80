"""svm-train end to end, against LIBSVM (libsvm-official) on the same problems."""

import ctypes
import ctypes.util
import re

import numpy as np
import pytest

from lasvm_cli.cli.main import svm_predict, svm_train
from lasvm_cli.io.model_file import read_model
from lasvm_cli.io.svmlight import read_svmlight

from .conftest import libsvm_or_skip, libsvm_problem, libsvm_x, run_cli as run


def test_heart_scale_matches_libsvm_output_lines(heart_path, tmp_path):
    model = tmp_path / "heart.model"
    out = run(svm_train, [heart_path, str(model)]).stdout
    # LIBSVM 3.37's own output for `svm-train heart_scale`
    assert "optimization finished, #iter = 162\n" in out
    assert "nu = 0.431029\n" in out
    assert "obj = -100.877288, rho = 0.424462\n" in out
    assert "nSV = 132, nBSV = 107\n" in out
    assert out.endswith("Total nSV = 132\n")
    text = model.read_text().splitlines()
    assert text[:8] == ["svm_type c_svc", "kernel_type rbf", "gamma 0.076923076923076927",
                        "nr_class 2", "total_sv 132", text[5], "label 1 -1", "nr_sv 64 68"]
    assert float(text[5].split()[1]) == pytest.approx(0.42446205176771579, rel=1e-6)


def test_model_loads_in_libsvm_and_predicts_the_same(heart_path, tmp_path):
    svmutil = libsvm_or_skip()
    model = tmp_path / "heart.model"
    run(svm_train, ["-q", "-c", "4", heart_path, str(model)])
    theirs = svmutil.svm_load_model(str(model))
    d = read_svmlight(heart_path)
    labels, _, _ = svmutil.svm_predict(d.y, libsvm_x(d.indptr, d.indices, d.values), theirs, "-q")
    out = tmp_path / "pred"
    res = run(svm_predict, [heart_path, str(model), str(out)])
    ours = np.loadtxt(out)
    np.testing.assert_array_equal(ours, labels)
    assert res.stdout.startswith("Accuracy = ")


def test_quiet_prints_nothing_and_writes_the_model(heart_path, tmp_path):
    model = tmp_path / "m"
    res = run(svm_train, ["-q", heart_path, str(model)])
    assert res.stdout == "" and model.exists()


def test_cross_validation_matches_libsvm_folds(heart_path):
    # LIBSVM 3.37 on glibc: "Cross Validation Accuracy = 82.963%"
    res = run(svm_train, ["-q", "-v", "5", heart_path])
    assert res.stdout == "Cross Validation Accuracy = 82.963%\n"


def libsvm_output(path, options):
    """What libsvm-official's svm_train prints for ``options`` on ``path`` (its C code
    writes to the process's stdout and stderr: a subprocess): stdout's lines without the '.'
    and '*' progress marks (svm-train leaves them out, README) and blank lines, and stderr."""
    import subprocess
    import sys

    libsvm_or_skip()
    code = ("import sys\nfrom libsvm.svmutil import svm_read_problem, svm_train\n"
            "y, x = svm_read_problem(sys.argv[1])\nsvm_train(y, x, sys.argv[2])\n")
    res = subprocess.run([sys.executable, "-c", code, path, options], capture_output=True,
                         text=True, check=True)
    return [re.sub(r"^[.*]+", "", line) for line in res.stdout.splitlines()
            if line.strip(".*")], res.stderr


@pytest.mark.parametrize("options", ["-v 5 -c 8 -g 0.03", "-b 1", "-v 5 -b 1",
                                     "-s 3 -v 5 -p 0.2", "-v 2 -w5 2", "-b 1 -w5 2"])
def test_every_training_prints_libsvms_lines(heart_path, tmp_path, options):
    # -v prints each fold's training as LIBSVM does, -b 1 each training of the probability
    # folds (the internal 5-fold CV), not only the final lines; their warnings too (-w5 on
    # data without label 5: one per svm_train call)
    res = run(svm_train, [*options.split(), heart_path, str(tmp_path / "m")])
    lines, stderr = libsvm_output(heart_path, options)
    assert [line for line in res.stdout.splitlines() if line] == lines
    assert res.stderr == stderr


def write_four_classes(path):
    """240 rows of four overlapping classes (labels 3, 1, 2, 5: LIBSVM's first-seen order)."""
    rng = np.random.default_rng(3)
    n = 240
    centers = np.array([[0, 0, 1], [2, 0, 0], [0, 2, 0], [1, 1, 1]], float)
    lab = np.array([3, 1, 2, 5])[rng.integers(0, 4, n)]
    X = centers[np.searchsorted([1, 2, 3, 5], lab)] + rng.normal(scale=0.8, size=(n, 3))
    path.write_text("".join(f"{l} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(x)) + "\n"
                            for l, x in zip(lab, X)))
    return path


def test_multiclass_against_libsvm(tmp_path):
    svmutil = libsvm_or_skip()
    path = write_four_classes(tmp_path / "multi")
    model = tmp_path / "multi.model"
    out = run(svm_train, ["-c", "2", "-w2", "3", str(path), str(model)]).stdout
    d = read_svmlight(str(path))
    prob = libsvm_problem(d.y, d.indptr, d.indices, d.values)
    ref = svmutil.svm_train(prob, "-q -c 2 -w2 3")
    ours = read_model(str(model))
    assert list(ours.label) == ref.get_labels()
    assert list(ours.nSV) == [ref.nSV[i] for i in range(4)]
    ref_rho = [ref.rho[i] for i in range(6)]
    np.testing.assert_allclose(ours.rho, ref_rho, rtol=1e-3, atol=1e-4)
    objs = [float(m) for m in re.findall(r"obj = (-?[\d.]+)", out)]
    assert len(objs) == 6
    p_labels, _, _ = svmutil.svm_predict(d.y, libsvm_x(d.indptr, d.indices, d.values), ref, "-q")
    pred = tmp_path / "pred"
    run(svm_predict, [str(path), str(model), str(pred)])
    assert (np.loadtxt(pred) == np.array(p_labels)).mean() >= 0.999


@pytest.mark.parametrize("wss", ["mvp", "so", "hmg"])
def test_working_set_selections_reach_the_same_objective(heart_path, tmp_path, wss):
    out = run(svm_train, ["--wss", wss, heart_path, str(tmp_path / "m")]).stdout
    obj = float(re.search(r"obj = (-?[\d.]+)", out).group(1))
    assert obj == pytest.approx(-100.877288, rel=1e-3)


def test_probability_model_matches_libsvm(heart_path, tmp_path):
    svmutil = libsvm_or_skip()
    model = tmp_path / "m"
    run(svm_train, ["-q", "-b", "1", heart_path, str(model)])
    ours = read_model(str(model))
    d = read_svmlight(heart_path)
    # LIBSVM draws its folds from the C library's global rand(), never seeded: reset it to the
    # state of a fresh process (srand(1)), whatever earlier tests in this process drew
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.srand(1)
    ref = svmutil.svm_train(libsvm_problem(d.y, d.indptr, d.indices, d.values), "-q -b 1")
    # LIBSVM 3.37's -b 1 model: probA -1.6841032239202511, probB -0.054170791243250346
    assert ours.probA[0] == pytest.approx(ref.probA[0], rel=1e-4)
    assert ours.probB[0] == pytest.approx(ref.probB[0], rel=1e-3, abs=1e-4)


@pytest.mark.parametrize("args,message", [
    (["-c", "0"], "ERROR: C <= 0"),
    (["-e", "-1"], "ERROR: eps <= 0"),
    (["-s", "3", "--solver", "lasvm"], "trains -s 0 (C-SVC) only"),
    (["-s", "1", "-n", "0.99"], "ERROR: specified nu is infeasible"),
    (["-s", "2", "-n", "0"], "ERROR: nu <= 0 or nu > 1"),
    (["-s", "3", "-p", "-1"], "ERROR: p < 0"),
    (["-s", "4", "--wss", "hmg"], "--wss so"),
])
def test_parameter_errors_exit_1_without_a_model(heart_path, tmp_path, args, message):
    model = tmp_path / "m"
    res = run(svm_train, args + [heart_path, str(model)], code=1)
    assert message in res.stderr
    assert not model.exists()


def test_bad_input_names_file_line_and_token(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("+1 1:0.5 2:1\n-1 2:0.5 1:1\n")
    model = tmp_path / "m"
    res = run(svm_train, [str(bad), str(model)], code=1)
    assert f"{bad}:2:" in res.stderr and "'1:1'" in res.stderr
    assert not model.exists()


def test_missing_file():
    res = run(svm_train, ["/nonexistent/file"], code=1)
    assert "can't open input file /nonexistent/file" in res.stderr


def test_usage_goes_to_stdout_with_exit_1():
    res = run(svm_train, [], code=1)
    assert res.stdout.startswith("Usage: svm-train")


def test_ovr_extension_round_trips(heart_path, tmp_path):
    model = tmp_path / "m"
    run(svm_train, ["-q", "--multiclass", "ovr", heart_path, str(model)])
    text = model.read_text()
    assert "ovr" in text
    pred = tmp_path / "p"
    res = run(svm_predict, [heart_path, str(model), str(pred)])
    acc = float(res.stdout.split("=")[1].split("%")[0])
    assert acc > 80


def test_lasvm_solver_from_the_cli_reaches_libsvm_optimum(heart_path, tmp_path):
    # LaSVM 1.1 oracle (its la_svm on heart_scale): three epochs reach LIBSVM's optimum 100.877
    out = run(svm_train, ["--solver", "lasvm", "--epochs", "3", heart_path,
                          str(tmp_path / "m")]).stdout
    obj = float(re.search(r"obj = (-?[\d.]+)", out).group(1))
    assert obj == pytest.approx(-100.877288, rel=1e-4)
    assert "Total nSV = 132" in out


def test_lasvm_one_vs_one_multiclass_predicts_like_smo(tmp_path):
    rng = np.random.default_rng(5)
    n = 300
    lab = rng.integers(1, 4, n)
    X = np.eye(3)[lab - 1] * 2 + rng.normal(scale=0.7, size=(n, 3))
    path = tmp_path / "three"
    path.write_text("".join(f"{l} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(x)) + "\n"
                            for l, x in zip(lab, X)))
    preds = {}
    for solver in ("smo", "lasvm"):
        model = tmp_path / f"{solver}.model"
        epochs = ["--epochs", "2"] if solver == "lasvm" else []  # SMO refuses --epochs
        run(svm_train, ["-q", "--solver", solver, *epochs, str(path), str(model)])
        run(svm_predict, [str(path), str(model), str(tmp_path / f"{solver}.out")])
        preds[solver] = np.loadtxt(tmp_path / f"{solver}.out")
    assert (preds["smo"] == preds["lasvm"]).mean() >= 0.98


def test_default_model_is_byte_identical_to_libsvms(heart_path, tmp_path):
    # the kernel diagonal as LIBSVM computes it (RBF: exactly 1) keeps every iterate, hence
    # rho's last digit, LIBSVM's (before the fix rho ended ...562 against LIBSVM's ...579)
    svmutil = libsvm_or_skip()
    ours = tmp_path / "ours.model"
    theirs = tmp_path / "libsvm.model"
    run(svm_train, ["-q", heart_path, str(ours)])
    y, x = svmutil.svm_read_problem(heart_path)
    svmutil.svm_save_model(str(theirs), svmutil.svm_train(y, x, "-q"))
    assert ours.read_bytes() == theirs.read_bytes()


def test_hmg_finishes_to_eps_unless_mg_stop(heart_path, tmp_path):
    """HMG's MG stopping rule alone can stop far above -e (the box clips the best pair's
    step): by default svm-train goes on until the KKT violation is below -e, as
    --final-kkt-check says; --mg-stop keeps the paper's rule alone. heart_scale -c 10 -g 1
    stops early under it (1,095 iterations against 1,203)."""
    def train(*flags):
        model = tmp_path / f"m{len(flags)}{''.join(flags)}"
        out = run(svm_train, ["-c", "10", "-g", "1", "--wss", "hmg", *flags, heart_path,
                              str(model)]).stdout
        return re.search(r"#iter = (\d+)", out).group(1), model.read_bytes()

    default, final, paper = train(), train("--final-kkt-check"), train("--mg-stop")
    assert default == final
    assert paper[0] == "1095" and default[0] == "1203" and paper[1] != default[1]
