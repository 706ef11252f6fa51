"""The estimator base every model shares: the API, validation, lazy build, parameters, persistence.

A subclass states its parameters in ``__init__`` (stored unchanged, scikit-learn style), checks them
in ``_check_params`` and assembles its compiled engine in ``_build_engine``; everything else
(prediction, learning, streams, parameters, saving, pickling) lives here once.
"""
from __future__ import annotations

import functools

import inspect
import numbers
import threading
from contextlib import contextmanager

import numpy as np

from fastomkl._estimator.params import validate_parameters
from fastomkl._validation import (NotFittedError, check_matrix, check_random_state, check_sample,
                                  check_target_value, check_targets, split_random_state)

_REGISTRY: dict[str, type] = {}
# Held while a model builds its engine on its first learning call, so that threads which start
# learning on a fresh model at once all learn into the one engine that is built (rare and short:
# one build per model).
_BUILD_LOCK = threading.RLock()       # reentrant: a mixture builds its members
# The most a model may allocate for its state when it is built, in doubles (1 GiB): a setting
# that implies more is refused with the size it would take, before anything is allocated.
MAX_STATE_DOUBLES = 1 << 27



class available_if:
    """Decorate a method that exists only when ``check(model)`` holds: otherwise reading it raises
    ``AttributeError(reason)``, so ``hasattr`` answers as scikit-learn's tools expect (a hinge
    classifier has no ``predict_proba``)."""

    def __init__(self, check, reason: str):
        self.check, self.reason = check, reason

    def __call__(self, method):
        self.method = method
        functools.update_wrapper(self, method)
        return self

    def __get__(self, model, owner=None):
        if model is None:
            return self
        if not self.check(model):
            raise AttributeError(self.reason)
        return self.method.__get__(model, owner)

