"""fastomkl models as river estimators: ``to_river(model)``.

A fastomkl model already reads river's samples (dicts of feature name -> value, see
``OnlineEstimator.predict_one``).  River itself asks for more: its pipelines, metrics and
``evaluate.progressive_val_score`` check ``isinstance(model, river.base.Regressor)`` (or
``Classifier``), ``learn_one`` returns None, and a model that has learnt nothing still answers
instead of raising: a regressor 0.0 (as river's linear models, and what every fastomkl model's
initial state predicts), a classifier None (no class known; river's evaluation skips it).  The
wrappers here add exactly that and delegate everything else to the model they hold
(``wrapper.model``).

This module imports river; ``import fastomkl`` does not import this module, so river stays an
optional dependency.

Examples
--------
>>> from river import compose, evaluate, metrics, preprocessing
>>> from fastomkl import Gaussian, Raker
>>> from fastomkl.river import to_river
>>> stream = [({"a": 0.1 * t, "b": 1.0}, 0.2 * t) for t in range(30)]
>>> model = preprocessing.StandardScaler() | to_river(Raker([Gaussian(1.0)], random_state=0))
>>> evaluate.progressive_val_score(stream, model, metrics.MAE())  # doctest: +ELLIPSIS
MAE: ...
"""
from __future__ import annotations

import copy

import numpy as np

try:
    from river import base
except ImportError as exc:          # river is an optional extra
    raise ImportError("fastomkl.river needs river: pip install 'fastomkl[river]' "
                      "(or pip install river)") from exc

from fastomkl._estimator import BinaryClassifier, MulticlassClassifier, OnlineEstimator
from fastomkl._validation import NotFittedError

__all__ = ["RiverClassifier", "RiverRegressor", "to_river"]


def to_river(model):
    """Wrap a fastomkl model as a river regressor or classifier.

    Parameters
    ----------
    model : fastomkl estimator
        Learns in place: the wrapper holds it (``wrapper.model``), it does not copy it.

    Returns
    -------
    RiverRegressor or RiverClassifier
        ``RiverClassifier`` for a classifier, binary (``RakerClassifier``, ...) or multiclass
        (``DoublySGDSoftmaxClassifier``), else ``RiverRegressor``.

    Raises
    ------
    ValueError
        If ``model`` is not a fastomkl estimator.

    Examples
    --------
    >>> from river import base
    >>> from fastomkl import Gaussian, RakerClassifier
    >>> isinstance(to_river(RakerClassifier([Gaussian(1.0)])), base.Classifier)
    True
    """
    if isinstance(model, type) and issubclass(model, OnlineEstimator):
        raise ValueError(f"to_river expects a fastomkl estimator, got the class "
                         f"{model.__name__}: pass an instance, e.g. to_river({model.__name__}())")
    if not isinstance(model, OnlineEstimator):
        raise ValueError(f"to_river expects a fastomkl estimator, got {type(model).__name__}")
    if isinstance(model, (BinaryClassifier, MulticlassClassifier)):
        return RiverClassifier(model)
    return RiverRegressor(model)


class _RiverWrapper:
    """The part of river's protocol that regressors and classifiers share."""

    _prediction_before_learning = None

    def __init__(self, model):
        self.model = model

    def learn_one(self, x, y) -> None:
        """Learn one sample (a dict of feature name -> value, or a sequence of numbers).

        Parameters
        ----------
        x : dict or sequence of float
        y : float, or a label for a classifier

        Returns
        -------
        None
            River's protocol.
        """
        self.model.learn_one(x, y)

    def predict_one(self, x):
        """The model's prediction for x; while it has learnt nothing, 0.0 (regressor) or None.

        Parameters
        ----------
        x : dict or sequence of float

        Returns
        -------
        float, a label, or None
        """
        try:
            prediction = self.model.predict_one(x)
        except NotFittedError:
            return self._prediction_before_learning
        return _plain(prediction)

    def clone(self, new_params: dict | None = None, include_attributes: bool = False):
        """A wrapper of a fresh copy of the model (same parameters, nothing learnt).

        Parameters
        ----------
        new_params : dict, default None
            Replacement constructor parameters of the wrapper (``{"model": ...}``).
        include_attributes : bool, default False
            True copies what the model has learnt as well.

        Returns
        -------
        a wrapper of the same class
        """
        if include_attributes:
            return copy.deepcopy(self)
        fresh = type(self.model)(**self.model.get_params())
        return type(self)(**{"model": fresh, **(new_params or {})})


class RiverRegressor(_RiverWrapper, base.Regressor):
    """A fastomkl regressor as a ``river.base.Regressor`` (see ``to_river``).

    Parameters
    ----------
    model : fastomkl regressor
        Learns through the wrapper (it is not copied).

    Examples
    --------
    >>> from river import evaluate, metrics
    >>> from fastomkl import Gaussian, Raker
    >>> from fastomkl.river import RiverRegressor
    >>> stream = [({"a": 0.1 * (t % 10), "b": 1.0}, 0.2 * (t % 10)) for t in range(100)]
    >>> model = RiverRegressor(Raker([Gaussian(1.0)], n_components=8, random_state=0))
    >>> evaluate.progressive_val_score(stream, model, metrics.MAE())
    MAE: 0.13...
    """

    _prediction_before_learning = 0.0


class RiverClassifier(_RiverWrapper, base.Classifier):
    """A fastomkl classifier as a ``river.base.Classifier`` (see ``to_river``).

    ``predict_proba_one`` is available when the model has ``predict_proba`` (logistic loss, or
    the softmax of ``DoublySGDSoftmaxClassifier``).  A multiclass model is marked as one to river
    (``_multiclass``), whose checks and metrics read that.

    Parameters
    ----------
    model : fastomkl binary or multiclass classifier
        Learns through the wrapper (it is not copied).

    Examples
    --------
    >>> from fastomkl import Gaussian, RakerClassifier
    >>> from fastomkl.river import RiverClassifier
    >>> model = RiverClassifier(RakerClassifier([Gaussian(1.0)], n_components=8, random_state=0))
    >>> for t in range(50):
    ...     model.learn_one({"x": (t % 10) / 10}, "big" if t % 10 >= 5 else "small")
    >>> model.predict_one({"x": 0.9}), sorted(model.predict_proba_one({"x": 0.9}))
    ('big', ['big', 'small'])
    """

    @property
    def _multiclass(self) -> bool:
        return isinstance(self.model, MulticlassClassifier)

    def predict_proba_one(self, x) -> dict:
        """The probability of each class for x; {} while the model has learnt nothing.

        Parameters
        ----------
        x : dict or sequence of float

        Returns
        -------
        dict
            label -> probability, over ``model.classes_`` (a model that has seen one class
            predicts it with certainty, as ``predict_one`` does).
        """
        model = self.model
        if not hasattr(model, "predict_proba"):     # river's own signal for label-only classifiers
            raise NotImplementedError(f"{type(model).__name__} has no predict_proba")
        if model.n_samples_seen_ == 0:
            return {}
        labels = [_plain(label) for label in model.classes_]
        if len(labels) == 1:
            return {labels[0]: 1.0}
        row = model._dict_values(x) if type(x) is dict else x
        return dict(zip(labels, model.predict_proba([row])[0].tolist()))


def _plain(value):
    """A NumPy scalar as the Python scalar river's metrics and dict keys expect."""
    return value.item() if isinstance(value, np.generic) else value
