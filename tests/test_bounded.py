"""Bounded by default: the support budget of the exact kernel expansions (OMKR,
OnlineKernelRegressor, the OKS family, NORMA), the dictionary budget of NystromAWV and the feature
budget of DSG (n_features_max) -- their policies
against NumPy computations of the same equations, flat memory once full, one BudgetWarning, files
that continue bit-identically, older files, and the load checks."""
import warnings

import numpy as np
import pytest

import fastomkl
from fastomkl import (IOKS, NORMA, OKS, OMKR, BudgetWarning, DoublySGDClassifier,
                      DoublySGDRegressor, Gaussian, IOKSClassifier, Laplacian, OKSClassifier,
                      OKSPlusPlus, OKSPlusPlusClassifier, OMKRClassifier, OnlineKernelRegressor)
from fastomkl.pkawv import NystromAWV, NystromAWVClassifier
from helpers import as_older_file

KERNELS = [Gaussian(0.5), Gaussian(1.0), Gaussian(2.0)]
B = 25          # a small budget, reached quickly


def _data(n, d=3, seed=0, classify=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    return X, (np.where(y > 0, 1, -1) if classify else y)


# (class, small-budget parameters, unbounded parameters, parameter name, is a classifier)
BOUNDED = [
    (OMKR, {"kernels": KERNELS, "budget": B}, "budget", False),
    (OMKRClassifier, {"kernels": KERNELS, "budget": B}, "budget", True),
    (OnlineKernelRegressor, {"kernel": Laplacian(1.0), "budget": B}, "budget", False),
    (OKS, {"kernels": KERNELS, "budget": B, "random_state": 0}, "budget", False),
    (OKSClassifier, {"kernels": KERNELS, "budget": B, "random_state": 0}, "budget", True),
    (OKSPlusPlus, {"kernels": KERNELS, "budget": B, "random_state": 0}, "budget", False),
    (OKSPlusPlusClassifier, {"kernels": KERNELS, "budget": B, "random_state": 0}, "budget",
     True),
    (IOKS, {"kernels": KERNELS, "budget": B, "random_state": 0}, "budget", False),
    (IOKSClassifier, {"kernels": KERNELS, "budget": B, "random_state": 0}, "budget", True),
    (NystromAWV, {"kernel": Gaussian(0.3), "mu": 1e-4, "max_centres": B, "random_state": 0},
     "max_centres", False),
    (NystromAWVClassifier, {"kernel": Gaussian(0.3), "mu": 1e-4, "max_centres": B,
                            "random_state": 0}, "max_centres", True),
    # one row per iteration, so that the state between two rounds holds no pending rows
    (NORMA, {"kernel": Gaussian(0.5), "batch_size": 1, "budget": B}, "budget", False),
    # a block of 5 features per iteration of one round: B features after B / 5 rounds
    (DoublySGDRegressor, {"kernel": Gaussian(0.5), "block_size": 5, "batch_size": 1,
                          "n_features_max": B, "random_state": 0}, "n_features_max", False),
    (DoublySGDClassifier, {"kernel": Gaussian(0.5), "block_size": 5, "batch_size": 1,
                           "n_features_max": B, "random_state": 0}, "n_features_max", True),
]
IDS = [case[0].__name__ for case in BOUNDED]
# NORMA's truncation is its algorithm (Kivinen et al.'s analysis bounds the error of the terms it
# drops), so its budget takes no None
UNBOUNDED = [case for case in BOUNDED if case[0] is not NORMA]


def _state_bytes(model):
    return sum(a.nbytes for a in model._engine.get_state().values())


@pytest.mark.parametrize("cls, params, name, classify", BOUNDED, ids=IDS)
def test_bounded_by_default(cls, params, name, classify):
    default = cls().get_params()[name]
    assert isinstance(default, int) and default > 0


@pytest.mark.parametrize("cls, params, name, classify", BOUNDED, ids=IDS)
def test_memory_flat_after_the_budget_and_one_warning(cls, params, name, classify):
    X, y = _data(6 * B, classify=classify)
    model = cls(**params)
    sizes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(X.shape[0]):
            model.learn_one(X[i], y[i])
            if model.budget_reached_:
                sizes.append(_state_bytes(model))
    budget_warnings = [w for w in caught if issubclass(w.category, BudgetWarning)]
    assert model.budget_reached_
    assert len(budget_warnings) == 1
    assert len(sizes) >= 2 * B and len(set(sizes)) == 1      # flat from the fill to 6 B
    if name == "budget":
        assert model.n_support_ == B
    elif name == "n_features_max":
        assert model.n_features_ == B
    else:
        assert model.n_centres_ <= B


@pytest.mark.parametrize("cls, params, name, classify", BOUNDED, ids=IDS)
def test_batch_call_warns_once(cls, params, name, classify):
    X, y = _data(6 * B, classify=classify)
    model = cls(**params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for chunk in range(6):
            model.partial_fit(X[chunk * B:(chunk + 1) * B], y[chunk * B:(chunk + 1) * B])
    assert sum(issubclass(w.category, BudgetWarning) for w in caught) == 1


@pytest.mark.parametrize("cls, params, name, classify", BOUNDED, ids=IDS)
def test_save_load_after_the_budget_continues_bit_identically(tmp_path, cls, params, name,
                                                              classify):
    X, y = _data(8 * B, classify=classify, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetWarning)
        model = cls(**params).partial_fit(X[:4 * B], y[:4 * B])
        assert model.budget_reached_
        model.save(tmp_path / "m.npz")
        loaded = fastomkl.load(tmp_path / "m.npz")
        with warnings.catch_warnings():
            warnings.simplefilter("error", BudgetWarning)      # a loaded full model: no warning
            a = loaded.predict_learn(X[4 * B:], y[4 * B:])
        b = model.predict_learn(X[4 * B:], y[4 * B:])
    assert np.array_equal(a, b)
    for key, value in model._engine.get_state().items():
        assert np.array_equal(value, loaded._engine.get_state()[key]), key


@pytest.mark.parametrize("cls, params, name, classify", UNBOUNDED,
                         ids=[case[0].__name__ for case in UNBOUNDED])
def test_unbounded_is_one_argument_away(cls, params, name, classify):
    X, y = _data(3 * B, classify=classify)
    model = cls(**{**params, name: None})
    with warnings.catch_warnings():
        warnings.simplefilter("error", BudgetWarning)
        model.partial_fit(X, y)
    assert not model.budget_reached_
    if name == "budget":
        assert model.n_support_ == 3 * B
    elif name == "n_features_max":
        assert model.n_features_ == 3 * B * 5


def test_norma_budget_is_its_truncation_not_optional():
    X, y = _data(5)
    with pytest.raises(ValueError, match="budget"):
        NORMA(budget=None).partial_fit(X, y)


@pytest.mark.parametrize("cls, params, name, classify", BOUNDED, ids=IDS)
@pytest.mark.parametrize("bad", [0, -1, 2.5, "10"])
def test_bad_budget(cls, params, name, classify, bad):
    X, y = _data(5, classify=classify)
    with pytest.raises(ValueError, match=name):
        cls(**{**params, name: bad}).partial_fit(X, y)


# -- the policies against NumPy -----------------------------------------------------------------
def test_regressor_keeps_the_budget_most_recent_rounds():
    """f_t = sum over the B most recent rounds of alpha_tau k(x_tau, .), alpha_t = -eta (f_t(x_t)
    - y_t) (squared loss, constant step): a plain NumPy run of the same equations."""
    X, y = _data(5 * B, seed=2)
    gamma, eta = 2.0, 0.3
    model = OnlineKernelRegressor(Gaussian.from_gamma(gamma), eta=eta, eta_schedule="constant",
                                  budget=B)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetWarning)
        ours = model.predict_learn(X, y)
    rows, alphas, expected = [], [], []
    for x, target in zip(X, y):
        f = sum(a * np.exp(-gamma * np.sum((x - r) ** 2)) for r, a in zip(rows, alphas))
        expected.append(f)
        rows.append(x)
        alphas.append(-eta * (f - target))
        rows, alphas = rows[-B:], alphas[-B:]
    np.testing.assert_allclose(ours, expected, rtol=1e-10, atol=1e-12)
    state = model._engine.experts.get_state()
    oldest = int(state["oldest"][0])
    np.testing.assert_array_equal(np.roll(state["support"], -oldest, axis=0), X[-B:])
    np.testing.assert_allclose(np.roll(state["alpha"][0], -oldest), alphas, rtol=1e-12)


def test_omkr_support_is_the_most_recent_rounds():
    X, y = _data(4 * B + 3, seed=3)
    model = OMKR(KERNELS, budget=B)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetWarning)
        model.partial_fit(X, y)
    state = model._engine.experts.get_state()
    oldest = int(state["oldest"][0])
    experts = len(KERNELS) * model._engine.experts.per_kernel    # a step ensemble's members
    assert state["support"].shape == (B, 3) and state["alpha"].shape == (experts, B)
    np.testing.assert_array_equal(np.roll(state["support"], -oldest, axis=0), X[-B:])


