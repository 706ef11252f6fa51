from fastomkl._core.base cimport FullInformation


cdef class BudgetMixture(FullInformation):
    # LKMBooks' kernel weights (Li & Liao, MLJ 2022): exponential weights on
    # the linearised losses of the p-mixture, and the round's uniform for the support decision.
    cdef readonly int loss
    cdef readonly long horizon
    cdef readonly double eta_fixed
    cdef readonly double[::1] p
    cdef readonly double[::1] stats           # [g_max]
    cdef double log_k
    cdef double[::1] scratch                  # (K,) log-weights of the update
