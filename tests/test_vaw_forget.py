"""The forgetting factor of the VAW family (``forget`` = gamma < 1, discounted least squares):
the expert bank and the second level against a fresh NumPy solve of the discounted ridge, files
of the code before the parameter (forget = 1, to the bit), tracking a change of the law, and
save -> load -> continue."""
import io
from pathlib import Path

import numpy as np
import pytest

import fastomkl
from fastomkl import VAW, VAW2, Gaussian, Laplacian, TaylorAWV, VAWMeta
from fastomkl._core.combiners.meta import VAWCombiner
from fastomkl._core.engine import Engine
from fastomkl._core.experts.vaw import VAWExperts
from fastomkl._core.features.rff import RFFBank, transform_many
from fastomkl.compose import OnlineMKL, Part, RandomFeatures, SecondLevelVAW
from fastomkl.compose import VAWExperts as VAWExpertsPart
from helpers import ran_on_variant
from load_mutations import read, write
import test_common as common

DATA = Path(__file__).parent / "data"
OLD_FILES = ["vaw_ridge_refresh", "vaw2_auto", "vaw2_fixed", "vawmeta_vaw", "taylor_awv",
             "compose_vaw"]


def relative_error(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max()


def discounted_gram(Z, weights, gamma):
    """sum_s gamma^(n - s) w_s z_s z_s^T over the n rows of Z, computed afresh."""
    ages = gamma ** np.arange(len(Z) - 1, -1, -1) * weights
    return (Z * ages[:, None]).T @ Z


def discounted_targets(Z, weights, y, gamma):
    ages = gamma ** np.arange(len(Z) - 1, -1, -1) * weights
    return Z.T @ (ages * y)


# -- the expert bank ------------------------------------------------------------------------------
@pytest.mark.parametrize("lams", [(0.5,), (0.5, 0.02)])
@pytest.mark.parametrize("mode", ["vaw", "ridge"])
@pytest.mark.parametrize("gamma", [0.999, 0.99])
def test_experts_are_the_discounted_ridge(mode, gamma, lams):
    """After 10^4 importance-weighted updates P is (lam I + sum gamma^age w z z^T)^-1, and between
    two recomputations the ridge is lam gamma^k (k updates since the last), as documented; with a
    ridge per expert (a ridge ensemble on one kernel's features), each expert's own lam."""
    rng = np.random.default_rng(7)
    D, n = 16, 10_000
    Z = rng.standard_normal((n + 1, D))
    Z *= rng.uniform(0, 1, (n + 1, 1)) / np.linalg.norm(Z, axis=1, keepdims=True)
    y = Z[:, :3].sum(1) + 0.1 * rng.standard_normal(n + 1)
    w = rng.uniform(0.5, 2.0, n + 1)
    bank = VAWExperts(len(lams), D, lams, mode, forget=gamma, per_kernel=len(lams))
    R = bank.period
    assert R >= D and n % R == 0
    for t in range(n):
        for i in range(len(lams)):
            bank.learn_expert(i, Z[t], y[t], w[t])
        if t + 1 in (5, 999, 4321, n):
            k = (t + 1) % R
            for i, lam in enumerate(lams):
                S = lam * gamma ** k * np.eye(D) + discounted_gram(Z[:t + 1], w[:t + 1], gamma)
                b = discounted_targets(Z[:t + 1], w[:t + 1], y[:t + 1], gamma)
                assert relative_error(bank.inverse()[i], np.linalg.inv(S)) < 1e-9
                assert relative_error(bank.targets[i], b) < 1e-12
                z = Z[n]
                if mode == "ridge":
                    expected = z @ np.linalg.solve(S, b)
                else:
                    expected = z @ np.linalg.solve(gamma * S + np.outer(z, z), gamma * b)
                assert abs(bank.predict_expert(i, z) - expected) < 1e-9 * abs(expected)
    # after n updates, a multiple of the period: the ridge is lam itself
    for i, lam in enumerate(lams):
        fresh = np.linalg.inv(lam * np.eye(D) + discounted_gram(Z[:n], w[:n], gamma))
        assert relative_error(bank.inverse()[i], fresh) < 1e-9
        assert relative_error(bank.gram()[i], np.linalg.inv(fresh)) < 1e-9


@pytest.mark.parametrize("gamma", [0.3, 0.9, 0.99, 0.999, 0.9999, 1 - 1e-9])
@pytest.mark.parametrize("D", [1, 10, 100])
def test_the_period_keeps_the_ridge_within_its_bounds(gamma, D):
    """The ridge lam gamma^k, k < R, stays above lam / 2; R exceeds D only while it stays above
    0.99 lam; and R is the longest period with these properties."""
    R = VAWExperts(1, D, forget=gamma).period
    assert R >= 1 and (gamma ** R >= 0.5 or R == 1)
    assert R <= D or gamma ** R >= 0.99
    assert gamma ** (R + 1) < 0.5 or (R + 1 > D and gamma ** (R + 1) < 0.99)
    assert VAWCombiner(D, forget=gamma).period == R
    assert VAWExperts(1, D, refresh_every=2, forget=gamma).period == min(R, 2)


def test_experts_label_mean_is_discounted():
    gamma, D = 0.95, 4
    bank = VAWExperts(1, D, 1.0, "ridge", center=True, forget=gamma)
    rng = np.random.default_rng(1)
    y = np.r_[np.zeros(200), np.ones(200)]
    for t in range(len(y)):
        bank.learn_expert(0, rng.uniform(-0.5, 0.5, D), y[t])
    ages = gamma ** np.arange(len(y) - 1, -1, -1)
    assert abs(bank.offsets[0] - ages @ y / ages.sum()) < 1e-12
    assert bank.offsets[0] > 0.99          # the undiscounted mean would be 0.5


# -- the second level -----------------------------------------------------------------------------
def second_level_reference(E, y, lam, gamma, mode, R, scale_lam):
    """The discounted second-level VAW in NumPy: x_t = E[t]; the ridge is lam (lam s^2 with
    scale_lam, s the largest |y| so far) when P was last recomputed, gamma^k that k rounds later;
    recomputed every R rounds and, with scale_lam, when s grows."""
    n, N = E.shape
    out = np.empty(n)
    ridge, age, top = lam, 0, 0.0
    G, b = np.zeros((N, N)), np.zeros(N)
    for t in range(n):
        S = ridge * gamma ** age * np.eye(N) + G
        x = E[t]
        if mode == "ridge":
            out[t] = x @ np.linalg.solve(S, b)
        else:
            out[t] = x @ np.linalg.solve(gamma * S + np.outer(x, x), gamma * b)
        G, b = gamma * G + np.outer(x, x), gamma * b + y[t] * x
        if scale_lam and abs(y[t]) > top:
            top, ridge, age = abs(y[t]), lam * y[t] ** 2, 0
        else:
            age = (age + 1) % R
    G = discounted_gram(E, np.ones(n), gamma)
    return out, ridge * gamma ** age * np.eye(N) + G, ridge * np.eye(N) + G


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
@pytest.mark.parametrize("gamma", [0.999, 0.99])
@pytest.mark.parametrize("scale_lam", [False, True])
def test_second_level_is_the_discounted_ridge(mode, gamma, scale_lam):
    """VAWCombiner on the predictions of VAW experts on random features, 10^4 rounds, against
    the discounted ridge in NumPy (its inputs: the same experts run on their own)."""
    rng = np.random.default_rng(3)
    n, N, m, lam = 10_000, 4, 3, 0.3
    X = rng.uniform(-1, 1, (n, 2))
    y = 0.5 + 0.4 * np.sin(3 * X[:, 0]) * np.sign(np.arange(n) - n / 2)
    freqs = rng.standard_normal((N, m, 2)) * np.array([0.5, 1, 2, 4])[:, None, None]
    bank = RFFBank(freqs)
    combiner = VAWCombiner(N, lam, mode, scale_lam=scale_lam, forget=gamma)
    engine = Engine(bank, VAWExperts(N, 2 * m, 0.5, "ridge"), combiner, np.random.PCG64(0))
    out = np.empty(n)
    engine.predict_learn_many(X, y, out)
    F = np.empty((n, N, 2 * m))
    transform_many(bank, X, F)
    alone, E = VAWExperts(N, 2 * m, 0.5, "ridge"), np.empty((n, N))
    for t in range(n):
        for k in range(N):
            E[t, k] = alone.predict_expert(k, F[t, k])
            alone.learn_expert(k, F[t, k], y[t])
    expected, S, S_whole = second_level_reference(E, y, lam, gamma, mode, combiner.period,
                                                   scale_lam)
    assert relative_error(out, expected) < 1e-9
    assert relative_error(combiner.inverse(), np.linalg.inv(S)) < 1e-9
    if not scale_lam:                   # 10^4 rounds, a multiple of the period: the ridge is lam
        assert n % combiner.period == 0
        assert relative_error(combiner.inverse(), np.linalg.inv(S_whole)) < 1e-9


# -- forget = 1 is the code before the parameter --------------------------------------------------
# The files and their predictions were recorded with the AVX2 + FMA kernels ("v3"); the VAW
# kernels sum in another order on AVX-512, so the tests run under that variant.
RECORDED_VARIANT = "v3"


@pytest.mark.parametrize("name", OLD_FILES)
def test_files_before_the_parameter_load_and_predict_to_the_bit(name, request):
    if ran_on_variant(request, RECORDED_VARIANT):
        return
    stream = np.load(DATA / "vaw_stream.npz")
    model = fastomkl.load(DATA / f"{name}.npz")
    forgets = ([model.experts.forget, model.combiner.forget] if name == "compose_vaw"
               else [model.forget])
    assert forgets == [1.0] * len(forgets)
    values = model.predict_learn(stream["probe"], stream["probe_y"])
    np.testing.assert_array_equal(values, stream[f"predicted_{name}"])


@pytest.mark.parametrize("name", OLD_FILES)
def test_forget_one_learns_what_the_code_before_the_parameter_learnt(name, request):
    if ran_on_variant(request, RECORDED_VARIANT):
        return
    stream = np.load(DATA / "vaw_stream.npz")
    model = fastomkl.load(DATA / f"{name}.npz")
    fresh = type(model)(**model.get_params()).partial_fit(stream["X"], stream["y"])
    values = fresh.predict_learn(stream["probe"], stream["probe_y"])
    np.testing.assert_array_equal(values, stream[f"predicted_{name}"])


# -- tracking a change ----------------------------------------------------------------------------
def flipping_stream(n=3000, change=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3)) / np.sqrt(3)
    theta = np.array([1.0, -0.5, 0.8])
    sign = np.where(np.arange(n) < change, 1.0, -1.0)
    y = sign * (X @ theta) + 0.05 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("make", [
    lambda gamma: VAW(Gaussian(3.0), n_components=10, forget=gamma, random_state=0),
    lambda gamma: VAW2([Gaussian(1.0), Gaussian(3.0), Laplacian(3.0)], n_components=10,
                       forget=gamma, random_state=0)], ids=["VAW", "VAW2"])
