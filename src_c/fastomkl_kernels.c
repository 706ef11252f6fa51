#include <math.h>
#include <string.h>

#include "fastomkl_dispatch.h"
#include "fastomkl_kernels.h"

/* Every kernel once per instruction set, at that set's native vector width (see
 * fastomkl_dispatch.h).  Compiled with -ffast-math: callers pass finite values only. */
#define DEFINE_KERNELS(SUFFIX, TARGET, VEC_BYTES)                                                \
                                                                                                 \
/* proj = W^T x, 4 vectors of frequencies at a time with the accumulators in registers for the  \
 * whole pass over the d stride-1 rows of W (a wider generic vector would be split through the  \
 * stack), then one vector at a time, then the last D % width one by one; then sin and cos       \
 * through libmvec. */                                                                           \
TARGET static void fastomkl_rff_##SUFFIX(const double *W, const double *x, int d, int D,        \
                                         double scale, double *z)                                \
{                                                                                                \
    typedef double vec __attribute__((vector_size(VEC_BYTES)));                                  \
    enum { L = VEC_BYTES / 8 };                                                                  \
    double *proj = z + D;     /* the sine half holds the projections until it is overwritten */  \
    int j0 = 0;                                                                                  \
    for (; j0 + 4 * L <= D; j0 += 4 * L) {                                                       \
        vec a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, w0, w1, w2, w3;                              \
        for (int l = 0; l < d; ++l) {                                                            \
            const double *w = W + (long)l * D + j0;                                              \
            const double xl = x[l];                                                              \
            memcpy(&w0, w, sizeof w0);                                                           \
            memcpy(&w1, w + L, sizeof w1);                                                       \
            memcpy(&w2, w + 2 * L, sizeof w2);                                                   \
            memcpy(&w3, w + 3 * L, sizeof w3);                                                   \
            a0 += xl * w0; a1 += xl * w1; a2 += xl * w2; a3 += xl * w3;                          \
        }                                                                                        \
        memcpy(proj + j0, &a0, sizeof a0);                                                       \
        memcpy(proj + j0 + L, &a1, sizeof a1);                                                   \
        memcpy(proj + j0 + 2 * L, &a2, sizeof a2);                                               \
        memcpy(proj + j0 + 3 * L, &a3, sizeof a3);                                               \
    }                                                                                            \
    for (; j0 + L <= D; j0 += L) {                                                               \
        vec a0 = {0}, w0;                                                                        \
        for (int l = 0; l < d; ++l) {                                                            \
            memcpy(&w0, W + (long)l * D + j0, sizeof w0);                                        \
            a0 += x[l] * w0;                                                                     \
        }                                                                                        \
        memcpy(proj + j0, &a0, sizeof a0);                                                       \
    }                                                                                            \
    for (; j0 < D; ++j0) {                                                                       \
        double a = 0.0;                                                                          \
        for (int l = 0; l < d; ++l) a += x[l] * W[(long)l * D + j0];                             \
        proj[j0] = a;                                                                            \
    }                                                                                            \
    /* Separate loops: GCC would fuse one loop into scalar sincos calls instead of libmvec's. */ \
    _Pragma("omp simd")                                                                          \
    for (int j = 0; j < D; ++j) z[j] = scale * cos(proj[j]);                                     \
    _Pragma("omp simd")                                                                          \
    for (int j = 0; j < D; ++j) proj[j] = scale * sin(proj[j]);                                  \
}                                                                                                \
                                                                                                 \
TARGET static double fastomkl_dot_##SUFFIX(const double *a, const double *b, int n)             \
{                                                                                                \
    double s = 0.0;                                                                              \
    _Pragma("omp simd reduction(+:s)")                                                           \
    for (int j = 0; j < n; ++j) s += a[j] * b[j];                                                \
    return s;                                                                                    \
}                                                                                                \
                                                                                                 \
TARGET static void fastomkl_shrink_axpy_##SUFFIX(double *theta, const double *z, int n,          \
                                                 double shrink, double g, double *norm_before,   \
                                                 double *norm_after)                             \
{                                                                                                \
    double before = 0.0, after = 0.0;                                                            \
    _Pragma("omp simd reduction(+:before, after)")                                               \
    for (int j = 0; j < n; ++j) {                                                                \
        const double v = theta[j], w = shrink * v - g * z[j];                                    \
        before += v * v;                                                                         \
        after += w * w;                                                                          \
        theta[j] = w;                                                                            \
    }                                                                                            \
    *norm_before = before;                                                                       \
    *norm_after = after;                                                                         \
}

FASTOMKL_VARIANTS(DEFINE_KERNELS)

FASTOMKL_DISPATCH(void, fastomkl_rff,
                  (const double *W, const double *x, int d, int D, double scale, double *z),
                  (W, x, d, D, scale, z))
FASTOMKL_DISPATCH(double, fastomkl_dot, (const double *a, const double *b, int n), (a, b, n))
FASTOMKL_DISPATCH(void, fastomkl_shrink_axpy,
                  (double *theta, const double *z, int n, double shrink, double g,
                   double *norm_before, double *norm_after),
                  (theta, z, n, shrink, g, norm_before, norm_after))

/* The variant in use, for tests and benchmarks: 4, 3 or 2 (base). */
int fastomkl_isa_in_use(void)
{
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
    return fastomkl_isa_level();
#else
    return 2;
#endif
}
