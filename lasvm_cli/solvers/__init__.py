"""Solvers: formulation adapters over the shared cores (LIBSVM's solve_c_svc & co.).

Each adapter builds its problem (linear term, boxes, variables), runs a core (the SMO loop of
lasvm_cli/qp, or the online core of qp/online_core.py) and returns a
:class:`~lasvm_cli.solvers.result.SolverResult`.

``SOLVERS`` is the one dispatch table: solver key -> :class:`Solver`, the module and function
that train one machine, all with one signature, ``function(machine, params, progress=None)``
(``machine``: a :class:`Machine`), and for the solvers that run in steps the function that
starts their run, ``start(machine, params)``: an object of the run protocol
(solvers/run.py) that the training layer's driver steps (training/run_control.py). The keys: the
``--solver`` names of C-SVC, the svm types -s 1..4 by name, and the all-in-one machines'
batch ("s2do") and online ("online") solvers; :func:`dispatch_key` picks one from svm-train's
parameters. Adding a solver adds a row here and its options (an ``Option`` tuple next to the
row, gathered in ``OPTIONS``; docs/architecture.md, "Options: declared once"); training's
control flow does not change. Modules are imported on first use, so a run loads (and
JIT-loads) only the solver it uses; the option declarations live here rather than in the
solver modules for that reason: svm-train parses its command line (and prints its usage) from
them without importing numpy or numba.
"""

import importlib
import math
import textwrap
from typing import NamedTuple

from ..base.options import ALL_IN_ONE_KEYS, LIBSVM_OPTIONS, SVM_TYPES, Option, atoi, below
from ..base.options import solver_kwargs as _kwargs
from ..qp import BAIL_OUTS, FINISHINGS, REPROCESS_STEPS, SELECTIONS, WSS


class Machine(NamedTuple):
    """The problem of one machine, the solvers' one input: its l training rows ``kd`` and
    kernel ``kp``; ``y``: labels +1/-1 (C-SVC, nu-SVC; boxes [0, Cp] and [0, Cn]), targets
    (SVR), unused (one-class), or class indices 0..n_classes-1 (all-in-one; Cp = Cn = C)."""
    kd: object
    kp: object
    y: object
    Cp: float
    Cn: float
    n_classes: int = 2


class Solver(NamedTuple):
    """A row of the dispatch table: where the solver lives and what it can do."""
    module: str                     # under lasvm_cli.solvers, imported on first use
    function: str = "from_params"   # (machine, params, progress=None) -> SolverResult
    start: str | None = None        # (machine, params) -> a run (solvers/run.py), or None
    kind: str = "c_svc"             # "c_svc" (a --solver), "svm_type" or "all_in_one"
    driven: bool = False            # its run takes the online driver's options (DRIVER_OPTIONS)
    tracking: bool = False          # a tracking algorithm (teachers, gap traces)
    bias_free: bool = False         # no bias: the model's rho is 0
    streams: tuple = ()             # (--multiclass scheme, "module:function" starting the
                                    # --stream run that training/stream.py drives)
    epochs: bool = False            # takes --epochs: passes over the data
    rules: object = None            # TrainParams -> error text or None: its checks that relate
                                    # several options (params.check_parameter runs them last)
    scheme_rules: object = None     # the same for --multiclass and what comes with a scheme,
                                    # run before the option rows' checks (None: a row that
                                    # trains LIBSVM's machines, _pairwise_scheme_rules)
    compile: str = ""               # its group of `lasvm compile --all` (cli/precompile.py);
                                    # "": the default groups compile it
    usage: str = ""                 # its phrase in --solver's usage text (a --solver's row)


ALL_IN_ONE_SCHEMES = ("llw", "cs")  # --multiclass of the all-in-one rows (kind "all_in_one")


