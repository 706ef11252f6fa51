/* Timing driver of bench/bench_sincos.py (built by it, at run time, with the kernels' own flags).
 *
 *   driver pairs INPUT ROUNDS   cycles and ns per sine-cosine pair of every contender this CPU runs:
 *                               fastomkl's fused sine-cosine (src_c/fastomkl_sincos.h) per
 *                               instruction set, glibc's libmvec (separate sin and cos, and its
 *                               vector sincos), SLEEF's sincos (when built with -DWITH_SLEEF)
 *   driver rff INPUT ROUNDS     ns per sample of fastomkl_rff over every kernel, the fused kernel
 *                               (src_c/fastomkl_kernels.c) against the libmvec one (the same file
 *                               before the fusion, its names prefixed libmvec_): FASTOMKL_ISA picks
 *                               the variant of both
 *   driver l2 KIB ROUNDS        GB/s of a streaming read over a KIB-kilobyte buffer
 *
 * INPUT (pairs): int32 n, then n float64 arguments.  INPUT (rff): int32 N, d, ld, D, T, then float64
 * W (N, d, ld) zero-padded as fastomkl stores it, X (T, d).  Each contender's passes are timed with
 * rdtsc (reference cycles at the TSC's rate; the machine's core-cycle counters are not readable
 * here), rounds interleaved across contenders, medians printed one contender per line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "fastomkl_dispatch.h"
#include "fastomkl_kernels.h"
#include "fastomkl_sincos.h"

FASTOMKL_VARIANTS(FASTOMKL_DEFINE_SINCOS)

#define AVX512 __attribute__((target("arch=x86-64-v4")))
#define AVX2 __attribute__((target("arch=x86-64-v3")))
typedef double d2 __attribute__((vector_size(16)));
typedef double d4 __attribute__((vector_size(32)));
typedef double d8 __attribute__((vector_size(64)));
typedef long long p2 __attribute__((vector_size(16)));
typedef long long p4 __attribute__((vector_size(32)));
typedef long long p8 __attribute__((vector_size(64)));

/* glibc libmvec, by its vector-ABI names (vvv sincos: a vector of pointers per result). */
d2 _ZGVbN2v_sin(d2);
d2 _ZGVbN2v_cos(d2);
void _ZGVbN2vvv_sincos(d2, p2, p2);
AVX2 d4 _ZGVdN4v_sin(d4);
AVX2 d4 _ZGVdN4v_cos(d4);
AVX2 void _ZGVdN4vvv_sincos(d4, p4, p4);
AVX512 d8 _ZGVeN8v_sin(d8);
AVX512 d8 _ZGVeN8v_cos(d8);
AVX512 void _ZGVeN8vvv_sincos(d8, p8, p8);

void libmvec_rff(const double *W, const double *x, int d, int D, int ld, double scale, double *z);

typedef void contender_fn(const double *x, int n, double *s, double *c);
typedef struct { const char *name; int level; contender_fn *run; } contender;

/* One loop per contender over whole vectors: CALL computes sv and cv from the vector v. */
#define PAIR_LOOP(NAME, TARGET, VEC, CALL)                                                        \
    TARGET static void NAME(const double *x, int n, double *s, double *c)                         \
    {                                                                                             \
        for (int i = 0; i + (int)(sizeof(VEC) / 8) <= n; i += sizeof(VEC) / 8) {                 \
            VEC v, sv, cv;                                                                        \
            memcpy(&v, x + i, sizeof v);                                                          \
            CALL;                                                                                 \
            memcpy(s + i, &sv, sizeof sv);                                                        \
            memcpy(c + i, &cv, sizeof cv);                                                        \
        }                                                                                         \
    }

PAIR_LOOP(ours_v4, AVX512, d8, fastomkl_sincos_v4(v, &sv, &cv))
PAIR_LOOP(ours_v3, AVX2, d4, fastomkl_sincos_v3(v, &sv, &cv))
PAIR_LOOP(ours_base, , d2, fastomkl_sincos_base(v, &sv, &cv))
PAIR_LOOP(mvec_e8, AVX512, d8, (sv = _ZGVeN8v_sin(v), cv = _ZGVeN8v_cos(v)))
PAIR_LOOP(mvec_d4, AVX2, d4, (sv = _ZGVdN4v_sin(v), cv = _ZGVdN4v_cos(v)))
PAIR_LOOP(mvec_b2, , d2, (sv = _ZGVbN2v_sin(v), cv = _ZGVbN2v_cos(v)))

/* libmvec's vector sincos writes through one pointer per lane. */
#define MVEC_SINCOS_LOOP(NAME, TARGET, VEC, PTRS, FN)                                             \
    TARGET static void NAME(const double *x, int n, double *s, double *c)                         \
    {                                                                                             \
        enum { L = sizeof(VEC) / 8 };                                                             \
        PTRS ps, pc;                                                                              \
        for (int i = 0; i + L <= n; i += L) {                                                     \
            VEC v;                                                                                \
            memcpy(&v, x + i, sizeof v);                                                          \
            for (int l = 0; l < L; ++l) {                                                         \
                ps[l] = (long long)(s + i + l);                                                   \
                pc[l] = (long long)(c + i + l);                                                   \
            }                                                                                     \
            FN(v, ps, pc);                                                                        \
        }                                                                                         \
    }

