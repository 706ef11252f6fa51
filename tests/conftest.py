import numpy as np
import pytest


@pytest.fixture
def stream():
    """A small regression stream with ||x|| <= 1 and y in [0, 1]."""
    rng = np.random.default_rng(12345)
    X = rng.uniform(-1, 1, size=(300, 4))
    X /= np.linalg.norm(X, axis=1).max()
    y = 0.5 + 0.4 * np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1]) + 0.05 * rng.standard_normal(300)
    return X, y


@pytest.fixture
def labelled_stream(stream):
    X, y = stream
    return X, np.where(y > np.median(y), 1.0, -1.0)
