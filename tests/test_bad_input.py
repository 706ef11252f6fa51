"""Bad input raises ValueError saying what was wrong, and leaves the model byte-for-byte unchanged."""
import numpy as np
import pytest

import fastomkl
from fastomkl import Gaussian, Laplacian, Raker, RakerClassifier
from helpers import state_bytes

KERNELS = [Gaussian(0.5), Laplacian(1.0)]
GOOD_X = np.array([0.1, 0.2, 0.3])

BAD_SAMPLES = [
    ([0.1, np.nan, 0.3], "NaN"),
    ([0.1, np.inf, 0.3], "NaN or infinity"),
    ([[0.1, 0.2, 0.3]], "one sample"),
    (["a", "b", "c"], "real numbers"),
    ([1 + 2j, 0, 0], "real numbers"),
    (None, "x"),
]


@pytest.fixture(params=["fresh", "trained"])
def model(request, stream):
    m = Raker(KERNELS, n_components=6, random_state=0)
    if request.param == "trained":
        rng = np.random.default_rng(0)
        m.partial_fit(rng.uniform(size=(30, 3)), rng.uniform(size=30))
    return m


@pytest.mark.parametrize("x,message", BAD_SAMPLES)
@pytest.mark.parametrize("method", ["predict_one", "learn_one", "predict_learn_one"])
def test_bad_sample(model, method, x, message):
    before = state_bytes(model)
    args = (x,) if method == "predict_one" else (x, 0.5)
    if method == "predict_one" and model.n_samples_seen_ == 0:
        message = "has seen no data"          # NotFittedError, a ValueError, whatever x is
    with pytest.raises(ValueError, match=message):
        getattr(model, method)(*args)
    assert state_bytes(model) == before


@pytest.mark.parametrize("x,message", [([0.1, 0.2], "has 2 features"),
                                       ([0.1, 0.2, 0.3, 0.4], "has 4 features")])
@pytest.mark.parametrize("method", ["predict_one", "learn_one", "predict_learn_one"])
def test_wrong_width_after_training(stream, method, x, message):
    rng = np.random.default_rng(0)
    model = Raker(KERNELS, n_components=6, random_state=0).partial_fit(rng.uniform(size=(5, 3)),
                                                                       rng.uniform(size=5))
    before = state_bytes(model)
    args = (x,) if method == "predict_one" else (x, 0.5)
    with pytest.raises(ValueError, match=message):
        getattr(model, method)(*args)
    assert state_bytes(model) == before


@pytest.mark.parametrize("y", [np.nan, np.inf, "high", None, [1.0]])
def test_bad_target(model, y):
    before = state_bytes(model)
    with pytest.raises(ValueError, match="y"):
        model.predict_learn_one(GOOD_X, y)
    assert state_bytes(model) == before


@pytest.mark.parametrize("X,y,message", [
    (np.full((4, 3), np.nan), np.zeros(4), "NaN"),
    (np.zeros(3), np.zeros(1), "2-D"),
    (np.zeros((4, 3)), np.zeros(3), "3 values but X has 4 rows"),
    (np.zeros((4, 3)), np.array([0, 0, np.nan, 0]), "NaN"),
    (np.zeros((4, 3)), np.zeros((4, 1)), "1-D"),
    ([["a"] * 3] * 4, np.zeros(4), "real numbers"),
])
@pytest.mark.parametrize("method", ["partial_fit", "fit", "predict_learn"])
def test_bad_batch(model, method, X, y, message):
    before = state_bytes(model)
    with pytest.raises(ValueError, match=message):
        getattr(model, method)(X, y)
    assert state_bytes(model) == before


@pytest.mark.parametrize("method", ["partial_fit", "predict_learn"])
def test_batch_of_wrong_width_after_training(method):
    rng = np.random.default_rng(0)
    model = Raker(KERNELS, n_components=6, random_state=0).partial_fit(rng.uniform(size=(5, 3)),
                                                                       rng.uniform(size=5))
    before = state_bytes(model)
    with pytest.raises(ValueError, match="expecting 3 features"):
        getattr(model, method)(np.zeros((4, 2)), np.zeros(4))
    assert state_bytes(model) == before


