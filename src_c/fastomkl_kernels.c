#include <math.h>
#include <string.h>

#include "fastomkl_dispatch.h"
#include "fastomkl_kernels.h"

/* Every kernel once per instruction set, at that set's native vector width (see
 * fastomkl_dispatch.h).  Compiled with -ffast-math: callers pass finite values only. */
#define DEFINE_KERNELS(SUFFIX, TARGET, VEC_BYTES)                                                \
                                                                                                 \
/* proj = W^T x in blocks of up to 4 vectors of frequencies, whose accumulators stay in registers  \
 * for the whole pass over the d rows of W (independent chains, so the multiply-adds overlap).     \
 * W's rows are `ld` >= D long, zero-padded to whole vectors, so the last block reads whole         \
 * vectors too; the projections of a last partial vector go to a local buffer.  Then sin and cos   \
 * of whole vectors only: a scalar epilogue would call glibc's scalar sin and cos, each about five \
 * times dearer than a vector lane. */                                                           \
TARGET static void fastomkl_rff_##SUFFIX(const double *W, const double *x, int d, int D, int ld, \
                                         double scale, double *z)                                \
{                                                                                                \
    typedef double vec __attribute__((vector_size(VEC_BYTES)));                                  \
    enum { L = VEC_BYTES / 8 };                                                                  \
    double *proj = z + D;     /* the sine half holds the projections until it is overwritten */  \
    double tail[L];           /* projections of the last partial vector (D % L values)       */  \
    const int Dv = D - D % L;                                                                    \
    for (int j0 = 0; j0 < D; j0 += 4 * L) {                                                      \
        const int nv = D - j0 >= 4 * L ? 4 : (D - j0 + L - 1) / L;                               \
        vec a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, w0, w1, w2, w3;                              \
        for (int l = 0; l < d; ++l) {                                                            \
            const double *w = W + (long)l * ld + j0;                                             \
            const double xl = x[l];                                                              \
            memcpy(&w0, w, sizeof w0);                                                           \
            a0 += xl * w0;                                                                       \
            if (nv > 1) { memcpy(&w1, w + L, sizeof w1); a1 += xl * w1; }                        \
            if (nv > 2) { memcpy(&w2, w + 2 * L, sizeof w2); a2 += xl * w2; }                    \
            if (nv > 3) { memcpy(&w3, w + 3 * L, sizeof w3); a3 += xl * w3; }                    \
        }                                                                                        \
        memcpy(j0 < Dv ? proj + j0 : tail, &a0, sizeof a0);                                      \
        if (nv > 1) memcpy(j0 + L < Dv ? proj + j0 + L : tail, &a1, sizeof a1);                  \
        if (nv > 2) memcpy(j0 + 2 * L < Dv ? proj + j0 + 2 * L : tail, &a2, sizeof a2);          \
        if (nv > 3) memcpy(j0 + 3 * L < Dv ? proj + j0 + 3 * L : tail, &a3, sizeof a3);          \
    }                                                                                            \
    /* Separate loops: GCC would fuse one loop into scalar sincos calls instead of libmvec's. */ \
    _Pragma("omp simd")                                                                          \
    for (int j = 0; j < Dv; ++j) z[j] = scale * cos(proj[j]);                                    \
    _Pragma("omp simd")                                                                          \
    for (int j = 0; j < Dv; ++j) proj[j] = scale * sin(proj[j]);                                 \
    if (Dv < D) {                                                                                \
        double c[L], s[L];                                                                       \
        if (L >= 8 && D - Dv <= L / 2) {   /* half a vector is enough, at half the cost */      \
            _Pragma("omp simd")                                                                  \
            for (int j = 0; j < L / 2; ++j) c[j] = scale * cos(tail[j]);                         \
            _Pragma("omp simd")                                                                  \
            for (int j = 0; j < L / 2; ++j) s[j] = scale * sin(tail[j]);                         \
        } else {                                                                                 \
            _Pragma("omp simd")                                                                  \
            for (int j = 0; j < L; ++j) c[j] = scale * cos(tail[j]);                             \
            _Pragma("omp simd")                                                                  \
            for (int j = 0; j < L; ++j) s[j] = scale * sin(tail[j]);                             \
        }                                                                                        \
        memcpy(z + Dv, c, sizeof(double) * (D - Dv));                                            \
        memcpy(proj + Dv, s, sizeof(double) * (D - Dv));                                         \
    }                                                                                            \
}                                                                                                \
                                                                                                 \
