"""The contract every public estimator keeps, checked on every class the package exports.

The classes are found through ``fastomkl.__all__`` and built from the parameter sets they declare
for the tests (``_unit_test_params``); their parameters' accepted values come from their own
declarations (``_parameter_constraints``).  Nothing here names a class: a new model is covered
the moment it is exported.
"""
import inspect
import io
import threading
import time
import warnings

import numpy as np
import pytest

import fastomkl
from fastomkl._estimator import BinaryClassifier, MulticlassClassifier, OnlineEstimator
from fastomkl._estimator.base import MAX_STATE_DOUBLES
from fastomkl._estimator.params import accepts
from helpers import can_be_saved, state_bytes

ESTIMATORS = sorted({getattr(fastomkl, name) for name in fastomkl.__all__
                     if inspect.isclass(getattr(fastomkl, name))
                     and issubclass(getattr(fastomkl, name), OnlineEstimator)},
                    key=lambda cls: cls.__name__)
BY_NAME = pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
# Models that hold a user's Python function or other models are pickled, not written to files
# (test_load_fuzz checks that they refuse to be saved).
SAVED = pytest.mark.parametrize("cls", [cls for cls in ESTIMATORS if can_be_saved(cls)],
                                ids=lambda cls: cls.__name__)
N_FEATURES = 3


def is_classifier(cls) -> bool:
    return issubclass(cls, (BinaryClassifier, MulticlassClassifier))


def stream(cls, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, N_FEATURES))
    if is_classifier(cls):
        return X, np.where(X[:, 0] + 0.3 * X[:, 1] > 0, "yes", "no")
    return X, np.sin(3 * X[:, 0]) + X[:, 1] ** 2


def build(cls, **extra):
    return cls(**{**cls._unit_test_params()[0], **extra})


def quietly(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastomkl.NumericalWarning)
        return call()


# -- declarations ----------------------------------------------------------------------------------
@BY_NAME
def test_every_parameter_is_declared_and_documented(cls):
    names = cls._param_names()
    assert set(cls._parameter_constraints) == set(names), (
        f"declared {sorted(cls._parameter_constraints)} but the constructor takes {names}")
    doc = inspect.getdoc(cls) or ""
    undocumented = [name for name in names if f"{name} :" not in doc and f"{name}," not in doc]
    assert not undocumented, f"parameters missing from the docstring: {undocumented}"


@BY_NAME
def test_the_test_parameters_are_accepted_and_learn(cls):
    X, y = stream(cls, 30)
    for params in cls._unit_test_params():
        model = cls(**params)
        quietly(lambda: model.fit(X, y))
        scores = model.decision_function(X) if hasattr(model, "decision_function") \
            else model.predict(X)
        assert np.isfinite(np.asarray(scores, dtype=float)).all()


def invalid_values(cls):
    """(name, value) for every value a declared form lists as invalid that no form accepts."""
    for name, forms in cls._parameter_constraints.items():
        for form in forms:
            if form is None or isinstance(form, str):
                continue
            for value in form.invalid_examples():
                if not accepts(forms, value):
                    yield name, value


def equal(a, b) -> bool:
    try:
        return a is b or bool(a == b)
    except (TypeError, ValueError):         # arrays: compared element by element
        return False


def valid_edges(cls):
    """(name, value) for the edges of every declared interval and every listed option."""
    for name, forms in cls._parameter_constraints.items():
        for form in forms:
            if form is None or isinstance(form, str):
                continue
            for value in form.valid_examples():
                yield name, value


@BY_NAME
def test_a_value_outside_its_declaration_is_refused_and_changes_nothing(cls):
    X, y = stream(cls, 8)
    fitted = quietly(lambda: build(cls).fit(X, y))
    before = state_bytes(fitted)
    for name, value in invalid_values(cls):
        with pytest.raises(ValueError, match=name):
            quietly(lambda: build(cls, **{name: value}).fit(X, y))
        with pytest.raises(ValueError, match=name):
            fitted.set_params(**{name: value})
        assert state_bytes(fitted) == before, f"set_params({name}={value!r}) changed the model"


