# The losses of a round, named by their normalisation: LOSS_SQUARED is (f - y)^2 (not half of it),
# with derivative 2 (f - y); the classification losses take labels y in {-1, +1}.
from libc.math cimport exp, fabs, log1p

cdef enum:
    LOSS_SQUARED = 0        # (f - y)^2
    LOSS_ABSOLUTE = 1       # |f - y|
    LOSS_LOGISTIC = 2       # log(1 + exp(-y f))
    LOSS_HINGE = 3          # max(0, 1 - y f)


cdef inline double loss_value(int kind, double f, double y) noexcept nogil:
    cdef double m
    if kind == LOSS_SQUARED:
        return (f - y) * (f - y)
    if kind == LOSS_ABSOLUTE:
        return fabs(f - y)
    if kind == LOSS_LOGISTIC:
        m = -y * f                      # log(1 + e^m), stable for either sign of m
        if m > 0.0:
            return m + log1p(exp(-m))
        return log1p(exp(m))
    m = 1.0 - y * f                     # hinge
    return m if m > 0.0 else 0.0


cdef inline double loss_derivative(int kind, double f, double y) noexcept nogil:
    """d loss / d f (a subgradient where the loss has a kink)."""
    if kind == LOSS_SQUARED:
        return 2.0 * (f - y)
    if kind == LOSS_ABSOLUTE:
        return 1.0 if f > y else (-1.0 if f < y else 0.0)
    if kind == LOSS_LOGISTIC:
        return -y / (1.0 + exp(y * f))
    return -y if y * f < 1.0 else 0.0


cdef inline double unit_scale(int kind, double unit) noexcept nogil:
    """unit^power of the loss: what a loss is divided by in the units of the targets' scale
    (squared 2, absolute 1, classification losses 0: their labels are -1/+1)."""
    if kind == LOSS_SQUARED:
        return unit * unit
    if kind == LOSS_ABSOLUTE:
        return unit
    return 1.0
