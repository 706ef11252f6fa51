"""Shared frequency draws (``shared_draw=True``): one base draw per kernel family, each kernel's
features computed from the family's projection scaled by 1/sigma, against plain NumPy and against
the same models on independent-draw banks holding the same frequencies."""
import io
import threading

import numpy as np
import pytest

import fastomkl
from fastomkl import RFOKS, Cauchy, Gaussian, Laplacian, Matern, Raker, RandomFourierFeatures
from fastomkl._estimator import BinaryClassifier
from fastomkl._core.features.rff import SharedDrawRFFBank, transform_many
from load_mutations import public_classes, small_model
from reference import NumpyRaker

KERNELS = [Gaussian(0.3), Laplacian(0.5), Gaussian(1.0), Cauchy(0.7), Laplacian(2.0),
           Gaussian(4.0), Matern(1.0, 1.5), Matern(0.5, 1.5), Matern(1.0, 2.5)]
FAMILIES = [0, 1, 0, 2, 1, 0, 3, 3, 4]        # by kind and shape parameter, in order of first use


def numpy_features(base, family, scale, X):
    """z[i, k] = [cos(s_k x_i B_f); sin(s_k x_i B_f)] / sqrt(D), B_f (n_features, D)."""
    p = np.einsum("nd,kdj->nkj", X, base[family]) * scale[:, None]
    return np.concatenate([np.cos(p), np.sin(p)], axis=-1) / np.sqrt(base.shape[-1])


def bank_state(bank):
    state = bank.get_state()
    return state["base"], state["family"], state["scale"]


@pytest.mark.parametrize("n_components", [1, 3, 8, 13, 50, 67])
@pytest.mark.parametrize("n_features", [1, 4, 15])
def test_features_equal_numpy(n_components, n_features):
    rng = np.random.default_rng(n_components * 100 + n_features)
    X = rng.uniform(-2, 2, (7, n_features))
    f = RandomFourierFeatures(KERNELS, n_components, random_state=3, shared_draw=True)
    Z = f.fit(X).transform(X)
    base, family, scale = bank_state(f.bank_)
    np.testing.assert_array_equal(family, FAMILIES)
    np.testing.assert_array_equal(scale, [1.0 / k.sigma for k in KERNELS])
    assert base.shape == (5, n_features, n_components)
    np.testing.assert_allclose(Z, numpy_features(base, family, scale, X), rtol=0, atol=1e-12)
    # each kernel on its own (no shared projection) computes the same features, to the bit
    alone = np.empty_like(Z)
    transform_many(f.bank_, X, alone, prepared=False)
    np.testing.assert_array_equal(alone, Z)


def test_frequencies_view_and_kernel_estimates():
    X = np.random.default_rng(0).normal(size=(2, 3)) / 4
    f = RandomFourierFeatures(KERNELS, 4000, random_state=1, shared_draw=True).fit(X)
    base, family, scale = bank_state(f.bank_)
    W = f.frequencies_
    assert not W.flags.writeable
    np.testing.assert_array_equal(W, base[family].transpose(0, 2, 1) * scale[:, None, None])
    exact = np.array([k(X[0], X[1]) for k in KERNELS]).ravel()
    np.testing.assert_allclose(f.kernel_estimate(X[0], X[1]), exact, atol=0.06)


def test_the_draw_is_the_independent_draw_of_each_family_first_kernel():
    """Family f's base is what the first kernel of f would draw, times its sigma, from the stream
    at the point where f first appears."""
    f = RandomFourierFeatures(KERNELS, 6, random_state=5, shared_draw=True).fit(n_features=2)
    stream = np.random.default_rng(np.random.SeedSequence(5).spawn(2)[0])
    base = bank_state(f.bank_)[0]
    for index, first in enumerate([0, 1, 3, 6, 8]):
        kernel = KERNELS[first]
        want = kernel.sample_frequencies(6, 2, stream) * kernel.sigma
        np.testing.assert_array_equal(base[index], want.T)


@pytest.mark.parametrize("eta", [0.1, "auto"])
def test_raker_matches_numpy_on_its_frequencies(stream, eta):
    X, y = stream
    model = Raker(KERNELS, n_components=20, eta=eta, shared_draw=True, random_state=3)
    got = model.predict_learn(X, y)
    ref = NumpyRaker(model.features_.frequencies_, eta=eta)
    want = np.array([ref.predict_learn_one(x, t) for x, t in zip(X, y)])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.weights_, ref.weights(), rtol=0, atol=1e-12)


