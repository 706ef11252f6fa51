from fastomkl._core.base cimport ExpertBank
from fastomkl._core.steps cimport Schedule

cdef class OGDExperts(ExpertBank):
    # One linear model theta_k per kernel, trained by online gradient descent on
    # loss(theta_k . z_k, y) + lam * ||theta_k||^2, each step scaled by the importance weight.
    cdef readonly double[:, :] theta  # (n_experts, dim): a view of `rows`
    cdef double[:, ::1] rows          # theta_k in rows of whole cache lines (aligned vectors)
    cdef double[::1] sqnorm           # ||theta_k||^2, derived (bounds the next update cheaply)
    cdef double[::1] zz               # scratch: ||z_k||^2 of expert k's last prediction
    cdef readonly double[::1] grad_sq # AdaGrad-norm accumulators (eta_kind ADAGRAD)
    cdef readonly int dim
    cdef readonly int loss
    cdef readonly double lam
    cdef Schedule eta
    cdef readonly bint regularizer_after_update


cdef class OGDStepEnsemble(OGDExperts):
    # per_kernel members per kernel, member i of kernel k is expert k * per_kernel + i, with the
    # step steps[i] under the rule schedules[i] (truncated, proximal regulariser).
    cdef readonly double[::1] steps
    cdef readonly int[::1] schedules  # steps.pxd's SCHEDULE_CONSTANT or SCHEDULE_INV_SQRT
    cdef readonly bint adagrad_member  # the last member of each kernel takes AdaGrad-norm steps
    cdef int zz_kernel                # the kernel whose ||z||^2 this sample's predictions hold
    cdef int zz_member                # (-1: none yet) and the expert that computed it


cdef class OGDRestarts(OGDStepEnsemble):
    # An ensemble whose member i restarts from theta = 0 after every periods[i] rounds (0: never):
    # the instances of AdaRaker, one per interval length.
    cdef readonly long[::1] periods
