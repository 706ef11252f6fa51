"""Compiled experts: single-kernel online learners on one representation each."""
import numpy as np

from fastomkl._core.arrays import aligned_rows
from fastomkl._core.checks import require

from libc.math cimport fabs, sqrt

from fastomkl._core.base cimport ExpertBank, Round
from fastomkl._core.losses cimport loss_derivative, loss_value, reach_factor
from fastomkl._core.numeric cimport STATE_LIMIT
from fastomkl._core.steps cimport (SCHEDULE_ADAGRAD, SCHEDULE_CONSTANT, SCHEDULE_ENSEMBLE,
                                   SCHEDULE_INV_SQRT, Schedule, adagrad_step, proximal_update,
                                   schedule_at, truncated_step)


cdef extern from "fastomkl_kernels.h" nogil:
    double fastomkl_dot(const double *a, const double *b, int n)
    double fastomkl_dot_sqnorm(const double *a, const double *b, int n, double *bb)
    void fastomkl_shrink_axpy(double *theta, const double *z, int n, double shrink, double g,
                              double *norm_before, double *norm_after)


cdef inline bint commit_step(OGDExperts bank, int k, const double* z, double shrink, double g,
                             double zz, double* loss) noexcept nogil:
    """theta_k <- shrink theta_k + g z unless the result could pass STATE_LIMIT (then counted as
    rejected, theta_k kept); adds the regulariser to *loss (of the norm before or after the step,
    as the bank takes it) and returns whether the step was taken."""
    cdef double norm_before, norm_after
    # the bound needs two square roots only when the norms are beyond 1e180, which learning all
    # but never reaches (the short test decides the same: both sides then stay below 1e100)
    if not (bank.sqnorm[k] <= 1e180 and zz <= 1e180 and fabs(shrink) <= 1e5 and fabs(g) <= 1e5) \
            and not fabs(shrink) * sqrt(bank.sqnorm[k]) + fabs(g) * sqrt(zz) <= STATE_LIMIT:
        bank.n_rejected += 1
        loss[0] += bank.lam * bank.sqnorm[k]
        return False
    fastomkl_shrink_axpy(&bank.rows[k, 0], z, bank.rows.shape[1], shrink, g, &norm_before,
                         &norm_after)
    bank.sqnorm[k] = norm_after
    loss[0] += bank.lam * (norm_after if bank.regularizer_after_update else norm_before)
    return True


cdef inline double adagrad_update(OGDExperts bank, int k, const double* z, double d, double loss,
                                 double zz, double weight) noexcept nogil:
    """Expert k's AdaGrad-norm update (eta="auto"): the step scale / sqrt(G) after G += weight
    ||d z||^2, times the importance weight, truncated at the zero of the loss's tangent, taken
    explicitly (theta <- (1 - 2 step lam) theta - step d z); G is kept only if the step is.
    Returns the loss with its regulariser (``commit_step``)."""
    cdef double grad_sq = bank.grad_sq[k]
    cdef double step = adagrad_step(bank.eta.scale, &grad_sq, weight * d * d * zz) * weight
    step = truncated_step(step, fabs(d) * zz, loss, d)
    if commit_step(bank, k, z, 1.0 - 2.0 * step * bank.lam, step * d, zz, &loss):
        bank.grad_sq[k] = grad_sq
    return loss