class OnlineEstimator:
    """Base of every fastomkl model (regressors directly, classifiers through ``BinaryClassifier``).

    Methods (``x`` one sample, ``X`` a 2-D batch):

    * ``predict_one(x)``: the prediction for x, without learning; deterministic, consumes no
      randomness.  A model that has learnt nothing raises ``NotFittedError``, as ``predict`` does.
    * ``learn_one(x, y)``; ``predict_learn_one(x, y)``: the prequential step (the prediction made
      before learning y) in one compiled call.
    * ``predict(X)``; ``partial_fit(X, y)``; ``fit(X, y)`` (reset, then one online pass);
      ``predict_learn(X, y)``: the prequential predictions of a whole stream, looped in C.
    * ``score(X, y)``: scikit-learn's default metric (R^2; accuracy for classifiers).

    Inputs may be lists, float32 or non-contiguous arrays.  A call with bad input raises
    ``ValueError`` and leaves the model exactly as it was.

    A sample may also be a dict of feature name -> value (river's samples) in the ``*_one``
    methods.  The first dict learnt fixes the feature order as its keys sorted (so the order keys
    arrive in never matters) and stores it as ``feature_names_in_``; every later dict must have
    exactly those keys (a missing or unknown key is a ValueError naming it: a missing feature is
    not taken as 0, since 0 is a point like any other to a kernel).  Arrays still work on such a
    model, read in that order.  ``fastomkl.river.to_river`` makes a model a river estimator.
    """

    _engine = None
    # What each constructor parameter accepts (fastomkl._estimator.params), and the old names of
    # renamed parameters (old -> new) that the constructor still takes for one release.
    _parameter_constraints: dict = {}
    _renamed_parameters: dict = {}
    # True when y is the engine's target and its output the answer (the target hooks below are
    # not overridden): the one-sample methods then skip the hooks' two method calls, a fifth of
    # the Python boundary's cost per request.
    _plain_targets = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls
        cls._plain_targets = (cls._known_code is OnlineEstimator._known_code
                              and cls._decode_one is OnlineEstimator._decode_one)

    # -- to implement ------------------------------------------------------------------------------
    def _check_params(self) -> dict:
        """Normalised configuration from the public parameters, each already accepted by its
        declaration (``_parameter_constraints``): the rules that tie parameters together go here
        (raise ValueError)."""
        return {}

    @classmethod
    def _unit_test_params(cls):
        """Small parameter sets the common tests build this class with (the first: its smallest
        useful configuration).  A class that needs arguments, or whose defaults are large,
        overrides this."""
        return [{}]

    def _random_streams(self, config: dict):
        """(feature stream, per-round bit generator), independent streams of ``random_state``; a
        model that draws nothing has no ``random_state`` and gets fixed streams it never reads."""
        return split_random_state(getattr(self, "random_state", 0))

    def _build_engine(self, config: dict, n_features: int, feature_rng, round_bit_generator):
        """The compiled Engine for inputs of width n_features."""
        raise TypeError(f"{type(self).__name__} does not define a model")

    def _winsorises_targets(self, config: dict) -> bool:
        """Whether the engine winsorises the targets (regression targets: once 10 are seen, one
        beyond 8 standard deviations of the mean of those before it enters the statistics and
        the model as mean +- 8 sd, so that a spike washes out; see
        ``fastomkl._core.engine.winsorised_update``).  Classifiers' labels and the one-class
        models' constant targets are not winsorised."""
        return True

    # -- parameters (scikit-learn's protocol) ------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values()
                if p.name != "self" and p.kind is not p.VAR_KEYWORD]

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's parameters, as passed (scikit-learn's protocol).

        Parameters
        ----------
        deep : bool, default True
            Accepted for scikit-learn; a model holds no nested estimators.

        Returns
        -------
        dict
            Parameter name -> value; ``type(model)(**model.get_params())`` is a fresh copy.

        Examples
        --------
        >>> from fastomkl import Gaussian, Raker
        >>> Raker([Gaussian(1.0)], n_components=8).get_params()["n_components"]
        8
        """
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set parameters; the model is then reset (it starts learning afresh).

        Parameters
        ----------
        **params
            New values of constructor parameters.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For an unknown name or an invalid value; the model is then left unchanged.

        Examples
        --------
        >>> from fastomkl import Gaussian, Raker
        >>> model = Raker([Gaussian(1.0)], n_components=8).set_params(n_components=4)
        >>> model.n_components, model.n_samples_seen_
        (4, 0)
        """
        valid = self._param_names()
        for name in params:
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                 f"valid parameters: {valid}")
        trial = type(self)(**{**self.get_params(), **params})
        trial._check_all_params()
        self._reset()
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __setattr__(self, name, value):
        # A fitted model's state was learnt with its parameters: a new value assigned to one would
        # not reach that state (learning would go on with the old value, and a file saved after
        # would pair the new value with the old state, which may not even load), so it is refused;
        # set_params, which starts the model afresh, is the way to change one.
        if (self._engine is not None and name in _parameter_names(type(self))
                and not _same(value, getattr(self, name))):
            raise ValueError(
                f"{type(self).__name__} has learnt with {name}={getattr(self, name)!r}, and a new "
                f"value would not reach what it learnt: set_params({name}=...) starts it afresh "
                f"with the new value (clone it first to keep this one)")
        object.__setattr__(self, name, value)

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
    def _check_all_params(self) -> dict:
        """Everything the first learning call checks that needs only the parameters."""
        validate_parameters(self)
        config = self._check_params()
        if "random_state" in self._param_names():
            check_random_state(self.random_state)
        return config

    # What a model learns beside its engine: a reset drops it (a refit builds today's layout
    # too), a refit takes it from the fresh copy that learnt.
    _learnt_attributes = ("n_features_in_", "_feature_names", "_file_layout")

    def _reset(self) -> None:
        self._engine = None
        for name in self._learnt_attributes:
            self.__dict__.pop(name, None)

    def _engine_for(self, n_features: int):
        engine = self._engine
        if engine is None:
            with _BUILD_LOCK:
                engine = self._engine
                if engine is None:
                    config = self._check_all_params()
                    self._check_size(n_features)
                    engine = self._new_engine(config, n_features,
                                              self._random_streams(config))
                    if self._snapshots:
                        compiled = getattr(engine, "_inner", engine)
                        compiled.twin_factory = functools.partial(self._twin_engine, config,
                                                                  n_features)
                    self._engine = engine
                    self.n_features_in_ = n_features
        return engine

    # Whether predict_one reads a snapshot while a batch learns (the engine's docstring); a model
    # whose engine holds other models' engines (Mixture) cannot copy them and says False.
    _snapshots = True

    def _twin_engine(self, config: dict, n_features: int):
        """A compiled engine of the layout of this model's, for the snapshots predictions read
        while a batch learns: its state, the features' included, is copied from the model, so
        its own random draws do not matter (a user's generator is not drawn from again)."""
        seed = getattr(self, "random_state", 0)
        streams = (self._random_streams(config) if seed is None or isinstance(seed, numbers.Integral)
                   else split_random_state(0))
        engine = self._new_engine(config, n_features, streams)
        return getattr(engine, "_inner", engine)

    def _new_engine(self, config: dict, n_features: int, streams):
        """The model's engine built from (feature stream, per-round bit generator), winsorising
        its targets where the model does."""
        engine = self._build_engine(config, n_features, *streams)
        if self._winsorises_targets(config):
            engine.winsorize_targets()
        return engine

    def _implied_state_size(self, n_features: int) -> int:
        """Doubles the engine allocates for its state when it is built (models whose state is
        large for some settings say how large; 0: small)."""
        return 0

    def _check_size(self, n_features: int) -> None:
        size = self._implied_state_size(n_features)
        if size > MAX_STATE_DOUBLES:
            raise ValueError(f"{type(self).__name__} with these parameters on {n_features} "
                             f"features would take {size * 8 / 2 ** 30:.1f} GiB of state, more "
                             f"than the {MAX_STATE_DOUBLES * 8 / 2 ** 30:.0f} GiB a model may: "
                             f"use fewer components or kernels, or a smaller degree")

    def _fitted_engine(self):
        engine = self._engine
        if engine is None:
            raise self._not_fitted()
        return engine

    def _not_fitted(self) -> NotFittedError:
        return NotFittedError(f"this {type(self).__name__} has seen no data yet: call "
                              f"partial_fit, fit or learn_one first")

    def _combiner_weights(self) -> np.ndarray:
        """The combiner's log-weights, normalised (for combiners that keep only log_w)."""
        log_w = np.asarray(self._fitted_engine().combiner.log_w)
        w = np.exp(log_w - log_w.max())
        return w / w.sum()

    def _kernel_weights(self, expert_weights=None) -> np.ndarray:
        """Normalised weights per kernel: the experts' (``_combiner_weights`` unless given),
        summed over each kernel's experts, so a step ensemble's kernel weighs what its members
        weigh together."""
        w = self._combiner_weights() if expert_weights is None else np.asarray(expert_weights)
        return w.reshape(-1, self._fitted_engine().experts.per_kernel).sum(axis=1)

    @property
    def n_rejected_updates_(self) -> int:
        """Updates refused because they would have made the state non-finite (each one also
        raised a ``fastomkl.NumericalWarning``); 0 on sane data and step sizes."""
        engine = self._engine
        return 0 if engine is None else engine.n_rejected_updates

    @property
    def n_samples_seen_(self) -> int:
        """The number of samples learnt since the model was created, fitted afresh or reset.

        Returns
        -------
        int

        Examples
        --------
        >>> from fastomkl import Gaussian, Raker
        >>> model = Raker([Gaussian(1.0)], n_components=8, random_state=0)
        >>> model.learn_one([0.1, 0.2], 1.0).learn_one([0.3, 0.1], 0.5).n_samples_seen_
        2
        """
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

    # -- named features (river's dict samples) --------------------------------------------------
    @property
    def feature_names_in_(self) -> np.ndarray:
        """The feature names, in the model's feature order, when it learnt from dict samples or a
        table with string column names (a pandas DataFrame, say).

        The first dict learnt fixes the order (its keys, sorted), or the first table (its
        columns, in order); a later table must have the same columns in the same order.  Absent
        (AttributeError) for a model that learnt from arrays.

        Returns
        -------
        ndarray of object, shape (``n_features_in_``,)

        Examples
        --------
        >>> from fastomkl import Gaussian, Raker
        >>> model = Raker([Gaussian(1.0)], n_components=8, random_state=0)
        >>> model.learn_one({"b": 0.2, "a": 0.1}, 1.0).feature_names_in_.tolist()
        ['a', 'b']
        """
        names = self.__dict__.get("_feature_names")
        if names is None:
            raise AttributeError(f"this {type(self).__name__} has learnt no dict sample, so its "
                                 f"features have no names")
        return np.fromiter(names, dtype=object, count=len(names))   # tuple keys stay tuples

    def _feature_names_for(self, x: dict) -> tuple:
        """The feature order a dict sample is read in: the stored one, or x's sorted keys for the
        model's first sample (stored once that sample is learnt)."""
        names = self.__dict__.get("_feature_names")
        if names is not None:
            return names
        if self._engine is not None:
            raise ValueError(f"this {type(self).__name__} learnt from arrays, so its features have "
                             f"no names: pass x as a sequence of {self._engine.n_features} "
                             f"numbers, not a dict")
        try:
            return tuple(sorted(x))
        except TypeError:
            raise ValueError(f"the keys of a dict sample fix the feature order, so they must be "
                             f"sortable (all strings, say), got {list(x)}") from None

    def _dict_values(self, x: dict) -> list:
        """x's values in the model's feature order (ValueError naming missing or unknown keys)."""
        names = self.__dict__.get("_feature_names")
        return _values_in_order(x, self._feature_names_for(x) if names is None else names)

    def prepare_serving(self):
        """Build now the snapshots that predictions read while a batch learns.

        A ``predict_one`` that meets a batch call (``partial_fit``, ``predict_learn``) in another
        thread reads a snapshot of the model (``docs/serving.rst``).  The snapshots (two engines
        of the model's layout) are built when the first such prediction asks for them, and that
        prediction waits for it: 7.5 ms for Raker with 76 kernels, 55 ms for VAW2 with 76
        kernels, once.  A service that learns in one thread and predicts in another calls this
        once the model is fitted or loaded, so that no request pays for it.  It doubles the
        model's memory.  A growing model (kernel expansions, Nystrom dictionaries, DSG) keeps
        them when its arrays grow; a ``Mixture`` serves from the model itself and builds none.

        Returns
        -------
        self

        Raises
        ------
        NotFittedError
            If the model has learnt nothing yet.
        """
        engine = self._fitted_engine()
        getattr(engine, "_inner", engine).prepare_snapshots()
        return self

    # -- one sample -------------------------------------------------------------------------------
    def predict_one(self, x):
        """The prediction for one sample, without learning.

        Deterministic: it consumes no randomness and changes nothing.

        Parameters
        ----------
        x : sequence of float, shape (n_features,), or dict
            One sample: an array, list or tuple, or a dict of feature name -> value (river's
            samples; its keys must be exactly ``feature_names_in_``, in any order).

        Returns
        -------
        float, or a label of ``classes_`` for a classifier

        Raises
        ------
        NotFittedError
            If the model has learnt nothing yet.
        ValueError
            For a sample of the wrong width or keys, or with values that are not finite numbers.

        Examples
        --------
        >>> from fastomkl import Gaussian, Raker
        >>> model = Raker([Gaussian(1.0)], n_components=8, random_state=0)
        >>> y_hat = model.learn_one([0.1, 0.2], 1.0).predict_one([0.1, 0.2])
        >>> bool(y_hat == model.predict([[0.1, 0.2]])[0])
        True
        """
        engine = self._engine
        if engine is None:
            raise self._not_fitted()
        if type(x) is dict:
            x = self._dict_values(x)
        if self._plain_targets:
            return engine.predict_one(x)
        return self._decode_one(engine.predict_one(x))

    def predict_learn_one(self, x, y):
        """The prequential step: predict x, then learn (x, y), in one compiled call.

        Parameters
        ----------
        x : sequence of float, shape (n_features,), or dict
            One sample (see ``predict_one``).  The model's first sample fixes its width, or, for a
            dict, its feature names (``feature_names_in_``, the keys sorted).
        y : float, or a label for a classifier
            The sample's target.

        Returns
        -------
        float, or a label of ``classes_`` for a classifier
            The prediction made before learning y.

        Raises
        ------
        ValueError
            For a bad sample or target; the model is then left exactly as it was.

        Examples
        --------
        >>> from fastomkl import Gaussian, Raker
        >>> model = Raker([Gaussian(1.0)], n_components=8, random_state=0)
        >>> model.predict_learn_one([0.1, 0.2], 1.0)      # nothing learnt yet: the initial model
        0.0
        """
        engine = self._engine
        if self._plain_targets:
            if engine is None or y is None:
                return self._careful_predict_learn_one(x, y)
            if type(x) is dict:
                x = self._dict_values(x)
            return engine.predict_learn_one(x, y)
        code = self._known_code(y)
        if engine is None or code is None:
            return self._careful_predict_learn_one(x, y)
        if type(x) is dict:
            x = self._dict_values(x)
        return self._decode_one(engine.predict_learn_one(x, code))

    def _careful_predict_learn_one(self, x, y):
        """First sample or new label: validate x and y completely before anything changes."""
        engine = self._engine
        names = None
        if type(x) is dict:
            names = self._feature_names_for(x)
            x = _values_in_order(x, names)
        x = check_sample(x, None if engine is None else engine.n_features)
        code, commit = self._prepare_target(y)
        with _unchanged_on_error(self):
            engine = self._engine_for(x.shape[0])
            y_hat = engine.predict_learn_one(x, code)
            commit()
            if names is not None:
                self._feature_names = names
        return self._decode_one(y_hat)

    def learn_one(self, x, y):
        """Learn one sample (river's protocol, with scikit-learn's chaining).

        Parameters
        ----------
        x : sequence of float, shape (n_features,), or dict
            One sample (see ``predict_learn_one``).
        y : float, or a label for a classifier
            The sample's target.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For a bad sample or target; the model is then left exactly as it was.

        Examples
        --------
        >>> from fastomkl import Gaussian, Raker
        >>> model = Raker([Gaussian(1.0)], n_components=8, random_state=0)
        >>> for x, y in [({"a": 0.1, "b": 0.2}, 1.0), ({"b": 0.0, "a": 0.3}, 0.5)]:
        ...     _ = model.learn_one(x, y)
        >>> model.n_samples_seen_
        2
        """
        self.predict_learn_one(x, y)
        return self

    # -- batches ----------------------------------------------------------------------------------
    def _check_columns(self, X):
        """X's column names (a table's), checked against those the model learnt: the same
        names in the same order, as scikit-learn checks ``feature_names_in_``."""
        names = _column_names(X)
        known = self.__dict__.get("_feature_names")
        if names is not None and known is not None and names != known:
            missing = [n for n in known if n not in names]
            unknown = [n for n in names if n not in known]
            wrong = [f"{what} {names_}" for what, names_ in (("missing", missing),
                                                                ("unknown", unknown)) if names_]
            raise ValueError(f"X's columns must be the features the model learnt, in its order "
                             f"{list(known)}: " + (", ".join(wrong) or "they come in another "
                                                   "order"))
        return names

    def _scores(self, X) -> np.ndarray:
        engine = self._fitted_engine()
        with _batch_call(engine):
            self._check_columns(X)
            X = check_matrix(X, n_features=engine.n_features, owner=type(self).__name__)
            out = np.empty(X.shape[0])
            engine.predict_many(X, out)
        return out

    def predict(self, X) -> np.ndarray:
        """Predictions for every row of X, without learning (looped in C).

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples,)
            Real values, or labels of ``classes_`` for a classifier.

        Raises
        ------
        NotFittedError
            If the model has learnt nothing yet.
        ValueError
            For bad input (wrong width, NaN, ...).

        Examples
        --------
        >>> import numpy as np
        >>> from fastomkl import Gaussian, Raker
        >>> X = np.random.default_rng(0).uniform(size=(20, 3))
        >>> Raker([Gaussian(1.0)], n_components=8, random_state=0).fit(X, X.sum(1)).predict(X).shape
        (20,)
        """
        return self._decode_many(self._scores(X))

    def predict_learn(self, X, y) -> np.ndarray:
        """Prequential pass: for each row in turn, predict, then learn its target (looped in C).

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
            Targets, or labels for a classifier.

        Returns
        -------
        ndarray, shape (n_samples,)
            Each row's prediction made before learning it: the online (prequential) predictions.

        Raises
        ------
        ValueError
            For bad input; the model is then left exactly as it was.

        Examples
        --------
        >>> import numpy as np
        >>> from fastomkl import Gaussian, Raker
        >>> X = np.random.default_rng(0).uniform(size=(20, 3))
        >>> model = Raker([Gaussian(1.0)], n_components=8, random_state=0)
        >>> online = model.predict_learn(X, X.sum(1))
        >>> one_by_one = Raker([Gaussian(1.0)], n_components=8, random_state=0)
        >>> bool(np.array_equal(online, [one_by_one.predict_learn_one(x, x.sum()) for x in X]))
        True
        """
        engine = self._engine
        with _batch_call(engine) as call:
            names = self._check_columns(X)
            X = check_matrix(X, n_features=None if engine is None else engine.n_features,
                             owner=type(self).__name__)
            with _unchanged_on_error(self):
                y = self._encode_many(y, X.shape[0])
                engine = self._engine_for(X.shape[1])
                call.follow(engine)
                out = np.empty(X.shape[0])
                engine.predict_learn_many(X, y, out)
                if names is not None and "_feature_names" not in self.__dict__:
                    self._feature_names = names
        return self._decode_many(out)

    def partial_fit(self, X, y):
        """Continue learning: one online pass over the rows of (X, y), in order.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For bad input; the model is then left exactly as it was.

        Examples
        --------
        >>> import numpy as np
        >>> from fastomkl import Gaussian, Raker
        >>> X = np.random.default_rng(0).uniform(size=(20, 3))
        >>> model = Raker([Gaussian(1.0)], n_components=8, random_state=0)
        >>> model = model.partial_fit(X[:10], X[:10].sum(1)).partial_fit(X[10:], X[10:].sum(1))
        >>> model.n_samples_seen_
        20
        """
        self.predict_learn(X, y)
        return self

    def fit(self, X, y, *, shuffle=True, n_epochs=1):
        """Start afresh and learn (X, y): ``n_epochs`` online passes over the rows, each in a
        random order unless ``shuffle=False`` (scikit-learn's ``SGDRegressor`` habit).

        ``partial_fit`` and the one-sample methods keep the order they are given (a stream);
        ``fit`` treats its rows as a sample, whose file order (sorted by class, say) says nothing,
        so it shuffles them, from ``random_state`` (a model that draws nothing shuffles from a
        fixed seed): the same seed, the same fit.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
        shuffle : bool, default True
            Learn the rows in a random order (a new one each epoch); False keeps their order.
        n_epochs : int, default 1
            Passes over the rows.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For bad input or parameters; the model is then left exactly as it was.

        Examples
        --------
        >>> import numpy as np
        >>> from fastomkl import Gaussian, Raker
        >>> X = np.random.default_rng(0).uniform(size=(20, 3))
        >>> model = Raker([Gaussian(1.0)], n_components=8, random_state=0).fit(X, X.sum(1))
        >>> model.fit(X, X.sum(1), n_epochs=2).n_samples_seen_       # a refit starts afresh
        40
        >>> in_order = Raker([Gaussian(1.0)], n_components=8, random_state=0)
        >>> bool(np.array_equal(in_order.fit(X, X.sum(1), shuffle=False).predict(X),
        ...                     Raker([Gaussian(1.0)], n_components=8, random_state=0)
        ...                     .partial_fit(X, X.sum(1)).predict(X)))
        True
        """
        if not isinstance(shuffle, (bool, np.bool_)):
            raise ValueError(f"shuffle must be True or False, got {shuffle!r}")
        if isinstance(n_epochs, bool) or not isinstance(n_epochs, numbers.Integral) \
                or not 1 <= n_epochs <= 10_000:
            raise ValueError(f"n_epochs must be an int in [1, 10000], got {n_epochs!r}")
        names = _column_names(X)
        X = check_matrix(X)
        self._check_all_params()             # random_state among them: it seeds the orders
        targets = np.asarray(y) if y is not None else None
        if targets is None or targets.ndim != 1 or targets.shape[0] != X.shape[0]:
            orders = [None]                  # no reordering: the pass below explains what is wrong
        else:
            orders = _epoch_orders(X.shape[0], n_epochs, shuffle,
                                   getattr(self, "random_state", 0))
        def learn(fresh):
            if names is not None:
                fresh._feature_names = names
            for order in orders:
                fresh.partial_fit(X if order is None else X[order],
                                  y if order is None else targets[order])
        try:
            self._refit(learn)
        except ValueError:
            if orders[0] is not None:
                # a bad target was met in a shuffled order: name its row in the caller's order
                type(self)(**self.get_params())._encode_many(targets, X.shape[0])
            raise
        return self

    def _refit(self, learn) -> None:
        """Start afresh: `learn(fresh)` runs on a fresh copy of this model (its parameters,
        nothing learnt), whose fitted attributes this model then takes in one step.  A thread
        predicting meanwhile is answered by the model as it was until then (a reset model would
        raise NotFittedError), an error leaves the model exactly as it was, and snapshots a
        service prepared (``prepare_serving``) are prepared for the new engine before it is
        taken."""
        fresh = type(self)(**self.get_params())
        learn(fresh)
        engine = self._engine
        if (fresh._engine is not None and engine is not None
                and getattr(engine, "_inner", engine).has_snapshots):
            fresh.prepare_serving()
        names = ("_engine", *self._learnt_attributes)
        learnt = {name: fresh.__dict__[name] for name in names if name in fresh.__dict__}
        self.__dict__.update(learnt)          # one step: the engine with its classes and names
        for name in set(names) - set(learnt):  # what the old model had and the new one has not
            self.__dict__.pop(name, None)

    def score(self, X, y, sample_weight=None) -> float:
        """The coefficient of determination R^2 of ``predict(X)`` against y (scikit-learn's).

        R^2 = 1 - sum w (y - y_hat)^2 / sum w (y - mean_w(y))^2; a constant y gives 1.0 when it is
        predicted exactly, else 0.0; a single sample gives NaN (R^2 is undefined).  This is the
        default score of ``cross_val_score`` and ``GridSearchCV``.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
        sample_weight : array-like, shape (n_samples,), default None
            Non-negative weights; None weighs every sample 1.

        Returns
        -------
        float
            At most 1.0.

        Raises
        ------
        NotFittedError
            If the model has learnt nothing yet.
        ValueError
            For bad input.

        Examples
        --------
        >>> import numpy as np
        >>> from fastomkl import Gaussian, Raker
        >>> X = np.random.default_rng(0).uniform(size=(50, 2))
        >>> model = Raker([Gaussian(1.0)], n_components=8, random_state=0).fit(X, X.sum(1))
        >>> model.score(X, X.sum(1)) <= 1.0
        True
        """
        y_hat = self.predict(X)
        y = check_targets(y, y_hat.shape[0])
        weight = _sample_weight(sample_weight, y.shape[0])
        if y.shape[0] < 2:
            return float("nan")
        residual = np.dot(weight, (y - y_hat) ** 2)
        spread = np.dot(weight, (y - np.average(y, weights=weight)) ** 2)
        if spread == 0.0:
            return 1.0 if residual == 0.0 else 0.0
        return float(1.0 - residual / spread)

    # -- persistence ------------------------------------------------------------------------------
    def save(self, path, key=None) -> None:
        """Write the model to ``path`` (see ``fastomkl.persistence`` for the format).

        ``fastomkl.load(path)`` reads it back; the loaded model predicts and learns bit-identically.

        Parameters
        ----------
        path : str or path-like
        key : bytes or str, optional
            Sign the file (HMAC-SHA256) with this secret; ``fastomkl.load(path, key=key)`` then
            refuses any file not signed with it.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            If a parameter cannot be saved (it is not JSON data).

        Examples
        --------
        >>> import os, tempfile
        >>> from fastomkl import Gaussian, Raker, load
        >>> model = Raker([Gaussian(1.0)], n_components=8, random_state=0).learn_one([0.1], 1.0)
        >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
        >>> model.save(path)
        >>> load(path).predict_one([0.5]) == model.predict_one([0.5])
        True
        """
        from fastomkl.persistence import save
        save(self, path, key)

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
        self._note_file_layout(arrays)
        self._engine = None
        engine = self._engine_for(n_features)
        engine.set_state(arrays)
        if rng_state is not None:           # None: a state that drew no rounds (dsg.merge's)
            engine.rng_state = rng_state

    # -- files written with an earlier layout -------------------------------------------------------
    def _layout_in_file(self, arrays: dict) -> dict:
        """What a file's arrays say of the layout the model that wrote them was built with, where
        an earlier release built it otherwise (for instance {"hedge": True}: its members were
        mixed by Hedge); {} for today's.  Overridden by the models whose layout changed."""
        return {}

    def _note_file_layout(self, arrays: dict) -> None:
        """Build the engine of a file being loaded as the file's layout (``_from_file``) until a
        refit (``_reset``)."""
        self._file_layout = self._layout_in_file(arrays)

    def _from_file(self, key: str):
        """The loaded file's layout entry `key` (``_layout_in_file``), None for today's."""
        return self.__dict__.get("_file_layout", {}).get(key)


