"""DSG models and their files: the files of the NumPy-engine DSG load and predict what that code
predicted (tests/data, written by it), and threads share a model as they share any other (each
round under the engine's lock: every concurrent save loads, and the counts come out exact)."""
import io
import json
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import fastomkl
from fastomkl import Gaussian, Laplacian
from fastomkl.dsg import DoublySGDGP, DoublySGDRegressor, DoublySGDSoftmaxClassifier, NORMA
from helpers import state_bytes
from load_mutations import read, write

DATA = Path(__file__).parent / "data"
EXPECTED = json.loads((DATA / "dsg_saved_predictions.json").read_text())
PROBE = np.load(DATA / "dsg_probe.npy")


def load_old(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)      # a file is no caller to warn
        model = fastomkl.load(DATA / f"{name}.npz")
    # the file's parameters are the old names: they come back under the current ones
    assert set(model.get_params()) == set(type(model)._param_names())
    return model


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_files_of_the_numpy_engine_predict_what_it_predicted(name):
    """To 1e-12 of the values that code computed (not to the bit: the sums now run in the
    engine's order, not BLAS's over parts of eight blocks)."""
    model = load_old(name)
    expected = EXPECTED[name]
    values = np.asarray(getattr(model, expected["method"])(PROBE), dtype=float)
    np.testing.assert_allclose(values, expected["values"], rtol=1e-12,
                               atol=1e-12 * np.abs(expected["values"]).max())
    if "std" in expected:
        points = PROBE if model.variance == "operator" else model.test_points
        _, std = model.predict(np.asarray(points), return_std=True)
        np.testing.assert_allclose(std, expected["std"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_files_of_the_numpy_engine_keep_learning_and_save_in_the_new_format(name):
    model = load_old(name)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 3))
    if isinstance(model, DoublySGDSoftmaxClassifier):
        y = rng.integers(0, 3, 40)
    elif hasattr(model, "classes_"):
        y = model.classes_[rng.integers(0, 2, 40)]
    else:
        y = np.sin(X[:, 0])
    if isinstance(model, fastomkl.DoublySGDOneClass):
        model.partial_fit(X)
    else:
        model.partial_fit(X, y)
    buffer = io.BytesIO()
    model.save(buffer)
    buffer.seek(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)       # saved with the new names
        again = fastomkl.load(buffer)
    assert state_bytes(again) == state_bytes(model)


def test_an_altered_file_of_the_numpy_engine_is_refused_naming_the_entry():
    from load_mutations import read, write
    header, arrays = read((DATA / "dsg_regressor.npz").read_bytes())
    arrays["dsg.counts"] = arrays["dsg.counts"][:5]
    with pytest.raises(ValueError, match="dsg.counts"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            fastomkl.load(io.BytesIO(write(header, arrays)))


THREAD_MODELS = {
    "regressor": lambda: DoublySGDRegressor(batch_size=8, block_size=16, random_state=0),
    # every class from the first call: a class met later makes a new engine (with_outputs)
    "softmax": lambda: DoublySGDSoftmaxClassifier(kernel=Laplacian(1.0), batch_size=4,
                                                  block_size=8, precondition=True,
                                                  random_state=0),
    "gp-operator": lambda: DoublySGDGP(0.2, variance="operator", kernel=Gaussian(0.7),
                                       batch_size=8, block_size=2, n_samples=400,
                                       random_state=0),
    "norma": lambda: NORMA(Gaussian(0.7), budget=64, batch_size=4),
}


@pytest.mark.parametrize("case", sorted(THREAD_MODELS))
def test_four_threads_share_a_model(case):
    """predict_one, learn_one, partial_fit and save from four threads at once: no error, every
    save loads and predicts, and the counts come out exact (every round and every iteration
    whole)."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (400, 3))
    y = np.digitize(X[:, 0], [-0.3, 0.3]) if case == "softmax" else np.sin(2 * X[:, 0])
    model = THREAD_MODELS[case]()
    if case == "softmax":
        model.partial_fit(X[:8], y[:8], classes=[0, 1, 2])
    else:
        model.partial_fit(X[:8], y[:8])
    errors, saved = [], []

    def guard(work):
        def run():
            try:
                work()
            except Exception as exc:        # noqa: BLE001  (reported below)
                errors.append(exc)
        return run

    def learner_one():
        for i in range(8, 200):
            model.learn_one(X[i], y[i])

    def learner_batch():
        for i in range(200, 400, 20):
            model.partial_fit(X[i:i + 20], y[i:i + 20])

    def reader():
        for i in range(300):
            assert np.isfinite(np.asarray(model.predict_one(X[i]), dtype=float)).all()

    def saver():
        for _ in range(15):
            buffer = io.BytesIO()
            model.save(buffer)
            saved.append(buffer.getvalue())

    threads = [threading.Thread(target=guard(work))
               for work in (learner_one, learner_batch, reader, saver)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert model.n_samples_seen_ == 400 and model.n_rejected_updates_ == 0
    assert model._engine.experts.iterations == 400 // model.batch_size
    assert len(saved) == 15
    for data in saved:
        loaded = fastomkl.load(io.BytesIO(data))
        assert 8 <= loaded.n_samples_seen_ <= 400
        assert np.isfinite(np.asarray(loaded.predict(X[:5]), dtype=float)).all()
    buffer = io.BytesIO()
    model.save(buffer)
    buffer.seek(0)
    assert state_bytes(fastomkl.load(buffer)) == state_bytes(model)


@pytest.mark.parametrize("sigma", [1e-320, 1e-101])
def test_a_bandwidth_that_overflows_the_frequencies_is_refused(sigma):
    """A subnormal bandwidth made every frequency infinite and every prediction NaN."""
    with pytest.raises(ValueError, match="kernel sigma"):
        DoublySGDRegressor(kernel=Gaussian(sigma)).fit(np.zeros((4, 2)), np.zeros(4))
    model = DoublySGDRegressor(batch_size=4, random_state=0).fit(np.eye(4, 2), np.arange(4.0))
    out = io.BytesIO()
    model.save(out)
    header, arrays = read(out.getvalue())
    arrays["features.bandwidth"] = np.array(sigma)
    with pytest.raises(ValueError, match="bandwidth"):
        fastomkl.load(io.BytesIO(write(header, arrays)))
