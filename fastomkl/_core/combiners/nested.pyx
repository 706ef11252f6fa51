"""Exponential weights in two layers: AdaRaker's combiner of Raker instances."""
import numpy as np

from fastomkl._core.checks import require

from libc.math cimport isfinite

from fastomkl._core.base cimport FullInformation, Round
from fastomkl._core.losses cimport loss_value
from fastomkl._core.numeric cimport LOG_WEIGHT_FLOOR, fixed_share, normalise_log_weights


cdef class NestedHedge(FullInformation):
    """Instance i of n_instances is a Raker over the kernels: its prediction is
    g_i = sum_k w_bar[k, i] f[k, i] (expert k * n_instances + i) and its kernel weights take
    w[k, i] <- w[k, i] exp(-rates[i] L[k, i]) on the experts' losses.  The second layer predicts
    y_hat = sum_i h_bar[i] g_i and takes h[i] <- h[i] exp(-meta_rate loss(g_i, y)).  After every
    round t with t % periods[i] == 0 instance i starts afresh: its kernel weights return to uniform
    (its experts return to zero in the expert bank, ``OGDRestarts``); its second-layer weight is
    its level's record and carries on, so a level whose intervals suit the stream keeps its lead
    across its restarts.  With a fixed share alpha > 0 (Herbster & Warmuth 1998) the second layer's
    update ends with h_bar <- (1 - alpha) h_bar + alpha / n_instances: no level's weight falls
    below alpha / n_instances, so after a change the levels that restart often can take the lead
    within about log(n_instances / alpha) / (meta_rate * loss gap) rounds, however long the
    never-restarting level led before."""

    def __init__(self, int n_kernels, rates, periods, double meta_rate, int loss,
                 double share=0.0):
        rates = np.ascontiguousarray(rates, dtype=np.float64)
        periods = np.ascontiguousarray(periods, dtype=np.int64)
        if rates.ndim != 1 or len(rates) == 0 or periods.shape != rates.shape:
            raise ValueError("rates and periods must give one value per instance")
        if not (np.isfinite(rates).all() and (rates >= 0).all() and (periods >= 0).all()):
            raise ValueError("rates must be finite and >= 0, periods >= 0")
        if not (np.isfinite(meta_rate) and meta_rate >= 0):
            raise ValueError(f"meta_rate must be finite and >= 0, got {meta_rate}")
        if not 0.0 <= share < 1.0:
            raise ValueError(f"share must be in [0, 1), got {share}")
        self.share = share
        self.n_kernels = n_kernels
        self.n_instances = len(rates)
        self.n_experts = n_kernels * self.n_instances
        self.rates = rates
        self.periods = periods
        self.meta_rate = meta_rate
        self.loss = loss
        self.log_w = np.zeros(self.n_experts)
        self.w_bar = np.full(self.n_experts, 1.0 / n_kernels)
        self.log_h = np.zeros(self.n_instances)
        self.h_bar = np.full(self.n_instances, 1.0 / self.n_instances)
        self.meta_losses = np.zeros(self.n_instances)

    def _state_arrays(self):
        return {"log_w": self.log_w, "w_bar": self.w_bar, "log_h": self.log_h,
                "h_bar": self.h_bar}

    def _check_semantics(self, state):
        # columns: the kernel weights of one instance, and the instances' weights
        for log_name, bar_name, shape in (("log_w", "w_bar", (self.n_kernels, self.n_instances)),
                                          ("log_h", "h_bar", (self.n_instances, 1))):
            log_w, bar = state[log_name].reshape(shape), state[bar_name].reshape(shape)
            require(np.all(log_w.max(axis=0) == 0.0) and log_w.min() >= LOG_WEIGHT_FLOOR, self,
                    f"{log_name} must be normalised (maximum 0, minimum above the floor)")
            w = np.exp(log_w)
            require(np.allclose(bar, w / w.sum(axis=0), rtol=1e-9, atol=0.0), self,
                    f"{bar_name} must be the normalised exp({log_name})")

    @property
    def kernel_weights_(self):
        """(n_kernels,) what the model puts on each kernel: sum_i h_bar[i] w_bar[k, i]."""
        return np.asarray(self.w_bar).reshape(self.n_kernels, self.n_instances) @ \
            np.asarray(self.h_bar)

    cdef double instance_prediction(self, int i, const double* preds) noexcept nogil:
        cdef double g = 0.0
        cdef int k, e
        for k in range(self.n_kernels):
            e = k * self.n_instances + i
            g += self.w_bar[e] * preds[e]
        return g

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef double y_hat = 0.0
        cdef int i
        for i in range(self.n_instances):
            y_hat += self.h_bar[i] * self.instance_prediction(i, preds)
        return y_hat

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        cdef int i, k, e
        for i in range(self.n_instances):
            self.meta_losses[i] = loss_value(self.loss, self.instance_prediction(i, preds), ctx.y)
            if not isfinite(self.meta_rate * self.meta_losses[i]):
                self.n_rejected += 1                      # all or nothing: refused, unchanged
                return
        for e in range(self.n_experts):
            if not isfinite(self.rates[e % self.n_instances] * losses[e]):
                self.n_rejected += 1
                return
        for i in range(self.n_instances):
            self.log_h[i] -= self.meta_rate * self.meta_losses[i]
        for e in range(self.n_experts):
            self.log_w[e] -= self.rates[e % self.n_instances] * losses[e]
        for i in range(self.n_instances):
            if self.periods[i] > 0 and ctx.t % self.periods[i] == 0:
                for k in range(self.n_kernels):
                    self.log_w[k * self.n_instances + i] = 0.0
            # instance i's kernel weights: the entries i, i + m, i + 2m, ... (m instances)
            normalise_log_weights(&self.log_w[i], &self.w_bar[i], self.n_kernels,
                                  self.n_instances)
        normalise_log_weights(&self.log_h[0], &self.h_bar[0], self.n_instances, 1)
        if self.share > 0.0:
            fixed_share(&self.log_h[0], &self.h_bar[0], self.n_instances, self.share)
