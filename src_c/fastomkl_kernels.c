#include <math.h>
#include <string.h>

#include "fastomkl_dispatch.h"
#include "fastomkl_kernels.h"
#include "fastomkl_sincos.h"

FASTOMKL_VARIANTS(FASTOMKL_DEFINE_SINCOS)

/* Every kernel once per instruction set, at that set's native vector width (see
 * fastomkl_dispatch.h).  Compiled with -ffast-math: callers pass finite values only. */
#define DEFINE_KERNELS(SUFFIX, TARGET, VEC_BYTES)                                                \
                                                                                                 \
/* z[j + i] = scale cos p[i] and z[D + j + i] = scale sin p[i] for the L projections p of        \
 * frequencies j.. (those below D: the last vector may be partial).  The fused sine-cosine      \
 * replaced libmvec's cos then sin loops on every variant: it is faster on each                 \
 * (bench/results/sincos.md, Raker-76's 76 kernels: 8.3 against 11.7 us per sample on AVX-512,  \
 * 10.8 against 14.4 on AVX2 + FMA, 21.7 against 27.5 on SSE2; 1.7 against 3.4 cycles per pair). \
 */                                                                                              \
TARGET __attribute__((always_inline)) static inline void                                         \
fastomkl_rff_store_##SUFFIX(fastomkl_vec_##SUFFIX p, int j, int D, double scale, double *z)      \
{                                                                                                \
    enum { L = VEC_BYTES / 8 };                                                                  \
    fastomkl_vec_##SUFFIX s, c;                                                                  \
    /* p as computed (factor * projection): fast-math may not fold the factor into the            \
     * reduction differently in each caller, so every path gives a kernel the same features */    \
    FASTOMKL_OPAQUE(p);                                                                          \
    fastomkl_sincos_##SUFFIX(p, &s, &c);                                                         \
    s *= scale;                                                                                  \
    c *= scale;                                                                                  \
    if (j + L <= D) {                                                                            \
        memcpy(z + j, &c, sizeof c);                                                             \
        memcpy(z + D + j, &s, sizeof s);                                                         \
    } else {                  /* lane by lane: a memcpy of variable size would be a call */      \
        for (int i = 0; i < L; ++i) {                                                            \
            if (i < D - j) {                                                                     \
                z[j + i] = c[i];                                                                 \
                z[D + j + i] = s[i];                                                             \
            }                                                                                    \
        }                                                                                        \
    }                                                                                            \
}                                                                                                \
                                                                                                 \
/* The projections W^T x of up to 4 vectors of frequencies from j0 (nv of them), whose           \
 * accumulators stay in registers for the whole pass over the d rows of W (independent chains, so \
 * the multiply-adds overlap).  W's rows are `ld` long, zero-padded to whole vectors. */          \
typedef struct { fastomkl_vec_##SUFFIX a[4]; } fastomkl_block_##SUFFIX;                          \
TARGET __attribute__((always_inline)) static inline fastomkl_block_##SUFFIX                      \
fastomkl_project_block_##SUFFIX(const double *W, const double *x, int d, int ld, int j0, int nv) \
{                                                                                                \
    typedef fastomkl_vec_##SUFFIX vec;                                                           \
    enum { L = VEC_BYTES / 8 };                                                                  \
    vec a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, w0, w1, w2, w3;                                  \
    for (int l = 0; l < d; ++l) {                                                                \
        const double *w = W + (long)l * ld + j0;                                                 \
        const double xl = x[l];                                                                  \
        memcpy(&w0, w, sizeof w0);                                                               \
        a0 += xl * w0;                                                                           \
        if (nv > 1) { memcpy(&w1, w + L, sizeof w1); a1 += xl * w1; }                            \
        if (nv > 2) { memcpy(&w2, w + 2 * L, sizeof w2); a2 += xl * w2; }                        \
        if (nv > 3) { memcpy(&w3, w + 3 * L, sizeof w3); a3 += xl * w3; }                        \
    }                                                                                            \
    return (fastomkl_block_##SUFFIX){{a0, a1, a2, a3}};                                          \
}                                                                                                \
                                                                                                 \
/* z = scale [cos(factor p); sin(factor p)], p = W^T x, in blocks of up to 4 vectors of           \
 * frequencies whose accumulators stay in registers for the whole pass over the d rows of W         \
 * (independent chains, so the multiply-adds overlap) and then go from those registers straight     \
 * into the sine-cosine.  W's rows are `ld` >= D long, zero-padded to whole vectors, so the last    \
 * block reads whole vectors too.  With `keep`, the projections are also stored there (whole        \
 * vectors, D rounded up), for kernels that scale the same projection differently. */               \
TARGET __attribute__((always_inline)) static inline void                                         \
fastomkl_rff_keep_##SUFFIX(fastomkl_vec_##SUFFIX p, int j, int D, double factor, double scale,   \
                           double *keep, double *z)                                              \
{                                                                                                \
    if (keep)                                                                                    \
        memcpy(keep + j, &p, sizeof p);                                                          \
    fastomkl_rff_store_##SUFFIX(factor * p, j, D, scale, z);                                     \
}                                                                                                \
                                                                                                 \
TARGET __attribute__((always_inline)) static inline void                                         \
fastomkl_rff_from_##SUFFIX(const double *W, const double *x, int d, int D, int ld, double factor, \
                           double scale, double *keep, double *z)                                \
{                                                                                                \
    enum { L = VEC_BYTES / 8 };                                                                  \
    for (int j0 = 0; j0 < D; j0 += 4 * L) {                                                      \
        const int nv = D - j0 >= 4 * L ? 4 : (D - j0 + L - 1) / L;                               \
        const fastomkl_block_##SUFFIX p = fastomkl_project_block_##SUFFIX(W, x, d, ld, j0, nv);   \
        /* constant indices: p stays in registers */                                             \
        fastomkl_rff_keep_##SUFFIX(p.a[0], j0, D, factor, scale, keep, z);                      \
        if (nv > 1) fastomkl_rff_keep_##SUFFIX(p.a[1], j0 + L, D, factor, scale, keep, z);      \
        if (nv > 2) fastomkl_rff_keep_##SUFFIX(p.a[2], j0 + 2 * L, D, factor, scale, keep, z);  \
        if (nv > 3) fastomkl_rff_keep_##SUFFIX(p.a[3], j0 + 3 * L, D, factor, scale, keep, z);  \
    }                                                                                            \
}                                                                                                \
                                                                                                 \
