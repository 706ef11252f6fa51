"""The estimator contract: inputs of every usual form, determinism, parameters, classifier labels."""
import numpy as np
import pytest

import fastomkl
from fastomkl import Gaussian, Laplacian, NotFittedError, Raker, RakerClassifier
from helpers import state_bytes

KERNELS = [Gaussian(0.5), Laplacian(1.0)]


def make(**kw):
    return Raker(KERNELS, n_components=8, random_state=0, **kw)


def test_accepts_lists_float32_and_noncontiguous(stream):
    X, y = stream
    base = make().predict_learn(X, y)
    np.testing.assert_array_equal(make().predict_learn(X.tolist(), list(y)), base)
    Xf = np.asfortranarray(X)
    np.testing.assert_array_equal(make().predict_learn(Xf, y), base)
    wide = np.zeros((X.shape[0], 2 * X.shape[1]))
    wide[:, ::2] = X
    np.testing.assert_array_equal(make().predict_learn(wide[:, ::2], y), base)
    m32 = make().predict_learn(X.astype(np.float32), y.astype(np.float32))
    np.testing.assert_allclose(m32, make().predict_learn(X.astype(np.float32).astype(float),
                                                         y.astype(np.float32).astype(float)), 0)
    one = make()
    got = [one.predict_learn_one(list(x), float(t)) for x, t in zip(X[:20], y[:20])]
    got32 = [make().predict_learn_one(x.astype(np.float32), t) for x, t in zip(X[:1], y[:1])]
    np.testing.assert_array_equal(got, base[:20])
    assert np.isfinite(got32).all()
    strided = make()
    got_strided = [strided.predict_learn_one(wide[i, ::2], y[i]) for i in range(20)]
    np.testing.assert_array_equal(got_strided, base[:20])


def test_plain_python_samples_equal_arrays(stream):
    """Lists and tuples of floats (NumPy's float64 scalars included) and ints, read without an
    array, give the array path's numbers; anything else in a list (float32 scalars, say) takes the
    general conversion, which refuses numeric strings as the batch path does."""
    X, y = stream
    Xi = np.round(X * 4)                                  # integer-valued samples
    base = make().predict_learn(np.vstack([X[:30], Xi[:30]]), np.r_[y[:30], y[:30]])
    m = make()
    got = [m.predict_learn_one(list(x), t) for x, t in zip(X[:15], y[:15])]
    got += [m.predict_learn_one(tuple(x), t) for x, t in zip(X[15:30], y[15:30])]
    got += [m.predict_learn_one([int(v) for v in x], t) for x, t in zip(Xi[:15], y[:15])]
    got += [m.predict_learn_one([np.float64(v) for v in x], t) for x, t in zip(Xi[15:23], y[15:23])]
    got += [m.predict_learn_one([np.float32(v) for v in x], t) for x, t in zip(Xi[23:30], y[23:30])]
    np.testing.assert_array_equal(got, base)
    with pytest.raises(ValueError, match="real numbers"):
        m.predict_one([str(v) for v in X[0]])
    with pytest.raises(ValueError, match="real numbers"):
        m.predict([[str(v) for v in X[0]]])


def test_numpy_scalar_targets_give_the_python_float_numbers(stream):
    """Iterating a target array gives NumPy scalars: float64 ones are read as the floats they
    subclass, the others converted; every path gives the batch's numbers."""
    X, y = stream
    base = make().predict_learn(X[:30], y[:30])
    m = make()
    got = [m.predict_learn_one(x, t) for x, t in zip(X[:10], y[:10])]               # float64
    got += [m.predict_learn_one(x, float(t)) for x, t in zip(X[10:20], y[10:20])]
    got += [m.predict_learn_one(x, np.array(t)) for x, t in zip(X[20:30], y[20:30])]
    np.testing.assert_array_equal(got, base)

    class Subclass(float):
        pass
    sub = make()
    got = [sub.predict_learn_one(x, Subclass(t)) for x, t in zip(X[:2], y[:2])]
    np.testing.assert_array_equal(got, base[:2])


