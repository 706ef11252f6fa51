"""The compiled bandit samplers, experts and Tsallis normaliser against plain NumPy, same draws."""
import numpy as np
import pytest
from scipy.optimize import brentq

from fastomkl._core.experts.bandit import BanditExpansionExperts, BanditRFFExperts
from fastomkl._core.combiners.bandit import Exp3Sampler, TsallisSampler, solve_tsallis
from fastomkl._core.engine import Engine
from fastomkl._core.features.embedding import NullFeatures
from fastomkl._core.features.rff import RFFBank

import bandit_reference as ref

K, d, D, T = 6, 3, 10, 240
SIGMAS = 2.0 ** np.arange(-2, 4)
GAMMA = 1.0 / (2.0 * SIGMAS ** 2)
FIXED, NORM, OKSPP, ADAU = 0, 1, 2, 3


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    u = rng.standard_normal((D, d))
    freqs = np.stack([u / s for s in SIGMAS])          # one draw scaled per sigma
    X = rng.uniform(-1, 1, (T, d))
    y = np.clip(0.5 + 0.4 * np.sin(3 * X[:, 0]) * X[:, 1] + 0.05 * rng.standard_normal(T), 0, 1)
    labels = np.where(np.sin(3 * X[:, 0]) * X[:, 1] > 0, 1.0, -1.0)
    return freqs, X, y, labels


# (name, loss, step rule, expert kwargs, compiled sampler, reference sampler, reference steps kw)
def configs():
    return [
        ("oks-auto", 0, NORM, dict(scale=1.0, radius=0.0, project=False),
         lambda: Exp3Sampler(K, False, loss_scale=0.0), lambda: ref.OKS(K, ell_max=0.0),
         dict(rule="adagrad_norm", scale=1.0, U=0.0), False),
        ("oks-auto-logistic", 2, NORM, dict(scale=4.0, radius=0.0, project=False),
         lambda: Exp3Sampler(K, False, loss_scale=0.0), lambda: ref.OKS(K, ell_max=0.0),
         dict(rule="adagrad_norm", scale=4.0, U=0.0), False),
        ("oks-paper", 1, FIXED, dict(scale=0.02, radius=0.0, project=False),
         lambda: Exp3Sampler(K, False, loss_scale=1.0, horizon=T),
         lambda: ref.OKS(K, T=T, ell_max=1.0), dict(rule="fixed", scale=0.02, U=0.0), False),
        ("okspp-ftrl", 0, OKSPP, dict(radius=1.0, gc0=4.0),
         lambda: Exp3Sampler(K, True, gc0=4.0, radius=1.0), lambda: ref.OKSPlusPlus(K, 4.0, 1.0),
         dict(rule="okspp", U=1.0, gc0=4.0), True),
        ("okspp-omd-auto-U", 0, OKSPP, dict(radius=0.0, gc0=4.0),
         lambda: Exp3Sampler(K, True, gc0=4.0, radius=0.0, omd=True, loss=0),
         lambda: ref.OKSPlusPlus(K, 4.0, 0.0, omd=True, kind=0),
         dict(rule="okspp", U=0.0, gc0=4.0), True),
        ("okspp-logistic-tem1", 2, OKSPP, dict(radius=15.0, gc0=1.0, legacy_tem1=True),
         lambda: Exp3Sampler(K, True, gc0=1.0, radius=15.0, legacy_tem1=True),
         lambda: ref.OKSPlusPlus(K, 1.0, 15.0, tem1=True),
         dict(rule="okspp", U=15.0, gc0=1.0, tem1=True), True),
        ("ioks-absolute", 1, ADAU, dict(radius=1.0),
         lambda: TsallisSampler(K, radius=1.0, horizon=T), lambda: ref.IOKS(K, T=T),
         dict(rule="adagrad_u", U=1.0), True),
        ("ioks-square-bisection-raw-gt", 0, ADAU, dict(radius=1.0),
         lambda: TsallisSampler(K, radius=1.0, horizon=T, g1_kind=1, newton=False,
                                renormalize=False, ctilde_ge=False),
         lambda: ref.IOKS(K, T=T, square=True, ge=False, newton=False, renormalize=False),
         dict(rule="adagrad_u", U=1.0), True),
        ("ioks-doubling-auto", 2, ADAU, dict(radius=0.0),
         lambda: TsallisSampler(K, radius=0.0, loss_scale=0.0, loss=2),
         lambda: ref.IOKS(K, U=0.0, ell_max=0.0, kind=2), dict(rule="adagrad_u", U=0.0), True),
        ("ioks-absolute-auto", 1, ADAU, dict(radius=0.0),
         lambda: TsallisSampler(K, radius=0.0, loss_scale=0.0, loss=1),
         lambda: ref.IOKS(K, U=0.0, ell_max=0.0, kind=1), dict(rule="adagrad_u", U=0.0), True),
    ]