@BY_NAME
def test_a_parameter_assigned_on_a_fitted_model_is_refused_and_changes_nothing(cls):
    """A fitted model's state was learnt with its parameters: assigning a new value to one is
    refused (learning would go on with the old value, and a file saved after would pair the new
    value with the old state), while set_params starts the model afresh with it."""
    X, y = stream(cls, 8)
    fitted = quietly(lambda: build(cls).fit(X, y))
    before, params = state_bytes(fitted), fitted.get_params()
    changes = {name: value for name, value in valid_edges(cls) if not equal(value, params[name])}
    assert changes or not params, "no parameter of the class has another accepted value"
    for name, value in changes.items():
        with pytest.raises(ValueError, match=f"{name}=.*set_params"):
            setattr(fitted, name, value)
        assert state_bytes(fitted) == before and fitted.get_params().keys() == params.keys()
        assert all(fitted.get_params()[k] is params[k] for k in params), f"{name} changed"
    for name, value in changes.items():
        setattr(fitted, name, params[name])           # the value it holds: nothing changes
        fresh = build(cls)
        setattr(fresh, name, value)                   # an unfitted model takes any value
        assert getattr(fresh, name) is value
        try:
            fitted.set_params(**{name: value})
        except ValueError:                            # a value the other parameters rule out
            continue
        assert getattr(fitted, name) is value and fitted._engine is None
        break


@BY_NAME
def test_every_accepted_edge_value_keeps_the_model_finite_and_saveable(cls):
    """At the edges of what each parameter accepts, a model learns finite predictions and
    state, and (where models are written to files) its own file loads back."""
    X, y = stream(cls, 20)
    for name, value in valid_edges(cls):
        model = build(cls, **{name: value})
        try:
            quietly(lambda: model.fit(X, y))
        except ValueError as exc:
            # a rule tying a parameter to the others or to the data: it names what it refuses
            assert name in str(exc) or "GiB of state" in str(exc), f"{name}={value!r}: {exc}"
            continue
        scores = model.decision_function(X) if hasattr(model, "decision_function") \
            else model.predict(X)
        assert np.isfinite(np.asarray(scores, dtype=float)).all(), f"{name}={value!r}"
        assert all(np.isfinite(np.asarray(v, dtype=float)).all()
                   for v in model._engine.get_state().values()
                   if np.asarray(v).dtype.kind == "f"), f"{name}={value!r}: non-finite state"
        if can_be_saved(cls):
            out = io.BytesIO()
            model.save(out)
            try:
                fastomkl.load(io.BytesIO(out.getvalue()))
            except ValueError as exc:
                # a budget's capacity the file does not hold (its rows in use only): refused
                # by default as a small file building a large model, loaded when vouched for
                assert "imply a model far larger" in str(exc), f"{name}={value!r}: {exc}"
                fastomkl.load(io.BytesIO(out.getvalue()), max_bytes=8 * MAX_STATE_DOUBLES)


# -- scikit-learn ----------------------------------------------------------------------------------
# Deliberate differences from scikit-learn's checks, each with its reason.
SKLEARN_EXCLUDED = {
    "check_estimators_unfitted":
        "batch prediction before any data raises fastomkl.NotFittedError (a ValueError and "
        "AttributeError, like scikit-learn's) rather than scikit-learn's own class, so importing "
        "fastomkl never imports scikit-learn",
    "check_do_not_raise_errors_in_init_or_set_params":
        "set_params validates at once, so a bad value is refused before it reaches a model (and "
        "the model is left unchanged), instead of failing later at fit",
    "check_dtype_object":
        "non-numeric X raises ValueError (the library's single error type for bad input), not "
        "TypeError",
    "check_supervised_y_2d":
        "a column-vector y is refused with a clear ValueError instead of being silently raveled",
}