def _pairwise_scheme_rules(p):
    """A row that trains binary machines (one-vs-one, one-vs-rest) or LIBSVM's svm types: not
    the all-in-one schemes, nor what only their online solver takes."""
    if p.multiclass in ALL_IN_ONE_SCHEMES:
        if p.svm_type != 0:
            return (f"--multiclass {p.multiclass} is for -s 0 (C-SVC) only; -s {p.svm_type} "
                    f"({SVM_TYPES[p.svm_type]}) trains LIBSVM's models")
        return (f"--multiclass {p.multiclass} trains with --solver smo (batch S2DO) or "
                f"--solver online, not --solver {p.solver}")
    if p.strategy is not None:
        return "--strategy is for --multiclass llw|cs with --solver online"
    if p.epochs == math.inf:
        return "--epochs inf is for --multiclass llw|cs with --solver online"
    return None


def _all_in_one_scheme_rules(p):
    """The all-in-one rows (batch S2DO under --solver smo, the online S2DO solver): only
    --multiclass llw|cs, no probability estimates nor class weights; --strategy and --epochs
    inf for the online solver only."""
    if p.multiclass not in ALL_IN_ONE_SCHEMES:  # --solver online elsewhere
        return ("--solver online trains --multiclass llw|cs; binary and one-vs-one/one-vs-rest "
                "machines train online with --solver lasvm")
    if p.probability:
        return (f"probability estimates (-b 1) are not available for --multiclass "
                f"{p.multiclass}; they are supported with --multiclass ovo")
    if p.weights:
        return f"class weights (-wi) are not supported by --multiclass {p.multiclass}"
    if p.strategy is not None and p.strategy not in STRATEGIES:
        return f"unknown strategy '{p.strategy}' (choose from {', '.join(STRATEGIES)})"
    if p.strategy is not None and p.solver != "online":
        return "--strategy is for --solver online"
    if p.epochs == math.inf and p.solver != "online":
        return "--epochs inf is for --solver online"
    return None


def scheme_rules(p):
    """The error text of the dispatch row's scheme rules for TrainParams ``p``, or None."""
    row = SOLVERS.get(dispatch_key(p))
    if row is None:
        return None
    return (row.scheme_rules or _pairwise_scheme_rules)(p)


def _lasvm_i_rules(p):
    if p.ramp_s is not None and p.ramp_s > 0:
        return ("--ramp-s > 0 with --solver lasvm-i would skip every example (z = 0 < s while "
                "the machine is empty); use s <= 0")
    return None


def _tracking_rules(p):
    """The tracking solvers' options that relate to each other (the option rows check each
    one's range, and that no other solver is given them)."""
    _, err = tracking_K(p)
    if err:
        return err
    if p.teacher == "order-file" and not p.order_file:
        return "--teacher order-file needs --order FILE"
    if p.order_file and p.teacher != "order-file":
        return "--order FILE needs --teacher order-file"
    if p.probability:
        return f"--solver {p.solver}: no probability estimates (-b 1)"
    return None


