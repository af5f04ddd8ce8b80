"""The sweep tier: every solver over a small grid of C and gamma, several example orders for
the online ones, on small data sets (heart_scale, generated dense and sparse sets, two and
four classes; samples of adult, ijcnn1 and usps when LASVM_DATA holds them), failing on a
degenerate model. A single (C, gamma) per data set is how LASVM-NC's and LASVM-I's one-class
machines went unseen (docs/corrections.md, 001-10).

Per data set and grid point, our batch SMO (second-order selection, -e 0.001) is the
reference, and a model fails when

* it predicts one class for every test row, or is no better than the majority class (test
  accuracy at most the majority rate), where SMO learns (SMO's test
  accuracy at least 3 points above the majority rate);
* its test accuracy is more than 15 points below SMO's;
* its dual is above the optimum of its problem, beyond 1e-5 relative: SMO with every --wss
  and LASVM against SMO run to -e 1e-7 (the problem with a bias); LASVM-G, FULL SVM, LASVM-I
  and the tracking solvers against the bias-free box QP solved by scipy's L-BFGS-B (skipped
  without scipy). LASVM-NC's ramp boxes and the all-in-one machines have other problems and
  are held to the first two rules only.

The generated sets never skip, so the tier always runs; the shared samples skip without
LASVM_DATA. The models are trained in-process (training.train), tens of milliseconds each.

KNOWN lists the degenerate models the tier found in solvers outside LASVM-NC and LASVM-I, at
the grid's extremes (C = 100 with a nearly constant kernel: one pass of the tracking solvers'
K = 10 steps an example, batch RCD's 10 n steps; LLW's all-in-one machine at C = 1): each must
still fail (a fixed one is taken off the list), every other run must pass.
"""

import numpy as np
import pytest

from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.numerics.data import Problem, kernel_data
from lasvm_cli.qp import WSS
from lasvm_cli.training.params import TrainParams
from lasvm_cli.training.train import train

from .conftest import HEART, shared_file

ORDERS = (1, 2, 3)  # --seed of the online solvers (example orders)

# (name, params) of every binary run: the solver's options beyond C and gamma
BINARY = (
    [(f"--solver smo --wss {w}", dict(solver="smo", wss=w)) for w in WSS]
    + [(f"--solver lasvm --seed {o}", dict(solver="lasvm", seed=o)) for o in ORDERS[:2]]
    + [(f"--solver {s} --seed {o}", dict(solver=s, seed=o)) for s in ("lasvm-g", "full-svm")
       for o in ORDERS[:1]]
    + [(f"--solver {s} --seed {o}", dict(solver=s, seed=o)) for s in ("lasvm-nc", "lasvm-i")
       for o in ORDERS]
    + [(f"--solver {s} --seed {o}", dict(solver=s, seed=o))
       for s in ("track1", "track2", "track2-lasvm") for o in ORDERS[:2]]
    + [("--solver rcd", dict(solver="rcd"))]
)
BIASED = ("smo", "lasvm")  # SMO's problem: the dual below SMO's optimum
BIAS_FREE = ("lasvm-g", "full-svm", "lasvm-i", "track1", "track2", "track2-lasvm", "rcd")

MULTI = (
    [(f"--multiclass {m}", dict(multiclass=m)) for m in ("ovo", "ovr", "llw", "cs")]
    + [(f"--multiclass {m} --solver online --seed {o}", dict(multiclass=m, solver="online",
                                                             seed=o))
       for m in ("llw", "cs") for o in ORDERS[:2]]
    + [("--solver lasvm", dict(solver="lasvm"))]
    + [(f"--multiclass ovr --solver {s} --seed {o}", dict(multiclass="ovr", solver=s, seed=o))
       for s in ("lasvm-g", "lasvm-nc", "lasvm-i") for o in ORDERS[:2]]
)


class Split:
    """Training and test rows of one data set: Problem, test KernelData, labels."""

    def __init__(self, y, X, y_te, X_te):
        self.problem = Problem(y, *csr(X))
        indptr, indices, values, width = csr(X_te)
        self.kd_te = kernel_data(indptr, indices, values,
                                 width=max(width, self.problem.max_index) + 1)
        self.y_te = np.asarray(y_te, np.float64)
        self.X = X


def csr(X):
    """(indptr, indices 1-based, values, max index) of dense rows X, zeros left out."""
    nz = X != 0
    indptr = np.concatenate([[0], np.cumsum(nz.sum(1))]).astype(np.int64)
    cols = np.nonzero(nz)[1].astype(np.int32) + 1
    return indptr, cols, X[nz].astype(np.float64), X.shape[1]


