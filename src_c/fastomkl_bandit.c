#include <math.h>
#include "fastomkl_bandit.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define FASTOMKL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FASTOMKL_CLONES
#endif

FASTOMKL_CLONES
void fastomkl_pow_array(const double *x, int n, double e, double *out)
{
    #pragma omp simd
    for (int i = 0; i < n; ++i) out[i] = exp(e * log(x[i]));
}

FASTOMKL_CLONES
double fastomkl_tsallis_sum(const double *b, const double *eta, int n, double mu, double e,
                            double *slope)
{
    double total = 0.0, d = 0.0;
    #pragma omp simd reduction(+:total, d)
    for (int i = 0; i < n; ++i) {
        const double base = b[i] - eta[i] * mu;
        const double v = exp(e * log(base));
        total += v;
        d += eta[i] * v / base;
    }
    *slope = -e * d;
    return total;
}

FASTOMKL_CLONES
void fastomkl_step_clip(double *w, const double *z, int n, double step, double bound, int project)
{
    if (project) {
        #pragma omp simd
        for (int j = 0; j < n; ++j) {
            double v = w[j] - step * z[j];
            v = v > bound ? bound : v;
            w[j] = v < -bound ? -bound : v;
        }
    } else {
        #pragma omp simd
        for (int j = 0; j < n; ++j) w[j] -= step * z[j];
    }
}

FASTOMKL_CLONES
double fastomkl_gibbs(const double *v, int n, double scale, double *out)
{
    double top = scale * v[0], total = 0.0;
    for (int i = 1; i < n; ++i) top = scale * v[i] > top ? scale * v[i] : top;
    #pragma omp simd reduction(+:total)
    for (int i = 0; i < n; ++i) {
        out[i] = exp(scale * v[i] - top);
        total += out[i];
    }
    const double inv = 1.0 / total;
    #pragma omp simd
    for (int i = 0; i < n; ++i) out[i] *= inv;
    return top;
}