_LASVM_G = Solver("lasvm_nc", start="start", driven=True, bias_free=True,  # one module for
                  streams=(("ovo", "lasvm_g_stream:start_stream_g"),),     # the four
                  epochs=True, compile="lasvm", usage="""\
the bias-free online SVMs of Ertekin, Bottou & Giles (LASVM-G, FULL SVM, LASVM-NC with the
ramp loss, LASVM-I)""")
_TRACKING = Solver("tracking", start="start", tracking=True, bias_free=True,  # and for these
                   rules=_tracking_rules, compile="tracking", usage="""\
the bias-free tracking algorithms 1 and 2, 2 with LASVM's gradients of the SVs only, and batch
random coordinate ascent (Usunier, Bordes & Bottou 2010)""")
_TYPE = Solver("", kind="svm_type", compile="types")
SOLVERS = {
    "smo": Solver("csvc", usage="batch SMO (default)"),  # batch SMO (MVP / second order / HMG)
    "lasvm": Solver("lasvm", start="start", driven=True,  # online LASVM (in memory)
                    streams=(("ovo", "lasvm_stream:start_stream"),
                             ("ovr", "lasvm_ovr_stream:start_stream_ovr")),
                    epochs=True, compile="lasvm", usage="online LASVM"),
    # bias-free online SVMs (Ertekin, Bottou & Giles 2011)
    "lasvm-g": _LASVM_G,    # LASVM-G: gap-driven REPROCESS, CLEAN
    "full-svm": _LASVM_G,   # FULL SVM: LASVM-G without CLEAN
    "lasvm-nc": _LASVM_G,   # LASVM-NC: ramp loss through CCCP
    "lasvm-i": _LASVM_G._replace(rules=_lasvm_i_rules),  # LASVM-I: skips z > 1 and z < s
    # bias-free tracking algorithms (Usunier, Bordes & Bottou 2010) and their batch counterpart
    "track1": _TRACKING,        # Algorithm 1
    "track2": _TRACKING,        # Algorithm 2 (PROCESS, then K steps)
    "track2-lasvm": _TRACKING,  # §5.2: gradients of the SVs only
    "rcd": _TRACKING,           # batch random coordinate ascent
    # the other svm types (-s 1..4), by the model file's names
    "nu_svc": _TYPE._replace(module="nu", function="nu_svc_from_params"),  # Solver_NU
    "one_class": _TYPE._replace(module="one_class"),
    "epsilon_svr": _TYPE._replace(module="svr"),                           # 2l variables
    "nu_svr": _TYPE._replace(module="nu", function="nu_svr_from_params"),  # Solver_NU, 2l
    # the all-in-one machines (--multiclass llw|cs): batch S2DO and the online S2DO solver
    "s2do": Solver("s2do_batch", kind="all_in_one", bias_free=True,
                   scheme_rules=_all_in_one_scheme_rules, compile="all-in-one"),
    "online": Solver("s2do_online", start="start", kind="all_in_one", driven=True,
                     bias_free=True, scheme_rules=_all_in_one_scheme_rules,
                     streams=(("llw", "s2do_stream:start_stream_allinone"),
                                              ("cs", "s2do_stream:start_stream_allinone")),
                     epochs=True, compile="all-in-one", usage="the online S2DO solver"),
}
# what the rows say, gathered (the option rows below and the checks name solvers by these)
C_SVC_SOLVERS = tuple(k for k, v in SOLVERS.items() if v.kind == "c_svc")  # --solver names
TRACKING_SOLVERS = tuple(k for k, v in SOLVERS.items() if v.tracking)
ONLINE_DRIVEN = tuple(k for k, v in SOLVERS.items() if v.driven)
ONLINE = tuple(k for k in ONLINE_DRIVEN if SOLVERS[k].kind == "c_svc")  # binary online --solver
RAMP = tuple(k for k in ONLINE if SOLVERS[k].bias_free)  # their options: --ramp-s, --clean-*
EPOCHS = tuple(k for k, v in SOLVERS.items() if v.epochs)  # --epochs
RAMP_STARTS = ("convex", "printed")  # --ramp-start (qp/lasvm_g_core.START_CODES)
SOLVER_NAMES = C_SVC_SOLVERS + ("online",)  # --solver's choices ("online": --multiclass llw|cs)


def solver_usage():
    """--solver's usage text: the rows' phrases, in their order, each once."""
    phrases = []
    for key in SOLVER_NAMES:
        row = SOLVERS[key]
        phrase = " ".join(row.usage.split())
        if row.kind == "all_in_one":
            phrase = f"or (--multiclass llw|cs) {phrase}"
        if phrase not in phrases:
            phrases.append(phrase)
    text = ", ".join(phrases) + "; bias-free models have rho 0"
    return "--solver {choices} :\n" + "\n".join(
        textwrap.wrap(text, 88, initial_indent="\t", subsequent_indent="\t"))


def command_words(key):
    """svm-train's words that train with row ``key``: one tuple for each multi-class scheme
    it trains (the all-in-one machines: llw and cs)."""
    row = SOLVERS[key]
    if row.kind == "svm_type":
        return [("-s", str(SVM_TYPES.index(key)))]
    solver = ("--solver", key) if key in SOLVER_NAMES and key != "smo" else ()
    if row.kind == "all_in_one":
        return [("--multiclass", scheme, *solver) for scheme in ALL_IN_ONE_SCHEMES]
    return [solver]


