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


@pytest.fixture
def sensitive_change_test(monkeypatch):
    """Models' change tests (``detect_changes``) at threshold 5, not 50: the small models of the
    tests relearn a changed concept within a few dozen rounds, before a test at 50 would fire."""
    import functools
    import fastomkl._rff_models
    from fastomkl._core.steps import ChangeTest
    monkeypatch.setattr(fastomkl._rff_models, "ChangeTest",
                        functools.partial(ChangeTest, threshold=5.0))