def test_paper_dictionary_naval_shape_matches_numpy():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(150, 15))
    X /= np.linalg.norm(X, axis=1).max()
    y = rng.uniform(0, 1, 150)
    model = Raker(fastomkl.paper000_dictionary(), n_components=50, eta=0.1, shared_draw=True,
                  random_state=0)
    assert model._engine_for(15).features.n_families == 2
    ref = NumpyRaker(model._engine_for(15).features.frequencies, eta=0.1)
    got = [model.predict_learn_one(x, t) for x, t in zip(X, y)]
    want = [ref.predict_learn_one(x, t) for x, t in zip(X, y)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)


SHARED_CLASSES = [cls for cls in public_classes() if "shared_draw" in cls._param_names()]


def _on_independent_bank(model, n_features):
    """A twin of `model` with shared_draw=False whose (independent-draw) bank holds the shared
    model's frequencies: the same model computed without shared projections."""
    twin = type(model)(**{**model.get_params(), "shared_draw": False})
    engine = twin._engine_for(n_features)
    state = engine.get_state()
    state["features.weights"] = model._engine_for(n_features).features.frequencies.transpose(0, 2, 1)
    engine.set_state(state)
    return twin


@pytest.mark.parametrize("cls", SHARED_CLASSES, ids=lambda c: c.__name__)
def test_every_model_equals_itself_on_an_independent_bank(stream, cls):
    """Subsets (graph models) and one kernel per round (bandit models) use the lazily computed
    family projections; the predictions are those of the plain bank on the same frequencies."""
    X, y = stream
    X, y = X[:120], y[:120]
    model = small_model(cls, shared_draw=True).set_params(n_components=12, random_state=4)
    assert isinstance(model._engine_for(4).features, SharedDrawRFFBank)
    twin = _on_independent_bank(model, 4)
    if issubclass(cls, BinaryClassifier):
        y = np.where(y > np.median(y), 1.0, -1.0)
        model.partial_fit(X, y)
        twin.partial_fit(X, y)
        got, want = model.decision_function(X), twin.decision_function(X)
    else:
        got, want = model.predict_learn(X, y), twin.predict_learn(X, y)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


def test_save_load_round_trip_is_bit_identical(stream):
    X, y = stream
    model = Raker(KERNELS, n_components=10, shared_draw=True, random_state=2).fit(X[:100], y[:100])
    raw = io.BytesIO()
    model.save(raw)
    loaded = fastomkl.load(io.BytesIO(raw.getvalue()))
    a, b = model._engine.get_state(), loaded._engine.get_state()
    assert set(a) == set(b) and {"features.base", "features.family", "features.scale"} <= set(a)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    np.testing.assert_array_equal(model.predict_learn(X[100:], y[100:]),
                                  loaded.predict_learn(X[100:], y[100:]))


def _fitted_shared():
    X = np.random.default_rng(7).uniform(-1, 1, (20, 3))
    return Raker(KERNELS, n_components=5, shared_draw=True, random_state=0).fit(X, X[:, 0]), X


@pytest.mark.parametrize("entry,value,message", [
    ("features.family", -1, "family indices"), ("features.family", 5, "family indices"),
    ("features.family", 2 ** 40, "family indices"),
    ("features.scale", 0.0, "positive"), ("features.scale", -2.0, "positive"),
    ("features.scale", np.nan, "NaN"), ("features.scale", np.inf, "NaN"),
    ("features.scale", 1e101, "scaled frequencies"),
    ("features.base", np.nan, "NaN"), ("features.base", 1e101, "base frequencies"),
])
def test_bad_states_are_refused_and_change_nothing(entry, value, message):
    model, X = _fitted_shared()
    engine = model._engine
    before = {name: a.copy() for name, a in engine.get_state().items()}
    for index in (0, -1):
        state = engine.get_state()
        state[entry].reshape(-1)[index] = value
        with pytest.raises(ValueError, match=message):
            engine.set_state(state)
        after = engine.get_state()
        for name in before:
            np.testing.assert_array_equal(after[name], before[name])


def test_wrong_shapes_and_names_are_refused():
    model, X = _fitted_shared()
    engine = model._engine
    for entry, value in [("features.family", np.zeros(9, dtype=np.int32)),
                         ("features.scale", np.ones(8)),
                         ("features.base", np.zeros((5, 3, 6)))]:
        state = engine.get_state()
        state[entry] = value
        with pytest.raises(ValueError, match="state"):
            engine.set_state(state)
    state = engine.get_state()
    del state["features.scale"]
    with pytest.raises(ValueError, match="state must have arrays"):
        engine.set_state(state)