def dense_rows(d, width):
    X = np.zeros((d.y.size, width))
    for i in range(d.y.size):
        a, b = d.indptr[i], d.indptr[i + 1]
        X[i, d.indices[a:b] - 1] = d.values[a:b]
    return X


def from_file(train_path, test_path, n, n_test, seed=0):
    tr, te = read_svmlight(str(train_path)), read_svmlight(str(test_path))
    width = int(max(tr.max_index, te.max_index))
    rng = np.random.default_rng(seed)
    a = np.sort(rng.choice(tr.y.size, min(n, tr.y.size), replace=False))
    b = np.sort(rng.choice(te.y.size, min(n_test, te.y.size), replace=False))
    X, X_te = dense_rows(tr, width)[a], dense_rows(te, width)[b]
    return Split(tr.y[a], X, te.y[b], X_te)


def heart():
    d = read_svmlight(str(HEART))
    X = dense_rows(d, 13)
    return Split(d.y[:180], X[:180], d.y[180:], X[180:])


def dense_skewed(n=240, seed=1):
    """Two overlapping Gaussian clouds in 5-D, 15% positive."""
    rng = np.random.default_rng(seed)

    def draw(m):
        y = np.where(rng.random(m) < 0.15, 1.0, -1.0)
        return y, rng.normal(size=(m, 5)) + np.where(y > 0, 1.2, 0.0)[:, None]

    return Split(*draw(n), *draw(n))


def sparse_skewed(n=300, seed=0, d=60, k=10):
    """Sparse binary rows, 8% positive (tests/test_lasvm_nc.py's skewed set): a negative's k
    ones among the first d - 6 columns (one, with probability 0.1, among the last 6), a
    positive's two of them among the last 6; at gamma = 0.005 every K_ij >= exp(-0.1)."""
    rng = np.random.default_rng(seed)

    def draw(m):
        y = np.where(rng.random(m) < 0.08, 1.0, -1.0)
        X = np.zeros((m, d))
        for i in range(m):
            c = 2 if y[i] > 0 else int(rng.random() < 0.1)
            X[i, rng.choice(d - 6, k - c, replace=False)] = 1.0
            X[i, d - 6 + rng.choice(6, c, replace=False)] = 1.0
        return y, X

    return Split(*draw(n), *draw(n))


def blobs4(n=200, seed=2):
    """Four classes in 3-D (sizes 40/30/20/10%), centres 2.5 apart."""
    rng = np.random.default_rng(seed)
    centres = 2.5 * np.eye(4)[:, :3]

    def draw(m):
        y = rng.choice(4, m, p=(0.4, 0.3, 0.2, 0.1))
        return (y + 1).astype(np.float64), rng.normal(size=(m, 3)) + centres[y]

    return Split(*draw(n), *draw(n))


# data set: (loader, gammas, Cs); the small gamma of each makes K nearly constant
BINARY_SETS = {
    "heart_scale": (heart, (0.005, 0.2), (1.0, 100.0)),
    "dense-skewed": (dense_skewed, (0.01, 0.5), (1.0, 100.0)),
    "sparse-skewed": (sparse_skewed, (0.005, 0.1), (1.0, 100.0)),
    "adult": (lambda: from_file(shared_file("adult", "train"), shared_file("adult", "test"),
                                300, 600), (0.005, 0.1), (1.0, 100.0)),
    "ijcnn1": (lambda: from_file(shared_file("ijcnn1", "train"), shared_file("ijcnn1", "test"),
                                 300, 600), (0.05, 1.0), (4.0, 100.0)),
}
MULTI_SETS = {
    "blobs4": (blobs4, (0.01, 0.5), (1.0, 100.0)),
    "usps": (lambda: from_file(shared_file("usps", "train"), shared_file("usps", "test"),
                               300, 300), (0.002, 0.02), (1.0, 100.0)),
}


# (data set, C, gamma, run label) of the known degenerate models (module docstring)
KNOWN = {
    ("adult", 100.0, 0.005, "--solver rcd"),
    ("adult", 100.0, 0.005, "--solver track2-lasvm --seed 2"),
    ("heart_scale", 100.0, 0.005, "--solver rcd"),
    ("heart_scale", 100.0, 0.005, "--solver track2 --seed 2"),
    ("ijcnn1", 100.0, 0.05, "--solver track2 --seed 1"),
    ("ijcnn1", 100.0, 0.05, "--solver track2-lasvm --seed 2"),
    ("sparse-skewed", 100.0, 0.005, "--solver rcd"),
    ("blobs4", 100.0, 0.01, "--multiclass llw --solver online --seed 1"),
    ("blobs4", 100.0, 0.01, "--multiclass llw --solver online --seed 2"),
    ("blobs4", 100.0, 0.01, "--multiclass cs --solver online --seed 2"),
    ("usps", 1.0, 0.002, "--multiclass llw"),
    ("usps", 1.0, 0.002, "--multiclass llw --solver online --seed 1"),
    ("usps", 1.0, 0.002, "--multiclass llw --solver online --seed 2"),
}


