"""Shared test helpers."""
import numpy as np


def state_bytes(model) -> dict:
    """Everything that defines a model's future behaviour, as bytes (for exact comparisons)."""
    engine = model._engine
    out = {"params": repr(sorted(model.get_params().items(), key=lambda kv: kv[0])),
           "classes": repr(getattr(model, "classes_", None))}
    if engine is not None:
        out.update({k: np.asarray(v).tobytes() for k, v in engine.get_state().items()})
        out["rng"] = repr(engine.rng_state)
        out["t"] = engine.t
    return out


def embedding(X):
    """A fixed feature map for the models that take one (``phi``): the inputs and their squares."""
    X = np.asarray(X, dtype=np.float64)
    return np.hstack([X, X ** 2])


def required_arguments(cls, n_features: int = 3) -> dict:
    """Small values for the arguments a class cannot do without: Nyström centres fixed in advance
    (four distinct points) and a user feature map."""
    import inspect
    params = inspect.signature(cls).parameters
    out = {}
    if "centres" in params:
        out["centres"] = np.linspace(-1.0, 1.0, 4 * n_features).reshape(4, n_features)
    if "phi" in params:
        out["phi"] = embedding
    return out


def can_be_saved(cls) -> bool:
    """A model holding a Python function (a user feature map) cannot be written to a file."""
    import inspect
    return "phi" not in inspect.signature(cls).parameters


def cpu_isa_level() -> int:
    """The widest kernel variant this CPU runs (4: AVX-512, 3: AVX2 + FMA, 2: SSE2), whatever
    FASTOMKL_ISA caps this process to (CI runs the suite under each cap)."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "FASTOMKL_ISA"}
    run = subprocess.run([sys.executable, "-c",
                          "from fastomkl._core.features.rff import isa_level; print(isa_level())"],
                         env=env, capture_output=True, text=True, check=True)
    return int(run.stdout)