def stream_trainer(params):
    """The function that starts the --stream run of svm-train's ``params`` (solvers'
    "module:function" of the row's ``streams`` for the --multiclass scheme), or None when the
    row has none."""
    key = params.solver  # -s 1..4 aside: the svm type's check names the solver
    if params.multiclass in ALL_IN_ONE_SCHEMES and key == "smo":
        key = "s2do"
    target = dict(SOLVERS[key].streams).get(params.multiclass) if key in SOLVERS else None
    if target is None:
        return None
    module, function = target.split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)


def streamed():
    """What --stream trains, from the rows' ``streams``, for messages."""
    by_scheme = {}
    for key, row in SOLVERS.items():
        for scheme, _ in row.streams:
            by_scheme.setdefault(scheme, []).append(key)
    two = f"--solver {'|'.join(by_scheme.pop('ovo', ()))} (two classes)"
    groups = {}
    for scheme, keys in by_scheme.items():
        groups.setdefault(tuple(keys), []).append(scheme)
    more = " or ".join(f"--multiclass {'|'.join(schemes)} --solver {'|'.join(keys)}"
                       for keys, schemes in groups.items())
    return f"{two}, {more} (any number of classes)"


def dispatch_key(params):
    """The SOLVERS key of svm-train's parameters: the svm type's name for -s 1..4, "s2do" or
    "online" for --multiclass llw|cs, else the --solver name."""
    if params.svm_type:
        return SVM_TYPES[params.svm_type]
    if params.multiclass in ALL_IN_ONE_SCHEMES:
        return "s2do" if params.solver == "smo" else params.solver
    return params.solver


def _function(key, name):
    entry = SOLVERS[key]
    return getattr(importlib.import_module(f"{__name__}.{entry.module}"), getattr(entry, name))


def kernel_params_for(params):
    from ..numerics.kernels import make_params

    return make_params(params.kernel_type, params.degree, params.gamma, params.coef0)


def machine_of(kd, y, Cp, Cn, params, n_classes=2):
    """The :class:`Machine` of rows ``kd`` with svm-train's kernel parameters."""
    return Machine(kd, kernel_params_for(params), y, Cp, Cn, n_classes)


def solve(machine, params, progress=None):
    """Train ``machine`` with the solver of ``params`` (:func:`dispatch_key`) to its end;
    returns its SolverResult."""
    return _function(dispatch_key(params), "function")(machine, params, progress)


def start(machine, params, **overrides):
    """The run of the solver of ``params`` on ``machine`` (solvers/run.py), not yet begun;
    ``overrides``: the solver's own run arguments (the tracking teacher's order)."""
    return _function(dispatch_key(params), "start")(machine, params, **overrides)


# ---------------------------------------------------------------------------------------------
# Options (lasvm_cli/base/options.py's Option rows): every training option is declared once, here
# or in options.py (LIBSVM's), with the solvers that take it; svm-train's tables, usage text,
# checks and the solvers' keyword arguments come from these rows.


def _epochs(text):
    return math.inf if text.lower() in ("inf", "infinity") else int(text)


def _ramp_s(v):
    return None if v < 1 else "--ramp-s must be below 1 (the ramp R_s is flat from s to 1)"


