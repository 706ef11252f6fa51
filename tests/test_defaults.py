"""Default models learn without tuning: each family's default regressor beats the running mean and
its default classifier the running majority, prequentially, on shipped data (the full comparison
against a grid of step sizes is ``bench/defaults.py``)."""
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

import fastomkl as fo
from fastomkl.datasets import scale_to_unit_ball, scale_to_unit_interval
from fastomkl.kernels import median_dictionary

FEW = [fo.Gaussian(s) for s in (0.1, 0.3, 1.0, 3.0)] + [fo.Laplacian(s) for s in (0.3, 3.0)]
REGRESSORS = [
    lambda: fo.Raker(FEW, n_components=30, random_state=0),
    lambda: fo.OMKLGF(FEW, n_components=30, M=3, random_state=0),
    lambda: fo.OMKLSFG(FEW, n_components=30, M=3, random_state=0),
    lambda: fo.OMKLSFGR(FEW, n_components=30, M=3, random_state=0),
    lambda: fo.RFOMKR(FEW, n_components=30, random_state=0),
    lambda: fo.OMKR(FEW),
]
CLASSIFIERS = [
    lambda: fo.RakerClassifier(FEW, n_components=30, random_state=0),
    lambda: fo.OMKLGFClassifier(FEW, n_components=30, M=3, random_state=0),
    lambda: fo.OMKLSFGClassifier(FEW, n_components=30, M=3, random_state=0),
    lambda: fo.OMKLSFGRClassifier(FEW, n_components=30, M=3, random_state=0),
    lambda: fo.RFOMKRClassifier(FEW, n_components=30, random_state=0),
    lambda: fo.OMKRClassifier(FEW),
]


def shuffled(X, y, n, seed=0):
    order = np.random.default_rng(seed).permutation(len(y))[:n]
    return X[order], y[order]


def running_mean_mse(y):
    past = np.concatenate([[0.0], np.cumsum(y)[:-1]]) / np.maximum(np.arange(len(y)), 1)
    return np.mean((past - y) ** 2)


@pytest.mark.parametrize("name", ["naval", "concrete"])
@pytest.mark.parametrize("raw", [False, True])
@pytest.mark.parametrize("make", REGRESSORS)
def test_default_regressor_beats_the_mean(make, name, raw):
    X, y = fo.load_dataset(name)
    X, y = shuffled(scale_to_unit_ball(X), y if raw else scale_to_unit_interval(y), 800)
    mse = np.mean((make().predict_learn(X, y) - y) ** 2)
    assert mse < 0.8 * running_mean_mse(y)


@pytest.mark.parametrize("make", CLASSIFIERS)
def test_default_classifier_beats_the_majority(make):
    X, y = load_breast_cancer(return_X_y=True)
    X, y = shuffled(scale_to_unit_ball(X - X.mean(axis=0)), y, 569)
    errors = np.mean(make().predict_learn(X, y) != y)
    majority = min(np.mean(y), 1 - np.mean(y))
    assert errors < 0.5 * majority


def test_median_dictionary_follows_the_units_of_x():
    X, _ = fo.load_dataset("airfoil")
    a, b = median_dictionary(X), median_dictionary(1000.0 * X)
    np.testing.assert_allclose([k.sigma for k in b], [1000.0 * k.sigma for k in a], rtol=1e-12)
    assert [type(k) for k in a] == [fo.Gaussian] * 9 + [fo.Laplacian] * 9
