from fastomkl._core.base cimport ExpertBank


cdef class BudgetedExpansion(ExpertBank):
    # LKMBooks' hypotheses: one support set of at most B rows and ONE coefficient vector shared by
    # all kernels, f_k(x) = sum_j alpha_j exp(-gamma_k ||x_j - x||^2); an ensemble over nu holds
    # one such support and vector per member (member j's rows j B .. j B + B - 1).
    cdef readonly double[::1] gamma
    cdef readonly int n_features, loss, budget, n_kernels, n_members
    cdef readonly long horizon
    cdef readonly double step_fixed
    cdef readonly double[::1] nu              # (n_members,) each member's nu
    cdef readonly bint logistic_step
    cdef readonly double[:, ::1] support      # (n_members * B, d)
    cdef readonly double[::1] coef            # (n_members * B,)
    cdef readonly long[::1] rows              # (n_members,) rows in use
    cdef double[::1] member_y_hat             # (n_members,) the mixture's member predictions
    cdef double[::1] sq                       # scratch: this sample's distances (n_members * B,)