def test_bad_predict_batch():
    rng = np.random.default_rng(0)
    model = Raker(KERNELS, n_components=6, random_state=0).partial_fit(rng.uniform(size=(5, 3)),
                                                                       rng.uniform(size=5))
    before = state_bytes(model)
    for X in (np.zeros((2, 4)), np.array([[np.nan, 0, 0]])):
        with pytest.raises(ValueError):
            model.predict(X)
    assert state_bytes(model) == before


@pytest.mark.parametrize("params,message", [
    ({"n_components": 0}, "n_components"), ({"n_components": 2.5}, "n_components"),
    ({"eta": 0.0}, "eta"), ({"eta": "fast"}, "eta"), ({"eta_schedule": "linear"}, "eta_schedule"),
    ({"lam": -1.0}, "lam"), ({"loss": "logistic"}, "loss"), ({"kernels": []}, "kernels"),
    ({"kernels": ["rbf"]}, "kernels"), ({"random_state": "seed"}, "random_state"),
    ({"random_state": -3}, "random_state"), ({"eta_combiner": -2.0}, "eta_combiner"),
])
def test_bad_params_raise_at_first_use(params, message):
    m = Raker(**{"kernels": KERNELS, **params})
    before = state_bytes(m)
    with pytest.raises(ValueError, match=message):
        m.learn_one(GOOD_X, 0.1)
    assert state_bytes(m) == before and m._engine is None


def test_classifier_new_label_with_bad_x_records_nothing():
    m = RakerClassifier(KERNELS, n_components=4, random_state=0)
    m.learn_one(GOOD_X, "a")
    before = state_bytes(m)
    with pytest.raises(ValueError, match="NaN"):
        m.learn_one([np.nan, 0, 0], "b")
    assert state_bytes(m) == before and list(m.classes_) == ["a"]


def test_classifier_bad_labels():
    m = RakerClassifier(KERNELS, n_components=4, random_state=0)
    m.partial_fit(np.zeros((2, 3)), ["a", "b"])
    before = state_bytes(m)
    for bad in ("c", np.nan, None, [1]):
        with pytest.raises(ValueError):
            m.learn_one(GOOD_X, bad)
    with pytest.raises(ValueError, match="NaN"):
        m.learn_one([np.nan, 0, 0], "a")
    with pytest.raises(ValueError, match="more than two"):
        m.partial_fit(np.zeros((3, 3)), ["a", "b", "c"])
    with pytest.raises(ValueError, match="loss"):
        RakerClassifier(KERNELS, loss="squared").learn_one(GOOD_X, 1)
    assert state_bytes(m) == before


# -- the accepted range: |x_j|, |y| <= MAX_ABS_INPUT on every path ----------------------------------
from fastomkl import OMKLSFG, OnlineKernelRegressor  # noqa: E402
from fastomkl.kernels import Polynomial  # noqa: E402
from fastomkl._validation import MAX_ABS_INPUT  # noqa: E402

BEYOND = np.nextafter(MAX_ABS_INPUT, np.inf)


def _trained_pair():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(20, 3))
    reg = Raker(KERNELS, n_components=6, random_state=0).fit(X, X.sum(1))
    clf = RakerClassifier(KERNELS, n_components=6, random_state=0).fit(X, X[:, 0] > 0.5)
    return X, reg, clf


def _range_calls(X):
    """Every public input path of a trained model with one value just beyond the range."""
    wide = X[:3].copy()
    wide[1, 2] = -BEYOND
    x = wide[1]
    return [
        ("predict_one", lambda m: m.predict_one(x)),
        ("predict_one list", lambda m: m.predict_one(list(x))),        # the stack-buffer path
        ("learn_one", lambda m: m.learn_one(list(x), 0.5 if m._estimator_type == "regressor" else True)),
        ("predict_learn_one", lambda m: m.predict_learn_one(x, 1 if m._estimator_type == "regressor" else True)),
        ("predict", lambda m: m.predict(wide)),
        ("predict_learn", lambda m: m.predict_learn(wide, [0, 1, 0])),
        ("partial_fit", lambda m: m.partial_fit(wide, [0, 1, 0])),
        ("fit", lambda m: m.fit(wide, [0, 1, 0])),
        ("score", lambda m: m.score(wide, [0, 1, 0])),
    ]


