"""LASVM in plain numpy, straight from the pseudo-code of Bordes, Ertekin, Weston & Bottou
(2005), "Fast kernel classifiers with online and active learning", JMLR 6, §3.2 and §4.4, with
the paper's names: the oracle of tests/test_lasvm_reference.py, which makes the compiled solver
(lasvm_cli/qp/online_core.py, driven by solvers/lasvm.py) take the same steps.

The paper's blocks, as printed (g_k = y_k - sum_i alpha_i K_ik, boxes A_k = min(0, C y_k),
B_k = max(0, C y_k); (i, j) is tau-violating iff alpha_i < B_i, alpha_j > A_j, g_i - g_j > tau):

    PROCESS(k)
      1) bail out if k in S
      2) alpha_k <- 0, g_k <- y_k - sum_{s in S} alpha_s K_ks, S <- S + {k}
      3) if y_k = +1: i <- k, j <- argmin_{s in S} g_s with alpha_s > A_s
         else:        j <- k, i <- argmax_{s in S} g_s with alpha_s < B_s
      4) bail out if (i, j) is not a tau-violating pair
      5) lambda <- min{(g_i - g_j)/(K_ii + K_jj - 2 K_ij), B_i - alpha_i, alpha_j - A_j}
         alpha_i += lambda, alpha_j -= lambda, g_s -= lambda (K_is - K_js) for s in S

    REPROCESS
      1) i <- argmax_{s in S} g_s with alpha_s < B_s;  j <- argmin_{s in S} g_s with alpha_s > A_s
      2) bail out if (i, j) is not a tau-violating pair
      3) the direction search of PROCESS step 5
      4) i, j as in step 1; for s in S with alpha_s = 0:
         remove s if y_s = -1 and g_s >= g_i, or y_s = +1 and g_s <= g_j
      5) b <- (g_i + g_j)/2, delta <- g_i - g_j

    LASVM
      1) seed S with a few examples of each class; alpha <- 0, g from (9)
      2) repeat: pick k_t; PROCESS(k_t); REPROCESS once
      3) finishing: repeat REPROCESS until delta <= tau

    Selection (§4.4), among the examples not yet visited in the epoch:
      RANDOM    one at random
      GRADIENT  the smallest y_k f(x_k) of M random candidates
      ACTIVE    the smallest |f(x_k)| of M random candidates (f = sum alpha K + b)
      AUTOACTIVE  as ACTIVE, sampling until 5 candidates lie within 1 + delta/2 of the
                boundary, at most 100 (delta: the last REPROCESS's step 5, 0 before any)

    The finishing with shrinking (the paper's implementation notes, §3.2: "The REPROCESS
    iterations are restricted to the active set S_a and do not perform any reordering. About
    every 1000 iterations, support vectors that hit the boundaries of the box constraints are
    ... moved from the active set S_a to the inactive set S_i. When all tau-violating pairs of
    the active set are exhausted, the inactive set examples are transferred back into the
    active set. The process continues as long as the merged set contains tau-violating
    pairs."), with LaSVM 1.1's lasvm_finish for what the text leaves open: a shrink first and
    then every min(1000, |S|) steps; a variable leaves S_a when it is at the bound it would
    cross (alpha = B and g >= g_max, alpha = A and g <= g_min, over S_a); the gradients of
    S_i are not updated, and are recomputed from scratch when S_i comes back; S is evicted
    (REPROCESS step 4) and delta computed once, at the end.

Where the compiled solver follows LaSVM 1.1 instead of the print, this file has an option for
it (each named in the code; ``lasvm11=True`` turns them on together, as the compiled solver
runs):

* seeding: LaSVM 1.1 PROCESSes the first 5 examples of each class in file order (step 1's
  "seed S ... alpha <- 0" would insert them with alpha = 0);
* PROCESS rejects k before step 2 when it cannot form a violating pair with the current S
  (y_k = +1 and g_k < g_min, y_k = -1 and g_k > g_max, given a pair in S with g_min < g_max),
  where the paper inserts it and lets REPROCESS step 4 evict it with the thresholds of after
  its own step;
* a REPROCESS that bails out at step 2 still runs steps 4 and 5 (eviction, b and delta), as
  LaSVM 1.1's lasvm_reprocess does; as printed it does nothing, and the finishing loop (whose
  delta a bail-out leaves as it was) then ends at the first bail-out;
* the first index wins ties in the argmax/argmin, the index being the position in S, which the
  compiled solver keeps as LaSVM 1.1 does: k appended at the end, an evicted s swapped with
  the last member (the paper's S is a set and says nothing of ties; the reference keeps the
  same list so that ties, which exact duplicates make, break the same way).

The random draws come from a function ``draw(n) -> [0, n)`` (the test passes a replica of the
compiled generator); the pool of unvisited examples is drawn from with swap-removal, as
la_svm.cpp:select does, so that the same draws give the same examples.
"""

