from fastomkl._core.base cimport ExpertBank
from fastomkl._core.features.dsg cimport BlockFeatures
from fastomkl._core.steps cimport Schedule

cdef class FunctionalSGDExperts(ExpertBank):
    # One output per expert (a class's score, a GP's mean and variance functions) over one
    # BlockFeatures bank; coefficients scale * coef[k, j] for feature j of the committed blocks.
    cdef readonly BlockFeatures bank
    cdef readonly int loss, r, batch_size
    cdef readonly double param, nu
    cdef Schedule eta
    cdef readonly double[::1] step_scales   # output k steps step_scales[k] times the schedule's
    cdef readonly bint weighed           # a step ensemble: learn() returns each output's loss
    cdef readonly bint average, precondition, revisit, operator, nu_fixed
    cdef double[:, ::1] coef, avg        # (n_experts, capacity): true values scale * coef, avg
    cdef double[:, ::1] acc              # (n_experts, r): sum of g z_learnt(x) over the batch
    cdef double[:, ::1] gram             # (r, r): sum of z z^T over the batch (precondition)
    cdef double[::1] reals               # [scale, offset, rows below the offset, theta's scale]
    cdef long long[::1] counts           # [iterations, rows of the batch in progress]
    cdef double[::1] current             # this round's f_t of each output, less the offset
    cdef double[::1] probs               # this round's softmax of `current`
    cdef const double* z0                # this round's features (the bank's view 0)
    cdef double[:, ::1] points           # a GP's test points: targets k(x, point) of outputs 1..
    cdef double[::1] theta               # a GP's variance operator, packed by column
    cdef long theta_size
    cdef double[:, ::1] batch_x, batch_z # a GP operator's batch: rows, features of the new block
    cdef readonly int per_round          # outputs learnt round by round (a GP's mean only)
    cdef readonly int median_rows        # rows that set the bandwidth (0: the kernel's is fixed)
    cdef readonly double median_scale, median_clip
    cdef double[:, ::1] first_x, first_g # those rows and their slopes, until they have come
    cdef long operator_size(self, long blocks) noexcept nogil
    cdef long target_block(self) noexcept nogil
    cdef void softmax(self) noexcept nogil
    cdef void iterate(self) noexcept nogil
    cdef void decide_bandwidth(self) noexcept nogil
    cdef void add_gram(self, const double* z) noexcept nogil
    cdef bint variance_gradients(self, long rows) noexcept nogil
    cdef bint operator_column(self, double gamma, long rows, double* column) noexcept nogil
    cdef void append_column(self, const double* column, double shrink, long width) noexcept nogil
