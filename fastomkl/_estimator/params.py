"""Declared parameters: what each constructor parameter accepts, stated once per class.

A model class lists, in ``_parameter_constraints`` (scikit-learn's model), each constructor
parameter with the forms it accepts, any of which may match:

* a constraint object of this module (``Interval``, ``Options``, ``Boolean``, ``Kernels``, ...),
* a string: that literal value (``"auto"``),
* ``None``: the value None.

``validate_parameters(model)`` checks every declared parameter, before anything is built, and
raises one ``ValueError`` naming the parameter, what it accepts and what it got.  The same
declarations drive the documentation checks and the common tests, which try values inside and at
the edges of each constraint (``valid_examples``) and outside it (``invalid_examples``) on every
class: a parameter is declared once, and the checks, the tests and the error messages follow.

Classes renamed parameters keep the old names for one release: ``_renamed_parameters`` maps an old
name to the new one, and ``take_renamed`` (called by the constructor with its ``**renamed``
keywords) accepts the old spelling with a ``FutureWarning``.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

__all__ = ["Interval", "Options", "Boolean", "Kernels", "OneKernel", "RandomState", "Array",
           "Function", "Range", "Regressors", "StepScales", "validate_parameters", "describe",
           "take_renamed"]


class Constraint:
    """One form a parameter may take."""

    def accepts(self, value) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def valid_examples(self) -> list:
        """Values this form accepts (its edges among them), for the common tests."""
        return []

    def invalid_examples(self) -> list:
        """Values no model should accept where this is the only form, for the common tests."""
        return []

    def from_file(self, value):
        """`value` as a model file gives it back (its JSON has lists where the model had
        tuples), in the form the model was given it: as it is, unless the form says otherwise."""
        return value


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


class Interval(Constraint):
    """An int (``kind="int"``) or a finite real number (``kind="real"``, ints included) in
    [low, high], either end open (``closed`` "both", "left", "right" or "neither") or absent
    (None)."""

    def __init__(self, kind: str, low=None, high=None, closed: str = "both"):
        if kind not in ("int", "real") or closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"bad Interval({kind!r}, closed={closed!r})")
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def accepts(self, value) -> bool:
        if self.kind == "int":
            if not _is_int(value):
                return False
        elif not _is_real(value):
            return False
        try:
            number = float(value)
        except OverflowError:
            return False
        if not math.isfinite(number):
            return False
        if self.low is not None:
            if value < self.low or (value == self.low and self.closed in ("right", "neither")):
                return False
        if self.high is not None:
            if value > self.high or (value == self.high and self.closed in ("left", "neither")):
                return False
        return True

    def describe(self) -> str:
        what = "an int" if self.kind == "int" else "a finite number"
        if self.low is None and self.high is None:
            return what
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        return f"{what} in {left}{low}, {high}{right}"

    def valid_examples(self) -> list:
        out = []
        if self.low is not None and self.closed in ("both", "left"):
            out.append(self.low)
        if self.high is not None and self.closed in ("both", "right"):
            out.append(self.high)
        if self.low is not None and self.high is not None and self.kind == "real":
            out.append((self.low + self.high) / 2 if self.high - self.low < 1e300 else 1.0)
        return [v for v in out if self.accepts(v)]

    def invalid_examples(self) -> list:
        out = ["1", [1], float("nan"), float("inf"), True]
        step = 1 if self.kind == "int" else None
        if self.low is not None:
            out.append(self.low - step if step else
                       (self.low if self.closed in ("right", "neither") else
                        np.nextafter(self.low, -np.inf)))
        if self.high is not None:
            out.append(self.high + step if step else
                       (self.high if self.closed in ("left", "neither") else
                        np.nextafter(self.high, np.inf)))
        if self.kind == "int":
            out.append(1.5)
        return [v for v in out if not self.accepts(v)]


class Options(Constraint):
    """One of the given values (strings, usually)."""

    def __init__(self, *values):
        self.values = values

    def accepts(self, value) -> bool:
        try:
            return any(type(value) is type(v) and value == v for v in self.values)
        except TypeError:
            return False

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)

    def valid_examples(self) -> list:
        return list(self.values)

    def invalid_examples(self) -> list:
        return ["not-an-option", 3.5, [self.values[0]]]


class Boolean(Constraint):
    """True or False (NumPy's bool included); other truthy values are refused, so 'no' or [] can
    never mean True."""

    def accepts(self, value) -> bool:
        return isinstance(value, (bool, np.bool_))

    def describe(self) -> str:
        return "True or False"

    def valid_examples(self) -> list:
        return [False, True]

    def invalid_examples(self) -> list:
        return ["no", "x", [], 1, float("nan")]


class Kernels(Constraint):
    """A non-empty list (or tuple) of fastomkl kernels, of the given kinds if stated."""

    def __init__(self, kinds: tuple = ()):
        self.kinds = tuple(kinds)

    def accepts(self, value) -> bool:
        from fastomkl.kernels import Kernel
        if not isinstance(value, (list, tuple)) or not value:
            return False
        return all(isinstance(k, Kernel) and (not self.kinds or type(k).__name__ in self.kinds)
                   for k in value)

    def describe(self) -> str:
        kinds = (f"{' or '.join(self.kinds)} kernels (this model takes no other kind"
                 if self.kinds else "fastomkl kernels (Gaussian, Laplacian, Cauchy, Matern")
        # Polynomial is a fastomkl kernel too, but not shift-invariant: say which model takes it
        return (f"a non-empty list of {kinds}; of the models, only OnlineKernelRegressor takes a "
                f"Polynomial kernel)")

    def valid_examples(self) -> list:
        from fastomkl.kernels import Gaussian
        return [[Gaussian(1.0)]]

    def invalid_examples(self) -> list:
        return [[], ["gaussian"], "gaussian", [1.0]]


class OneKernel(Constraint):
    """One fastomkl kernel, of the given kinds if stated."""

    def __init__(self, kinds: tuple = ()):
        self.kinds = tuple(kinds)

    def accepts(self, value) -> bool:
        from fastomkl.kernels import Kernel, Polynomial
        return (isinstance(value, (Kernel, Polynomial))
                and (not self.kinds or type(value).__name__ in self.kinds))

    def describe(self) -> str:
        kinds = f" ({', '.join(self.kinds)})" if self.kinds else ""
        return f"a fastomkl kernel{kinds}"

    def valid_examples(self) -> list:
        from fastomkl.kernels import Gaussian
        return [Gaussian(1.0)]

    def invalid_examples(self) -> list:
        return ["not-a-kernel", 1.0, []]


class RandomState(Constraint):
    """None, a non-negative int, a ``numpy.random.SeedSequence`` or a ``numpy.random.Generator``."""

    def accepts(self, value) -> bool:
        if value is None or isinstance(value, (np.random.Generator, np.random.SeedSequence)):
            return True
        return _is_int(value) and value >= 0

    def describe(self) -> str:
        return "None, an int >= 0, a SeedSequence or a Generator"

    def valid_examples(self) -> list:
        return [None, 0, 2 ** 63, np.random.SeedSequence(1), np.random.default_rng(1)]

    def invalid_examples(self) -> list:
        return [-1, 1.5, "0", np.random.RandomState(0)]


class Range(Constraint):
    """A pair (lo, hi) of finite numbers with lo < hi, each of magnitude at most `limit`."""

    def __init__(self, limit: float = 1e150):
        self.limit = limit

    def accepts(self, value) -> bool:
        try:
            lo, hi = value
        except (TypeError, ValueError):
            return False
        return (_is_real(lo) and _is_real(hi) and abs(lo) <= self.limit
                and abs(hi) <= self.limit and lo < hi)

    def describe(self) -> str:
        return f"a pair (lo, hi) of numbers in [-{self.limit:g}, {self.limit:g}] with lo < hi"

    def valid_examples(self) -> list:
        return [(0.0, 1.0), (-self.limit, self.limit)]

    def invalid_examples(self) -> list:
        return [(1.0, 0.0), (0.0, 0.0), (0.0, float("nan")), "01", (0.0,), (0, 1, 2)]


class StepScales(Constraint):
    """The members of a step ensemble: a list, tuple or 1-d array of 1 to `most` positive finite
    numbers (a file gives a tuple back as a list: ``from_file`` makes it a tuple again)."""

    def __init__(self, most: int = 16, limit: float = 1e6):
        self.most = most
        self.limit = limit

    def accepts(self, value) -> bool:
        if isinstance(value, np.ndarray):
            if value.ndim != 1:
                return False
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            return False
        return (1 <= len(value) <= self.most
                and all(_is_real(v) and 0 < v <= self.limit for v in value))

    def describe(self) -> str:
        return f"a list, tuple or 1-d array of 1 to {self.most} numbers in (0, {self.limit:g}]"

    def from_file(self, value):
        return tuple(value) if isinstance(value, list) else value

    def valid_examples(self) -> list:
        return [(1.0,), (0.25, 0.5, 1.0, 1.5), [self.limit] * self.most]

    def invalid_examples(self) -> list:
        return [(), (0.0,), (-1.0,), (float("nan"),), (float("inf"),), "1", 1.0,
                (1.0,) * (self.most + 1), (True,), np.array(1.0), np.array([[1.0]]),
                {0.5: "a", 1.0: "b"}, {0.5, 1.0}]


class Array(Constraint):
    """An array-like of finite real numbers with ``ndim`` dimensions (checked again, with the
    data's width, when the model is built)."""

    def __init__(self, ndim: int):
        self.ndim = ndim

    def accepts(self, value) -> bool:
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            return False
        return array.ndim == self.ndim and array.size > 0 and bool(np.isfinite(array).all())

    def describe(self) -> str:
        return f"a non-empty {self.ndim}-D array of finite numbers"

    def invalid_examples(self) -> list:
        return ["x", [[float("nan")]] if self.ndim == 2 else [float("nan")]]


class Regressors(Constraint):
    """A non-empty list of fastomkl regression models."""

    def accepts(self, value) -> bool:
        from fastomkl._estimator import BinaryClassifier, MulticlassClassifier, OnlineEstimator
        return (isinstance(value, (list, tuple)) and len(value) > 0
                and all(isinstance(m, OnlineEstimator)
                        and not isinstance(m, (BinaryClassifier, MulticlassClassifier))
                        for m in value))

    def describe(self) -> str:
        return "a non-empty list of fastomkl regressors"

    def invalid_examples(self) -> list:
        return [[], ["model"], [1.0]]


class Function(Constraint):
    """A callable."""

    def accepts(self, value) -> bool:
        return callable(value)

    def describe(self) -> str:
        return "a callable"

    def invalid_examples(self) -> list:
        return ["x", 1.0]


def _forms(forms) -> list:
    return [Options(f) if isinstance(f, str) else f for f in forms]


def describe(forms) -> str:
    """What a parameter of these forms accepts, in words."""
    words = []
    for form in forms:
        if form is None:
            words.append("None")
        elif isinstance(form, str):
            words.append(repr(form))
        else:
            words.append(form.describe())
    return " or ".join(words)


def accepts(forms, value) -> bool:
    """Whether any of the forms accepts `value`."""
    for form in forms:
        if form is None:
            if value is None:
                return True
        elif isinstance(form, str):
            if isinstance(value, str) and value == form:
                return True
        elif form.accepts(value):
            return True
    return False


def validate_parameters(model) -> None:
    """Raise one ValueError for the first declared parameter of `model` whose value no form
    accepts, naming it, what it accepts and what it got."""
    for name, forms in type(model)._parameter_constraints.items():
        value = getattr(model, name)
        if not accepts(forms, value):
            raise ValueError(f"{name} must be {describe(forms)}, got {value!r:.200}")


def with_standardize_target(declared: dict, family: type, default: bool = True) -> tuple:
    """What a regressor adds to its `family`'s declared parameters, ``__init__`` and the defaults
    of files written before it, to learn its targets standardised online (the engine's
    ``standardize_target``): the keyword ``standardize_target`` (default `default`; False in
    older files, which learnt in raw units).  A regressor class assigns the three::

        _parameter_constraints, __init__, _defaults_of_older_files = with_standardize_target(
            family._parameter_constraints, family)
    """
    import inspect
    init = family.__init__

    def __init__(self, *args, standardize_target=default, **kwargs):
        init(self, *args, **kwargs)
        self.standardize_target = standardize_target
    parameters = list(inspect.signature(init).parameters.values())
    at = next((i for i, p in enumerate(parameters) if p.kind is p.VAR_KEYWORD), len(parameters))
    parameters.insert(at, inspect.Parameter("standardize_target", inspect.Parameter.KEYWORD_ONLY,
                                            default=default))
    __init__.__signature__ = inspect.Signature(parameters)
    return ({**declared, "standardize_target": [Boolean()]}, __init__,
            {**getattr(family, "_defaults_of_older_files", {}), "standardize_target": False})


def take_renamed(model, renamed: dict) -> None:
    """Accept the old spellings of renamed parameters for one release, with a FutureWarning.

    ``type(model)._renamed_parameters`` maps an old name to its new name (a plain rename), to a
    ``(new name, convert)`` pair, ``convert(value, model)`` giving the new parameter's value (a
    ``bandwidth`` number that becomes a ``kernel`` object, say), or to None (a parameter that
    never had an effect and is gone).  Unknown keywords are refused as
    Python refuses them, and so is an old name given beside a new one set to something else than
    its default.
    """
    import inspect
    table = type(model)._renamed_parameters
    defaults = {p.name: p.default for p in inspect.signature(type(model).__init__).parameters.values()}
    for old, value in renamed.items():
        if old not in table:
            raise TypeError(f"{type(model).__name__}.__init__() got an unexpected keyword "
                            f"argument {old!r}")
        entry = table[old]
        new, convert = (entry, None) if entry is None or isinstance(entry, str) else entry
        if new is None:                 # a parameter that no longer exists: it had no effect
            warnings.warn(f"{type(model).__name__}: the parameter {old!r} has no effect and "
                          f"will stop being accepted in the next release", FutureWarning,
                          stacklevel=3)
            continue
        current = getattr(model, new)
        if not (current is defaults[new] or _equal(current, defaults[new])) and convert is None:
            raise TypeError(f"{type(model).__name__}: {old!r} is the old name of {new!r}; give "
                            f"only {new!r}")
        warnings.warn(f"{type(model).__name__}: the parameter {old!r} is now {new!r}; the old "
                      f"spelling will stop working in the next release", FutureWarning,
                      stacklevel=3)
        setattr(model, new, value if convert is None else convert(value, model))


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False
