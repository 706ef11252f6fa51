"""PKAWV on a Nystrom subspace fixed in advance (spec 002 §3.6)."""
import numpy as np
import pytest

from fastomkl import load
from fastomkl.pkawv import BeforehandNystromAWV, NystromAWV, kors_centres
from fastomkl.kernels import Gaussian
from tests import pkawv_reference as ref


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_equals_the_projected_kernel_solution(mode):
    # On span{k(c_j, .)}: f = sum_j alpha_j k(c_j, .), ||f||^2 = alpha^T K_CC alpha, so the AWV
    # prediction is a^T (K_pC^T K_pC + lam K_CC [+ a a^T])^{-1} K_pC^T Y (spec §2.2, all rows past).
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (100, 2))
    y = np.cos(3 * X[:, 1]) + 0.1 * rng.normal(size=100)
    C = X[rng.choice(100, 15, replace=False)]
    got = BeforehandNystromAWV(C, kernel=Gaussian(0.6), lam=0.5, mode=mode, jitter=0.0).predict_learn(X, y)
    KCC = ref.gaussian(C, C, 0.6)
    want = np.zeros(100)
    for t in range(100):
        Kp, a = ref.gaussian(X[:t], C, 0.6), ref.gaussian(X[t:t + 1], C, 0.6)[0]
        M = Kp.T @ Kp + 0.5 * KCC + (np.outer(a, a) if mode == "vaw" else 0)
        want[t] = a @ np.linalg.solve(M, Kp.T @ y[:t])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


def test_kors_pass_persistence_and_crafted_state(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (400, 3))
    y = np.sin(2 * X[:, 0])
    C = kors_centres(X, Gaussian(0.7), random_state=2)
    np.testing.assert_array_equal(
        C, NystromAWV(kernel=Gaussian(0.7), random_state=2).fit(X, 0 * y).centres_)
    model = BeforehandNystromAWV(C, kernel=Gaussian(0.7)).fit(X[:300], y[:300])
    assert np.mean((model.predict(X[300:]) - y[300:]) ** 2) < 0.1 * np.var(y)
    model.save(tmp_path / "b.npz")
    copy = load(tmp_path / "b.npz")
    np.testing.assert_array_equal(copy.predict_learn(X[300:], y[300:]),
                                  model.predict_learn(X[300:], y[300:]))
    state = model._engine.get_state()
    bad = dict(state)
    bad["features.factor"] = state["features.factor"].T.copy()
    with pytest.raises(ValueError):
        model._engine.set_state(bad)
    with pytest.raises(ValueError):
        BeforehandNystromAWV(np.vstack([C[:1], C[:1]]), jitter=0.0).fit(X, y)
    with pytest.raises(ValueError):
        BeforehandNystromAWV(C[:, :2]).fit(X, y)