# options of every solver (beyond LIBSVM's)
COMMON_OPTIONS = (
    Option("solver", ("--solver",), str, default="smo", sklearn="solver",
           choices=SOLVER_NAMES, what="solver", usage=solver_usage()),
    Option("x_storage", ("--x-storage",), str, default="auto",
           choices=("auto", "float32", "float64"), what="--x-storage", usage="""\
--x-storage {choices} : training rows in memory (default auto: float32 for dense
	data over 32 MiB, where kernel rows are bound by memory; float64: LIBSVM's arithmetic)"""),
    Option("multiclass", ("--multiclass",), str, default="ovo", sklearn="multiclass",
           choices=("ovo", "ovr", "llw", "cs"), what="multi-class scheme", usage="""\
--multiclass {choices} : one-vs-one (default, LIBSVM model), one-vs-rest, or the
	all-in-one machines without bias of Lee-Lin-Wahba and Crammer-Singer (extensions;
	llw and cs train with --solver smo: batch S2DO, or --solver online)"""),
    Option("seed", ("--seed",), int, default=1, sklearn="random_state", usage="""\
--seed n : seed of the rand() stream for -v and -b folds and LASVM (default 1, as LIBSVM)"""),
    # set by the scikit-learn estimators (nu-SVC, nu-SVR, one-class: scikit-learn's start)
    Option("nu_start", (), default="libsvm", choices=("libsvm", "sklearn")),
    # set by svm-train: LASVM snapshots are named model_file.<value>
    Option("model_file", (), default=None),
)

# batch SMO (solvers/csvc.py; -s 1..4: nu.py, one_class.py, svr.py)
SMO_OPTIONS = (
    Option("wss", ("--wss",), str, default="so", choices=WSS,
           what="working set selection", solvers=("smo",), kwarg="wss", sklearn="wss",
           usage="--wss {choices} : SMO working set selection (default so, as LIBSVM)"),
    Option("final_kkt_check", ("--final-kkt-check",), None, True, default=True,
           solvers=("smo",), when=(("wss", ("hmg",)),), kwarg="final_kkt_check",
           sklearn="final_kkt_check", usage="""\
--final-kkt-check : HMG (the default): after the paper's MG stopping rule, go on until the
	KKT violation < -e, as the other selections stop"""),
    Option("final_kkt_check", ("--mg-stop",), None, False, default=True, solvers=("smo",),
           when=(("wss", ("hmg",)),), usage="""\
--mg-stop : HMG: stop on the paper's MG rule alone (|mu*| < -e), which can end far from -e"""),
    Option("max_iter", ("--max-iter",), int, default=None, solvers=("smo", "s2do"),
           check=below(1, "max_iter < 1"), kwarg="max_iter", sklearn="max_iter", usage="""\
--max-iter n : iteration cap (default max(10000000, 100*l), as LIBSVM)"""),
)

# online LASVM (solvers/lasvm.py); --epochs for every row with epochs=True
LASVM_OPTIONS = (
    Option("epochs", ("--epochs",), _epochs, default=1, solvers=EPOCHS,
           check=below(1, "epochs < 1"), kwarg="epochs", sklearn="epochs", usage="""\
--epochs n : LASVM (lasvm-g & co., --solver online) passes over the data (default 1);
	--solver online also takes inf: until the KKT violation is below -e"""),
    Option("finish", ("--no-finish",), None, False, default=True, solvers=("lasvm",),
           kwarg="finish", sklearn="finish",
           usage="--no-finish : LASVM: skip the finishing step"),
    Option("finishing", ("--finishing",), str, default="smo", choices=FINISHINGS,
           what="--finishing", solvers=("lasvm",), kwarg="finishing", usage="""\
--finishing {choices} : LASVM's finishing step: SMO over the expansion with second
	order selection and shrinking (default), REPROCESS until delta <= -e (the paper's
	step 3), or the same with the paper's shrinking (LaSVM 1.1's)"""),
    Option("bail_out", ("--bail-out",), str, default="lasvm11", choices=BAIL_OUTS,
           what="--bail-out", solvers=("lasvm",), kwarg="bail_out", usage="""\
--bail-out {choices} : LASVM: a REPROCESS that finds no violating pair still evicts
	and recomputes delta (default, as LaSVM 1.1), or does nothing (as printed)"""),
    Option("selection", ("--selection",), str, default="random",
           choices=SELECTIONS, what="selection",
           solvers=("lasvm",), kwarg="selection", sklearn="selection", usage="""\
--selection {choices} : LASVM example selection (default random)"""),
    Option("candidates", ("--candidates",), int, default=50, solvers=("lasvm",),
           check=below(1, "candidates < 1"), kwarg="candidates", sklearn="candidates",
           usage="--candidates n : LASVM candidates per selection (default 50)"),
    Option("delta_max", ("--delta-max",), float, default=None, solvers=("lasvm",),
           kwarg="delta_max", number="finite", sklearn="delta_max",
           usage="--delta-max x : LASVM: REPROCESS until delta < x after each PROCESS"),
    Option("label_budget", ("--label-budget",), int, default=None, solvers=("lasvm",),
           check=below(2, "label budget < 2"), kwarg="label_budget",
           usage="--label-budget n : LASVM active learning: query at most n labels"),
)

