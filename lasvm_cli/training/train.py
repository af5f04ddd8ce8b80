"""Training orchestration, after LIBSVM's ``svm_train``: one-vs-one pairs (one-vs-rest in
ovr.py, the all-in-one machines in allinone.py), probability calibration,
cross-validation. Pure Python over the solvers; the multi-class scheme is a table
(MULTICLASS_TRAINERS). Each trainer lists its machines and how a model is assembled from their
results, then has a driver (training/driver.py) train each machine: by default the solver of
the dispatch table of lasvm_cli/solvers to its end; with online options or a tracking solver,
its run stepped under traces, stopping limits, snapshots and state files.

Messages LIBSVM prints with ``info()`` go through the ``info`` callback (stdout, silenced by
``-q``); progress goes through ``progress`` (a tqdm bar on stderr, also silenced by ``-q``).
"""

import copy

import numpy as np

from ..base.rand import GlibcRand
from ..numerics import kernels
from ..numerics.classes import class_labels, group_classes, weighted_C, cross_validation_folds
from ..numerics.data import subset, sv_arrays
from ..numerics.model import SVMModel
from ..solvers import kernel_params_for, machine_of, solve
from ..solvers.result import report_binary
from .driver import DIRECT
from .ovr import train_ovr
from .params import CLASSIFICATION_TYPES, SVM_TYPES, TrainParams


def _quiet(_msg):
    pass


def decision_on(problem_kd, train_rows, coef, rho, test_rows, kp):
    """Decision values sum_j coef_j K(x, x_j) - rho of a binary machine on other rows."""
    sv = np.flatnonzero(coef)
    out = np.empty(len(test_rows))
    kernels.expansion_values(problem_kd, np.asarray(test_rows, np.int64), problem_kd,
                             np.asarray(train_rows, np.int64)[sv], coef[sv], kp, out)
    return out - rho


def binary_probability(kd, rows, y, Cp, Cn, params, rng, info, warn):
    """LIBSVM's svm_binary_svc_probability: decision values from an internal 5-fold CV
    (shuffled with rand()), then Platt's sigmoid fitted to them. ``rows`` index ``kd``. Each
    internal training reports as LIBSVM's svm_train does (its lines through ``info``)."""
    from ..numerics.probability import sigmoid_train

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
        res = solve(machine_of(subset(kd, rows[order]), y[order], Cp, Cn, params), params)
        report_binary(res, Cp, Cn, order.size, info, warn)
        info(f"Total nSV = {res.n_sv}")
        dec[held] = decision_on(kd, rows[order], res.coef[0], res.rho[0], rows[held], kp)
    return sigmoid_train(dec, y)


def train(problem, params: TrainParams, rows=None, info=_quiet, warn=_quiet, progress=None,
          rng=None, driver=DIRECT, mapper=None):
    """Train a model on ``problem`` (or its ``rows``): C-SVC or nu-SVC (one-vs-one, or for
    C-SVC one-vs-rest or all-in-one), or a single-machine model (one-class, epsilon-SVR,
    nu-SVR). ``driver``: trains each machine (training/driver.py; DIRECT: its solver to the
    end). ``mapper(fn, problem, tasks) -> results``: runs the one-vs-one pairs as tasks
    elsewhere (training/distributed.py), with the DIRECT driver; the other trainers ignore
    it."""
    if params.svm_type in SINGLE_MACHINE_TYPES:
        trainer = train_single
    else:
        trainer = MULTICLASS_TRAINERS[params.multiclass]
    extra = {"mapper": mapper} if mapper is not None and trainer is train_ovo else {}
    return trainer(problem, params, rows, info, warn, progress, rng, driver, **extra)


def advance(rng, n):
    """Draw n values from ``rng`` (the draws a task made elsewhere with a copy of it)."""
    for _ in range(n):
        rng.rand()


def train_pair(problem, task, driver=DIRECT, progress=None):
    """One binary machine of one-vs-one training, as a task (also a Dask task: lasvm_cli/
    distributed.py): ``task`` = (rows of ``problem``, labels +1/-1, Cp, Cn, params, rng or
    None). With -b 1 the rng draws the probability folds first, as LIBSVM does. Returns
    (SolverResult, (probA, probB) or None, messages): what the probability folds' trainings
    printed (:func:`_recorder`)."""
    rows, y_pair, Cp, Cn, params, rng = task
    prob = None
    messages, info, warn = _recorder()
    if params.probability:
        prob = binary_probability(problem.kd, rows, y_pair, Cp, Cn, params, rng, info, warn)
    machine = machine_of(subset(problem.kd, rows), y_pair, Cp, Cn, params)
    return driver.solve(machine, params, progress), prob, messages


