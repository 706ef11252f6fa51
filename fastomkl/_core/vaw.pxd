# The Vovk-Azoury-Warmuth forecaster (and online ridge regression) on one feature vector.
#
# State of one forecaster of dimension D: P = S_{t-1}^{-1} (D x D, symmetric positive definite) with
# S_{t-1} = lam I + sum_{s<t} w_s z_s z_s^T, and b = sum_{s<t} w_s y_s z_s.  A round is
#
#   predict(z):  u = P z (dsymv),  q = z.u,  r = b.u
#                y_hat = r / (1 + q)   (mode VAW: z_t already in the Gram matrix, = z^T S_t^{-1} b)
#                y_hat = r             (mode RIDGE: online ridge / follow the regularised leader)
#   update(y, w): P <- P - w u u^T / (1 + w q)   (dsyr, Sherman-Morrison)
#                 b <- b + w y z
#
# Only ONE triangle of P is ever written or read: in the row-major arrays of this package it is the
# LOWER triangle (row >= column), which BLAS, being column-major, calls 'U'.  P therefore stays
# exactly symmetric by construction; the other triangle keeps its initial values and is never used.
# That is the first drift guard; the second (optional, `refresh_every`) keeps S itself and, every
# `refresh_every` updates, recomputes P = S^{-1} from a Cholesky factorisation (LAPACK dpotrf +
# dpotri), which resets any accumulated rounding error.

from scipy.linalg.cython_blas cimport dsymv, dsyr, ddot, daxpy

cdef enum:
    VAW_MODE_VAW = 0
    VAW_MODE_RIDGE = 1


cdef inline double vaw_predict(int D, double* P, const double* b, const double* z, double* u,
                               double* q_out, int mode) noexcept nogil:
    """u = P z; *q_out = z.u; returns the prediction of `mode`.  Writes only u and *q_out."""
    cdef char uplo = b'U'
    cdef double one = 1.0, zero = 0.0
    cdef int inc = 1
    dsymv(&uplo, &D, &one, P, &D, <double*>z, &inc, &zero, u, &inc)
    cdef double q = ddot(&D, <double*>z, &inc, u, &inc)
    cdef double r = ddot(&D, <double*>b, &inc, u, &inc)
    q_out[0] = q
    if mode == VAW_MODE_VAW:
        return r / (1.0 + q)
    return r


cdef inline void vaw_update(int D, double* P, double* b, const double* z, double* u, double q,
                            double y, double w) noexcept nogil:
    """Adds w z z^T to S (P by Sherman-Morrison, with u = P z and q = z.u from vaw_predict) and
    w y z to b."""
    cdef char uplo = b'U'
    cdef int inc = 1
    cdef double alpha = -w / (1.0 + w * q)
    cdef double wy = w * y
    dsyr(&uplo, &D, &alpha, u, &inc, P, &D)
    if wy != 0.0:
        daxpy(&D, &wy, <double*>z, &inc, b, &inc)


from fastomkl._core.base cimport ExpertBank

cdef class VAWExperts(ExpertBank):
    # One VAW / online-ridge forecaster per kernel on that kernel's features.
    cdef readonly int dim
    cdef readonly int mode
    cdef readonly double lam
    cdef readonly long refresh_every        # 0: never (P only); > 0: keep S, refresh P from it
    cdef double[:, :, ::1] P                # (n_experts, dim, dim), lower triangle authoritative
    cdef double[:, ::1] b                   # (n_experts, dim)
    cdef double[:, :, ::1] S                # (n_experts, dim, dim) when refresh_every > 0, else (0,0,0)
    cdef long[::1] n_updates                # updates per expert (drives the refresh)
    cdef double[:, ::1] u                   # scratch: P_k z_k of the last predict of expert k
    cdef double[::1] q                      # scratch: z_k . P_k z_k of the last predict
    cdef double[:, ::1] _work               # scratch of the refresh (dim x dim, or 0 x 0)
    cdef void refresh(self, int k) noexcept nogil
