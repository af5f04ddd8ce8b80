"""Training options, each declared once: its flag(s), TrainParams field, parser, default, range
check, usage text and the solvers that take it.

An :class:`Option` is a row; the rows are gathered in ``lasvm_cli.solvers.OPTIONS`` (LIBSVM's
options and the common ones here, each solver family's next to its row of the solver registry,
lasvm_cli/solvers/__init__.py). From the rows come:

* svm-train's option tables (``cli/train.py``: which words take a value, how it is parsed) and
  the lasvm-cli part of its usage text;
* :func:`misplaced`: an option given to a solver that does not take it is an error naming the
  solvers that do (``--label-budget: only with --solver lasvm``), for svm-train and for the
  scikit-learn estimators alike (``params.check_parameter``);
* :func:`range_error`: each option's own range / choices check;
* :func:`solver_kwargs`: the solver's keyword arguments from TrainParams (``kwarg``);
* the TrainParams fields themselves are checked against the rows (tests/test_options.py).

This module imports nothing of the package: svm-train reads it before any solver loads.
"""

import math
import re
from dataclasses import dataclass

# Solver keys, in the order messages list them: the --solver names of the binary solvers
# (lasvm_cli/solvers SOLVERS), then the all-in-one machines' two (--multiclass llw|cs with
# --solver smo: batch S2DO, "s2do" here; with --solver online: "online").
ALL_IN_ONE_KEYS = ("s2do", "online")
SVM_TYPES = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")  # -s 0..4 by name


@dataclass(frozen=True)
class Option:
    """One training option.

    field: the TrainParams field it sets (for ``command`` options: svm-train's Options').
    flags: its command-line words (empty: an API-only field, e.g. set by the estimators).
    parse: str -> value for an option that takes a value; None for a switch, which sets
        ``value``.
    default: the field's default (an option is *given* when its field differs from it, or,
        on svm-train's command line, when its flag is there).
    usage: its entry in svm-train's usage text (``{choices}`` is replaced by ``choices``
        joined with '|'); empty: not listed (LIBSVM's options keep LIBSVM's literal usage).
    choices: the values it accepts (None and the default are always accepted).
    check: value -> error text or None (the range); runs on every training's parameters.
    solvers: the solver keys that take it (None: every solver).
    when: further conditions, ((TrainParams field, accepted values), ...): ``--mg-stop`` only
        with ``--wss hmg``, ``--llw-target`` only with ``--multiclass llw``.
    kwarg: the solver's keyword argument the field is passed as (solver_kwargs), if any.
    convert: applied to the field's value before it is passed as ``kwarg``.
    sklearn: the scikit-learn estimators' parameter for it, where they have one (they keep
        scikit-learn's names: ``tol`` for -e, ``random_state`` for --seed).
    command: an option of svm-train itself (-v, -q, --stream ...), not a training parameter.
    section: the usage text's section it is listed in.
    number: "finite" for a number that must be finite, "not nan" for one that may be
        infinite (no limit) but never NaN: atof and float() read "nan" and "inf", and range
        checks such as ``eps <= 0`` are false for NaN (``-e nan`` would never stop).
    """

    field: str
    flags: tuple = ()
    parse: object = None
    value: object = None
    default: object = None
    usage: str = ""
    choices: tuple = ()
    check: object = None
    solvers: tuple | None = None
    when: tuple = ()
    kwarg: str | None = None
    convert: object = None
    sklearn: str | None = None
    command: bool = False
    section: str = "lasvm-cli"
    what: str = ""  # the choices' name in "unknown WHAT 'x' (choose from ...)" (default: flag)
    number: str = ""

    @property
    def name(self):
        """The option as messages name it: its flags joined with '/' (or its field)."""
        return "/".join(self.flags) if self.flags else self.field

    def usage_text(self):
        return self.usage.replace("{choices}", "|".join(self.choices))

    def takes(self, key):
        return self.solvers is None or key in self.solvers


def solver_key(p):
    """The solver key of TrainParams ``p``: its --solver name, or "s2do" for the all-in-one
    machines' batch solver (--multiclass llw|cs --solver smo)."""
    if p.multiclass in ("llw", "cs") and p.solver == "smo":
        return "s2do"
    return p.solver


