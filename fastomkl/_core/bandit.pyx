"""Compiled parts of online kernel selection under bandit feedback (paper 001, Li & Liao 2022).

Every round the combiner draws ONE kernel I_t ~ p_t (inverse CDF, one uniform from the engine's bit
generator, so ``Generator.random()`` on the same bit generator replays it); only that kernel
computes its features, predicts and takes a step with the importance-weighted gradient
loss'(f, y) / p_{t,I_t}; then the combiner updates the distribution from c~ = loss / p_{t,I_t}.

Combiners:

* ``Exp3Sampler``: OKS (Alg. 1; q = softmax(-eta L), p = (1 - delta) q + delta / K) with fixed or
  horizon-driven delta and eta, and OKS++ (section 3 of the paper): delta_t = A / (2 max{A,
  2 C~^(1/3)}), A = (G C_0)^(1/3) (U K)^(2/3), eta_t = sqrt(2 ln K / (1 + V_t)), FTRL or OMD form.
* ``TsallisSampler``: IOKS (Alg. 2): OMD with the modified alpha-Tsallis entropy, per-kernel rates
  that grow by upsilon when 1/p_i passes rho_i, the clipped estimator c~ of eq. (4), and the
  normaliser mu* of ``tsallis_normalise`` (Li & Liao 2022, section 4).

Experts (the sampled kernel only): ``BanditRFFExperts`` (random features, box projection
|w_j| <= U / sqrt(D)) and ``BanditExpansionExperts`` (Gaussian kernel expansions with a support
set per kernel, projected onto the RKHS ball of radius U with an O(1) norm update and a lazy
multiplier).  Their step-size rule is one of the STEP_* codes of bandit.pxd.

Units.  With a fixed radius U the rules run on the raw losses, as the paper.  With an "auto"
radius (<= 0) they run in the units of the targets' scale s = max |y| seen so far: U = 1, the loss
divided by s^2 (squared) or s (absolute), its derivative by s (squared); every update of the
hypotheses is then multiplied by s, so scaling the targets scales the predictions and nothing
else (the paper assumes |y| <= 1; this makes its constants hold at any scale).

A horizon of 0 means the doubling rule: the horizon used in round t is the smallest 64 * 2^j >= t,
so the constants that need T follow the stream (anytime); a positive horizon is fixed (the
Python layer refuses a stream longer than it).  A radius or loss scale <= 0 means "auto": the
largest |y| (radius) or loss (scale) seen so far, this round included.
"""
import numpy as np

from fastomkl._core.base import aligned_zeros

from fastomkl._core.base cimport (Combiner, ExpertBank, FullInformation, bitgen_t, LOSS_SQUARED,
                                  LOSS_ABSOLUTE, loss_value, loss_derivative,
                                  LOSS_LOGISTIC)
from libc.math cimport sqrt, pow, exp, log, fabs, cbrt, isfinite, INFINITY, NAN

cdef extern from "fastomkl_kernels.h" nogil:
    double fastomkl_dot(const double *a, const double *b, int n)

cdef extern from "fastomkl_expansion.h" nogil:
    double fastomkl_exp_dot(const double *alpha, const double *v, long n, double g)
    void fastomkl_support_distances(const double *S, const double *x, long n, int d, double *sq,
                                    double *l1, double *dot)

cdef extern from "fastomkl_bandit.h" nogil:
    void fastomkl_pow_array(const double *x, int n, double e, double *out)
    double fastomkl_tsallis_sum(const double *b, const double *eta, int n, double mu, double e,
                                double *slope)
    void fastomkl_step_clip(double *w, const double *z, int n, double step, double bound,
                            int project)
    double fastomkl_gibbs(const double *v, int n, double scale, double *out)

cdef long FIRST_HORIZON = 64       # the doubling rule's first horizon (IOKS needs T >= 40)


cdef inline long _horizon(long fixed, long current, long t) noexcept nogil:
    """The horizon of round t: `fixed`, or the doubling rule from `current`."""
    if fixed > 0:
        return fixed
    if current < FIRST_HORIZON:
        current = FIRST_HORIZON
    while current < t:
        current *= 2
    return current