TARGET static void fastomkl_rff_##SUFFIX(const double *W, const double *x, int d, int D, int ld, \
                                         double scale, double *z)                                \
{                                                                                                \
    fastomkl_rff_from_##SUFFIX(W, x, d, D, ld, 1.0, scale, NULL, z);                             \
}                                                                                                \
                                                                                                 \
/* s[i] = sin x[i], c[i] = cos x[i]: the fused sine-cosine over an array (tests, benchmarks). */   \
TARGET static void fastomkl_sincos_many_##SUFFIX(const double *x, long n, double *s, double *c)  \
{                                                                                                \
    typedef fastomkl_vec_##SUFFIX vec;                                                           \
    enum { L = VEC_BYTES / 8 };                                                                  \
    vec v = {0}, sv, cv;                                                                         \
    long i = 0;                                                                                  \
    for (; i + L <= n; i += L) {                                                                 \
        memcpy(&v, x + i, sizeof v);                                                             \
        fastomkl_sincos_##SUFFIX(v, &sv, &cv);                                                   \
        memcpy(s + i, &sv, sizeof sv);                                                           \
        memcpy(c + i, &cv, sizeof cv);                                                           \
    }                                                                                            \
    if (i < n) {                                                                                 \
        v = (vec){0};                                                                            \
        memcpy(&v, x + i, sizeof(double) * (n - i));                                             \
        fastomkl_sincos_##SUFFIX(v, &sv, &cv);                                                   \
        memcpy(s + i, &sv, sizeof(double) * (n - i));                                            \
        memcpy(c + i, &cv, sizeof(double) * (n - i));                                            \
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
FASTOMKL_DISPATCH(void, fastomkl_sincos_many, (const double *x, long n, double *s, double *c),
                  (x, n, s, c))
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
/* The first kernel of a family in a sample: its features from the projection in registers, which \
 * is kept in p (if not NULL) for the family's other kernels (fastomkl_rff_scaled). */             \
TARGET static void fastomkl_rff_project_scaled_##SUFFIX(const double *W, const double *x, int d,  \
                                                        int D, int ld, double factor,            \
                                                        double scale, double *p, double *z)      \
{                                                                                                \
    fastomkl_rff_from_##SUFFIX(W, x, d, D, ld, factor, scale, p, z);                             \
}                                                                                                \
                                                                                                 \
/* z = scale * [cos(factor p); sin(factor p)] over the first D projections, by the fused         \
 * sine-cosine of the independent-draw kernel (p is padded: the last vector is read whole). */   \
TARGET static void fastomkl_rff_scaled_##SUFFIX(const double *p, int D, double factor,          \
                                                double scale, double *z)                         \
{                                                                                                \
    enum { L = VEC_BYTES / 8 };                                                                  \
    fastomkl_vec_##SUFFIX v;                                                                     \
    for (int j = 0; j < D; j += L) {                                                             \
        memcpy(&v, p + j, sizeof v);                                                             \
        fastomkl_rff_store_##SUFFIX(factor * v, j, D, scale, z);                                 \
    }                                                                                            \
}

FASTOMKL_VARIANTS(DEFINE_SHARED_DRAW_KERNELS)

FASTOMKL_DISPATCH(void, fastomkl_rff_project_scaled,
                  (const double *W, const double *x, int d, int D, int ld, double factor,
                   double scale, double *p, double *z),
                  (W, x, d, D, ld, factor, scale, p, z))
FASTOMKL_DISPATCH(void, fastomkl_rff_scaled,
                  (const double *p, int D, double factor, double scale, double *z),
                  (p, D, factor, scale, z))
