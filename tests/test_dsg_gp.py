"""The DSG Gaussian process and multiclass model against independent computations: the paper's
recursion of the variance operator written in NumPy (scalar, and by blocks), the exact posterior
variance of a direct solve, and the exactness of saving, loading and continuing."""
import io

import numpy as np
import pytest

import fastomkl
from fastomkl import Gaussian, Laplacian
from fastomkl._core.features import dsg as core
from fastomkl.dsg import SECOND_DRAWS, DoublySGDGP, DoublySGDRegressor, DoublySGDSoftmaxClassifier
from helpers import state_bytes
from load_mutations import read, saved, write

RNG = np.random.default_rng(5)
X = RNG.uniform(-1, 1, (60, 2))
Y = np.sin(2 * X[:, 0]) + X[:, 1]
STAR = np.array([[0.0, 0.0], [0.5, -0.4], [2.0, 2.0]])


def features(x, stream, index, seed, bandwidth, r):
    """Block (stream, index)'s features written out: sqrt(2/r) cos(W^T x + b)."""
    W, b = core.generate_block("gaussian", 0, bandwidth, seed, stream, index, x.shape[1], r)
    return np.sqrt(2.0 / r) * np.cos(x @ W + b)


def inverse_steps(T, eta1):
    return 1.0 / (1.0 + eta1 * np.arange(1, T + 1))


def papers_recursion(X, seed, bandwidth, gammas, nu):
    """Method 1 as the paper states it (one sample, one omega and one omega' per iteration):
    theta_ij <- (1 - nu gamma_t) theta_ij (i <= j < t); theta_it = -gamma_t sum_{j=i}^{t-1}
    theta_ij phi'_j(x_t) phi'_t(x_t) (before the shrink); theta_tt = gamma_t phi_t(x_t) phi'_t(x_t).
    Returns theta and x -> A(x, x) = sum_{i <= j} theta_ij phi_i(x) phi'_j(x)."""
    T = len(X)

    def phi(stream, i, x):
        return features(x[None, :], stream, i, seed, bandwidth, 1)[0, 0]

    theta = np.zeros((T, T))
    for t, x in enumerate(X):
        g = gammas[t]
        new = [-g * sum(theta[i, j] * phi(SECOND_DRAWS, j, x) for j in range(i, t))
               * phi(SECOND_DRAWS, t, x) for i in range(t)]
        theta[:t, :t] *= 1.0 - nu * g
        theta[:t, t] = new
        theta[t, t] = g * phi(0, t, x) * phi(SECOND_DRAWS, t, x)

    def A(x):
        return sum(theta[i, j] * phi(0, i, x) * phi(SECOND_DRAWS, j, x)
                   for i in range(T) for j in range(i, T))
    return theta, A


def block_recursion(X, seed, bandwidth, B, r, gammas, nu):
    """The same by blocks, with a dense Theta: the batch average of the paper's update, blocks of
    r features per draw.  Returns Theta (P, P) and x -> A(x, x) for rows x."""
    Theta = np.zeros((0, 0))
    for t, start in enumerate(range(0, len(X), B)):
        rows, g = X[start:start + B], gammas[t]
        first = features(rows, 0, t, seed, bandwidth, r)
        second = np.hstack([features(rows, SECOND_DRAWS, u, seed, bandwidth, r)
                            for u in range(t + 1)])
        A_rows = second[:, :t * r] @ Theta.T              # A_t(., x_b) in the first features
        above = -g / len(rows) * A_rows.T @ second[:, t * r:]
        diagonal = g / len(rows) * first.T @ second[:, t * r:]
        Theta = np.block([[(1.0 - nu * g) * Theta, above],
                          [np.zeros((r, t * r)), diagonal]])
    T = Theta.shape[0] // r

    def A(x):
        first = np.hstack([features(x, 0, s, seed, bandwidth, r) for s in range(T)])
        second = np.hstack([features(x, SECOND_DRAWS, u, seed, bandwidth, r) for u in range(T)])
        return np.einsum("ij,jk,ik->i", first, Theta, second)
    return Theta, A


