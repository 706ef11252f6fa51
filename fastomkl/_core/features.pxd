from fastomkl._core.base cimport FeatureBank

cdef class RFFBank(FeatureBank):
    # Frequencies of every kernel, stored (n_kernels, n_features, row) so the projection is a
    # stride-1 axpy over frequencies, each row zero-padded from n_components to a whole number of
    # vectors (FASTOMKL_RFF_ALIGN); the public view is (n_kernels, n_components, n_features).
    cdef readonly double[:, :, ::1] weights
    cdef readonly int n_components
    cdef double scale


cdef class SharedDrawRFFBank(FeatureBank):
    # Kernels of one family (same kind and shape parameters) share one base draw: kernel k uses
    # scale[k] * base[family[k]].  The bases are stored as RFFBank stores its weights,
    # (n_families, n_features, ld), rows zero-padded to whole vectors.  The per-sample work holds
    # each family's projection (ld values) and then one "computed" flag per family.
    cdef readonly double[:, :, ::1] base
    cdef readonly long[::1] family
    cdef readonly double[::1] scale
    cdef readonly int n_components, n_families, ld
    cdef double norm                    # 1 / sqrt(n_components)


cdef class ConcatenatedFeatures(FeatureBank):
    # All kernels' features of an inner bank as one representation (n_kernels = 1).
    cdef readonly FeatureBank inner
