# Meta-learners of paper 003 as combiners (full information: every expert runs every round).
from fastomkl._core.base cimport FullInformation

cdef enum:
    CLIP_NONE = 0            # expert predictions mixed as they are
    CLIP_FIXED = 1           # clipped to a given [lo, hi]
    CLIP_OBSERVED = 2        # clipped to the range of the labels seen so far

cdef enum:
    MAX_STATE_ARRAYS = 6     # per-expert state arrays a guarded learner may register


cdef class MetaLearner(FullInformation):
    # Full information (every expert, weight 1) with optional clipping of the expert predictions
    # to [lo, hi] before they are combined (the "truncated" experts of the paper), and the guard
    # against non-finite state: learn() keeps a copy of the registered state arrays, runs update()
    # and puts the copy back (counting a refusal) if the result is not finite or not valid().
    cdef readonly int clip
    cdef readonly double lo, hi             # the fixed range (CLIP_FIXED)
    cdef double[::1] observed               # (2,) [min, max] of the labels seen (CLIP_OBSERVED)
    cdef long[::1] n_observed               # (1,) labels seen (CLIP_OBSERVED)
    cdef double[::1] xbar                   # scratch: this round's (clipped) expert predictions
    cdef double[::1] w                      # scratch: the mixing weights weights() computes
    cdef int n_guarded
    cdef double* guarded[MAX_STATE_ARRAYS]  # the registered state arrays ...
    cdef int guarded_len[MAX_STATE_ARRAYS]  # ... their lengths
    cdef double[::1] _saved                 # scratch: their values before this round's update
    cdef bint range_known(self, double* lo, double* hi) noexcept nogil
    cdef void inputs(self, const int* active, int n_active, const double* preds) noexcept nogil
    cdef void weights(self) noexcept nogil
    cdef void update(self, long t, const int* active, int n_active, const double* preds,
                     double y_hat, double y) noexcept nogil
    cdef bint valid(self) noexcept nogil
    cdef void observe(self, double y) noexcept nogil


cdef class Single(MetaLearner):
    pass


cdef class VAWCombiner(MetaLearner):
    # Second-level VAW (or online ridge) on the vector of expert predictions (VAW^2).
    cdef readonly int mode
    cdef readonly double lam
    cdef readonly bint scale_lam            # regularise with lam * (largest |y - m| seen)^2
    cdef readonly bint center               # regress y - m on x - m, m the mean label so far
    cdef readonly double forget             # gamma in (0, 1]: an old round weighs gamma^age
    cdef readonly long period               # forget < 1: P recomputed from G every that many rounds
    cdef double[::1] label_sums             # (2,): sum of the labels, their count (center only)
    cdef double[::1] P                      # packed inverse (see linalg.pxd)
    cdef double[::1] b
    cdef double[::1] G                      # packed Gram matrix sum x x^T (scale_lam or forget < 1)
    cdef double[::1] y_scale                # (1,) largest |y| seen (scale_lam only)
    cdef long[::1] age                      # (1,) rounds since P was recomputed (forget < 1 only)
    cdef double[::1] _work                  # scratch of the re-inversion (when G is kept)
    cdef double[::1] _shifted               # scratch: ridge I + G, packed (when G is kept)
    cdef double[::1] _inverse               # scratch: its inverse before it replaces P
    cdef double[::1] u
    cdef double q
    cdef bint reinvert(self, double reg) noexcept nogil
    cdef double offset(self) noexcept nogil
    cdef bint gram_stays_finite(self) noexcept nogil
    cdef double ridge(self) noexcept nogil


cdef class ExpWeights(MetaLearner):
    # Shared by EWA and the Aggregating Algorithm: cumulative square losses L of the clipped
    # experts, weights proportional to exp(-eta L).
    cdef readonly double eta                # 0: chosen from the data (see the subclasses)
    cdef double[::1] L
    cdef double rate(self) noexcept nogil


cdef class EWA(ExpWeights):
    cdef double[::1] gap                    # (1,) AdaHedge's cumulative mixability gap (eta auto)


cdef class AA(ExpWeights):
    pass


cdef class AdaptiveRates(MetaLearner):
    cdef double[::1] lr, V, M, R


cdef class BOA(AdaptiveRates):
    cdef double[::1] Rreg


cdef class MLPoly(MetaLearner):
    cdef double[::1] lr, R, Smax
    cdef readonly int loss            # the loss whose tangent at the mixture gives the regrets
                                      # (the gradient trick), or -1: the square loss itself
    cdef readonly double param        # that loss's parameter (Huber's threshold, a quantile)
    cdef double regret(self, int k, double y_hat, double y, double slope) noexcept nogil


cdef class MLProd(AdaptiveRates):
    pass