def packed_theta(model) -> np.ndarray:
    return model._engine.experts.operator_values


def explained(model, x) -> np.ndarray:
    """A(x, x) of the model's operator: 1 - its variance."""
    return model._operator_diagonal(model._engine, x)


def test_operator_with_one_sample_and_one_feature_is_the_papers_recursion():
    """The reduction: batch_size = block_size = 1 gives the paper's theta_ij, to rounding."""
    n, noise, eta1 = 12, 0.3, 0.1
    gp = DoublySGDGP(noise, variance="operator", n_samples=n, kernel=Gaussian(0.8),
                     batch_size=1, block_size=1, eta_decay=eta1,
                     random_state=4).partial_fit(X[:n], Y[:n])
    theta, A = papers_recursion(X[:n], 4, 0.8, inverse_steps(n, eta1), noise / n)
    np.testing.assert_allclose(packed_theta(gp),
                               np.concatenate([theta[:u + 1, u] for u in range(n)]),
                               rtol=1e-11, atol=1e-15)
    np.testing.assert_allclose(explained(gp, STAR), [A(x) for x in STAR],
                               rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_operator_by_blocks_is_the_block_recursion_in_numpy(dtype):
    """Batches of 5, blocks of 3 (the compiled loop's packing, slicing and lazy shrink), and the
    posterior mean is the ridge DSG with nu = noise / n on the same blocks, bit for bit."""
    n, noise, eta1, B, r = 30, 0.5, 0.05, 5, 3
    gp = DoublySGDGP(noise, variance="operator", n_samples=n, kernel=Gaussian(0.7),
                     batch_size=B, block_size=r, eta_decay=eta1, random_state=2, dtype=dtype)
    gp.partial_fit(X[:n], Y[:n])
    Theta, A = block_recursion(X[:n], 2, 0.7, B, r, inverse_steps(n // B, eta1), noise / n)
    tolerance = 1e-10 if dtype == "float64" else 1e-5           # float32 features
    packed = np.concatenate([Theta[:(u + 1) * r, u * r:(u + 1) * r].T.ravel()
                             for u in range(n // B)])
    np.testing.assert_allclose(packed_theta(gp), packed, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(explained(gp, STAR), A(STAR), rtol=tolerance, atol=tolerance)
    ridge = DoublySGDRegressor(nu=noise / n, kernel=Gaussian(0.7), batch_size=B, block_size=r,
                               eta=1.0, eta_decay=eta1, random_state=2, dtype=dtype,
                               standardize_target=False).partial_fit(X[:n], Y[:n])
    assert np.array_equal(gp.predict(STAR), ridge.predict(STAR))


def exact_kernel_iterate(K, K_star, nu, gammas):
    """A_T(x*, x*) of the operator's recursion with the exact kernel and full batches (the
    expectation of the doubly stochastic one): with C = (1/n) sum_i k(x_i, .) k(x_i, .)^T,
    A_T = C h_T(C) and h_T(mu) = (1 - prod_t (1 - gamma_t (mu + nu))) / (mu + nu), i.e.
    A_T(x*, x*) = k*^T h_T(K / n) k* / n; T -> infinity gives k*^T (K + n nu I)^-1 k*."""
    n = K.shape[0]
    mu, U = np.linalg.eigh(K / n)
    h = (1.0 - np.prod(1.0 - np.outer(gammas, mu + nu), axis=0)) / (mu + nu)
    return ((K_star @ U) ** 2 * h).sum(axis=1) / n


def test_operator_variance_approaches_the_exact_posterior_variance():
    """Against 1 - k*^T (K + s^2 I)^-1 k* from a direct solve.  Two errors, each bounded apart:
    the iterations' (the exact-kernel iterate A_T is computed for the same T and steps, above),
    and the random features' (the estimate is unbiased for A_T, with a standard deviation of
    order 1/sqrt(block_size) at most: each value it multiplies is an average of block_size
    features, and products of two such errors fall as 1/block_size).  So the mean of S
    independent models lies within |A_T - A*| + 4 sd / sqrt(S) of the exact variance, and four
    times the features at least halve sd."""
    n, noise, T, S = 16, 1.0, 60, 24
    x, y = X[:n, :1], Y[:n]
    star = np.linspace(-1.5, 1.5, 7)[:, None]
    kernel = Gaussian(0.5)
    K, K_star = kernel.gram(x), kernel.gram(star, x)
    exact = 1.0 - np.einsum("ij,ji->i", K_star, np.linalg.solve(K + noise * np.eye(n), K_star.T))
    iterate = 1.0 - exact_kernel_iterate(K, K_star, noise / n, np.ones(T))
    spread = {}
    for r in (4, 16):
        estimates = np.array([1.0 - explained(DoublySGDGP(
            noise, variance="operator", kernel=Gaussian(0.5), batch_size=n, block_size=r,
            n_epochs=T, eta_schedule="constant", random_state=seed).fit(x, y), star)
            for seed in range(S)])
        sd = estimates.std(axis=0, ddof=1)
        bound = np.abs(iterate - exact) + 4.0 * sd / np.sqrt(S)
        assert (np.abs(estimates.mean(axis=0) - exact) <= bound).all()
        spread[r] = np.sqrt(np.mean(sd ** 2))
    assert np.abs(iterate - exact).max() < 1e-3        # the iterations' part is small here
    assert spread[16] < 0.55 * spread[4]               # 1/sqrt(4) = 0.5 (measured 0.32)
    # the clipped standard deviation stays in [0, 1] (the prior's)
    _, std = DoublySGDGP(noise, variance="operator", kernel=Gaussian(0.5), batch_size=n,
                         block_size=2, n_epochs=T).fit(x, y).predict(star, return_std=True)
    assert ((0.0 <= std) & (std <= 1.0)).all()


def test_a_noise_that_would_grow_the_past_is_refused_before_anything_changes():
    """nu = noise / n: a first step times nu beyond 2 would make the shrink grow the old
    coefficients (the files of such models could not be loaded): refused at the first call, or
    at set_params when n_samples fixes n."""
    gp = DoublySGDGP(1e100, n_epochs=1)
    with pytest.raises(ValueError, match="nu"):
        gp.fit(X, Y)
    assert gp._engine is None
    fitted = DoublySGDGP(0.3, n_samples=60, n_epochs=1).fit(X, Y)
    before = state_bytes(fitted)
    with pytest.raises(ValueError, match="nu"):
        fitted.set_params(noise=1e4)
    assert state_bytes(fitted) == before


def test_variance_options_are_checked():
    with pytest.raises(ValueError, match="test_points"):
        DoublySGDGP(variance="operator", test_points=STAR).fit(X, Y)
    with pytest.raises(ValueError, match="variance"):
        DoublySGDGP(variance="exact").fit(X, Y)
    with pytest.raises(ValueError, match="test_points has 2 features"):
        DoublySGDGP(test_points=[[0.0, 0.1]]).fit(X[:, :1], Y)
    gp = DoublySGDGP(test_points=STAR).fit(X, Y)
    before = state_bytes(gp)
    for call in (lambda: gp.predict(X[:3], return_std=True),
                 lambda: DoublySGDGP().fit(X, Y).predict(STAR, return_std=True),
                 lambda: gp.predict(STAR, return_std="yes")):
        with pytest.raises(ValueError):
            call()
    assert state_bytes(gp) == before


# -- saving, loading, continuing ---------------------------------------------------------------
THREE = np.digitize(X[:, 0], [-0.3, 0.3])
CASES = {
    "gp-operator": (lambda: DoublySGDGP(0.3, variance="operator", batch_size=8, block_size=4,
                                        n_epochs=2, random_state=1), Y),
    "gp-test-points": (lambda: DoublySGDGP(0.3, test_points=STAR, batch_size=8, block_size=8,
                                           n_epochs=2, dtype="float32"), Y),
    # the third class first appears after the save
    "softmax": (lambda: DoublySGDSoftmaxClassifier(batch_size=8, block_size=8, average=True,
                                                   random_state=3), np.where(THREE == 2, 7, THREE)),
}


def outputs(model):
    if isinstance(model, DoublySGDGP):
        mean, std = model.predict(STAR, return_std=True)
        return [mean, std, model.predict(X)]
    return [model.decision_function(X), model.predict_proba(X), model.predict(X), model.classes_]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_loaded_model_predicts_and_continues_like_the_uninterrupted_one(case):
    make, y = CASES[case]
    first = X[:, 0] < 0.3 if case == "softmax" else slice(0, 40)
    rest = ~first if case == "softmax" else slice(40, None)
    model = make()
    model.partial_fit(X[first], y[first]) if case == "softmax" else model.fit(X[first], y[first])
    loaded = fastomkl.load(io.BytesIO(saved(model)))
    for a, b in zip(outputs(loaded), outputs(model)):
        assert np.array_equal(a, b)
    model.partial_fit(X[rest], y[rest])
    loaded.partial_fit(X[rest], y[rest])
    for a, b in zip(outputs(loaded), outputs(model)):
        assert np.array_equal(a, b)
    mine, theirs = loaded._engine.get_state(), model._engine.get_state()
    assert all(np.array_equal(mine[k], theirs[k], equal_nan=True) for k in theirs)


@pytest.mark.parametrize("case, entry, edit", [
    ("gp-operator", "experts.theta", lambda a: a[:-1]),
    ("gp-operator", "experts.theta", lambda a: np.where(np.arange(a.size) == 3, np.nan, a)),
    ("gp-operator", "experts.nu", lambda a: np.array(-1.0)),
    ("gp-operator", "experts.reals", lambda a: np.array([a[0], a[1], a[2], 0.0])),
    ("gp-operator", "experts.reals", lambda a: a[:2]),
    ("gp-test-points", "experts.theta", lambda a: np.zeros(4)),
    ("gp-test-points", "experts.coef", lambda a: a[:, :2]),
    ("softmax", "experts.coef", lambda a: a[:, :1]),
    ("softmax", "features.streams", lambda a: a + (1 << 62)),
])
def test_a_bad_state_is_refused_naming_the_entry_and_changes_nothing(case, entry, edit):
    make, y = CASES[case]
    model = make().fit(X, y)
    state = {k: v.copy() for k, v in model._engine.get_state().items()}
    state[entry] = edit(state[entry])
    before = state_bytes(model)
    name = entry.split(".")[1]                       # components name their own entries
    with pytest.raises(ValueError, match=name):
        model._engine.set_state(state)
    assert state_bytes(model) == before
    header, arrays = read(saved(model))
    arrays[entry] = edit(arrays[entry])
    with pytest.raises(ValueError, match=name):
        fastomkl.load(io.BytesIO(write(header, arrays)))


def test_a_gp_keeps_the_nu_of_its_first_call():
    """nu = noise / n from fit's rows, kept in the state: a loaded GP continues with it, and a
    fixed n_samples is checked against the file."""
    gp = DoublySGDGP(0.4, n_epochs=1).fit(X[:20], Y[:20])
    assert gp._engine.experts.nu == 0.4 / 20
    assert fastomkl.load(io.BytesIO(saved(gp)))._engine.experts.nu == 0.4 / 20
    header, arrays = read(saved(DoublySGDGP(0.4, n_samples=20, n_epochs=1).fit(X, Y)))
    header["params"]["n_samples"] = 30
    with pytest.raises(ValueError, match="nu"):
        fastomkl.load(io.BytesIO(write(header, arrays)))


def test_a_gp_whose_noise_exceeds_2_loads_and_serves_with_the_nu_of_its_first_call():
    """noise / n is within the shrink's bound for n >= 2 however large noise / 1 is: the engine
    built to load a file, and the snapshots' engines built after the fit, take the nu the model
    learnt with (the file's, the first call's), not noise / 1."""
    gp = DoublySGDGP(3.0, n_epochs=1, batch_size=10, random_state=0).fit(X[:40], Y[:40])
    assert gp._engine.experts.nu == 3.0 / 40
    loaded = fastomkl.load(io.BytesIO(saved(gp)))
    assert loaded._engine.experts.nu == 3.0 / 40
    gp.partial_fit(X[40:], Y[40:])
    loaded.partial_fit(X[40:], Y[40:])
    assert state_bytes(loaded) == state_bytes(gp)
    gp.prepare_serving()
    assert gp._engine.has_snapshots
    assert gp._engine._predict_snapshot(X[0]) == gp.predict_one(X[0])


# -- multiclass labels -------------------------------------------------------------------------
def test_classes_join_as_they_arrive_with_zero_scores():
    """A class met for the first time gets a column of zeros, then learns; one sample at a time
    equals batches of one; classes= adds columns up front; a failed call adds nothing."""
    one = DoublySGDSoftmaxClassifier(batch_size=1, block_size=4, random_state=0)
    labels = ["b", "a", "b", "c", "a", "c"]
    online = [one.predict_learn_one(x, c) for x, c in zip(X, labels)]
    batch = DoublySGDSoftmaxClassifier(batch_size=1, block_size=4, random_state=0)
    assert online == [batch.predict_learn(X[i:i + 1], labels[i:i + 1])[0] for i in range(6)]
    assert one.classes_.tolist() == ["a", "b", "c"]          # sorted, as scikit-learn reads them
    assert one._by_code.tolist() == ["b", "a", "c"]          # the engine's columns: by arrival
    assert np.array_equal(one.decision_function(X), batch.decision_function(X))
    two = DoublySGDSoftmaxClassifier(batch_size=1, block_size=4, random_state=0)
    two.partial_fit(X[:3], labels[:3])
    scores = two.decision_function(X)
    grown = two._engine.with_outputs(3)
    outputs = np.empty((len(X), 3))
    grown.predict_outputs_many(X, outputs)
    # two classes score as f_1 - f_0 (new labels of one call take columns in sorted order); the
    # grown engine keeps both columns and adds a zero one
    assert np.array_equal(outputs[:, 1] - outputs[:, 0], scores) and not outputs[:, 2].any()
    model = DoublySGDSoftmaxClassifier(random_state=0).fit(X, THREE)
    before = state_bytes(model)
    with pytest.raises(ValueError):
        model.partial_fit(X[:2], [0, np.nan], classes=[0, 1, 2, 9])
    with pytest.raises(ValueError, match="all strings or all numbers"):
        model.learn_one(X[0], "a")
    assert state_bytes(model) == before and model.classes_.tolist() == [0, 1, 2]
    model.partial_fit(X[:2], [0, 1], classes=[0, 1, 2, 9])
    assert model.classes_.tolist() == [0, 1, 2, 9] and model.decision_function(X).shape[1] == 4


def test_each_variance_function_is_the_ridge_dsg_of_its_kernel_targets():
    """Method 2's function for test point x*_i learns, at the end of each iteration from the
    batch's rows, what a ridge DSG on the same blocks learns round by round from the targets
    k(x, x*_i): the same coefficients to rounding (the batch's products run in another order)."""
    n, noise, B, r = 40, 0.4, 8, 4
    kernel = Laplacian(0.9)
    gp = DoublySGDGP(noise, test_points=STAR, n_samples=n, kernel=kernel, batch_size=B,
                     block_size=r, eta_decay=0.01, random_state=6).partial_fit(X[:n], Y[:n])
    _, std = gp.predict(STAR, return_std=True)
    for i, point in enumerate(STAR):
        ridge = DoublySGDRegressor(nu=noise / n, kernel=kernel, batch_size=B, block_size=r,
                                   eta=1.0, eta_decay=0.01, random_state=6,
                                   standardize_target=False)
        ridge.partial_fit(X[:n], kernel.gram(X[:n], point[None, :])[:, 0])
        np.testing.assert_allclose(gp._engine.experts.coefficients[:, 1 + i],
                                   ridge._engine.experts.coefficients[:, 0], rtol=1e-12,
                                   atol=1e-15)
        assert std[i] == pytest.approx(np.sqrt(np.clip(1 - ridge.predict(point[None, :])[0],
                                                       0, 1)), rel=1e-10, abs=1e-12)
