"""S2DO and the online all-in-one solvers of Trinh (2012), "Online learning of multi-class
Support Vector Machines", written straight from the thesis's pseudo-code in plain numpy, as
the oracle of tests/test_s2do_reference.py. Nothing here imports the package.

The problem (§4.1 LLW, §5.1 the unified framework; both without bias): variables alpha_{n,c},
c != y_n (alpha_{n,y_n} is 0 and never moves),

    max_a  D(a) = v sum a - 0.5 sum_{(m,p),(n,q)} a_{m,p} a_{n,q} M(y_m, p, y_n, q) K_mn

* LLW (4.5): M = delta_pq - 1/d, 0 <= a <= C, v the target margin (1 reproduces the thesis's
  C values and duals: its 1/(d-1) is the same machine with C (d-1));
* CS (5.4)-(5.5) with Table 2.1's relative margin and Table 2.2's discriminative max-loss:
  M = delta(y_m, y_n) - delta(y_m, q) - delta(p, y_n) + delta(p, q), v = 1, a >= 0 and one
  sum per example, S_n = sum_c a_{n,c} <= C.

The gradient g = v - Q a is kept as the thesis keeps it: set to v at a = 0 and updated after
each step from the two kernel columns (Algorithm 3 line 7, Algorithm 7 lines 13-14 and their
unified-framework counterpart), for every example (batch) or for the support patterns W only
(online, §4.2.3), a fresh pattern's gradient computed from W when it arrives. The operations
are written in the order the package's compiled loops use, so that the two see the same
rounding: a variable at an interior optimum has g = 0 up to rounding, and whether it "may
move" (g > 0 or g < 0) is decided by that rounding; the test checks the gradients against
g = v - Q a computed from the definition.

Algorithms, with the corrections of the printed text that the thesis's own definitions force
(each marked "fix" where it is applied):

* Algorithm 3 (batch S2DO): the first variable maximises the feasible-direction score (g if it
  may grow, -g if it may shrink; the printed argmax |g| can pick a variable stuck at a bound);
  for CS the pair "up c, down e" of one example at S = C with score g_c - g_e competes with it
  (§5.2.1: "if max|g| >= max (g_{m,c} - g_{n,e})", feasible only inside one example at its
  bound); the second variable maximises Algorithm 4's gain among the variables that can move;
  stop when the largest score is below eps.
* Algorithm 4 (the gain), Algorithm 5 (the box step, corrected: the feasibility test on
  alpha + mu, the four edges in order), Algorithm 11 (the triangle step, corrected: the sign
  of mu_q, the third edge, the true objective increase).
* Algorithm 7 (the online pass) as printed: per example TWO_NEWS, then blocks of TWO_OLD /
  TWO_OLD_SUPPORTS (multipliers 1, d, d) drawn "with probability according to stepGains"
  (LaRank's floor eta = 0.05; the printed text gives no formula: p_s = max(eta, gain_s / sum
  of the gains), renormalised) until TWO_NEWS is drawn; after *every* elementary step (line
  15 sits inside the multiplier loop) stepGains[step] <- beta increase / duration + (1 - beta)
  stepGains[step], beta 0.05, initial gains 1. Algorithms 6/9/10 choose each step's working
  set for S2DO_ALL, RANDOM_PATTERN_S2DO_ALL and RANDOM_PATTERN_S2DO_PATTERN; for CS the second
  variable of a pair inside one pattern (TWO_NEWS, Algorithm 8 line 7; RANDOM_PATTERN_S2DO_
  PATTERN, Algorithm 9/10 line 36) is argmax_c (g_p - g_c), the smallest gradient among the
  pattern's other variables.
  The durations are the environment's, not the algorithm's: the printed algorithm measures
  wall-clock seconds; a replay is handed the durations the compared run measured (seconds, or
  the package's work count), one per elementary step, through ``durations``.
  The package's corrections of the printed pass are options here, so that its default run is
  replayed too (``update="block"``: the gain updated once per block with the block's increase
  over its summed duration, floored at 1; ``second="gain"``: the pattern's second variable by
  Algorithm 4's gain; ``schedule="fixed"``: fixed scheduling, one block of each step type per
  example, no draws).
  Choices the thesis leaves open: the random pattern is uniform over W in W's order (a pattern
  joins at the end; a pattern whose alphas are all 0 leaves, the last one taking its place);
  the random numbers come from numpy's legacy MT19937 (numba's generator in the package draws
  the same numbers); the epoch's order is ``default_rng(seed).permutation``; an example
  already in W (epochs >= 2) takes its TWO_NEWS step from its stored gradients; a per-step
  duration is floored at 1e-9.
"""

