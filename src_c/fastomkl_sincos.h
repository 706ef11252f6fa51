/* Sine and cosine of a whole vector at once, for the random-feature kernel.
 *
 * One range reduction serves both functions: x = k pi/2 + r with k the nearest integer to x 2/pi
 * and |r| <= pi/4 (Cody-Waite: pi/2 = P1 + P1T, P1 holding only 33 significant bits so that k P1
 * is exact for |k| < 2^20 and x - k P1 too).  Two minimax polynomials on [-pi/4, pi/4] (fdlibm's
 * __kernel_sin and __kernel_cos coefficients) give sin r and cos r, and k mod 4 picks, by integer
 * operations, which of them is sin x and cos x and their signs.  Error: below 2 ulp, except that
 * the reduction's absolute error, about |k| 1.4e-26, dominates the relative error of a result
 * within ~1e-9 of a zero of sin or cos (the absolute error stays below 1e-20 there).
 *
 * Lanes with |x| > FASTOMKL_SINCOS_LIMIT (2^20), where k P1 would no longer be exact, are
 * recomputed by glibc's sin and cos (any finite x: the features reach |W x| ~ 1e250), so no lane
 * is ever wrong; this path is taken only when such a lane occurs.
 *
 * FASTOMKL_DEFINE_SINCOS(SUFFIX, TARGET, VEC_BYTES) defines, for one instruction set (see
 * fastomkl_dispatch.h), the vector types fastomkl_vec_SUFFIX / fastomkl_bits_SUFFIX and the
 * inlined fastomkl_sincos_SUFFIX(x, &s, &c).  The file using it is compiled with -ffast-math, which
 * would fold the reduction's steps into one inexact subtraction (and the rounding constant away):
 * FASTOMKL_OPAQUE hides a value from the optimiser at no run-time cost, so the steps stay apart.
 */
#ifndef FASTOMKL_SINCOS_H
#define FASTOMKL_SINCOS_H

#include <math.h>
#include <string.h>

#define FASTOMKL_SINCOS_LIMIT 1048576.0                /* 2^20 */
#define FASTOMKL_2_OVER_PI 6.36619772367581382433e-01
#define FASTOMKL_PIO2_1 1.57079632673412561417e+00     /* first 33 bits of pi/2 */
#define FASTOMKL_PIO2_1T 6.07710050650619224932e-11    /* pi/2 - FASTOMKL_PIO2_1 */
#define FASTOMKL_ROUND_MAGIC 0x1.8p52                  /* (t + 1.5 2^52) - 1.5 2^52: t rounded */

#define FASTOMKL_OPAQUE(v) __asm__("" : "+v"(v))

/* Whether any lane of |x| exceeds `limit`: one movmsk (or mask test), where GCC would move each
 * lane of a vector comparison out to a general register.  Named after the vector's bytes. */
#if defined(__x86_64__)
#include <immintrin.h>
__attribute__((always_inline, unused))
static inline int fastomkl_any_above_16(__m128d ax, double limit)
{
    return _mm_movemask_pd(_mm_cmpgt_pd(ax, _mm_set1_pd(limit))) != 0;
}
__attribute__((target("avx"), always_inline, unused))
static inline int fastomkl_any_above_32(__m256d ax, double limit)
{
    return _mm256_movemask_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(limit), _CMP_GT_OQ)) != 0;
}
__attribute__((target("avx512f"), always_inline, unused))
static inline int fastomkl_any_above_64(__m512d ax, double limit)
{
    return _mm512_cmp_pd_mask(ax, _mm512_set1_pd(limit), _CMP_GT_OQ) != 0;
}
__attribute__((always_inline, unused))
static inline int fastomkl_any_above_f32_16(__m128 ax, float limit)
{
    return _mm_movemask_ps(_mm_cmpgt_ps(ax, _mm_set1_ps(limit))) != 0;
}
__attribute__((target("avx"), always_inline, unused))
static inline int fastomkl_any_above_f32_32(__m256 ax, float limit)
{
    return _mm256_movemask_ps(_mm256_cmp_ps(ax, _mm256_set1_ps(limit), _CMP_GT_OQ)) != 0;
}
__attribute__((target("avx512f"), always_inline, unused))
static inline int fastomkl_any_above_f32_64(__m512 ax, float limit)
{
    return _mm512_cmp_ps_mask(ax, _mm512_set1_ps(limit), _CMP_GT_OQ) != 0;
}
#else
typedef double fastomkl_pair __attribute__((vector_size(16)));
static inline int fastomkl_any_above_16(fastomkl_pair ax, double limit)
{
    return ax[0] > limit || ax[1] > limit;
}
typedef float fastomkl_quad __attribute__((vector_size(16)));
static inline int fastomkl_any_above_f32_16(fastomkl_quad ax, float limit)
{
    return ax[0] > limit || ax[1] > limit || ax[2] > limit || ax[3] > limit;
}
#endif

