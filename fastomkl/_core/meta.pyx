"""Meta-learners (paper 003, section 7) as combiners: second-level VAW, EWA, Vovk's Aggregating
Algorithm, BOA, ML-Poly and ML-Prod.

Every one is full-information (all experts run every round) and can clip the expert predictions to
a known label range [lo, hi] before combining them (the paper's "truncated" experts).  The combined
prediction itself is never clipped, except by the Aggregating Algorithm, whose substitution
function lands in [lo, hi] by definition.  Each works with any ExpertBank.

The adaptive rules BOA, ML-Poly and ML-Prod follow the opera aggregation package for the square
loss without gradient trick (loss_gradient=False): with y_hat = sum_k w_k x_k the instantaneous
regret of expert k is r_k = (y_hat - y)^2 - (x_k - y)^2, and the state starts at 2^-20 where the
reference does.
"""
import numpy as np

from fastomkl._core.base cimport FullInformation, softmax_in_place
from fastomkl._core.vaw cimport vaw_predict, vaw_update, VAW_MODE_VAW, VAW_MODE_RIDGE
from libc.math cimport exp, log, sqrt, ceil, log2, pow, fabs

cdef double TINY = 1.0 / 1048576.0          # 2^-20, the reference's initial state


cdef class MetaLearner(FullInformation):
    """A full-information combiner with optional clipping of the expert predictions it mixes."""

    def __init__(self, int n_experts, clip_range=None):
        if n_experts < 1:
            raise ValueError(f"n_experts must be >= 1, got {n_experts}")
        self.n_experts = n_experts
        self.clip = clip_range is not None
        if self.clip:
            lo, hi = (float(v) for v in clip_range)
            if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
                raise ValueError(f"clip range must be finite (lo, hi) with lo < hi, got {clip_range}")
            self.lo, self.hi = lo, hi
        else:
            self.lo, self.hi = -np.inf, np.inf
        self.xbar = np.zeros(n_experts)
        self.w = np.zeros(n_experts)

    @property
    def clip_range(self):
        return (self.lo, self.hi) if self.clip else None

    @property
    def weights_(self):
        """This round's mixing weights (a copy), for the learners that mix linearly."""
        self.weights()
        return np.array(self.w, copy=True)

    cdef void inputs(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef int j, k
        cdef double v
        for j in range(n_active):
            k = active[j]
            v = preds[k]
            if self.clip:
                if v < self.lo:
                    v = self.lo
                elif v > self.hi:
                    v = self.hi
            self.xbar[k] = v

    cdef void weights(self) noexcept nogil:
        """Fill w with this round's mixing weights (learners that mix linearly define it)."""
        pass

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        """y_hat = sum_k w_k x_k over the (clipped) expert predictions x."""
        cdef int j, k
        cdef double y_hat = 0.0
        self.inputs(active, n_active, preds)
        self.weights()
        for j in range(n_active):
            k = active[j]
            y_hat += self.w[k] * self.xbar[k]
        return y_hat


cdef class Single(MetaLearner):
    """One expert, passed through (the single-model presets: VAW on one kernel, ConcatVAW)."""

    def __init__(self, int n_experts=1, clip_range=None):
        if n_experts != 1:
            raise ValueError(f"Single combines exactly one expert, got n_experts={n_experts}")
        MetaLearner.__init__(self, 1, clip_range)

    cdef void weights(self) noexcept nogil:
        self.w[0] = 1.0

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        self.inputs(active, n_active, preds)
        return self.xbar[active[0]]

    cdef void learn(self, long t, const int* active, int n_active, const double* preds,
                    const double* losses, double y_hat, double y) noexcept nogil:
        pass


cdef class VAWCombiner(MetaLearner):
    """Second-level VAW on the expert predictions: y_hat = alpha_t . x_t with unconstrained (signed)
    weights alpha_t = (lam I + sum_{s<=t} x_s x_s^T)^{-1} sum_{s<t} y_s x_s (mode "vaw"), or without
    x_t in the matrix (mode "ridge").  With a clip range it is the paper's VAW^2(trunc)."""

    def __init__(self, int n_experts, double lam=1.0, mode="vaw", clip_range=None):
        MetaLearner.__init__(self, n_experts, clip_range)
        if not lam > 0.0:
            raise ValueError(f"lam must be > 0, got {lam}")
        if mode not in ("vaw", "ridge"):
            raise ValueError(f"mode must be 'vaw' or 'ridge', got {mode!r}")
        self.lam = lam
        self.mode = VAW_MODE_VAW if mode == "vaw" else VAW_MODE_RIDGE
        from fastomkl._core.vaw import pack
        self.P = pack(np.eye(n_experts) / lam)
        self.b = np.zeros(n_experts)
        self.u = np.zeros(n_experts)
        self.q = 0.0

    @property
    def weights_(self):
        raise AttributeError("a VAW combiner mixes by regression: its signed coefficients are coef_")

    @property
    def mode_name(self):
        return "vaw" if self.mode == VAW_MODE_VAW else "ridge"

    def _state_arrays(self):
        return {"P": self.P, "b": self.b}

    def inverse(self):
        from fastomkl._core.vaw import unpack
        return unpack(self.P, self.n_experts)

    @property
    def coef_(self):
        """Current signed weights alpha = P b over the experts (the paper's terminal weights)."""
        return self.inverse() @ np.asarray(self.b)

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        self.inputs(active, n_active, preds)
        return vaw_predict(self.n_experts, &self.P[0], &self.b[0], &self.xbar[0], &self.u[0],
                           &self.q, self.mode)

    cdef void learn(self, long t, const int* active, int n_active, const double* preds,
                    const double* losses, double y_hat, double y) noexcept nogil:
        # xbar, u and q are those of the combine() of this round (the engine calls it just before).
        vaw_update(self.n_experts, &self.P[0], &self.b[0], &self.xbar[0], &self.u[0], self.q,
                   y, 1.0)


cdef class ExpWeights(MetaLearner):
    def __init__(self, int n_experts, double eta, clip_range=None):
        MetaLearner.__init__(self, n_experts, clip_range)
        if not eta > 0.0:
            raise ValueError(f"eta must be > 0, got {eta}")
        self.eta = eta
        self.L = np.zeros(n_experts)
        self.w = np.full(n_experts, 1.0 / n_experts)

    def _state_arrays(self):
        return {"L": self.L}

    cdef void weights(self) noexcept nogil:
        cdef int k
        for k in range(self.n_experts):
            self.w[k] = -self.eta * self.L[k]
        softmax_in_place(&self.w[0], self.n_experts)

    cdef void learn(self, long t, const int* active, int n_active, const double* preds,
                    const double* losses, double y_hat, double y) noexcept nogil:
        cdef int j, k
        cdef double e
        self.inputs(active, n_active, preds)
        for j in range(n_active):
            k = active[j]
            e = self.xbar[k] - y
            self.L[k] += e * e


cdef class EWA(ExpWeights):
    """Exponentially weighted average: y_hat = sum_k w_k x_k, w proportional to exp(-eta L_k), with
    L_k the cumulative square loss of (clipped) expert k over past rounds.  For labels in [lo, hi]
    the exp-concavity rate is eta = 1 / (2 (hi - lo)^2)."""


cdef class AA(ExpWeights):
    """Vovk's Aggregating Algorithm for the square loss on [lo, hi] (needs a clip range), with
    mixability eta = 2 / (hi - lo)^2 for the optimal rate.  Generalised prediction
    g(v) = -(1/eta) ln sum_k pi_k exp(-eta (v - x_k)^2), pi proportional to exp(-eta L);
    substitution gamma = (lo + hi)/2 + (g(lo) - g(hi)) / (2 (hi - lo)); y_hat = clip(gamma, lo, hi).
    Computed with log-sum-exp (no underflow however large L grows)."""

    def __init__(self, int n_experts, double eta, clip_range):
        if clip_range is None:
            raise ValueError("the Aggregating Algorithm needs the label range (lo, hi)")
        ExpWeights.__init__(self, n_experts, eta, clip_range)

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef int j, k
        cdef double eta = self.eta, lo = self.lo, hi = self.hi
        cdef double a, c, top_lo = -1e308, top_hi = -1e308, s_lo = 0.0, s_hi = 0.0, gamma
        self.inputs(active, n_active, preds)
        for j in range(n_active):
            k = active[j]
            a = -eta * self.L[k] - eta * (lo - self.xbar[k]) * (lo - self.xbar[k])
            c = -eta * self.L[k] - eta * (hi - self.xbar[k]) * (hi - self.xbar[k])
            if a > top_lo:
                top_lo = a
            if c > top_hi:
                top_hi = c
        for j in range(n_active):
            k = active[j]
            s_lo += exp(-eta * self.L[k] - eta * (lo - self.xbar[k]) * (lo - self.xbar[k]) - top_lo)
            s_hi += exp(-eta * self.L[k] - eta * (hi - self.xbar[k]) * (hi - self.xbar[k]) - top_hi)
        # g(lo) - g(hi) = (ln S_hi - ln S_lo) / eta
        gamma = 0.5 * (lo + hi) + ((top_hi + log(s_hi)) - (top_lo + log(s_lo))) / (
            2.0 * eta * (hi - lo))
        if gamma < lo:
            return lo
        if gamma > hi:
            return hi
        return gamma


cdef class BOA(MetaLearner):
    """Bernstein Online Aggregation (Wintenberger 2017) with adaptive per-expert rates."""

    def __init__(self, int n_experts, clip_range=None):
        MetaLearner.__init__(self, n_experts, clip_range)
        self.lr = np.full(n_experts, TINY)
        self.V = np.full(n_experts, TINY)
        self.M = np.full(n_experts, TINY)
        self.Rreg = np.zeros(n_experts)
        self.R = np.zeros(n_experts)
        self.w = np.full(n_experts, 1.0 / n_experts)

    def _state_arrays(self):
        return {"lr": self.lr, "V": self.V, "M": self.M, "Rreg": self.Rreg, "R": self.R}

    cdef void weights(self) noexcept nogil:
        cdef int k, n = self.n_experts
        cdef double log_prior = log(1.0 / n)
        for k in range(n):
            self.w[k] = log(self.lr[k]) + log_prior + self.lr[k] * self.Rreg[k]
        softmax_in_place(&self.w[0], n)

    cdef void learn(self, long t, const int* active, int n_active, const double* preds,
                    const double* losses, double y_hat, double y) noexcept nogil:
        cdef int j, k
        cdef double r, B, lr, log_n = log(<double>self.n_experts), big
        cdef double base = (y_hat - y) * (y_hat - y)
        self.inputs(active, n_active, preds)
        for j in range(n_active):
            k = active[j]
            r = base - (self.xbar[k] - y) * (self.xbar[k] - y)
            if fabs(r) > self.M[k]:
                self.M[k] = fabs(r)
            B = pow(2.0, ceil(log2(self.M[k])))
            self.V[k] += r * r
            lr = sqrt(log_n / self.V[k])
            if 1.0 / B < lr:
                lr = 1.0 / B
            self.lr[k] = lr
            big = B if lr * r > 0.5 else 0.0
            self.Rreg[k] += 0.5 * (r - lr * r * r + big)
            self.R[k] += r


cdef class MLPoly(MetaLearner):
    """ML-Poly (Gaillard, Stoltz & van Erven 2014): w proportional to lr_k max(R_k, 0)."""

    def __init__(self, int n_experts, clip_range=None):
        MetaLearner.__init__(self, n_experts, clip_range)
        self.lr = np.full(n_experts, TINY)
        self.R = np.zeros(n_experts)
        self.Smax = np.zeros(1)
        self.w = np.full(n_experts, 1.0 / n_experts)

    def _state_arrays(self):
        return {"lr": self.lr, "R": self.R, "Smax": self.Smax}

    cdef void weights(self) noexcept nogil:
        cdef int k, n = self.n_experts
        cdef double total = 0.0, v
        for k in range(n):
            v = self.R[k] if self.R[k] > 0.0 else 0.0
            self.w[k] = self.lr[k] * v
            total += self.w[k]
        for k in range(n):
            if total == 0.0:
                self.w[k] = 1.0 / n
            else:
                self.w[k] /= total

    cdef void learn(self, long t, const int* active, int n_active, const double* preds,
                    const double* losses, double y_hat, double y) noexcept nogil:
        cdef int j, k
        cdef double r, r2max = 0.0, delta
        cdef double base = (y_hat - y) * (y_hat - y)
        self.inputs(active, n_active, preds)
        for j in range(n_active):
            k = active[j]
            r = base - (self.xbar[k] - y) * (self.xbar[k] - y)
            if r * r > r2max:
                r2max = r * r
        delta = r2max - self.Smax[0]
        if delta < 0.0:
            delta = 0.0
        for j in range(n_active):
            k = active[j]
            r = base - (self.xbar[k] - y) * (self.xbar[k] - y)
            self.R[k] += r
            self.lr[k] = 1.0 / (1.0 / self.lr[k] + r * r + delta)
        self.Smax[0] += delta


cdef class MLProd(MetaLearner):
    """ML-Prod (Gaillard, Stoltz & van Erven 2014): w proportional to lr_k exp(R_k), computed in
    the log domain."""

    def __init__(self, int n_experts, clip_range=None):
        MetaLearner.__init__(self, n_experts, clip_range)
        self.lr = np.full(n_experts, TINY)
        self.V = np.full(n_experts, TINY)
        self.M = np.full(n_experts, TINY)
        self.R = np.zeros(n_experts)
        self.w = np.full(n_experts, 1.0 / n_experts)

    def _state_arrays(self):
        return {"lr": self.lr, "V": self.V, "M": self.M, "R": self.R}

    cdef void weights(self) noexcept nogil:
        cdef int k
        for k in range(self.n_experts):
            self.w[k] = log(self.lr[k]) + self.R[k]
        softmax_in_place(&self.w[0], self.n_experts)

    cdef void learn(self, long t, const int* active, int n_active, const double* preds,
                    const double* losses, double y_hat, double y) noexcept nogil:
        cdef int j, k
        cdef double r, lr_new, v, log_n = log(<double>self.n_experts)
        cdef double base = (y_hat - y) * (y_hat - y)
        self.inputs(active, n_active, preds)
        for j in range(n_active):
            k = active[j]
            r = base - (self.xbar[k] - y) * (self.xbar[k] - y)
            self.V[k] += r * r
            if fabs(r) > self.M[k]:
                self.M[k] = fabs(r)
            lr_new = 0.5 / self.M[k]
            v = sqrt(log_n / self.V[k])
            if v < lr_new:
                lr_new = v
            if lr_new > 1e30:
                lr_new = 1e30
            self.R[k] = lr_new / self.lr[k] * self.R[k] + log(1.0 + lr_new * r)
            self.lr[k] = lr_new
