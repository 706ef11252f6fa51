"""Kernel divergence (closed form of eq. 27), the similarity graph (Alg. 4) and dominating sets."""
import math

import numpy as np
import pytest
from scipy import integrate

from fastomkl.graph import (adjacency_to_csr, divergence_matrix, dominating_set, kernel_divergence,
                            similarity_graph)
from fastomkl.kernels import Cauchy, Gaussian, Laplacian, paper000_dictionary

PAIRS = [(Gaussian(0.3), Gaussian(2.0)), (Laplacian(0.5), Laplacian(3.0)),
         (Gaussian(0.7), Laplacian(0.2)), (Laplacian(4.0), Gaussian(1.5)),
         (Gaussian(0.05), Laplacian(10.0))]


def _quad_1d(k1, k2):
    f = lambda r: (k1(np.array([r]), np.zeros(1)) - k2(np.array([r]), np.zeros(1))) ** 2
    return integrate.quad(f, -np.inf, np.inf, limit=400, epsabs=1e-13, epsrel=1e-11)[0]


@pytest.mark.parametrize("k1,k2", PAIRS)
def test_exact_divergence_matches_quadrature_1d(k1, k2):
    assert kernel_divergence(k1, k2) == pytest.approx(_quad_1d(k1, k2), rel=1e-7, abs=1e-12)


@pytest.mark.parametrize("k1,k2", PAIRS[:3])
def test_exact_divergence_matches_quadrature_2d(k1, k2):
    f = lambda a, b: (k1(np.array([a, b]), np.zeros(2)) - k2(np.array([a, b]), np.zeros(2))) ** 2
    L = 60.0
    val = integrate.dblquad(f, -L, L, -L, L, epsabs=1e-10, epsrel=1e-8)[0]
    assert kernel_divergence(k1, k2, dim=2) == pytest.approx(val, rel=1e-5)


def test_divergence_properties():
    ks = paper000_dictionary()[::7]
    for dim in (1, 3):
        S = divergence_matrix(ks, dim)
        np.testing.assert_allclose(S, S.T, rtol=1e-12)
        np.testing.assert_allclose(np.diag(S), 0.0, atol=1e-9 * np.abs(S).max())
        off = S[~np.eye(len(ks), dtype=bool)]
        assert (off > 0).all()


def test_legacy_code_divergence_formulas():
    a, b = 0.5, 2.0
    sp = math.sqrt(math.pi)
    gg = a ** 1.5 / sp + b ** 1.5 / sp - math.sqrt(a * b) / math.sqrt(2 * math.pi / a + 2 * math.pi / b)
    got = kernel_divergence(Gaussian.from_variance(a), Gaussian.from_variance(b),
                            method="legacy_code")
    assert got == pytest.approx(gg, rel=1e-12)
    ll = (a + b) / (4 * math.pi ** 2) - a * b / (2 * math.pi ** 2 * (a + b))
    assert kernel_divergence(Laplacian(a), Laplacian(b), method="legacy_code") == pytest.approx(ll)
    # the released formulas are not eq. (27): a kernel is not at divergence 0 from itself
    assert kernel_divergence(Laplacian(a), Laplacian(a), method="legacy_code") > 0
    gl = kernel_divergence(Gaussian.from_variance(a), Laplacian(b), method="legacy_code")
    lg = kernel_divergence(Laplacian(b), Gaussian.from_variance(a), method="legacy_code")
    assert gl == pytest.approx(lg)
    assert math.isnan(kernel_divergence(Gaussian(1.0), Laplacian(1.0), method="legacy_nan"))


def test_divergence_rejects_other_kernels_and_bad_args():
    with pytest.raises(ValueError, match="Gaussian and Laplacian"):
        kernel_divergence(Cauchy(1.0), Gaussian(1.0))
    with pytest.raises(ValueError, match="method"):
        kernel_divergence(Gaussian(1.0), Gaussian(2.0), method="kl")
    with pytest.raises(ValueError, match="dim"):
        kernel_divergence(Gaussian(1.0), Gaussian(2.0), dim=0)