def test_huge_integers_are_a_value_error(stream):
    X, y = stream
    m = make().partial_fit(X[:5], y[:5])
    before = state_bytes(m)
    huge = [10 ** 400] + [0] * (X.shape[1] - 1)
    with pytest.raises(ValueError, match="real numbers"):
        m.predict_learn_one(huge, 0.0)
    with pytest.raises(ValueError, match="real numbers"):
        m.partial_fit([huge], [0.0])
    with pytest.raises(ValueError, match="real numbers"):
        make().learn_one(huge, 0.0)                      # the first sample's careful path
    assert state_bytes(m) == before


def test_predict_is_pure_and_deterministic(stream):
    X, y = stream
    m = make().partial_fit(X[:100], y[:100])
    before = state_bytes(m)
    p1 = m.predict(X)
    p2 = np.array([m.predict_one(x) for x in X])
    np.testing.assert_array_equal(p1, p2)
    assert state_bytes(m) == before


def test_same_seed_same_numbers_and_fit_resets(stream):
    X, y = stream
    a, b = make().fit(X, y), make().fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    first = a.predict(X)
    a.fit(X, y)            # fit starts afresh
    np.testing.assert_array_equal(a.predict(X), first)
    seq = np.random.SeedSequence(5)
    c = Raker(KERNELS, n_components=8, random_state=seq).fit(X, y)
    d = Raker(KERNELS, n_components=8, random_state=seq).fit(X, y)
    np.testing.assert_array_equal(c.predict(X), d.predict(X))
    assert a.n_samples_seen_ == len(y) and a.n_features_in_ == X.shape[1]


def test_unfitted_behaviour(stream):
    X, _ = stream
    m = make()
    with pytest.raises(NotFittedError):
        m.predict(X)
    with pytest.raises(NotFittedError):
        m.weights_
    with pytest.raises(NotFittedError):
        m.predict_one(X[0])
    with pytest.raises(NotFittedError):
        m.score(X, X[:, 0])
    classifier = RakerClassifier(KERNELS, n_components=4, random_state=0)
    for method in (classifier.predict_one, classifier.decision_function_one):
        with pytest.raises(NotFittedError):
            method(X[0])
    assert not hasattr(classifier, "n_features_in_")
    assert m.n_samples_seen_ == 0 and not hasattr(m, "n_features_in_")   # nothing was built
    assert m.predict_learn_one(X[0], 1.0) == 0.0      # the initial model (theta = 0) predicts 0


def test_get_set_params_and_clone(stream):
    X, y = stream
    m = make(eta=0.2)
    params = m.get_params()
    assert params["eta"] == 0.2 and params["kernels"] is KERNELS and params["random_state"] == 0
    m.fit(X, y)
    m.set_params(eta=0.05)
    assert m.eta == 0.05 and m.n_samples_seen_ == 0          # set_params resets
    with pytest.raises(ValueError, match="invalid parameter"):
        m.set_params(nope=1)
    with pytest.raises(ValueError, match="eta"):
        m.set_params(eta=-1.0)
    assert m.eta == 0.05
    from sklearn.base import clone
    c = clone(m)
    assert c.get_params() == m.get_params() and c is not m


def test_eta_schedules_differ(stream):
    X, y = stream
    a = make(eta=0.1, eta_schedule="constant").predict_learn(X, y)
    b = make(eta=0.1, eta_schedule="inv_sqrt").predict_learn(X, y)
    assert not np.allclose(a, b)


def test_learns_a_smooth_function(stream):
    """Prequential MSE well below the variance of y (a model that learns nothing fails this)."""
    X, y = stream
    p = Raker([Gaussian(0.5), Gaussian(2.0)], n_components=50, eta=0.5, random_state=0
              ).predict_learn(np.tile(X, (5, 1)), np.tile(y, 5))
    assert np.mean((p[-300:] - y) ** 2) < 0.3 * np.var(y)


