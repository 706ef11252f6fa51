#include <math.h>
#include <string.h>

#include "fastomkl_dispatch.h"
#include "fastomkl_kernels.h"
#include "fastomkl_sincos.h"

FASTOMKL_VARIANTS(FASTOMKL_DEFINE_SINCOS)
FASTOMKL_VARIANTS(FASTOMKL_DEFINE_SINCOS_F32)

/* Random Fourier features, once per instruction set and element type T of the frequencies:
 * double, or float (TS = _f32) for float32 models, whose projections and sines and cosines are
 * computed in float and widened into the double features the experts read.  Compiled with
 * -ffast-math: callers pass finite values only.
 *
 * z[j + i] = scale cos p[i] and z[D + j + i] = scale sin p[i] for the L projections p of
 * frequencies j.. (those below D: the last vector may be partial).  The fused sine-cosine
 * replaced libmvec's cos then sin loops on every variant: it is faster on each
 * (bench/results/sincos.md, Raker-76's 76 kernels: 8.3 against 11.7 us per sample on AVX-512,
 * 10.8 against 14.4 on AVX2 + FMA, 21.7 against 27.5 on SSE2; 1.7 against 3.4 cycles per pair). */
#define DEFINE_RFF(SUFFIX, TARGET, VEC_BYTES, T, TS)                                                \
typedef fastomkl_vec##TS##_##SUFFIX fastomkl_rvec##TS##_##SUFFIX;                                   \
/* L values of T widened to double: one vector, or two halves for float */                          \
typedef double fastomkl_wide##TS##_##SUFFIX                                                         \
    __attribute__((vector_size(VEC_BYTES / sizeof(T) * 8)));                                        \