def test_forgetting_follows_a_change_that_the_whole_past_hides(make):
    X, y = flipping_stream()
    errors = {}
    for gamma in (1.0, 0.99):
        errors[gamma] = (make(gamma).predict_learn(X, y) - y) ** 2
    before = errors[0.99][1500:2000].mean()
    after = {gamma: e[2500:3000].mean() for gamma, e in errors.items()}
    assert after[0.99] < 2.0 * before
    assert after[0.99] < 0.2 * after[1.0]


# -- persistence ----------------------------------------------------------------------------------
FORGETFUL = {
    "VAW": lambda: VAW(Gaussian(0.7), n_components=6, mode="ridge", refresh_every=5,
                       forget=0.99, random_state=1),
    "VAW2": lambda: VAW2([Gaussian(0.5), Laplacian(1.0)], n_components=6, forget=0.98,
                         random_state=2),
    "VAW2-fixed": lambda: VAW2([Gaussian(0.5), Laplacian(1.0)], n_components=6, lam_meta=1.0,
                               forget=0.98, random_state=2),
    "VAWMeta-vaw": lambda: VAWMeta([Gaussian(0.5), Laplacian(1.0)], meta="vaw",
                                   n_components=6, forget=0.98, random_state=4),
    "TaylorAWV": lambda: TaylorAWV(Gaussian(1.0), degree=2, forget=0.995),
    "OnlineMKL": lambda: OnlineMKL(RandomFeatures([Gaussian(0.5), Gaussian(2.0)], 4),
                                   VAWExpertsPart(forget=0.99), SecondLevelVAW(forget=0.9),
                                   random_state=3),
}


