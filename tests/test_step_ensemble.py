"""eta="ensemble": a grid of constant steps per kernel under one Hedge layer, against a plain NumPy
implementation of the same equations on the model's own frequencies, and the properties that make
it a step rule for streams that change."""
import io

import numpy as np
import pytest

import fastomkl as fo
from fastomkl import Gaussian, Laplacian, Raker, RakerClassifier
from fastomkl._core.combiners.hedge import DiscountHedge, Hedge
from fastomkl._core.combiners.meta import MLPoly
from fastomkl._core.engine import Engine
from fastomkl._core.experts.ogd import OGDStepEnsemble
from fastomkl._core.features.rff import RFFBank
from fastomkl._core.losses import LOSSES
from fastomkl._core.steps import ENSEMBLE_STEPS, FORMER_ENSEMBLE_STEPS
from helpers import loaded_as_older_file
from reference import (NumpyRaker, PageHinkley, StandardisedTargets, change_statistic,
                       ensemble_step, rff)

KERNELS = [Gaussian(0.3), Gaussian(1.0), Laplacian(0.5), Laplacian(2.0)]


class NumpyStepEnsemble:
    """Per kernel k and step eta_i a linear model theta_{k,i} on z_k(x), each taking the truncated
    proximal step of ``reference.ensemble_step`` every round; exponential weights over all (k, i)
    at `rate` on the losses loss + lam ||theta||^2 (theta before the step), with an optional fixed
    share; regression targets winsorised and standardised online
    (``reference.StandardisedTargets``, this one included when learning).  ``change``:
    (statistic, delta, threshold, share) of a Page-Hinkley test on the round's prediction and
    target in the units learnt in, each of whose alarms ends the round with that share."""

    def __init__(self, frequencies, steps, lam, loss, rate, standardize, share=0.0, change=None):
        self.frequencies = np.asarray(frequencies, dtype=np.float64)
        self.steps = np.asarray(steps)
        n, m = self.frequencies.shape[0], len(steps)
        self.theta = np.zeros((n, m, 2 * self.frequencies.shape[1]))
        self.log_w = np.zeros((n, m))
        self.lam, self.loss, self.rate = lam, loss, rate
        self.targets = StandardisedTargets(standardize)
        self.share = share
        self.change = change
        self.test = None if change is None else PageHinkley(*change[1:3])
        self.t = 0

    def weights(self):
        w = np.exp(self.log_w - self.log_w.max())
        return w / w.sum()

    def predict_one(self, x):
        f = np.einsum("kij,kj->ki", self.theta, rff(self.frequencies, x))
        center, scale = self.targets.units()
        return center + scale * float((self.weights() * f).sum())

    def predict_learn_one(self, x, y):
        z = rff(self.frequencies, x)                               # (n, 2D)
        f = np.einsum("kij,kj->ki", self.theta, z)                 # (n, m)
        center, scale = self.targets.units()
        y_hat = center + scale * float((self.weights() * f).sum())
        learnt = self.targets.learn(y)
        self.theta, losses = ensemble_step(self.theta, z, f, learnt, self.steps, self.lam,
                                           self.loss)
        self.log_w -= self.rate * losses
        if self.share > 0:          # fixed share: (1 - share) w_bar + share / N
            self.log_w = np.log((1 - self.share) * self.weights() + self.share / self.log_w.size)
        self.t += 1
        if self.test is not None:
            center, scale = self.targets.units()       # this target's units: y's included
            if self.test.add(change_statistic(self.change[0], (y_hat - center) / scale,
                                              learnt), self.t):
                share = self.change[3]
                self.log_w = np.log((1 - share) * self.weights() + share / self.log_w.size)
        return y_hat