cdef inline double _unit_scale(int loss, double unit) noexcept nogil:
    """unit^power of the loss: what a loss is divided by in the units of the targets' scale
    (squared 2, absolute 1, classification losses 0: their labels are -1/+1)."""
    if loss == LOSS_SQUARED:
        return unit * unit
    if loss == LOSS_ABSOLUTE:
        return unit
    return 1.0


cdef inline bint _finite_round(double f, double g, double iw_loss) noexcept nogil:
    """Whether a round's prediction, importance-weighted gradient and loss (and g^2, which the
    AdaGrad rules accumulate) are finite: otherwise the update is refused, so the state stays
    finite whatever the stream."""
    return isfinite(f) and isfinite(g * g) and isfinite(iw_loss * iw_loss)


def _check_common(owner, state, nonneg=(), probability=(), counts=()):
    """Semantic checks shared by the bandit components' saved states (after the base check)."""
    name = type(owner).__name__
    for key, value in state.items():
        value = np.asarray(value)
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            raise ValueError(f"{name} state '{key}' has NaN or infinite values")
    for key in nonneg:
        if (np.asarray(state[key]) < 0).any():
            raise ValueError(f"{name} state '{key}' must be nonnegative")
    for key in probability:
        v = np.asarray(state[key])
        if (v < 0).any() or abs(v.sum() - 1.0) > 1e-4:
            raise ValueError(f"{name} state '{key}' must be a probability vector (sum "
                             f"{v.sum()!r})")
    for key in counts:
        if (np.asarray(state[key]) < 0).any():
            raise ValueError(f"{name} state '{key}' must hold nonnegative counts")


# ------------------------------------------------------------------------------------------------
cdef enum: SCALAR_BELOW = 16        # fewer kernels: scalar libm beats the vectorised C loops


cdef inline double _power_sum(const double* b, const double* eta, int K, double mu, double e,
                              double* slope) noexcept nogil:
    """fastomkl_tsallis_sum, with scalar pow for a handful of kernels."""
    cdef double total = 0.0, d = 0.0, base, v
    cdef int i
    if K >= SCALAR_BELOW:
        return fastomkl_tsallis_sum(b, eta, K, mu, e, slope)
    for i in range(K):
        base = b[i] - eta[i] * mu
        v = pow(base, e)
        total += v
        d += eta[i] * v / base
    slope[0] = -e * d
    return total


cdef inline void _powers(const double* x, int K, double e, double* out) noexcept nogil:
    """out_i = x_i^e (fastomkl_pow_array, with scalar pow for a handful of kernels)."""
    cdef int i
    if K >= SCALAR_BELOW:
        fastomkl_pow_array(x, K, e, out)
        return
    for i in range(K):
        out[i] = pow(x[i], e)


