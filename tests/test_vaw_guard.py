"""No non-finite state in the VAW family: refused updates (counted), saturated predictions, and
check_state's validation of every saved value."""
import numpy as np
import pytest

from fastomkl import VAW, VAW2, VAWEWA, Gaussian, Laplacian, VAWMeta
from fastomkl._core.combiners.meta import AA, BOA, EWA, MLPoly, MLProd, VAWCombiner
from fastomkl._core.experts.vaw import VAWExperts
from helpers import state_bytes

KERNELS = [Gaussian(0.5), Laplacian(1.0), Gaussian(2.0)]
BIG = 1e150                     # the largest |x| and |y| the estimators accept
MAX = np.finfo(float).max


def rejected(model):
    engine = model._engine
    return engine.experts.n_rejected + engine.combiner.n_rejected


def state_is_finite(model):
    return all(np.isfinite(np.asarray(v, dtype=float)).all()
               for v in model._engine.get_state().values())


def clean_stream(T, seed=0, d=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (T, d)) / np.sqrt(d)
    return X, np.sin(3 * X[:, 0]) + X[:, 1]


MODELS = {
    "vaw": lambda: VAW(Gaussian(0.5), n_components=6),
    "vaw2": lambda: VAW2(KERNELS, n_components=6),
    "vaw2-fixed": lambda: VAW2(KERNELS, n_components=6, lam_meta=1.0, mode="ridge"),
    "vaw2-trunc": lambda: VAW2(KERNELS, n_components=6, lam_meta=1e-4, truncate=(0, 1)),
    "ewa": lambda: VAWEWA(KERNELS, n_components=6),
    "ewa-paper": lambda: VAWEWA(KERNELS, n_components=6, label_range=(0, 1)),
    "ewa-1e4": lambda: VAWEWA(KERNELS, n_components=6, eta_combiner=1e4),
    "ewa-1e-4": lambda: VAWEWA(KERNELS, n_components=6, eta_combiner=1e-4),
    "aa": lambda: VAWMeta(KERNELS, "aa", n_components=6),
    "aa-1e4": lambda: VAWMeta(KERNELS, "aa", n_components=6, eta_combiner=1e4),
    "aa-1e-4": lambda: VAWMeta(KERNELS, "aa", n_components=6, eta_combiner=1e-4, label_range=(-1, 1)),
    "boa": lambda: VAWMeta(KERNELS, "boa", n_components=6),
    "mlpoly": lambda: VAWMeta(KERNELS, "mlpoly", n_components=6),
    "mlprod": lambda: VAWMeta(KERNELS, "mlprod", n_components=6),
    "meta-vaw": lambda: VAWMeta(KERNELS, "vaw", n_components=6),
    "meta-vaw-lam": lambda: VAWMeta(KERNELS, "vaw", n_components=6, lam=1e4, label_range=(-1, 1)),
}


def extreme_streams():
    rng = np.random.default_rng(1)
    T = 120
    signs = rng.choice([-1.0, 1.0], size=(T, 3))
    X_clean, y_clean = clean_stream(T)
    return {
        "y": (X_clean, BIG * signs[:, 0]),
        "x": (BIG * signs, y_clean),
        "both": (BIG * signs, BIG * signs[:, 1]),
        "y-growing": (X_clean, np.geomspace(1e-300, BIG, T) * signs[:, 2]),
    }


@pytest.mark.parametrize("name", sorted(MODELS))
def test_extreme_streams_leave_finite_predictions_and_state(name):
    for label, (X, y) in extreme_streams().items():
        model = MODELS[name]()
        model.random_state = 0
        pred = model.predict_learn(X, y)
        assert np.isfinite(pred).all(), (label, pred)
        assert state_is_finite(model), label
        assert np.isfinite(model.predict(X)).all(), label
        # afterwards the experts still take every clean update.  After labels of 1e150 their
        # predictions stay on that scale (nothing is forgotten), whose squared regrets overflow
        # the second-order meta-learners: those refuse, and stay finite.
        before = state_bytes(model)
        experts, combiner = model._engine.experts.n_rejected, model._engine.combiner.n_rejected
        Xc, yc = clean_stream(50, seed=2)
        assert np.isfinite(model.predict_learn(Xc, yc)).all()
        assert state_bytes(model) != before and state_is_finite(model)
        assert model._engine.experts.n_rejected == experts
        if label == "x":
            assert model._engine.combiner.n_rejected == combiner


