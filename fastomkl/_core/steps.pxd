# Step-size rules shared by every expert and combiner rate.  A rule is a scale and a kind; the
# rules that adapt to the data keep their statistics in the component that uses them (one
# accumulator per expert), so a rule here is a pure function of (rule, round, statistics); the
# change test that restarts a combiner's weights (ChangeTest) is the one rule with a state.
from libc.limits cimport LONG_MAX
from libc.float cimport DBL_MAX
from libc.math cimport fabs, fmin, sqrt

cdef enum:
    SCHEDULE_CONSTANT = 0
    SCHEDULE_INV_SQRT = 1
    SCHEDULE_ADAGRAD = 2     # scale / sqrt(sum of squared gradient norms), kept by the expert
    SCHEDULE_SELF_CONFIDENT = 3   # scale sqrt(ln N / (1 + V)), V kept by the combiner
    SCHEDULE_INVERSE = 4     # scale / (1 + decay t): the DSG authors' code
    SCHEDULE_INV_T = 5       # scale / t: the DSG paper's theory (gamma_t = theta / t)
    SCHEDULE_ENSEMBLE = 6    # a constant step per member of an ensemble (a geometric grid per
                             # kernel), truncated and proximal: see ensemble_update


ctypedef struct Schedule:
    double scale
    int kind
    double decay             # of SCHEDULE_INVERSE


cdef inline double schedule_at(Schedule s, long t) noexcept nogil:
    """Step size of round (or iteration) t >= 1: `scale`, `scale / sqrt(t)`,
    `scale / (1 + decay t)` or `scale / t`."""
    if s.kind == SCHEDULE_INV_SQRT:
        return s.scale / sqrt(<double>t)
    if s.kind == SCHEDULE_INVERSE:
        return s.scale / (1.0 + s.decay * t)
    if s.kind == SCHEDULE_INV_T:
        return s.scale / t
    return s.scale


cdef inline double adagrad_step(double scale, double* grad_sq, double g_sq) noexcept nogil:
    """AdaGrad-norm: the step scale / sqrt(G) after G += g_sq (0 while G is 0), whatever the scale
    of the gradients.  G saturates at the largest double: an importance weight near the float
    limit (a probability of 1e-300 from a loaded state) then freezes the expert instead of leaving
    an infinite sum its own file could not hold."""
    grad_sq[0] = fmin(grad_sq[0] + g_sq, DBL_MAX)
    if grad_sq[0] > 0.0:
        return scale / sqrt(grad_sq[0])
    return 0.0


cdef inline double truncated_step(double step, double move, double loss,
                                  double slope) noexcept nogil:
    """min(step, loss / (|slope| move)) for a step that moves the example's own prediction by
    `move` per unit against the loss's slope: the prediction never passes the zero of the loss's
    tangent loss + slope (f' - f) (the truncated model of Asi & Duchi 2019).  The squared loss
    goes at most half-way to y, the absolute and hinge losses at most onto their kink, so a large
    step cannot overshoot the example it learns from."""
    cdef double limit
    if move == 0.0 or slope == 0.0:
        return step
    limit = loss / (fabs(slope) * move)
    return step if step <= limit else limit


# Restarting the kernel weights when the stream changes.  Exponential weights that learnt one
# concept for thousands of rounds keep the kernels of that concept after it changes: Raker's
# (constant rate), RFOMKR's (discounted) and OMKL-GF's (a self-confident rate, whose V only grows)
# kept their error on ConceptDriftStream's second concept far above that of the same models
# restarted after the change (bench/results/change_detection.md).  A Page-Hinkley test (Page 1954) on a per-round
# statistic of the combined prediction says when: the sum of the statistic's deviations above
# its running mean, less a tolerance delta, climbs more than a threshold above its lowest point
# (ChangeTest); the combiner that holds the test decides what an alarm restarts.
cdef enum:
    CHANGE_MISTAKES = 1      # 1 when the sign of y_hat (0: -1, as predict) is not y's (-1 / +1)
    CHANGE_SQUARED = 2       # min((y_hat - y)^2, CHANGE_SQUARED_CAP), in the units learnt in
    PAGE_HINKLEY_SIZE = 5    # [rounds, mean, cumulative deviation, its minimum, alarms]
    CHANGE_SQUARED_CAP = 4   # a squared error in standard units counts at most this much


cdef class ChangeTest:
    # A Page-Hinkley test on a per-round statistic of a combiner's prediction (steps.pyx); the
    # combiner that holds one decides what an alarm restarts.
    cdef readonly int kind                   # CHANGE_MISTAKES or CHANGE_SQUARED
    cdef readonly double delta, threshold
    cdef readonly double[::1] sums           # (PAGE_HINKLEY_SIZE,) the test's state
    cdef bint fires(self, double y_hat, double y) noexcept nogil


# The doubling rule of anytime horizons: constants that need the horizon T use, in round t, the
# smallest FIRST_HORIZON * 2^j >= t (so they follow the stream); a positive fixed horizon is used
# as it is (the Python layer refuses a stream longer than it).
cdef enum: FIRST_HORIZON = 64      # the doubling rule's first horizon (IOKS needs T >= 40)


cdef inline long horizon_of(long fixed, long current, long t) noexcept nogil:
    """The horizon of round t: `fixed`, or the doubling rule from `current`."""
    if fixed > 0:
        return fixed
    if current < FIRST_HORIZON:
        current = FIRST_HORIZON
    while current < t:
        if current > LONG_MAX / 2:      # no doubling passes t without overflowing: t itself
            return t
        current *= 2
    return current


cdef inline void proximal_update(double step, double d, double lam, double* shrink,
                                 double* g) noexcept nogil:
    """The proximal step on loss'(f) z + lam ||theta||^2: theta <- (theta - step d z) / (1 + 2 step
    lam), as theta <- shrink theta - g z.  Unlike the explicit step 1 - 2 step lam it never flips
    theta's sign, whatever the step, so a large member of a step grid stays stable."""
    shrink[0] = 1.0 / (1.0 + 2.0 * step * lam)
    g[0] = step * d * shrink[0]