MVEC_SINCOS_LOOP(mvec_sincos_e8, AVX512, d8, p8, _ZGVeN8vvv_sincos)
MVEC_SINCOS_LOOP(mvec_sincos_d4, AVX2, d4, p4, _ZGVdN4vvv_sincos)
MVEC_SINCOS_LOOP(mvec_sincos_b2, , d2, p2, _ZGVbN2vvv_sincos)

#ifdef WITH_SLEEF
/* SLEEF's sincos returns the pair as a struct of two vectors (Sleef___m256d_2 etc. in sleef.h). */
typedef struct { d2 x, y; } sleef_d2_2;
typedef struct { d4 x, y; } sleef_d4_2;
typedef struct { d8 x, y; } sleef_d8_2;
sleef_d2_2 Sleef_sincosd2_u10sse2(d2);
sleef_d2_2 Sleef_sincosd2_u35sse2(d2);
AVX2 sleef_d4_2 Sleef_sincosd4_u10avx2(d4);
AVX2 sleef_d4_2 Sleef_sincosd4_u35avx2(d4);
AVX512 sleef_d8_2 Sleef_sincosd8_u10avx512f(d8);
AVX512 sleef_d8_2 Sleef_sincosd8_u35avx512f(d8);
#define SLEEF_CALL(FN) do { __typeof__(FN(v)) r = FN(v); sv = r.x; cv = r.y; } while (0)
PAIR_LOOP(sleef_u10_e8, AVX512, d8, SLEEF_CALL(Sleef_sincosd8_u10avx512f))
PAIR_LOOP(sleef_u35_e8, AVX512, d8, SLEEF_CALL(Sleef_sincosd8_u35avx512f))
PAIR_LOOP(sleef_u10_d4, AVX2, d4, SLEEF_CALL(Sleef_sincosd4_u10avx2))
PAIR_LOOP(sleef_u35_d4, AVX2, d4, SLEEF_CALL(Sleef_sincosd4_u35avx2))
PAIR_LOOP(sleef_u10_b2, , d2, SLEEF_CALL(Sleef_sincosd2_u10sse2))
PAIR_LOOP(sleef_u35_b2, , d2, SLEEF_CALL(Sleef_sincosd2_u35sse2))
#endif

static const contender PAIRS[] = {
    {"fastomkl fused, AVX-512 (8 lanes)", 4, ours_v4},
    {"libmvec _ZGVeN8v_sin + _ZGVeN8v_cos", 4, mvec_e8},
    {"libmvec _ZGVeN8vvv_sincos", 4, mvec_sincos_e8},
    {"fastomkl fused, AVX2+FMA (4 lanes)", 3, ours_v3},
    {"libmvec _ZGVdN4v_sin + _ZGVdN4v_cos", 3, mvec_d4},
    {"libmvec _ZGVdN4vvv_sincos", 3, mvec_sincos_d4},
    {"fastomkl fused, SSE2 (2 lanes)", 2, ours_base},
    {"libmvec _ZGVbN2v_sin + _ZGVbN2v_cos", 2, mvec_b2},
    {"libmvec _ZGVbN2vvv_sincos", 2, mvec_sincos_b2},
#ifdef WITH_SLEEF
    {"SLEEF Sleef_sincosd8_u10avx512f", 4, sleef_u10_e8},
    {"SLEEF Sleef_sincosd8_u35avx512f", 4, sleef_u35_e8},
    {"SLEEF Sleef_sincosd4_u10avx2", 3, sleef_u10_d4},
    {"SLEEF Sleef_sincosd4_u35avx2", 3, sleef_u35_d4},
    {"SLEEF Sleef_sincosd2_u10sse2", 2, sleef_u10_b2},
    {"SLEEF Sleef_sincosd2_u35sse2", 2, sleef_u35_b2},
#endif
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, by_value);
    return v[n / 2];
}

/* TSC ticks per nanosecond, against the monotonic clock over 50 ms. */
static double tsc_per_ns(void)
{
    double t0 = now();
    unsigned long long c0 = __rdtsc();
    while (now() - t0 < 0.05) {}
    return (double)(__rdtsc() - c0) / ((now() - t0) * 1e9);
}

static void *read_exact(FILE *fh, size_t bytes)
{
    void *p = malloc(bytes);
    if (!p || fread(p, 1, bytes, fh) != bytes) { fprintf(stderr, "short input\n"); exit(1); }
    return p;
}

