"""LKMBooks' budgeted kernel expansion (Li & Liao, MLJ 2022): one support set of at most B rows
and one coefficient vector shared by every kernel, weighed by the BudgetMixture combiner
(combiners/budget.pyx)."""
import numpy as np

from fastomkl._core.checks import require_ranges

from fastomkl._core.base cimport ExpertBank, Round
from fastomkl._core.losses cimport LOSS_LOGISTIC, loss_derivative, loss_value
from fastomkl._core.numeric cimport finite_round
from fastomkl._core.steps cimport horizon_of
from libc.math cimport sqrt, pow

cdef extern from "fastomkl_expansion.h" nogil:
    double fastomkl_exp_dot(const double *alpha, const double *v, long n, double g)
    void fastomkl_support_distances(const double *S, const double *x, long n, int d, double *sq,
                                    double *l1, double *dot)


cdef class BudgetedExpansion(ExpertBank):
    """LKMBooks' shared budgeted kernel expansion.

    After the label, with the round's combined prediction y_hat (the mixture's sum_i p_i f_i):
    g = loss'(y_hat, y), P = min(1, B / ((1 - nu) T'^(1 - nu) t^nu)); when the round's uniform
    (one draw every round, at the last kernel's update) is below P and fewer than B rows are
    stored, x_t joins the support with coefficient -lambda g / P, lambda = ``step_fixed`` or
    sqrt((1 + nu) B) / (sqrt(1 - nu) T') (square and absolute losses) or 10 / sqrt(T')
    (``logistic_step``, the logistic code's).  Distances to the support are computed once per
    sample (``prepare``) for every kernel.
    """

    def __init__(self, gamma, int n_features, int loss, int budget, double nu, long horizon=0,
                 double step_fixed=0.0, bint logistic_step=False):
        gamma = np.ascontiguousarray(gamma, dtype=np.float64)
        self.n_experts = gamma.shape[0]
        self.independent = False
        self.gamma = gamma
        self.n_features = n_features
        self.loss = loss
        self.budget = budget
        self.nu = nu
        self.horizon = horizon
        self.step_fixed = step_fixed
        self.logistic_step = logistic_step
        self.support = np.zeros((budget, n_features))
        self.coef = np.zeros(budget)
        self.rows = np.zeros(1, dtype=np.int64)
        self.sq = np.zeros(budget)

    def _state_arrays(self):
        return {"support": self.support, "coef": self.coef, "rows": self.rows}

    def check_state(self, state):
        ExpertBank.check_state(self, state)
        require_ranges(self, state)
        n = int(np.asarray(state["rows"])[0])
        if not 0 <= n <= self.budget:
            raise ValueError(f"{type(self).__name__} state 'rows' must be in 0..{self.budget}, "
                             f"got {n}")

    cdef void prepare(self, const double* x) noexcept nogil:
        cdef long n = self.rows[0]
        if n > 0:
            fastomkl_support_distances(&self.support[0, 0], x, n, self.n_features, &self.sq[0],
                                       NULL, NULL)

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef long n = self.rows[0]
        if n == 0:
            return 0.0
        return fastomkl_exp_dot(&self.coef[0], &self.sq[0], n, self.gamma[k])

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double y = ctx.y, y_hat = ctx.y_hat
        cdef long t = ctx.t
        cdef int i
        cdef long n = self.rows[0]
        cdef double g, P, h, lam, u
        if k == self.n_experts - 1:
            u = ctx.rng.next_double(ctx.rng.state)
            g = loss_derivative(self.loss, y_hat, y)
            if not finite_round(y_hat, g, 0.0):
                self.n_rejected += 1
                return loss_value(self.loss, f, y)
            h = <double>horizon_of(self.horizon, 0, t)
            P = self.budget / ((1.0 - self.nu) * pow(h, 1.0 - self.nu) * pow(<double>t, self.nu))
            P = 1.0 if P > 1.0 else P
            if u < P and n < self.budget:
                lam = self.step_fixed
                if lam <= 0.0:
                    lam = (10.0 / sqrt(h) if self.logistic_step else
                           sqrt((1.0 + self.nu) * self.budget) / (sqrt(1.0 - self.nu) * h))
                for i in range(self.n_features):
                    self.support[n, i] = x[i]
                self.coef[n] = -lam * g / P
                self.rows[0] = n + 1
        return loss_value(self.loss, f, y)
