"""The public bandit models: API, defaults, paper settings, horizon, persistence, bad input."""
import numpy as np
import pytest
from sklearn.base import clone

import fastomkl
from fastomkl import (IOKS, OKS, RFIOKS, RFOKS, IOKSClassifier, LKMBooks, LKMBooksClassifier,
                      OKSClassifier, OKSPlusPlus, OKSPlusPlusClassifier, RFIOKSClassifier,
                      RFOKSClassifier, RFOKSPlusPlus, RFOKSPlusPlusClassifier)
from helpers import as_older_file, state_bytes

import bandit_reference as ref

REGRESSORS = [OKS, OKSPlusPlus, IOKS, RFOKS, RFOKSPlusPlus, RFIOKS]
CLASSIFIERS = [OKSClassifier, OKSPlusPlusClassifier, IOKSClassifier, RFOKSClassifier,
               RFOKSPlusPlusClassifier, RFIOKSClassifier]
SMALL = {"n_components": 16}


def make(cls, **kw):
    extra = SMALL if cls.__name__.startswith("RF") else {}
    return cls(random_state=0, **extra, **kw)


@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS)
def test_online_api_determinism_and_round_trip(cls, stream, labelled_stream, tmp_path):
    X, y = labelled_stream if cls in CLASSIFIERS else stream
    a, b = make(cls), make(cls)
    pa = a.predict_learn(X[:200], y[:200])
    np.testing.assert_array_equal(pa, b.predict_learn(X[:200], y[:200]))
    assert state_bytes(a) == state_bytes(b)
    assert a.selection_counts_.sum() == 200 and a.weights_.sum() == pytest.approx(1.0)
    assert np.isfinite(a.step_sizes_).all() and a.q_.shape == a.weights_.shape
    path = tmp_path / "m.npz"
    a.save(path)
    loaded = fastomkl.load(path)
    assert state_bytes(loaded) == state_bytes(a)
    np.testing.assert_array_equal(loaded.predict_learn(X[200:], y[200:]),
                                  a.predict_learn(X[200:], y[200:]))
    assert state_bytes(loaded) == state_bytes(a)
    before = state_bytes(a)
    p1 = a.predict(X[:20])                       # prediction draws nothing, changes nothing
    np.testing.assert_array_equal(a.predict(X[:20]), p1)
    assert state_bytes(a) == before
    single = make(cls)
    got = [single.predict_learn_one(x, t) for x, t in zip(X[:30], y[:30])]
    np.testing.assert_array_equal(got, make(cls).predict_learn(X[:30], y[:30]))
    c = clone(a)
    assert c.get_params() == a.get_params() and c.n_samples_seen_ == 0


def test_prediction_uses_argmax_p_or_the_mixture(stream):
    X, y = stream
    m = make(RFOKSPlusPlus, standardize_target=False).fit(X, y)     # f in the units of y
    best = int(np.argmax(m.weights_))
    w = np.asarray(m._engine.experts.w)
    Z = m.features_.transform(X[:10])                     # (n, K, 2D)
    f = np.einsum("nkj,kj->nk", Z, w)
    np.testing.assert_allclose(m.predict(X[:10]), f[:, best], rtol=0, atol=1e-12)
    mix = make(RFOKSPlusPlus, predict_with="mixture", standardize_target=False).fit(X, y)
    f = np.einsum("nkj,kj->nk", mix.features_.transform(X[:10]), np.asarray(mix._engine.experts.w))
    np.testing.assert_allclose(mix.predict(X[:10]), f @ mix.weights_ / mix.weights_.sum(), rtol=0, atol=1e-12)


def test_shared_draw_scales_one_draw_per_sigma(stream):
    X, y = stream
    m = make(RFIOKS).fit(X[:5], y[:5])
    W = m.features_.frequencies_
    sigmas = np.array([k.sigma for k in m.kernels_])
    np.testing.assert_allclose(W * sigmas[:, None, None],
                               np.broadcast_to(W[0] * sigmas[0], W.shape))
    indep = make(RFIOKS, shared_draw=False).fit(X[:5], y[:5]).features_.frequencies_
    assert not np.allclose(indep[1] * sigmas[1], indep[0] * sigmas[0])


