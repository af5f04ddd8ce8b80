"""Section 4.6's variants of HMG in the numpy reference (tests/reference_hmg.py, ``rows``):
each selection checked against a brute-force definition, pair by pair, on small random
problems (test_reference_hmg.py's, with 40 variables).

* "two" (numpy scan of the paper's two rows) takes the paper's pairs: the default's trace;
* "one": in every MG iteration the pair taken maximises the gain over the pairs {p, b} with p
  the alternating element (the second variable of B^(t-1): the one that entered in t-1) and b
  outside B^(t-1), so each variable is the fixed one in exactly the iteration after it entered;
* "cache": the pair taken maximises the gain over all pairs {i, b} with row i cached (the rows
  of the pairs taken before, least recently used dropped beyond the capacity), except B^(t-1);
  with every row cached from the start it is the exact greedy pair over all pairs.

The brute force computes each gain with step_on_pair (the scalar formulas), so the maxima
agree to rounding; the pairs must be those of the maximum, and the stops those of the rule:
at an MG stop the best pair of the set has |mu*| < eps or no gain.
"""

import itertools

import numpy as np
import pytest

from . import reference_hmg as ref
from .test_reference_hmg import problem

N = 40
CASES = [("rbf", 0, 1.0), ("rbf", 1, 100.0), ("rbf", 2, 0.05), ("linear", 0, 1.0),
         ("linear", 1, 10.0)]


def gain(alpha, G, Q, y, C, i, j):
    return ref.step_on_pair(alpha, G, Q, y, C, i, j)


def brute_best(alpha, G, Q, y, C, pairs):
    """max gain over ``pairs`` (unordered), its pairs (to rounding) and that pair's mu*."""
    best, mu = 0.0, 0.0
    for i, j in pairs:
        _, mu_star, g, _ = gain(alpha, G, Q, y, C, i, j)
        if g > best:
            best, mu = g, mu_star
    return best, mu


def replay(K, y, C, eps, rows, cache_rows=None, prefill=False):
    """Run the variant, then replay its trace from alpha = 0 and yield, before each step and
    at the stop, (alpha, G, Q, C, previous, rows cached, pair taken or None, rule)."""
    alpha_end, _, trace = ref.solve_hmg(K, y, C, eps=eps, rows=rows, cache_rows=cache_rows,
                                        prefill=prefill)
    n = len(y)
    Cv = np.full(n, float(C))
    Q = K * np.outer(y, y)
    alpha, G = np.zeros(n), np.ones(n)
    cached = list(range(n)) if prefill else []  # least recently used first
    previous = None
    for b1, b2, rule in trace + [(None, None, None)]:
        B = None if b1 is None else (b1, b2)
        yield alpha, G, Q, Cv, previous, set(cached), B, rule
        if B is None:
            break
        for r in B:
            if r in cached:
                cached.remove(r)
            cached.append(r)
            if cache_rows is not None and len(cached) > cache_rows:
                cached.pop(0)
        ref.smo_step(alpha, G, Q, y, Cv, *B)
        previous = B
    np.testing.assert_array_equal(alpha, alpha_end)


def mg_iteration(alpha, C, previous):
    """Whether HMG runs MG here (not the first iteration, not both previous near a bound)."""
    return previous is not None and not (ref.near_bound(alpha, C, previous[0], ref.ETA)
                                         and ref.near_bound(alpha, C, previous[1], ref.ETA))


def check_against(pairs_of, K, y, C, eps, **variant):
    """Every MG choice maximises the gain over pairs_of(previous, cached); returns the number
    of MG iterations checked."""
    checked = 0
    for alpha, G, Q, Cv, previous, cached, B, rule in replay(K, y, C, eps, **variant):
        if not mg_iteration(alpha, Cv, previous):
            if B is not None:
                assert rule == ref.MVP
            continue
        pairs = pairs_of(previous, cached)
        best, mu = brute_best(alpha, G, Q, y, Cv, pairs)
        if B is None:  # the MG stop
            assert best == 0.0 or abs(mu) < eps * (1 + 1e-9)
            continue
        assert rule == ref.MG
        assert frozenset(B) in {frozenset(p) for p in pairs}, (B, previous)
        g = gain(alpha, G, Q, y, Cv, *B)[2]
        assert g == pytest.approx(best, rel=1e-9, abs=1e-14)
        checked += 1
    return checked


@pytest.mark.parametrize("kernel,seed,C", CASES)
def test_two_rows_in_numpy_take_the_papers_pairs(kernel, seed, C):
    K, y = problem(kernel, seed, 70)
    a, f, trace = ref.solve_hmg(K, y, C, eps=1e-3)
    a2, f2, trace2 = ref.solve_hmg(K, y, C, eps=1e-3, rows="two")
    assert trace2 == trace
    np.testing.assert_array_equal(a2, a)


@pytest.mark.parametrize("kernel,seed,C", CASES)
def test_one_row_maximises_over_the_alternating_elements_pairs(kernel, seed, C):
    K, y = problem(kernel, seed, N)
    n = len(y)

    def pairs_of(previous, cached):
        p1, p2 = previous
        return [(p2, b) for b in range(n) if b not in previous]

    assert check_against(pairs_of, K, y, C, 1e-3, rows="one") >= 3
    # the alternation: after an MG pair (p, b), the next MG pair keeps b, not p
    _, _, trace = ref.solve_hmg(K, y, C, eps=1e-3, rows="one")
    for (p, b, _), (q, c, rule) in zip(trace, trace[1:]):
        if rule == ref.MG:
            assert q == b and c != p


@pytest.mark.parametrize("capacity", [3, 8, None])
@pytest.mark.parametrize("kernel,seed,C", CASES)
def test_whole_cache_maximises_over_all_pairs_with_a_cached_row(kernel, seed, C, capacity):
    K, y = problem(kernel, seed, N)
    n = len(y)

    def pairs_of(previous, cached):
        return [(i, b) for i in sorted(cached) for b in range(n)
                if b != i and {i, b} != set(previous)]

    assert check_against(pairs_of, K, y, C, 1e-3, rows="cache", cache_rows=capacity) >= 3


@pytest.mark.parametrize("kernel,seed,C", CASES)
def test_whole_matrix_cached_is_the_exact_greedy_policy(kernel, seed, C):
    K, y = problem(kernel, seed, N)
    n = len(y)

    def all_pairs(previous, cached):
        assert len(cached) == n
        return [p for p in itertools.combinations(range(n), 2) if set(p) != set(previous)]

    assert check_against(all_pairs, K, y, C, 1e-3, rows="cache", prefill=True) >= 3


def test_the_variants_differ_and_count_rows():
    """The variants are not the same algorithm in disguise: on these problems they take
    different pairs; the row cache counts one miss per new row."""
    K, y = problem("rbf", 0, 70)
    traces = {}
    for rows in ("two", "one", "cache"):
        info = {}
        _, _, traces[rows] = ref.solve_hmg(K, y, 1.0, eps=1e-3, rows=rows, info=info)
        touched = {i for b1, b2, _ in traces[rows] for i in (b1, b2)}
        assert info["row_misses"] == len(touched)
    assert traces["two"] != traces["one"] and traces["two"] != traces["cache"]
