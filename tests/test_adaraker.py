"""AdaRaker against a plain NumPy implementation of its equations on the model's own frequencies,
its reduction to one Raker instance, and what it is for: a stream that changes."""
import numpy as np
import pytest

from fastomkl import AdaRaker, AdaRakerClassifier, Gaussian, Laplacian, Raker, load
from fastomkl._core.combiners.hedge import Hedge
from fastomkl._core.combiners.nested import NestedHedge
from fastomkl._core.engine import Engine
from fastomkl._core.experts.ogd import OGDRestarts, OGDStepEnsemble
from fastomkl._core.features.rff import RFFBank
from fastomkl._core.losses import LOSSES
from fastomkl.adaraker import interval_levels
from reference import StandardisedTargets, ensemble_step, loss_value, rff

KERNELS = [Gaussian(0.3), Gaussian(1.0), Laplacian(0.5), Laplacian(2.0)]


def softmax(v, axis=0):
    w = np.exp(v - v.max(axis=axis, keepdims=True))
    return w / w.sum(axis=axis, keepdims=True)


class NumpyAdaRaker:
    """Instance i (of m) keeps, per kernel k, a linear model theta[k, i] on z_k(x) and weights
    w[k, i] over its kernels; its prediction is g_i = sum_k w_bar[k, i] theta[k, i] . z_k, the
    model's sum_i h_bar[i] g_i.  Learning round t: every theta[k, i] takes the truncated proximal
    step of ``reference.ensemble_step`` with the step steps[i]; log w[k, i] -= rates[i] (loss +
    lam ||theta||^2, theta before the step); log h[i] -= meta_rate loss(g_i, y), then
    h_bar <- (1 - share) h_bar + share / m; then every instance with t % periods[i] == 0
    (periods[i] > 0) restarts: theta[:, i] = 0, w[:, i] uniform.  Regression targets winsorised
    and standardised online (``reference.StandardisedTargets``)."""

    def __init__(self, frequencies, steps, rates, periods, meta_rate, lam, loss, standardize,
                 share=0.0):
        self.frequencies = np.asarray(frequencies, dtype=np.float64)
        self.steps, self.rates, self.periods = map(np.asarray, (steps, rates, periods))
        n, m = self.frequencies.shape[0], len(steps)
        self.theta = np.zeros((n, m, 2 * self.frequencies.shape[1]))
        self.log_w, self.log_h = np.zeros((n, m)), np.zeros(m)
        self.meta_rate, self.lam, self.loss = meta_rate, lam, loss
        self.targets, self.t, self.share = StandardisedTargets(standardize), 0, share

    def _instances(self, z):
        f = np.einsum("kij,kj->ki", self.theta, z)                 # (n, m)
        return f, (softmax(self.log_w) * f).sum(axis=0)            # g: (m,)

    def predict_one(self, x):
        _, g = self._instances(rff(self.frequencies, x))
        center, scale = self.targets.units()
        return center + scale * float(softmax(self.log_h) @ g)

    def predict_learn_one(self, x, y):
        self.t += 1
        z = rff(self.frequencies, x)
        f, g = self._instances(z)
        center, scale = self.targets.units()
        y_hat = center + scale * float(softmax(self.log_h) @ g)
        y = self.targets.learn(y)
        self.theta, losses = ensemble_step(self.theta, z, f, y, self.steps, self.lam, self.loss)
        self.log_h -= self.meta_rate * loss_value(self.loss, g, y)
        if self.share > 0:          # fixed share: (1 - share) h_bar + share / m
            self.log_h = np.log((1 - self.share) * softmax(self.log_h) + self.share / len(g))
        self.log_w -= self.rates[None, :] * losses
        restart = (self.periods > 0) & (self.t % np.maximum(self.periods, 1) == 0)
        self.theta[:, restart] = 0.0
        self.log_w[:, restart] = 0.0
        return y_hat

    def kernel_weights(self):
        return softmax(self.log_w) @ softmax(self.log_h)


def drifting_stream(n=400, seed=5, change=200):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    X /= np.linalg.norm(X, axis=1).max()
    sign = np.where(np.arange(n) < change, 1.0, -1.0)
    return X, sign * np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(n)