@pytest.mark.parametrize("M", [1, 3, 10, 76])
@pytest.mark.parametrize("divergence", ["exact", "legacy_code", "legacy_nan"])
def test_graph_out_degree_and_self_loops(M, divergence):
    A = similarity_graph(paper000_dictionary(), M, divergence=divergence)
    assert A.shape == (76, 76)
    assert (A.sum(axis=1) == M).all()
    assert A.diagonal().all()


def test_exact_graph_is_a_hub_graph_in_1d():
    """With the exact 1-D divergence every node points to the same 9 extreme kernels (spec §8.3)."""
    A = similarity_graph(paper000_dictionary(), 10, dim=1)
    hubs = {75, 51, 74, 52, 53, 73, 54, 50, 55}
    for i in set(range(76)) - hubs:
        assert len((set(np.flatnonzero(A[i])) - {i}) & hubs) >= 8
    assert (A.sum(axis=0)[[51, 52, 53, 54, 55, 73, 74, 75]] == 76).all()   # in-degree N
    assert np.median(A.sum(axis=0)) == 1
    for dom in (dominating_set(A), dominating_set(A, "legacy")):
        assert 65 <= len(dom) <= 67


def test_legacy_nan_graph_and_dominating_set():
    """NaN divergence: N_out(i) = {i} and the first M-1 others; D = {0} + {M..75} (spec §8.2)."""
    M = 10
    A = similarity_graph(paper000_dictionary(), M, divergence="legacy_nan")
    for i in range(76):
        expect = set(range(M)) if i < M else {i} | set(range(M - 1))
        assert set(np.flatnonzero(A[i])) == expect
    for method in ("chvatal", "legacy"):
        dom = dominating_set(A, method)
        np.testing.assert_array_equal(dom, [0] + list(range(M, 76)))


def test_fig2_example():
    """Five Gaussians of widths 10^(i-3), M = 3: N_out(v_2) = {v_1, v_2, v_5} (spec §9.8)."""
    for ks in ([Gaussian(10.0 ** (i - 3)) for i in range(1, 6)],
               [Gaussian.from_variance(10.0 ** (i - 3)) for i in range(1, 6)]):
        A = similarity_graph(ks, 3)
        assert set(np.flatnonzero(A[1])) == {0, 1, 4}


def test_dominating_sets_dominate_random_graphs():
    rng = np.random.default_rng(0)
    differ = 0
    for trial in range(200):
        n = int(rng.integers(2, 25))
        A = rng.random((n, n)) < rng.uniform(0.05, 0.4)
        np.fill_diagonal(A, True)
        doms = [dominating_set(A, m) for m in ("chvatal", "legacy")]
        for dom in doms:
            assert A[dom].any(axis=0).all()
            assert len(set(dom.tolist())) == len(dom)
        differ += not np.array_equal(doms[0], doms[1])
    assert differ > 0            # the two methods are genuinely different procedures


def test_chvatal_is_greedy_on_a_known_graph():
    # node 0 covers {0,1,2}, node 3 covers {3,4,1}; node 1 covers {1,3,4,5}: Chvatal takes 1 first
    A = np.eye(6, dtype=bool)
    A[0, [1, 2]] = A[3, [4, 1]] = A[1, [3, 4, 5]] = True
    np.testing.assert_array_equal(dominating_set(A), [0, 1])


def test_similarity_graph_validation_and_matrix_input():
    S = divergence_matrix(paper000_dictionary()[:6])
    np.testing.assert_array_equal(similarity_graph(S, 3),
                                  similarity_graph(paper000_dictionary()[:6], 3))
    with pytest.raises(ValueError, match="M must be"):
        similarity_graph(S, 0)
    with pytest.raises(ValueError, match="M must be"):
        similarity_graph(S, 7)
    ptr, idx = adjacency_to_csr(similarity_graph(S, 3))
    assert list(np.diff(ptr)) == [3] * 6 and len(idx) == 18


@pytest.mark.parametrize("dim", [1, 4])
@pytest.mark.parametrize("method", ["exact", "legacy_code"])
def test_divergence_matrix_equals_pairwise_function(dim, method):
    ks = paper000_dictionary()[::5]
    S = divergence_matrix(ks, dim, method)
    R = np.array([[kernel_divergence(a, b, dim, method) for b in ks] for a in ks])
    np.testing.assert_allclose(S, R, rtol=1e-12, atol=1e-12 * np.abs(R).max())