import numpy as np

LLW, CS = 0, 1
TINY = 1e-12  # Shark's thresholds for a zero curvature / determinant
SNAP = 1e-12  # a CS sum within SNAP C of C is C (Shark's updateVarsum)
TWO_NEWS, TWO_OLD, TWO_OLD_SUPPORTS = 0, 1, 2
S2DO_ALL, RP_S2DO_ALL, RP_S2DO_PATTERN = 0, 1, 2
BETA, ETA = 0.05, 0.05


def mcoef(kind, d, ym, p, yn, q):
    if kind == LLW:
        return (1.0 if p == q else 0.0) - 1.0 / d
    return float(int(ym == yn) - int(ym == q) - int(p == yn) + int(p == q))


class Problem:
    """The dual's data: the kernel matrix K, the classes yc (0..d-1), d, the machine, C, the
    target v; Q over the flat variables n d + c."""

    def __init__(self, K, yc, d, kind, C, target=1.0):
        self.K, self.yc, self.d, self.kind, self.C = K, np.asarray(yc), d, kind, float(C)
        self.v = float(target) if kind == LLW else 1.0
        l = self.yc.size
        M = np.array([[[[mcoef(kind, d, self.yc[m], p, self.yc[n], q) for q in range(d)]
                        for n in range(l)] for p in range(d)] for m in range(l)])
        self.Q = (M * K[:, None, :, None]).reshape(l * d, l * d)
        self.free = np.ones((l, d), bool)
        self.free[np.arange(l), self.yc] = False  # alpha_{n, y_n} is not a variable

    def gradient(self, A):
        """g = v - Q a from the definition (the test's check of the kept gradients)."""
        return (self.v - self.Q @ A.ravel()).reshape(A.shape)

    def dual(self, A):
        a = A.ravel()
        return self.v * a.sum() - 0.5 * a @ self.Q @ a

    def q(self, m, p, n, qq):
        return self.Q[m * self.d + p, n * self.d + qq]


# --- Algorithms 4, 5, 11 -----------------------------------------------------------------------


def gain(g1, g2, q11, q12, q22):
    """Algorithm 4: 0.5 g_B' Q_B^-1 g_B (infinite where Q_B is singular and g_B not in its
    range; never the case on the tests' problems)."""
    det = q11 * q22 - q12 * q12
    if q11 == q12 == q22 == 0.0:
        return 0.0 if g1 == g2 == 0.0 else np.inf
    if det <= 0.0:
        if (q11 != 0 and g1 * q12 - g2 * q11 != 0) or (q22 != 0 and g2 * q12 - g1 * q22 != 0):
            return np.inf
        return (g1 * g1 + g2 * g2) ** 2 / (2 * (g1 * g1 * q11 + 2 * g1 * g2 * q12
                                                + g2 * g2 * q22))
    return (g1 * g1 * q22 - 2.0 * g1 * g2 * q12 + g2 * g2 * q11) / (2.0 * det)


def objective(g1, g2, q11, q12, q22, m1, m2):
    return g1 * m1 + g2 * m2 - 0.5 * (q11 * m1 * m1 + 2.0 * q12 * m1 * m2 + q22 * m2 * m2)


def line(num, q, lo, hi):
    """max num mu - 0.5 q mu^2 on [lo, hi]; zero curvature (fix): the bound num points to."""
    if q > TINY:
        return min(max(num / q, lo), hi)
    return hi if num > 0 else (lo if num < 0 else 0.0)


