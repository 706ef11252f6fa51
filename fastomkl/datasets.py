"""The real datasets shipped inside the package (see ``fastomkl/data/README.md``)."""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import os

import numpy as np

__all__ = ["Dataset", "load_dataset", "load_arrays", "DATASETS", "scale_to_unit_ball",
           "scale_to_unit_interval", "impute_column_means"]

DATASETS = ("a9a", "ailerons", "airfoil", "bank32nh", "bias_correction", "casp", "concrete",
            "cpusmall", "elevators", "istanbul_stock", "magic04", "naval", "phishing")


@dataclass(frozen=True)
class Dataset:
    name: str
    X: np.ndarray
    y: np.ndarray
    columns: tuple
    target: str
    extra: dict

    def __iter__(self):          # X, y = load_dataset(...)
        return iter((self.X, self.y))

    def __getitem__(self, index):  # load_dataset(...)[0] is X, as for the pair it unpacks as
        return (self.X, self.y)[index]

    def __len__(self):
        return 2


def load_arrays(name: str, data_dir=None) -> dict:
    """Every array of a data set's ``.npz`` file: the shipped copy, or ``data_dir/name.npz``.

    ``data_dir`` (a folder of files in the same format, e.g. a newer copy) is read when given;
    a name not shipped is then accepted too.
    """
    if data_dir is not None:
        path = os.path.join(os.fspath(data_dir), name + ".npz")
        if not os.path.isfile(path):
            raise ValueError(f"no data set {name!r} in {os.fspath(data_dir)!r} (no file {path})")
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; shipped datasets: {list(DATASETS)}")
    with resources.files("fastomkl.data").joinpath(name + ".npz").open("rb") as fh:
        with np.load(fh, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}


def load_dataset(name: str, data_dir=None) -> Dataset:
    """Raw (unscaled) arrays of a shipped dataset: ``X, y = load_dataset("airfoil")``.

    Bias correction keeps its missing values as NaN; impute before learning.

    Parameters
    ----------
    name : str
        One of ``fastomkl.datasets.DATASETS``.
    data_dir : str or path, optional
        Read ``data_dir/name.npz`` instead of the shipped copy.

    Returns
    -------
    Dataset
        ``X``, ``y``, the ``columns`` of X, the name of the ``target`` and any ``extra`` arrays;
        it unpacks as ``X, y``.

    Examples
    --------
    >>> from fastomkl import load_dataset
    >>> data = load_dataset("airfoil")
    >>> X, y = data
    >>> X.shape, y.shape, data.target
    ((1503, 5), (1503,), 'scaled_sound_pressure_level_dB')
    """
    arrays = load_arrays(name, data_dir)
    return Dataset(name, arrays.pop("X"), arrays.pop("y"), tuple(arrays.pop("columns").tolist()),
                   str(arrays.pop("target")), arrays)


def _finite(values, name: str) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if not np.isfinite(values).all():
        raise ValueError(f"{name} contains NaN or infinity: impute missing values first "
                         f"(impute_column_means)")
    return values


def scale_to_unit_ball(X) -> np.ndarray:
    """X divided by its largest row norm (one global scalar), so every ||x_t|| <= 1."""
    X = _finite(X, "X")
    top = np.sqrt((X * X).sum(axis=1)).max() if X.size else 0.0
    return X / top if top > 0 else X.copy()


def scale_to_unit_interval(y) -> np.ndarray:
    """y mapped to [0, 1] by its global minimum and maximum."""
    y = _finite(y, "y")
    span = y.max() - y.min() if y.size else 0.0
    return (y - y.min()) / span if span > 0 else np.zeros_like(y)


def impute_column_means(X) -> np.ndarray:
    """Missing values (NaN) replaced by their column's mean."""
    X = np.array(X, dtype=np.float64)
    means = np.nanmean(X, axis=0)
    rows, cols = np.nonzero(np.isnan(X))
    X[rows, cols] = means[cols]
    return X
