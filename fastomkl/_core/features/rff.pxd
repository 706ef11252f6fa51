from fastomkl._core.base cimport FeatureBank

cdef class StoredFrequencies(FeatureBank):
    # Frequencies stored (n, n_features, ld) so the projection is a stride-1 axpy over
    # frequencies, each row zero-padded from n_components to ld (float64) or ld32 (float32), a
    # whole number of vectors (FASTOMKL_RFF_ALIGN or _F32).  A stored set (a kernel's
    # frequencies, or a family's base draw) lives in f32 at row32[i], in f64 at row64[i], or
    # both (-1 where absent): a float32 bank computes in float only the kernels whose angles stay
    # within FLOAT32_ANGLE_LIMIT (in_float32, per kernel; see features.pyx).
    cdef double[:, :, ::1] f64
    cdef float[:, :, ::1] f32
    cdef unsigned char[::1] in_float32
    cdef int[::1] row32, row64
    cdef readonly bint single           # dtype "float32" (some kernels may still be float64)
    cdef readonly int n_components, ld, ld32
    cdef double float_safe_x            # |x_j| below which the float path cannot overflow


cdef class RFFBank(StoredFrequencies):
    # Every kernel's own frequencies (n = n_kernels); the public view is (n_kernels,
    # n_components, n_features).
    cdef double scale
    cdef void transform_fitting(self, const double* x, int k, bint fits, double* z) noexcept nogil


cdef class SharedDrawRFFBank(StoredFrequencies):
    # Kernels of one family (same kind and shape parameters) share one base draw: kernel k uses
    # scale[k] * base[family[k]].  The bases are stored as RFFBank stores its frequencies (n =
    # n_families; a family with float and double kernels in both precisions).  The per-sample
    # work holds two projection slots per family (slot 2f in double, 2f + 1 in float, ld
    # doubles' room each), then one "computed" flag per slot, then whether the sample fits the
    # float path.
    cdef readonly long[::1] family
    cdef readonly double[::1] scale
    cdef readonly int n_families
    cdef int flags                      # offset of the "computed" flags in the work (doubles)
    cdef double norm                    # 1 / sqrt(n_components)
    cdef void project(self, const double* x, int f, bint single, bint fits, double factor,
                      double* work, double* z) noexcept nogil


cdef class ConcatenatedFeatures(FeatureBank):
    # All kernels' features of an inner bank as one representation (n_kernels = 1).
    cdef readonly FeatureBank inner
