# The small interface between the three compiled parts of every model:
#
#   FeatureBank   x -> z_k, one representation per kernel k        (random features, Taylor, Nystrom, ...)
#   ExpertBank    z_k -> f_k, and the update of expert k            (OGD, VAW, Cholesky AWV, expansion, ...)
#   Combiner      which experts run this round, how f mixes into y_hat, and its own update
#                 (Hedge, graph feedback, bandit samplers, second-level VAW, ...)
#
# The Engine (engine.pxd) runs one round through these methods with no Python objects and no
# allocation.  Subclasses override the cdef methods; dispatch is a C function-pointer call.
#
# Contract of a round, in the order the engine calls it:
#   n = combiner.select(t, rng, active, weight)        random subset (or all) and importance weights
#   features.prepare(x, work)
#   for k in active: features.transform_prepared(x, work, k, z_k); preds[k] = experts.predict(k, x, z_k)
#   y_hat = combiner.combine(active, n, preds)
#   for j, k in enumerate(active): losses[k] = experts.learn(k, x, z_k, preds[k], y, t, weight[j])
#   combiner.learn(t, active, n, preds, losses, y_hat, y)
# With experts.independent the engine calls each learn right after its predict (same result: the
# combination reads only the stored predictions).
# `predict` is pure (it may fill scratch that the `learn` right after it reuses); `t` counts rounds
# from 1.  Prediction without learning uses combiner.select_predict, which never draws randomness.
#
# State: each component keeps everything a round changes in NumPy arrays that its Python method
# `_state_arrays()` names; get_state/set_state (base.pyx) copy them for persistence.

from numpy.random cimport bitgen_t
from libc.math cimport sqrt, log1p, exp, fabs

cdef enum:
    LOSS_SQUARED = 0
    LOSS_ABSOLUTE = 1
    LOSS_LOGISTIC = 2
    LOSS_HINGE = 3

cdef enum:
    SCHEDULE_CONSTANT = 0
    SCHEDULE_INV_SQRT = 1
    SCHEDULE_ADAGRAD = 2     # scale / sqrt(sum of squared gradient norms), kept by the expert
    SCHEDULE_SELF_CONFIDENT = 3   # scale sqrt(ln N / (1 + V)), V kept by the combiner (graph.pyx)

# Bound on the norm of any learnt state: an update that would exceed it is refused (and counted in
# the component's n_rejected) instead of drifting to inf and NaN.  Predictions stay below
# STATE_LIMIT * ||z||, so losses of targets up to 1e150 stay finite.
cdef extern from *:
    """
    #define FASTOMKL_STATE_LIMIT 1e100
    #define FASTOMKL_FLOAT_SAFE 1e37
    """
    double STATE_LIMIT "FASTOMKL_STATE_LIMIT"
    # A float32 sum of d products x_j w_j stays far below float's 3.4e38 while max|x| max|w| d
    # stays below this: inputs beyond it (|x| up to 1e150 is accepted) take a double path.
    double FLOAT_SAFE "FASTOMKL_FLOAT_SAFE"

ctypedef struct Schedule:
    double scale
    int kind


cdef inline double schedule_at(Schedule s, long t) noexcept nogil:
    """Step size of round t (t >= 1): `scale` or `scale / sqrt(t)`."""
    if s.kind == SCHEDULE_INV_SQRT:
        return s.scale / sqrt(<double>t)
    return s.scale


cdef inline double adagrad_step(double scale, double* grad_sq, double g_sq) noexcept nogil:
    """AdaGrad-norm: the step scale / sqrt(G) after G += g_sq (0 while G is 0), whatever the scale
    of the gradients."""
    grad_sq[0] += g_sq
    if grad_sq[0] > 0.0:
        return scale / sqrt(grad_sq[0])
    return 0.0


cdef inline double truncated_step(double step, double move, double loss,
                                  double slope) noexcept nogil:
    """min(step, loss / (|slope| move)) for a step that moves the example's own prediction by
    `move` per unit against the loss's slope: the prediction never passes the zero of the loss's
    tangent loss + slope (f' - f) (the truncated model of Asi & Duchi 2019).  The squared loss
    goes at most half-way to y, the absolute and hinge losses at most onto their kink, so a large
    step cannot overshoot the example it learns from."""
    cdef double limit
    if move == 0.0 or slope == 0.0:
        return step
    limit = loss / (fabs(slope) * move)
    return step if step <= limit else limit


