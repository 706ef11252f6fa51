/* Driver of bench/triangular_solves.py: fastomkl's triangular solves (src_c/fastomkl_linalg.c)
 * against BLAS dtrsv from SciPy's OpenBLAS, on the same well-conditioned factor.
 *
 *   triangular_solves single M REPS      best of 7 passes of REPS solves, us per solve:
 *                                        "openblas_lower ours_lower openblas_upperT ours_upperT"
 *   triangular_solves threads M SECONDS  solves per second of one thread, then of two threads
 *                                        solving at once (each its own factor and vector):
 *                                        "openblas_1 openblas_2 ours_1 ours_2"
 *
 * "lower" solves L x = b for a row-major lower L (dtrsv 'U','T','N' on it); "upperT" solves
 * R^T x = b for a row-major upper R (dtrsv 'L','N','N'): the two solves the models make. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void fastomkl_solve_lower(int m, const double *L, int ld, double *x);
void fastomkl_solve_upper_transposed(int m, const double *R, int ld, double *x);
void scipy_dtrsv_(const char *uplo, const char *trans, const char *diag, const int *n,
                  const double *a, const int *lda, double *x, const int *incx);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* A lower triangular m x m factor with diagonal in [1, 2] and small off-diagonal entries. */
static double *lower_factor(int m, unsigned seed)
{
    double *L = calloc((size_t)m * m, sizeof(double));
    srand(seed);
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < i; ++j) L[(long)i * m + j] = (rand() / (double)RAND_MAX - 0.5) / m;
        L[(long)i * m + i] = 1.0 + rand() / (double)RAND_MAX;
    }
    return L;
}

static double *transposed(const double *A, int m)
{
    double *T = malloc((size_t)m * m * sizeof(double));
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) T[(long)j * m + i] = A[(long)i * m + j];
    return T;
}

enum { OPENBLAS_LOWER, OURS_LOWER, OPENBLAS_UPPER_T, OURS_UPPER_T };

static void solve(int kind, int m, const double *A, double *x)
{
    const int one = 1;
    switch (kind) {
    case OPENBLAS_LOWER: scipy_dtrsv_("U", "T", "N", &m, A, &m, x, &one); break;
    case OURS_LOWER: fastomkl_solve_lower(m, A, m, x); break;
    case OPENBLAS_UPPER_T: scipy_dtrsv_("L", "N", "N", &m, A, &m, x, &one); break;
    default: fastomkl_solve_upper_transposed(m, A, m, x);
    }
}

typedef struct { int kind, m; double seconds; long solves; unsigned seed; } job;

static void *run_job(void *arg)
{
    job *w = arg;
    double *L = lower_factor(w->m, w->seed), *b = malloc(w->m * sizeof(double)),
           *x = malloc(w->m * sizeof(double));
    for (int i = 0; i < w->m; ++i) b[i] = 1.0;
    const double end = now() + w->seconds;
    long n = 0;
    while (now() < end) {
        for (int k = 0; k < 64; ++k, ++n) {
            memcpy(x, b, w->m * sizeof(double));
            solve(w->kind, w->m, L, x);
        }
    }
    w->solves = n;
    free(L), free(b), free(x);
    return NULL;
}

/* Solves per second of `threads` threads solving at once. */
static double throughput(int kind, int m, double seconds, int threads)
{
    pthread_t t[2];
    job w[2];
    for (int i = 0; i < threads; ++i) {
        w[i] = (job){kind, m, seconds, 0, 7u + i};
        pthread_create(&t[i], NULL, run_job, &w[i]);
    }
    long total = 0;
    for (int i = 0; i < threads; ++i) {
        pthread_join(t[i], NULL);
        total += w[i].solves;
    }
    return total / seconds;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s single M REPS | threads M SECONDS\n", argv[0]);
        return 2;
    }
    const int m = atoi(argv[2]);
    if (strcmp(argv[1], "threads") == 0) {
        const double seconds = atof(argv[3]);
        printf("%.0f %.0f %.0f %.0f\n", throughput(OPENBLAS_UPPER_T, m, seconds, 1),
               throughput(OPENBLAS_UPPER_T, m, seconds, 2), throughput(OURS_UPPER_T, m, seconds, 1),
               throughput(OURS_UPPER_T, m, seconds, 2));
        return 0;
    }
    const int reps = atoi(argv[3]);
    double *L = lower_factor(m, 1u), *R = transposed(L, m), *b = malloc(m * sizeof(double)),
           *x = malloc(m * sizeof(double));
    for (int i = 0; i < m; ++i) b[i] = 1.0 + i % 7;
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (int pass = 0; pass < 7; ++pass) {
        for (int kind = 0; kind < 4; ++kind) {
            const double *A = kind < OPENBLAS_UPPER_T ? L : R, start = now();
            for (int r = 0; r < reps; ++r) {
                memcpy(x, b, m * sizeof(double));
                solve(kind, m, A, x);
            }
            const double t = (now() - start) / reps;
            best[kind] = t < best[kind] ? t : best[kind];
        }
    }
    printf("%.4f %.4f %.4f %.4f\n", best[0] * 1e6, best[1] * 1e6, best[2] * 1e6, best[3] * 1e6);
    return 0;
}