def _stream(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]


@pytest.mark.parametrize("name", sorted(FORGETFUL))
def test_save_load_continue_is_bit_identical(name, tmp_path):
    X, y = _stream(500, 5)
    model = FORGETFUL[name]().partial_fit(X[:333], y[:333])   # not at a recomputation
    model.save(tmp_path / "m.npz")
    back = fastomkl.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.predict_learn(X[333:], y[333:]),
                                  model.predict_learn(X[333:], y[333:]))
    state, state_back = model._engine.get_state(), back._engine.get_state()
    assert set(state) == set(state_back) and "experts.scale" in state
    assert "combiner.age" in state or name in ("VAW", "TaylorAWV")
    for key in state:
        np.testing.assert_array_equal(state[key], state_back[key], err_msg=key)


def _saved(model):
    buffer = io.BytesIO()
    model.save(buffer)
    return read(buffer.getvalue())


@pytest.mark.parametrize("value", [0.0, -1.0, 0.5, 1e3])
def test_a_file_with_a_tampered_multiplier_is_refused(value):
    X, y = _stream(60, 6)
    header, arrays = _saved(FORGETFUL["VAW"]().partial_fit(X[:-1], y[:-1]))
    assert (arrays["experts.scale"] > 1).all()          # between two recomputations
    arrays["experts.scale"] = np.full_like(arrays["experts.scale"], value)
    with pytest.raises(ValueError, match="scale"):
        fastomkl.load(io.BytesIO(write(header, arrays)))


