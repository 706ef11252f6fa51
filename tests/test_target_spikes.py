"""A burst of absurd targets washes out: every regressor winsorises its targets (after a warm-up
of TARGET_WARMUP targets, a target beyond TARGET_CLIP standard deviations of the mean of those
before it enters the statistics and the model as mean +- TARGET_CLIP sd), checked against a plain
NumPy computation of the same equations, and no spike leaves a model predicting its scale on
normal data afterwards."""
import inspect
import warnings

import numpy as np
import pytest

import fastomkl
from fastomkl import Gaussian, Raker, VAW
from fastomkl._core import engine as engine_module
from fastomkl._estimator import BinaryClassifier, MulticlassClassifier, OnlineEstimator
from reference import CLIP, WARMUP, NumpyRaker, winsorised_stream

REGRESSORS = sorted({getattr(fastomkl, name) for name in fastomkl.__all__
                     if inspect.isclass(getattr(fastomkl, name))
                     and issubclass(getattr(fastomkl, name), OnlineEstimator)
                     and not issubclass(getattr(fastomkl, name),
                                        (BinaryClassifier, MulticlassClassifier))},
                    key=lambda cls: cls.__name__)
KERNELS = [Gaussian(0.3), Gaussian(1.0)]


def normal_rows(rng, n):
    X = rng.uniform(-1, 1, (n, 3))
    return X, np.sin(3 * X[:, 0]) + X[:, 1] ** 2


def spiky_stream(seed=0):
    """1,040 normal rows of which 40, one every 26 from the 14th on, carry a target of +-1e140;
    then 1,000 normal rows; and 200 normal rows to test on."""
    rng = np.random.default_rng(seed)
    X1, y1 = normal_rows(rng, 1040)
    X2, y2 = normal_rows(rng, 1000)
    spikes = 13 + 26 * np.arange(40)
    y1[spikes] = rng.choice([-1e140, 1e140], 40)
    return np.vstack([X1, X2]), np.concatenate([y1, y2]), normal_rows(rng, 200), spikes


def quietly(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastomkl.NumericalWarning)
        warnings.simplefilter("ignore", fastomkl.BudgetWarning)
        return call()


def test_the_reference_uses_the_library_constants():
    assert (engine_module.TARGET_WARMUP, engine_module.TARGET_CLIP) == (WARMUP, CLIP)


def test_winsorised_stream_clips_only_after_the_warm_up():
    y = np.concatenate([np.arange(WARMUP, dtype=float), [1e140, 3.0, -1e140]])
    w = winsorised_stream(y)
    np.testing.assert_array_equal(w[:WARMUP], y[:WARMUP])
    mean, std = y[:WARMUP].mean(), y[:WARMUP].std()
    assert w[WARMUP] == mean + CLIP * std
    assert w[WARMUP + 1] == 3.0
    assert w[-1] == np.mean(w[:-1]) - CLIP * np.std(w[:-1])
    first = np.array([1e140] + [1.0] * 20)          # within the warm-up: taken as it is
    assert winsorised_stream(first)[0] == 1e140


def test_standardised_targets_match_numpy_through_spikes():
    """eta="auto" Raker on a stream with spikes after the warm-up: the compiled winsorised
    standardisation against NumpyRaker (reference.winsorised before the running mean and std)."""
    rng = np.random.default_rng(4)
    X, y = normal_rows(rng, 160)
    X /= np.linalg.norm(X, axis=1).max()
    y = 120.0 + 40.0 * y
    y[[15, 40, 41, 90]] = [1e140, -1e140, 1e12, -5e3]
    model = Raker(KERNELS, n_components=10, eta="auto", random_state=3)
    got = model.predict_learn(X, y)
    ref = NumpyRaker(model.features_.frequencies_, eta="auto")
    want = np.array([ref.predict_learn_one(x, t) for x, t in zip(X, y)])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.predict(X[:20]), [ref.predict_one(x) for x in X[:20]],
                               rtol=1e-9, atol=1e-9)
    w = winsorised_stream(y)
    assert np.abs(w).max() < 1e3                       # every spike clipped
    count, mean, variance = model._engine.get_state()["engine.target"]
    assert count == len(y)
    np.testing.assert_allclose([mean, variance], [w.mean(), w.var()], rtol=1e-12)


