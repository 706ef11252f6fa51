# Rows of a Gaussian kernel against stored points: the loop every exact-kernel and Nystrom
# component runs (one implementation, so they all compute the same bits).
from libc.math cimport exp


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
