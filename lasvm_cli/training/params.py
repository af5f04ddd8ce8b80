"""Training parameters and their check, after LIBSVM's ``svm_parameter`` and ``svm_check_parameter``.

``check_parameter`` returns LIBSVM's error text (``"C <= 0"`` ...) or None; only the CLI prints
``ERROR: ...`` and exits, as in LIBSVM. Every field is declared once as an option (its flag,
default, range, choices and the solvers that take it: lasvm_cli/base/options.py, and the rows of
lasvm_cli/solvers OPTIONS); the checks of an option's range, choices and solvers come from
those rows, and a solver's checks that relate several options (its multi-class schemes, its
own options together) from its SOLVERS row (``scheme_rules``, ``rules``); LIBSVM's are written
out here.
"""

import math
from dataclasses import field, make_dataclass

from ..base.options import SVM_TYPES, choices_error, misplaced, number_error, range_error
from ..solvers import OPTIONS, SOLVERS, dispatch_key, scheme_rules


def _choices(name):
    return next(o.choices for o in OPTIONS if o.field == name and o.choices)


SUPPORTED_SVM_TYPES = (0, 1, 2, 3, 4)
CLASSIFICATION_TYPES = (0, 1)  # c_svc, nu_svc: class labels, one-vs-one machines
NU_TYPES = (1, 4)  # Solver_NU (second-order selection only)
# the declared choices (lasvm_cli/solvers OPTIONS), by the names the package uses
SOLVER_NAMES = _choices("solver")  # --solver: C-SVC's solvers and the all-in-one "online"
X_STORAGES = _choices("x_storage")  # --x-storage (data.py: training rows)
MULTICLASS = _choices("multiclass")
TEACHERS = _choices("teacher")  # tracking solvers


def _declared_fields():
    """(name, type, dataclasses.field) of each declared training option's field, in
    declaration order (two switches of one field, --final-kkt-check and --mg-stop, give one)."""
    from ..base.options import atof, atoi

    types = {int: int, atoi: int, float: float, atof: float, str: str, None: bool}
    out, seen = [], set()
    for o in OPTIONS:
        if o.command or o.field in seen:
            continue
        seen.add(o.field)
        kind = types.get(o.parse, object)
        if o.field == "weights":  # label -> weight, in command-line order (-wi)
            out.append((o.field, dict, field(default_factory=dict)))
        else:
            out.append((o.field, kind | None if o.default is None else kind,
                        field(default=o.default)))
    return out


# The training parameters: one field for each declared option (lasvm_cli/base/options.py
# LIBSVM_OPTIONS, lasvm_cli/solvers OPTIONS: flag, default, usage text, the solvers that take
# it), with its declared default; LIBSVM's svm_parameter first. A new option is a new row
# there, and so a new field here.
TrainParams = make_dataclass("TrainParams", _declared_fields())
TrainParams.__module__ = __name__  # pickled by name (Dask tasks, the warm server)
TrainParams.__doc__ = ("svm-train's parameters: LIBSVM's svm_parameter and lasvm-cli's options, "
                       "one field for each declared option (lasvm_cli/solvers OPTIONS).")


def nu_infeasible(nu, class_counts):
    """LIBSVM's nu-SVC feasibility on every pair of classes (nu l / 2 of each class's alphas,
    each at most 1): its message, or None."""
    counts = list(class_counts)
    for i, n1 in enumerate(counts):
        for n2 in counts[i + 1:]:
            if nu * (n1 + n2) / 2 > min(n1, n2):
                return "specified nu is infeasible"
    return None


def check_parameter(p: TrainParams, class_counts=None, given=None):
    """LIBSVM's svm_check_parameter messages, in its order; None when the parameters are fine.
    ``class_counts``: the number of rows of each class, for nu-SVC's feasibility check
    (``specified nu is infeasible``). ``given``: the option words of svm-train's command line
    (an option given with its default value is still given to its solver); without it, an
    option is given when its field differs from the default."""
    if p.svm_type not in range(5):
        return "unknown svm type"
    if p.kernel_type not in range(5):
        return "unknown kernel type"
    bad = _not_finite(p)
    if bad:
        return bad
    if p.kernel_type in (1, 2, 3) and p.gamma < 0:
        return "gamma < 0"
    if p.kernel_type == 1 and p.degree < 0:
        return "degree of polynomial kernel < 0"
    if p.cache_size <= 0:
        return "cache_size <= 0"
    if p.eps <= 0:
        return "eps <= 0"
    if p.svm_type in (0, 3, 4) and p.C <= 0:
        return "C <= 0"
    if p.svm_type in (1, 2, 4) and (p.nu <= 0 or p.nu > 1):
        return "nu <= 0 or nu > 1"
    if p.svm_type == 3 and p.p < 0:
        return "p < 0"
    if p.shrinking not in (0, 1):
        return "shrinking != 0 and shrinking != 1"
    if p.probability not in (0, 1):
        return "probability != 0 and probability != 1"
    if p.svm_type == 1 and class_counts is not None and nu_infeasible(p.nu, class_counts):
        return nu_infeasible(p.nu, class_counts)
    err = choices_error(OPTIONS, p, ("solver", "x_storage", "wss", "selection", "multiclass"))
    if err:
        return err
    if p.svm_type != 0 and p.solver != "smo":
        return (f"--solver {p.solver} trains -s 0 (C-SVC) only; -s {p.svm_type} "
                f"({SVM_TYPES[p.svm_type]}) is supported with --solver smo")
    # the dispatch row's rules of the multi-class scheme (--multiclass llw|cs: the all-in-one
    # rows, and the options only they take)
    err = scheme_rules(p)
    if err:
        return err
    if p.svm_type != 0 and p.multiclass != "ovo":
        return (f"--multiclass {p.multiclass} is for -s 0 (C-SVC) only; -s {p.svm_type} "
                f"({SVM_TYPES[p.svm_type]}) trains LIBSVM's models")
    if p.svm_type in NU_TYPES and p.wss != "so":
        return (f"--wss {p.wss} does not apply to -s {p.svm_type} ({SVM_TYPES[p.svm_type]}): "
                "LIBSVM's Solver_NU selects with its second-order rule (--wss so)")
    # the declared options: each given only to a solver that takes it, within its range
    err = misplaced(OPTIONS, p, given) or choices_error(OPTIONS, p) or range_error(OPTIONS, p)
    if err:
        return err
    # the solver's own rules that relate several options (its row's ``rules``)
    row = SOLVERS.get(dispatch_key(p))
    return row.rules(p) if row is not None and row.rules is not None else None


def _not_finite(p):
    """The rows' ``number`` checks (LIBSVM's atof reads "nan" and "inf", and its checks,
    ``gamma < 0``, ``eps <= 0`` ..., are false for NaN), then -wi's weights."""
    err = number_error(OPTIONS, p)
    if err:
        return err
    for label, w in p.weights.items():
        if not math.isfinite(w):
            return f"-w{label} weight must be a finite number, not {w!r}"
    return None