cdef inline double loss_value(int kind, double f, double y) noexcept nogil:
    cdef double m
    if kind == LOSS_SQUARED:
        return (f - y) * (f - y)
    if kind == LOSS_ABSOLUTE:
        return fabs(f - y)
    if kind == LOSS_LOGISTIC:
        m = -y * f                      # log(1 + e^m), stable for either sign of m
        if m > 0.0:
            return m + log1p(exp(-m))
        return log1p(exp(m))
    m = 1.0 - y * f                     # hinge
    return m if m > 0.0 else 0.0


cdef inline double loss_derivative(int kind, double f, double y) noexcept nogil:
    """d loss / d f (a subgradient where the loss has a kink)."""
    if kind == LOSS_SQUARED:
        return 2.0 * (f - y)
    if kind == LOSS_ABSOLUTE:
        return 1.0 if f > y else (-1.0 if f < y else 0.0)
    if kind == LOSS_LOGISTIC:
        return -y / (1.0 + exp(y * f))
    return -y if y * f < 1.0 else 0.0


cdef inline double softmax_in_place(double* v, int n) noexcept nogil:
    """v <- exp(v - max v) / sum: weights from log-weights without overflow; returns max v."""
    cdef double top = v[0], total = 0.0
    cdef int k
    for k in range(1, n):
        if v[k] > top:
            top = v[k]
    for k in range(n):
        v[k] = exp(v[k] - top)
        total += v[k]
    for k in range(n):
        v[k] /= total
    return top


cdef class Component:
    pass


cdef class FeatureBank(Component):
    cdef readonly int n_kernels      # how many representations (one per kernel)
    cdef readonly int n_features     # input dimension d
    cdef readonly int n_outputs      # length of each z_k
    cdef void transform(self, const double* x, int k, double* z) noexcept nogil
    # The per-sample path every round takes: prepare(x, work) once, then transform_prepared for
    # each kernel needed.  What the kernels of a sample share (the projections of a shared
    # frequency draw) lives in the caller's `work`, n_work doubles, so a bank holds no per-sample
    # state and threads never share it.  Defaults: no work, transform_prepared = transform.
    cdef readonly int n_work
    cdef void prepare(self, const double* x, double* work) noexcept nogil
    cdef void transform_prepared(self, const double* x, double* work, int k,
                                 double* z) noexcept nogil


cdef class ExpertBank(Component):
    cdef readonly int n_experts
    cdef public long n_rejected       # updates refused because they would exceed STATE_LIMIT
    # True when learn(k) never changes what predict(j) returns for another expert j (each expert
    # has its own state): the engine may then finish each expert (features, prediction, update)
    # before the next, with one L1-resident feature buffer.  False for shared state.
    cdef readonly bint independent
    # z holds the n_outputs features of expert k's kernel followed by zeros up to n_outputs
    # rounded up to 8 (the engine's rows, base.aligned_rows), so experts may run whole vectors.
    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil
    # Updates expert k from its prediction f on (x, y) with importance weight `weight`, and returns
    # the loss the combiner sees for it.
    cdef double learn(self, int k, const double* x, const double* z, double f, double y,
                      long t, double weight) noexcept nogil


cdef class Combiner(Component):
    cdef readonly int n_experts
    cdef public long n_rejected       # weight updates refused because they were not finite
    # Fills active[0:n] with the experts of this round and weight[0:n] with their importance
    # weights (1/q, 1 for full information); returns n.  May draw from rng.
    cdef int select(self, long t, bitgen_t* rng, int* active, double* weight) noexcept nogil
    # The experts used by a prediction without learning: deterministic, no randomness.
    cdef int select_predict(self, int* active) noexcept nogil
    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil
    cdef void learn(self, long t, const int* active, int n_active, const double* preds,
                    const double* losses, double y_hat, double y) noexcept nogil


cdef class FullInformation(Combiner):
    # A combiner that runs every expert every round with importance weight 1 (Hedge, the
    # meta-learners of paper 003, ...): subclasses define combine and learn only.
    pass
