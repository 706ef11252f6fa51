"""scikit-learn's habits: ``fit`` treats its rows as a sample (shuffled, seeded, several epochs),
``partial_fit`` as a stream (in order); tables' column names are recorded and checked."""
import numpy as np
import pandas as pd
import pytest

import fastomkl
from fastomkl import Gaussian, Laplacian, Raker, RakerClassifier

KERNELS = [Gaussian(0.5), Laplacian(1.0)]


def data(n=60, seed=0):
    X = np.random.default_rng(seed).uniform(-1, 1, (n, 3))
    return X, np.sin(3 * X[:, 0]) + X[:, 1]


def test_fit_is_partial_fit_over_a_seeded_permutation_per_epoch():
    X, y = data()
    fitted = Raker(KERNELS, n_components=6, random_state=4).fit(X, y, n_epochs=2)
    # the same order, drawn independently: a permutation per epoch from the model's seed
    rng = np.random.default_rng(np.random.SeedSequence(4, spawn_key=(7,)))
    stream = Raker(KERNELS, n_components=6, random_state=4)
    for order in (rng.permutation(len(y)), rng.permutation(len(y))):
        stream.partial_fit(X[order], y[order])
    np.testing.assert_array_equal(fitted.predict(X), stream.predict(X))
    assert fitted.n_samples_seen_ == 2 * len(y)


def test_fit_without_shuffle_keeps_the_order_and_a_refit_starts_afresh():
    X, y = data()
    model = Raker(KERNELS, n_components=6, random_state=1)
    first = model.fit(X, y, shuffle=False).predict(X)
    in_order = Raker(KERNELS, n_components=6, random_state=1).partial_fit(X, y).predict(X)
    np.testing.assert_array_equal(first, in_order)
    np.testing.assert_array_equal(model.fit(X, y, shuffle=False).predict(X), first)


def test_shuffling_rescues_a_file_sorted_by_class():
    """Wine in its file order (sorted by class) under 5-fold cross-validation: fitted in file
    order each fold's model ends on one class; shuffled, as scikit-learn's SGD models are."""
    from sklearn.datasets import load_wine
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler

    class InFileOrder(RakerClassifier):
        def fit(self, X, y):
            return super().fit(X, y, shuffle=False)

    X, y = load_wine(return_X_y=True)
    scores = {cls: cross_val_score(make_pipeline(MinMaxScaler(),
                                                 OneVsRestClassifier(cls(random_state=0))),
                                   X, y, cv=KFold(5)).mean()
              for cls in (RakerClassifier, InFileOrder)}
    assert scores[RakerClassifier] > 0.85 > 0.5 > scores[InFileOrder]


@pytest.mark.parametrize("bad", [{"shuffle": "yes"}, {"n_epochs": 0}, {"n_epochs": 1.5}])
def test_bad_fit_options_are_refused_and_change_nothing(bad):
    X, y = data()
    model = Raker(KERNELS, n_components=6, random_state=0).fit(X, y)
    before = model.predict(X)
    with pytest.raises(ValueError, match=next(iter(bad))):
        model.fit(X, y, **bad)
    np.testing.assert_array_equal(model.predict(X), before)


def test_table_columns_are_recorded_and_checked_in_order():
    X, y = data()
    table = pd.DataFrame(X, columns=["a", "b", "c"])
    model = Raker(KERNELS, n_components=6, random_state=0).fit(table, y)
    assert model.feature_names_in_.tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(model.predict(table), model.predict(X))
    before = model.predict(X)
    with pytest.raises(ValueError, match=r"\['a', 'b', 'c'\]: they come in another order$"):
        model.predict(table[["b", "a", "c"]])
    with pytest.raises(ValueError, match=r": missing \['c'\], unknown \['d'\]$"):
        model.partial_fit(table.rename(columns={"c": "d"}), y)
    with pytest.raises(ValueError, match=r": missing \['c'\]$"):         # only what is wrong
        model.predict(table[["a", "b"]])
    np.testing.assert_array_equal(model.predict(X), before)
    assert model.predict_one({"c": 0.1, "a": 0.3, "b": -0.2}) == model.predict([[0.3, -0.2, 0.1]])[0]


def test_names_survive_save_and_load(tmp_path):
    X, y = data()
    model = Raker(KERNELS, n_components=6, random_state=0).fit(pd.DataFrame(X, columns=list("xyz")), y)
    model.save(tmp_path / "m.npz")
    loaded = fastomkl.load(tmp_path / "m.npz")
    assert loaded.feature_names_in_.tolist() == ["x", "y", "z"]
    with pytest.raises(ValueError, match="another order"):
        loaded.predict(pd.DataFrame(X, columns=list("zyx")))
