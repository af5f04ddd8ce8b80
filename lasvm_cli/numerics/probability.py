"""Probability outputs, LIBSVM 3.37's (``svm.cpp``), operation for operation.

* :func:`sigmoid_train`  Platt's sigmoid fitted by Lin, Lin and Weng's improved Newton method
  (``sigmoid_train``); the trainer calls it for ``-b 1`` on cross-validated decision values.
* :func:`sigmoid_predict`  P(y=1|f) = 1/(1+exp(A f + B)), computed without cancellation.
* :func:`multiclass_probability`  Wu, Lin and Weng's method 2 (``multiclass_probability``).
* :func:`pairwise_probabilities` / :func:`predict_probability`  ``svm_predict_probability``
  for all rows at once (pairwise sigmoids clamped to [1e-7, 1-1e-7]).
* :func:`one_class_probability` / :func:`one_class_density_marks`  Que and Lin's binning
  (``predict_one_class_probability``, ``svm_one_class_probability``).
* :func:`svr_laplace_sigma`  the Laplace scale of SVR residuals (``svm_svr_probability``) and
  :data:`SVR_NOTE`, the note svm-predict prints.
"""

from __future__ import annotations

import math
import sys

import numba
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)
import numpy as np

MIN_PROB = 1e-7
NR_MARKS = 10
SVR_NOTE = ("Prob. model for test data: target value = predicted value + z,\n"
            "z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma=%g\n")
# svm_svr_probability's own message (printed by svm-train) has a space after "sigma="
SVR_TRAIN_NOTE = ("Prob. model for test data: target value = predicted value + z,\n"
                  "z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma= %g\n")

_NJIT = dict(cache=True, nogil=True)


def _info(msg):
    sys.stdout.write(msg)
    sys.stdout.flush()


def sigmoid_train(dec_values, labels, info=_info):
    """Fit (A, B) of P(y=1|f) = 1/(1+exp(A f + B)); ``labels`` > 0 means positive.

    Exactly LIBSVM's sigmoid_train (max_iter 100, min_step 1e-10, sigma 1e-12, eps 1e-5,
    targets (N+ + 1)/(N+ + 2) and 1/(N- + 2)); its two messages go to ``info``.
    """
    f = np.ascontiguousarray(dec_values, np.float64)
    y = np.ascontiguousarray(labels, np.float64)
    A, B, status = _sigmoid_train(f, y)
    if status == 1:
        info("Line search fails in two-class probability estimates\n")
    elif status == 2:
        info("Reaching maximal iterations in two-class probability estimates\n")
    return A, B


@numba.njit(**_NJIT)
def _sigmoid_train(dec_values, labels):
    n = dec_values.shape[0]
    prior1 = 0.0
    prior0 = 0.0
    for i in range(n):
        if labels[i] > 0:
            prior1 += 1
        else:
            prior0 += 1
    max_iter = 100
    min_step = 1e-10
    sigma = 1e-12
    eps = 1e-5
    hi_target = (prior1 + 1.0) / (prior1 + 2.0)
    lo_target = 1 / (prior0 + 2.0)
    t = np.empty(n, np.float64)
    A = 0.0
    B = math.log((prior0 + 1.0) / (prior1 + 1.0))
    fval = 0.0
    for i in range(n):
        t[i] = hi_target if labels[i] > 0 else lo_target
        fApB = dec_values[i] * A + B
        if fApB >= 0:
            fval += t[i] * fApB + math.log(1 + math.exp(-fApB))
        else:
            fval += (t[i] - 1) * fApB + math.log(1 + math.exp(fApB))
    status = 0
    it = 0
    while it < max_iter:
        h11 = sigma
        h22 = sigma
        h21 = 0.0
        g1 = 0.0
        g2 = 0.0
        for i in range(n):
            fApB = dec_values[i] * A + B
            if fApB >= 0:
                p = math.exp(-fApB) / (1.0 + math.exp(-fApB))
                q = 1.0 / (1.0 + math.exp(-fApB))
            else:
                p = 1.0 / (1.0 + math.exp(fApB))
                q = math.exp(fApB) / (1.0 + math.exp(fApB))
            d2 = p * q
            h11 += dec_values[i] * dec_values[i] * d2
            h22 += d2
            h21 += dec_values[i] * d2
            d1 = t[i] - p
            g1 += dec_values[i] * d1
            g2 += d1
        if abs(g1) < eps and abs(g2) < eps:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        stepsize = 1.0
        while stepsize >= min_step:
            newA = A + stepsize * dA
            newB = B + stepsize * dB
            newf = 0.0
            for i in range(n):
                fApB = dec_values[i] * newA + newB
                if fApB >= 0:
                    newf += t[i] * fApB + math.log(1 + math.exp(-fApB))
                else:
                    newf += (t[i] - 1) * fApB + math.log(1 + math.exp(fApB))
            if newf < fval + 0.0001 * stepsize * gd:
                A = newA
                B = newB
                fval = newf
                break
            stepsize = stepsize / 2.0
        if stepsize < min_step:
            status = 1
            break
        it += 1
    if it >= max_iter:
        status = 2
    return A, B, status


