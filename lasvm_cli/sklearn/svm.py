"""Batch estimators: :class:`SVC` and the thin subclasses that set LIBSVM's svm_type.

One base class, :class:`LibSVMEstimator`, turns scikit-learn's parameters into
:class:`~lasvm_cli.training.params.TrainParams`, the input into a
:class:`~lasvm_cli.numerics.data.Problem` (feature column j is LIBSVM index j + 1), trains with
:func:`lasvm_cli.training.fit.fit` and keeps the
:class:`~lasvm_cli.numerics.model.SVMModel` (``model_``), from which the scikit-learn attributes
come.

Class order. The classifiers train as scikit-learn's SVC does: its libsvm gets the labels
encoded as positions in ``classes_`` (ascending) and groups the rows by class in that order
(its svm_group_classes sorts the labels; LIBSVM's keeps the order of first occurrence and puts
+1 before -1). The pairs, their SMO paths and so the solutions are then scikit-learn's, not
merely equal within the tolerance. svm-train keeps LIBSVM's order: the model file written here
is svm-train's, byte for byte, for data whose classes first occur in ascending order (and are
not -1/+1), e.g. rows sorted by class. The attributes and outputs follow scikit-learn's
conventions (its SVC is LIBSVM too):

* ``decision_function``: binary, one value per row, positive for ``classes_[1]``; multi-class,
  the one-vs-one values for pairs (0,1), (0,2), ... of ``classes_`` (``decision_function_shape=
  'ovo'``) or scikit-learn's one-vs-rest transform of them (``'ovr'``, the default). A pair whose
  classes come in the other order in the model is the same machine with its sign flipped.
* ``dual_coef_`` (n_classes - 1, n_SV): LIBSVM's sv_coef layout over the SVs grouped by class
  in ``classes_`` order; binary: negated, with ``intercept_`` = rho, so that
  decision = dual_coef_ K + intercept_; multi-class ``intercept_`` = -rho per pair.
* ``predict``: LIBSVM's votes over the pairs of ``classes_`` (a tie goes to the smaller class,
  as in scikit-learn; svm-predict on the saved file, whose labels are in first-occurrence
  order, can break an exact tie the other way); with ``break_ties=True`` the arg-max of the
  'ovr' decision function, as scikit-learn.
* ``predict_proba`` (``probability=True``): LIBSVM's ``-b 1`` (5-fold CV decision values, Platt,
  pairwise coupling), columns in ``classes_`` order.

Labels: integer-valued labels are LIBSVM's labels themselves; any other labels (strings,
fractions) are written to model files as their position in ``classes_``.
"""

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from ..base.options import LIBSVM_OPTIONS, applies
from ..io.model_file import read_model, write_model
from ..numerics.data import Problem, kernel_data
from ..solvers import OPTIONS
from ..training.fit import fit as fit_model
from ..training.params import SVM_TYPES, TrainParams, check_parameter

# parameters of scikit-learn's own, with no svm-train option: the kernel by name (-t), the
# output's shape and tie-breaking, verbosity; and partitions (svm-train --partitions, a
# command option: training/cascade.py over blocks of X's rows, in this process)
SKLEARN_ONLY = ("kernel", "verbose", "decision_function_shape", "break_ties", "partitions")
# lasvm-cli's options that the estimators take as parameters, set generically in train_params
# (LIBSVM's, --seed and --max-iter are converted by hand: scikit-learn's random_state and -1)
EXTENSION_OPTIONS = tuple(o for o in OPTIONS if o.sklearn and o not in LIBSVM_OPTIONS
                          and o.sklearn not in ("random_state", "max_iter"))
MAX_ITER = next(o for o in OPTIONS if o.field == "max_iter")


def estimator_value(option, v):
    """An estimator parameter's value as TrainParams holds the option's field: a switch as
    bool, an integer option as int (inf stays inf), a float as float, text as given."""
    if option.parse is None:
        return bool(v)
    if v is None or option.parse is str or isinstance(v, str):
        return v
    if option.parse is float:
        return float(v)
    return v if v == float("inf") else int(v)