cdef int tsallis_normalise(const double* q, const double* eta, const double* ctilde, int K,
                           double alpha, double tol, int max_iter, bint newton, bint renormalize,
                           double* b, double* q_out, double* mu_out) noexcept nogil:
    """The OMD step of the modified alpha-Tsallis entropy: q_out_i = (b_i - eta_i mu*)^(a/(1-a)),
    b_i = q_i^(1/a - 1) + eta_i c~_i, with mu* the root of F(mu) = sum_i q_out_i = 1.

    Bracket [0, min(max c~, pole (1 - 1e-12))], pole = min_i b_i / eta_i: F(0) <= 1 and F grows to
    infinity at the pole, so a root lies inside even when c > 1 breaks the paper's positivity
    argument.  As the released code: accept hi, then 0, when |F - 1| <= tol; otherwise iterate
    (bisection, or with `newton` safeguarded Newton steps, rtsafe-style) until |F - 1| <= tol, the
    bracket is below 1e-15 max(1, hi), or max_iter evaluations.  `renormalize` divides q_out by its
    sum.  q_out may alias q, and the scratch b (length K) may alias ctilde.  Returns the number of
    evaluations of F.
    """
    cdef double e_in = 1.0 / alpha - 1.0, e_out = alpha / (1.0 - alpha)
    cdef double hi = 0.0, lo = 0.0, pole = INFINITY, mu, F, dF, dx, dxold, total, c
    cdef int i, evals
    for i in range(K):
        if ctilde[i] > hi:
            hi = ctilde[i]
    if b != ctilde:
        for i in range(K):
            b[i] = ctilde[i]
    _powers(q, K, e_in, q_out)                     # q_out as scratch for q^(1/alpha - 1)
    for i in range(K):
        b[i] = q_out[i] + eta[i] * b[i]
        if eta[i] > 0.0 and b[i] / eta[i] < pole:
            pole = b[i] / eta[i]
    if pole * (1.0 - 1e-12) < hi:
        hi = pole * (1.0 - 1e-12)
    mu = hi
    F = _power_sum(b, eta, K, mu, e_out, &dF)
    evals = 1
    if not fabs(F - 1.0) <= tol:
        mu = 0.0
        F = _power_sum(b, eta, K, mu, e_out, &dF)
        evals = 2
        if not fabs(F - 1.0) <= tol:
            mu = hi                       # iterate from the upper end (F > 1 there)
            F = _power_sum(b, eta, K, mu, e_out, &dF)
            evals = 3
            dxold = hi - lo
            dx = dxold
            while evals < max_iter:
                if (newton and dF > 0.0
                        and ((mu - hi) * dF - (F - 1.0)) * ((mu - lo) * dF - (F - 1.0)) < 0.0
                        and fabs(2.0 * (F - 1.0)) <= fabs(dxold * dF)):
                    dxold = dx
                    dx = (F - 1.0) / dF
                    mu = mu - dx
                else:
                    dxold = dx
                    dx = 0.5 * (hi - lo)
                    mu = lo + dx
                F = _power_sum(b, eta, K, mu, e_out, &dF)
                evals += 1
                if F < 1.0:
                    lo = mu
                else:
                    hi = mu
                if fabs(F - 1.0) <= tol or hi - lo <= 1e-15 * (hi if hi > 1.0 else 1.0):
                    break
    total = 0.0
    for i in range(K):
        q_out[i] = b[i] - eta[i] * mu
    _powers(q_out, K, e_out, q_out)
    for i in range(K):
        total += q_out[i]
    if renormalize:
        for i in range(K):
            q_out[i] /= total
    mu_out[0] = mu
    return evals


def solve_tsallis(q, eta, ctilde, double alpha=8.0, double tol=1e-5, int max_iter=200,
                  bint newton=True, bint renormalize=True, long repeat=1):
    """Python access to ``tsallis_normalise``: returns (q_next, mu*, evaluations of F).

    ``repeat`` > 1 solves the same problem that many times in one compiled loop (to time the
    solver without the cost of this Python call).
    """
    cdef double[::1] qv = np.ascontiguousarray(q, dtype=np.float64)
    cdef double[::1] ev = np.ascontiguousarray(eta, dtype=np.float64)
    cdef double[::1] cv = np.ascontiguousarray(ctilde, dtype=np.float64)
    cdef int K = qv.shape[0]
    if ev.shape[0] != K or cv.shape[0] != K or K < 1:
        raise ValueError("q, eta and ctilde must be nonempty vectors of one length")
    if not (np.all(np.asarray(qv) > 0) and np.all(np.asarray(ev) > 0)
            and np.all(np.asarray(cv) >= 0) and np.isfinite(np.asarray(cv)).all()):
        raise ValueError("need q > 0, eta > 0 and finite ctilde >= 0")
    out = np.empty(K)
    cdef double[::1] ov = out
    cdef double[::1] scratch = np.empty(K)
    cdef double mu
    cdef int evals = 0
    cdef long r
    with nogil:
        for r in range(max(repeat, 1)):
            evals = tsallis_normalise(&qv[0], &ev[0], &cv[0], K, alpha, tol, max_iter, newton,
                                      renormalize, &scratch[0], &ov[0], &mu)
    return out, mu, evals


