"""Taylor features of the Gaussian kernel and TaylorAWV (spec 002 §3.3, tests §9.2 items 1-3)."""
from math import comb, factorial

import numpy as np
import pytest

from fastomkl._core.features.taylor import TaylorBank, n_taylor_features, taylor_tables
from fastomkl.pkawv import (AWV_ENSEMBLE_LAMS, AWV_ENSEMBLE_RATE, TaylorAWV, TaylorAWVClassifier,
                            taylor_degree_theory)
from fastomkl.kernels import Gaussian
from tests import pkawv_reference as ref


def bank_features(X, M, sigma):
    from fastomkl._core.features.rff import transform_many
    bank = TaylorBank(X.shape[1], M, [sigma])
    out = np.zeros((X.shape[0], 1, bank.n_outputs))
    transform_many(bank, np.ascontiguousarray(X), out)
    return out[:, 0]


@pytest.mark.parametrize("d, M", [(1, 0), (1, 5), (3, 3), (5, 2), (18, 2), (4, 6)])
def test_basis_size_and_order(d, M):
    parent, var, exponent = taylor_tables(d, M)
    assert parent.shape[0] == n_taylor_features(d, M) == comb(M + d, d)
    bank = TaylorBank(d, M, [1.0])
    np.testing.assert_array_equal(bank.exponents, ref.taylor_exponents(d, M))


@pytest.mark.parametrize("d, M, sigma", [(1, 6, 0.7), (3, 3, 1.0), (5, 4, 1.3), (18, 2, 4.0)])
def test_features_match_closed_form(d, M, sigma):
    X = np.random.default_rng(d).uniform(-1, 1, (20, d))
    np.testing.assert_allclose(bank_features(X, M, sigma), ref.taylor_features(X, M, sigma),
                               rtol=1e-13, atol=1e-15)


def test_inner_products_are_the_truncated_kernel_and_converge():
    rng = np.random.default_rng(0)
    d, sigma = 3, 1.0
    X, Y = rng.uniform(-1, 1, (15, d)), rng.uniform(-1, 1, (12, d))
    K = ref.gaussian(X, Y, sigma)
    R2 = max((X ** 2).sum(1).max(), (Y ** 2).sum(1).max())
    errors = []
    for M in range(0, 12):
        G = bank_features(X, M, sigma) @ bank_features(Y, M, sigma).T
        envelope = np.exp(-((X ** 2).sum(1)[:, None] + (Y ** 2).sum(1)[None, :]) / (2 * sigma ** 2))
        dot = X @ Y.T / sigma ** 2
        truncated = envelope * sum(dot ** j / factorial(j) for j in range(M + 1))
        np.testing.assert_allclose(G, truncated, rtol=1e-13, atol=1e-15)
        err = np.abs(G - K).max()
        assert err <= (R2 / sigma ** 2) ** (M + 1) / factorial(M + 1) + 1e-15     # Lemma 13
        errors.append(err)
    assert errors[-1] < 1e-6 and all(b <= a for a, b in zip(errors, errors[1:]))


def test_orthonormal_basis_in_the_rkhs():
    # <g_k, g_k'>_H = 1[k = k']: a function f = sum_i a_i k(c_i, .) with values f(x) = sum_k w_k g_k(x)
    # has w_k = <f, g_k>_H = sum_i a_i g_k(c_i) and ||f||^2 = a^T K a = sum_k w_k^2 + tail;  as M grows
    # the Taylor coefficients w = G(C)^T a carry the whole RKHS norm.
    rng = np.random.default_rng(1)
    C, a = rng.uniform(-0.5, 0.5, (6, 2)), rng.normal(size=6)
    norm2 = a @ ref.gaussian(C, C, 1.0) @ a
    w = bank_features(C, 14, 1.0).T @ a
    np.testing.assert_allclose(w @ w, norm2, rtol=1e-12)


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_taylor_awv_equals_direct_solve_and_tensor_basis(mode, center):
    """Linear AWV on the Taylor features by direct solves, on the labels or, with center, on
    the labels less their running mean (added back to each prediction)."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (60, 3))
    y = 3.0 + np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=60)
    model = TaylorAWV(kernel=Gaussian(0.9), degree=3, lam=0.5, mode=mode, center=center)
    got = model.predict_learn(X, y)
    solve = lambda targets: ref.linear_awv(ref.taylor_features(X, 3, 0.9), targets, 0.5,  # noqa
                                           mode)
    direct = ref.centred(solve, y) if center else solve(y)
    tensor = ref.linear_awv(ref.tensor_taylor_features(X, 3, 0.9), y, 0.5, mode)
    np.testing.assert_allclose(got, direct, rtol=1e-10, atol=1e-12)
    direct = solve(y)
    np.testing.assert_allclose(direct, tensor, rtol=1e-10, atol=1e-12)
    assert model.n_taylor_features_ == comb(6, 3)
    np.testing.assert_allclose(model.taylor_features(X), ref.taylor_features(X, 3, 0.9),
                               rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_the_ridge_ensemble_mixes_direct_solves(mode):
    """lam="ensemble": linear AWV on the Taylor features for each ridge of AWV_ENSEMBLE_LAMS, by
    direct solves on the centred labels, mixed by exponential weights at AWV_ENSEMBLE_RATE over
    the running variance of those labels; coef_ is the mixture of the ridge weights."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (70, 3))
    y = 40.0 + 10.0 * np.sin(3 * X[:, 0]) + rng.normal(size=70)
    model = TaylorAWV(kernel=Gaussian(0.9), degree=3, mode=mode)
    got = model.predict_learn(X, y)
    Z = ref.taylor_features(X, 3, 0.9)
    solves = [lambda t, lam=lam: ref.linear_awv(Z, t, lam, mode)
              for lam in AWV_ENSEMBLE_LAMS["regressor"]]
    expected, weights = ref.centred_ridge_ensemble(solves, y, AWV_ENSEMBLE_RATE)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.ridge_weights_, weights, rtol=1e-7, atol=1e-12)
    targets = y - np.cumsum(y) / np.arange(1, 71)
    coefs = [np.linalg.solve(lam * np.eye(Z.shape[1]) + Z.T @ Z, Z.T @ targets)
             for lam in AWV_ENSEMBLE_LAMS["regressor"]]
    np.testing.assert_allclose(model.coef_, weights @ np.array(coefs), rtol=1e-7, atol=1e-9)