@pytest.mark.parametrize("name", ["vaw", "vaw2", "ewa", "aa", "boa", "mlprod"])
def test_learns_after_a_burst_of_huge_inputs(name):
    """Inputs of size 1e150 give bounded features; the model then still fits clean data."""
    Xc, yc = clean_stream(1500, seed=3)
    model = MODELS[name]()
    model.random_state = 0
    signs = np.random.default_rng(4).choice([-1.0, 1.0], size=(30, 3))
    model.partial_fit(BIG * signs, np.zeros(30))
    pred = model.predict_learn(Xc, yc)
    late = slice(1000, None)
    assert np.mean((pred[late] - yc[late]) ** 2) < 0.3 * np.var(yc[late])
    assert rejected(model) == 0


@pytest.mark.parametrize("name", sorted(MODELS))
def test_clean_data_never_refuses(name):
    X, y = clean_stream(300)
    model = MODELS[name]()
    model.random_state = 0
    model.predict_learn(X, 1e-3 * y)
    model.predict_learn(X, 1e3 * y)
    assert rejected(model) == 0


# -- the compiled guards, one refusal at a time -------------------------------------------------------
def test_expert_refuses_an_overflowing_b_and_counts_it():
    bank = VAWExperts(1, 2)
    z = np.array([0.6, 0.8])
    bank.learn_expert(0, z, 1.5e308)
    before = bank.get_state()
    loss = bank.learn_expert(0, z, 1.5e308)               # b_1 would reach 1.2e308 + 1.2e308
    assert bank.n_rejected == 1 and np.isfinite(loss)
    after = bank.get_state()
    assert all(np.array_equal(before[k], after[k]) for k in before if k != "n_rejected")
    assert after["n_rejected"] == 1
    bank.learn_expert(0, z, 1.0)                          # a normal update goes through
    assert bank.n_rejected == 1 and bank.get_state()["n_updates"][0] == 2


def test_expert_refuses_a_non_finite_or_non_positive_denominator():
    bank = VAWExperts(1, 2)
    bank.learn_expert(0, np.array([1.0, 0.0]), 1.0)
    loss = bank.learn_expert(0, np.array([1.0, 0.0]), 1.0, weight=np.inf)    # 1 + inf q
    assert bank.n_rejected == 1 and np.isfinite(loss)
    assert bank.get_state()["n_updates"][0] == 1
    # an indefinite P (finite, positive diagonal) with z.Pz = -2: check_state refuses it, and
    # the update refuses it too when it gets past the check (a bank that skips its check)
    state = bank.get_state()
    state["P"][0] = [1.0, 2.0, 1.0]
    state["n_pending"][0] = 0
    with pytest.raises(ValueError, match="positive definite"):
        bank.set_state(state)

    class Unchecked(VAWExperts):
        def _check_semantics(self, state):
            pass

    bank = Unchecked(1, 2)
    bank.learn_expert(0, np.array([1.0, 0.0]), 1.0)
    bank.set_state(state)
    bank.learn_expert(0, np.array([1.0, -1.0]), 1.0)                        # 1 + q = -1
    assert bank.n_rejected == 2                  # the state's count, and this refusal
    after = bank.get_state()
    np.testing.assert_array_equal(after["P"], state["P"])
    np.testing.assert_array_equal(after["b"], state["b"])


def test_expert_prediction_saturates():
    bank = VAWExperts(1, 2, lam=1e-300)
    state = bank.get_state()
    state["b"][0] = [1e300, 1e300]
    bank.set_state(state)
    assert bank.predict_expert(0, np.array([0.6, 0.8])) == np.finfo(float).max


def _learn(comb, preds, y):
    from fastomkl._core.engine import Engine
    from fastomkl._core.features.rff import RFFBank
    n = len(preds)
    # one expert per prediction: a single constant feature, weights set so that it predicts preds
    bank = RFFBank(np.zeros((n, 1, 1)))
    experts = VAWExperts(n, 2, mode="ridge")
    s = experts.get_state()
    s["b"][:] = np.asarray(preds)[:, None]                # z = (sin 0, cos 0) = (0, 1): f = b_1
    experts.set_state(s)
    engine = Engine(bank, experts, comb, np.random.PCG64(0))
    out = np.empty(1)
    engine.predict_learn_many(np.zeros((1, 1)), np.array([float(y)]), out)
    return out[0]


