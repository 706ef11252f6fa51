#include "fastomkl_linalg.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define FASTOMKL_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FASTOMKL_CLONES
#endif

FASTOMKL_CLONES
void fastomkl_spmv(int n, const double *A, const double *z, double *u)
{
    for (int i = 0; i < n; ++i) u[i] = 0.0;
    for (int i = 0; i < n; ++i) {
        const double *row = A + (long)i * (i + 1) / 2;
        const double zi = z[i];
        double acc = 0.0;
        /* Row i of the lower triangle serves twice: u_i += row . z and u_j += row_j z_i (j < i). */
        #pragma omp simd reduction(+:acc)
        for (int j = 0; j < i; ++j) {
            acc += row[j] * z[j];
            u[j] += row[j] * zi;
        }
        u[i] += acc + row[i] * zi;
    }
}

FASTOMKL_CLONES
void fastomkl_spr(int n, double alpha, const double *u, double *A)
{
    for (int i = 0; i < n; ++i) {
        double *row = A + (long)i * (i + 1) / 2;
        const double a = alpha * u[i];
        #pragma omp simd
        for (int j = 0; j <= i; ++j) row[j] += a * u[j];
    }
}