def test_model_matches_the_reference_with_the_paper_settings(stream):
    """RF-OKS++ with the paper's U = 1 and RF-IOKS with T, U, ell_max (and its raw units): the
    same numbers as the NumPy reference fed the model's own frequencies and round stream."""
    X, y = stream
    n = X.shape[0]
    raw = {"standardize_target": False}
    for model, experts, sampler in [
        (make(RFOKSPlusPlus, U=1.0, **raw), lambda W, K: ref.RFExperts(W, ref.Steps(K, 0, "okspp", U=1.0,
                                                                              gc0=4.0), True),
         lambda K: ref.OKSPlusPlus(K, 4.0, 1.0)),
        (make(RFIOKS, T=n, U=1.0, ell_max=1.0, loss="absolute", **raw),
         lambda W, K: ref.RFExperts(W, ref.Steps(K, 1, "adagrad_u", U=1.0), True),
         lambda K: ref.IOKS(K, T=n)),
        (make(RFOKS, T=n, step=25.0, ell_max=1.0, **raw),
         lambda W, K: ref.RFExperts(W, ref.Steps(K, 0, "fixed", U=0.0,
                                                 scale=25 * np.sqrt((K / n) ** (1 / 3) / (K * n))),
                                    False),
         lambda K: ref.OKS(K, T=n, ell_max=1.0)),
    ]:
        got = model.predict_learn(X, y)
        W = model.features_.frequencies_
        r_exp, r_samp = experts(W, W.shape[0]), sampler(W.shape[0])
        preds, _ = ref.run(r_exp, r_samp, X, y, _round_stream(clone(model), X.shape[1]))
        np.testing.assert_allclose(got, preds, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(model.weights_, r_samp.p, rtol=0, atol=1e-9)


def _round_stream(fresh, n_features):
    """The per-round bit generator a fresh copy of a model starts with."""
    fresh._engine_for(n_features)
    bit_generator = np.random.PCG64()
    bit_generator.state = fresh._engine.bit_generator.state
    return bit_generator


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_lkmbooks_matches_the_reference(stream, loss):
    X, y = stream
    model = LKMBooks(B=40, loss=loss, nu="auto", random_state=4, standardize_target=False)
    got = model.predict_learn(X, y)
    gamma = 1.0 / (2.0 * np.array([k.sigma for k in model.kernels_]) ** 2)
    want, p, n_support = ref.lkmbooks_stream(X, y, gamma, 0 if loss == "squared" else 1, 40,
                                             0.25 if loss == "squared" else 0.2,
                                             _round_stream(clone(model), X.shape[1]))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.weights_, p, rtol=0, atol=1e-12)
    assert model.support_size_ == n_support == 40          # the budget is reached and held


def test_lkmbooks_api(labelled_stream, tmp_path):
    X, y = labelled_stream
    m = LKMBooksClassifier(B=30, T=400, random_state=0).partial_fit(X[:200], y[:200])
    path = tmp_path / "lkm.npz"
    m.save(path)
    loaded = fastomkl.load(path)
    np.testing.assert_array_equal(loaded.predict_learn(X[200:], y[200:]),
                                  m.predict_learn(X[200:], y[200:]))
    assert state_bytes(loaded) == state_bytes(m)
    with pytest.raises(ValueError, match="outlive"):
        m.partial_fit(X[:150], y[:150])
    state = m._engine.get_state()
    state["experts.rows"] = state["experts.rows"].copy()
    state["experts.rows"][0] = 31                       # a member beyond B = 30
    with pytest.raises(ValueError, match="rows"):
        m._engine.set_state(state)
    with pytest.raises(ValueError, match="loss"):
        LKMBooksClassifier(loss="hinge").fit(X, y)