KERNELS = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}
KERNEL_NAMES = {v: k for k, v in KERNELS.items()}


def validate(est, X, y="no_validation", reset=True, **kw):
    """scikit-learn's validate_data (n_features_in_ checks and set-up), CSR or dense float64;
    returns X, or (X, y) when y is given (None included: fit without y is an error)."""
    kw.setdefault("accept_sparse", "csr")
    kw.setdefault("dtype", np.float64)
    return validate_data(est, X, y, reset=reset, **kw)


def to_csr(X, precomputed=False):
    """(indptr, indices, values) with LIBSVM's 1-based indices (column j -> index j + 1); a
    precomputed kernel row i gets LIBSVM's ``0:serial`` (i + 1) first."""
    if precomputed:
        X = X.toarray() if sp.issparse(X) else np.asarray(X, np.float64)
        n = X.shape[0]
        full = np.hstack([np.arange(1, n + 1, dtype=np.float64)[:, None], X])
        indptr = np.arange(0, n * full.shape[1] + 1, full.shape[1], dtype=np.int64)
        indices = np.tile(np.arange(full.shape[1], dtype=np.int32), n)
        return indptr, indices, full.reshape(-1)
    if sp.issparse(X):
        X = sp.csr_matrix(X)  # a CSR copy (sorting its indices must not touch the caller's)
        if not X.has_sorted_indices:
            X = X.copy()
            X.sort_indices()
    else:
        X = sp.csr_matrix(np.asarray(X, np.float64))
    return (X.indptr.astype(np.int64), (X.indices + 1).astype(np.int32),
            X.data.astype(np.float64))


def gamma_value(gamma, X, kernel):
    """scikit-learn's gamma: 'scale' 1 / (n_features X.var()), 'auto' 1 / n_features."""
    n_features = max(X.shape[1], 1)
    if isinstance(gamma, str):
        if gamma == "scale":
            if kernel == "precomputed":
                return 0.0
            if sp.issparse(X):
                var = X.multiply(X).mean() - X.mean() ** 2
            else:
                var = X.var()
            return 1.0 / (n_features * var) if var != 0 else 1.0
        if gamma == "auto":
            return 1.0 / n_features
        raise ValueError(f"gamma must be 'scale', 'auto' or a non-negative float, not {gamma!r}")
    if not isinstance(gamma, numbers.Real):
        raise ValueError(f"gamma must be 'scale', 'auto' or a non-negative float, not {gamma!r}")
    return float(gamma)


def seed_of(random_state):
    """LIBSVM's rand() seed: 1 (LIBSVM's unseeded rand) for None, the integer itself, or one
    drawn from a RandomState."""
    if random_state is None:
        return 1
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(0, 2 ** 31 - 1))


def integer_labels(classes):
    """LIBSVM's (integer) label of each class: the class itself when every class is an integer
    value that fits, else its position in ``classes`` (ascending either way)."""
    try:
        values = np.asarray(classes, np.float64)
        if values.dtype.kind == "f" and np.all(values == np.round(values)) and \
                np.all(np.abs(values) < 2 ** 31) and np.asarray(classes).dtype.kind != "b":
            return values.astype(np.int64)
    except (TypeError, ValueError):
        pass
    return np.arange(len(classes), dtype=np.int64)


def ovr_decision_function(predictions, confidences, n_classes):
    """scikit-learn's one-vs-one -> one-vs-rest transform (votes plus confidences scaled into
    (-1/3, 1/3)), as sklearn.utils.multiclass applies it for decision_function_shape='ovr'."""
    n = predictions.shape[0]
    votes = np.zeros((n, n_classes))
    sums = np.zeros((n, n_classes))
    k = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            sums[:, i] -= confidences[:, k]
            sums[:, j] += confidences[:, k]
            votes[predictions[:, k] == 0, i] += 1
            votes[predictions[:, k] == 1, j] += 1
            k += 1
    return votes + sums / (3 * (np.abs(sums) + 1))


