"""The trained model and its decision function (LIBSVM's ``svm_model``, ``svm_predict_values``).

:class:`SVMModel` holds exactly what a LIBSVM model file holds (see ``io/model_file.py``), plus
the ``multiclass`` extension. Support vectors are kept as CSR arrays with the indices used in
files (1-based; a precomputed-kernel model stores ``0:serial``). Their kernel storage
(:meth:`SVMModel.sv_data`) may compact a wide index range into columns; test rows are put in
the same columns (``data.align``) before any kernel row, features no SV has only adding to
their squared norms.

Decision values (``decision_values``) are computed for all test rows at once: a numba
``prange`` over blocks of test rows, one kernel row against all SVs per test row
(``kernels.kernel_row_serial``), then per output the sum of coefficient times kernel value
minus rho, in LIBSVM's order:

* ``ovo`` classification: k(k-1)/2 values for the pairs (0,1), (0,2), ..., (k-2,k-1), computed
  as in ``svm_predict_values``: for pair (i,j), sum over SVs of class i of
  ``sv_coef[j-1][sv]*K`` plus sum over SVs of class j of ``sv_coef[i][sv]*K``, minus rho.
* ``ovr``, ``llw``, ``cs`` (extension, see io/model_file.py): k values, value c = sum over
  all SVs of ``sv_coef[c][sv]*K`` - rho[c].
* SVR / one-class: one value, ``sum sv_coef[0]*K - rho[0]``.

Prediction: ``ovo`` votes (value > 0 votes for i, else j; ties go to the earlier label),
``ovr``/``llw``/``cs`` take the arg-max (ties to the first class), one-class gives +1 if
value > 0 else -1, SVR returns the value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np
from numba import prange
from ..base import jit_cache  # noqa: F401 (before any decorator: the cache's stamp)

from . import kernels
from .data import align, kernel_data
from .kernels import KernelData, make_params

CLASSIFICATION = ("c_svc", "nu_svc")
REGRESSION = ("epsilon_svr", "nu_svr")
MULTICLASS_SCHEMES = ("ovo", "ovr", "binary_nobias", "llw", "cs")
# schemes with one decision function per class (k coefficient rows, k rho values, arg-max)
PER_CLASS_ROWS = ("ovr", "llw", "cs")

_NJIT = dict(cache=True, nogil=True)
_ROW_BLOCK = 64  # test rows per parallel work item (one kernel-row buffer per block)


@numba.njit(parallel=True, **_NJIT)
def _kernel_sums(T, SV, kp, coef, rho_sub, out):
    """out[r, c] = sum_s coef[c, s] * K(T_r, SV_s) - rho_sub[c] (plain linear combination)."""
    n = out.shape[0]
    m = SV.x_sq.shape[0]
    n_out = coef.shape[0]
    targets = np.arange(m)
    n_blocks = (n + _ROW_BLOCK - 1) // _ROW_BLOCK
    for blk in prange(n_blocks):
        buf = np.empty(m, np.float64)
        lo = blk * _ROW_BLOCK
        hi = min(lo + _ROW_BLOCK, n)
        for r in range(lo, hi):
            kernels.kernel_row_serial(T, r, SV, targets, kp, buf)
            for c in range(n_out):
                s = 0.0
                cc = coef[c]
                for t in range(m):
                    s += cc[t] * buf[t]
                out[r, c] = s - rho_sub[c]


@numba.njit(parallel=True, **_NJIT)
def _ovo_values(T, SV, kp, coef, rho, start, nsv, out):
    """LIBSVM's one-vs-one decision values (svm_predict_values, same summation order)."""
    n = out.shape[0]
    m = SV.x_sq.shape[0]
    k = start.shape[0]
    targets = np.arange(m)
    n_blocks = (n + _ROW_BLOCK - 1) // _ROW_BLOCK
    for blk in prange(n_blocks):
        buf = np.empty(m, np.float64)
        lo = blk * _ROW_BLOCK
        hi = min(lo + _ROW_BLOCK, n)
        for r in range(lo, hi):
            kernels.kernel_row_serial(T, r, SV, targets, kp, buf)
            p = 0
            for i in range(k):
                for j in range(i + 1, k):
                    s = 0.0
                    si = start[i]
                    sj = start[j]
                    ci = nsv[i]
                    cj = nsv[j]
                    coef1 = coef[j - 1]
                    coef2 = coef[i]
                    for t in range(ci):
                        s += coef1[si + t] * buf[si + t]
                    for t in range(cj):
                        s += coef2[sj + t] * buf[sj + t]
                    out[r, p] = s - rho[p]
                    p += 1


