"""Every meta-learner against its formula in NumPy, and experts crossed with other combiners."""
import numpy as np
import pytest

from fastomkl import VAWEWA, VAWMeta, Gaussian, Laplacian
from fastomkl._core.losses import LOSSES
from fastomkl._core.steps import SCHEDULES
from fastomkl._core.combiners.hedge import Hedge
from fastomkl._core.engine import Engine
from fastomkl._core.experts.ogd import OGDExperts
from fastomkl._core.features.rff import RFFBank, transform_many
from fastomkl._core.combiners.meta import AA, EWA, VAWCombiner
from fastomkl._core.experts.vaw import VAWExperts
import vaw_reference as ref

KERNELS = [Gaussian(0.2), Laplacian(0.5), Gaussian(1.0), Laplacian(3.0)]


def stream(T=300, d=3, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(T, d))
    # labels in [0, 1] but with experts that overshoot it, so the clipping matters
    y = np.clip(0.5 + 0.45 * np.sin(4 * X[:, 0]) + 0.1 * rng.standard_normal(T), 0, 1)
    return X, y


def experts_of(model, X, y, lam=1.0, mode="ridge"):
    return ref.vaw_experts(model.features_.transform(X), y, lam, mode, model.center)


@pytest.mark.parametrize("mode", ["ridge", "vaw"])
def test_ewa_matches_formula(mode):
    X, y = stream()
    model = VAWEWA(KERNELS, n_components=6, mode=mode, label_range=(0, 1), center=False,
                   random_state=2)
    pred = model.predict_learn(X, y)
    E = experts_of(model, X, y, mode=mode)
    assert (E > 1).any() or (E < 0).any()               # clipping is exercised
    np.testing.assert_allclose(pred, ref.ewa(E, y, 0.5, (0.0, 1.0)), atol=1e-10)
    L = ((np.clip(E, 0, 1) - y[:, None]) ** 2).sum(0)
    np.testing.assert_allclose(model.weights_, ref.softmax(-0.5 * L), atol=1e-12)


@pytest.mark.parametrize("scale", [1.0, 1e-3, 250.0])
def test_ewa_default_is_adahedge_on_the_observed_range_and_scale_free(scale):
    X, y = stream()
    model = VAWEWA(KERNELS, n_components=6, random_state=2)
    pred = model.predict_learn(X, scale * y)
    E = experts_of(model, X, scale * y, mode="vaw")
    expected = ref.ewa(E, scale * y, None, "observed")
    np.testing.assert_allclose(pred, expected, rtol=1e-9, atol=1e-12 * scale)
    assert np.abs(expected - ref.ewa(E, scale * y, 0.5 / scale ** 2, "observed")).max() > 1e-4 * scale
    if scale != 1.0:                 # the same forecaster at every scale
        unit = VAWEWA(KERNELS, n_components=6, random_state=2).predict_learn(X, y)
        np.testing.assert_allclose(pred / scale, unit, rtol=1e-7, atol=1e-9)


def test_ewa_rate_and_range_are_parameters():
    X, y = stream()
    y2 = 2 * y - 1                                        # labels in [-1, 1]
    model = VAWMeta(KERNELS, "ewa", n_components=6, label_range=(-1, 1), eta_combiner=0.3, random_state=2)
    pred = model.predict_learn(X, y2)
    E = experts_of(model, X, y2, mode="vaw")
    np.testing.assert_allclose(pred, ref.ewa(E, y2, 0.3, (-1.0, 1.0)), atol=1e-10)
    default = VAWMeta(KERNELS, "ewa", n_components=6, label_range=(-1, 1), random_state=2)
    np.testing.assert_allclose(default.predict_learn(X, y2), ref.ewa(E, y2, 1 / 8, (-1.0, 1.0)),
                               atol=1e-10)


