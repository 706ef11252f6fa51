"""PKAWV with a user-given embedding (spec 002 §3.2)."""
import numpy as np
import pytest

from fastomkl.pkawv import FixedEmbeddingAWV, TaylorAWV
from tests import pkawv_reference as ref


def test_equals_direct_solves_and_taylor_with_its_features():
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (80, 3)), rng.normal(size=80)
    phi = lambda X: ref.taylor_features(X, 2, 1.0)          # noqa: E731
    for mode in ("vaw", "ridge"):
        model = FixedEmbeddingAWV(phi, lam=0.5, mode=mode)
        got = model.predict_learn(X[:60], y[:60])
        np.testing.assert_allclose(got, ref.linear_awv(phi(X[:60]), y[:60], 0.5, mode),
                                   rtol=1e-10, atol=1e-12)
        taylor = TaylorAWV(degree=2, lam=0.5, mode=mode, center=False).fit(X[:60], y[:60])
        ones = [model.predict_learn_one(x, v) for x, v in zip(X[60:], y[60:])]
        np.testing.assert_allclose(ones, taylor.predict_learn(X[60:], y[60:]), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(model.predict(X), taylor.predict(X), rtol=1e-10, atol=1e-12)


def test_a_bad_map_is_a_value_error_and_changes_nothing():
    rng = np.random.default_rng(1)
    X, y = rng.uniform(-1, 1, (30, 2)), rng.normal(size=30)
    calls = {"bad": False}

    def phi(X):
        out = np.hstack([X, X ** 2])
        if calls["bad"]:
            out[0, 0] = np.nan
        return out

    model = FixedEmbeddingAWV(phi).fit(X, y)
    before = model.predict(X)
    calls["bad"] = True
    with pytest.raises(ValueError):
        model.partial_fit(X, y)
    with pytest.raises(ValueError):
        model.learn_one(X[0], 1.0)
    calls["bad"] = False
    np.testing.assert_array_equal(model.predict(X), before)
    with pytest.raises(ValueError):
        FixedEmbeddingAWV(None).fit(X, y)