def ovo_pairs(model_labels, labels):
    """For each pair (c, d), c < d, of the ascending ``labels`` (LIBSVM's pair order): the
    index of the model's pair of those classes, and +1, or -1 when the model, whose labels are
    ``model_labels``, holds it as (d, c) (the same machine with its sign flipped)."""
    k = len(model_labels)
    inv = np.argsort(np.searchsorted(labels, model_labels))  # position in labels -> model class
    pairs, signs = [], []
    for c in range(k):
        for d in range(c + 1, k):
            p, q = inv[c], inv[d]
            pairs.append(pair_index(min(p, q), max(p, q), k))
            signs.append(1.0 if p < q else -1.0)
    return np.array(pairs, np.int64), np.array(signs)


def ovo_vote(dec, k):
    """LIBSVM's votes over one-vs-one values (positive: the first class of the pair); the
    index of the winning class, ties to the smaller index."""
    votes = np.zeros((dec.shape[0], k), np.int64)
    p = 0
    for c in range(k):
        for d in range(c + 1, k):
            win = dec[:, p] > 0
            votes[win, c] += 1
            votes[~win, d] += 1
            p += 1
    return np.argmax(votes, axis=1)


def pair_index(i, j, k):
    """Position of the one-vs-one pair (i, j), i < j, in LIBSVM's order (0,1), (0,2), ..."""
    return i * k - i * (i + 1) // 2 + (j - i - 1)