@pytest.mark.parametrize("cls", [OKS, OKSClassifier, RFOKS, RFOKSClassifier])
def test_auto_step_scale_is_one_for_regressors_and_four_for_classifiers(cls, stream,
                                                                        labelled_stream):
    X, y = labelled_stream if cls in CLASSIFIERS else stream
    scale = 4.0 if cls in CLASSIFIERS else 1.0
    default = make(cls)
    p = default.predict_learn(X, y)
    np.testing.assert_array_equal(p, make(cls, adagrad_scale=scale).predict_learn(X, y))
    assert default._engine.experts.scale == scale
    other = make(cls, adagrad_scale=2.5)
    assert not np.array_equal(p, other.predict_learn(X, y))
    # lambda_i = a / sqrt(sum g~^2): the same sums give steps in the ratio of the scales
    sums = np.asarray(default._engine.experts.sums)
    np.testing.assert_allclose(default.step_sizes_[sums > 0], scale / np.sqrt(sums[sums > 0]))
    with pytest.raises(ValueError, match="adagrad_scale"):
        make(cls, adagrad_scale=0.0).fit(X, y)


@pytest.mark.parametrize("cls", [OKSClassifier, RFOKSClassifier])
def test_files_without_the_step_scale_load_with_the_rule_they_learnt_with(cls, labelled_stream,
                                                                         tmp_path):
    X, y = labelled_stream
    older = make(cls, adagrad_scale=1.0).partial_fit(X[:150], y[:150])
    older.save(tmp_path / "new.npz")
    as_older_file(tmp_path / "new.npz", tmp_path / "old.npz", params=["adagrad_scale"])
    loaded = fastomkl.load(tmp_path / "old.npz")
    assert loaded.adagrad_scale == 1.0
    np.testing.assert_array_equal(loaded.predict_learn(X[150:], y[150:]),
                                  older.predict_learn(X[150:], y[150:]))


def test_horizon_is_enforced_without_changing_the_model(stream):
    X, y = stream
    m = make(IOKS, T=50).partial_fit(X[:40], y[:40])
    before = state_bytes(m)
    with pytest.raises(ValueError, match="horizon T=50"):
        m.partial_fit(X[40:60], y[40:60])
    assert state_bytes(m) == before
    for x, t in zip(X[40:50], y[40:50]):
        m.learn_one(x, t)
    with pytest.raises(ValueError, match="outlive"):
        m.learn_one(X[50], y[50])
    with pytest.raises(ValueError, match="outlive"):
        m.fit(X[:51], y[:51])
    assert m.n_samples_seen_ == 50
    long = make(IOKS).fit(X, y)                                  # doubling rule: any length
    assert long._engine.combiner.stats[2] == 512 and long.n_samples_seen_ == 300


@pytest.mark.parametrize("cls", [OKSPlusPlus, RFIOKS])
def test_bad_input_leaves_the_model_unchanged(cls, stream):
    X, y = stream
    m = make(cls).partial_fit(X[:50], y[:50])
    before = state_bytes(m)
    bad_X = X[50:60].copy()
    bad_X[3, 1] = np.nan
    for call in (lambda: m.partial_fit(bad_X, y[50:60]),
                 lambda: m.partial_fit(X[50:60, :2], y[50:60]),
                 lambda: m.learn_one(X[50], np.inf),
                 lambda: m.predict_learn_one([1.0, np.nan, 0.0, 0.0], 0.5)):
        with pytest.raises(ValueError):
            call()
        assert state_bytes(m) == before


@pytest.mark.parametrize("params,match", [
    ({"loss": "absolute"}, "loss"), ({"U": -1.0}, "U"), ({"eta_combiner": "fast"}, "eta_combiner"),
    ({"q_update": "sgd"}, "q_update"), ({"legacy_tem1_bug": True}, "logistic"),
    ({"kernels": [fastomkl.Laplacian(1.0)]}, "Gaussian"), ({"predict_with": "max"}, "predict_with"),
])
def test_invalid_parameters(params, match, stream):
    X, y = stream
    with pytest.raises(ValueError, match=match):
        OKSPlusPlus(**params).fit(X, y)


