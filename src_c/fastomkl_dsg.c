#include <math.h>
#include <string.h>

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

/* z (r) = W^T x for a row x with few nonzeros: the rows of W (d, r) the nonzeros select, scaled and
 * summed in order (a dense product would multiply every zero too). */
#define DEFINE_DSG_PROJECT_SPARSE(SUFFIX, TARGET, VEC_BYTES)                                     \
TARGET static void fastomkl_dsg_project_sparse_##SUFFIX(double *z, const double *x, int d,       \
                                                        const double *W, int r)                  \
{                                                                                                \
    memset(z, 0, sizeof(double) * (size_t)r);                                                    \
    for (int j = 0; j < d; ++j) {                                                                \
        const double xj = x[j];                                                                  \
        if (xj == 0.0) continue;                                                                 \
        const double *w = W + (long)j * r;                                                       \
        _Pragma("omp simd")                                                                      \
        for (int k = 0; k < r; ++k) z[k] += xj * w[k];                                           \
    }                                                                                            \
}

FASTOMKL_VARIANTS(DEFINE_DSG_PROJECT_SPARSE)

FASTOMKL_DISPATCH(void, fastomkl_dsg_project_sparse,
                  (double *z, const double *x, int d, const double *W, int r), (z, x, d, W, r))

#define DEFINE_DSG_PROJECT_FLOAT(SUFFIX, TARGET, VEC_BYTES)                                      \
TARGET static void fastomkl_dsg_project_float_##SUFFIX(float *p, const double *x, int d,         \
                                                       const float *W, int r)                    \
{                                                                                                \
    memset(p, 0, sizeof(float) * (size_t)r);                                                     \
    for (int j = 0; j < d; ++j) {                                                                \
        const float xj = (float)x[j];                                                            \
        if (xj == 0.0f) continue;                                                                \
        const float *w = W + (long)j * r;                                                        \
        _Pragma("omp simd")                                                                      \
        for (int k = 0; k < r; ++k) p[k] += xj * w[k];                                           \
    }                                                                                            \
}

FASTOMKL_VARIANTS(DEFINE_DSG_PROJECT_FLOAT)

FASTOMKL_DISPATCH(void, fastomkl_dsg_project_float,
                  (float *p, const double *x, int d, const float *W, int r), (p, x, d, W, r))
