"""Pros-N-KONS, the second-order baseline of paper 002 (spec §3.8)."""
import numpy as np
import pytest

from fastomkl import load
from fastomkl._validation import split_random_state
from fastomkl.pkawv import ProsNKons
from fastomkl.kernels import Gaussian
from tests import pkawv_reference as ref


@pytest.mark.parametrize("weights", ["sqrt", "inverse"])
def test_equals_the_dense_reference_with_the_svd_embedding(weights):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (150, 2))
    y = np.clip(np.sin(3 * X[:, 0]) + 0.3 * rng.normal(size=150), -1, 1)
    model = ProsNKons(kernel=Gaussian(0.7), C=0.8, kors_weights=weights, random_state=4,
                      standardize_target=False)             # the reference's raw units
    got = model.predict_learn(X, y)
    uniforms = np.random.Generator(split_random_state(4)[1]).random(150)
    want, index = ref.pros_n_kons(X, y, 0.7, 1.0, 1.0, 0.5, 0.8, weights, uniforms)
    assert model.n_centres_ == len(index) > 3
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)
    assert np.all(np.abs(got) <= 0.8)


def test_persistence_and_crafted_state(tmp_path):
    rng = np.random.default_rng(1)
    X, y = rng.uniform(-1, 1, (200, 3)), rng.uniform(-1, 1, 200)
    model = ProsNKons(random_state=0).fit(X[:120], y[:120])
    model.save(tmp_path / "p.npz")
    copy = load(tmp_path / "p.npz")
    np.testing.assert_array_equal(copy.predict_learn(X[120:], y[120:]),
                                  model.predict_learn(X[120:], y[120:]))
    state = model._engine.get_state()
    for name, change in (("A", lambda A: A + np.triu(np.ones_like(A), 1)),
                         ("R", lambda R: -R), ("S", lambda S: S * 0.0),
                         ("info", lambda i: i[::-1].copy())):
        bad = dict(state)
        bad["experts." + name] = change(np.array(state["experts." + name]))
        with pytest.raises(ValueError):
            model._engine.set_state(bad)
    np.testing.assert_array_equal(model.predict(X), copy.predict(X))
    with pytest.raises(ValueError):
        ProsNKons(C=0.0).fit(X, y)


def test_classifier_twins_learn_the_square_loss_on_signs():
    from fastomkl.pkawv import BeforehandNystromAWVClassifier, ProsNKonsClassifier, kors_centres
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (600, 2))
    labels = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, "pos", "neg")
    codes = np.where(labels == "pos", 1.0, -1.0)
    clf = ProsNKonsClassifier(random_state=0)
    online = clf.predict_learn(X, labels)
    scores = ProsNKons(random_state=0, standardize_target=False).predict_learn(X, codes)
    np.testing.assert_array_equal(online, np.where(scores > 0, "pos", "neg"))
    assert (online[300:] == labels[300:]).mean() > 0.75      # restarts keep it behind PKAWV
    C = kors_centres(X, random_state=0)
    clf = BeforehandNystromAWVClassifier(C).fit(X, labels)
    assert clf.score(X, labels) > 0.9
