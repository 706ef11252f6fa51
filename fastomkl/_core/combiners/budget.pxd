from fastomkl._core.base cimport FullInformation
from fastomkl._core.combiners.meta cimport MetaLearner


cdef class BudgetMixture(FullInformation):
    # LKMBooks' kernel weights (Li & Liao, MLJ 2022): exponential weights on the linearised losses
    # of the p-mixture, one set per member of an ensemble over nu, the members mixed by `top`.
    cdef readonly int loss
    cdef readonly long horizon
    cdef readonly double eta_fixed
    cdef readonly int n_kernels, n_members
    cdef readonly double[::1] p               # (n_members * n_kernels,) each member's weights
    cdef readonly double[::1] stats           # (n_members,) each member's g_max
    cdef readonly double[::1] member_y_hat    # (n_members,) this round's member predictions
    cdef readonly MetaLearner top             # the members' combiner (None for one member)
    cdef double log_k
    cdef double[::1] scratch                  # (K,) log-weights of the update
    cdef int[::1] members                     # (n_members,) 0 .. n_members - 1, the top's active
    cdef double[::1] no_losses                # (n_members,) the top's losses (it reads none)
    cdef void learn_member(self, int j, long t, double y_hat, double y,
                           const double* preds) noexcept nogil
