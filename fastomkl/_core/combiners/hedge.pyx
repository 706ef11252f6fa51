"""Exponential weights over every expert: Hedge (Raker), Hedge in the targets' units (KernelAWV's
ridge ensemble) and the discounted Hedge of OMKR."""
import numpy as np

from fastomkl._core.checks import require

from libc.math cimport exp, isfinite, log, INFINITY

from fastomkl._core.base cimport FullInformation, Round
from fastomkl._core.numeric cimport (LOG_WEIGHT_FLOOR, fixed_share, normalise_log_weights,
                                     share_log_weights)
from fastomkl._core.steps cimport SCHEDULE_CONSTANT, ChangeTest, Schedule, schedule_at


cdef class Hedge(FullInformation):
    """Hedge / exponential weights: w_k <- w_k exp(-eta_t L_k); y_hat = sum_k w_bar_k f_k.

    With a fixed share alpha > 0 (Herbster & Warmuth 1998), each update ends with
    w_bar <- (1 - alpha) w_bar + alpha / N: no weight falls below alpha / N, so an expert that was
    bad can take the lead again within about log(N / alpha) / (eta * loss gap) rounds after it
    becomes the best, however long it lost before (plain Hedge needs as many rounds as it lost).
    With a ``change`` test (``steps.ChangeTest``), the same mixing with ``change_share`` follows
    each of its alarms instead of every round: the weights the old data earned keep their lead
    while nothing changes, and after a change every expert is a few rounds from taking it.
    """

    def __init__(self, int n_experts, double eta_scale, int eta_kind, double share=0.0,
                 ChangeTest change=None, double change_share=0.5):
        if not 0.0 <= share < 1.0:
            raise ValueError(f"share must be in [0, 1), got {share}")
        if not 0.0 < change_share <= 1.0:
            raise ValueError(f"change_share must be in (0, 1], got {change_share}")
        self.n_experts = n_experts
        self.eta.scale = eta_scale
        self.eta.kind = eta_kind
        self.share = share
        self.change = change
        self.change_share = change_share
        self.log_w = np.zeros(n_experts)
        self.w_bar = np.full(n_experts, 1.0 / n_experts)

    def _state_arrays(self):
        state = {"log_w": self.log_w, "w_bar": self.w_bar}
        if self.change is not None:
            state["change_test"] = self.change.sums
        return state

    def _check_semantics(self, state):
        log_w = state["log_w"]
        require(log_w.max() == 0.0 and log_w.min() >= LOG_WEIGHT_FLOOR, self,
                "log_w must be normalised (maximum 0, minimum above the floor)")
        w = np.exp(log_w)
        require(np.allclose(state["w_bar"], w / w.sum(), rtol=1e-9, atol=0.0), self,
                "w_bar must be the normalised exp(log_w)")
        if "change_test" in state:
            self.change.check(self, state["change_test"])

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef double y_hat = 0.0
        cdef int j
        for j in range(n_active):
            y_hat += self.w_bar[active[j]] * preds[active[j]]
        return y_hat

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        if (self.update(schedule_at(self.eta, ctx.t), active, n_active, losses)
                and self.change is not None and self.change.fires(ctx.y_hat, ctx.y)):
            fixed_share(&self.log_w[0], &self.w_bar[0], self.n_experts, self.change_share)

    cdef bint update(self, double eta, const int* active, int n_active,
                     const double* losses) noexcept nogil:
        """The exponential update (and the fixed share); False, and no change, if it would make
        a weight non-finite."""
        cdef int j
        for j in range(n_active):
            if not isfinite(eta * losses[active[j]]):
                self.n_rejected += 1
                return False
        for j in range(n_active):
            self.log_w[active[j]] -= eta * losses[active[j]]
        normalise_log_weights(&self.log_w[0], &self.w_bar[0], self.n_experts, 1)
        if self.share > 0.0:
            fixed_share(&self.log_w[0], &self.w_bar[0], self.n_experts, self.share)
        return True


