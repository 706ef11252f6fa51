"""The classifiers' layer over the estimator base: labels coded as the engine's targets, two classes
(``BinaryClassifier``) or any number (``MulticlassClassifier``), accuracy as ``score``."""
from __future__ import annotations

import numbers

import numpy as np

from scipy.special import expit

from fastomkl._estimator.base import (OnlineEstimator, _sample_weight, _unchanged_on_error,
                                      available_if)
from fastomkl._validation import check_matrix


class _Classifier(OnlineEstimator):
    """What the classifiers share: labels coded as the engine's targets (the subclasses say how,
    in ``_learn_classes`` and ``_commit_classes``), accuracy as ``score``."""

    _multi_class = False
    # classes_ is sorted, as scikit-learn's metrics read it; _by_code lists the labels in the
    # order of their codes (the engine's targets), fixed when each label first arrives
    _learnt_attributes = (*OnlineEstimator._learnt_attributes, "classes_", "_codes", "_by_code",
                          "_score_sign", "_column_order")

    def __setstate__(self, state):
        super().__setstate__(state)
        codes = self.__dict__.get("_codes")
        if codes is not None:          # the views of the codes, also for a pickle that has none
            self._set_class_views(codes)

    def _winsorises_targets(self, config: dict) -> bool:
        return False                 # labels coded as targets: nothing to winsorise

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags
        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags(poor_score=True,
                                                   multi_class=self._multi_class),
                    input_tags=InputTags())

    def _known_code(self, y):
        codes = getattr(self, "_codes", None)
        if codes is None:
            return None
        if type(y) not in _PLAIN_LABELS:      # 1+0j equals the label 1: only valid labels match
            try:
                y = _label(y)
            except ValueError:                # the careful path explains
                return None
        return codes.get(y)

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
        labels = []
        for i, v in enumerate(y):
            try:
                labels.append(_label(v))
            except ValueError as exc:
                raise ValueError(f"{exc} (y, first at index {i})") from None
        codes = self._learn_classes(labels)
        self._commit_classes(codes)
        return np.array([codes[v] for v in labels], dtype=np.float64)

    def score(self, X, y, sample_weight=None) -> float:
        """The accuracy of ``predict(X)`` against the labels y (scikit-learn's definition).

        The (weighted) fraction of rows whose predicted label equals y's.  This is the default
        score of ``cross_val_score`` and ``GridSearchCV``.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
        sample_weight : array-like, shape (n_samples,), default None
            Non-negative weights; None weighs every sample 1.

        Returns
        -------
        float
            In [0, 1].

        Raises
        ------
        NotFittedError
            If the model has learnt nothing yet.
        ValueError
            For bad input.

        Examples
        --------
        >>> from fastomkl import Gaussian, RakerClassifier
        >>> X, y = [[0.0, 0.1], [1.0, 0.9]], ["no", "yes"]
        >>> model = RakerClassifier([Gaussian(1.0)], n_components=8, random_state=0).fit(X, y)
        >>> 0.0 <= model.score(X, y) <= 1.0
        True
        """
        y_hat = self.predict(X)
        y = np.asarray(y)
        if y.shape != y_hat.shape:
            raise ValueError(f"y must be 1-D with {y_hat.shape[0]} labels, got shape {y.shape}")
        y = np.array([_label(v) for v in y], dtype=object)
        weight = _sample_weight(sample_weight, y.shape[0])
        return float(np.average(y == y_hat, weights=weight))



def _checked_classes(classes, exactly: int | None = None) -> np.ndarray:
    """The ``classes`` argument of ``partial_fit`` as a 1-D array of distinct labels (``exactly``
    that many for a model of a fixed number of classes)."""
    classes = np.asarray(classes)
    if classes.ndim != 1 or classes.shape[0] == 0:
        raise ValueError(f"classes must be a non-empty 1-D list of labels, got shape "
                         f"{classes.shape}")
    if len(set(classes.tolist())) != classes.shape[0]:
        raise ValueError(f"classes must be distinct labels, got {classes.tolist()!r:.200}")
    if exactly is not None and classes.shape[0] != exactly:
        raise ValueError(f"classes must name exactly {exactly} labels, got "
                         f"{classes.tolist()!r:.200}")
    return classes


def _check_restored_labels(labels: list) -> None:
    """A saved model's classes are labels it could have learnt (whole numbers or strings, not
    both): with any other, it would refuse every label it is given."""
    try:
        for label in labels:
            _label(label)
        _check_label_kinds(labels)
    except ValueError as exc:
        raise ValueError(f"the header's 'classes' are not labels a model learns: {exc}") from None