cdef class OGDExperts(ExpertBank):
    """Regularised online gradient descent, one linear model per kernel (Raker's experts).

    learn() returns L_k = loss(f_k, y) + lam * ||theta_k||^2 with theta_k taken before the update
    (the paper), or after it when `regularizer_after_update` (the authors' released code), and
    steps theta_k <- theta_k - eta_t * weight * (loss'(f_k, y) z_k + 2 lam theta_k).

    With the ADAGRAD schedule, eta_t = scale / sqrt(G_k) (AdaGrad-norm, Ward, Wu & Bottou 2019),
    G_k = sum of weight * ||loss'(f_k, y) z_k||^2 over the rounds expert k learnt from, this one
    included.  An expert that learns with importance weight 1/q when it is observed (probability q)
    thus accumulates an unbiased estimate of the full-information sum, and steps like an expert
    that sees every round, in expectation (with the squared weights of the gradients themselves it
    would step sqrt(q) times slower).  The step is truncated (``truncated_step``) so the update
    never takes f_k past the zero of the tangent of its loss: the step is free of the units of y and
    of the gradients, and a large importance weight cannot make it overshoot.

    An update whose result could exceed STATE_LIMIT in norm (bounded before it is applied, from
    ||theta_k|| and ||z_k||) is refused and counted in n_rejected.
    """

    def __init__(self, int n_experts, int dim, int loss, double lam, double eta_scale,
                 int eta_kind, bint regularizer_after_update=False):
        self.n_experts = n_experts
        self.independent = True
        self.dim = dim
        self.loss = loss
        self.lam = lam
        self.eta.scale = eta_scale
        self.eta.kind = eta_kind
        self.regularizer_after_update = regularizer_after_update
        # Each theta_k starts on a 64-byte boundary (a row of 100 doubles would not): the
        # vector loads and stores of its dot product and update then never straddle cache lines
        # (Raker-76, D = 50: about 10% of a round).  Its padding stays zero, and so does the
        # padding of the engine's z rows, so both kernels run over whole vectors: the padding
        # adds 0 to every sum.
        self.rows = aligned_rows(n_experts, dim)
        self.theta = np.asarray(self.rows)[:, :dim]
        self.sqnorm = np.zeros(n_experts)
        self.zz = np.zeros(n_experts)
        self.grad_sq = np.zeros(n_experts if eta_kind == SCHEDULE_ADAGRAD else 0)

    def _state_arrays(self):
        if self.eta.kind == SCHEDULE_ADAGRAD:
            return {"theta": self.theta, "grad_sq": self.grad_sq}
        return {"theta": self.theta}

    def _check_semantics(self, state):
        norms = np.sqrt(np.einsum("kj,kj->k", state["theta"], state["theta"]))
        require((norms <= STATE_LIMIT).all(), self,
                f"theta must stay within the norm {STATE_LIMIT:g} that learning keeps it to")
        if "grad_sq" in state:
            require((state["grad_sq"] >= 0).all(), self, "grad_sq must be >= 0")

    def _state_restored(self):
        # ||theta_k||^2 by the kernel learn() computes it with (a step of 0 leaves theta as it is),
        # so a restored model carries the very bits the saved one had, on every instruction set
        cdef double before, after
        cdef double[::1] zero = np.zeros(self.rows.shape[1])
        cdef int k
        for k in range(self.n_experts):
            fastomkl_shrink_axpy(&self.rows[k, 0], &zero[0], self.rows.shape[1], 1.0, 0.0,
                                 &before, &after)
            self.sqnorm[k] = after

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        # ||z||^2 in the same pass, for the learn() that follows on the same z
        return fastomkl_dot_sqnorm(&self.rows[k, 0], z, self.rows.shape[1], &self.zz[k])

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double y = ctx.y
        cdef long t = ctx.t
        cdef double weight = ctx.weight
        cdef double d = loss_derivative(self.loss, f, y), loss = loss_value(self.loss, f, y)
        cdef double zz = self.zz[k]
        cdef double step
        if self.eta.kind == SCHEDULE_ADAGRAD:
            return adagrad_update(self, k, z, d, loss, zz, weight)
        step = schedule_at(self.eta, t) * weight
        commit_step(self, k, z, 1.0 - 2.0 * step * self.lam, step * d, zz, &loss)
        return loss