class LibSVMEstimator(BaseEstimator):
    """What every estimator here shares: parameters -> TrainParams, input -> Problem, training
    through lasvm_cli.training.fit, the model's attributes, model files. Subclasses set
    ``svm_type`` (LIBSVM's -s) and their kind (classifier, regressor, outlier detector)."""

    svm_type = 0

    # -- parameters -------------------------------------------------------------------------

    def train_params(self, X):
        """TrainParams of this estimator's parameters (gamma resolved on X)."""
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {sorted(KERNELS)}, not {self.kernel!r}")
        max_iter = getattr(self, "max_iter", -1)
        p = TrainParams(
            svm_type=self.svm_type, kernel_type=KERNELS[self.kernel], degree=int(self.degree),
            gamma=gamma_value(self.gamma, X, self.kernel), coef0=float(self.coef0),
            C=float(getattr(self, "C", 1.0)), nu=float(getattr(self, "nu", 0.5)),
            p=float(getattr(self, "epsilon", 0.1)), cache_size=float(self.cache_size),
            eps=float(self.tol), shrinking=int(bool(self.shrinking)),
            probability=int(bool(getattr(self, "probability", False))),
            max_iter=None if max_iter is None or max_iter < 0 else int(max_iter),
            seed=seed_of(getattr(self, "random_state", None)), nu_start="sklearn")
        # lasvm-cli's options that the estimator has as parameters (declared with their
        # scikit-learn name: lasvm_cli/solvers OPTIONS), by their declared type
        params = self.get_params(deep=False)
        for o in EXTENSION_OPTIONS:
            if o.sklearn in params:
                setattr(p, o.field, estimator_value(o, params[o.sklearn]))
        if p.max_iter is not None and not applies(MAX_ITER, p):
            # scikit-learn's max_iter is every estimator's generic cap (its checks set it on
            # any estimator that has one): SMO's --max-iter, with no effect on the solvers
            # that have no iteration cap, rather than their "--max-iter: only with" error
            p.max_iter = None
        if p.kernel_type in (1, 2, 3) and p.gamma < 0:
            raise ValueError("gamma < 0")
        return p

    def check_params(self, p, weights=None, class_counts=None):
        """LIBSVM's parameter check (with ``class_counts``, nu-SVC's feasibility on every
        pair: "specified nu is infeasible", a ValueError as in scikit-learn)."""
        if weights:
            p.weights = weights
        msg = check_parameter(p, class_counts)
        if msg is not None:
            raise ValueError(msg)
        return p

    # -- fitting ----------------------------------------------------------------------------

    def fit_problem(self, X, y_lib, params, rows=None, labels=None):
        """Train on X (validated) with LIBSVM labels / targets y_lib (on ``rows`` of X in that
        order, default all); sets model_ and the common attributes. ``labels``: the model's
        label for each label of y_lib, 0 .. k-1."""
        precomputed = self.kernel == "precomputed"
        if precomputed and X.shape[0] != X.shape[1]:
            raise ValueError("X should be a square kernel matrix")
        indptr, indices, values = to_csr(X, precomputed)
        max_index = X.shape[0] if precomputed else X.shape[1]
        problem = Problem(y_lib, indptr, indices, values, max_index,
                          kernel_type=params.kernel_type)
        info = print if getattr(self, "verbose", False) else None
        model = fit_model(problem, params, rows=rows, info=info,
                          warn=lambda m: warnings.warn(m, stacklevel=3))
        return self._fitted(model, X, labels)

    def fit_partitions(self, X, y_lib, params, labels=None):
        """partitions=P: the exact SVM of ``params`` over P blocks of X's rows
        (training/cascade.py, in this process), with LIBSVM labels / targets y_lib;
        ``labels``: the model's label for each label of y_lib, 0 .. k-1 (classes in that
        order, as fit_problem's)."""
        from ..io.svmlight import SvmlightData
        from ..training.cascade import Cascade, refused

        used = refused(params, self.kernel == "precomputed")
        if used or int(self.partitions) < 1:
            raise ValueError("partitions: " + (f"not with {', '.join(used)}" if used else
                                               "must be at least 1"))
        indptr, indices, values = to_csr(X)
        data = SvmlightData(np.asarray(y_lib, np.float64), indptr, indices, values, X.shape[1])
        info = print if getattr(self, "verbose", False) else (lambda _m: None)
        model = Cascade(data, int(self.partitions),
                        labels=None if labels is None else np.arange(labels.size)) \
            .train(params, info=info, warn=lambda m: warnings.warn(m, stacklevel=3))
        return self._fitted(model, X, labels)

    def _fitted(self, model, X, labels=None):
        """This estimator fitted to X with ``model``, its labels mapped through ``labels``."""
        if labels is not None:
            model.label = labels[np.asarray(model.label, np.int64)]
        self.sparse_input_ = sp.issparse(X)
        self.shape_fit_ = X.shape
        self.set_model(model)
        return self

    def set_model(self, model):
        """Take ``model`` (an SVMModel) as this estimator's fitted state."""
        self.model_ = model
        self._gamma = model.gamma
        self.fit_status_ = 0
        self.n_iter_ = np.array([getattr(model, "counters", {}).get("iterations", 0)])
        self.set_attributes()

    def set_attributes(self):
        """support_, support_vectors_, dual_coef_, intercept_, n_support_ (one-class and
        regression: the model's own layout)."""
        m = self.model_
        self.support_ = self.model_support()
        self.support_vectors_ = self.sv_matrix(np.arange(m.total_sv))
        self.dual_coef_ = sp.csr_matrix(m.sv_coef) if getattr(self, "sparse_input_", False) \
            else m.sv_coef.copy()
        self.intercept_ = -m.rho.copy()
        self.n_support_ = np.array([m.total_sv], np.int32) if m.nSV is None else \
            m.nSV.astype(np.int32)

    def model_support(self, order=None):
        m = self.model_
        sv = m.sv_indices_train
        if sv is None:  # a loaded model: its SVs' training rows are not known
            sv = np.zeros(m.total_sv, np.int64)
        sv = np.asarray(sv, np.int64) - 1
        return (sv if order is None else sv[order]).astype(np.int32)

    def n_model_features(self):
        n = getattr(self, "n_features_in_", None)
        if n is None:
            m = self.model_
            n = int(m.sv_indices.max()) if m.sv_indices.size else 0
        return n

    def sv_matrix(self, order):
        """The SVs (model order permuted by ``order``) as scikit-learn shows them: CSR when the
        estimator was fitted on sparse data, else dense (n_SV, n_features)."""
        m = self.model_
        if self.kernel == "precomputed" or m.kernel_type == 4:
            return np.zeros((0, 0))
        n_features = self.n_model_features()
        rows = sp.csr_matrix((m.sv_values, m.sv_indices.astype(np.int64) - 1, m.sv_indptr),
                             shape=(m.total_sv, max(n_features, 1)))[order]
        if n_features == 0:
            rows = rows[:, :0]
        return rows if getattr(self, "sparse_input_", False) else rows.toarray()

    # -- prediction -------------------------------------------------------------------------

    def test_data(self, X):
        check_is_fitted(self, "model_")
        X = validate(self, X, reset=False)
        precomputed = self.kernel == "precomputed" or self.model_.kernel_type == 4
        if precomputed:
            n_train = self.shape_fit_[0] if hasattr(self, "shape_fit_") else X.shape[1]
            if X.shape[1] != n_train:
                raise ValueError(f"X.shape[1] = {X.shape[1]} should be equal to {n_train}, "
                                 "the number of samples at training time")
            indptr, indices, values = to_csr(X, True)
            return kernel_data(indptr, indices, values, kernel_type=4)
        indptr, indices, values = to_csr(X)
        return kernel_data(indptr, indices, values, width=X.shape[1] + 1)

    def raw_decision(self, X):
        """LIBSVM's decision values (model order), float64 [n, n_decisions]."""
        return self.model_.decision_values(self.test_data(X))

    # -- model files ------------------------------------------------------------------------

    def save_model(self, path):
        """Write the fitted model as a LIBSVM model file (svm-predict and LIBSVM read it)."""
        check_is_fitted(self, "model_")
        write_model(self.model_, path)
        return path

    def load_model(self, path):
        """Read a LIBSVM model file into this estimator (kernel parameters included); returns
        self, fitted. ``support_`` is unknown for a loaded model (zeros)."""
        model = read_model(path)
        expected = SVM_TYPES[self.svm_type]
        if model.svm_type != expected:
            raise ValueError(f"{path}: a {model.svm_type} model, not {expected} "
                             f"(use the estimator of that type)")
        self.kernel = KERNEL_NAMES[model.kernel_type]
        self.degree, self.gamma, self.coef0 = model.degree, model.gamma, model.coef0
        if hasattr(self, "probability"):
            self.probability = model.probA is not None
        for attr in ("n_features_in_", "sparse_input_", "shape_fit_"):
            self.__dict__.pop(attr, None)
        self.n_features_in_ = self.n_model_features_of(model)
        self.sparse_input_ = False
        self.load_classes(model)
        self.set_model(model)
        return self

    @staticmethod
    def n_model_features_of(model):
        return int(model.sv_indices.max()) if model.sv_indices.size else 0

    def load_classes(self, model):
        pass

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


