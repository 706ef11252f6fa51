"""The graph-aided estimators and the Table 1 baselines through the public API."""
import pickle

import numpy as np
import pytest

import fastomkl as fo
from fastomkl import Gaussian, Laplacian
from fastomkl.kernels import Polynomial
from fastomkl._core.steps import CHANGE_STATISTICS, ENSEMBLE_STEPS
from fastomkl.graph_omkl import legacy_options
from fastomkl.omkr import omkr_legacy_dictionary

from helpers import as_older_file, loaded_as_older_file, state_bytes
from reference import NumpyMLPoly, StandardisedTargets

KERNELS = [Gaussian(s) for s in (0.1, 0.3, 1.0, 3.0)] + [Laplacian(s) for s in (0.3, 1.0, 3.0)]
N = len(KERNELS)


def small(cls, **kw):
    base = dict(kernels=KERNELS, n_components=10, random_state=3)
    if cls in (fo.OMKR, fo.OMKRClassifier):         # exact expansions: no features, no draws
        base.pop("n_components")
        base.pop("random_state")
    if cls in (fo.OMKLGF, fo.OMKLGFClassifier, fo.OMKLSFG, fo.OMKLSFGClassifier, fo.OMKLSFGR,
               fo.OMKLSFGRClassifier):
        base["M"] = 3
    if cls in (fo.OMKLSFGR, fo.OMKLSFGRClassifier):
        base["top_k"] = 2
    base.update(kw)
    return cls(**base)


REGRESSORS = [fo.OMKLGF, fo.OMKLSFG, fo.OMKLSFGR, fo.OMKR, fo.RFOMKR]
CLASSIFIERS = [fo.OMKLGFClassifier, fo.OMKLSFGClassifier, fo.OMKLSFGRClassifier,
               fo.OMKRClassifier, fo.RFOMKRClassifier]


# The paper's step, AdaGrad-norm and the step ensemble (the default), whose exponential weights
# take the rate of Raker's for the comparison (the graph models' own rates are self-confident).
COMPLETE_GRAPH_SETTINGS = [(dict(eta=0.1), dict(eta=0.1)),
                           (dict(eta="auto", eta_combiner=1.0, eta_schedule="constant"),
                            dict(eta="auto")),
                           (dict(eta_combiner=2.0, eta_schedule="constant"),
                            dict(eta="ensemble"))]


