from fastomkl._core.base cimport FullInformation
from fastomkl._core.steps cimport ChangeTest, Schedule

cdef class Hedge(FullInformation):
    # Exponential weights over all experts, kept in the log domain; w_bar caches the normalised
    # weights so a prediction is one dot product.
    cdef readonly double[::1] log_w
    cdef readonly double[::1] w_bar
    cdef Schedule eta
    cdef readonly double share        # fixed share: the part of the weight spread evenly each round
    cdef readonly ChangeTest change   # its alarms spread change_share of the weight (or None)
    cdef readonly double change_share
    cdef bint update(self, double eta, const int* active, int n_active,
                     const double* losses) noexcept nogil


cdef class ScaledHedge(Hedge):
    # Hedge whose rate is eta over the running variance of the targets.
    cdef readonly double[::1] moments


cdef class DiscountHedge(FullInformation):
    # Hedge with a fixed discount: w_k <- w_k beta^{L_k} (OMKR, RFOMKR), w_1 = 1/N; the prediction
    # uses the normalised weights or, as a legacy option, the raw weights.
    cdef readonly double[::1] log_w
    cdef readonly double log_beta
    cdef readonly bint normalize
    cdef readonly ChangeTest change   # its alarms spread change_share of the weight (or None)
    cdef readonly double change_share
