# Numeric guards and small numeric building blocks shared by the components.
from libc.float cimport DBL_MAX
from libc.math cimport exp, isfinite, log

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


# Log-weights of exponential weights are kept above this floor: exp of it is 0 in double
# precision, so the weights do not change, and a log-weight stays finite however long its expert
# keeps losing.
cdef extern from *:
    """
    #define FASTOMKL_LOG_WEIGHT_FLOOR (-1e300)
    """
    double LOG_WEIGHT_FLOOR "FASTOMKL_LOG_WEIGHT_FLOOR"


cdef inline void normalise_log_weights(double* log_w, double* w_bar, int n,
                                       int stride) noexcept nogil:
    """Exponential weights from log-weights, over the n entries k * stride: w_bar = exp(log_w -
    max) / sum, then log_w shifted to maximum 0 (and floored at LOG_WEIGHT_FLOOR), so it never
    under- or overflows (the arithmetic of softmax_in_place)."""
    cdef double top = log_w[0], total = 0.0
    cdef int k
    for k in range(1, n):
        if log_w[k * stride] > top:
            top = log_w[k * stride]
    for k in range(n):
        w_bar[k * stride] = exp(log_w[k * stride] - top)
        total += w_bar[k * stride]
    for k in range(n):
        w_bar[k * stride] /= total
        log_w[k * stride] -= top
        if log_w[k * stride] < LOG_WEIGHT_FLOOR:
            log_w[k * stride] = LOG_WEIGHT_FLOOR


cdef inline void share_log_weights(double* log_w, int n, double share) noexcept nogil:
    """Fixed share of weights held as unnormalised logarithms: log_w <- log((1 - share) w_bar +
    share / n), w_bar the normalised exp(log_w) (softmax_in_place; maximum at most 0 after)."""
    cdef int k
    softmax_in_place(log_w, n)
    for k in range(n):
        log_w[k] = log((1.0 - share) * log_w[k] + share / n)


cdef inline void fixed_share(double* log_w, double* w_bar, int n, double share) noexcept nogil:
    """Fixed share (Herbster & Warmuth 1998) of normalised weights: w_bar <- (1 - share) w_bar +
    share / n, and log_w its logarithm (maximum 0 again)."""
    cdef double top = 0.0
    cdef int k
    for k in range(n):
        w_bar[k] = (1.0 - share) * w_bar[k] + share / n
        if w_bar[k] > top:
            top = w_bar[k]
    for k in range(n):
        log_w[k] = log(w_bar[k] / top)


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
