"""SMO core and binary C-SVC against LIBSVM 3.37 (libsvm-official, in-process) and known cases."""

import lzma
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from lasvm_cli.numerics.data import kernel_data
from lasvm_cli.tools.datasets import data_dir
from lasvm_cli.numerics.kernels import LINEAR, POLY, RBF, make_params
from lasvm_cli.qp import PREV_I, PREV_J, WS_HMG
from lasvm_cli.qp import select as sel
from lasvm_cli.qp.smo import make_state, objective, smo_init, smo_run
from lasvm_cli.numerics import cache as kc
from lasvm_cli.solvers.csvc import solve_binary

from .conftest import libsvm_train_stdout, precomputed

ROOT = Path(__file__).resolve().parents[1]
HEART = ROOT / "data" / "heart_scale"
DATA = data_dir()

svmutil = pytest.importorskip("libsvm.svmutil")
sk_datasets = pytest.importorskip("sklearn.datasets")


def load(path, n=None):
    opener = lzma.open if str(path).endswith(".xz") else open
    with opener(path, "rb") as f:
        X, y = sk_datasets.load_svmlight_file(f)
    X = X.tocsr()
    if n is not None:
        X, y = X[:n], y[:n]
    X.sort_indices()
    return X, y


def to_kd(X):
    return kernel_data(X.indptr, X.indices, X.data, width=X.shape[1])


def libsvm_train(X, y, opts):
    """svm_train in-process; returns (model, #iter, obj) parsed from LIBSVM's stdout."""
    m, out = libsvm_train_stdout(X, y, opts)
    it = [int(v) for v in re.findall(r"#iter = (\d+)", out)]
    obj = [float(v) for v in re.findall(r"obj = (\S+),", out)]
    return m, it[-1], obj[-1]


def binary_y(y):
    return np.where(y == y[0], 1.0, -1.0)  # +1 = first label seen, LIBSVM's order


@pytest.fixture(scope="module")
def heart():
    return load(HEART)


# ---------------------------------------------------------------------------------------------
# the heart_scale oracle (LIBSVM 3.37's output)


@pytest.mark.parametrize("shrinking", [True, False])
def test_heart_scale_oracle(heart, shrinking):
    X, y = heart
    kp = make_params(RBF, 3, 1 / 13, 0.0)
    r = solve_binary(to_kd(X), kp, binary_y(y), 1.0, 1.0, shrinking=shrinking, wss="so")
    m, it, obj = libsvm_train(X, y, f"-c 1 -g {1/13!r} -h {int(shrinking)}")
    assert (r.n_iter, r.n_sv, r.n_bsv) == (it, m.l, r.n_bsv)
    assert r.obj == pytest.approx(obj, rel=1e-6)
    assert r.rho[0] == pytest.approx(m.rho[0], rel=1e-6)
    if shrinking:
        assert (r.n_iter, r.n_sv, r.n_bsv) == (162, 132, 107)
        assert r.obj == pytest.approx(-100.877288, rel=1e-6)
        assert r.rho[0] == pytest.approx(0.424462, abs=1e-6)
    # sv_coef of LIBSVM's SVs (in original order) are ours
    sv = np.array(m.get_sv_indices()) - 1
    np.testing.assert_allclose(r.coef[0][sv], np.array(m.get_sv_coef())[:, 0], rtol=1e-6, atol=1e-9)
    assert not r.hit_max_iter


