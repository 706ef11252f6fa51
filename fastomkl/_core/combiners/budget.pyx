"""LKMBooks' weights over the kernels (Li & Liao, MLJ 2022), with the budgeted expansion of
experts/budgeted.pyx; and an ensemble of LKMBooks over a grid of nu under a meta-learner."""
import numpy as np

from fastomkl._core.checks import require_ranges

from fastomkl._core.base cimport FullInformation, Round
from fastomkl._core.combiners.meta cimport MetaLearner
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

    An ensemble of ``n_members`` LKMBooks (experts j K .. j K + K - 1 are member j's kernels, on
    its own support, experts/budgeted.pyx): each member has its own p and g_max and learns as
    above on its own mixture y_hat_j (``member_y_hat``, which its expansion reads too); ``top``
    (a meta-learner of n_members experts, ML-Poly) mixes the y_hat_j into the prediction.
    """

    def __init__(self, int n_kernels, int loss, long horizon=0, double eta_fixed=0.0,
                 int n_members=1, MetaLearner top=None):
        if n_members < 1 or (n_members > 1) != (top is not None):
            raise ValueError("BudgetMixture needs a top combiner exactly when it has more than "
                             "one member")
        if top is not None and top.n_experts != n_members:
            raise ValueError(f"the top combiner mixes {top.n_experts} experts, not the "
                             f"{n_members} members")
        self.n_kernels = n_kernels
        self.n_members = n_members
        self.n_experts = n_kernels * n_members
        self.loss = loss
        self.horizon = horizon
        self.eta_fixed = eta_fixed
        self.log_k = log(n_kernels)
        self.p = np.full(self.n_experts, 1.0 / n_kernels)
        self.stats = np.ones(n_members)
        self.scratch = np.zeros(n_kernels)
        self.member_y_hat = np.zeros(n_members)
        self.members = np.arange(n_members, dtype=np.int32)
        self.no_losses = np.zeros(n_members)
        self.top = top

    def _state_arrays(self):
        state = {"p": self.p, "stats": self.stats}
        if self.top is not None:
            state.update({"top_" + name: value
                          for name, value in self.top._state_arrays().items()})
        return state

    @staticmethod
    def _upgraded(state):
        """Files written before the admission uniform moved to the expansion kept it as a second
        entry of 'stats' (overwritten before every use): drop it (one member only)."""
        stats = np.asarray(state.get("stats"))
        if (stats.dtype == np.float64 and stats.shape == (2,)
                and not any(name.startswith("top_") for name in state)):
            return {**state, "stats": stats[:1].copy()}
        return state

    def check_state(self, state):
        state = self._upgraded(state)
        FullInformation.check_state(self, state)
        own = {name: state[name] for name in ("p", "stats")}
        require_ranges(self, own, nonneg=("stats",))
        for j, p in enumerate(np.asarray(state["p"]).reshape(self.n_members, self.n_kernels)):
            require_ranges(self, {f"p of member {j}": p}, probability=(f"p of member {j}",))
        if (np.asarray(state["stats"]) <= 0).any():
            raise ValueError(f"{type(self).__name__} state 'stats' must hold g_max > 0")
        if self.top is not None:
            self.top.check_state({"n_rejected": np.array(0, dtype=np.int64),
                                  **{name[4:]: value for name, value in state.items()
                                     if name.startswith("top_")}})

    def set_state(self, state):
        FullInformation.set_state(self, self._upgraded(state))

    def _prediction_arrays(self, twin):
        """Its state arrays, fixed in size (set_state only reads older files' states)."""
        return self._state_arrays(), twin._state_arrays()

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef double y_hat
        cdef int j, i, K = self.n_kernels
        for j in range(self.n_members):         # full information: every expert is active
            y_hat = 0.0
            for i in range(j * K, (j + 1) * K):
                y_hat += self.p[i] * preds[i]
            self.member_y_hat[j] = y_hat
        if self.n_members == 1:
            return self.member_y_hat[0]
        return self.top.combine(&self.members[0], self.n_members, &self.member_y_hat[0])

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        cdef int j
        if self.n_members == 1:
            self.learn_member(0, ctx.t, ctx.y_hat, ctx.y, preds)
            return
        for j in range(self.n_members):
            self.learn_member(j, ctx.t, self.member_y_hat[j], ctx.y, preds + j * self.n_kernels)
        self.top.learn(ctx, &self.members[0], self.n_members, &self.member_y_hat[0],
                       &self.no_losses[0])
        self.n_rejected += self.top.n_rejected       # one counter for the model
        self.top.n_rejected = 0

    cdef void learn_member(self, int j, long t, double y_hat, double y,
                           const double* preds) noexcept nogil:
        """Member j's weights (p[j K:(j + 1) K], g_max stats[j]) from its kernels' predictions."""
        cdef int K = self.n_kernels, i
        cdef double* p = &self.p[j * K]
        cdef double g = loss_derivative(self.loss, y_hat, y), lo = preds[0], hi = preds[0]
        cdef double ref, eta, top, total = 0.0, gmax = self.stats[j]
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
            self.scratch[i] = log(p[i]) - eta * g * (preds[i] - ref) / gmax
            top = self.scratch[i] if self.scratch[i] > top else top
        if not isfinite(top):
            self.n_rejected += 1
            return
        for i in range(K):
            self.scratch[i] = exp(self.scratch[i] - top)
            total += self.scratch[i]
        for i in range(K):
            p[i] = self.scratch[i] / total
        if hi - lo > gmax:
            self.stats[j] = hi - lo