import numpy as np


class ReferenceLasvm:
    """The state (S, alpha, g) and the operations of the paper over a kernel matrix K."""

    def __init__(self, K, y, C, tau=1e-3, lasvm11=True, seed_by_process=None,
                 reject_before_insert=None, evict_after_bail=None):
        self.K = np.asarray(K, np.float64)
        self.y = np.asarray(y, np.float64)
        self.n = len(self.y)
        self.A = np.minimum(0.0, C * self.y)
        self.B = np.maximum(0.0, C * self.y)
        self.tau = tau
        # LaSVM 1.1's deviations (module docstring), together or one by one
        self.seed_by_process = lasvm11 if seed_by_process is None else seed_by_process
        self.reject_before_insert = lasvm11 if reject_before_insert is None else \
            reject_before_insert
        self.evict_after_bail = lasvm11 if evict_after_bail is None else evict_after_bail
        self.S = []                      # a list: its order breaks ties (module docstring)
        self.alpha = np.zeros(self.n)
        self.g = np.zeros(self.n)
        self.b = 0.0
        self.delta = 0.0
        self.steps = []                  # every direction search: (i, j, lambda)

    # -- the pair and the direction search ---------------------------------------------------

    def argmax_g(self, over=None):
        """i <- argmax_{s in S} g_s with alpha_s < B_s (None when no such s); ``over``: a
        part of S instead (the shrinking finishing's active set)."""
        c = [s for s in (self.S if over is None else over) if self.alpha[s] < self.B[s]]
        return c[int(np.argmax(self.g[c]))] if c else None

    def argmin_g(self, over=None):
        """j <- argmin_{s in S} g_s with alpha_s > A_s (None when no such s)."""
        c = [s for s in (self.S if over is None else over) if self.alpha[s] > self.A[s]]
        return c[int(np.argmin(self.g[c]))] if c else None

    def violating(self, i, j):
        return (i is not None and j is not None and self.alpha[i] < self.B[i]
                and self.alpha[j] > self.A[j] and self.g[i] - self.g[j] > self.tau)

    def direction_search(self, i, j, over=None):
        """PROCESS step 5 / REPROCESS step 3 (a non-positive curvature is taken as 1e-12, the
        compiled step's guard, lasvm_cli/qp/steps.py); ``over``: the gradients updated, all
        of S by default."""
        K, g = self.K, self.g
        curvature = max(K[i, i] + K[j, j] - 2.0 * K[i, j], 1e-12)
        lam = min((g[i] - g[j]) / curvature, self.B[i] - self.alpha[i],
                  self.alpha[j] - self.A[j])
        # a step of exactly the room left lands on the bound itself (the tests alpha = 0 and
        # alpha < B read it exactly; alpha + (B - alpha) may round off B)
        self.alpha[i] = self.B[i] if lam == self.B[i] - self.alpha[i] else self.alpha[i] + lam
        self.alpha[j] = self.A[j] if lam == self.alpha[j] - self.A[j] else self.alpha[j] - lam
        S = np.array(self.S if over is None else over)
        g[S] -= lam * (K[i, S] - K[j, S])
        self.steps.append((i, j, lam))

    # -- PROCESS and REPROCESS ---------------------------------------------------------------

    def expansion(self, k):
        """sum_{s in S} alpha_s K_ks, summed one term at a time in the order of S: an
        unclipped direction search leaves g_i = g_j, a tie that the next argmax/argmin breaks
        on the last bit, so the sum is rounded as the compiled solver rounds it."""
        total = 0.0
        for s in self.S:
            total += self.alpha[s] * self.K[k, s]
        return total

    def gradient(self, k):
        return self.y[k] - self.expansion(k)

    def process(self, k):
        """PROCESS(k); returns the pair moved or None."""
        if k in self.S:                                             # 1
            return None
        g_k = self.gradient(k)
        if self.reject_before_insert:
            # LaSVM 1.1 (lasvm_process): k is not inserted when it cannot form a violating pair
            i, j = self.argmax_g(), self.argmin_g()
            if i is not None and j is not None and self.g[j] < self.g[i] and (
                    (self.y[k] > 0 and g_k < self.g[j]) or (self.y[k] < 0 and g_k > self.g[i])):
                return None
        self.alpha[k] = 0.0                                         # 2
        self.g[k] = g_k
        self.S.append(k)
        if self.y[k] > 0:                                           # 3
            i, j = k, self.argmin_g()
        else:
            i, j = self.argmax_g(), k
        if not self.violating(i, j):                                # 4
            return None
        self.direction_search(i, j)                                 # 5
        return (i, j)

    def reprocess(self):
        """REPROCESS; returns the pair moved or None."""
        i, j = self.argmax_g(), self.argmin_g()                     # 1
        moved = None
        if self.violating(i, j):                                    # 2
            self.direction_search(i, j)                             # 3
            moved = (i, j)
        elif not self.evict_after_bail:
            return None                                             # 2, as printed: bail out
        self.evict_and_delta()
        return moved

    def evict_and_delta(self):
        """REPROCESS steps 4 and 5."""
        i, j = self.argmax_g(), self.argmin_g()                     # 4
        g_i = self.g[i] if i is not None else np.inf
        g_j = self.g[j] if j is not None else -np.inf
        keep = []
        for s in self.S:
            if self.alpha[s] == 0.0 and ((self.y[s] < 0 and self.g[s] >= g_i) or
                                         (self.y[s] > 0 and self.g[s] <= g_j)):
                continue
            keep.append(s)
        self._remove(set(self.S) - set(keep))
        if i is not None and j is not None:                         # 5
            self.b, self.delta = 0.5 * (g_i + g_j), max(0.0, g_i - g_j)
        else:
            self.b, self.delta = 0.0, 0.0

    def _remove(self, gone):
        """S <- S - gone, scanning S from its start: a removed member is replaced by the last
        one, which is examined next (the compiled solver's positions, LaSVM 1.1's; module
        docstring)."""
        p = 0
        while p < len(self.S):
            if self.S[p] in gone:
                self.alpha[self.S[p]] = 0.0
                self.S[p] = self.S[-1]
                self.S.pop()
            else:
                p += 1

    # -- the decision and the selection ------------------------------------------------------

    def f(self, k):
        """f(x_k) = sum_{s in S} alpha_s K_ks + b, b from the current maximal pair (0 when a
        side is empty, as the compiled decision)."""
        i, j = self.argmax_g(), self.argmin_g()
        b = 0.5 * (self.g[i] + self.g[j]) if i is not None and j is not None else 0.0
        return self.expansion(k) + b

    def pick(self, pool, draw, selection, M):
        """Pick k_t from ``pool`` (a list, changed in place: swap-removal) with the selection
        rule; the criterion is smaller-is-better, the first of equals wins."""
        if selection == "random":
            r = draw(len(pool))
        else:
            best, r, near = np.inf, -1, 0
            for _ in range(min(100 if selection == "autoactive" else M, len(pool))):
                c = draw(len(pool))
                k = pool[c]
                crit = self.y[k] * self.f(k) if selection == "gradient" else abs(self.f(k))
                if crit < best or r < 0:
                    best, r = crit, c
                if selection == "autoactive" and crit < 1.0 + self.delta / 2:
                    near += 1
                    if near >= 5:
                        break
        k = pool[r]
        pool[r] = pool[-1]
        pool.pop()
        return k

    # -- LASVM -------------------------------------------------------------------------------

    def seed(self, n_seed=5):
        """Step 1 on the first n_seed examples of each class in file order; returns them.
        The paper inserts them with alpha = 0; LaSVM 1.1 PROCESSes them one by one."""
        seeds, count = [], {1.0: 0, -1.0: 0}
        for k in range(self.n):
            if count[self.y[k]] < n_seed:
                count[self.y[k]] += 1
                seeds.append(k)
            if min(count.values()) >= n_seed:
                break
        for k in seeds:
            if self.seed_by_process:
                self.process(k)
            else:
                self.alpha[k] = 0.0
                self.g[k] = self.y[k]
                self.S.append(k)
        return seeds

    def online_iteration(self, k):
        """Step 2: PROCESS(k_t), then REPROCESS once; the pairs moved (None: bailed out)."""
        return self.process(k), self.reprocess()

    def finishing(self):
        """Step 3: REPROCESS until delta <= tau; the pairs moved, in order (None: bailed).
        As printed, a bail-out leaves delta as it was and every later REPROCESS would bail
        out too: the loop ends there."""
        pairs = [self.reprocess()]
        while self.delta > self.tau and (pairs[-1] is not None or self.evict_after_bail):
            pairs.append(self.reprocess())
        return pairs

    def finishing_shrinking(self, every=1000):
        """Step 3 with the paper's shrinking (module docstring); the pairs moved, in order,
        with ("unshrink", |S_i|) where the inactive set came back. The inactive set is the end of the
        list S (a variable leaving the active part is swapped with its last member, as the
        compiled solver's positions)."""
        n = len(self.S)
        a, steps, next_shrink, moves = n, 0, 0, []
        while True:
            if steps >= next_shrink:
                a = self._shrink(a)
                next_shrink = steps + min(every, n)
            active = self.S[:a]
            i, j = self.argmax_g(active), self.argmin_g(active)
            if self.violating(i, j):
                self.direction_search(i, j, over=active)
                moves.append((i, j))
                steps += 1
            elif a < n:
                for s in self.S[a:]:                # the gradients of S_i, from scratch
                    self.g[s] = self.y[s]
                for q in self.S:
                    if self.alpha[q] != 0.0:
                        for s in self.S[a:]:
                            self.g[s] -= self.alpha[q] * self.K[q, s]
                moves.append(("unshrink", n - a))
                a = n
                next_shrink = steps + min(every, n)
            else:
                self.evict_and_delta()
                return moves

    def _shrink(self, a):
        """Members of S[:a] at the bound they would cross leave the active part; returns a."""
        active = self.S[:a]
        i, j = self.argmax_g(active), self.argmin_g(active)
        g_up = self.g[i] if i is not None else np.inf
        g_down = self.g[j] if j is not None else -np.inf
        p = 0
        while p < a:
            s = self.S[p]
            if (self.g[s] >= g_up and self.alpha[s] >= self.B[s]) or \
                    (self.g[s] <= g_down and self.alpha[s] <= self.A[s]):
                a -= 1
                self.S[p], self.S[a] = self.S[a], self.S[p]
            else:
                p += 1
        return a
