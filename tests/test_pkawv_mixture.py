"""Mixture: per-kernel PKAWV representations (Nystrom, Taylor) under a second-level learner."""
import numpy as np
import pytest

from fastomkl import load_dataset
from fastomkl.pkawv import (Mixture, NystromAWV, NystromAWVClassifier, TaylorAWV)
from fastomkl.kernels import Gaussian

SIGMAS = (0.25, 0.5, 1.0, 2.0)


def airfoil():
    X, y = load_dataset("airfoil")
    lo, hi = X.min(0), X.max(0)
    X = 2 * (X - lo) / (hi - lo) - 1
    return X, 2 * (y - y.min()) / (y.max() - y.min()) - 1


def nystrom_members():
    return [NystromAWV(kernel=Gaussian(s), mode="ridge", kors_weights="inverse", random_state=0)
            for s in SIGMAS]


def test_second_level_vaw_beats_its_best_member_on_airfoil():
    X, y = airfoil()
    mixed = Mixture(nystrom_members(), meta="vaw").predict_learn(X, y)
    alone = [np.mean((m.predict_learn(X, y) - y) ** 2) for m in nystrom_members()]
    assert np.mean((mixed - y) ** 2) < 0.95 * min(alone)


def test_taylor_and_nystrom_members_combine():
    X, y = airfoil()
    members = [TaylorAWV(kernel=Gaussian(1.0), degree=3, mode="ridge")] + nystrom_members()[:2]
    pred = Mixture(members, meta="ewa").predict_learn(X[:300], y[:300])
    assert pred.shape == (300,) and np.all(np.isfinite(pred))


def member_predictions(X, y):
    return np.column_stack([m.predict_learn(X, y) for m in nystrom_members()])


@pytest.mark.parametrize("mode", ["vaw", "ridge"])
def test_vaw_level_equals_a_direct_solve_every_round(mode):
    X, y = airfoil()
    X, y = X[:150], y[:150]
    P = member_predictions(X, y)
    lam = 0.5
    got = Mixture(nystrom_members(), meta="vaw", lam=lam, mode=mode).predict_learn(X, y)
    for t in range(len(y)):
        rows = P[:t + 1] if mode == "vaw" else P[:t]
        A = lam * np.eye(P.shape[1]) + rows.T @ rows
        alpha = np.linalg.solve(A, P[:t].T @ y[:t])
        assert got[t] == pytest.approx(alpha @ P[t], abs=1e-10)


def test_ewa_level_equals_the_weighted_average_formula():
    X, y = airfoil()
    X, y = X[:200], y[:200]
    P = np.clip(member_predictions(X, y), -1, 1)
    mix = Mixture(nystrom_members(), meta="ewa", label_range=(-1, 1))
    got = mix.predict_learn(X, y)
    eta = 1 / 8
    for t in range(len(y)):
        w = np.exp(-eta * ((P[:t] - y[:t, None]) ** 2).sum(0))
        assert got[t] == pytest.approx(w @ P[t] / w.sum(), abs=1e-12)
    w = np.exp(-eta * ((P - y[:, None]) ** 2).sum(0))
    np.testing.assert_allclose(mix.weights_, w / w.sum(), atol=1e-12)


@pytest.mark.parametrize("meta", ["vaw", "ewa"])
def test_two_batches_equal_one(meta):
    X, y = airfoil()
    X, y = X[:120], y[:120]
    whole = Mixture(nystrom_members(), meta=meta).predict_learn(X, y)
    split = Mixture(nystrom_members(), meta=meta)
    parts = np.concatenate([split.predict_learn(X[:70], y[:70]),
                            split.predict_learn(X[70:], y[70:])])
    np.testing.assert_allclose(parts, whole, atol=1e-12)


@pytest.mark.parametrize("kwargs, name", [
    (dict(members=[]), "members"),
    (dict(members=[NystromAWVClassifier()]), "members"),
    (dict(members=[NystromAWV()], meta="boa"), "meta"),
    (dict(members=[NystromAWV()], lam=0.0), "lam"),
    (dict(members=[NystromAWV()], label_range=(1, 0)), "label_range"),
])
def test_bad_parameters_name_what_was_wrong(kwargs, name):
    X, y = airfoil()
    with pytest.raises(ValueError, match=name):
        Mixture(**kwargs).predict_learn(X[:5], y[:5])


@pytest.mark.parametrize("bad", ["nan_target", "short_target", "other_width"])
def test_bad_input_leaves_every_member_and_the_second_level_as_they_were(bad):
    X, y = airfoil()
    given = nystrom_members()
    mix = Mixture(given, meta="vaw")
    mix.predict_learn(X[:50], y[:50])
    members = mix.members_
    assert all(not hasattr(m, "n_features_in_") for m in given)      # the models given: untouched
    before = [m.predict(X[50:60]) for m in members], mix.weights_
    Xb, yb = X[50:80].copy(), y[50:80].copy()
    if bad == "nan_target":
        yb[-1] = np.nan
    elif bad == "short_target":
        yb = yb[:-1]
    else:
        Xb = Xb[:, :3]
    with pytest.raises(ValueError):
        mix.predict_learn(Xb, yb)
    assert all(m.n_samples_seen_ == 50 for m in members)
    for m, pred in zip(members, before[0]):
        np.testing.assert_array_equal(m.predict(X[50:60]), pred)
    np.testing.assert_array_equal(mix.weights_, before[1])


def test_inputs_are_checked_against_the_fitted_members_before_a_fresh_one_learns():
    X, y = airfoil()
    fitted = NystromAWV(kernel=Gaussian(1.0), mode="ridge").fit(X[:30], y[:30])
    fresh = NystromAWV(kernel=Gaussian(0.5), mode="ridge")
    with pytest.raises(ValueError, match="expecting 5 features"):
        Mixture([fresh, fitted]).predict_learn(X[:20, :3], y[:20])
    assert not hasattr(fresh, "n_features_in_")
    with pytest.raises(ValueError, match="expecting 3 features"):
        Mixture([fitted, NystromAWV().fit(X[:10, :3], y[:10])]).predict_learn(X[:5], y[:5])
