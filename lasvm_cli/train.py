"""Training orchestration, after LIBSVM's ``svm_train``: classes, one-vs-one pairs, weights,
probability calibration, cross-validation. Pure Python over the jitted solvers.

Messages LIBSVM prints with ``info()`` go through the ``info`` callback (stdout, silenced by
``-q``); progress goes through ``progress`` (a tqdm bar on stderr, also silenced by ``-q``).
"""

import numpy as np

from . import kernels
from .data import subset
from .params import TrainParams
from .rand import GlibcRand


def _quiet(_msg):
    pass


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


def kernel_params_for(params: TrainParams):
    return kernels.make_params(params.kernel_type, params.degree, params.gamma, params.coef0)


def solve_pair(kd, y, Cp, Cn, params: TrainParams, progress=None, control=None):
    """One binary C-SVC problem (y = +1/-1) with the chosen solver; returns a BinaryResult.
    ``control``: LASVM's online driver (lasvm_cli/online.py), passed to solve_lasvm."""
    kp = kernel_params_for(params)
    if params.solver == "lasvm":
        from .solvers.lasvm import solve_lasvm

        return solve_lasvm(kd, kp, y, Cp, Cn, eps=params.eps, cache_mb=params.cache_size,
                           epochs=params.epochs, finish=params.finish,
                           selection=params.selection, candidates=params.candidates,
                           delta_max=params.delta_max, seed=params.seed,
                           label_budget=params.label_budget, progress=progress,
                           control=control)
    from .solvers.csvc import solve_binary

    return solve_binary(kd, kp, y, Cp, Cn, eps=params.eps, shrinking=bool(params.shrinking),
                        cache_mb=params.cache_size, wss=params.wss, max_iter=params.max_iter,
                        final_kkt_check=params.final_kkt_check, progress=progress)


def _report_binary(res, Cp, Cn, l, info, warn):
    if res.counters.get("warn_h0"):
        info("\nWARNING: using -h 0 may be faster")  # LIBSVM: info(), at gradient reconstruction
    if res.hit_max_iter:
        warn("\nWARNING: reaching max number of iterations")
    info(f"optimization finished, #iter = {res.n_iter}")
    if Cp == Cn:
        info(f"nu = {np.abs(res.coef).sum() / (Cp * l):f}")
    info(f"obj = {res.obj:f}, rho = {res.rho:f}")
    info(f"nSV = {res.n_sv}, nBSV = {res.n_bsv}")


def weighted_C(params: TrainParams, label, warn):
    C = np.full(label.size, params.C)
    for lab, w in params.weights.items():
        hits = np.flatnonzero(label == lab)
        if hits.size == 0:
            warn(f"WARNING: class label {lab} specified in weight is not found")
        else:
            C[hits[0]] *= w
    return C


def decision_on(problem_kd, train_rows, coef, rho, test_rows, kp):
    """Decision values sum_j coef_j K(x, x_j) - rho of a binary machine on other rows."""
    sv = np.flatnonzero(coef)
    out = np.empty(len(test_rows))
    kernels.expansion_values(problem_kd, np.asarray(test_rows, np.int64), problem_kd,
                             np.asarray(train_rows, np.int64)[sv], coef[sv], kp, out)
    return out - rho


def binary_probability(kd, rows, y, Cp, Cn, params, rng, info):
    """LIBSVM's svm_binary_svc_probability: decision values from an internal 5-fold CV
    (shuffled with rand()), then Platt's sigmoid fitted to them. ``rows`` index ``kd``."""
    from .probability import sigmoid_train

    l = rows.size
    nr_fold = 5
    perm = np.arange(l)
    for i in range(l):
        j = i + rng.rand() % (l - i)
        perm[i], perm[j] = perm[j], perm[i]
    dec = np.zeros(l)
    kp = kernel_params_for(params)
    for f in range(nr_fold):
        begin, end = f * l // nr_fold, (f + 1) * l // nr_fold
        train_local = np.concatenate([perm[:begin], perm[end:]])
        ytr = y[train_local]
        n_pos = int((ytr > 0).sum())
        n_neg = ytr.size - n_pos
        held = perm[begin:end]
        if n_pos == 0 or n_neg == 0:
            dec[held] = 1.0 if n_pos > 0 else (-1.0 if n_neg > 0 else 0.0)
            continue
        # svm_train on the sub-problem groups it by class, +1 first, keeping order
        order = np.concatenate([train_local[ytr > 0], train_local[ytr <= 0]])
        res = solve_pair(subset(kd, rows[order]), y[order], Cp, Cn, params)
        dec[held] = decision_on(kd, rows[order], res.coef, res.rho, rows[held], kp)
    return sigmoid_train(dec, y)