@pytest.mark.parametrize("cls", [OKS, OKSPlusPlus, IOKS])
def test_oks_budget_keeps_exact_norms_and_the_recent_rows(cls):
    """Once full, each kernel's expansion holds its rows among the B most recent rounds, and
    the tracked ||f_k||^2 equals c^T K c computed by NumPy from the stored expansion."""
    X, y = _data(6 * B, seed=4)
    model = cls(KERNELS, budget=B, random_state=0)
    experts = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetWarning)
        for i in range(X.shape[0]):
            model.learn_one(X[i], y[i])
            experts = model._engine.experts
            for k, kernel in enumerate(KERNELS):
                rows, coef = experts.coefficients(k)
                sq = ((rows[:, None, :] - rows[None, :, :]) ** 2).sum(-1)
                gram = np.exp(-sq / (2 * kernel.sigma ** 2))
                assert abs(experts.norm2[k] - coef @ gram @ coef) <= 1e-9 * max(
                    1.0, experts.norm2[k])
    state = experts.get_state()
    oldest = int(state["oldest"][0])
    np.testing.assert_array_equal(np.roll(state["support"], -oldest, axis=0), X[-B:])
    assert int(np.asarray(experts.sizes).sum()) == B
    np.testing.assert_array_equal(np.bincount(state["owner"], minlength=3),
                                  np.asarray(experts.sizes))


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_nystrom_frozen_dictionary_is_the_projected_forecaster(mode):
    """Once frozen, the prediction is a^T M^-1 h (ridge) or that / (1 + a^T M^-1 a) (AWV) with
    M = K_{t,I}^T K_{t,I} + lam K_II and h = K_{t,I}^T Y over every round seen, the dictionary
    I fixed: computed here by NumPy from the rounds, not from the model's factor."""
    X, y = _data(8 * B, seed=5)
    sigma, lam = 0.3, 0.5
    model = NystromAWV(Gaussian(sigma), lam=lam, mode=mode, mu=1e-4, max_centres=10,
                       random_state=0, standardize_target=False)      # the formula's raw units
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetWarning)
        model.partial_fit(X[:4 * B], y[:4 * B])
        assert model.budget_reached_
        C = model.centres_
        ours = model.predict_learn(X[4 * B:], y[4 * B:])

    def k(A, Bm):
        return np.exp(-((A[:, None, :] - Bm[None, :, :]) ** 2).sum(-1) / (2 * sigma ** 2))
    for i, t in enumerate(range(4 * B, 8 * B)):
        A = k(X[:t], C)
        M = A.T @ A + lam * k(C, C)
        a = k(X[t:t + 1], C)[0]
        ridge = a @ np.linalg.solve(M, A.T @ y[:t])
        expected = ridge / (1 + a @ np.linalg.solve(M, a)) if mode == "vaw" else ridge
        assert abs(ours[i] - expected) <= 1e-8 * max(1.0, abs(expected))
    assert model.n_centres_ == C.shape[0]