@pytest.mark.parametrize("graph_kw,raker_kw", COMPLETE_GRAPH_SETTINGS)
def test_sfg_complete_graph_equals_raker(stream, graph_kw, raker_kw):
    X, y = stream
    sfg = small(fo.OMKLSFG, M=N, **graph_kw)
    raker = fo.Raker(KERNELS, n_components=10, random_state=3, **raker_kw)
    np.testing.assert_allclose(sfg.predict_learn(X, y), raker.predict_learn(X, y), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(sfg.weights_, raker.weights_, rtol=1e-10)
    np.testing.assert_array_equal(sfg.features_.frequencies_, raker.features_.frequencies_)


@pytest.mark.parametrize("graph_kw,raker_kw", COMPLETE_GRAPH_SETTINGS)
def test_sfgr_complete_graph_equals_raker(stream, graph_kw, raker_kw):
    X, y = stream
    sfgr = small(fo.OMKLSFGR, M=N, **graph_kw)
    raker = fo.Raker(KERNELS, n_components=10, random_state=3, **raker_kw)
    np.testing.assert_allclose(sfgr.predict_learn(X, y), raker.predict_learn(X, y), rtol=1e-12,
                               atol=1e-14)


def test_gf_uniform_many_draws_behaves_like_raker(stream):
    X, y = stream
    gf = small(fo.OMKLGF, J=1, M=2000, eta_e=1.0, eta_schedule="constant", eta=0.05)
    raker = fo.Raker(KERNELS, n_components=10, eta=0.05, eta_schedule="constant", random_state=3)
    np.testing.assert_allclose(gf.predict_learn(X, y), raker.predict_learn(X, y), rtol=1e-8,
                               atol=1e-10)


@pytest.mark.parametrize("cls", REGRESSORS)
def test_predict_is_pure_and_deterministic(cls, stream):
    X, y = stream
    model = small(cls)
    model.partial_fit(X[:150], y[:150])
    before = state_bytes(model)
    p1 = model.predict(X[150:])
    p2 = np.array([model.predict_one(x) for x in X[150:]])
    assert state_bytes(model) == before
    np.testing.assert_array_equal(p1, p2)
    assert np.isfinite(p1).all()


def test_gf_predict_uses_top_m_kernels(stream):
    X, y = stream
    model = small(fo.OMKLGF, M=3, eta=0.1)
    model.partial_fit(X[:100], y[:100])
    w = model.weights_
    top = np.argsort(-w, kind="stable")[:3]
    Z = model.features_.transform(X[100:101])[0]
    theta = np.asarray(model._engine.experts.theta)
    f = np.einsum("kd,kd->k", theta, Z)
    expect = np.dot(w[top], f[top]) / w[top].sum()
    assert model.predict_one(X[100]) == pytest.approx(expect, rel=1e-12)
    full = small(fo.OMKLGF, M=3, predict_with="all", eta=0.1)
    full.partial_fit(X[:100], y[:100])
    assert full.predict_one(X[100]) == pytest.approx(np.dot(w, f), rel=1e-9)


def test_sfg_predict_uses_argmax_node(stream):
    X, y = stream
    model = small(fo.OMKLSFG, M=3, eta=0.1)
    model.partial_fit(X[:100], y[:100])
    node = int(np.argmax(model.node_weights_))
    S = np.flatnonzero(model.graph_[node])
    w = model.weights_
    Z = model.features_.transform(X[100:101])[0]
    f = np.einsum("kd,kd->k", np.asarray(model._engine.experts.theta), Z)
    assert model.predict_one(X[100]) == pytest.approx(np.dot(w[S], f[S]) / w[S].sum(), rel=1e-12)


@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS)
def test_save_load_and_pickle_continue_identically(cls, stream, labelled_stream, tmp_path):
    X, y = labelled_stream if cls in CLASSIFIERS else stream
    model = small(cls)
    model.partial_fit(X[:120], y[:120])
    model.save(tmp_path / "m.npz")
    loaded = fo.load(tmp_path / "m.npz")
    pickled = pickle.loads(pickle.dumps(model))
    a = model.predict_learn(X[120:], y[120:])
    np.testing.assert_array_equal(loaded.predict_learn(X[120:], y[120:]), a)
    np.testing.assert_array_equal(pickled.predict_learn(X[120:], y[120:]), a)


@pytest.mark.parametrize("cls", REGRESSORS)
def test_same_seed_same_numbers_and_fit_resets(cls, stream):
    X, y = stream
    a = small(cls).predict_learn(X, y)
    m = small(cls)
    np.testing.assert_array_equal(m.predict_learn(X, y), a)
    m.fit(X, y)
    np.testing.assert_array_equal(m.predict_learn(X, y), small(cls).fit(X, y).predict_learn(X, y))


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_classifiers_learn(cls, labelled_stream):
    X, y = labelled_stream
    labels = np.where(y > 0, "up", "down")
    model = small(cls)
    pred = model.predict_learn(X, labels)
    assert set(np.unique(pred)) <= {"up", "down"}
    assert np.mean(pred[150:] == labels[150:]) > 0.6


@pytest.mark.parametrize("cls,bad", [
    (fo.OMKLGF, dict(M=0)), (fo.OMKLGF, dict(J=0)), (fo.OMKLGF, dict(q="exact")),
    (fo.OMKLGF, dict(eta_e=2.0)), (fo.OMKLGF, dict(freeze_graph_after=0)),
    (fo.OMKLGF, dict(q_floor=1.5)), (fo.OMKLGF, dict(predict_with="best")),
    (fo.OMKLGF, dict(detect_changes="always")), (fo.OMKLGFClassifier, dict(detect_changes=None)),
    (fo.OMKLSFG, dict(divergence="kl")), (fo.OMKLSFG, dict(dominating="exact")),
    (fo.OMKLSFG, dict(exploit="min")), (fo.OMKLSFG, dict(p_floor=-0.1)),
    (fo.OMKLSFG, dict(graph_dim=0)),
    (fo.OMKLSFGR, dict(beta=0.0)), (fo.OMKLSFGR, dict(top_k=0)),
    (fo.OMKLSFGR, dict(refine_scope="some")), (fo.OMKLSFGR, dict(predict_set="x")),
    (fo.OMKR, dict(beta=1.5)), (fo.RFOMKR, dict(beta=0.0)),
    (fo.OnlineKernelRegressor, dict(kernel="sigmoid")),
])
def test_bad_parameters_raise(cls, bad, stream):
    X, y = stream
    model = cls(**bad) if cls is fo.OnlineKernelRegressor else small(cls, **bad)
    with pytest.raises(ValueError):
        model.partial_fit(X[:5], y[:5])
    assert model.n_samples_seen_ == 0


