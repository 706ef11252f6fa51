"""pytest-benchmark microbenchmarks of the core (run: python -m pytest bench --benchmark-only)."""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import fastomkl  # noqa: E402
from fastomkl.datasets import load_dataset, scale_to_unit_ball, scale_to_unit_interval  # noqa: E402


@pytest.fixture(scope="module")
def naval():
    X, y = load_dataset("naval")
    return scale_to_unit_ball(X[:2000, :15]), scale_to_unit_interval(y)[:2000]


def trained(kernels, n_components, X, y, dtype="float64"):
    model = fastomkl.Raker(kernels, n_components=n_components, eta=0.1, random_state=0,
                           dtype=dtype)
    model.partial_fit(X[:100], y[:100])
    return model


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n_kernels", [1, 76])
def test_predict_one(benchmark, naval, n_kernels, dtype):
    X, y = naval
    model = trained(fastomkl.paper000_dictionary()[:n_kernels], 50, X, y, dtype)
    benchmark(model.predict_one, X[200])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n_kernels", [1, 76])
def test_predict_learn_one(benchmark, naval, n_kernels, dtype):
    X, y = naval
    model = trained(fastomkl.paper000_dictionary()[:n_kernels], 50, X, y, dtype)
    benchmark(model.predict_learn_one, X[200], y[200])


def test_predict_one_tiny(benchmark):
    model = fastomkl.Raker([fastomkl.Gaussian(1.0)], n_components=1, eta=0.1, random_state=0)
    x = np.array([0.3])
    model.learn_one(x, 0.5)
    benchmark(model.predict_one, x)


def test_predict_learn_stream_1000(benchmark, naval):
    X, y = naval
    model = trained(fastomkl.paper000_dictionary(), 50, X, y)
    benchmark(model.predict_learn, X[:1000], y[:1000])
