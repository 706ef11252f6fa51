"""River's conventions: dict samples in the *_one methods, and models inside river's pipelines and
evaluation (``fastomkl.river.to_river``), checked against the same computation on arrays."""
import itertools
import json
import pickle
import subprocess
import sys

import numpy as np
import pytest
from river import base, compose, datasets, dummy, evaluate, metrics, preprocessing, stats

import fastomkl as fo
from load_mutations import write
from fastomkl import Gaussian, Laplacian, NotFittedError, Raker, RakerClassifier
from fastomkl.datasets import scale_to_unit_interval
from fastomkl.river import RiverClassifier, RiverRegressor, to_river
from helpers import state_bytes

# Bandwidths for standardised features (squared distances around twice the dimension).
KERNELS = [Gaussian(3.0), Laplacian(5.0)]


def regressor():
    return Raker(KERNELS, n_components=10, eta=0.5, random_state=0)


def classifier():
    return RakerClassifier(KERNELS, n_components=10, eta=0.5, random_state=0)


def as_dicts(X, names, rng):
    """Rows of X as dicts keyed by names, each with its keys in a random order."""
    rows = []
    for row in X:
        order = rng.permutation(len(names))
        rows.append({names[j]: float(row[j]) for j in order})
    return rows


def model_state(model):
    return state_bytes(model), list(getattr(model, "feature_names_in_", []))


@pytest.fixture
def airfoil():
    """300 shuffled rows of the packaged airfoil data, y scaled to [0, 1], and the column names."""
    data = fo.load_dataset("airfoil")
    rows = np.random.default_rng(0).permutation(len(data.y))[:300]
    return data.X[rows], scale_to_unit_interval(data.y)[rows], list(data.columns)


# -- dict samples ----------------------------------------------------------------------------------
def test_dicts_are_read_by_name_in_sorted_key_order(stream):
    X, y = stream
    names = ["w", "b", "z", "a"]                     # columns of X, deliberately not sorted
    rows = as_dicts(X, names, np.random.default_rng(1))
    by_name, by_array = regressor(), regressor()
    order = np.argsort(names)                        # the model's feature order: sorted keys
    online = [by_name.predict_learn_one(x, t) for x, t in zip(rows[:200], y[:200])]
    np.testing.assert_array_equal(online, by_array.predict_learn(X[:200, order], y[:200]))
    assert by_name.feature_names_in_.tolist() == ["a", "b", "w", "z"]
    np.testing.assert_array_equal([by_name.predict_one(x) for x in rows[200:]],
                                  by_array.predict(X[200:, order]))
    for x, t in zip(rows[200:], y[200:]):
        by_name.learn_one(x, t)
    by_array.partial_fit(X[200:, order], y[200:])
    assert state_bytes(by_name) == state_bytes(by_array)
    # Arrays keep working on a model that learnt from dicts: positionally, in its feature order.
    assert by_name.predict_one(X[0, order]) == by_name.predict_one(rows[0])