def box_step(g1, g2, q11, q12, q22, a1, a2, L1, U1, L2, U2):
    """Algorithm 5, corrected (fix: the test is on alpha + mu, the edges in order)."""
    det = q11 * q22 - q12 * q12
    if det > TINY and det > TINY * q11 * q22:
        m1 = (q22 * g1 - q12 * g2) / det
        m2 = (q11 * g2 - q12 * g1) / det
        if L1 <= a1 + m1 <= U1 and L2 <= a2 + m2 <= U2:
            return m1, m2
    cands = []
    for b1 in (U1 - a1, L1 - a1):  # alpha_1 at U, at L
        cands.append((b1, line(g2 - q12 * b1, q22, L2 - a2, U2 - a2)))
    for b2 in (U2 - a2, L2 - a2):  # alpha_2 at U, at L
        cands.append((line(g1 - q12 * b2, q11, L1 - a1, U1 - a1), b2))
    vals = [objective(g1, g2, q11, q12, q22, *c) for c in cands]
    return cands[int(np.argmax(vals))]


def triangle_step(g1, g2, q11, q12, q22, a1, a2, s):
    """Algorithm 11, corrected: a1 + m1 >= 0, a2 + m2 >= 0, m1 + m2 <= s, where s = U - a1 - a2
    (U = C - the example's other alphas, so s = C - S: the room left in its sum)."""
    det = q11 * q22 - q12 * q12
    if det > TINY and det > TINY * q11 * q22:
        m1 = (q22 * g1 - q12 * g2) / det
        m2 = (q11 * g2 - q12 * g1) / det  # fix: the printed sign is reversed
        if a1 + m1 >= 0 and a2 + m2 >= 0 and m1 + m2 <= s:
            return m1, m2
    c1 = (-a1, line(g2 + q12 * a1, q22, -a2, s + a1))  # edge alpha_1 = 0
    c2 = (line(g1 + q12 * a2, q11, -a1, s + a2), -a2)  # edge alpha_2 = 0
    t = line(g1 - g2 + s * (q22 - q12), q11 + q22 - 2.0 * q12, -a1, s + a2)  # fix: edge 3
    c3 = (t, s - t)
    cands = [c1, c2, c3]
    vals = [objective(g1, g2, q11, q12, q22, *c) for c in cands]  # fix: the true increase
    return cands[int(np.argmax(vals))]


# --- the S2DO iteration on a set of examples ---------------------------------------------------


