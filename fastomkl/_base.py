"""The estimator base every model shares: the API, validation, lazy build, parameters, persistence.

A subclass states its parameters in ``__init__`` (stored unchanged, scikit-learn style), checks them
in ``_check_params`` and assembles its compiled engine in ``_build_engine``; everything else
(prediction, learning, streams, parameters, saving, pickling) lives here once.
"""
from __future__ import annotations

import inspect

import numpy as np

from fastomkl._validation import (NotFittedError, check_matrix, check_sample, check_target_value,
                                  check_targets, split_random_state)

_REGISTRY: dict[str, type] = {}


class OnlineEstimator:
    """Base of every fastomkl model (regressors directly, classifiers through ``BinaryClassifier``).

    Methods (``x`` one sample, ``X`` a 2-D batch):

    * ``predict_one(x)``: the prediction for x, without learning; deterministic, consumes no
      randomness.  A model that has seen nothing predicts from its initial state.
    * ``learn_one(x, y)``; ``predict_learn_one(x, y)``: the prequential step (the prediction made
      before learning y) in one compiled call.
    * ``predict(X)``; ``partial_fit(X, y)``; ``fit(X, y)`` (reset, then one online pass);
      ``predict_learn(X, y)``: the prequential predictions of a whole stream, looped in C.

    Inputs may be lists, float32 or non-contiguous arrays.  A call with bad input raises
    ``ValueError`` and leaves the model exactly as it was.
    """

    _engine = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls

    # -- to implement ------------------------------------------------------------------------------
    def _check_params(self) -> dict:
        """Validated, normalised configuration from the public parameters (raise ValueError)."""
        return {}

    def _random_streams(self, config: dict):
        """(feature stream, per-round bit generator), independent streams of ``random_state``."""
        return split_random_state(self.random_state)

    def _build_engine(self, config: dict, n_features: int, feature_rng, round_bit_generator):
        """The compiled Engine for inputs of width n_features."""
        raise TypeError(f"{type(self).__name__} does not define a model")

    # -- parameters (scikit-learn's protocol) ------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values()
                if p.name != "self" and p.kind is not p.VAR_KEYWORD]

    def get_params(self, deep: bool = True) -> dict:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set parameters; the model is then reset (it starts learning afresh)."""
        valid = self._param_names()
        for name in params:
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                 f"valid parameters: {valid}")
        trial = type(self)(**{**self.get_params(), **params})
        trial._check_params()
        for name, value in params.items():
            setattr(self, name, value)
        self._reset()
        return self

    def __repr__(self) -> str:
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = [f"{k}={v!r}" for k, v in self.get_params().items()
                   if not _same(v, defaults.get(k, inspect.Parameter.empty))]
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):
        """scikit-learn's estimator tags (only called by scikit-learn, so imported lazily)."""
        from sklearn.utils import InputTags, RegressorTags, Tags, TargetTags
        return Tags(estimator_type="regressor", target_tags=TargetTags(required=True),
                    regressor_tags=RegressorTags(poor_score=True), input_tags=InputTags())

    # -- build ------------------------------------------------------------------------------------
    def _reset(self) -> None:
        self._engine = None
        for name in ("n_features_in_",):
            self.__dict__.pop(name, None)

    def _engine_for(self, n_features: int):
        engine = self._engine
        if engine is None:
            config = self._check_params()
            feature_rng, round_bit_generator = self._random_streams(config)
            engine = self._build_engine(config, n_features, feature_rng, round_bit_generator)
            self._engine = engine
            self.n_features_in_ = n_features
        return engine

    def _engine_for_sample(self, x):
        """The engine, built for x's width if this is the first sample (validated first)."""
        engine = self._engine
        if engine is None:
            engine = self._engine_for(check_sample(x).shape[0])
        return engine

    def _fitted_engine(self):
        engine = self._engine
        if engine is None:
            raise NotFittedError(f"this {type(self).__name__} has seen no data yet: call "
                                 f"partial_fit, fit or learn_one first")
        return engine

    @property
    def n_rejected_updates_(self) -> int:
        """Updates refused because they would have made the state non-finite (each one also
        raised a ``fastomkl.NumericalWarning``); 0 on sane data and step sizes."""
        engine = self._engine
        return 0 if engine is None else engine.n_rejected_updates

    @property
    def n_samples_seen_(self) -> int:
        engine = self._engine
        return 0 if engine is None else engine.t

    # -- targets (classifiers override) ----------------------------------------------------------
    def _known_code(self, y):
        """y as the engine's target when that needs no checks beyond the engine's, else None."""
        return None if y is None else y

    def _prepare_target(self, y):
        """(the engine's target for y, a callable that records it); validates, changes nothing."""
        return check_target_value(y), _nothing

    def _encode_many(self, y, n_samples: int) -> np.ndarray:
        return check_targets(y, n_samples)

    def _decode_one(self, score: float):
        return score

    def _decode_many(self, scores: np.ndarray) -> np.ndarray:
        return scores

    # -- one sample -------------------------------------------------------------------------------
    def predict_one(self, x):
        engine = self._engine
        if engine is None:
            engine = self._engine_for_sample(x)
        return self._decode_one(engine.predict_one(x))

    def predict_learn_one(self, x, y):
        engine = self._engine
        code = self._known_code(y)
        if engine is None or code is None:
            return self._careful_predict_learn_one(x, y)
        return self._decode_one(engine.predict_learn_one(x, code))

    def _careful_predict_learn_one(self, x, y):
        """First sample or new label: validate x and y completely before anything changes."""
        engine = self._engine
        x = check_sample(x, None if engine is None else engine.n_features)
        code, commit = self._prepare_target(y)
        engine = self._engine_for(x.shape[0])
        y_hat = engine.predict_learn_one(x, code)
        commit()
        return self._decode_one(y_hat)

    def learn_one(self, x, y):
        self.predict_learn_one(x, y)
        return self

    # -- batches ----------------------------------------------------------------------------------
    def _scores(self, X) -> np.ndarray:
        engine = self._fitted_engine()
        X = check_matrix(X, n_features=engine.n_features, owner=type(self).__name__)
        out = np.empty(X.shape[0])
        engine.predict_many(X, out)
        return out

    def predict(self, X) -> np.ndarray:
        """Predictions for every row of X, without learning."""
        return self._decode_many(self._scores(X))

    def predict_learn(self, X, y) -> np.ndarray:
        """Prequential pass: for each row, predict, then learn its target; returns the predictions."""
        engine = self._engine
        X = check_matrix(X, n_features=None if engine is None else engine.n_features,
                         owner=type(self).__name__)
        y = self._encode_many(y, X.shape[0])
        engine = self._engine_for(X.shape[1])
        out = np.empty(X.shape[0])
        engine.predict_learn_many(X, y, out)
        return self._decode_many(out)

    def partial_fit(self, X, y):
        self.predict_learn(X, y)
        return self

    def fit(self, X, y):
        """Start afresh and learn the stream (X, y) in one online pass."""
        X = check_matrix(X)
        fresh = type(self)(**self.get_params())  # validate as a fresh model would, before forgetting
        fresh._check_params()
        fresh._encode_many(y, X.shape[0])
        self._reset()
        return self.partial_fit(X, y)

    # -- persistence ------------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the model to ``path`` (see ``fastomkl.persistence`` for the format)."""
        from fastomkl.persistence import save
        save(self, path)

    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items() if k != "_engine"}
        engine = self._engine
        if engine is not None:
            state["_engine_arrays"] = engine.get_state()
            state["_engine_rng"] = engine.rng_state
        return state

    def __setstate__(self, state):
        arrays = state.pop("_engine_arrays", None)
        rng = state.pop("_engine_rng", None)
        self.__dict__.update(state)
        self._engine = None
        if arrays is not None:
            self._restore_engine(state["n_features_in_"], arrays, rng)

    def _restore_engine(self, n_features: int, arrays: dict, rng_state: dict) -> None:
        self._engine = None
        engine = self._engine_for(n_features)
        engine.set_state(arrays)
        engine.rng_state = rng_state


