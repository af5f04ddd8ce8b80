"""Algorithms 1 and 2 of Usunier, Bordes & Bottou, "Guarantees for approximate incremental
SVMs" (AISTATS 2010), in plain numpy, line by line from the paper's pseudo-code and with its
names. It is slow on purpose (every g_i(alpha) from its definition, every mean of line 8
literally) and is the oracle of tests/test_tracking_reference.py, which checks that the
compiled solvers (lasvm_cli/solvers/tracking.py) take the same steps.

The paper's setting (its Sections 2-4), which the code below follows:

* examples (x_i, y_i), y_i = +-1, seen through a kernel: ``Q[i, j] = <x_i, x_j>`` and
  ``||x_i||^2 = Q[i, i]``; no bias.
* P_t(w) = 1/2 ||w||^2 + C sum_{i<=t} [1 - y_i <w, x_i>]_+                       (eq. 1)
  D_t(alpha) = sum_{i<=t} alpha_i - 1/2 sum_{i,j<=t} y_i y_j alpha_i alpha_j <x_i, x_j>  (eq. 2)
  w(alpha) = sum_i alpha_i y_i x_i, alpha in [0, C]^t; C is fixed, not rescaled with t.
* g_i(alpha) = 1 - y_i <w(alpha), x_i>, and the coordinate step of eq. 3:
  alpha_i <- alpha_i + max(-alpha_i, min(C - alpha_i, g_i(alpha) / ||x_i||^2)).
* the gap G(alpha) = P_t(w(alpha)) - D_t(alpha) = sum_{i<=t} max[(C - alpha_i) g_i(alpha),
  -alpha_i g_i(alpha)] (eq. 4), and the normalised gap of Figures 2-4: G / (C t).

Algorithm 1 (Simple Averaged Tracking Algorithm) and Algorithm 2 (with process/reprocess):

    1: input: stream of examples (x_i, y_i)_{i>=1}, K >= 1 iterations at each time index
    2: initialization: for all i, alpha_i <- 0, t <- 1
    3: while exists(x_t, y_t) do
    4:   Alg. 1: let alpha_t <- 0
         Alg. 2: let alpha_t <- max(0, min(C, g_t(alpha) / ||x_t||^2))
    5:   for k = 1 to K do
    6:     pick i randomly in {1, ..., t}
    7:     let alpha_i <- alpha_i + max(-alpha_i, min(C - alpha_i, g_i(alpha) / ||x_i||^2))
    8:     let abar^t <- (k - 1)/k abar^t + 1/k alpha
    9:   end for
   10:   output classifier w_t = w(abar^t)
   11:   t <- t + 1
   12: end while

Also here, for the paper's other options: the output w(alpha) instead of w(abar^t) (the
non-averaged ablation), the teachers of Section 6 (a fixed order; selective sampling: a pool
of 50 unseen examples drawn at random, the one of smallest |<w(abar), x>|; and its
"adversarial" mirror, the largest hinge loss), the batch counterpart of Section 6.3 (every
example from the start, N steps of eq. 3 on examples picked at random; output the last
iterate or the mean of all iterates, Section 4.1), and the Section 5.2 shortcut of line 7
(skip alpha_i = 0) given the examples picked.

The random source is SplitMix64 seeded as the compiled solvers seed theirs, so that "pick i
randomly" picks the same i in both; the teacher draws its pool before line 4, from the same
stream. Indices: the arrays are over the data set's rows; ``S`` lists the rows seen, in order,
so the paper's i in {1..t} is row S[i - 1].
"""

import numpy as np

MASK = (1 << 64) - 1


class SplitMix64:
    """The compiled solvers' generator (online_core.make_rng / _rand, kind splitmix64):
    below(n) is a uniform integer in [0, n)."""

    def __init__(self, seed):
        self.state = (int(seed) * 0x2545F4914F6CDD1D + 0x1234567) & MASK
        for _ in range(310):  # make_rng's warm-up
            self.below(1)

    def below(self, n):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        return z % int(n)


# ---------------------------------------------------------------------------------------------
# The SVM quantities on S_t (Section 2)


