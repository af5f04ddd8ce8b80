"""SO's and Solver_NU's working-set selections (branch-free scans) against LIBSVM's
``Solver::select_working_set`` and ``Solver_NU::select_working_set`` written out as their
loops, on states full of ties."""

import numpy as np
import pytest

from lasvm_cli.numerics import cache as kc
from lasvm_cli.qp import ACTIVE, EPS, FREE, LOWER, UPPER
from lasvm_cli.qp import select as sel
from lasvm_cli.qp.smo import make_state

from .conftest import precomputed

INF = float("inf")
TAU = 1e-12


def libsvm_wss2(y, G, status, QD, K, active, eps):
    """svm.cpp's select_working_set (Q_ij = y_i y_j K_ij), loop for loop, ties included."""
    Gmax, Gmax_idx = -INF, -1
    for t in range(active):
        if y[t] == 1:
            if status[t] != UPPER and -G[t] >= Gmax:
                Gmax, Gmax_idx = -G[t], t
        elif status[t] != LOWER and G[t] >= Gmax:
            Gmax, Gmax_idx = G[t], t
    i = Gmax_idx
    if i == -1:
        return -1, -1
    Gmax2, Gmin_idx, obj_diff_min = -INF, -1, INF
    for j in range(active):
        if y[j] == 1:
            if status[j] == LOWER:
                continue
            grad_diff = Gmax + G[j]
            if G[j] >= Gmax2:
                Gmax2 = G[j]
        else:
            if status[j] == UPPER:
                continue
            grad_diff = Gmax - G[j]
            if -G[j] >= Gmax2:
                Gmax2 = -G[j]
        if grad_diff > 0:
            quad_coef = QD[i] + QD[j] - 2.0 * K[i, j]
            obj_diff = -(grad_diff * grad_diff) / (quad_coef if quad_coef > 0 else TAU)
            if obj_diff <= obj_diff_min:
                Gmin_idx, obj_diff_min = j, obj_diff
    if Gmax + Gmax2 < eps or Gmin_idx == -1:
        return -1, -1
    return i, Gmin_idx


def tie_state(seed):
    """A random SMO state full of ties (few distinct kernel values, gradients and statuses);
    returns the state, its cache and kernel, the cache's float32 kernel matrix and active size."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 70))
    M = rng.choice([0.25, 0.5, 1.0], size=(n, n))  # few distinct values: many equal gains
    M = (M + M.T) / 2
    np.fill_diagonal(M, 1.0)
    kd, kp = precomputed(M)
    st = make_state(kd, kp, rng.choice([-1.0, 1.0], n), -np.ones(n), np.ones(n))
    st.G[:] = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], n)  # ties in the maximal violation too
    st.status[:] = rng.choice([LOWER, UPPER, FREE], n)
    active = int(rng.integers(1, n + 1))
    st.ist[ACTIVE] = active
    K32 = M.astype(np.float32).astype(np.float64)  # the cache's float32 rows
    return st, kc.make_cache(n, 1), kd, kp, K32, active


@pytest.mark.parametrize("seed", range(40))
def test_so_selection_is_libsvms_including_ties(seed):
    st, c, kd, kp, K32, active = tie_state(seed)
    i, j, _ = sel.select_so(st, c, kd, kp)
    assert (i, j) == libsvm_wss2(st.y, st.G, st.status, st.QD, K32, active, st.fst[EPS])


def libsvm_nu_wss(y, G, status, QD, K, active, eps):
    """svm.cpp's Solver_NU::select_working_set, loop for loop, ties included."""
    Gmaxp, Gmaxp_idx, Gmaxn, Gmaxn_idx = -INF, -1, -INF, -1
    for t in range(active):
        if y[t] == 1:
            if status[t] != UPPER and -G[t] >= Gmaxp:
                Gmaxp, Gmaxp_idx = -G[t], t
        elif status[t] != LOWER and G[t] >= Gmaxn:
            Gmaxn, Gmaxn_idx = G[t], t
    ip, inn = Gmaxp_idx, Gmaxn_idx
    Gmaxp2, Gmaxn2, Gmin_idx, obj_diff_min = -INF, -INF, -1, INF
    for j in range(active):
        if y[j] == 1:
            if status[j] == LOWER:
                continue
            grad_diff = Gmaxp + G[j]
            if G[j] >= Gmaxp2:
                Gmaxp2 = G[j]
            i = ip
        else:
            if status[j] == UPPER:
                continue
            grad_diff = Gmaxn - G[j]
            if -G[j] >= Gmaxn2:
                Gmaxn2 = -G[j]
            i = inn
        if grad_diff > 0:
            quad_coef = QD[i] + QD[j] - 2.0 * K[i, j]
            obj_diff = -(grad_diff * grad_diff) / (quad_coef if quad_coef > 0 else TAU)
            if obj_diff <= obj_diff_min:
                Gmin_idx, obj_diff_min = j, obj_diff
    if max(Gmaxp + Gmaxp2, Gmaxn + Gmaxn2) < eps or Gmin_idx == -1:
        return -1, -1
    return (ip if y[Gmin_idx] == 1 else inn), Gmin_idx


