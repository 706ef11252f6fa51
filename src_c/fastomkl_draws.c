#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fastomkl_dispatch.h"
#include "fastomkl_draws.h"

/* Random-access spectral draws for doubly stochastic gradients, the same bits on every CPU.
 *
 * Every draw is a function of (key, counter) alone: splitmix64(key + counter * STRIDE) gives 64
 * random bits, of which the top 52 make a uniform.  The transforms to Gaussian, Cauchy and
 * Laplace draws use only IEEE-754 basic operations (+, -, *, /, sqrt, all correctly rounded) and
 * integer operations, in a fixed order: the natural logarithm and the sine and cosine below are
 * polynomials written out here, not libm calls, whose last bits differ between libm versions and
 * between their FMA and SSE2 variants.  This file is compiled without -ffast-math and with
 * -ffp-contract=off (setup.py), so no reassociation and no fused multiply-add changes a rounding:
 * a lane of an AVX-512 vector computes exactly what a lane of an SSE2 vector does, and a saved
 * model regenerates its features bit for bit on any x86-64 machine.
 *
 * Accuracy: the logarithm and the sine and cosine are within a few units in the last place of
 * the exact values (tests/test_dsg_draws.py), far below what the draws' statistics can see. */

#define GOLDEN 0x9E3779B97F4A7C15ULL
#define STRIDE 0xD1B54A32D192ED03ULL
#define MANTISSA 0x000FFFFFFFFFFFFFULL
#define EXPONENT_ONE 0x3FF0000000000000ULL          /* bits of 1.0 */
#define BITS_2P52 0x4330000000000000ULL             /* bits of 2^52 */
#define SQRT2_MANTISSA 0x6A09E667F3BCDULL           /* mantissa bits of sqrt(2) */
#define HALF_QUADRANT (1ULL << 51)                  /* angles are j 2^-54 turns: 2^52 = a quadrant */
#define LN2_HI 6.93147180369123816490e-01          /* ln 2 = LN2_HI + LN2_LO, LN2_HI has 32 bits */
#define LN2_LO 1.90821492927058770002e-10
#define TURN_2M54 (6.283185307179586476925 / 18014398509481984.0)   /* 2 pi 2^-54 */

static inline uint64_t splitmix64(uint64_t x)
{
    x += GOLDEN;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

uint64_t fastomkl_draw_key(uint64_t seed, uint64_t stream, uint64_t t, uint64_t what)
{
    return splitmix64(splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ t) ^ what);
}

/* Per instruction set: vectors of L lanes, each lane one counter.  The helpers are inlined into
 * the fill functions, which carry the target attribute. */