static int pairs(const char *path, int rounds)
{
    FILE *fh = fopen(path, "rb");
    if (!fh) { perror(path); return 1; }
    int n = *(int *)read_exact(fh, sizeof(int));
    double *x = read_exact(fh, sizeof(double) * n), *s = malloc(sizeof(double) * n),
           *c = malloc(sizeof(double) * n);
    fclose(fh);
    const int count = sizeof PAIRS / sizeof PAIRS[0], level = fastomkl_isa_in_use(),
              passes = 1 + 2000000 / n;
    double *ticks = malloc(sizeof(double) * count * rounds), rate = tsc_per_ns();
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < count; ++i) {
            const contender *k = &PAIRS[(i + r) % count];
            if (k->level > level) continue;
            unsigned long long t0 = __rdtsc();
            for (int p = 0; p < passes; ++p) k->run(x, n, s, c);
            ticks[(i + r) % count * rounds + r] = (double)(__rdtsc() - t0) / ((double)passes * n);
        }
    }
    for (int i = 0; i < count; ++i) {
        if (PAIRS[i].level > level) continue;
        const double t = median(ticks + i * rounds, rounds);
        printf("%s\t%d\t%.3f\t%.3f\n", PAIRS[i].name, PAIRS[i].level, t, t / rate);
    }
    printf("tsc_ghz\t0\t%.4f\t0\n", rate);
    return 0;
}

static int rff(const char *path, int rounds)
{
    FILE *fh = fopen(path, "rb");
    if (!fh) { perror(path); return 1; }
    int *dims = read_exact(fh, 5 * sizeof(int)), N = dims[0], d = dims[1], ld = dims[2],
        D = dims[3], T = dims[4];
    double *W = read_exact(fh, sizeof(double) * N * d * ld), *X = read_exact(fh, sizeof(double) * T * d);
    fclose(fh);
    double *z = malloc(sizeof(double) * 2 * D), scale = 1.0 / D, sink = 0.0;
    double *ns[2] = {malloc(sizeof(double) * rounds), malloc(sizeof(double) * rounds)};
    void (*kernel[2])(const double *, const double *, int, int, int, double, double *) =
        {fastomkl_rff, libmvec_rff};
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < 2; ++i) {
            const int which = (i + r) % 2;
            double t0 = now();
            for (int t = 0; t < T; ++t) {
                for (int k = 0; k < N; ++k) {
                    kernel[which](W + (long)k * d * ld, X + (long)t * d, d, D, ld, scale, z);
                    sink += z[0];
                }
            }
            ns[which][r] = (now() - t0) / T * 1e9;
        }
    }
    printf("fused\t%d\t%.1f\nlibmvec\t%d\t%.1f\nsink\t0\t%g\n", fastomkl_isa_in_use(),
           median(ns[0], rounds), fastomkl_isa_in_use(), median(ns[1], rounds), sink);
    return 0;
}

/* Sum of a buffer with eight independent accumulators, so loads, not additions, set the pace. */
#define STREAM(NAME, TARGET, VEC)                                                                 \
    TARGET static double NAME(const double *buf, long n)                                         \
    {                                                                                             \
        enum { L = sizeof(VEC) / 8 };                                                             \
        VEC a[8] = {{0}}, v;                                                                      \
        for (long i = 0; i + 8 * L <= n; i += 8 * L)                                              \
            for (int j = 0; j < 8; ++j) { memcpy(&v, buf + i + j * L, sizeof v); a[j] += v; }     \
        double s = 0.0;                                                                           \
        for (int j = 0; j < 8; ++j) for (int l = 0; l < L; ++l) s += a[j][l];                     \
        return s;                                                                                 \
    }
STREAM(stream_v4, AVX512, d8)
STREAM(stream_v3, AVX2, d4)
STREAM(stream_base, , d2)

static int l2(long kib, int rounds)
{
    const long n = kib * 1024 / 8;
    double *buf = aligned_alloc(64, n * 8), *gbs = malloc(sizeof(double) * rounds), sink = 0.0;
    for (long i = 0; i < n; ++i) buf[i] = 1.0 / (i + 1);
    const int level = fastomkl_isa_in_use(), passes = 200;
    double (*stream)(const double *, long) =
        level == 4 ? stream_v4 : level == 3 ? stream_v3 : stream_base;
    sink += stream(buf, n);                                          /* warm the cache */
    for (int r = 0; r < rounds; ++r) {
        double t0 = now();
        for (int p = 0; p < passes; ++p) sink += stream(buf, n);
        gbs[r] = (double)passes * n * 8 / ((now() - t0) * 1e9);
    }
    printf("l2_read_gbs\t%d\t%.2f\nsink\t0\t%g\n", level, median(gbs, rounds), sink);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) { fprintf(stderr, "usage: driver pairs|rff|l2 INPUT|KIB ROUNDS\n"); return 2; }
    const int rounds = atoi(argv[3]);
    if (strcmp(argv[1], "pairs") == 0) return pairs(argv[2], rounds);
    if (strcmp(argv[1], "rff") == 0) return rff(argv[2], rounds);
    if (strcmp(argv[1], "l2") == 0) return l2(atol(argv[2]), rounds);
    return 2;
}
