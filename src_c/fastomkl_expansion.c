#include <math.h>

#include "fastomkl_dispatch.h"
#include "fastomkl_expansion.h"

/* One variant per instruction set, chosen at load time (fastomkl_dispatch.h; FASTOMKL_ISA caps
 * it, so every variant is tested on one machine).  exp vectorises through libmvec. */
#define DEFINE_EXPANSION(SUFFIX, TARGET, VEC_BYTES)                                              \
TARGET static double fastomkl_exp_dot_##SUFFIX(const double *alpha, const double *v, long n,     \
                                               double g)                                         \
{                                                                                                \
    double acc = 0.0;                                                                            \
    _Pragma("omp simd reduction(+:acc)")                                                         \
    for (long i = 0; i < n; ++i) acc += alpha[i] * exp(-g * v[i]);                               \
    return acc;                                                                                  \
}                                                                                                \
                                                                                                 \
TARGET static void fastomkl_exp_values_##SUFFIX(const double *v, long n, double g, double *out)  \
{                                                                                                \
    _Pragma("omp simd")                                                                          \
    for (long i = 0; i < n; ++i) out[i] = exp(-g * v[i]);                                        \
}                                                                                                \
                                                                                                 \
TARGET static void fastomkl_support_distances_##SUFFIX(const double *S, const double *x, long n, \
                                                       int d, double *sq, double *l1,            \
                                                       double *dot)                              \
{                                                                                                \
    for (long i = 0; i < n; ++i) {                                                               \
        const double *s = S + i * (long)d;                                                       \
        double a = 0.0, b = 0.0, c = 0.0;                                                        \
        for (int j = 0; j < d; ++j) {                                                            \
            const double v = x[j] - s[j];                                                        \
            a += v * v;                                                                          \
            b += fabs(v);                                                                        \
            c += x[j] * s[j];                                                                    \
        }                                                                                        \
        if (sq) sq[i] = a;                                                                       \
        if (l1) l1[i] = b;                                                                       \
        if (dot) dot[i] = c;                                                                     \
    }                                                                                            \
}

FASTOMKL_VARIANTS(DEFINE_EXPANSION)

FASTOMKL_DISPATCH(double, fastomkl_exp_dot, (const double *alpha, const double *v, long n, double g),
                  (alpha, v, n, g))
FASTOMKL_DISPATCH(void, fastomkl_exp_values, (const double *v, long n, double g, double *out),
                  (v, n, g, out))
FASTOMKL_DISPATCH(void, fastomkl_support_distances,
                  (const double *S, const double *x, long n, int d, double *sq, double *l1,
                   double *dot),
                  (S, x, n, d, sq, l1, dot))
