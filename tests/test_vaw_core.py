"""The VAW forecaster against its closed form, VAW^2 against a NumPy composition, and drift."""
import numpy as np
import pytest

from fastomkl import VAW, VAW2, ConcatVAW, Gaussian, Laplacian
from fastomkl._core.packed import pack, unpack
import vaw_reference as ref

KERNELS = [Gaussian(0.3), Laplacian(1.0), Gaussian(2.0)]


def stream(T=250, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(T, d))
    y = 0.5 + 0.3 * np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1]) + 0.05 * rng.standard_normal(T)
    return X, y


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
@pytest.mark.parametrize("lam", [1.0, 0.05])
def test_single_kernel_vaw_equals_closed_form(mode, lam):
    X, y = stream()
    model = VAW(Gaussian(0.5), n_components=10, lam=lam, mode=mode, center=False,
                random_state=3)
    pred = model.predict_learn(X, y)
    Z = model.features_.transform(X)[:, 0]
    expected = ref.vaw_direct(Z, y, lam, mode)
    np.testing.assert_allclose(pred, expected, rtol=0, atol=1e-9 * max(1.0, np.abs(expected).max()))
    # terminal weights S_T^{-1} b_T
    S = lam * np.eye(Z.shape[1]) + Z.T @ Z
    np.testing.assert_allclose(model.coef_, np.linalg.solve(S, Z.T @ y), atol=1e-9)


def test_vaw_and_ridge_differ_by_the_shrinkage_factor():
    X, y = stream()
    a = VAW(Gaussian(0.5), n_components=10, mode="vaw", center=False, random_state=3)
    b = VAW(Gaussian(0.5), n_components=10, mode="ridge", center=False, random_state=3)
    pa, pb = a.predict_learn(X, y), b.predict_learn(X, y)
    Z = a.features_.transform(X)[:, 0]
    # q_t = z_t^T S_{t-1}^{-1} z_t from direct inverses
    S = np.eye(Z.shape[1])
    q = np.empty(len(y))
    for t in range(len(y)):
        q[t] = Z[t] @ np.linalg.solve(S, Z[t])
        S += np.outer(Z[t], Z[t])
    np.testing.assert_allclose(pa, pb / (1 + q), atol=1e-12)
    assert np.abs(pa - pb).max() > 1e-3          # the modes really differ


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_concat_vaw_is_one_vaw_on_all_features(mode):
    X, y = stream(T=200)
    model = ConcatVAW(KERNELS, n_components=6, lam=0.5, mode=mode, center=False, random_state=1)
    pred = model.predict_learn(X, y)
    F = model.features_.transform(X)                       # (T, N, 2m)
    Z = F.reshape(len(y), -1)
    np.testing.assert_allclose(pred, ref.vaw_direct(Z, y, 0.5, mode), atol=1e-9)
    assert model.coef_.shape == (len(KERNELS) * 12,)


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
@pytest.mark.parametrize("truncate", [None, (0.0, 1.0), (0.3, 0.7)])
def test_vaw2_equals_numpy_composition(mode, truncate):
    X, y = stream()
    model = VAW2(KERNELS, n_components=8, lam=0.7, lam_meta=1.3, mode=mode, truncate=truncate,
                 center=False, random_state=5)
    pred = model.predict_learn(X, y)
    F = model.features_.transform(X)
    E = ref.vaw_experts(F, y, 0.7, mode)
    expected = ref.meta_vaw(E, y, 1.3, mode, truncate)
    np.testing.assert_allclose(pred, expected, atol=1e-9)
    # terminal second-level weights alpha = S2^{-1} b2 on the (clipped) expert predictions
    Ec = ref.clip(E, truncate)
    alpha = np.linalg.solve(1.3 * np.eye(len(KERNELS)) + Ec.T @ Ec, Ec.T @ y)
    np.testing.assert_allclose(model.weights_, alpha, atol=1e-8)
    assert model.experts_coef_.shape == (len(KERNELS), 16)


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_centred_experts_learn_the_labels_minus_their_running_mean(mode):
    X, y = stream()
    y = 40.0 + 10.0 * y                                    # far from 0: the intercept matters
    single = VAW(Gaussian(0.5), n_components=10, mode=mode, random_state=3)
    pred = single.predict_learn(X, y)
    Z = single.features_.transform(X)[:, 0]
    np.testing.assert_allclose(pred, ref.vaw_direct(Z, y, 1.0, mode, center=True), rtol=1e-10)
    assert single._engine.experts.offsets[0] == pytest.approx(y.mean(), rel=1e-12)
    model = VAW2(KERNELS, n_components=8, mode=mode, lam_meta=1.3, random_state=5)
    pred = model.predict_learn(X, y)
    E = ref.vaw_experts(model.features_.transform(X), y, model.lam, mode, center=True)
    np.testing.assert_allclose(pred, ref.meta_vaw(E, y, 1.3, mode, center=True), rtol=1e-9)
    # and it helps: without the intercept the same models start far off
    plain = VAW(Gaussian(0.5), n_components=10, mode=mode, center=False, random_state=3)
    assert np.mean((pred - y) ** 2) < 0.5 * np.mean((plain.predict_learn(X, y) - y) ** 2)


