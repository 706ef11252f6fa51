"""The real datasets shipped inside the package (see ``fastomkl/data/README.md``)."""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np

__all__ = ["Dataset", "load_dataset", "DATASETS"]

DATASETS = ("airfoil", "bias_correction", "concrete", "naval")


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


def load_dataset(name: str) -> Dataset:
    """Raw (unscaled) arrays of a shipped dataset: ``X, y = load_dataset("airfoil")``.

    Bias correction keeps its missing values as NaN; impute before learning.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; shipped datasets: {list(DATASETS)}")
    with resources.files("fastomkl.data").joinpath(name + ".npz").open("rb") as fh:
        with np.load(fh, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    return Dataset(name, arrays.pop("X"), arrays.pop("y"), tuple(arrays.pop("columns").tolist()),
                   str(arrays.pop("target")), arrays)
