#include <math.h>
#include <string.h>
#include "fastomkl_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
/* One build for every x86-64 machine: the widest vector unit is chosen at load time. */
#define FASTOMKL_X86_DISPATCH 1
#define FASTOMKL_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FASTOMKL_CLONES
#endif

/* The random-feature kernel, once per instruction set with that set's native vector width, so the
 * projection accumulators stay in registers (a wider generic vector would be split through the
 * stack).  proj = W^T x runs 4 vectors of frequencies at a time over the d stride-1 rows of W, then
 * one vector at a time, then the last D % width one by one; sin and cos go through libmvec. */
#define FASTOMKL_RFF_VARIANT(NAME, TARGET, VEC_BYTES)                                            \
TARGET static void NAME(const double *W, const double *x, int d, int D, double scale, double *z) \
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
}

#ifdef FASTOMKL_X86_DISPATCH
FASTOMKL_RFF_VARIANT(rff_v4, __attribute__((target("arch=x86-64-v4"))), 64)
FASTOMKL_RFF_VARIANT(rff_v3, __attribute__((target("arch=x86-64-v3"))), 32)
FASTOMKL_RFF_VARIANT(rff_base, , 16)

typedef void rff_fn(const double *, const double *, int, int, double, double *);

/* Runs once, when the library loads (an ifunc, as target_clones uses). */
static rff_fn *resolve_rff(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
            && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
        return rff_v4;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return rff_v3;
    return rff_base;
}

void fastomkl_rff(const double *W, const double *x, int d, int D, double scale, double *z)
    __attribute__((ifunc("resolve_rff")));
#else
FASTOMKL_RFF_VARIANT(rff_base, , 16)

void fastomkl_rff(const double *W, const double *x, int d, int D, double scale, double *z)
{
    rff_base(W, x, d, D, scale, z);
}
#endif

FASTOMKL_CLONES
double fastomkl_dot(const double *a, const double *b, int n)
{
    double s = 0.0;
    #pragma omp simd reduction(+:s)
    for (int j = 0; j < n; ++j) s += a[j] * b[j];
    return s;
}

FASTOMKL_CLONES
void fastomkl_shrink_axpy(double *theta, const double *z, int n, double shrink, double g,
                          double *norm_before, double *norm_after)
{
    double before = 0.0, after = 0.0;
    #pragma omp simd reduction(+:before, after)
    for (int j = 0; j < n; ++j) {
        const double v = theta[j], w = shrink * v - g * z[j];
        before += v * v;
        after += w * w;
        theta[j] = w;
    }
    *norm_before = before;
    *norm_after = after;
}