def test_sfg_m_larger_than_dictionary(stream):
    X, y = stream
    with pytest.raises(ValueError, match="M must be at most"):
        small(fo.OMKLSFG, M=N + 1).partial_fit(X[:3], y[:3])


def test_rejected_sample_leaves_model_unchanged(stream):
    X, y = stream
    for cls in REGRESSORS:
        model = small(cls)
        model.partial_fit(X[:50], y[:50])
        before = state_bytes(model)
        bad = X[50].copy()
        bad[1] = np.nan
        with pytest.raises(ValueError):
            model.learn_one(bad, y[50])
        assert state_bytes(model) == before


@pytest.mark.parametrize("name", ["OMKLGF", "OMKLSFG", "OMKLSFGR"])
def test_legacy_options_are_accepted(name, stream):
    X, y = stream
    cls = getattr(fo, name)
    opts = legacy_options(name, "bias_correction")
    model = small(cls, **opts)
    pred = model.predict_learn(X, y)
    assert np.isfinite(pred).all()
    if name != "OMKLGF":
        assert model.get_params()["divergence"] == "legacy_nan"


def test_gf_default_draws_members_of_a_step_ensemble(stream):
    """The default (eta="ensemble"): the graph's experts are the kernel x step members, a node
    draws 10 per step of them (M="auto"), and a kernel's weight is its members' together."""
    X, y = stream
    m = len(ENSEMBLE_STEPS)
    model = fo.OMKLGF(KERNELS, n_components=10, J=3, random_state=3).fit(X[:60], y[:60])
    engine = model._fitted_engine()
    assert engine.experts.per_kernel == m and engine.combiner.degree == 10 * m
    assert model.graph_.shape == (N * m, 3)
    w_bar = np.exp(np.asarray(engine.combiner.log_w) - np.max(engine.combiner.log_w))
    np.testing.assert_allclose(model.weights_, (w_bar / w_bar.sum()).reshape(N, m).sum(axis=1),
                               rtol=1e-12)
    assert fo.OMKLGF(KERNELS, n_components=10, eta="auto", random_state=3).fit(
        X[:60], y[:60])._fitted_engine().combiner.degree == 10