@pytest.mark.parametrize("seed", range(40))
def test_nu_selection_is_libsvms_including_ties(seed):
    from lasvm_cli.qp.smo_nu import select_nu
    st, c, kd, kp, K32, active = tie_state(100 + seed)
    i, j, _ = select_nu(st, c, kd, kp)
    assert (i, j) == libsvm_nu_wss(st.y, st.G, st.status, st.QD, K32, active, st.fst[EPS])


@pytest.mark.parametrize("seed", range(4))
def test_first_argmax_above_is_the_first_largest(seed):
    """select.first_argmax_above (an integer max over order keys) against a plain loop: signed
    values with many ties, -0.0 and +0.0, infinities, a floor that nothing or everything
    exceeds, empty and one-element ranges. (Keys put -0.0 below +0.0, where a float compare
    ties them: below a floor of 0 or more that never shows; with a lower floor callers store
    +0.0, as here.)"""
    from lasvm_cli.qp.select import first_argmax_above

    rng = np.random.default_rng(seed)
    v = np.round(rng.standard_normal(300), 1)
    v[rng.random(300) < 0.1] = -0.0
    v[rng.random(300) < 0.1] = 0.0
    if seed == 3:
        v[[7, 50]] = np.inf
        v[9] = -np.inf
    if seed == 2:  # the largest past the last whole block of the search (64 entries), or in it
        v[290], v[250] = 9.0, 8.0
    if seed < 2:  # alone at the first entry of a block
        v[64 * seed] = 9.0
    for floor in (-1.0, 0.0, 0.5, -np.inf, 1e9, v.max()):
        for n in (0, 1, 2, 37, 63, 64, 65, 128, 129, 255, 256, 300):
            w = v if floor >= 0.0 else v + 0.0
            best_t, best = -1, floor
            for t in range(n):
                if w[t] > best:
                    best_t, best = t, w[t]
            t, m = first_argmax_above(w, n, floor)
            assert (t, m) == (best_t, best), (floor, n)


def libsvm_violator(y, G, status, n):
    """The first loop of svm.cpp's select_working_set, and its second loop's Gmax2."""
    i, m, low = -1, -INF, -INF
    for t in range(n):
        in_up = status[t] != UPPER if y[t] == 1 else status[t] != LOWER
        in_low = status[t] != LOWER if y[t] == 1 else status[t] != UPPER
        if in_up and -y[t] * G[t] >= m:
            i, m = t, -y[t] * G[t]
        if in_low and y[t] * G[t] >= low:
            low = y[t] * G[t]
    return i, m, low


def libsvm_mvp(y, G, status, n):
    """LIBSVM 2.71's select_working_set (the maximal violating pair): (i, m, j, -M)."""
    i, m, j, low = -1, -INF, -1, -INF
    for t in range(n):
        if y[t] > 0:
            if status[t] != UPPER and -G[t] >= m:
                i, m = t, -G[t]
            if status[t] != LOWER and G[t] >= low:
                j, low = t, G[t]
        else:
            if status[t] != LOWER and G[t] >= m:
                i, m = t, G[t]
            if status[t] != UPPER and -G[t] >= low:
                j, low = t, -G[t]
    return i, m, j, low


