"""Bad input raises ValueError saying what was wrong, and leaves the model byte-for-byte unchanged."""
import numpy as np
import pytest

from fastomkl import Gaussian, Laplacian, Raker, RakerClassifier
from helpers import state_bytes

KERNELS = [Gaussian(0.5), Laplacian(1.0)]
GOOD_X = np.array([0.1, 0.2, 0.3])

BAD_SAMPLES = [
    ([0.1, np.nan, 0.3], "NaN"),
    ([0.1, np.inf, 0.3], "NaN or infinity"),
    ([[0.1, 0.2, 0.3]], "one sample"),
    (["a", "b", "c"], "real numbers"),
    ([1 + 2j, 0, 0], "real numbers"),
    (None, "x"),
]


@pytest.fixture(params=["fresh", "trained"])
def model(request, stream):
    m = Raker(KERNELS, n_components=6, random_state=0)
    if request.param == "trained":
        rng = np.random.default_rng(0)
        m.partial_fit(rng.uniform(size=(30, 3)), rng.uniform(size=30))
    return m


@pytest.mark.parametrize("x,message", BAD_SAMPLES)
@pytest.mark.parametrize("method", ["predict_one", "learn_one", "predict_learn_one"])
def test_bad_sample(model, method, x, message):
    before = state_bytes(model)
    args = (x,) if method == "predict_one" else (x, 0.5)
    if method == "predict_one" and model.n_samples_seen_ == 0:
        message = "has seen no data"          # NotFittedError, a ValueError, whatever x is
    with pytest.raises(ValueError, match=message):
        getattr(model, method)(*args)
    assert state_bytes(model) == before


@pytest.mark.parametrize("x,message", [([0.1, 0.2], "has 2 features"),
                                       ([0.1, 0.2, 0.3, 0.4], "has 4 features")])
@pytest.mark.parametrize("method", ["predict_one", "learn_one", "predict_learn_one"])
def test_wrong_width_after_training(stream, method, x, message):
    rng = np.random.default_rng(0)
    model = Raker(KERNELS, n_components=6, random_state=0).partial_fit(rng.uniform(size=(5, 3)),
                                                                       rng.uniform(size=5))
    before = state_bytes(model)
    args = (x,) if method == "predict_one" else (x, 0.5)
    with pytest.raises(ValueError, match=message):
        getattr(model, method)(*args)
    assert state_bytes(model) == before


@pytest.mark.parametrize("y", [np.nan, np.inf, "high", None, [1.0]])
def test_bad_target(model, y):
    before = state_bytes(model)
    with pytest.raises(ValueError, match="y"):
        model.predict_learn_one(GOOD_X, y)
    assert state_bytes(model) == before


@pytest.mark.parametrize("X,y,message", [
    (np.full((4, 3), np.nan), np.zeros(4), "NaN"),
    (np.zeros(3), np.zeros(1), "2-D"),
    (np.zeros((4, 3)), np.zeros(3), "3 values but X has 4 rows"),
    (np.zeros((4, 3)), np.array([0, 0, np.nan, 0]), "NaN"),
    (np.zeros((4, 3)), np.zeros((4, 1)), "1-D"),
    ([["a"] * 3] * 4, np.zeros(4), "real numbers"),
])
@pytest.mark.parametrize("method", ["partial_fit", "fit", "predict_learn"])
def test_bad_batch(model, method, X, y, message):
    before = state_bytes(model)
    with pytest.raises(ValueError, match=message):
        getattr(model, method)(X, y)
    assert state_bytes(model) == before


@pytest.mark.parametrize("method", ["partial_fit", "predict_learn"])
def test_batch_of_wrong_width_after_training(method):
    rng = np.random.default_rng(0)
    model = Raker(KERNELS, n_components=6, random_state=0).partial_fit(rng.uniform(size=(5, 3)),
                                                                       rng.uniform(size=5))
    before = state_bytes(model)
    with pytest.raises(ValueError, match="expecting 3 features"):
        getattr(model, method)(np.zeros((4, 2)), np.zeros(4))
    assert state_bytes(model) == before


def test_bad_predict_batch():
    rng = np.random.default_rng(0)
    model = Raker(KERNELS, n_components=6, random_state=0).partial_fit(rng.uniform(size=(5, 3)),
                                                                       rng.uniform(size=5))
    before = state_bytes(model)
    for X in (np.zeros((2, 4)), np.array([[np.nan, 0, 0]])):
        with pytest.raises(ValueError):
            model.predict(X)
    assert state_bytes(model) == before


@pytest.mark.parametrize("params,message", [
    ({"n_components": 0}, "n_components"), ({"n_components": 2.5}, "n_components"),
    ({"eta": 0.0}, "eta"), ({"eta": "fast"}, "eta"), ({"eta_schedule": "linear"}, "eta_schedule"),
    ({"lam": -1.0}, "lam"), ({"loss": "logistic"}, "loss"), ({"kernels": []}, "kernels"),
    ({"kernels": ["rbf"]}, "kernels"), ({"random_state": "seed"}, "random_state"),
    ({"random_state": -3}, "random_state"), ({"eta_hedge": -2.0}, "eta_hedge"),
])
def test_bad_params_raise_at_first_use(params, message):
    m = Raker(**{"kernels": KERNELS, **params})
    before = state_bytes(m)
    with pytest.raises(ValueError, match=message):
        m.learn_one(GOOD_X, 0.1)
    assert state_bytes(m) == before and m._engine is None


def test_classifier_new_label_with_bad_x_records_nothing():
    m = RakerClassifier(KERNELS, n_components=4, random_state=0)
    m.learn_one(GOOD_X, "a")
    before = state_bytes(m)
    with pytest.raises(ValueError, match="NaN"):
        m.learn_one([np.nan, 0, 0], "b")
    assert state_bytes(m) == before and list(m.classes_) == ["a"]


def test_classifier_bad_labels():
    m = RakerClassifier(KERNELS, n_components=4, random_state=0)
    m.partial_fit(np.zeros((2, 3)), ["a", "b"])
    before = state_bytes(m)
    for bad in ("c", np.nan, None, [1]):
        with pytest.raises(ValueError):
            m.learn_one(GOOD_X, bad)
    with pytest.raises(ValueError, match="NaN"):
        m.learn_one([np.nan, 0, 0], "a")
    with pytest.raises(ValueError, match="more than two"):
        m.partial_fit(np.zeros((3, 3)), ["a", "b", "c"])
    with pytest.raises(ValueError, match="loss"):
        RakerClassifier(KERNELS, loss="squared").learn_one(GOOD_X, 1)
    assert state_bytes(m) == before
