"""Experts of kernel selection under bandit feedback (paper 001, Li & Liao 2022): only the kernel
the combiner samples (combiners/bandit.pyx) predicts and takes a step, with the importance-weighted
gradient loss'(f, y) / p_{t,I_t}.

``BanditRFFExperts`` (random features, box projection |w_j| <= U / sqrt(D)) and
``BanditExpansionExperts`` (Gaussian kernel expansions with a support set per kernel, projected
onto the RKHS ball of radius U with an O(1) norm update and a lazy multiplier).  Their step-size
rule is one of the STEP_* codes of bandit.pxd.

Units.  With a fixed radius U the rules run on the raw losses, as the paper.  With an "auto"
radius (<= 0) they run in the units of the targets' scale s = max |y| seen so far: U = 1, the loss
divided by s^2 (squared) or s (absolute), its derivative by s (squared); every update of the
hypotheses is then multiplied by s, so scaling the targets scales the predictions and nothing
else (the paper assumes |y| <= 1; this makes its constants hold at any scale).
"""
import numpy as np

from fastomkl._core.arrays import aligned_zeros
from fastomkl._core.checks import require_inputs, require_ranges

from fastomkl._core.base cimport ExpertBank, Round
from fastomkl._core.losses cimport LOSS_LOGISTIC, loss_derivative, loss_value, unit_scale
from fastomkl._core.numeric cimport STATE_LIMIT, finite_round
from libc.math cimport sqrt, pow, exp, fabs, cbrt, isfinite, NAN

cdef extern from "fastomkl_kernels.h" nogil:
    double fastomkl_dot(const double *a, const double *b, int n)

cdef extern from "fastomkl_bandit.h" nogil:
    void fastomkl_step_clip(double *w, const double *z, int n, double step, double bound,
                            int project)


cdef class BanditExperts(ExpertBank):
    """Step-size rules and the projection radius common to the bandit experts.

    ``rule`` (bandit.pxd): STEP_FIXED lambda = scale; STEP_ADAGRAD_NORM lambda = scale / sqrt(sum
    g~^2); STEP_OKSPP lambda = U^(4/3) max{A^3, 8 C~}^(-1/6) /
    (sqrt(4/3) K^(1/6) (G C_0)^(1/3) sqrt(1 + Delta_k)), A^3 = G C_0 U^2 K^2 (e^(-3 y f) with
    ``legacy_tem1``), C~ and Delta_k including this round's c~ = loss / p; STEP_ADAGRAD_U
    lambda = U / sqrt(2 (1 + sum g~^2)).  g~ = loss'(f, y) / p.  All in the units of the module
    docstring: U is ``radius_fixed``, or 1 in units of s = the largest |y| seen when that is <= 0,
    and the hypothesis moves by s lambda g~ (times the features).
    """

    def _setup(self, int n_experts, int loss, int rule, double scale, double radius,
                     double gc0, bint project, bint legacy_tem1):
        self.n_experts = n_experts
        self.independent = True
        self.loss = loss
        self.rule = rule
        self.scale = scale
        self.radius_fixed = radius
        self.gc0 = gc0
        self.project = project
        self.legacy_tem1 = legacy_tem1
        self.sums = np.zeros(n_experts)
        self.info = np.zeros(3)
        self.okspp_const = 1.0 / (sqrt(4.0 / 3.0) * pow(n_experts, 1.0 / 6.0) * cbrt(gc0))

    cdef double unit(self, double y) noexcept nogil:
        """The unit s of this round (1 with a fixed radius, else the largest |y| so far)."""
        if fabs(y) > self.info[1]:
            self.info[1] = fabs(y)
        return 1.0 if self.radius_fixed > 0.0 else self.info[1]

    cdef double radius(self) noexcept nogil:
        """U in units of s."""
        return self.radius_fixed if self.radius_fixed > 0.0 else 1.0

    cdef double scaled_step(self, int k, double f, double y, double weight,
                            double* s_out) noexcept nogil:
        """s lambda g~ of this round (the hypothesis moves by minus that times k(x, .)), with the
        statistics updated; NaN when the round must not update (no scale yet, or non-finite)."""
        cdef double s = self.unit(y), scale, g, ct
        s_out[0] = s
        if not s > 0.0:
            return NAN
        scale = unit_scale(self.loss, s)
        g = loss_derivative(self.loss, f, y) * weight * s / scale
        ct = loss_value(self.loss, f, y) * weight / scale
        if not finite_round(f, g, ct):
            self.n_rejected += 1
            return NAN
        return s * self.step_size(k, f, y, ct, g) * g

    cdef double step_size(self, int k, double f, double y, double ct, double g) noexcept nogil:
        cdef double U = self.radius(), K = self.n_experts, a3, lam = 0.0
        if self.rule == STEP_FIXED:
            lam = self.scale
        elif self.rule == STEP_ADAGRAD_NORM:
            self.sums[k] += g * g
            lam = self.scale / sqrt(self.sums[k]) if self.sums[k] > 0.0 else 0.0
        elif self.rule == STEP_ADAGRAD_U:
            self.sums[k] += g * g
            lam = U / sqrt(2.0 * (1.0 + self.sums[k]))
        else:
            self.info[0] += ct
            self.sums[k] += ct
            if self.legacy_tem1 and self.loss == LOSS_LOGISTIC:
                a3 = exp(-3.0 * y * f)
            else:
                a3 = self.gc0 * U * U * K * K
            if 8.0 * self.info[0] > a3:
                a3 = 8.0 * self.info[0]
            if U > 0.0 and a3 > 0.0:            # U^(4/3) a3^(-1/6) through cbrt and sqrt
                lam = (U * cbrt(U) / sqrt(cbrt(a3)) * self.okspp_const
                       / sqrt(1.0 + self.sums[k]))
        self.info[2] = lam
        return lam

    def check_state(self, state):
        ExpertBank.check_state(self, state)
        require_ranges(self, state, nonneg=("sums", "info"))