def test_nystrom_freezes_on_stored_inputs_too():
    """A dictionary that stays small still stops keeping inputs after 10 max_centres rounds."""
    rng = np.random.default_rng(0)
    X = np.repeat(rng.uniform(-1, 1, (3, 2)), 200, axis=0)     # 3 distinct points
    model = NystromAWV(Gaussian(1.0), max_centres=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetWarning)
        model.partial_fit(X, X[:, 0])
    state = model._engine.experts.get_state()
    assert model.budget_reached_ and model.n_centres_ < 20
    assert state["X"].shape[0] == 200


# -- files -------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls, params", [(OMKR, {"kernels": KERNELS}),
                                         (OKS, {"kernels": KERNELS, "random_state": 0})])
def test_older_files_load_unbounded(tmp_path, cls, params):
    X, y = _data(4 * B, seed=6)
    model = cls(**params, budget=None).partial_fit(X[:2 * B], y[:2 * B])
    model.save(tmp_path / "new.npz")
    # as the release before budgets wrote it: no 'budget' parameter, no 'oldest'
    as_older_file(tmp_path / "new.npz", tmp_path / "old.npz", params=["budget"],
                  arrays=["experts.oldest"])
    loaded = fastomkl.load(tmp_path / "old.npz")
    assert loaded.budget is None
    np.testing.assert_array_equal(loaded.predict_learn(X[2 * B:], y[2 * B:]),
                                  model.predict_learn(X[2 * B:], y[2 * B:]))


