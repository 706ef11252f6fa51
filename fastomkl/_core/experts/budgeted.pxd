from fastomkl._core.base cimport ExpertBank


cdef class BudgetedExpansion(ExpertBank):
    # LKMBooks' hypotheses: one support set of at most B rows and ONE coefficient vector shared by
    # all kernels, f_k(x) = sum_j alpha_j exp(-gamma_k ||x_j - x||^2).
    cdef readonly double[::1] gamma
    cdef readonly int n_features, loss, budget
    cdef readonly long horizon
    cdef readonly double nu, step_fixed
    cdef readonly bint logistic_step
    cdef readonly double[:, ::1] support      # (B, d)
    cdef readonly double[::1] coef            # (B,)
    cdef readonly long[::1] rows              # [rows in use]
    cdef double[::1] sq                       # scratch: this sample's distances (B,)