def test_files_with_per_kernel_frequencies_load_when_they_are_one_draw_per_family():
    """Files written when shared draws were stored as every kernel's frequencies ('weights',
    (n_kernels, n_features, n_components)) load into the shared bank; anything else is refused."""
    model, X = _fitted_shared()
    state = model._engine.get_state()
    legacy = {name: a for name, a in state.items() if not name.startswith("features.")}
    legacy["features.weights"] = model.features_.frequencies_.transpose(0, 2, 1).copy()
    fresh = Raker(KERNELS, n_components=5, shared_draw=True, random_state=99)
    engine = fresh._engine_for(3)
    engine.set_state(legacy)
    np.testing.assert_allclose(engine.get_state()["features.base"], state["features.base"],
                               rtol=1e-15, atol=0)
    np.testing.assert_array_equal(engine.get_state()["features.family"], FAMILIES)
    np.testing.assert_allclose(fresh.predict(X), model.predict(X), rtol=0, atol=1e-12)
    independent = legacy.copy()
    independent["features.weights"] = legacy["features.weights"].copy()
    independent["features.weights"][2] *= 1.001          # not a scale of kernel 0's draw
    with pytest.raises(ValueError, match="one draw per kernel family"):
        Raker(KERNELS, n_components=5, shared_draw=True)._engine_for(3).set_state(independent)
    short = dict(legacy, **{"features.weights": legacy["features.weights"][:, :, :4]})
    with pytest.raises(ValueError, match="'weights' must be finite float64"):
        Raker(KERNELS, n_components=5, shared_draw=True)._engine_for(3).set_state(short)


def test_files_holding_the_one_shared_draw_load_for_kernels_of_one_family():
    """The bandit models' earlier files stored the one draw of a single family ('weights',
    (1, n_features, n_components)); they load as that family's base.  A one-kernel file is
    ambiguous (draw or frequencies) unless sigma is 1, and is refused."""
    gaussians = [Gaussian(s) for s in (0.5, 1.0, 2.0)]
    X = np.random.default_rng(4).uniform(-1, 1, (40, 3))
    model = RFOKS(gaussians, n_components=6, shared_draw=True, random_state=1).fit(X, X[:, 0])
    state = model._engine.get_state()
    old = {name: a for name, a in state.items() if not name.startswith("features.")}
    old["features.weights"] = state["features.base"].copy()
    fresh = RFOKS(gaussians, n_components=6, shared_draw=True, random_state=7)
    engine = fresh._engine_for(3)
    engine.set_state(old)
    np.testing.assert_array_equal(engine.get_state()["features.base"], state["features.base"])
    np.testing.assert_array_equal(fresh.predict(X), model.predict(X))
    single = RFOKS([Gaussian(0.5)], n_components=6, shared_draw=True, random_state=1)
    single.fit(X, X[:, 0])
    state = single._engine.get_state()
    one = {name: a for name, a in state.items() if not name.startswith("features.")}
    one["features.weights"] = state["features.base"].copy()
    with pytest.raises(ValueError, match="refit the model"):
        RFOKS([Gaussian(0.5)], n_components=6, shared_draw=True)._engine_for(3).set_state(one)


def test_constructor_checks():
    base = np.ones((2, 3, 4))
    with pytest.raises(ValueError, match="base must have shape"):
        SharedDrawRFFBank(np.ones((3, 4)), [0], [1.0])
    with pytest.raises(ValueError, match="vectors of one length"):
        SharedDrawRFFBank(base, [0, 1], [1.0])
    with pytest.raises(ValueError, match="vectors of one length"):
        SharedDrawRFFBank(base, [0.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="family indices"):
        SharedDrawRFFBank(base, [0, 2], [1.0, 1.0])
    with pytest.raises(ValueError, match="positive"):
        SharedDrawRFFBank(base, [0, 1], [1.0, 0.0])


def test_threads_transforming_with_one_bank_agree_with_serial():
    """The projections live in each call's own work space, never in the bank."""
    rng = np.random.default_rng(3)
    f = RandomFourierFeatures(KERNELS, 16, random_state=0, shared_draw=True).fit(n_features=6)
    inputs = [rng.normal(size=(400, 6)) for _ in range(4)]
    serial = [f.transform(X) for X in inputs]
    results = [None] * 4

    def run(i):
        for _ in range(5):
            results[i] = f.transform(inputs[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, serial):
        np.testing.assert_array_equal(got, want)