def test_the_classifier_ensemble_uses_the_classifier_ridges():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (150, 2))
    labels = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 0.5, "in", "out")
    clf = TaylorAWVClassifier(degree=4)
    online = clf.predict_learn(X, labels)
    codes = np.where(labels == "out", 1.0, -1.0)
    Z = ref.taylor_features(X, 4, 1.0)
    solves = [lambda t, lam=lam: ref.linear_awv(Z, t, lam)
              for lam in AWV_ENSEMBLE_LAMS["classifier"]]
    scores, _ = ref.centred_ridge_ensemble(solves, codes, AWV_ENSEMBLE_RATE)
    np.testing.assert_array_equal(online, np.where(scores > 0, "out", "in"))


def test_awv_is_shrunk_ridge():
    rng = np.random.default_rng(3)
    X, y = rng.uniform(-1, 1, (40, 2)), rng.normal(size=40)
    Z = ref.taylor_features(X, 2, 1.0)
    awv = TaylorAWV(mode="vaw", lam=1.0, center=False).predict_learn(X, y)
    ridge = TaylorAWV(mode="ridge", lam=1.0, center=False).predict_learn(X, y)
    lev = np.array([Z[t] @ np.linalg.solve(np.eye(6) + Z[:t].T @ Z[:t], Z[t]) for t in range(40)])
    np.testing.assert_allclose(awv, ridge / (1 + lev), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("center", [False, True])
def test_classifier_learns_the_square_loss_on_signs(center):
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (200, 2))
    labels = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 0.5, "in", "out")
    clf = TaylorAWVClassifier(degree=4, lam="auto", center=center)          # 0.01
    online = clf.predict_learn(X, labels)
    codes = np.where(labels == clf.classes_[1], 1.0, -1.0)
    solve = lambda targets: ref.linear_awv(ref.taylor_features(X, 4, 1.0), targets, 0.01)  # noqa
    scores = ref.centred(solve, codes) if center else solve(codes)
    np.testing.assert_array_equal(online, np.where(scores > 0, clf.classes_[1], clf.classes_[0]))
    assert clf.score(X, labels) > 0.9


def test_a_centred_classifier_does_not_winsorise_its_labels():
    """Centring keeps a rare class's +1 labels as they are (a regressor's would be winsorised to
    mean +- 8 sd, and at 1 positive in 200 a +1 lies 14 sd from the mean): after learning, the
    scores are the labels' mean plus the VAW forecaster on the centred labels, in NumPy."""
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, (400, 2))
    codes = -np.ones(400)
    codes[[20, 200]] = 1.0
    labels = np.where(codes > 0, "rare", "common")
    clf = TaylorAWVClassifier(degree=2, lam="auto").fit(X, labels, shuffle=False)     # 0.01
    Z = ref.taylor_features(X, 2, 1.0)
    mean = np.cumsum(codes) / np.arange(1, 401)
    b = Z.T @ (codes - mean)
    A = 0.01 * np.eye(Z.shape[1]) + Z.T @ Z
    scores = [mean[-1] + b @ np.linalg.solve(A + np.outer(z, z), z) for z in Z[:5]]
    np.testing.assert_allclose(clf.decision_function(X[:5]), scores, rtol=1e-9, atol=1e-9)


def test_persistence_round_trip_is_bit_identical(tmp_path):
    rng = np.random.default_rng(5)
    X, y = rng.uniform(-1, 1, (50, 4)), rng.normal(size=50)
    model = TaylorAWV(degree=2).fit(X[:30], y[:30])
    model.save(tmp_path / "m.npz")
    from fastomkl import load
    copy = load(tmp_path / "m.npz")
    np.testing.assert_array_equal(copy.predict_learn(X[30:], y[30:]),
                                  model.predict_learn(X[30:], y[30:]))


def test_bad_input_leaves_the_model_unchanged():
    rng = np.random.default_rng(6)
    X, y = rng.uniform(-1, 1, (20, 3)), rng.normal(size=20)
    model = TaylorAWV().fit(X, y)
    before = model.coef_.copy()
    with pytest.raises(ValueError):
        model.learn_one(np.array([0.1, np.nan, 0.2]), 1.0)
    with pytest.raises(ValueError):
        model.partial_fit(X[:, :2], y)
    np.testing.assert_array_equal(model.coef_, before)
    for bad in ({"sigma": 0.0}, {"degree": -1}, {"lam": -1.0}, {"mode": "krr"}):
        with pytest.raises(ValueError):
            TaylorAWV(**bad).fit(X, y)
    with pytest.raises(ValueError):
        TaylorBank(3, 2, [1.0, -1.0])


def test_theoretical_degree():
    assert taylor_degree_theory(10 ** 6, 1.0, 1.0, 1.0) == int(np.ceil(2 * np.log(10 ** 6)))
    assert taylor_degree_theory(10, 1.0, 2.0, 1.0) == 32
