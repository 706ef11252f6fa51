"""The VAW classifiers: least squares on -1/+1 labels, i.e. exactly the regressor on mapped labels."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.utils.estimator_checks import check_estimator

from fastomkl import (VAW, VAW2, VAWEWA, ConcatVAW, ConcatVAWClassifier, Gaussian, Laplacian,
                      VAW2Classifier, VAWClassifier, VAWEWAClassifier, VAWMeta, VAWMetaClassifier)
from fastomkl.datasets import scale_to_unit_ball

KERNELS = [Gaussian(0.5), Laplacian(1.0), Gaussian(2.0)]

PAIRS = [
    (VAW, VAWClassifier, dict(kernel=Gaussian(0.5), n_components=8)),
    (ConcatVAW, ConcatVAWClassifier, dict(kernels=KERNELS, n_components=4, mode="ridge")),
    (VAW2, VAW2Classifier, dict(kernels=KERNELS, n_components=8)),
    (VAW2, VAW2Classifier, dict(kernels=KERNELS, n_components=8, lam_meta=1.0, truncate=(-1, 1))),
    (VAWEWA, VAWEWAClassifier, dict(kernels=KERNELS, n_components=8)),
    (VAWMeta, VAWMetaClassifier, dict(kernels=KERNELS, meta="aa", n_components=8)),
    (VAWMeta, VAWMetaClassifier, dict(kernels=KERNELS, meta="mlpoly", n_components=8,
                                      label_range=(-1, 1))),
]
IDS = ["vaw", "concat", "vaw2", "vaw2-paper", "ewa", "aa", "mlpoly"]


@pytest.mark.parametrize("regressor,classifier,params", PAIRS, ids=IDS)
def test_classifier_is_the_regressor_on_plus_minus_one(regressor, classifier, params,
                                                        labelled_stream):
    X, s = labelled_stream
    labels = np.where(s > 0, "yes", "no")
    reg = regressor(**params, random_state=4)
    clf = classifier(**params, random_state=4)
    scores = reg.predict_learn(X[:200], s[:200])
    predicted = clf.predict_learn(X[:200], labels[:200])
    assert list(clf.classes_) == ["no", "yes"]
    np.testing.assert_array_equal(predicted, np.where(scores > 0, "yes", "no"))
    np.testing.assert_array_equal(clf.decision_function(X[200:]), reg.predict(X[200:]))
    np.testing.assert_array_equal(clf.predict(X[200:]),
                                  np.where(reg.predict(X[200:]) > 0, "yes", "no"))
    x, label = X[200], labels[200]
    assert clf.decision_function_one(x) == reg.predict_one(x)
    assert clf.predict_learn_one(x, label) == ("yes" if reg.predict_learn_one(x, s[200]) > 0
                                               else "no")
    assert not hasattr(clf, "predict_proba")        # square loss: no probability model


def _breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    return scale_to_unit_ball(X[order]), y[order]


@pytest.mark.parametrize("classifier", [VAWClassifier, VAW2Classifier, VAWEWAClassifier,
                                        lambda: VAWMetaClassifier(meta="boa")],
                         ids=["vaw", "vaw2", "ewa", "boa"])
def test_defaults_beat_the_majority_class_on_breast_cancer(classifier):
    X, y = _breast_cancer()
    model = classifier()
    model.random_state = 0
    pred = model.predict_learn(X, y)
    majority = max(np.mean(y), 1 - np.mean(y))            # 0.63
    assert np.mean(pred == y) > majority + 0.2, np.mean(pred == y)
    engine = model._engine
    assert engine.experts.n_rejected == 0 and engine.combiner.n_rejected == 0


@pytest.mark.parametrize("estimator", [
    VAWClassifier(Gaussian(1.0), n_components=10, random_state=0),
    VAW2Classifier([Gaussian(1.0), Laplacian(2.0)], n_components=10, random_state=0),
    VAWEWAClassifier([Gaussian(1.0), Laplacian(2.0)], n_components=10, random_state=0),
], ids=["vaw", "vaw2", "ewa"])
def test_scikit_learn_classifier_checks(estimator):
    excluded = {"check_estimators_unfitted", "check_do_not_raise_errors_in_init_or_set_params",
                "check_dtype_object", "check_supervised_y_2d"}      # as tests/test_sklearn_compat
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = {r["check_name"]: str(r["exception"])[:300] for r in results
              if r["status"] == "failed" and r["check_name"] not in excluded}
    assert not failed, failed
    assert sum(r["status"] == "passed" for r in results) >= 40
