""":class:`OnlineSVC`: LASVM with ``partial_fit`` (Bordes, Ertekin, Weston & Bottou 2005).

Each binary machine keeps what LASVM itself keeps between examples: the expansion S (its rows,
alpha, gradient and boxes) and the online core's scalars and random generator. A batch is
processed by a :class:`~lasvm_cli.solvers.lasvm.LasvmRun` over the rows of S followed by the
batch's rows, continued from S (``continue_with``: the batch is the epoch's pool) and driven
by the one drive loop (training/drive.py) until the batch is drawn, so the online core
PROCESSes every new example once in random order, with REPROCESS after each; the
state after the batch is kept for the next one (the epoch goes on), and the model is a copy of
the run taken through the finishing step (``finish=True``), as LaSVM 1.1's intermediate models.
Rows that leave S are dropped: in one LASVM epoch an evicted example is never visited again, so
the batches make one LASVM epoch over their concatenation (examples drawn at random within each
batch, batches in order), with memory for S and one batch only. The first batches are kept until both
classes of a machine have been seen (LASVM seeds S with examples of each class).

Multi-class: one machine per class, "class c against the rest" (``multiclass='ovr'``, the
model file extension ``multiclass ovr``), or one per pair of classes fed the rows of its two
classes (``'ovo'``, a plain LIBSVM model); two classes: one machine, positive for
``classes_[1]``.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..io.model_file import read_model, write_model
from ..numerics.data import csr_take, kernel_data
from ..numerics.kernels import make_params
from ..numerics.model import SVMModel
from ..qp import SELECTIONS
from ..solvers.lasvm import LasvmRun
from ..training.drive import Drive, Observer
from .svm import (KERNEL_NAMES, KERNELS, gamma_value, integer_labels, ovo_pairs,
                  ovr_decision_function, seed_of, to_csr, validate)


def stack_rows(parts):
    """Concatenate (indptr, indices, values) CSR triples."""
    indptr = [np.zeros(1, np.int64)]
    off = 0
    for ip, _, _ in parts:
        indptr.append(ip[1:] + off)
        off += int(ip[-1])
    return (np.concatenate(indptr), np.concatenate([p[1] for p in parts]).astype(np.int32),
            np.concatenate([p[2] for p in parts]).astype(np.float64))


class EndOfBatch(Observer):
    """Pauses the online phase when the batch's examples are all drawn: the epoch goes on
    with the next batch."""

    def stop(self, run, drive):
        return "end of the batch" if run.epoch_left == 0 else None


class BinaryMachine:
    """One LASVM machine fed in batches: the expansion S and the core's state between them."""

    def __init__(self, kp, Cp, Cn, width, opts):
        self.kp, self.Cp, self.Cn, self.width, self.opts = kp, Cp, Cn, width, opts
        self.rows = (np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0))
        self.y = np.zeros(0)
        self.ids = np.zeros(0, np.int64)  # global row number of each stored row
        self.cls = np.zeros(0, np.int64)  # its class (position in classes_)
        self.state = None  # arrays of S after the last batch (None: not started)
        self.objective = np.nan

    def partial_fit(self, rows, y, ids, cls):
        rows = stack_rows([self.rows, rows])
        y = np.concatenate([self.y, y])
        ids = np.concatenate([self.ids, ids])
        cls = np.concatenate([self.cls, cls])
        if self.state is None and not ((y > 0).any() and (y < 0).any()):
            self.rows, self.y, self.ids, self.cls = rows, y, ids, cls  # wait for both classes
            return
        kd = kernel_data(*rows, width=self.width)
        o = self.opts
        run = LasvmRun(kd, self.kp, y, self.Cp, self.Cn, eps=o["tol"], cache_mb=o["cache_size"],
                       epochs=1, finish=o["finish"], selection=o["selection"],
                       candidates=o["candidates"], delta_max=o["delta_max"], seed=o["seed"])
        if self.state is None:
            run.begin()
        else:  # S = rows 0..|S|-1, the batch after them
            run.continue_with(self.state)
        Drive(run, [EndOfBatch()]).go()  # the batch, without ending the epoch
        self.state = run.kept_expansion()
        keep = self.state["rows"]
        # the model: a copy of the run taken through finishing (LaSVM 1.1's intermediate
        # models); the run itself goes on with the next batch
        fin = run.finished_copy() if run.online else run
        s = fin.kept_expansion()
        sv_rows = s["rows"][s["alpha"] != 0]
        self.model_part = (ids[sv_rows], cls[sv_rows], csr_take(*rows, sv_rows),
                           s["alpha"][s["alpha"] != 0])
        self.objective = -fin.dual_objective()  # LIBSVM's 0.5 a'Qa - e'a
        self.rho = fin.coef_rho()[1]
        self.rows = csr_take(*rows, keep)
        self.y, self.ids, self.cls = y[keep], ids[keep], cls[keep]

    @property
    def trained(self):
        return self.state is not None

    def coef(self):
        """(ids, classes, rows, alpha) of the support vectors (alpha != 0)."""
        if self.state is None:
            return (np.zeros(0, np.int64), np.zeros(0, np.int64), csr_take(*self.rows, []),
                    np.zeros(0))
        return self.model_part