CONFIGS = {c[0]: c for c in configs()}


def _targets(data, loss):
    return data[3] if loss == 2 else data[2]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_random_feature_rounds_match_numpy(data, name):
    _, loss, rule, kw, make, make_ref, steps, project = CONFIGS[name]
    freqs, X, _, _ = data
    y = _targets(data, loss)
    kw = dict(kw)
    experts = BanditRFFExperts(K, 2 * D, loss, rule, **kw)
    sampler = make()
    engine = Engine(RFFBank(freqs), experts, sampler, np.random.PCG64(7))
    out = np.empty(T)
    engine.predict_learn_many(X, y, out)
    r_sampler = make_ref()
    r_experts = ref.RFExperts(freqs, ref.Steps(K, loss, **steps), project)
    r_out, chosen = ref.run(r_experts, r_sampler, X, y, 7)
    np.testing.assert_allclose(out, r_out, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(np.asarray(sampler.counts), np.bincount(chosen, minlength=K))
    np.testing.assert_allclose(np.asarray(sampler.p), r_sampler.p, rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.asarray(sampler.q), r_sampler.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.asarray(experts.w), r_experts.w, rtol=0, atol=1e-9)
    assert len(set(chosen)) > 1                        # the stream really samples


@pytest.mark.parametrize("name", ["oks-auto", "oks-auto-logistic", "okspp-ftrl", "ioks-absolute",
                                  "okspp-logistic-tem1", "okspp-omd-auto-U",
                                  "ioks-absolute-auto"])
def test_kernel_expansion_rounds_match_numpy(data, name):
    _, loss, rule, kw, make, make_ref, steps, project = CONFIGS[name]
    _, X, _, _ = data
    y = _targets(data, loss)
    n = 120
    experts = BanditExpansionExperts(GAMMA, d, loss, rule, **kw)
    sampler = make()
    engine = Engine(NullFeatures(K, d), experts, sampler, np.random.PCG64(3))
    out = np.empty(n)
    engine.predict_learn_many(X[:n], y[:n], out)
    r_sampler = make_ref()
    r_experts = ref.ExpansionExperts(GAMMA, ref.Steps(K, loss, **steps), project)
    r_out, chosen = ref.run(r_experts, r_sampler, X[:n], y[:n], 3)
    np.testing.assert_allclose(out, r_out, rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.asarray(sampler.p), r_sampler.p, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(np.asarray(experts.sizes), np.bincount(chosen, minlength=K))
    for k in range(K):
        np.testing.assert_allclose(np.sqrt(experts.norm2[k]), r_experts.norm(k), atol=1e-9)
        S, c = experts.coefficients(k)
        if len(c):
            np.testing.assert_allclose(c, r_experts.alpha[k], rtol=0, atol=1e-9)


def test_huge_radius_equals_the_unprojected_expansion(data):
    _, X, y, _ = data
    kw = dict(loss=0, rule=FIXED, scale=0.1)

    def run(project):
        experts = BanditExpansionExperts(GAMMA, d, radius=1e12, project=project, **kw)
        engine = Engine(NullFeatures(K, d), experts,
                                 TsallisSampler(K, radius=1.0, horizon=T), np.random.PCG64(1))
        out = np.empty(100)
        engine.predict_learn_many(X[:100], y[:100], out)
        return out, experts

    projected, experts = run(True)
    assert np.asarray(experts.mult).max() == 1.0       # the ball was never reached
    r_experts = ref.ExpansionExperts(GAMMA, ref.Steps(K, 0, "fixed", scale=0.1, U=1e12), False)
    r_out, _ = ref.run(r_experts, ref.IOKS(K, T=T), X[:100], y[:100], 1)
    np.testing.assert_allclose(projected, r_out, rtol=0, atol=1e-9)


# -- the Tsallis normaliser ----------------------------------------------------------------------
def _case(K, rng, scale, zero=False, tiny=False):
    q = rng.dirichlet(np.full(K, 0.3))
    if tiny:
        q[0] = 1e-14
        q /= q.sum()
    q = np.maximum(q, 1e-300)
    eta = rng.uniform(0.5, 2.0, K) * rng.choice([1e-3, 1e-2, 0.1])
    ct = np.zeros(K)
    if not zero:
        ct[rng.integers(K)] = scale
    return q, eta, ct


@pytest.mark.parametrize("K", [2, 6, 37, 1000])
@pytest.mark.parametrize("solver", ["newton", "bisection"])
def test_normaliser_matches_a_dense_root_finder(K, solver):
    rng = np.random.default_rng(K)
    for scale, tiny in [(0.3, False), (5.0, True), (1e6, False), (1e-9, False), (40.0, True)]:
        q, eta, ct = _case(K, rng, scale, tiny=tiny)
        q_next, mu, evals = solve_tsallis(q, eta, ct, tol=1e-13, max_iter=500,
                                          newton=solver == "newton", renormalize=False)
        b = q ** (-7 / 8) + eta * ct
        pole = (b / eta).min()
        F = lambda m: ((b - eta * m) ** (-8 / 7)).sum() - 1.0
        hi = min(ct.max(), pole * (1 - 1e-12))
        assert 0.0 <= mu <= hi                                   # mu* in its bracket
        if F(0.0) >= 0.0:                  # sum q = 1 up to rounding: the root is 0
            root = 0.0
        else:
            root = brentq(F, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
        slope = (8 / 7) * (eta * (b - eta * root) ** (-15 / 7)).sum()
        assert abs(mu - root) <= 1e-12 / slope + 1e-14 * max(1.0, root)
        assert abs(q_next.sum() - 1.0) <= 1e-12
        assert (q_next > 0).all()
        r_q, r_mu, r_evals = ref.normalise(q, eta, ct, tol=1e-13, max_iter=500,
                                           newton=solver == "newton", renormalize=False)
        assert r_evals == evals
        np.testing.assert_allclose(q_next, r_q, rtol=1e-9, atol=0)


def test_normaliser_zero_loss_and_renormalisation():
    rng = np.random.default_rng(0)
    q, eta, ct = _case(50, rng, 0.0, zero=True)
    q_next, mu, evals = solve_tsallis(q, eta, ct)
    assert mu == 0.0 and evals == 1
    np.testing.assert_allclose(q_next, q, rtol=1e-13)
    q, eta, ct = _case(50, rng, 2.0)
    exact, _, _ = solve_tsallis(q, eta, ct, tol=1e-14)
    i = int(np.argmax(ct))                 # the drawn kernel loses mass, every other gains
    assert exact[i] <= q[i] and (np.delete(exact, i) >= np.delete(q, i)).all()
    raw, _, _ = solve_tsallis(q, eta, ct, renormalize=False)
    renorm, _, _ = solve_tsallis(q, eta, ct)
    assert abs(raw.sum() - 1) <= 1e-5 and renorm.sum() == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(renorm, raw / raw.sum(), rtol=1e-15)


def test_newton_needs_fewer_evaluations_than_bisection():
    rng = np.random.default_rng(3)
    newton, bisect = [], []
    for _ in range(20):
        q, eta, ct = _case(100, rng, 1.0)
        newton.append(solve_tsallis(q, eta, ct, tol=1e-12)[2])
        bisect.append(solve_tsallis(q, eta, ct, tol=1e-12, newton=False)[2])
    assert np.mean(newton) < 0.5 * np.mean(bisect)


# -- invariants on a long stream -----------------------------------------------------------------
def test_ioks_invariants_on_a_long_stream(data):
    freqs, X, y, _ = data
    n = 3000
    rng = np.random.default_rng(1)
    Xl = rng.uniform(-1, 1, (n, d))
    yl = np.clip(0.5 + 0.4 * np.sin(3 * Xl[:, 0]) + 0.05 * rng.standard_normal(n), 0, 1)
    experts = BanditRFFExperts(K, 2 * D, 1, ADAU, radius=1.0)
    sampler = TsallisSampler(K, radius=1.0, horizon=n)
    engine = Engine(RFFBank(freqs), experts, sampler, np.random.PCG64(2))
    floor = n ** -0.75 / K
    mus = []
    for t in range(n):
        engine.predict_learn_one(Xl[t], yl[t])
        p = np.asarray(sampler.p)
        assert abs(p.sum() - 1.0) < 1e-12 and (p >= floor * (1 - 1e-12)).all()
        mu, ct = sampler.stats[6], sampler.stats[8]
        assert 0.0 <= mu <= ct
        mus.append(mu)
    assert np.abs(np.asarray(experts.w)).max() <= 1.0 / np.sqrt(D) + 1e-15
    base = sampler.stats[3]
    assert (np.asarray(sampler.eta) / base <= 2.06).all()
    assert (np.asarray(sampler.n_increases) <= 0.75 * np.log2(n) + 1).all()
    assert np.asarray(sampler.n_increases).max() >= 1 and max(mus) > 0


def test_expansion_norms_stay_in_the_ball(data):
    _, X, y, _ = data
    experts = BanditExpansionExperts(GAMMA, d, 0, OKSPP, radius=0.05, gc0=4.0)
    engine = Engine(NullFeatures(K, d), experts,
                             Exp3Sampler(K, True, gc0=4.0, radius=0.05), np.random.PCG64(4))
    out = np.empty(T)
    engine.predict_learn_many(X, y, out)
    assert np.asarray(experts.mult).min() < 1.0                 # the projection was active
    for k in range(K):
        S, c = experts.coefficients(k)
        if len(c):
            G = np.exp(-GAMMA[k] * ((S[:, None] - S[None]) ** 2).sum(-1))
            assert np.sqrt(c @ G @ c) <= 0.05 * (1 + 1e-9)
            assert np.sqrt(experts.norm2[k]) == pytest.approx(np.sqrt(c @ G @ c), rel=1e-9)


def test_okspp_with_a_constant_rate_omd_equals_ftrl(data):
    freqs, X, y, _ = data

    def run(omd):
        sampler = Exp3Sampler(K, True, gc0=4.0, radius=1.0, eta_fixed=0.3, omd=omd)
        engine = Engine(RFFBank(freqs), BanditRFFExperts(K, 2 * D, 0, OKSPP, radius=1.0, gc0=4.0),
                        sampler, np.random.PCG64(9))
        out = np.empty(T)
        engine.predict_learn_many(X, y, out)
        return out, np.asarray(sampler.q)

    (a, qa), (b, qb) = run(False), run(True)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    np.testing.assert_allclose(qa, qb, rtol=0, atol=1e-12)


def test_selection_frequencies_match_p(data):
    """Over a stream, kernel i is drawn sum_t p_{t,i} times in expectation (variance
    sum_t p(1 - p)): counts within 4 standard deviations, with a fixed seed."""
    freqs, _, _, _ = data
    n = 6000
    rng = np.random.default_rng(8)
    Xs = rng.uniform(-1, 1, (n, d))
    ys = np.clip(0.5 + 0.4 * np.sin(3 * Xs[:, 0]), 0, 1)
    sampler = Exp3Sampler(K, False, loss_scale=0.0)
    engine = Engine(RFFBank(freqs), BanditRFFExperts(K, 2 * D, 0, NORM, radius=0.0,
                                                     project=False), sampler, np.random.PCG64(5))
    mean, var = np.zeros(K), np.zeros(K)
    for t in range(n):
        p = np.array(sampler.p)
        mean += p
        var += p * (1 - p)
        engine.predict_learn_one(Xs[t], ys[t])
    counts = np.asarray(sampler.counts)
    assert np.ptp(mean) > 0.05 * n                               # p really moved
    assert (np.abs(counts - mean) <= 4 * np.sqrt(var)).all()


def test_scaled_bank_equals_the_bank_of_scaled_frequencies(data):
    from fastomkl._core.features.rff import SharedDrawRFFBank, transform_many
    freqs, X, _, _ = data
    base = freqs[0] * SIGMAS[0]
    scaled = SharedDrawRFFBank(base[None], np.zeros(len(SIGMAS), dtype=np.int64),
                               1.0 / np.asarray(SIGMAS))
    np.testing.assert_allclose(scaled.frequencies, freqs, rtol=1e-15)
    got, want = np.empty((T, K, 2 * D)), np.empty((T, K, 2 * D))
    transform_many(scaled, X, got)
    transform_many(RFFBank(freqs), X, want)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
