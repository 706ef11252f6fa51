# Rows of a Gaussian kernel against stored points: the loop every exact-kernel and Nystrom
# component runs (one implementation, so they all compute the same bits).
from libc.math cimport exp, fabs, sqrt


cdef inline void gaussian_row(const double* S, long n, long ld, int d, const double* x,
                              double scale, double* out) noexcept nogil:
    """out[j] = exp(-scale ||S_j - x||^2) for the n rows S_j = S + j ld (row-major) of d values;
    scale = 1 / (2 sigma^2)."""
    cdef long j
    cdef int i
    cdef double sq, diff
    cdef const double* row
    for j in range(n):
        row = S + j * ld
        sq = 0.0
        for i in range(d):
            diff = row[i] - x[i]
            sq += diff * diff
        out[j] = exp(-sq * scale)


# The shift-invariant kernels of the random-feature banks, by the codes of features/dsg.pxd
# (0 Gaussian, 1 Laplacian, 2 Cauchy, 3 Matern of 2 nu = matern_df in {1, 3, 5}), with the
# conventions of fastomkl.kernels.
cdef inline double shift_invariant(int kind, int matern_df, double sigma, const double* x,
                                   const double* y, int d) noexcept nogil:
    cdef double total = 0.0, delta, r
    cdef int i
    if kind == 1:
        for i in range(d):
            total += fabs(x[i] - y[i])
        return exp(-total / sigma)
    if kind == 2:
        total = 1.0
        for i in range(d):
            delta = (x[i] - y[i]) / sigma
            total /= 1.0 + delta * delta
        return total
    for i in range(d):
        delta = x[i] - y[i]
        total += delta * delta
    if kind == 0:
        return exp(-total / (2.0 * sigma * sigma))
    r = sqrt(matern_df * total) / sigma         # sqrt(2 nu) ||x - y|| / sigma
    if matern_df == 1:
        return exp(-r)
    if matern_df == 3:
        return (1.0 + r) * exp(-r)
    return (1.0 + r + r * r / 3.0) * exp(-r)
