# The Vovk-Azoury-Warmuth forecaster (and online ridge regression) on one feature vector.
#
# State of one forecaster of dimension D: P = S_{t-1}^{-1} (D x D, symmetric positive definite) with
# S_{t-1} = lam I + sum_{s<t} w_s z_s z_s^T, and b = sum_{s<t} w_s y_s z_s.  A round is
#
#   predict(z):  u = P z (spmv),  q = z.u,  r = b.u
#                y_hat = r / (1 + q)   (mode VAW: z_t already in the Gram matrix, = z^T S_t^{-1} b)
#                y_hat = r             (mode RIDGE: online ridge / follow the regularised leader)
#   update(y, w): P <- P - w u u^T / (1 + w q)   (spr, Sherman-Morrison)
#                 b <- b + w y z
#
# P is stored PACKED: only one triangle, D(D+1)/2 doubles.  In row-major terms it is the lower
# triangle row by row (element (i, j), j <= i, at i(i+1)/2 + j), which is what column-major BLAS
# calls the packed 'U' triangle.  P is therefore exactly symmetric by construction: that is the first
# drift guard.  The second (optional, `refresh_every`) keeps S itself (packed too) and, every
# `refresh_every` updates, recomputes P = S^{-1} from a Cholesky factorisation (single-threaded C in
# src_c/fastomkl_linalg.c: OpenBLAS's threaded packed dpptrf/dpptri took 50x longer here), which
# resets any accumulated rounding error.
#
# VAWExperts (below) buffers the rank-one terms: the inverse is P + sum of up to three pending
# a_j u_j u_j^T, which a prediction applies to u in O(D) each, and every fourth update writes all
# four into P in one pass (spr4).  A round then reads P once instead of reading it twice and writing
# it once.  The second-level VAWCombiner (order N, small) uses vaw_predict / vaw_update directly.
#
# The level-2 operations are the packed symmetric matrix-vector product and rank-one update of
# BLAS (dspmv, dspr), written out in src_c/fastomkl_linalg.c: same arrays, same arithmetic, but
# always single-threaded, four rows at a time.  OpenBLAS spreads dsyr/dspmv of order ~100 over its
# threads, which on a shared 2-core machine costs from 2.5x to tens of times more than one core
# (bench/bench_vaw.py measures both); one core with these kernels is as fast as single-threaded
# OpenBLAS dsymv + dsyr on full matrices.  Packed storage halves the memory.

cdef extern from "fastomkl_linalg.h" nogil:
    void fastomkl_spmv(int n, const double* A, const double* z, double* u)
    void fastomkl_spr(int n, double alpha, const double* u, double* A)
    void fastomkl_spr4(int n, const double* alpha, const double* U, double* A)
    int fastomkl_spd_inverse(int n, const double* S, double* work, double* P)

cdef extern from "fastomkl_kernels.h" nogil:
    double fastomkl_dot(const double* a, const double* b, int n)

from libc.math cimport isfinite
from libc.float cimport DBL_MAX

cdef enum:
    VAW_MODE_VAW = 0
    VAW_MODE_RIDGE = 1

cdef enum:
    VAW_PENDING = 4          # rank-one updates an expert buffers before one pass over P


cdef inline double vaw_predict(int D, double* P, const double* b, const double* z, double* u,
                               double* q_out, int mode) noexcept nogil:
    """u = P z; *q_out = z.u; returns the prediction of `mode`.  Writes only u and *q_out."""
    fastomkl_spmv(D, P, z, u)
    cdef double q = fastomkl_dot(z, u, D)
    cdef double r = fastomkl_dot(b, u, D)
    q_out[0] = q
    if mode == VAW_MODE_VAW:
        return saturate(r / (1.0 + q))
    return saturate(r)


cdef inline double saturate(double v) noexcept nogil:
    """v if finite, else the nearest finite value (0 for NaN): what a forecaster returns when its
    arithmetic overflows, so that no prediction is ever NaN or infinite."""
    if isfinite(v):
        return v
    if v > 0.0:
        return DBL_MAX
    if v < 0.0:
        return -DBL_MAX
    return 0.0


cdef inline bint vaw_update_safe(int D, const double* b, const double* z, double q, double y,
                                 double w) noexcept nogil:
    """Whether adding w z z^T to S and w y z to b keeps the state finite: the Sherman-Morrison
    denominator 1 + w q must be finite and positive (q finite also means u = P z is) and every
    b_i + w y z_i finite.  Changes nothing."""
    cdef double denom = 1.0 + w * q, wy = w * y
    cdef int i
    if not (isfinite(denom) and denom > 0.0):
        return False
    for i in range(D):
        if not isfinite(b[i] + wy * z[i]):
            return False
    return True


cdef inline bint vaw_update(int D, double* P, double* b, const double* z, double* u, double q,
                            double y, double w) noexcept nogil:
    """Adds w z z^T to S (P by Sherman-Morrison, with u = P z and q = z.u from vaw_predict) and
    w y z to b; refuses (returns False, changes nothing) when the state would not stay finite."""
    if not vaw_update_safe(D, b, z, q, y, w):
        return False
    cdef double alpha = -w / (1.0 + w * q)
    cdef double wy = w * y
    cdef int i
    fastomkl_spr(D, alpha, u, P)
    for i in range(D):
        b[i] += wy * z[i]
    return True


from fastomkl._core.base cimport ExpertBank

cdef class VAWExperts(ExpertBank):
    # One VAW / online-ridge forecaster per kernel on that kernel's features.
    cdef readonly int dim
    cdef readonly int mode
    cdef readonly double lam
    cdef readonly long refresh_every        # 0: never (P only); > 0: keep S, refresh P from it
    cdef readonly bint center               # learn y minus the running mean of the labels
    cdef double[:, ::1] label_sums          # (n_experts, 2): sum w y, sum w (center; else (0, 2))
    cdef double[:, ::1] P                   # (n_experts, dim (dim + 1) / 2), packed (see above)
    cdef double[:, ::1] b                   # (n_experts, dim)
    cdef double[:, ::1] S                   # like P when refresh_every > 0, else (0, 0)
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
