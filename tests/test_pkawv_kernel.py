"""Exact Kernel-AWV and online KRR (spec 002 §3.1, tests §9.2 items 3 and 7)."""
import warnings

import numpy as np
import pytest

from fastomkl import BudgetWarning, load
from fastomkl.pkawv import AWV_ENSEMBLE_LAMS, AWV_ENSEMBLE_RATE, KernelAWV, KernelAWVClassifier
from fastomkl.kernels import Gaussian
from tests import pkawv_reference as ref


def data(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    return X, np.clip(np.sin(3 * X[:, 0]) + 0.2 * rng.normal(size=n), -1, 1)


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_equals_the_dual_formula(mode, center):
    """The dual formula on the labels, or with center on the labels less their running mean
    (added back to each prediction); y + 5 shows the offset costs a centred model nothing."""
    X, y = data(90)
    y = y + 5.0
    got = KernelAWV(kernel=Gaussian(0.7), lam=0.3, mode=mode, center=center).predict_learn(X, y)
    awv = lambda targets: ref.kernel_awv(X, targets, 0.7, 0.3, mode)      # noqa: E731
    expected = ref.centred(awv, y) if center else awv(y)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    if center:
        shifted = KernelAWV(kernel=Gaussian(0.7), lam=0.3, mode=mode).predict_learn(X, y - 5.0)
        np.testing.assert_allclose(got[1:], shifted[1:] + 5.0, rtol=1e-12, atol=1e-9)


def test_awv_is_shrunk_krr_and_the_regret_bound_holds():
    X, y = data(150, seed=1)
    awv = KernelAWV(mode="vaw", lam=1.0, center=False).predict_learn(X, y)
    krr = KernelAWV(mode="ridge", lam=1.0, center=False).predict_learn(X, y)
    var = np.array([1 - ref.gaussian(X[t:t + 1], X[:t], 1.0)[0]
                    @ np.linalg.solve(ref.gaussian(X[:t], X[:t], 1.0) + np.eye(t),
                                      ref.gaussian(X[:t], X[t:t + 1], 1.0)[:, 0]) for t in range(150)])
    np.testing.assert_allclose(awv, krr / (1 + var), rtol=1e-10, atol=1e-13)
    # Proposition 1 (B = 1, lam = 1): sum (y - y_hat)^2 - lam Y^T (K + lam I)^{-1} Y
    #   <= B^2 sum_k log(1 + lambda_k(K) / lam)
    K = ref.gaussian(X, X, 1.0)
    regret = ((y - awv) ** 2).sum() - y @ np.linalg.solve(K + np.eye(150), y)
    assert regret <= np.log1p(np.linalg.eigvalsh(K)).sum()


def test_factor_persistence_and_guards(tmp_path):
    X, y = data(120, seed=2)
    model = KernelAWV(kernel=Gaussian(0.8), lam=1.0, max_samples=100).partial_fit(X[:80], y[:80])
    L = model._engine.experts.factor()
    K = ref.gaussian(X[:80], X[:80], 0.8) + np.eye(80)
    np.testing.assert_allclose(L, np.linalg.cholesky(K), rtol=1e-10, atol=1e-12)
    model.save(tmp_path / "k.npz")
    copy = load(tmp_path / "k.npz")
    np.testing.assert_array_equal(copy.predict_learn(X[80:95], y[80:95]),
                                  model.predict_learn(X[80:95], y[80:95]))
    state = model._engine.get_state()
    for name, change in (("L", lambda L: L.T.copy()), ("L", lambda L: -L),
                         ("q", lambda q: q[:-1]), ("info", lambda i: i + 1)):
        bad = dict(state)
        bad["experts." + name] = change(np.array(state["experts." + name]))
        with pytest.raises(ValueError):
            model._engine.set_state(bad)
    np.testing.assert_array_equal(model.predict(X), copy.predict(X))


def window_awv(X, y, sigma, lam, mode, window):
    """Kernel-AWV / KRR on the last `window` inputs, by the dual formula (plain NumPy)."""
    out = np.zeros(len(y))
    for t in range(len(y)):
        past = slice(max(0, t - window), t)
        if t == 0:
            continue
        k = ref.gaussian(X[past], X[t:t + 1], sigma)[:, 0]
        A = ref.gaussian(X[past], X[past], sigma) + lam * np.eye(len(k))
        ridge = k @ np.linalg.solve(A, y[past])
        e = max(1.0 - k @ np.linalg.solve(A, k), 0.0)
        out[t] = ridge if mode == "ridge" else ridge / (1 + e / lam)
    return out


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_a_full_model_is_kernel_awv_on_its_last_max_samples_inputs(mode, center):
    """Past max_samples the oldest input leaves as each new one joins (the factor downdated by
    a rank-one update): every prediction equals the dual formula on the window, the factor
    stays the Cholesky factor of the window's K + lam I, and a BudgetWarning says so once."""
    from fastomkl import BudgetWarning
    X, y = data(200, seed=5)
    model = KernelAWV(kernel=Gaussian(0.7), lam=0.3, mode=mode, max_samples=40, center=center)
    with pytest.warns(BudgetWarning, match="last 40 inputs"):
        got = model.predict_learn(X, y)
    awv = lambda targets: window_awv(X, targets, 0.7, 0.3, mode, 40)     # noqa: E731
    expected = ref.centred(awv, y) if center else awv(y)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    L = model._engine.experts.factor()
    K = ref.gaussian(X[-40:], X[-40:], 0.7) + 0.3 * np.eye(40)
    np.testing.assert_allclose(L, np.linalg.cholesky(K), rtol=1e-9, atol=1e-12)
    assert model.budget_reached_ and model._engine.experts.capacity == 40


def test_a_full_window_continues_identically_after_load(tmp_path):
    X, y = data(90, seed=6)
    model = KernelAWV(kernel=Gaussian(0.8), max_samples=30)
    model.predict_learn(X[:50], y[:50])
    model.save(tmp_path / "w.npz")
    copy = load(tmp_path / "w.npz")
    assert copy.budget_reached_
    np.testing.assert_array_equal(copy.predict_learn(X[50:], y[50:]),
                                  model.predict_learn(X[50:], y[50:]))


def test_classifier():
    X, _ = data(200, d=2, seed=3)
    labels = np.where(X[:, 0] * X[:, 1] > 0, "a", "b")
    clf = KernelAWVClassifier(kernel=Gaussian(0.5), mode="ridge")
    online = clf.predict_learn(X, labels)
    assert (online[100:] == labels[100:]).mean() > 0.85


def test_capacity_never_exceeds_max_samples():
    """Growing by doubling stops at max_samples: 100 samples in a model capped at 70 would
    otherwise reach a capacity of 128."""
    X, y = data(70, seed=4)
    model = KernelAWV(kernel=Gaussian(0.8), max_samples=70)
    for x, target in zip(X, y):
        model.learn_one(x, target)
    assert model._engine.experts.capacity == 70


def test_files_written_before_centring_load_uncentred_and_continue(tmp_path):
    """Files of KernelAWV written before ``center`` existed learnt the labels as they came: they
    load so and continue bit-identically."""
    from helpers import as_older_file
    X, y = data(90, seed=7)
    older = KernelAWV(kernel=Gaussian(0.8), lam=1.0, center=False).partial_fit(X[:60], y[:60])
    older.save(tmp_path / "new.npz")
    as_older_file(tmp_path / "new.npz", tmp_path / "old.npz", params=["center"])
    loaded = load(tmp_path / "old.npz")
    assert loaded.center is False
    np.testing.assert_array_equal(loaded.predict_learn(X[60:], y[60:]),
                                  older.predict_learn(X[60:], y[60:]))


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
@pytest.mark.parametrize("window", [None, 30])
def test_the_ridge_ensemble_mixes_the_dual_formulas(mode, window):
    """lam="ensemble": the dual formula of each ridge of AWV_ENSEMBLE_LAMS on the centred labels
    (on the last `window` inputs, each factor downdated in turn), mixed by exponential weights at
    AWV_ENSEMBLE_RATE over the running variance of the centred labels (plain NumPy)."""
    X, y = data(110, seed=7)
    y = 50.0 + 20.0 * y
    model = KernelAWV(kernel=Gaussian(0.7), mode=mode, max_samples=window)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetWarning)
        got = model.predict_learn(X, y)
    solves = [lambda t, lam=lam: (window_awv(X, t, 0.7, lam, mode, window) if window
                                  else ref.kernel_awv(X, t, 0.7, lam, mode))
              for lam in AWV_ENSEMBLE_LAMS["regressor"]]
    expected, weights = ref.centred_ridge_ensemble(solves, y, AWV_ENSEMBLE_RATE)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.ridge_weights_, weights, rtol=1e-7, atol=1e-12)
    for i, lam in enumerate(AWV_ENSEMBLE_LAMS["regressor"]):
        n = 30 if window else 110
        K = ref.gaussian(X[-n:], X[-n:], 0.7) + lam * np.eye(n)
        np.testing.assert_allclose(model._engine.experts.factor(i), np.linalg.cholesky(K),
                                   rtol=1e-9, atol=1e-12)


