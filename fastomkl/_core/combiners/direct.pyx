"""Combiners of models whose experts are outputs, not competitors: every expert runs every round,
and the prediction reads them directly (no weights, nothing learnt)."""
from fastomkl._core.base cimport FullInformation, Round, run_first


cdef class FirstOutput(FullInformation):
    """y_hat = f_0; the first ``n_active`` experts run each round (all by default: a GP whose
    variance functions learn at the end of each iteration runs only its mean)."""

    def __init__(self, int n_experts, int n_active=0):
        self.n_experts = n_experts
        self.n_active = n_experts if n_active <= 0 else min(n_active, n_experts)

    cdef int select(self, Round* ctx, int* active, double* weight) noexcept nogil:
        return run_first(self.n_active, active, weight)

    cdef int select_predict(self, int* active) noexcept nogil:
        return run_first(self.n_active, active, NULL)

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        return preds[0]


cdef class BestOutput(FullInformation):
    """y_hat = argmax_k f_k, the first of ties (as numpy.argmax)."""

    def __init__(self, int n_experts):
        self.n_experts = n_experts

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef int k, best = 0
        for k in range(1, self.n_experts):
            if preds[k] > preds[best]:
                best = k
        return best