def _turning_labels(X):
    """The sign of x_0 for 300 rounds, then its opposite for 300: a concept that turns over."""
    X = np.concatenate([X, X])
    return X, np.where(np.arange(len(X)) < len(X) // 2, 1.0, -1.0) * np.where(X[:, 0] > 0, 1, -1)


def test_gf_restarts_its_rate_when_the_concept_turns_over(stream, sensitive_change_test):
    """The classifier's change test fires after the turn, each alarm sets V to 0, and until its
    first alarm the model is the one without the restart, number for number."""
    X, y = _turning_labels(stream[0])
    model = small(fo.OMKLGFClassifier)
    alarms = []
    for t, (x, label) in enumerate(zip(X, y)):
        before = model.n_changes_detected_ if t else 0
        model.learn_one(x, label)
        if model.n_changes_detected_ > before:
            alarms.append(t)
            assert model._fitted_engine().combiner.rate_v[0] == 0.0
    assert [t for t in alarms if t >= len(y) // 2]
    plain = small(fo.OMKLGFClassifier, detect_changes=False)
    theirs = plain.predict_learn(X, y)
    assert plain.n_changes_detected_ == 0
    assert "combiner.change_test" not in plain._fitted_engine().get_state()
    ours = small(fo.OMKLGFClassifier).predict_learn(X, y)
    np.testing.assert_array_equal(ours[:alarms[0] + 1], theirs[:alarms[0] + 1])
    assert not np.array_equal(ours, theirs)


def test_gf_state_stays_loadable_after_its_rate_restarts(stream, sensitive_change_test):
    """A restarted rate moves the weights fast: their sum, kept by increments, must stay within
    the state check's tolerance of the exact one, so that every round's model saves and loads."""
    X, y = _turning_labels(np.concatenate([stream[0]] * 2))
    model = small(fo.OMKLGFClassifier)
    for t, (x, label) in enumerate(zip(X, y)):
        model.learn_one(x, label)
        comb = model._fitted_engine().combiner
        W, exact = comb.wstate[0], np.sum(comb.wlin)
        assert abs(W - exact) <= 1e-9 * exact, t
        if t % 50 == 49:
            again = pickle.loads(pickle.dumps(model))
            np.testing.assert_array_equal(again.predict(X[:20]), model.predict(X[:20]))
    assert model.n_changes_detected_ >= 1


def test_gf_change_test_needs_a_self_confident_rate(stream, labelled_stream):
    """"auto" runs the test for the classifier (on its mistakes), True for the regressor too (on
    its squared errors); a numeric rate has none, and True there is refused."""
    def change(cls, data, **kw):
        return small(cls, **kw).fit(*data)._fitted_engine().combiner.change
    for kw in (dict(eta=0.1), dict(eta_combiner=1.0)):
        assert change(fo.OMKLGFClassifier, labelled_stream, **kw) is None
        model = small(fo.OMKLGF, detect_changes=True, **kw)
        with pytest.raises(ValueError, match="detect_changes"):
            model.fit(*stream)
        assert model.n_samples_seen_ == 0
    assert change(fo.OMKLGFClassifier, labelled_stream, detect_changes=False) is None
    assert change(fo.OMKLGFClassifier, labelled_stream).kind == CHANGE_STATISTICS["mistakes"]
    assert change(fo.OMKLGF, stream) is None
    assert change(fo.OMKLGF, stream, detect_changes=True).kind == CHANGE_STATISTICS["squared"]


def test_gf_files_without_the_change_test_learn_as_they_did(stream, tmp_path):
    """A file of a release before ``detect_changes`` loads with it False, the rate it learnt
    with; a file that says it has a test but holds none is refused."""
    X, y = _turning_labels(stream[0])
    older = small(fo.OMKLGFClassifier, detect_changes=False).partial_fit(X[:250], y[:250])
    loaded = loaded_as_older_file(older, tmp_path, ["detect_changes"], X[250:], y[250:])
    assert loaded.detect_changes is False
    current = small(fo.OMKLGFClassifier).partial_fit(X[:250], y[:250])
    current.save(tmp_path / "current.npz")
    as_older_file(tmp_path / "current.npz", tmp_path / "stripped.npz",
                  arrays=["combiner.change_test"])
    with pytest.raises(ValueError, match="change_test"):
        fo.load(tmp_path / "stripped.npz")


@pytest.mark.parametrize("eta", ["auto", "ensemble"])
def test_sfg_graph_attributes(stream, eta):
    X, y = stream
    m = 3 if eta == "ensemble" else 1           # the graph's nodes: kernels, or their members
    model = small(fo.OMKLSFG, M=3, eta=eta)
    model.partial_fit(X[:10], y[:10])
    A = model.graph_
    assert A.shape == (N * m, N * m)
    assert (A.sum(axis=1) == 3 * m).all() and A.diagonal().all()
    assert A[model.dominating_set_].any(axis=0).all()
    # the members of a kernel are one kernel to the graph: the kernels' graph, blown up
    kernels_graph = small(fo.OMKLSFG, M=3, eta=0.1).partial_fit(X[:10], y[:10]).graph_
    np.testing.assert_array_equal(A, np.kron(kernels_graph, np.ones((m, m), dtype=bool)))
    r = small(fo.OMKLSFGR, M=2, top_k=2, eta=eta)
    r.partial_fit(X[:40], y[:40])
    G = r.refined_graph_
    assert G[r.dominating_set_].any(axis=0).all()
    assert len(r.dominating_set_) >= 2


# -- exact kernel expansions against NumPy ---------------------------------------------------------
def _omkr_numpy(kernel_fns, X, y, eta=0.1, beta=0.5, normalize=True):
    n = len(kernel_fns)
    alphas = np.zeros((n, 0))
    w = np.full(n, 1.0 / n)
    out = []
    for t in range(1, len(y) + 1):
        x = X[t - 1]
        K = np.array([[k(x, s) for s in X[:t - 1]] for k in kernel_fns]).reshape(n, t - 1)
        f = (alphas * K).sum(axis=1)
        out.append(np.dot(w, f) / w.sum() if normalize else np.dot(w, f))
        alphas = np.hstack([alphas, (-eta / np.sqrt(t) * (f - y[t - 1]))[:, None]])
        w = w * beta ** ((f - y[t - 1]) ** 2)
    return np.array(out)


def _omkr_ensemble_numpy(kernel_fns, X, y, steps, beta=0.5, budget=None, classify=False,
                         ml_poly=False):
    """OMKR under eta="ensemble": expert k * m + s is kernel k's expansion with the constant step
    steps[s] on loss' itself, truncated at the loss's minimiser along the step (the squared loss:
    onto y, as k(x, x) = 1; the logistic loss: the zero of its tangent), targets standardised
    online (regression),
    w <- w beta^L over all kernel x step experts (`ml_poly`: the experts mixed by ML-Poly on the
    squared loss's slope at the mixture instead, clipped to the range of the targets seen); the
    support is the `budget` latest rows."""
    n, m = len(kernel_fns), len(steps)
    member_steps = np.tile(steps, n)
    support, alphas = [], np.zeros((n * m, 0))
    w = np.full(n * m, 1.0 / (n * m))
    mixer = NumpyMLPoly(n * m, clipped=not classify)
    targets = StandardisedTargets(not classify)
    out = []
    for t in range(len(y)):
        x = X[t]
        K = np.array([[k(x, s) for s in support] for k in kernel_fns]).reshape(n, len(support))
        f = (alphas * np.repeat(K, m, axis=0)).sum(axis=1)
        center, scale = targets.units()
        out.append(center + scale * (mixer.mix(f) if ml_poly else np.dot(w, f) / w.sum()))
        target = targets.learn(y[t])
        if classify:
            margin = target * f
            loss, d = np.logaddexp(0.0, -margin), -target / (1.0 + np.exp(margin))
            minimiser = 1.0                 # at infinity: truncated at the tangent's zero
        else:
            loss, d = (f - target) ** 2, 2.0 * (f - target)
            minimiser = 2.0                 # twice the tangent's zero: onto y
        limit = np.divide(minimiser * loss, d * d, out=np.full(n * m, np.inf), where=d != 0)
        step = np.minimum(member_steps, limit)
        support.append(x)
        alphas = np.hstack([alphas, (-step * d)[:, None]])
        if budget is not None and len(support) > budget:
            support, alphas = support[1:], alphas[:, 1:]
        w = w * beta ** loss
        mixer.learn(f, lambda mix: 2.0 * (mix - target), target)
    return np.array(out)


@pytest.mark.parametrize("budget", [None, 40])
def test_omkr_ensemble_matches_numpy(stream, budget):
    X, y = stream
    X, y = X[:120], 3.0 + 2.0 * y[:120]                # targets in their own units
    fns = [(lambda a, b, k=k: float(k(a, b))) for k in KERNELS]
    model = fo.OMKR(KERNELS, budget=budget)             # the default: eta="ensemble"
    np.testing.assert_allclose(model.predict_learn(X, y),
                               _omkr_ensemble_numpy(fns, X, y, ENSEMBLE_STEPS, budget=budget),
                               rtol=1e-9, atol=1e-12)
    assert model._fitted_engine().experts.per_kernel == len(ENSEMBLE_STEPS)
    assert model.weights_.shape == (N,)


def test_omkr_ensemble_classifier_matches_numpy(stream):
    """The classifier's engine on -1/+1 labels (the logistic loss: no truncation, no scaling)."""
    X, y = stream
    X, labels = X[:100], np.where(y[:100] > 0.5, 1.0, -1.0)
    fns = [(lambda a, b, k=k: float(k(a, b))) for k in KERNELS]
    engine = fo.OMKRClassifier(KERNELS)._engine_for(X.shape[1])
    scores = np.empty(len(labels))
    engine.predict_learn_many(np.ascontiguousarray(X), labels, scores)
    np.testing.assert_allclose(
        scores, _omkr_ensemble_numpy(fns, X, labels, ENSEMBLE_STEPS, classify=True),
        rtol=1e-9, atol=1e-12)


def test_omkr_matches_numpy(stream):
    X, y = stream
    X, y = X[:120], y[:120]
    model = fo.OMKR(KERNELS, eta=0.1)
    fns = [(lambda a, b, k=k: float(k(a, b))) for k in KERNELS]
    np.testing.assert_allclose(model.predict_learn(X, y), _omkr_numpy(fns, X, y), rtol=1e-10,
                               atol=1e-13)
    # learning in pieces (the support grows across calls) gives the same numbers
    m2 = fo.OMKR(KERNELS, eta=0.1)
    parts = [m2.predict_learn(X[:7], y[:7])] + [[m2.predict_learn_one(X[i], y[i])]
                                                for i in range(7, 20)]
    parts.append(m2.predict_learn(X[20:], y[20:]))
    np.testing.assert_allclose(np.concatenate(parts), _omkr_numpy(fns, X, y), rtol=1e-10,
                               atol=1e-13)


@pytest.mark.parametrize("kernel,fn,budget", [
    (fo.Gaussian.from_gamma(1.0), lambda a, b: np.exp(-np.sum((a - b) ** 2)), None),
    (fo.Laplacian.from_gamma(2.0), lambda a, b: np.exp(-2 * np.sum(np.abs(a - b))), 30),
])
def test_single_kernel_regressor_default_is_the_step_ensemble(kernel, fn, budget, stream):
    """OnlineKernelRegressor's default: OMKR's ensemble on one kernel (three expansions with the
    constant steps over one support) mixed by ML-Poly, in the targets' own units."""
    X, y = stream
    X, y = X[:120], 3.0 + 2.0 * y[:120]
    model = fo.OnlineKernelRegressor(kernel, budget=budget)
    np.testing.assert_allclose(model.predict_learn(X, y),
                               _omkr_ensemble_numpy([fn], X, y, ENSEMBLE_STEPS, budget=budget,
                                                    ml_poly=True),
                               rtol=1e-9, atol=1e-12)
    assert model._fitted_engine().experts.per_kernel == len(ENSEMBLE_STEPS)


@pytest.mark.parametrize("kw,fn", [
    (dict(kernel=fo.Gaussian.from_gamma(1.0)), lambda a, b: np.exp(-np.sum((a - b) ** 2))),
    (dict(kernel=Polynomial(2)), lambda a, b: float(a @ b) ** 2),
    (dict(kernel=fo.Laplacian.from_gamma(2.0)),
     lambda a, b: np.exp(-2 * np.sum(np.abs(a - b)))),
    (dict(kernel=Polynomial(3, 0.5, 1.0)), lambda a, b: (0.5 * a @ b + 1) ** 3),
])
def test_single_kernel_regressor_matches_numpy(kw, fn, stream):
    X, y = stream
    X, y = X[:100], y[:100]
    ours = fo.OnlineKernelRegressor(**kw, eta=0.1).predict_learn(X, y)
    np.testing.assert_allclose(ours, _omkr_numpy([fn], X, y), rtol=1e-10, atol=1e-13)


def test_omkr_legacy_dictionary_convention():
    ks = omkr_legacy_dictionary()
    a = 10.0 ** (-2 + 0.08 * 7)
    x, z = np.array([0.3, -0.2]), np.zeros(2)
    assert ks[7](x, z) == pytest.approx(np.exp(-np.sum(x ** 2) / a))
    assert len(ks) == 76


def test_rfomkr_unnormalised_is_the_raw_weighted_sum(stream):
    X, y = stream
    norm = small(fo.RFOMKR)
    raw = small(fo.RFOMKR, normalize=False)
    a, b = norm.predict_learn(X, y), raw.predict_learn(X, y)
    np.testing.assert_allclose(a[0], b[0] * 1.0)        # both 0 before any learning
    assert np.mean((a - y) ** 2) < np.mean((b - y) ** 2)


def test_omkr_threads_never_run_out_of_support(stream):
    import threading
    X, y = stream
    model = fo.OMKR(KERNELS)
    model.learn_one(X[0], y[0])

    def work(lo):
        for i in range(lo, lo + 60):
            model.learn_one(X[i], y[i])
        model.partial_fit(X[lo:lo + 40], y[lo:lo + 40])

    threads = [threading.Thread(target=work, args=(1 + 100 * k,)) for k in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert model.n_samples_seen_ == 1 + 2 * 100
    assert model._engine.experts.n_support == model.n_samples_seen_
