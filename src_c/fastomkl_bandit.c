#include <math.h>

#include "fastomkl_bandit.h"
#include "fastomkl_dispatch.h"

/* One variant per instruction set, chosen at load time (fastomkl_dispatch.h; FASTOMKL_ISA caps
 * it, so every variant is tested on one machine).  exp and log vectorise through libmvec. */
#define DEFINE_BANDIT(SUFFIX, TARGET, VEC_BYTES)                                                 \
TARGET static void fastomkl_pow_array_##SUFFIX(const double *x, int n, double e, double *out)   \
{                                                                                                \
    _Pragma("omp simd")                                                                          \
    for (int i = 0; i < n; ++i) out[i] = exp(e * log(x[i]));                                     \
}                                                                                                \
                                                                                                 \
TARGET static double fastomkl_tsallis_sum_##SUFFIX(const double *b, const double *eta, int n,    \
                                                   double mu, double e, double *slope)           \
{                                                                                                \
    double total = 0.0, d = 0.0;                                                                 \
    _Pragma("omp simd reduction(+:total, d)")                                                    \
    for (int i = 0; i < n; ++i) {                                                                \
        const double base = b[i] - eta[i] * mu;                                                  \
        const double v = exp(e * log(base));                                                     \
        total += v;                                                                              \
        d += eta[i] * v / base;                                                                  \
    }                                                                                            \
    *slope = -e * d;                                                                             \
    return total;                                                                                \
}                                                                                                \
                                                                                                 \
TARGET static void fastomkl_step_clip_##SUFFIX(double *w, const double *z, int n, double step,  \
                                               double bound, int project)                        \
{                                                                                                \
    if (project) {                                                                               \
        _Pragma("omp simd")                                                                      \
        for (int j = 0; j < n; ++j) {                                                            \
            double v = w[j] - step * z[j];                                                       \
            v = v > bound ? bound : v;                                                           \
            w[j] = v < -bound ? -bound : v;                                                      \
        }                                                                                        \
    } else {                                                                                     \
        _Pragma("omp simd")                                                                      \
        for (int j = 0; j < n; ++j) w[j] -= step * z[j];                                         \
    }                                                                                            \
}                                                                                                \
                                                                                                 \
TARGET static double fastomkl_gibbs_##SUFFIX(const double *v, int n, double scale, double *out) \
{                                                                                                \
    double top = scale * v[0], total = 0.0;                                                      \
    for (int i = 1; i < n; ++i) top = scale * v[i] > top ? scale * v[i] : top;                   \
    _Pragma("omp simd reduction(+:total)")                                                       \
    for (int i = 0; i < n; ++i) {                                                                \
        out[i] = exp(scale * v[i] - top);                                                        \
        total += out[i];                                                                         \
    }                                                                                            \
    const double inv = 1.0 / total;                                                              \
    _Pragma("omp simd")                                                                          \
    for (int i = 0; i < n; ++i) out[i] *= inv;                                                   \
    return top;                                                                                  \
}

FASTOMKL_VARIANTS(DEFINE_BANDIT)

FASTOMKL_DISPATCH(void, fastomkl_pow_array, (const double *x, int n, double e, double *out),
                  (x, n, e, out))
FASTOMKL_DISPATCH(double, fastomkl_tsallis_sum,
                  (const double *b, const double *eta, int n, double mu, double e, double *slope),
                  (b, eta, n, mu, e, slope))
FASTOMKL_DISPATCH(void, fastomkl_step_clip,
                  (double *w, const double *z, int n, double step, double bound, int project),
                  (w, z, n, step, bound, project))
FASTOMKL_DISPATCH(double, fastomkl_gibbs, (const double *v, int n, double scale, double *out),
                  (v, n, scale, out))