TARGET __attribute__((always_inline)) static inline void                                            \
fastomkl_rff_store##TS##_##SUFFIX(fastomkl_rvec##TS##_##SUFFIX p, int j, int D, double scale,       \
                                  double *z)                                                        \
{                                                                                                   \
    enum { L = VEC_BYTES / sizeof(T) };                                                             \
    typedef fastomkl_wide##TS##_##SUFFIX wide;                                                      \
    fastomkl_rvec##TS##_##SUFFIX s, c;                                                              \
    /* p as computed (factor * projection): fast-math may not fold the factor into the              \
     * reduction differently in each caller, so every path gives a kernel the same features */      \
    FASTOMKL_OPAQUE(p);                                                                             \
    fastomkl_sincos##TS##_##SUFFIX(p, &s, &c);                                                      \
    s *= (T)scale;                                                                                  \
    c *= (T)scale;                                                                                  \
    if (j + L <= D) {                                                                               \
        const wide cw = __builtin_convertvector(c, wide), sw = __builtin_convertvector(s, wide);    \
        memcpy(z + j, &cw, sizeof cw);                                                              \
        memcpy(z + D + j, &sw, sizeof sw);                                                          \
    } else {                  /* lane by lane: a memcpy of variable size would be a call */         \
        for (int i = 0; i < L; ++i) {                                                               \
            if (i < D - j) {                                                                        \
                z[j + i] = c[i];                                                                    \
                z[D + j + i] = s[i];                                                                \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
}                                                                                                   \
                                                                                                    \
/* The projections W^T x of up to 8 vectors of frequencies from j0 (nv of them), whose              \
 * accumulators stay in registers for the whole pass over the d rows of W.  Eight chains: one       \
 * multiply-add of a chain waits for the one before (4 cycles), and with four chains the pass over  \
 * D = 50 float32 frequencies on AVX2 (seven vectors, then in blocks of 4 and 3) took 13% longer    \
 * (Raker-76's features; each lane sums its d terms in row order whatever the block's width, so    \
 * the width changes no bit).  W's rows are `ld` long, zero-padded to whole vectors.  In float, x   \
 * is rounded to float too: the sum's rounding error then grows like that of the stored             \
 * frequencies themselves (sqrt(d) ulp for random signs), so a double sum would buy nothing. */      \
typedef struct { fastomkl_rvec##TS##_##SUFFIX a[8]; } fastomkl_block##TS##_##SUFFIX;                \
TARGET __attribute__((always_inline)) static inline fastomkl_block##TS##_##SUFFIX                   \
fastomkl_project_block##TS##_##SUFFIX(const T *W, const double *x, int d, int ld, int j0, int nv)   \
{                                                                                                   \
    typedef fastomkl_rvec##TS##_##SUFFIX vec;                                                       \
    enum { L = VEC_BYTES / sizeof(T) };                                                             \
    vec a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0}, w;          \
    for (int l = 0; l < d; ++l) {                                                                   \
        const T *row = W + (long)l * ld + j0;                                                       \
        const T xl = (T)x[l];                                                                       \
        memcpy(&w, row, sizeof w);                                                                  \
        a0 += xl * w;                                                                               \
        if (nv > 1) { memcpy(&w, row + L, sizeof w); a1 += xl * w; }                                \
        if (nv > 2) { memcpy(&w, row + 2 * L, sizeof w); a2 += xl * w; }                            \
        if (nv > 3) { memcpy(&w, row + 3 * L, sizeof w); a3 += xl * w; }                            \
        if (nv > 4) { memcpy(&w, row + 4 * L, sizeof w); a4 += xl * w; }                            \
        if (nv > 5) { memcpy(&w, row + 5 * L, sizeof w); a5 += xl * w; }                            \
        if (nv > 6) { memcpy(&w, row + 6 * L, sizeof w); a6 += xl * w; }                            \
        if (nv > 7) { memcpy(&w, row + 7 * L, sizeof w); a7 += xl * w; }                            \
    }                                                                                               \
    return (fastomkl_block##TS##_##SUFFIX){{a0, a1, a2, a3, a4, a5, a6, a7}};                       \
}                                                                                                   \
                                                                                                    \
/* With `keep`, the projections are also stored there (whole vectors, D rounded up), for kernels    \
 * that scale the same projection differently. */                                                   \
TARGET __attribute__((always_inline)) static inline void                                            \
fastomkl_keep##TS##_##SUFFIX(fastomkl_rvec##TS##_##SUFFIX p, int j, int D, double factor,           \
                                 double scale, T *keep, double *z)                                  \
{                                                                                                   \
    if (keep)                                                                                       \
        memcpy(keep + j, &p, sizeof p);                                                             \
    fastomkl_rff_store##TS##_##SUFFIX((T)factor * p, j, D, scale, z);                               \
}                                                                                                   \
                                                                                                    \
/* z = scale [cos(factor p); sin(factor p)], p = W^T x, in blocks of up to 8 vectors of             \
 * frequencies whose accumulators go from registers straight into the sine-cosine.  W's rows are    \
 * `ld` >= D long, zero-padded to whole vectors, so the last block reads whole vectors too. */      \
TARGET __attribute__((always_inline)) static inline void                                            \
fastomkl_rff_from##TS##_##SUFFIX(const T *W, const double *x, int d, int D, int ld,                 \
                                 double factor, double scale, T *keep, double *z)                   \
{                                                                                                   \
    enum { L = VEC_BYTES / sizeof(T) };                                                             \
    for (int j0 = 0; j0 < D; j0 += 8 * L) {                                                         \
        const int nv = D - j0 >= 8 * L ? 8 : (D - j0 + L - 1) / L;                                  \
        const fastomkl_block##TS##_##SUFFIX p =                                                     \
            fastomkl_project_block##TS##_##SUFFIX(W, x, d, ld, j0, nv);                             \
        fastomkl_keep##TS##_##SUFFIX(p.a[0], j0, D, factor, scale, keep, z);                        \
        if (nv > 1) fastomkl_keep##TS##_##SUFFIX(p.a[1], j0 + L, D, factor, scale, keep, z);        \
        if (nv > 2) fastomkl_keep##TS##_##SUFFIX(p.a[2], j0 + 2 * L, D, factor, scale, keep, z);    \
        if (nv > 3) fastomkl_keep##TS##_##SUFFIX(p.a[3], j0 + 3 * L, D, factor, scale, keep, z);    \
        if (nv > 4) fastomkl_keep##TS##_##SUFFIX(p.a[4], j0 + 4 * L, D, factor, scale, keep, z);    \
        if (nv > 5) fastomkl_keep##TS##_##SUFFIX(p.a[5], j0 + 5 * L, D, factor, scale, keep, z);    \
        if (nv > 6) fastomkl_keep##TS##_##SUFFIX(p.a[6], j0 + 6 * L, D, factor, scale, keep, z);    \
        if (nv > 7) fastomkl_keep##TS##_##SUFFIX(p.a[7], j0 + 7 * L, D, factor, scale, keep, z);    \
    }                                                                                               \
}                                                                                                   \
                                                                                                    \
TARGET static void fastomkl_rff##TS##_##SUFFIX(const T *W, const double *x, int d, int D, int ld,   \
                                               double scale, double *z)                             \
{                                                                                                   \
    fastomkl_rff_from##TS##_##SUFFIX(W, x, d, D, ld, 1.0, scale, NULL, z);                          \
}                                                                                                   \
                                                                                                    \
/* Shared frequency draws: the first kernel of a family in a sample computes its features from      \
 * the projection in registers, which is kept in p (if not NULL) for the family's other kernels     \
 * (fastomkl_rff_scaled). */                                                                        \
TARGET static void fastomkl_rff_project_scaled##TS##_##SUFFIX(const T *W, const double *x, int d,   \
                                                              int D, int ld, double factor,         \
                                                              double scale, T *p, double *z)        \
{                                                                                                   \
    fastomkl_rff_from##TS##_##SUFFIX(W, x, d, D, ld, factor, scale, p, z);                          \
}                                                                                                   \
                                                                                                    \
