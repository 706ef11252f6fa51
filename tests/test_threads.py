"""Threads may share a model: rounds never interleave, so a concurrent reader disturbs nothing."""
import threading
import time

import numpy as np

from fastomkl import Gaussian, Laplacian, Raker
from helpers import state_bytes


def test_concurrent_predictions_do_not_disturb_learning():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(20000, 6)) / 3
    y = np.sin(X.sum(1))
    kernels = [Gaussian(0.5), Laplacian(1.0), Gaussian(2.0)]
    serial = Raker(kernels, n_components=30, random_state=1).partial_fit(X, y)
    shared = Raker(kernels, n_components=30, random_state=1)
    shared.learn_one(X[0], y[0])
    probe = rng.uniform(-1, 1, size=(50, 6)) / 3
    stop = threading.Event()
    answers = []

    def reader():
        while not stop.is_set():
            answers.append(shared.predict_one(probe[len(answers) % 50]))
            answers.append(float(shared.predict(probe[:3])[0]))

    def readers_answered(since):
        deadline = time.monotonic() + 5.0
        while len(answers) <= since and time.monotonic() < deadline:
            time.sleep(1e-4)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    # Learning in chunks, each one started only once the readers have answered since the last:
    # predictions and learning interleave however fast either is (partial_fit releases the GIL).
    for chunk in np.array_split(np.arange(1, len(y)), 20):
        readers_answered(len(answers))
        shared.partial_fit(X[chunk], y[chunk])
    stop.set()
    for t in threads:
        t.join()
    assert len(answers) > 10 and np.isfinite(answers).all()
    assert state_bytes(shared) == state_bytes(serial)
