"""Doubly stochastic gradients against independent computations: the kernels the feature blocks
estimate, Algorithm 1 and the mini-batch iteration written in NumPy (tests/dsg_reference.py), the
closed form of the coefficients, kernel ridge regression solved directly, and the exactness of
streams, merge and persistence."""
import io
import warnings

import numpy as np
import pytest

import fastomkl
from fastomkl import Cauchy, Gaussian, Laplacian, Matern
from fastomkl._core.features import dsg as core
from fastomkl._core.features.rff import transform_many
from fastomkl._core.losses import functional_derivative
from fastomkl.dsg import (DSG_ENSEMBLE_STEPS, NORMA, NORMA_ENSEMBLE_STEPS, DoublySGDClassifier,
                          DoublySGDOneClass, DoublySGDRegressor, DoublySGDSoftmaxClassifier,
                          median_bandwidth, merge)
from dsg_reference import ReferenceDSG, ReferenceEnsemble
from helpers import as_older_file, state_bytes
from reference import NumpyMLPoly

RNG = np.random.default_rng(3)
X = RNG.uniform(-1, 1, (120, 3))
Y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]


def z(x, W, b):
    """The block's features written out: sqrt(2/r) cos(W^T x + b)."""
    return np.sqrt(2.0 / W.shape[1]) * np.cos(x @ W + b)


def coefficients(model):
    return model._engine.experts.coefficients


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
    W, b = core.generate_block("gaussian", 0, 1.0, 1, 0, 0, 50, 400)
    assert abs(W.mean()) < 0.02 and abs(W.std() - 1.0) < 0.02
    assert 0 <= b.min() and b.max() < 2 * np.pi and abs(b.mean() - np.pi) < 0.15