def reference_for(model, loss, standardize):
    steps, rates, periods = interval_levels(model.n_levels, model.eta, model.eta_combiner)
    return NumpyAdaRaker(model.features_.frequencies_, steps, rates, periods, model.eta_meta,
                         model.lam, loss, standardize, model.share)


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_regressor_matches_numpy_in_raw_units(loss):
    X, y = drifting_stream()
    y = 150.0 + 60.0 * y                       # far from [0, 1]: the targets are standardised
    model = AdaRaker(KERNELS, n_components=10, n_levels=6, lam=0.01, loss=loss, random_state=2)
    got = model.predict_learn(X, y)
    ref = reference_for(model, loss, True)
    want = np.array([ref.predict_learn_one(x, t) for x, t in zip(X, y)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(model.weights_, ref.kernel_weights(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.instance_weights_, softmax(ref.log_h), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(model._engine.experts.theta),
                               ref.theta.reshape(-1, ref.theta.shape[2]), rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.predict(X[:30]), [ref.predict_one(x) for x in X[:30]],
                               rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_classifier_matches_numpy(loss):
    X, y = drifting_stream(seed=8)
    labels = np.where(y > 0, 1.0, -1.0)
    model = AdaRakerClassifier(KERNELS, n_components=8, n_levels=5, eta=1.0, eta_combiner=0.5,
                               eta_meta=1.0, share=0.0, loss=loss, random_state=4)
    model.partial_fit(X, labels)
    ref = reference_for(model, loss, False)
    for x, t in zip(X, labels):
        ref.predict_learn_one(x, t)
    np.testing.assert_allclose(model.decision_function(X), [ref.predict_one(x) for x in X],
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("share", [0.0, 0.01])
def test_regressor_matches_numpy_with_and_without_share(share):
    X, y = drifting_stream(250, seed=9)
    model = AdaRaker(KERNELS, n_components=6, n_levels=4, eta_meta=3.0, share=share,
                     random_state=5)
    got = model.predict_learn(X, y)
    ref = reference_for(model, "squared", True)
    np.testing.assert_allclose(got, [ref.predict_learn_one(x, t) for x, t in zip(X, y)],
                               rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(model.instance_weights_, softmax(ref.log_h), rtol=0, atol=1e-12)


def test_one_level_is_one_raker_instance():
    """n_levels = 1: a single instance that never restarts, the step ensemble of one step under
    plain Hedge at the same rate (bit for bit: the same equations through other parts)."""
    X, y = drifting_stream(200, seed=3)
    freqs = np.random.default_rng(3).standard_normal((3, 8, 3))
    nested = Engine(RFFBank(freqs),
                    OGDRestarts(3, [0.7], [0], 16, LOSSES["squared"], 0.05),
                    NestedHedge(3, [0.4], [0], 5.0, LOSSES["squared"]), np.random.PCG64(0))
    flat = Engine(RFFBank(freqs), OGDStepEnsemble(3, [0.7], 16, LOSSES["squared"], 0.05),
                  Hedge(3, 0.4, 0), np.random.PCG64(0))
    got = [nested.predict_learn_one(x, t) for x, t in zip(X, y)]
    want = [flat.predict_learn_one(x, t) for x, t in zip(X, y)]
    assert got == want


def test_an_instance_restarts_from_zero_after_its_interval():
    freqs = np.random.default_rng(1).standard_normal((2, 4, 3))
    experts = OGDRestarts(2, [1.0, 0.5, 0.25], [1, 4, 0], 8, LOSSES["squared"], 0.0)
    engine = Engine(RFFBank(freqs), experts, NestedHedge(2, [1.0, 0.5, 0.25], [1, 4, 0], 1.0,
                                                         LOSSES["squared"]), np.random.PCG64(0))
    X, y = drifting_stream(8, seed=2)
    theta = lambda: np.asarray(experts.theta).reshape(2, 3, -1)       # noqa: E731
    for t, (x, target) in enumerate(zip(X, y), start=1):
        engine.predict_learn_one(x, target)
        assert not theta()[:, 0].any()                     # an interval of one round
        assert theta()[:, 1].any() == (t % 4 != 0)         # zero exactly after rounds 4 and 8
        assert theta()[:, 2].any()                         # never restarts
        weights = np.asarray(engine.combiner.w_bar).reshape(2, 3)
        np.testing.assert_array_equal(weights[:, 0], 0.5)
        # uniform again after rounds 4 and 8; after an interval's first round (its experts
        # predicted 0 alike, so lost alike) still uniform; apart after its second and third
        assert (weights[:, 1] == 0.5).all() == (t % 4 in (0, 1))


def test_interval_levels_are_the_geometric_cover():
    steps, rates, periods = interval_levels(5, 2.0)
    np.testing.assert_allclose(steps, 2.0 / np.sqrt([1, 2, 4, 8, 16]), rtol=1e-15)
    np.testing.assert_array_equal(rates, steps)
    assert periods.tolist() == [1, 2, 4, 8, 0]
    np.testing.assert_allclose(interval_levels(3, 1.0, 0.5)[1], 0.5 / np.sqrt([1, 2, 4]))


def test_parts_refuse_inconsistent_levels():
    with pytest.raises(ValueError, match="periods"):
        OGDRestarts(2, [1.0, 0.5], [1], 8, LOSSES["squared"], 0.0)
    with pytest.raises(ValueError, match="one value per instance"):
        NestedHedge(2, [1.0, 0.5], [1], 1.0, LOSSES["squared"])
    with pytest.raises(ValueError, match="meta_rate"):
        NestedHedge(2, [1.0], [0], float("nan"), LOSSES["squared"])


def test_tracks_a_change_that_adagrad_does_not():
    """A target that flips sign at round 3000: over the 1000 rounds after the change AdaRaker's
    error is well below that of Raker's AdaGrad-norm rule (whose steps have shrunk).  Without
    the fixed share the second layer stays on the never-restarting instance, whose record of 3000
    rounds no other level can catch up with, and AdaRaker does worse than Raker."""
    X, y = drifting_stream(4000, seed=1, change=3000)
    kernels = [Gaussian(0.5), Gaussian(1.0)]
    after = slice(3000, 4000)

    def error_after_change(model):
        return np.mean((model.predict_learn(X, y) - y)[after] ** 2)

    raker = error_after_change(Raker(kernels, n_components=20, eta="adagrad", random_state=0))
    assert error_after_change(AdaRaker(kernels, n_components=20, random_state=0)) < 0.7 * raker
    plain = AdaRaker(kernels, n_components=20, share=0.0, random_state=0)
    assert error_after_change(plain) > raker
    assert plain.instance_weights_[-1] > 0.99


def test_save_load_continues_bit_identically(tmp_path):
    X, y = drifting_stream(300, seed=4)
    model = AdaRaker(KERNELS, n_components=6, n_levels=4, random_state=1).partial_fit(X[:150],
                                                                                     y[:150])
    model.save(tmp_path / "ada.fokl")
    copy = load(tmp_path / "ada.fokl")
    np.testing.assert_array_equal(copy.predict_learn(X[150:], y[150:]),
                                  model.predict_learn(X[150:], y[150:]))