def _recorder():
    """(messages, info, warn): info and warn record what a task's trainings print, in order,
    (False, text) for info (stdout) and (True, text) for warn (stderr), for its caller to
    print (:func:`_replay`) wherever the task ran."""
    messages = []
    return (messages, lambda text: messages.append((False, text)),
            lambda text: messages.append((True, text)))


def _replay(messages, info, warn):
    for is_warning, text in messages:
        (warn if is_warning else info)(text)


def train_ovo(problem, params: TrainParams, rows, info, warn, progress, rng, driver,
              mapper=None):
    """LIBSVM's one-vs-one training: k(k-1)/2 binary machines, LIBSVM's model layout.
    ``mapper(fn, problem, tasks)``: runs the pairs elsewhere (Dask), in order of results."""
    rows = np.arange(problem.n) if rows is None else np.asarray(rows, np.int64)
    y = problem.y[rows]
    label, start, count, perm = group_classes(y)
    grouped = rows[perm]  # training rows grouped by class, as LIBSVM's x[]
    k = label.size
    pairs = []
    for i in range(k):
        for j in range(i + 1, k):
            local = np.concatenate([np.arange(start[i], start[i] + count[i]),
                                    np.arange(start[j], start[j] + count[j])])
            y_pair = np.concatenate([np.ones(count[i]), -np.ones(count[j])])
            pairs.append((i, j, local, y_pair))

    def assemble(results, probs=None):
        return _ovo_model(problem, params, grouped, label, start, count, pairs, results, probs)

    driver.begin([(grouped[local], (label[i], label[j])) for i, j, local, _ in pairs],
                 assemble)
    if k == 1:
        info("WARNING: training data in only one class. See README for details.")
    Cw = weighted_C(params, label, warn)
    rng = GlibcRand(params.seed) if rng is None else rng  # one rand() stream, as LIBSVM's
    if mapper is None:
        def serial():  # lazily: each pair's lines are printed as soon as it is trained
            for i, j, local, y_pair in pairs:
                bar = progress(f"class {label[i]} vs {label[j]}") if progress else None
                try:
                    res = train_pair(problem, (grouped[local], y_pair, Cw[i], Cw[j], params,
                                               rng if params.probability else None),
                                     driver=driver, progress=bar.update if bar else None)
                finally:  # the bar goes before the pair's lines are printed, not after
                    if bar:
                        bar.close()
                yield res

        outcomes = serial()
    else:  # one task per pair; each gets the rand() state it would have in the serial loop
        tasks = []
        for i, j, local, y_pair in pairs:
            state = None
            if params.probability:
                state = copy.deepcopy(rng)
                advance(rng, local.size)  # binary_probability draws one rand() per row
            tasks.append((grouped[local], y_pair, Cw[i], Cw[j], params, state))
        outcomes = mapper(train_pair, problem, tasks)
    results, probs = [], []
    for (i, j, local, y_pair), (res, prob, messages) in zip(pairs, outcomes):
        _replay(messages, info, warn)
        probs.append(prob)
        report_binary(res, Cw[i], Cw[j], local.size, info, warn)
        results.append(res)
    driver.end()
    model = assemble(results, probs if params.probability else None)
    info(f"Total nSV = {int(model.nSV.sum())}")
    return model