cdef class BanditRFFExperts(BanditExperts):
    """Linear models on random features: w_k <- clip(w_k - lambda g~ z_k, +-U / sqrt(D')).

    ``clip_count`` is D' (the number of frequencies D by default, as the released code; 2D gives
    ||w||_2 <= U); no clipping without ``project``.
    """

    def __init__(self, int n_experts, int dim, int loss, int rule, double scale=0.0,
                 double radius=1.0, double gc0=1.0, bint project=True, double clip_count=0.0,
                 bint legacy_tem1=False):
        self._setup(n_experts, loss, rule, scale, radius, gc0, project, legacy_tem1)
        self.dim = dim
        self.clip_count = clip_count if clip_count > 0 else dim / 2.0
        self.w = aligned_zeros((n_experts, dim))

    def _state_arrays(self):
        return {"w": self.w, "sums": self.sums, "info": self.info}

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        return fastomkl_dot(&self.w[k, 0], z, self.dim)

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double y = ctx.y
        cdef double weight = ctx.weight
        cdef double s, step = self.scaled_step(k, f, y, weight, &s)
        if isfinite(step):
            fastomkl_step_clip(&self.w[k, 0], z, self.dim, step,
                               s * self.radius() / sqrt(self.clip_count), self.project)
        return loss_value(self.loss, f, y)


