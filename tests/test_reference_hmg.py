"""The compiled HMG solver (qp/select.py's select_hmg in qp/smo.py's loop) against the numpy
reference written from Glasmachers & Igel (2006)'s pseudo-code (tests/reference_hmg.py).

Without shrinking, on small problems (RBF and linear kernels, several seeds and C values, some
with most alphas at a bound so that HMG's MVP fallback runs), the compiled solver must take the
same working pairs, in the same order and orientation, with the same rule (MG or MVP) in each
iteration, and stop at the same iteration. The pair trace is read from the solver itself: it is
run one iteration at a time (smo_run's chunking does not change the iterates) and after each
iteration ist[PREV_I], ist[PREV_J] hold the pair just taken and ist[LAST_KIND] the rule.

Tolerances: pairs, rules and the iteration count must be equal; the final alphas agree to
1e-10 (absolute; C <= 100) and f to 1e-10 relative. The two compute the step and the gain with
different (equivalent) formulas, so they differ by rounding only.
"""

import numpy as np
import pytest

from lasvm_cli.numerics import cache as kc
from lasvm_cli.qp import LAST_KIND, OPTIMAL, PREV_I, PREV_J, WS_HMG
from lasvm_cli.qp.smo import make_state, objective, smo_init, smo_run
from lasvm_cli.solvers.csvc import solve_binary

from . import reference_hmg as ref
from .conftest import precomputed


def compiled_hmg(K, y, C, eps):
    """The compiled solver on the precomputed kernel K (float64 rows: the reference sees the
    same K), one iteration per call. Returns (alpha, f, trace) as ref.solve_hmg does."""
    n = len(y)
    kd, kp = precomputed(K)
    st = make_state(kd, kp, y, -np.ones(n), np.broadcast_to(C, (n,)), ws=WS_HMG, eps=eps,
                    shrinking=False)
    c = kc.make_cache(n, 8.0 * n * n / 2 ** 20 + 1.0, dtype=np.float64)
    smo_init(st, c, kd, kp, False)
    trace = []
    while smo_run(st, c, kd, kp, 1) != OPTIMAL:
        trace.append((int(st.ist[PREV_I]), int(st.ist[PREV_J]), int(st.ist[LAST_KIND])))
        assert len(trace) < 100000
    return st.alpha.copy(), -objective(st), trace


def problem(kernel, seed, n):
    """Two overlapping classes in R^d: at small C most alphas end at C."""
    rng = np.random.default_rng(seed)
    d = 4 if kernel == "rbf" else 3
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.8 * rng.standard_normal(n) > 0, 1.0, -1.0)
    if kernel == "rbf":
        sq = (X ** 2).sum(1)
        K = np.exp(-0.5 * np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0))
        np.fill_diagonal(K, 1.0)
    else:
        K = X @ X.T
    return K, y


def first_difference(a, b):
    for t, (u, v) in enumerate(zip(a, b)):
        if u != v:
            return f"iteration {t}: compiled {u}, reference {v}"
    return f"lengths {len(a)} (compiled) and {len(b)} (reference)"


CASES = [("rbf", seed, C) for seed in (0, 1, 2) for C in (0.05, 1.0, 100.0)] + \
        [("linear", seed, C) for seed in (0, 1, 2) for C in (0.01, 1.0, 10.0)]


@pytest.mark.parametrize("kernel,seed,C", CASES)
def test_compiled_hmg_takes_the_papers_pairs(kernel, seed, C):
    K, y = problem(kernel, seed, 70)
    alpha, f, trace = compiled_hmg(K, y, C, 1e-3)
    r_alpha, r_f, r_trace = ref.solve_hmg(K, y, C, eps=1e-3)
    assert trace == r_trace, first_difference(trace, r_trace)
    np.testing.assert_allclose(alpha, r_alpha, rtol=0, atol=1e-10)
    assert f == pytest.approx(r_f, rel=1e-10)


def test_class_weights_and_a_tight_eps():
    """Per-variable C (eta * C_i per variable) and eps = 1e-6 (long MG runs near the end)."""
    K, y = problem("rbf", 7, 90)
    C = np.where(y > 0, 5.0, 0.5)
    alpha, f, trace = compiled_hmg(K, y, C, 1e-6)
    r_alpha, r_f, r_trace = ref.solve_hmg(K, y, C, eps=1e-6)
    assert trace == r_trace, first_difference(trace, r_trace)
    np.testing.assert_allclose(alpha, r_alpha, rtol=0, atol=1e-10)


def test_the_cases_exercise_both_rules_and_the_bounds():
    """The comparison above means something only if both of HMG's branches and clipped steps
    occur: MVP fallbacks (both previous variables at a bound) and MG steps, on problems with
    most alphas at a bound."""
    counts = {ref.MVP: 0, ref.MG: 0}
    mostly_bound = 0
    for kernel, seed, C in CASES:
        K, y = problem(kernel, seed, 70)
        alpha, _, trace = ref.solve_hmg(K, y, C, eps=1e-3)
        for *_, rule in trace[1:]:
            counts[rule] += 1
        mostly_bound += np.mean((alpha <= 0) | (alpha >= C)) > 0.8 and np.mean(alpha >= C) > 0.3
    assert counts[ref.MVP] >= 20 and counts[ref.MG] >= 200, counts
    assert mostly_bound >= 3


def test_the_mg_stop_on_a_clipped_step_and_final_kkt_check():
    """The paper's MG stop (|mu*| < eps) also fires when the box clips the best related pair's
    step to under eps while its unclipped step is longer, and a violating pair is left
    elsewhere: here the MVP gap at the stop is over 10 eps (docs/reproductions/seed-003.md,
    section 2). ``final_kkt_check`` (not in the paper) goes on with MVP steps until the MVP gap
    is < eps, to a higher f."""
    K, y = problem("linear", 2, 70)
    C, eps = 10.0, 1e-3
    alpha, f, trace = ref.solve_hmg(K, y, C, eps=eps)
    assert trace[-1][2] == ref.MG
    Q = K * np.outer(y, y)
    G = 1.0 - Q @ alpha
    B, gain, mu_max, mu_star = ref.best_related_pair(alpha, G, Q, y, np.full(len(y), C),
                                                     trace[-1][:2])
    assert gain > 0 and abs(mu_star) < eps < abs(mu_max)
    kd, kp = precomputed(K)
    paper = solve_binary(kd, kp, y, C, C, eps=eps, shrinking=False, wss="hmg",
                         cache_dtype=np.float64)
    checked = solve_binary(kd, kp, y, C, C, eps=eps, shrinking=False, wss="hmg",
                           final_kkt_check=True, cache_dtype=np.float64)
    assert paper.n_iter == len(trace) and paper.counters["kkt_gap"] > 10 * eps
    assert checked.counters["kkt_continuations"] >= 1
    assert checked.counters["kkt_gap"] < eps and -checked.obj > -paper.obj
