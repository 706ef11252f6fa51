"""The compiled Cholesky downdate (src_c/fastomkl_linalg_impl.h, fastomkl_chol_drop_first) against
NumPy: the factor of a Gram matrix without its first row and column, and the solves it carries,
on every order that reaches its loops (the four-row blocks, the rows left over) and with a row
length longer than the order, as the windowed Kernel-AWV's factors have."""
import numpy as np
import pytest

from fastomkl._core.experts.kernel_awv import _chol_drop_first


def spd(n, rng):
    """A Gaussian-kernel Gram matrix plus a ridge: the matrices the models downdate."""
    X = rng.uniform(-1, 1, (n, 3))
    return np.exp(-((X[:, None] - X[None]) ** 2).sum(-1)) + 0.1 * np.eye(n)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 8, 9, 12, 13, 17, 40, 101])
def test_downdate_matches_numpy(n):
    rng = np.random.default_rng(n)
    A = spd(n, rng)
    b, c = rng.standard_normal(n + 2), rng.standard_normal(n + 2)
    for ld in (n, n + 3):
        L = rng.standard_normal((n + 2, ld)) * 1e3          # outside the block: never touched
        L[:n, :n] = np.linalg.cholesky(A)
        before = L.copy()
        u, w = b.copy(), c.copy()
        u[:n] = np.linalg.solve(L[:n, :n], b[:n])
        w[:n] = np.linalg.solve(L[:n, :n], c[:n])
        outside_u, outside_w = u[n:].copy(), w[n:].copy()
        _chol_drop_first(L, u, w, n)
        m = n - 1
        want = np.linalg.cholesky(A[1:, 1:]) if m else np.zeros((0, 0))
        np.testing.assert_allclose(np.tril(L[:m, :m]), want, rtol=1e-12, atol=1e-12)
        assert np.array_equal(np.triu(L[:m, :m], 1), np.zeros((m, m)))
        if m:
            np.testing.assert_allclose(u[:m], np.linalg.solve(want, b[1:n]), rtol=1e-10,
                                       atol=1e-12)
            np.testing.assert_allclose(w[:m], np.linalg.solve(want, c[1:n]), rtol=1e-10,
                                       atol=1e-12)
        assert np.array_equal(L[n:], before[n:]) and np.array_equal(L[:, n:], before[:, n:])
        assert np.array_equal(u[n:], outside_u) and np.array_equal(w[n:], outside_w)


def test_downdate_without_a_second_vector():
    rng = np.random.default_rng(1)
    A = spd(9, rng)
    L = np.linalg.cholesky(A)
    b = rng.standard_normal(9)
    u = np.linalg.solve(L, b)
    _chol_drop_first(L, u, None, 9)
    want = np.linalg.cholesky(A[1:, 1:])
    np.testing.assert_allclose(np.tril(L[:8, :8]), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(u[:8], np.linalg.solve(want, b[1:]), rtol=1e-10, atol=1e-12)


def test_a_thousand_downdates_stay_the_factor_of_the_window():
    """Rounding does not pile up: a window of 30 inputs slid over 1,000 more (each round the
    oldest leaves by the downdate, the newest joins by a bordered row) keeps the factor of its
    Gram matrix and the solve of its targets, to the precision of a fresh factorisation."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (1030, 3))
    y = rng.standard_normal(1030)
    gram = lambda rows: np.exp(-((rows[:, None] - rows[None]) ** 2).sum(-1)) + 0.1 * np.eye(len(rows))  # noqa: E731,E501
    W = 30
    L = np.zeros((W, W))
    L[:W, :W] = np.linalg.cholesky(gram(X[:W]))
    q = np.linalg.solve(L, y[:W])
    for t in range(W, len(X)):
        _chol_drop_first(L, q, None, W)
        window = X[t - W + 1:t]
        k = np.exp(-((window - X[t]) ** 2).sum(-1))
        s = np.linalg.solve(L[:W - 1, :W - 1], k)
        L[W - 1, :W - 1] = s
        L[W - 1, W - 1] = np.sqrt(1.1 - s @ s)
        q[W - 1] = (y[t] - s @ q[:W - 1]) / L[W - 1, W - 1]
    want = np.linalg.cholesky(gram(X[-W:]))
    np.testing.assert_allclose(L, want, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(q, np.linalg.solve(want, y[-W:]), rtol=1e-8, atol=1e-10)


def test_downdate_refuses_an_order_beyond_the_arrays():
    with pytest.raises(ValueError, match="does not fit"):
        _chol_drop_first(np.eye(3), np.ones(3), None, 4)
    with pytest.raises(ValueError, match="does not fit"):
        _chol_drop_first(np.eye(3), np.ones(3), None, 0)
