from fastomkl._core.base cimport FeatureBank

cdef class RFFBank(FeatureBank):
    # Frequencies of every kernel, stored (n_kernels, n_features, row) so the projection is a
    # stride-1 axpy over frequencies, each row zero-padded from n_components to a whole number of
    # vectors (FASTOMKL_RFF_ALIGN, or _F32 in float32); the public view is (n_kernels,
    # n_components, n_features).  One of w64 / w32 holds them, as the bank's dtype says.
    cdef double[:, :, ::1] w64
    cdef float[:, :, ::1] w32
    cdef readonly bint single           # float32 frequencies
    cdef readonly int n_components
    cdef double scale
    cdef double float_safe_x            # float32: |x_j| below which float cannot overflow
    cdef _padded(self)
    cdef void transform_float(self, const double* x, int k, bint fits, double* z) noexcept nogil


cdef class SharedDrawRFFBank(FeatureBank):
    # Kernels of one family (same kind and shape parameters) share one base draw: kernel k uses
    # scale[k] * base[family[k]].  The bases are stored as RFFBank stores its weights,
    # (n_families, n_features, ld), rows zero-padded to whole vectors.  The per-sample work holds
    # each family's projection (ld values of the bank's dtype) and then one "computed" flag per
    # family.
    # One of b64 / b32 holds the bases (float32 banks keep their projections in float too).
    cdef double[:, :, ::1] b64
    cdef float[:, :, ::1] b32
    cdef readonly bint single
    cdef readonly long[::1] family
    cdef readonly double[::1] scale
    cdef readonly int n_components, n_families, ld
    cdef int flags                      # offset of the "computed" flags in the work (doubles)
    cdef double norm                    # 1 / sqrt(n_components)
    cdef double float_safe_x            # float32: |x_j| below which float cannot overflow
    cdef _padded(self)
    cdef void project(self, const double* x, int f, double factor, double* work,
                      double* z) noexcept nogil


cdef class ConcatenatedFeatures(FeatureBank):
    # All kernels' features of an inner bank as one representation (n_kernels = 1).
    cdef readonly FeatureBank inner
