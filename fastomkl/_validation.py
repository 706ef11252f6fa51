"""Checks at the Python boundary: every public entry validates here before touching a model.

One rule per kind of input, the same on every path (one sample or a batch, the first call or a
later one, the compiled fast path or this module):

feature values (x, X)
    Real numbers: Python ``int``, ``float`` and ``bool`` (as 0/1), NumPy integer, float and bool
    scalars and arrays, and other ``numbers.Real`` objects inside lists; finite, with
    ``|x_j| <= MAX_ABS_INPUT``.  Strings (even numeric ones), bytes, ``None``, complex numbers and
    objects that merely define ``__float__`` are refused, as are ints beyond the float range.
regression targets (y)
    The same, except ``bool``: a truth value is not a real-valued target, so ``True`` is refused
    by a fresh model and a trained one alike; ``|y| <= MAX_ABS_INPUT``.
class labels (classifiers)
    Strings, or whole real numbers (``int``, ``bool``, floats such as ``1.0``); NumPy scalars
    count as their Python values, and one model's labels are all strings or all numbers.
    ``None``, tuples and other containers, NaN, infinities and continuous values (``0.5``) are
    refused.
parameters
    Constructor parameters are checked at the first learning call (scikit-learn's rule) and by
    ``set_params``, which refuses an invalid value before changing anything; every message names
    the parameter.

Every refusal is a ``ValueError`` raised before anything changes.
"""
from __future__ import annotations

import numbers

import numpy as np

from fastomkl._core.inputs import (MAX_ABS_INPUT, BudgetWarning, NumericalWarning, _as_float_array,  # noqa: F401
                                   check_matrix, check_sample, check_target_value, check_targets)
from fastomkl.kernels import Kernel

class NotFittedError(ValueError, AttributeError):
    """Raised when a batch prediction is asked of a model that has seen no data.

    A ``ValueError`` (and an ``AttributeError``, as scikit-learn's), so ``except ValueError``
    catches it too.

    Examples
    --------
    >>> from fastomkl import NotFittedError, VAW
    >>> try:
    ...     VAW().predict([[0.0, 1.0]])
    ... except NotFittedError as exc:
    ...     print(exc)
    this VAW has seen no data yet: ...
    >>> issubclass(NotFittedError, ValueError)
    True
    """


# Integer parameters (sizes, counts, degrees) reach the compiled core as C ints unless a caller
# states its own bound.
INT_PARAMETER_LIMIT = 2 ** 31 - 1


def check_int(value, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is None:
        maximum = INT_PARAMETER_LIMIT
    if value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return int(value)


def check_float(value, name: str, minimum: float | None = None, strict: bool = False,
                maximum: float | None = None) -> float:
    try:
        number = float(value) if isinstance(value, numbers.Real) else np.nan
    except OverflowError:                  # an int beyond the float range
        number = np.inf
    if isinstance(value, bool) or not np.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    value = number
    if minimum is not None and (value < minimum or (strict and value == minimum)):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_choice(value, name: str, choices) -> str:
    try:
        known = value in choices
    except TypeError:                      # an unhashable value is no choice
        known = False
    if not known:
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


def check_random_state(random_state) -> None:
    """Raise ValueError unless random_state is None, a non-negative int, a SeedSequence or a
    Generator (checked without drawing from or spawning it)."""
    if isinstance(random_state, (np.random.Generator, np.random.SeedSequence)) or random_state is None:
        return
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise ValueError(f"random_state must be None, an int, a SeedSequence or a Generator, "
                         f"got {random_state!r}")
    if random_state < 0:
        raise ValueError(f"random_state must be non-negative, got {random_state}")


def split_random_state(random_state) -> tuple[np.random.Generator, np.random.PCG64]:
    """Two independent streams: one for feature draws, one for per-round sampling.

    The same seed gives the same feature draws in every model, so models built with one seed share
    their random features in a comparison.
    """
    check_random_state(random_state)
    if isinstance(random_state, np.random.Generator):
        features, rounds = random_state.spawn(2)
        return features, rounds.bit_generator
    if isinstance(random_state, np.random.SeedSequence):
        # A fresh copy: spawning mutates a SeedSequence, and a refit must see the same streams.
        seq = np.random.SeedSequence(random_state.entropy, spawn_key=random_state.spawn_key,
                                     pool_size=random_state.pool_size)
    else:
        seq = np.random.SeedSequence(None if random_state is None else int(random_state))
    features, rounds = seq.spawn(2)
    return np.random.Generator(np.random.PCG64(features)), np.random.PCG64(rounds)
