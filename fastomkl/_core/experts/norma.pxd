from fastomkl._core.base cimport ExpertBank
from fastomkl._core.steps cimport Schedule

cdef class NormaExpansion(ExpertBank):
    # One exact kernel expansion f = scale * sum_j coef[j] k(support[j], .) over at most
    # `budget` rows, kept as a ring (the oldest at `head`), learnt by NORMA's shrinking steps.
    cdef readonly int kind, matern_df, loss, batch_size, budget, n_features
    cdef readonly double sigma, param, nu
    cdef Schedule eta
    cdef double[:, ::1] support, pending_x     # (budget, d) ring; (batch, d) the batch's rows
    cdef double[:, ::1] coef, pending_g        # (budget, experts); (batch, experts) the slopes
    cdef readonly double[::1] steps            # each expert's scale of the step
    cdef double[::1] values                    # scratch: this sample's kernel values on the rows
    cdef bint weighed                          # a step ensemble: learn returns the loss
    cdef double[::1] reals                     # [scale]
    cdef long long[::1] counts                 # [iterations, batch rows, rows held, head]
    cdef void iterate(self) noexcept nogil