def test_raw_unit_models_learn_the_winsorised_targets():
    """A model that learns in the units of y (VAW) learns the winsorised targets: the same
    predictions as on the NumPy-winsorised stream, where nothing is left to clip."""
    rng = np.random.default_rng(5)
    X, y = normal_rows(rng, 200)
    y[[12, 50, 51, 120]] = [-1e140, 1e140, 1e140, 1e9]
    spiky = VAW(Gaussian(1.0), n_components=8, random_state=0).predict_learn(X, y)
    clean = VAW(Gaussian(1.0), n_components=8, random_state=0).predict_learn(
        X, winsorised_stream(y))
    np.testing.assert_allclose(spiky, clean, rtol=1e-9, atol=1e-9)
    assert np.abs(spiky).max() < 1e3


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda cls: cls.__name__)
def test_a_burst_of_spikes_washes_out(cls):
    """40 targets of +-1e140 among 1,000 normal ones, then 1,000 normal rows: every prediction
    finite (a Mixture's too, during the spikes), and on normal data at the end within 100 times
    the normal targets' scale (before the winsorisation: about 1e138)."""
    X, y, (X_test, y_test), spikes = spiky_stream()
    params = cls._unit_test_params()[0]            # as tests/test_common.py builds every class
    if params.get("T") is not None:
        params = {**params, "T": None}            # a horizon shorter than the stream: doubling
    model = cls(**params)
    online = quietly(lambda: model.predict_learn(X, y))
    assert np.isfinite(online).all()
    predicted = model.predict(X_test)
    assert np.isfinite(predicted).all()
    assert np.abs(predicted).max() < 100 * np.abs(y_test).max()


def test_a_state_without_target_statistics_loads_as_a_fresh_warm_up():
    """Files written before the raw-unit regressors kept target statistics have no
    'engine.target': they load with none seen.  A standardising engine still requires it, and the
    entry is checked wherever it is."""
    rng = np.random.default_rng(6)
    X, y = normal_rows(rng, 50)
    model = VAW(Gaussian(1.0), n_components=8, random_state=0).fit(X, y)
    state = model._engine.get_state()
    assert state["engine.target"][0] == 50
    old = {k: v for k, v in state.items() if k != "engine.target"}
    fresh = VAW(Gaussian(1.0), n_components=8, random_state=0).fit(X[:1], y[:1])
    fresh._engine.set_state(old)
    np.testing.assert_array_equal(fresh._engine.get_state()["engine.target"], np.zeros(3))
    np.testing.assert_array_equal(fresh.predict(X), model.predict(X))
    for bad in ([1.0, np.nan, 0.0], [2.5, 0.0, 1.0], [3.0, 2e150, 1.0], [3.0, 0.0, -1.0]):
        with pytest.raises(ValueError, match="engine.target"):
            fresh._engine.set_state({**state, "engine.target": np.array(bad)})
    standardising = Raker(KERNELS, n_components=8, random_state=0).fit(X, y)
    saved = {k: v for k, v in standardising._engine.get_state().items() if k != "engine.target"}
    with pytest.raises(ValueError, match="engine.target"):
        standardising._engine.set_state(saved)


def test_classifiers_keep_their_labels():
    """A classifier's labels are not winsorised: no target statistics in its state."""
    rng = np.random.default_rng(7)
    X, y = normal_rows(rng, 60)
    model = fastomkl.RakerClassifier(KERNELS, n_components=8, random_state=0).fit(X, y > 0.5)
    assert "engine.target" not in model._engine.get_state()


def test_merged_dsg_models_pool_their_target_statistics():
    from fastomkl.dsg import DoublySGDRegressor, merge
    rng = np.random.default_rng(8)
    X, y = normal_rows(rng, 300)
    y = 50.0 + 10.0 * y
    parts = [DoublySGDRegressor(kernel=Gaussian(1.0), random_state=0, stream=w, batch_size=4,
                                block_size=8, n_features_max=None).fit(X[w::3], y[w::3],
                                                                       shuffle=False)
             for w in range(3)]
    count, mean, variance = merge(parts)._engine.get_state()["engine.target"]
    assert count == len(y)
    np.testing.assert_allclose([mean, variance], [y.mean(), y.var()], rtol=1e-12)


@pytest.mark.parametrize("index", [0, 1])
def test_a_mixture_stays_finite_on_extreme_streams_from_the_first_row(index):
    """Targets of +-1e150 from the first row (inside the warm-up, so nothing is clipped) and
    inputs of +-1e150: every prediction of a Mixture finite."""
    rng = np.random.default_rng(9)
    X = rng.uniform(-1, 1, (200, 3))
    X[::7] = rng.choice([-1e150, 1e150], (len(X[::7]), 3))
    y = rng.choice([-1e150, 1e150, 1.0], 200)
    model = fastomkl.Mixture(**fastomkl.Mixture._unit_test_params()[index])
    assert np.isfinite(quietly(lambda: model.predict_learn(X, y))).all()
    assert np.isfinite(model.predict(X)).all()