def test_classifier_labels(labelled_stream):
    X, y = labelled_stream
    for labels in (("no", "yes"), (0, 1), (-1, 1), (False, True)):
        yy = np.where(y > 0, labels[1], labels[0])
        m = RakerClassifier(KERNELS, n_components=8, random_state=0).fit(X, yy)
        assert list(m.classes_) == list(labels)
        pred = m.predict(X)
        assert set(pred.tolist()) <= set(labels)
        np.testing.assert_array_equal(pred == labels[1], m.decision_function(X) > 0)
        assert m.predict_one(X[0]) in labels
    m = RakerClassifier(KERNELS, n_components=8, random_state=0)
    m.learn_one(X[0], 1)
    m.learn_one(X[1], 0)
    assert list(m.classes_) == [0, 1]
    with pytest.raises(ValueError, match="more than two classes"):
        m.learn_one(X[2], 2)
    proba = m.predict_proba(X[:5])
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-m.decision_function(X[:5]))))
    for i in range(5):                      # one sample: the same numbers, keyed by label
        one = m.predict_proba_one(X[i])
        assert list(one) == [0, 1] and all(type(v) is float for v in one.values())
        np.testing.assert_allclose([one[0], one[1]], proba[i], rtol=1e-12)


BINARY_CLASSIFIERS = [
    lambda: RakerClassifier(KERNELS, n_components=8, random_state=0),
    lambda: fastomkl.OMKLGFClassifier(KERNELS, n_components=8, random_state=0),
    lambda: fastomkl.FOGDClassifier(n_components=8, random_state=0),
    lambda: fastomkl.OKSClassifier([Gaussian(0.5), Gaussian(1.0)], random_state=0),
    lambda: fastomkl.DoublySGDClassifier("logistic", block_size=8, random_state=0),
]


@pytest.mark.parametrize("make_classifier", BINARY_CLASSIFIERS)
def test_classes_are_sorted_whatever_label_comes_first(labelled_stream, make_classifier):
    """Labels learnt row by row, the greater one first ("yes" is coded -1 inside): classes_ is
    sorted as scikit-learn's metrics read it, the scores are positive for classes_[-1], and
    scikit-learn's AUC of them is the AUC of the scores of a model learnt with the labels the
    other way round (numeric 0/1, coded naturally: the same function up to its sign)."""
    from sklearn.metrics import roc_auc_score
    X, y = labelled_stream
    words = np.where(y > 0, "yes", "no")
    first = int(np.flatnonzero(y > 0)[0])
    order = np.r_[first, np.delete(np.arange(len(y)), first)]    # a "yes" row first
    X, words, y = X[order], words[order], y[order]
    model, natural = make_classifier(), make_classifier()
    for x, word, label in zip(X, words, y):
        model.learn_one(x, word)
        natural.learn_one(x, int(label > 0))
    assert model.classes_.tolist() == ["no", "yes"] and model._score_sign == -1.0
    scores, reference = model.decision_function(X), natural.decision_function(X)
    np.testing.assert_allclose(scores, reference, rtol=1e-12, atol=1e-12)
    assert roc_auc_score(words, scores) == roc_auc_score(y, reference) > 0.7
    predicted = model.predict(X)
    np.testing.assert_array_equal(predicted[scores != 0] == "yes", scores[scores != 0] > 0)
    assert [model.decision_function_one(x) for x in X[:5]] == scores[:5].tolist()
    if hasattr(model, "predict_proba"):
        proba = model.predict_proba(X)
        np.testing.assert_allclose(proba[:, 1], natural.predict_proba(X)[:, 1], rtol=1e-12)
        np.testing.assert_array_equal(model.classes_[proba.argmax(1)][scores != 0],
                                      predicted[scores != 0])


@pytest.mark.parametrize("make_classifier", BINARY_CLASSIFIERS)
@pytest.mark.parametrize("first, second", [("cat", "bird"), (1, 2), (2, 1), (1, 0), (True, False),
                                           (-1, 1)])