class State:
    """alpha [l, d] and the sums, on a Problem."""

    def __init__(self, pb):
        self.pb = pb
        self.A = np.zeros((pb.yc.size, pb.d))
        self.S = np.zeros(pb.yc.size)
        self.G = np.full((pb.yc.size, pb.d), pb.v)

    def update(self, rows, m, p, mu1, n, q, mu2):
        """g -= Q[:, (m, p)] mu1 + Q[:, (n, q)] mu2 on the examples ``rows``: LLW
        g_{t,c} -= (delta_cp - 1/d) mu1 K_tm + (delta_cq - 1/d) mu2 K_tn (Algorithm 7 line 14);
        CS with M(y_t, c, y_m, p) = delta(y_t, y_m) - delta(y_t, p) - delta(c, y_m)
        + delta(c, p)."""
        pb = self.pb
        rows = np.asarray(rows, np.int64)
        if rows.size == 0:
            return
        G, yt = self.G, pb.yc[rows]
        a = mu1 * pb.K[rows, m]
        b = mu2 * pb.K[rows, n]
        if pb.kind == LLW:
            G[rows] += ((a + b) / pb.d)[:, None]
            G[rows, p] -= a
            G[rows, q] -= b
            return
        ym, yn = pb.yc[m], pb.yc[n]
        base = (a * ((yt == ym).astype(float) - (yt == p).astype(float))
                + b * ((yt == yn).astype(float) - (yt == q).astype(float)))
        G[rows] -= base[:, None]
        G[rows, ym] += a
        G[rows, p] -= a
        G[rows, yn] += b
        G[rows, q] -= b

    def fresh_gradient(self, t, W):
        """g_t of a new pattern from the support patterns W (§4.2.3; in W's order):
        g_{t,c} = v - sum_n K_tn (a_{n,c} - S_n / d) (LLW), v - sum_n K_tn ((S_n if y_t = y_n)
        - a_{n,y_t} + a_{n,c} - S_n delta(c, y_n)) (CS)."""
        pb = self.pb
        g = np.full(pb.d, pb.v)
        yt = pb.yc[t]
        for n in W:
            Sn = self.S[n]
            if Sn == 0.0:
                continue
            k = pb.K[t, n]
            if pb.kind == LLW:
                g -= k * (self.A[n] - Sn / pb.d)
                continue
            base = (Sn if yt == pb.yc[n] else 0.0) - self.A[n, yt]
            g -= k * (base + self.A[n])
            g[pb.yc[n]] += k * Sn
        self.G[t] = g

    def upper(self, n, c):
        pb = self.pb
        return pb.C if pb.kind == LLW else pb.C - self.S[n] + self.A[n, c]

    def at_bound(self, n):
        return self.pb.kind == CS and self.S[n] >= self.pb.C

    def first(self, G, examples, supports_only):
        """(m, p, score) of the largest feasible-direction score over ``examples`` (in that
        order, first on ties), and for CS the best "up c, down e" pair of one example at its
        bound: (t, c, e, score)."""
        pb, A = self.pb, self.A
        best, m, p = 0.0, -1, -1
        pair = (-1, -1, -1, 0.0)
        for t in examples:
            for c in range(pb.d):
                if not pb.free[t, c] or (supports_only and A[t, c] == 0.0):
                    continue
                g = G[t, c]
                grow = A[t, c] < pb.C if pb.kind == LLW else not self.at_bound(t)
                score = g if (g > 0 and grow) else (-g if (g < 0 and A[t, c] > 0) else 0.0)
                if score > best:
                    best, m, p = score, t, c
            if self.at_bound(t):
                cs = [c for c in range(pb.d) if pb.free[t, c]
                      and not (supports_only and A[t, c] == 0.0)]
                up = max(cs, key=lambda c: (G[t, c], -c))  # first c of the largest
                downs = [c for c in cs if A[t, c] > 0]
                if downs:
                    down = min(downs, key=lambda c: (G[t, c], c))
                    if up != down and G[t, up] - G[t, down] > pair[3]:
                        pair = (t, up, down, G[t, up] - G[t, down])
        return m, p, best, pair

    def movable(self, G, t, c, m, supports_only):
        pb, A = self.pb, self.A
        if not pb.free[t, c] or (supports_only and A[t, c] == 0.0):
            return False
        g = G[t, c]
        grow = A[t, c] < pb.C if pb.kind == LLW else (not self.at_bound(t) or t == m)
        return (g > 0 and grow) or (g < 0 and A[t, c] > 0)

    def second(self, G, examples, m, p, supports_only):
        """The movable (n, q) != (m, p) of the largest Algorithm 4 gain (first on ties)."""
        pb = self.pb
        best, n, q = -1.0, -1, -1
        for t in examples:
            for c in range(pb.d):
                if (t, c) == (m, p) or not self.movable(G, t, c, m, supports_only):
                    continue
                v = gain(G[m, p], G[t, c], pb.q(m, p, m, p), pb.q(m, p, t, c), pb.q(t, c, t, c))
                if v > best:
                    best, n, q = v, t, c
        return n, q

    def by_gradient(self, G, m, p, supports_only):
        """Algorithm 8 line 7, Algorithm 9 (10) line 36: q = argmax_c (g_{m,p} - g_{m,c}) over
        the pattern's variables c != p (Algorithm 10: with alpha != 0), i.e. the smallest
        gradient, first on ties; (-1, -1) if there is none."""
        pb = self.pb
        cands = [c for c in range(pb.d) if pb.free[m, c] and c != p
                 and not (supports_only and self.A[m, c] == 0.0)]
        if not cands:
            return -1, -1
        return m, min(cands, key=lambda c: (G[m, c], c))

    def step(self, first_examples, second_examples, rows, supports_only=False,
             in_pattern_second="gain"):
        """One S2DO iteration, the gradients of ``rows`` updated; returns ((m, p, n, q), KKT
        violation, dual increase); m = -1 when nothing can move. ``in_pattern_second``: the
        rule for a CS second variable taken in the first variable's own pattern ("gradient":
        Algorithms 8, 9 as printed; "gain": Algorithm 4 as everywhere else)."""
        pb, A, G = self.pb, self.A, self.G
        m, p, best, (pm, pup, pdown, pbest) = self.first(G, first_examples, supports_only)
        viol = max(best, pbest)
        if viol <= 0.0:
            return (-1, -1, -1, -1), viol, 0.0
        if pbest > best:
            m, p, n, q = pm, pup, pm, pdown
        elif (in_pattern_second == "gradient" and pb.kind == CS
              and list(second_examples) == [m]):
            n, q = self.by_gradient(G, m, p, supports_only)
        else:
            n, q = self.second(G, second_examples, m, p, supports_only)
        if n < 0:  # a step on (m, p) alone
            q11 = pb.q(m, p, m, p)
            mu1 = line(G[m, p], q11, -A[m, p], self.upper(m, p) - A[m, p])
            inc = objective(G[m, p], 0.0, q11, 0.0, 0.0, mu1, 0.0)
            self.set(m, p, A[m, p] + mu1)
            self.update(rows, m, p, mu1, m, p, 0.0)
            return (m, p, n, q), viol, inc
        qB = (pb.q(m, p, m, p), pb.q(m, p, n, q), pb.q(n, q, n, q))
        args = (G[m, p], G[n, q]) + qB + (A[m, p], A[n, q])
        if pb.kind == CS and m == n:
            mu1, mu2 = triangle_step(*args, pb.C - self.S[m])
        else:
            mu1, mu2 = box_step(*args, 0.0, self.upper(m, p), 0.0, self.upper(n, q))
        # the dual increase of §3.3: g_B' mu - 0.5 mu' Q_B mu with the pre-step gradients
        inc = objective(G[m, p], G[n, q], *qB, mu1, mu2)
        a1, a2 = A[m, p] + mu1, A[n, q] + mu2
        self.set(m, p, a1)
        self.set(n, q, a2)
        self.update(rows, m, p, mu1, n, q, mu2)
        return (m, p, n, q), viol, inc

    def set(self, n, c, value):
        self.A[n, c] = min(max(value, 0.0), self.pb.C)
        s = 0.0
        for v in self.A[n]:
            s += v
        if self.pb.kind == CS and s >= self.pb.C * (1.0 - SNAP):
            s = self.pb.C
        self.S[n] = s


