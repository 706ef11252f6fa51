"""Checks at the Python boundary: every public entry validates here before touching a model."""
from __future__ import annotations

import numbers

import numpy as np

from fastomkl.kernels import Kernel


class NumericalWarning(RuntimeWarning):
    """A model refused an update that would have made its state non-finite."""


class NotFittedError(ValueError, AttributeError):
    """Raised when a batch prediction is asked of a model that has seen no data."""


def check_int(value, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return int(value)


def check_float(value, name: str, minimum: float | None = None, strict: bool = False,
                maximum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    value = float(value)
    if minimum is not None and (value < minimum or (strict and value == minimum)):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_choice(value, name: str, choices) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value


def check_kernels(kernels) -> list:
    if isinstance(kernels, Kernel):
        kernels = [kernels]
    try:
        kernels = list(kernels)
    except TypeError:
        raise ValueError(f"kernels must be a list of fastomkl kernels, got {kernels!r}") from None
    if not kernels:
        raise ValueError("kernels must not be empty")
    for k in kernels:
        if not isinstance(k, Kernel):
            raise ValueError(f"kernels must be fastomkl kernels (Gaussian, Laplacian, ...), got {k!r}")
    return kernels


def _as_float_array(values, name: str) -> np.ndarray:
    if values is None:
        raise ValueError(f"{name} is None: the model requires {name} to be passed")
    if hasattr(values, "toarray") or type(values).__module__.startswith("scipy.sparse"):
        raise ValueError(f"sparse input is not supported: pass {name}.toarray()")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must contain real numbers, got {type(values).__name__}") from None
    if np.iscomplexobj(arr):
        raise ValueError(f"Complex data not supported: {name} must contain real numbers")
    try:
        return arr.astype(np.float64, copy=False)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name} must contain real numbers ({exc})") from None


def check_matrix(X, n_features: int | None = None, name: str = "X", owner: str = "the model"
                 ) -> np.ndarray:
    """X as a C-contiguous float64 (n_samples, n_features) array of finite values."""
    X = _as_float_array(X, name)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}. "
                         f"Reshape your data with X.reshape(1, -1) for one sample (or use the "
                         f"*_one methods)")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has 0 sample(s) (shape={X.shape}) while a minimum of 1 is "
                         f"required.")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                         f"required.")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but {owner} is expecting "
                         f"{n_features} features as input")
    if not np.isfinite(X).all():
        bad = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"{name} contains NaN or infinity (first at row {bad[0]}, column {bad[1]})")
    return np.ascontiguousarray(X)


def check_sample(x, n_features: int | None = None) -> np.ndarray:
    """One sample as a float64 vector of finite values."""
    x = _as_float_array(x, "x")
    if x.ndim == 0:
        raise ValueError(f"x must be one sample (a 1-D sequence of numbers), got the scalar {x}")
    if x.ndim != 1:
        raise ValueError(f"x must be one sample (a 1-D sequence of numbers), got shape {x.shape}")
    return check_matrix(x[None, :], n_features, name="x")[0]


def check_target_value(y) -> float:
    """One regression target as a finite float."""
    if isinstance(y, (bool, np.bool_)) or not isinstance(y, (numbers.Real, np.ndarray)) or np.ndim(y):
        raise ValueError(f"y must be a real number, got {y!r}")
    y = float(y)
    if not np.isfinite(y):
        raise ValueError(f"y must be finite, got {y}")
    return y


def check_targets(y, n_samples: int, name: str = "y") -> np.ndarray:
    if y is None:
        raise ValueError("the model requires y to be passed, but the target y is None")
    y = _as_float_array(y, name)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} values but X has {n_samples} rows")
    if not np.isfinite(y).all():
        raise ValueError(f"{name} contains NaN or infinity (first at index "
                         f"{int(np.argmin(np.isfinite(y)))})")
    return np.ascontiguousarray(y)


def split_random_state(random_state) -> tuple[np.random.Generator, np.random.PCG64]:
    """Two independent streams: one for feature draws, one for per-round sampling.

    The same seed gives the same feature draws in every model, so models built with one seed share
    their random features in a comparison.
    """
    if isinstance(random_state, np.random.Generator):
        features, rounds = random_state.spawn(2)
        return features, rounds.bit_generator
    if random_state is None or isinstance(random_state, numbers.Integral):
        if isinstance(random_state, numbers.Integral) and random_state < 0:
            raise ValueError(f"random_state must be non-negative, got {random_state}")
        seq = np.random.SeedSequence(random_state)
    elif isinstance(random_state, np.random.SeedSequence):
        # A fresh copy: spawning mutates a SeedSequence, and a refit must see the same streams.
        seq = np.random.SeedSequence(random_state.entropy, spawn_key=random_state.spawn_key,
                                     pool_size=random_state.pool_size)
    else:
        raise ValueError(f"random_state must be None, an int, a SeedSequence or a Generator, "
                         f"got {random_state!r}")
    features, rounds = seq.spawn(2)
    return np.random.Generator(np.random.PCG64(features)), np.random.PCG64(rounds)