#define FASTOMKL_DEFINE_SINCOS(SUFFIX, TARGET, VEC_BYTES)                                          \
typedef double fastomkl_vec_##SUFFIX __attribute__((vector_size(VEC_BYTES)));                      \
typedef unsigned long long fastomkl_bits_##SUFFIX __attribute__((vector_size(VEC_BYTES)));         \
                                                                                                   \
/* f(x) in the lanes of y beyond the reduction's range, by glibc.  Apart and by value, so that     \
 * the inlined fast path takes no vector's address (which would keep it out of registers). */      \
TARGET __attribute__((cold, noinline, unused)) static fastomkl_vec_##SUFFIX                        \
fastomkl_wide_lanes_##SUFFIX(fastomkl_vec_##SUFFIX x, fastomkl_vec_##SUFFIX y, double f(double))   \
{                                                                                                  \
    for (int i = 0; i < VEC_BYTES / 8; ++i)                                                        \
        if (!(fabs(x[i]) <= FASTOMKL_SINCOS_LIMIT))                                                \
            y[i] = f(x[i]);                                                                        \
    return y;                                                                                      \
}                                                                                                  \
                                                                                                   \
TARGET __attribute__((always_inline, unused)) static inline void                                   \
fastomkl_sincos_##SUFFIX(fastomkl_vec_##SUFFIX x, fastomkl_vec_##SUFFIX *sin_x,                    \
                         fastomkl_vec_##SUFFIX *cos_x)                                             \
{                                                                                                  \
    typedef fastomkl_vec_##SUFFIX vec;                                                             \
    typedef fastomkl_bits_##SUFFIX bits;                                                           \
    vec t = x * FASTOMKL_2_OVER_PI + FASTOMKL_ROUND_MAGIC;   /* low bits of t: k */                \
    FASTOMKL_OPAQUE(t);                                                                            \
    const vec k = t - FASTOMKL_ROUND_MAGIC;                                                        \
    vec r = x - k * FASTOMKL_PIO2_1;                         /* exact */                           \
    FASTOMKL_OPAQUE(r);                                                                            \
    r = r - k * FASTOMKL_PIO2_1T;                                                                  \
    const vec z = r * r;                                                                           \
    const vec s = r + r * z * (-1.66666666666666324348e-01 + z * (8.33333333332248946124e-03       \
                    + z * (-1.98412698298579493134e-04 + z * (2.75573137070700676789e-06           \
                    + z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)))));      \
    const vec c = 1.0 - 0.5 * z + z * z * (4.16666666666666019037e-02                              \
                    + z * (-1.38888888888741095749e-03 + z * (2.48015872894767294178e-05           \
                    + z * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09           \
                    + z * -1.13596475577881948265e-11)))));                                        \
    /* Quadrant q = k mod 4: sin x = s, c, -s, -c and cos x = c, -s, -c, s. */                     \
    const bits q = (bits)t, odd = -(q & 1);                                                        \
    const bits sb = (bits)s, cb = (bits)c;                                                         \
    vec sx = (vec)(((sb & ~odd) | (cb & odd)) ^ ((q & 2) << 62));                                  \
    vec cx = (vec)(((cb & ~odd) | (sb & odd)) ^ (((q + 1) & 2) << 62));                            \
    const vec ax = (vec)((bits)x & ~(1ULL << 63));                                                 \
    if (__builtin_expect(fastomkl_any_above_##VEC_BYTES(ax, FASTOMKL_SINCOS_LIMIT), 0)) {          \
        sx = fastomkl_wide_lanes_##SUFFIX(x, sx, sin);                                             \
        cx = fastomkl_wide_lanes_##SUFFIX(x, cx, cos);                                             \
    }                                                                                              \
    *sin_x = sx;                                                                                   \
    *cos_x = cx;                                                                                   \
}


