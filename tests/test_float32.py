"""dtype="float32" random features: the float sine-cosine, the float projection, and the models.

A float32 bank stores the float64 draws rounded to nearest, rounds x to float, projects and takes
sines and cosines in float, and widens the features to float64.  Each test checks it against a
float64 NumPy computation on the same rounded frequencies, with an error bound derived from float
rounding (u = 2^-24), or against the float64 model of the same seed.
tests/test_isa_variants.py runs this file again under every instruction-set variant.
"""
import inspect
import io
import warnings

import numpy as np
import pytest

import fastomkl
from fastomkl import Gaussian, Laplacian
from fastomkl._core.features.rff import FLOAT32_ANGLE_LIMIT, RFFBank, SharedDrawRFFBank, _sincos, transform_many
from fastomkl._estimator import OnlineEstimator
from reference import NumpyRaker

U = 2.0 ** -24               # float's unit roundoff
LIMIT = 8192.0               # beyond it, lanes are recomputed in double (src_c/fastomkl_sincos.h)
RF_ESTIMATORS = [getattr(fastomkl, name) for name in fastomkl.__all__
                 if isinstance(getattr(fastomkl, name), type)
                 and issubclass(getattr(fastomkl, name), OnlineEstimator)
                 and "shared_draw" in getattr(fastomkl, name)._param_names()]


def float_edge_cases():
    k = np.arange(-3000, 3001)
    near_zeros = np.concatenate([k * (np.pi / 4), (np.arange(1, 200) * 37.0) * (np.pi / 2)])
    one_side = np.concatenate([[LIMIT, np.nextafter(np.float32(LIMIT), np.float32(0)),
                                np.nextafter(np.float32(LIMIT), np.float32(np.inf)), 1e5, 1e20,
                                3.4e38, 0.0, 1e-30, 1e-8, 1e-3], near_zeros])
    return np.concatenate([one_side, -one_side]).astype(np.float32)


def assert_float_close(x, got, want):
    """Within 2 ulp of float, or 2e-10 absolute where the function is within 1e-3 of a zero (the
    reduction's absolute error, |k| times the rounding of the last part of pi/2)."""
    err = np.abs(got.astype(np.float64) - want)
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    bad = (err > 2 * ulp) & ~((np.abs(want) < 1e-3) & (err <= 2e-10))
    assert not bad.any(), f"x = {x[bad][:5]}: got {got[bad][:5]}, want {want[bad][:5]}"


@pytest.mark.parametrize("points", ["uniform", "edges"])
def test_float_sincos_against_double(points):
    x = (np.random.default_rng(0).uniform(-2e3, 2e3, 10 ** 6).astype(np.float32)
         if points == "uniform" else float_edge_cases())
    s, c = _sincos(x, "float32")
    assert s.dtype == c.dtype == np.float32
    assert_float_close(x, s, np.sin(x.astype(np.float64)))
    assert_float_close(x, c, np.cos(x.astype(np.float64)))


@pytest.mark.parametrize("n", [0, 1, 3, 15, 16, 17, 33])
def test_float_sincos_every_length(n):
    x = np.linspace(-7.0, 11.0, n).astype(np.float32)
    s, c = _sincos(x, "float32")
    assert s.shape == (n,)
    assert_float_close(x, s, np.sin(x.astype(np.float64)))
    assert_float_close(x, c, np.cos(x.astype(np.float64)))


def float_features(W, X, factor=1.0):
    """(features of the float32-rounded W and X computed in double, the error bound of the float
    path): the projection's rounding is at most d u sum_l |x_l w_l| (recursive summation of
    rounded products), the factor's and the sine-cosine's a few u more."""
    W32 = W.astype(np.float32).astype(np.float64)             # (n, D, d)
    X32 = X.astype(np.float32).astype(np.float64)
    d, D = W.shape[2], W.shape[1]
    angle = factor * np.einsum("kjl,il->ikj", W32, X32)
    spread = factor * np.einsum("kjl,il->ikj", np.abs(W32), np.abs(X32))
    bound = ((d + 2) * U * spread + 3 * U * np.abs(angle) + 4 * U) / np.sqrt(D)
    want = np.concatenate([np.cos(angle), np.sin(angle)], axis=2) / np.sqrt(D)
    return want, np.concatenate([bound, bound], axis=2)