@pytest.mark.parametrize("label_range", [(0.0, 1.0), None])
def test_aggregating_algorithm_matches_formula(label_range):
    X, y = stream()
    model = VAWMeta(KERNELS, "aa", n_components=6, mode="ridge", label_range=label_range,
                    random_state=2)
    pred = model.predict_learn(X, y)
    E = experts_of(model, X, y)
    expected = (ref.aggregating(E, y, 2.0, label_range) if label_range else
                ref.aggregating(E, y, None, "observed"))
    np.testing.assert_allclose(pred, expected, atol=1e-10)
    assert pred.min() >= 0.0 and pred.max() <= 1.0
    with pytest.raises(AttributeError):
        model.weights_


def test_aggregating_algorithm_survives_huge_losses():
    # exp(-eta L) underflows for L ~ 400 with eta = 2; the log-domain version must stay finite.
    X, y = stream(T=30)
    comb = AA(3, 2.0, (0.0, 1.0))
    comb.set_state({"L": np.array([500.0, 520.0, 900.0]), "n_rejected": np.array(0)})
    bank = RFFBank(np.zeros((3, 1, X.shape[1])))
    engine = Engine(bank, VAWExperts(3, 2), comb, np.random.PCG64(0))
    out = np.empty(len(y))
    engine.predict_learn_many(X, y, out)
    assert np.isfinite(out).all()


@pytest.mark.parametrize("label_range", [(0.0, 1.0), None])
@pytest.mark.parametrize("meta,fn", [("boa", ref.boa), ("mlpoly", ref.mlpoly),
                                     ("mlprod", ref.mlprod)])
def test_adaptive_meta_learners_match_formula(meta, fn, label_range):
    X, y = stream()
    model = VAWMeta(KERNELS, meta, n_components=6, mode="ridge", label_range=label_range,
                    random_state=2)
    pred = model.predict_learn(X, y)
    E = experts_of(model, X, y)
    expected = fn(E, y, label_range or "observed")
    np.testing.assert_allclose(pred, expected, atol=1e-10)
    # not a trivial combination: neither the uniform mixture nor EWA
    assert np.abs(pred - np.clip(E, 0, 1).mean(1)).max() > 1e-3
    assert np.abs(pred - ref.ewa(E, y, 0.5, (0.0, 1.0))).max() > 1e-4
    w = model.weights_
    assert w.shape == (len(KERNELS),) and abs(w.sum() - 1) < 1e-12 and (w >= 0).all()


@pytest.mark.parametrize("label_range", [(0.0, 1.0), None])
def test_meta_vaw_with_clipping_is_vaw2_trunc(label_range):
    X, y = stream()
    model = VAWMeta(KERNELS, "vaw", n_components=6, mode="vaw", label_range=label_range,
                    random_state=2)
    pred = model.predict_learn(X, y)
    E = experts_of(model, X, y, mode="vaw")
    expected = (ref.meta_vaw(E, y, 1.0, "vaw", label_range, center=True) if label_range else
                ref.meta_vaw(E, y, 1.0, "vaw", "observed", scale_lam=True, center=True))
    np.testing.assert_allclose(pred, expected, atol=1e-9)


def test_vaw_experts_under_hedge():
    """Cross combination: VAW experts under Raker's exponential weights (losses (f - y)^2)."""
    X, y = stream()
    model = VAWMeta(KERNELS, "hedge", n_components=6, mode="vaw", eta_combiner=0.7, random_state=2)
    pred = model.predict_learn(X, y)
    E = experts_of(model, X, y, mode="vaw")
    np.testing.assert_allclose(pred, ref.hedge(E, (E - y[:, None]) ** 2, 0.7), atol=1e-10)


def _ogd_engine(freqs, combiner, lam=1e-3, eta=0.2):
    n = freqs.shape[0]
    experts = OGDExperts(n, 2 * freqs.shape[1], LOSSES["squared"], lam, eta,
                         SCHEDULES["inv_sqrt"])
    return Engine(RFFBank(freqs), experts, combiner, np.random.PCG64(0))


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_ogd_experts_under_second_level_vaw(mode):
    """Cross combination: Raker's OGD experts combined by the second-level VAW."""
    X, y = stream()
    freqs = np.random.default_rng(4).standard_normal((3, 5, X.shape[1])) * 2
    engine = _ogd_engine(freqs, VAWCombiner(3, 0.5, mode))
    out = np.empty(len(y))
    engine.predict_learn_many(X, y, out)
    F = np.empty((len(y), 3, 10))
    transform_many(engine.features, X, F)
    E, _ = ref.ogd_experts(F, y, 1e-3, 0.2)
    np.testing.assert_allclose(out, ref.meta_vaw(E, y, 0.5, mode), atol=1e-9)