def test_values_beyond_the_range_are_refused_everywhere():
    X, reg, clf = _trained_pair()
    Raker._estimator_type, RakerClassifier._estimator_type = "regressor", "classifier"
    try:
        for m in (reg, clf):
            before = state_bytes(m)
            for name, call in _range_calls(X):
                with pytest.raises(ValueError, match="1e\\+150"):
                    call(m)
                assert state_bytes(m) == before, name
        named = Raker(KERNELS, n_components=6, random_state=0)
        named.learn_one({"a": 0.1, "b": 0.2, "c": 0.3}, 1.0)
        before = state_bytes(named)
        for call in (lambda: named.predict_one({"a": 0.1, "b": BEYOND, "c": 0.3}),
                     lambda: named.learn_one({"a": 0.1, "b": 0.2, "c": 0.3}, -BEYOND)):
            with pytest.raises(ValueError, match="1e\\+150"):
                call()
            assert state_bytes(named) == before
        for call in (lambda: clf.decision_function([X[0] * 0 + BEYOND]),
                     lambda: clf.decision_function_one([BEYOND, 0.0, 0.0])):
            with pytest.raises(ValueError, match="1e\\+150"):
                call()
    finally:
        del Raker._estimator_type, RakerClassifier._estimator_type


@pytest.mark.parametrize("y", [BEYOND, -BEYOND, 10 ** 151, 10 ** 400, np.float64(BEYOND)])
def test_regression_targets_beyond_the_range_are_refused(y):
    X, reg, _ = _trained_pair()
    for m in (reg, Raker(KERNELS, n_components=6, random_state=0)):
        before = state_bytes(m)
        for call in (lambda: m.learn_one(X[0], y), lambda: m.learn_one(list(X[0]), y),
                     lambda: m.partial_fit(X[:2], [0.0, y]), lambda: m.fit(X[:2], [y, 0.0])):
            with pytest.raises(ValueError, match="1e\\+150"):
                call()
            assert state_bytes(m) == before


@pytest.mark.parametrize("y", [np.float64("nan"), np.float64(-np.inf), np.float32("nan"),
                               float("inf")])
def test_non_finite_targets_are_refused_by_the_one_sample_paths(y):
    """NumPy's float64 scalars are read directly as floats: their NaN and infinity are refused
    there too, before anything changes."""
    X, reg, _ = _trained_pair()
    for m in (reg, Raker(KERNELS, n_components=6, random_state=0)):
        before = state_bytes(m)
        for x in (X[0], list(X[0])):
            with pytest.raises(ValueError, match="y must be finite"):
                m.predict_learn_one(x, y)
            assert state_bytes(m) == before


def test_the_boundary_itself_is_accepted_and_keeps_everything_finite():
    """x and y at +-MAX_ABS_INPUT: accepted, and predictions and state stay finite (the squares
    of accepted values are finite, and the state guard refuses what would not be)."""
    rng = np.random.default_rng(2)
    m = Raker(KERNELS, n_components=6, random_state=0)
    for _ in range(20):
        x = rng.choice([-MAX_ABS_INPUT, MAX_ABS_INPUT, 0.5], size=3)
        y_hat = m.predict_learn_one(x, float(rng.choice([-MAX_ABS_INPUT, MAX_ABS_INPUT])))
        assert np.isfinite(y_hat)
    assert all(np.isfinite(np.asarray(v, dtype=float)).all() for v in m._engine.get_state().values())
    assert np.isfinite(m.predict(rng.uniform(size=(5, 3)))).all()


@pytest.mark.parametrize("degree,coef0,gamma", [(1, 0.0, 1.0), (2, 1.0, 1.0), (3, 0.0, 2.0),
                                                (5, -1.0, 0.5)])