# ------------------------------------------------------------------------------------------------
cdef class BanditExperts(ExpertBank):
    """Step-size rules and the projection radius common to the bandit experts.

    ``rule`` (bandit.pxd): STEP_FIXED lambda = scale; STEP_ADAGRAD_NORM lambda = 1 / sqrt(sum
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
        scale = _unit_scale(self.loss, s)
        g = loss_derivative(self.loss, f, y) * weight * s / scale
        ct = loss_value(self.loss, f, y) * weight / scale
        if not _finite_round(f, g, ct):
            self.n_rejected += 1
            return NAN
        return s * self.step_size(k, f, y, ct, g) * g

    cdef double step_size(self, int k, double f, double y, double ct, double g) noexcept nogil:
        cdef double U = self.radius(), K = self.n_experts, a3, lam = 0.0
        if self.rule == STEP_FIXED:
            lam = self.scale
        elif self.rule == STEP_ADAGRAD_NORM:
            self.sums[k] += g * g
            lam = 1.0 / sqrt(self.sums[k]) if self.sums[k] > 0.0 else 0.0
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
        _check_common(self, state, nonneg=("sums", "info"))


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

    cdef double learn(self, int k, const double* x, const double* z, double f, double y,
                      long t, double weight) noexcept nogil:
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
    O(|S_k| d).  Rows are stored once, in arrival order; room grows from Python (``reserve``).
    """

    def __init__(self, gamma, int n_features, int loss, int rule, double scale=0.0,
                 double radius=1.0, double gc0=1.0, bint project=True, bint legacy_tem1=False,
                 int capacity=256):
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
        self._allocate(max(capacity, 1))

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

    def reserve(self, long n_more):
        """Make room for n_more further rounds (amortised doubling)."""
        need = int(self.rows[0]) + n_more
        if need > self.capacity:
            self._allocate(max(need, 2 * self.capacity))

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
                "info": np.array(self.info)}

    def check_state(self, state):
        """Shapes, dtypes and semantics (owners in range, finite values, positive multipliers)."""
        name = type(self).__name__
        keys = {"support", "coef", "owner", "mult", "norm2", "sums", "info"}
        if set(state) != keys:
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
        _check_common(self, state, nonneg=("norm2", "sums", "info"))
        owner = np.asarray(state["owner"])
        if n and (owner.min() < 0 or owner.max() >= K):
            raise ValueError(f"{name} state 'owner' has a kernel outside 0..{K - 1}")
        if (np.asarray(state["mult"]) <= 0).any():
            raise ValueError(f"{name} state 'mult' must be positive")

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
        head, tail, sizes = np.asarray(self.head), np.asarray(self.tail), np.asarray(self.sizes)
        nxt = np.asarray(self.next_row)
        head[:] = -1
        tail[:] = -1
        sizes[:] = 0
        for k in range(self.n_experts):
            idx = np.flatnonzero(owner == k)
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

    cdef double learn(self, int k, const double* x, const double* z, double f, double y,
                      long t, double weight) noexcept nogil:
        cdef double s, step, U, nrm2, shrink
        cdef long n = self.rows[0], r
        cdef int j, d = self.n_features
        if n >= self.support.shape[0]:          # no room: the caller did not reserve
            return loss_value(self.loss, f, y)
        step = self.scaled_step(k, f, y, weight, &s)
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
        self.rows[0] = n + 1
        nrm2 = self.norm2[k] - 2.0 * step * f + step * step
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
cdef class BanditSampler(Combiner):
    """One kernel per round: I ~ p (inverse CDF at u sum p), importance weight 1 / p_I.

    Prediction without learning uses argmax p (ties: smallest index) or, with ``predict_mixture``,
    the p-weighted mixture of every kernel.  p_1 = q_1 = 1/K.
    """

    def _setup_sampler(self, int n_experts, bint predict_mixture):
        if n_experts < 1:
            raise ValueError("need at least one kernel")
        self.n_experts = n_experts
        self.predict_mixture = predict_mixture
        self.p = np.full(n_experts, 1.0 / n_experts)
        self.q = np.full(n_experts, 1.0 / n_experts)
        self.counts = np.zeros(n_experts, dtype=np.int64)

    cdef int select(self, long t, bitgen_t* rng, int* active, double* weight) noexcept nogil:
        cdef int K = self.n_experts, i, chosen = K - 1
        cdef double total = 0.0, x, acc = 0.0
        for i in range(K):
            total += self.p[i]
        x = rng.next_double(rng.state) * total
        for i in range(K):
            acc += self.p[i]
            if acc > x:
                chosen = i
                break
        active[0] = chosen
        weight[0] = 1.0 / self.p[chosen]
        self.counts[chosen] += 1
        return 1

    cdef int select_predict(self, int* active) noexcept nogil:
        cdef int K = self.n_experts, i, best = 0
        if self.predict_mixture:
            for i in range(K):
                active[i] = i
            return K
        for i in range(1, K):
            if self.p[i] > self.p[best]:
                best = i
        active[0] = best
        return 1

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef double num = 0.0, den = 0.0
        cdef int j
        if n_active == 1:
            return preds[active[0]]
        for j in range(n_active):
            num += self.p[active[j]] * preds[active[j]]
            den += self.p[active[j]]
        return num / den

    cdef void mix(self, double delta) noexcept nogil:
        cdef int i, K = self.n_experts
        for i in range(K):
            self.p[i] = (1.0 - delta) * self.q[i] + delta / K

    def check_state(self, state):
        Combiner.check_state(self, state)
        _check_common(self, state, probability=("p", "q"),
                      counts=("counts",))
        if (np.asarray(state["p"]) <= 0).any():
            raise ValueError(f"{type(self).__name__} state 'p' must be positive")


