#include <math.h>
#include <string.h>
#include "fastomkl_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
/* One build for every x86-64 machine: the widest vector unit is chosen at load time. */
#define FASTOMKL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FASTOMKL_CLONES
#endif

/* Eight doubles as one value: GCC lowers it to one zmm, two ymm or four xmm registers, whichever
 * the clone's instruction set has, so accumulators of this type stay in registers. */
typedef double vec8 __attribute__((vector_size(64)));

static inline vec8 load8(const double *p)
{
    vec8 v;
    memcpy(&v, p, sizeof v);     /* unaligned load */
    return v;
}

FASTOMKL_CLONES
void fastomkl_rff(const double *W, const double *x, int d, int D, double scale, double *z)
{
    double *proj = z + D;   /* the sine half holds the projections until it is overwritten */
    int j0 = 0;
    /* proj = W^T x, 32 then 8 frequencies at a time, with the accumulators in registers for the
     * whole pass over the d stride-1 rows of W; the last D % 8 one by one. */
    for (; j0 + 32 <= D; j0 += 32) {
        vec8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (int l = 0; l < d; ++l) {
            const double *w = W + (long)l * D + j0;
            const double xl = x[l];
            a0 += xl * load8(w);
            a1 += xl * load8(w + 8);
            a2 += xl * load8(w + 16);
            a3 += xl * load8(w + 24);
        }
        memcpy(proj + j0, &a0, sizeof a0);
        memcpy(proj + j0 + 8, &a1, sizeof a1);
        memcpy(proj + j0 + 16, &a2, sizeof a2);
        memcpy(proj + j0 + 24, &a3, sizeof a3);
    }
    for (; j0 + 8 <= D; j0 += 8) {
        vec8 a0 = {0};
        for (int l = 0; l < d; ++l) a0 += x[l] * load8(W + (long)l * D + j0);
        memcpy(proj + j0, &a0, sizeof a0);
    }
    for (; j0 < D; ++j0) {
        double a = 0.0;
        for (int l = 0; l < d; ++l) a += x[l] * W[(long)l * D + j0];
        proj[j0] = a;
    }
    /* Separate loops: GCC would fuse one loop into scalar sincos calls instead of libmvec's. */
    #pragma omp simd
    for (int j = 0; j < D; ++j) z[j] = scale * cos(proj[j]);
    #pragma omp simd
    for (int j = 0; j < D; ++j) proj[j] = scale * sin(proj[j]);
}

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
