"""Compiled experts: single-kernel online learners on one representation each."""
import numpy as np

from fastomkl._core.base cimport (ExpertBank, Schedule, schedule_at, loss_value,
                                  loss_derivative)


cdef class OGDExperts(ExpertBank):
    """Regularised online gradient descent, one linear model per kernel (Raker's experts).

    learn() returns L_k = loss(f_k, y) + lam * ||theta_k||^2 with theta_k taken before the update
    (the paper), or after it when `regularizer_after_update` (the authors' released code), and
    steps theta_k <- theta_k - eta_t * weight * (loss'(f_k, y) z_k + 2 lam theta_k).
    """

    def __init__(self, int n_experts, int dim, int loss, double lam, double eta_scale,
                 int eta_kind, bint regularizer_after_update=False):
        self.n_experts = n_experts
        self.dim = dim
        self.loss = loss
        self.lam = lam
        self.eta.scale = eta_scale
        self.eta.kind = eta_kind
        self.regularizer_after_update = regularizer_after_update
        self.theta = np.zeros((n_experts, dim))

    def _state_arrays(self):
        return {"theta": self.theta}

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef const double* th = &self.theta[k, 0]
        cdef double f = 0.0
        cdef int j
        for j in range(self.dim):
            f += th[j] * z[j]
        return f

    cdef double learn(self, int k, const double* x, const double* z, double f, double y,
                      long t, double weight) noexcept nogil:
        cdef double* th = &self.theta[k, 0]
        cdef double step = schedule_at(self.eta, t) * weight
        cdef double g = step * loss_derivative(self.loss, f, y)
        cdef double shrink = 1.0 - 2.0 * step * self.lam
        cdef double norm_before = 0.0, norm_after = 0.0, v
        cdef int j
        for j in range(self.dim):
            v = th[j]
            norm_before += v * v
            v = shrink * v - g * z[j]
            norm_after += v * v
            th[j] = v
        if self.regularizer_after_update:
            return loss_value(self.loss, f, y) + self.lam * norm_after
        return loss_value(self.loss, f, y) + self.lam * norm_before
