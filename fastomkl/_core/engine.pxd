from cpython.pythread cimport PyThread_type_lock
from fastomkl._core.base cimport FeatureBank, ExpertBank, Combiner, Round, bitgen_t

cdef class Engine:
    cdef readonly FeatureBank features
    cdef readonly ExpertBank experts
    cdef readonly Combiner combiner
    cdef readonly object bit_generator   # owns the state `round.rng` points into
    cdef Round round                     # the context of the round in progress
    cdef public long t                   # rounds learned so far
    cdef readonly int n_features
    cdef readonly bint standardize_target  # learn (y - mean) / std of the targets seen so far
    cdef readonly bint winsorize_target    # clip far targets (implied by standardize_target)
    cdef readonly bint grows             # a component's arrays grow with the stream
    cdef readonly bint checks_input      # a component refuses some inputs (check_input)
    cdef double[::1] target               # [count, mean, variance] of the (winsorised) targets
    cdef int[::1] active
    cdef double[::1] weight, preds, losses
    cdef double[:, ::1] z
    cdef Py_ssize_t z_stride             # features of kernel k start at z + k * z_stride
    cdef double[::1] work                # the features' per-sample work (FeatureBank.prepare)
    cdef PyThread_type_lock lock         # one round at a time: the scratch above is shared
    cdef int waiting                     # calls blocked on the lock (read by the batch loops)
    cdef int acquire(self) except -1
    cdef void release(self) noexcept
    cdef void let_waiters_run(self) noexcept nogil
    cdef bint needs_room(self) noexcept nogil
    cdef int make_room(self) except -1
    cdef double predict_ptr(self, const double* x) noexcept nogil
    cdef double step_ptr(self, const double* x, double y) noexcept nogil
    cdef double target_scale(self) noexcept nogil