# shared parameters and their defaults (scikit-learn's, then ours)
_DOC_PARAMS = """
    solver : 'smo' | 'lasvm'  batch SMO (LIBSVM's) or online LASVM (then its finishing step)
    wss : 'so' | 'mvp' | 'hmg'  SMO working-set selection;  final_kkt_check : HMG only (default
        True: finish to tol; False: the paper's MG stopping rule alone, svm-train --mg-stop)
    epochs, finish, selection, candidates, delta_max : LASVM's options (svm-train --epochs ...)
"""


class SVC(ClassifierMixin, LibSVMEstimator):
    """C-Support Vector Classification (LIBSVM's C-SVC, svm-train -s 0) with scikit-learn's
    parameters, plus the solver options of svm-train:
    """ + _DOC_PARAMS + """
    multiclass : 'ovo' (LIBSVM) | 'ovr' (one machine per class, the model file extension)
    random_state : seed of LIBSVM's rand() for probability folds and LASVM (None: LIBSVM's
        unseeded rand, so ``probability=True`` gives svm-train -b 1's values where the class
        orders agree, see the module's docstring)
    """

    svm_type = 0

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, probability=False, tol=1e-3, cache_size=200,
                 class_weight=None, verbose=False, max_iter=-1, decision_function_shape="ovr",
                 break_ties=False, random_state=None, solver="smo", wss="so",
                 final_kkt_check=True, multiclass="ovo", epochs=1, finish=True,
                 selection="random", candidates=50, delta_max=None, partitions=None):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.solver = solver
        self.wss = wss
        self.final_kkt_check = final_kkt_check
        self.multiclass = multiclass
        self.epochs = epochs
        self.finish = finish
        self.selection = selection
        self.candidates = candidates
        self.delta_max = delta_max
        self.partitions = partitions

    def fit(self, X, y):
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError("decision_function_shape must be 'ovr' or 'ovo', not "
                             f"{self.decision_function_shape!r}")
        X, y = validate(self, X, y, reset=True)
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError("The number of classes has to be greater than one; got "
                             f"{classes.size} class")
        self.classes_ = classes
        self._labels = integer_labels(classes)
        params = self.check_params(self.train_params(X), self.class_weights(y_idx),
                                   np.bincount(y_idx))
        # scikit-learn's libsvm: labels 0..k-1 (positions in classes_), rows grouped by class
        # in that order, each class's rows in input order (a stable sort); then the model gets
        # the classes' own labels back for its file
        if getattr(self, "partitions", None):
            return self.fit_partitions(X, y_idx, params, labels=self._labels)
        rows = np.argsort(y_idx, kind="stable")
        return self.fit_problem(X, y_idx.astype(np.float64), params, rows=rows,
                                labels=self._labels)

    def class_weights(self, y_idx):
        """class_weight as svm-train's -wi weights, by encoded label (position in classes_)."""
        cw = self.class_weight
        if cw is None:
            return {}
        k = self.classes_.size
        if isinstance(cw, str):
            if cw != "balanced":
                raise ValueError(f"class_weight must be a dict, 'balanced' or None, not {cw!r}")
            count = np.bincount(y_idx, minlength=k)
            w = y_idx.size / (k * count.astype(np.float64))
            return {c: float(w[c]) for c in range(k)}
        out = {}
        for cls, w in cw.items():
            hit = np.flatnonzero(self.classes_ == cls)
            if hit.size == 0:
                raise ValueError(f"The classes, {list(cw)}, are not in class, "
                                 f"{list(self.classes_)}")
            out[int(hit[0])] = float(w)
        return out

    def load_classes(self, model):
        labels = np.sort(model.label)
        self.classes_ = labels.copy()
        self._labels = labels.copy()

    # -- the model in classes_ order --------------------------------------------------------

    def class_order(self):
        """sigma: model class p -> position in classes_."""
        return np.searchsorted(self._labels, self.model_.label)

    def set_attributes(self):
        m = self.model_
        k = m.nr_class
        sigma = self.class_order()
        inv = np.argsort(sigma)  # classes_ position -> model class
        start = np.concatenate([[0], np.cumsum(m.nSV)[:-1]]).astype(np.int64)
        order = np.concatenate([np.arange(start[p], start[p] + m.nSV[p]) for p in inv]) \
            if k else np.zeros(0, np.int64)
        order = order.astype(np.int64)
        self.n_support_ = m.nSV[inv].astype(np.int32)
        self.support_ = self.model_support(order)
        self.support_vectors_ = self.sv_matrix(order)
        if m.multiclass == "ovr":
            self.dual_coef_ = m.sv_coef[inv][:, order]
            self.intercept_ = -m.rho[inv]
            self.set_probability(None, None)
            return
        # sorted-order LIBSVM layout: coefficient of SV s (class c) in pair (c, d)
        sv_class = np.repeat(np.arange(k), m.nSV)  # model class of each model SV
        coef = np.zeros((max(k - 1, 0), m.total_sv))
        for s_new, s in enumerate(order):
            p = sv_class[s]
            c = sigma[p]
            for q in range(k):
                if q == p:
                    continue
                d = sigma[q]
                v = m.sv_coef[q - 1 if p < q else q, s]
                coef[d - 1 if c < d else d, s_new] = v if (p < q) == (c < d) else -v
        pairs, signs = self.pair_map()
        rho = m.rho[pairs] * signs
        if k == 2:
            coef = -coef
            self.intercept_ = rho.copy()
        else:
            self.intercept_ = -rho
        # scikit-learn keeps dual_coef_ sparse (CSR) after a fit on sparse data
        self.dual_coef_ = sp.csr_matrix(coef) if getattr(self, "sparse_input_", False) else coef
        self.set_probability(pairs, signs)

    def set_probability(self, pairs, signs):
        m = self.model_
        if m.probA is None or pairs is None:
            self.probA_, self.probB_ = np.zeros(0), np.zeros(0)
        else:  # a flipped pair: P(first) = 1 / (1 + exp(A f' - B)) with f' = -f
            self.probA_ = m.probA[pairs].copy()
            self.probB_ = m.probB[pairs] * signs

    def pair_map(self):
        """For each pair (c, d) of classes_ (c < d, LIBSVM's order): the model's pair and +1,
        or -1 when the model has it as (d, c)."""
        return ovo_pairs(self.model_.label, self._labels)

    def ovo_values(self, X):
        """One-vs-one decision values for the pairs of classes_ (LIBSVM's sign: positive for
        the first class of the pair)."""
        dec = self.raw_decision(X)
        pairs, signs = self.pair_map()
        return dec[:, pairs] * signs

    def decision_function(self, X):
        check_is_fitted(self, "model_")
        k = self.classes_.size
        if self.model_.multiclass == "ovr":
            dec = self.raw_decision(X)[:, np.argsort(self.class_order())]
            return dec[:, 1] - dec[:, 0] if k == 2 else dec
        dec = self.ovo_values(X)
        if k == 2:
            return -dec[:, 0]
        if self.decision_function_shape == "ovr":
            return ovr_decision_function(dec < 0, -dec, k)
        return dec

    def predict(self, X):
        check_is_fitted(self, "model_")
        if self.break_ties and self.decision_function_shape == "ovr" and \
                self.classes_.size > 2:
            return self.classes_[np.argmax(self.decision_function(X), axis=1)]
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        if self.model_.multiclass == "ovr":  # one machine per class: the arg-max
            dec = self.raw_decision(X)[:, np.argsort(self.class_order())]
            return self.classes_[np.argmax(dec, axis=1)]
        # LIBSVM's votes over the pairs of classes_ (a tie goes to the smaller class, as in
        # scikit-learn; svm-predict on the saved file breaks ties by the file's label order)
        return self.classes_[ovo_vote(self.ovo_values(X), self.classes_.size)]

    def _check_proba(self):
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X):
        """LIBSVM's probability estimates (svm-predict -b 1), columns in classes_ order."""
        check_is_fitted(self, "model_")
        if self.model_.probA is None:
            raise AttributeError("the model has no probability information (fit it with "
                                 "probability=True)")
        _, probs = self.model_.predict_probability(self.test_data(X))
        return probs[:, np.argsort(self.class_order())]

    @available_if(_check_proba)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


