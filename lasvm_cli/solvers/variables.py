"""The variable layer between solvers and the example-keyed kernel-row cache.

A solver's dual variables need not be its examples: epsilon-SVR has two per example (alpha and
alpha*), an all-in-one multi-class machine one per (example, class). A :class:`Variables`
says, for each variable, its example, its sign (the ``y`` of LIBSVM's Q_st = y_s y_t K_st) and
its class. The cache is built over the variables with ``var_example=example``
(cache.make_cache), so every variable of an example reads that example's one cached row; no
solver copies data to fake variables.
"""

from collections import namedtuple

import numpy as np

Variables = namedtuple("Variables", "example sign klass")
Variables.__doc__ = """example int64 [m], sign float64 [m] (+1/-1), klass int64 [m] (0 when one
machine); variable v is the v-th entry."""


def one_per_example(y):
    """A binary machine's variables: variable t is example t with sign y_t (C-SVC, LASVM)."""
    y = np.asarray(y, np.float64)
    l = y.shape[0]
    return Variables(np.arange(l, dtype=np.int64), y.copy(), np.zeros(l, np.int64))


def svr_pairs(l):
    """epsilon-SVR's 2l variables (LIBSVM's solve_epsilon_svr): alpha_i is variable i with sign
    +1, alpha*_i is variable i + l with sign -1, both on example i."""
    ex = np.arange(l, dtype=np.int64)
    return Variables(np.concatenate([ex, ex]), np.concatenate([np.ones(l), -np.ones(l)]),
                     np.zeros(2 * l, np.int64))


def example_class_pairs(l, k):
    """The l k variables (n, c) of an all-in-one k-class machine: variable n k + c is example n,
    class c, sign +1."""
    return Variables(np.repeat(np.arange(l, dtype=np.int64), k), np.ones(l * k),
                     np.tile(np.arange(k, dtype=np.int64), l))