# LASVM-G, FULL SVM, LASVM-NC, LASVM-I (solvers/lasvm_nc.py; None: its DEFAULTS)
LASVM_G_OPTIONS = (
    Option("ramp_s", ("--ramp-s",), float, default=None, solvers=RAMP, check=_ramp_s,
           kwarg="ramp_s", number="finite", usage="""\
--ramp-s s : lasvm-nc / lasvm-i: the ramp point s (default -1; lasvm-i: s <= 0; for all
	four, the left region of --counters)"""),
    Option("sv_threshold", ("--sv-threshold",), int, default=None, solvers=RAMP,
           check=below(0, "--sv-threshold < 0"), kwarg="sv_threshold",
           usage="""\
--sv-threshold n : lasvm-nc, lasvm-i: the convex stage lasts until more than n SVs of each
	class (default 10; --ramp-start printed: lasvm-nc flags outliers once #SV > n)"""),
    Option("ramp_start", ("--ramp-start",), str, default=None, choices=RAMP_STARTS,
           what="--ramp-start", solvers=("lasvm-nc", "lasvm-i"), kwarg="ramp_start",
           usage="""\
--ramp-start {choices} : lasvm-nc, lasvm-i: convex (default): LASVM-G iterations until
	more than --sv-threshold SVs of each class, then the ramp; printed: the paper's
	pseudo-code (lasvm-nc: the ramp once #SV > --sv-threshold; lasvm-i: from the first
	example), which can end with a one-class machine on skewed data at small gamma"""),
    Option("clean_every", ("--clean-every",), int, default=None, solvers=RAMP,
           check=below(1, "--clean-every < 1"), kwarg="clean_every",
           usage="--clean-every n : lasvm-g, -nc, -i: PROCESS calls between CLEANs "
                 "(default 50)"),
    Option("clean_keep", ("--clean-keep",), int, default=None, solvers=RAMP,
           check=below(0, "--clean-keep < 0"), kwarg="clean_keep",
           usage="--clean-keep m : lasvm-g, -nc, -i: non-SVs kept by CLEAN (default 100)"),
    Option("finish_tau", ("--finish-tau",), None, True, default=False, solvers=RAMP,
           kwarg="finish", usage="""\
--finish-tau : lasvm-g & co.: REPROCESS until the KKT violation < -e after every epoch
	(the paper has no finishing step)"""),
    Option("reprocess", ("--reprocess",), str, default=None, choices=REPROCESS_STEPS,
           what="--reprocess", solvers=RAMP, kwarg="reprocess",
           convert=lambda v: v or "one", usage="""\
--reprocess {choices} : lasvm-g & co.: REPROCESS moves one variable (default, the paper's)
	or a pair: the maximal violator and the largest violator moving the other way, by an
	exact two-variable step"""),
)