class NuSVC(SVC):
    """nu-Support Vector Classification (svm-train -s 1): SVC with ``nu`` in place of ``C``."""

    svm_type = 1

    def __init__(self, *, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, probability=False, tol=1e-3, cache_size=200,
                 class_weight=None, verbose=False, max_iter=-1, decision_function_shape="ovr",
                 break_ties=False, random_state=None, solver="smo", wss="so",
                 final_kkt_check=True, multiclass="ovo", epochs=1, finish=True,
                 selection="random", candidates=50, delta_max=None, partitions=None):
        super().__init__(kernel=kernel, degree=degree, gamma=gamma, coef0=coef0,
                         shrinking=shrinking, probability=probability, tol=tol,
                         cache_size=cache_size, class_weight=class_weight, verbose=verbose,
                         max_iter=max_iter, decision_function_shape=decision_function_shape,
                         break_ties=break_ties, random_state=random_state, solver=solver,
                         wss=wss, final_kkt_check=final_kkt_check, multiclass=multiclass,
                         epochs=epochs, finish=finish, selection=selection,
                         candidates=candidates, delta_max=delta_max, partitions=partitions)
        del self.C
        self.nu = nu


class _OneOutput(LibSVMEstimator):
    """Regression and one-class: one machine, the model's own layout."""

    def fit_targets(self, X, y):
        params = self.check_params(self.train_params(X))
        if getattr(self, "partitions", None):
            return self.fit_partitions(X, y, params)
        return self.fit_problem(X, y, params)

    def predict(self, X):
        check_is_fitted(self, "model_")
        return self.model_.predict(self.test_data(X))


