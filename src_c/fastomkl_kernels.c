#include <math.h>
#include "fastomkl_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
/* One build for every x86-64 machine: the widest vector unit is chosen at load time. */
#define FASTOMKL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FASTOMKL_CLONES
#endif

FASTOMKL_CLONES
void fastomkl_rff(const double *W, const double *x, int d, int D, double scale, double *z)
{
    double *proj = z + D;   /* the sine half holds the projections until it is overwritten */
    for (int j = 0; j < D; ++j) proj[j] = 0.0;
    /* Axpy over the frequencies (stride 1) rather than dot products over x: vectorises for any d. */
    for (int l = 0; l < d; ++l) {
        const double xl = x[l];
        const double *w = W + (long)l * D;
        #pragma omp simd
        for (int j = 0; j < D; ++j) proj[j] += xl * w[j];
    }
    /* Separate loops: GCC would fuse one loop into scalar sincos calls instead of libmvec's. */
    #pragma omp simd
    for (int j = 0; j < D; ++j) z[j] = scale * cos(proj[j]);
    #pragma omp simd
    for (int j = 0; j < D; ++j) proj[j] = scale * sin(proj[j]);
}
