"""FOGD, the random-feature baseline of paper 002 (spec §3.7, test §9.2 item 9)."""
import numpy as np

import fastomkl
from fastomkl.pkawv import FOGD, FOGD_DECAYING_STEPS, FOGDClassifier
from fastomkl.kernels import Gaussian
from reference import NumpyMLPoly, StandardisedTargets, ensemble_step


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


def numpy_fogd_ensemble(U, X, y, steps, decaying=(), adagrad_scale=2.0):
    """FOGD's eta="ensemble" in plain NumPy: on z(x) = [cos(U x); sin(U x)] / sqrt(D), members
    with the constant steps `steps` and the steps decaying[i] / sqrt(t) in round t, truncated at
    the minimiser of the squared loss (onto y), and one member with eta="auto"'s AdaGrad-norm
    steps adagrad_scale / sqrt(sum ||d z||^2) truncated at the zero of the loss's tangent; mixed by
    ML-Poly on the squared loss's slope at the mixture, clipped to the range of the targets seen;
    targets winsorised and standardised online.  Returns the predictions, the members' weights and their models."""
    D = U.shape[0]
    m = len(steps) + len(decaying) + 1
    theta, mixer, grad_sq = np.zeros((m, 2 * D)), NumpyMLPoly(m, clipped=True), 0.0
    targets = StandardisedTargets(True)
    out = []
    for t, (x, label) in enumerate(zip(X, y), start=1):
        z = np.concatenate([np.cos(U @ x), np.sin(U @ x)]) / np.sqrt(D)
        f = theta @ z
        center, scale = targets.units()
        out.append(center + scale * mixer.mix(f))
        target = targets.learn(label)
        d, loss, zz = 2.0 * (f[-1] - target), (f - target) ** 2, z @ z
        round_steps = np.concatenate([steps, np.asarray(decaying, dtype=float) / np.sqrt(t)])
        stepped, _ = ensemble_step(theta[None, :-1], z[None], f[None, :-1], target, round_steps,
                                   0.0, "squared")
        grad_sq += d ** 2 * zz
        step = adagrad_scale / np.sqrt(grad_sq) if grad_sq > 0 else 0.0
        if d:
            step = min(step, loss[-1] / (d ** 2 * zz))
        theta[:-1], theta[-1] = stepped[0], theta[-1] - step * d * z
        mixer.learn(f, lambda mix: 2.0 * (mix - target), target)
    return np.array(out), mixer.weights(), theta


def test_default_is_the_step_ensemble_with_decaying_and_adagrad_members():
    """eta="ensemble" (the default): three constant steps, two steps decaying like 1/sqrt(t) and
    eta="auto"'s AdaGrad-norm member on the same features mixed by ML-Poly, against NumPy; coef_
    is the linear model the prediction uses."""
    from fastomkl._core.steps import ENSEMBLE_STEPS
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (300, 4)), 3.0 + rng.normal(size=300)
    model = FOGD(kernel=Gaussian(0.8), n_components=20, random_state=1)
    got = model.predict_learn(X, y)
    assert model._engine.experts.per_kernel == len(ENSEMBLE_STEPS) + 3 == 6
    U = model._engine.features.frequencies[0]
    want, w_bar, theta = numpy_fogd_ensemble(U, X, y, ENSEMBLE_STEPS, FOGD_DECAYING_STEPS)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(model._engine.experts.theta), theta, rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(model.coef_, w_bar @ theta, rtol=1e-9, atol=1e-12)
    # the AdaGrad-norm member is eta="auto"'s model: alone, it is FOGD(eta="auto")
    auto = FOGD(kernel=Gaussian(0.8), n_components=20, eta="auto", random_state=1)
    auto.predict_learn(X, y)
    np.testing.assert_allclose(theta[-1], auto.coef_, rtol=1e-9, atol=1e-12)


def test_a_file_of_the_four_member_ensemble_loads_and_learns_on_with_it(tmp_path):
    """Files written before the decaying members hold four (three constant steps and the
    AdaGrad-norm member): they load with those four, predict and learn on as the model that
    wrote them, which is the NumPy ensemble without decaying members; a refit takes all six.
    (Such a file is made here by building the former ensemble directly.)"""
    from fastomkl._core.steps import ENSEMBLE_STEPS
    rng = np.random.default_rng(3)
    X, y = rng.uniform(-1, 1, (200, 4)), 1.0 + rng.normal(size=200)
    written = FOGD(kernel=Gaussian(0.8), n_components=20, random_state=1)
    written._file_layout = {"constant_steps": True}     # what the earlier release built
    written.partial_fit(X[:120], y[:120])
    assert written._engine.experts.per_kernel == 4
    written.save(tmp_path / "four.fokl")
    loaded = fastomkl.load(tmp_path / "four.fokl")
    assert loaded._engine.experts.per_kernel == 4
    got = loaded.predict_learn(X[120:], y[120:])
    np.testing.assert_array_equal(got, written.predict_learn(X[120:], y[120:]))
    U = loaded._engine.features.frequencies[0]
    want, _, _ = numpy_fogd_ensemble(U, X, y, ENSEMBLE_STEPS)
    np.testing.assert_allclose(got, want[120:], rtol=1e-9, atol=1e-12)
    assert loaded.fit(X[:50], y[:50])._engine.experts.per_kernel == 6
