"""Hostile model files: small fitted models of every public class, and the ways to alter their files
(byte flips, truncation, edited arrays or header with the digest recomputed, size bombs).  Shared by
the fuzz tests and ``bench/fuzz_load_counts.py``."""
from __future__ import annotations

import inspect
import io
import json
import zipfile

import numpy as np

import fastomkl
from fastomkl._estimator import BinaryClassifier, MulticlassClassifier, OnlineEstimator
from fastomkl.persistence import _digest

from helpers import can_be_saved



def public_classes() -> list[type]:
    """Every public estimator class that can be saved (new ones are picked up from
    ``fastomkl.__all__``; a model holding a user's function cannot be saved)."""
    found = [getattr(fastomkl, name) for name in fastomkl.__all__]
    return [c for c in found
            if inspect.isclass(c) and issubclass(c, OnlineEstimator) and can_be_saved(c)]


# Configurations whose state differs from the defaults' (shared frequency draws: one base per
# kernel family), one per way the features are used: every kernel, a subset, one per round;
# float32 frequencies; the GP's two posterior variances (the operator, and ridge regressions at
# given points).
VARIANTS = [(fastomkl.Raker, {"shared_draw": True}), (fastomkl.OMKLGF, {"shared_draw": True}),
            (fastomkl.RFOKS, {"shared_draw": True}), (fastomkl.Raker, {"dtype": "float32"}),
            (fastomkl.RFOKS, {"dtype": "float32"}), (fastomkl.VAW2, {"dtype": "float32"}),
            (fastomkl.DoublySGDGP, {"variance": "operator", "block_size": 4, "batch_size": 4}),
            (fastomkl.DoublySGDGP, {"test_points": [[0.5, 0.0, -0.5], [0.1, 0.2, 0.3]]})]


def configurations() -> list[tuple[type, dict]]:
    """(class, extra parameters): every public class with its small settings, then VARIANTS."""
    return [(cls, {}) for cls in public_classes()] + VARIANTS


def configuration_id(configuration) -> str:
    cls, extra = configuration
    return cls.__name__ + "".join(f"[{k}={v}]" for k, v in extra.items())


def small_model(cls, **extra):
    """cls built with the small parameters it declares for the tests (``_unit_test_params``)."""
    return cls(**{**cls._unit_test_params()[0], **extra})


def fitted(cls, n: int = 12, **extra):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (n, 3))
    classifier = issubclass(cls, (BinaryClassifier, MulticlassClassifier))
    y = np.where(X[:, 0] > 0, 1.0, -1.0) if classifier else X[:, 0] ** 2
    return small_model(cls, **extra).partial_fit(X, y), X


def read(data: bytes) -> tuple[dict, dict]:
    """(header, arrays) of a model file's bytes."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    return json.loads(str(arrays.pop("__header__"))), arrays


def write(header: dict, arrays: dict, key=None) -> bytes:
    """A model file with its digest recomputed, as anyone can (or signed with `key`)."""
    header = {k: v for k, v in header.items() if k != "digest"}
    header["digest"] = _digest(header, arrays, key)
    out = io.BytesIO()
    np.savez_compressed(out, __header__=np.array(json.dumps(header)), **arrays)
    return out.getvalue()


def saved(model) -> bytes:
    out = io.BytesIO()
    model.save(out)
    return out.getvalue()


EXTREME_INTS = (-(2 ** 31), -7, -1, 1, 2, 3, 10 ** 6, 2 ** 31 - 1)
EXTREME_FLOATS = (np.nan, np.inf, -np.inf, 1e308, -1e308, 0.0, -1.0, 1e-320)


def edit_array(data: bytes, name: str, index: int, value) -> bytes:
    """One element of one state array set to `value` (in its dtype), digest recomputed."""
    header, arrays = read(data)
    a = arrays[name].copy()
    flat = a.reshape(-1)
    if flat.size == 0:
        return write(header, arrays)
    with np.errstate(invalid="ignore", over="ignore"):
        flat[index % flat.size] = np.array(value).astype(a.dtype)
    arrays[name] = a
    return write(header, arrays)


def zip_bomb(data: bytes, n_bytes: int = 2 ** 31) -> bytes:
    """The file with a state array replaced by a compressed array of n_bytes of zeros."""
    header, arrays = read(data)
    name = sorted(k for k in arrays if arrays[k].dtype == np.float64)[0]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("__header__.npy", _npy_bytes(np.array(json.dumps(header))))
        for other, a in arrays.items():
            if other != name:
                zf.writestr(other + ".npy", _npy_bytes(a))
        with zf.open(name + ".npy", "w", force_zip64=True) as fh:
            np.lib.format.write_array_header_1_0(
                fh, {"descr": "<f8", "fortran_order": False, "shape": (n_bytes // 8,)})
            chunk = bytes(1 << 20)
            for _ in range(n_bytes >> 20):
                fh.write(chunk)
    return out.getvalue()


def _npy_bytes(a) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, np.asarray(a), allow_pickle=False)
    return out.getvalue()
