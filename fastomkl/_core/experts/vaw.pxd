# One VAW / online-ridge forecaster per kernel (the round and the packed storage: linalg.pxd).
from fastomkl._core.base cimport ExpertBank

cdef class VAWExperts(ExpertBank):
    # One VAW / online-ridge forecaster per kernel on that kernel's features.
    cdef readonly int dim
    cdef readonly int mode
    cdef readonly double[::1] lams          # the ridge of each expert
    cdef readonly long refresh_every        # 0: never (P only); > 0: keep S, refresh P from it
    cdef readonly double forget             # gamma in (0, 1]: an old update weighs gamma^age
    cdef readonly long period               # P recomputed from S every that many updates (0: never)
    cdef readonly bint center               # learn y minus the running mean of the labels
    cdef double[:, ::1] label_sums          # (n_experts, 2): sum w y, sum w (center; else (0, 2))
    cdef double[:, ::1] P                   # (n_experts, dim (dim + 1) / 2), packed (see above)
    cdef double[:, ::1] b                   # (n_experts, dim)
    cdef double[:, ::1] S                   # like P when period > 0, else (0, 0); times scale
    # forget < 1: the inverse is scale[k] times (P_k + the pending terms), and S_k / scale[k] is
    # the Gram matrix: a round divides scale by gamma instead of rescaling P, and a
    # recomputation resets it to 1 (n_experts,); (0,) when forget = 1
    cdef double[::1] scale
    cdef long[::1] n_updates                # updates per expert (drives the refresh)
    cdef double[:, ::1] u                   # scratch: P_k z_k of the last predict of expert k
    cdef double[::1] q                      # scratch: z_k . P_k z_k of the last predict
    cdef double[::1] _work                  # scratch of the refresh (dim * dim, or empty)
    # Buffered Sherman-Morrison terms: the inverse is P_k + sum_{j < n_pending[k]} a_kj u_kj u_kj^T.
    # Every VAW_PENDING updates they go into P_k in one pass (a rank-4 update), which halves the
    # memory traffic over P of a round; predictions add the pending terms in O(dim) each.
    cdef double[:, :, ::1] pend_u           # (n_experts, VAW_PENDING, dim)
    cdef double[:, ::1] pend_a              # (n_experts, VAW_PENDING)
    cdef long[::1] n_pending                # (n_experts,)
    cdef void refresh(self, int k) noexcept nogil
    cdef double offset(self, int k) noexcept nogil
