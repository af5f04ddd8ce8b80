"""LASVM-G, LASVM-NC, LASVM-I and FULL SVM in plain numpy, straight from the pseudo-code of
Ertekin, Bottou & Giles (2011), "Nonconvex online support vector machines", IEEE TPAMI 33(2)
§4-§7, with the paper's names: the oracle of tests/test_lasvm_nc_reference.py, which makes
the compiled solver (lasvm_cli/qp/lasvm_g_core.py) take the same steps.

The paper's blocks, as printed (b = 0 throughout, K the kernel matrix):

    LASVM-G PROCESS(i)
      1) alpha_i <- 0, g_i <- y_i - sum_{s in S} alpha_s K_is
      2) if g_i < 0: lambda = max{A_i - alpha_i, g_i / K_ii}
         else:       lambda = max{B_i - alpha_i, g_i / K_ii}
      3) alpha_i <- alpha_i + lambda; g_s <- g_s - lambda K_is for all s in S

    LASVM-G REPROCESS()
      1) i <- argmin_{s in S} g_s with alpha_s > A_s;  j <- argmax_{s in S} g_s with alpha_s < B_s
      2) bail out if (i, j) is not a tau-violating pair
      3) if g_i + g_j < 0: g <- g_i, t <- i   else: g <- g_j, t <- j
      4) if g < 0: lambda = max{A_t - alpha_t, g / K_tt}  else: lambda = min{B_t - alpha_t, g/K_tt}
      5) alpha_t <- alpha_t + lambda; g_s <- g_s - lambda K_ts for all s in S

    Gap target (8):  Ghat = sqrt(sum h_i^2 - (sum h_i)^2 / l),  h_i = C y_i g_i, l = #SV
    Gap (9):         G = -sum (alpha_i g_i + max(0, C g_i))
    CLEAN:           if n < m return; v <- |g_i|_+ over alpha_i = 0; sort v ascending;
                     g_threshold <- v[m]; remove x_i with alpha_i = 0 and |g_i|_+ >= g_threshold
    LASVM-G:         pick x_i; Threshold <- max(C, Ghat); PROCESS(x_i);
                     while Gap > Threshold: REPROCESS; periodically CLEAN
    LASVM-NC (5.2):  beta_i = C if y_i f(x_i) < s and #SV > S_thr else 0;
                     A_i = min(0, C y_i) - beta_i y_i, B_i = max(0, C y_i) - beta_i y_i;
                     then as LASVM-G
    LASVM-I (6):     z = y_i sum_j alpha_j K(x_i, x_j); if z > 1 or z < s: skip x_i;
                     else as LASVM-G
    FULL SVM (7):    LASVM-G without CLEAN

Where the print is wrong this file takes the corrections of docs/corrections.md, seed 001 (each
marked [fix] below, and stated again in docs/reproductions/seed-001.md): PROCESS's "max" for
g >= 0 is a min (a step to B_i or to the Newton point, not past it); eq. (9) is negative and does
not vanish at the optimum, so the gap is J_beta(w) - G_beta(alpha) of the CCCP sub-problem
(17), sum over S of C max(0, y_l g_l) - alpha_l g_l - beta_l y_l g_l; CLEAN ranks the non-SVs
by |g| (|g|_+ would never remove an outlier flagged with y = -1, whose g < 0) and removes
exactly n - m of them; a tau-violating pair without a bias is g_max - g_min > tau with g_max
and g_min clamped at 0 (the sumflag = 0 branch of Bottou's LASVM: each coordinate is its own
KKT condition, so i and j need not have opposite signs). What the paper leaves open: Ghat over
the SVs of S, 0 without any; the gap and the CLEAN over the expansion S; CLEAN every
``clean_every`` PROCESS calls keeping ``m`` non-SVs; at the end, CLEAN(0) (Table 1's 0 non-SVs)
except for FULL SVM. The while-loop also stops when REPROCESS bails out (the paper's need not
end); that is the only guard.

The initialisation stage (corrections 001-10): the paper's text has LASVM-NC run "a few online
convex iterations as the initialization stage" (beta_i = 0) before the nonconvex ones, S_thr
being the number of SVs that ends it; the printed block tests #SV > S_thr at every example, and
LASVM-I's block has no stage at all. ``start="convex"`` (the package's default) runs LASVM-G
iterations (beta_i = 0, no filter) for both until S holds more than S_thr SVs of each class,
and the ramp from then on, for good (LASVM-NC then flags every z < s); ``start="printed"`` is
the printed blocks.

No array is shared with the compiled solver; K is given whole (small problems only).
"""