cdef class OGDStepEnsemble(OGDExperts):
    """An ensemble of steps per kernel: member i of kernel k (expert k * m + i, m members) is a
    linear model on kernel k's features taking the step steps[i] every round, or steps[i] / sqrt(t)
    in round t if its rule ``schedules[i]`` is inv_sqrt (steps.pxd's ``schedule_at``).

    The step of a round is truncated after the importance weight so that the example's own
    prediction never passes the minimiser of its loss along the step (``truncated_step`` scaled by
    ``reach_factor``: onto y at most for the squared loss, onto the kink for the absolute and hinge
    losses, the tangent's zero for the logistic loss), and the regulariser is taken proximally
    (``proximal_update``), so the largest steps of the grid stay stable.  (Truncated at the
    tangent's zero, half-way to y, the squared loss's large steps all became the same half-step:
    on airfoil and elevators in their recorded order that cost 14% and 11% of MSE in
    bench/defaults.py, run before and after the change.)  Every member
    learns every round from the same features, and the combiner weighs all kernel x step experts:
    a step that suits the data now gains weight however long another suited them before, which a
    step rule that only ever shrinks (AdaGrad-norm) cannot do after a change.

    With ``adagrad_scale`` > 0 each kernel has one more member, the last, taking the AdaGrad-norm
    steps of ``OGDExperts`` at that scale (eta="auto"'s rule), so the combiner can also follow a
    step that decays with the data; its accumulators are the state's ``grad_sq``.
    """

    def __init__(self, int n_kernels, steps, int dim, int loss, double lam,
                 bint regularizer_after_update=False, double adagrad_scale=0.0, schedules=None):
        steps = np.ascontiguousarray(steps, dtype=np.float64)
        if steps.ndim != 1 or len(steps) == 0 or not (steps > 0).all():
            raise ValueError("steps must be a non-empty vector of positive steps")
        schedules = np.full(len(steps), SCHEDULE_CONSTANT, dtype=np.intc) if schedules is None \
            else np.ascontiguousarray(schedules, dtype=np.intc)
        if (schedules.shape != steps.shape
                or not np.isin(schedules, (SCHEDULE_CONSTANT, SCHEDULE_INV_SQRT)).all()):
            raise ValueError("schedules must give every step its rule: constant or inv_sqrt")
        if not adagrad_scale >= 0.0:
            raise ValueError("adagrad_scale must be >= 0 (0: no AdaGrad-norm member)")
        members = len(steps) + (1 if adagrad_scale > 0 else 0)
        OGDExperts.__init__(self, n_kernels * members, dim, loss, lam, adagrad_scale,
                            SCHEDULE_ENSEMBLE, regularizer_after_update)
        self.per_kernel = members
        self.steps = steps
        self.schedules = schedules
        self.adagrad_member = adagrad_scale > 0
        if self.adagrad_member:
            self.grad_sq = np.zeros(self.n_experts)
        self.zz_kernel = -1

    def _state_arrays(self):
        if self.adagrad_member:
            return {"theta": self.theta, "grad_sq": self.grad_sq}
        return {"theta": self.theta}

    cdef void prepare(self, const double* x) noexcept nogil:
        self.zz_kernel = -1                     # a new sample: no kernel's ||z||^2 is known yet

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        # the members of a kernel predict in turn on its features: ||z||^2 once per kernel
        cdef int kernel = k // self.per_kernel
        if kernel == self.zz_kernel:
            self.zz[k] = self.zz[self.zz_member]
            return fastomkl_dot(&self.rows[k, 0], z, self.rows.shape[1])
        self.zz_kernel, self.zz_member = kernel, k
        return fastomkl_dot_sqnorm(&self.rows[k, 0], z, self.rows.shape[1], &self.zz[k])

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double y = ctx.y
        cdef double weight = ctx.weight
        cdef double d = loss_derivative(self.loss, f, y), loss = loss_value(self.loss, f, y)
        cdef double zz = self.zz[k]
        cdef double step, shrink, g
        cdef int member = k % self.per_kernel
        cdef Schedule rule
        if self.adagrad_member and member == self.per_kernel - 1:
            return adagrad_update(self, k, z, d, loss, zz, weight)
        rule.scale, rule.kind, rule.decay = self.steps[member], self.schedules[member], 0.0
        step = truncated_step(schedule_at(rule, ctx.t) * weight, fabs(d) * zz,
                              reach_factor(self.loss) * loss, d)
        proximal_update(step, d, self.lam, &shrink, &g)
        commit_step(self, k, z, shrink, g, zz, &loss)
        return loss


cdef class OGDRestarts(OGDStepEnsemble):
    """The step ensemble with restarts: member i of every kernel learns as in ``OGDStepEnsemble``
    with the step steps[i], and after each round t with t % periods[i] == 0 its model returns to
    theta = 0 (periods[i] == 0: never), so from round t + 1 it learns afresh on the next interval
    of periods[i] rounds.  AdaRaker's instances (Shen, Chen & Giannakis 2019): the instance of an
    interval of length L runs only on that interval."""

    def __init__(self, int n_kernels, steps, periods, int dim, int loss, double lam,
                 bint regularizer_after_update=False):
        OGDStepEnsemble.__init__(self, n_kernels, steps, dim, loss, lam, regularizer_after_update)
        periods = np.ascontiguousarray(periods, dtype=np.int64)
        if periods.shape != (self.per_kernel,) or (periods < 0).any():
            raise ValueError("periods must give one restart period >= 0 (0: never) per step")
        self.periods = periods

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double loss = OGDStepEnsemble.learn(self, k, x, z, f, ctx)
        cdef long period = self.periods[k % self.per_kernel]
        cdef int j
        if period > 0 and ctx.t % period == 0:
            for j in range(self.rows.shape[1]):
                self.rows[k, j] = 0.0
            self.sqnorm[k] = 0.0
        return loss
