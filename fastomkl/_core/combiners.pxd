from fastomkl._core.base cimport Combiner, FullInformation, Schedule

cdef class Hedge(FullInformation):
    # Exponential weights over all experts, kept in the log domain; w_bar caches the normalised
    # weights so a prediction is one dot product.
    cdef readonly double[::1] log_w
    cdef readonly double[::1] w_bar
    cdef Schedule eta
    cdef void normalise(self) noexcept nogil
