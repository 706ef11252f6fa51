"""Regressors learn in the units the user gives: NystromAWV, DoublySGDRegressor, NORMA,
ProsNKons and the bandit regressors standardise their targets online (the papers' raw units one argument away), checked against a NumPy
computation of the standardisation around the raw-unit model, whose own equations
tests/test_pkawv_nystrom.py and tests/test_dsg_core.py check."""

import numpy as np
import pytest

import fastomkl
from fastomkl import DoublySGDRegressor, Gaussian, NystromAWV
from fastomkl.dsg import NORMA, merge
from helpers import loaded_as_older_file
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


def expected_standardised(make, X, y):
    """What a standardising model predicts, from the raw-unit model ``make(False)`` learning the
    standardised targets (see test_nystrom_learns_standardised_targets)."""
    y = winsorised_stream(y)
    mean, std = running_units(y)
    g = make(False).predict_learn(X, (y - mean) / std)
    center = np.concatenate([[0.0], mean[:-1]])
    scale = np.concatenate([[1.0, 1.0], std[1:-1]])
    return center + scale * g


DSG_CASES = {
    "default": {},
    "algorithm-1": {"kernel": Gaussian(0.7), "batch_size": 1, "block_size": 1, "nu": 0.01},
    "huber-average": {"loss": "huber", "epsilon": 0.5, "average": True, "batch_size": 8,
                      "block_size": 16},
    "absolute-revisit": {"loss": "absolute", "kernel": Gaussian(0.7), "batch_size": 5,
                         "block_size": 8, "n_features_max": 32},
    "precondition": {"precondition": True, "eta": 0.5, "batch_size": 20, "block_size": 8},
}


@pytest.mark.parametrize("case", sorted(DSG_CASES))
def test_dsg_learns_standardised_targets(case):
    """DSG's mini-batches: each round's gradient is taken at the target standardised with the
    statistics of that round (the batch's rounds each with their own), exactly as the raw-unit
    model on the standardised stream; predictions mapped back, whether learnt in one call or
    row by row."""
    X, y = stream()

    def make(standardize):
        return DoublySGDRegressor(random_state=3, standardize_target=standardize,
                                  **DSG_CASES[case])
    got = make(True).predict_learn(X, y)
    np.testing.assert_allclose(got, expected_standardised(make, X, y), rtol=1e-12, atol=1e-9)
    one_by_one = make(True)
    np.testing.assert_allclose([one_by_one.predict_learn_one(x, t) for x, t in zip(X, y)], got,
                               rtol=1e-12, atol=1e-9)


def test_dsg_units_do_not_change_the_standardised_model():
    """Targets a y + b: the standardised model's predictions are a f + b (to rounding), where
    raw units change the model (it starts from 0 and climbs to b)."""
    X, y = stream()
    base = DoublySGDRegressor(random_state=0).predict_learn(X, (y - 150.0) / 60.0)
    moved = DoublySGDRegressor(random_state=0).predict_learn(X, y)
    assert base[0] == moved[0] == 0.0                  # nothing seen: 0 in any units
    np.testing.assert_allclose(moved[1:], 150.0 + 60.0 * base[1:], rtol=1e-9, atol=1e-9)


def test_merged_standardising_dsg_models_predict_their_average():
    """Shards of unequal sizes and target units: merge is still exactly their average (each
    model's coefficients in the merged units), and learns on from statistics of every target."""
    X, y = stream(400)
    params = dict(kernel=Gaussian(0.7), random_state=0, n_features_max=None, batch_size=8,
                  block_size=16)
    shards = [(X[:100], y[:100]), (X[100:250], 3.0 * y[100:250] - 200.0), (X[250:], y[250:])]
    models = [DoublySGDRegressor(stream=w, **params).fit(Xw, yw, shuffle=False)
              for w, (Xw, yw) in enumerate(shards)]
    merged = merge(models)
    average = np.mean([m.predict(X) for m in models], axis=0)
    np.testing.assert_allclose(merged.predict(X), average, rtol=1e-12, atol=1e-9)
    count, mean, variance = merged._engine.get_state()["engine.target"]
    targets = np.concatenate([yw for _, yw in shards])
    means = [yw.mean() for _, yw in shards]
    assert count == len(targets)
    np.testing.assert_allclose(mean, np.mean(means), rtol=1e-12)
    np.testing.assert_allclose(variance, np.mean((targets - np.mean(means)) ** 2), rtol=1e-10)
    merged.partial_fit(X[:40], y[:40])
    assert np.isfinite(merged.predict(X)).all()


def test_dsg_merge_of_raw_unit_models_is_unchanged():
    """standardize_target=False: the coefficients are each model's divided by W and the
    statistics the pooled ones, as before the parameter existed."""
    X, y = stream(300)
    models = [DoublySGDRegressor(kernel=Gaussian(0.7), random_state=0, stream=w, eta=1.0,
                                 n_features_max=None, batch_size=8, block_size=16,
                                 standardize_target=False).fit(X[w::3], y[w::3], shuffle=False)
              for w in range(3)]
    merged = merge(models)
    np.testing.assert_allclose(merged.predict(X), np.mean([m.predict(X) for m in models], axis=0),
                               rtol=1e-12, atol=1e-9)
    count, mean, variance = merged._engine.get_state()["engine.target"]
    targets = np.concatenate([y[w::3] for w in range(3)])
    np.testing.assert_allclose([count, mean, variance], [300, targets.mean(), targets.var()],
                               rtol=1e-12)


