"""LASVM's finishing step on the shared SMO loop (Bordes et al. 2005, §3.2 step 3: "REPROCESS
until delta <= tau"): the expansion S is a C-SVC dual of its own, solved
by lasvm_cli/qp's SMO loop with second-order working-set selection, from the online phase's
alpha and gradient, over the same kernel-row cache, with LIBSVM's shrinking.

Shrinking needs G_bar (LIBSVM's sum of C_j Q_tj over the variables at their upper bound), so
the start computes a row over S of every bounded support vector (the gradient itself comes from
the online phase); LaSVM 1.1's finishing pays about the same when it unshrinks. Without
shrinking the loop would need no such rows, but every step would cost O(|S|): on adult
(|S| = 11,000) the finishing then took 2.4 times as long as the whole LASVM run before.

The mapping (online core's signed form -> SMO's unsigned form), for each position p < n_S with
box [A_p, B_p] that has 0 at one end (LaSVM's boxes, or mirrored ones):

    s_p = +1 if A_p >= 0 else -1      (SMO's "y": the direction the variable can move)
    a_p = s_p alpha_p in [0, C_p],  C_p = B_p - A_p,  p_p = -y_p s_p   (linear term)

so that 0.5 a'Qa + p'a = -W(alpha), s'a = sum alpha = 0, and back: alpha = s a, g = -s G. The
SMO stops when the maximal violation m(a) - M(a) < eps (LIBSVM's rule), that is delta < tau.
Without a bias there is no equality constraint and no SMO: the core's REPROCESS loop finishes.
``--finishing reprocess`` and ``reprocess-shrinking`` run the core's REPROCESS loop with a bias
too (the paper's step 3, without and with the shrinking of its implementation notes).

A finishing run is resumable like the online phase: :meth:`SmoFinish.arrays` and
:meth:`SmoFinish.load` carry the SMO state between chunks (the positions are the cache's).
"""

import numpy as np

from ..qp import RUNNING, WS_SO, SmoScalars, SmoState
from ..qp.online_core import (CHUNK, MODE_EVICT, MODE_FINISH, MODE_FINISH_SHRINK, LasvmScalars,
                              lasvm_run)
from ..qp.smo import make_state, smo_init, smo_run

PREFIX = "smo_"  # names of the SMO arrays in a saved LASVM state


def start_finishing(st, kc, kd, kp, tau, saved=None, rule="smo"):
    """The finishing run of an online core state: SmoFinish with a bias, ReprocessFinish
    without or with ``rule="reprocess"`` (the paper's step 3 as printed: REPROCESS until
    delta <= tau) or ``rule="reprocess-shrinking"`` (the same stop, REPROCESS on an active
    part of S with the paper's shrinking, LaSVM 1.1's lasvm_finish); ``saved``: arrays of a
    run saved mid-way (a dict holding no SMO arrays starts afresh; the shrinking run's state
    is the core's own)."""
    if rule == "reprocess-shrinking":
        return ReprocessFinish(st, kc, kd, kp, tau, shrinking=True)
    if LasvmScalars(st).nobias or rule == "reprocess":
        return ReprocessFinish(st, kc, kd, kp, tau)
    return (saved is not None and SmoFinish.load(st, kc, kd, kp, tau, saved)) or \
        SmoFinish(st, kc, kd, kp, tau)


def _core(mode, st, kc, kd, kp, tau, n_iter=0):
    return lasvm_run(st, kc, kd, kp, np.int64(mode), np.int64(n_iter), np.int64(0), np.int64(1),
                     float(tau), np.inf, np.int64(1))


class _Finishing:
    """A finishing run: ``step(n)`` until it returns True; ``arrays()`` to save it."""

    def run(self, progress=None):
        while not self.step():
            if progress is not None:
                progress()
        return self


class ReprocessFinish(_Finishing):
    """The online core's REPROCESS loop until no tau-violating pair (variable, without a bias)
    is left, one REPROCESS per step (its state is the core's own); ``shrinking``: on an active
    part of S, with the paper's shrinking (online_core.reprocess_shrinking_run)."""

    def __init__(self, st, kc, kd, kp, tau, shrinking=False):
        self.args = (st, kc, kd, kp, tau)
        self.mode = MODE_FINISH_SHRINK if shrinking else MODE_FINISH

    def step(self, n_iter=CHUNK):
        return bool(_core(self.mode, *self.args, n_iter))

    def arrays(self):
        return {}


class SmoFinish(_Finishing):
    """The SMO run over the expansion of an online core state ``st`` (cache kc)."""

    def __init__(self, st, kc, kd, kp, tau, smo=None):
        self.st, self.kc, self.kd, self.kp = st, kc, kd, kp
        self.tau = float(tau)
        self.smo = smo if smo is not None else self._start()
        self.status = RUNNING
        self._iter0 = SmoScalars(self.smo).iterations

    def _start(self):
        st = self.st
        n = LasvmScalars(st).n_s
        A, B, alpha = st.A[:n], st.B[:n], st.alpha[:n]
        s = np.where(A >= 0.0, 1.0, -1.0)
        if np.any((A < 0.0) & (B > 0.0)):
            raise ValueError("finishing needs boxes with 0 at one end")
        examples = st.pos2ex[:n]
        smo = make_state(self.kd, self.kp, s, -st.y[examples] * s, B - A, alpha0=s * alpha,
                         ws=WS_SO, eps=self.tau, var_example=examples)
        smo.G[:] = -s * st.g[:n]  # the online phase's gradient: no row to recompute it
        smo_init(smo, self.kc, self.kd, self.kp, True)  # G_bar: rows of the bounded SVs
        return smo

    def step(self, n_iter=CHUNK):
        """At most n_iter SMO iterations; returns True when finished (the online core's state
        then holds the result, with the examples that cannot move evicted from S)."""
        it = SmoScalars(self.smo).iterations
        self.status = smo_run(self.smo, self.kc, self.kd, self.kp, np.int64(n_iter))
        done = SmoScalars(self.smo).iterations - it
        LasvmScalars(self.st).steps += done
        LasvmScalars(self.st).finish_steps += done
        if self.status == RUNNING:
            return False
        self._write_back()
        return True

    def _write_back(self):
        st, smo = self.st, self.smo
        n = smo.y.shape[0]
        s, C = smo.y, smo.C
        st.alpha[:n] = s * smo.alpha
        st.g[:n] = -s * smo.G
        st.A[:n] = np.where(s > 0, 0.0, -C)
        st.B[:n] = np.where(s > 0, C, 0.0)
        _core(MODE_EVICT, st, self.kc, self.kd, self.kp, self.tau)

    # -- save / restore ------------------------------------------------------------------------

    def arrays(self):
        return {PREFIX + f: np.array(getattr(self.smo, f)) for f in SmoState._fields if f != "work"}

    @classmethod
    def load(cls, st, kc, kd, kp, tau, d):
        """The finishing run saved by :meth:`arrays` (None when ``d`` holds none)."""
        if PREFIX + "alpha" not in d:
            return None
        smo = SmoState(**{f: np.array(d[PREFIX + f]) for f in SmoState._fields if f != "work"},
                       work=np.zeros(2 * len(d[PREFIX + "y"])))  # scratch, sized by this version
        return cls(st, kc, kd, kp, tau, smo)
