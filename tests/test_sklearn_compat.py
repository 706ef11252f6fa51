"""scikit-learn's estimator checks, with the few that do not apply to these online models excluded.

Every exclusion is a deliberate difference, named with its reason; any other failing check fails here.
"""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, cross_val_score
from sklearn.utils.estimator_checks import check_estimator

import fastomkl as fo
from fastomkl import Gaussian, Laplacian

PAIR = [Gaussian(1.0), Laplacian(2.0)]

EXCLUDED = {
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


@pytest.mark.parametrize("estimator", [
    fo.Raker([Gaussian(1.0)], n_components=10, random_state=0),
    fo.RakerClassifier([Gaussian(1.0)], n_components=10, random_state=0),
    fo.OMKLGF([Gaussian(1.0), Gaussian(0.3)], n_components=10, M=2, random_state=0),
    fo.OMKLSFG([Gaussian(1.0), Laplacian(1.0)], n_components=10, M=1, random_state=0),
    fo.OMKLSFGR([Gaussian(1.0), Laplacian(1.0)], n_components=10, M=1, top_k=1, random_state=0),
    fo.OMKLGFClassifier([Gaussian(1.0)], n_components=10, M=1, J=1, random_state=0),
    fo.OMKR([Gaussian(1.0)]),
    fo.RFOMKR([Gaussian(1.0)], n_components=10, random_state=0),
    fo.VAW(Gaussian(1.0), n_components=10, random_state=0),
    fo.ConcatVAW(PAIR, n_components=5, random_state=0),
    fo.VAW2(PAIR, n_components=10, random_state=0),
    fo.VAW2(PAIR, n_components=10, truncate=(-1, 1), mode="ridge", random_state=0),
    fo.VAWEWA(PAIR, n_components=10, label_range=(-3, 3), random_state=0),
    fo.VAWMeta(PAIR, "mlpoly", n_components=10, label_range=(-3, 3), random_state=0),
], ids=lambda e: repr(e)[:40])
def test_check_estimator(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = {r["check_name"]: str(r["exception"])[:300] for r in results if r["status"] == "failed"}
    unexpected = {k: v for k, v in failed.items() if k not in EXCLUDED}
    assert not unexpected, unexpected
    assert sum(r["status"] == "passed" for r in results) >= 40


# -- score: scikit-learn's default metrics, so model selection needs no scoring= -----------------
def small_regressor(**params):
    return fo.Raker(PAIR, n_components=8, random_state=0, **params)


def small_classifier(**params):
    return fo.RakerClassifier(PAIR, n_components=8, random_state=0, **params)


@pytest.mark.parametrize("weighted", [False, True])
def test_score_is_r2_for_regressors(stream, weighted):
    X, y = stream
    weight = np.random.default_rng(0).uniform(0, 2, size=100) if weighted else None
    model = small_regressor().fit(X[:200], y[:200])
    expected = r2_score(y[200:], model.predict(X[200:]), sample_weight=weight)
    assert model.score(X[200:], y[200:], sample_weight=weight) == pytest.approx(expected,
                                                                               rel=1e-12)


def test_score_of_a_constant_target_follows_r2_score(stream):
    X, y = stream
    model = small_regressor().fit(X[:50], y[:50])
    predicted = model.predict(X[:3])
    constant = np.full(3, 0.5)
    assert model.score(X[:3], constant) == r2_score(constant, predicted) == 0.0
    same_rows = X[[0, 0]]                                    # a constant target predicted exactly
    assert model.score(same_rows, predicted[[0, 0]]) == r2_score(predicted[[0, 0]],
                                                                 predicted[[0, 0]]) == 1.0
    with pytest.warns(UndefinedMetricWarning):
        undefined = r2_score(predicted[:1], predicted[:1])
    assert np.isnan(undefined) and np.isnan(model.score(X[:1], predicted[:1]))


@pytest.mark.parametrize("weighted", [False, True])
def test_score_is_accuracy_for_classifiers(labelled_stream, weighted):
    X, y = labelled_stream
    labels = np.where(y > 0, "up", "down")
    weight = np.random.default_rng(0).uniform(0, 2, size=100) if weighted else None
    model = small_classifier().fit(X[:200], labels[:200])
    expected = accuracy_score(labels[200:], model.predict(X[200:]), sample_weight=weight)
    assert model.score(X[200:], labels[200:], sample_weight=weight) == pytest.approx(expected,
                                                                                   rel=1e-12)


@pytest.mark.parametrize("make", [small_regressor, small_classifier])
@pytest.mark.parametrize("weight,message", [([1.0, -1.0, 1.0], "non-negative"),
                                            ([0.0, 0.0, 0.0], "positive sum"),
                                            ([1.0, 1.0], "sample_weight has 2 values"),
                                            ([1.0, np.nan, 1.0], "NaN")])
def test_bad_sample_weight(labelled_stream, make, weight, message):
    X, y = labelled_stream
    model = make().fit(X, y)
    with pytest.raises(ValueError, match=message):
        model.score(X[:3], y[:3], sample_weight=weight)


def test_cross_val_score_and_grid_search_use_score(stream):
    X, y = stream
    folds = KFold(3)
    scores = cross_val_score(small_regressor(), X, y, cv=folds)
    by_hand = [small_regressor().fit(X[train], y[train]).score(X[test], y[test])
               for train, test in folds.split(X)]
    np.testing.assert_allclose(scores, by_hand, rtol=1e-12)
    search = GridSearchCV(small_regressor(), {"eta": [0.05, 0.5]}, cv=folds).fit(X, y)
    means = [np.mean(cross_val_score(small_regressor(eta=eta), X, y, cv=folds))
             for eta in (0.05, 0.5)]
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], means, rtol=1e-12)
    assert search.best_params_ == {"eta": [0.05, 0.5][int(np.argmax(means))]}


def test_cross_val_score_of_a_classifier_is_its_accuracy(labelled_stream):
    X, y = labelled_stream
    scores = cross_val_score(small_classifier(), X, y, cv=3)       # stratified folds
    by_hand = [accuracy_score(y[test], small_classifier().fit(X[train], y[train]).predict(X[test]))
               for train, test in StratifiedKFold(3).split(X, y)]
    np.testing.assert_allclose(scores, by_hand, rtol=1e-12)
