"""The inputs every compiled entry point accepts: feature values and regression targets.

One rule per kind of input, the same on every path (see ``fastomkl._validation`` for the rules the
Python layer adds for labels and parameters).  Every refusal is a ``ValueError`` raised before
anything changes.
"""
from __future__ import annotations

import numbers

import numpy as np

# The largest accepted |x_j| and regression |y|.  Squares and products of two such values (1e300)
# stay finite in double precision, and the compiled guard keeps every state norm below 1e100, so
# losses, gradients and predictions of accepted inputs cannot overflow to inf or NaN.
MAX_ABS_INPUT = 1e150


class NumericalWarning(RuntimeWarning):
    """A model refused an update that would have made its state non-finite.

    A learning call that refused updates warns once with this category; ``n_rejected_updates_``
    counts the refusals.  Turn it into an error with ``warnings.simplefilter("error",
    NumericalWarning)``, or silence it like any ``RuntimeWarning``.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from fastomkl import NumericalWarning, Raker
    >>> X = np.random.default_rng(0).uniform(-1, 1, (50, 2))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", NumericalWarning)    # a refused update would raise here
    ...     model = Raker(n_components=8, random_state=0).fit(X, X.sum(1))
    >>> model.n_rejected_updates_, issubclass(NumericalWarning, RuntimeWarning)
    (0, True)
    """


class BudgetWarning(UserWarning):
    """A model's memory reached its budget (support rows, dictionary centres): from then on it
    follows its budget policy (its docstring says which) and its memory and cost per sample stay
    flat.

    Given once per model, by the learning call that fills the budget (or the first one after it);
    the model's ``budget_reached_`` says the same.  Pass ``budget=None`` (``max_centres=None``) for
    the unbounded setting of the papers.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from fastomkl import BudgetWarning, Gaussian, OnlineKernelRegressor
    >>> X = np.random.default_rng(0).uniform(-1, 1, (50, 2))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     model = OnlineKernelRegressor(Gaussian(1.0), budget=20).fit(X, X.sum(1))
    >>> [w.category.__name__ for w in caught], model.budget_reached_, model.n_support_
    (['BudgetWarning'], True, 20)
    """


def _is_real(value) -> bool:
    return isinstance(value, (numbers.Real, np.bool_))


def _as_float_array(values, name: str, allow_bool: bool = True) -> np.ndarray:
    """values as a float64 array, refusing what is not a real number (see the module's rules)."""
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
    if arr.dtype == object:
        bad = [v for v in arr.flat if not _is_real(v)]
        if bad:
            raise ValueError(f"{name} must contain real numbers, got {bad[0]!r}")
    elif arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must contain real numbers, got dtype {arr.dtype}")
    if not allow_bool and (arr.dtype.kind == "b" or (arr.dtype == object and any(
            isinstance(v, (bool, np.bool_)) for v in arr.flat))):
        raise ValueError(f"{name} must contain real numbers, not truth values")
    try:
        return arr.astype(np.float64, copy=False)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name} must contain real numbers of magnitude at most "
                         f"{MAX_ABS_INPUT:g} ({exc})") from None


def _check_range(arr: np.ndarray, name: str) -> None:
    """Finite values of magnitude at most MAX_ABS_INPUT (one pass: NaN fails the comparison)."""
    ok = np.abs(arr) <= MAX_ABS_INPUT
    if not ok.all():
        where = tuple(int(i) for i in np.argwhere(~ok)[0])
        value = arr[where]
        what = "NaN or infinity" if not np.isfinite(value) else (
            f"a value beyond the accepted range |{name}| <= {MAX_ABS_INPUT:g}")
        place = f"row {where[0]}, column {where[1]}" if len(where) == 2 else f"index {where[0]}"
        raise ValueError(f"{name} contains {what} (first at {place}: {value})")


def check_matrix(X, n_features: int | None = None, name: str = "X", owner: str = "the model"
                 ) -> np.ndarray:
    """X as a C-contiguous float64 (n_samples, n_features) array of finite values."""
    X = _as_float_array(X, name)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}. "
                         f"Reshape your data with X.reshape(-1, 1) if it has a single feature, "
                         f"or X.reshape(1, -1) if it is one sample (or use the *_one methods)")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has 0 sample(s) (shape={X.shape}) while a minimum of 1 is "
                         f"required.")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                         f"required.")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but {owner} is expecting "
                         f"{n_features} features as input")
    _check_range(X, name)
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
    """One regression target as a finite float of magnitude at most MAX_ABS_INPUT."""
    if isinstance(y, (float, np.floating)):       # the common case, before the slower checks
        y = float(y)
    else:
        if isinstance(y, np.ndarray) and y.ndim == 0 and y.dtype.kind in "iuf":
            y = y[()]
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, numbers.Real):
            raise ValueError(f"y must be a real number, got {y!r}")
        try:
            y = float(y)
        except OverflowError:
            raise ValueError(f"y must be at most {MAX_ABS_INPUT:g} in magnitude, got an int "
                             f"beyond the float range") from None
    if not abs(y) <= MAX_ABS_INPUT:
        raise ValueError(f"y must be finite and at most {MAX_ABS_INPUT:g} in magnitude, got {y}")
    return y


def check_targets(y, n_samples: int, name: str = "y") -> np.ndarray:
    """Regression targets (or sample weights) as a float64 vector, refusing truth values."""
    if y is None:
        raise ValueError(f"the model requires {name} to be passed, but the target {name} is None")
    y = _as_float_array(y, name, allow_bool=False)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} values but X has {n_samples} rows")
    _check_range(y, name)
    return np.ascontiguousarray(y)
