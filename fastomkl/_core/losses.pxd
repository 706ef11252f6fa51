# The losses of a round, named by their normalisation: LOSS_SQUARED is (f - y)^2 (not half of it),
# with derivative 2 (f - y), LOSS_HALF_SQUARED its half; the classification losses take labels y in
# {-1, +1}.  The losses after LOSS_HINGE (the functional gradients of doubly stochastic gradients,
# paper 004's section 4) take one parameter p (a threshold, a level) and are derived only
# (loss_derivative_with) and valued (loss_value_with: what a combiner of such learners weighs).
from libc.math cimport exp, fabs, log1p

cdef enum:
    LOSS_SQUARED = 0        # (f - y)^2
    LOSS_ABSOLUTE = 1       # |f - y|
    LOSS_LOGISTIC = 2       # log(1 + exp(-y f))
    LOSS_HINGE = 3          # max(0, 1 - y f)
    LOSS_HALF_SQUARED = 4   # (f - y)^2 / 2
    LOSS_HUBER = 5          # (f - y)^2 / 2 for |f - y| <= p, else p |f - y| - p^2 / 2
    LOSS_EPSILON_INSENSITIVE = 6    # max(0, |f - y| - p)
    LOSS_QUANTILE = 7       # max(p (y - f), (1 - p) (f - y)), the level p in (0, 1)
    LOSS_HALF_SQUARED_HINGE = 8     # max(0, 1 - y f)^2 / 2
    LOSS_KL_RATIO = 9       # 2 exp(f) for y = 0 (a row of q), -2 f for y = 1 (a row of p)
    LOSS_ONE_CLASS = 10     # max(0, -f): f is the score less the threshold tau
    LOSS_SOFTMAX = 11       # log sum_c exp(f_c) - f_y over the outputs (needs them all)


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


cdef inline double reach_factor(int kind) noexcept nogil:
    """How far along a step the minimiser of a loss lies, in units of the zero of its tangent: 2
    for the squared loss (the tangent's zero is half-way to y), 1 for the absolute and hinge losses
    (their kink is the tangent's zero) and for the logistic loss (whose minimiser is at infinity:
    the tangent's zero stays the limit).  Multiplies the loss in ``steps.truncated_step`` so that
    a step may take the example's prediction onto its target, never past it."""
    return 2.0 if kind == LOSS_SQUARED else 1.0


# exp(f) of the KL loss is taken at min(f, KL_EXP_LIMIT): beyond it the gradient overflows anyway
# (and the update is refused), without an infinity in the arithmetic.
cdef enum: KL_EXP_LIMIT = 800


cdef inline double loss_derivative_with(int kind, double f, double y, double p) noexcept nogil:
    """d loss / d f of every loss but the softmax, p its parameter (at a kink, the subgradient 0
    of the absolute, epsilon-insensitive and hinge losses, and the side f >= y of the quantile)."""
    cdef double r = f - y
    if kind <= LOSS_HINGE:
        return loss_derivative(kind, f, y)
    if kind == LOSS_HALF_SQUARED:
        return r
    if kind == LOSS_HUBER:
        return p if r > p else (-p if r < -p else r)
    if kind == LOSS_EPSILON_INSENSITIVE:
        if fabs(r) > p:
            return 1.0 if r > 0.0 else -1.0
        return 0.0
    if kind == LOSS_QUANTILE:
        return 1.0 - p if f >= y else -p
    if kind == LOSS_HALF_SQUARED_HINGE:
        return r if y * f < 1.0 else 0.0
    if kind == LOSS_KL_RATIO:
        if y == 1.0:
            return -2.0
        return 2.0 * exp(f if f < KL_EXP_LIMIT else KL_EXP_LIMIT)
    if kind == LOSS_ONE_CLASS:
        return -1.0 if f < 0.0 else 0.0
    return 0.0


cdef inline double loss_value_with(int kind, double f, double y, double p) noexcept nogil:
    """The value of every loss of loss_derivative_with but the softmax and the one-class loss
    (whose learners have no combiner to weigh them), p its parameter; 0 for those two."""
    cdef double r = f - y, m
    if kind <= LOSS_HINGE:
        return loss_value(kind, f, y)
    if kind == LOSS_HALF_SQUARED:
        return 0.5 * r * r
    if kind == LOSS_HUBER:
        return 0.5 * r * r if fabs(r) <= p else p * fabs(r) - 0.5 * p * p
    if kind == LOSS_EPSILON_INSENSITIVE:
        return fabs(r) - p if fabs(r) > p else 0.0
    if kind == LOSS_QUANTILE:
        return (1.0 - p) * r if f >= y else -p * r
    if kind == LOSS_HALF_SQUARED_HINGE:
        m = 1.0 - y * f
        return 0.5 * m * m if m > 0.0 else 0.0
    if kind == LOSS_KL_RATIO:
        if y == 1.0:
            return -2.0 * f
        return 2.0 * exp(f if f < KL_EXP_LIMIT else KL_EXP_LIMIT)
    return 0.0