/* The reductions keep several independent vector accumulators: with one, each step would wait  \
 * for the previous multiply-add (4 cycles), and at n = 2D = 100 that latency is the whole cost. */\
TARGET static double fastomkl_dot_##SUFFIX(const double *a, const double *b, int n)             \
{                                                                                                \
    typedef double vec __attribute__((vector_size(VEC_BYTES)));                                  \
    enum { L = VEC_BYTES / 8 };                                                                  \
    vec s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, a0, a1, a2, a3, b0, b1, b2, b3;                  \
    int j = 0;                                                                                   \
    for (; j + 4 * L <= n; j += 4 * L) {                                                         \
        memcpy(&a0, a + j, sizeof a0); memcpy(&b0, b + j, sizeof b0);                            \
        memcpy(&a1, a + j + L, sizeof a1); memcpy(&b1, b + j + L, sizeof b1);                    \
        memcpy(&a2, a + j + 2 * L, sizeof a2); memcpy(&b2, b + j + 2 * L, sizeof b2);            \
        memcpy(&a3, a + j + 3 * L, sizeof a3); memcpy(&b3, b + j + 3 * L, sizeof b3);            \
        s0 += a0 * b0; s1 += a1 * b1; s2 += a2 * b2; s3 += a3 * b3;                              \
    }                                                                                            \
    for (; j + L <= n; j += L) {                                                                 \
        memcpy(&a0, a + j, sizeof a0); memcpy(&b0, b + j, sizeof b0);                            \
        s0 += a0 * b0;                                                                           \
    }                                                                                            \
    s0 = (s0 + s1) + (s2 + s3);                                                                  \
    double s = 0.0;                                                                              \
    for (int l = 0; l < L; ++l) s += s0[l];                                                      \
    for (; j < n; ++j) s += a[j] * b[j];                                                         \
    return s;                                                                                    \
}                                                                                                \
                                                                                                 \
