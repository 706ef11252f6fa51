"""Kernels: exact values, spectral samplers (Monte Carlo), converters and the papers' dictionaries."""
import math

import numpy as np
import pytest

from fastomkl import (Cauchy, Gaussian, Laplacian, Matern, RandomFourierFeatures, paper000_dictionary,
                      paper001_dictionary, paper003_dictionary)
from fastomkl.kernels import kernel_from_dict


def test_exact_values_follow_the_stated_convention():
    x, y = np.array([0.3, -1.0, 2.0]), np.array([1.0, 0.5, 1.5])
    d = x - y
    assert Gaussian(1.7)(x, y) == pytest.approx(math.exp(-d @ d / (2 * 1.7 ** 2)), abs=1e-15)
    assert Laplacian(0.8)(x, y) == pytest.approx(math.exp(-np.abs(d).sum() / 0.8), abs=1e-15)
    assert Cauchy(1.3)(x, y) == pytest.approx(np.prod(1 / (1 + (d / 1.3) ** 2)), abs=1e-15)
    K = Gaussian(1.0).gram(np.vstack([x, y]))
    assert K.shape == (2, 2) and np.allclose(np.diag(K), 1.0)


@pytest.mark.parametrize("kernel", [Gaussian(0.8), Laplacian(1.5), Cauchy(0.6), Matern(0.9, 0.5),
                                    Matern(1.2, 1.5), Matern(0.7, 2.5)])
def test_spectral_sampler_reproduces_the_kernel(kernel):
    """E_w[cos(w . delta)] = k(delta): Monte Carlo with 200k draws, 5 standard errors."""
    rng = np.random.default_rng(0)
    W = kernel.sample_frequencies(200_000, 3, rng)
    for delta in ([0.2, -0.1, 0.3], [1.0, 0.5, -0.4], [0.0, 0.0, 0.05]):
        c = np.cos(W @ np.array(delta))
        assert abs(c.mean() - kernel(np.array(delta), np.zeros(3))) < 5 * c.std() / math.sqrt(c.size)


def test_matern_closed_forms():
    x = np.array([0.3, -0.4])                       # r = 0.5
    assert Matern(2.0, 0.5)(x, 0 * x) == pytest.approx(math.exp(-0.25))
    s3 = math.sqrt(3) * 0.5 / 2.0
    assert Matern(2.0, 1.5)(x, 0 * x) == pytest.approx((1 + s3) * math.exp(-s3))
    assert Matern(2.0, 1.5)(x, x) == 1.0
    assert kernel_from_dict(Matern(2.0, 2.5).to_dict()) == Matern(2.0, 2.5)
    with pytest.raises(ValueError, match="nu"):
        Matern(1.0, 0.0)


def test_converters():
    assert Gaussian.from_variance(4.0).sigma == pytest.approx(2.0)
    assert Gaussian.from_precision(0.25).sigma == pytest.approx(2.0)
    g = Gaussian.from_gamma(0.3)
    x = np.array([0.4, 1.1])
    assert g(x, 0 * x) == pytest.approx(math.exp(-0.3 * x @ x))
    assert Laplacian.from_gamma(2.0)(x, 0 * x) == pytest.approx(math.exp(-2.0 * np.abs(x).sum()))
    assert kernel_from_dict(Laplacian(3.0).to_dict()) == Laplacian(3.0)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "1", None])
def test_invalid_bandwidth(bad):
    with pytest.raises(ValueError, match="sigma"):
        Gaussian(bad)


def test_paper000_dictionary():
    """Spec 000 §2.3: 51 RBF with a = 10^(-2 + 0.08k) (a = sigma^2), 25 Laplacian b = 10^(-2 + k/6)."""
    ks = paper000_dictionary()
    assert len(ks) == 76
    assert all(isinstance(k, Gaussian) for k in ks[:51]) and all(isinstance(k, Laplacian) for k in ks[51:])
    a = np.array([k.sigma ** 2 for k in ks[:51]])
    np.testing.assert_allclose(np.log10(a), -2 + 0.08 * np.arange(51), atol=1e-12)
    b = np.array([k.sigma for k in ks[51:]])
    np.testing.assert_allclose(np.log10(b), [(i - 13) / 6 for i in range(1, 26)], atol=1e-12)


def test_paper003_dictionary_matches_printed_values():
    """Spec 003 §2.4 prints the grid to 6 significant digits."""
    ks = paper003_dictionary()
    printed_var = [0.01, 0.0120226, 0.0144544, 0.017378, 0.020893, 0.0251189, 0.0301995, 0.0363078,
                   0.0436516, 0.0524807, 0.0630957, 0.0758578, 0.0912011, 0.109648, 0.131826,
                   0.158489, 0.190546, 0.229087, 0.275423, 0.331131, 0.398107, 0.47863, 0.57544,
                   0.691831, 0.831764, 1, 1.20226, 1.44544, 1.7378, 2.0893, 2.51189, 3.01995,
                   3.63078, 4.36516, 5.24807, 6.30957, 7.58578, 9.12011, 10.9648, 13.1826, 15.8489,
                   19.0546, 22.9087, 27.5423, 33.1131, 39.8107, 47.863, 57.544, 69.1831, 83.1764, 100]
    printed_lap = [0.01, 0.014678, 0.0215443, 0.0316228, 0.0464159, 0.0681292, 0.1, 0.14678,
                   0.215443, 0.316228, 0.464159, 0.681292, 1, 1.4678, 2.15443, 3.16228, 4.64159,
                   6.81292, 10, 14.678, 21.5443, 31.6228, 46.4159, 68.1292, 100]
    np.testing.assert_allclose([k.sigma ** 2 for k in ks[:51]], printed_var, rtol=5e-6)
    np.testing.assert_allclose([k.sigma for k in ks[51:]], printed_lap, rtol=5e-6)


def test_paper001_dictionary():
    ks = paper001_dictionary()
    assert [type(k) for k in ks] == [Gaussian] * 6
    np.testing.assert_allclose([k.sigma for k in ks], [0.25, 0.5, 1, 2, 4, 8])
    x = np.array([1.0, 0.0])
    assert ks[2](x, 0 * x) == pytest.approx(math.exp(-0.5))      # exp(-||d||^2 / (2 sigma^2))


def test_spectral_draws_have_the_paper_scale():
    """Paper 000's code draws randn * sqrt(1/a) (RBF) and standard_cauchy / b (Laplacian)."""
    rff = RandomFourierFeatures([Gaussian.from_variance(0.04), Laplacian(0.5)], n_components=40000,
                                random_state=1).fit(n_features=1)
    w_g, w_l = rff.frequencies_[0, :, 0], rff.frequencies_[1, :, 0]
    assert np.std(w_g) == pytest.approx(5.0, rel=0.02)
    assert np.median(np.abs(w_l)) == pytest.approx(2.0, rel=0.03)   # Cauchy(0, 2): median |w| = 2