def test_truncation_changes_vaw2_when_experts_leave_the_range():
    X, y = stream()
    a = VAW2(KERNELS, n_components=8, truncate=(0.3, 0.7), random_state=5).predict_learn(X, y)
    b = VAW2(KERNELS, n_components=8, random_state=5).predict_learn(X, y)
    assert np.abs(a - b).max() > 1e-3


def test_pack_unpack_round_trip():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 5, 5))
    A = A + np.swapaxes(A, 1, 2)
    np.testing.assert_array_equal(unpack(pack(A), 5), A)
    # row-major lower triangle, row by row
    np.testing.assert_array_equal(pack(A[0])[:3], [A[0, 0, 0], A[0, 1, 0], A[0, 1, 1]])


def _drift(n_updates, lam, refresh_every=0, n_components=50, seed=0):
    """Relative max-abs distance of the maintained inverse from inv(lam I + Z^T Z)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n_updates, 4))
    y = rng.uniform(0, 1, n_updates)
    model = VAW(Gaussian(0.7), n_components=n_components, lam=lam, refresh_every=refresh_every,
                center=False, random_state=seed)
    model.partial_fit(X, y)
    Z = model.features_.transform(X)[:, 0]
    S = lam * np.eye(Z.shape[1]) + Z.T @ Z
    exact = np.linalg.inv(S)
    P = model._engine.experts.inverse()[0]
    w_exact = np.linalg.solve(S, Z.T @ y)
    return (np.abs(P - exact).max() / np.abs(exact).max(),
            np.abs(model.coef_ - w_exact).max() / np.abs(w_exact).max())


def test_drift_below_1e8_over_1e5_updates():
    p_err, w_err = _drift(100_000, lam=1.0)
    assert p_err < 1e-8, p_err
    assert w_err < 1e-8, w_err


def test_refresh_recomputes_inverse_from_gram():
    p_err, w_err = _drift(20_000, lam=1e-3, refresh_every=1000)
    assert p_err < 1e-10 and w_err < 1e-9, (p_err, w_err)
    model = VAW(Gaussian(0.7), n_components=5, refresh_every=7, center=False, random_state=0)
    X, y = stream(T=50, d=4)
    model.partial_fit(X, y)
    experts = model._engine.experts
    Z = model.features_.transform(X)[:, 0]
    np.testing.assert_allclose(experts.gram()[0], np.eye(10) + Z.T @ Z, atol=1e-12)


@pytest.mark.slow
def test_drift_small_lambda_one_million_updates():
    p_err, w_err = _drift(1_000_000, lam=1e-2, n_components=20)
    assert p_err < 1e-8 and w_err < 1e-8, (p_err, w_err)


def test_vaw2_first_two_rounds_are_zero():
    # Round 1: every expert has b = 0.  Round 2: the meta level has only seen the all-zero expert
    # vector of round 1, so its b is still 0.  From round 3 on it predicts.
    X, y = stream(T=5)
    model = VAW2(KERNELS, n_components=4, center=False, random_state=0)
    assert model.predict_learn_one(X[0], y[0]) == 0.0
    assert model.predict_learn_one(X[1], y[1]) == 0.0
    assert model.predict_learn_one(X[2], y[2]) != 0.0


def test_vaw_regret_stays_below_its_bound():
    """Regret (2.5): 1/2 sum (y_hat - y)^2 - 1/2 sum (<z, w> - y)^2
    <= lam/2 ||w||^2 + (D Y^2 / 2) ln(1 + rho^2 T / (lam D)), here with ||z|| = 1 and |y| <= 1."""
    rng = np.random.default_rng(7)
    T, lam = 3000, 0.5
    X = rng.uniform(-1, 1, size=(T, 2))
    y = np.clip(np.sin(3 * X[:, 0]) + 0.3 * rng.standard_normal(T), -1, 1)
    model = VAW(Gaussian(0.5), n_components=10, lam=lam, mode="vaw", center=False, random_state=0)
    pred = model.predict_learn(X, y)
    Z = model.features_.transform(X)[:, 0]
    D = Z.shape[1]
    assert np.allclose(np.linalg.norm(Z, axis=1), 1.0)
    bound_log = D / 2 * np.log(1 + T / (lam * D))
    w_ridge = np.linalg.solve(lam * np.eye(D) + Z.T @ Z, Z.T @ y)
    for w in (w_ridge, np.linalg.lstsq(Z, y, rcond=None)[0], rng.standard_normal(D)):
        regret = 0.5 * np.sum((pred - y) ** 2) - 0.5 * np.sum((Z @ w - y) ** 2)
        assert regret <= lam / 2 * w @ w + bound_log, (regret, lam / 2 * w @ w + bound_log)
    # and the comparator is a good one: VAW's loss is within the bound of the best ridge fit,
    # which itself explains most of the variance
    assert np.mean((Z @ w_ridge - y) ** 2) < 0.5 * np.var(y)


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_importance_weighted_updates_are_weighted_least_squares(mode):
    """Under partial feedback an expert learns with weight w = 1/q: S += w z z^T, b += w y z."""
    from fastomkl._core.experts.vaw import VAWExperts
    rng = np.random.default_rng(3)
    T, D, lam = 120, 6, 0.3
    Z = rng.standard_normal((T, D)) / np.sqrt(D)
    y = rng.uniform(-1, 1, T)
    w = rng.uniform(0.5, 20.0, T)
    experts = VAWExperts(2, D, lam, mode, refresh_every=0)
    S, b = lam * np.eye(D), np.zeros(D)
    for t in range(T):
        pred = experts.predict_expert(1, Z[t])
        S_pred = S + np.outer(Z[t], Z[t]) if mode == "vaw" else S
        np.testing.assert_allclose(pred, Z[t] @ np.linalg.solve(S_pred, b), atol=1e-10)
        loss = experts.learn_expert(1, Z[t], y[t], w[t])
        assert abs(loss - (pred - y[t]) ** 2) < 1e-12
        S += w[t] * np.outer(Z[t], Z[t])
        b += w[t] * y[t] * Z[t]
    np.testing.assert_allclose(experts.inverse()[1], np.linalg.inv(S), atol=1e-10)
    np.testing.assert_allclose(experts.coef_[1], np.linalg.solve(S, b), atol=1e-9)
    np.testing.assert_array_equal(experts.inverse()[0], np.eye(D) / lam)    # untouched expert