def _ovo_model(problem, params, grouped, label, start, count, pairs, results, probs=None):
    """The one-vs-one model of the pairs' SolverResults (and -b 1's (probA, probB) of each)."""
    k = label.size
    nonzero = np.zeros(grouped.size, bool)
    counters = {}
    for (i, j, local, y_pair), res in zip(pairs, results):
        nonzero[local[res.coef[0] != 0]] = True
        for name, value in res.counters.items():
            counters[name] = counters.get(name, 0) + value
    nSV = np.array([nonzero[start[c]:start[c] + count[c]].sum() for c in range(k)], np.int64)
    total_sv = int(nSV.sum())
    # sv_coef layout (LIBSVM): the coefficient of an SV of class i in pair (i, j) goes to row
    # j-1, that of an SV of class j goes to row i; SVs grouped by class in label order.
    sv_local = np.flatnonzero(nonzero)
    column = np.full(grouped.size, -1)
    column[sv_local] = np.arange(total_sv)
    sv_coef = np.zeros((max(k - 1, 0), total_sv))
    for (i, j, local, y_pair), res in zip(pairs, results):
        coef = res.coef[0]
        ci = count[i]
        for part, row in ((slice(0, ci), j - 1), (slice(ci, None), i)):
            loc, c = local[part], coef[part]
            keep = nonzero[loc]
            sv_coef[row, column[loc[keep]]] = c[keep]
    sv_rows = grouped[sv_local]
    sv_indptr, sv_indices, sv_values = _sv_arrays(problem, params, sv_rows)
    model = SVMModel(
        svm_type=SVM_TYPES[params.svm_type], kernel_type=params.kernel_type, degree=params.degree,
        gamma=params.gamma, coef0=params.coef0, nr_class=k, label=label.astype(np.int64),
        rho=np.array([res.rho[0] for res in results], np.float64), nSV=nSV, sv_coef=sv_coef,
        sv_indptr=sv_indptr, sv_indices=sv_indices, sv_values=sv_values,
        probA=np.array([p[0] for p in probs]) if probs is not None else None,
        probB=np.array([p[1] for p in probs]) if probs is not None else None,
    )
    model.counters = counters  # solver statistics, summed over the binary problems
    model.sv_indices_train = sv_rows + 1  # training row of each SV (LIBSVM's sv_indices)
    return model


def _sv_arrays(problem, params, sv_rows):
    return sv_arrays(problem, params.kernel_type, sv_rows)


def svr_probability(problem, params, rows, rng, info, warn=_quiet):
    """LIBSVM's svm_svr_probability: 5-fold CV residuals (LIBSVM's folds, the one rand()
    stream), the Laplace scale sigma."""
    from dataclasses import replace

    from ..numerics.probability import svr_laplace_sigma

    cv = cross_validation(problem, replace(params, probability=0), 5, rows=rows, rng=rng,
                          info=info, warn=warn)
    sigma = svr_laplace_sigma(problem.y[rows], cv)
    info("Prob. model for test data: target value = predicted value + z,\nz: Laplace "
         f"distribution e^(-|z|/sigma)/(2sigma),sigma= {sigma:g}")
    return sigma


def train_single(problem, params: TrainParams, rows, info, warn, progress, rng, driver):
    """LIBSVM's svm_train for one-class, epsilon-SVR and nu-SVR: one machine, nr_class 2, no
    label or nr_sv, one rho, one sv_coef row, SVs in the rows' order; -b 1 adds the SVR Laplace
    sigma (probA) or the one-class density marks."""
    from ..numerics.probability import ONE_CLASS_WARNING, one_class_density_marks

    rows = np.arange(problem.n) if rows is None else np.asarray(rows, np.int64)
    y = problem.y[rows]
    rng = GlibcRand(params.seed) if rng is None else rng
    bar = progress(SVM_TYPES[params.svm_type]) if progress else None
    res = driver.solve(machine_of(subset(problem.kd, rows), y, params.C, params.C, params),
                       params, bar.update if bar else None)
    if bar:
        bar.close()
    report_binary(res, params.C, params.C, rows.size, info, warn)
    coef = res.coef[0]
    sv = np.flatnonzero(coef)
    sv_indptr, sv_indices, sv_values = _sv_arrays(problem, params, rows[sv])
    model = SVMModel(
        svm_type=SVM_TYPES[params.svm_type], kernel_type=params.kernel_type,
        degree=params.degree, gamma=params.gamma, coef0=params.coef0, nr_class=2, label=None,
        rho=res.rho[:1].copy(), nSV=None, sv_coef=coef[sv].reshape(1, -1),
        sv_indptr=sv_indptr, sv_indices=sv_indices, sv_values=sv_values)
    model.counters = dict(res.counters)
    model.sv_indices_train = rows[sv] + 1  # training row of each SV (LIBSVM's sv_indices)
    if params.probability and params.svm_type in (3, 4):
        model.probA = np.array([svr_probability(problem, params, rows, rng, info, warn)])
    elif params.probability and params.svm_type == 2:
        dec = decision_on(problem.kd, rows, coef, res.rho[0], rows,
                          kernel_params_for(params))
        marks = one_class_density_marks(dec)
        if marks is None:
            warn(ONE_CLASS_WARNING.rstrip("\n"))
        else:
            model.prob_density_marks = marks
    return model


