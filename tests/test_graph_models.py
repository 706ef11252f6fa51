"""The graph-aided estimators and the Table 1 baselines through the public API."""
import pickle

import numpy as np
import pytest

import fastomkl as fo
from fastomkl import Gaussian, Laplacian
from fastomkl.kernels import Polynomial
from fastomkl.graph_omkl import legacy_options
from fastomkl.omkr import omkr_legacy_dictionary

from helpers import state_bytes

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


# The paper's step, and the default (whose exponential weights take the rate of Raker's default).
COMPLETE_GRAPH_SETTINGS = [(dict(eta=0.1), dict(eta=0.1)),
                           (dict(eta_combiner=1.0, eta_schedule="constant"), dict(eta="auto"))]


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


def test_sfg_graph_attributes(stream):
    X, y = stream
    model = small(fo.OMKLSFG, M=3)
    model.partial_fit(X[:10], y[:10])
    A = model.graph_
    assert (A.sum(axis=1) == 3).all() and A.diagonal().all()
    assert A[model.dominating_set_].any(axis=0).all()
    r = small(fo.OMKLSFGR, M=2, top_k=2)
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
