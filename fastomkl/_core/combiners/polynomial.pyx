"""Polynomially weighted averages with one learning rate per expert: ML-Poly (Gaillard, Stoltz &
van Erven 2014, "A second-order bound with excess losses"), the combiner of the step ensembles."""
import numpy as np

from fastomkl._core.checks import MAX_ROUNDS, require

from libc.math cimport isfinite

from fastomkl._core.base cimport FullInformation, Round
from fastomkl._core.losses cimport LOSS_SOFTMAX, loss_derivative_with


cdef class PolynomialWeights(FullInformation):
    """ML-Poly on linearised losses: y_hat = sum_k w_bar_k f_k with

        w_k = eta_k max(R_k, 0),   R_k = sum_s r_ks,   eta_k = 1 / (1 + sum_s r_ks^2),
        r_ks = l'(y_hat_s, y_s) (y_hat_s - f_ks),

    the regret of expert k to the mixture on the loss's tangent at the mixture (the "gradient
    trick"), and uniform weights while no expert is ahead.  No rate to choose: each expert's
    learning rate adapts to the size of its own regrets, so the same combiner serves targets in
    any units.  Against Hedge on its members' own losses, it competes with the best convex
    combination of the members, not only with the best member: on a drifting stream, a mixture
    of a long and a short step beats both (bench/defaults.py, FOGD, DSG and NORMA).
    """

    def __init__(self, int n_experts, int loss, double param=0.0):
        if n_experts < 1:
            raise ValueError(f"n_experts must be >= 1, got {n_experts}")
        if loss == LOSS_SOFTMAX:
            raise ValueError("PolynomialWeights needs a loss of one output (not the softmax)")
        self.n_experts = n_experts
        self.loss = loss
        self.param = param
        self.regret = np.zeros(n_experts)
        self.squares = np.zeros(n_experts)
        self.w_bar = np.full(n_experts, 1.0 / n_experts)

    def _state_arrays(self):
        return {"regret": self.regret, "squares": self.squares, "w_bar": self.w_bar}

    def _check_semantics(self, state):
        regret, squares = state["regret"], state["squares"]
        require((squares >= 0).all(), self, "squares must be >= 0 (sums of squared regrets)")
        # Cauchy-Schwarz over the rounds: R_k^2 <= t S_k, and t <= 2^53 (a regret without squares
        # behind it would weigh its expert alone, whatever the others did)
        require((regret * regret <= (1.0 + 1e-9) * MAX_ROUNDS * squares).all(), self,
                "regret must satisfy regret^2 <= 2^53 squares (a sum of rounds' regrets)")
        lead = np.maximum(regret, 0.0) / (1.0 + squares)
        w = lead / lead.sum() if lead.sum() > 0 else np.full(len(lead), 1.0 / len(lead))
        require(np.allclose(state["w_bar"], w, rtol=1e-9, atol=0.0), self,
                "w_bar must be the normalised max(regret, 0) / (1 + squares)")

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef double y_hat = 0.0
        cdef int j
        for j in range(n_active):
            y_hat += self.w_bar[active[j]] * preds[active[j]]
        return y_hat

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        # the mixture of the members' predictions as they were made (the engine's y_hat may be
        # in the units of the targets including this one's; the members' are not)
        cdef double mix = self.combine(active, n_active, preds), g, r
        cdef int j, k
        g = loss_derivative_with(self.loss, mix, ctx.y, self.param)
        for j in range(n_active):
            r = g * (mix - preds[active[j]])
            if not isfinite(self.squares[active[j]] + r * r):
                self.n_rejected += 1
                return
        for j in range(n_active):
            k = active[j]
            r = g * (mix - preds[k])
            self.regret[k] += r
            self.squares[k] += r * r
        self.reweigh()

    cdef void reweigh(self) noexcept nogil:
        cdef double total = 0.0, lead
        cdef int k
        for k in range(self.n_experts):
            lead = self.regret[k] / (1.0 + self.squares[k]) if self.regret[k] > 0.0 else 0.0
            self.w_bar[k] = lead
            total += lead
        for k in range(self.n_experts):
            self.w_bar[k] = self.w_bar[k] / total if total > 0.0 else 1.0 / self.n_experts
