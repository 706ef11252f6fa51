"""LKMBooks' weights over the kernels (Li & Liao, MLJ 2022), with the budgeted expansion of
experts/budgeted.pyx."""
import numpy as np

from fastomkl._core.checks import require_ranges

from fastomkl._core.base cimport FullInformation, Round
from fastomkl._core.losses cimport loss_derivative
from fastomkl._core.numeric cimport finite_round
from fastomkl._core.steps cimport horizon_of
from libc.math cimport sqrt, exp, log, isfinite, INFINITY


cdef class BudgetMixture(FullInformation):
    """LKMBooks' weights over the kernels (full information: every kernel runs every round).

    y_hat = sum_i p_i f_i.  After the label, with g = loss'(y_hat, y) and g_max (initially 1):
    c_i = g (f_i - min_j f_j) / g_max if g > 0, else g (f_i - max_j f_j) / g_max (c_i >= 0);
    p_i <- p_i exp(-eta c_i) normalised, eta = sqrt(8 ln K / T') (T' the horizon, fixed or
    doubling; ``eta_fixed`` > 0 replaces it); then g_max <- max(g_max, max f - min f).
    """

    def __init__(self, int n_experts, int loss, long horizon=0, double eta_fixed=0.0):
        self.n_experts = n_experts
        self.loss = loss
        self.horizon = horizon
        self.eta_fixed = eta_fixed
        self.log_k = log(n_experts)
        self.p = np.full(n_experts, 1.0 / n_experts)
        self.stats = np.array([1.0])
        self.scratch = np.zeros(n_experts)

    def _state_arrays(self):
        return {"p": self.p, "stats": self.stats}

    @staticmethod
    def _upgraded(state):
        """Files written before the admission uniform moved to the expansion kept it as a second
        entry of 'stats' (overwritten before every use): drop it."""
        stats = np.asarray(state.get("stats"))
        if stats.dtype == np.float64 and stats.shape == (2,):
            return {**state, "stats": stats[:1].copy()}
        return state

    def check_state(self, state):
        state = self._upgraded(state)
        FullInformation.check_state(self, state)
        require_ranges(self, state, nonneg=("stats",), probability=("p",))
        if np.asarray(state["stats"])[0] <= 0:
            raise ValueError(f"{type(self).__name__} state 'stats' must hold g_max > 0")

    def set_state(self, state):
        FullInformation.set_state(self, self._upgraded(state))

    def _prediction_arrays(self, twin):
        """Its state arrays, fixed in size (set_state only reads older files' states)."""
        return self._state_arrays(), twin._state_arrays()

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef double y_hat = 0.0
        cdef int j
        for j in range(n_active):
            y_hat += self.p[active[j]] * preds[active[j]]
        return y_hat

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        cdef long t = ctx.t
        cdef double y_hat = ctx.y_hat
        cdef double y = ctx.y
        cdef int K = self.n_experts, i
        cdef double g = loss_derivative(self.loss, y_hat, y), lo = preds[0], hi = preds[0]
        cdef double ref, eta, top, total = 0.0, gmax = self.stats[0]
        if not finite_round(y_hat, g, 0.0):
            self.n_rejected += 1
            return
        for i in range(1, K):
            lo = preds[i] if preds[i] < lo else lo
            hi = preds[i] if preds[i] > hi else hi
        eta = self.eta_fixed
        if eta <= 0.0:
            eta = sqrt(8.0 * self.log_k / <double>horizon_of(self.horizon, 0, t))
        if not isfinite(hi - lo):
            self.n_rejected += 1
            return
        ref = lo if g > 0.0 else hi
        top = -INFINITY                         # in the log domain: no underflow to 0 / 0
        for i in range(K):
            self.scratch[i] = log(self.p[i]) - eta * g * (preds[i] - ref) / gmax
            top = self.scratch[i] if self.scratch[i] > top else top
        if not isfinite(top):
            self.n_rejected += 1
            return
        for i in range(K):
            self.scratch[i] = exp(self.scratch[i] - top)
            total += self.scratch[i]
        for i in range(K):
            self.p[i] = self.scratch[i] / total
        if hi - lo > gmax:
            self.stats[0] = hi - lo