def test_invalid_parameters_of_the_horizon_models(stream):
    X, y = stream
    with pytest.raises(ValueError, match="needs the horizon"):
        RFOKS(step=25.0).fit(X, y)
    with pytest.raises(ValueError, match="T must be"):
        IOKS(T=10).fit(X[:5], y[:5])
    with pytest.raises(ValueError, match="solver"):
        RFIOKS(solver="secant").fit(X, y)
    with pytest.raises(ValueError, match="ctilde_rule"):
        IOKS(ctilde_rule="eq").fit(X, y)


@pytest.mark.parametrize("entry,value,match", [
    ("combiner.p", lambda v: v * 2, "probability"),
    ("combiner.p", lambda v: np.where(np.arange(v.size) == 0, np.nan, v), "NaN"),
    ("combiner.counts", lambda v: v - 1000, "nonnegative"),
    ("combiner.rho", lambda v: -v, "nonnegative"),
    ("experts.owner", lambda v: v + 50, "outside"),
    ("experts.mult", lambda v: 0 * v, "must lie in"),
    ("experts.norm2", lambda v: v - 1e9, "nonnegative"),
])
def test_crafted_states_are_refused(entry, value, match, stream):
    X, y = stream
    m = make(IOKS).partial_fit(X[:80], y[:80])
    state = m._engine.get_state()
    before = state_bytes(m)
    state[entry] = value(state[entry]).astype(state[entry].dtype)
    with pytest.raises(ValueError, match=match):
        m._engine.set_state(state)
    assert state_bytes(m) == before


def test_kernel_versions_grow_one_support_set_per_sampled_kernel(stream):
    X, y = stream
    m = make(OKSPlusPlus).fit(X, y)
    np.testing.assert_array_equal(m.support_sizes_, m.selection_counts_)
    assert m.support_sizes_.sum() == X.shape[0]


@pytest.mark.parametrize("cls,kw", [(OKS, {}), (OKSPlusPlus, {}), (IOKS, {}),
                                    (RFOKSPlusPlus, {}), (RFIOKS, {"loss": "absolute"})])
def test_defaults_learn_at_any_target_scale(cls, kw, stream):
    """The defaults are scale-free: scaling y scales the predictions, and nothing else."""
    X, y = stream
    base = make(cls, **kw).predict_learn(X, y)
    for s in (2.0 ** -20, 1e-3, 1e3):
        scaled = make(cls, **kw)
        np.testing.assert_allclose(scaled.predict_learn(X, s * y), s * base, rtol=1e-8,
                                   atol=1e-9 * s)
        np.testing.assert_array_equal(scaled.selection_counts_,
                                      make(cls, **kw).fit(X, y, shuffle=False).selection_counts_)


@pytest.mark.parametrize("cls", [RFOKSPlusPlusClassifier, OKSPlusPlusClassifier, RFIOKSClassifier])
def test_classifiers_learn_a_separable_problem(cls):
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (1500, 2))
    labels = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, "yes", "no")
    m = make(cls)
    pred = m.predict_learn(X, labels)
    assert set(m.classes_) == {"no", "yes"}
    assert np.mean(pred[750:] != labels[750:]) < 0.2


@pytest.mark.parametrize("cls,kw", [(RFOKS, {"T": 400, "step": 25.0, "ell_max": 1.0}),
                                    (OKS, {}), (RFIOKS, {}), (OKSPlusPlus, {}),
                                    (LKMBooks, {"B": 20})])
