"""LKMBooks' budgeted kernel expansion (Li & Liao, MLJ 2022): one support set of at most B rows
and one coefficient vector shared by every kernel, weighed by the BudgetMixture combiner
(combiners/budget.pyx)."""
import numpy as np

from fastomkl._core.arrays import at_capacity, rows_in_use
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

    `nu` a sequence: an ensemble, one member per value (experts j K .. j K + K - 1 are member
    j's kernels, on its own support and coefficients, each drawing its own uniform in turn);
    member j learns on its own mixture's y_hat_j, read from `member_y_hat` (the BudgetMixture's,
    filled as it combines).
    """

    def __init__(self, gamma, int n_features, int loss, int budget, nu, long horizon=0,
                 double step_fixed=0.0, bint logistic_step=False, member_y_hat=None):
        gamma = np.ascontiguousarray(gamma, dtype=np.float64)
        nu = np.array(nu, dtype=np.float64, ndmin=1)
        self.n_kernels = gamma.shape[0]
        self.n_members = nu.shape[0]
        self.n_experts = self.n_kernels * self.n_members
        self.independent = False
        self.gamma = gamma
        self.n_features = n_features
        self.loss = loss
        self.budget = budget
        self.nu = nu
        self.horizon = horizon
        self.step_fixed = step_fixed
        self.logistic_step = logistic_step
        self.support = np.zeros((self.n_members * budget, n_features))
        self.coef = np.zeros(self.n_members * budget)
        self.rows = np.zeros(self.n_members, dtype=np.int64)
        self.sq = np.zeros(self.n_members * budget)
        if member_y_hat is None:
            if self.n_members > 1:
                raise ValueError("an ensemble's expansion learns on its members' predictions: "
                                 "pass the mixture's member_y_hat")
            member_y_hat = np.zeros(1)          # one member learns on the round's y_hat
        self.member_y_hat = member_y_hat
        if self.member_y_hat.shape[0] != self.n_members:
            raise ValueError(f"{self.n_members} member predictions expected, got "
                             f"{self.member_y_hat.shape[0]}")

    def _state_arrays(self):
        return {"support": self.support, "coef": self.coef, "rows": self.rows}

    def _prediction_arrays(self, BudgetedExpansion twin):
        """prepare and predict read the rows held and their coefficients; the arrays are
        allocated at capacity, so the twin's are the same size."""
        return self._state_arrays(), twin._state_arrays()

    def _stored_arrays(self):
        """The rows in use only, member after member (a support of B = 10^6 rows, or four, that
        has taken 20 would otherwise be written as hundreds of MB of zeros)."""
        live = self._state_arrays()
        rows = np.asarray(self.rows).tolist()
        for name in ("support", "coef"):
            live[name] = rows_in_use(live[name], self._starts(), rows)
        return live

    def _starts(self):
        return range(0, self.n_members * self.budget, self.budget)

    def check_state(self, state):
        self._check_rows(state)
        state = self._at_capacity(state)
        ExpertBank.check_state(self, state)
        require_ranges(self, state)

    def set_state(self, state):
        self._check_rows(state)
        ExpertBank.set_state(self, self._at_capacity(state))

    @property
    def budget_reached(self):
        """True once a learner's support holds B rows: it admits no more.  (Its arrays hold B
        rows from the start, so nothing grows to warn of: the attribute says it.)"""
        return bool(np.max(self.rows) >= self.budget)

    def _check_rows(self, state):
        rows = np.asarray(state.get("rows"))
        if rows.shape != (self.n_members,) or rows.dtype != np.int64:
            raise ValueError(f"{type(self).__name__} state 'rows' must be int64 with shape "
                             f"({self.n_members},), got {rows.dtype} {rows.shape}")
        if not ((0 <= rows) & (rows <= self.budget)).all():
            raise ValueError(f"{type(self).__name__} state 'rows' must be in 0..{self.budget}, "
                             f"got {rows.tolist()}")

    def _at_capacity(self, state):
        """`state` with each member's rows in use (``_stored_arrays``') put back in its block of
        the arrays at capacity; a state at capacity already (files written before held the
        spare zero rows too), or of another shape for check_state to refuse, is left as it is."""
        rows = np.asarray(state["rows"]).tolist()
        capacity = self.n_members * self.budget
        support = at_capacity(state.get("support"), (capacity, self.n_features), self._starts(),
                              rows)
        coef = at_capacity(state.get("coef"), (capacity,), self._starts(), rows)
        if support is None or coef is None:
            return state
        return {**state, "support": support, "coef": coef}

    cdef void prepare(self, const double* x) noexcept nogil:
        cdef int j
        cdef long start
        for j in range(self.n_members):
            start = <long>j * self.budget
            if self.rows[j] > 0:
                fastomkl_support_distances(&self.support[start, 0], x, self.rows[j],
                                           self.n_features, &self.sq[start], NULL, NULL)

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef int j = k // self.n_kernels
        cdef long n = self.rows[j], start = <long>j * self.budget
        if n == 0:
            return 0.0
        return fastomkl_exp_dot(&self.coef[start], &self.sq[start], n,
                                self.gamma[k - j * self.n_kernels])

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double y = ctx.y
        cdef long t = ctx.t
        cdef int i, j = k // self.n_kernels
        cdef long n = self.rows[j], row = <long>j * self.budget + self.rows[j]
        cdef double g, P, h, lam, u, nu = self.nu[j]
        cdef double y_hat = ctx.y_hat if self.n_members == 1 else self.member_y_hat[j]
        if k - j * self.n_kernels == self.n_kernels - 1:
            u = ctx.rng.next_double(ctx.rng.state)
            g = loss_derivative(self.loss, y_hat, y)
            if not finite_round(y_hat, g, 0.0):
                self.n_rejected += 1
                return loss_value(self.loss, f, y)
            h = <double>horizon_of(self.horizon, 0, t)
            P = self.budget / ((1.0 - nu) * pow(h, 1.0 - nu) * pow(<double>t, nu))
            P = 1.0 if P > 1.0 else P
            if u < P and n < self.budget:
                lam = self.step_fixed
                if lam <= 0.0:
                    lam = (10.0 / sqrt(h) if self.logistic_step else
                           sqrt((1.0 + nu) * self.budget) / (sqrt(1.0 - nu) * h))
                for i in range(self.n_features):
                    self.support[row, i] = x[i]
                self.coef[row] = -lam * g / P
                self.rows[j] = n + 1
        return loss_value(self.loss, f, y)
