"""NORMA (Kivinen, Smola and Williamson, "Online learning with kernels", 2004): functional SGD with
shrinkage on an exact kernel expansion, in the mini-batches of doubly stochastic gradients, of
which it is the exact-kernel counterpart (Dai et al. 2014, section 7)::

    f_t(x_b)  = sum_j a_j k(x_j, x_b)                        (every round of the batch)
    a_j      <- (1 - gamma_t nu) a_j                         (the shrink, lazily in `scale`)
    a_new_b   = -gamma_t / B l'(f_t(x_b), y_b),  x_b joins   (the batch's last round)

The expansion holds at most ``budget`` rows: a new row replaces the oldest (the truncation
NORMA's paper analyses, whose error after tau shrinks is at most prod (1 - gamma nu) of the
dropped terms).  The guards of FunctionalSGDExperts hold: |1 - gamma nu| <= 1 and every new
coefficient within STATE_LIMIT, or the iteration is refused (n_rejected).

A step ensemble (``step_scales``), as DSG's: expert k is the expansion over the same rows whose new
coefficients take the step gamma_t step_scales[k] (the shrink 1 - gamma_t nu, shared by the lazy
scale, stays that of eta), and its loss goes to the combiner that weighs the experts (Hedge).
The kernel values of a sample on the rows are computed once (``prepare``) for every expert; the
experts are learnt in index order (the engine's order for independent experts), the row joining
the batch with expert 0 and the batch ending with the last.
"""
import numpy as np

from fastomkl._core.arrays import at_capacity, rows_in_use
from fastomkl._core.checks import require

from libc.math cimport fabs, isfinite
from libc.string cimport memcpy

from fastomkl._core.base cimport ExpertBank, Round
from fastomkl._core.kernel_rows cimport shift_invariant
from fastomkl._core.losses cimport loss_derivative_with, loss_value_with
from fastomkl._core.numeric cimport STATE_LIMIT
from fastomkl._core.steps cimport schedule_at

cdef double RENORMALISE_BELOW = 1e-100


