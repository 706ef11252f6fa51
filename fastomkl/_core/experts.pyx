"""Compiled experts: single-kernel online learners on one representation each."""
import numpy as np

from fastomkl._core.base cimport (ExpertBank, Schedule, schedule_at, loss_value,
                                  loss_derivative)


cdef extern from "fastomkl_kernels.h" nogil:
    double fastomkl_dot(const double *a, const double *b, int n)
    void fastomkl_shrink_axpy(double *theta, const double *z, int n, double shrink, double g,
                              double *norm_before, double *norm_after)


cdef class OGDExperts(ExpertBank):
    """Regularised online gradient descent, one linear model per kernel (Raker's experts).

    learn() returns L_k = loss(f_k, y) + lam * ||theta_k||^2 with theta_k taken before the update
    (the paper), or after it when `regularizer_after_update` (the authors' released code), and
    steps theta_k <- theta_k - eta_t * weight * (loss'(f_k, y) z_k + 2 lam theta_k).
    """

    def __init__(self, int n_experts, int dim, int loss, double lam, double eta_scale,
                 int eta_kind, bint regularizer_after_update=False):
        self.n_experts = n_experts
        self.independent = True
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
        return fastomkl_dot(&self.theta[k, 0], z, self.dim)

    cdef double learn(self, int k, const double* x, const double* z, double f, double y,
                      long t, double weight) noexcept nogil:
        cdef double step = schedule_at(self.eta, t) * weight
        cdef double norm_before, norm_after
        fastomkl_shrink_axpy(&self.theta[k, 0], z, self.dim, 1.0 - 2.0 * step * self.lam,
                             step * loss_derivative(self.loss, f, y), &norm_before, &norm_after)
        if self.regularizer_after_update:
            return loss_value(self.loss, f, y) + self.lam * norm_after
        return loss_value(self.loss, f, y) + self.lam * norm_before
