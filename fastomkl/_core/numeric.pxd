# Numeric guards and small numeric building blocks shared by the components.
from libc.float cimport DBL_MAX
from libc.math cimport exp, isfinite

# Bound on the norm of any learnt state: an update that would exceed it is refused (and counted in
# the component's n_rejected) instead of drifting to inf and NaN.  Predictions stay below
# STATE_LIMIT * ||z||, so losses of targets up to 1e150 stay finite.
cdef extern from *:
    """
    #define FASTOMKL_STATE_LIMIT 1e100
    #define FASTOMKL_FLOAT_SAFE 1e37
    """
    double STATE_LIMIT "FASTOMKL_STATE_LIMIT"
    # A float32 sum of d products x_j w_j stays far below float's 3.4e38 while max|x| max|w| d
    # stays below this: inputs beyond it (|x| up to 1e150 is accepted) take a double path.
    double FLOAT_SAFE "FASTOMKL_FLOAT_SAFE"


cdef inline double softmax_in_place(double* v, int n) noexcept nogil:
    """v <- exp(v - max v) / sum: weights from log-weights without overflow; returns max v."""
    cdef double top = v[0], total = 0.0
    cdef int k
    for k in range(1, n):
        if v[k] > top:
            top = v[k]
    for k in range(n):
        v[k] = exp(v[k] - top)
        total += v[k]
    for k in range(n):
        v[k] /= total
    return top


cdef inline double saturate(double v) noexcept nogil:
    """v if finite, else the nearest finite value (0 for NaN): what a forecaster returns when its
    arithmetic overflows, so that no prediction is ever NaN or infinite."""
    if isfinite(v):
        return v
    if v > 0.0:
        return DBL_MAX
    if v < 0.0:
        return -DBL_MAX
    return 0.0


cdef inline bint finite_round(double f, double g, double iw_loss) noexcept nogil:
    """Whether a round's prediction, importance-weighted gradient and loss (and g^2, which the
    AdaGrad rules accumulate) are finite: otherwise the update is refused, so the state stays
    finite whatever the stream."""
    return isfinite(f) and isfinite(g * g) and isfinite(iw_loss * iw_loss)