@numba.njit(**_NJIT)
def _ovo_vote(dec, k, labels, out):
    """Per row: votes over the pairs; the first class with the most votes wins."""
    vote = np.zeros(k, np.int64)
    for r in range(dec.shape[0]):
        vote[:] = 0
        p = 0
        for i in range(k):
            for j in range(i + 1, k):
                if dec[r, p] > 0:
                    vote[i] += 1
                else:
                    vote[j] += 1
                p += 1
        best = 0
        for i in range(1, k):
            if vote[i] > vote[best]:
                best = i
        out[r] = labels[best]


@dataclass(eq=False)
class SVMModel:
    """A trained SVM, LIBSVM's ``svm_model`` (field names follow the model file keys)."""

    svm_type: str  # 'c_svc' | 'nu_svc' | 'one_class' | 'epsilon_svr' | 'nu_svr'
    kernel_type: int  # 0..4
    degree: int
    gamma: float
    coef0: float
    nr_class: int  # 2 for SVR / one-class
    label: np.ndarray | None  # int64 [nr_class]
    rho: np.ndarray  # float64 [k(k-1)/2] (ovo), [k] (ovr), [1] (SVR / one-class)
    nSV: np.ndarray | None  # int64 [nr_class]
    sv_coef: np.ndarray  # float64 [nr_class-1, total_sv] (ovo), [k, total_sv] (ovr)
    sv_indptr: np.ndarray  # int64 [total_sv+1]
    sv_indices: np.ndarray  # int32, file indices (1-based; precomputed: 0 = serial)
    sv_values: np.ndarray  # float64
    probA: np.ndarray | None = None
    probB: np.ndarray | None = None
    prob_density_marks: np.ndarray | None = None
    # extension (not LIBSVM): 'ovo' (LIBSVM), 'ovr', 'binary_nobias', 'llw', 'cs'
    multiclass: str = "ovo"
    # training-set row of each SV (LIBSVM's sv_indices, 1-based); not written to model files
    sv_indices_train: np.ndarray | None = None
    _sv_data: KernelData | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        self.kernel_type = int(self.kernel_type)
        self.degree = int(self.degree)
        self.gamma = float(self.gamma)
        self.coef0 = float(self.coef0)
        self.nr_class = int(self.nr_class)
        self.rho = np.ascontiguousarray(self.rho, np.float64).reshape(-1)
        if self.label is not None:
            self.label = np.ascontiguousarray(self.label, np.int64).reshape(-1)
        if self.nSV is not None:
            self.nSV = np.ascontiguousarray(self.nSV, np.int64).reshape(-1)
        self.sv_indptr = np.ascontiguousarray(self.sv_indptr, np.int64)
        self.sv_indices = np.ascontiguousarray(self.sv_indices, np.int32)
        self.sv_values = np.ascontiguousarray(self.sv_values, np.float64)
        coef = np.ascontiguousarray(self.sv_coef, np.float64)
        if coef.ndim == 1:
            coef = coef.reshape(1, -1)
        self.sv_coef = coef
        for name in ("probA", "probB", "prob_density_marks"):
            v = getattr(self, name)
            if v is not None:
                setattr(self, name, np.ascontiguousarray(v, np.float64).reshape(-1))

    # -- basic properties ----------------------------------------------------------------------

    @property
    def total_sv(self) -> int:
        return self.sv_indptr.shape[0] - 1

    @property
    def is_classification(self) -> bool:
        return self.svm_type in CLASSIFICATION

    @property
    def is_regression(self) -> bool:
        return self.svm_type in REGRESSION

    @property
    def n_decisions(self) -> int:
        """Number of decision values per test row."""
        if not self.is_classification:
            return 1
        k = self.nr_class
        if self.multiclass in PER_CLASS_ROWS:
            return k
        return k * (k - 1) // 2

    def kernel_params(self):
        return make_params(self.kernel_type, self.degree, self.gamma, self.coef0)

    def sv_data(self) -> KernelData:
        """The SVs as KernelData (dense or sparse as data.kernel_data chooses), cached."""
        if self._sv_data is None:
            self._sv_data = kernel_data(self.sv_indptr, self.sv_indices, self.sv_values,
                                        kernel_type=self.kernel_type)
        return self._sv_data

    def check_probability_model(self) -> bool:
        """LIBSVM's svm_check_probability_model."""
        if self.is_classification:
            return self.probA is not None and self.probB is not None
        if self.svm_type == "one_class":
            return self.prob_density_marks is not None
        return self.probA is not None

    def svr_probability(self) -> float:
        """LIBSVM's svm_get_svr_probability: the Laplace scale sigma (probA[0])."""
        if self.is_regression and self.probA is not None:
            return float(self.probA[0])
        raise ValueError("Model doesn't contain information for SVR probability inference")

    # -- decision function ---------------------------------------------------------------------

    def _class_starts(self):
        nsv = self.nSV
        start = np.zeros(self.nr_class, np.int64)
        if self.nr_class > 1:
            np.cumsum(nsv[:-1], out=start[1:])
        return start

    def decision_values(self, kd: KernelData) -> np.ndarray:
        """float64 [n, n_decisions] (LIBSVM's dec_values; ovo pair order (0,1), (0,2), ...)."""
        n = kernels.n_rows(kd)
        out = np.zeros((n, self.n_decisions), np.float64)
        if n == 0:
            return out
        SV = self.sv_data()
        kd = align(kd, SV, self.kernel_type)  # test rows in the SVs' feature columns
        kp = self.kernel_params()
        if self.is_classification and self.multiclass not in PER_CLASS_ROWS:
            # 'ovo' (LIBSVM) and 'binary_nobias' (a binary ovo machine with rho 0)
            if self.nr_class < 2:
                return out
            _ovo_values(kd, SV, kp, self.sv_coef, self.rho, self._class_starts(), self.nSV, out)
        else:
            _kernel_sums(kd, SV, kp, self.sv_coef, self.rho, out)
        return out

    def predict_from_values(self, dec: np.ndarray) -> np.ndarray:
        """Predictions (float64 [n], as LIBSVM's svm_predict returns doubles) from values."""
        n = dec.shape[0]
        if self.svm_type == "one_class":
            return np.where(dec[:, 0] > 0, 1.0, -1.0)
        if self.is_regression:
            return dec[:, 0].copy()
        labels = self.label.astype(np.float64)
        if self.nr_class == 1:
            return np.full(n, labels[0])
        if self.multiclass in PER_CLASS_ROWS:
            return labels[np.argmax(dec, axis=1)] if n else np.zeros(0)
        out = np.empty(n, np.float64)
        _ovo_vote(dec, self.nr_class, labels, out)
        return out

    def predict(self, kd: KernelData) -> np.ndarray:
        """Predicted labels (classification, one-class) or values (SVR), float64 [n]."""
        return self.predict_from_values(self.decision_values(kd))

    def predict_probability(self, kd: KernelData, dec: np.ndarray | None = None):
        """LIBSVM's svm_predict_probability for every row: (predictions [n], probs [n, m]).

        Classification with probA/probB: pairwise sigmoids clamped to [1e-7, 1-1e-7], combined
        by multiclass_probability; the label is the arg-max probability (first on ties).
        One-class with density marks: probs = (p_normal, 1-p_normal), label from the value.
        Otherwise (SVR, or a model without probability information) as :meth:`predict`, with
        ``probs`` None.
        """
        from . import probability

        if dec is None:
            dec = self.decision_values(kd)
        return probability.predict_probability(self, dec)