def prequential_mae_on_diabetes():
    """Mean absolute error of each prediction before its row is learnt, on scikit-learn's
    diabetes (columns standardised, as users do; y in 25 .. 346, in its order): the running mean
    of the targets, and the default NystromAWV and DoublySGDRegressor in both units."""
    from sklearn.datasets import load_diabetes
    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    mean = np.concatenate([[0.0], np.cumsum(y)[:-1]]) / np.maximum(np.arange(len(y)), 1)
    mae = {"running mean": np.mean(np.abs(mean - y))}
    for cls in (NystromAWV, DoublySGDRegressor):
        for standardize in (True, False):
            model = cls(random_state=0, standardize_target=standardize)
            mae[cls.__name__, standardize] = np.mean(np.abs(model.predict_learn(X, y) - y))
    return mae


def test_standardised_targets_beat_raw_units_on_diabetes():
    mae = prequential_mae_on_diabetes()
    for cls in ("NystromAWV", "DoublySGDRegressor"):
        assert mae[cls, True] < min(mae["running mean"], mae[cls, False])


BANDIT_REGRESSORS = {"OKS": {}, "RFOKS": {"n_components": 16}, "OKSPlusPlus": {},
                     "RFOKSPlusPlus": {"n_components": 16}, "IOKS": {},
                     "RFIOKS": {"n_components": 16}, "LKMBooks": {"B": 40}}


def bandit_regressor(name, standardize_target=True, **params):
    """A small bandit regressor (or ProsNKons), standardising unless told not to (RF-OKS++'s and
    LKMBooks' default is not to)."""
    return getattr(fastomkl, name)(random_state=3, standardize_target=standardize_target,
                                   **BANDIT_REGRESSORS.get(name, {}), **params)


@pytest.mark.parametrize("make", [
    lambda standardize: NystromAWV(random_state=0, standardize_target=standardize),
    lambda standardize: DoublySGDRegressor(batch_size=8, block_size=16, random_state=0,
                                           standardize_target=standardize),
    *[lambda standardize, name=name: bandit_regressor(name, standardize)
      for name in ["ProsNKons", *sorted(BANDIT_REGRESSORS)]]],
    ids=["nystrom", "dsg", "ProsNKons", *sorted(BANDIT_REGRESSORS)])
def test_files_without_the_parameter_load_in_raw_units(tmp_path, make):
    """A file written before ``standardize_target`` existed learnt in raw units: it loads so,
    and continues bit-identically."""
    X, y = stream(120)
    model = make(False).fit(X[:60], y[:60])
    loaded = loaded_as_older_file(model, tmp_path, ["standardize_target"], X[60:], y[60:])
    assert loaded.standardize_target is False


@pytest.mark.parametrize("eta", ["ensemble", 0.5])
def test_norma_learns_standardised_targets(eta):
    """NORMA standardises as DSG: each round of a batch learns its target in the units of that
    round, exactly as the raw-unit model on the standardised stream; predictions mapped back."""
    X, y = stream()
    make = lambda standardize: NORMA(Gaussian(0.7), budget=64, batch_size=8, eta=eta,
                                     standardize_target=standardize)
    np.testing.assert_allclose(make(True).predict_learn(X, y), expected_standardised(make, X, y),
                               rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("name", sorted(set(BANDIT_REGRESSORS) - {"LKMBooks"}) + ["ProsNKons"])
def test_bandit_regressors_and_pros_n_kons_learn_standardised_targets(name):
    """Each round learns its target standardised with the statistics of that round: the
    raw-unit model on the standardised stream, predictions mapped back (the same kernel draws,
    seeded alike).  (LKMBooks' mixture also learns from the combined prediction, which the
    engine gives it in the units of the round's target, saturated: see the next test.)"""
    X, y = stream()
    make = lambda standardize: bandit_regressor(name, standardize_target=standardize)  # noqa
    np.testing.assert_allclose(make(True).predict_learn(X, y), expected_standardised(make, X, y),
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", sorted(BANDIT_REGRESSORS))
def test_standardised_bandit_regressors_answer_in_the_units_of_y(name):
    """Learning a y + b is learning y with every prediction moved by a y_hat + b, from the third
    round (the first predicts 0, the second learns from one target); raw units are not."""
    X, y = stream()
    got = bandit_regressor(name).predict_learn(X, y)
    moved = bandit_regressor(name).predict_learn(X, -0.01 * y + 40.0)
    np.testing.assert_allclose(moved[2:], -0.01 * got[2:] + 40.0, rtol=1e-9, atol=1e-9)
    raw = bandit_regressor(name, standardize_target=False)
    raw_moved = bandit_regressor(name, standardize_target=False).predict_learn(X, -0.01 * y + 40)
    assert not np.allclose(raw_moved[2:], -0.01 * raw.predict_learn(X, y)[2:] + 40.0, atol=1e-3)