def test_polynomial_kernel_refuses_samples_whose_kernel_values_would_overflow(degree, coef0, gamma):
    """(gamma x.x' + coef0)^degree <= 1e50 by Cauchy-Schwarz when gamma ||x||^2 + |coef0| <=
    1e50^(1/degree) for every accepted x: just inside predicts finitely, just outside raises."""
    limit = (1e50 ** (1.0 / degree) - abs(coef0)) / gamma
    inside = np.array([np.sqrt(limit) * 0.999, 0.0])
    outside = np.array([np.sqrt(limit) * 1.001, 0.0])
    m = OnlineKernelRegressor(Polynomial(degree, gamma, coef0))
    for x, y in [(inside, 1e150), (-inside, -1e150), (inside[::-1], 3.0)]:
        assert np.isfinite(m.predict_learn_one(x, y))
    before = state_bytes(m)
    for call in (lambda: m.predict_one(outside), lambda: m.learn_one(list(outside), 1.0),
                 lambda: m.predict([inside, outside]), lambda: m.partial_fit([outside], [1.0])):
        with pytest.raises(ValueError, match=f"degree={degree}"):
            call()
        assert state_bytes(m) == before
    assert np.isfinite(m.predict([inside, -inside, inside[::-1]])).all()
    fresh = OnlineKernelRegressor(Polynomial(degree, gamma, coef0))
    with pytest.raises(ValueError, match="polynomial kernel"):
        fresh.learn_one(outside, 1.0)
    assert fresh._engine is None and not hasattr(fresh, "n_features_in_")


# -- set_params validates what the first call would, and changes nothing on error ---------------
@pytest.mark.parametrize("params,message", [
    ({"random_state": -1}, "random_state"), ({"random_state": "seed"}, "random_state"),
    ({"random_state": 2.5}, "random_state"), ({"random_state": True}, "random_state"),
    ({"n_components": 0}, "n_components"), ({"eta": -1.0}, "eta"),
])
def test_set_params_refuses_invalid_values_on_a_trained_model(params, message):
    X, reg, clf = _trained_pair()
    for m in (reg, clf):
        before, engine = state_bytes(m), m._engine
        with pytest.raises(ValueError, match=message):
            m.set_params(**params)
        assert state_bytes(m) == before and m._engine is engine


def test_set_params_refuses_M_beyond_the_number_of_kernels():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(10, 3))
    m = OMKLSFG(KERNELS, n_components=4, M=2, random_state=0).fit(X, X.sum(1))
    before = state_bytes(m)
    with pytest.raises(ValueError, match="M must be at most the number of kernels"):
        m.set_params(M=3)
    assert state_bytes(m) == before and m.M == 2


# -- classifiers record no classes when the call fails --------------------------------------------
def test_classifier_failing_first_calls_record_no_classes():
    X = np.random.default_rng(0).uniform(size=(4, 3))
    for call in (lambda m: m.partial_fit(X[:3], ["a", "b", "c"]),
                 lambda m: m.partial_fit(X[:2], ["a", "b"], classes=["a", "b", "c"]),
                 lambda m: m.set_params(n_components=0) and None,
                 lambda m: m.partial_fit(X[:2], [1.0, 2.0])):
        m = RakerClassifier(KERNELS, n_components=4, random_state=0)
        try:
            call(m)
        except ValueError:
            pass
        else:
            continue
        assert not hasattr(m, "classes_") and m._engine is None
    for method in ("learn_one", "partial_fit"):          # invalid parameter, caught at first use
        m = RakerClassifier(KERNELS, n_components=0)
        with pytest.raises(ValueError, match="n_components"):
            if method == "learn_one":
                m.learn_one(X[0], "a")
            else:
                m.partial_fit(X[:2], ["a", "b"])
        assert not hasattr(m, "classes_") and m._engine is None


# -- one rule per kind of input, identical on every path --------------------------------------------
class _FloatLike:
    def __float__(self):
        return 0.5