# the all-in-one machines (--multiclass llw|cs): batch S2DO (solvers/s2do_batch.py, key "s2do")
# and the online S2DO solver (solvers/s2do_online.py, --solver online)
ALL_IN_ONE_OPTIONS = (
    Option("strategy", ("--strategy",), str, default=None,
           choices=("s2do-all", "random-pattern-s2do-all", "random-pattern-s2do-pattern"),
           what="strategy", solvers=("online",), usage="""\
--strategy {choices} : --solver online
	working sets (default s2do-all for llw, random-pattern-s2do-all for cs)"""),
    Option("schedule", ("--step-schedule",), str, default="blocks",
           choices=("blocks", "steps", "seconds", "fixed"), what="schedule",
           solvers=("online",), kwarg="schedule", usage="""\
--step-schedule {choices} : --solver online: Algorithm 7's choice of
	the next step type, by its dual gain per duration updated after each block of steps, by
	work units (default, repeatable with --seed), or after each step (steps: by work units;
	seconds: by wall-clock time, as the thesis prints it); fixed: no draws, each example's
	TWO_NEWS followed by one block of each old step type"""),
    Option("cs_second", ("--cs-second",), str, default="gain", choices=("gain", "gradient"),
           what="--cs-second", solvers=("online",), when=(("multiclass", ("cs",)),),
           kwarg="cs_second", usage="""\
--cs-second {choices} : --multiclass cs --solver online: the second variable of a pair
	in one pattern by the gain (default) or by argmax (g_p - g_c) (the thesis's Algorithms 8, 9)"""),
    Option("llw_target", ("--llw-target",), float, default=1.0, solvers=ALL_IN_ONE_KEYS,
           when=(("multiclass", ("llw",)),), kwarg="target",
           check=lambda v: None if math.isfinite(v) and v > 0 else
           "--llw-target must be a positive number", usage="""\
--llw-target x : --multiclass llw target margin (default 1; the thesis's dual prints 1/(k-1))"""),
)
STRATEGIES = next(o.choices for o in ALL_IN_ONE_OPTIONS if o.field == "strategy")

# the online driver's options (training/run_control.py: long runs of the rows that are driven,
# the tracking solvers' included: training/tracking_control.py)
TRACED = ONLINE_DRIVEN + TRACKING_SOLVERS
DRIVER_OPTIONS = (
    Option("save_state", ("--save-state",), str, default=None, solvers=TRACED, usage="""\
--save-state file : LASVM: save the run's state to file (atomically, every --save-every
	seconds, at a stop and at the end)"""),
    Option("resume", ("--resume",), str, default=None, solvers=TRACED, usage="""\
--resume file : LASVM: continue the run saved in file (same data and parameters)"""),
    Option("save_every", ("--save-every",), float, default=60.0, solvers=TRACED,
           number="not nan",
           usage="--save-every s : seconds between state saves (default 60)"),
    Option("stop_iterations", ("--stop-iterations",), int, default=None,
           solvers=TRACED, usage="""\
--stop-iterations n : LASVM: end the online phase after n iterations (PROCESS calls)"""),
    Option("stop_sv", ("--stop-sv",), int, default=None, solvers=TRACED, usage="""\
--stop-sv n : LASVM: end the online phase when the expansion holds n vectors"""),
    Option("stop_seconds", ("--stop-seconds",), float, default=None, solvers=TRACED,
           number="not nan",
           usage="--stop-seconds s : LASVM: end the online phase after s seconds of training"),
    Option("snapshots", ("--snapshots",), str, default=None, solvers=TRACED, usage="""\
--snapshots v1,v2,... : LASVM: write model_file.v1, ... at these points (LaSVM's -l); the
	online phase stops at the last one"""),
    Option("snapshot_by", ("--snapshot-by",), str, default="iterations",
           choices=("iterations", "sv", "seconds"), solvers=TRACED, usage="""\
--snapshot-by {choices} : what --snapshots counts (default iterations, LaSVM's -T)"""),
    Option("trace", ("--trace",), str, default=None, solvers=TRACED, usage="""\
--trace file : LASVM: learning curve (CSV: iterations, seconds, kernel evaluations, SVs,
	delta, dual objective, test error)"""),
    Option("trace_every", ("--trace-every",), int, default=1000, solvers=TRACED,
           usage="--trace-every n : iterations between trace rows (default 1000)"),
    Option("test_file", ("--test",), str, default=None, solvers=TRACED, usage="""\
--test file : test set for the trace's test error
	these LASVM options also apply to --multiclass llw|cs --solver online (iterations:
	examples processed; sv: support patterns) and to the tracking solvers (iterations:
	examples seen, rcd: coordinate steps)"""),
)

