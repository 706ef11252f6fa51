#include <math.h>
#include "fastomkl_expansion.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define FASTOMKL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FASTOMKL_CLONES
#endif

FASTOMKL_CLONES
double fastomkl_exp_dot(const double *alpha, const double *v, long n, double g)
{
    double acc = 0.0;
    #pragma omp simd reduction(+:acc)
    for (long i = 0; i < n; ++i) acc += alpha[i] * exp(-g * v[i]);
    return acc;
}

FASTOMKL_CLONES
void fastomkl_support_distances(const double *S, const double *x, long n, int d, double *sq,
                                double *l1, double *dot)
{
    for (long i = 0; i < n; ++i) {
        const double *s = S + i * (long)d;
        double a = 0.0, b = 0.0, c = 0.0;
        for (int j = 0; j < d; ++j) {
            const double v = x[j] - s[j];
            a += v * v;
            b += fabs(v);
            c += x[j] * s[j];
        }
        if (sq) sq[i] = a;
        if (l1) l1[i] = b;
        if (dot) dot[i] = c;
    }
}