@pytest.mark.parametrize("D", [1, 15, 16, 50, 65])
def test_float32_bank_against_numpy(D):
    rng = np.random.default_rng(D)
    W, X = rng.normal(size=(3, D, 7)) * 2.0, rng.uniform(-1, 1, (40, 7))
    bank = RFFBank(W, "float32")
    out = np.empty((40, 3, 2 * D))
    transform_many(bank, X, out)
    want, bound = float_features(W, X)
    assert np.all(np.abs(out - want) <= bound)
    assert bank.dtype == "float32" and bank.float32_kernels.all()
    np.testing.assert_array_equal(bank.frequencies, W.astype(np.float32).astype(np.float64))


def test_float32_shared_draw_against_numpy_and_its_own_direct_path():
    rng = np.random.default_rng(7)
    base, X = rng.normal(size=(2, 50, 6)), rng.uniform(-1, 1, (30, 6))
    family, scale = np.array([0, 1, 0, 1, 0]), np.array([4.0, 0.5, 1.0, 2.0, 0.25])
    bank = SharedDrawRFFBank(base, family, scale, dtype="float32")
    prepared, direct = np.empty((30, 5, 100)), np.empty((30, 5, 100))
    transform_many(bank, X, prepared)
    transform_many(bank, X, direct, prepared=False)
    np.testing.assert_array_equal(prepared, direct)      # one kernel, the same bits on every path
    for k in range(5):
        want, bound = float_features(base[family[k]][None], X, np.float32(scale[k]))
        assert np.all(np.abs(prepared[:, k] - want[:, 0]) <= 2 * bound[:, 0])


def _row_norm_limit_cases(d=5, D=12):
    """Frequencies of four kernels whose largest row norm is: well inside the limit, exactly on
    it, just beyond it, far beyond it (a narrow kernel)."""
    rng = np.random.default_rng(11)
    W = rng.normal(size=(4, D, d))
    W /= np.linalg.norm(W, axis=2).max(axis=1)[:, None, None]           # largest row norm 1
    W *= np.array([0.25, 1.0, 1.0, 1e3])[:, None, None] * FLOAT32_ANGLE_LIMIT
    W[2] *= np.float32(1.0) + np.float32(2.0 ** -20)
    W[1] = W[1].astype(np.float32)                 # its rounding must not push it beyond
    W[1] /= np.linalg.norm(W[1], axis=1).max() / FLOAT32_ANGLE_LIMIT
    return W