def _regressor_init(self, kernel, degree, gamma, coef0, tol, C, shrinking, cache_size,
                    verbose, max_iter, solver, wss, final_kkt_check, epochs, finish,
                    selection, candidates, delta_max, partitions):
    self.kernel, self.degree, self.gamma, self.coef0 = kernel, degree, gamma, coef0
    self.tol, self.C, self.shrinking, self.cache_size = tol, C, shrinking, cache_size
    self.verbose, self.max_iter = verbose, max_iter
    self.solver, self.wss, self.final_kkt_check = solver, wss, final_kkt_check
    self.epochs, self.finish, self.selection = epochs, finish, selection
    self.candidates, self.delta_max = candidates, delta_max
    self.partitions = partitions


class SVR(RegressorMixin, _OneOutput):
    """epsilon-Support Vector Regression (svm-train -s 3)."""

    svm_type = 3

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0,
                 epsilon=0.1, shrinking=True, cache_size=200, verbose=False, max_iter=-1,
                 solver="smo", wss="so", final_kkt_check=True, epochs=1, finish=True,
                 selection="random", candidates=50, delta_max=None, partitions=None):
        _regressor_init(self, kernel, degree, gamma, coef0, tol, C, shrinking, cache_size,
                        verbose, max_iter, solver, wss, final_kkt_check, epochs, finish,
                        selection, candidates, delta_max, partitions)
        self.epsilon = epsilon

    def fit(self, X, y):
        X, y = validate(self, X, y, reset=True, y_numeric=True)
        return self.fit_targets(X, np.asarray(y, np.float64))


