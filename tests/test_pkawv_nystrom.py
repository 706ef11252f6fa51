"""Sequential Nystrom PKAWV with KORS (spec 002 §3.4-3.5, tests §9.2 items 3-6, 10)."""
import numpy as np
import pytest

from fastomkl import load
from fastomkl._validation import split_random_state
from fastomkl.pkawv import NystromAWV, NystromAWVClassifier
from fastomkl.kernels import Gaussian
from tests import pkawv_reference as ref


def data(n, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    return X, np.sin(3 * X[:, 0]) * np.cos(2 * X[:, -1]) + 0.1 * rng.normal(size=n)


def round_uniforms(seed, n):
    """The uniforms the model's KORS reads: its round stream, which nothing else draws from."""
    return np.random.Generator(split_random_state(seed)[1]).random(n)


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
@pytest.mark.parametrize("weights", ["sqrt", "inverse"])
def test_predictions_and_dictionary_equal_direct_solves(mode, weights):
    X, y = data(120)
    params = dict(lam=0.7, mu=0.05, beta=1.0, eps=0.5)
    model = NystromAWV(Gaussian(0.5), mode=mode, kors_weights=weights, random_state=3, standardize_target=False, **params)
    got = model.predict_learn(X, y)
    want, index, S = ref.nystrom_awv(X, y, weights=weights, uniforms=round_uniforms(3, 120),
                                     mode=mode, sigma=0.5, **params)
    np.testing.assert_array_equal(model.dictionary_, index)
    np.testing.assert_allclose(model._engine.experts.kors_weights, S, rtol=1e-9)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)   # y is O(1)
    assert 10 < len(index) < 120


def test_awv_is_shrunk_ridge_on_the_same_dictionary():
    X, y = data(80)
    paper = dict(lam=1.0, mu="auto")                    # the identity below has lam = 1
    awv = NystromAWV(mode="vaw", kernel=Gaussian(0.5), random_state=1, standardize_target=False,
                     **paper).predict_learn(X, y)
    model = NystromAWV(mode="ridge", kernel=Gaussian(0.5), random_state=1,
                       standardize_target=False, **paper)
    ridge = model.predict_learn(X, y)
    index = model.dictionary_
    lev = np.zeros(80)
    for t in range(80):
        C = X[index[index < t]]
        if len(C):
            Kp, a = ref.gaussian(X[:t], C, 0.5), ref.gaussian(X[t:t + 1], C, 0.5)[0]
            lev[t] = a @ np.linalg.solve(Kp.T @ Kp + ref.gaussian(C, C, 0.5), a)
    np.testing.assert_allclose(awv, ridge / (1 + lev), rtol=1e-10, atol=1e-13)


def factor_drift(model, X, lam, sigma):
    experts = model._engine.experts
    R, index = experts.factor(), model.dictionary_
    t = model.n_samples_seen_
    C = X[index]
    K = ref.gaussian(X[:t], C, sigma)
    M = K.T @ K + lam * ref.gaussian(C, C, sigma)
    fresh = np.linalg.cholesky(M).T
    return np.abs(R - fresh).max() / np.abs(fresh).max(), R, M


