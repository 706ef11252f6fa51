# KORS, the kernel online row sampling of Calandriello, Lazaric & Valko (2017): which points join a
# Nystrom dictionary, and the factor of S K_II S + mu I it keeps (shared by the experts that grow
# a dictionary with it: experts/nystrom.pyx, experts/pros_n_kons.pyx).
from libc.math cimport sqrt

from fastomkl._core.linalg cimport blas_dot, solve_upper_transposed

# An insertion whose Schur complement is below this fraction of its diagonal is refused: the
# point is numerically in the span of the dictionary already (a duplicate, say).
cdef extern from *:
    """
    #define FASTOMKL_DEPENDENT 1e-10
    """
    double DEPENDENT "FASTOMKL_DEPENDENT"

cdef enum:
    KORS_SQRT = 0            # weight 1 / sqrt(p): unbiased
    KORS_INVERSE = 1         # weight 1 / p: the authors' code


cdef inline double kors_probability(int m, double* L, int ld, const double* S, const double* a,
                                    double* v, double mu, double beta, double eps) noexcept nogil:
    """KORS probability min(beta (1 + eps) e / (e + mu), 1) of a point with kernel row a against
    a dictionary of m centres with weights S, L the upper factor of S K_II S + mu I; k(x, x) = 1.
    Leaves v = L^{-T} (S a) for kors_append."""
    cdef int j
    cdef double e, p
    for j in range(m):
        v[j] = S[j] * a[j]
    solve_upper_transposed(m, L, ld, v)
    e = 1.0 - blas_dot(m, v, v)
    if e < 0.0:                 # round-off
        e = 0.0
    p = beta * (1.0 + eps) * e / (e + mu)
    return 1.0 if p > 1.0 else p


cdef inline void kors_append(int m, double* L, int ld, double* S, const double* v, double mu,
                             double p, int weights_kind) noexcept nogil:
    """Borders L (and S) with the point kors_probability just scored, kept with probability p:
    weight S_t = 1 / sqrt(p) (KORS_SQRT) or 1 / p (KORS_INVERSE), column S_t v, diagonal
    sqrt(S_t^2 (1 - v.v) + mu) (always >= sqrt(mu))."""
    cdef int j
    cdef double weight = 1.0 / (sqrt(p) if weights_kind == KORS_SQRT else p)
    cdef double e = 1.0 - blas_dot(m, <double*>v, <double*>v)
    if e < 0.0:
        e = 0.0
    for j in range(m):
        L[j * ld + m] = weight * v[j]
    L[m * ld + m] = sqrt(weight * weight * e + mu)
    S[m] = weight
