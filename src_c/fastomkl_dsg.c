#include <math.h>

#include "fastomkl_dispatch.h"
#include "fastomkl_dsg.h"

/* One row at a time, the r phases added and cos taken over whole vectors (omp simd: libmvec). */
#define DEFINE_DSG_COS(SUFFIX, TARGET, VEC_BYTES)                                                \
TARGET static void fastomkl_dsg_cos_##SUFFIX(double *z, const double *b, long n, int r,          \
                                             double scale)                                       \
{                                                                                                \
    for (long i = 0; i < n; ++i) {                                                               \
        double *row = z + i * r;                                                                 \
        _Pragma("omp simd")                                                                      \
        for (int k = 0; k < r; ++k) row[k] = scale * cos(row[k] + b[k]);                         \
    }                                                                                            \
}

FASTOMKL_VARIANTS(DEFINE_DSG_COS)

FASTOMKL_DISPATCH(void, fastomkl_dsg_cos, (double *z, const double *b, long n, int r, double scale),
                  (z, b, n, r, scale))