def test_signed_gradient_mapping(heart):
    """y_i G_i = -g_i with g_i = y_i - sum_j alpha_j K_ij (alpha = y a, STYLE 6.2)."""
    X, y = heart
    X, y = X[:80], binary_y(y[:80])
    kd, kp = to_kd(X), make_params(RBF, 3, 0.1, 0.0)
    st = make_state(kd, kp, y, -np.ones(80), np.full(80, 1.0), shrinking=False)
    c = kc.make_cache(80, 10)
    smo_init(st, c, kd, kp, False)
    smo_run(st, c, kd, kp, 37)  # stop midway
    D = X.toarray()
    sq = (D * D).sum(1)
    K = np.exp(-0.1 * (sq[:, None] + sq[None, :] - 2 * D @ D.T))
    alpha = np.zeros(80)
    alpha[c.perm] = st.y * st.alpha
    g = y - K @ alpha
    G = np.zeros(80)
    G[c.perm] = st.G
    np.testing.assert_allclose(y * G, -g, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# against LIBSVM on more problems


def _compare(X, y, kp, opts, Cp, Cn, kd=None):
    r = solve_binary(kd if kd is not None else to_kd(X), kp, binary_y(y), Cp, Cn)
    m, it, obj = libsvm_train(X, y, opts + " -q" * 0)
    assert r.obj == pytest.approx(obj, rel=1e-4)
    assert abs(r.n_sv - m.l) <= max(1, 0.01 * m.l)
    return r


@pytest.fixture(scope="module")
def adult1k():
    p = DATA / "adult" / "train.svm.xz"
    if not p.exists():
        pytest.skip("no adult data (set LASVM_DATA)")
    return load(p, 1000)


@pytest.fixture(scope="module")
def usps2():
    p = DATA / "usps" / "train.svm.xz"
    if not p.exists():
        pytest.skip("no usps data (set LASVM_DATA)")
    X, y = load(p, 3000)
    keep = np.flatnonzero((y == 1) | (y == 2))[:600]
    X, y = X[keep], y[keep]
    X.sort_indices()
    return X, y


def test_adult_rbf_unequal_weights(adult1k):
    X, y = adult1k
    g = 1 / 123
    lab0 = y[0]
    # LIBSVM: -wi scales C of label i; +1 in our binary y is y[0]'s label
    w_first, w_other = 2.0, 0.5
    opts = f"-c 1 -g {g!r} -w{int(lab0)} {w_first} -w{int(-lab0)} {w_other}"
    _compare(X, y, make_params(RBF, 3, g, 0.0), opts, w_first, w_other)


def test_adult_linear(adult1k):
    X, y = adult1k
    _compare(X, y, make_params(LINEAR), "-t 0 -c 0.5", 0.5, 0.5)


def test_usps_poly(usps2):
    X, y = usps2
    _compare(X, y, make_params(POLY, 3, 1 / 256, 1.0), "-t 1 -d 3 -g 0.00390625 -r 1 -c 10",
             10.0, 10.0)


def test_usps_rbf(usps2):
    X, y = usps2
    _compare(X, y, make_params(RBF, 3, 1 / 256, 0.0), "-c 10 -g 0.00390625", 10.0, 10.0)


# ---------------------------------------------------------------------------------------------
# the three criteria


def _check_solution(r, y, Cp, Cn, eps):
    C = np.where(y > 0, Cp, Cn)
    a = y * r.coef[0]
    assert np.all(a >= 0) and np.all(a <= C)
    assert abs(r.coef[0].sum()) < 1e-10
    assert r.counters["kkt_gap"] <= eps * (1 + 1e-9)


@pytest.mark.parametrize("shrinking", [True, False])
def test_criteria_agree(heart, shrinking):
    X, y = heart
    y = binary_y(y)
    kd, kp = to_kd(X), make_params(RBF, 3, 0.5, 0.0)
    res = {}
    for ws in ("mvp", "so", "hmg"):
        r = solve_binary(kd, kp, y, 4.0, 2.0, shrinking=shrinking, wss=ws,
                         final_kkt_check=(ws == "hmg"))
        _check_solution(r, y, 4.0, 2.0, 1e-3)
        res[ws] = r
    for ws in ("mvp", "hmg"):
        assert res[ws].obj == pytest.approx(res["so"].obj, rel=1e-3)
    assert res["hmg"].counters["mg_iterations"] > 0


def test_hmg_at_most_one_new_row_per_mg_iteration(heart):
    X, y = heart
    y = binary_y(y)
    kd, kp = to_kd(X), make_params(RBF, 3, 0.2, 0.0)
    r = solve_binary(kd, kp, y, 10.0, 10.0, shrinking=False, wss="hmg")
    cnt = r.counters
    assert cnt["mg_iterations"] > 0.5 * r.n_iter
    assert cnt["mg_extra_rows"] == 0
    # every row computed: <= 1 per MG iteration, <= 2 per MVP iteration
    assert cnt["cache_misses"] <= cnt["mg_iterations"] + 2 * cnt["mvp_fallbacks"]
    so = solve_binary(kd, kp, y, 10.0, 10.0, shrinking=False, wss="so")
    assert r.obj == pytest.approx(so.obj, rel=1e-3)


def test_hmg_shrinks():
    """Shrinking is active on HMG's path (Glasmachers & Igel 2006, Table 4: iterations with
    and without shrinking differ by a few percent): variables are shrunk (the counters), the
    previous working set never is, and on this problem the iteration count moves (14,557
    with shrinking, 13,220 without), while both stop within eps of the same optimum. On
    MNIST 0-4 against 5-9 both counts are equal, as LIBSVM 3.37's are there
    (docs/reproductions/seed-003.md)."""
    from .test_lasvm_nc_reference import kernel, sine

    X, y = sine(300, np.random.default_rng(1), 0.1)
    kd, kp = precomputed(kernel(X, "rbf1"))
    on, off = (solve_binary(kd, kp, y, 1000.0, 1000.0, wss="hmg", shrinking=shrinking,
                            final_kkt_check=True) for shrinking in (True, False))
    assert on.counters["shrinks"] > 0 and on.counters["shrunk_variables"] > 100
    assert off.counters["shrunk_variables"] == 0
    assert on.n_iter != off.n_iter
    assert on.obj == pytest.approx(off.obj, rel=1e-6)
    assert max(on.counters["kkt_gap"], off.counters["kkt_gap"]) < 1e-3


def test_hmg_theorem7_counterexample():
    """Glasmachers & Igel 2006, Theorem 7: pure MG stalls at (C,0,C,0); HMG reaches f*."""
    s3 = np.sqrt(3.0)
    Q = np.array([[2, s3, 1, s3], [s3, 4, s3, 3], [1, s3, 2, s3], [s3, 3, s3, 4]])
    y = np.array([-1.0, -1.0, 1.0, 1.0])
    K = Q * np.outer(y, y)
    kd, kp = precomputed(K)
    C = 0.1
    # from a = 0 with HMG
    r = solve_binary(kd, kp, y, C, C, eps=1e-9, shrinking=False, wss="hmg")
    assert -r.obj == pytest.approx(0.231026, abs=1e-6)
    # at alpha1 = (C, 0, C, 0) with previous working set {1, 3} (0-based {0, 2})
    st = make_state(kd, kp, y, -np.ones(4), np.full(4, C), np.array([C, 0, C, 0]), ws=WS_HMG,
                    eps=1e-9, shrinking=False)
    c = kc.make_cache(4, 1)
    smo_init(st, c, kd, kp, False)
    np.testing.assert_allclose(-st.G, [0.7, 1 - s3 / 5, 0.7, 1 - s3 / 5], atol=1e-6)  # paper's grad f
    b0 = kc.cache_row_at(c, kd, kp, 0, 4)  # rows 0 and 2 at offsets into c.buf
    b2 = kc.cache_row_at(c, kd, kp, 2, 4)
    g, bp, bb, mu = sel._mg_scan(st, c, b0, 0, 2, 0.0, -1, -1, 0.0)
    g, bp, bb, mu = sel._mg_scan(st, c, b2, 2, 0, g, bp, bb, mu)
    assert bp == -1 and g == 0.0  # pure MG: no related pair gains anything
    st.ist[PREV_I], st.ist[PREV_J] = 0, 2
    i, j, viol = sel.select_hmg(st, c, kd, kp)  # corner: falls back to MVP
    assert {i, j} == {1, 3} and viol == pytest.approx(1.3072, abs=1e-4)
    smo_run(st, c, kd, kp, 1)
    assert objective(st) == pytest.approx(-0.231026, abs=1e-6)
    np.testing.assert_allclose(st.alpha, [C, 0.09337, C, 0.09337], atol=1e-5)


def test_default_run_loads_only_its_selection_rule():
    """One compiled SMO entry point per selection rule, one signature each: a default (second
    order) run neither compiles nor loads HMG's or MVP's (a first run's JIT time), and its
    loop, start, rho and objective have one specialisation each. In a fresh
    interpreter, since other tests here run every rule and other cache types."""
    code = ("from lasvm_cli.cli.main import svm_train\n"
            "import sys; sys.argv = ['svm-train', '-q', sys.argv[1], sys.argv[2]]\n"
            "try:\n    svm_train()\nexcept SystemExit:\n    pass\n"
            "from lasvm_cli.qp import smo, select as sel\n"
            "print([len(f.signatures) for f in (smo.smo_run_so, smo.smo_run_mvp, smo.smo_run_hmg,"
            " sel.select_hmg, sel.select_mvp)])\n"
            "print([len(f.signatures) for f in (smo.smo_init, smo.calculate_rho, smo.objective)])"
            "\n")
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([sys.executable, "-c", code, str(HEART),
                              os.path.join(tmp, "m")], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[-3:-1] == ["[1, 0, 0, 0, 0]", "[1, 1, 1]"], out


def test_max_iter_and_progress(heart):
    X, y = heart
    seen = []
    r = solve_binary(to_kd(X), make_params(RBF, 3, 1 / 13, 0.0), binary_y(y), 1.0, 1.0,
                     max_iter=50, progress=lambda it, v: seen.append(it))
    assert r.hit_max_iter and r.n_iter == 50 and seen[-1] == 50