TARGET static void fastomkl_shrink_axpy_##SUFFIX(double *theta, const double *z, int n,          \
                                                 double shrink, double g, double *norm_before,   \
                                                 double *norm_after)                             \
{                                                                                                \
    typedef double vec __attribute__((vector_size(VEC_BYTES)));                                  \
    enum { L = VEC_BYTES / 8 };                                                                  \
    vec b0 = {0}, b1 = {0}, f0 = {0}, f1 = {0}, v0, v1, z0, z1;                                  \
    int j = 0;                                                                                   \
    for (; j + 2 * L <= n; j += 2 * L) {                                                         \
        memcpy(&v0, theta + j, sizeof v0); memcpy(&z0, z + j, sizeof z0);                        \
        memcpy(&v1, theta + j + L, sizeof v1); memcpy(&z1, z + j + L, sizeof z1);                \
        b0 += v0 * v0; b1 += v1 * v1;                                                            \
        v0 = shrink * v0 - g * z0; v1 = shrink * v1 - g * z1;                                    \
        f0 += v0 * v0; f1 += v1 * v1;                                                            \
        memcpy(theta + j, &v0, sizeof v0); memcpy(theta + j + L, &v1, sizeof v1);                \
    }                                                                                            \
    b0 += b1;                                                                                    \
    f0 += f1;                                                                                    \
    double before = 0.0, after = 0.0;                                                            \
    for (int l = 0; l < L; ++l) { before += b0[l]; after += f0[l]; }                             \
    for (; j < n; ++j) {                                                                         \
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
                  (const double *W, const double *x, int d, int D, int ld, double scale,
                   double *z),
                  (W, x, d, D, ld, scale, z))
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

/* Shared frequency draws: the projection of a family's base draw once per sample, then each
 * kernel's features from it, scaled.  Rows of W and of p are `ld` long (a multiple of
 * FASTOMKL_RFF_ALIGN), so every vector either function touches is whole: no scalar epilogue. */
#define DEFINE_SHARED_DRAW_KERNELS(SUFFIX, TARGET, VEC_BYTES)                                    \
                                                                                                 \
/* p = W^T x, in blocks of up to 4 vectors of frequencies whose accumulators stay in registers   \
 * for the whole pass over the d rows of W (independent chains, so the multiply-adds overlap). */ \
TARGET static void fastomkl_rff_project_##SUFFIX(const double *W, const double *x, int d,        \
                                                 int ld, double *p)                              \
{                                                                                                \
    typedef double vec __attribute__((vector_size(VEC_BYTES)));                                  \
    enum { L = VEC_BYTES / 8 };                                                                  \
    for (int j0 = 0; j0 < ld; j0 += 4 * L) {                                                     \
        const int nv = ld - j0 >= 4 * L ? 4 : (ld - j0) / L;                                     \
        vec a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, w0, w1, w2, w3;                              \
        for (int l = 0; l < d; ++l) {                                                            \
            const double *w = W + (long)l * ld + j0;                                             \
            const double xl = x[l];                                                              \
            memcpy(&w0, w, sizeof w0);                                                           \
            a0 += xl * w0;                                                                       \
            if (nv > 1) { memcpy(&w1, w + L, sizeof w1); a1 += xl * w1; }                        \
            if (nv > 2) { memcpy(&w2, w + 2 * L, sizeof w2); a2 += xl * w2; }                    \
            if (nv > 3) { memcpy(&w3, w + 3 * L, sizeof w3); a3 += xl * w3; }                    \
        }                                                                                        \
        memcpy(p + j0, &a0, sizeof a0);                                                          \
        if (nv > 1) memcpy(p + j0 + L, &a1, sizeof a1);                                          \
        if (nv > 2) memcpy(p + j0 + 2 * L, &a2, sizeof a2);                                      \
        if (nv > 3) memcpy(p + j0 + 3 * L, &a3, sizeof a3);                                      \
    }                                                                                            \
}                                                                                                \
                                                                                                 \
/* z = scale * [cos(factor p); sin(factor p)] over the first D projections; the last partial     \
 * vector is computed whole (p is padded) into local buffers. */                                 \
TARGET static void fastomkl_rff_scaled_##SUFFIX(const double *p, int D, double factor,          \
                                                double scale, double *z)                         \
{                                                                                                \
    enum { L = VEC_BYTES / 8 };                                                                  \
    const int Dv = D - D % L;                                                                    \
    double *sine = z + D;     /* indexed by j alone: with z[D + j] GCC keeps the loop scalar */  \
    /* Separate loops: GCC would fuse one loop into scalar sincos calls instead of libmvec's. */ \
    _Pragma("omp simd")                                                                          \
    for (int j = 0; j < Dv; ++j) z[j] = scale * cos(factor * p[j]);                              \
    _Pragma("omp simd")                                                                          \
    for (int j = 0; j < Dv; ++j) sine[j] = scale * sin(factor * p[j]);                           \
    if (Dv < D) {                                                                                \
        double c[L], s[L];                                                                       \
        _Pragma("omp simd")                                                                      \
        for (int j = 0; j < L; ++j) c[j] = scale * cos(factor * p[Dv + j]);                      \
        _Pragma("omp simd")                                                                      \
        for (int j = 0; j < L; ++j) s[j] = scale * sin(factor * p[Dv + j]);                      \
        memcpy(z + Dv, c, sizeof(double) * (D - Dv));                                            \
        memcpy(sine + Dv, s, sizeof(double) * (D - Dv));                                         \
    }                                                                                            \
}

FASTOMKL_VARIANTS(DEFINE_SHARED_DRAW_KERNELS)

FASTOMKL_DISPATCH(void, fastomkl_rff_project,
                  (const double *W, const double *x, int d, int ld, double *p), (W, x, d, ld, p))
FASTOMKL_DISPATCH(void, fastomkl_rff_scaled,
                  (const double *p, int D, double factor, double scale, double *z),
                  (p, D, factor, scale, z))