#define DEFINE_DRAWS(SUFFIX, TARGET, VEC_BYTES)                                                  \
typedef double dvec_##SUFFIX __attribute__((vector_size(VEC_BYTES)));                           \
typedef uint64_t uvec_##SUFFIX __attribute__((vector_size(VEC_BYTES)));                         \
typedef int64_t ivec_##SUFFIX __attribute__((vector_size(VEC_BYTES)));                          \
enum { LANES_##SUFFIX = VEC_BYTES / 8 };                                                         \
                                                                                                 \
/* 52 random bits of draw `counter` of `key`. */                                                 \
TARGET static inline __attribute__((always_inline))                                              \
uvec_##SUFFIX bits52_##SUFFIX(uint64_t key, uvec_##SUFFIX counter)                              \
{                                                                                                \
    uvec_##SUFFIX x = key + counter * STRIDE + GOLDEN;                                           \
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;                                                 \
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;                                                 \
    return (x ^ (x >> 31)) >> 12;                                                                \
}                                                                                                \
                                                                                                 \
/* Exact value of integers 0 <= k < 2^52 (their bits under the exponent of 2^52). */             \
TARGET static inline __attribute__((always_inline))                                              \
dvec_##SUFFIX exact_##SUFFIX(uvec_##SUFFIX k)                                                    \
{                                                                                                \
    return (dvec_##SUFFIX)(k | BITS_2P52) - 0x1p52;                                              \
}                                                                                                \
                                                                                                 \
/* The uniform (k + 1/2) 2^-52 in the open interval (0, 1): exact. */                             \
TARGET static inline __attribute__((always_inline))                                              \
dvec_##SUFFIX open_uniform_##SUFFIX(uvec_##SUFFIX k)                                             \
{                                                                                                \
    return (exact_##SUFFIX(k) + 0.5) * 0x1p-52;                                                  \
}                                                                                                \
                                                                                                 \
TARGET static inline __attribute__((always_inline))                                              \
dvec_##SUFFIX select_##SUFFIX(ivec_##SUFFIX mask, dvec_##SUFFIX a, dvec_##SUFFIX b)              \
{                                                                                                \
    return (dvec_##SUFFIX)(((uvec_##SUFFIX)a & (uvec_##SUFFIX)mask)                              \
                           | ((uvec_##SUFFIX)b & ~(uvec_##SUFFIX)mask));                         \
}                                                                                                \
                                                                                                 \
/* ln x for positive normal x: x = 2^e m with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with   \
 * s = (m - 1) / (m + 1), |s| < 0.172, whose series to s^21 is exact to double precision. */     \
TARGET static inline __attribute__((always_inline))                                              \
dvec_##SUFFIX log_##SUFFIX(dvec_##SUFFIX x)                                                      \
{                                                                                                \
    const uvec_##SUFFIX bits = (uvec_##SUFFIX)x;                                                 \
    const uvec_##SUFFIX mantissa = bits & MANTISSA;                                              \
    /* -1 where m would exceed sqrt(2): then m is halved and e raised by one */                  \
    const uvec_##SUFFIX high = (uvec_##SUFFIX)(mantissa > SQRT2_MANTISSA);                       \
    const dvec_##SUFFIX e = exact_##SUFFIX((bits >> 52) - high) - 1023.0;                        \
    const dvec_##SUFFIX f = (dvec_##SUFFIX)(mantissa | (EXPONENT_ONE + (high << 52))) - 1.0;     \
    const dvec_##SUFFIX s = f / (2.0 + f), z = s * s;                                            \
    dvec_##SUFFIX p = 1.0 / 19.0 + z * (1.0 / 21.0);                                             \
    p = 1.0 / 17.0 + z * p; p = 1.0 / 15.0 + z * p;                                              \
    p = 1.0 / 13.0 + z * p; p = 1.0 / 11.0 + z * p; p = 1.0 / 9.0 + z * p;                        \
    p = 1.0 / 7.0 + z * p; p = 1.0 / 5.0 + z * p; p = 1.0 / 3.0 + z * p;                          \
    /* ln x = e ln2 + 2 s + 2 s z p, the large terms last */                                     \
    return e * LN2_HI + (2.0 * s + (e * LN2_LO + 2.0 * s * (z * p)));                             \
}                                                                                                \
                                                                                                 \
/* cos and sin of 2 pi j 2^-54 for 0 <= j < 2^54: the quadrant and the remainder come exactly     \
 * from the integer, so the only reduction error is one rounding of an angle in [-pi/4, pi/4). */ \
TARGET static inline __attribute__((always_inline))                                              \
void sincos_turns_##SUFFIX(uvec_##SUFFIX j, dvec_##SUFFIX *c, dvec_##SUFFIX *s)                  \
{                                                                                                \
    const uvec_##SUFFIX nearest = j + HALF_QUADRANT;                                             \
    const uvec_##SUFFIX q = (nearest >> 52) & 3;                                                 \
    const uvec_##SUFFIX rest = nearest & ((1ULL << 52) - 1);  /* remainder + 2^51, < 2^52 */      \
    const dvec_##SUFFIX a = (exact_##SUFFIX(rest) - 0x1p51) * TURN_2M54, z = a * a;              \
    /* Taylor series: sin a = a + a z ps(z), cos a = 1 + z pc(z), to a^17 and a^18 */            \
    dvec_##SUFFIX ps = -1.0 / 1307674368000.0 + z * (1.0 / 355687428096000.0);                    \
    ps = 1.0 / 6227020800.0 + z * ps; ps = -1.0 / 39916800.0 + z * ps;                            \
    ps = 1.0 / 362880.0 + z * ps; ps = -1.0 / 5040.0 + z * ps;                                    \
    ps = 1.0 / 120.0 + z * ps; ps = -1.0 / 6.0 + z * ps;                                          \
    dvec_##SUFFIX pc = 1.0 / 20922789888000.0 + z * (-1.0 / 6402373705728000.0);                  \
    pc = -1.0 / 87178291200.0 + z * pc; pc = 1.0 / 479001600.0 + z * pc;                          \
    pc = -1.0 / 3628800.0 + z * pc; pc = 1.0 / 40320.0 + z * pc;                                  \
    pc = -1.0 / 720.0 + z * pc; pc = 1.0 / 24.0 + z * pc; pc = -0.5 + z * pc;                     \
    const dvec_##SUFFIX sin_a = a + a * (z * ps), cos_a = 1.0 + z * pc;                          \
    /* quadrant q: (cos, sin) = (c, s), (-s, c), (-c, -s), (s, -c) */                             \
    const ivec_##SUFFIX odd = (ivec_##SUFFIX)((q & 1) != 0);                                     \
    *c = (dvec_##SUFFIX)((uvec_##SUFFIX)select_##SUFFIX(odd, sin_a, cos_a)                       \
                         ^ (((q + 1) & 2) << 62));                                               \
    *s = (dvec_##SUFFIX)((uvec_##SUFFIX)select_##SUFFIX(odd, cos_a, sin_a) ^ ((q & 2) << 62));   \
}                                                                                                \
                                                                                                 \
/* The lane counters first, first + 1, ... (times `step`). */                                    \
TARGET static inline __attribute__((always_inline))                                              \
uvec_##SUFFIX counters_##SUFFIX(uint64_t first, uint64_t step)                                   \
{                                                                                                \
    uvec_##SUFFIX c;                                                                             \
    for (int l = 0; l < LANES_##SUFFIX; ++l) c[l] = (first + (uint64_t)l) * step;                \
    return c;                                                                                    \
}                                                                                                \
                                                                                                 \
/* Stores the first `count` lanes of v at out (all of them unless at the end of an array). */    \
TARGET static inline __attribute__((always_inline))                                              \
void store_##SUFFIX(double *out, dvec_##SUFFIX v, long count)                                    \
{                                                                                                \
    if (count >= LANES_##SUFFIX) memcpy(out, &v, sizeof v);                                      \
    else if (count <= 0) return;                                                                 \
    else memcpy(out, &v, sizeof(double) * (size_t)count);                                        \
}                                                                                                \
                                                                                                 \
TARGET static void fastomkl_draw_gaussian_##SUFFIX(uint64_t key, long n, double scale,           \
                                                   double *out)                                  \
{                                                                                                \
    const long half = (n + 1) / 2;                                                               \
    for (long p = 0; p < half; p += LANES_##SUFFIX) {                                            \
        const uvec_##SUFFIX pair = counters_##SUFFIX((uint64_t)p, 2);                            \
        const dvec_##SUFFIX u = open_uniform_##SUFFIX(bits52_##SUFFIX(key, pair));               \
        const uvec_##SUFFIX angle = bits52_##SUFFIX(key, pair + 1) << 2;                         \
        dvec_##SUFFIX radius = -2.0 * log_##SUFFIX(u), c, s;                                     \
        for (int l = 0; l < LANES_##SUFFIX; ++l) radius[l] = __builtin_sqrt(radius[l]);          \
        radius *= scale;                                                                         \
        sincos_turns_##SUFFIX(angle, &c, &s);                                                    \
        store_##SUFFIX(out + p, radius * c, half - p);                                           \
        store_##SUFFIX(out + half + p, radius * s, n - half - p);                                \
    }                                                                                            \
}                                                                                                \
                                                                                                 \
TARGET static void fastomkl_draw_cauchy_##SUFFIX(uint64_t key, long n, double scale,             \
                                                 double *out)                                    \
{                                                                                                \
    for (long i = 0; i < n; i += LANES_##SUFFIX) {                                               \
        /* tan(pi (u - 1/2)) = -cos(pi u) / sin(pi u), and pi u = 2 pi (2k + 1) 2^-54 */         \
        const uvec_##SUFFIX k = bits52_##SUFFIX(key, counters_##SUFFIX((uint64_t)i, 1));         \
        dvec_##SUFFIX c, s;                                                                      \
        sincos_turns_##SUFFIX(2 * k + 1, &c, &s);                                                \
        store_##SUFFIX(out + i, -scale * c / s, n - i);                                          \
    }                                                                                            \
}                                                                                                \
                                                                                                 \
TARGET static void fastomkl_draw_laplace_##SUFFIX(uint64_t key, long n, double scale,            \
                                                  double *out)                                   \
{                                                                                                \
    for (long i = 0; i < n; i += LANES_##SUFFIX) {                                               \
        /* inversion: ln(2u) below the median, -ln(2 - 2u) above (both arguments exact) */       \
        const dvec_##SUFFIX u = open_uniform_##SUFFIX(                                           \
            bits52_##SUFFIX(key, counters_##SUFFIX((uint64_t)i, 1)));                            \
        const ivec_##SUFFIX low = (ivec_##SUFFIX)(u < 0.5);                                      \
        const dvec_##SUFFIX v = log_##SUFFIX(select_##SUFFIX(low, 2.0 * u, 2.0 - 2.0 * u));      \
        store_##SUFFIX(out + i, scale * select_##SUFFIX(low, v, -v), n - i);                     \
    }                                                                                            \
}                                                                                                \
                                                                                                 \
TARGET static void fastomkl_draw_phases_##SUFFIX(uint64_t key, long n, double *out)              \
{                                                                                                \
    for (long i = 0; i < n; i += LANES_##SUFFIX) {                                               \
        const dvec_##SUFFIX u = open_uniform_##SUFFIX(                                           \
            bits52_##SUFFIX(key, counters_##SUFFIX((uint64_t)i, 1)));                            \
        store_##SUFFIX(out + i, 6.283185307179586476925 * u, n - i);                             \
    }                                                                                            \
}

FASTOMKL_VARIANTS(DEFINE_DRAWS)

FASTOMKL_DISPATCH(void, fastomkl_draw_gaussian, (uint64_t key, long n, double scale, double *out),
                  (key, n, scale, out))
FASTOMKL_DISPATCH(void, fastomkl_draw_cauchy, (uint64_t key, long n, double scale, double *out),
                  (key, n, scale, out))
FASTOMKL_DISPATCH(void, fastomkl_draw_laplace, (uint64_t key, long n, double scale, double *out),
                  (key, n, scale, out))
FASTOMKL_DISPATCH(void, fastomkl_draw_phases, (uint64_t key, long n, double *out), (key, n, out))