@pytest.mark.parametrize("value", [0.0, 1.5, -0.5, 1.0, "0.9", None])
def test_a_file_with_a_tampered_forget_is_refused(value):
    X, y = _stream(60, 6)
    header, arrays = _saved(FORGETFUL["VAW2"]().partial_fit(X, y))
    header["params"]["forget"] = value        # 1.0: the state of a forgetting model is left over
    with pytest.raises(ValueError):
        fastomkl.load(io.BytesIO(write(header, arrays)))


def test_a_file_with_a_tampered_age_is_refused():
    X, y = _stream(60, 6)
    header, arrays = _saved(FORGETFUL["VAW2-fixed"]().partial_fit(X, y))
    arrays["combiner.age"] = np.full_like(arrays["combiner.age"], 10 ** 6)
    with pytest.raises(ValueError, match="age"):
        fastomkl.load(io.BytesIO(write(header, arrays)))


# -- the common contract, on the last test parameters of every model that can forget ------------
def _forgets(params) -> bool:
    parts = [params] + [value.get_params() for value in params.values() if isinstance(value, Part)]
    return any(part.get("forget", 1.0) < 1.0 for part in parts)


FORGETTING = [cls for cls in common.ESTIMATORS if _forgets(cls._unit_test_params()[-1])]


def test_every_model_with_forget_declares_a_test_setting_that_forgets():
    having = [cls for cls in common.ESTIMATORS if "forget" in cls._param_names()]
    assert having and set(having) <= set(FORGETTING)
    assert {fastomkl.OnlineMKL, fastomkl.VAW2, fastomkl.TaylorAWV} <= set(FORGETTING)


COMMON_CHECKS = ["test_save_and_load_continue_bit_identically",
                 "test_threads_see_only_round_boundaries_and_save_loadable_files",
                 "test_threads_starting_on_a_fresh_model_lose_no_update"]


@pytest.mark.parametrize("check", COMMON_CHECKS)
@pytest.mark.parametrize("cls", FORGETTING, ids=lambda cls: cls.__name__)
def test_the_common_contract_holds_while_forgetting(cls, check, monkeypatch):
    """The common suite's persistence and thread checks, run on the setting that forgets (the
    suite itself builds every model from its first setting)."""
    params = cls._unit_test_params()[-1]
    monkeypatch.setattr(common, "build", lambda cls, **extra: cls(**{**params, **extra}))
    getattr(common, check)(cls)