def _nothing() -> None:
    pass


@contextmanager
def _batch_call(engine):
    """A batch call on `engine` (None: a model still to build), announced for its Python steps:
    a thread serving predict_one lets it have the GIL instead of making it wait for the
    interpreter's switch interval (fastomkl._core.engine's docstring).  Yields the announcement,
    whose ``follow(engine)`` moves it to the engine the call runs on when the model took a new
    one (a multiclass model meeting a new label)."""
    call = _Announcement(engine)
    try:
        yield call
    finally:
        call.follow(None)


class _Announcement:
    """The engine a batch call is announced on (``_batch_call``)."""

    def __init__(self, engine):
        self.engine = None
        self.follow(engine)

    def follow(self, engine) -> None:
        if engine is self.engine:
            return
        if engine is not None:
            engine.announce_batch()
        if self.engine is not None:
            self.engine.withdraw_batch()
        self.engine = engine


@contextmanager
def _unchanged_on_error(model):
    """Put back the model's attributes (its engine, classes, feature names) when the block raises.

    The engines validate before they change anything, so restoring the references restores the
    model bit-identically; this covers what the block set up before its error (a fresh engine, the
    classes of a first batch).
    """
    saved = dict(model.__dict__)
    try:
        yield
    except BaseException:
        model.__dict__.clear()
        model.__dict__.update(saved)
        raise


