"""rng_protocol="legacy" on every random-feature model: the notebooks' frequencies, then their stream."""
import numpy as np
import pytest

import fastomkl
from fastomkl import (OMKLGF, OMKLSFG, OMKLSFGR, RFOMKR, VAW2, Cauchy, Gaussian, Laplacian, Raker,
                      RakerClassifier)
from fastomkl.features import legacy_frequencies
from helpers import state_bytes

KERNELS = [Gaussian(0.5), Laplacian(1.0), Gaussian(2.0)]
MODELS = [Raker, RakerClassifier, OMKLGF, OMKLSFG, OMKLSFGR, RFOMKR, VAW2]


def _notebook_stream_after_draws(kernels, m, d, seed):
    """np.random.seed(seed) and the notebooks' per-kernel blocks, on the global legacy stream."""
    saved = np.random.get_state()
    try:
        np.random.seed(seed)
        for k in kernels:
            np.random.randn(d, m) if type(k) is Gaussian else np.random.standard_cauchy((d, m))
        return np.random.get_state(legacy=False)
    finally:
        np.random.set_state(saved)


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_every_model_draws_the_notebook_frequencies(cls, stream):
    X, y = stream
    if cls is RakerClassifier:
        y = np.where(y > np.median(y), 1, -1)
    kw = {"M": 2} if cls in (OMKLGF, OMKLSFG, OMKLSFGR) else {}
    model = cls(KERNELS, n_components=6, rng_protocol="legacy", random_state=5, **kw)
    model.partial_fit(X[:20], y[:20])
    np.testing.assert_array_equal(model.features_.frequencies_,
                                  legacy_frequencies(KERNELS, 6, X.shape[1], 5))


def test_sampling_models_continue_the_stream_after_the_draws(stream):
    """OMKL-GF's per-round uniforms come from the same MT19937 stream, right after the draws."""
    X, _ = stream
    model = OMKLGF(KERNELS, n_components=6, M=2, rng_protocol="legacy", random_state=9)
    engine = model._engine_for(X.shape[1])               # built, no round run yet
    want = _notebook_stream_after_draws(KERNELS, 6, X.shape[1], 9)
    got = engine.rng_state
    assert got["bit_generator"] == "MT19937"
    assert got["state"]["pos"] == want["state"]["pos"]
    np.testing.assert_array_equal(got["state"]["key"], want["state"]["key"])


def test_default_protocol_is_unchanged(stream):
    X, y = stream
    a = Raker(KERNELS, n_components=6, random_state=5).partial_fit(X[:20], y[:20])
    b = Raker(KERNELS, n_components=6, rng_protocol="default", random_state=5)
    b.partial_fit(X[:20], y[:20])
    assert state_bytes(a) == state_bytes(b)
    assert not np.array_equal(a.features_.frequencies_,
                              legacy_frequencies(KERNELS, 6, X.shape[1], 5))


def test_save_load_continues_the_legacy_stream_bit_identically(tmp_path, stream):
    X, y = stream
    model = OMKLGF(KERNELS, n_components=6, M=2, rng_protocol="legacy", random_state=2)
    model.partial_fit(X[:100], y[:100])
    model.save(tmp_path / "gf.npz")
    loaded = fastomkl.load(tmp_path / "gf.npz")
    assert state_bytes(loaded) == state_bytes(model)
    np.testing.assert_array_equal(loaded.predict_learn(X[100:], y[100:]),
                                  model.predict_learn(X[100:], y[100:]))


@pytest.mark.parametrize("kwargs, match", [
    (dict(rng_protocol="legacy"), "random_state"),
    (dict(rng_protocol="legacy", random_state=np.random.default_rng(0)), "random_state"),
    (dict(rng_protocol="legacy", random_state=1, shared_draw=True), "shared_draw"),
    (dict(rng_protocol="numpy", random_state=1), "rng_protocol"),
])
def test_bad_settings_are_refused_before_anything_changes(kwargs, match, stream):
    X, y = stream
    model = Raker(KERNELS, n_components=4, **kwargs)
    with pytest.raises(ValueError, match=match):
        model.partial_fit(X[:5], y[:5])
    assert model._engine is None


def test_legacy_knows_gaussian_and_laplacian_only(stream):
    X, y = stream
    with pytest.raises(ValueError, match="Gaussian and Laplacian"):
        Raker([Cauchy(1.0)], n_components=4, rng_protocol="legacy", random_state=0).partial_fit(
            X[:5], y[:5])


@pytest.mark.parametrize("change, match", [
    (dict(rng_protocol="legacy", kernels=[Cauchy(1.0)]), "Gaussian and Laplacian"),
    (dict(rng_protocol="legacy", random_state=2 ** 32), "<= 4294967295"),
])
def test_set_params_refuses_a_legacy_setting_it_could_not_draw(change, match, stream):
    """Refused at set_params, so a later fit cannot wipe a fitted model before failing."""
    X, y = stream
    model = Raker(KERNELS, n_components=4, random_state=0).partial_fit(X[:10], y[:10])
    before = state_bytes(model)
    with pytest.raises(ValueError, match=match):
        model.set_params(**change)
    assert model.get_params()["rng_protocol"] == "default"
    assert state_bytes(model) == before
