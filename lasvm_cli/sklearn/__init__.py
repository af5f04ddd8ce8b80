"""scikit-learn estimators over lasvm-cli's solvers (optional: ``pip install 'lasvm-cli[sklearn]'``).

* :class:`SVC` (batch SMO or LASVM, LIBSVM's C-SVC), and, as thin subclasses that set LIBSVM's
  svm_type, :class:`NuSVC`, :class:`SVR`, :class:`NuSVR`, :class:`OneClassSVM` (they train once
  ``svm-train -s 1..4`` is supported by the library);
* :class:`OnlineSVC`: LASVM with ``partial_fit`` (PROCESS/REPROCESS on each new batch, then the
  finishing step), which no scikit-learn SVM offers.

Parameters are named as scikit-learn's; inputs are numpy arrays or scipy.sparse matrices (CSR
stays CSR). ``save_model(path)`` writes a LIBSVM model file, ``load_model(path)`` reads one
into the estimator. The core package never imports this one.
"""

try:
    import sklearn  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised without scikit-learn only
    raise ImportError(
        "lasvm_cli.sklearn needs scikit-learn, an optional dependency: "
        "pip install 'lasvm-cli[sklearn]'") from e

from .online_svc import OnlineSVC
from .svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "OnlineSVC"]
