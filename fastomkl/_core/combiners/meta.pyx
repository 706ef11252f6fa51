"""Meta-learners (paper 003, section 7) as combiners: second-level VAW, EWA, Vovk's Aggregating
Algorithm, BOA, ML-Poly and ML-Prod.

Every one is full-information (all experts run every round) and can clip the expert predictions
before combining them (the paper's "truncated" experts): to a known label range [lo, hi], or to
the range of the labels seen so far ("observed"), which needs no prior knowledge and makes the
rules that depend on the range scale-free.  The combined prediction itself is never clipped, except
by the Aggregating Algorithm, whose substitution function lands in [lo, hi] by definition.  Each
works with any ExpertBank.

The adaptive rules BOA, ML-Poly and ML-Prod follow the opera aggregation package for the square
loss without gradient trick (loss_gradient=False): with y_hat = sum_k w_k x_k the instantaneous
regret of expert k is r_k = (y_hat - y)^2 - (x_k - y)^2, and the state starts at 2^-20 where the
reference does.  ML-Poly also takes opera's gradient trick (loss_gradient=True) for any loss of
one output: r_k = l'(y_hat, y) (y_hat - x_k), the regret on the loss's tangent at the mixture,
with which it competes with the best convex combination of the experts (the one-kernel step
ensembles' combiner, fastomkl._rff_models.StepEnsembleCombiner).

Non-finite state guard: an update that would leave a non-finite (or, for the adaptive rates, a
non-positive) value in the state is undone and counted in ``n_rejected``; predictions are always
finite (see MetaLearner.learn): a non-finite expert prediction enters the combination as 0 (no
contribution), and the combination is saturated to the largest finite double.
"""
import numpy as np

from fastomkl._core.base cimport FullInformation, Round
from fastomkl._core.losses cimport LOSS_SOFTMAX, loss_derivative_with
from fastomkl._core.numeric cimport saturate, softmax_in_place
from fastomkl._core.linalg cimport (vaw_predict, vaw_update, vaw_update_safe, VAW_MODE_VAW,
                                    VAW_MODE_RIDGE, fastomkl_spr, fastomkl_spd_inverse, scale,
                                    add_diagonal, discount_period)
from fastomkl._core.checks import require, require_packed_spd
from fastomkl._core.packed import pack, unpack
from libc.math cimport exp, log, sqrt, ceil, log2, pow, fabs, isfinite, INFINITY
from libc.string cimport memcpy

cdef double TINY = 1.0 / 1048576.0          # 2^-20, the reference's initial state


cdef void mix_weights(double* v, int n) noexcept nogil:
    """v <- softmax(v); when the largest entry is not finite (an overflowing log-weight), uniform
    weights over the entries equal to it instead of NaN."""
    cdef double top = v[0], count = 0.0
    cdef int k
    for k in range(1, n):
        if v[k] > top:
            top = v[k]
    if isfinite(top):
        softmax_in_place(v, n)
        return
    for k in range(n):
        v[k] = 1.0 if v[k] == top else 0.0
        count += v[k]
    for k in range(n):
        v[k] /= count


def _clip_mode(clip_range):
    if clip_range is None:
        return CLIP_NONE, -np.inf, np.inf
    if isinstance(clip_range, str):
        if clip_range != "observed":
            raise ValueError(f"clip range must be None, 'observed' or (lo, hi), got {clip_range!r}")
        return CLIP_OBSERVED, -np.inf, np.inf
    lo, hi = (float(v) for v in clip_range)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"clip range must be finite (lo, hi) with lo < hi, got {clip_range}")
    return CLIP_FIXED, lo, hi