class NuSVR(RegressorMixin, _OneOutput):
    """nu-Support Vector Regression (svm-train -s 4)."""

    svm_type = 4

    def __init__(self, *, nu=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, tol=1e-3, cache_size=200, verbose=False, max_iter=-1,
                 solver="smo", wss="so", final_kkt_check=True, epochs=1, finish=True,
                 selection="random", candidates=50, delta_max=None, partitions=None):
        _regressor_init(self, kernel, degree, gamma, coef0, tol, C, shrinking, cache_size,
                        verbose, max_iter, solver, wss, final_kkt_check, epochs, finish,
                        selection, candidates, delta_max, partitions)
        self.nu = nu

    def fit(self, X, y):
        X, y = validate(self, X, y, reset=True, y_numeric=True)
        return self.fit_targets(X, np.asarray(y, np.float64))


class OneClassSVM(OutlierMixin, _OneOutput):
    """One-class SVM (svm-train -s 2): predict +1 for inliers, -1 for outliers;
    ``offset_`` = rho, ``score_samples`` = decision_function + offset_, as scikit-learn."""

    svm_type = 2

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, nu=0.5,
                 shrinking=True, cache_size=200, verbose=False, max_iter=-1, solver="smo",
                 wss="so", final_kkt_check=True, epochs=1, finish=True, selection="random",
                 candidates=50, delta_max=None, partitions=None):
        _regressor_init(self, kernel, degree, gamma, coef0, tol, 1.0, shrinking, cache_size,
                        verbose, max_iter, solver, wss, final_kkt_check, epochs, finish,
                        selection, candidates, delta_max, partitions)
        del self.C
        self.nu = nu

    def fit(self, X, y=None):
        X = validate(self, X, reset=True)
        return self.fit_targets(X, np.ones(X.shape[0]))

    def set_attributes(self):
        super().set_attributes()
        self.offset_ = -self.intercept_

    def decision_function(self, X):
        """Signed distance to the boundary (regressors have none: scikit-learn's checks)."""
        check_is_fitted(self, "model_")
        return self.raw_decision(X)[:, 0]

    def predict(self, X):
        return super().predict(X).astype(np.int64)  # +1 inlier, -1 outlier

    def score_samples(self, X):
        return self.decision_function(X) + self.offset_
