# Linear algebra the components share, in place and allocation-free: the packed symmetric
# kernels of the VAW forecasters (src_c/fastomkl_linalg.c, one variant per instruction set) and the
# Sherman-Morrison round built on them, and the triangular factor operations of the Cholesky-based
# forecasters (their solves in src_c too, rotations and dot products over scipy.linalg.cython_blas).
#
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
# Forgetting (discounted least squares, forget = gamma < 1): an old round weighs gamma^age,
#
#   S_t = lam_t I + sum_{s<=t} gamma^{t-s} w_s z_s z_s^T,  b_t = sum_{s<=t} gamma^{t-s} w_s y_s z_s,
#
# with the ridge lam_t kept near lam.  Exactly, S_t = gamma S_{t-1} + w z z^T + (1 - gamma) lam I,
# and the last term has full rank: no rank-one update keeps it.  The update is instead the
# discounted Sherman-Morrison step of gamma S_{t-1} + w z z^T,
#
#   P <- (P - w u u^T / (gamma + w q)) / gamma,   b <- gamma b + w y z,
#
# under which the ridge decays as lam gamma^k, k the updates since P was last recomputed from S
# (S kept exactly, ridge included).  Recomputing it every R = discount_period(gamma, D) updates
# keeps lam_t in [gamma^R lam, lam] with gamma^R >= min(gamma, 1/2) (>= 0.99 for gamma near 1),
# so P's eigenvalues stay below 1 / (gamma^R lam): no wind-up in directions the data stop
# exciting, which plain forgetting (S_t = gamma S_{t-1} + z z^T, lam_t = gamma^t lam) suffers.
# In mode VAW the prediction uses gamma S_{t-1} + z z^T, with b discounted once:
# y_hat = r / (1 + q / gamma).  Why not lam_t = lam at every round: that needs the inverse of
# lam I plus a matrix whose data part shrinks every round, which no O(D^2) update gives; the
# recomputation costs about D^3 flops, so R >= D keeps it within D^2 a round.  VAWExperts keeps
# each round's 1 / gamma in a per-expert scale of P (and S times that scale) rather than
# rescaling P, a pass over P per round; the second level (order N, small) rescales P itself.
#
# VAWExperts (experts/vaw.pxd) buffers the rank-one terms: the inverse is P + sum of up to three pending
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
    void fastomkl_solve_lower(int m, const double* L, int ld, double* x)
    void fastomkl_solve_upper_transposed(int m, const double* R, int ld, double* x)
    void fastomkl_chol_drop_first(int n, double* L, int ld, double* u, double* w, double* cs)

cdef extern from "fastomkl_kernels.h" nogil:
    double fastomkl_dot(const double* a, const double* b, int n)

from libc.math cimport floor, hypot, isfinite, log
from scipy.linalg.cython_blas cimport ddot, drot

from fastomkl._core.numeric cimport saturate

cdef enum:
    VAW_MODE_VAW = 0
    VAW_MODE_RIDGE = 1

cdef enum:
    VAW_PENDING = 4          # rank-one updates an expert buffers before one pass over P


cdef inline double vaw_predict(int D, double* P, const double* b, const double* z, double* u,
                               double* q_out, int mode, double gamma) noexcept nogil:
    """u = P z; *q_out = z.u; returns the prediction of `mode` (forget factor gamma, 1: none).
    Writes only u and *q_out."""
    fastomkl_spmv(D, P, z, u)
    cdef double q = fastomkl_dot(z, u, D)
    cdef double r = fastomkl_dot(b, u, D)
    q_out[0] = q
    if mode == VAW_MODE_VAW:
        return saturate(r / (1.0 + q / gamma))
    return saturate(r)


cdef inline bint sherman_morrison_ok(double denom) noexcept nogil:
    """Whether a Sherman-Morrison step P - u u^T / denom (denom = 1 + w z.Pz) keeps P positive
    definite in floating point: 0 < denom <= 1e12 (not NaN).  The step leaves at least 1 / denom
    of every diagonal entry of P (Cauchy-Schwarz: u_i^2 <= P_ii z.Pz); when it removes more than
    all but 1e-12 of one, what is left is rounding, P stops being positive definite and a saved
    state with it is refused on loading.  Features of ||z||^2 <= 1 and a ridge lam >= 1e-8 keep
    the denominator below 1e8 + 1 under full information."""
    return denom > 0.0 and denom <= 1e12


