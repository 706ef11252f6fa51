"""RandomFourierFeatures: the public map equals the NumPy formula and approximates each kernel."""
import numpy as np
import pytest

from fastomkl import Cauchy, Gaussian, Laplacian, RandomFourierFeatures, Raker
from reference import rff

KERNELS = [Gaussian(0.5), Laplacian(1.0), Cauchy(2.0)]


def test_transform_equals_numpy_formula():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 7))
    f = RandomFourierFeatures(KERNELS, n_components=33, random_state=4).fit(X)
    Z = f.transform(X)
    assert Z.shape == (50, 3, 66)
    assert f.frequencies_.shape == (3, 33, 7)
    want = np.stack([rff(f.frequencies_, x) for x in X])
    np.testing.assert_allclose(Z, want, rtol=0, atol=1e-13)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=2), 1.0, atol=1e-13)


@pytest.mark.parametrize("n_components", [1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 24, 31, 32, 33, 40, 50,
                                          63, 64, 65, 100])
def test_every_block_and_tail_shape_equals_numpy(n_components):
    """The compiled map works on whole vectors of frequencies (blocks of 4, then a partial block and
    a zero-padded partial vector): every remainder of n_components against the formula."""
    rng = np.random.default_rng(n_components)
    X = rng.normal(size=(6, 5)) * 3.0
    f = RandomFourierFeatures(KERNELS, n_components=n_components, random_state=1).fit(X)
    want = np.stack([rff(f.frequencies_, x) for x in X])
    np.testing.assert_allclose(f.transform(X), want, rtol=0, atol=1e-13)


def test_frequencies_are_read_only():
    f = RandomFourierFeatures(KERNELS, n_components=3, random_state=0).fit(n_features=2)
    with pytest.raises(ValueError):
        f.frequencies_[0, 0, 0] = 1.0


@pytest.mark.parametrize("kernel", KERNELS)
def test_inner_products_approximate_the_kernel(kernel):
    """z(x).z(y) -> k(x, y): with D = 20000 the error is below 5/sqrt(D)."""
    rng = np.random.default_rng(1)
    f = RandomFourierFeatures([kernel], n_components=20000, random_state=2).fit(n_features=3)
    for _ in range(5):
        x, y = rng.normal(scale=0.7, size=(2, 3))
        assert abs(f.kernel_estimate(x, y)[0] - kernel(x, y)) < 5 / np.sqrt(20000)


def test_same_seed_same_features_as_the_models():
    X = np.random.default_rng(0).normal(size=(5, 4))
    f = RandomFourierFeatures(KERNELS, n_components=8, random_state=11).fit(X)
    model = Raker(KERNELS, n_components=8, random_state=11).fit(X, np.zeros(5))
    np.testing.assert_array_equal(f.frequencies_, model.features_.frequencies_)
    np.testing.assert_array_equal(f.transform(X), model.features_.transform(X))
    other = RandomFourierFeatures(KERNELS, n_components=8, random_state=12).fit(X)
    assert not np.array_equal(other.frequencies_, f.frequencies_)


def test_shared_draw_scales_one_base_per_family():
    ks = [Gaussian(0.5), Gaussian(2.0), Laplacian(1.0), Laplacian(4.0)]
    f = RandomFourierFeatures(ks, n_components=6, random_state=0, shared_draw=True).fit(n_features=3)
    W = f.frequencies_
    np.testing.assert_allclose(W[0] * 0.5, W[1] * 2.0)
    np.testing.assert_allclose(W[2] * 1.0, W[3] * 4.0)
    assert not np.allclose(W[0] * 0.5, W[2])


def test_errors():
    with pytest.raises(ValueError, match="not fitted"):
        RandomFourierFeatures(KERNELS).transform(np.zeros((1, 2)))
    f = RandomFourierFeatures(KERNELS, n_components=2, random_state=0).fit(n_features=2)
    with pytest.raises(ValueError, match="expecting 2 features"):
        f.transform(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="n_components"):
        RandomFourierFeatures(KERNELS, n_components=0).fit(n_features=2)
    with pytest.raises(ValueError, match="kernels"):
        RandomFourierFeatures(["rbf"]).fit(n_features=2)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shared_draw", [False, True])
def test_frequencies_and_expert_weights_start_on_cache_lines(dtype, shared_draw):
    """Their rows are whole cache lines, streamed by whole-vector loads: from a 16-byte-aligned
    start every load would straddle two lines (12-15% of a Raker-76 round).  The allocator's
    offset depends on the heap's history, so models are built between allocations of odd sizes."""
    X = np.random.default_rng(0).normal(size=(2, 15))
    kept = []
    for size in range(1, 17):
        kept.append(np.empty(size * 997))
        model = Raker(KERNELS, n_components=50, random_state=size, dtype=dtype,
                      shared_draw=shared_draw).learn_one(X[0], 0.5)
        engine = model._fitted_engine()
        assert all(part.ctypes.data % 64 == 0 for part in engine.features.stored if part.size)
        assert np.asarray(engine.experts.theta).ctypes.data % 64 == 0