def cross_validation(problem, params: TrainParams, nr_fold, progress=None, rows=None,
                     rng=None, info=_quiet, warn=_quiet, mapper=None):
    """Predicted label (or value) of every row when it is held out (LIBSVM's
    svm_cross_validation: stratified folds for C-SVC and nu-SVC, a plain shuffle otherwise).
    ``mapper(fn, problem, tasks) -> results``: runs the folds as tasks elsewhere (Dask); each
    fold gets the rand() state it has in the serial loop, so the result is the same."""
    rows = np.arange(problem.n) if rows is None else np.asarray(rows, np.int64)
    rng = GlibcRand(params.seed) if rng is None else rng
    classify = params.svm_type in CLASSIFICATION_TYPES
    perm, fold_start = cross_validation_folds(problem.y[rows], nr_fold, rng,
                                              stratified=classify)
    target = np.empty(rows.size)
    tasks, helds = [], []
    for f in range(nr_fold):
        begin, end = fold_start[f], fold_start[f + 1]
        train_rows = rows[np.concatenate([perm[:begin], perm[end:]])]
        held = perm[begin:end]
        if mapper is None:
            target[held] = cv_fold(problem, (train_rows, rows[held], params, rng), progress,
                                   info, warn)
            continue
        tasks.append((train_rows, rows[held], params, copy.deepcopy(rng)))
        helds.append(held)
        advance(rng, _probability_draws(problem, params, train_rows))
    if mapper is not None:  # each fold's messages come back with it, printed in fold order
        for held, (predicted, messages) in zip(helds, mapper(cv_fold_reported, problem, tasks)):
            target[held] = predicted
            _replay(messages, info, warn)
    return target


def _probability_draws(problem, params, train_rows):
    """rand() values that training with -b 1 on ``train_rows`` draws: one per row of each
    one-vs-one pair for classification (k - 1 per row), one per row for SVR's 5-fold
    residuals, none for one-class or without -b 1."""
    if not params.probability:
        return 0
    if params.svm_type in CLASSIFICATION_TYPES:
        k = np.unique(class_labels(problem.y[train_rows])).size
        return (k - 1) * train_rows.size
    return train_rows.size if params.svm_type in (3, 4) else 0


def cv_fold(problem, task, progress=None, info=_quiet, warn=_quiet):
    """One fold of cross-validation, as a task: train on ``train_rows`` (with ``rng``, the
    rand() stream of -b 1), return the predicted labels (values) of the ``held`` rows."""
    train_rows, held, params, rng = task
    model = train(problem, params, rows=train_rows, info=info, warn=warn, progress=progress,
                  rng=rng)
    test_kd = subset(problem.kd, held)
    if params.probability and params.svm_type in CLASSIFICATION_TYPES:
        return model.predict_probability(test_kd)[0]
    return model.predict(test_kd)


def cv_fold_reported(problem, task):
    """cv_fold as a task elsewhere: (predicted, what its training printed: _recorder)."""
    messages, info, warn = _recorder()
    return cv_fold(problem, task, info=info, warn=warn), messages


def cv_accuracy(problem, task):
    """Cross-validation accuracy in percent, as LIBSVM prints it (``%g``) and grid.py reads it
    back: one grid cell, as a task. ``task`` = (params, nr_fold)."""
    params, nr_fold = task
    target = cross_validation(problem, params, nr_fold)
    correct = int((target == problem.y).sum())
    return float(f"{100.0 * correct / problem.n:g}")


def cv_mse(problem, task):
    """Cross-validation mean squared error (-s 3 and -s 4), the number svm-train -v prints
    (``%g``): one regression grid cell, as a task. ``task`` = (params, nr_fold)."""
    from ..numerics.measures import regression_measures

    params, nr_fold = task
    target = cross_validation(problem, params, nr_fold)
    return float(f"{regression_measures(target, problem.y)[0]:g}")


def train_allinone(*args, **kwargs):
    """--multiclass llw|cs (lasvm_cli/training/allinone.py, imported on first use: other runs
    never load the S2DO solvers)."""
    from .allinone import train_allinone as run

    return run(*args, **kwargs)


# C-SVC (ovo also nu-SVC)
MULTICLASS_TRAINERS = {"ovo": train_ovo, "ovr": train_ovr, "llw": train_allinone,
                       "cs": train_allinone}
SINGLE_MACHINE_TYPES = (2, 3, 4)  # one-class, epsilon-SVR, nu-SVR: train_single