def _nothing() -> None:
    pass


def _same(a, b) -> bool:
    try:
        return bool(a == b) if not isinstance(a, (list, np.ndarray)) else a is b
    except Exception:
        return False


class BinaryClassifier(OnlineEstimator):
    """Two-class models: labels map to -1/+1 internally; ``predict*`` return labels.

    ``classes_`` is fixed by ``partial_fit(..., classes=...)``, or else learnt from the labels seen:
    -1/+1, 0/1 and False/True map to -1/+1 whatever order they arrive in; other labels are sorted
    when one batch shows both, and otherwise taken in order of first appearance (the first is -1).
    """

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags
        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags(poor_score=True, multi_class=False),
                    input_tags=InputTags())

    def _reset(self) -> None:
        super()._reset()
        self.__dict__.pop("classes_", None)
        self.__dict__.pop("_codes", None)

    def _learn_classes(self, labels) -> dict:
        """The label -> +-1 map after seeing `labels` (not stored; raises for a third class)."""
        codes = dict(getattr(self, "_codes", {}))
        new = [c for c in dict.fromkeys(labels) if c not in codes]
        if not new:
            return codes
        known = list(codes)
        if len(known) + len(new) > 2:
            raise ValueError(f"Only binary classification is supported: {type(self).__name__} got "
                             f"labels {sorted(map(repr, set(known) | set(new)))}, more than two "
                             f"classes")
        everything = known + new
        if all(isinstance(c, (bool, int, float)) and c in (-1, 0, 1) for c in everything):
            natural = {c: (1.0 if c > 0 else -1.0) for c in everything}
            if len(set(natural.values())) == len(natural):
                return natural
        if not known and len(new) == 2:
            new = sorted(new)
        for c in new:
            codes[c] = -next(iter(codes.values())) if codes else -1.0
        return codes

    def _commit_classes(self, codes: dict) -> None:
        self._codes = codes
        self.classes_ = np.array(sorted(codes, key=codes.get))

    def _known_code(self, y):
        codes = getattr(self, "_codes", None)
        try:
            return None if codes is None else codes.get(y)
        except TypeError:          # unhashable label: the careful path explains
            return None

    def _prepare_target(self, y):
        label = _label(y)
        codes = self._learn_classes([label])
        return codes[label], lambda: self._commit_classes(codes)

    def _encode_many(self, y, n_samples: int) -> np.ndarray:
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n_samples:
            raise ValueError(f"y must be 1-D with {n_samples} labels, got shape {y.shape}")
        if y.dtype.kind == "f" and np.isfinite(y).all() and np.any(y != np.round(y)):
            raise ValueError("Unknown label type: continuous target values; a classifier needs "
                             "two classes of labels")
        labels = [_label(v) for v in np.unique(y)] if n_samples else []
        codes = self._learn_classes(labels)
        self._commit_classes(codes)
        return np.array([codes[_label(v)] for v in y], dtype=np.float64)

    def partial_fit(self, X, y, classes=None):
        if classes is not None and not hasattr(self, "_codes"):
            X = check_matrix(X)
            self._encode_many(np.asarray(classes), len(classes))
        return super().partial_fit(X, y)

    def _decode_one(self, score: float):
        classes = getattr(self, "classes_", None)
        if classes is None:
            return 1.0 if score > 0 else -1.0
        return classes[-1] if score > 0 else classes[0]

    def _decode_many(self, scores: np.ndarray) -> np.ndarray:
        classes = getattr(self, "classes_", None)
        if classes is None:
            return np.where(scores > 0, 1.0, -1.0)
        return np.where(scores > 0, classes[-1], classes[0])

    def decision_function(self, X) -> np.ndarray:
        """The real-valued scores (positive: ``classes_[-1]``)."""
        return self._scores(X)

    def decision_function_one(self, x) -> float:
        engine = self._engine
        if engine is None:
            engine = self._engine_for_sample(x)
        return engine.predict_one(x)


def _label(value):
    """A label as a hashable Python scalar; NaN and unhashable values are rejected."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        raise ValueError(f"labels must not be NaN or infinite, got {value}")
    try:
        hash(value)
    except TypeError:
        raise ValueError(f"labels must be scalars, got {value!r}") from None
    return value