cdef class Exp3Sampler(BanditSampler):
    """OKS (``adaptive=False``) and OKS++ (``adaptive=True``); p = (1 - delta) q + delta / K.

    After the label, with c~ = loss / p_I: L_I += c~ and

    * OKS: T' the horizon (fixed or doubling), delta = min(1, (K / T')^(1/3)),
      eta = sqrt(2 (1 - delta) ln K / (K T')) / l_max (l_max fixed, or the largest loss so far);
      ``eta_fixed`` > 0 replaces eta.  q = softmax(-eta L).
    * OKS++: C~ += c~, V += q_I c~^2, delta_t = 0.5 A / max{A, 2 C~^(1/3)} (0.5 before any loss
      when A = 0), A = (G C_0)^(1/3) (U K)^(2/3) (e^(-y f) with ``legacy_tem1``, logistic),
      eta_t = sqrt(2 ln K / (1 + V)) (or ``eta_fixed``); q = softmax(-eta_t L) (FTRL) or, with
      ``omd``, log q_I -= eta_t c~, q = softmax(log q).
    """

    def __init__(self, int n_experts, bint adaptive, double gc0=1.0, double radius=1.0,
                 double loss_scale=1.0, long horizon=0, double eta_fixed=0.0, bint omd=False,
                 bint legacy_tem1=False, bint predict_mixture=False, int loss=-1):
        self._setup_sampler(n_experts, predict_mixture)
        self.loss = loss
        self.adaptive = adaptive
        self.gc0 = gc0
        self.radius_fixed = radius
        self.loss_scale_fixed = loss_scale
        self.horizon = horizon
        self.eta_fixed = eta_fixed
        self.omd = omd
        self.legacy_tem1 = legacy_tem1
        self.log_k = log(n_experts)
        self.cum_loss = np.zeros(n_experts)
        self.log_q = np.zeros(n_experts)
        self.stats = np.zeros(7)
        self.stats[5] = 0.5 if adaptive else 0.0

    def _state_arrays(self):
        return {"p": self.p, "q": self.q, "counts": self.counts, "cum_loss": self.cum_loss,
                "log_q": self.log_q, "stats": self.stats}

    def check_state(self, state):
        BanditSampler.check_state(self, state)
        _check_common(self, state, nonneg=("cum_loss", "stats"))

    cdef void learn(self, long t, const int* active, int n_active, const double* preds,
                    const double* losses, double y_hat, double y) noexcept nogil:
        cdef int I = active[0], K = self.n_experts, i
        cdef double loss = losses[I], ct, eta, delta, A, U, h, s
        cdef double* st = &self.stats[0]
        if not isfinite(y):
            return
        if fabs(y) > st[2]:
            st[2] = fabs(y)
        s = 1.0 if (self.radius_fixed > 0.0 or not self.adaptive) else st[2]
        if not s > 0.0:                      # no scale yet: nothing to learn
            return
        loss = loss / _unit_scale(self.loss, s)
        ct = loss / self.p[I]
        if not isfinite(ct * ct):
            self.n_rejected += 1
            return
        if loss > st[3]:
            st[3] = loss
        self.cum_loss[I] += ct
        if self.adaptive:
            st[0] += ct
            st[1] += self.q[I] * ct * ct
            U = self.radius_fixed if self.radius_fixed > 0.0 else 1.0
            if self.legacy_tem1:
                A = exp(-y * preds[I])
            else:
                A = cbrt(U * K)
                A = cbrt(self.gc0) * A * A
            if A > 0.0 or st[0] > 0.0:
                delta = 0.5 * A / (A if A > 2.0 * cbrt(st[0]) else 2.0 * cbrt(st[0]))
            else:
                delta = 0.5
            eta = self.eta_fixed if self.eta_fixed > 0.0 else sqrt(2.0 * self.log_k / (1.0 + st[1]))
        else:
            h = <double>_horizon(self.horizon, <long>st[6], t)
            st[6] = h
            delta = pow(K / h, 1.0 / 3.0)
            if delta > 1.0:
                delta = 1.0
            if self.eta_fixed > 0.0:
                eta = self.eta_fixed
            else:
                eta = sqrt(2.0 * (1.0 - delta) * self.log_k / (K * h))
                A = self.loss_scale_fixed if self.loss_scale_fixed > 0.0 else st[3]
                eta = eta / A if A > 0.0 else eta
        if self.omd:
            self.log_q[I] -= eta * ct
            A = fastomkl_gibbs(&self.log_q[0], K, 1.0, &self.q[0])
            for i in range(K):
                self.log_q[i] -= A
        else:
            fastomkl_gibbs(&self.cum_loss[0], K, -eta, &self.q[0])
        st[4] = eta
        st[5] = delta
        self.mix(delta)


