"""Pure two-variable steps against brute force: feasible, never worse, as good as a fine grid."""

import numpy as np
import pytest

from lasvm_cli.qp.steps import pair_gain, step_libsvm, step_pair


def f_signed(a, g0, a0, K2):
    """Dual change of the signed problem for moving (alpha_i, alpha_j) from a0 to a."""
    d = a - a0
    return d @ g0 - 0.5 * d @ K2 @ d


def random_pair(rng):
    Z = rng.standard_normal((2, 3))
    K2 = Z @ Z.T
    if rng.random() < 0.2:
        K2 = np.ones((2, 2)) * K2[0, 0]  # kappa = 0 (duplicate points)
    y = rng.choice([-1.0, 1.0], 2)
    C = rng.uniform(0.1, 2.0, 2)
    a = np.where(rng.random(2) < 0.3, np.where(rng.random(2) < 0.5, 0.0, C),
                 rng.uniform(0, 1, 2) * C)
    G = rng.standard_normal(2)  # LIBSVM gradient of the two variables
    return K2, y, C, a, G


@pytest.mark.parametrize("seed", range(4))
def test_step_libsvm_feasible_and_optimal(seed):
    rng = np.random.default_rng(seed)
    for _ in range(300):
        K2, y, C, a, G = random_pair(rng)
        Q2 = np.outer(y, y) * K2
        quad = K2[0, 0] + K2[1, 1] - 2 * K2[0, 1]
        ai, aj = step_libsvm(a[0], a[1], y[0], y[1], G[0], G[1], C[0], C[1], quad)
        new = np.array([ai, aj])
        assert np.all(new >= -1e-12) and np.all(new <= C + 1e-12)
        assert abs(y @ new - y @ a) < 1e-12

        def obj(v):  # change of 0.5 a'Qa + p'a restricted to the pair, given G at a
            d = v - a
            return G @ d + 0.5 * d @ Q2 @ d

        assert obj(new) <= 1e-12
        # brute force over the feasible segment a + t (y_j, -y_i)... i.e. y'd = 0
        ts = np.linspace(-4, 4, 40001)
        cand = a[None, :] + ts[:, None] * np.array([y[0], -y[1]])[None, :] * 1.0
        ok = np.all((cand >= 0) & (cand <= C), axis=1)
        if quad > 1e-9 and ok.any():
            d = cand[ok] - a
            best = (d @ G + 0.5 * np.einsum("ni,ij,nj->n", d, Q2, d)).min()
            assert obj(new) <= best + 1e-6


@pytest.mark.parametrize("seed", range(4))
def test_pair_gain_matches_objective_and_grid(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(300):
        K2, y, C, a, G = random_pair(rng)
        al = y * a                    # signed alpha
        g = -y * G                    # signed gradient (y_i G_i = -g_i)
        A = np.minimum(0, y * C)
        B = np.maximum(0, y * C)
        kappa = K2[0, 0] + K2[1, 1] - 2 * K2[0, 1]
        gain, mu = pair_gain(g[0], g[1], al[0], al[1], A[0], B[0], A[1], B[1], kappa)
        new = al + mu * np.array([1.0, -1.0])
        assert np.all(new >= A - 1e-12) and np.all(new <= B + 1e-12)
        assert gain >= -1e-15
        assert gain == pytest.approx(f_signed(new, g, al, K2), abs=1e-12)
        L = max(A[0] - al[0], al[1] - B[1])
        U = min(B[0] - al[0], al[1] - A[1])
        mus = np.linspace(L, U, 2001)
        d = mus[:, None] * np.array([1.0, -1.0])[None, :]
        grid = (d @ g - 0.5 * np.einsum("ni,ij,nj->n", d, K2, d)).max()
        assert gain >= grid - 1e-9


def test_step_pair_feasible_and_never_worse():
    rng = np.random.default_rng(9)
    for _ in range(500):
        K2, y, C, a, G = random_pair(rng)
        al, g = y * a, -y * G
        A, B = np.minimum(0, y * C), np.maximum(0, y * C)
        if g[0] < g[1]:
            continue
        kappa = K2[0, 0] + K2[1, 1] - 2 * K2[0, 1]
        lam = step_pair(g[0], g[1], al[0], al[1], B[0], A[1], kappa)
        new = al + lam * np.array([1.0, -1.0])
        assert lam >= 0
        assert np.all(new >= A - 1e-12) and np.all(new <= B + 1e-12)
        assert f_signed(new, g, al, K2) >= -1e-12
        # same point as the gain's optimum when the direction is the ascent one
        gain, mu = pair_gain(g[0], g[1], al[0], al[1], A[0], B[0], A[1], B[1], kappa)
        if kappa > 1e-9:
            assert lam == pytest.approx(mu, abs=1e-9)


def test_libsvm_and_signed_steps_agree():
    """The unsigned LIBSVM step and the signed gain step move to the same point."""
    rng = np.random.default_rng(11)
    for _ in range(500):
        K2, y, C, a, G = random_pair(rng)
        kappa = K2[0, 0] + K2[1, 1] - 2 * K2[0, 1]
        if kappa < 1e-6:
            continue
        ai, aj = step_libsvm(a[0], a[1], y[0], y[1], G[0], G[1], C[0], C[1], kappa)
        al, g = y * a, -y * G
        A, B = np.minimum(0, y * C), np.maximum(0, y * C)
        _, mu = pair_gain(g[0], g[1], al[0], al[1], A[0], B[0], A[1], B[1], kappa)
        np.testing.assert_allclose(y * np.array([ai, aj]), al + mu * np.array([1.0, -1.0]),
                                   atol=1e-9)
