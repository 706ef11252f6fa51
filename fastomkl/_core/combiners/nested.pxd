from fastomkl._core.base cimport FullInformation


cdef class NestedHedge(FullInformation):
    # Two layers of exponential weights (AdaRaker): per instance i, weights over its kernels'
    # experts k * n_instances + i; over the instances, weights on the loss of each instance's
    # combined prediction.  An instance restarts (its kernel weights uniform again) after every
    # periods[i] rounds; its weight in the second layer carries on.
    cdef readonly int n_kernels
    cdef readonly int n_instances
    cdef readonly double[::1] log_w       # (n_experts,) per instance, maximum 0 over its kernels
    cdef readonly double[::1] w_bar       # (n_experts,) normalised within each instance
    cdef readonly double[::1] log_h       # (n_instances,) maximum 0
    cdef readonly double[::1] h_bar       # (n_instances,) normalised
    cdef readonly double[::1] rates       # (n_instances,) each instance's rate on its kernels
    cdef readonly long[::1] periods       # (n_instances,) restart period, 0: never
    cdef readonly double meta_rate
    cdef readonly double share            # fixed share of the second layer
    cdef readonly int loss
    cdef double[::1] meta_losses          # scratch: each instance's loss this round
    cdef double instance_prediction(self, int i, const double* preds) noexcept nogil