def test_the_bank_caches_the_blocks_it_holds():
    """The bank's frequencies are the generated blocks, and its features NumPy's of them."""
    model = DoublySGDRegressor(kernel=Gaussian(0.7), batch_size=10, block_size=8,
                               random_state=2).fit(X[:40], Y[:40])
    bank = model._engine.features
    assert bank.n_blocks == 4 and bank.block_keys[1].tolist() == [0, 1, 2, 3]
    blocks = [core.generate_block("gaussian", 0, 0.7, 2, 0, t, 3, 8) for t in range(5)]
    for t, (W, b) in enumerate(blocks):                  # the fifth is the pending block
        assert all(np.array_equal(u, v) for u, v in zip(bank.block(t), (W, b)))
    out = np.zeros((len(X), 1, bank.n_outputs))
    transform_many(bank, X, out)
    np.testing.assert_allclose(out[:, 0, :40], np.hstack([z(X, W, b) for W, b in blocks]),
                               rtol=0, atol=1e-13)


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
    model = DoublySGDRegressor(loss, quantile=0.3, kernel=Gaussian(0.9), batch_size=1,
                               block_size=1, eta=1.0, eta_decay=0.1, nu=0.05, random_state=4,
                               standardize_target=False)
    online = model.predict_learn(X[:40], Y[:40])
    alphas, predictions = algorithm1(X[:40], Y[:40], 4, 0.9, lambda t: 1.0 / (1 + 0.1 * t),
                                     0.05, derivative)
    np.testing.assert_allclose(online, predictions, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(coefficients(model)[:40, 0], alphas, rtol=1e-11, atol=1e-14)


def test_closed_form_with_theta_nu_one():
    """gamma_t = theta/t and theta nu = 1: alpha_i = -(theta/t) l'(f_i(x_i), y_i) phi_i(x_i)."""
    theta, n = 2.0, 25
    model = DoublySGDRegressor(kernel=Gaussian(1.0), batch_size=1, block_size=1,
                               eta_schedule="theory", eta=theta, nu=1.0 / theta, random_state=1,
                               standardize_target=False)
    f = model.predict_learn(X[:n], Y[:n])
    phi = np.array([np.sqrt(2.0) * np.cos(X[i] @ W[:, 0] + b[0]) for i, (W, b) in enumerate(
        core.generate_block("gaussian", 0, 1.0, 1, 0, i, 3, 1) for i in range(n))])
    np.testing.assert_allclose(coefficients(model)[:n, 0], -theta / n * (f - Y[:n]) * phi,
                               rtol=1e-10, atol=1e-14)


REFERENCE_CASES = {
    "squared": (DoublySGDRegressor, {}, Y),
    "huber-average": (DoublySGDRegressor, {"loss": "huber", "epsilon": 0.3, "average": True}, Y),
    "epsilon-laplacian": (DoublySGDRegressor, {"loss": "epsilon_insensitive", "epsilon": 0.2,
                                               "kernel": Laplacian(1.3)}, Y),
    "absolute-cauchy": (DoublySGDRegressor, {"loss": "absolute", "kernel": Cauchy(0.6)}, Y),
    "quantile-matern": (DoublySGDRegressor, {"loss": "quantile", "quantile": 0.2,
                                             "kernel": Matern(0.9, nu=2.5)}, Y),
    # more rows than features per batch: the preconditioner is well conditioned (with fewer,
    # the 1e-7 ridge makes its condition number 1e7, and any two orders of summation differ
    # by 1e-9 after the solve)
    "precondition": (DoublySGDRegressor, {"precondition": True, "eta": 0.5, "batch_size": 15},
                     Y),
    "revisit": (DoublySGDRegressor, {"n_features_max": 24, "nu": 0.01}, Y),
    "stop": (DoublySGDRegressor, {"n_features_max": 24, "on_max_features": "stop", "nu": 0.01},
             Y),
    "theory": (DoublySGDRegressor, {"eta_schedule": "theory", "eta": 3.0, "nu": 0.5}, Y),
    "hinge": (DoublySGDClassifier, {"loss": "hinge"}, np.where(Y > 0, 1.0, -1.0)),
    "squared-hinge": (DoublySGDClassifier, {"loss": "squared_hinge"}, np.where(Y > 0, 1.0, -1.0)),
    "logistic-average": (DoublySGDClassifier, {"loss": "logistic", "average": True},
                         np.where(Y > 0, 1.0, -1.0)),
    "kl": (fastomkl.DoublySGDDensityRatio, {"nu": 0.01}, np.where(Y > 0, 1.0, -1.0)),
    "one-class": (DoublySGDOneClass, {"nu": 0.2}, None),
    "one-class-average": (DoublySGDOneClass, {"nu": 0.2, "average": True}, None),
    "softmax": (DoublySGDSoftmaxClassifier, {}, np.digitize(Y, [-0.3, 0.4]).astype(float)),
    "softmax-precondition": (DoublySGDSoftmaxClassifier, {"precondition": True, "eta": 0.5,
                                                          "batch_size": 15},
                             np.digitize(Y, [-0.3, 0.4]).astype(float)),
    "float32": (DoublySGDRegressor, {"dtype": "float32", "loss": "huber", "epsilon": 0.5}, Y),
}


def bank_features(bank):
    """x, W, b -> the bank's own features of x for its block of frequencies W."""
    def features(x, W, b):
        for j in range(bank.n_blocks + 1):
            if np.array_equal(bank.block(j)[0], W):
                out = np.zeros((1, bank.n_kernels, bank.n_outputs))
                transform_many(bank, x[None, :], out)
                return out[0, 0, j * bank.r:(j + 1) * bank.r]
        raise AssertionError("not a block of the bank")
    return features


def reference_for(cls, params, model):
    """The NumPy model of the same parameters on the same blocks: NumPy's features, or, for a
    float32 model, its bank's own (float32 features are checked against NumPy apart)."""
    kernel = params.get("kernel", Gaussian(0.8))
    kind = {Gaussian: "gaussian", Laplacian: "laplacian", Cauchy: "cauchy",
            Matern: "matern"}[type(kernel)]
    features = bank_features(model._engine.features) if params.get("dtype") == "float32" \
        else None
    loss = model.loss
    eta, decay, nu = params.get("eta", 1.0), 1e-4, params.get("nu", model.nu)
    schedule = params.get("eta_schedule", "inverse")
    gamma = {"inverse": lambda t: eta / (1 + decay * t), "theory": lambda t: eta / t,
             "constant": lambda t: eta}[schedule]
    limit = params.get("n_features_max")
    return ReferenceDSG(kind, int(round(2 * getattr(kernel, "nu", 0))), kernel.sigma, 7, 3, 8,
                        params["batch_size"],
                        loss, gamma, nu, outputs=model._engine.experts.n_experts,
                        param=params.get("epsilon", params.get("quantile", 0.0)),
                        average=params.get("average", False),
                        precondition=params.get("precondition", False),
                        max_blocks=None if limit is None else limit // 8,
                        revisit=params.get("on_max_features", "revisit") == "revisit",
                        features=features)


@pytest.mark.parametrize("case", sorted(REFERENCE_CASES))
def test_every_compiled_path_is_the_numpy_iteration(case):
    """Batches of 6, blocks of 8, one sample at a time: every prediction (before learning),
    then the outputs of the learnt model, to 1e-12 of the NumPy model's."""
    cls, params, y = REFERENCE_CASES[case]
    full = {"kernel": Gaussian(0.8), "batch_size": 6, "block_size": 8, "random_state": 7,
            "eta": 1.0, **params}                # one model (eta="ensemble" is tested below)
    if cls is DoublySGDRegressor:          # the paper's raw units (tests/test_target_units.py
        full["standardize_target"] = False     # checks the standardisation around them)
    model = cls(**full)
    n = 90
    targets = np.zeros(n) if y is None else y[:n]
    if cls is DoublySGDSoftmaxClassifier:          # three classes from the start
        model._codes = {0.0: 0.0, 1.0: 1.0, 2.0: 2.0}
        model.classes_ = np.array([0.0, 1.0, 2.0])
    engine = model._engine_for(3)                  # the engine's targets: codes, -1/+1, indices
    online = [engine.predict_learn_one(x, target) for x, target in zip(X[:n], targets)]
    reference = reference_for(cls, full, model)
    expected = []
    for i in range(n):
        out = reference.predict_learn_one(X[i], targets[i])
        expected.append(np.argmax(out) if cls is DoublySGDSoftmaxClassifier else out[0])
    scale = max(np.abs(expected).max(), 1e-3)
    np.testing.assert_allclose(online, expected, rtol=1e-12, atol=1e-12 * scale)
    assert model._engine.features.n_blocks == len(reference.blocks)
    learnt = model._engine.experts
    outputs = np.empty((len(X), learnt.n_experts))
    model._engine.predict_outputs_many(X, outputs)
    expected = np.array([reference.predict(x) for x in X])
    np.testing.assert_allclose(outputs, expected, rtol=1e-12,
                               atol=1e-12 * max(np.abs(expected).max(), 1e-3))
    if case.startswith("one-class"):
        assert learnt.offset == pytest.approx(reference.tau, rel=1e-12, abs=1e-14)


SIGNS = np.where(Y > 0, 1.0, -1.0)
ENSEMBLE_CASES = {
    "squared": (DoublySGDRegressor, {}, Y),
    "huber-average": (DoublySGDRegressor, {"loss": "huber", "epsilon": 0.3, "average": True}, Y),
    "quantile": (DoublySGDRegressor, {"loss": "quantile", "quantile": 0.2}, Y),
    "precondition": (DoublySGDRegressor, {"precondition": True, "batch_size": 15}, Y),
    "hinge": (DoublySGDClassifier, {"loss": "hinge"}, SIGNS),
    "logistic-average": (DoublySGDClassifier, {"loss": "logistic", "average": True}, SIGNS),
}


@pytest.mark.parametrize("case", sorted(ENSEMBLE_CASES))
def test_the_step_ensemble_is_its_numpy_members_under_ml_poly(case):
    """eta="ensemble": one output per step of DSG_ENSEMBLE_STEPS over the same blocks, each the
    NumPy iteration with its step, mixed by ML-Poly on the loss's slope at the mixture: every
    prediction before learning and the final weights match the NumPy ensemble."""
    cls, params, y = ENSEMBLE_CASES[case]
    full = {"kernel": Gaussian(0.8), "batch_size": 6, "block_size": 8, "random_state": 7,
            "eta": "ensemble", **params}
    if cls is DoublySGDRegressor:
        full["standardize_target"] = False
    model = cls(**full)
    engine = model._engine_for(3)
    n = 90
    online = [engine.predict_learn_one(x, target) for x, target in zip(X[:n], y[:n])]
    reference = ReferenceEnsemble(
        kernel="gaussian", df=0, sigma=0.8, seed=7, d=3, r=8,
        B=full["batch_size"], loss=model.loss, gamma=lambda t: 1.0 / (1.0 + 1e-4 * t),
        nu=model.nu, outputs=len(DSG_ENSEMBLE_STEPS),
        param=params.get("epsilon", params.get("quantile", 0.0)),
        average=params.get("average", False), precondition=params.get("precondition", False),
        steps=DSG_ENSEMBLE_STEPS)
    expected = [reference.predict_learn_one(x, target) for x, target in zip(X[:n], y[:n])]
    scale = max(np.abs(expected).max(), 1e-3)
    np.testing.assert_allclose(online, expected, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(engine.combiner.weights_, reference.weights(), rtol=1e-10)
    assert len(set(np.round(reference.weights(), 12))) > 1     # the members did differ


def test_float32_features_are_numpy_in_single_precision():
    """The float32 bank's features against NumPy's in float32 (its own rounding) and float64."""
    model = DoublySGDRegressor(kernel=Gaussian(0.8), batch_size=6, block_size=8, dtype="float32",
                               random_state=7).fit(X[:60], Y[:60])
    bank = model._engine.features
    out = np.zeros((len(X), 1, bank.n_outputs))
    transform_many(bank, X, out)
    for j in range(bank.n_blocks + 1):
        W, b = bank.block(j)
        single = np.sqrt(2.0 / 8) * np.cos(X.astype(np.float32) @ W.astype(np.float32)
                                           + b.astype(np.float32)).astype(np.float64)
        np.testing.assert_allclose(out[:, 0, 8 * j:8 * (j + 1)], single, atol=2e-6)
        np.testing.assert_allclose(out[:, 0, 8 * j:8 * (j + 1)], z(X, W, b), atol=4e-6)


def test_a_stream_in_any_chunks_is_the_same_model():
    """A batch is B consecutive samples whatever calls bring them: one sample at a time, chunks
    of 7, and one call give the same predictions and the same state, bit for bit."""
    make = lambda: DoublySGDRegressor(batch_size=5, block_size=4, average=True, random_state=9)
    one = make()
    online = [one.predict_learn_one(x, y) for x, y in zip(X, Y)]
    chunks = make()
    pieces = [chunks.predict_learn(X[i:i + 7], Y[i:i + 7]) for i in range(0, len(X), 7)]
    whole = make()
    assert np.array_equal(online, np.concatenate(pieces))
    assert np.array_equal(online, whole.predict_learn(X, Y))
    assert state_bytes(one) == state_bytes(chunks) == state_bytes(whole)
    # an unfinished batch waits: 118 of 120 samples are in blocks, the last two accumulate
    assert whole.n_samples_seen_ == 120 and whole._engine.experts.iterations == 24


def test_kernel_ridge_regression_is_reached():
    """Full batches: f_T approaches (K + n nu I)^-1 y, the solution of the averaged objective."""
    x, nu = X[:40, :1], 0.01
    y = np.sin(3 * x[:, 0])
    K = Gaussian(0.5).gram(x)
    exact = K @ np.linalg.solve(K + len(x) * nu * np.eye(len(x)), y)
    model = DoublySGDRegressor(kernel=Gaussian(0.5), batch_size=len(x), block_size=256, nu=nu,
                               eta=1.0, eta_decay=0.0, n_features_max=None, random_state=0)
    for _ in range(150):
        model.partial_fit(x, y)
    assert np.sqrt(np.mean((model.predict(x) - exact) ** 2)) < 0.03 * np.std(exact)


def test_regenerated_predictions_match_cached_ones():
    """f_{t+1}(x) = (1 - gamma_t nu) f_t(x) + z_t(x)^T alpha_t, kept per test point."""
    model = DoublySGDRegressor(kernel=Gaussian(0.7), batch_size=10, block_size=16, nu=0.1,
                               eta=1.0, random_state=2, standardize_target=False)
    test = X[100:]
    cached = np.zeros(len(test))
    for t, start in enumerate(range(0, 100, 10)):
        model.partial_fit(X[start:start + 10], Y[start:start + 10])
        gamma = 1.0 / (1.0 + 1e-4 * (t + 1))
        W, b = core.generate_block("gaussian", 0, 0.7, 2, 0, t, 3, 16)
        alpha = coefficients(model)[16 * t:16 * (t + 1), 0]
        cached = (1.0 - gamma * 0.1) * cached + z(test, W, b) @ alpha
    np.testing.assert_allclose(model.predict(test), cached, rtol=1e-12, atol=1e-14)


def test_same_seed_same_bits_and_prediction_paths_agree():
    """An int seed, a SeedSequence and a Generator each give the same model twice; predict,
    predict_one and the prequential predictions agree to the bit."""
    for seed in (5, np.random.SeedSequence(5)):
        a = DoublySGDRegressor(batch_size=4, block_size=8, random_state=seed).fit(X, Y)
        b = DoublySGDRegressor(batch_size=4, block_size=8, random_state=seed).fit(X, Y)
        assert np.array_equal(a.predict(X), b.predict(X))
    a = DoublySGDRegressor(batch_size=4, block_size=8, random_state=np.random.default_rng(1))
    b = DoublySGDRegressor(batch_size=4, block_size=8, random_state=np.random.default_rng(1))
    assert np.array_equal(a.fit(X, Y).predict(X), b.fit(X, Y).predict(X))
    assert np.array_equal(a.predict(X), [a.predict_one(x) for x in X])
    seeds = {int(DoublySGDRegressor(batch_size=4).fit(X, Y)._engine.features.seed)
             for _ in range(3)}
    assert len(seeds) == 3                      # random_state=None: a fresh seed each time


def test_save_load_and_300_more_rounds_are_bit_identical():
    for model in (DoublySGDClassifier("logistic", batch_size=8, block_size=8, average=True,
                                      random_state=7),
                  DoublySGDRegressor(batch_size=7, block_size=4, precondition=True,
                                     n_features_max=40, dtype="float32")):
        y = Y > 0 if isinstance(model, DoublySGDClassifier) else Y
        model.partial_fit(X[:83], y[:83])                   # a batch in progress is saved too
        buffer = io.BytesIO()
        model.save(buffer)
        buffer.seek(0)
        loaded = fastomkl.load(buffer)
        assert state_bytes(loaded) == state_bytes(model)
        stream = np.random.default_rng(1).uniform(-1, 1, (300, 3))
        target = np.sin(stream[:, 0]) > 0 if isinstance(model, DoublySGDClassifier) \
            else np.sin(stream[:, 0])
        a = [model.predict_learn_one(x, t) for x, t in zip(stream, target)]
        b = [loaded.predict_learn_one(x, t) for x, t in zip(stream, target)]
        assert a == b and state_bytes(loaded) == state_bytes(model)


def test_merge_predicts_the_average_of_the_models():
    params = dict(kernel=Gaussian(0.8), batch_size=10, block_size=8, random_state=3,
                  n_features_max=None)
    models = [DoublySGDRegressor(stream=w, **params).fit(X[w::3], Y[w::3]) for w in range(3)]
    merged = merge(models)
    average = np.mean([m.predict(X) for m in models], axis=0)
    np.testing.assert_allclose(merged.predict(X), average, rtol=1e-12, atol=1e-14)
    assert merged.n_features_ == sum(m.n_features_ for m in models)
    merged.partial_fit(X[:10], Y[:10])                   # and it keeps learning
    with pytest.raises(ValueError, match="disjoint"):
        merge([models[0], models[0]])
    with pytest.raises(ValueError, match="same parameters"):
        merge([models[0], DoublySGDRegressor(**{**params, "kernel": Gaussian(0.9)},
                                             stream=5).fit(X, Y)])
    one_class = [DoublySGDOneClass(stream=w, **params).fit(X[w::2]) for w in range(2)]
    np.testing.assert_allclose(merge(one_class).decision_function(X),
                               np.mean([m.decision_function(X) for m in one_class], axis=0),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("cls, y", [(DoublySGDRegressor, Y), (DoublySGDClassifier, SIGNS)])
def test_merged_step_ensembles_predict_the_average_of_the_models(cls, y):
    """Each model weighs its members its own way: the merged member k is the mean of the models'
    members k scaled by w_k / mean(w_k), so the merged prediction is still their mean.  (The
    regression targets get noise of another scale per model, so that each prefers another step;
    a member may have weight 0 in every model.)"""
    params = dict(kernel=Gaussian(0.8), batch_size=10, block_size=8, random_state=3,
                  n_features_max=None, eta="ensemble")
    if cls is DoublySGDRegressor:
        # rows w::3 (model w's) get noise of scale 2 w
        y = y + 2.0 * (np.arange(len(y)) % 3) * np.random.default_rng(0).normal(size=len(y))
    models = [cls(stream=w, **params).fit(X[w::3], y[w::3]) for w in range(3)]
    weights = [m._member_weights() for m in models]
    assert len({tuple(np.round(w, 12)) for w in weights}) > 1   # they weigh their members apart
    merged = merge(models)
    average = np.mean([m.decision_function(X) if cls is DoublySGDClassifier else m.predict(X)
                       for m in models], axis=0)
    got = merged.decision_function(X) if cls is DoublySGDClassifier else merged.predict(X)
    np.testing.assert_allclose(got, average, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(merged._member_weights(), np.mean(weights, axis=0))
    merged.partial_fit(X[:10], y[:10])                   # and it keeps learning


def test_merged_ensembles_of_files_mixed_by_hedge_keep_hedge():
    """Models loaded from files whose members were mixed by Hedge merge into a Hedge-mixed model
    that predicts the average of theirs."""
    params = dict(kernel=Gaussian(0.8), batch_size=10, block_size=8, random_state=3,
                  n_features_max=None, eta="ensemble")
    noisy = Y + 2.0 * (np.arange(len(Y)) % 3) * np.random.default_rng(0).normal(size=len(Y))
    models = []
    for w in range(3):
        model = DoublySGDRegressor(stream=w, **params)
        model._file_layout = {"hedge": True}        # what the earlier release built
        models.append(model.partial_fit(X[w::3], noisy[w::3]))
    merged = merge(models)
    assert "log_w" in merged._engine.combiner.get_state()
    np.testing.assert_allclose(merged.predict(X), np.mean([m.predict(X) for m in models], axis=0),
                               rtol=1e-11, atol=1e-13)


def test_median_bandwidth_is_the_median_distance_and_robust_to_huge_first_rows():
    x = RNG.normal(size=(30, 2))
    distances = [np.linalg.norm(x[i] - x[j]) for i in range(30) for j in range(i + 1, 30)]
    assert median_bandwidth(x, scale=4.0) == pytest.approx(4.0 * np.median(distances))
    model = DoublySGDRegressor(batch_size=30)
    for row in x[:29]:
        model.learn_one(row, 0.0)
    assert model.bandwidth_ is None                      # until the first batch has come
    model.learn_one(x[29], 0.0)
    assert model.bandwidth_ == pytest.approx(np.median(distances), rel=1e-12)
    # more rows than the batch: the first 256 of a larger batch set it
    wide = RNG.normal(size=(300, 2))
    model = DoublySGDRegressor(batch_size=512, n_features_max=None).fit(wide, wide[:, 0],
                                                                      shuffle=False)
    assert model.bandwidth_ == pytest.approx(median_bandwidth(wide[:256]), rel=1e-12)
    huge = RNG.normal(size=(32, 2)) * 1e140
    model = DoublySGDRegressor().fit(huge, huge[:, 0] * 1e-140)
    assert model.bandwidth_ <= 2 * np.sqrt(2) * 1e8           # clipped to |x_j| <= 1e8
    assert np.isfinite(model.predict(x)).all()


@pytest.mark.parametrize("params", [{"kernel": "poly"}, {"median_scale": -1.0},
                                    {"block_size": 0}, {"loss": "hinge"},
                                    {"kernel": Matern(1.0, nu=1.0)}, {"quantile": 1.0},
                                    {"random_state": -1}, {"average": 1}, {"dtype": "float16"},
                                    {"dtype": np.float32}, {"nu": 1e4}, {"eta": 0.0},
                                    {"eta": 1e8, "nu": 1e-6}, {"n_features_max": 10},
                                    {"on_max_features": "drop"}, {"stream": -1}])
def test_bad_parameters_are_refused_and_the_model_unchanged(params):
    model = DoublySGDRegressor(**params)
    with pytest.raises(ValueError):
        model.fit(X, Y)
    assert model._engine is None
    fitted = DoublySGDRegressor(random_state=0).fit(X, Y)
    before = state_bytes(fitted)
    with pytest.raises(ValueError):
        fitted.set_params(**params)
    assert state_bytes(fitted) == before


def test_bad_input_is_refused_and_the_model_unchanged():
    model = DoublySGDSoftmaxClassifier(batch_size=4, block_size=4, random_state=0)
    model.partial_fit(X[:10], np.arange(10) % 3)
    before = state_bytes(model)
    for call in (lambda: model.learn_one([np.nan, 0.0, 0.0], 1),
                 lambda: model.learn_one([0.0, 0.0], 1),
                 lambda: model.partial_fit(X[:3], [0, 1]),
                 lambda: model.partial_fit(X[:3] * np.inf, [0, 1, 2]),
                 lambda: model.predict([[1e300, 0.0, 0.0]])):
        with pytest.raises(ValueError):
            call()
    assert state_bytes(model) == before


@pytest.mark.parametrize("cls, y", [(DoublySGDRegressor, Y), (DoublySGDClassifier, Y > 0),
                                    (DoublySGDSoftmaxClassifier, np.digitize(Y, [0.0]))])
def test_extreme_steps_and_inputs_stay_finite_and_loadable(cls, y):
    """The sweep that made the NumPy engine's files unloadable: steps at the bound the guard
    keeps (eta nu = 2), no shrink with a huge eta, inputs at 1e150: predictions stay finite and
    the model's own file loads."""
    for params in ({"eta": 2e4, "nu": 1e-4}, {"eta": 1e4, "nu": 1e-6},
                   {"eta": 1e12, "nu": 0.0}):
        model = cls(batch_size=4, block_size=4, eta_schedule="constant", random_state=0,
                    **params)
        with np.errstate(all="raise"), warnings.catch_warnings():
            warnings.simplefilter("ignore", fastomkl.NumericalWarning)   # refused updates
            model.fit(np.vstack([X, 1e150 * X[:8]]), np.concatenate([y, y[:8]]))
            out = model._decisions(np.vstack([X, 1e150 * X[:5]]))
        assert np.isfinite(out).all()
        buffer = io.BytesIO()
        model.save(buffer)
        buffer.seek(0)
        assert state_bytes(fastomkl.load(buffer)) == state_bytes(model)


def test_old_parameter_names_warn_and_mean_what_they_meant():
    with pytest.warns(FutureWarning):
        old = DoublySGDRegressor(kernel="laplacian", bandwidth=0.7, eta0=0.5, eta1=1e-3,
                                 learning_rate="constant", random_state=1, n_jobs=2)
    assert old.kernel == Laplacian(0.7) and (old.eta, old.eta_decay, old.eta_schedule) == \
        (0.5, 1e-3, "constant")
    new = DoublySGDRegressor(kernel=Laplacian(0.7), eta=0.5, eta_decay=1e-3,
                             eta_schedule="constant", random_state=1)
    assert np.array_equal(old.fit(X, Y).predict(X), new.fit(X, Y).predict(X))
    with pytest.warns(FutureWarning):
        matern = DoublySGDRegressor(kernel="matern", matern_nu=2.5, bandwidth=0.9)
    assert matern.kernel == Matern(0.9, nu=2.5)
    with pytest.warns(FutureWarning):
        median = DoublySGDRegressor(bandwidth="median", bandwidth_scale=4.0)
    assert median.kernel is None and median.median_scale == 4.0


def test_one_class_follows_the_paper_updates():
    """B = r = 1: alpha_i = gamma_i phi_i(x_i) when f(x_i) < tau, and tau moves by +gamma nu or
    -gamma (1 - nu), written out in NumPy on the regenerated features."""
    nu, n = 0.2, 30
    model = DoublySGDOneClass(kernel=Gaussian(0.8), batch_size=1, block_size=1, nu=nu,
                              eta_decay=0.1, random_state=5)
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
    assert model._engine.experts.offset == pytest.approx(tau, abs=1e-12)
    np.testing.assert_allclose(coefficients(model)[:n, 0], alphas, rtol=1e-11, atol=1e-14)


def test_density_ratio_approaches_the_log_ratio():
    """N(0.5, 1) against N(-0.5, 1): log p/q = x."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0.5, 1, 3000), rng.normal(-0.5, 1, 3000)])[:, None]
    y = np.repeat([1.0, 0.0], 3000)
    order = rng.permutation(6000)
    model = fastomkl.DoublySGDDensityRatio(kernel=Gaussian(1.0), random_state=0)
    model.fit(x[order], y[order], shuffle=False)
    grid = np.linspace(-1, 1, 9)[:, None]
    assert np.max(np.abs(model.log_ratio(grid) - grid[:, 0])) < 0.35
    with pytest.raises(ValueError, match="more than two"):
        model.partial_fit(grid, np.full(9, 2.0))
    # p's rows labelled "x" (classes_[-1]) and q's "w", an "x" row first: the first label is
    # coded -1 inside, and log_ratio still estimates log p/q = x
    words = np.where(y[order] > 0, "x", "w")
    first = int(np.flatnonzero(words == "x")[0])
    rows = np.r_[first, np.delete(np.arange(6000), first)]
    model = fastomkl.DoublySGDDensityRatio(kernel=Gaussian(1.0), random_state=0)
    for i in rows:
        model.learn_one(x[order][i], words[i])
    assert model.classes_.tolist() == ["w", "x"] and model._score_sign == -1.0
    assert np.max(np.abs(model.log_ratio(grid) - grid[:, 0])) < 0.35


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


@pytest.mark.parametrize("loss", ["squared", "huber", "epsilon_insensitive", "absolute",
                                  "quantile", "hinge", "squared_hinge", "logistic", "kl"])
def test_every_loss_derivative_matches_finite_differences(loss):
    rng = np.random.default_rng(0)
    u = rng.uniform(-3, 3, 200)
    y = np.sign(rng.uniform(-1, 1, 200)) if loss in ("hinge", "squared_hinge", "logistic", "kl") \
        else rng.uniform(-3, 3, 200)
    g = np.array([functional_derivative(loss, a, b, 0.25 if loss == "quantile" else 1.0)
                  for a, b in zip(u, y)])
    fd = np.array([finite_difference(loss, a, b) for a, b in zip(u, y)])
    kinks = np.array([min(abs(a - b), abs(abs(a - b) - 1), abs(a * b - 1)) for a, b in zip(u, y)])
    smooth = kinks > 1e-3
    np.testing.assert_allclose(g[smooth], fd[smooth], rtol=1e-6, atol=1e-5)


def test_the_references_softmax_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    reference = ReferenceDSG("gaussian", 0, 1.0, 0, 1, 1, 1, "softmax", lambda t: 1.0, 0.0, 4)
    h = 1e-6
    for _ in range(20):
        f, y = rng.normal(size=4), rng.integers(0, 4)
        loss = lambda f: np.log(np.exp(f).sum()) - f[y]
        fd = [(loss(f + h * e) - loss(f - h * e)) / (2 * h) for e in np.eye(4)]
        np.testing.assert_allclose(reference.gradient(f, y), fd, atol=1e-6)


@pytest.mark.parametrize("loss", ["squared", "hinge"])
def test_many_features_per_block_approach_norma(loss):
    """DSG is NORMA with the kernel replaced by random features: with large blocks, the same
    batches give nearly the same function."""
    y = Y[:64] if loss == "squared" else np.where(Y[:64] > 0, 1.0, -1.0)
    norma = NORMA(Gaussian(0.8), loss, batch_size=16, nu=0.1, eta=1.0,
                  standardize_target=False).partial_fit(X[:64], y)
    cls = DoublySGDRegressor if loss == "squared" else DoublySGDClassifier
    raw = {"standardize_target": False} if loss == "squared" else {}     # NORMA's raw units
    dsg = cls(loss, kernel=Gaussian(0.8), batch_size=16, block_size=8192, nu=0.1, eta=1.0,
              n_features_max=None, random_state=0, **raw).fit(X[:64], y, shuffle=False)
    exact = norma.predict(X)
    error = np.abs(dsg._scores(X) - exact).max()
    assert error < 0.1 * np.abs(exact).max()


@pytest.mark.parametrize("eta, members", [(1.0, None), ("ensemble", None),
                                          ("ensemble", (0.3, 1.9))])
def test_norma_is_its_equations_with_the_oldest_rows_dropped(eta, members):
    """NORMA in NumPy: batches of 4, f = sum a_j k(x_j, .) over the last `budget` rows, every
    coefficient shrunk by 1 - gamma nu per iteration; the budget drops the oldest rows.  The step
    ensemble: one coefficient per step of NORMA_ENSEMBLE_STEPS (or of `ensemble_steps`) on the
    same rows (new ones with the step gamma s, the shrink that of gamma), the members mixed by
    ML-Poly on the Huber loss's slope at the mixture."""
    kernel, nu, B, budget, epsilon = Laplacian(0.9), 0.05, 4, 10, 0.3
    model = NORMA(kernel, "huber", budget=budget, batch_size=B, nu=nu, epsilon=epsilon, eta=eta,
                  standardize_target=False,          # the equations' raw units
                  **({} if members is None else {"ensemble_steps": members}))
    online = model.predict_learn(X[:60], Y[:60])
    steps = np.array([1.0] if eta == 1.0 else members or NORMA_ENSEMBLE_STEPS)
    mixer = NumpyMLPoly(len(steps), clipped=eta == "ensemble")
    support, coef, expected, batch = [], [], [], []
    for i, (x, y) in enumerate(zip(X[:60], Y[:60])):
        f = sum(a * kernel(s, x) for s, a in zip(support, coef)) + np.zeros(len(steps))
        expected.append(mixer.mix(f))
        r = f - y
        mixer.learn(f, lambda mix: np.clip(mix - y, -epsilon, epsilon), y)
        batch.append((x, np.clip(r, -epsilon, epsilon)))
        if (i + 1) % B == 0:
            gamma = 1.0 / (1.0 + 1e-4 * ((i + 1) // B))
            coef = [(1 - gamma * nu) * a for a in coef] + [-gamma * steps / B * g
                                                           for _, g in batch]
            support += [x for x, _ in batch]
            support, coef, batch = support[-budget:], coef[-budget:], []
    np.testing.assert_allclose(online, expected, rtol=1e-12, atol=1e-14)
    assert model.n_support_ == budget
    f = [mixer.mix(sum(a * kernel(s, x) for s, a in zip(support, coef)) + np.zeros(len(steps)))
         for x in X]
    np.testing.assert_allclose(model.predict(X), f, rtol=1e-12, atol=1e-14)
    buffer = io.BytesIO()
    model.save(buffer)
    buffer.seek(0)
    loaded = fastomkl.load(buffer)
    assert np.array_equal(loaded.predict_learn(X[60:], Y[60:]), model.predict_learn(X[60:], Y[60:]))


def test_norma_files_from_before_the_fourth_member_keep_three(tmp_path):
    """A NORMA file written before ``ensemble_steps`` existed learnt with the members 0.25, 0.5
    and 1: it loads with them and continues bit-identically, where a model built today has the
    member at 1.5 too."""
    three = NORMA(budget=20, batch_size=2, ensemble_steps=(0.25, 0.5, 1.0)).fit(X[:40], Y[:40])
    three.save(tmp_path / "new.npz")
    as_older_file(tmp_path / "new.npz", tmp_path / "old.npz", params=["ensemble_steps"])
    loaded = fastomkl.load(tmp_path / "old.npz")
    assert tuple(loaded.ensemble_steps) == (0.25, 0.5, 1.0)
    assert np.array_equal(loaded.predict_learn(X[40:], Y[40:]), three.predict_learn(X[40:], Y[40:]))
    assert NORMA_ENSEMBLE_STEPS == (0.25, 0.5, 1.0, 1.5)
    assert NORMA().fit(X[:8], Y[:8])._engine.experts.n_experts == 4


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
    gp = DoublySGDGP(noise=s2, test_points=star, kernel=kernel, n_epochs=150, batch_size=30,
                     block_size=256, eta_decay=0.0, random_state=0).fit(x, y)
    m, std = gp.predict(star, return_std=True)
    np.testing.assert_allclose(m, mean, atol=0.03)
    np.testing.assert_allclose(std ** 2, variance, atol=0.01)      # 0.04 within the data, 1 far


def test_softmax_with_two_classes_is_binary_logistic():
    """Softmax over two classes with scores (f0, f1) is logistic regression on f1 - f0, whose
    gradient moves both scores: with half the step (and nu = 0), f1 - f0 follows the binary
    model exactly."""
    labels = Y > 0
    common = dict(kernel=Gaussian(0.8), batch_size=8, block_size=16, nu=0.0,
                  eta_schedule="constant", random_state=1)
    binary = DoublySGDClassifier("logistic", eta=1.0, **common).fit(X, labels)
    softmax = DoublySGDSoftmaxClassifier(eta=0.5, **common).fit(X, labels)
    # two classes: the one column f_1 - f_0, which must be the binary model's score
    np.testing.assert_allclose(softmax.decision_function(X), binary.decision_function(X),
                               rtol=1e-9, atol=1e-12)
    three = np.digitize(X[:, 0], [-0.3, 0.3])
    model = DoublySGDSoftmaxClassifier(kernel=Gaussian(0.8), random_state=0)
    for _ in range(5):
        model.partial_fit(X, three)
    assert model.score(X, three) > 0.8            # chance is 1/3
    np.testing.assert_allclose(model.predict_proba(X).sum(1), 1.0)


def test_preconditioned_first_block_is_the_least_squares_fit():
    """With a step of 1 from f = 0, the square loss's preconditioned block solves
    min ||Z alpha - y||^2 (up to the 1e-7 ridge): the authors' Newton-like step."""
    model = DoublySGDRegressor(kernel=Gaussian(0.8), batch_size=100, block_size=20,
                               precondition=True, eta=1.0, eta_schedule="constant", nu=0.0,
                               random_state=3, standardize_target=False)
    model.partial_fit(X[:100], Y[:100])
    W, b = core.generate_block("gaussian", 0, 0.8, 3, 0, 0, 3, 20)
    Z = z(X[:100], W, b)
    ridge = np.linalg.solve(Z.T @ Z / 100 + 1e-7 * np.eye(20), Z.T @ Y[:100] / 100)
    np.testing.assert_allclose(coefficients(model)[:20, 0], ridge, rtol=1e-8, atol=1e-10)
    fit = np.linalg.lstsq(Z, Y[:100], rcond=None)[0]
    np.testing.assert_allclose(Z @ coefficients(model)[:20, 0], Z @ fit, atol=1e-3)


def test_models_pickled_by_workers_merge_exactly():
    """Data-parallel training ships models between processes: a pickled model predicts the same
    bits and merges like the original."""
    import pickle
    models = [DoublySGDClassifier(kernel=Gaussian(0.8), batch_size=10, block_size=8, stream=w,
                                  random_state=3).fit(X[w::2], Y[w::2] > 0) for w in range(2)]
    shipped = [pickle.loads(pickle.dumps(m)) for m in models]
    for m, s in zip(models, shipped):
        assert np.array_equal(s.decision_function(X), m.decision_function(X))
    assert np.array_equal(merge(shipped).decision_function(X),
                          merge(models).decision_function(X))
    assert merge(shipped).classes_.tolist() == [False, True]


def test_a_full_model_only_shrinks_when_told_to_stop():
    """n_features_max reached with on_max_features="stop": no block is added, and an iteration
    multiplies f by 1 - gamma nu; with "revisit" the held blocks keep learning."""
    common = dict(kernel=Gaussian(0.8), batch_size=10, block_size=8, n_features_max=24,
                  eta_schedule="constant", eta=0.5, nu=0.2, random_state=0,
                  standardize_target=False)          # f itself is predicted
    model = DoublySGDRegressor(on_max_features="stop", **common)
    model.partial_fit(X[:50], Y[:50])
    assert model.n_features_ == 24
    before = model.predict(X)
    model.partial_fit(X[50:60], Y[50:60])
    assert model.n_features_ == 24 and model.n_samples_seen_ == 60
    np.testing.assert_allclose(model.predict(X), 0.9 * before, rtol=1e-12)
    revisit = DoublySGDRegressor(**common).fit(X, Y)
    assert revisit.n_features_ == 24
    assert np.mean((revisit.predict(X) - Y) ** 2) < np.mean((model.fit(X, Y).predict(X) - Y) ** 2)


@pytest.mark.parametrize("cls, target", [(DoublySGDRegressor, Y), (DoublySGDClassifier, Y > 0)])
def test_a_float32_model_learns_what_the_float64_model_does(cls, target):
    """Same seeds, same blocks: only the features' rounding differs, and the decisions follow."""
    common = dict(kernel=Gaussian(0.8), batch_size=8, block_size=16, random_state=0)
    wide = cls(**common).fit(X, target)
    single = cls(dtype="float32", **common).fit(X, target)
    decide = "decision_function" if hasattr(wide, "decision_function") else "predict"
    gap = np.abs(getattr(single, decide)(X) - getattr(wide, decide)(X))
    assert gap.max() <= 1e-5 * np.abs(getattr(wide, decide)(X)).max()
    buffer = io.BytesIO()
    single.save(buffer)
    buffer.seek(0)
    loaded = fastomkl.load(buffer)
    assert loaded.dtype == "float32"
    np.testing.assert_array_equal(getattr(loaded, decide)(X), getattr(single, decide)(X))


def test_single_precision_features_are_float32_numpy():
    W, b = core.generate_block("gaussian", 0, 0.8, 4, 0, 2, 3, 40)
    expected = np.sqrt(2.0 / 40) * np.cos(X.astype(np.float32) @ W.astype(np.float32)
                                         + b.astype(np.float32)).astype(np.float64)
    np.testing.assert_allclose(core.features(X, W, b, True), expected, atol=2e-7)
    np.testing.assert_allclose(core.features(X, W, b, True), z(X, W, b), atol=2e-6)


def test_sparse_rows_are_projected_exactly_and_alone():
    """Rows with few nonzeros take the sparse sum, the others dgemm: the features match NumPy, and
    a row's features are the same bits whatever rows surround it."""
    rng = np.random.default_rng(8)
    d = 40
    rows = rng.normal(size=(30, d))
    rows[::2, 8:] = 0.0
    rows[5] = 0.0
    W, b = core.generate_block("gaussian", 0, 1.3, 6, 0, 1, d, 24)
    Z = core.features(rows, W, b)
    np.testing.assert_allclose(Z, z(rows, W, b), rtol=0, atol=1e-12)
    for i in (0, 1, 5, 29):
        np.testing.assert_array_equal(core.features(rows[i:i + 1], W, b)[0], Z[i])