@pytest.mark.parametrize("x,named", [({"a": 0.1, "b": 0.2}, r"missing \['c'\], unknown \[\]"),
                                     ({"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4},
                                      r"missing \[\], unknown \['d'\]"),
                                     ({"a": 0.1, "b": 0.2, "d": 0.4},
                                      r"missing \['c'\], unknown \['d'\]")])
@pytest.mark.parametrize("method", ["predict_one", "learn_one", "predict_learn_one"])
def test_missing_or_unknown_keys_are_refused_by_name(method, x, named):
    model = regressor().learn_one({"c": 0.3, "a": 0.1, "b": 0.2}, 0.5)
    before = model_state(model)
    args = (x,) if method == "predict_one" else (x, 0.5)
    with pytest.raises(ValueError, match=named):
        getattr(model, method)(*args)
    assert model_state(model) == before


def test_classifier_decision_function_one_reads_dicts():
    model = classifier().learn_one({"b": 0.2, "a": 0.1}, "no")
    model.learn_one({"a": 0.9, "b": 0.7}, "yes")
    score = model.decision_function_one({"b": 0.7, "a": 0.9})
    assert score == model.decision_function([[0.9, 0.7]])[0]
    with pytest.raises(ValueError, match=r"missing \['b'\]"):
        model.decision_function_one({"a": 0.9})


def test_dict_after_arrays_and_bad_first_dicts_are_refused(stream):
    X, y = stream
    model = regressor().partial_fit(X[:5], y[:5])
    before = model_state(model)
    with pytest.raises(ValueError, match="learnt from arrays"):
        model.learn_one(dict(enumerate(X[5])), y[5])
    with pytest.raises(ValueError, match="learnt from arrays"):
        model.predict_one(dict(enumerate(X[5])))
    assert model_state(model) == before
    fresh = regressor()
    for first, message in [({1: 0.1, "a": 0.2}, "sortable"), ({"a": 0.1, "b": None}, "real numbers"),
                           ({"a": 0.1, "b": float("nan")}, "NaN")]:
        with pytest.raises(ValueError, match=message):
            fresh.learn_one(first, 0.5)
        assert fresh.n_samples_seen_ == 0 and not hasattr(fresh, "feature_names_in_")
    with pytest.raises(ValueError, match="y"):                # a bad target: no names are kept
        fresh.learn_one({"a": 0.1}, "high")
    assert not hasattr(fresh, "feature_names_in_")


def test_feature_names_survive_save_and_pickle_and_go_with_a_refit(tmp_path, stream):
    X, y = stream
    rows = as_dicts(X[:20], ["p", "q", "r", "s"], np.random.default_rng(2))
    model = regressor()
    for x, t in zip(rows, y):
        model.learn_one(x, t)
    model.save(tmp_path / "m.npz")
    for copy in (fo.load(tmp_path / "m.npz"), pickle.loads(pickle.dumps(model))):
        assert copy.feature_names_in_.tolist() == ["p", "q", "r", "s"]
        assert copy.predict_one(rows[3]) == model.predict_one(rows[3])
    with np.load(tmp_path / "m.npz", allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    header = json.loads(str(arrays.pop("__header__")))
    for names in (["p", "q", "r"], ["p", "q", "r", "r"], ["p", "q", "r", ["s"]]):
        (tmp_path / "bad.npz").write_bytes(write({**header, "feature_names": names}, arrays))
        with pytest.raises(ValueError, match="feature_names"):
            fo.load(tmp_path / "bad.npz")
    model.fit(X, y)
    assert not hasattr(model, "feature_names_in_")
    with pytest.raises(ValueError, match="learnt from arrays"):
        model.predict_one(rows[0])


def test_bool_labels_from_dicts_match_the_array_classifier(labelled_stream):
    X, labels = labelled_stream
    y = labels > 0                                   # river's Phishing yields bools
    names = ["f0", "f1", "f2", "f3"]
    by_name, by_array = classifier(), classifier()
    online = [by_name.predict_learn_one(x, t)
              for x, t in zip(as_dicts(X, names, np.random.default_rng(3)), y.tolist())]
    expected = by_array.predict_learn(X, y)
    assert by_name.classes_.tolist() == [False, True]
    np.testing.assert_array_equal(online[1:], expected[1:])   # round 1: no class known yet
    assert state_bytes(by_name) == state_bytes(by_array)


def test_unfitted_models_do_not_predict():
    for model in (regressor(), classifier()):
        with pytest.raises(NotFittedError, match="seen no data"):
            model.predict_one({"a": 1.0})
        assert not hasattr(model, "n_features_in_")


# -- river -----------------------------------------------------------------------------------------
def running_scaled(X):
    """River's StandardScaler by hand: per row, the scaling used to predict (statistics of the rows
    before it) and to learn (including it); running mean and population variance, 0 where the
    variance is 0."""
    n, d = X.shape
    mean, var = np.zeros(d), np.zeros(d)
    to_predict, to_learn = np.empty_like(X), np.empty_like(X)

    def scale(x):
        sd = np.sqrt(var)
        return np.where(var > 0, (x - mean) / np.where(var > 0, sd, 1.0), 0.0)

    for t, x in enumerate(X, start=1):
        to_predict[t - 1] = scale(x)
        old = mean.copy()
        mean = mean + (x - old) / t
        var = var + ((x - old) * (x - mean) - var) / t
        to_learn[t - 1] = scale(x)
    return to_predict, to_learn


def test_pipeline_with_standard_scaler_matches_the_array_computation(airfoil):
    X, y, names = airfoil
    pipeline = preprocessing.StandardScaler() | to_river(regressor())
    predictions = []
    for x, t in zip(as_dicts(X, names, np.random.default_rng(4)), y):
        predictions.append(pipeline.predict_one(x))
        assert pipeline.learn_one(x, t) is None
    order = np.argsort(names)
    to_predict, to_learn = running_scaled(X[:, order])
    reference = regressor()
    expected = [reference.predict_learn_one(to_learn[0], y[0])]      # the initial model: 0
    for i in range(1, len(y)):
        expected.append(reference.predict_one(to_predict[i]))
        reference.learn_one(to_learn[i], y[i])
    np.testing.assert_allclose(predictions, expected, rtol=1e-9, atol=1e-12)
    assert pipeline["RiverRegressor"].model.feature_names_in_.tolist() == sorted(names)


def test_progressive_val_score_for_a_regressor(airfoil):
    X, y, names = airfoil
    stream = list(zip(as_dicts(X, names, np.random.default_rng(5)), y.tolist()))

    def scaled(model):                    # river's idiom: scale features and target, online
        return preprocessing.TargetStandardScaler(preprocessing.StandardScaler() | model)

    mae = evaluate.progressive_val_score(stream, scaled(to_river(regressor())), metrics.MAE()).get()
    by_hand = scaled(to_river(regressor()))
    errors = []
    for x, t in stream:
        errors.append(abs(t - by_hand.predict_one(x)))
        by_hand.learn_one(x, t)
    assert mae == pytest.approx(np.mean(errors), rel=1e-12)
    running_mean = scaled(dummy.StatisticRegressor(stats.Mean()))
    assert mae < 0.9 * evaluate.progressive_val_score(stream, running_mean, metrics.MAE()).get()


def test_progressive_val_score_for_a_classifier_on_phishing():
    stream = list(itertools.islice(datasets.Phishing(), 1000))
    assert all(type(y) is bool for _, y in stream)
    pipeline = preprocessing.StandardScaler() | to_river(classifier())
    accuracy = evaluate.progressive_val_score(stream, pipeline, metrics.Accuracy()).get()
    by_hand = preprocessing.StandardScaler() | to_river(classifier())
    hits = []
    for x, y in stream:
        p = by_hand.predict_one(x)
        if p is not None:
            hits.append(p == y)
        by_hand.learn_one(x, y)
    assert accuracy == pytest.approx(np.mean(hits), rel=1e-12)
    majority = max(np.mean([y for _, y in stream]), 1 - np.mean([y for _, y in stream]))
    assert accuracy > majority + 0.1
    assert pipeline["RiverClassifier"].model.classes_.tolist() == [False, True]


def test_wrappers_follow_rivers_protocol(stream):
    X, y = stream
    regressor_wrapper, classifier_wrapper = to_river(regressor()), to_river(classifier())
    assert isinstance(regressor_wrapper, RiverRegressor) and isinstance(regressor_wrapper,
                                                                        base.Regressor)
    assert isinstance(classifier_wrapper, RiverClassifier) and isinstance(classifier_wrapper,
                                                                          base.Classifier)
    assert isinstance(compose.Pipeline(preprocessing.StandardScaler(), regressor_wrapper),
                      base.Regressor)
    with pytest.raises(ValueError, match="fastomkl estimator"):
        to_river(dummy.StatisticRegressor(stats.Mean()))
    assert classifier_wrapper.predict_proba_one(X[0]) == {}
    for x, t in zip(X[:50], y[:50] > 0.5):
        classifier_wrapper.learn_one(x, bool(t))
    proba = classifier_wrapper.predict_proba_one(X[60])
    expected = classifier_wrapper.model.predict_proba(X[60:61])[0]
    assert proba == {False: expected[0], True: expected[1]}
    assert type(classifier_wrapper.predict_one(X[60])) is bool
    fresh = classifier_wrapper.clone()
    assert fresh.model is not classifier_wrapper.model and fresh.model.n_samples_seen_ == 0
    assert fresh.model.get_params() == classifier_wrapper.model.get_params()
    kept = classifier_wrapper.clone(include_attributes=True)
    assert kept.predict_one(X[61]) == classifier_wrapper.predict_one(X[61])


def test_import_fastomkl_does_not_import_river():
    code = "import sys, fastomkl; sys.exit('river' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.parametrize("model", [
    Raker(KERNELS, n_components=4), fo.OMKLGF(KERNELS, n_components=4, M=1),
    fo.OMKLSFG(KERNELS, n_components=4, M=1), fo.OMKLSFGR(KERNELS, n_components=4, M=1, top_k=1),
    fo.OMKR(KERNELS), fo.RFOMKR(KERNELS, n_components=4), fo.OnlineKernelRegressor(),
    fo.VAW(KERNELS[0], n_components=4), fo.ConcatVAW(KERNELS, n_components=4),
    fo.VAW2(KERNELS, n_components=4), fo.VAWEWA(KERNELS, n_components=4),
    fo.VAWMeta(KERNELS, "mlpoly", n_components=4)], ids=lambda m: type(m).__name__)