def where(option):
    """Where ``option`` applies, as a message says it: '--solver lasvm|lasvm-g (or
    --multiclass llw|cs --solver online) --wss hmg'."""
    text = note = ""
    if option.solvers is not None:
        binary = [s for s in option.solvers if s not in ALL_IN_ONE_KEYS]
        allinone = [s for s in option.solvers if s in ALL_IN_ONE_KEYS]
        multiclass = dict(option.when).get("multiclass")
        scheme = "|".join(multiclass) if multiclass else "llw|cs"
        if "smo" in binary and "s2do" in allinone:
            allinone.remove("s2do")  # --solver smo says both
        elif "smo" in binary:
            note = " (not --multiclass llw|cs)"
        if not allinone:
            pass
        elif allinone == ["s2do"]:
            allinone_text = f"--multiclass {scheme} --solver smo"
        elif allinone == ["online"]:
            allinone_text = f"--multiclass {scheme} --solver online"
        else:
            allinone_text = f"--multiclass {scheme}"
        if binary and allinone:
            text = f"--solver {'|'.join(binary)} (or {allinone_text})"
        elif binary:
            text = f"--solver {'|'.join(binary)}"
        else:
            text = allinone_text
    for field, values in option.when:
        if field == "multiclass" and option.solvers is not None and \
                set(option.solvers) <= set(ALL_IN_ONE_KEYS):
            continue  # said above
        text += f" --{field.replace('_', '-')} {'|'.join(values)}"
    return (text + note).strip()


def is_given(option, p, given=None):
    """Whether ``option`` is given: its flag is in ``given`` (the flags of svm-train's command
    line), or, without ``given``, its field differs from the default (for a switch: holds the
    switch's value, unless that is the default)."""
    if given is not None:
        return any(f in given for f in option.flags)
    v = getattr(p, option.field, option.default)
    if option.parse is None:
        return v == option.value and v != option.default
    return v != option.default


def applies(option, p):
    """Whether TrainParams ``p`` trains with a solver (and settings) that take ``option``."""
    if not option.takes(solver_key(p)):
        return False
    return all(getattr(p, field) in values for field, values in option.when)


def misplaced(options, p, given=None):
    """The error text for the options given to a solver that does not take them, or None:
    '--label-budget: only with --solver lasvm' (options with the same solvers together)."""
    groups = {}
    for o in options:
        if o.command or not o.flags or (o.solvers is None and not o.when):
            continue
        if is_given(o, p, given) and not applies(o, p):
            names = [f for f in o.flags if given is None or f in given]
            if given is None and o.parse is None:
                names = [o.flags[0]]
            groups.setdefault(where(o), []).extend(n for n in names if n not in
                                                   groups.get(where(o), []))
    if not groups:
        return None
    place, names = next(iter(groups.items()))
    return f"{' '.join(names)}: only with {place}"


def choices_error(options, p, fields=None):
    """The first option (of ``fields``, default all) whose value is not one of its choices:
    "unknown selection 'x' (choose from random, gradient, active, autoactive)"."""
    for o in options:
        if o.command or not o.choices or (fields is not None and o.field not in fields):
            continue
        v = getattr(p, o.field, o.default)
        if v is not None and v != o.default and v not in o.choices:
            return f"unknown {o.what or o.flags[0]} '{v}' (choose from {', '.join(o.choices)})"
    return None


def range_error(options, p):
    """The first option whose value is out of its range (its ``check``)."""
    for o in options:
        if o.command or o.check is None:
            continue
        v = getattr(p, o.field, o.default)
        if v is not None:
            err = o.check(v)
            if err:
                return err
    return None


def number_error(options, p):
    """The first option that must be a finite number and is not (LIBSVM's are named as its
    usage names them: "-g gamma must be a finite number, not nan"), then the first that must
    not be NaN."""
    for kind, text in (("finite", "a finite number"), ("not nan", "a number")):
        for o in options:
            v = getattr(p, o.field, None) if o.number == kind else None
            if v is not None and (math.isnan(v) or kind == "finite" and math.isinf(v)):
                name = o.usage.split(" : ")[0] if o.section == "libsvm" else o.flags[0]
                return f"{name} must be {text}, not {v!r}"
    return None


def solver_kwargs(options, p, key):
    """The keyword arguments of solver ``key`` from TrainParams ``p``: every option that
    names ``key`` among its solvers and has a ``kwarg``."""
    out = {}
    for o in options:
        if o.kwarg and o.solvers is not None and key in o.solvers:
            v = getattr(p, o.field)
            out[o.kwarg] = o.convert(v) if o.convert is not None else v
    return out