cdef inline bint vaw_update_safe(int D, const double* b, const double* z, double q, double y,
                                 double w, double gamma) noexcept nogil:
    """Whether adding w z z^T to S and w y z to b (after discounting both by gamma <= 1) keeps the
    state finite and P positive definite: the discounted step leaves gamma / (gamma + w q) of
    every diagonal entry, so 1 + w q / gamma must pass ``sherman_morrison_ok`` (q finite also
    means u = P z is), and every b_i + w y z_i must be finite (then so is gamma b_i + w y z_i).
    Changes nothing."""
    cdef double wy = w * y
    cdef int i
    if not sherman_morrison_ok(1.0 + w * q / gamma):
        return False
    for i in range(D):
        if not isfinite(b[i] + wy * z[i]):
            return False
    return True


cdef inline void scale(int n, double c, double* v) noexcept nogil:
    """v <- c v (n values: a vector, or a packed matrix of n entries)."""
    cdef int i
    for i in range(n):
        v[i] *= c


cdef inline void add_diagonal(int D, double c, double* A) noexcept nogil:
    """A <- A + c I for A packed (order D)."""
    cdef int i
    for i in range(D):
        A[i * (i + 1) // 2 + i] += c


cdef inline bint vaw_update(int D, double* P, double* b, const double* z, double* u, double q,
                            double y, double w, double gamma) noexcept nogil:
    """Adds w z z^T to S (P by Sherman-Morrison, with u = P z and q = z.u from vaw_predict) and
    w y z to b, after discounting both by gamma (1: none; see above); refuses (returns False,
    changes nothing) when the state would not stay finite."""
    if not vaw_update_safe(D, b, z, q, y, w, gamma):
        return False
    cdef double alpha = -w / (gamma * (gamma + w * q))
    cdef double wy = w * y
    cdef int i
    if gamma != 1.0:
        scale(D * (D + 1) // 2, 1.0 / gamma, P)
        scale(D, gamma, b)
    fastomkl_spr(D, alpha, u, P)
    for i in range(D):
        b[i] += wy * z[i]
    return True


cdef inline long discount_period(double gamma, int D) noexcept nogil:
    """Updates R between two recomputations of a discounted forecaster's inverse (gamma < 1): the
    most that keep the ridge above 0.99 lam (gamma^R >= 0.99), but at least D, whose
    recomputation (about D^3 flops) then costs at most D^2 a round, unless the ridge would fall
    below lam / 2 (gamma^R >= 1/2, or R = 1 when gamma < 1/2)."""
    cdef double small = floor(log(0.99) / log(gamma))
    cdef double half = floor(log(0.5) / log(gamma))
    cdef double R = half if half < D else D
    if small > R:
        R = small
    return <long>R if R >= 1.0 else 1


# -- triangular factors (row-major upper R is column-major lower R^T) ------------------------------
cdef inline void cholupdate(int m, double* R, int ld, double* v) noexcept nogil:
    """R^T R <- R^T R + v v^T for R upper triangular stored by rows (Givens rotations); v is
    overwritten.  (A lower factor stored by rows, whose columns are strided, is downdated by
    fastomkl_chol_drop_first.)"""
    cdef int k, n, one = 1
    cdef double r, c, s
    for k in range(m):
        r = hypot(R[k * ld + k], v[k])
        c = R[k * ld + k] / r
        s = v[k] / r
        R[k * ld + k] = r
        n = m - k - 1
        if n > 0:
            drot(&n, &R[k * ld + k + 1], &one, &v[k + 1], &one, &c, &s)


cdef inline void solve_upper_transposed(int m, double* R, int ld, double* x) noexcept nogil:
    """x <- R^{-T} x (forward substitution; fastomkl_linalg.h says why not BLAS dtrsv)."""
    fastomkl_solve_upper_transposed(m, R, ld, x)


cdef inline double blas_dot(int n, double* a, double* b) noexcept nogil:
    cdef int one = 1
    return ddot(&n, a, &one, b, &one)
