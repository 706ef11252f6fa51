"""Every public input path of every public estimator, fed random values, dtypes and shapes.

Properties: a call either succeeds with finite output or raises ValueError, and a refused call
leaves the model bit-identical; accepted extreme inputs (+-MAX_ABS_INPUT) keep predictions and
state finite.  The estimators are found through ``fastomkl.__all__``, so new ones are covered.
"""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import fastomkl
from fastomkl import MAX_ABS_INPUT, OnlineKernelRegressor
from fastomkl.kernels import Polynomial
from fastomkl._estimator import OnlineEstimator
from helpers import state_bytes

N_FEATURES = 3
ESTIMATORS = [getattr(fastomkl, name) for name in fastomkl.__all__
              if isinstance(getattr(fastomkl, name), type)
              and issubclass(getattr(fastomkl, name), OnlineEstimator)]


def small(cls, **extra):
    """cls built with the small parameters it declares for the tests (``_unit_test_params``)."""
    return cls(**{**cls._unit_test_params()[0], **extra})


# float32 models compute in float until an input could overflow it: every one is tried too
FLOAT32 = [cls for cls in ESTIMATORS if "dtype" in cls._param_names()]
FACTORIES = [lambda cls=cls: small(cls) for cls in ESTIMATORS] + [
    lambda: OnlineKernelRegressor(Polynomial(3, 1.0, 1.0))] + [
    lambda cls=cls: small(cls, dtype="float32") for cls in FLOAT32]
NAMES = ([cls.__name__ for cls in ESTIMATORS] + ["OnlineKernelRegressor-poly"]
         + [cls.__name__ + "-float32" for cls in FLOAT32])
EXTREME_CASES = [pytest.param(factory, id=name) for factory, name in zip(FACTORIES, NAMES)]

_rng = np.random.default_rng(0)
TRAIN_X = _rng.uniform(-1, 1, size=(8, N_FEATURES))
TRAIN_Y = TRAIN_X.sum(1)


def is_classifier(model) -> bool:
    return hasattr(model, "decision_function")


def trained(factory):
    model = factory()
    y = TRAIN_Y > 0 if is_classifier(model) else TRAIN_Y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastomkl.NumericalWarning)
        return model.fit(TRAIN_X, y)


def snapshot(model) -> dict:
    out = state_bytes(model)
    out["n_features_in_"] = repr(getattr(model, "n_features_in_", None))
    out["names"] = repr(model.__dict__.get("_feature_names"))
    out["codes"] = repr(model.__dict__.get("_codes"))
    return out


class FloatLike:
    def __float__(self):
        return 0.25

    def __repr__(self):
        return "FloatLike()"


BOUNDARY = [MAX_ABS_INPUT, -MAX_ABS_INPUT, np.nextafter(MAX_ABS_INPUT, np.inf), -0.0, 0.0, 5e-324,
            1e-300, 10 ** 400, -(10 ** 400), 2 ** 63, np.float32(3.0), np.int64(-2), np.bool_(True)]
scalars = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-2.0, 2.0),
    st.sampled_from(BOUNDARY),
    st.integers(-(10 ** 400), 10 ** 400),
    st.booleans(),
    st.sampled_from(["1.0", "a", "", b"1", None, FloatLike(), 1 + 2j, (1.0,), [1.0], {"a": 1}]),
)
DTYPES = [np.float64, np.float32, np.float16, np.int64, np.bool_, object, np.complex128]


@st.composite
def arrays(draw, shape):
    values = draw(st.lists(st.one_of(st.floats(-3, 3), scalars), min_size=int(np.prod(shape)),
                           max_size=int(np.prod(shape))))
    dtype = draw(st.sampled_from(DTYPES))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arr = np.empty(int(np.prod(shape)), dtype=dtype)
            arr[:] = values if dtype is object else [v for v in values]
    except (TypeError, ValueError, OverflowError):
        arr = np.array(values, dtype=object) if values else np.empty(0, dtype=object)
    return arr.reshape(shape)


samples = st.one_of(
    st.lists(st.one_of(st.floats(-3, 3), scalars), min_size=N_FEATURES, max_size=N_FEATURES),
    st.lists(st.floats(-3, 3), min_size=0, max_size=5).map(tuple),
    st.lists(st.floats(-3, 3), min_size=N_FEATURES, max_size=N_FEATURES),
    st.sampled_from([(N_FEATURES,), (2, N_FEATURES), (), (N_FEATURES + 1,)]).flatmap(arrays),
    st.dictionaries(st.integers(0, 3), st.one_of(st.floats(-3, 3), scalars), max_size=4),
    scalars,
)
batches = st.one_of(
    st.sampled_from([(2, N_FEATURES), (1, N_FEATURES), (0, N_FEATURES), (2, 2), (N_FEATURES,),
                     (1, 1, N_FEATURES)]).flatmap(arrays),
    st.lists(st.lists(st.one_of(st.floats(-3, 3), scalars), min_size=N_FEATURES,
                      max_size=N_FEATURES), min_size=1, max_size=3),
    scalars,
)
extreme_floats = st.one_of(st.floats(-MAX_ABS_INPUT, MAX_ABS_INPUT), st.floats(-3, 3),
                           st.sampled_from([MAX_ABS_INPUT, -MAX_ABS_INPUT, -0.0, 5e-324]))