def below(limit, message):
    """A check: value < limit is ``message``."""
    return lambda v: message if v < limit else None


# C-library number parsing (``atof``/``atoi`` read a numeric prefix and give 0 for garbage,
# so ``-c abc`` ends in LIBSVM's ``ERROR: C <= 0``, as in LIBSVM)
_FLOAT = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)",
                    re.IGNORECASE)
_INT = re.compile(r"\s*[+-]?\d+")


def atof(text):
    m = _FLOAT.match(text)
    return float(m.group(0)) if m else 0.0


def atoi(text):
    m = _INT.match(text)
    return int(m.group(0)) if m else 0


# LIBSVM's options (svm-train.c), its usage text verbatim; -wi's field is a dict of weights
# (cli/train.py reads the class from the word), -v and -q are svm-train's own.
LIBSVM_OPTIONS = (
    Option("svm_type", ("-s",), atoi, default=0, section="libsvm", usage="""\
-s svm_type : set type of SVM (default 0)
	0 -- C-SVC		(multi-class classification)
	1 -- nu-SVC		(multi-class classification)
	2 -- one-class SVM
	3 -- epsilon-SVR	(regression)
	4 -- nu-SVR		(regression)"""),
    Option("kernel_type", ("-t",), atoi, default=2, section="libsvm", usage="""\
-t kernel_type : set type of kernel function (default 2)
	0 -- linear: u'*v
	1 -- polynomial: (gamma*u'*v + coef0)^degree
	2 -- radial basis function: exp(-gamma*|u-v|^2)
	3 -- sigmoid: tanh(gamma*u'*v + coef0)
	4 -- precomputed kernel (kernel values in training_set_file)"""),
    Option("degree", ("-d",), atoi, default=3, sklearn="degree", section="libsvm",
           usage="-d degree : set degree in kernel function (default 3)"),
    Option("gamma", ("-g",), atof, default=0.0, sklearn="gamma", section="libsvm",
           number="finite",
           usage="-g gamma : set gamma in kernel function (default 1/num_features)"),
    Option("coef0", ("-r",), atof, default=0.0, sklearn="coef0", section="libsvm",
           number="finite",
           usage="-r coef0 : set coef0 in kernel function (default 0)"),
    Option("C", ("-c",), atof, default=1.0, sklearn="C", section="libsvm",
           number="finite",
           usage="-c cost : set the parameter C of C-SVC, epsilon-SVR, and nu-SVR (default 1)"),
    Option("nu", ("-n",), atof, default=0.5, sklearn="nu", section="libsvm",
           number="finite",
           usage="-n nu : set the parameter nu of nu-SVC, one-class SVM, and nu-SVR "
                 "(default 0.5)"),
    Option("p", ("-p",), atof, default=0.1, sklearn="epsilon", section="libsvm",
           number="finite",
           usage="-p epsilon : set the epsilon in loss function of epsilon-SVR (default 0.1)"),
    Option("cache_size", ("-m",), atof, default=100.0, sklearn="cache_size", section="libsvm",
           number="finite",
           usage="-m cachesize : set cache memory size in MB (default 100)"),
    Option("eps", ("-e",), atof, default=1e-3, sklearn="tol", section="libsvm",
           number="finite",
           usage="-e epsilon : set tolerance of termination criterion (default 0.001)"),
    Option("shrinking", ("-h",), atoi, default=1, sklearn="shrinking", section="libsvm",
           usage="-h shrinking : whether to use the shrinking heuristics, 0 or 1 (default 1)"),
    Option("probability", ("-b",), atoi, default=0, sklearn="probability", section="libsvm",
           usage="-b probability_estimates : whether to train a SVC or SVR model for "
                 "probability estimates, 0 or 1 (default 0)"),
    Option("weights", ("-wi",), atof, default=None, sklearn="class_weight", section="libsvm",
           usage="-wi weight : set the parameter C of class i to weight*C, for C-SVC "
                 "(default 1)"),
    Option("nr_fold", ("-v",), atoi, default=0, command=True, section="libsvm",
           usage="-v n: n-fold cross validation mode"),
    Option("quiet", ("-q",), None, True, default=False, command=True, section="libsvm",
           usage="-q : quiet mode (no outputs)"),
)