@pytest.mark.parametrize("value", ["0.5", b"1", None, _FloatLike(), 1 + 0j, 10 ** 400])
def test_values_that_are_not_real_numbers_are_refused_as_x(value):
    for trained in (False, True):
        m = Raker(KERNELS, n_components=6, random_state=0)
        if trained:
            m.fit(np.zeros((2, 3)), [0.0, 1.0])
        before = state_bytes(m)
        for x in ([value, 0.0, 0.0], (0.0, value, 0.0), np.array([value, 0.0, 0.0], dtype=object),
                  {0: value, 1: 0.0, 2: 0.0}):
            with pytest.raises(ValueError):
                m.learn_one(x, 0.5)
            assert state_bytes(m) == before
        with pytest.raises(ValueError):
            m.partial_fit([[value, 0.0, 0.0]], [0.5])
        assert state_bytes(m) == before


@pytest.mark.parametrize("y", [True, np.bool_(False), "1.0", None, _FloatLike(), (1.0,), [1.0]])
def test_regression_targets_that_are_not_real_numbers_are_refused_fresh_or_trained(y):
    for trained in (False, True):
        m = Raker(KERNELS, n_components=6, random_state=0)
        if trained:
            m.fit(np.zeros((2, 3)), [0.0, 1.0])
        before = state_bytes(m)
        for x in (GOOD_X, list(GOOD_X)):
            with pytest.raises(ValueError, match="y"):
                m.learn_one(x, y)
            assert state_bytes(m) == before
        with pytest.raises(ValueError):
            m.partial_fit([GOOD_X], [y])
        assert state_bytes(m) == before