/* z = scale * [cos(factor p); sin(factor p)] over the first D projections (p is padded to whole    \
 * vectors: the last is read whole). */                                                             \
TARGET static void fastomkl_rff_scaled##TS##_##SUFFIX(const T *p, int D, double factor,             \
                                                      double scale, double *z)                      \
{                                                                                                   \
    enum { L = VEC_BYTES / sizeof(T) };                                                             \
    fastomkl_rvec##TS##_##SUFFIX v;                                                                 \
    for (int j = 0; j < D; j += L) {                                                                \
        memcpy(&v, p + j, sizeof v);                                                                \
        fastomkl_rff_store##TS##_##SUFFIX((T)factor * v, j, D, scale, z);                           \
    }                                                                                               \
}                                                                                                   \
                                                                                                    \
/* s[i] = sin x[i], c[i] = cos x[i]: the fused sine-cosine over an array (tests, benchmarks). */    \
TARGET static void fastomkl_sincos_many##TS##_##SUFFIX(const T *x, long n, T *s, T *c)              \
{                                                                                                   \
    typedef fastomkl_rvec##TS##_##SUFFIX vec;                                                       \
    enum { L = VEC_BYTES / sizeof(T) };                                                             \
    vec v = {0}, sv, cv;                                                                            \
    long i = 0;                                                                                     \
    for (; i + L <= n; i += L) {                                                                    \
        memcpy(&v, x + i, sizeof v);                                                                \
        fastomkl_sincos##TS##_##SUFFIX(v, &sv, &cv);                                                \
        memcpy(s + i, &sv, sizeof sv);                                                              \
        memcpy(c + i, &cv, sizeof cv);                                                              \
    }                                                                                               \
    if (i < n) {                                                                                    \
        v = (vec){0};                                                                               \
        memcpy(&v, x + i, sizeof(T) * (n - i));                                                     \
        fastomkl_sincos##TS##_##SUFFIX(v, &sv, &cv);                                                \
        memcpy(s + i, &sv, sizeof(T) * (n - i));                                                    \
        memcpy(c + i, &cv, sizeof(T) * (n - i));                                                    \
    }                                                                                               \
}

#define DEFINE_RFF_BOTH(SUFFIX, TARGET, VEC_BYTES)                                                  \
    DEFINE_RFF(SUFFIX, TARGET, VEC_BYTES, double, )                                                 \
    DEFINE_RFF(SUFFIX, TARGET, VEC_BYTES, float, _f32)

FASTOMKL_VARIANTS(DEFINE_RFF_BOTH)

#define DISPATCH_RFF(T, TS)                                                                         \
    FASTOMKL_DISPATCH(void, fastomkl_rff##TS,                                                       \
                      (const T *W, const double *x, int d, int D, int ld, double scale, double *z), \
                      (W, x, d, D, ld, scale, z))                                                   \
    FASTOMKL_DISPATCH(void, fastomkl_rff_project_scaled##TS,                                        \
                      (const T *W, const double *x, int d, int D, int ld, double factor,            \
                       double scale, T *p, double *z),                                              \
                      (W, x, d, D, ld, factor, scale, p, z))                                        \
    FASTOMKL_DISPATCH(void, fastomkl_rff_scaled##TS,                                                \
                      (const T *p, int D, double factor, double scale, double *z),                  \
                      (p, D, factor, scale, z))                                                     \
    FASTOMKL_DISPATCH(void, fastomkl_sincos_many##TS, (const T *x, long n, T *s, T *c),             \
                      (x, n, s, c))

