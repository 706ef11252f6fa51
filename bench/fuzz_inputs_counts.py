"""Random inputs on every public input path of every public estimator: how many are refused
(ValueError), accepted with finite output, or accepted with NaN/inf output (must be 0), and how
many raise anything else (must be 0).

    python bench/fuzz_inputs_counts.py [n_inputs] [seed]
"""
import sys
from pathlib import Path
import warnings
from collections import Counter

import numpy as np

import fastomkl
from fastomkl import MAX_ABS_INPUT, OnlineKernelRegressor
from fastomkl.kernels import Polynomial
from fastomkl._estimator import OnlineEstimator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

N_FEATURES = 3
VALUES = [0.0, -0.0, 0.5, -2.0, 1, True, MAX_ABS_INPUT, -MAX_ABS_INPUT,
          np.nextafter(MAX_ABS_INPUT, np.inf), 5e-324, np.nan, np.inf, -np.inf, 10 ** 400,
          np.float32(1.5), np.int64(3), "1.0", "a", None, 1 + 2j, [1.0]]
DTYPES = [np.float64, np.float32, np.float16, np.int64, np.bool_, object]


def estimators():
    """Every public estimator in a small configuration (the one the fuzz tests use)."""
    from test_input_fuzz import small
    for name in fastomkl.__all__:
        cls = getattr(fastomkl, name)
        if isinstance(cls, type) and issubclass(cls, OnlineEstimator):
            yield name, lambda cls=cls: small(cls)
    yield "OnlineKernelRegressor-poly", lambda: OnlineKernelRegressor(Polynomial(3))


def value(rng):
    """Mostly ordinary numbers, otherwise an edge case or a non-number."""
    if rng.random() < 0.7:
        return float(rng.normal() * 10.0 ** rng.integers(-3, 151))
    return VALUES[rng.integers(len(VALUES))]


def sample(rng):
    values = [value(rng) for _ in range(N_FEATURES)]
    kind = rng.integers(4)
    if kind == 0:
        return values
    if kind == 1:
        return tuple(values)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return np.array(values, dtype=DTYPES[rng.integers(len(DTYPES))])
    except (TypeError, ValueError, OverflowError):
        return np.array(values, dtype=object)


def target(rng, classifier):
    if classifier and rng.random() < 0.6:
        return int(rng.integers(2))
    return value(rng)


def call(model, method, rng, classifier):
    n = int(rng.integers(1, 4))
    X = [sample(rng) for _ in range(n)]
    y = [target(rng, classifier) for _ in range(n)]
    if method in ("predict_one", "decision_function_one"):
        return getattr(model, method)(X[0])
    if method in ("learn_one", "predict_learn_one"):
        return getattr(model, method)(X[0], y[0])
    if method in ("predict", "decision_function", "predict_proba"):
        return getattr(model, method)(X)
    return getattr(model, method)(X, y)


def finite(out) -> bool:
    if isinstance(out, OnlineEstimator):
        return finite(out._scores(np.zeros((1, out._engine.n_features)))) if out._engine else True
    arr = np.asarray(out)
    return arr.dtype.kind not in "fc" or bool(np.isfinite(arr).all())


def main(n_inputs: int = 5000, seed: int = 0) -> Counter:
    rng = np.random.default_rng(seed)
    counts = Counter()
    train = rng.uniform(-1, 1, size=(8, N_FEATURES))
    models = []
    for name, factory in estimators():
        model = factory()
        classifier = hasattr(model, "decision_function")
        models.append((name, factory, classifier))
    methods = ["predict_one", "learn_one", "predict_learn_one", "predict", "predict_learn",
               "partial_fit", "fit", "score", "decision_function", "decision_function_one",
               "predict_proba"]
    warnings.simplefilter("ignore", fastomkl.NumericalWarning)
    for i in range(n_inputs):
        name, factory, classifier = models[i % len(models)]
        model = factory()
        if rng.random() < 0.7:
            model.fit(train, train[:, 0] > 0 if classifier else train.sum(1))
        method = methods[rng.integers(len(methods))]
        if not hasattr(model, method):
            method = "predict_learn_one"
        counts["tried"] += 1
        try:
            out = call(model, method, rng, classifier)
        except ValueError:
            counts["rejected (ValueError)"] += 1
            continue
        except Exception as exc:       # noqa: BLE001 - counted, then shown
            counts["other exception"] += 1
            print(f"{name}.{method}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        if method == "score" and not classifier and np.isnan(out):
            out = 0.0          # R^2 of one sample is undefined (NaN by definition)
        if not finite(out):
            print(f"{name}.{method}: non-finite output {out!r}", file=sys.stderr)
        counts["accepted, finite output" if finite(out) else "accepted, NaN/inf output"] += 1
    return counts


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    counts = main(*args)
    for key in ("tried", "rejected (ValueError)", "accepted, finite output",
                "accepted, NaN/inf output", "other exception"):
        print(f"{key:28s} {counts[key]}")
