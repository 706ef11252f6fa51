"""Raker's compiled step against the plain NumPy equations on the model's own frequencies."""
import numpy as np
import pytest

from fastomkl import Gaussian, Laplacian, Cauchy, Raker, RakerClassifier, paper000_dictionary
from reference import NumpyRaker

KERNELS = [Gaussian(0.3), Gaussian(1.0), Laplacian(0.5), Laplacian(2.0), Cauchy(0.7)]


@pytest.mark.parametrize("loss", ["squared", "absolute"])
@pytest.mark.parametrize("schedule", ["inv_sqrt", "constant"])
@pytest.mark.parametrize("after", [False, True])
def test_regressor_matches_numpy(stream, loss, schedule, after):
    X, y = stream
    model = Raker(KERNELS, n_components=20, eta=0.3, eta_schedule=schedule, lam=0.01, loss=loss,
                  eta_combiner=0.7, regularizer_after_update=after, random_state=3)
    got = model.predict_learn(X, y)
    ref = NumpyRaker(model.features_.frequencies_, eta=0.3, eta_schedule=schedule, lam=0.01,
                     loss=loss, eta_hedge=0.7, regularizer_after_update=after)
    want = np.array([ref.predict_learn_one(x, t) for x, t in zip(X, y)])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.weights_, ref.weights(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(model._engine.experts.theta), ref.theta, atol=1e-10)
    # the learned state predicts like the reference too
    np.testing.assert_allclose(model.predict(X[:20]), [ref.predict_one(x) for x in X[:20]],
                               atol=1e-10)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_classifier_matches_numpy(labelled_stream, loss):
    X, y = labelled_stream
    model = RakerClassifier(KERNELS, n_components=16, eta=0.5, lam=1e-3, loss=loss, random_state=9)
    model.partial_fit(X, y)
    ref = NumpyRaker(model.features_.frequencies_, eta=0.5, lam=1e-3, loss=loss)
    scores = np.array([ref.predict_learn_one(x, t) for x, t in zip(X, y)])
    np.testing.assert_allclose(model.decision_function(X), [ref.predict_one(x) for x in X],
                               atol=1e-10)
    refit = RakerClassifier(KERNELS, n_components=16, eta=0.5, lam=1e-3, loss=loss, random_state=9)
    labels = refit.predict_learn(X, y)
    np.testing.assert_array_equal(labels, np.where(scores > 0, 1.0, -1.0))


@pytest.mark.parametrize("eta", [0.1, "auto"])
def test_paper_dictionary_naval_shape_matches_numpy(eta):
    """The benchmark configuration: 76 kernels, D = 50, d = 15 (the paper's step and the default)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(200, 15))
    X /= np.linalg.norm(X, axis=1).max()
    y = rng.uniform(0, 1, 200)
    model = Raker(paper000_dictionary(), n_components=50, eta=eta, random_state=0)
    ref = NumpyRaker(model._engine_for(15).features.frequencies, eta=eta)
    got = [model.predict_learn_one(x, t) for x, t in zip(X, y)]
    want = [ref.predict_learn_one(x, t) for x, t in zip(X, y)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)


def test_one_sample_and_stream_paths_agree(stream):
    X, y = stream
    a = Raker(KERNELS, n_components=10, random_state=1)
    b = Raker(KERNELS, n_components=10, random_state=1)
    one = [a.predict_learn_one(x, t) for x, t in zip(X, y)]
    np.testing.assert_array_equal(one, b.predict_learn(X, y))
    c = Raker(KERNELS, n_components=10, random_state=1)
    for x, t in zip(X, y):
        c.learn_one(x, t)
    np.testing.assert_array_equal(c.predict(X), b.predict(X))


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_auto_regressor_matches_numpy_in_raw_units(stream, loss):
    """eta="auto": AdaGrad-norm steps and online standardised targets, on targets far from [0, 1]."""
    X, y = stream
    y = 120.0 + 40.0 * y
    model = Raker(KERNELS, n_components=20, eta="auto", loss=loss, random_state=3)
    got = model.predict_learn(X, y)
    ref = NumpyRaker(model.features_.frequencies_, eta="auto", loss=loss)
    want = np.array([ref.predict_learn_one(x, t) for x, t in zip(X, y)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(model.weights_, ref.weights(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.predict(X[:20]), [ref.predict_one(x) for x in X[:20]],
                               rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_auto_classifier_matches_numpy(labelled_stream, loss):
    X, y = labelled_stream
    model = RakerClassifier(KERNELS, n_components=16, eta="auto", loss=loss,
                            random_state=9)
    scores = model.partial_fit(X, y).decision_function(X)
    ref = NumpyRaker(model.features_.frequencies_, eta="auto", loss=loss)
    for x, t in zip(X, y):
        ref.predict_learn_one(x, 1.0 if t == model.classes_[-1] else -1.0)
    np.testing.assert_allclose(scores, [ref.predict_one(x) for x in X], atol=1e-10)


def test_affine_change_of_units_changes_only_the_units(stream):
    """Under eta="auto" a regressor learns y and a * y + b alike: predictions map by the same
    affine function (up to rounding)."""
    X, y = stream
    a = Raker(KERNELS, n_components=20, random_state=3).predict_learn(X, y)
    b = Raker(KERNELS, n_components=20, random_state=3).predict_learn(X, 1e4 * y - 300.0)
    np.testing.assert_allclose(b, np.where(np.arange(len(y)) == 0, 0.0, 1e4 * a - 300.0),
                               rtol=1e-9, atol=1e-7)