def _sample_weight(sample_weight, n_samples: int) -> np.ndarray:
    """The weights of a score: ones for None, else n_samples finite non-negative values."""
    if sample_weight is None:
        return np.ones(n_samples)
    weight = check_targets(sample_weight, n_samples, name="sample_weight")
    if (weight < 0).any() or not weight.sum() > 0:
        raise ValueError("sample_weight must be non-negative with a positive sum")
    return weight


def _values_in_order(x: dict, names: tuple) -> list:
    """x's values for the keys ``names``, in that order; x must have exactly those keys."""
    if len(x) == len(names):
        try:
            return [x[name] for name in names]
        except KeyError:
            pass
    known = set(names)
    missing = [name for name in names if name not in x]
    unknown = [key for key in x if key not in known]
    raise ValueError(f"a dict sample must have exactly the model's features "
                     f"{list(names)}: missing {missing}, unknown {unknown}")


@functools.cache
def _parameter_names(cls) -> frozenset:
    """The constructor parameters of an estimator class (``_param_names``), looked up once."""
    return frozenset(cls._param_names())


def _same(a, b) -> bool:
    try:
        return bool(a == b) if not isinstance(a, (list, np.ndarray)) else a is b
    except Exception:
        return False


def _epoch_orders(n: int, n_epochs: int, shuffle: bool, random_state) -> list:
    """The row order of each epoch of ``fit``: as given, or permutations drawn from a stream of
    their own, derived from ``random_state`` (the model's draws are not touched)."""
    if not shuffle:
        return [np.arange(n)] * n_epochs
    if isinstance(random_state, np.random.Generator):
        rng = random_state.spawn(1)[0]
    elif isinstance(random_state, np.random.SeedSequence):
        rng = np.random.default_rng(np.random.SeedSequence(random_state.entropy,
                                                           spawn_key=(*random_state.spawn_key, 7)))
    else:
        rng = np.random.default_rng(None if random_state is None
                                    else np.random.SeedSequence(int(random_state),
                                                                spawn_key=(7,)))
    return [rng.permutation(n) for _ in range(n_epochs)]


def _column_names(X):
    """The column names of a table (pandas, polars, ...): strings only, else None."""
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = tuple(str(c) if not isinstance(c, str) else c for c in columns)
    return names if all(isinstance(c, str) for c in columns) else None