def test_a_regressor_before_learning_answers_its_initial_prediction(model):
    wrapper = to_river(model)
    before = wrapper.predict_one({"a": 0.3, "b": -0.2})
    assert before == model.predict_learn_one({"a": 0.3, "b": -0.2}, 0.7)


def test_names_that_json_cannot_hold_are_refused_at_save(tmp_path):
    model = regressor().learn_one({(0, 1): 0.1, (1, 0): 0.2}, 0.5)
    assert model.feature_names_in_.tolist() == [(0, 1), (1, 0)]
    with pytest.raises(ValueError, match="cannot be saved"):
        model.save(tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


def test_a_multiclass_model_is_a_multiclass_river_classifier():
    """The softmax classifier goes to river as a classifier of its labels (not a regressor of
    their codes), marked multiclass, and learns a three-class stream well beyond chance."""
    rng = np.random.default_rng(3)
    centres = {"a": (0.0, 1.0), "b": (1.0, 0.0), "c": (-1.0, -1.0)}
    labels = rng.choice(list(centres), 600)
    stream = [({"u": centres[c][0] + 0.3 * rng.standard_normal(),
                "v": centres[c][1] + 0.3 * rng.standard_normal()}, str(c)) for c in labels]
    wrapper = to_river(fo.DoublySGDSoftmaxClassifier(random_state=0))
    assert isinstance(wrapper, RiverClassifier) and isinstance(wrapper, base.Classifier)
    assert wrapper._multiclass and not to_river(classifier())._multiclass
    assert wrapper.predict_one(stream[0][0]) is None and wrapper.predict_proba_one(stream[0][0]) == {}
    accuracy = evaluate.progressive_val_score(stream, wrapper, metrics.Accuracy()).get()
    assert accuracy > 0.8                                  # chance: about 1/3
    x = stream[-1][0]
    proba = wrapper.predict_proba_one(x)
    expected = wrapper.model.predict_proba([[x["u"], x["v"]]])[0]
    assert sorted(wrapper.model.classes_) == ["a", "b", "c"]
    assert proba == dict(zip(wrapper.model.classes_.tolist(), expected.tolist()))
    assert wrapper.predict_one(x) == max(proba, key=proba.get)


def test_to_river_given_a_class_says_to_pass_an_instance():
    with pytest.raises(ValueError, match=r"got the class Raker: pass an instance, e\.g\. "
                                         r"to_river\(Raker\(\)\)"):
        to_river(fo.Raker)
    with pytest.raises(ValueError, match="got int"):
        to_river(3)


def test_fastomkl_river_without_river_names_the_extra():
    code = ("import sys; sys.modules['river'] = None\n"
            "try:\n    import fastomkl.river\nexcept ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120).stdout
    assert "pip install 'fastomkl[river]'" in out