# the tracking solvers (solvers/tracking.py: run_options; lasvm_cli/training/tracking_control.py)
TRACKING_OPTIONS = (
    Option("K", ("-K",), atoi, default=None, solvers=TRACKING_SOLVERS, section="tracking",
           usage="-K n : coordinate steps per example (default 10)"),
    Option("track_eps", ("--eps",), float, default=None, solvers=TRACKING_SOLVERS,
           section="tracking",
           usage="--eps x : K = ceil(8C/x^2), for 0 < x <= 4C (instead of -K)"),
    Option("average", ("--no-average",), None, False, default=None, solvers=TRACKING_SOLVERS,
           section="tracking", usage="""\
--no-average : output the last iterate instead of the average of the last K (track*)"""),
    Option("average", ("--average",), None, True, default=None, solvers=TRACKING_SOLVERS,
           section="tracking",
           usage="--average : rcd: output the mean of all its iterates (default: the last)"),
    Option("max_examples", ("--max-examples",), int, default=None, solvers=TRACKING_SOLVERS,
           check=below(1, "--max-examples < 1"), section="tracking",
           usage="--max-examples n : stop after n examples"),
    Option("batch_iters", ("--batch-iters",), int, default=None, solvers=TRACKING_SOLVERS,
           check=below(1, "--batch-iters < 1"), section="tracking",
           usage="--batch-iters n : rcd: number of steps (default K x number of examples)"),
    Option("teacher", ("--teacher",), str, default="shuffle",
           choices=("sequential", "shuffle", "active", "order-file", "adversarial"),
           what="teacher", solvers=TRACKING_SOLVERS, section="tracking", usage="""\
--teacher {choices} : example order (default shuffle)"""),
    Option("pool", ("--pool",), int, default=50, solvers=TRACKING_SOLVERS,
           check=below(1, "--pool < 1"), section="tracking", usage="""\
--pool n : active / adversarial teachers: candidates per example (default 50)"""),
    Option("order_file", ("--order",), str, default=None, solvers=TRACKING_SOLVERS,
           section="tracking", usage="""\
--order file : order-file teacher: 1-based training rows, in the order to learn them"""),
    Option("runs", ("--runs",), int, default=1, solvers=TRACKING_SOLVERS,
           check=below(1, "--runs < 1"), section="tracking", usage="""\
--runs n : repeat with seeds --seed .. --seed+n-1; --trace rows are the mean of the runs"""),
)

DEFAULT_K = 10  # tracking solvers: steps per example without -K / --eps


def tracking_K(p):
    """(K, error text or None): -K, or K = ceil(8 C / eps^2) from --eps (Usunier et al. 2010,
    Corollary 4: 0 < eps <= 4C), or DEFAULT_K."""
    if p.K is not None and p.track_eps is not None:
        return None, "-K and --eps exclude each other"
    if p.track_eps is not None:
        eps = p.track_eps
        if not eps > 0 or eps > 4 * p.C:
            return None, f"--eps must satisfy 0 < eps <= 4C (eps = {eps:g}, C = {p.C:g})"
        return math.ceil(8 * p.C / eps ** 2), None
    if p.K is None:
        return DEFAULT_K, None
    if p.K < 1:
        return None, "K < 1"
    return int(p.K), None


# every training option, in the usage text's order within each section
OPTIONS = (LIBSVM_OPTIONS + COMMON_OPTIONS + SMO_OPTIONS + LASVM_OPTIONS + LASVM_G_OPTIONS
           + ALL_IN_ONE_OPTIONS + DRIVER_OPTIONS + TRACKING_OPTIONS)


def solver_kwargs(params, key):
    """Solver ``key``'s keyword arguments from ``params``: its declared options' ``kwarg``s
    (the LIBSVM options every solver reads, -e, -m, -h, --seed, are passed by the caller)."""
    return _kwargs(OPTIONS, params, key)