def train(problem, params: TrainParams, rows=None, info=_quiet, warn=_quiet, progress=None,
          rng=None, solve=None):
    """Train a C-SVC model (one-vs-one or one-vs-rest) on ``problem`` (or its ``rows``).
    ``solve``: replaces solve_pair for the binary machines (lasvm_cli/online.py)."""
    if solve is None and params.solver == "lasvm":
        # online LASVM options (state save/resume, stopping, snapshots, trace): online.py
        from .online import online_requested, train_online

        if online_requested(params):
            return train_online(problem, params, rows, info, warn, progress, rng)
    solve = solve_pair if solve is None else solve
    if params.multiclass == "ovr":
        from .train_ovr import train_ovr

        return train_ovr(problem, params, rows, info, warn, progress, rng, solve=solve)
    from .model import SVMModel

    rows = np.arange(problem.n) if rows is None else np.asarray(rows, np.int64)
    y = problem.y[rows]
    label, start, count, perm = group_classes(y)
    grouped = rows[perm]  # training rows grouped by class, as LIBSVM's x[]
    k = label.size
    if k == 1:
        info("WARNING: training data in only one class. See README for details.")
    Cw = weighted_C(params, label, warn)
    rng = GlibcRand(params.seed) if rng is None else rng  # one rand() stream, as LIBSVM's
    nonzero = np.zeros(grouped.size, bool)
    coefs, rhos, probA, probB = [], [], [], []
    counters = {}
    for i in range(k):
        for j in range(i + 1, k):
            local = np.concatenate([np.arange(start[i], start[i] + count[i]),
                                    np.arange(start[j], start[j] + count[j])])
            y_pair = np.concatenate([np.ones(count[i]), -np.ones(count[j])])
            sub_kd = subset(problem.kd, grouped[local])
            if params.probability:
                a, b = binary_probability(problem.kd, grouped[local], y_pair, Cw[i], Cw[j],
                                          params, rng, info)
                probA.append(a)
                probB.append(b)
            bar = progress(f"class {label[i]} vs {label[j]}") if progress else None
            res = solve(sub_kd, y_pair, Cw[i], Cw[j], params,
                        progress=bar.update if bar else None)
            if bar:
                bar.close()
            _report_binary(res, Cw[i], Cw[j], local.size, info, warn)
            nonzero[local[res.coef != 0]] = True
            for name, value in res.counters.items():
                counters[name] = counters.get(name, 0) + value
            coefs.append((local, res.coef))
            rhos.append(res.rho)
    nSV = np.array([nonzero[start[c]:start[c] + count[c]].sum() for c in range(k)], np.int64)
    total_sv = int(nSV.sum())
    info(f"Total nSV = {total_sv}")
    # sv_coef layout (LIBSVM): the coefficient of an SV of class i in pair (i, j) goes to row
    # j-1, that of an SV of class j goes to row i; SVs grouped by class in label order.
    sv_local = np.flatnonzero(nonzero)
    column = np.full(grouped.size, -1)
    column[sv_local] = np.arange(total_sv)
    sv_coef = np.zeros((max(k - 1, 0), total_sv))
    p = 0
    for i in range(k):
        for j in range(i + 1, k):
            local, coef = coefs[p]
            ci = count[i]
            for part, row in ((slice(0, ci), j - 1), (slice(ci, None), i)):
                loc, c = local[part], coef[part]
                keep = nonzero[loc]
                sv_coef[row, column[loc[keep]]] = c[keep]
            p += 1
    sv_rows = grouped[sv_local]
    if params.kernel_type == kernels.PRECOMPUTED:  # LIBSVM stores only 0:serial
        sv_indptr = np.arange(total_sv + 1, dtype=np.int64)
        sv_indices = np.zeros(total_sv, np.int32)
        sv_values = problem.kd.X[sv_rows, 0].copy() if total_sv else np.zeros(0)
    else:
        sv_indptr, sv_indices, sv_values = problem.csr_rows(sv_rows)
    model = SVMModel(
        svm_type="c_svc", kernel_type=params.kernel_type, degree=params.degree,
        gamma=params.gamma, coef0=params.coef0, nr_class=k, label=label.astype(np.int64),
        rho=np.array(rhos, np.float64), nSV=nSV, sv_coef=sv_coef,
        sv_indptr=sv_indptr, sv_indices=sv_indices, sv_values=sv_values,
        probA=np.array(probA) if params.probability else None,
        probB=np.array(probB) if params.probability else None,
    )
    model.counters = counters  # solver statistics, summed over the binary problems
    return model


def cross_validation_folds(y, nr_fold, rng):
    """LIBSVM's svm_cross_validation fold layout: stratified (per-class shuffle with rand())
    when nr_fold < l, a plain shuffle otherwise. Returns (perm, fold_start)."""
    l = y.shape[0]
    if nr_fold < l:
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


def cross_validation(problem, params: TrainParams, nr_fold, progress=None):
    """Predicted label of every row when it is held out (LIBSVM's svm_cross_validation)."""
    rng = GlibcRand(params.seed)
    perm, fold_start = cross_validation_folds(problem.y, nr_fold, rng)
    target = np.empty(problem.n)
    for f in range(nr_fold):
        begin, end = fold_start[f], fold_start[f + 1]
        train_rows = np.concatenate([perm[:begin], perm[end:]])
        model = train(problem, params, rows=train_rows, progress=progress, rng=rng)
        held = perm[begin:end]
        test_kd = subset(problem.kd, held)
        if params.probability:
            target[held] = model.predict_probability(test_kd)[0]
        else:
            target[held] = model.predict(test_kd)
    return target