cdef class TsallisSampler(BanditSampler):
    """IOKS (Alg. 2) on the clipped importance-weighted loss of eq. (4).

    Round t, with T' the horizon (fixed or doubling), U the radius (fixed or the largest |y|),
    l_max the loss scale (fixed or the largest loss), G_1 = 1 (``g1_kind`` 0) or 2 (U + 1) (1):

    1. eta base = eta_const l_max K^(3/8) / (U G_1 sqrt(T' ln T')), upsilon = e^(2 / (3 ln T')),
       delta = T'^(-3/4); when base or upsilon changed, eta_i = base upsilon^(n_increases_i).
    2. c = loss / l_max (clipped to [0, 1] with ``clip_c``); c~_I = c / p_I if p_I >= max eta
       (> with ``ctilde_ge`` False), else c / (p_I + max eta).
    3. q <- the Tsallis OMD step (``tsallis_normalise``; unchanged when c~ = 0); p = (1 - delta) q
       + delta / K.
    4. For each i with 1 / p_i > rho_i: rho_i = 2 / p_i, eta_i *= upsilon, n_increases_i += 1.
    rho_1 = 2K.
    """

    def __init__(self, int n_experts, double eta_const=8.0, double radius=1.0,
                 double loss_scale=1.0, int g1_kind=0, long horizon=0, double alpha=8.0,
                 double tol=1e-5, int max_iter=200, bint newton=True, bint renormalize=True,
                 bint ctilde_ge=True, bint clip_c=False, bint predict_mixture=False,
                 int loss=-1):
        self._setup_sampler(n_experts, predict_mixture)
        self.loss = loss
        self.eta_const = eta_const
        self.radius_fixed = radius
        self.loss_scale_fixed = loss_scale
        self.g1_kind = g1_kind
        self.horizon = horizon
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter
        self.newton = newton
        self.renormalize = renormalize
        self.ctilde_ge = ctilde_ge
        self.clip_c = clip_c
        self.eta = np.zeros(n_experts)
        self.rho = np.full(n_experts, 2.0 * n_experts)
        self.n_increases = np.zeros(n_experts, dtype=np.int64)
        self.stats = np.zeros(9)
        self.b = np.zeros(n_experts)

    def _state_arrays(self):
        return {"p": self.p, "q": self.q, "counts": self.counts, "eta": self.eta, "rho": self.rho,
                "n_increases": self.n_increases, "stats": self.stats}

    def check_state(self, state):
        BanditSampler.check_state(self, state)
        _check_common(self, state, nonneg=("eta", "rho", "stats"),
                      counts=("n_increases",))
        if (np.asarray(state["q"]) <= 0).any():
            raise ValueError(f"{type(self).__name__} state 'q' must be positive")

    cdef void learn(self, long t, const int* active, int n_active, const double* preds,
                    const double* losses, double y_hat, double y) noexcept nogil:
        cdef int I = active[0], K = self.n_experts, i
        cdef double loss = losses[I], pI = self.p[I], h, U, lmax, g1, base, ups, delta
        cdef double c, top, ct, s
        cdef double* st = &self.stats[0]
        if not isfinite(y):
            return
        if fabs(y) > st[0]:
            st[0] = fabs(y)
        s = 1.0 if self.radius_fixed > 0.0 else st[0]
        if not s > 0.0:                      # no scale yet: nothing to learn
            return
        loss = loss / _unit_scale(self.loss, s)
        if not isfinite(loss / pI):
            self.n_rejected += 1
            return
        if loss > st[1]:
            st[1] = loss
        h = <double>_horizon(self.horizon, <long>st[2], t)
        U = self.radius_fixed if self.radius_fixed > 0.0 else 1.0
        lmax = self.loss_scale_fixed if self.loss_scale_fixed > 0.0 else st[1]
        g1 = 2.0 * (U + 1.0) if self.g1_kind == 1 else 1.0
        base = 0.0
        if U > 0.0 and lmax > 0.0:
            base = self.eta_const * lmax * pow(K, 0.375) / (U * g1 * sqrt(h * log(h)))
        ups = exp(2.0 / (3.0 * log(h)))
        delta = pow(h, -0.75)
        if base != st[3] or ups != st[4]:
            for i in range(K):
                self.eta[i] = base * pow(ups, <double>self.n_increases[i])
        st[2] = h
        st[3] = base
        st[4] = ups
        st[5] = delta
        c = loss / lmax if lmax > 0.0 else 0.0
        if self.clip_c and c > 1.0:
            c = 1.0
        top = 0.0
        for i in range(K):
            if self.eta[i] > top:
                top = self.eta[i]
        if pI > top or (self.ctilde_ge and pI == top):
            ct = c / pI
        else:
            ct = c / (pI + top)
        st[8] = ct
        st[6] = 0.0
        st[7] = 0.0
        if ct > 0.0 and top > 0.0:
            for i in range(K):
                self.b[i] = 0.0
            self.b[I] = ct                   # c~ as a vector (only I is nonzero), then scratch
            st[7] = tsallis_normalise(&self.q[0], &self.eta[0], &self.b[0], K, self.alpha,
                                      self.tol, self.max_iter, self.newton, self.renormalize,
                                      &self.b[0], &self.q[0], &st[6])
        self.mix(delta)
        for i in range(K):
            if 1.0 / self.p[i] > self.rho[i]:
                self.rho[i] = 2.0 / self.p[i]
                self.eta[i] *= ups
                self.n_increases[i] += 1


