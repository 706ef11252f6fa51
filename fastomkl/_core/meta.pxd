# Meta-learners of paper 003 as combiners (full information: every expert runs every round).
from fastomkl._core.base cimport FullInformation

cdef class MetaLearner(FullInformation):
    # Full information (every expert, weight 1) with optional clipping of the expert predictions
    # to [lo, hi] before they are combined (the "truncated" experts of the paper).
    cdef readonly bint clip
    cdef readonly double lo, hi
    cdef double[::1] xbar                   # scratch: this round's (clipped) expert predictions
    cdef double[::1] w                      # scratch: the mixing weights weights() computes
    cdef void inputs(self, const int* active, int n_active, const double* preds) noexcept nogil
    cdef void weights(self) noexcept nogil


cdef class Single(MetaLearner):
    pass


cdef class VAWCombiner(MetaLearner):
    # Second-level VAW (or online ridge) on the vector of expert predictions (VAW^2).
    cdef readonly int mode
    cdef readonly double lam
    cdef double[::1] P                      # packed inverse (see vaw.pxd)
    cdef double[::1] b
    cdef double[::1] u
    cdef double q


cdef class ExpWeights(MetaLearner):
    # Shared by EWA and the Aggregating Algorithm: cumulative square losses L of the clipped
    # experts, weights proportional to exp(-eta L).
    cdef readonly double eta
    cdef double[::1] L


cdef class EWA(ExpWeights):
    pass


cdef class AA(ExpWeights):
    pass


cdef class BOA(MetaLearner):
    cdef double[::1] lr, V, M, Rreg, R


cdef class MLPoly(MetaLearner):
    cdef double[::1] lr, R, Smax


cdef class MLProd(MetaLearner):
    cdef double[::1] lr, V, M, R
