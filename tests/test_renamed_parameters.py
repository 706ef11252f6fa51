"""Parameters renamed for the library's one vocabulary keep their old names for one release: the
old spelling warns (FutureWarning) and builds the very model the new spelling builds."""
import inspect
import warnings

import numpy as np
import pytest

import fastomkl
from fastomkl import Gaussian
from fastomkl._estimator import OnlineEstimator

X = np.random.default_rng(0).uniform(-1, 1, (40, 3))
Y = np.sin(3 * X[:, 0]) + X[:, 1]

# (class, old spelling, new spelling, base parameters)
CASES = [
    (fastomkl.Raker, {"eta_hedge": 0.5}, {"eta_combiner": 0.5}, {"eta": 0.2}),
    (fastomkl.OMKLSFG, {"eta_hedge": 0.5}, {"eta_combiner": 0.5}, {"eta": 0.2, "M": 2}),
    (fastomkl.VAWEWA, {"eta": 0.3}, {"eta_combiner": 0.3}, {}),
    (fastomkl.OKS, {"step": 5.0}, {"eta": 5.0}, {"T": 100}),
    (fastomkl.VAW, {"kernels": [Gaussian(0.7)]}, {"kernel": Gaussian(0.7)}, {}),
    (fastomkl.NystromAWV, {"sigma": 0.7}, {"kernel": Gaussian(0.7)}, {}),
    (fastomkl.TaylorAWV, {"sigma": 0.7}, {"kernel": Gaussian(0.7)}, {}),
    (fastomkl.KernelAWV, {"sigma": 0.7}, {"kernel": Gaussian(0.7)}, {}),
    (fastomkl.FOGD, {"sigma": 0.7}, {"kernel": Gaussian(0.7)}, {"n_components": 8}),
    (fastomkl.ProsNKons, {"sigma": 0.7}, {"kernel": Gaussian(0.7)}, {}),
    (fastomkl.OnlineKernelRegressor, {"kernel": "rbf", "gamma": 2.0},
     {"kernel": Gaussian.from_gamma(2.0)}, {}),
    (fastomkl.OnlineKernelRegressor, {"kernel": "poly", "degree": 3, "coef0": 1.0},
     {"kernel": fastomkl.kernels.Polynomial(3, 1.0, 1.0)}, {}),
]


def small(cls, params):
    if "kernels" in cls._param_names() and "kernels" not in params:
        params = {"kernels": [Gaussian(0.5), Gaussian(2.0)], **params}
    if "random_state" in cls._param_names():
        params = {"random_state": 0, **params}
    return cls(**params)


@pytest.mark.parametrize("cls,old,new,base", CASES,
                         ids=[f"{c.__name__}-{next(iter(o))}" for c, o, _, _ in CASES])
def test_the_old_spelling_warns_and_builds_the_same_model(cls, old, new, base):
    with pytest.warns(FutureWarning, match=next(iter(old))):
        before = small(cls, {**base, **old})
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        after = small(cls, {**base, **new})
    assert before.get_params() == after.get_params()
    np.testing.assert_array_equal(before.fit(X, Y, shuffle=False).predict(X),
                                  after.fit(X, Y, shuffle=False).predict(X))


def test_an_old_name_beside_its_new_one_is_refused():
    with pytest.raises(TypeError, match="eta_combiner"):
        fastomkl.Raker(eta_hedge=0.5, eta_combiner=0.2)


def test_a_parameter_that_never_had_an_effect_warns_and_is_dropped():
    with pytest.warns(FutureWarning, match="no effect"):
        model = fastomkl.OMKR([Gaussian(1.0)], random_state=3)
    assert "random_state" not in model.get_params()


def test_unknown_keywords_are_refused_as_python_refuses_them():
    estimators = [getattr(fastomkl, n) for n in fastomkl.__all__
                  if inspect.isclass(getattr(fastomkl, n))
                  and issubclass(getattr(fastomkl, n), OnlineEstimator)]
    for cls in estimators:
        with pytest.raises(TypeError, match="no_such_parameter"):
            cls(**cls._unit_test_params()[0], no_such_parameter=1)


def test_the_bandit_weights_keep_their_old_name_for_one_release():
    model = fastomkl.OKS([Gaussian(1.0), Gaussian(2.0)], random_state=0).fit(X, Y)
    with pytest.warns(FutureWarning, match="weights_"):
        np.testing.assert_array_equal(model.p_, model.weights_)