def test_a_model_that_has_seen_one_label_saves_loads_and_learns_on(labelled_stream, first,
                                                                   second, make_classifier,
                                                                   tmp_path):
    """Saved before its second label arrived, a model loads (the file lists its one label, coded
    as it was: 1 and True as +1, the natural labels' code) and then learns more of the first
    and the second as the model that was never saved does."""
    X, y = labelled_stream
    model = make_classifier()
    model.partial_fit(X[:5], [first] * 5)
    model.save(tmp_path / "one.npz")
    loaded = fastomkl.load(tmp_path / "one.npz")
    assert loaded.classes_.tolist() == [first] and loaded.predict_one(X[5]) == first
    assert loaded._codes == model._codes
    if hasattr(model, "predict_proba_one"):
        assert model.predict_proba_one(X[5]) == {first: 1.0}
    if hasattr(model, "predict_proba"):
        np.testing.assert_array_equal(model.predict_proba(X[:3]), np.ones((3, 1)))
    for m in (model, loaded):
        m.partial_fit(X[5:10], [first] * 5)
        m.learn_one(X[10], second)
        m.partial_fit(X[11:40], np.where(y[11:40] > 0, first, second))
    assert loaded.classes_.tolist() == model.classes_.tolist() == sorted([first, second])
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_multiclass_columns_follow_the_sorted_classes():
    """DoublySGDSoftmaxClassifier learning "c", "a", "b" in that order of arrival: classes_ is
    sorted, and each column of decision_function and predict_proba is that class's: the engine's
    column of the label (by its code) moved to the label's place in classes_."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 2))
    labels = np.array(["c", "a", "b"])[np.digitize(X[:, 0], [-0.3, 0.3])]
    first = [int(np.flatnonzero(labels == c)[0]) for c in "cab"]
    order = np.r_[first, np.delete(np.arange(300), first)]
    X, labels = X[order], labels[order]
    model = fastomkl.DoublySGDSoftmaxClassifier(block_size=8, random_state=0)
    for x, c in zip(X, labels):
        model.learn_one(x, c)
    assert model.classes_.tolist() == ["a", "b", "c"] and model._by_code.tolist() == ["c", "a", "b"]
    engine_columns = np.empty((len(X), 3))
    model._engine.predict_outputs_many(X, engine_columns)
    F = model.decision_function(X)
    for j, c in enumerate(model.classes_):
        np.testing.assert_array_equal(F[:, j], engine_columns[:, int(model._codes[c])])
    proba = model.predict_proba(X)
    np.testing.assert_array_equal(model.classes_[proba.argmax(1)], model.predict(X))
    assert np.mean(model.predict(X) == labels) > 0.6


def test_hinge_classifier_has_no_probabilities():
    """A hinge model estimates no probability: the methods are absent (hasattr is False), as
    scikit-learn's and river's tools expect, rather than present and raising."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (40, 3))
    m = RakerClassifier(KERNELS, n_components=8, loss="hinge", random_state=0)
    m.fit(X, np.where(X[:, 0] > 0, 1, -1))
    assert not hasattr(m, "predict_proba") and not hasattr(m, "predict_proba_one")
    with pytest.raises(AttributeError, match="loss='logistic'"):
        m.predict_proba(X)
    assert hasattr(RakerClassifier(KERNELS), "predict_proba_one")     # the default loss
    # a composed classifier of VAW experts regresses the -1/+1 labels: no probabilities either
    from fastomkl.compose import Hedge, RandomFeatures, VAWExperts
    vaw = fastomkl.OnlineMKLClassifier(RandomFeatures(KERNELS, 8), VAWExperts(lam=0.1), Hedge(),
                                       random_state=0).fit(X, np.where(X[:, 0] > 0, 1, -1))
    assert not hasattr(vaw, "predict_proba") and not hasattr(vaw, "predict_proba_one")
    assert hasattr(fastomkl.OnlineMKLClassifier(random_state=0), "predict_proba")


def test_classifier_accuracy(labelled_stream):
    X, y = labelled_stream
    m = RakerClassifier([Gaussian(0.3), Gaussian(1.0)], n_components=50, eta=1.0, random_state=0)
    pred = m.predict_learn(np.tile(X, (4, 1)), np.tile(y, 4))
    assert np.mean(pred[-300:] == y) > 0.75


def test_public_names():
    for name in fastomkl.__all__:
        assert hasattr(fastomkl, name)


def test_repr_shows_changed_params():
    assert repr(Raker(eta=0.3)) == "Raker(eta=0.3)"
