from fastomkl._core.base cimport FeatureBank

cdef class RFFBank(FeatureBank):
    # Frequencies of every kernel, stored (n_kernels, n_features, row) so the projection is a
    # stride-1 axpy over frequencies, each row zero-padded from n_components to a whole number of
    # vectors (FASTOMKL_RFF_ALIGN); the public view is (n_kernels, n_components, n_features).
    cdef readonly double[:, :, ::1] weights
    cdef readonly int n_components
    cdef double scale


cdef class ConcatenatedFeatures(FeatureBank):
    # All kernels' features of an inner bank as one representation (n_kernels = 1).
    cdef readonly FeatureBank inner
