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
