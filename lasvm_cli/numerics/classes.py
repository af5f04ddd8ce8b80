"""Classes, class weights and folds: LIBSVM's bookkeeping around the binary solvers.

``group_classes`` is svm_group_classes (label order, counts, rows grouped by class),
``weighted_C`` applies ``-wi`` weights, ``cross_validation_folds`` is svm_cross_validation's fold
layout drawn from glibc's rand() (lasvm_cli/base/rand.py), so ``-v`` gives LIBSVM's own folds.
"""

import numpy as np


def class_labels(y):
    """LIBSVM's integer class of each label: ``(int)y`` (truncation toward zero)."""
    return np.trunc(y).astype(np.int64)


def group_classes(y):
    """LIBSVM's svm_group_classes: labels in order of first occurrence (a {-1,+1} set swapped so
    +1 comes first), the count of each, and ``perm``, the rows grouped by class keeping order."""
    labels_int = class_labels(y)
    label, first = np.unique(labels_int, return_index=True)
    label = label[np.argsort(first, kind="stable")]
    if label.size == 2 and label[0] == -1 and label[1] == 1:
        label = label[::-1].copy()
    class_of_row = np.empty(y.shape[0], np.int64)
    for c, lab in enumerate(label):
        class_of_row[labels_int == lab] = c
    perm = np.argsort(class_of_row, kind="stable")
    count = np.bincount(class_of_row, minlength=label.size)
    start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
    return label, start, count, perm


def weighted_C(params, label, warn):
    C = np.full(label.size, params.C)
    for lab, w in params.weights.items():
        hits = np.flatnonzero(label == lab)
        if hits.size == 0:
            warn(f"WARNING: class label {lab} specified in weight is not found")
        else:
            C[hits[0]] *= w
    return C


def cross_validation_folds(y, nr_fold, rng, stratified=True):
    """LIBSVM's svm_cross_validation fold layout: stratified (per-class shuffle with rand())
    for classification (``stratified``: C-SVC, nu-SVC) when nr_fold < l, a plain shuffle
    otherwise (and for one-class and regression). Returns (perm, fold_start)."""
    l = y.shape[0]
    if stratified and nr_fold < l:
        label, start, count, index = group_classes(y)
        index = index.copy()
        for c in range(label.size):
            for i in range(count[c]):
                j = i + rng.rand() % (count[c] - i)
                a, b = start[c] + i, start[c] + j
                index[a], index[b] = index[b], index[a]
        fold_count = np.array([sum((f + 1) * count[c] // nr_fold - f * count[c] // nr_fold
                                   for c in range(label.size)) for f in range(nr_fold)])
        fold_start = np.concatenate([[0], np.cumsum(fold_count)])
        perm = np.empty(l, np.int64)
        fill = fold_start[:-1].copy()
        for c in range(label.size):
            for f in range(nr_fold):
                begin = start[c] + f * count[c] // nr_fold
                end = start[c] + (f + 1) * count[c] // nr_fold
                perm[fill[f]:fill[f] + end - begin] = index[begin:end]
                fill[f] += end - begin
        return perm, fold_start
    perm = np.arange(l)
    for i in range(l):
        j = i + rng.rand() % (l - i)
        perm[i], perm[j] = perm[j], perm[i]
    return perm, np.array([f * l // nr_fold for f in range(nr_fold + 1)])