@pytest.mark.parametrize("seed", range(12))
def test_so_lanes_are_libsvms_loops(seed):
    """qp/so_lanes.py's one-pass scans (eight positions per vector lane, merged at the end)
    against LIBSVM's loops (and MVP's pair, LIBSVM 2.71's): every length from 0 to 70 and past
    the lanes' multiples of 8, gradients full of ties including -0.0 against +0.0 (i and m bit
    for bit, the sign of m included), all-bounded states (an empty I_up or I_low), rows in
    float32 and float64 at an offset into the cache's buffer."""
    from lasvm_cli.qp import SmoState
    from lasvm_cli.qp.so_lanes import max_violator, mvp_pair, so_partner

    rng = np.random.default_rng(seed)
    for n in [*range(71), 127, 128, 129, 200]:
        l = n + int(rng.integers(0, 9))  # positions past n are not looked at
        y = rng.choice([-1.0, 1.0], l)
        G = rng.choice([-1.0, -0.5, -0.0, 0.0, 0.5, 2.0], l) if seed % 2 else rng.standard_normal(l)
        status = rng.choice([LOWER, UPPER, FREE] if seed % 3 else [LOWER, UPPER], l).astype(np.int8)
        QD = rng.choice([1.0, 0.5, 0.25], l)
        bi = int(rng.integers(0, 5))
        c = kc.make_cache(l + 8, 1, dtype=np.float32 if seed < 6 else np.float64)
        c.buf[bi:bi + l] = rng.choice([0.25, 0.5, 0.75, 1.0], l)
        z = np.zeros(l)
        st = SmoState(z, y, G, z, z, z, QD, status, np.zeros(1, np.int64), z, z)
        i, m, low = max_violator(st, n)
        ri, rm, rlow = libsvm_violator(y, G, status, n)
        assert (i, m, low) == (ri, rm, rlow) and np.signbit(m) == np.signbit(rm), n
        pair, expected = mvp_pair(st, n), libsvm_mvp(y, G, status, n)
        assert pair == expected, n
        assert np.signbit(pair[1]) == np.signbit(expected[1]), n
        assert np.signbit(pair[3]) == np.signbit(expected[3]), n
        if i < 0:
            continue
        K = np.zeros((l, l))
        K[i] = c.buf[bi:bi + l].astype(np.float64)
        j = so_partner(st, c, bi, i, m, n)
        expected = libsvm_wss2(y, G, status, QD, K, n, -INF)[1]
        assert j == expected, n


@pytest.mark.parametrize("seed", range(8))
def test_nu_lanes_are_libsvms_loops(seed):
    """Solver_NU's two scans in vector lanes (so_lanes.nu_max_violators / nu_partner) against
    Solver_NU::select_working_set's loops: every length from 0 to 70 and past it, ties with
    -0.0 and +0.0, a sign with no candidate, the two rows at different offsets."""
    from lasvm_cli.qp import SmoState
    from lasvm_cli.qp.so_lanes import nu_max_violators, nu_partner

    rng = np.random.default_rng(200 + seed)
    for n in [*range(71), 128, 133]:
        l = n + int(rng.integers(0, 9))
        y = rng.choice([-1.0, 1.0], l)
        if seed % 4 == 3:
            y[:] = 1.0  # no y = -1 at all
        G = rng.choice([-1.0, -0.5, -0.0, 0.0, 0.5, 2.0], l) if seed % 2 else rng.standard_normal(l)
        status = rng.choice([LOWER, UPPER, FREE], l).astype(np.int8)
        QD = rng.choice([1.0, 0.5, 0.25], l)
        c = kc.make_cache(l + 8, 1, dtype=np.float32 if seed < 4 else np.float64)
        bp, bn = int(rng.integers(0, 4)), l + int(rng.integers(0, 4))
        c.buf[bp:bp + l] = rng.choice([0.25, 0.5, 0.75, 1.0], l)
        c.buf[bn:bn + l] = rng.choice([0.25, 0.5, 0.75, 1.0], l)
        z = np.zeros(l)
        st = SmoState(z, y, G, z, z, z, QD, status, np.zeros(1, np.int64), z, z)
        ip, mp, inn, mn = nu_max_violators(st, n)
        rp, rmp, rn, rmn = -1, -INF, -1, -INF
        for t in range(n):
            if y[t] == 1 and status[t] != UPPER and -G[t] >= rmp:
                rp, rmp = t, -G[t]
            elif y[t] == -1 and status[t] != LOWER and G[t] >= rmn:
                rn, rmn = t, G[t]
        assert (ip, mp, inn, mn) == (rp, rmp, rn, rmn), n
        assert np.signbit(mp) == np.signbit(rmp) and np.signbit(mn) == np.signbit(rmn), n
        if ip < 0 and inn < 0:
            continue
        if inn < 0:  # select_nu fetches the one row there is for both signs
            bn = bp
        if ip < 0:
            bp = bn
        K = np.zeros((l, l))
        K[max(ip, 0)] = c.buf[bp:bp + l]
        K[max(inn, 0)] = c.buf[bn:bn + l]
        i, j, viol = nu_partner(st, c, bp, bn, ip, inn, mp, mn, n)
        expected = libsvm_nu_wss(y, G, status, QD, K, n, -INF)
        assert (i, j) == expected or (j == -1 and expected == (-1, -1)), n
        gains = [(mp if y[t] == 1 else mn) + y[t] * G[t] for t in range(n)
                 if (status[t] != LOWER if y[t] == 1 else status[t] != UPPER)]
        assert viol == max(gains, default=-INF), n