# ------------------------------------------------------------------------------------------------
cdef class BudgetMixture(FullInformation):
    """LKMBooks' weights over the kernels (full information: every kernel runs every round).

    y_hat = sum_i p_i f_i.  After the label, with g = loss'(y_hat, y) and g_max (initially 1):
    c_i = g (f_i - min_j f_j) / g_max if g > 0, else g (f_i - max_j f_j) / g_max (c_i >= 0);
    p_i <- p_i exp(-eta c_i) normalised, eta = sqrt(8 ln K / T') (T' the horizon, fixed or
    doubling; ``eta_fixed`` > 0 replaces it); then g_max <- max(g_max, max f - min f).  ``select``
    also draws the round's uniform, which ``BudgetedExpansion`` compares with its admission
    probability.
    """

    def __init__(self, int n_experts, int loss, long horizon=0, double eta_fixed=0.0):
        self.n_experts = n_experts
        self.loss = loss
        self.horizon = horizon
        self.eta_fixed = eta_fixed
        self.log_k = log(n_experts)
        self.p = np.full(n_experts, 1.0 / n_experts)
        self.stats = np.array([1.0, 0.0])
        self.scratch = np.zeros(n_experts)

    def _state_arrays(self):
        return {"p": self.p, "stats": self.stats}

    def check_state(self, state):
        FullInformation.check_state(self, state)
        _check_common(self, state, nonneg=("stats",), probability=("p",))
        if np.asarray(state["stats"])[0] <= 0:
            raise ValueError(f"{type(self).__name__} state 'stats' must hold g_max > 0")

    cdef int select(self, long t, bitgen_t* rng, int* active, double* weight) noexcept nogil:
        self.stats[1] = rng.next_double(rng.state)
        return FullInformation.select(self, t, rng, active, weight)

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef double y_hat = 0.0
        cdef int j
        for j in range(n_active):
            y_hat += self.p[active[j]] * preds[active[j]]
        return y_hat

    cdef void learn(self, long t, const int* active, int n_active, const double* preds,
                    const double* losses, double y_hat, double y) noexcept nogil:
        cdef int K = self.n_experts, i
        cdef double g = loss_derivative(self.loss, y_hat, y), lo = preds[0], hi = preds[0]
        cdef double ref, eta, top, total = 0.0, gmax = self.stats[0]
        if not _finite_round(y_hat, g, 0.0):
            self.n_rejected += 1
            return
        for i in range(1, K):
            lo = preds[i] if preds[i] < lo else lo
            hi = preds[i] if preds[i] > hi else hi
        eta = self.eta_fixed
        if eta <= 0.0:
            eta = sqrt(8.0 * self.log_k / <double>_horizon(self.horizon, 0, t))
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


