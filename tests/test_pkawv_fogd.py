"""FOGD, the random-feature baseline of paper 002 (spec §3.7, test §9.2 item 9)."""
import numpy as np

from fastomkl.pkawv import FOGD, FOGDClassifier
from fastomkl.kernels import Gaussian


def test_authors_parametrisation_gives_the_same_predictions():
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (300, 4)), rng.normal(size=300)
    eta, D = 1 / np.sqrt(300), 50
    model = FOGD(kernel=Gaussian(0.8), n_components=D, eta=eta, random_state=1)
    got = model.predict_learn(X, y)
    U = model._engine.features.frequencies[0]            # (D, d)
    w = np.zeros(2 * D)                                  # the authors' w = sqrt(D) theta
    want = np.zeros(300)
    for t in range(300):
        z = np.concatenate([np.cos(U @ X[t]), np.sin(U @ X[t])])
        want[t] = w @ z / D
        w -= eta * 2 * (want[t] - y[t]) * z
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.coef_, w / np.sqrt(D), rtol=1e-10, atol=1e-12)
    # frequencies ~ N(0, 1 / sigma^2)
    assert abs(U.std() * 0.8 - 1) < 0.1


def test_default_learns_and_classifier():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (2000, 2))
    y = 5 + 3 * np.sin(3 * X[:, 0])
    model = FOGD(random_state=0)
    pred = model.predict_learn(X, y)
    assert np.mean((pred[1000:] - y[1000:]) ** 2) < 0.25 * np.var(y)
    labels = np.where(X[:, 0] > 0.2, 1, -1)
    clf = FOGDClassifier(random_state=0)
    assert (clf.predict_learn(X, labels)[1000:] == labels[1000:]).mean() > 0.9


def test_default_is_the_step_ensemble_of_one_kernel():
    """eta="ensemble" (the default): three constant steps on the same features under Hedge, which
    is Raker's step ensemble on one kernel without a regulariser -- and coef_ is the linear model
    the prediction uses."""
    from fastomkl import Raker
    from fastomkl._core.steps import ENSEMBLE_STEPS
    from test_step_ensemble import NumpyStepEnsemble
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (300, 4)), 3.0 + rng.normal(size=300)
    model = FOGD(kernel=Gaussian(0.8), n_components=20, random_state=1)
    got = model.predict_learn(X, y)
    raker = Raker([Gaussian(0.8)], n_components=20, lam=0.0, random_state=1)
    np.testing.assert_array_equal(got, raker.predict_learn(X, y))
    U = model._engine.features.frequencies
    ref = NumpyStepEnsemble(U, ENSEMBLE_STEPS, 0.0, "squared", 2.0, True)
    np.testing.assert_allclose(got, [ref.predict_learn_one(x, t) for x, t in zip(X, y)],
                               rtol=1e-9, atol=1e-12)
    x = rng.uniform(-1, 1, 4)
    z = np.concatenate([np.cos(U[0] @ x), np.sin(U[0] @ x)]) / np.sqrt(20)
    center, scale = ref.targets.units()
    np.testing.assert_allclose(model.predict_one(x), center + scale * model.coef_ @ z, rtol=1e-12)