@numba.njit(**_NJIT)
def sigmoid_predict(decision_value, A, B):
    """1/(1+exp(A f + B)), in the form that keeps 1-p accurate (LIBSVM's sigmoid_predict)."""
    fApB = decision_value * A + B
    if fApB >= 0:
        return math.exp(-fApB) / (1.0 + math.exp(-fApB))
    return 1.0 / (1 + math.exp(fApB))


@numba.njit(**_NJIT)
def _multiclass_probability(k, r, p, Q, Qp):
    """Wu-Lin-Weng method 2 into p; returns False when max_iter was reached."""
    max_iter = max(100, k)
    eps = 0.005 / k
    for t in range(k):
        p[t] = 1.0 / k
        Q[t, t] = 0
        for j in range(t):
            Q[t, t] += r[j, t] * r[j, t]
            Q[t, j] = Q[j, t]
        for j in range(t + 1, k):
            Q[t, t] += r[j, t] * r[j, t]
            Q[t, j] = -r[j, t] * r[t, j]
    it = 0
    while it < max_iter:
        pQp = 0.0
        for t in range(k):
            Qp[t] = 0
            for j in range(k):
                Qp[t] += Q[t, j] * p[j]
            pQp += p[t] * Qp[t]
        max_error = 0.0
        for t in range(k):
            error = abs(Qp[t] - pQp)
            if error > max_error:
                max_error = error
        if max_error < eps:
            break
        for t in range(k):
            diff = (-Qp[t] + pQp) / Q[t, t]
            p[t] += diff
            pQp = (pQp + diff * (diff * Q[t, t] + 2 * Qp[t])) / (1 + diff) / (1 + diff)
            for j in range(k):
                Qp[j] = (Qp[j] + diff * Q[t, j]) / (1 + diff)
                p[j] /= (1 + diff)
        it += 1
    return it < max_iter


def multiclass_probability(r, info=_info):
    """Class probabilities from the k x k pairwise matrix r (r[i,j] = P(i | i or j))."""
    r = np.ascontiguousarray(r, np.float64)
    k = r.shape[0]
    p = np.empty(k)
    if not _multiclass_probability(k, r, p, np.empty((k, k)), np.empty(k)):
        info("Exceeds max_iter in multiclass_prob\n")
    return p


@numba.njit(**_NJIT)
def _ovo_probabilities(dec, probA, probB, k, out):
    """svm_predict_probability's classification branch for every row; returns #max_iter hits."""
    r = np.empty((k, k))
    Q = np.empty((k, k))
    Qp = np.empty(k)
    p = np.empty(k)
    misses = 0
    for row in range(dec.shape[0]):
        q = 0
        for i in range(k):
            for j in range(i + 1, k):
                v = sigmoid_predict(dec[row, q], probA[q], probB[q])
                v = min(max(v, MIN_PROB), 1 - MIN_PROB)
                r[i, j] = v
                r[j, i] = 1 - v
                q += 1
        if k == 2:
            out[row, 0] = r[0, 1]
            out[row, 1] = r[1, 0]
        else:
            if not _multiclass_probability(k, r, p, Q, Qp):
                misses += 1
            out[row, :] = p
    return misses