class OnlineSVC(ClassifierMixin, BaseEstimator):
    """Online kernel SVM classifier (LASVM) with ``partial_fit``.

    ``partial_fit(X, y, classes)``: the first call must list in ``classes`` every class that
    will ever appear (as scikit-learn's SGDClassifier); later calls may omit it (or repeat the
    same classes). Each call is one LASVM pass over the new rows: PROCESS + REPROCESS per row
    in random order, then the finishing step (``finish=True``) so the machine is a tau-accurate
    SVM of everything seen so far, as one LASVM epoch over the concatenated batches would give.
    ``fit(X, y)`` forgets the past and makes one such pass over X. gamma='scale' is computed on
    the first batch and kept.

    Parameters: C, kernel, degree, gamma, coef0, tol (tau), cache_size (MB), class_weight
    (dict or None: C of class c is w_c C for its own examples), multiclass ('ovr': one machine
    per class, decision_function (n, k); 'ovo': one per pair, LIBSVM's model and votes,
    decision_function in scikit-learn's 'ovr' shape, predict its arg-max: the votes, ties
    broken by confidence), random_state (LASVM's example order), and
    LASVM's selection, candidates, delta_max, finish.
    Attributes: classes_, objective_ (LIBSVM's dual objective of each machine), n_support_,
    support_vectors_, dual_coef_ / intercept_ (two classes: positive for classes_[1]; 'ovr':
    one row per class; 'ovo': LIBSVM's sv_coef layout, intercept_ = -rho per pair), model_
    (an SVMModel; save_model / load_model).
    """

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3,
                 cache_size=200, class_weight=None, selection="random", candidates=50,
                 delta_max=None, finish=True, multiclass="ovr", random_state=None):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.selection = selection
        self.candidates = candidates
        self.delta_max = delta_max
        self.finish = finish
        self.multiclass = multiclass
        self.random_state = random_state

    # -- training ---------------------------------------------------------------------------

    def fit(self, X, y):
        for attr in ("classes_", "machines_", "model_", "n_features_in_", "_gamma"):
            self.__dict__.pop(attr, None)
        X, y = validate(self, X, y, reset=True)
        check_classification_targets(y)
        return self.partial_fit(X, y, classes=np.unique(y))

    def check_options(self):
        if self.kernel not in KERNELS or self.kernel == "precomputed":
            raise ValueError(f"kernel must be one of linear, poly, rbf, sigmoid, not "
                             f"{self.kernel!r}")
        if not self.C > 0:
            raise ValueError("C <= 0")
        if not self.tol > 0:
            raise ValueError("tol <= 0")
        if self.multiclass not in ("ovr", "ovo"):
            raise ValueError(f"multiclass must be 'ovr' or 'ovo', not {self.multiclass!r}")
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, not {self.selection!r}")

    def partial_fit(self, X, y, classes=None):
        first = not hasattr(self, "machines_")
        X, y = validate(self, X, y, reset=first)
        check_classification_targets(y)
        if first:
            self.check_options()
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit "
                                 "(every class that will ever appear)")
            classes = np.unique(np.asarray(classes))
            if classes.size < 2:
                raise ValueError("The number of classes has to be greater than one; got "
                                 f"{classes.size} class")
            self.classes_ = classes
            self._labels = integer_labels(classes)
            self._gamma = gamma_value(self.gamma, X, self.kernel)
            if self.kernel in ("poly", "rbf", "sigmoid") and self._gamma < 0:
                raise ValueError("gamma < 0")
            self.machines_ = self.new_machines(X.shape[1])
            self.n_seen_ = 0
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(f"`classes={list(classes)}` is not the same as on the first call "
                             f"to partial_fit, {list(self.classes_)}")
        y_idx = np.searchsorted(self.classes_, y)
        y_idx = np.minimum(y_idx, self.classes_.size - 1)
        if np.any(self.classes_[y_idx] != y):
            bad = y[self.classes_[y_idx] != y][0]
            raise ValueError(f"label {bad!r} is not in classes {list(self.classes_)}")
        rows = to_csr(X)
        ids = np.arange(self.n_seen_, self.n_seen_ + X.shape[0], dtype=np.int64)
        self.n_seen_ += X.shape[0]
        if self.classes_.size == 2:
            self.machines_[0].partial_fit(rows, np.where(y_idx == 1, 1.0, -1.0), ids, y_idx)
        elif self.multiclass == "ovr":
            for c, m in enumerate(self.machines_):
                m.partial_fit(rows, np.where(y_idx == c, 1.0, -1.0), ids, y_idx)
        else:  # machine (c, d): the rows of classes c (+1) and d (-1)
            for (c, d), m in zip(self.pairs(), self.machines_):
                mine = np.flatnonzero((y_idx == c) | (y_idx == d))
                m.partial_fit(csr_take(*rows, mine), np.where(y_idx[mine] == c, 1.0, -1.0),
                              ids[mine], y_idx[mine])
        self.make_model()
        return self

    def new_machines(self, n_features):
        kp = make_params(KERNELS[self.kernel], int(self.degree), self._gamma,
                         float(self.coef0))
        opts = dict(tol=float(self.tol), cache_size=float(self.cache_size),
                    finish=bool(self.finish), selection=self.selection,
                    candidates=int(self.candidates), delta_max=self.delta_max,
                    seed=seed_of(self.random_state))
        w = np.ones(self.classes_.size)
        if self.class_weight is not None and not isinstance(self.class_weight, dict):
            raise ValueError("class_weight must be a dict or None (the class counts of an "
                             f"online stream are not known in advance), not {self.class_weight!r}")
        for cls, weight in (self.class_weight or {}).items():
            hit = np.flatnonzero(self.classes_ == cls)
            if hit.size == 0:
                raise ValueError(f"class_weight: {cls!r} is not one of the classes")
            w[hit[0]] = float(weight)
        C = float(self.C)
        if self.classes_.size == 2:
            return [BinaryMachine(kp, C * w[1], C * w[0], n_features + 1, opts)]
        if self.multiclass == "ovo":
            return [BinaryMachine(kp, C * w[c], C * w[d], n_features + 1, opts)
                    for c, d in self.pairs()]
        return [BinaryMachine(kp, C * w[c], C, n_features + 1, opts)
                for c in range(self.classes_.size)]

    def pairs(self):
        k = self.classes_.size
        return [(c, d) for c in range(k) for d in range(c + 1, k)]

    def is_ovo(self):
        """A one-vs-one model of more than two classes (LIBSVM's own layout)."""
        return self.classes_.size > 2 and self.model_.multiclass == "ovo"

    # -- the model --------------------------------------------------------------------------

    def make_model(self):
        """model_ (an SVMModel) and the scikit-learn attributes from the machines."""
        k = self.classes_.size
        parts = [m.coef() for m in self.machines_]
        all_ids, first = np.unique(np.concatenate([p[0] for p in parts]), return_index=True)
        cls = np.concatenate([p[1] for p in parts])[first].astype(np.int64)
        if k == 2:  # LIBSVM's binary layout: classes_[1] (y = +1) first
            cls = 1 - cls
            label = self._labels[::-1].copy()
        else:
            label = self._labels.copy()
        uniq = all_ids
        order = np.lexsort((all_ids, cls))  # SVs grouped by class (LIBSVM's layout)
        all_ids, cls = all_ids[order], cls[order]
        column = np.empty(order.size, np.int64)
        column[order] = np.arange(order.size)
        ovo = k > 2 and self.multiclass == "ovo"
        coef = np.zeros((k - 1 if ovo else len(self.machines_), all_ids.size))
        for r, (ids, c_sv, _, alpha) in enumerate(parts):
            at = column[np.searchsorted(uniq, ids)]
            if ovo:  # LIBSVM's sv_coef: an SV of class c in pair (c, d) goes to row d - 1,
                c, d = self.pairs()[r]  # one of class d to row c
                coef[np.where(c_sv == c, d - 1, c), at] = alpha
            else:
                coef[r, at] = alpha
        # each SV's row, from the first machine that holds it
        store = stack_rows([p[2] for p in parts])
        sv_rows = csr_take(*store, first[order])
        rho = np.array([m.rho if m.trained else 0.0 for m in self.machines_])
        self.model_ = SVMModel(
            svm_type="c_svc", kernel_type=KERNELS[self.kernel], degree=int(self.degree),
            gamma=self._gamma, coef0=float(self.coef0), nr_class=k, label=label, rho=rho,
            nSV=np.bincount(cls, minlength=k).astype(np.int64), sv_coef=coef,
            sv_indptr=sv_rows[0], sv_indices=sv_rows[1], sv_values=sv_rows[2],
            multiclass="ovo" if k == 2 or ovo else "ovr")
        self.set_attributes()

    def set_attributes(self):
        """The attributes in classes_ order (SVs grouped by class, classes_[0]'s first):
        decision = dual_coef_ K(support_vectors_, x) + intercept_ (two classes: positive for
        classes_[1]; more: one row per class)."""
        m = self.model_
        k = self.classes_.size
        self.objective_ = np.array([mc.objective for mc in getattr(self, "machines_", [])])
        order = np.arange(m.total_sv)
        if k == 2 and m.label[0] == self._labels[1]:  # the model holds classes_[1]'s SVs first
            n1 = int(m.nSV[0])
            order = np.concatenate([np.arange(n1, m.total_sv), np.arange(n1)])
            self.n_support_ = m.nSV[::-1].astype(np.int32)
            sign = 1.0
        else:
            self.n_support_ = m.nSV.astype(np.int32)
            sign = -1.0 if k == 2 else 1.0  # a binary model read with labels in the other order
        self.dual_coef_ = sign * m.sv_coef[:, order]
        self.intercept_ = -sign * m.rho
        if k > 2 and m.multiclass == "ovr":
            inv = np.argsort(np.searchsorted(self._labels, m.label))
            self.dual_coef_, self.intercept_ = self.dual_coef_[inv], self.intercept_[inv]
        X = sp.csr_matrix((m.sv_values, m.sv_indices.astype(np.int64) - 1, m.sv_indptr),
                          shape=(m.total_sv, self.n_features_in_))
        self.support_vectors_ = X[order]

    def save_model(self, path):
        """Write the model as a LIBSVM model file (binary: plain c_svc; more classes: the
        ``multiclass ovr`` extension)."""
        check_is_fitted(self, "model_")
        write_model(self.model_, path)
        return path

    def load_model(self, path):
        """Read a model file into this estimator for prediction (partial_fit then starts a new
        machine: LASVM's state is not in model files)."""
        model = read_model(path)
        if model.svm_type != "c_svc" or model.multiclass not in ("ovo", "ovr"):
            raise ValueError(f"{path}: OnlineSVC reads c_svc models (one-vs-one or 'multiclass "
                             "ovr')")
        if model.nr_class > 2:
            self.multiclass = model.multiclass
        for attr in ("machines_", "n_features_in_"):
            self.__dict__.pop(attr, None)
        self.kernel = KERNEL_NAMES[model.kernel_type]
        self.degree, self.gamma, self.coef0 = model.degree, model.gamma, model.coef0
        self._gamma = model.gamma
        self._labels = np.sort(model.label)
        self.classes_ = self._labels.copy()
        self.n_features_in_ = int(model.sv_indices.max()) if model.sv_indices.size else 0
        self.model_ = model
        self.set_attributes()
        return self

    # -- prediction -------------------------------------------------------------------------

    def test_data(self, X):
        check_is_fitted(self, "model_")
        X = validate(self, X, reset=False)
        return kernel_data(*to_csr(X), width=X.shape[1] + 1)

    def decision_function(self, X):
        """Two classes: f(x), positive for classes_[1]; more: one column per class."""
        kd = self.test_data(X)
        m = self.model_
        dec = m.decision_values(kd)
        if self.classes_.size == 2:
            return dec[:, 0] if m.label[0] == self._labels[1] else -dec[:, 0]
        if self.is_ovo():  # scikit-learn's one-vs-rest shape of the pairs' values
            dec = self.ovo_values(dec)
            return ovr_decision_function(dec < 0, -dec, self.classes_.size)
        return dec[:, np.argsort(np.searchsorted(self._labels, m.label))]

    def ovo_values(self, dec):
        pairs, signs = ovo_pairs(self.model_.label, self._labels)
        return dec[:, pairs] * signs

    def predict(self, X):
        # 'ovo': LIBSVM's votes, a tie broken by the summed confidences (the arg-max of the
        # decision function, scikit-learn's break_ties; svm-predict gives a tie to the first)
        check_is_fitted(self, "model_")
        dec = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(dec > 0).astype(np.int64)]
        return self.classes_[np.argmax(dec, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