cdef class BudgetedExpansion(ExpertBank):
    """LKMBooks' shared budgeted kernel expansion.

    After the label (with every f_k of the round known): y_hat = sum_i p_i f_i with the mixture's
    p, g = loss'(y_hat, y), P = min(1, B / ((1 - nu) T'^(1 - nu) t^nu)); when the round's uniform
    is below P and fewer than B rows are stored, x_t joins the support with coefficient
    -lambda g / P, lambda = ``step_fixed`` or sqrt((1 + nu) B) / (sqrt(1 - nu) T') (square and
    absolute losses) or 10 / sqrt(T') (``logistic_step``, the logistic code's).  Distances to the
    support are computed once per sample (when kernel 0 predicts) for every kernel.
    """

    def __init__(self, BudgetMixture mixture, gamma, int n_features, int loss, int budget,
                 double nu, long horizon=0, double step_fixed=0.0, bint logistic_step=False):
        gamma = np.ascontiguousarray(gamma, dtype=np.float64)
        self.n_experts = gamma.shape[0]
        self.independent = False
        self.mixture = mixture
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
        self.f = np.zeros(self.n_experts)

    def _state_arrays(self):
        return {"support": self.support, "coef": self.coef, "rows": self.rows}

    def check_state(self, state):
        ExpertBank.check_state(self, state)
        _check_common(self, state)
        n = int(np.asarray(state["rows"])[0])
        if not 0 <= n <= self.budget:
            raise ValueError(f"{type(self).__name__} state 'rows' must be in 0..{self.budget}, "
                             f"got {n}")

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef long n = self.rows[0]
        if n == 0:
            self.f[k] = 0.0
            return 0.0
        if k == 0:                      # the engine runs the kernels in order, 0 first
            fastomkl_support_distances(&self.support[0, 0], x, n, self.n_features, &self.sq[0],
                                       NULL, NULL)
        self.f[k] = fastomkl_exp_dot(&self.coef[0], &self.sq[0], n, self.gamma[k])
        return self.f[k]

    cdef double learn(self, int k, const double* x, const double* z, double f, double y,
                      long t, double weight) noexcept nogil:
        cdef int K = self.n_experts, i
        cdef long n = self.rows[0]
        cdef double y_hat = 0.0, g, P, h, lam
        if k == K - 1:
            for i in range(K):
                y_hat += self.mixture.p[i] * self.f[i]
            g = loss_derivative(self.loss, y_hat, y)
            if not _finite_round(y_hat, g, 0.0):
                self.n_rejected += 1
                return loss_value(self.loss, f, y)
            h = <double>_horizon(self.horizon, 0, t)
            P = self.budget / ((1.0 - self.nu) * pow(h, 1.0 - self.nu) * pow(<double>t, self.nu))
            P = 1.0 if P > 1.0 else P
            if self.mixture.stats[1] < P and n < self.budget:
                lam = self.step_fixed
                if lam <= 0.0:
                    lam = (10.0 / sqrt(h) if self.logistic_step else
                           sqrt((1.0 + self.nu) * self.budget) / (sqrt(1.0 - self.nu) * h))
                for i in range(self.n_features):
                    self.support[n, i] = x[i]
                self.coef[n] = -lam * g / P
                self.rows[0] = n + 1
        return loss_value(self.loss, f, y)