def pairwise_probabilities(dec, probA, probB, nr_class, info=_info):
    """Probabilities [n, k] from one-vs-one decision values [n, k(k-1)/2]."""
    dec = np.ascontiguousarray(dec, np.float64)
    out = np.empty((dec.shape[0], nr_class))
    misses = _ovo_probabilities(dec, np.ascontiguousarray(probA, np.float64),
                                np.ascontiguousarray(probB, np.float64), nr_class, out)
    for _ in range(misses):
        info("Exceeds max_iter in multiclass_prob\n")
    return out


def ovr_probabilities(dec, probA, probB):
    """Extension (one-vs-rest and all-in-one models): per-class sigmoids, normalised to sum 1."""
    dec = np.asarray(dec, np.float64)
    fApB = dec * probA[None, :] + probB[None, :]
    p = np.where(fApB >= 0, np.exp(-np.abs(fApB)) / (1.0 + np.exp(-np.abs(fApB))),
                 1.0 / (1.0 + np.exp(-np.abs(fApB))))
    p = np.clip(p, MIN_PROB, 1 - MIN_PROB)
    return p / p.sum(axis=1, keepdims=True)


def one_class_probability(dec_values, marks):
    """P(normal) from one-class decision values and the 10 density marks (Que and Lin)."""
    dec = np.asarray(dec_values, np.float64)
    marks = np.asarray(marks, np.float64)
    nr = marks.shape[0]
    # first i in 1..nr-1 with dec < marks[i] gives i/nr
    i = np.searchsorted(marks[1:], dec, side="right") + 1
    p = i / nr
    p = np.where(dec > marks[nr - 1], 0.999, p)
    p = np.where(dec < marks[0], 0.001, p)
    # dec == marks[nr-1] exactly: the loop finds nothing and LIBSVM leaves 0.0
    p = np.where((dec >= marks[0]) & (dec <= marks[nr - 1]) & (i >= nr), 0.0, p)
    return p


def one_class_density_marks(dec_values, nr_marks=NR_MARKS):
    """svm_one_class_probability: the marks, or None (with LIBSVM's warning text) if too few."""
    dec = np.sort(np.asarray(dec_values, np.float64), kind="stable")
    n = dec.shape[0]
    nonneg = np.flatnonzero(dec >= 0)
    neg_counter = int(nonneg[0]) if nonneg.size else 0
    pos_counter = n - neg_counter
    mid = nr_marks // 2
    if neg_counter < mid or pos_counter < mid:
        return None
    tmp = np.empty(nr_marks + 1)
    for i in range(mid):
        tmp[i] = dec[i * neg_counter // mid]
    tmp[mid] = 0
    for i in range(mid + 1, nr_marks + 1):
        tmp[i] = dec[neg_counter - 1 + (i - mid) * pos_counter // mid]
    return np.array([(tmp[i] + tmp[i + 1]) / 2 for i in range(nr_marks)])


ONE_CLASS_WARNING = ("WARNING: number of positive or negative decision values <5; too few to "
                     "do a probability estimation.\n")


def svr_laplace_sigma(y, cv_predictions):
    """svm_svr_probability from targets and 5-fold CV predictions: the Laplace scale."""
    ymv = np.asarray(y, np.float64) - np.asarray(cv_predictions, np.float64)
    n = ymv.shape[0]
    mae = 0.0
    for v in ymv:
        mae += abs(v)
    mae /= n
    std = math.sqrt(2 * mae * mae)
    count = 0
    mae = 0.0
    for v in ymv:
        if abs(v) > 5 * std:
            count += 1
        else:
            mae += abs(v)
    mae /= (n - count)
    return mae


def predict_probability(model, dec, info=_info):
    """svm_predict_probability for all rows: (predictions float64 [n], probs [n, m] or None)."""
    n = dec.shape[0]
    if model.is_classification and model.probA is not None and model.probB is not None:
        if model.multiclass in ("ovo", "binary_nobias"):
            probs = pairwise_probabilities(dec, model.probA, model.probB, model.nr_class, info)
        else:
            probs = ovr_probabilities(dec, model.probA, model.probB)
        labels = model.label.astype(np.float64)
        pred = labels[np.argmax(probs, axis=1)] if n else np.zeros(0)
        return pred, probs
    if model.svm_type == "one_class" and model.prob_density_marks is not None:
        p = one_class_probability(dec[:, 0], model.prob_density_marks)
        return model.predict_from_values(dec), np.column_stack([p, 1 - p])
    return model.predict_from_values(dec), None
