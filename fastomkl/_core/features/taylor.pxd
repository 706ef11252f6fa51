from fastomkl._core.base cimport FeatureBank

cdef class TaylorBank(FeatureBank):
    # Tables of the compact Taylor basis (graded order, see taylor.pyx), shared by all kernels:
    # feature j > 0 is feature parent[j] times x[var[j]] times coef[k, j].
    cdef readonly int degree
    cdef int[::1] parent
    cdef int[::1] var
    cdef double[:, ::1] coef                # (n_kernels, n_outputs): 1 / (sigma_k sqrt(exponent))
    cdef double[::1] half_inv_var           # (n_kernels,): 1 / (2 sigma_k^2)