cdef class MetaLearner(FullInformation):
    """A full-information combiner with optional clipping of the expert predictions it mixes.

    clip_range: None (no clipping), (lo, hi), or "observed": the range [min y, max y] of the labels
    seen so far (no clipping before the first label).
    """

    def __init__(self, int n_experts, clip_range=None):
        if n_experts < 1:
            raise ValueError(f"n_experts must be >= 1, got {n_experts}")
        self.n_experts = n_experts
        self.clip, self.lo, self.hi = _clip_mode(clip_range)
        self.observed = np.zeros(2)
        self.n_observed = np.zeros(1, dtype=np.int64)
        self.xbar = np.zeros(n_experts)
        self.w = np.zeros(n_experts)
        self.n_guarded = 0
        self._saved = np.zeros(0)

    def _guard(self, *arrays):
        """Register the per-round state arrays (contiguous float64, kept alive by attributes) that
        learn() restores when an update would make them non-finite."""
        cdef double[::1] a
        cdef int total = 0
        if self.n_guarded + len(arrays) > MAX_STATE_ARRAYS:
            raise ValueError("too many guarded state arrays")
        for array in arrays:
            a = array
            self.guarded[self.n_guarded] = &a[0]
            self.guarded_len[self.n_guarded] = a.shape[0]
            self.n_guarded += 1
        for j in range(self.n_guarded):
            total += self.guarded_len[j]
        self._saved = np.zeros(total)

    @property
    def clip_range(self):
        if self.clip == CLIP_OBSERVED:
            return "observed"
        return (self.lo, self.hi) if self.clip == CLIP_FIXED else None

    @property
    def weights_(self):
        """This round's mixing weights (a copy), for the learners that mix linearly."""
        self.weights()
        return np.array(self.w, copy=True)

    def _state_arrays(self):
        if self.clip == CLIP_OBSERVED:
            return {"observed": self.observed, "n_observed": self.n_observed}
        return {}

    def _check_semantics(self, state):
        """The observed label range consistent and the learner's own conditions (_check_values);
        the base checked names, shapes, dtypes and finiteness."""
        name = type(self).__name__
        if self.clip == CLIP_OBSERVED:
            require(state["n_observed"][0] >= 0, name, "'n_observed' must be >= 0")
            lo, hi = state["observed"]
            require(state["n_observed"][0] == 0 or lo <= hi, name,
                    "'observed' must be [min, max] with min <= max")
        self._check_values(state)

    def _check_values(self, state):
        pass

    cdef bint range_known(self, double* lo, double* hi) noexcept nogil:
        """The clip range of this round into lo, hi; False when there is none (yet)."""
        if self.clip == CLIP_FIXED:
            lo[0], hi[0] = self.lo, self.hi
            return True
        if self.clip == CLIP_OBSERVED and self.n_observed[0] > 0:
            lo[0], hi[0] = self.observed[0], self.observed[1]
            return True
        return False

    cdef void inputs(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef int j, k
        cdef double v, lo, hi
        cdef bint clip = self.range_known(&lo, &hi)
        for j in range(n_active):
            k = active[j]
            v = preds[k]
            if not isfinite(v):
                v = 0.0        # a member whose arithmetic overflowed contributes nothing
            if clip:
                if v < lo:
                    v = lo
                elif v > hi:
                    v = hi
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
        return saturate(y_hat)

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        """update() under the guard, then the label enters the observed range."""
        cdef long t = ctx.t
        cdef double y_hat = ctx.y_hat
        cdef double y = ctx.y
        cdef int j, i, offset = 0
        cdef bint ok = True
        for j in range(self.n_guarded):
            memcpy(&self._saved[offset], self.guarded[j], self.guarded_len[j] * sizeof(double))
            offset += self.guarded_len[j]
        self.update(t, active, n_active, preds, y_hat, y)
        for j in range(self.n_guarded):
            for i in range(self.guarded_len[j]):
                if not isfinite(self.guarded[j][i]):
                    ok = False
        if not (ok and self.valid()):
            offset = 0
            for j in range(self.n_guarded):
                memcpy(self.guarded[j], &self._saved[offset], self.guarded_len[j] * sizeof(double))
                offset += self.guarded_len[j]
            self.n_rejected += 1
        self.observe(y)

    cdef void observe(self, double y) noexcept nogil:
        """The label y enters the observed range (CLIP_OBSERVED)."""
        if self.clip == CLIP_OBSERVED:
            if self.n_observed[0] == 0 or y < self.observed[0]:
                self.observed[0] = y
            if self.n_observed[0] == 0 or y > self.observed[1]:
                self.observed[1] = y
            self.n_observed[0] += 1

    cdef void update(self, long t, const int* active, int n_active, const double* preds,
                     double y_hat, double y) noexcept nogil:
        """The learner's own update of its registered state (learn() guards it)."""
        pass

    cdef bint valid(self) noexcept nogil:
        """Conditions beyond finiteness that the state must meet after an update."""
        return True


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


cdef class VAWCombiner(MetaLearner):
    """Second-level VAW on the expert predictions: y_hat = alpha_t . x_t with unconstrained (signed)
    weights alpha_t = (lam I + sum_{s<=t} x_s x_s^T)^{-1} sum_{s<t} y_s x_s (mode "vaw"), or without
    x_t in the matrix (mode "ridge").  With a clip range it is the paper's VAW^2(trunc).

    ``center=True`` regresses the deviation y - m of the label from the mean m of the labels seen
    before on the deviations x_k - m of the (clipped) expert predictions and predicts m + alpha . (x - m):
    a second-level intercept that needs no constant input (m = 0 before the first label).

    The inputs are expert predictions, on the scale of the labels, so a fixed lam regularises more
    the smaller the labels are.  ``scale_lam=True`` makes the level scale-free: it regularises with
    lam * s^2, s the largest |y - m| seen so far (lam before any nonzero one), keeps the Gram matrix
    and re-inverts (Cholesky, O(N^3)) whenever s grows, which happens O(log T) times on an
    exchangeable stream.  On labels in [0, 1] that reach 1 this is the fixed lam.

    ``forget`` = gamma < 1 discounts the past (see linalg.pxd): a round t - s rounds old weighs
    gamma^(t - s) in the Gram matrix, in b and in the label mean (half-life ln 2 / -ln gamma
    rounds), alpha_t = (lam_t I + sum_s gamma^(t-s) x_s x_s^T)^{-1} sum_s gamma^(t-s) y_s x_s, and
    mode "vaw" predicts alpha . x / (1 + x.Px / gamma) with P the inverse before x_t.  The
    discounted Gram matrix G is kept and P recomputed from it with the ridge (lam, or lam s^2)
    every ``period`` = discount_period(gamma, n_experts) rounds; in between the ridge decays as
    lam gamma^k, so lam_t stays in [gamma^period lam, lam] with gamma^period >= min(gamma, 1/2).
    forget = 1 is the undiscounted level, with no extra work.

    An update whose Sherman-Morrison denominator is not finite and positive, or that would overflow
    b, is refused and counted in ``n_rejected``.
    """

    def __init__(self, int n_experts, double lam=1.0, mode="vaw", clip_range=None,
                 bint scale_lam=False, bint center=False, double forget=1.0):
        MetaLearner.__init__(self, n_experts, clip_range)
        if not (lam > 0.0 and np.isfinite(lam)):
            raise ValueError(f"lam must be > 0 and finite, got {lam}")
        if mode not in ("vaw", "ridge"):
            raise ValueError(f"mode must be 'vaw' or 'ridge', got {mode!r}")
        if not 0.0 < forget <= 1.0:
            raise ValueError(f"forget must be in (0, 1], got {forget}")
        self.lam = lam
        self.forget = forget
        self.period = discount_period(forget, n_experts) if forget < 1.0 else 0
        self.mode = VAW_MODE_VAW if mode == "vaw" else VAW_MODE_RIDGE
        self.scale_lam = scale_lam
        self.center = center
        self.label_sums = np.zeros(2 if center else 0)
        self.P = pack(np.eye(n_experts) / lam)
        self.b = np.zeros(n_experts)
        self.u = np.zeros(n_experts)
        self.q = 0.0
        keeps_gram = scale_lam or forget < 1.0
        size = n_experts * (n_experts + 1) // 2 if keeps_gram else 0
        self.G = np.zeros(size)
        self.y_scale = np.zeros(1 if scale_lam else 0)
        self.age = np.zeros(1 if forget < 1.0 else 0, dtype=np.int_)
        self._work = np.zeros(n_experts * n_experts if keeps_gram else 0)
        self._shifted = np.zeros(size)
        self._inverse = np.zeros(size)

    @property
    def weights_(self):
        raise AttributeError("a VAW combiner mixes by regression: its signed coefficients are coef_")

    @property
    def mode_name(self):
        return "vaw" if self.mode == VAW_MODE_VAW else "ridge"

    def _state_arrays(self):
        state = MetaLearner._state_arrays(self)
        state.update(P=self.P, b=self.b)
        if self.G.shape[0] > 0:
            state["G"] = self.G
        if self.scale_lam:
            state["y_scale"] = self.y_scale
        if self.forget < 1.0:
            state["age"] = self.age
        if self.center:
            state["label_sums"] = self.label_sums
        return state

    cdef double offset(self) noexcept nogil:
        """The mean of the labels seen (center), 0 before the first or without centring."""
        if self.center and self.label_sums[1] > 0.0:
            return self.label_sums[0] / self.label_sums[1]
        return 0.0

    def _check_values(self, state):
        name = type(self).__name__
        require_packed_spd(name, "P", state["P"], self.n_experts)
        if self.G.shape[0] > 0:
            require_packed_spd(name, "G", state["G"], self.n_experts, strict=False)
        if self.scale_lam:
            require(state["y_scale"][0] >= 0.0, name, "'y_scale' must be >= 0")
        if self.forget < 1.0:
            require(0 <= state["age"][0] < self.period, name,
                    f"'age' must be in [0, {self.period - 1}]")
        if self.center:
            require(state["label_sums"][1] >= 0.0, name, "'label_sums' must count >= 0 labels")

    def inverse(self):
        return unpack(self.P, self.n_experts)

    @property
    def coef_(self):
        """Current signed weights alpha = P b over the experts (the paper's terminal weights)."""
        return self.inverse() @ np.asarray(self.b)

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef double m = self.offset()
        cdef int k
        self.inputs(active, n_active, preds)
        if not self.center:
            return vaw_predict(self.n_experts, &self.P[0], &self.b[0], &self.xbar[0], &self.u[0],
                               &self.q, self.mode, self.forget)
        for k in range(self.n_experts):
            self.xbar[k] -= m
        return saturate(m + vaw_predict(self.n_experts, &self.P[0], &self.b[0], &self.xbar[0],
                                        &self.u[0], &self.q, self.mode, self.forget))

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        cdef double y = ctx.y
        # xbar, u and q are those of the combine() of this round (the engine calls it just before;
        # with center, xbar is already centred on m).
        cdef int n = self.n_experts, i
        cdef double m = self.offset()
        cdef double target = y - m      # m = 0 without centring
        cdef double s = fabs(target), reg = self.lam * s * s, g = self.forget
        cdef bint keeps_gram = self.G.shape[0] > 0
        if not (vaw_update_safe(n, &self.b[0], &self.xbar[0], self.q, target, 1.0, g)
                and (not keeps_gram or self.gram_stays_finite())
                and (not self.center or isfinite(self.label_sums[0] + y))):
            self.n_rejected += 1
        else:
            if self.center:
                if g < 1.0:
                    scale(2, g, &self.label_sums[0])
                self.label_sums[0] += y
                self.label_sums[1] += 1.0
            if keeps_gram:
                if g < 1.0:
                    scale(self.G.shape[0], g, &self.G[0])
                fastomkl_spr(n, 1.0, &self.xbar[0], &self.G[0])
            if (self.scale_lam and s > self.y_scale[0] and isfinite(reg) and reg > 0.0
                    and self.reinvert(reg)):
                self.y_scale[0] = s
                if g < 1.0:
                    scale(n, g, &self.b[0])
                    self.age[0] = 0
                for i in range(n):
                    self.b[i] += target * self.xbar[i]
            else:
                vaw_update(n, &self.P[0], &self.b[0], &self.xbar[0], &self.u[0], self.q, target,
                           1.0, g)
                if g < 1.0:
                    # the ridge has decayed by gamma^age: restore it from G every period rounds
                    self.age[0] += 1
                    if self.age[0] == self.period:
                        self.reinvert(self.ridge())
                        self.age[0] = 0
        self.observe(y)

    cdef double ridge(self) noexcept nogil:
        """The ridge P is recomputed with: lam s^2 for scale_lam once a deviation s > 0 has set
        it, lam otherwise."""
        if self.scale_lam and self.y_scale[0] > 0.0:
            return self.lam * self.y_scale[0] * self.y_scale[0]
        return self.lam

    cdef bint gram_stays_finite(self) noexcept nogil:
        """Whether G + x x^T is finite: its diagonal is enough, since |G_ij| <= sqrt(G_ii G_jj)
        for a positive semidefinite G."""
        cdef int i
        for i in range(self.n_experts):
            if not isfinite(self.G[i * (i + 1) // 2 + i] + self.xbar[i] * self.xbar[i]):
                return False
        return True

    cdef bint reinvert(self, double reg) noexcept nogil:
        """P = (reg I + G)^{-1} by Cholesky; False (P unchanged) if that is not positive definite
        or not finite in floating point."""
        cdef int n = self.n_experts, i, size = self.G.shape[0]
        memcpy(&self._shifted[0], &self.G[0], size * sizeof(double))
        add_diagonal(n, reg, &self._shifted[0])
        if fastomkl_spd_inverse(n, &self._shifted[0], &self._work[0], &self._inverse[0]) != 0:
            return False
        for i in range(size):
            if not isfinite(self._inverse[i]):
                return False
        memcpy(&self.P[0], &self._inverse[0], size * sizeof(double))
        return True


cdef class ExpWeights(MetaLearner):
    def __init__(self, int n_experts, eta, clip_range=None):
        MetaLearner.__init__(self, n_experts, clip_range)
        if eta is None:
            self.eta = 0.0
        elif not (float(eta) > 0.0 and np.isfinite(float(eta))):
            raise ValueError(f"eta must be > 0 and finite (or None: from the data), got {eta}")
        else:
            self.eta = float(eta)
        self.L = np.zeros(n_experts)
        self.w = np.full(n_experts, 1.0 / n_experts)
        self._guard(self.L)

    def _state_arrays(self):
        state = MetaLearner._state_arrays(self)
        state["L"] = self.L
        return state

    def _check_values(self, state):
        require((state["L"] >= 0).all(), self, "'L' must be >= 0 (cumulative square losses)")

    @property
    def rate_(self):
        """The rate of this round (inf: follow the leader; 0: no usable rate yet)."""
        return self.rate()

    cdef double rate(self) noexcept nogil:
        return self.eta

    cdef void weights(self) noexcept nogil:
        cdef int k
        cdef double eta = self.rate()
        if isfinite(eta):
            for k in range(self.n_experts):
                self.w[k] = -eta * self.L[k]
            mix_weights(&self.w[0], self.n_experts)
        else:                           # follow the leader: uniform over the smallest losses
            for k in range(self.n_experts):
                self.w[k] = -self.L[k]
            mix_weights_leader(&self.w[0], self.n_experts)

    cdef void update(self, long t, const int* active, int n_active, const double* preds,
                     double y_hat, double y) noexcept nogil:
        cdef int j, k
        cdef double e
        self.inputs(active, n_active, preds)
        for j in range(n_active):
            k = active[j]
            e = self.xbar[k] - y
            self.L[k] += e * e


cdef void mix_weights_leader(double* v, int n) noexcept nogil:
    """v <- uniform weights over the largest entries of v."""
    cdef double top = v[0], count = 0.0
    cdef int k
    for k in range(1, n):
        if v[k] > top:
            top = v[k]
    for k in range(n):
        v[k] = 1.0 if v[k] == top else 0.0
        count += v[k]
    for k in range(n):
        v[k] /= count


cdef class EWA(ExpWeights):
    """Exponentially weighted average: y_hat = sum_k w_k x_k, w proportional to exp(-eta L_k), with
    L_k the cumulative square loss of (clipped) expert k over past rounds.

    eta > 0 is a fixed rate: for labels in [lo, hi] the exp-concavity rate is 1 / (2 (hi - lo)^2),
    0.5 on [0, 1] (the paper).  eta=None chooses it from the data, AdaHedge's way (de Rooij, van
    Erven, Grunwald & Koolen 2014): eta_t = ln K / Delta_{t-1}, Delta the cumulative mixability
    gap sum_s (w_s . l_s + (1/eta_s) ln sum_k w_{s,k} exp(-eta_s l_{s,k})) of the square losses l;
    infinite (follow the leader) while Delta = 0.  Scaling the labels by c scales Delta by c^2 and
    eta by 1/c^2, so the weights are scale-free.
    """

    def __init__(self, int n_experts, eta=None, clip_range=None):
        ExpWeights.__init__(self, n_experts, eta, clip_range)
        self.gap = np.zeros(1 if self.eta == 0.0 else 0)
        if self.eta == 0.0:
            self._guard(self.gap)

    def _state_arrays(self):
        state = ExpWeights._state_arrays(self)
        if self.eta == 0.0:
            state["gap"] = self.gap
        return state

    def _check_values(self, state):
        ExpWeights._check_values(self, state)
        if self.eta == 0.0:
            require(state["gap"][0] >= 0, self, "'gap' must be >= 0")

    cdef double rate(self) noexcept nogil:
        if self.eta > 0.0:
            return self.eta
        if self.gap[0] > 0.0:
            return log(<double>self.n_experts) / self.gap[0]       # may be inf: leader
        return INFINITY

    cdef void update(self, long t, const int* active, int n_active, const double* preds,
                     double y_hat, double y) noexcept nogil:
        cdef int j, k
        cdef double eta, e, loss, mixed = 0.0, low = INFINITY, total = 0.0, mix
        if self.eta == 0.0:
            # this round's mixability gap, with the weights and clipped inputs of its prediction
            self.weights()
            self.inputs(active, n_active, preds)
            eta = self.rate()
            for j in range(n_active):
                k = active[j]
                if self.w[k] > 0.0:
                    e = self.xbar[k] - y
                    loss = e * e
                    mixed += self.w[k] * loss
                    if loss < low:
                        low = loss
            if isfinite(eta):
                for j in range(n_active):
                    k = active[j]
                    if self.w[k] > 0.0:
                        e = self.xbar[k] - y
                        total += self.w[k] * exp(-eta * (e * e - low))
                mix = low - log(total) / eta
            else:
                mix = low
            if mixed > mix:
                self.gap[0] += mixed - mix
        ExpWeights.update(self, t, active, n_active, preds, y_hat, y)


cdef class AA(ExpWeights):
    """Vovk's Aggregating Algorithm for the square loss on [lo, hi] (needs a clip range: fixed or
    "observed"), with mixability eta = 2 / (hi - lo)^2 for the optimal rate (eta=None: that rate
    for the clip range of the round; a number fixes it).  Generalised prediction
    g(v) = -(1/eta) ln sum_k pi_k exp(-eta (v - x_k)^2), pi proportional to exp(-eta L);
    substitution gamma = (lo + hi)/2 + (g(lo) - g(hi)) / (2 (hi - lo)); y_hat = clip(gamma, lo, hi).
    Computed with log-sum-exp (no underflow however large L grows).  Without a range yet (no label,
    or all labels equal) it predicts the mean of the clipped expert predictions."""

    def __init__(self, int n_experts, eta=None, clip_range="observed"):
        if clip_range is None:
            raise ValueError("the Aggregating Algorithm needs the label range (lo, hi) or "
                             "'observed'")
        ExpWeights.__init__(self, n_experts, eta, clip_range)

    cdef double rate(self) noexcept nogil:
        cdef double lo, hi
        if self.eta > 0.0:
            return self.eta
        if self.range_known(&lo, &hi) and hi > lo:
            return 2.0 / ((hi - lo) * (hi - lo))
        return 0.0

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef int j, k
        cdef double eta, lo, hi
        cdef double a, c, top_lo = -INFINITY, top_hi = -INFINITY, s_lo = 0.0, s_hi = 0.0, gamma
        self.inputs(active, n_active, preds)
        eta = self.rate()
        if not (self.range_known(&lo, &hi) and hi > lo and eta > 0.0 and isfinite(eta)):
            gamma = 0.0
            for j in range(n_active):
                gamma += self.xbar[active[j]]
            return saturate(gamma / n_active)
        for j in range(n_active):
            k = active[j]
            a = -eta * self.L[k] - eta * (lo - self.xbar[k]) * (lo - self.xbar[k])
            c = -eta * self.L[k] - eta * (hi - self.xbar[k]) * (hi - self.xbar[k])
            if a > top_lo:
                top_lo = a
            if c > top_hi:
                top_hi = c
        if not (isfinite(top_lo) and isfinite(top_hi)):
            return 0.5 * (lo + hi)      # every log-weight overflowed: no preference left
        for j in range(n_active):
            k = active[j]
            s_lo += exp(-eta * self.L[k] - eta * (lo - self.xbar[k]) * (lo - self.xbar[k]) - top_lo)
            s_hi += exp(-eta * self.L[k] - eta * (hi - self.xbar[k]) * (hi - self.xbar[k]) - top_hi)
        # g(lo) - g(hi) = (ln S_hi - ln S_lo) / eta
        gamma = 0.5 * (lo + hi) + ((top_hi + log(s_hi)) - (top_lo + log(s_lo))) / (
            2.0 * eta * (hi - lo))
        if not (gamma >= lo):           # also NaN
            return lo if gamma < lo else 0.5 * (lo + hi)
        if gamma > hi:
            return hi
        return gamma


cdef class AdaptiveRates(MetaLearner):
    """What BOA and ML-Prod share: per-expert learning rates lr, their variance and range terms
    V and M (all kept positive) and the regrets R, guarded against non-finite updates."""

    def __init__(self, int n_experts, clip_range=None):
        MetaLearner.__init__(self, n_experts, clip_range)
        self.lr = np.full(n_experts, TINY)
        self.V = np.full(n_experts, TINY)
        self.M = np.full(n_experts, TINY)
        self.R = np.zeros(n_experts)
        self.w = np.full(n_experts, 1.0 / n_experts)
        self._guard(self.lr, self.V, self.M, self.R)

    def _state_arrays(self):
        state = MetaLearner._state_arrays(self)
        state.update(lr=self.lr, V=self.V, M=self.M, R=self.R)
        return state

    def _check_values(self, state):
        for key in ("lr", "V", "M"):
            require((state[key] > 0).all(), self, f"'{key}' must be > 0")

    cdef bint valid(self) noexcept nogil:
        cdef int k
        for k in range(self.n_experts):
            if not (self.lr[k] > 0.0 and self.V[k] > 0.0 and self.M[k] > 0.0):
                return False
        return True


cdef class BOA(AdaptiveRates):
    """Bernstein Online Aggregation (Wintenberger 2017) with adaptive per-expert rates."""

    def __init__(self, int n_experts, clip_range=None):
        AdaptiveRates.__init__(self, n_experts, clip_range)
        self.Rreg = np.zeros(n_experts)
        self._guard(self.Rreg)

    def _state_arrays(self):
        state = AdaptiveRates._state_arrays(self)
        state.update(Rreg=self.Rreg)
        return state

    cdef void weights(self) noexcept nogil:
        cdef int k, n = self.n_experts
        cdef double log_prior = log(1.0 / n)
        for k in range(n):
            self.w[k] = log(self.lr[k]) + log_prior + self.lr[k] * self.Rreg[k]
        mix_weights(&self.w[0], n)

    cdef void update(self, long t, const int* active, int n_active, const double* preds,
                     double y_hat, double y) noexcept nogil:
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
    """ML-Poly (Gaillard, Stoltz & van Erven 2014): w proportional to lr_k max(R_k, 0).

    `loss` (a code of fastomkl._core.losses, not the softmax) takes the regrets on that loss's
    tangent at the mixture (the gradient trick), with its parameter `param`; None: the square
    loss's regrets themselves (paper 003's meta-learner)."""

    def __init__(self, int n_experts, clip_range=None, loss=None, double param=0.0):
        if loss is not None and loss == LOSS_SOFTMAX:
            raise ValueError("ML-Poly's gradient trick needs a loss of one output (not the "
                             "softmax)")
        MetaLearner.__init__(self, n_experts, clip_range)
        self.loss = -1 if loss is None else loss
        self.param = param
        self.lr = np.full(n_experts, TINY)
        self.R = np.zeros(n_experts)
        self.Smax = np.zeros(1)
        self.w = np.full(n_experts, 1.0 / n_experts)
        self._guard(self.lr, self.R, self.Smax)

    def _state_arrays(self):
        state = MetaLearner._state_arrays(self)
        state.update(lr=self.lr, R=self.R, Smax=self.Smax)
        return state

    def _check_values(self, state):
        name = type(self).__name__
        require((state["lr"] > 0).all(), name, "'lr' must be > 0")
        require(state["Smax"][0] >= 0, name, "'Smax' must be >= 0")

    cdef bint valid(self) noexcept nogil:
        cdef int k
        for k in range(self.n_experts):
            if not self.lr[k] > 0.0:
                return False
        return True

    cdef void weights(self) noexcept nogil:
        cdef int k, n = self.n_experts
        cdef double total = 0.0, v
        for k in range(n):
            v = self.R[k] if self.R[k] > 0.0 else 0.0
            self.w[k] = self.lr[k] * v
            total += self.w[k]
        for k in range(n):
            if total == 0.0 or not isfinite(total):
                self.w[k] = 1.0 / n
            else:
                self.w[k] /= total

    cdef double regret(self, int k, double y_hat, double y, double slope) noexcept nogil:
        """Expert k's instantaneous regret to the mixture y_hat."""
        if self.loss >= 0:
            return slope * (y_hat - self.xbar[k])
        return (y_hat - y) * (y_hat - y) - (self.xbar[k] - y) * (self.xbar[k] - y)

    cdef void update(self, long t, const int* active, int n_active, const double* preds,
                     double y_hat, double y) noexcept nogil:
        cdef int j, k
        cdef double r, r2max = 0.0, delta, slope = 0.0
        self.inputs(active, n_active, preds)
        if self.loss >= 0:
            # the mixture of this round's inputs with its weights, in the units the experts
            # predict in (an engine's y_hat may be in those of the targets including this one)
            y_hat = 0.0
            for j in range(n_active):
                y_hat += self.w[active[j]] * self.xbar[active[j]]
            slope = loss_derivative_with(self.loss, y_hat, y, self.param)
        for j in range(n_active):
            r = self.regret(active[j], y_hat, y, slope)
            if r * r > r2max:
                r2max = r * r
        delta = r2max - self.Smax[0]
        if delta < 0.0:
            delta = 0.0
        for j in range(n_active):
            k = active[j]
            r = self.regret(k, y_hat, y, slope)
            self.R[k] += r
            self.lr[k] = 1.0 / (1.0 / self.lr[k] + r * r + delta)
        self.Smax[0] += delta


cdef class MLProd(AdaptiveRates):
    """ML-Prod (Gaillard, Stoltz & van Erven 2014): w proportional to lr_k exp(R_k), computed in
    the log domain."""

    cdef void weights(self) noexcept nogil:
        cdef int k
        for k in range(self.n_experts):
            self.w[k] = log(self.lr[k]) + self.R[k]
        mix_weights(&self.w[0], self.n_experts)

    cdef void update(self, long t, const int* active, int n_active, const double* preds,
                     double y_hat, double y) noexcept nogil:
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
