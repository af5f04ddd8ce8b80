"""Probability functions (LIBSVM 3.37's): Platt sigmoid fit, multi-class coupling, one-class
density marks, SVR Laplace scale. End-to-end agreement with libsvm-official's -b 1 predictions
is in test_predict.py."""

import math
from pathlib import Path

import numpy as np
import pytest

from lasvm_cli.numerics import probability as P

REPO = Path(__file__).resolve().parent.parent


def nll(A, B, f, y):
    n1 = (y > 0).sum()
    n0 = len(y) - n1
    t = np.where(y > 0, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))
    z = f * A + B
    return float(np.sum(np.where(z >= 0, t * z + np.log1p(np.exp(-z)),
                                 (t - 1) * z + np.log1p(np.exp(z)))))


def test_sigmoid_train_minimises_platt_objective():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(400) < 0.4, 1.0, -1.0)
    f = y * 1.3 + rng.normal(scale=1.0, size=400) - 0.2
    A, B = P.sigmoid_train(f, y, info=lambda s: None)
    assert A < 0  # larger decision values -> more likely positive
    base = nll(A, B, f, y)
    for dA, dB in [(1e-3, 0), (-1e-3, 0), (0, 1e-3), (0, -1e-3)]:
        assert nll(A + dA, B + dB, f, y) >= base - 1e-9
    # gradient below LIBSVM's eps 1e-5
    n1 = (y > 0).sum()
    t = np.where(y > 0, (n1 + 1.0) / (n1 + 2.0), 1.0 / (len(y) - n1 + 2.0))
    p = 1 / (1 + np.exp(f * A + B))
    assert abs(np.sum(f * (t - p))) < 1e-5 and abs(np.sum(t - p)) < 1e-5


def test_sigmoid_train_separable_data_messages():
    msgs = []
    f = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    y = np.array([-1.0, -1, -1, 1, 1, 1])
    A, B = P.sigmoid_train(f, y, info=msgs.append)
    assert np.isfinite(A) and np.isfinite(B) and A < 0
    assert all(m.endswith("two-class probability estimates\n") for m in msgs)


def test_sigmoid_train_uninformative_values():
    """Balanced classes with equal decision values: the start point (A=0, B=0) is optimal."""
    f = np.array([0.0, 0.0, 0.0, 0.0])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    A, B = P.sigmoid_train(f, y, info=lambda s: None)
    assert A == 0.0 and B == pytest.approx(0.0, abs=1e-12)


def test_sigmoid_predict_stable():
    assert P.sigmoid_predict(0.0, 1.0, 0.0) == 0.5
    assert P.sigmoid_predict(1000.0, 1.0, 0.0) == 0.0
    assert P.sigmoid_predict(-1000.0, 1.0, 0.0) == 1.0
    assert P.sigmoid_predict(2.0, -1.5, 0.3) == pytest.approx(1 / (1 + math.exp(-2.7)))


def coupling_reference(r):
    """Exact minimiser of method 2: min p'Qp s.t. sum p = 1 (KKT linear system)."""
    k = r.shape[0]
    Q = np.zeros((k, k))
    for t in range(k):
        for j in range(k):
            if j != t:
                Q[t, t] += r[j, t] ** 2
                Q[t, j] = -r[j, t] * r[t, j]
    M = np.zeros((k + 1, k + 1))
    M[:k, :k] = Q
    M[:k, k] = 1
    M[k, :k] = 1
    rhs = np.zeros(k + 1)
    rhs[k] = 1
    return np.linalg.solve(M, rhs)[:k]


@pytest.mark.parametrize("k", [3, 5, 10])
def test_multiclass_probability_solves_method2(k):
    rng = np.random.default_rng(k)
    r = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            r[i, j] = rng.uniform(0.05, 0.95)
            r[j, i] = 1 - r[i, j]
    p = P.multiclass_probability(r, info=lambda s: None)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(p, coupling_reference(r), atol=5e-3)


def test_pairwise_two_class_is_the_sigmoid():
    dec = np.array([[0.7], [-2.0], [50.0]])
    probs = P.pairwise_probabilities(dec, [-1.2], [0.1], 2)
    for row, d in zip(probs, dec[:, 0]):
        p = min(max(P.sigmoid_predict(d, -1.2, 0.1), 1e-7), 1 - 1e-7)
        assert row[0] == p and row[1] == 1 - p


def test_one_class_probability_bins():
    marks = np.arange(10, dtype=float) - 4.5  # -4.5 .. 4.5
    dec = np.array([-5.0, -4.5, -4.4, -3.5, 0.0, 4.4, 4.5, 4.6])
    got = P.one_class_probability(dec, marks)
    # below marks[0] 0.001; above marks[9] 0.999; else first i with dec < marks[i] -> i/10;
    # dec == marks[9] finds no i: LIBSVM leaves 0
    np.testing.assert_array_equal(got, [0.001, 0.1, 0.1, 0.2, 0.5, 0.9, 0.0, 0.999])


def test_one_class_density_marks_match_libsvm(tmp_path):
    svmutil = pytest.importorskip("libsvm.svmutil")
    heart = REPO / "data" / "heart_scale"
    if not heart.exists():
        pytest.skip("heart_scale not available")
    from lasvm_cli.numerics.data import kernel_data
    from lasvm_cli.io.model_file import read_model
    from lasvm_cli.io.svmlight import read_svmlight

    y, x = svmutil.svm_read_problem(str(heart))
    m = svmutil.svm_train(y, x, "-s 2 -b 1 -q")
    svmutil.svm_save_model(str(tmp_path / "oc.model"), m)
    model = read_model(tmp_path / "oc.model")
    d = read_svmlight(heart)
    dec = model.decision_values(kernel_data(d.indptr, d.indices, d.values))[:, 0]
    marks = P.one_class_density_marks(dec)
    np.testing.assert_allclose(marks, model.prob_density_marks, rtol=1e-9, atol=1e-12)


def test_one_class_density_marks_too_few():
    assert P.one_class_density_marks(np.array([1.0, 2, 3, 4, 5, -1, -2])) is None
    assert P.ONE_CLASS_WARNING.startswith("WARNING: number of positive or negative decision")


def test_svr_laplace_sigma():
    rng = np.random.default_rng(2)
    y = rng.normal(size=2000)
    pred = y - rng.laplace(scale=0.3, size=2000)
    pred[0] = y[0] - 100.0  # an outlier beyond 5 std is dropped
    sigma = P.svr_laplace_sigma(y, pred)
    r = np.abs(y - pred)
    mae = r.mean()
    keep = r <= 5 * math.sqrt(2 * mae * mae)
    assert sigma == pytest.approx(r[keep].mean(), rel=1e-12)
    assert 0.25 < sigma < 0.35
    assert "sigma=%g" in P.SVR_NOTE and "sigma= %g" in P.SVR_TRAIN_NOTE


def test_ovr_probabilities_normalised():
    dec = np.array([[2.0, -1.0, -3.0], [0.0, 0.0, 0.0]])
    p = P.ovr_probabilities(dec, np.array([-2.0, -2.0, -2.0]), np.zeros(3))
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert p[0].argmax() == 0
    np.testing.assert_allclose(p[1], 1 / 3)
