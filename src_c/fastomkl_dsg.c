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

/* The same in single precision: z[i*r + k] <- scale * cos(p[i*r + k] + b[k]), the projection p
 * and the cosine in float32 (libmvec's 8- or 16-lane cosf), the result widened to double.  The
 * cosines go through a small buffer so that each loop has one element width and vectorises. */
#define DSG_CHUNK 256
#define DEFINE_DSG_COS_FLOAT(SUFFIX, TARGET, VEC_BYTES)                                          \
TARGET static void fastomkl_dsg_cos_float_##SUFFIX(double *z, const float *p, const double *b,   \
                                                   long n, int r, double scale)                  \
{                                                                                                \
    float c[DSG_CHUNK];                                                                          \
    for (long i = 0; i < n; ++i) {                                                               \
        for (int k0 = 0; k0 < r; k0 += DSG_CHUNK) {                                              \
            const int m = r - k0 < DSG_CHUNK ? r - k0 : DSG_CHUNK;                               \
            const float *row = p + i * r + k0;                                                   \
            const double *phase = b + k0;                                                        \
            double *out = z + i * r + k0;                                                        \
            _Pragma("omp simd")                                                                  \
            for (int k = 0; k < m; ++k) c[k] = cosf(row[k] + (float)phase[k]);                   \
            _Pragma("omp simd")                                                                  \
            for (int k = 0; k < m; ++k) out[k] = scale * (double)c[k];                           \
        }                                                                                        \
    }                                                                                            \
}

FASTOMKL_VARIANTS(DEFINE_DSG_COS_FLOAT)

FASTOMKL_DISPATCH(void, fastomkl_dsg_cos_float,
                  (double *z, const float *p, const double *b, long n, int r, double scale),
                  (z, p, b, n, r, scale))
