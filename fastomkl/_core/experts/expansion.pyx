"""Exact kernel expansions as experts (OMKR, single-kernel online regression: RBF-1, POLY-2).

Expert k predicts f_k(x) = sum_tau alpha[k, tau] k_k(x, x_tau) over every sample learnt so far and
learns by a functional gradient step: the sample is appended to the support with
alpha[k, t] = -eta_t * weight * grad_scale * loss'(f_k, y); with the ADAGRAD schedule eta_t is the
AdaGrad-norm step of ``OGDExperts`` (accumulator, truncation), on the squared RKHS norm
weight (grad_scale loss')^2 k_k(x_t, x_t) of the gradient.

Step ensemble.  With ``steps`` (m constant steps) each kernel has m experts, expert k * m + s
learning with the step steps[s] as Raker's members do (``OGDStepEnsemble``): on loss' itself,
alpha = -s loss', the step s = steps[s] * weight truncated at the minimiser of the loss along it
(the squared loss: onto y).  The members of a kernel share its kernel values on the support,
computed once per sample.  The support is shared by all experts,
and the distances of x to it are computed once per sample for every expert (``prepare``).  The
arrays double when full (the engine asks ``needs_room`` before each round).

Budget.  With ``budget`` B > 0 the support holds at most B rows: once it is full, the row of each
new round overwrites the oldest one (its coefficients go, for every expert), so the expansion is
the sum over the B most recent rounds -- NORMA's truncation (Kivinen, Smola & Williamson 2004)
without the decay.  Memory and the cost of a round stay O(B (d + n_experts)) for ever.  The rows
live in a ring (``oldest``: the slot the next round overwrites); a prediction sums them in slot
order.  B = 0: unbounded, one row per round for ever.

Kernels: kind 0 exp(-gamma ||x - x'||^2), kind 1 exp(-gamma ||x - x'||_1),
kind 2 (gamma x.x' + coef0)^degree.
"""
import numpy as np

from fastomkl._core.inputs import MAX_ABS_INPUT

from fastomkl._core.base cimport ExpertBank, Round
from fastomkl._core.losses cimport loss_derivative, loss_value, reach_factor
from fastomkl._core.numeric cimport STATE_LIMIT
from fastomkl._core.steps cimport (SCHEDULE_ADAGRAD, SCHEDULE_ENSEMBLE, Schedule, adagrad_step,
                                   schedule_at, truncated_step)
from libc.math cimport exp, fabs, pow
from libc.string cimport memcpy

cdef extern from "fastomkl_expansion.h" nogil:
    double fastomkl_exp_dot(const double *alpha, const double *v, long n, double g)
    void fastomkl_exp_values(const double *v, long n, double g, double *out)
    void fastomkl_support_distances(const double *S, const double *x, long n, int d, double *sq,
                                    double *l1, double *dot)

cdef extern from "fastomkl_kernels.h" nogil:
    double fastomkl_dot(const double *a, const double *b, int n)

KIND_GAUSSIAN = 0
KIND_LAPLACIAN = 1
KIND_POLYNOMIAL = 2
cdef enum: KIND_POLYNOMIAL_C = 2


