"""fastomkl: online multi-kernel learning with a compiled core.

Data arrive one sample at a time; a model predicts, sees the label and updates in microseconds.
Kernels (``Gaussian``, ``Laplacian``, ``Cauchy``; convention in ``fastomkl.kernels``) become
per-kernel representations (``RandomFourierFeatures``), experts learn on each, and a combiner mixes
them.  Every model has ``predict_one``, ``learn_one``, ``predict_learn_one``, ``predict``,
``partial_fit``, ``fit``, ``predict_learn``, ``save`` and scikit-learn's parameter protocol.
"""
from fastomkl._validation import NotFittedError
from fastomkl.datasets import load_dataset
from fastomkl.features import RandomFourierFeatures
from fastomkl.kernels import (Cauchy, Gaussian, Kernel, Laplacian, Matern, paper000_dictionary,
                              paper001_dictionary, paper003_dictionary)
from fastomkl.persistence import load
from fastomkl.raker import Raker, RakerClassifier
from fastomkl.graph_omkl import (OMKLGF, OMKLGFClassifier, OMKLSFG, OMKLSFGClassifier, OMKLSFGR,
                                 OMKLSFGRClassifier)
from fastomkl.omkr import (OMKR, OMKRClassifier, OnlineKernelRegressor, RFOMKR,
                           RFOMKRClassifier)
from fastomkl.vaw import (VAW, VAW2, VAWEWA, ConcatVAW, ConcatVAWClassifier, VAW2Classifier,
                          VAWClassifier, VAWEWAClassifier, VAWMeta, VAWMetaClassifier)

__version__ = "0.1.0"

__all__ = [
    "Cauchy", "Gaussian", "Kernel", "Laplacian", "Matern", "NotFittedError", "RandomFourierFeatures",
    "Raker", "RakerClassifier", "OMKLGF", "OMKLGFClassifier", "OMKLSFG", "OMKLSFGClassifier",
    "OMKLSFGR", "OMKLSFGRClassifier", "OMKR", "OMKRClassifier", "OnlineKernelRegressor", "RFOMKR",
    "RFOMKRClassifier", "load", "load_dataset", "paper000_dictionary",
    "paper001_dictionary", "paper003_dictionary",
    "VAW", "ConcatVAW", "VAW2", "VAWEWA", "VAWMeta",
    "VAWClassifier", "ConcatVAWClassifier", "VAW2Classifier", "VAWEWAClassifier",
    "VAWMetaClassifier",
]
