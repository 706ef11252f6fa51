from fastomkl._core.base cimport FullInformation

cdef class PolynomialWeights(FullInformation):
    # ML-Poly: each expert's regret to the mixture on the linearised loss and its sum of squares;
    # w_bar caches the normalised weights so a prediction is one dot product.
    cdef readonly double[::1] regret
    cdef readonly double[::1] squares
    cdef readonly double[::1] w_bar
    cdef readonly int loss            # the loss whose gradient at the mixture linearises a round
    cdef readonly double param        # its parameter (Huber's threshold, the quantile level, ...)
    cdef void reweigh(self) noexcept nogil