cdef class NormaExpansion(ExpertBank):
    """NORMA's expansion (see the module docstring); kinds as BlockFeatures' (0 Gaussian,
    1 Laplacian, 2 Cauchy, 3 Matern of 2 nu = matern_df); ``step_scales``: the members of a step
    ensemble (None: one expansion, whose loss is not weighed)."""

    def __init__(self, int kind, int matern_df, double sigma, int n_features, int loss,
                 double param, double nu, double eta, int eta_kind, double eta_decay,
                 int batch_size, int budget, step_scales=None):
        if budget < 1 or batch_size < 1 or not sigma > 0.0:
            raise ValueError("NormaExpansion needs budget >= 1, batch_size >= 1, sigma > 0")
        steps = np.ones(1) if step_scales is None else np.array(step_scales, dtype=np.float64)
        if steps.ndim != 1 or len(steps) == 0 or not (steps > 0).all():
            raise ValueError("step_scales must be a non-empty vector of positive scales")
        self.steps = steps
        self.weighed = step_scales is not None
        self.n_experts = self.per_kernel = len(steps)
        self.independent = True
        # The rows held grow with the stream up to the budget (in arrays allocated at capacity,
        # so there is never room to make): the engine then asks admit() before each call.
        self.grows = True
        self.kind, self.matern_df, self.sigma = kind, matern_df, sigma
        self.n_features, self.loss, self.param, self.nu = n_features, loss, param, nu
        self.eta.scale, self.eta.kind, self.eta.decay = eta, eta_kind, eta_decay
        self.batch_size, self.budget = batch_size, budget
        self.support = np.zeros((budget, n_features))
        self.coef = np.zeros((budget, self.n_experts))
        self.values = np.zeros(budget)
        self.pending_x = np.zeros((batch_size, n_features))
        self.pending_g = np.zeros((batch_size, self.n_experts))
        self.reals = np.ones(1)
        self.counts = np.zeros(4, dtype=np.int64)

    cdef void prepare(self, const double* x) noexcept nogil:
        """The kernel values of x on the rows held, once per sample for every expert."""
        cdef long j
        for j in range(self.counts[2]):
            self.values[j] = shift_invariant(self.kind, self.matern_df, self.sigma,
                                             &self.support[j, 0], x, self.n_features)

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef long j, n = self.counts[2]
        cdef double f = 0.0
        for j in range(n):
            f += self.coef[j, k] * self.values[j]
        return self.reals[0] * f

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef long rows = self.counts[1]
        if k == 0:
            memcpy(&self.pending_x[rows, 0], x, self.n_features * sizeof(double))
        self.pending_g[rows, k] = loss_derivative_with(self.loss, f, ctx.y, self.param)
        if k == self.n_experts - 1:
            self.counts[1] = rows + 1
            if ctx.t % self.batch_size == 0:
                self.iterate()
        # only a step ensemble's combiner weighs the experts by their losses
        return loss_value_with(self.loss, f, ctx.y, self.param) if self.weighed else 0.0

    cdef void iterate(self) noexcept nogil:
        cdef long iteration = self.counts[0] + 1, rows = self.counts[1], b, j, slot
        cdef int k, m = self.n_experts
        cdef double gamma = schedule_at(self.eta, iteration), shrink = 1.0 - gamma * self.nu
        cdef double scale = self.reals[0] * shrink
        cdef bint ok = fabs(shrink) <= 1.0 and isfinite(gamma)
        for b in range(rows):
            for k in range(m):
                ok = ok and (fabs(gamma * self.steps[k] / rows * self.pending_g[b, k])
                             <= STATE_LIMIT)
        self.counts[1] = 0
        if not ok:
            self.n_rejected += 1
            return
        if shrink == 0.0 or fabs(scale) < RENORMALISE_BELOW:
            for j in range(self.counts[2]):
                for k in range(m):
                    self.coef[j, k] *= scale
            scale = 1.0
        for b in range(rows):
            if self.counts[2] < self.budget:            # a free slot after the held rows
                slot = (self.counts[3] + self.counts[2]) % self.budget
                self.counts[2] += 1
            else:                                       # the oldest row makes way
                slot = self.counts[3]
                self.counts[3] = (self.counts[3] + 1) % self.budget
            memcpy(&self.support[slot, 0], &self.pending_x[b, 0],
                   self.n_features * sizeof(double))
            for k in range(m):
                self.coef[slot, k] = -gamma * self.steps[k] / rows * self.pending_g[b, k] / scale
        self.reals[0] = scale
        self.counts[0] = iteration

    @property
    def n_support(self):
        return int(self.counts[2])

    @property
    def iterations(self):
        return int(self.counts[0])

    @property
    def budget_reached(self):
        """True once the expansion holds ``budget`` rows: each new row then replaces the oldest."""
        return self.counts[2] >= self.budget

    def admit(self, long n_more):
        """Warns once (``BudgetWarning``) when the call of n_more rounds fills the budget (the
        rows of the batches those rounds complete join the expansion)."""
        cdef long joining = (self.counts[1] + n_more) // self.batch_size * self.batch_size
        if not self.warned and self.counts[2] + joining >= self.budget:
            self.budget_warning(f"NORMA's expansion reaches its budget of {self.budget} rows: "
                                f"from then on each new row replaces the oldest (the "
                                f"truncation, so memory and the cost per sample stay flat)")

    def _state_arrays(self):
        return {"support": self.support, "coef": self.coef, "pending_x": self.pending_x,
                "pending_g": self.pending_g, "reals": self.reals, "counts": self.counts}

    # The arrays are allocated at capacity (budget rows, batch_size pending rows); a state holds
    # the rows in use only, so a model with a large budget writes a file of the rows it has
    # (files written before held the spare zero rows too, and load as well, as do the files of
    # one expansion written before the ensemble, whose coef and pending_g were vectors).
    _HELD = {"support": 2, "coef": 2, "pending_x": 1, "pending_g": 1}      # name -> counts index

    def _prediction_arrays(self, NormaExpansion twin):
        """prepare and predict read the rows held, their coefficients, the scale and the counts
        (the batch's pending rows and slopes only matter to learning); the arrays are allocated
        at capacity, so the twin's are the same size."""
        return ({"support": self.support, "coef": self.coef, "reals": self.reals,
                 "counts": self.counts},
                {"support": twin.support, "coef": twin.coef, "reals": twin.reals,
                 "counts": twin.counts})

    def _stored_arrays(self):
        live = self._state_arrays()
        for name, count in self._HELD.items():
            live[name] = rows_in_use(live[name], [0], [self.counts[count]])
        return live

    def check_state(self, state):
        ExpertBank.check_state(self, self._at_capacity(state))

    def set_state(self, state):
        ExpertBank.set_state(self, self._at_capacity(state))
        self.warned = self.budget_reached

    def _at_capacity(self, state):
        """`state` with its rows in use padded with zeros to the arrays' capacity (a state of
        another shape is left to check_state to refuse)."""
        counts = np.asarray(state.get("counts"))
        if counts.shape != (4,) or counts.dtype != np.int64:
            return state
        state = dict(state)
        live = self._state_arrays()
        for name, count in self._HELD.items():
            value, capacity = np.asarray(state.get(name)), np.asarray(live[name]).shape
            if value.ndim == 1 and capacity[1:] == (1,):     # one expansion's vector
                value = state[name] = value[:, None]
            padded = at_capacity(value, capacity, [0], [counts[count]])
            if padded is not None:
                state[name] = padded
        return state

    def _check_semantics(self, state):
        iterations, rows, held, head = state["counts"].tolist()
        require(iterations >= 0 and 0 <= rows < self.batch_size and 0 <= held <= self.budget
                and 0 <= head < self.budget and (held == self.budget or head == 0), self,
                "counts must be [iterations, rows < batch_size, rows held <= budget, head]")
        require(RENORMALISE_BELOW <= abs(state["reals"][0]) <= 1.0, self,
                "the lazy scale must have magnitude in [1e-100, 1]")
        require(np.abs(state["coef"]).max(initial=0.0) * abs(state["reals"][0]) <= STATE_LIMIT,
                self, f"coefficients must stay within {STATE_LIMIT:g}")