@BY_NAME
def test_scikit_learn_estimator_checks(cls):
    from sklearn.utils.estimator_checks import check_estimator
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(build(cls), on_fail=None)
    expected = {**SKLEARN_EXCLUDED, **getattr(cls, "_sklearn_differences", {})}
    failed = {r["check_name"]: str(r["exception"])[:300] for r in results
              if r["status"] == "failed" and r["check_name"] not in expected}
    assert not failed, failed


# -- persistence ---------------------------------------------------------------------------------
@SAVED
def test_save_and_load_continue_bit_identically(cls):
    X, y = stream(cls, 320)
    model = quietly(lambda: build(cls).fit(X[:20], y[:20]))
    out = io.BytesIO()
    model.save(out)
    loaded = fastomkl.load(io.BytesIO(out.getvalue()))
    a = quietly(lambda: [model.predict_learn_one(x, t) for x, t in zip(X[20:], y[20:])])
    b = quietly(lambda: [loaded.predict_learn_one(x, t) for x, t in zip(X[20:], y[20:])])
    assert a == b


# -- threads -------------------------------------------------------------------------------------
@BY_NAME
def test_threads_see_only_round_boundaries_and_save_loadable_files(cls):
    """One thread learns (batches and single samples); three others predict one sample, predict
    a batch and save, all at once.  The learnt model equals the serial one; every concurrent
    prediction is the prediction of the model at some boundary between two rounds; every
    concurrent file loads and is the model at some boundary."""
    X, y = stream(cls, 160, seed=1)
    probe = np.random.default_rng(5).uniform(-1, 1, N_FEATURES)
    # fit draws its order of the rows from random_state: the same seed for both models
    seed = {"random_state": 0} if "random_state" in cls._param_names() else {}
    serial = quietly(lambda: build(cls, **seed).fit(X[:4], y[:4]))
    boundaries = {serial.n_samples_seen_: serial.predict_one(probe)}
    for x, t in zip(X[4:], y[4:]):
        quietly(lambda: serial.learn_one(x, t))
        boundaries[serial.n_samples_seen_] = serial.predict_one(probe)

    shared = quietly(lambda: build(cls, **seed).fit(X[:4], y[:4]))
    stop = threading.Event()
    answers, files, errors = [], [], []

    def learner():
        try:
            for start in range(4, 84, 20):
                quietly(lambda: shared.partial_fit(X[start:start + 20], y[start:start + 20]))
            for x, t in zip(X[84:], y[84:]):
                quietly(lambda: shared.learn_one(x, t))
        except Exception as exc:                    # noqa: BLE001 (reported below)
            errors.append(exc)
        finally:
            stop.set()

    def reader(kind):
        try:
            while not stop.is_set():
                if kind == "one":
                    answers.append(shared.predict_one(probe))
                elif kind == "batch":
                    answers.append(shared.predict(probe[None, :])[0])
                elif can_be_saved(cls):
                    out = io.BytesIO()
                    shared.save(out)
                    files.append(out.getvalue())
        except Exception as exc:                    # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=learner)] + [
        threading.Thread(target=reader, args=(kind,)) for kind in ("one", "batch", "save")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert state_bytes(shared) == state_bytes(serial)
    seen = set(boundaries.values())
    assert all(answer in seen for answer in answers)
    for data in files:
        loaded = fastomkl.load(io.BytesIO(data))
        assert loaded.predict_one(probe) == boundaries[loaded.n_samples_seen_]


def compiled_engine(model):
    return getattr(model._engine, "_inner", model._engine)