def test_the_ridge_ensemble_learns_in_the_units_it_is_given():
    """Centred labels and a rate over their variance: labels scaled by 1000 scale every
    prediction by 1000 and leave the ridges' weights as they were (a fixed rate on the squared
    losses would weigh them 10^6 times faster)."""
    X, y = data(80, seed=8)
    small, large = KernelAWV(kernel=Gaussian(0.7)), KernelAWV(kernel=Gaussian(0.7))
    np.testing.assert_allclose(large.predict_learn(X, 1000.0 * y),
                               1000.0 * small.predict_learn(X, y), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(large.ridge_weights_, small.ridge_weights_, rtol=1e-6,
                               atol=1e-300)


def test_the_classifier_ensemble_uses_the_classifier_ridges():
    X, _ = data(150, d=2, seed=3)
    labels = np.where(X[:, 0] * X[:, 1] > 0, "a", "b")
    clf = KernelAWVClassifier(kernel=Gaussian(0.5))
    online = clf.predict_learn(X, labels)
    codes = np.where(labels == "b", 1.0, -1.0)
    solves = [lambda t, lam=lam: ref.kernel_awv(X, t, 0.5, lam, "vaw")
              for lam in AWV_ENSEMBLE_LAMS["classifier"]]
    scores, _ = ref.centred_ridge_ensemble(solves, codes, AWV_ENSEMBLE_RATE)
    np.testing.assert_array_equal(online, np.where(scores > 0, "b", "a"))


def test_a_stacked_factor_is_checked_expert_by_expert(tmp_path):
    """The ensemble's state stacks the experts' factors: a file whose second factor is not a
    Cholesky factor of K + lam I is refused, and the model is left as it was."""
    X, y = data(40, seed=9)
    model = KernelAWV(kernel=Gaussian(0.8)).partial_fit(X, y)
    state = model._engine.get_state()
    assert state["experts.L"].shape == (3 * 40, 40)
    before = model.predict(X)
    for change in (lambda L: np.vstack([L[:40], L[40:80].T, L[80:]]),
                   lambda L: np.vstack([L[:40], 2.0 * L[40:80], L[80:]])):
        bad = dict(state)
        bad["experts.L"] = change(np.array(state["experts.L"]))
        with pytest.raises(ValueError, match="KernelAWVExperts"):
            model._engine.set_state(bad)
    np.testing.assert_array_equal(model.predict(X), before)
    model.save(tmp_path / "e.npz")
    np.testing.assert_array_equal(load(tmp_path / "e.npz").predict_learn(X[:5], y[:5]),
                                  model.predict_learn(X[:5], y[:5]))