def noisy_stream(n=300, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_regressor_matches_numpy_in_raw_units(loss):
    X, y = noisy_stream()
    y = 150.0 + 60.0 * y                       # far from [0, 1]: the targets are standardised
    model = Raker(KERNELS, n_components=12, eta="ensemble", lam=0.01, loss=loss, random_state=2)
    got = model.predict_learn(X, y)
    ref = NumpyStepEnsemble(model.features_.frequencies_, ENSEMBLE_STEPS, 0.01, loss, 2.0, True)
    want = np.array([ref.predict_learn_one(x, t) for x, t in zip(X, y)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(model.weights_, ref.weights().sum(axis=1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(model._engine.experts.theta),
                               ref.theta.reshape(-1, ref.theta.shape[2]), rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.predict(X[:30]), [ref.predict_one(x) for x in X[:30]],
                               rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_classifier_matches_numpy(loss):
    X, y = noisy_stream(seed=8)
    labels = np.where(y > 0, 1.0, -1.0)
    model = RakerClassifier(KERNELS, n_components=10, eta="ensemble", lam=1e-3, loss=loss,
                            random_state=4)
    model.partial_fit(X, labels)
    ref = NumpyStepEnsemble(model.features_.frequencies_, ENSEMBLE_STEPS, 1e-3, loss, 2.0, False)
    for x, t in zip(X, labels):
        ref.predict_learn_one(x, t)
    np.testing.assert_allclose(model.decision_function(X), [ref.predict_one(x) for x in X],
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("steps", [[0.5], [2.0 ** -3, 0.25, 4.0]])
def test_engine_with_any_grid_matches_numpy(steps):
    """The expert bank and the engine's sharing of one kernel's features among its members, for a
    grid of one member and for a grid with a step larger than the default's."""
    X, y = noisy_stream(120, seed=11)
    freqs = np.random.default_rng(3).standard_normal((3, 8, 3))
    experts = OGDStepEnsemble(3, steps, 16, LOSSES["squared"], 0.05)
    assert experts.n_experts == 3 * len(steps) and experts.per_kernel == len(steps)
    eng = Engine(RFFBank(freqs), experts, Hedge(experts.n_experts, 0.5, 0), np.random.PCG64(0))
    ref = NumpyStepEnsemble(freqs, steps, 0.05, "squared", 0.5, False)
    got = [eng.predict_learn_one(x, t) for x, t in zip(X, y)]
    want = [ref.predict_learn_one(x, t) for x, t in zip(X, y)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


def test_members_that_disagree_with_the_features_are_refused():
    freqs = np.random.default_rng(3).standard_normal((3, 8, 3))
    experts = OGDStepEnsemble(3, [0.1, 1.0], 16, LOSSES["squared"], 0.0)
    with pytest.raises(ValueError, match="disagree"):
        Engine(RFFBank(freqs), experts, Hedge(3, 1.0, 0), np.random.PCG64(0))
    with pytest.raises(ValueError, match="steps"):
        OGDStepEnsemble(3, [0.1, -1.0], 16, LOSSES["squared"], 0.0)
    with pytest.raises(ValueError, match="schedules"):
        OGDStepEnsemble(3, [0.1, 1.0], 16, LOSSES["squared"], 0.0, schedules=[1])


def test_weight_moves_to_the_step_that_suits_the_data_now():
    """A piecewise-stationary stream: a fixed target, then a target that jumps every round's worth
    of drift.  A rule whose steps only shrink keeps its small late steps; the ensemble's weight
    moves back to its larger steps after the change, within a bounded number of rounds."""
    rng = np.random.default_rng(0)
    n = 3000
    X = rng.uniform(-1, 1, (n, 2)) / np.sqrt(2)
    y = np.where(np.arange(n) < n // 2, np.sin(3 * X[:, 0]), -2.0 * np.sin(3 * X[:, 0]))
    model = Raker([Gaussian(0.5)], n_components=30, eta="ensemble", random_state=0)
    err = (model.predict_learn(X, y) - y) ** 2
    base = Raker([Gaussian(0.5)], n_components=30, eta="adagrad", random_state=0)
    err_base = (base.predict_learn(X, y) - y) ** 2
    window = slice(n // 2 + 200, n // 2 + 500)
    assert err[window].mean() < 0.5 * err_base[window].mean()
    # and the ensemble has recovered: back within twice its pre-change error level
    assert err[window].mean() < 2.0 * err[n // 2 - 300:n // 2].mean() + 0.05


def test_ensemble_models_save_load_and_continue_bit_identically(tmp_path):
    X, y = noisy_stream(200, seed=2)
    model = Raker(KERNELS, n_components=8, eta="ensemble", random_state=0)
    model.partial_fit(X[:100], y[:100])
    path = tmp_path / "ensemble.fomkl"
    model.save(path)
    loaded = fo.load(path)
    np.testing.assert_array_equal(loaded.predict_learn(X[100:], y[100:]),
                                  model.predict_learn(X[100:], y[100:]))
    assert loaded.weights_.shape == (len(KERNELS),)


def test_the_default_is_the_ensemble_and_adagrad_is_auto(stream):
    X, y = stream
    default = Raker(KERNELS, n_components=10, random_state=1).predict_learn(X, y)
    ensemble = Raker(KERNELS, n_components=10, eta="ensemble", random_state=1).predict_learn(X, y)
    np.testing.assert_array_equal(default, ensemble)
    a = Raker(KERNELS, n_components=10, eta="auto", random_state=1).predict_learn(X, y)
    b = Raker(KERNELS, n_components=10, eta="adagrad", random_state=1).predict_learn(X, y)
    np.testing.assert_array_equal(a, b)


def test_a_rule_that_does_not_exist_is_refused_naming_eta(stream):
    """(Refusals leave a fitted model unchanged: tests/test_common.py checks every declared
    parameter, eta's rules included, that way.)"""
    X, y = stream
    with pytest.raises(ValueError, match="eta"):
        Raker(KERNELS, n_components=8, eta="ensembles", random_state=0).fit(X[:50], y[:50])


class NumpySharedRaker(NumpyRaker):
    """NumpyRaker whose exponential weights end each update with a fixed share."""

    def __init__(self, *args, share, **kwargs):
        super().__init__(*args, **kwargs)
        self.share = share

    def predict_learn_one(self, x, y):
        y_hat = super().predict_learn_one(x, y)
        self.log_w = np.log((1 - self.share) * self.weights() + self.share / self.log_w.size)
        return y_hat


@pytest.mark.parametrize("eta", [0.3, "auto"])
def test_fixed_share_matches_numpy(stream, eta):
    X, y = stream
    model = Raker(KERNELS, n_components=12, eta=eta, eta_schedule="constant", share=0.05,
                  random_state=6)
    got = model.predict_learn(X, y)
    ref = NumpySharedRaker(model.features_.frequencies_, eta=eta, eta_schedule="constant",
                           share=0.05)
    want = [ref.predict_learn_one(x, t) for x, t in zip(X, y)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(model.weights_, ref.weights(), rtol=0, atol=1e-12)
    assert model.weights_.min() >= 0.05 / len(KERNELS) * (1 - 1e-12)


def test_a_composed_hedge_with_a_fixed_share_matches_numpy(stream):
    """fastomkl.compose.Hedge(share=...) under OGD experts is Raker's fixed share."""
    from fastomkl.compose import OGD, Hedge, OnlineMKL, RandomFeatures
    X, y = stream
    model = OnlineMKL(RandomFeatures(KERNELS, 12), OGD(eta=0.3, eta_schedule="constant"),
                      Hedge(share=0.05), random_state=6)
    got = model.predict_learn(X, y)
    ref = NumpySharedRaker(model._engine.features.frequencies, eta=0.3, eta_schedule="constant",
                           share=0.05)
    want = [ref.predict_learn_one(x, t) for x, t in zip(X, y)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(model.weights_, ref.weights(), rtol=0, atol=1e-12)


def test_fixed_share_over_an_ensemble_matches_numpy():
    X, y = noisy_stream(200, seed=9)
    model = Raker(KERNELS, n_components=8, eta="ensemble", share=0.02, random_state=1)
    got = model.predict_learn(X, y)
    ref = NumpyStepEnsemble(model.features_.frequencies_, ENSEMBLE_STEPS, 1e-3, "squared", 2.0,
                            True, share=0.02)
    want = [ref.predict_learn_one(x, t) for x, t in zip(X, y)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


def test_fixed_share_moves_the_weight_to_the_kernel_that_became_best():
    """A piecewise-stationary stream whose best kernel switches: a fast oscillation (only the narrow
    kernel can follow it), then an offset line (the wide kernel's near-constant features carry
    it; the narrow kernel's frequencies cannot).  With a fixed share the weight is on the wide
    kernel within a bounded number of rounds of the switch; plain Hedge, having weighed it down
    for the whole first phase, takes longer (here: not within the second phase)."""
    rng = np.random.default_rng(1)
    n = 4000
    X = rng.uniform(-1, 1, (n, 1))
    y = np.where(np.arange(n) < n // 2, np.sin(12 * X[:, 0]), 1.0 + 0.5 * X[:, 0])
    kernels = [Gaussian(0.05), Gaussian(3.0)]

    def switch_round(share):
        model = Raker(kernels, n_components=40, eta=0.5, eta_schedule="constant",
                      share=share, random_state=0)
        model.partial_fit(X[:n // 2], y[:n // 2])
        assert model.weights_[0] > 0.9             # the narrow kernel leads the first phase
        for t in range(n // 2, n):
            model.learn_one(X[t], y[t])
            if model.weights_[1] > 0.5:
                return t - n // 2
        return n

    shared, plain = switch_round(0.01), switch_round(0.0)
    assert shared <= 100
    assert shared < plain


def turning(n=400, seed=3):
    """A stream whose target turns over half-way: sin(3 x_0), then 2 - 2 sin(3 x_0)."""
    X, _ = noisy_stream(n, seed)
    y = np.sin(3 * X[:, 0])
    return X, np.where(np.arange(n) < n // 2, y, 2.0 - 2.0 * y)


def test_change_test_shares_half_the_weight_as_numpy(sensitive_change_test):
    """Raker's default runs a Page-Hinkley test on its squared errors in standard units, and each
    alarm ends the round with a fixed share of 1/2."""
    X, y = turning()
    y = 40.0 + 10.0 * y                      # raw units: the statistic is in standard ones
    model = Raker(KERNELS, n_components=10, random_state=4)
    got = model.predict_learn(X, y)
    ref = NumpyStepEnsemble(model.features_.frequencies_, ENSEMBLE_STEPS, 1e-3, "squared", 2.0,
                            True, change=("squared", 0.005, 5.0, 0.5))
    want = [ref.predict_learn_one(x, t) for x, t in zip(X, y)]
    assert ref.test.alarms and model.n_changes_detected_ == len(ref.test.alarms)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(model.weights_, ref.weights().sum(axis=1), rtol=0, atol=1e-12)
    # without the test the same model is the former rule, number for number up to the alarm
    plain = Raker(KERNELS, n_components=10, random_state=4, detect_changes=False)
    first = ref.test.alarms[0]
    np.testing.assert_array_equal(plain.predict_learn(X, y)[:first], got[:first])


def test_classifier_change_test_watches_its_mistakes_as_numpy(sensitive_change_test):
    X, y = turning(seed=6)
    labels = np.where(y > np.median(y[:200]), 1.0, -1.0)
    labels[200:] = np.where(np.sin(3 * X[200:, 0]) > 0, -1.0, 1.0)
    model = RakerClassifier(KERNELS, n_components=10, random_state=5)
    model.partial_fit(X, labels)
    ref = NumpyStepEnsemble(model.features_.frequencies_, ENSEMBLE_STEPS, 1e-3, "logistic", 2.0,
                            False, change=("mistakes", 0.005, 5.0, 0.5))
    for x, t in zip(X, labels):
        ref.predict_learn_one(x, t)
    assert ref.test.alarms and model.n_changes_detected_ == len(ref.test.alarms)
    np.testing.assert_allclose(model.decision_function(X), [ref.predict_one(x) for x in X],
                               rtol=0, atol=1e-9)


def test_the_change_test_runs_under_the_adaptive_rules_only(stream):
    X, y = stream
    for eta in ("ensemble", "auto"):
        model = Raker(KERNELS, n_components=6, eta=eta, random_state=0).fit(X, y)
        combiner = model._engine.combiner
        assert combiner.change is not None and combiner.change.threshold == 50.0
    numeric = Raker(KERNELS, n_components=6, eta=0.1, random_state=0).fit(X, y)
    assert numeric._engine.combiner.change is None and numeric.n_changes_detected_ == 0
    for setting in (True, np.True_):
        refused = Raker(KERNELS, n_components=6, eta=0.1, detect_changes=setting,
                        random_state=0)
        with pytest.raises(ValueError, match="detect_changes"):
            refused.fit(X, y)
        assert refused.n_samples_seen_ == 0
    # NumPy's booleans are booleans: a test with np.True_, none with np.False_, and the file
    # of either loads
    for setting, has_test in ((np.True_, True), (np.False_, False)):
        model = Raker(KERNELS, n_components=6, detect_changes=setting, random_state=0).fit(X, y)
        assert (model._engine.combiner.change is not None) == has_test
        buffer = io.BytesIO()
        model.save(buffer)
        np.testing.assert_array_equal(fo.load(io.BytesIO(buffer.getvalue())).predict(X),
                                      model.predict(X))


def test_each_engine_holds_its_own_change_test(stream):
    """A snapshot's engine (built from the same configuration) does not share the model's test."""
    X, y = stream
    model = Raker(KERNELS, n_components=6, random_state=0).fit(X, y)
    engine = getattr(model._engine, "_inner", model._engine)
    twin = engine.twin_factory()                 # what the snapshots are built by
    assert twin.combiner.change is not None
    assert twin.combiner.change is not model._engine.combiner.change


def test_raker_files_without_the_change_test_learn_as_they_did(tmp_path):
    X, y = turning()
    older = Raker(KERNELS, n_components=8, detect_changes=False, random_state=1)
    older.partial_fit(X[:150], y[:150])
    loaded = loaded_as_older_file(older, tmp_path, ["detect_changes"], X[150:], y[150:])
    assert loaded.detect_changes is False


def test_a_file_of_the_former_four_step_grid_loads_and_learns_on_with_it(stream, tmp_path):
    """Files written when eta="ensemble" had four steps per kernel (2^-5 ... 2) keep that grid:
    their models are of it.  (Such a file is made here by building the former grid directly.)"""
    X, y = stream
    old = Raker(KERNELS, n_components=8, eta="ensemble", random_state=0)
    old._file_layout = {"steps": FORMER_ENSEMBLE_STEPS}
    old.partial_fit(X[:100], y[:100])
    assert old._engine.experts.per_kernel == 4
    old.save(tmp_path / "four.fokl")
    loaded = fo.load(tmp_path / "four.fokl")
    assert loaded._engine.experts.per_kernel == 4
    np.testing.assert_array_equal(loaded.predict_learn(X[100:], y[100:]),
                                  old.predict_learn(X[100:], y[100:]))
    assert loaded.fit(X[:50], y[:50])._engine.experts.per_kernel == len(ENSEMBLE_STEPS) == 3


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_rfomkr_ensemble_matches_numpy(loss):
    """RFOMKR's default: the same members under its discounted weights w <- w beta^L (no
    regulariser), which is exponential weights at the rate ln(1 / beta)."""
    X, y = noisy_stream(seed=13)
    y = 40.0 + 8.0 * y
    model = fo.RFOMKR(KERNELS, n_components=10, beta=0.7, loss=loss, random_state=6)
    got = model.predict_learn(X, y)
    ref = NumpyStepEnsemble(model.features_.frequencies_, ENSEMBLE_STEPS, 0.0, loss,
                            np.log(1 / 0.7), True)
    want = np.array([ref.predict_learn_one(x, t) for x, t in zip(X, y)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(model.weights_, ref.weights().sum(axis=1), rtol=0, atol=1e-12)


def test_rfomkr_change_test_shares_half_its_weight_as_numpy(sensitive_change_test, tmp_path):
    """RFOMKR's default runs the test too: each alarm ends the round with a fixed share of 1/2 of
    its normalised discounted weights; with the released code's raw weights it has none."""
    X, y = turning(seed=8)
    y = 40.0 + 10.0 * y
    model = fo.RFOMKR(KERNELS, n_components=10, beta=0.7, random_state=6)
    got = model.predict_learn(X, y)
    ref = NumpyStepEnsemble(model.features_.frequencies_, ENSEMBLE_STEPS, 0.0, "squared",
                            np.log(1 / 0.7), True, change=("squared", 0.005, 5.0, 0.5))
    want = np.array([ref.predict_learn_one(x, t) for x, t in zip(X, y)])
    assert ref.test.alarms and model.n_changes_detected_ == len(ref.test.alarms)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(model.weights_, ref.weights().sum(axis=1), rtol=0, atol=1e-12)
    raw = fo.RFOMKR(KERNELS, n_components=10, normalize=False, random_state=6).fit(X, y)
    assert raw._engine.combiner.change is None
    with pytest.raises(ValueError, match="detect_changes"):
        fo.RFOMKR(KERNELS, n_components=10, normalize=False, detect_changes=True).fit(X, y)
    older = fo.RFOMKR(KERNELS, n_components=10, detect_changes=False, random_state=6)
    older.partial_fit(X[:150], y[:150])
    loaded = loaded_as_older_file(older, tmp_path, ["detect_changes"], X[150:], y[150:])
    assert loaded.detect_changes is False


ONE_KERNEL_ENSEMBLES = [
    (lambda: fo.FOGD(kernel=Gaussian(0.8), n_components=16, random_state=0)),
    (lambda: fo.DoublySGDRegressor(kernel=Gaussian(0.8), batch_size=4, block_size=8,
                                   random_state=0)),
    (lambda: fo.NORMA(Gaussian(0.8), budget=30, batch_size=4)),
    (lambda: fo.OnlineKernelRegressor(Gaussian(0.8), budget=30)),
]


@pytest.mark.parametrize("make", ONE_KERNEL_ENSEMBLES,
                         ids=["FOGD", "DSG", "NORMA", "OnlineKernelRegressor"])
def test_a_file_whose_steps_were_mixed_by_hedge_keeps_hedge(make):
    """One kernel's step ensembles mix their members by ML-Poly; files written when they were
    mixed by Hedge at ENSEMBLE_RATE (OnlineKernelRegressor: OMKR's discounted Hedge; the
    combiner's state holds log_w) load with it: the same predictions and the same further rounds
    as the model that wrote them.  A refit takes ML-Poly."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (160, 3))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=160)
    assert isinstance(make().fit(X[:20], y[:20])._engine.combiner, MLPoly)
    written = make()
    written._file_layout = {"hedge": True,            # what the earlier release built
                            "constant_steps": True}   # (FOGD's: four members then)
    written.partial_fit(X[:80], y[:80])
    former = type(written._engine.combiner)
    assert former in (Hedge, DiscountHedge)       # OnlineKernelRegressor's was OMKR's
    buffer = io.BytesIO()
    written.save(buffer)
    buffer.seek(0)
    loaded = fo.load(buffer)
    assert type(loaded._engine.combiner) is former
    np.testing.assert_array_equal(loaded.predict(X), written.predict(X))
    np.testing.assert_array_equal(loaded.predict_learn(X[80:], y[80:]),
                                  written.predict_learn(X[80:], y[80:]))
    loaded.fit(X[:20], y[:20])
    assert isinstance(loaded._engine.combiner, MLPoly)


@pytest.mark.parametrize("make", ONE_KERNEL_ENSEMBLES,
                         ids=["FOGD", "DSG", "NORMA", "OnlineKernelRegressor"])
def test_a_regressors_members_are_mixed_clipped_to_the_targets_seen(make):
    """A regressor's step ensemble mixes its members clipped to the range of the targets seen, in
    the units they learn in (DSG's unclipped: its merge averages models exactly); a file written
    before the clipping (no observed range in its combiner's state) loads unclipped, with the
    same predictions and further rounds as the model that wrote it; a refit clips."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (160, 3))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=160)
    model = make().fit(X[:80], y[:80])
    clipped = not isinstance(model, fo.DoublySGDRegressor)
    assert model._engine.combiner.clip_range == ("observed" if clipped else None)
    if not clipped:
        return
    state = model._engine.combiner._state_arrays()
    assert state["observed"][0] < state["observed"][1] and state["n_observed"][0] == 80
    written = make()
    written._file_layout = {"unclipped": True}           # what the earlier release built
    written.partial_fit(X[:80], y[:80])
    assert written._engine.combiner.clip_range is None
    buffer = io.BytesIO()
    written.save(buffer)
    buffer.seek(0)
    loaded = fo.load(buffer)
    assert loaded._engine.combiner.clip_range is None
    np.testing.assert_array_equal(loaded.predict(X), written.predict(X))
    np.testing.assert_array_equal(loaded.predict_learn(X[80:], y[80:]),
                                  written.predict_learn(X[80:], y[80:]))
    loaded.fit(X[:20], y[:20])
    assert loaded._engine.combiner.clip_range == "observed"


@pytest.mark.parametrize("make", [lambda: fo.FOGDClassifier(kernel=Gaussian(0.8), n_components=16,
                                                            random_state=0),
                                  lambda: fo.DoublySGDClassifier(kernel=Gaussian(0.8),
                                                                 random_state=0)],
                         ids=["FOGDClassifier", "DoublySGDClassifier"])
def test_a_classifiers_members_are_scores_mixed_unclipped(make):
    X = np.random.default_rng(5).uniform(-1, 1, (60, 3))
    model = make().fit(X, np.where(X[:, 0] > 0, "a", "b"))
    assert model._engine.combiner.clip_range is None


def test_a_diverging_member_does_not_take_the_mixture_with_it():
    """NORMA with a member whose step overshoots (4 on inputs so close together that k(x, x') is
    about 1: each round multiplies its error by about -3): mixed unclipped, its predictions made
    every member's ML-Poly rate collapse and the mixture follow it (an MSE of 1e21 where the
    three sane members alone reach 0.24); clipped to the targets' range the mixture stays within
    5% of the three members' (2.3%) and every prediction within the targets' range."""
    rng = np.random.default_rng(0)
    X = 0.05 * rng.normal(size=(1000, 3))
    y = 10 * X[:, 0] + 0.1 * rng.normal(size=1000)
    sane = np.mean((fo.NORMA(ensemble_steps=(0.25, 0.5, 1.0)).predict_learn(X, y) - y) ** 2)
    model = fo.NORMA(ensemble_steps=(0.25, 0.5, 1.0, 4.0))
    pred = model.predict_learn(X, y)
    assert np.mean((pred - y) ** 2) < 1.05 * sane
    assert np.abs(pred).max() <= np.abs(y).max()
    unclipped = fo.NORMA(ensemble_steps=(0.25, 0.5, 1.0, 4.0))
    unclipped._file_layout = {"unclipped": True}
    assert np.mean((unclipped.predict_learn(X, y) - y) ** 2) > 1e6 * sane