cdef class BanditExpansionExperts(BanditExperts):
    """Gaussian kernel expansions, one support set per kernel, projected onto ||f_k|| <= U.

    The sampled kernel appends x_t with coefficient -lambda g~ (even when g~ = 0), updates
    ||f||^2 <- ||f||^2 - 2 lambda g~ f(x_t) + lambda^2 g~^2 (k(x, x) = 1; clamped at 0) and, when
    that exceeds U^2 (with ``project``), multiplies its expansion by U / ||f|| through a lazy
    multiplier (folded into the coefficients when it falls below 1e-150).  A prediction costs
    O(|S_k| d).  Rows are stored once, in arrival order; the arrays double when full.

    Budget.  With ``budget`` B > 0 at most B rows are stored (over all kernels): once full, the
    sampled kernel's new row takes the slot of the oldest row, which leaves its kernel's expansion:
    f_o <- f_o - a_r k(x_r, .), ||f_o||^2 updated exactly (minus 2 a_r f_o(x_r), plus a_r^2) and
    f_o projected back onto the ball if the removal lengthened it.  Memory and the cost of a round
    stay O(B d).  The rows live in a ring (``oldest``: the slot the next round takes).  B = 0:
    unbounded.
    """

    def __init__(self, gamma, int n_features, int loss, int rule, double scale=0.0,
                 double radius=1.0, double gc0=1.0, bint project=True, bint legacy_tem1=False,
                 int capacity=256, long budget=0):
        if budget < 0:
            raise ValueError(f"budget must be >= 0 (0: unbounded), got {budget}")
        gamma = np.ascontiguousarray(gamma, dtype=np.float64)
        self._setup(gamma.shape[0], loss, rule, scale, radius, gc0, project, legacy_tem1)
        self.gamma = gamma
        self.n_features = n_features
        K = gamma.shape[0]
        self.head = np.full(K, -1, dtype=np.int64)
        self.tail = np.full(K, -1, dtype=np.int64)
        self.sizes = np.zeros(K, dtype=np.int64)
        self.mult = np.ones(K)
        self.norm2 = np.zeros(K)
        self.rows = np.zeros(1, dtype=np.int64)
        self.oldest = np.zeros(1, dtype=np.int64)
        self.budget = budget
        self.warned = False
        self.grows = True
        self._allocate(max(min(capacity, budget) if budget > 0 else capacity, 1))

    def _allocate(self, long capacity):
        n = int(self.rows[0])
        grown = {"support": np.zeros((capacity, self.n_features)), "sqnorm": np.zeros(capacity),
                 "coef": np.zeros(capacity), "owner": np.zeros(capacity, dtype=np.intc),
                 "next_row": np.full(capacity, -1, dtype=np.int64)}
        if n:
            for name, array in grown.items():
                array[:n] = np.asarray(getattr(self, name))[:n]
        self.support = grown["support"]
        self.sqnorm = grown["sqnorm"]
        self.coef = grown["coef"]
        self.owner = grown["owner"]
        self.next_row = grown["next_row"]

    @property
    def capacity(self):
        return self.support.shape[0]

    def _prediction_arrays(self, BanditExpansionExperts twin):
        """predict walks each kernel's rows from ``head`` along ``next_row``, reading their
        squared norms, coefficients and support rows, and the kernel's multiplier (the step
        statistics, the row count and the ring's oldest slot only matter to learning)."""
        if twin.capacity != self.capacity:
            twin._allocate(self.capacity)
        names = ("head", "next_row", "sqnorm", "support", "coef", "mult")
        return ({name: getattr(self, name) for name in names},
                {name: getattr(twin, name) for name in names})

    @property
    def budget_reached(self):
        """True once ``budget`` rows are stored (each round then replaces the oldest)."""
        return self.budget > 0 and self.rows[0] >= self.budget

    cdef bint needs_room(self) noexcept nogil:
        return self.rows[0] >= self.support.shape[0] and not (
            self.budget > 0 and self.rows[0] >= self.budget)

    def reserve(self):
        """Room for one more round (amortised doubling, never past the budget)."""
        if self.rows[0] >= self.capacity and not self.budget_reached:
            cap = 2 * self.capacity
            self._allocate(min(cap, self.budget) if self.budget > 0 else cap)

    def admit(self, long n_more):
        """Warns once (``BudgetWarning``) when the call of n_more rounds fills the budget."""
        if self.budget > 0 and not self.warned and self.rows[0] + n_more >= self.budget:
            self.budget_warning(f"the kernel expansions reach their budget of {self.budget} "
                                f"support rows: from then on each round's row replaces the "
                                f"oldest one (memory and cost per sample stay flat; "
                                f"budget=None keeps every row)")

    def coefficients(self, int k):
        """(support rows, coefficients) of kernel k's expansion, multiplier applied."""
        n = int(self.rows[0])
        idx = np.flatnonzero(np.asarray(self.owner)[:n] == k)
        return np.asarray(self.support)[idx], np.asarray(self.coef)[idx] * self.mult[k]

    def get_state(self):
        n = int(self.rows[0])
        return {"support": np.array(self.support[:n]), "coef": np.array(self.coef[:n]),
                "owner": np.array(self.owner[:n]), "mult": np.array(self.mult),
                "norm2": np.array(self.norm2), "sums": np.array(self.sums),
                "info": np.array(self.info), "oldest": np.array(self.oldest)}

    def check_state(self, state):
        """Shapes, dtypes and semantics (owners in range, finite values, positive multipliers)."""
        name = type(self).__name__
        keys = {"support", "coef", "owner", "mult", "norm2", "sums", "info"}
        if set(state) - {"oldest"} != keys:         # 'oldest' is absent from older files
            raise ValueError(f"{name} state must have arrays {sorted(keys)}, got {sorted(state)}")
        K = self.n_experts
        support = np.asarray(state["support"])
        n = support.shape[0] if support.ndim == 2 else -1
        expected = {"support": (np.float64, (n, self.n_features)), "coef": (np.float64, (n,)),
                    "owner": (np.intc, (n,)), "mult": (np.float64, (K,)),
                    "norm2": (np.float64, (K,)), "sums": (np.float64, (K,)),
                    "info": (np.float64, (3,))}
        for key, (dtype, shape) in expected.items():
            value = np.asarray(state[key])
            if value.dtype != dtype or value.shape != shape:
                raise ValueError(f"{name} state '{key}' must be {np.dtype(dtype)} with shape "
                                 f"{shape}, got {value.dtype} {value.shape}")
        require_ranges(self, state, nonneg=("norm2", "sums", "info"))
        require_inputs(self, "support", support)
        owner = np.asarray(state["owner"])
        if n and (owner.min() < 0 or owner.max() >= K):
            raise ValueError(f"{name} state 'owner' has a kernel outside 0..{K - 1}")
        mult = np.asarray(state["mult"])
        if not ((mult >= 1e-150) & (mult <= 1.0)).all():   # it only shrinks, and is folded
            raise ValueError(f"{name} state 'mult' must lie in [1e-150, 1]")   # below 1e-150
        if self.budget > 0 and n > self.budget:
            raise ValueError(f"{name} state has {n} support rows, more than the budget of "
                             f"{self.budget}")
        if "oldest" in state:
            oldest = np.asarray(state["oldest"])
            full = self.budget > 0 and n == self.budget
            if (oldest.dtype != np.int64 or oldest.shape != (1,)
                    or not 0 <= oldest[0] < (n if full else 1)):
                raise ValueError(f"{name} state 'oldest' must be int64 of shape (1,), a row of "
                                 f"the full support (0 before the budget fills)")

    def set_state(self, state):
        self.check_state(state)
        owner = np.asarray(state["owner"])
        n = owner.shape[0]
        self.rows[0] = 0
        self._allocate(max(n, 1))
        support = np.asarray(state["support"])
        np.asarray(self.support)[:n] = support
        self._restore_sqnorms(n)
        np.asarray(self.coef)[:n] = state["coef"]
        np.asarray(self.owner)[:n] = owner
        for key in ("mult", "norm2", "sums", "info"):
            np.asarray(getattr(self, key))[...] = state[key]
        oldest = int(np.asarray(state["oldest"])[0]) if "oldest" in state else 0
        self.oldest[0] = oldest
        self.warned = self.budget > 0 and n >= self.budget
        order = np.roll(np.arange(n), -oldest)          # the rows in arrival order
        head, tail, sizes = np.asarray(self.head), np.asarray(self.tail), np.asarray(self.sizes)
        nxt = np.asarray(self.next_row)
        head[:] = -1
        tail[:] = -1
        sizes[:] = 0
        for k in range(self.n_experts):
            idx = order[owner[order] == k]
            sizes[k] = idx.shape[0]
            if idx.shape[0]:
                last = idx[idx.shape[0] - 1]
                head[k], tail[k] = idx[0], last
                nxt[idx[:idx.shape[0] - 1]] = idx[1:]
                nxt[last] = -1
        self.rows[0] = n

    cdef void _restore_sqnorms(self, long n) noexcept:
        """||x_r||^2 of the first n rows by the very call learn() made for them: the same bits on
        every instruction set (a NumPy sum orders its additions otherwise)."""
        cdef long r
        for r in range(n):
            self.sqnorm[r] = fastomkl_dot(&self.support[r, 0], &self.support[r, 0],
                                          self.n_features)

    cdef double _drop(self, long r, int k, const double* x, double f) noexcept nogil:
        """Removes row r, the oldest of all (so the head of its kernel o's list), from f_o with
        ||f_o||^2 updated exactly; returns f, kernel k's value at x, less the row when o = k."""
        cdef int o = self.owner[r], d = self.n_features
        cdef double a = self.coef[r] * self.mult[o], sq, nrm2, shrink = 1.0, U
        cdef long q
        nrm2 = self.norm2[o] - 2.0 * a * self.predict(o, &self.support[r, 0], NULL) + a * a
        if nrm2 < 0.0:
            nrm2 = 0.0
        if o == k:
            sq = (fastomkl_dot(x, x, d) + self.sqnorm[r]
                  - 2.0 * fastomkl_dot(x, &self.support[r, 0], d))
            f -= a * exp(-self.gamma[k] * (sq if sq > 0.0 else 0.0))
        self.head[o] = self.next_row[r]
        if self.head[o] < 0:
            self.tail[o] = -1
        self.sizes[o] -= 1
        # the rest may lie outside the ball (a removal can lengthen f_o): projected back
        U = (1.0 if self.radius_fixed > 0.0 else self.info[1]) * self.radius()
        if self.project and U > 0.0 and nrm2 > U * U:
            shrink = U / sqrt(nrm2)
            self.mult[o] *= shrink
            nrm2 = U * U
            if o == k:
                f *= shrink
            if self.mult[o] < 1e-150:           # fold the multiplier into the coefficients
                q = self.head[o]
                while q >= 0:
                    self.coef[q] *= self.mult[o]
                    q = self.next_row[q]
                self.mult[o] = 1.0
        self.norm2[o] = nrm2
        return f

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef long r = self.head[k]
        cdef int d = self.n_features
        cdef double xx = fastomkl_dot(x, x, d), f = 0.0, sq, g = self.gamma[k]
        while r >= 0:
            sq = xx + self.sqnorm[r] - 2.0 * fastomkl_dot(x, &self.support[r, 0], d)
            if sq < 0.0:
                sq = 0.0
            f += self.coef[r] * exp(-g * sq)
            r = self.next_row[r]
        return f * self.mult[k]

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double y = ctx.y
        cdef double weight = ctx.weight
        cdef double s, step, U, nrm2, shrink, f_now = f
        cdef long n = self.rows[0], r
        cdef long slot = n
        cdef int j, d = self.n_features
        if self.budget > 0 and n >= self.budget:       # full: the oldest row leaves
            slot = self.oldest[0]
            self.oldest[0] = slot + 1 if slot + 1 < n else 0
            f_now = self._drop(slot, k, x, f)
            n = slot
        step = self.scaled_step(k, f, y, weight, &s)
        if isfinite(step) and not (isfinite(self.norm2[k] - 2.0 * step * f_now + step * step)
                                   and fabs(step) <= STATE_LIMIT * self.mult[k]):
            self.n_rejected += 1                # ||f_k||^2 or the coefficient would overflow
            step = NAN
        if not isfinite(step):                  # the sample still joins the support (with 0)
            step = 0.0
        U = s * self.radius()
        for j in range(d):
            self.support[n, j] = x[j]
        self.sqnorm[n] = fastomkl_dot(x, x, d)
        self.coef[n] = -step / self.mult[k]
        self.owner[n] = k
        self.next_row[n] = -1
        if self.tail[k] >= 0:
            self.next_row[self.tail[k]] = n
        else:
            self.head[k] = n
        self.tail[k] = n
        self.sizes[k] += 1
        if slot == self.rows[0]:
            self.rows[0] = n + 1
        nrm2 = self.norm2[k] - 2.0 * step * f_now + step * step
        if nrm2 < 0.0:
            nrm2 = 0.0
        if self.project and nrm2 > U * U:
            shrink = U / sqrt(nrm2)
            self.mult[k] *= shrink
            nrm2 = U * U
            if self.mult[k] < 1e-150:           # fold the multiplier into the coefficients
                r = self.head[k]
                while r >= 0:
                    self.coef[r] *= self.mult[k]
                    r = self.next_row[r]
                self.mult[k] = 1.0
        self.norm2[k] = nrm2
        return loss_value(self.loss, f, y)


# ------------------------------------------------------------------------------------------------
