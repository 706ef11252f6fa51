"""The estimator layer: the API every model shares, its classifiers, declared parameters and the
registry of every model class."""
from fastomkl._estimator.base import _REGISTRY, OnlineEstimator
from fastomkl._estimator.classifiers import BinaryClassifier, MulticlassClassifier

__all__ = ["OnlineEstimator", "BinaryClassifier", "MulticlassClassifier", "_REGISTRY"]