def check(name, found):
    """found: {(C, gamma, label): why}. Every run outside KNOWN passed; every KNOWN run of
    this data set still fails."""
    new = [f"{name} -c {C:g} -g {g:g} {label}: {why}" for (C, g, label), why in found.items()
           if (name, C, g, label) not in KNOWN]
    fixed = [k for k in KNOWN if k[0] == name and k[1:] not in found]
    assert not new, "\n".join(new)
    assert not fixed, f"no longer degenerate, take off KNOWN: {fixed}"


def fit(split, C, gamma, **opts):
    model = train(split.problem, TrainParams(C=C, gamma=gamma, **opts))
    return model, model.predict(split.kd_te)


def binary_coef(model, split):
    """(coef by training row, y = +1 for the model's first label) of a binary model."""
    coef = np.zeros(split.problem.n)
    coef[model.sv_indices_train - 1] = model.sv_coef[0]
    return coef, np.where(split.problem.y == model.label[0], 1.0, -1.0)


def gram(X, gamma):
    sq = (X * X).sum(1)
    return np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0))


def dual(K, y, coef):
    return float(coef @ y - 0.5 * coef @ K @ coef)


def bias_free_optimum(K, y, C):
    """max y'a - a'Ka/2 over a_i y_i in [0, C] (L-BFGS-B), or None without scipy."""
    try:
        from scipy.optimize import minimize
    except ImportError:
        return None
    bounds = [(0.0, C) if t > 0 else (-C, 0.0) for t in y]
    res = minimize(lambda a: (-(y @ a - 0.5 * a @ K @ a), -(y - K @ a)), np.zeros(y.size),
                   jac=True, method="L-BFGS-B", bounds=bounds,
                   options=dict(ftol=1e-15, gtol=1e-10, maxiter=5000))
    return -res.fun


def degenerate(pred, y_te, ref_acc):
    """The failure text of predictions ``pred``, or None (module docstring)."""
    labels, counts = np.unique(y_te, return_counts=True)
    majority = counts.max() / y_te.size
    acc = float(np.mean(pred == y_te))
    learns = ref_acc >= majority + 0.03
    if learns and np.unique(pred).size == 1:
        return f"one class predicted (SMO {ref_acc:.3f}, majority {majority:.3f})"
    if learns and acc <= majority:
        return f"accuracy {acc:.3f}, no better than the majority rate {majority:.3f} " \
               f"(SMO {ref_acc:.3f})"
    if acc < ref_acc - 0.15:
        return f"accuracy {acc:.3f} far below SMO's {ref_acc:.3f}"
    return None


@pytest.mark.parametrize("name", sorted(BINARY_SETS))
def test_binary_solvers_over_the_grid(name):
    loader, gammas, Cs = BINARY_SETS[name]
    split = loader()
    found = {}
    for gamma in gammas:
        K = gram(split.X, gamma)
        for C in Cs:
            ref, pred = fit(split, C, gamma)
            ref_acc = float(np.mean(pred == split.y_te))
            coef, y = binary_coef(ref, split)
            opt_b = dual(K, y, binary_coef(fit(split, C, gamma, eps=1e-7)[0], split)[0])
            opt_nb = bias_free_optimum(K, y, C)
            for label, opts in BINARY:
                model, pred = fit(split, C, gamma, **opts)
                why = degenerate(pred, split.y_te, ref_acc)
                coef, y = binary_coef(model, split)
                d, kind = dual(K, y, coef), opts["solver"]
                if kind in BIASED and d > opt_b + 1e-5 * abs(opt_b):
                    why = f"dual {d:.9g} above SMO's optimum {opt_b:.9g}"
                if kind in BIAS_FREE and opt_nb is not None and d > opt_nb + 1e-5 * abs(opt_nb):
                    why = f"dual {d:.9g} above the bias-free optimum {opt_nb:.9g}"
                if why:
                    found[C, gamma, label] = why
    check(name, found)


@pytest.mark.parametrize("name", sorted(MULTI_SETS))
def test_multiclass_solvers_over_the_grid(name):
    loader, gammas, Cs = MULTI_SETS[name]
    split = loader()
    found = {}
    for gamma in gammas:
        for C in Cs:
            ref_acc = float(np.mean(fit(split, C, gamma)[1] == split.y_te))
            for label, opts in MULTI:
                why = degenerate(fit(split, C, gamma, **opts)[1], split.y_te, ref_acc)
                if why:
                    found[C, gamma, label] = why
    check(name, found)