def _label_list(labels) -> str:
    """The labels as a reader writes them: ['a', 'b', 1]."""
    return "[" + ", ".join(sorted(map(repr, labels))) + "]"


def _check_label_kinds(labels) -> None:
    if len({isinstance(c, str) for c in labels}) > 1:
        raise ValueError(f"labels must be all strings or all numbers, got {_label_list(labels)}")


def _logistic_only(method: str):
    """A probability method present only under the logistic loss (``hasattr`` then answers)."""
    return available_if(lambda self: self._loss_name() == "logistic",
                        f"{method} needs loss='logistic' (the model's scores are then the log "
                        f"odds of classes_[-1]; other losses estimate no probability)")


class BinaryClassifier(_Classifier):
    """Two-class models: labels map to -1/+1 internally; ``predict*`` return labels.

    Labels map to the engine's targets -1/+1 when they first arrive: -1/+1, 0/1 and False/True
    naturally, whatever order they come in; ``partial_fit(..., classes=...)`` fixes the map on
    the first call, as does a first batch that shows both labels (the smaller one -1); otherwise
    the first label seen is -1.  (So a model learning other labels row by row codes them by
    their order of arrival: it learns the same function up to its sign, and predicts the same
    labels except where a score is exactly 0.)  ``classes_`` is sorted whatever the map, as
    scikit-learn's metrics read it: ``decision_function`` is positive for ``classes_[-1]``, and
    ``predict_proba``'s columns follow ``classes_``.
    """

    # the engine's scores turned to the public ones; before the classes are set (another
    # thread's first round has built the engine, not yet committed its label), the engine's own
    _score_sign = 1.0

    def _learn_classes(self, labels) -> dict:
        """The label -> +-1 map after seeing `labels` (not stored; raises for a third class)."""
        codes = dict(getattr(self, "_codes", {}))
        new = [c for c in dict.fromkeys(labels) if c not in codes]
        if not new:
            return codes
        known = list(codes)
        everything = known + new
        _check_label_kinds(everything)        # mixed kinds say so before a count that mixes them
        if len(everything) > 2:
            raise ValueError(f"Only binary classification is supported: {type(self).__name__} got "
                             f"labels {_label_list(everything)}, more than two classes (for more, "
                             f"DoublySGDSoftmaxClassifier, or scikit-learn's OneVsRestClassifier "
                             f"around this model)")
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
        self._set_class_views(codes)

    def _set_class_views(self, codes: dict) -> None:
        self._by_code = np.array(sorted(codes, key=codes.get))
        self.classes_ = np.sort(self._by_code)
        # the engine's scores are positive for the label coded +1; the public ones for classes_[-1]
        self._score_sign = 1.0 if self._by_code[-1] == self.classes_[-1] else -1.0

    def _restore_classes(self, labels: list) -> None:
        """The classes of a saved model, in the order of their codes (-1 first; a model that has
        seen one label lists it alone, coded as it was when it arrived: 1 and True +1, as the
        natural labels map, any other -1)."""
        if len(labels) not in (1, 2) or len(set(labels)) != len(labels):
            raise ValueError(f"the header's 'classes' must name one or two distinct classes, got "
                             f"{labels!r:.200}")
        _check_restored_labels(labels)
        if len(labels) == 1:
            self._commit_classes(self._learn_classes(labels))
        else:
            self._commit_classes({labels[0]: -1.0, labels[1]: 1.0})

    def partial_fit(self, X, y, classes=None):
        """Continue learning: one online pass over the rows of (X, y), in order.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
            Labels, at most two distinct ones over the model's life.
        classes : array-like of two labels, default None
            Fixes ``classes_`` (in scikit-learn's order) on the first call; later calls ignore it.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For bad input or a third class; the model is then left exactly as it was.

        Examples
        --------
        >>> from fastomkl import Gaussian, RakerClassifier
        >>> model = RakerClassifier([Gaussian(1.0)], n_components=8, random_state=0)
        >>> model.partial_fit([[0.0, 0.1]], ["no"], classes=["no", "yes"]).classes_.tolist()
        ['no', 'yes']
        """
        if classes is None or hasattr(self, "_codes"):
            return super().partial_fit(X, y)
        X = check_matrix(X)
        classes = _checked_classes(classes, exactly=2)
        with _unchanged_on_error(self):
            self._encode_many(classes, len(classes))
            return super().partial_fit(X, y)

    def _decode_one(self, score: float):
        labels = getattr(self, "_by_code", None)
        if labels is None:
            return 1.0 if score > 0 else -1.0
        return labels[-1] if score > 0 else labels[0]

    def _decode_many(self, scores: np.ndarray) -> np.ndarray:
        labels = getattr(self, "_by_code", None)
        if labels is None:
            return np.where(scores > 0, 1.0, -1.0)
        return labels[np.where(scores > 0, len(labels) - 1, 0)]   # any label dtype

    def _public_scores(self, X) -> np.ndarray:
        """The engine's scores of the rows of X, positive for ``classes_[-1]``."""
        scores = self._scores(X)
        if self._score_sign < 0:
            scores = np.negative(scores, out=scores)
        return scores

    def _loss_name(self):
        """The loss the model learns with: ``loss``, "auto" the first of ``_losses``; None for a
        model without one (the families that resolve "auto" otherwise say so in their own)."""
        loss = getattr(self, "loss", None)
        if loss == "auto":
            losses = getattr(type(self), "_losses", ())
            return losses[0] if losses else None
        return loss

    @_logistic_only("predict_proba")
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities from the logistic link of the scores; logistic loss only.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray of float, shape (n_samples, n_classes)
            Columns in the order of ``classes_`` (one column of ones while the model has seen
            one label); each row sums to 1.

        Raises
        ------
        AttributeError
            For another loss (so ``hasattr(model, "predict_proba")`` says whether it has one).
        NotFittedError
            If the model has learnt nothing yet.
        ValueError
            For bad input.

        Examples
        --------
        >>> import numpy as np
        >>> from fastomkl import Gaussian, RakerClassifier
        >>> X, y = [[0.0, 0.1], [1.0, 0.9]], ["no", "yes"]
        >>> model = RakerClassifier([Gaussian(1.0)], n_components=8, random_state=0).fit(X, y)
        >>> proba = model.predict_proba(X)
        >>> bool(np.array_equal(model.classes_[proba.argmax(1)], model.predict(X)))
        True
        """
        scores = self._public_scores(X)
        if len(self.classes_) == 1:            # the one label seen: predict says it every time
            return np.ones((scores.shape[0], 1))
        p = expit(scores)
        return np.column_stack([1.0 - p, p])

    @_logistic_only("predict_proba_one")
    def predict_proba_one(self, x) -> dict:
        """The class probabilities of one sample, without learning: ``{label: probability}``
        (river's form), from the logistic link of ``decision_function_one(x)``.

        Parameters
        ----------
        x : sequence of float, shape (n_features,), or dict
            One sample (see ``predict_one``).

        Returns
        -------
        dict
            ``classes_[0]`` and ``classes_[1]`` to their probabilities, which sum to 1 (the one
            label seen to 1.0, while there is one).

        Raises
        ------
        AttributeError
            For another loss.
        NotFittedError
            If the model has learnt nothing yet.
        ValueError
            For a bad sample.

        Examples
        --------
        >>> from fastomkl import Gaussian, RakerClassifier
        >>> model = RakerClassifier([Gaussian(1.0)], n_components=8, random_state=0)
        >>> model = model.partial_fit([[0.0, 0.1], [1.0, 0.9]], ["no", "yes"])
        >>> proba = model.predict_proba_one([1.0, 0.9])
        >>> sorted(proba), max(proba, key=proba.get) == model.predict_one([1.0, 0.9])
        (['no', 'yes'], True)
        """
        p = float(expit(self.decision_function_one(x)))
        labels = self.classes_.tolist()
        if len(labels) == 1:                   # the one label seen: predict_one says it
            return {labels[0]: 1.0}
        return {labels[0]: 1.0 - p, labels[1]: p}

    def decision_function(self, X) -> np.ndarray:
        """The real-valued scores of every row of X (positive: ``classes_[-1]``), without learning.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray of float, shape (n_samples,)

        Raises
        ------
        NotFittedError
            If the model has learnt nothing yet.
        ValueError
            For bad input.

        Examples
        --------
        >>> from fastomkl import Gaussian, RakerClassifier
        >>> X, y = [[0.0, 0.1], [1.0, 0.9]], [False, True]
        >>> model = RakerClassifier([Gaussian(1.0)], n_components=8, random_state=0).fit(X, y)
        >>> bool(((model.decision_function(X) > 0) == model.predict(X)).all())
        True
        """
        return self._public_scores(X)

    def decision_function_one(self, x) -> float:
        """The real-valued score of one sample (positive: ``classes_[-1]``), without learning.

        Parameters
        ----------
        x : sequence of float, shape (n_features,), or dict
            One sample (see ``predict_one``).

        Returns
        -------
        float

        Raises
        ------
        NotFittedError
            If the model has learnt nothing yet.
        ValueError
            For a bad sample.

        Examples
        --------
        >>> from fastomkl import Gaussian, RakerClassifier
        >>> model = RakerClassifier([Gaussian(1.0)], n_components=8, random_state=0)
        >>> model = model.partial_fit([[0.0, 0.1], [1.0, 0.9]], ["no", "yes"])
        >>> score = model.decision_function_one([1.0, 0.9])
        >>> model.predict_one([1.0, 0.9]) == ("yes" if score > 0 else "no")
        True
        """
        engine = self._engine
        if engine is None:
            raise self._not_fitted()
        if type(x) is dict:
            x = self._dict_values(x)
        return self._score_sign * engine.predict_one(x)


_PLAIN_LABELS = frozenset({str, int, float, bool})


def _label(value):
    """A label as a Python str or finite real number (see fastomkl._validation's rules)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str):
        return value
    if not isinstance(value, numbers.Real):
        raise ValueError(f"labels must be strings or real numbers, got {value!r}")
    if not isinstance(value, numbers.Integral) and not float(value).is_integer():
        raise ValueError(f"labels must be whole numbers or strings (not NaN, infinite or "
                         f"continuous values: a classifier needs two classes), got {value}")
    return value


class MulticlassClassifier(_Classifier):
    """Models of any number of classes: the engine scores one column per class and predicts the
    index of the best column; ``predict*`` return labels of ``classes_``.

    Classes join as labels arrive: the labels a call meets for the first time (and those of
    ``partial_fit(..., classes=...)``) take the next columns of the engine, sorted among
    themselves, at the start of that call; a new class's column starts at zero.  ``classes_``
    is sorted whatever the columns, as scikit-learn reads it, and every per-class output
    (``decision_function``, ``predict_proba``) follows it.  Labels are strings or whole numbers,
    not both.  The engine takes the column index of each label as its target, and provides
    ``with_outputs(n)``: itself with ``n`` columns (the new ones zero), as a new object, with
    snapshots for serving if it has them.
    """

    _multi_class = True

    def _learn_classes(self, labels) -> dict:
        """The label -> column map after seeing `labels` (not stored)."""
        codes = dict(getattr(self, "_codes", {}))
        new = [c for c in dict.fromkeys(labels) if c not in codes]
        if not new:
            return codes
        _check_label_kinds(list(codes) + new)
        for c in sorted(new):
            codes[c] = float(len(codes))
        return codes

    def _commit_classes(self, codes: dict) -> None:
        self._codes = codes
        self._set_class_views(codes)
        engine = self._engine
        if engine is not None:                  # a new object: a failed call puts the old back
            self._engine = engine.with_outputs(len(codes))

    def _restore_classes(self, labels: list) -> None:
        codes = {c: float(i) for i, c in enumerate(labels)}
        if len(codes) != len(labels):
            raise ValueError(f"the header's 'classes' must be distinct, got {labels!r:.200}")
        _check_restored_labels(labels)
        self._commit_classes(codes)

    def partial_fit(self, X, y, classes=None):
        """Continue learning: one online pass over the rows of (X, y), in order.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
            Labels; a label not seen before adds a class.
        classes : array-like, default None
            Labels to know from now on, seen in y or not (their columns learn from this call).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For bad input; the model is then left exactly as it was.

        Examples
        --------
        >>> from fastomkl import DoublySGDSoftmaxClassifier
        >>> model = DoublySGDSoftmaxClassifier(random_state=0)
        >>> model.partial_fit([[0.0, 0.1]], ["b"], classes=["a", "b", "c"]).classes_.tolist()
        ['a', 'b', 'c']
        """
        if classes is None:
            return super().partial_fit(X, y)
        X = check_matrix(X)
        classes = _checked_classes(classes)
        with _unchanged_on_error(self):
            self._encode_many(classes, classes.shape[0])
            return super().partial_fit(X, y)

    def _set_class_views(self, codes: dict) -> None:
        self._by_code = np.array(list(codes))
        order = np.argsort(self._by_code, kind="stable")
        self.classes_ = self._by_code[order]
        self._column_order = order        # the engine's columns in the order of classes_

    def _in_class_order(self, F: np.ndarray) -> np.ndarray:
        """The engine's per-class columns of F in the order of ``classes_``."""
        return F[:, self._column_order]

    def _decode_one(self, score: float):
        return self._by_code[int(score)]

    def _decode_many(self, scores: np.ndarray) -> np.ndarray:
        return self._by_code[scores.astype(np.int64)]