@BY_NAME
def test_a_snapshot_predicts_what_the_model_predicts(cls):
    """The twins a batch call publishes for waiting predictions hold the model bit for bit: after
    every chunk of learning (growth included), the twin's prediction is the model's."""
    X, y = stream(cls, 300, seed=3)
    seed = {"random_state": 0} if "random_state" in cls._param_names() else {}
    model = quietly(lambda: build(cls, **seed).fit(X[:50], y[:50]))
    if not cls._snapshots:                  # its predictions wait for the round in progress
        assert compiled_engine(model).twin_factory is None
        return
    probe = np.random.default_rng(1).uniform(-1, 1, N_FEATURES)
    if hasattr(model._engine, "map"):                # an engine on phi(x)
        probe = model._engine.map(probe[None])[0]
    for start in range(50, 300, 25):
        quietly(lambda: model.partial_fit(X[start:start + 25], y[start:start + 25]))
        engine = compiled_engine(model)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)   # twins that cannot be built
            engine._publish_snapshot()
        assert engine._predict_snapshot(probe) == engine.predict_one(probe)


@BY_NAME
def test_predictions_while_a_batch_learns_are_snapshots_at_its_round_boundaries(cls):
    """predict_one in one thread while another learns whole passes over a stream in one call:
    the predictions come from snapshots (the reader does not wait for the batch) and each one is
    the model's prediction after some round of the serial run."""
    X, y = stream(cls, 200, seed=4)
    probe = np.random.default_rng(6).uniform(-1, 1, N_FEATURES)
    seed = {"random_state": 0} if "random_state" in cls._param_names() else {}
    # each batch call lasts about 30 ms at least (the stream repeated): longer than the reader
    # may wait for the GIL or a CPU, so that it meets batches in progress however fast the
    # model's rounds are and however loaded the machine is
    timing = quietly(lambda: build(cls, **seed).fit(X[:4], y[:4]))
    start = time.perf_counter()
    quietly(lambda: timing.partial_fit(X[4:], y[4:]))
    # (a growing model's rounds slow down as it grows: fewer repeats; one for a model without
    # snapshots, whose test is only that its predictions wait)
    cap = 1 if not cls._snapshots else 10 if compiled_engine(timing).grows else 200
    repeats = int(min(cap, max(1, 0.03 / (time.perf_counter() - start))))
    batch_X, batch_y = np.tile(X[4:], (repeats, 1)), np.tile(y[4:], repeats)
    shared = quietly(lambda: build(cls, **seed).fit(X[:4], y[:4]))
    passes, answers, errors, done = [0], [], [], threading.Event()

    def learner():
        try:
            while (compiled_engine(shared).n_snapshot_reads < 20 and passes[0] < 100
                   and (cls._snapshots or passes[0] < 3)):
                quietly(lambda: shared.partial_fit(batch_X, batch_y))
                passes[0] += 1
        except Exception as exc:                    # noqa: BLE001 (reported below)
            errors.append(exc)
        finally:
            done.set()

    def reader():
        try:
            while not done.is_set():
                answers.append(shared.predict_one(probe))
        except Exception as exc:                    # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=learner), threading.Thread(target=reader)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert (compiled_engine(shared).n_snapshot_reads > 0) == cls._snapshots

    serial = quietly(lambda: build(cls, **seed).fit(X[:4], y[:4]))
    seen = {serial.predict_one(probe)}
    for _ in range(passes[0]):
        for x, t in zip(batch_X, batch_y):
            quietly(lambda: serial.learn_one(x, t))
            seen.add(serial.predict_one(probe))
    assert all(answer in seen for answer in answers)
    assert state_bytes(shared) == state_bytes(serial)


@BY_NAME
def test_threads_starting_on_a_fresh_model_lose_no_update(cls):
    X, y = stream(cls, 200, seed=2)
    model = build(cls)
    if is_classifier(cls):                          # every thread's first labels are known
        model = quietly(lambda: model.partial_fit(X[:2], y[:2], classes=np.unique(y)))
        X, y = X[2:], y[2:]
    start = model.n_samples_seen_
    parts = np.array_split(np.arange(len(y) - len(y) % 4), 4)
    errors = []

    def learner(rows):
        try:
            for i in rows:
                quietly(lambda: model.learn_one(X[i], y[i]))
        except Exception as exc:                    # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=learner, args=(rows,)) for rows in parts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert model.n_samples_seen_ == start + sum(len(rows) for rows in parts)
