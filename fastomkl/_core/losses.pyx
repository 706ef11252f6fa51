"""The compiled losses' codes by name, for the Python layer (the enums in losses.pxd are the one
source of truth)."""

from fastomkl._core.losses cimport loss_derivative_with

LOSSES = {"squared": LOSS_SQUARED, "absolute": LOSS_ABSOLUTE, "logistic": LOSS_LOGISTIC,
          "hinge": LOSS_HINGE}

# The losses of doubly stochastic gradients by their names in the DSG models (whose "squared" and
# "squared_hinge" are the halves: their slopes are f - y, as in the paper).
FUNCTIONAL_LOSSES = {"squared": LOSS_HALF_SQUARED, "huber": LOSS_HUBER,
                     "epsilon_insensitive": LOSS_EPSILON_INSENSITIVE, "absolute": LOSS_ABSOLUTE,
                     "quantile": LOSS_QUANTILE, "hinge": LOSS_HINGE,
                     "squared_hinge": LOSS_HALF_SQUARED_HINGE, "logistic": LOSS_LOGISTIC,
                     "kl": LOSS_KL_RATIO, "one_class": LOSS_ONE_CLASS, "softmax": LOSS_SOFTMAX}


def functional_derivative(str name, double f, double y, double p=0.0):
    """d loss / d f of the DSG loss `name` (not the softmax) at (f, y), its parameter p: the
    compiled slope, for checks against independent computations."""
    return loss_derivative_with(FUNCTIONAL_LOSSES[name], f, y, p)