@pytest.mark.parametrize("cls, params", [(OMKR, {"kernels": KERNELS}),
                                         (OKS, {"kernels": KERNELS, "random_state": 0})])
def test_load_checks_bound_the_budget_fields(cls, params):
    X, y = _data(3 * B, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetWarning)
        full = cls(**params, budget=B).partial_fit(X, y)
        unbounded = cls(**params, budget=None).partial_fit(X, y)
    experts = full._engine.experts
    state = experts.get_state()
    experts.check_state(state)
    too_many = unbounded._engine.experts.get_state()            # 3 B rows into a budget of B
    with pytest.raises(ValueError, match="budget"):
        experts.check_state(too_many)
    for bad in (np.array([B], dtype=np.int64), np.array([-1], dtype=np.int64),
                np.array([0, 0], dtype=np.int64), np.array([0.0])):
        with pytest.raises(ValueError, match="oldest"):
            experts.check_state({**state, "oldest": bad})
    partial = cls(**params, budget=B).partial_fit(X[:5], y[:5])._engine.experts
    with pytest.raises(ValueError, match="oldest"):          # the ring turns only once full
        partial.check_state({**partial.get_state(), "oldest": np.array([2], dtype=np.int64)})


@pytest.mark.parametrize("cls", [fastomkl.LKMBooks, fastomkl.LKMBooksClassifier])
def test_lkmbooks_says_when_a_support_is_full(cls):
    """LKMBooks' supports are allocated for B rows from the start: its state keeps its size,
    and budget_reached_ turns True exactly when a member's count of rows in use reaches B (read
    from the state's own row counts), with n_support_ the largest count."""
    X, y = _data(6 * B, classify=cls is fastomkl.LKMBooksClassifier)
    model = cls(B=B, random_state=0)
    sizes, seen_full = set(), False
    for i in range(X.shape[0]):
        model.learn_one(X[i], y[i])
        rows = model._engine.get_state()["experts.rows"]
        assert model.budget_reached_ == (rows.max() == B)
        assert model.n_support_ == model.support_size_ == rows.max()
        sizes.add(sum(a.nbytes for a in model._engine.experts._state_arrays().values()))
        seen_full |= model.budget_reached_
    assert seen_full and len(sizes) == 1