cdef class KernelExpansionExperts(ExpertBank):
    """Kernel-expansion experts over a shared growing support set (see the module docstring)."""

    def __init__(self, kinds, gamma, int n_features, int loss, double eta_scale, int eta_kind,
                 double grad_scale=1.0, degree=None, coef0=None, int capacity=256,
                 long budget=0, steps=None):
        if budget < 0:
            raise ValueError(f"budget must be >= 0 (0: unbounded), got {budget}")
        kinds = np.ascontiguousarray(kinds, dtype=np.intc)
        n = kinds.shape[0]
        if steps is not None:
            steps = np.ascontiguousarray(steps, dtype=np.float64)
            if steps.ndim != 1 or len(steps) == 0 or not (steps > 0).all():
                raise ValueError("steps must be a non-empty vector of positive steps")
            eta_kind = SCHEDULE_ENSEMBLE
        self.steps = np.ones(1) if steps is None else steps
        self.per_kernel = 1 if steps is None else len(steps)
        self.values_kernel = -1
        self.n_experts = n * self.per_kernel
        self.kinds = kinds
        self.gamma = np.ascontiguousarray(gamma, dtype=np.float64).reshape(n)
        self.degree = np.ascontiguousarray(np.full(n, 2) if degree is None else degree,
                                           dtype=np.intc).reshape(n)
        self.coef0 = np.ascontiguousarray(np.zeros(n) if coef0 is None else coef0,
                                          dtype=np.float64).reshape(n)
        self.n_features = n_features
        self.loss = loss
        self.eta.scale = eta_scale
        self.eta.kind = eta_kind
        self.grad_scale = grad_scale
        self.has_sq = bool((kinds == KIND_GAUSSIAN).any())
        self.has_l1 = bool((kinds == KIND_LAPLACIAN).any())
        self.has_dot = bool((kinds == KIND_POLYNOMIAL).any())
        self.info = np.zeros(2, dtype=np.int64)
        self.grad_sq = np.zeros(n if eta_kind == SCHEDULE_ADAGRAD else 0)
        self.grows = True
        self.budget = budget
        self.oldest = np.zeros(1, dtype=np.int64)
        self.warned = False
        self._allocate(max(min(capacity, budget) if budget > 0 else capacity, 1))

    def _allocate(self, int capacity):
        n_support = int(self.info[0])
        support = np.zeros((capacity, self.n_features))
        alpha = np.zeros((self.n_experts, capacity))
        if n_support:
            support[:n_support] = np.asarray(self.support)[:n_support]
            alpha[:, :n_support] = np.asarray(self.alpha)[:, :n_support]
        self.support = support
        self.alpha = alpha
        self.sq = np.zeros(capacity)
        self.l1 = np.zeros(capacity)
        self.dot = np.zeros(capacity)
        self.values = np.zeros(capacity if self.per_kernel > 1 else 0)

    @property
    def capacity(self):
        return self.support.shape[0]

    def _prediction_arrays(self, KernelExpansionExperts twin):
        """predict reads the support rows, their coefficients and the row count (the AdaGrad
        sums and the budget's oldest row only matter to learning)."""
        if twin.capacity != self.capacity:
            twin._allocate(self.capacity)
        return ({"info": self.info, "support": self.support, "alpha": self.alpha},
                {"info": twin.info, "support": twin.support, "alpha": twin.alpha})

    @property
    def n_support(self):
        return int(self.info[0])

    @property
    def budget_reached(self):
        """True once the support holds ``budget`` rows (each round then replaces the oldest)."""
        return self.budget > 0 and self.info[0] >= self.budget

    cdef bint needs_room(self) noexcept nogil:
        return self.info[0] >= self.support.shape[0] and not (
            self.budget > 0 and self.info[0] >= self.budget)

    def reserve(self):
        """Room for one more round (amortised doubling, never past the budget)."""
        if self.info[0] >= self.capacity and not self.budget_reached:
            cap = 2 * self.capacity
            self._allocate(min(cap, self.budget) if self.budget > 0 else cap)

    def admit(self, long n_more):
        """Warns once (``BudgetWarning``) when the call of n_more rounds fills the budget."""
        if self.budget > 0 and not self.warned and self.info[0] + n_more >= self.budget:
            self.budget_warning(f"the kernel expansion reaches its budget of {self.budget} "
                                f"support rows: from then on each round replaces the oldest row "
                                f"(memory and cost per sample stay flat; budget=None keeps "
                                f"every row)")

    def check_input(self, X):
        """Refuse rows whose polynomial kernel values could overflow (``polynomial_norm_limit``)."""
        limit, k = polynomial_norm_limit(self)
        if k < 0:
            return
        sq = np.einsum("ij,ij->i", X, X)
        if not (sq <= limit).all():
            i = int(np.argmax(~(sq <= limit)))
            raise ValueError(
                f"x (row {i}) has squared norm {sq[i]:g}, beyond what the polynomial kernel "
                f"(gamma={self.gamma[k]:g} x.x' + coef0={self.coef0[k]:g})^degree="
                f"{self.degree[k]} accepts: ||x||^2 <= {max(limit, 0.0):g} (kernel values at "
                f"most {POLYNOMIAL_KERNEL_LIMIT:g})")

    def get_state(self):
        n = int(self.info[0])
        return {"support": np.array(self.support[:n]), "alpha": np.array(self.alpha[:, :n]),
                "info": np.array(self.info), "grad_sq": np.array(self.grad_sq),
                "n_rejected": np.array(self.n_rejected, dtype=np.int64),
                "oldest": np.array(self.oldest)}

    def check_state(self, state):
        """Raise ValueError unless `state` is a consistent expansion state for this bank."""
        names = {"support", "alpha", "info", "grad_sq", "n_rejected"}
        if set(state) - {"oldest"} != names:      # 'oldest' is absent from older files
            raise ValueError(f"KernelExpansionExperts state must have arrays {sorted(names)} "
                             f"and 'oldest'")
        state, _ = self._split_counter(state)
        grad_sq = np.asarray(state["grad_sq"])
        if (grad_sq.dtype != np.float64 or grad_sq.shape != np.asarray(self.grad_sq).shape
                or not np.all(np.isfinite(grad_sq)) or np.any(grad_sq < 0)):
            raise ValueError("KernelExpansionExperts state 'grad_sq' must be finite, "
                             "non-negative and of shape " + str(np.asarray(self.grad_sq).shape))
        support = np.asarray(state["support"])
        alpha = np.asarray(state["alpha"])
        info = np.asarray(state["info"])
        n = support.shape[0] if support.ndim == 2 else -1
        if (support.dtype != np.float64 or alpha.dtype != np.float64 or info.dtype != np.int64
                or support.ndim != 2 or support.shape[1] != self.n_features
                or info.shape != (2,) or alpha.shape != (self.n_experts, n) or info[0] != n):
            raise ValueError("KernelExpansionExperts state has inconsistent shapes or dtypes")
        if self.budget > 0 and n > self.budget:
            raise ValueError(f"KernelExpansionExperts state has {n} support rows, more than the "
                             f"budget of {self.budget}")
        if "oldest" in state:
            oldest = np.asarray(state["oldest"])
            full = self.budget > 0 and n == self.budget
            if (oldest.dtype != np.int64 or oldest.shape != (1,)
                    or not 0 <= oldest[0] < (n if full else 1)):
                raise ValueError("KernelExpansionExperts state 'oldest' must be int64 of shape "
                                 "(1,), a row of the full support (0 before the budget fills)")
        # The bounds learning keeps: support rows are accepted inputs, coefficients are refused
        # beyond STATE_LIMIT (so a prediction, a sum of n of them, stays finite).
        if not (np.abs(support).max(initial=0.0) <= MAX_ABS_INPUT
                and np.abs(alpha).max(initial=0.0) <= STATE_LIMIT):
            raise ValueError(f"KernelExpansionExperts state: support values must lie within "
                             f"+-{MAX_ABS_INPUT:g} and coefficients within +-{STATE_LIMIT:g}")

    def set_state(self, state):
        self.check_state(state)
        support = np.asarray(state["support"])
        alpha = np.asarray(state["alpha"])
        info = np.asarray(state["info"])
        n = support.shape[0]
        self.info[0] = 0
        self._allocate(max(n, 1))
        np.asarray(self.support)[:n] = support
        np.asarray(self.alpha)[:, :n] = alpha
        self.info[0] = n
        self.info[1] = info[1]
        np.asarray(self.grad_sq)[:] = state["grad_sq"]
        self.n_rejected = int(state["n_rejected"])
        self.oldest[0] = int(np.asarray(state["oldest"])[0]) if "oldest" in state else 0
        self.warned = self.budget_reached

    cdef void prepare(self, const double* x) noexcept nogil:
        """The distances of x to the support, once per sample for every expert's prediction."""
        cdef long n = self.info[0]
        self.values_kernel = -1
        if n > 0:
            fastomkl_support_distances(&self.support[0, 0], x, n, self.n_features,
                                       &self.sq[0] if self.has_sq else NULL,
                                       &self.l1[0] if self.has_l1 else NULL,
                                       &self.dot[0] if self.has_dot else NULL)

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef int kernel = k // self.per_kernel
        cdef long n = self.info[0], tau
        cdef double f = 0.0, g = self.gamma[kernel], c0 = self.coef0[kernel], c
        cdef int kind = self.kinds[kernel], deg = self.degree[kernel]
        cdef const double* al = &self.alpha[k, 0]
        if n == 0:
            return 0.0
        if self.per_kernel > 1:
            # the members of a kernel predict in turn: its kernel values once per sample
            if kernel != self.values_kernel:
                self.kernel_values(kernel)
                self.values_kernel = kernel
            return fastomkl_dot(al, &self.values[0], <int>n)    # n <= capacity, an int
        if kind == 0:
            f = fastomkl_exp_dot(al, &self.sq[0], n, g)
        elif kind == 1:
            f = fastomkl_exp_dot(al, &self.l1[0], n, g)
        elif deg == 2:
            for tau in range(n):
                c = g * self.dot[tau] + c0
                f += al[tau] * c * c
        else:
            for tau in range(n):
                f += al[tau] * pow(g * self.dot[tau] + c0, deg)
        return f

    cdef void kernel_values(self, int kernel) noexcept nogil:
        """values[tau] = k_kernel(x, x_tau) over the support, from the distances of prepare()."""
        cdef long n = self.info[0], tau
        cdef double g = self.gamma[kernel], c0 = self.coef0[kernel], c
        if self.kinds[kernel] == 0:
            fastomkl_exp_values(&self.sq[0], n, g, &self.values[0])
        elif self.kinds[kernel] == 1:
            fastomkl_exp_values(&self.l1[0], n, g, &self.values[0])
        else:
            for tau in range(n):
                c = g * self.dot[tau] + c0
                self.values[tau] = pow(c, self.degree[kernel])

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double y = ctx.y
        cdef long t = ctx.t
        cdef double weight = ctx.weight
        cdef long n = self.info[0]
        cdef int i
        if self.info[1] != t:
            if self.budget > 0 and n >= self.budget:     # full: the oldest row makes room
                self.row = self.oldest[0]
                self.oldest[0] = self.row + 1 if self.row + 1 < n else 0
            else:
                self.row = n
                self.info[0] = n + 1
            memcpy(&self.support[self.row, 0], x, self.n_features * sizeof(double))
            for i in range(self.n_experts):
                self.alpha[i, self.row] = 0.0
            self.info[1] = t
        cdef double d = loss_derivative(self.loss, f, y), loss = loss_value(self.loss, f, y)
        cdef double g = weight * self.grad_scale * d, slope = self.grad_scale * d
        cdef double grad_sq, step, a, kxx
        if self.eta.kind == SCHEDULE_ENSEMBLE:
            kxx = self.self_kernel(k // self.per_kernel, x)
            step = truncated_step(self.steps[k % self.per_kernel] * weight, fabs(d) * kxx,
                                  reach_factor(self.loss) * loss, d)
            g = d                           # a member steps on loss' itself, its weight in step
        elif self.eta.kind == SCHEDULE_ADAGRAD:
            kxx = self.self_kernel(k, x)
            grad_sq = self.grad_sq[k]
            step = adagrad_step(self.eta.scale, &grad_sq, weight * slope * slope * kxx)
            step = truncated_step(step, fabs(g) * kxx, loss, d)
        else:
            step = schedule_at(self.eta, t)
        a = -step * g
        if not fabs(a) <= STATE_LIMIT:      # also NaN: the coefficient stays 0
            self.n_rejected += 1
            return loss
        if self.eta.kind == SCHEDULE_ADAGRAD:
            self.grad_sq[k] = grad_sq
        self.alpha[k, self.row] = a
        return loss

    cdef double self_kernel(self, int kernel, const double* x) noexcept nogil:
        """k(x, x) of a kernel: 1 for the Gaussian and Laplacian kernels."""
        cdef double sq = 0.0
        cdef int j
        if self.kinds[kernel] != KIND_POLYNOMIAL_C:
            return 1.0
        for j in range(self.n_features):
            sq += x[j] * x[j]
        return pow(self.gamma[kernel] * sq + self.coef0[kernel], self.degree[kernel])


# The largest polynomial kernel value an accepted sample can produce: times a coefficient (at most
# STATE_LIMIT = 1e100) it stays within the accepted target range (1e150), so predictions, losses
# and gradients stay finite.  By Cauchy-Schwarz |gamma x.x' + coef0| <= gamma max(||x||^2,
# ||x'||^2) + |coef0|, so bounding every accepted sample's squared norm bounds every kernel value.
cdef double POLYNOMIAL_KERNEL_LIMIT = 1e50


def polynomial_norm_limit(KernelExpansionExperts experts):
    """The largest squared norm ||x||^2 whose polynomial kernel values stay within
    POLYNOMIAL_KERNEL_LIMIT for every polynomial expert (inf without one), and that expert."""
    cdef double limit = float("inf"), own
    cdef int k, which = -1
    for k in range(experts.kinds.shape[0]):      # kernel by kernel
        if experts.kinds[k] == KIND_POLYNOMIAL_C:
            own = ((POLYNOMIAL_KERNEL_LIMIT ** (1.0 / experts.degree[k]) - fabs(experts.coef0[k]))
                   / experts.gamma[k])
            if own < limit:
                limit, which = own, k
    return limit, which
