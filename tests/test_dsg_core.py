"""Doubly stochastic gradients against independent computations: the kernels the feature blocks
estimate, Algorithm 1 written in NumPy, the closed form of the coefficients, kernel ridge
regression solved directly, and the exactness of regeneration, threads, merge and persistence."""
import io

import numpy as np
import pytest

import fastomkl
from fastomkl import Cauchy, Gaussian, Laplacian, Matern
from fastomkl._core.features import dsg_blocks as core
from fastomkl.dsg import (LOSSES, NORMA, DoublySGDClassifier, DoublySGDRegressor, merge,
                          median_bandwidth)

RNG = np.random.default_rng(3)
X = RNG.uniform(-1, 1, (120, 3))
Y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]


def z(x, W, b):
    """The block's features written out: sqrt(2/r) cos(W^T x + b)."""
    return np.sqrt(2.0 / W.shape[1]) * np.cos(x @ W + b)


@pytest.mark.parametrize("name, kernel, df", [
    ("gaussian", Gaussian(0.8), 0), ("laplacian", Laplacian(1.5), 0),
    ("cauchy", Cauchy(0.9), 0), ("matern", Matern(1.2, nu=1.5), 3),
    ("matern", Matern(0.7, nu=0.5), 1)])
def test_feature_blocks_estimate_the_kernel(name, kernel, df):
    x, y = np.array([[0.3, -0.2, 0.5]]), np.array([[-0.1, 0.4, 0.2]])
    estimates = []
    for t in range(40):
        W, b = core.generate_block(name, df, kernel.sigma, 11, 0, t, 3, 500)
        estimates.append((z(x, W, b) @ z(y, W, b).T).item())
    assert abs(np.mean(estimates) - float(kernel(x[0], y[0]))) < 0.025


def test_blocks_are_pure_functions_of_seed_stream_and_index():
    W, b = core.generate_block("gaussian", 0, 1.0, 5, 2, 7, 4, 16)
    core.generate_block("gaussian", 0, 1.0, 5, 2, 3, 4, 16)          # any other draw in between
    W2, b2 = core.generate_block("gaussian", 0, 1.0, 5, 2, 7, 4, 16)
    assert np.array_equal(W, W2) and np.array_equal(b, b2)
    for other in [(6, 2, 7), (5, 3, 7), (5, 2, 8)]:
        assert not np.array_equal(W, core.generate_block("gaussian", 0, 1.0, *other, 4, 16)[0])
    # a standard normal sample, and phases uniform on [0, 2 pi)
    W, b = core.generate_block("gaussian", 0, 1.0, 1, 0, 0, 50, 400)
    assert abs(W.mean()) < 0.02 and abs(W.std() - 1.0) < 0.02
    assert 0 <= b.min() and b.max() < 2 * np.pi and abs(b.mean() - np.pi) < 0.15


def algorithm1(X, y, seed, bandwidth, gamma, nu, derivative):
    """The paper's Algorithm 1 (B = r = 1, phi = sqrt(2) cos) on the library's regenerated draws."""
    omegas, alphas, predictions = [], [], []
    for i, (x, target) in enumerate(zip(X, y)):
        f = sum(a * np.sqrt(2.0) * np.cos(x @ w + b) for a, (w, b) in zip(alphas, omegas))
        predictions.append(f)
        w, b = core.generate_block("gaussian", 0, bandwidth, seed, 0, i, X.shape[1], 1)
        g = derivative(f, target)
        alphas = [a * (1.0 - gamma(i + 1) * nu) for a in alphas]
        alphas.append(-gamma(i + 1) * g * np.sqrt(2.0) * np.cos(x @ w[:, 0] + b[0]))
        omegas.append((w[:, 0], b[0]))
    return np.array(alphas), np.array(predictions)


@pytest.mark.parametrize("loss, derivative", [
    ("squared", lambda f, y: f - y),
    ("huber", lambda f, y: np.clip(f - y, -1.0, 1.0)),
    ("quantile", lambda f, y: 0.7 if f >= y else -0.3)])
