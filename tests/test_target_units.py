"""Regressors learn in the units the user gives: NystromAWV standardises its targets online (the
paper's raw units one argument away), checked against a NumPy computation of the standardisation
around the raw-unit model, whose own equations tests/test_pkawv_nystrom.py checks."""
import json

import numpy as np
import pytest

import fastomkl
from fastomkl import Gaussian, NystromAWV
from reference import winsorised_stream


def running_units(y):
    """(mean, std) of y[:t+1] for every t (NumPy's population std; std 1 while it is 0)."""
    n = np.arange(1, len(y) + 1)
    mean = np.cumsum(y) / n
    var = np.cumsum(y * y) / n - mean ** 2
    std = np.sqrt(np.maximum(var, 0.0))
    exact = np.array([np.std(y[:t + 1]) for t in range(len(y))])
    np.testing.assert_allclose(std, exact, atol=1e-6 * np.abs(y).max())
    std = np.where(exact > 0, exact, 1.0)
    return np.array([np.mean(y[:t + 1]) for t in range(len(y))]), std


def stream(n=250, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    y = 150.0 + 60.0 * np.sin(3 * X[:, 0]) + 5.0 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_nystrom_learns_standardised_targets(mode):
    """Round t predicts m_{t-1} + s_{t-1} g_t, g_t the raw-unit model's prediction after learning
    (w_i - m_i) / s_i for i < t, with m_i, s_i the mean and standard deviation of w_1..w_i and
    w_i the target y_i winsorised against w_1..w_{i-1} (reference.winsorised; on this stream no
    target is clipped, w = y)."""
    X, y = stream()
    got = NystromAWV(Gaussian(0.7), mode=mode, lam=0.5, random_state=3).predict_learn(X, y)
    y = winsorised_stream(y)
    mean, std = running_units(y)
    raw = NystromAWV(Gaussian(0.7), mode=mode, lam=0.5, random_state=3, standardize_target=False)
    g = raw.predict_learn(X, (y - mean) / std)
    center = np.concatenate([[0.0], mean[:-1]])
    scale = np.concatenate([[1.0, 1.0], std[1:-1]])     # 1 until two targets are seen
    np.testing.assert_allclose(got, center + scale * g, rtol=1e-12, atol=1e-9)


def test_standardised_targets_beat_raw_units_on_diabetes():
    from sklearn.datasets import load_diabetes
    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)          # columns standardised, as users do
    mean_mae = np.mean(np.abs(np.concatenate([[0.0], np.cumsum(y)[:-1]])
                              / np.maximum(np.arange(len(y)), 1) - y))
    raw = NystromAWV(random_state=0, standardize_target=False).predict_learn(X, y)
    std = NystromAWV(random_state=0).predict_learn(X, y)
    assert np.mean(np.abs(std - y)) < mean_mae < np.mean(np.abs(raw - y))


def test_files_without_the_parameter_load_in_raw_units(tmp_path):
    """A file written before ``standardize_target`` existed learnt in raw units: it loads so."""
    from fastomkl.persistence import _digest
    X, y = stream(120)
    model = NystromAWV(random_state=0, standardize_target=False).fit(X[:60], y[:60])
    model.save(tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(str(arrays.pop("__header__")))
    del header["params"]["standardize_target"]
    header["digest"] = _digest({k: v for k, v in header.items() if k != "digest"}, arrays, None)
    np.savez(tmp_path / "old.npz", __header__=np.array(json.dumps(header)), **arrays)
    loaded = fastomkl.load(tmp_path / "old.npz")
    assert loaded.standardize_target is False
    np.testing.assert_array_equal(loaded.predict_learn(X[60:], y[60:]),
                                  model.predict_learn(X[60:], y[60:]))