DISPATCH_RFF(double, )
DISPATCH_RFF(float, _f32)

/* The other kernels once per instruction set, at that set's native vector width (see
 * fastomkl_dispatch.h).  Compiled with -ffast-math: callers pass finite values only. */
#define DEFINE_KERNELS(SUFFIX, TARGET, VEC_BYTES)                                                \
                                                                                                 \
/* a . b, and b . b in *bb unless bb is NULL (one pass over b: an expert's prediction and its    \
 * features' norm).  Inlined into each caller, so the dot product alone does no norm work.      \
 * The reductions keep several independent vector accumulators: with one, each step would wait  \
 * for the previous multiply-add (4 cycles), and at n = 2D = 100 that latency is the whole cost. */\
TARGET __attribute__((always_inline)) static inline double                                       \
fastomkl_dot_with_##SUFFIX(const double *a, const double *b, int n, double *bb)                  \
{                                                                                                \
    typedef double vec __attribute__((vector_size(VEC_BYTES)));                                  \
    enum { L = VEC_BYTES / 8 };                                                                  \
    vec s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, q0 = {0}, q1 = {0}, q2 = {0}, q3 = {0};          \
    vec a0, a1, a2, a3, b0, b1, b2, b3;                                                          \
    int j = 0;                                                                                   \
    for (; j + 4 * L <= n; j += 4 * L) {                                                         \
        memcpy(&a0, a + j, sizeof a0); memcpy(&b0, b + j, sizeof b0);                            \
        memcpy(&a1, a + j + L, sizeof a1); memcpy(&b1, b + j + L, sizeof b1);                    \
        memcpy(&a2, a + j + 2 * L, sizeof a2); memcpy(&b2, b + j + 2 * L, sizeof b2);            \
        memcpy(&a3, a + j + 3 * L, sizeof a3); memcpy(&b3, b + j + 3 * L, sizeof b3);            \
        s0 += a0 * b0; s1 += a1 * b1; s2 += a2 * b2; s3 += a3 * b3;                              \
        q0 += b0 * b0; q1 += b1 * b1; q2 += b2 * b2; q3 += b3 * b3;                              \
    }                                                                                            \
    for (; j + L <= n; j += L) {                                                                 \
        memcpy(&a0, a + j, sizeof a0); memcpy(&b0, b + j, sizeof b0);                            \
        s0 += a0 * b0; q0 += b0 * b0;                                                            \
    }                                                                                            \
    s0 = (s0 + s1) + (s2 + s3);                                                                  \
    q0 = (q0 + q1) + (q2 + q3);                                                                  \
    double s = 0.0, q = 0.0;                                                                     \
    for (int l = 0; l < L; ++l) { s += s0[l]; q += q0[l]; }                                      \
    for (; j < n; ++j) { s += a[j] * b[j]; q += b[j] * b[j]; }                                   \
    if (bb)                                                                                      \
        *bb = q;                                                                                 \
    return s;                                                                                    \
}                                                                                                \
                                                                                                 \
TARGET static double fastomkl_dot_##SUFFIX(const double *a, const double *b, int n)              \
{                                                                                                \
    return fastomkl_dot_with_##SUFFIX(a, b, n, NULL);                                            \
}                                                                                                \
                                                                                                 \
TARGET static double fastomkl_dot_sqnorm_##SUFFIX(const double *a, const double *b, int n,       \
                                                  double *bb)                                    \
{                                                                                                \
    return fastomkl_dot_with_##SUFFIX(a, b, n, bb);                                              \
}                                                                                                \
                                                                                                 \
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
    for (; j + L <= n; j += L) {                                                                 \
        memcpy(&v0, theta + j, sizeof v0); memcpy(&z0, z + j, sizeof z0);                        \
        b0 += v0 * v0;                                                                           \
        v0 = shrink * v0 - g * z0;                                                               \
        f0 += v0 * v0;                                                                           \
        memcpy(theta + j, &v0, sizeof v0);                                                       \
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

FASTOMKL_DISPATCH(double, fastomkl_dot, (const double *a, const double *b, int n), (a, b, n))
FASTOMKL_DISPATCH(double, fastomkl_dot_sqnorm, (const double *a, const double *b, int n, double *bb),
                  (a, b, n, bb))
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