def g(i, alpha, S, y, Q):
    """g_i(alpha) = 1 - y_i <w(alpha), x_i>, w(alpha) = sum_{j in S_t} alpha_j y_j x_j."""
    return 1.0 - y[i] * float(np.sum(alpha[S] * y[S] * Q[i, S]))


def primal(alpha, S, y, Q, C):
    """P_t(w(alpha)) from eq. 1 (||w||^2 = sum_ij alpha_i alpha_j y_i y_j <x_i, x_j>)."""
    ay = alpha[S] * y[S]
    w_norm2 = float(ay @ Q[np.ix_(S, S)] @ ay)
    margins = y[S] * (Q[np.ix_(S, S)] @ ay)
    return 0.5 * w_norm2 + C * float(np.sum(np.maximum(1.0 - margins, 0.0)))


def dual(alpha, S, y, Q):
    """D_t(alpha) from eq. 2."""
    ay = alpha[S] * y[S]
    return float(np.sum(alpha[S])) - 0.5 * float(ay @ Q[np.ix_(S, S)] @ ay)


def gap(alpha, S, y, Q, C):
    """G(alpha) of eq. 4: sum_{i<=t} max[(C - alpha_i) g_i(alpha), -alpha_i g_i(alpha)]."""
    return float(sum(max((C - alpha[i]) * g(i, alpha, S, y, Q), -alpha[i] * g(i, alpha, S, y, Q))
                     for i in S))


def normalised_gap(alpha, S, y, Q, C):
    """(P_t(w(alpha)) - D_t(alpha)) / (C t), the y-axis of Figures 2 and 3."""
    return gap(alpha, S, y, Q, C) / (C * len(S))


def step(i, alpha, S, y, Q, C):
    """Line 7 (eq. 3) on alpha_i; returns a*."""
    a_star = max(-alpha[i], min(C - alpha[i], g(i, alpha, S, y, Q) / Q[i, i]))
    alpha[i] = alpha[i] + a_star
    return a_star


# ---------------------------------------------------------------------------------------------
# Teachers (Section 6): who gives x_t


class FixedOrder:
    """The teacher fixes the sequence of examples beforehand (a shuffle, or a file's order)."""

    def __init__(self, order):
        self.order = list(order)
        self.next_at = 0

    def exists(self):
        return self.next_at < len(self.order)

    def next(self, classifier, rand):
        x_t = self.order[self.next_at]
        self.next_at += 1
        return x_t


class Pool:
    """Selective sampling (Section 6, after Bordes et al. 2005): a pool of ``size`` unseen
    examples drawn at random; the one closest to the decision boundary of the current output,
    smallest |<w, x>| (``active``), or of largest hinge loss [1 - y <w, x>]_+ (``adversarial``,
    the "any teacher" claim). The first candidate wins ties. The pool is drawn without
    replacement by a partial Fisher-Yates shuffle of the unseen list, and the chosen one leaves
    that list by a swap with its last entry, as the compiled teacher does: the same draws then
    give the same pool."""

    def __init__(self, n, y, Q, size=50, kind="active", limit=None):
        self.unseen = list(range(n))
        self.y, self.Q, self.size, self.kind = y, Q, size, kind
        self.left = n if limit is None else min(n, limit)

    def exists(self):
        return self.left > 0

    def next(self, classifier, rand):
        coef, S = classifier  # w = sum_{j in S} coef_j y_j x_j
        m = len(self.unseen)
        for c in range(min(self.size, m)):
            r = c + rand.below(m - c)
            self.unseen[c], self.unseen[r] = self.unseen[r], self.unseen[c]
        best, best_v = -1, 0.0
        for c in range(min(self.size, m)):
            x = self.unseen[c]
            f = float(np.sum(coef[S] * self.y[S] * self.Q[x, S])) if S else 0.0
            v = abs(f) if self.kind == "active" else -max(0.0, 1.0 - self.y[x] * f)
            if best < 0 or v < best_v:
                best, best_v = c, v
        x_t = self.unseen[best]
        self.unseen[best] = self.unseen[m - 1]
        self.unseen.pop()
        self.left -= 1
        return x_t


# ---------------------------------------------------------------------------------------------
# Algorithms 1 and 2