def test_bool_features_and_numpy_scalar_targets_are_real_numbers():
    a = Raker(KERNELS, n_components=6, random_state=0)
    b = Raker(KERNELS, n_components=6, random_state=0)
    got = [a.predict_learn_one([True, False, 1], np.float32(0.5)),
           a.predict_learn_one((1, 0.0, True), np.array(2))]
    want = b.predict_learn(np.array([[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]), [0.5, 2.0])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("label", [None, (1, 2), 0.5, float("nan"), float("inf"), b"a", 1 + 0j])
def test_classifier_labels_follow_one_rule_fresh_or_trained(label):
    for trained in (False, True):
        m = RakerClassifier(KERNELS, n_components=4, random_state=0)
        if trained:
            m.partial_fit(np.zeros((1, 3)), [1])
        before = state_bytes(m)
        with pytest.raises(ValueError, match="labels"):
            m.learn_one(GOOD_X, label)
        with pytest.raises(ValueError, match="labels"):
            m.partial_fit([GOOD_X], np.array([label], dtype=object))
        assert state_bytes(m) == before and hasattr(m, "classes_") == trained


def test_classifier_labels_are_all_strings_or_all_numbers():
    m = RakerClassifier(KERNELS, n_components=4, random_state=0).partial_fit([GOOD_X], ["a"])
    before = state_bytes(m)
    with pytest.raises(ValueError, match="all strings or all numbers"):
        m.learn_one(GOOD_X, 1)
    assert state_bytes(m) == before
    with pytest.raises(ValueError, match="all strings or all numbers"):
        RakerClassifier(KERNELS).partial_fit(np.zeros((2, 3)), np.array(["a", 1], dtype=object))
    two = RakerClassifier(KERNELS, n_components=4, random_state=0).partial_fit(
        np.zeros((2, 3)), ["a", "b"])
    with pytest.raises(ValueError, match=r"all strings or all numbers, got \['a', 'b', 1\]"):
        two.learn_one(GOOD_X, 1)          # the kinds, not a third class, are what is wrong


@pytest.mark.parametrize("model", [fastomkl.Raker, fastomkl.OMKR, fastomkl.VAW2])
def test_a_polynomial_kernel_in_a_dictionary_is_told_where_it_goes(model):
    with pytest.raises(ValueError, match="only OnlineKernelRegressor takes a Polynomial kernel"):
        model([fastomkl.Polynomial(2)]).fit(np.zeros((3, 2)), np.zeros(3))
    assert fastomkl.OnlineKernelRegressor(fastomkl.Polynomial(2)).fit(
        np.zeros((3, 2)), np.zeros(3)).n_samples_seen_ == 3


def test_a_model_of_one_kernel_kind_says_which_it_takes():
    with pytest.raises(ValueError, match=r"list of Gaussian kernels \(this model takes no other "
                                         r"kind; .*\), got \[Gaussian\(sigma=0.5\), Laplacian"):
        fastomkl.OKS([fastomkl.Gaussian(0.5), fastomkl.Laplacian(1.0)]).fit(np.zeros((3, 2)),
                                                                         np.zeros(3))


def test_a_third_class_is_named_with_what_to_use_instead():
    m = RakerClassifier(KERNELS, n_components=4, random_state=0).partial_fit(
        np.zeros((2, 3)), ["a", "b"])
    with pytest.raises(ValueError, match=r"labels \['a', 'b', 'c'\], more than two classes .*"
                                         r"DoublySGDSoftmaxClassifier"):
        m.learn_one(GOOD_X, "c")


@pytest.mark.parametrize("make", [lambda: fastomkl.Raker(KERNELS, n_components=4, random_state=3),
                                  lambda: fastomkl.OMKR(KERNELS),
                                  lambda: fastomkl.RakerClassifier(KERNELS, n_components=4,
                                                                   random_state=3)])
def test_fit_names_a_bad_target_by_its_row_in_the_callers_order(make):
    """fit learns in a shuffled order, yet names the row of the caller's y."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 3))
    y = X[:, 0].copy() if not isinstance(make(), fastomkl.RakerClassifier) else \
        np.where(X[:, 0] > 0, 1.0, -1.0)
    y[5] = np.nan
    with pytest.raises(ValueError, match="index 5"):
        make().fit(X, y)


def test_labels_of_any_size_decode_in_batches():
    """Whole-number labels beyond the int64 range are labels like any other."""
    X = np.array([[0.0, 0.1, 0.2], [1.0, 0.9, 0.8]])
    m = RakerClassifier(KERNELS, n_components=4, random_state=0)
    got = m.predict_learn(X, [10 ** 400, 0])
    assert set(got.tolist()) <= {0, 10 ** 400} and list(m.classes_) == [0, 10 ** 400]
    assert set(m.predict(X).tolist()) <= {0, 10 ** 400}


# -- every refused parameter is named, at set_params and at the first call -------------------------
BAD_PARAMETER_VALUES = [-1, 0, 2.5, "nonsense", [], -1e300, float("nan"), True, 10 ** 400, (1, 2)]


def test_every_parameter_error_names_the_parameter():
    import warnings
    import fastomkl
    from fastomkl._estimator import OnlineEstimator
    X = np.random.default_rng(0).uniform(size=(4, 3))
    classes = [getattr(fastomkl, n) for n in fastomkl.__all__]
    for cls in [c for c in classes if isinstance(c, type) and issubclass(c, OnlineEstimator)]:
        params = cls._param_names()
        base = cls._unit_test_params()[0]
        y = [0, 1, 0, 1] if hasattr(cls, "decision_function") else X.sum(1)
        for name in params:
            for value in BAD_PARAMETER_VALUES:
                for attempt in (lambda: cls(**base).set_params(**{name: value}),
                                lambda: cls(**{**base, name: value}).fit(X, y)):
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            attempt()
                    except ValueError as exc:
                        assert name in str(exc), (cls.__name__, name, value, str(exc))


@pytest.mark.parametrize("classes", [[1, 1], [], [[0, 1]], ["a"], ["a", "b", "a"]])
def test_partial_fit_refuses_a_classes_argument_that_is_not_distinct_labels(classes):
    """A binary model needs exactly two distinct labels, a multiclass one distinct labels; the
    model records nothing."""
    X = np.random.default_rng(0).uniform(size=(2, 3))
    binary = RakerClassifier(KERNELS, n_components=4, random_state=0)
    with pytest.raises(ValueError, match="classes must"):
        binary.partial_fit(X, [1, 1] if classes and classes[0] == 1 else ["a", "a"],
                           classes=classes)
    assert not hasattr(binary, "classes_")
    if len(classes) != 1:
        multi = fastomkl.DoublySGDSoftmaxClassifier(random_state=0)
        with pytest.raises(ValueError, match="classes must"):
            multi.partial_fit(X, ["a", "a"], classes=classes)
        assert not hasattr(multi, "classes_")