import numpy as np

FULL_SVM, LASVM_G, LASVM_NC, LASVM_I = "full-svm", "lasvm-g", "lasvm-nc", "lasvm-i"


class ReferenceLasvm:
    """One run of ``variant`` over the kernel matrix ``K`` (float64; the caller passes the
    values the compiled solver sees) and labels ``y`` (+-1), by example index. Feed the
    examples with :meth:`online_iteration`; every call returns a record of what it did."""

    def __init__(self, K, y, C, variant, *, s=-1.0, S_thr=10, clean_every=50, m=100,
                 tau=1e-3, start="convex"):
        self.K = np.asarray(K, np.float64)
        self.y = np.asarray(y, np.float64)
        self.C, self.variant, self.s, self.S_thr = float(C), variant, float(s), int(S_thr)
        self.clean_every, self.m, self.tau = int(clean_every), int(m), float(tau)
        assert start in ("convex", "printed")
        self.start = start
        self.nonconvex = False  # the convex initialisation stage is over (start="convex")
        n = self.y.size
        # Initialization: alpha <- 0, beta <- 0, S empty (no seeding)
        self.alpha = np.zeros(n)
        self.beta = np.zeros(n)
        self.g = np.zeros(n)
        self.A = np.zeros(n)
        self.B = np.zeros(n)
        self.S = []  # the kernel expansion, example indices in insertion order
        self.pair = (0.0, 0.0)  # (g_min, g_max) of the last REPROCESS
        self.process_calls = 0  # PROCESS calls since the last CLEAN

    # -- quantities ---------------------------------------------------------------------------

    def f(self, i):
        """f(x_i) = sum_{s in S} alpha_s K_is (b = 0)."""
        S = np.array(self.S, np.int64)
        return float(self.alpha[S] @ self.K[S, i]) if S.size else 0.0

    def n_sv(self):
        return sum(1 for s in self.S if self.alpha[s] != 0.0)

    def stage_over(self):
        """The end of the convex initialisation stage: more than S_thr SVs of each class."""
        pos = sum(1 for s in self.S if self.alpha[s] != 0.0 and self.y[s] > 0)
        neg = self.n_sv() - pos
        return min(pos, neg) > self.S_thr

    def gap_target(self):
        """Ghat, eq. (8), over the l SVs of S: h = C y g."""
        sv = [s for s in self.S if self.alpha[s] != 0.0]
        if not sv:
            return 0.0
        h = self.C * self.y[sv] * self.g[sv]
        radicand = (h * h).sum() - h.sum() ** 2 / len(sv)
        return float(np.sqrt(radicand)) if radicand > 0.0 else 0.0

    def gap(self):
        """[fix] of eq. (9): J_beta(w) - G_beta(alpha) over S, the CCCP sub-problem's gap."""
        S = np.array(self.S, np.int64)
        if not S.size:
            return 0.0
        yg = self.y[S] * self.g[S]
        return float((self.C * np.maximum(0.0, yg) - self.alpha[S] * self.g[S]
                      - self.beta[S] * yg).sum())

    # -- the two direction searches -------------------------------------------------------------

    def _step(self, t, lam, bound):
        """alpha_t <- alpha_t + lambda (exactly the bound when clipped to it), then
        g_s <- g_s - lambda K_ts for all s in S."""
        self.alpha[t] = bound if bound is not None else self.alpha[t] + lam
        S = np.array(self.S, np.int64)
        self.g[S] -= lam * self.K[t, S]

    def _lambda(self, t, g):
        """Step 2 of PROCESS, step 4 of REPROCESS: the Newton step g / K_tt clipped to the box
        ([fix]: min toward B). Returns (lambda, the bound it was clipped to or None)."""
        newton = g / self.K[t, t]
        if g < 0:
            lo = self.A[t] - self.alpha[t]
            return (lo, self.A[t]) if lo > newton else (newton, None)
        hi = self.B[t] - self.alpha[t]
        return (hi, self.B[t]) if hi < newton else (newton, None)

    def PROCESS(self, i, f_i):
        """Insert x_i into S with alpha_i = 0, g_i = y_i - f_i, and take its step. Returns
        True when alpha_i moved."""
        self.S.append(i)
        self.alpha[i] = 0.0
        self.g[i] = self.y[i] - f_i
        lam, bound = self._lambda(i, self.g[i])
        if lam == 0.0:
            return False
        self._step(i, lam, bound)
        return True

    def REPROCESS(self):
        """One step on the coordinate of S with the larger KKT violation; returns the stepped
        example, or None when it bails out (no tau-violating pair)."""
        g_min, i = 0.0, None  # clamped at 0 ([fix], b = 0: see the module docstring)
        g_max, j = 0.0, None
        for s in self.S:
            if self.alpha[s] > self.A[s] and self.g[s] < g_min:
                g_min, i = self.g[s], s
            if self.alpha[s] < self.B[s] and self.g[s] > g_max:
                g_max, j = self.g[s], s
        self.pair = (g_min, g_max)
        if not g_max - g_min > self.tau:
            return None
        t, g = (i, g_min) if g_min + g_max < 0 else (j, g_max)
        lam, bound = self._lambda(t, g)
        self._step(t, lam, bound)
        return t

    def CLEAN(self, m):
        """Remove the n - m non-SVs of S with the largest |g| ([fix]) when n > m."""
        non_sv = [s for s in self.S if self.alpha[s] == 0.0]
        if len(non_sv) <= m:
            return []
        order = sorted(non_sv, key=lambda s: -abs(self.g[s]))
        removed = order[:len(non_sv) - m]
        gone = set(removed)
        self.S = [s for s in self.S if s not in gone]
        return removed

    # -- the online iteration -------------------------------------------------------------------

    def online_iteration(self, i):
        """Pick example x_i: LASVM-I's filter, LASVM-NC's beta_i and bounds, the gap target,
        PROCESS, REPROCESS while the gap exceeds the threshold, and CLEAN every clean_every
        PROCESS calls (not FULL SVM). Returns a dict: ``z``, ``ramp`` (False in the convex
        stage: a LASVM-G iteration), ``action`` ("skip" or "process"),
        ``beta``, ``process_step`` (alpha_i moved), ``reprocessed`` (the examples REPROCESS
        stepped on, in order), ``pairs`` (each step's (g_min, g_max)), ``bailed``,
        ``cleaned`` (the examples CLEAN removed)."""
        y, C = self.y, self.C
        f_i = self.f(i)
        z = y[i] * f_i
        rec = dict(z=z, action="process", beta=0.0, process_step=False, reprocessed=[],
                   pairs=[], bailed=False, cleaned=[])
        ramp = self.variant in (LASVM_NC, LASVM_I)
        if ramp and self.start == "convex" and not self.nonconvex:
            self.nonconvex = self.stage_over()
            ramp = self.nonconvex  # else a LASVM-G iteration
        rec["ramp"] = ramp
        if ramp and self.variant == LASVM_I and (z > 1 or z < self.s):
            rec["action"] = "skip"  # ignored: no PROCESS, no CLEAN count
            return rec
        if (ramp and self.variant == LASVM_NC and z < self.s
                and (self.start == "convex" or self.n_sv() > self.S_thr)):
            self.beta[i] = C  # an outlier of the ramp loss, frozen (eq. 16)
        self.A[i] = min(0.0, C * y[i]) - self.beta[i] * y[i]  # eq. (17)
        self.B[i] = max(0.0, C * y[i]) - self.beta[i] * y[i]
        rec["beta"] = self.beta[i]
        threshold = max(C, self.gap_target())
        rec["process_step"] = self.PROCESS(i, f_i)
        while self.gap() > threshold:
            t = self.REPROCESS()
            if t is None:
                rec["bailed"] = True
                break
            rec["reprocessed"].append(t)
            rec["pairs"].append(self.pair)
        self.process_calls += 1
        if self.variant != FULL_SVM and self.process_calls >= self.clean_every:
            rec["cleaned"] = self.CLEAN(self.m)
            self.process_calls = 0
        return rec

    def end(self):
        """End of the epoch: drop every non-SV of S (CLEAN(0)), except for FULL SVM."""
        if self.variant != FULL_SVM:
            self.CLEAN(0)
