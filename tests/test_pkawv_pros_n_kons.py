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
                      standardize_target=False, max_centres=None)   # the reference's raw units
    got = model.predict_learn(X, y)
    uniforms = np.random.Generator(split_random_state(4)[1]).random(150)
    want, index = ref.pros_n_kons(X, y, 0.7, 1.0, 1.0, 0.5, 0.8, weights, uniforms)
    assert model.n_centres_ == len(index) > 3
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)
    assert np.all(np.abs(got) <= 0.8)


@pytest.mark.parametrize("weights", ["sqrt", "inverse"])
def test_a_full_dictionary_stops_growing_and_the_steps_go_on(weights):
    """max_centres: the dictionary freezes at its budget (a BudgetWarning says so once, and
    budget_reached_), no restart follows, and every prediction is the dense reference's with the
    same cap: the Newton steps go on in the frozen embedding."""
    from fastomkl import BudgetWarning
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (300, 2))
    y = np.clip(np.sin(3 * X[:, 0]) + 0.3 * rng.normal(size=300), -1, 1)
    model = ProsNKons(kernel=Gaussian(0.4), C=0.8, kors_weights=weights, random_state=4,
                      standardize_target=False, max_centres=6)
    got = model.predict_learn(X[:100], y[:100])
    with pytest.warns(BudgetWarning, match="frozen at max_centres=6"):
        got = np.concatenate([got, model.predict_learn(X[100:], y[100:])])
    uniforms = np.random.Generator(split_random_state(4)[1]).random(300)
    want, index = ref.pros_n_kons(X, y, 0.4, 1.0, 1.0, 0.5, 0.8, weights, uniforms, max_centres=6)
    free, _ = ref.pros_n_kons(X, y, 0.4, 1.0, 1.0, 0.5, 0.8, weights, uniforms)
    assert model.n_centres_ == len(index) == 6 and model.budget_reached_
    assert index[-1] < 100                   # frozen within the first call, so the second warns
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)
    assert not np.allclose(want, free)      # the cap changed the model (the test can fail)


def test_files_written_before_the_budget_load_unbounded_and_continue(tmp_path):
    """Files written before max_centres existed grew their dictionary for ever: they load so (not
    with the default budget) and continue bit-identically."""
    from helpers import as_older_file
    rng = np.random.default_rng(3)
    X, y = rng.uniform(-1, 1, (400, 2)), rng.uniform(-1, 1, 400)
    older = ProsNKons(kernel=Gaussian(0.3), random_state=0, max_centres=None)
    older.partial_fit(X[:300], y[:300])
    assert older.n_centres_ > 20
    older.save(tmp_path / "new.npz")
    as_older_file(tmp_path / "new.npz", tmp_path / "old.npz", params=["max_centres"])
    loaded = load(tmp_path / "old.npz")
    assert loaded.max_centres is None and not loaded.budget_reached_
    np.testing.assert_array_equal(loaded.predict_learn(X[300:], y[300:]),
                                  older.predict_learn(X[300:], y[300:]))
    assert loaded.n_centres_ == older.n_centres_


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
