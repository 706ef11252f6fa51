"""No finite input and no step size can make a model predict NaN or end in a non-finite state.

An update that would overflow is refused (the model keeps its previous state for that expert or
combiner), counted in ``n_rejected_updates_`` and reported by a ``NumericalWarning``.
"""
import warnings

import numpy as np
import pytest

import fastomkl as fo

KERNELS = [fo.Gaussian(0.3), fo.Gaussian(1.0), fo.Laplacian(1.0)]


def regressors(**kw):
    return [
        fo.Raker(KERNELS, n_components=8, random_state=0, **kw),
        fo.OMKLGF(KERNELS, n_components=8, M=2, random_state=0, **kw),
        fo.OMKLSFG(KERNELS, n_components=8, M=2, random_state=0, **kw),
        fo.OMKLSFGR(KERNELS, n_components=8, M=2, random_state=0, **kw),
        fo.RFOMKR(KERNELS, n_components=8, random_state=0, **kw),
        fo.OMKR(KERNELS, **kw),
        fo.OnlineKernelRegressor(fo.Gaussian.from_gamma(1.0), **kw),
    ]


def airfoil(n=400):
    X, y = fo.load_dataset("airfoil")
    return fo.datasets.scale_to_unit_ball(X[:n]), fo.datasets.scale_to_unit_interval(y[:n])


def state_is_finite(model) -> bool:
    return all(np.isfinite(np.asarray(v, dtype=np.float64)).all()
               for v in model._engine.get_state().values())


def learn_quietly(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fo.NumericalWarning)
        return model.predict_learn(X, y)


@pytest.mark.parametrize("eta", [1e-4, 1e-2, 1.0, 2.0, 1e2, 1e4])
@pytest.mark.parametrize("index", range(7))
def test_any_constant_step_keeps_predictions_finite(eta, index):
    X, y = airfoil()
    model = regressors(eta=eta, eta_schedule="constant")[index]
    assert np.isfinite(learn_quietly(model, X, y)).all()
    assert np.isfinite(model.predict(X)).all()
    assert state_is_finite(model)


def test_a_diverging_step_is_refused_counted_and_warned():
    X, y = airfoil()
    model = fo.Raker(KERNELS, n_components=8, eta=2.0, eta_schedule="constant", random_state=0)
    with pytest.warns(fo.NumericalWarning, match="refused"):
        model.predict_learn(X, y)
    assert model.n_rejected_updates_ > 0
    assert np.isfinite(model.predict(X)).all()


@pytest.mark.parametrize("index", range(7))
def test_extreme_values_then_clean_data(index):
    """x and y at +-1e150 (the largest accepted): finite throughout, and the model still learns
    from clean data afterwards."""
    X, y = airfoil(600)
    model = regressors()[index]
    model.partial_fit(X[:100], y[:100])
    rng = np.random.default_rng(0)
    extreme_X = rng.choice([-1e150, 1e150, 0.5], size=(20, X.shape[1]))
    extreme_y = rng.choice([-1e150, 1e150], size=20)
    assert np.isfinite(learn_quietly(model, extreme_X, extreme_y)).all()
    assert state_is_finite(model)
    learn_quietly(model, X[100:], y[100:])
    after = np.mean((model.predict(X[100:]) - y[100:]) ** 2)
    assert np.isfinite(after)
    assert state_is_finite(model)


@pytest.mark.parametrize("index", range(7))
def test_no_refusal_on_clean_data_with_defaults(index):
    X, y = airfoil()
    model = regressors()[index]
    with warnings.catch_warnings():
        warnings.simplefilter("error", fo.NumericalWarning)
        model.predict_learn(X, y)
    assert model.n_rejected_updates_ == 0


def test_counter_survives_save_and_load(tmp_path):
    X, y = airfoil()
    model = fo.Raker(KERNELS, n_components=8, eta=2.0, eta_schedule="constant", random_state=0)
    learn_quietly(model, X, y)
    model.save(tmp_path / "m.npz")
    loaded = fo.load(tmp_path / "m.npz")
    assert loaded.n_rejected_updates_ == model.n_rejected_updates_ > 0


RAW = {"standardize_target": False}      # the extreme targets reach the experts as they are


@pytest.mark.parametrize("make", [
    lambda: fo.RFOKS(KERNELS, n_components=8, T=400, eta=1e6, random_state=0, **RAW),
    lambda: fo.OKS(fo.paper001_dictionary()[:3], T=400, eta=1e6, random_state=0, **RAW),
    lambda: fo.RFIOKS(KERNELS, n_components=8, U=1e6, random_state=0, **RAW)],
    ids=["RFOKS", "OKS", "RFIOKS"])
def test_bandit_models_refuse_count_and_warn(make):
    """The bandit experts and samplers refuse a round whose update would not be finite, count it
    in n_rejected_updates_ and warn; predictions stay finite."""
    X, y = airfoil()
    model = make()
    with pytest.warns(fo.NumericalWarning, match="refused"):
        out = model.predict_learn(X * 1e150, y * 1e150)
    assert model.n_rejected_updates_ > 0
    assert np.isfinite(out).all() and np.isfinite(model.predict(X)).all()
    assert state_is_finite(model)


@pytest.mark.parametrize("cls", [fo.OKS, fo.OKSPlusPlus, fo.IOKS, fo.RFOKS, fo.RFOKSPlusPlus,
                                 fo.RFIOKS, fo.LKMBooks])
def test_bandit_defaults_refuse_nothing_on_clean_data(cls):
    X, y = airfoil()
    model = cls(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fo.NumericalWarning)
        model.predict_learn(X, y)
    assert model.n_rejected_updates_ == 0