@pytest.mark.parametrize("make,entry,value", [
    (lambda: EWA(2, 1.0), "L", [0.0, MAX]),          # expert 1 loses (2e150)^2 more
    (lambda: EWA(2, None, "observed"), "L", [0.0, MAX]),
    (lambda: AA(2, None, "observed"), "L", [0.0, MAX]),
    (lambda: BOA(2), "V", [1.7e308, 1.0]),
    (lambda: MLPoly(2), "R", [1.7e308, 0.0]),          # r_0 = (y_hat - y)^2 ~ 1e300
    (lambda: MLProd(2), "V", [1.7e308, 1.0]),
])
def test_meta_learner_refuses_an_overflowing_update_whole(make, entry, value):
    comb = make()
    state = comb.get_state()
    state[entry] = np.array(value)
    comb.set_state(state)
    before = comb.get_state()
    y_hat = _learn(comb, [1e150, -1e150], 1e150)
    assert np.isfinite(y_hat)
    after = comb.get_state()
    assert after["n_rejected"] == 1
    for key in before:
        if key not in ("n_rejected", "observed", "n_observed"):
            np.testing.assert_array_equal(after[key], before[key], err_msg=key)


def test_vaw_combiner_refuses_an_infinite_denominator():
    comb = VAWCombiner(2, 1e-300, "ridge")
    _learn(comb, [1e150, 1e150], 1.0)                     # z.Pz = 2e300 / 1e-300: inf
    assert comb.n_rejected == 1
    np.testing.assert_array_equal(comb.get_state()["b"], [0.0, 0.0])


# -- check_state ----------------------------------------------------------------------------------------
def _engine_state(model):
    X, y = clean_stream(40)
    model.random_state = 0
    model.partial_fit(X, y)
    return model._engine.get_state()


@pytest.mark.parametrize("name,entry,value", [
    ("vaw2", "experts.n_pending", 10 ** 6),
    ("vaw2", "experts.n_pending", -7),
    ("vaw2", "experts.n_pending", 4),
    ("vaw2", "experts.n_updates", -1),
    ("vaw2", "experts.P", np.nan),
    ("vaw2", "experts.b", np.inf),
    ("vaw2", "experts.pend_a", 0.5),
    ("vaw2", "experts.pend_u", np.nan),
    ("vaw2", "experts.n_rejected", -1),
    ("vaw2", "combiner.P", np.nan),
    ("vaw2", "combiner.G", -np.inf),
    ("vaw2", "combiner.y_scale", -1.0),
    ("vaw2", "combiner.n_rejected", -3),
    ("ewa", "combiner.L", -1.0),
    ("ewa", "combiner.gap", np.nan),
    ("ewa", "combiner.n_observed", -2),
    ("aa", "combiner.observed", np.inf),
    ("boa", "combiner.lr", 0.0),
    ("boa", "combiner.M", -1.0),
    ("mlpoly", "combiner.Smax", -1.0),
    ("mlprod", "combiner.R", np.nan),
])
def test_check_state_rejects_bad_values_and_changes_nothing(name, entry, value):
    model = MODELS[name]()
    state = _engine_state(model)
    before = state_bytes(model)
    bad = {k: np.array(v, copy=True) for k, v in state.items()}
    flat = bad[entry].reshape(-1)
    flat[0] = value
    if entry == "combiner.observed" or entry.endswith(".P"):
        flat[-1] = value
    with pytest.raises(ValueError, match=entry.split(".")[1]):
        model._engine.set_state(bad)
    assert state_bytes(model) == before
    model._engine.set_state(state)                       # the good state loads
    assert state_bytes(model) == before


def test_check_state_rejects_an_inverted_observed_range():
    model = MODELS["ewa"]()
    state = _engine_state(model)
    state["combiner.observed"] = np.array([1.0, -1.0])
    with pytest.raises(ValueError, match="observed"):
        model._engine.set_state(state)


def test_check_state_requires_the_counter():
    model = MODELS["vaw"]()
    state = _engine_state(model)
    del state["experts.n_rejected"]
    with pytest.raises(ValueError, match="n_rejected"):
        model._engine.set_state(state)
    state["experts.n_rejected"] = np.array([0], dtype=np.int32)
    with pytest.raises(ValueError, match="n_rejected"):
        model._engine.set_state(state)


@pytest.mark.parametrize("value", [10 ** 6, -7])
def test_a_crafted_file_with_a_bad_pending_count_is_refused(value, tmp_path):
    import json
    import fastomkl
    from fastomkl.persistence import _digest
    model = MODELS["vaw2"]()
    _engine_state(model)
    path = tmp_path / "model.npz"
    model.save(path)
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    header = json.loads(str(arrays.pop("__header__")))
    arrays["experts.n_pending"] = np.full_like(arrays["experts.n_pending"], value)
    header["digest"] = _digest({k: v for k, v in header.items() if k != "digest"}, arrays,
                               None)                    # a consistent, crafted file
    np.savez(path, __header__=np.array(json.dumps(header)), **arrays)
    with pytest.raises(ValueError, match="n_pending"):
        fastomkl.load(path)
