from cpython.pythread cimport PyThread_type_lock
from fastomkl._core.base cimport FeatureBank, ExpertBank, Combiner, bitgen_t

cdef class Engine:
    cdef readonly FeatureBank features
    cdef readonly ExpertBank experts
    cdef readonly Combiner combiner
    cdef readonly object bit_generator   # owns the state `rng` points into
    cdef bitgen_t* rng
    cdef public long t                   # rounds learned so far
    cdef readonly int n_features
    cdef readonly bint standardize_target  # learn (y - mean) / std of the targets seen so far
    cdef double[::1] target               # [count, mean, variance] of the targets seen
    cdef int[::1] active
    cdef double[::1] weight, preds, losses
    cdef double[:, ::1] z
    cdef Py_ssize_t z_stride             # features of kernel k start at z + k * z_stride
    cdef double[::1] work                # the features' per-sample work (FeatureBank.prepare)
    cdef PyThread_type_lock lock         # one caller at a time: the scratch above is shared
    cdef int acquire(self) except -1
    cdef void release(self) noexcept
    cdef double predict_ptr(self, const double* x) noexcept nogil
    cdef double step_ptr(self, const double* x, double y) noexcept nogil
    cdef double target_scale(self) noexcept nogil