def test_maintained_factor_equals_a_fresh_factorisation_and_the_paper_append():
    # The difference of two factors is bounded by the condition number times the rounding: compare
    # factors on a well-conditioned run (mu = 1) and R^T R with M (backward error) on an
    # ill-conditioned one (cond(M) ~ 1e14, 525 centres).
    X, y = data(1500, d=3, seed=2)
    ill = NystromAWV(kernel=Gaussian(0.6), lam=1.0, mu=0.01, max_centres=None,
                     random_state=0).partial_fit(X, y)
    drift, R, M = factor_drift(ill, X, 1.0, 0.6)
    assert ill.n_centres_ > 500 and np.abs(R.T @ R - M).max() < 1e-12 * np.abs(M).max()
    model = NystromAWV(kernel=Gaussian(0.6), lam=1.0, mu=1.0, random_state=0).partial_fit(X, y)
    drift, R, M = factor_drift(model, X, 1.0, 0.6)
    assert model.n_centres_ > 100 and drift < 1e-8
    # the last append, redone by the paper's update + downdate of the zero-padded factor
    m = R.shape[0]
    paper = ref.append_by_update_downdate(R[:m - 1, :m - 1], M[:m - 1, m - 1], M[m - 1, m - 1])
    np.testing.assert_allclose(paper, R, rtol=1e-9, atol=1e-9)
    L = model._engine.experts.kors_factor()
    C, S = X[model.dictionary_], model._engine.experts.kors_weights
    kors = S[:, None] * ref.gaussian(C, C, 0.6) * S[None, :] + np.eye(m)
    np.testing.assert_allclose(L.T @ L, kors, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_factor_drift_after_ten_thousand_rounds():
    X, y = data(10 ** 4, d=3, seed=4)
    model = NystromAWV(kernel=Gaussian(0.6), lam=1.0, mu=1.0, random_state=0).partial_fit(X, y)
    drift, R, M = factor_drift(model, X, 1.0, 0.6)
    # backward error: R^T R against M after 10^4 row updates and ~450 appends; the forward
    # difference from a fresh factor is bounded by cond(M) (here ~1e14) times the rounding
    assert np.abs(R.T @ R - M).max() < 1e-12 * np.abs(M).max()
    assert drift < max(1e-8, 1e-15 * np.linalg.cond(M))


def test_kors_inclusion_frequency_matches_its_probability():
    # The first round's probability is min(beta (1 + eps) / (1 + mu), 1) (empty dictionary, k = 1);
    # the second point, identical to the first, has e = 1 - S^2 / (S^2 + mu) given the first.
    beta, eps, mu = 0.4, 0.5, 1.0
    p1 = beta * (1 + eps) / (1 + mu)
    X = np.zeros((2, 2))
    kept = np.array([NystromAWV(mu=mu, beta=beta, eps=eps, random_state=s).fit(X, [0.0, 0.0])
                     .dictionary_.tolist() for s in range(2000)], dtype=object)
    first = np.array([0 in k for k in kept]).mean()
    assert abs(first - p1) < 4 * np.sqrt(p1 * (1 - p1) / 2000)
    S2 = 1.0 / p1
    e = 1.0 - S2 / (S2 + mu)
    p2 = beta * (1 + eps) * e / (e + mu)
    second = np.array([1 in k for k in kept if 0 in k]).mean()
    n_first = sum(0 in k for k in kept)
    # a duplicate centre is refused by the dependence guard, so it is never kept
    assert second == 0.0 and p2 > 0.05 and n_first > 100


def test_determinism_persistence_and_no_global_rng(tmp_path):
    X, y = data(300, seed=5)
    state = np.random.get_state()[1].copy()
    a = NystromAWV(kernel=Gaussian(0.5), random_state=7).fit(X[:200], y[:200])
    b = NystromAWV(kernel=Gaussian(0.5), random_state=7).fit(X[:200], y[:200])
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    np.testing.assert_array_equal(a.dictionary_, b.dictionary_)
    a.save(tmp_path / "n.npz")
    c = load(tmp_path / "n.npz")
    np.testing.assert_array_equal(c.predict_learn(X[200:], y[200:]), a.predict_learn(X[200:], y[200:]))
    np.testing.assert_array_equal(c.dictionary_, a.dictionary_)


def test_crafted_state_is_a_value_error():
    X, y = data(60)
    model = NystromAWV(kernel=Gaussian(0.5), random_state=0).partial_fit(X, y)
    good = model._engine.get_state()
    before = model.predict(X)

    def crafted(name, change):
        state = {k: np.array(v, copy=True) for k, v in good.items()}
        state["experts." + name] = change(state["experts." + name])
        return state

    bad = [crafted("R", lambda R: R * np.where(np.eye(len(R)) > 0, -1.0, 1.0)),
           crafted("R", lambda R: R + np.tril(np.ones_like(R), -1)),
           crafted("L", lambda L: np.where(np.isfinite(L), np.nan, 0.0)),
           crafted("info", lambda i: i + np.array([0, 1])),
           crafted("index", lambda i: i[::-1].copy()),
           crafted("S", lambda s: s * 0.1),
           crafted("X", lambda X: X[:-1])]
    for state in bad:
        with pytest.raises(ValueError):
            model._engine.set_state(state)
    np.testing.assert_array_equal(model.predict(X), before)


def test_bad_input_leaves_the_model_unchanged_and_classifier_learns():
    X, y = data(100)
    model = NystromAWV(random_state=0).partial_fit(X, y)
    state = model._engine.get_state()
    with pytest.raises(ValueError):
        model.partial_fit(X, np.where(np.arange(100) == 50, np.nan, y))
    with pytest.raises(ValueError):
        model.learn_one([0.1, np.inf], 1.0)
    after = model._engine.get_state()
    for k in state:
        np.testing.assert_array_equal(after[k], state[k])
    for bad in ({"mu": 0.0}, {"kors_weights": "p"}, {"max_centres": 0}, {"eps": -1.0}):
        with pytest.raises(ValueError):
            NystromAWV(**bad).fit(X, y)
    labels = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    clf = NystromAWVClassifier(kernel=Gaussian(0.5), mu=0.1, random_state=0)
    online = clf.predict_learn(np.vstack([X, X, X]), np.tile(labels, 3))
    assert (online[200:] == labels).mean() > 0.85
    capped = NystromAWV(kernel=Gaussian(0.3), mu=1e-3, max_centres=5, random_state=0).partial_fit(X, y)
    assert capped.n_centres_ == 5


@pytest.mark.parametrize("make", [lambda: NystromAWV(kernel=Gaussian(0.4), mu=0.01, random_state=2),
                                  lambda: __import__("fastomkl").KernelAWV(kernel=Gaussian(0.4))])
def test_one_sample_at_a_time_equals_the_batch(make):
    # learn_one grows the arrays one round at a time, the batch doubles them between rounds
    X, y = data(150, seed=8)
    one, batch = make(), make()
    got = [one.predict_learn_one(x, v) for x, v in zip(X, y)]
    np.testing.assert_array_equal(got, batch.predict_learn(X, y))
    np.testing.assert_array_equal(one.predict(X), batch.predict(X))
    assert one.predict_one(X[0]) == batch.predict(X[:1])[0]


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_without_the_kernel_cache_the_same_model_in_less_memory(mode):
    """Recomputing K_{t,I} at each insertion gives the cached model's predictions and dictionary,
    and the state grows as t d + m^2 only (no t x m array)."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (400, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    cached = NystromAWV(kernel=Gaussian(0.5), mu=1e-2, mode=mode, cache_kernel=True, random_state=2)
    lean = NystromAWV(kernel=Gaussian(0.5), mu=1e-2, mode=mode, cache_kernel=False, random_state=2)
    np.testing.assert_allclose(lean.predict_learn(X, y), cached.predict_learn(X, y),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(lean.dictionary_, cached.dictionary_)
    t, m, d = 400, lean.n_centres_, 3
    assert m > 10
    state = lean._engine.experts.get_state()
    assert "K" not in state and cached._engine.experts.get_state()["K"].shape == (t, m)
    assert sum(a.size for a in state.values()) <= t * (d + 1) + 2 * m * m + m * (d + 4) + 8
