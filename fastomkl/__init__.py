"""fastomkl: online multi-kernel learning with a compiled core.

Data arrive one sample at a time; a model predicts, sees the label and updates in microseconds.
Kernels (``Gaussian``, ``Laplacian``, ``Cauchy``; convention in ``fastomkl.kernels``) become
per-kernel representations (``RandomFourierFeatures``), experts learn on each, and a combiner mixes
them.  Every model has ``predict_one``, ``learn_one``, ``predict_learn_one``, ``predict``,
``partial_fit``, ``fit``, ``predict_learn``, ``score``, ``save`` and scikit-learn's parameter
protocol; the ``*_one`` methods also take river's dict samples (``fastomkl.river`` for pipelines).
"""
from __future__ import annotations

import importlib

from fastomkl._validation import MAX_ABS_INPUT, BudgetWarning, NotFittedError, NumericalWarning
from fastomkl.kernels import (Cauchy, Gaussian, Kernel, Laplacian, Matern, Polynomial,
                              median_dictionary, paper000_dictionary, paper001_dictionary,
                              paper003_dictionary)

__version__ = "0.1.0"

# Estimators, features, data and persistence load on first use, so that ``import fastomkl`` (and
# every ``fastomkl`` command) does not pay for the compiled core and scipy.special up front.
_LAZY = {
    "RandomFourierFeatures": "fastomkl.features",
    "load": "fastomkl.persistence",
    "load_dataset": "fastomkl.datasets",
    "OnlineMKL": "fastomkl.compose", "OnlineMKLClassifier": "fastomkl.compose",
    "Raker": "fastomkl.raker", "RakerClassifier": "fastomkl.raker",
    "AdaRaker": "fastomkl.adaraker", "AdaRakerClassifier": "fastomkl.adaraker",
    "OMKLGF": "fastomkl.graph_omkl", "OMKLGFClassifier": "fastomkl.graph_omkl",
    "OMKLSFG": "fastomkl.graph_omkl", "OMKLSFGClassifier": "fastomkl.graph_omkl",
    "OMKLSFGR": "fastomkl.graph_omkl", "OMKLSFGRClassifier": "fastomkl.graph_omkl",
    "OMKR": "fastomkl.omkr", "OMKRClassifier": "fastomkl.omkr",
    "OnlineKernelRegressor": "fastomkl.omkr", "RFOMKR": "fastomkl.omkr",
    "RFOMKRClassifier": "fastomkl.omkr",
    "VAW": "fastomkl.vaw", "ConcatVAW": "fastomkl.vaw", "VAW2": "fastomkl.vaw",
    "VAWEWA": "fastomkl.vaw", "VAWMeta": "fastomkl.vaw", "VAWClassifier": "fastomkl.vaw",
    "ConcatVAWClassifier": "fastomkl.vaw", "VAW2Classifier": "fastomkl.vaw",
    "VAWEWAClassifier": "fastomkl.vaw", "VAWMetaClassifier": "fastomkl.vaw",
    **{name: "fastomkl.dsg" for name in (
        "DoublySGDRegressor", "DoublySGDClassifier", "DoublySGDOneClass",
        "DoublySGDDensityRatio", "DoublySGDGP", "DoublySGDSoftmaxClassifier", "NORMA")},
    # kernel selection under bandit feedback (paper 001)
    **{name: "fastomkl.bandit" for name in (
        "OKS", "OKSClassifier", "OKSPlusPlus", "OKSPlusPlusClassifier", "IOKS", "IOKSClassifier",
        "RFOKS", "RFOKSClassifier", "RFOKSPlusPlus", "RFOKSPlusPlusClassifier", "RFIOKS",
        "RFIOKSClassifier", "LKMBooks", "LKMBooksClassifier")},
    # PKAWV and its baselines (paper 002)
    **{name: "fastomkl.pkawv" for name in (
        "TaylorAWV", "TaylorAWVClassifier", "NystromAWV", "NystromAWVClassifier", "KernelAWV",
        "KernelAWVClassifier", "FOGD", "FOGDClassifier", "BeforehandNystromAWV",
        "BeforehandNystromAWVClassifier", "ProsNKons", "ProsNKonsClassifier", "FixedEmbeddingAWV",
        "FixedEmbeddingAWVClassifier", "Mixture")},
}

__all__ = [
    "Cauchy", "Gaussian", "Kernel", "Laplacian", "Matern", "Polynomial", "MAX_ABS_INPUT",
    "NotFittedError",
    "NumericalWarning", "BudgetWarning", "RandomFourierFeatures",
    "Raker", "RakerClassifier", "AdaRaker", "AdaRakerClassifier", "OMKLGF", "OMKLGFClassifier", "OMKLSFG", "OMKLSFGClassifier",
    "OMKLSFGR", "OMKLSFGRClassifier", "OMKR", "OMKRClassifier", "OnlineKernelRegressor", "RFOMKR",
    "RFOMKRClassifier", "load", "load_dataset", "median_dictionary", "paper000_dictionary",
    "OnlineMKL", "OnlineMKLClassifier",
    "paper001_dictionary", "paper003_dictionary",
    "VAW", "ConcatVAW", "VAW2", "VAWEWA", "VAWMeta",
    "OKS", "OKSClassifier", "OKSPlusPlus", "OKSPlusPlusClassifier", "IOKS", "IOKSClassifier",
    "RFOKS", "RFOKSClassifier", "RFOKSPlusPlus", "RFOKSPlusPlusClassifier", "RFIOKS",
    "RFIOKSClassifier", "LKMBooks", "LKMBooksClassifier",
    "VAWClassifier", "ConcatVAWClassifier", "VAW2Classifier", "VAWEWAClassifier",
    "VAWMetaClassifier",
    "TaylorAWV", "TaylorAWVClassifier", "NystromAWV", "NystromAWVClassifier", "KernelAWV",
    "KernelAWVClassifier", "FOGD", "FOGDClassifier", "BeforehandNystromAWV",
    "BeforehandNystromAWVClassifier", "ProsNKons", "ProsNKonsClassifier", "FixedEmbeddingAWV",
    "FixedEmbeddingAWVClassifier", "Mixture",
    "DoublySGDRegressor", "DoublySGDClassifier", "DoublySGDOneClass", "DoublySGDDensityRatio",
    "DoublySGDGP", "DoublySGDSoftmaxClassifier", "NORMA",
]


def __getattr__(name: str):
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'fastomkl' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value          # later look-ups skip this function
    return value


def _import_all() -> None:
    """Load every lazy export (after this the estimator registry knows every model class)."""
    for name in _LAZY:
        __getattr__(name)


def __dir__() -> list[str]:
    """The public names and the submodules, not this file's own imports."""
    own = {name for name in globals() if not name.startswith("_")} - {"annotations", "importlib"}
    return sorted(own | set(_LAZY) | {"__version__"})