def tracking(algorithm, y, Q, C, K, teacher, rand, average=True):
    """Algorithm 1 (``algorithm=1``) or 2 on the stream the teacher gives; ``average=False``
    outputs w(alpha) instead of w(abar^t). Returns one record per time index t:
    dict(t, x_t, picks (the examples of the steps, line 4's first for Algorithm 2),
    alpha, abar (copies, over the data set's rows), output (the output's coefficients),
    gap (normalised gap of the output on S_t), delta (Algorithm 2: the dual increase of
    line 4, Delta_{t,t} of Theorem 3))."""
    n = y.shape[0]
    alpha = np.zeros(n)                                          # line 2
    abar = np.zeros(n)
    S = []
    t = 1
    records = []
    while teacher.exists():                                      # line 3
        x_t = teacher.next((abar if average and t > 1 else alpha, S), rand)
        S.append(x_t)
        picks = []
        delta = 0.0
        if algorithm == 1:
            alpha[x_t] = 0.0                                     # line 4 (Alg. 1)
        else:
            before = dual(alpha, S, y, Q)
            alpha[x_t] = max(0.0, min(C, g(x_t, alpha, S, y, Q) / Q[x_t, x_t]))  # line 4
            delta = dual(alpha, S, y, Q) - before
            picks.append(x_t)
        for k in range(1, K + 1):                                # line 5
            i = S[rand.below(t)]                                 # line 6
            step(i, alpha, S, y, Q, C)                           # line 7
            picks.append(i)
            abar = (k - 1) / k * abar + 1 / k * alpha            # line 8
        output = abar if average else alpha                      # line 10
        records.append(dict(t=t, x_t=x_t, picks=picks, alpha=alpha.copy(), abar=abar.copy(),
                            output=output.copy(), gap=normalised_gap(output, S, y, Q, C),
                            delta=delta))
        t += 1                                                   # line 11
    return records


def algorithm_1(y, Q, C, K, teacher, rand, average=True):
    return tracking(1, y, Q, C, K, teacher, rand, average)


def algorithm_2(y, Q, C, K, teacher, rand, average=True):
    return tracking(2, y, Q, C, K, teacher, rand, average)


def lasvm_shortcut(y, Q, C, K, order, picks, average=True):
    """Section 5.2's variant of Algorithm 2 on a fixed order, given the examples picked at
    line 6 (the compiled variant draws them over its own arrangement of S_t, so the draws
    cannot be replayed): line 4 as in Algorithm 2, then line 7 shortcut whenever alpha_i = 0
    (g_i is not kept for those; alpha_i = C with g_i >= 0 is a null step of eq. 3 anyway).
    ``picks`` lists, time index after time index, x_t then the K examples of line 6."""
    n = y.shape[0]
    alpha, abar, S, records = np.zeros(n), np.zeros(n), [], []
    picks = list(picks)
    for t, x_t in enumerate(order, start=1):
        S.append(x_t)
        assert picks.pop(0) == x_t
        alpha[x_t] = max(0.0, min(C, g(x_t, alpha, S, y, Q) / Q[x_t, x_t]))  # line 4
        for k in range(1, K + 1):
            i = picks.pop(0)
            if alpha[i] != 0.0:                                  # shortcut (ii)
                step(i, alpha, S, y, Q, C)
            abar = (k - 1) / k * abar + 1 / k * alpha
        output = abar if average else alpha
        records.append(dict(t=t, alpha=alpha.copy(), output=output.copy(),
                            gap=normalised_gap(output, S, y, Q, C)))
    return records


def batch_counterpart(y, Q, C, N, rand, average=False):
    """Section 6.3's batch counterpart: every example from the start (t = n), N steps of eq. 3
    on examples picked at random in {1..n}; output w(alpha_N), or (``average``) w of the mean
    of the N iterates (Section 4.1). Returns (picks, alpha, output, normalised gap)."""
    n = y.shape[0]
    S = list(range(n))
    alpha, abar, picks = np.zeros(n), np.zeros(n), []
    for k in range(1, N + 1):
        i = S[rand.below(n)]
        step(i, alpha, S, y, Q, C)
        picks.append(i)
        abar = (k - 1) / k * abar + 1 / k * alpha
    output = abar if average else alpha
    return picks, alpha, output, normalised_gap(output, S, y, Q, C)
