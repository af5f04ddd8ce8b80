"""Solvers: formulation adapters over the shared cores (LIBSVM's solve_c_svc & co.).

Each adapter builds its problem (linear term, boxes, variables), runs a core (the SMO loop of
lasvm_cli/qp, or the online core of solvers/online_core.py) and returns a
:class:`~lasvm_cli.solvers.result.SolverResult`.

``SOLVERS`` is the training dispatch table: ``--solver`` name -> the module and function that
train one binary machine, ``solve(kd, kp, y, Cp, Cn, params, progress=None, control=None)``.
Adding a solver adds a row here; training's control flow does not change. Modules are imported
on first use, so a run loads (and JIT-loads) only the solver it uses.
"""

import importlib

SOLVERS = {
    "smo": ("csvc", "solve_from_params"),     # batch SMO (MVP / second order / HMG)
    "lasvm": ("lasvm", "solve_from_params"),  # online LASVM (in memory)
    # bias-free online SVMs (Ertekin, Bottou & Giles 2011), one driver for the four
    "lasvm-g": ("lasvm_nc", "solve_from_params"),   # LASVM-G: gap-driven REPROCESS, CLEAN
    "full-svm": ("lasvm_nc", "solve_from_params"),  # FULL SVM: LASVM-G without CLEAN
    "lasvm-nc": ("lasvm_nc", "solve_from_params"),  # LASVM-NC: ramp loss through CCCP
    "lasvm-i": ("lasvm_nc", "solve_from_params"),   # LASVM-I: skips z > 1 and z < s
    # bias-free tracking algorithms (Usunier, Bordes & Bottou 2010) and their batch counterpart
    "track1": ("tracking", "solve_from_params"),        # Algorithm 1
    "track2": ("tracking", "solve_from_params"),        # Algorithm 2 (PROCESS, then K steps)
    "track2-lasvm": ("tracking", "solve_from_params"),  # §5.2: gradients of the SVs only
    "rcd": ("tracking", "solve_from_params"),           # batch random coordinate ascent
}
TRACKING_SOLVERS = ("track1", "track2", "track2-lasvm", "rcd")
ONLINE = ("lasvm", "lasvm-g", "full-svm", "lasvm-nc", "lasvm-i")  # driven by lasvm_cli/online.py
RAMP = ("lasvm-g", "full-svm", "lasvm-nc", "lasvm-i")  # their options: --ramp-s, --clean-*


# The other svm types (-s 1..4): svm_type -> the module and function that train one machine,
# with SOLVERS' signature (y: labels +1/-1 for nu-SVC, targets for SVR, unused for one-class;
# Cp, Cn: the class costs of C-SVC, unused by the nu types). -s 0 goes through SOLVERS.
FORMULATIONS = {
    1: ("nu", "nu_svc_from_params"),       # nu-SVC (Solver_NU)
    2: ("one_class", "from_params"),       # one-class SVM
    3: ("svr", "from_params"),             # epsilon-SVR (2l variables)
    4: ("nu", "nu_svr_from_params"),       # nu-SVR (Solver_NU, 2l variables)
}


def binary_solver(name):
    """The binary training function of solver ``name`` (a key of SOLVERS)."""
    module, function = SOLVERS[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)


def kernel_params_for(params):
    from ..kernels import make_params

    return make_params(params.kernel_type, params.degree, params.gamma, params.coef0)


def solve_pair(kd, y, Cp, Cn, params, progress=None, control=None):
    """One machine of svm type ``params.svm_type``: C-SVC (y = +1/-1, boxes Cp / Cn) with
    ``params.solver``, or the FORMULATIONS adapter of the other types; returns a SolverResult. ``control``: an online driver (lasvm_cli/online.py) for online solvers."""
    if params.svm_type in FORMULATIONS:
        module, function = FORMULATIONS[params.svm_type]
        solve = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    else:
        solve = binary_solver(params.solver)
    return solve(kd, kernel_params_for(params), y, Cp, Cn, params, progress=progress,
                 control=control)