def test_kernels_whose_angles_could_reach_far_keep_float64():
    """A float32 bank rounds a kernel's frequencies to float only while its angles |w x| stay
    within FLOAT32_ANGLE_LIMIT over the unit ball (its largest row norm); the others compute
    exactly as a float64 bank does, bit for bit."""
    W = _row_norm_limit_cases()
    norms = np.linalg.norm(W, axis=2).max(axis=1)
    bank, exact = RFFBank(W, "float32"), RFFBank(W)
    np.testing.assert_array_equal(bank.float32_kernels, norms <= FLOAT32_ANGLE_LIMIT)
    assert bank.float32_kernels.tolist() == [True, True, False, False]
    assert not exact.float32_kernels.any()
    X = np.random.default_rng(12).normal(size=(30, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    out, want64 = np.empty((30, 4, 24)), np.empty((30, 4, 24))
    transform_many(bank, X, out)
    transform_many(exact, X, want64)
    np.testing.assert_array_equal(out[:, 2:], want64[:, 2:])
    want, bound = float_features(W[:2], X)
    assert np.all(np.abs(out[:, :2] - want) <= bound)
    stored = np.asarray(bank.frequencies)
    np.testing.assert_array_equal(stored[:2], W[:2].astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(stored[2:], W[2:])
    # two kernels' rows in float (16 floats each), two in double (16 doubles each)
    assert bank.stored_bytes == 2 * 5 * 16 * 4 + 2 * 5 * 16 * 8


def test_a_shared_draw_computes_each_kernel_in_the_precision_its_angles_allow():
    """Per kernel, as without a shared draw: kernel k's angles are bounded by scale[k] times its
    base's largest row norm.  A family with float and double kernels keeps its base in both
    precisions, so its float kernels get the float features of the rounded base (as in an
    all-float bank) and its double kernels the float64 bank's bits."""
    rng = np.random.default_rng(13)
    base = rng.normal(size=(2, 20, 4))
    base /= np.linalg.norm(base, axis=2).max(axis=1)[:, None, None]      # largest row norm 1
    family = np.array([0, 0, 1, 1])
    scale = np.array([0.25, 0.5, 1.0, FLOAT32_ANGLE_LIMIT]) * FLOAT32_ANGLE_LIMIT
    bank = SharedDrawRFFBank(base, family, scale, dtype="float32")
    exact = SharedDrawRFFBank(base, family, scale)
    assert bank.float32_kernels.tolist() == [True, True, True, False]
    assert not exact.float32_kernels.any()
    floats, doubles = bank.stored
    assert floats.shape[0] == 2 and doubles.shape[0] == 1          # family 1 in both
    X = rng.uniform(-0.5, 0.5, (25, 4))
    out, direct, want64 = np.empty((25, 4, 40)), np.empty((25, 4, 40)), np.empty((25, 4, 40))
    transform_many(bank, X, out)
    transform_many(bank, X, direct, prepared=False)
    transform_many(exact, X, want64)
    np.testing.assert_array_equal(out, direct)
    np.testing.assert_array_equal(out[:, 3], want64[:, 3])
    for k in range(3):
        want, bound = float_features(base[family[k]][None], X, np.float32(scale[k]))
        assert np.all(np.abs(out[:, k] - want[:, 0]) <= 2 * bound[:, 0])
    # the public base: family 0 as stored (float only), family 1 exact (kept in double too)
    stored_base = np.stack([base[0].astype(np.float32).astype(np.float64), base[1]])
    np.testing.assert_array_equal(bank.frequencies,
                                  stored_base[family] * scale[:, None, None])


def test_inputs_that_could_overflow_float_take_the_double_path():
    """|x| up to 1e150 is accepted: the float path would overflow (3.4e38), so such a sample is
    projected in double from the float32 frequencies (d = 1: one exact product, as in NumPy)."""
    D = 20
    w = np.geomspace(1e-3, FLOAT32_ANGLE_LIMIT, D) * np.where(np.arange(D) % 2 == 0, -1.0, 1.0)
    for bank in (RFFBank(w.reshape(1, D, 1), "float32"),
                 SharedDrawRFFBank(w.reshape(1, D, 1), np.array([0]), np.array([1.0]),
                                   dtype="float32")):
        assert bank.float32_kernels.all()
        X = np.array([[1e36], [1e150], [-3e38], [0.5]])
        out = np.empty((4, 1, 2 * D))
        transform_many(bank, X, out)
        proj = X * w.astype(np.float32).astype(np.float64)
        want = np.concatenate([np.cos(proj), np.sin(proj)], axis=1) / np.sqrt(D)
        assert np.all(np.isfinite(out))
        np.testing.assert_allclose(out[:3, 0], want[:3], rtol=0, atol=1e-15)
        np.testing.assert_allclose(out[3, 0], want[3], rtol=0, atol=1e-6)


def shipped(name, n):
    X, y = fastomkl.load_dataset(name)
    from fastomkl.datasets import scale_to_unit_ball, scale_to_unit_interval
    order = np.random.default_rng(0).permutation(len(y))[:n]
    return scale_to_unit_ball(X[order]), scale_to_unit_interval(y)[order]


def naval(n=400):
    return shipped("naval", n)


def test_float32_raker_against_the_numpy_step_on_its_frequencies():
    X, y = naval(300)
    kernels = [Gaussian(s) for s in (0.3, 1.0, 3.0)] + [Laplacian(1.0)]
    model = fastomkl.Raker(kernels, n_components=30, eta="auto", random_state=0,
                           dtype="float32")
    model.learn_one(X[0], y[0])
    ref = NumpyRaker(model.features_.frequencies_, eta="auto")
    ref.predict_learn_one(X[0], y[0])
    got = np.array([model.predict_learn_one(x, t) for x, t in zip(X[1:], y[1:])])
    want = np.array([ref.predict_learn_one(x, t) for x, t in zip(X[1:], y[1:])])
    assert np.abs(got - want).max() <= 1e-5 * np.sqrt(np.mean(want ** 2))


@pytest.mark.parametrize("cls, params, data", [
    (fastomkl.Raker, {}, "naval"), (fastomkl.Raker, {"shared_draw": True}, "naval"),
    (fastomkl.Raker, {}, "casp"), (fastomkl.VAW2, {}, "casp"), (fastomkl.VAW2, {}, "airfoil")])
def test_float32_model_agrees_with_float64(cls, params, data):
    """The acceptance figure on shipped data sets (casp: where VAW2's ridge solves amplify
    rounding most): predictions within 1e-5 of the float64 model's scale, the prequential MSE
    within 0.5%."""
    X, y = shipped(data, 600)
    models = {dt: cls(n_components=50, random_state=3, dtype=dt, **params)
              for dt in ("float64", "float32")}
    pred = {dt: m.predict_learn(X, y) for dt, m in models.items()}
    a, b = pred["float64"], pred["float32"]
    assert np.abs(a - b).max() <= 1e-5 * np.sqrt(np.mean(a ** 2))
    mse64, mse32 = np.mean((a - y) ** 2), np.mean((b - y) ** 2)
    assert abs(mse32 / mse64 - 1) < 5e-3


@pytest.mark.parametrize("cls", RF_ESTIMATORS, ids=lambda c: c.__name__)
def test_every_random_feature_model_runs_in_float32_and_keeps_it_through_save(cls):
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (40, 3))
    y = X[:, 0] > 0 if hasattr(cls, "predict_proba") or "Classifier" in cls.__name__ \
        else np.sin(3 * X[:, 0])
    params = dict(kernels=[Gaussian(0.5), Gaussian(2.0)], n_components=8, random_state=0,
                  dtype="float32")
    if "M" in inspect.signature(cls).parameters:
        params["M"] = 2
    model = cls(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastomkl.NumericalWarning)
        model.fit(X, y)
    assert model.features_.dtype == "float32"
    state = model._fitted_engine().get_state()
    sets = [v for k, v in state.items() if k in ("features.weights", "features.base",
                                                  "features.inner_weights", "features.inner_base")]
    precision = [v for k, v in state.items() if k.endswith("in_float32")]
    assert len(sets) == len(precision) == 1 and precision[0].all()      # both kernels are wide
    np.testing.assert_array_equal(sets[0], sets[0].astype(np.float32))
    out = io.BytesIO()
    model.save(out)
    loaded = fastomkl.load(io.BytesIO(out.getvalue()))
    assert loaded.dtype == "float32"
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def _mixed_raker(X, y, **params):
    """A float32 Raker with one wide and one narrow kernel (float32 and float64 sets)."""
    model = fastomkl.Raker([Gaussian(1.0), Laplacian(0.01)], n_components=20, random_state=0,
                           dtype="float32", **params).fit(X, y)
    assert model.features_.float32_kernels_.tolist() == [True, False]
    return model


@pytest.mark.parametrize("shared_draw", [False, True])
def test_a_mixed_precision_model_saves_and_loads_its_partition(shared_draw):
    X, y = naval(80)
    model = _mixed_raker(X, y, shared_draw=shared_draw)
    out = io.BytesIO()
    model.save(out)
    loaded = fastomkl.load(io.BytesIO(out.getvalue()))
    np.testing.assert_array_equal(loaded._fitted_engine().features.float32_kernels,
                                  model._fitted_engine().features.float32_kernels)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    # a fresh model of another seed takes the file's partition, not its own draw's
    fresh = type(model)(**{**model.get_params(), "random_state": 5})
    fresh._engine_for(X.shape[1]).set_state(model._fitted_engine().get_state())
    np.testing.assert_array_equal(fresh.predict(X), model.predict(X))


def test_files_written_when_every_float32_set_was_float_load_as_such():
    """Before a float32 bank could keep sets in float64 it stored all of them rounded to float32
    ('weights' float32, no 'in_float32'): such a state loads with every set in float and predicts
    what a bank of those float32 frequencies predicts."""
    X, y = naval(80)
    model = _mixed_raker(X, y)
    state = model._fitted_engine().get_state()
    old = {k: v for k, v in state.items() if k != "features.in_float32"}
    old["features.weights"] = state["features.weights"].astype(np.float32)
    engine = model._fitted_engine()
    engine.set_state(old)
    assert engine.features.float32_kernels.all()
    bank = engine.features
    out, want = np.empty((len(X), 2, 40)), np.empty((len(X), 2, 40))
    transform_many(bank, X, out)
    transform_many(RFFBank(old["features.weights"].transpose(0, 2, 1), "float32"), X, want)
    np.testing.assert_array_equal(out[:, 0], want[:, 0])


def test_a_float32_set_holding_values_float_cannot_represent_is_refused():
    X, y = naval(80)
    model = _mixed_raker(X, y)
    engine = model._fitted_engine()
    before = engine.get_state()
    for edit in ("value", "mark"):
        state = {k: v.copy() for k, v in before.items()}
        if edit == "value":
            state["features.weights"][0, 0, 0] += 1e-12
        else:
            state["features.in_float32"][1] = True           # the Laplacian's double values
        with pytest.raises(ValueError, match="float32 values"):
            engine.set_state(state)
        after = engine.get_state()
        assert all(np.array_equal(before[k], after[k]) for k in before)
    np.testing.assert_array_equal(model.predict(X), _mixed_raker(X, y).predict(X))


def test_a_float64_state_does_not_load_into_a_float32_model():
    X, y = naval(50)
    a = fastomkl.Raker(n_components=8, random_state=0).fit(X, y)
    b = fastomkl.Raker(n_components=8, random_state=0, dtype="float32").fit(X, y)
    before = b._fitted_engine().get_state()
    with pytest.raises(ValueError, match="float32"):
        b._fitted_engine().set_state(a._fitted_engine().get_state())
    after = b._fitted_engine().get_state()
    assert all(np.array_equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("dtype", ["float16", np.float32, "double", None])
def test_an_unknown_dtype_is_refused_by_name(dtype):
    X, y = naval(20)
    model = fastomkl.Raker(n_components=4, dtype=dtype)
    with pytest.raises(ValueError, match="dtype"):
        model.fit(X, y)
    assert not hasattr(model, "n_features_in_")
    with pytest.raises(ValueError, match="dtype"):
        fastomkl.RandomFourierFeatures([Gaussian(1.0)], dtype=dtype).fit(X)


def test_dsg_float32_rows_that_could_overflow_are_projected_in_double():
    """DoublySGD's float32 path (sgemm) would overflow on |x| near 1e38: those rows take the
    float64 projection, so they predict what the float64 model predicts (up to the coefficients
    the two learnt in float and in double)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (30, 3))
    models = [fastomkl.DoublySGDRegressor(random_state=0, dtype=dt).fit(X, X[:, 0])
              for dt in ("float64", "float32")]
    huge = np.array([[0.0, 0.0, 2.3e38], [1e150, -1e150, 0.0], [0.1, 3e38, -3e38]])
    a, b = (m.predict(huge) for m in models)
    assert np.all(np.isfinite(b))
    np.testing.assert_allclose(b, a, rtol=1e-5)