def batch(pb, eps=1e-3, max_steps=100000):
    """Algorithm 3 (no shrinking) to a KKT violation below eps: [(working pair, alpha)]."""
    st = State(pb)
    everyone = range(pb.yc.size)
    records = []
    for _ in range(max_steps):
        pair, viol, _ = st.step(everyone, everyone, everyone)
        if viol < eps:
            break
        records.append((pair, st.A.copy()))
    return records


# --- Algorithm 7 ------------------------------------------------------------------------------


def draw(gains, u):
    """Line 17: a step type "with probability according to stepGains", each at least eta
    (LaRank): p_s = max(eta, gain_s / sum of the gains) (negative gains count 0; all 0: equal
    shares), renormalised, the type found by inverting the distribution at u in [0, 1)."""
    pos = np.maximum(np.asarray(gains, float), 0.0)
    total = pos.sum()
    p = np.maximum(pos / total if total > 0 else np.full(3, 1.0 / 3.0), ETA)
    u = u * p.sum()
    for s in range(3):
        u -= p[s]
        if u < 0:
            return s
    return 2


class Online:
    """Algorithm 7 with Algorithms 6/8/9/10. ``rs``: a numpy RandomState (the step draws and
    the random patterns); ``durations()``: the duration of the next elementary step (the
    compared run's clock or work count). ``update`` "step" (printed) or "block",
    ``second`` "gradient" (printed) or "gain", ``schedule`` "adaptive" (printed) or "fixed":
    see the module's docstring."""

    SHORTEST = 1e-9

    def __init__(self, pb, strategy, rs, durations, multipliers=None, update="step",
                 second="gradient", schedule="adaptive"):
        self.pb, self.strategy, self.rs, self.durations = pb, strategy, rs, durations
        self.update, self.second, self.schedule = update, second, schedule
        self.st = State(pb)
        self.W = []  # the support patterns, in order
        self.mult = (1, pb.d, pb.d) if multipliers is None else multipliers
        self.gains = np.ones(3)  # line 3
        self.beta = BETA
        self.log = []  # (step type, working pair, alpha after)

    def _leave(self, pair):
        m, _, n, _ = pair
        for t in sorted({x for x in (m, n) if x >= 0 and x in self.W},
                        key=self.W.index, reverse=True):
            if self.st.S[t] == 0.0:  # the last pattern takes its place
                i = self.W.index(t)
                self.W[i] = self.W[-1]
                self.W.pop()

    def two_news(self, k):
        """Algorithm 6 lines 1-4 / Algorithm 8: both variables from pattern k."""
        if k in self.W:  # its gradients are stored
            pair, _, gain = self.st.step([k], [k], self.W, in_pattern_second=self.second)
            self._leave(pair)
        else:
            self.st.fresh_gradient(k, self.W)
            pair, _, gain = self.st.step([k], [k], self.W + [k], in_pattern_second=self.second)
            if self.st.S[k] > 0.0:
                self.W.append(k)
        return pair, gain

    def pick_pattern(self):
        return self.W[self.rs.randint(0, len(self.W))]

    def two_old(self, supports_only):
        """Algorithm 6 lines 13-40 / Algorithms 9, 10 (V: the variables of W; TWO_OLD_SUPPORTS:
        those with alpha != 0)."""
        if not self.W:
            return None, 0.0  # no step: V is empty
        if self.strategy == S2DO_ALL:
            first = second = list(self.W)
        else:
            i = self.pick_pattern()
            first = [i]
            second = list(self.W) if self.strategy == RP_S2DO_ALL else [i]
        pair, _, gain = self.st.step(first, second, list(self.W), supports_only,
                                     in_pattern_second=self.second)
        self._leave(pair)
        return pair, gain

    def block(self, step, k):
        """Lines 8-16: multipliers[step] elementary steps; line 15 after each (update "step"),
        or once for the block (update "block")."""
        total = spent = 0.0
        for _ in range(self.mult[step]):
            pair, increase = (self.two_news(k) if step == TWO_NEWS
                              else self.two_old(step == TWO_OLD_SUPPORTS))
            duration = self.durations()
            if pair is not None:
                self.log.append((step, pair, self.st.A.copy()))
            if self.update == "step":
                self.gains[step] = (self.beta * increase / max(duration, self.SHORTEST)
                                    + (1.0 - self.beta) * self.gains[step])
            total += increase
            spent += duration
        if self.update == "block" and self.schedule == "adaptive":
            self.gains[step] = (self.beta * total / max(spent, 1.0)
                                + (1.0 - self.beta) * self.gains[step])

    def next_step(self):
        return draw(self.gains, self.rs.random_sample())

    def example(self, k):
        """Lines 6-18 for example k."""
        if self.schedule == "fixed":
            for step in (TWO_NEWS, TWO_OLD, TWO_OLD_SUPPORTS):
                self.block(step, k)
            return
        step = TWO_NEWS
        while True:
            self.block(step, k)
            step = self.next_step()
            if step == TWO_NEWS:
                return