@st.composite
def plausible_pairs(draw):
    """(X, y) that are mostly acceptable: right width, real values up to the boundary, matching
    lengths, targets a regressor or a classifier takes (0/1)."""
    n = draw(st.integers(1, 4))
    X = np.array(draw(st.lists(st.lists(extreme_floats, min_size=N_FEATURES,
                                        max_size=N_FEATURES), min_size=n, max_size=n)))
    with np.errstate(over="ignore"):        # float32 turns the boundary into inf: refused
        X = X.astype(draw(st.sampled_from([np.float64, np.float32, object])))
    y = draw(st.one_of(st.lists(st.integers(0, 1), min_size=n, max_size=n),
                       st.lists(extreme_floats, min_size=n, max_size=n)))
    return X, y


targets = st.one_of(st.floats(-3, 3), st.integers(-1, 1), st.sampled_from(["a", "b"]), scalars)
target_batches = st.one_of(
    st.lists(targets, min_size=0, max_size=3),
    st.integers(0, 3).flatmap(lambda n: arrays((n,))),
    scalars,
)


def one_sample_calls(model):
    calls = {"predict_one": lambda d: model.predict_one(d.draw(samples)),
             "learn_one": lambda d: model.learn_one(d.draw(samples), d.draw(targets)),
             "predict_learn_one": lambda d: model.predict_learn_one(d.draw(samples),
                                                                    d.draw(targets))}
    if is_classifier(model):
        calls["decision_function_one"] = lambda d: model.decision_function_one(d.draw(samples))
    return calls


def batch_calls(model):
    def pair(d):
        return d.draw(st.one_of(st.tuples(batches, target_batches), plausible_pairs()))

    calls = {"predict": lambda d: model.predict(pair(d)[0]),
             "predict_learn": lambda d: model.predict_learn(*pair(d)),
             "partial_fit": lambda d: model.partial_fit(*pair(d)),
             "fit": lambda d: model.fit(*pair(d)),
             "score": lambda d: defined_score(model, *pair(d))}
    for name in ("decision_function", "predict_proba"):
        if hasattr(model, name):
            calls[name] = lambda d, method=getattr(model, name): method(pair(d)[0])
    return calls


def defined_score(model, X, y):
    """model.score(X, y), with R^2 of a single sample (NaN, documented as undefined) as 0."""
    out = model.score(X, y)
    single = not is_classifier(model) and np.shape(X)[0] == 1
    return 0.0 if single and np.isnan(out) else out


def set_params_call(model):
    names = sorted(model.get_params())
    return {"set_params": lambda d: model.set_params(
        **{d.draw(st.sampled_from(names)): d.draw(st.one_of(scalars, st.integers(-3, 12)))})}


def finite_output(out) -> bool:
    if isinstance(out, OnlineEstimator):
        return True
    values = np.asarray(out)
    if values.dtype.kind in "fc":
        return bool(np.isfinite(values).all())
    return values.dtype.kind != "O" or all(v is not None for v in values.ravel())


def finite_state(model) -> bool:
    if model._engine is None:
        return True
    return all(np.isfinite(np.asarray(v, dtype=float)).all()
               for v in model._engine.get_state().values())


FUZZ = settings(max_examples=1500, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


@FUZZ
@given(data=st.data(), factory=st.sampled_from(FACTORIES), fresh=st.booleans())
def test_every_input_path_raises_only_value_error_and_changes_nothing(data, factory, fresh):
    model = factory() if fresh else trained(factory)
    calls = {**one_sample_calls(model), **batch_calls(model), **set_params_call(model)}
    name = data.draw(st.sampled_from(sorted(calls)), label="method")
    before = snapshot(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastomkl.NumericalWarning)
        try:
            out = calls[name](data)
        except ValueError:
            assert snapshot(model) == before, name
            event(f"{name}: refused")
            return
    event(f"{name}: accepted")
    assert finite_output(out), (name, out)
    assert finite_state(model), name
    if model._engine is not None and name != "set_params":
        probe = TRAIN_X[:2, :model._engine.n_features] if model._engine.n_features <= 3 else None
        if probe is not None and probe.shape[1] == model._engine.n_features:
            scores = model._scores(probe)
            assert np.isfinite(scores).all(), name


@pytest.mark.parametrize("factory", EXTREME_CASES)
@settings(FUZZ, max_examples=12)
@given(signs=st.lists(st.tuples(st.sampled_from([-1.0, 0.0, 1.0, 1e-3]),
                                st.sampled_from([-1.0, 1.0, 0.0])), min_size=3, max_size=12))
def test_accepted_extreme_inputs_keep_predictions_and_state_finite(factory, signs):
    """A run of samples and targets at +-MAX_ABS_INPUT (refused only where a model states a
    tighter bound: the polynomial kernel, a user feature map whose output leaves the range)
    leaves every prediction and the state finite."""
    model = factory()
    classifier = is_classifier(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastomkl.NumericalWarning)
        for i, (sx, sy) in enumerate(signs):
            x = np.array([sx, -sx, 0.5]) * MAX_ABS_INPUT
            y = (sy > 0) if classifier else sy * MAX_ABS_INPUT
            before = snapshot(model)
            try:
                out = model.predict_learn_one(list(x) if i % 2 else x, y)
            except ValueError as exc:
                assert "polynomial kernel" in str(exc) or "phi" in str(exc)
                assert snapshot(model) == before
                continue
            assert finite_output(out)
            assert finite_state(model)
            assert np.isfinite(model._scores(np.array([x, x * 1e-150]))).all()


@pytest.mark.parametrize("factory", FACTORIES, ids=NAMES)
def test_every_public_estimator_is_fuzzed(factory):
    """The fuzz covers every public estimator class (found through fastomkl.__all__)."""
    model = trained(factory)
    assert np.isfinite(model._scores(TRAIN_X)).all()
    assert {type(f()) for f in FACTORIES} == set(ESTIMATORS)