/* The float32 twin, for models that store their frequencies in float32: the same scheme with
 * float constants.  pi/2 = P1 + P2 + P3 with P1 and P2 holding 8 and 11 significant bits, so k P1
 * and k P2 are exact for |k| < 2^13 (Cody-Waite as in Cephes' sinf); polynomials of degree 7 (sin)
 * and 8 (cos) on [-pi/4, pi/4] with Cephes' sinf/cosf coefficients.  Error: about 1 ulp of float,
 * below the rounding of the float32 projection that feeds it.  Lanes with |x| > 8192 (where
 * |k| P2 could be inexact) are recomputed by glibc's double sin and cos and rounded to float.
 */
#define FASTOMKL_SINCOS_F32_LIMIT 8192.0f
#define FASTOMKL_DEFINE_SINCOS_F32(SUFFIX, TARGET, VEC_BYTES)                                      \
typedef float fastomkl_vec_f32_##SUFFIX __attribute__((vector_size(VEC_BYTES)));                   \
typedef unsigned int fastomkl_bits_f32_##SUFFIX __attribute__((vector_size(VEC_BYTES)));           \
                                                                                                   \
TARGET __attribute__((cold, noinline, unused)) static fastomkl_vec_f32_##SUFFIX                    \
fastomkl_wide_lanes_f32_##SUFFIX(fastomkl_vec_f32_##SUFFIX x, fastomkl_vec_f32_##SUFFIX y,         \
                                 double f(double))                                                 \
{                                                                                                  \
    for (int i = 0; i < VEC_BYTES / 4; ++i)                                                        \
        if (!(fabsf(x[i]) <= FASTOMKL_SINCOS_F32_LIMIT))                                           \
            y[i] = (float)f((double)x[i]);                                                         \
    return y;                                                                                      \
}                                                                                                  \
                                                                                                   \
TARGET __attribute__((always_inline, unused)) static inline void                                   \
fastomkl_sincos_f32_##SUFFIX(fastomkl_vec_f32_##SUFFIX x, fastomkl_vec_f32_##SUFFIX *sin_x,        \
                             fastomkl_vec_f32_##SUFFIX *cos_x)                                     \
{                                                                                                  \
    typedef fastomkl_vec_f32_##SUFFIX vec;                                                         \
    typedef fastomkl_bits_f32_##SUFFIX bits;                                                       \
    vec t = x * 0.636619772367581343f + 0x1.8p23f;        /* low bits of t: k */                   \
    FASTOMKL_OPAQUE(t);                                                                            \
    const vec k = t - 0x1.8p23f;                                                                   \
    vec r = x - k * 1.5703125f;                           /* exact */                              \
    FASTOMKL_OPAQUE(r);                                                                            \
    r = r - k * 4.837512969970703125e-4f;                 /* k P2 exact */                         \
    FASTOMKL_OPAQUE(r);                                                                            \
    r = r - k * 7.54978995489188216e-8f;                                                           \
    const vec z = r * r;                                                                           \
    const vec s = r + r * z * (-1.6666654611e-1f + z * (8.3321608736e-3f                           \
                    + z * -1.9515295891e-4f));                                                     \
    const vec c = 1.0f - 0.5f * z + z * z * (4.166664568298827e-2f                                 \
                    + z * (-1.388731625493765e-3f + z * 2.443315711809948e-5f));                   \
    const bits q = (bits)t, odd = -(q & 1);                                                        \
    const bits sb = (bits)s, cb = (bits)c;                                                         \
    vec sx = (vec)(((sb & ~odd) | (cb & odd)) ^ ((q & 2) << 30));                                  \
    vec cx = (vec)(((cb & ~odd) | (sb & odd)) ^ (((q + 1) & 2) << 30));                            \
    const vec ax = (vec)((bits)x & ~(1U << 31));                                                   \
    if (__builtin_expect(fastomkl_any_above_f32_##VEC_BYTES(ax, FASTOMKL_SINCOS_F32_LIMIT), 0)) {  \
        sx = fastomkl_wide_lanes_f32_##SUFFIX(x, sx, sin);                                         \
        cx = fastomkl_wide_lanes_f32_##SUFFIX(x, cx, cos);                                         \
    }                                                                                              \
    *sin_x = sx;                                                                                   \
    *cos_x = cx;                                                                                   \
}

#endif
