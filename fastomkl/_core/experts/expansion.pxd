from fastomkl._core.base cimport ExpertBank
from fastomkl._core.steps cimport Schedule

cdef class KernelExpansionExperts(ExpertBank):
    # One exact kernel expansion f_k(x) = sum_tau alpha[k, tau] k_k(x, x_tau) per expert over a
    # shared, growing support set (one row per learning round).
    cdef readonly int[::1] kinds
    cdef readonly double[::1] gamma, coef0
    cdef readonly int[::1] degree
    cdef readonly double[:, ::1] support
    cdef readonly double[:, ::1] alpha
    cdef readonly double[::1] grad_sq        # AdaGrad-norm accumulators (ADAGRAD schedule)
    cdef readonly long[::1] info              # [n_support, round of the last appended row]
    cdef readonly long budget                 # most rows kept (0: unbounded)
    cdef readonly long[::1] oldest            # [the row the next round overwrites once full]
    cdef long row                             # the row of the current round
    cdef readonly int n_features, loss
    cdef readonly double grad_scale
    cdef Schedule eta
    cdef double[::1] sq, l1, dot              # scratch: this sample's distances to the support
    cdef bint has_sq, has_l1, has_dot
    # A step ensemble (SCHEDULE_ENSEMBLE): expert k * m + s is member s of kernel k, with the
    # constant step steps[s]; the members of a kernel share its kernel values on the support,
    # computed once per sample into `values` (of kernel `values_kernel`, -1: none yet)
    cdef readonly double[::1] steps
    cdef double[::1] values
    cdef int values_kernel
    cdef void kernel_values(self, int kernel) noexcept nogil
    cdef double self_kernel(self, int kernel, const double* x) noexcept nogil
