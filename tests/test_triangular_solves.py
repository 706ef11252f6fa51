"""The compiled triangular solves (src_c/fastomkl_linalg_impl.h) against SciPy's, on every order
that reaches each of their loops (the 16- and 4-wide dot products, the four-row blocks and the rows
left over) and with a row length longer than the order, as the growing factors have."""
import numpy as np
import pytest
from scipy.linalg import solve_triangular

from fastomkl._core.experts.nystrom import _triangular_solve


def factor(m, ld, rng, lower):
    """A well-conditioned triangular m x m block in an (m + 2) x ld array, garbage around it."""
    T = rng.standard_normal((m + 2, ld)) * 1e3          # outside the block: must not be read
    block = np.tril(rng.standard_normal((m, m)) / np.sqrt(m + 1), -1) + np.diag(
        rng.uniform(0.5, 2.0, m))
    T[:m, :m] = block if lower else block.T
    return T, T[:m, :m].copy()


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 33, 64, 99, 130])
@pytest.mark.parametrize("lower", [True, False])
def test_solve_matches_scipy(m, lower):
    rng = np.random.default_rng(m)
    for ld in (m, m + 3):
        T, block = factor(m, ld, rng, lower)
        b = rng.standard_normal(m + 2)
        x = b.copy()
        _triangular_solve(T, x, m, lower)
        want = (solve_triangular(block, b[:m], lower=True) if lower
                else solve_triangular(block, b[:m], lower=False, trans="T"))
        np.testing.assert_allclose(x[:m], want, rtol=1e-12, atol=1e-12)
        assert np.array_equal(x[m:], b[m:])          # nothing past the order is written


def test_solve_refuses_an_order_beyond_the_arrays():
    with pytest.raises(ValueError, match="does not fit"):
        _triangular_solve(np.eye(3), np.ones(3), 4, True)
