# The contract between the three compiled parts of every model:
#
#   FeatureBank   x -> z_k, one representation per kernel k        (random features, Taylor, Nystrom, ...)
#   ExpertBank    z_k -> f_k, and the update of expert k            (OGD, VAW, Cholesky AWV, expansion, ...)
#   Combiner      which experts run this round, how f mixes into y_hat, and its own update
#                 (Hedge, graph feedback, bandit samplers, second-level VAW, ...)
#
# The Engine (engine.pxd) runs one round through these methods with no Python objects and no
# allocation.  Subclasses override the cdef methods; dispatch is a C function-pointer call.
#
# Contract of a round, in the order the engine calls it (r: the round's context, below):
#   n = combiner.select(r, active, weight)             random subset (or all) and importance weights
#   features.prepare(x, work); experts.prepare(x)
#   for k in active: features.transform_prepared(x, work, k // per_kernel, z); preds[k] = experts.predict(k, x, z)
#   ctx.y_hat = combiner.combine(active, n, preds)
#   for j, k in enumerate(active): ctx.weight = weight[j]; losses[k] = experts.learn(k, x, z_k, preds[k], r)
#   combiner.learn(r, active, n, preds, losses)
#   features.learn(x, work, r)                         only for banks that learn (`learns`)
# With experts.independent the engine calls each learn right after its predict (same result: the
# combination reads only the stored predictions), so ctx.y_hat is set only for the learn of experts
# that are not independent.  `predict` is pure (it may fill scratch that the `learn` right after it
# reuses); prediction without learning uses combiner.select_predict, which never draws randomness.
#
# Growth: a component whose arrays grow with the stream sets `grows`; before every round the
# engine asks needs_room() and, when it says so, calls reserve() (Python, may reallocate) with
# the GIL; admit(n) may refuse a call of n rounds that would pass a size limit, check_input(X)
# inputs the component cannot take, both before anything changes.
#
# State: each component keeps everything a round changes in NumPy arrays that its Python method
# `_state_arrays()` names; get_state/set_state (base.pyx) copy them for persistence.

from numpy.random cimport bitgen_t


ctypedef struct Round:
    long t                 # the round, counted from 1
    bitgen_t* rng          # the model's per-round stream: the only randomness a round may draw
    double y               # the target, in the units the model learns in
    double y_hat           # the combined prediction, in those units (see above)
    double weight          # importance weight of the expert being updated (1 / q; 1 if all run)
    const double* preds    # every expert's prediction of this round, by expert index


cdef class Component:
    cdef readonly bint grows         # arrays grow with the stream (the engine asks needs_room)
    cdef bint needs_room(self) noexcept nogil


cdef class FeatureBank(Component):
    cdef readonly int n_kernels      # how many representations (one per kernel)
    cdef readonly int n_features     # input dimension d
    cdef readonly int n_outputs      # length of each z_k (a bank that grows may raise it in
                                     # reserve(); the engine then widens its feature buffers)
    cdef void transform(self, const double* x, int k, double* z) noexcept nogil
    # The per-sample path every round takes: prepare(x, work) once, then transform_prepared for
    # each kernel needed.  What the kernels of a sample share (the projections of a shared
    # frequency draw) lives in the caller's `work`, n_work doubles, so a bank holds no per-sample
    # state and threads never share it.  Defaults: no work, transform_prepared = transform.
    cdef readonly int n_work
    cdef void prepare(self, const double* x, double* work) noexcept nogil
    cdef void transform_prepared(self, const double* x, double* work, int k,
                                 double* z) noexcept nogil
    # A bank whose representation changes with the stream (a new block of random features every
    # few rounds, say) sets `learns`: the engine then calls learn() at the end of every learning
    # round, with the sample (its `work` as prepare() left it) and the round's context.
    cdef readonly bint learns
    cdef void learn(self, const double* x, double* work, Round* ctx) noexcept nogil


cdef class ExpertBank(Component):
    cdef readonly int n_experts
    # Experts per representation: expert e learns on the features of kernel e // per_kernel (1 for
    # one expert per kernel; an ensemble of steps per kernel shares each kernel's features among
    # its members, and the engine computes them once per kernel).
    cdef readonly int per_kernel
    cdef public long n_rejected       # updates refused because they would exceed STATE_LIMIT
    # True when learn(k) never changes what predict(j) returns for another expert j (each expert
    # has its own state): the engine may then finish each expert (features, prediction, update)
    # before the next, with one L1-resident feature buffer.  False for shared state.
    cdef readonly bint independent
    # Once per sample, before any predict: what the experts of a sample share (the distances of x
    # to a shared support set).  Default: nothing.
    cdef void prepare(self, const double* x) noexcept nogil
    # z holds the n_outputs features of expert k's kernel followed by zeros up to n_outputs
    # rounded up to 8 (the engine's rows, arrays.aligned_rows), so experts may run whole vectors.
    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil
    # Updates expert k from its prediction f on (x, ctx.y) with importance weight ctx.weight, and
    # returns the loss the combiner sees for it.
    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil
    # True when each expert is a whole model whose own learning step also gives its prediction
    # (a mixture's members): the engine then calls predict_learn once per expert instead of
    # predict and learn, so a member does not predict twice in a round.  Implies independent.
    cdef readonly bint whole_models
    # predict(k) then learn(k) in one call, the loss written to `loss`; returns the prediction.
    cdef double predict_learn(self, int k, const double* x, const double* z, Round* ctx,
                              double* loss) noexcept nogil
    # A bank with a budget gives one BudgetWarning when it fills (budget_warning, from its
    # admit); set_state sets the flag for a state loaded full.
    cdef bint warned


cdef class DictionaryBank(ExpertBank):
    # Experts on a dictionary that grows until its budget freezes it (see base.pyx).
    cdef bint frozen(self) noexcept nogil


cdef class Combiner(Component):
    cdef readonly int n_experts
    cdef public long n_rejected       # weight updates refused because they were not finite
    # Fills active[0:n] with the experts of this round and weight[0:n] with their importance
    # weights (1/q, 1 for full information); returns n.  May draw from ctx.rng.
    cdef int select(self, Round* ctx, int* active, double* weight) noexcept nogil
    # The experts used by a prediction without learning: deterministic, no randomness.
    cdef int select_predict(self, int* active) noexcept nogil
    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil
    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil


cdef class FullInformation(Combiner):
    # A combiner that runs every expert every round with importance weight 1 (Hedge, the
    # meta-learners of paper 003, ...): subclasses define combine and learn only.
    pass


cdef inline int run_first(int n, int* active, double* weight) noexcept nogil:
    """Select experts 0 .. n-1 for a round, each with importance weight 1 (weight may be NULL
    when only predicting); returns n."""
    cdef int k
    for k in range(n):
        active[k] = k
        if weight != NULL:
            weight[k] = 1.0
    return n
