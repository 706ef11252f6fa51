"""The samplers of online kernel selection under bandit feedback (paper 001, Li & Liao 2022).

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

from fastomkl._core.checks import require_ranges

from fastomkl._core.base cimport Combiner, Round, bitgen_t
from fastomkl._core.losses cimport LOSS_SQUARED, LOSS_ABSOLUTE, loss_value, unit_scale
from fastomkl._core.numeric cimport finite_round
from fastomkl._core.steps cimport horizon_of
from libc.math cimport sqrt, pow, exp, log, fabs, cbrt, isfinite, INFINITY, NAN

cdef extern from "fastomkl_bandit.h" nogil:
    void fastomkl_pow_array(const double *x, int n, double e, double *out)
    double fastomkl_tsallis_sum(const double *b, const double *eta, int n, double mu, double e,
                                double *slope)
    double fastomkl_gibbs(const double *v, int n, double scale, double *out)


cdef enum: SCALAR_BELOW = 16        # fewer kernels: scalar libm beats the vectorised C loops
MAX_INCREASES = 64                  # a Tsallis sampler's rate increases per kernel (check_state)


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

    cdef int select(self, Round* ctx, int* active, double* weight) noexcept nogil:
        cdef bitgen_t* rng = ctx.rng
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
        require_ranges(self, state, probability=("p", "q"),
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
        require_ranges(self, state, nonneg=("cum_loss", "stats"))

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        cdef long t = ctx.t
        cdef double y = ctx.y
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
        loss = loss / unit_scale(self.loss, s)
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
            h = <double>horizon_of(self.horizon, <long>st[6], t)
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
        require_ranges(self, state, nonneg=("eta", "rho", "stats"),
                      counts=("n_increases",))
        # rho_i at least doubles at every increase and stays below 2 / p_i <= 2 K / delta, so
        # n_increases_i <= 1 + log2(K) + (3/4) log2(T') < 64 for any horizon a round count
        # reaches; beyond it eta_i = base upsilon^n would overflow.
        if (np.asarray(state["n_increases"]) > MAX_INCREASES).any():
            raise ValueError(f"{type(self).__name__} state 'n_increases' must be at most "
                             f"{MAX_INCREASES}")
        if (np.asarray(state["q"]) <= 0).any():
            raise ValueError(f"{type(self).__name__} state 'q' must be positive")

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        cdef long t = ctx.t
        cdef double y = ctx.y
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
        loss = loss / unit_scale(self.loss, s)
        if not isfinite(loss / pI):
            self.n_rejected += 1
            return
        if loss > st[1]:
            st[1] = loss
        h = <double>horizon_of(self.horizon, <long>st[2], t)
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
