/* A hand-written C Raker step, the floor the compiled engine is measured against.
 *
 * The same equations as fastomkl.Raker (spec 000 §3.0): for every kernel, random features
 * [cos(W x); sin(W x)]/sqrt(D) (sin/cos vectorised through libmvec like the library's kernel),
 * theta . z, Hedge-weighted prediction, then the OGD step and the log-weight update.  One flat loop,
 * no dispatch, no validation: what a person would write in C for this one configuration.
 *
 * As a program (bench/count_instructions.py runs it under callgrind):
 *   gcc -O3 -ffast-math -fopenmp-simd -march=native bench/handwritten_raker.c -o hw -lmvec -lm
 *   ./hw input.bin [passes]   prints nanoseconds per sample (median over the passes)
 * input.bin: int32 N, D, d, T, then float64 W (N, d, D), X (T, d), y (T).
 *
 * As a shared library (compiled with -fPIC -DHANDWRITTEN_LIBRARY, linked -shared without
 * -ffast-math; bench/compare_core.py loads it with ctypes), handwritten_raker_rows_as_program
 * learns rows t0 .. t1 - 1 from a state the caller keeps, so that the library and the loop take
 * turns on the same chunks of the stream in one process.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Rows t0 .. t1 - 1 of the stream (X (T, d), Y (T)) on the frequencies W (N, d, D); theta (N, 2D),
 * logw (N), z (2D) and f (N) are the state and scratch the caller keeps.  Returns the sum of the
 * predictions (so that no compiler drops the work). */
double handwritten_raker_rows(int N, int D, int d, const double *W, const double *X,
                              const double *Y, int t0, int t1, double *theta, double *logw,
                              double *z, double *f)
{
    const double lam = 1e-3, scale = 1.0 / sqrt((double)D);
    double sink = 0.0;
    for (int t = t0; t < t1; ++t) {
        const double *x = X + (long)t * d, y = Y[t], eta = 0.1 / sqrt(t + 1.0);
        double top = logw[0], total = 0.0, y_hat = 0.0;
        for (int k = 1; k < N; ++k) top = logw[k] > top ? logw[k] : top;
        for (int k = 0; k < N; ++k) total += exp(logw[k] - top);
        for (int k = 0; k < N; ++k) {
            const double *w = W + (long)k * d * D;
            double *th = theta + (long)k * 2 * D, *proj = z + D, fk = 0.0, norm = 0.0;
            for (int j = 0; j < D; ++j) proj[j] = 0.0;
            for (int l = 0; l < d; ++l) {
                const double xl = x[l];
                #pragma omp simd
                for (int j = 0; j < D; ++j) proj[j] += xl * w[l * D + j];
            }
            #pragma omp simd
            for (int j = 0; j < D; ++j) z[j] = scale * cos(proj[j]);
            #pragma omp simd
            for (int j = 0; j < D; ++j) proj[j] = scale * sin(proj[j]);
            for (int j = 0; j < 2 * D; ++j) fk += th[j] * z[j];
            y_hat += exp(logw[k] - top) / total * fk;
            const double g = eta * 2.0 * (fk - y), shrink = 1.0 - 2.0 * eta * lam;
            for (int j = 0; j < 2 * D; ++j) {
                norm += th[j] * th[j];
                th[j] = shrink * th[j] - g * z[j];
            }
            f[k] = (fk - y) * (fk - y) + lam * norm;
        }
        for (int k = 0; k < N; ++k) logw[k] -= eta * f[k];
        sink += y_hat;
    }
    return sink;
}

#ifdef HANDWRITTEN_LIBRARY
#if defined(__SSE__)
#include <xmmintrin.h>
#endif
/* handwritten_raker_rows in the floating-point mode of the program: a program built with
 * -ffast-math starts with denormals flushed to zero (gcc's crtfastmath), where a library loaded
 * into Python runs in Python's mode (3.6% slower for this loop, whose Hedge weights underflow).
 * The mode is set for the call only, so the caller's own code keeps its mode. */
double handwritten_raker_rows_as_program(int N, int D, int d, const double *W, const double *X,
                                         const double *Y, int t0, int t1, double *theta,
                                         double *logw, double *z, double *f)
{
#if defined(__SSE__)
    const unsigned int mode = _mm_getcsr();
    _mm_setcsr(mode | 0x8040);                  /* flush to zero, denormals are zero */
#endif
    const double sink = handwritten_raker_rows(N, D, d, W, X, Y, t0, t1, theta, logw, z, f);
#if defined(__SSE__)
    _mm_setcsr(mode);
#endif
    return sink;
}
#else
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *read_exact(FILE *fh, size_t bytes) {
    void *p = malloc(bytes);
    if (!p || fread(p, 1, bytes, fh) != bytes) { fprintf(stderr, "short input\n"); exit(1); }
    return p;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: hw input.bin [passes]\n"); return 2; }
    FILE *fh = fopen(argv[1], "rb");
    if (!fh) { perror(argv[1]); return 1; }
    int *dims = read_exact(fh, 4 * sizeof(int)), N = dims[0], D = dims[1], d = dims[2], T = dims[3];
    int passes = argc > 2 ? atoi(argv[2]) : 5;
    double *W = read_exact(fh, sizeof(double) * N * d * D);
    double *X = read_exact(fh, sizeof(double) * T * d), *Y = read_exact(fh, sizeof(double) * T);
    fclose(fh);
    double *theta = calloc(N * 2 * D, sizeof(double)), *logw = calloc(N, sizeof(double));
    double *z = malloc(sizeof(double) * 2 * D), *f = malloc(sizeof(double) * N);
    double *times = malloc(sizeof(double) * passes), sink = 0.0;
    for (int rep = 0; rep < passes; ++rep) {
        memset(theta, 0, sizeof(double) * N * 2 * D);
        memset(logw, 0, sizeof(double) * N);
        double start = now();
        sink += handwritten_raker_rows(N, D, d, W, X, Y, 0, T, theta, logw, z, f);
        times[rep] = (now() - start) / T;
    }
    qsort(times, passes, sizeof(double), cmp);
    printf("%.1f %g\n", times[passes / 2] * 1e9, sink);
    return 0;
}
#endif
