"""The random-feature kernel's fused vector sine-cosine against NumPy's float64 sin and cos.

tests/test_isa_variants.py runs this file again under every instruction-set variant.
"""
import numpy as np
import pytest

from fastomkl._core.features.rff import RFFBank, _sincos, transform_many

LIMIT = 2.0 ** 20          # beyond it, lanes are recomputed by glibc (src_c/fastomkl_sincos.h)


def ulps(got, want):
    """|got - want| in units in the last place of `want`."""
    return np.abs(got - want) / np.spacing(np.abs(want))


def assert_close(x, got, want):
    """At most 4 ulp, or 2e-16 absolute where the function is within 1e-6 of a zero."""
    err = np.abs(got - want)
    bad = (err > 4 * np.spacing(np.abs(want))) & ~((np.abs(want) < 1e-6) & (err <= 2e-16))
    assert not bad.any(), f"x = {x[bad][:5]}: got {got[bad][:5]}, want {want[bad][:5]}"


def edge_cases():
    k = np.arange(-4000, 4001)
    boundary = np.array([LIMIT, np.nextafter(LIMIT, 0), np.nextafter(LIMIT, np.inf), 1.5 * LIMIT])
    huge = np.array([1e7, 123456789.0, 1e15, 2.0 ** 52 + 1, 1e22, 1e100, 1e250, 1.7e308])
    tiny = np.array([0.0, 5e-324, 1e-300, 1e-20, 1e-8, 1e-3])
    near_zeros = np.concatenate([k * (np.pi / 4), np.nextafter(k * (np.pi / 4), np.inf),
                                 (np.arange(1, 200) * 1e4) * (np.pi / 2)])
    one_side = np.concatenate([boundary, huge, tiny, near_zeros])
    return np.concatenate([one_side, -one_side])


@pytest.mark.parametrize("points", ["uniform", "edges"])
def test_within_4_ulp_of_numpy(points):
    x = (np.random.default_rng(0).uniform(-1e3, 1e3, 10 ** 6) if points == "uniform"
         else edge_cases())
    s, c = _sincos(x)
    assert_close(x, s, np.sin(x))
    assert_close(x, c, np.cos(x))


def test_uniform_points_are_mostly_exact():
    """Typical error well under the bound: a reduction or polynomial fault shows here first."""
    x = np.random.default_rng(1).uniform(-1e3, 1e3, 10 ** 5)
    s, c = _sincos(x)
    assert max(ulps(s, np.sin(x)).max(), ulps(c, np.cos(x)).max()) <= 3
    assert np.mean(s == np.sin(x)) > 0.7 and np.mean(c == np.cos(x)) > 0.7


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 9, 17])
def test_every_length_and_shape(n):
    x = np.linspace(-7.0, 11.0, n)
    s, c = _sincos(x)
    np.testing.assert_allclose(s, np.sin(x), rtol=0, atol=5e-16)
    np.testing.assert_allclose(c, np.cos(x), rtol=0, atol=5e-16)
    s2, c2 = _sincos(x.reshape(1, n, 1))
    assert s2.shape == c2.shape == (1, n, 1)


def test_features_with_lanes_beyond_the_reduction_range():
    """The kernel's projections W x beyond 2^20 take glibc's path lane by lane, next to lanes that
    do not, in one vector: with d = 1 the projection is one exact product, as in NumPy."""
    D = 19
    w = np.geomspace(1e-3, 1e9, D) * np.where(np.arange(D) % 3 == 0, -1.0, 1.0)
    bank = RFFBank(w.reshape(1, D, 1))
    X = np.array([[0.7], [-3.1], [1234.5]])
    out = np.empty((len(X), 1, 2 * D))
    transform_many(bank, X, out)
    proj = X * w                                     # (n, D)
    want = np.concatenate([np.cos(proj), np.sin(proj)], axis=1) / np.sqrt(D)
    assert (np.abs(proj) > LIMIT).any() and (np.abs(proj) < LIMIT).any()
    np.testing.assert_allclose(out[:, 0], want, rtol=0, atol=1e-16)