def test_huge_targets_never_leave_a_non_finite_state(cls, kw, stream, tmp_path):
    X, y = stream
    m = make(cls, **kw)
    m.predict_learn(X, 1e150 * (y - 0.5))
    m.save(tmp_path / "m.npz")                    # check_state refuses NaN and infinity
    fastomkl.load(tmp_path / "m.npz")


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_lkmbooks_ensemble_matches_the_reference(stream, loss):
    """nu="ensemble" (the default): one LKMBooks per nu of LKM_ENSEMBLE_NUS, each on its own
    support with its own p and admission draws, mixed by ML-Poly (clipped to the targets seen),
    against NumPy: every prediction, each member's p and support, the member weights."""
    from fastomkl.bandit import LKM_ENSEMBLE_NUS
    X, y = stream
    model = LKMBooks(B=40, loss=loss, random_state=4, standardize_target=False)
    got = model.predict_learn(X, y)
    gamma = 1.0 / (2.0 * np.array([k.sigma for k in model.kernels_]) ** 2)
    want, learners, mixer = ref.lkmbooks_ensemble_stream(
        X, y, gamma, 0 if loss == "squared" else 1, 40, LKM_ENSEMBLE_NUS,
        _round_stream(clone(model), X.shape[1]))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    p = np.asarray(model._engine.combiner.p).reshape(len(LKM_ENSEMBLE_NUS), -1)
    np.testing.assert_allclose(p, [learner.p for learner in learners], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(model._engine.experts.rows, [len(l.S) for l in learners])
    np.testing.assert_allclose(model.member_weights_, mixer.weights(), rtol=1e-10)
    np.testing.assert_allclose(model.weights_, mixer.weights() @ p, rtol=1e-10)
    assert len({np.asarray(l.S).tobytes() for l in learners}) > 1   # admitted different rows
    assert len(set(np.round(mixer.weights(), 9))) > 1     # and were weighed differently


def test_lkmbooks_classifier_ensemble_matches_the_reference(labelled_stream):
    """The classifier's members are mixed by ML-Poly on the logistic loss's tangent, unclipped."""
    from fastomkl.bandit import LKM_ENSEMBLE_NUS
    X, y = labelled_stream
    model = LKMBooksClassifier(B=30, T=400, random_state=2)
    model.partial_fit(X, y)
    assert model._engine.combiner.top.clip_range is None
    gamma = 1.0 / (2.0 * np.array([k.sigma for k in model.kernels_]) ** 2)
    labels = np.where(y == model.classes_[1], 1.0, -1.0)
    want, learners, mixer = ref.lkmbooks_ensemble_stream(
        X, labels, gamma, 2, 30, LKM_ENSEMBLE_NUS, _round_stream(clone(model), X.shape[1]),
        T=400, logistic_step=True)
    np.testing.assert_allclose(model.decision_function(X[:20]),
                               [mixer.mix([l.predict(x)[1] for l in learners]) for x in X[:20]],
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.member_weights_, mixer.weights(), rtol=1e-10)


def test_lkmbooks_files_hold_the_rows_in_use(stream, tmp_path):
    """A file holds each member's rows in use, not its budget's capacity (four supports of
    B = 100,000 rows would be 4 * 100,000 * (d + 1) doubles of zeros), and loads bit-identically
    once the caller vouches for the model's size (a small file that builds a model of many MB is
    refused by default, naming max_bytes); a state at capacity (what files written before held)
    sets the same model."""
    X, y = stream
    model = LKMBooks(B=100_000, random_state=0).fit(X[:50], y[:50])
    model.save(tmp_path / "big.npz")
    assert (tmp_path / "big.npz").stat().st_size < 100_000
    size = 8 * 4 * 100_000 * (X.shape[1] + 2)                  # the engine's allocation
    with pytest.raises(ValueError, match="max_bytes"):
        fastomkl.load(tmp_path / "big.npz")
    with pytest.raises(ValueError, match="more than max_bytes"):
        fastomkl.load(tmp_path / "big.npz", max_bytes=size - 1)
    loaded = fastomkl.load(tmp_path / "big.npz", max_bytes=size)
    assert state_bytes(loaded) == state_bytes(model)
    at_capacity = model._engine.get_state()
    at_capacity["experts.support"] = np.array(model._engine.experts.support)
    at_capacity["experts.coef"] = np.array(model._engine.experts.coef)
    assert at_capacity["experts.coef"].shape == (4 * 100_000,)
    again = LKMBooks(B=100_000, random_state=0).fit(X[:1], y[:1])
    again._engine.set_state(at_capacity)
    mine, its = model._engine.get_state(), again._engine.get_state()
    assert mine.keys() == its.keys()
    assert all(np.array_equal(mine[name], its[name]) for name in mine)
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.predict_learn(X[50:], y[50:]),
                                  model.predict_learn(X[50:], y[50:]))