cdef class ScaledHedge(Hedge):
    """Hedge at a rate in the targets' units: w_k <- w_k exp(-eta L_k / v_t), v_t the variance of
    the targets seen so far (y_1 ... y_t, Welford's running moments), so that squared losses
    weigh the same whatever the units of y, as a constant rate does on standardised targets.
    The first round (v = 0) moves no weight."""

    def __init__(self, int n_experts, double eta_scale, double share=0.0):
        Hedge.__init__(self, n_experts, eta_scale, SCHEDULE_CONSTANT, share)
        self.moments = np.zeros(3)             # [targets seen, their mean, sum of squared deviations]

    def _state_arrays(self):
        return {**Hedge._state_arrays(self), "moments": self.moments}

    def _check_semantics(self, state):
        Hedge._check_semantics(self, state)
        count, _, m2 = state["moments"]
        require(count >= 0 and count == np.floor(count) and m2 >= 0, self,
                "moments must be [count >= 0 (whole), mean, sum of squares >= 0]")

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        cdef double y = ctx.y, count = self.moments[0] + 1.0, delta = y - self.moments[1]
        self.moments[0] = count
        self.moments[1] += delta / count
        self.moments[2] += delta * (y - self.moments[1])
        if self.moments[2] > 0.0:
            self.update(self.eta.scale * count / self.moments[2], active, n_active, losses)


cdef class DiscountHedge(FullInformation):
    """Every expert, weights w_k <- w_k beta^{L_k} from w_k = 1/N (OMKR, RFOMKR).

    ``normalize`` (default) predicts sum_k w_bar_k f_k; without it, sum_k w_k f_k with the raw
    weights, as the released RFOMKR code does (the weights shrink, so do the predictions).  With
    a ``change`` test (``steps.ChangeTest``; normalised weights only), each alarm ends its round
    with a fixed share ``change_share`` of the normalised weights, as in ``Hedge``.
    """

    def __init__(self, int n_experts, double beta=0.5, bint normalize=True,
                 ChangeTest change=None, double change_share=0.5):
        if not 0.0 < beta <= 1.0:
            raise ValueError(f"beta must be in (0, 1], got {beta}")
        if not 0.0 < change_share <= 1.0:
            raise ValueError(f"change_share must be in (0, 1], got {change_share}")
        if change is not None and not normalize:
            raise ValueError("a change test shares normalised weights: normalize must be True")
        self.n_experts = n_experts
        self.log_beta = log(beta)
        self.normalize = normalize
        self.change = change
        self.change_share = change_share
        self.log_w = np.full(n_experts, -np.log(n_experts))

    def _state_arrays(self):
        if self.change is not None:
            return {"log_w": self.log_w, "change_test": self.change.sums}
        return {"log_w": self.log_w}

    def _check_semantics(self, state):
        if "change_test" in state:
            self.change.check(self, state["change_test"])

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef double top = -INFINITY, num = 0.0, den = 0.0, w
        cdef int j
        if not self.normalize:
            for j in range(n_active):
                num += exp(self.log_w[active[j]]) * preds[active[j]]
            return num
        for j in range(n_active):
            if self.log_w[active[j]] > top:
                top = self.log_w[active[j]]
        for j in range(n_active):
            w = exp(self.log_w[active[j]] - top)
            num += w * preds[active[j]]
            den += w
        return num / den

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        cdef int j
        for j in range(n_active):
            if not isfinite(self.log_beta * losses[active[j]]):
                self.n_rejected += 1
                return
        for j in range(n_active):
            self.log_w[active[j]] += self.log_beta * losses[active[j]]
            if self.log_w[active[j]] < LOG_WEIGHT_FLOOR:
                self.log_w[active[j]] = LOG_WEIGHT_FLOOR
        if self.change is not None and self.change.fires(ctx.y_hat, ctx.y):
            share_log_weights(&self.log_w[0], self.n_experts, self.change_share)