def test_ogd_experts_under_ewa():
    X, y = stream()
    freqs = np.random.default_rng(4).standard_normal((3, 5, X.shape[1])) * 2
    engine = _ogd_engine(freqs, EWA(3, 0.5, (0.0, 1.0)))
    out = np.empty(len(y))
    engine.predict_learn_many(X, y, out)
    F = np.empty((len(y), 3, 10))
    transform_many(engine.features, X, F)
    E, _ = ref.ogd_experts(F, y, 1e-3, 0.2)
    np.testing.assert_allclose(out, ref.ewa(E, y, 0.5, (0.0, 1.0)), atol=1e-12)


def test_vaw_experts_under_raker_hedge_engine_level():
    """VAW experts with Hedge at the engine level, importance weight 1: same as the estimator."""
    X, y = stream()
    freqs = np.random.default_rng(4).standard_normal((3, 5, X.shape[1]))
    engine = Engine(RFFBank(freqs), VAWExperts(3, 10, 1.0, "ridge"),
                    Hedge(3, 0.1, SCHEDULES["inv_sqrt"]), np.random.PCG64(0))
    out = np.empty(len(y))
    engine.predict_learn_many(X, y, out)
    F = np.empty((len(y), 3, 10))
    transform_many(engine.features, X, F)
    E = ref.vaw_experts(F, y, 1.0, "ridge")
    np.testing.assert_allclose(out, ref.hedge(E, (E - y[:, None]) ** 2, 0.1), atol=1e-10)


def test_vaw_experts_under_graph_feedback():
    """Cross combination: VAW experts under OMKL-GF's graph-feedback combiner.  Each round only the
    kernels of the drawn subset learn, with importance weight 1/q: every expert must end as the
    weighted ridge solution over the rounds it was selected in."""
    from fastomkl import OMKLGF
    X, y = stream(T=200)
    N, D, lam = len(KERNELS), 12, 0.5
    gf = OMKLGF(KERNELS, n_components=6, M=2, J=2, eta="auto", random_state=3)
    base = gf._engine_for(X.shape[1])                       # built, nothing learnt
    comb = base.combiner
    engine = Engine(base.features, VAWExperts(N, D, lam, "vaw"), comb, np.random.PCG64(5))
    F = np.empty((len(y), N, D))
    transform_many(engine.features, X, F)
    S = np.repeat(lam * np.eye(D)[None], N, axis=0)
    b = np.zeros((N, D))
    sizes = []
    for t in range(len(y)):
        engine.predict_learn_one(X[t], y[t])
        node = comb.info[1]
        active = np.asarray(comb.members)[node, :comb.n_members[node]]
        sizes.append(len(active))
        for k in active:
            w = 1.0 / comb.q[k]
            S[k] += w * np.outer(F[t, k], F[t, k])
            b[k] += w * y[t] * F[t, k]
    assert min(sizes) >= 1 and max(sizes) < N                 # partial feedback really happened
    experts = engine.experts
    np.testing.assert_allclose(experts.inverse(), np.linalg.inv(S), atol=1e-9)
    np.testing.assert_allclose(experts.targets, b, atol=1e-9)
    assert len(set(experts.get_state()["n_updates"].tolist())) > 1   # experts learnt unequally


def test_weights_views_say_what_each_combiner_mixes():
    from fastomkl._core.combiners.meta import Single
    np.testing.assert_array_equal(Single(1).weights_, [1.0])     # the one expert, passed through
    np.testing.assert_allclose(EWA(4, 0.5).weights_, 0.25)
    with pytest.raises(AttributeError, match="coef_"):
        VAWCombiner(3).weights_
