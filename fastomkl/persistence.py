"""Saving and loading models in a format that can never execute code.

A model file is a NumPy ``.npz`` archive (read with ``allow_pickle=False``) holding:

* ``__header__``: a JSON document: ``{"format": "fastomkl-model", "version": 1, "class": ...,
  "params": ..., "n_features_in": ..., "classes": ..., "feature_names": ..., "rng_state": ...,
  "sha256": ...}``.  ``feature_names`` (optional) are the names of a model that learnt from dict
  samples, in its feature order.
  ``class`` must name a fastomkl estimator; ``params`` holds only JSON values (kernels as
  ``{"kind", "sigma"}``); ``sha256`` is the digest of every array, in name order, so a tampered
  archive is refused even when its zip checksums were rewritten.
* one array per entry of the model's compiled state (``engine.t``, ``experts.theta``, ...).

After ``load(save(model))`` the next predictions and updates are bit-identical to the original's,
including the per-round random stream.
"""
from __future__ import annotations

import hashlib
import json
import zipfile

import numpy as np

from fastomkl.kernels import Kernel, kernel_from_dict

FORMAT = "fastomkl-model"
VERSION = 1


def save(model, path) -> None:
    """Write ``model`` to ``path`` (any fastomkl estimator, fitted or not)."""
    from fastomkl._base import OnlineEstimator
    if not isinstance(model, OnlineEstimator):
        raise ValueError(f"save expects a fastomkl estimator, got {type(model).__name__}")
    engine = model._engine
    arrays = {} if engine is None else engine.get_state()
    classes = getattr(model, "classes_", None)
    header = {
        "format": FORMAT,
        "version": VERSION,
        "class": type(model).__name__,
        "params": {k: _encode_param(k, v) for k, v in model.get_params().items()},
        "n_features_in": None if engine is None else int(engine.n_features),
        "classes": None if classes is None else [_plain(c) for c in classes],
        "feature_names": _feature_names(model),
        "rng_state": None if engine is None else _plain(engine.rng_state),
        "sha256": _digest(arrays),
    }
    with open(path, "wb") as fh:
        np.savez_compressed(fh, __header__=np.array(json.dumps(header)), **arrays)


def load(path):
    """Read a model written by ``save``; raises ValueError for anything else."""
    from fastomkl._base import _REGISTRY
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        raise ValueError(f"{path}: not a readable fastomkl model file ({exc})") from None
    try:
        header = json.loads(str(arrays.pop("__header__")))
    except (KeyError, ValueError):
        raise ValueError(f"{path}: not a fastomkl model file (no valid header)") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path}: not a fastomkl model file")
    if header.get("version") != VERSION:
        raise ValueError(f"{path}: model format version {header.get('version')!r} is not "
                         f"supported (this fastomkl reads version {VERSION})")
    if header.get("sha256") != _digest(arrays):
        raise ValueError(f"{path}: the model's arrays do not match its checksum (file altered)")
    cls = _REGISTRY.get(header.get("class"))
    if cls is None:                     # estimator modules load lazily: register them all first
        import fastomkl
        fastomkl._import_all()
        cls = _REGISTRY.get(header.get("class"))
    if cls is None:
        raise ValueError(f"{path}: unknown model class {header.get('class')!r}")
    try:
        params = {k: _decode_param(k, v) for k, v in header["params"].items()}
        model = cls(**params)
        if header["classes"] is not None:
            model._commit_classes({c: -1.0 if i == 0 else 1.0
                                   for i, c in enumerate(header["classes"])})
        if header["n_features_in"] is not None:
            model._restore_engine(int(header["n_features_in"]), arrays, header["rng_state"])
        if header.get("feature_names") is not None:
            names = tuple(header["feature_names"])
            if model._engine is None or len(names) != model._engine.n_features:
                raise ValueError("feature_names do not match the number of features")
            if not all(isinstance(name, (str, int)) for name in names) or len(set(names)) < len(names):
                raise ValueError("feature_names must be distinct strings or integers")
            model._feature_names = names
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: inconsistent model file ({exc})") from None
    return model


def _encode_param(name, value):
    if name == "kernels" and value is not None:
        kernels = [value] if isinstance(value, Kernel) else list(value)
        return {"__kernels__": [k.to_dict() for k in kernels]}
    if isinstance(value, (np.random.Generator, np.random.SeedSequence)):
        return None        # a live generator is not data; the saved streams carry its state
    value = _plain(value)
    try:
        json.dumps(value)
    except TypeError:
        raise ValueError(f"parameter {name}={value!r} cannot be saved (not JSON data)") from None
    return value


def _decode_param(name, value):
    if isinstance(value, dict) and "__kernels__" in value:
        return [kernel_from_dict(k) for k in value["__kernels__"]]
    return value


def _feature_names(model):
    """The names of a model that learnt from dict samples (strings or integers), else None."""
    names = model.__dict__.get("_feature_names")
    if names is None:
        return None
    if not all(isinstance(name, (str, int)) for name in names):
        raise ValueError(f"feature names {list(names)} cannot be saved (only strings and integers)")
    return list(names)


def _plain(value):
    """NumPy scalars and containers as plain JSON values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.generic, np.ndarray)):     # an MT19937 state holds its key as an array
        return value.tolist()
    return value


def _digest(arrays: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()