def test_unit_batch_and_block_is_algorithm_1(loss, derivative):
    model = DoublySGDRegressor(loss, quantile=0.3, bandwidth=0.9, batch_size=1, block_size=1,
                               eta1=0.1, nu=0.05, random_state=4)
    online = model.predict_learn(X[:40], Y[:40])
    alphas, predictions = algorithm1(X[:40], Y[:40], 4, 0.9, lambda t: 1.0 / (1 + 0.1 * t),
                                     0.05, derivative)
    engine = model._engine
    np.testing.assert_allclose(online, predictions, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(engine.scale * engine.coef[:40, 0], alphas, rtol=1e-11,
                               atol=1e-14)


def test_closed_form_with_theta_nu_one():
    """gamma_t = theta/t and theta nu = 1: alpha_i = -(theta/t) l'(f_i(x_i), y_i) phi_i(x_i)."""
    theta, n = 2.0, 25
    model = DoublySGDRegressor(bandwidth=1.0, batch_size=1, block_size=1,
                               learning_rate="theory", eta0=theta, nu=1.0 / theta, random_state=1)
    f = model.predict_learn(X[:n], Y[:n])
    phi = np.array([np.sqrt(2.0) * np.cos(X[i] @ W[:, 0] + b[0]) for i, (W, b) in enumerate(
        core.generate_block("gaussian", 0, 1.0, 1, 0, i, 3, 1) for i in range(n))])
    engine = model._engine
    np.testing.assert_allclose(engine.scale * engine.coef[:n, 0], -theta / n * (f - Y[:n]) * phi,
                               rtol=1e-10, atol=1e-14)


def test_kernel_ridge_regression_is_reached():
    """Full batches: f_T approaches (K + n nu I)^-1 y, the solution of the averaged objective."""
    x, nu = X[:40, :1], 0.01
    y = np.sin(3 * x[:, 0])
    K = Gaussian(0.5).gram(x)
    exact = K @ np.linalg.solve(K + len(x) * nu * np.eye(len(x)), y)
    model = DoublySGDRegressor(bandwidth=0.5, batch_size=len(x), block_size=256, nu=nu,
                               eta0=1.0, eta1=0.0, random_state=0)
    for _ in range(150):
        model.partial_fit(x, y)
    assert np.sqrt(np.mean((model.predict(x) - exact) ** 2)) < 0.03 * np.std(exact)


def test_regenerated_predictions_match_cached_ones():
    """f_{t+1}(x) = (1 - gamma_t nu) f_t(x) + z_t(x)^T alpha_t, kept per test point."""
    model = DoublySGDRegressor(bandwidth=0.7, batch_size=10, block_size=16, nu=0.1,
                               random_state=2)
    test = X[100:]
    cached = np.zeros(len(test))
    for t, start in enumerate(range(0, 100, 10)):
        model.partial_fit(X[start:start + 10], Y[start:start + 10])
        engine = model._engine
        gamma = 1.0 / (1.0 + 1e-4 * (t + 1))
        W, b = core.generate_block("gaussian", 0, 0.7, 2, 0, t, 3, 16)
        alpha = engine.scale * engine.coef[16 * t:16 * (t + 1), 0]
        cached = (1.0 - gamma * 0.1) * cached + z(test, W, b) @ alpha
    np.testing.assert_allclose(model.predict(test), cached, rtol=1e-12, atol=1e-14)


def test_prediction_is_the_same_on_any_thread_count():
    model = DoublySGDRegressor(bandwidth=0.7, batch_size=4, block_size=8, random_state=0)
    model.fit(X, Y)
    one = model.predict(X)
    for n_jobs in (2, 3):
        model.n_jobs = n_jobs
        model._engine.config["n_jobs"] = n_jobs
        assert np.array_equal(model.predict(X), one)


def test_save_and_load_replay_features_and_learning_bit_identically():
    model = DoublySGDClassifier("logistic", batch_size=8, block_size=8, average=True,
                                random_state=7).fit(X[:80], Y[:80] > 0)
    buffer = io.BytesIO()
    model.save(buffer)
    buffer.seek(0)
    loaded = fastomkl.load(buffer)
    assert np.array_equal(loaded.decision_function(X), model.decision_function(X))
    assert loaded.bandwidth_ == model.bandwidth_
    model.partial_fit(X[80:], Y[80:] > 0)
    loaded.partial_fit(X[80:], Y[80:] > 0)
    assert np.array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_a_seed_drawn_at_random_is_kept_in_the_state():
    model = DoublySGDRegressor(random_state=None, batch_size=20, block_size=4).fit(X, Y)
    buffer = io.BytesIO()
    model.save(buffer)
    buffer.seek(0)
    assert np.array_equal(fastomkl.load(buffer).predict(X), model.predict(X))


def test_merge_predicts_the_average_of_the_models():
    models = [DoublySGDRegressor(bandwidth=0.8, batch_size=10, block_size=8, stream=w,
                                 random_state=3).fit(X[w::3], Y[w::3]) for w in range(3)]
    merged = merge(models)
    average = np.mean([m.predict(X) for m in models], axis=0)
    np.testing.assert_allclose(merged.predict(X), average, rtol=1e-12, atol=1e-14)
    assert merged.n_features_ == sum(m.n_features_ for m in models)
    merged.partial_fit(X[:10], Y[:10])                   # and it keeps learning
    with pytest.raises(ValueError, match="disjoint"):
        merge([models[0], models[0]])
    with pytest.raises(ValueError, match="same parameters"):
        merge([models[0], DoublySGDRegressor(bandwidth=0.9, stream=5).fit(X, Y)])


def finite_difference(loss, u, y, h=1e-6):
    values = {"squared": lambda u: 0.5 * (u - y) ** 2,
              "huber": lambda u: 0.5 * (u - y) ** 2 if abs(u - y) <= 1 else abs(u - y) - 0.5,
              "epsilon_insensitive": lambda u: max(0.0, abs(u - y) - 1.0),
              "absolute": lambda u: abs(u - y),
              "quantile": lambda u: max(0.25 * (y - u), 0.75 * (u - y)),
              "hinge": lambda u: max(0.0, 1 - u * y),
              "squared_hinge": lambda u: 0.5 * max(0.0, 1 - u * y) ** 2,
              "logistic": lambda u: np.log1p(np.exp(-y * u)),
              "kl": lambda u: 2.0 * (-u if y == 1 else np.exp(u))}[loss]
    return (values(u + h) - values(u - h)) / (2 * h)


@pytest.mark.parametrize("loss", sorted(set(LOSSES) - {"softmax"}))
def test_every_loss_derivative_matches_finite_differences(loss):
    rng = np.random.default_rng(0)
    u = rng.uniform(-3, 3, 200)
    y = np.sign(rng.uniform(-1, 1, 200)) if loss in ("hinge", "squared_hinge", "logistic") \
        else rng.integers(0, 2, 200).astype(float) if loss == "kl" else rng.uniform(-3, 3, 200)
    g = LOSSES[loss](u[:, None], y, {"epsilon": 1.0, "quantile": 0.25})[:, 0]
    fd = np.array([finite_difference(loss, a, b) for a, b in zip(u, y)])
    kinks = np.array([min(abs(a - b), abs(abs(a - b) - 1), abs(a * b - 1)) for a, b in zip(u, y)])
    smooth = kinks > 1e-3
    np.testing.assert_allclose(g[smooth], fd[smooth], rtol=1e-6, atol=1e-5)


def test_median_bandwidth_is_the_median_distance():
    x = RNG.normal(size=(30, 2))
    distances = [np.linalg.norm(x[i] - x[j]) for i in range(30) for j in range(i + 1, 30)]
    assert median_bandwidth(x, scale=4.0) == pytest.approx(4.0 * np.median(distances))
    assert DoublySGDRegressor().fit(x, x[:, 0]).bandwidth_ == pytest.approx(np.median(distances))


@pytest.mark.parametrize("params", [{"kernel": "poly"}, {"bandwidth": -1.0}, {"block_size": 0},
                                    {"loss": "hinge"}, {"matern_nu": 1.0}, {"quantile": 1.0},
                                    {"random_state": -1}, {"average": 1}, {"dtype": "float16"},
                                    {"dtype": np.float32}])
def test_bad_parameters_are_refused_and_the_model_unchanged(params):
    model = DoublySGDRegressor(**params)
    with pytest.raises(ValueError):
        model.fit(X, Y)
    assert model._engine is None


def test_one_class_follows_the_paper_updates():
    """B = r = 1: alpha_i = gamma_i phi_i(x_i) when f(x_i) < tau, and tau moves by +gamma nu or
    -gamma (1 - nu), written out in NumPy on the regenerated features."""
    nu, n = 0.2, 30
    model = fastomkl.DoublySGDOneClass(bandwidth=0.8, batch_size=1, block_size=1, nu=nu,
                                       eta1=0.1, random_state=5)
    model.partial_fit(X[:n])
    tau, alphas, omegas = 0.0, [], []
    for i, x in enumerate(X[:n]):
        f = sum(a * np.sqrt(2) * np.cos(x @ w + b) for a, (w, b) in zip(alphas, omegas))
        gamma = 1.0 / (1.0 + 0.1 * (i + 1))
        w, b = core.generate_block("gaussian", 0, 0.8, 5, 0, i, 3, 1)
        alphas = [a * (1 - gamma * nu) for a in alphas]
        alphas.append(gamma * np.sqrt(2) * np.cos(x @ w[:, 0] + b[0]) if f < tau else 0.0)
        omegas.append((w[:, 0], b[0]))
        tau = tau - gamma * (1 - nu) if f < tau else tau + gamma * nu
    engine = model._engine
    assert engine.offset == pytest.approx(tau, abs=1e-12)
    np.testing.assert_allclose(engine.scale * engine.coef[:n, 0], alphas, rtol=1e-11, atol=1e-14)


def test_density_ratio_approaches_the_log_ratio():
    """N(0.5, 1) against N(-0.5, 1): log p/q = x."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0.5, 1, 3000), rng.normal(-0.5, 1, 3000)])[:, None]
    y = np.repeat([1.0, 0.0], 3000)
    order = rng.permutation(6000)
    model = fastomkl.DoublySGDDensityRatio(bandwidth=1.0, random_state=0).partial_fit(x[order],
                                                                             y[order])
    grid = np.linspace(-1, 1, 9)[:, None]
    assert np.max(np.abs(model.log_ratio(grid) - grid[:, 0])) < 0.35
    with pytest.raises(ValueError, match="more than two"):
        model.partial_fit(grid, np.full(9, 2.0))


@pytest.mark.parametrize("loss", ["squared", "hinge"])
def test_many_features_per_block_approach_norma(loss):
    """DSG is NORMA with the kernel replaced by random features: with large blocks, the same
    batches give nearly the same function."""
    y = Y[:64] if loss == "squared" else np.where(Y[:64] > 0, 1.0, -1.0)
    norma = NORMA(Gaussian(0.8), loss, batch_size=16, nu=0.1).partial_fit(X[:64], y)
    cls = DoublySGDRegressor if loss == "squared" else DoublySGDClassifier
    dsg = cls(loss, bandwidth=0.8, batch_size=16, block_size=8192, nu=0.1,
              random_state=0).partial_fit(X[:64], y)
    exact = norma.predict(X)
    error = np.abs(dsg._scores(X) - exact).max()
    assert error < 0.1 * np.abs(exact).max()


def test_gp_mean_and_variance_approach_the_closed_form():
    """nu = s^2/n: the mean -> k*^T (K + s^2 I)^-1 y; method 2's variance ->
    k** - k*^T (K + s^2 I)^-1 k*."""
    from fastomkl.dsg import DoublySGDGP
    x = X[:30, :1]
    y = np.sin(3 * x[:, 0])
    star = np.array([[-0.5], [0.0], [0.7], [2.5]])
    kernel, s2 = Gaussian(0.5), 0.3
    solve = np.linalg.solve(kernel.gram(x) + s2 * np.eye(30), np.column_stack(
        [y, kernel.gram(x, star)]))
    mean = kernel.gram(star, x) @ solve[:, 0]
    variance = 1.0 - np.einsum("ij,ji->i", kernel.gram(star, x), solve[:, 1:])
    gp = DoublySGDGP(noise=s2, test_points=star, bandwidth=0.5, n_epochs=150, batch_size=30,
                     block_size=256, eta1=0.0).fit(x, y)
    m, std = gp.predict(star, return_std=True)
    np.testing.assert_allclose(m, mean, atol=0.03)
    np.testing.assert_allclose(std ** 2, variance, atol=0.01)      # 0.04 within the data, 1 far


def test_softmax_with_two_classes_is_binary_logistic():
    """Softmax over two classes with scores (f0, f1) is logistic regression on f1 - f0, whose
    gradient moves both scores: with half the step (and nu = 0), f1 - f0 follows the binary
    model exactly."""
    from fastomkl.dsg import DoublySGDSoftmaxClassifier
    labels = Y > 0
    binary = DoublySGDClassifier("logistic", bandwidth=0.8, batch_size=8, block_size=16, nu=0.0,
                                 learning_rate="constant", random_state=1).fit(X, labels)
    softmax = DoublySGDSoftmaxClassifier(bandwidth=0.8, batch_size=8, block_size=16, nu=0.0,
                                         learning_rate="constant", eta0=0.5,
                                         random_state=1).fit(X, labels)
    F = softmax.decision_function(X)
    np.testing.assert_allclose(F[:, 1] - F[:, 0], binary.decision_function(X), rtol=1e-9,
                               atol=1e-12)
    three = np.digitize(X[:, 0], [-0.3, 0.3])
    model = DoublySGDSoftmaxClassifier(bandwidth=0.8, random_state=0)
    for _ in range(5):
        model.partial_fit(X, three)
    assert model.score(X, three) > 0.8            # chance is 1/3
    np.testing.assert_allclose(model.predict_proba(X).sum(1), 1.0)


def test_softmax_derivative_matches_finite_differences():
    rng = np.random.default_rng(1)
    F, y = rng.normal(size=(20, 4)), rng.integers(0, 4, 20)
    G = LOSSES["softmax"](F, y.astype(float), {})
    h = 1e-6
    for c in range(4):
        step = np.zeros(4)
        step[c] = h
        loss = [np.log(np.exp(F + s).sum(1)) - (F + s)[np.arange(20), y] for s in (step, -step)]
        np.testing.assert_allclose(G[:, c], (loss[0] - loss[1]) / (2 * h), atol=1e-6)


def test_preconditioned_first_block_is_the_least_squares_fit():
    """With a step of 1 from f = 0, the square loss's preconditioned block solves
    min ||Z alpha - y||^2 (up to the 1e-7 ridge): the authors' Newton-like step."""
    model = DoublySGDRegressor(bandwidth=0.8, batch_size=100, block_size=20, precondition=True,
                               learning_rate="constant", nu=0.0, random_state=3)
    model.partial_fit(X[:100], Y[:100])
    W, b = core.generate_block("gaussian", 0, 0.8, 3, 0, 0, 3, 20)
    Z = z(X[:100], W, b)
    ridge = np.linalg.solve(Z.T @ Z / 100 + 1e-7 * np.eye(20), Z.T @ Y[:100] / 100)
    np.testing.assert_allclose(model._engine.coef[:20, 0], ridge, rtol=1e-8, atol=1e-10)
    # the ridge is negligible: the fitted values are the least-squares ones (the coefficients
    # themselves may differ along directions Z barely sees)
    fit = np.linalg.lstsq(Z, Y[:100], rcond=None)[0]
    np.testing.assert_allclose(Z @ model._engine.coef[:20, 0], Z @ fit, atol=1e-3)


def test_models_pickled_by_workers_merge_exactly():
    """Data-parallel training ships models between processes: a pickled model predicts the same
    bits and merges like the original."""
    import pickle
    models = [DoublySGDClassifier(bandwidth=0.8, batch_size=10, block_size=8, stream=w,
                                  random_state=3).fit(X[w::2], Y[w::2] > 0) for w in range(2)]
    shipped = [pickle.loads(pickle.dumps(m)) for m in models]
    for m, s in zip(models, shipped):
        assert np.array_equal(s.decision_function(X), m.decision_function(X))
    assert np.array_equal(merge(shipped).decision_function(X),
                          merge(models).decision_function(X))
    assert merge(shipped).classes_.tolist() == [False, True]


def test_a_full_model_only_shrinks():
    """n_features_max reached: no block is added, and an iteration multiplies f by 1 - gamma nu."""
    model = DoublySGDRegressor(bandwidth=0.8, batch_size=10, block_size=8, n_features_max=24,
                               learning_rate="constant", eta0=0.5, nu=0.2, random_state=0)
    model.partial_fit(X[:50], Y[:50])
    assert model.n_features_ == 24
    before = model.predict(X)
    model.partial_fit(X[50:60], Y[50:60])
    assert model.n_features_ == 24 and model.n_samples_seen_ == 60
    np.testing.assert_allclose(model.predict(X), 0.9 * before, rtol=1e-12)


def test_single_precision_features_are_float32_numpy():
    W, b = core.generate_block("gaussian", 0, 0.8, 4, 0, 2, 3, 40)
    expected = np.sqrt(2.0 / 40) * np.cos(X.astype(np.float32) @ W.astype(np.float32)
                                         + b.astype(np.float32)).astype(np.float64)
    np.testing.assert_allclose(core.features(X, W, b, True), expected, atol=2e-7)
    np.testing.assert_allclose(core.features(X, W, b, True), z(X, W, b), atol=2e-6)


@pytest.mark.parametrize("cls, target", [(DoublySGDRegressor, Y), (DoublySGDClassifier, Y > 0)])
def test_a_float32_model_learns_what_the_float64_model_does(cls, target):
    """Same seeds, same blocks: only the features' rounding differs, and the decisions follow."""
    wide = cls(bandwidth=0.8, batch_size=8, block_size=16).fit(X, target)
    single = cls(bandwidth=0.8, batch_size=8, block_size=16, dtype="float32").fit(X, target)
    decide = "decision_function" if hasattr(wide, "decision_function") else "predict"
    gap = np.abs(getattr(single, decide)(X) - getattr(wide, decide)(X))
    assert gap.max() <= 1e-5 * np.abs(getattr(wide, decide)(X)).max()
    buffer = io.BytesIO()
    single.save(buffer)
    buffer.seek(0)
    loaded = fastomkl.load(buffer)
    assert loaded.dtype == "float32"
    np.testing.assert_array_equal(getattr(loaded, decide)(X), getattr(single, decide)(X))


def test_sparse_rows_are_projected_exactly_and_alone():
    """Rows with few nonzeros take the sparse sum, the others dgemm: the features match NumPy, and
    a row's features are the same bits whatever rows surround it."""
    rng = np.random.default_rng(8)
    d = 40
    rows = rng.normal(size=(30, d))
    rows[::2, 8:] = 0.0                         # even rows: 8 of 40 nonzero (sparse)
    rows[5] = 0.0                               # an empty row
    W, b = core.generate_block("gaussian", 0, 1.3, 6, 0, 1, d, 24)
    Z = core.features(rows, W, b)
    np.testing.assert_allclose(Z, z(rows, W, b), rtol=0, atol=1e-12)
    for i in (0, 1, 5, 29):
        np.testing.assert_array_equal(core.features(rows[i:i + 1], W, b)[0], Z[i])
