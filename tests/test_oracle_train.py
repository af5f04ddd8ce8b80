"""Training against LIBSVM on real data (issue: heart_scale, usps 10 classes, adult and letter
samples): per-pair dual objectives within 1e-4 relative, SV counts within 1%, test predictions
agreeing on at least 99.9% of rows."""

import os
import re
import tempfile

import numpy as np
import pytest

from lasvm_cli.numerics.data import Problem, kernel_data
from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.training.params import TrainParams
from lasvm_cli.training.train import train

from .conftest import libsvm_or_skip, libsvm_problem, libsvm_x, shared_file


def libsvm_train_capturing_objectives(svmutil, prob, opts):
    """svm_train with its C stdout captured, returning (model, [obj per binary problem])."""
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = os.dup(1)
        try:
            os.dup2(tmp.fileno(), 1)
            model = svmutil.svm_train(prob, opts)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        out = tmp.read().decode()
    return model, [float(v) for v in re.findall(r"obj = (-?[\d.]+)", out)]


def head(data, n):
    """The first n rows of an SvmlightData, as arrays."""
    if n is None or n >= data.n:
        return data.y, data.indptr, data.indices, data.values
    ip = data.indptr[:n + 1]
    return data.y[:n], ip, data.indices[:ip[-1]], data.values[:ip[-1]]


@pytest.mark.parametrize("name,n_train,n_test", [
    ("usps", None, 2007),
    ("adult", 5000, 5000),
    ("letter", 5000, 2000),
])
def test_one_vs_one_training_matches_libsvm(name, n_train, n_test):
    svmutil = libsvm_or_skip()
    tr = read_svmlight(shared_file(name, "train"))
    te = read_svmlight(shared_file(name, "test"))
    y, ip, idx, val = head(tr, n_train)
    width = max(tr.max_index, te.max_index)
    gamma = 1.0 / int(idx.max())
    problem = Problem(y, ip, idx, val, int(idx.max()))
    lines = []
    model = train(problem, TrainParams(gamma=gamma), info=lines.append)
    ours_obj = [float(m.group(1)) for m in map(re.compile(r"obj = (-?[\d.]+)").match, lines) if m]

    ref, ref_obj = libsvm_train_capturing_objectives(
        svmutil, libsvm_problem(y, ip, idx, val), f"-g {gamma!r}")
    assert len(ours_obj) == len(ref_obj)
    np.testing.assert_allclose(ours_obj, ref_obj, rtol=1e-4)
    k = model.nr_class
    assert list(model.label) == ref.get_labels()
    assert abs(model.total_sv - ref.l) <= max(1, 0.01 * ref.l)

    ty, tip, tidx, tval = head(te, n_test)
    ref_pred, _, _ = svmutil.svm_predict(ty, libsvm_x(tip, tidx, tval), ref, "-q")
    ours_pred = model.predict(kernel_data(tip, tidx, tval, width=width + 1))
    assert (ours_pred == np.array(ref_pred)).mean() >= 0.999
    assert k == len(ref.get_labels())
