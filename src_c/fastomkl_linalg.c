/* Packed symmetric kernels of the VAW forecasters (declared in fastomkl_linalg.h), one variant per
 * instruction set, chosen at load time like the other kernels (fastomkl_dispatch.h). */
#include "fastomkl_linalg.h"
#include "fastomkl_dispatch.h"
#include <math.h>
#include <string.h>

#define LINALG_CAT2(a, b) a##_##b
#define LINALG_CAT(a, b) LINALG_CAT2(a, b)

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define LINALG_NAME(f) LINALG_CAT(f, v4)
#define LINALG_TARGET __attribute__((target("arch=x86-64-v4")))
#include "fastomkl_linalg_impl.h"
#undef LINALG_NAME
#undef LINALG_TARGET
#define LINALG_NAME(f) LINALG_CAT(f, v3)
#define LINALG_TARGET __attribute__((target("arch=x86-64-v3")))
#include "fastomkl_linalg_impl.h"
#undef LINALG_NAME
#undef LINALG_TARGET
#endif

#define LINALG_NAME(f) LINALG_CAT(f, base)
#define LINALG_TARGET
#include "fastomkl_linalg_impl.h"
#undef LINALG_NAME
#undef LINALG_TARGET

FASTOMKL_DISPATCH(void, fastomkl_spmv, (int n, const double *A, const double *z, double *u),
                  (n, A, z, u))
FASTOMKL_DISPATCH(void, fastomkl_spr, (int n, double alpha, const double *u, double *A),
                  (n, alpha, u, A))
FASTOMKL_DISPATCH(void, fastomkl_spr4, (int n, const double *alpha, const double *U, double *A),
                  (n, alpha, U, A))
FASTOMKL_DISPATCH(void, fastomkl_solve_lower, (int m, const double *L, int ld, double *x),
                  (m, L, ld, x))
FASTOMKL_DISPATCH(void, fastomkl_solve_upper_transposed,
                  (int m, const double *R, int ld, double *x), (m, R, ld, x))
FASTOMKL_DISPATCH(void, fastomkl_chol_drop_first,
                  (int n, double *L, int ld, double *u, double *w, double *cs),
                  (n, L, ld, u, w, cs))

/* Rarely called (the optional refresh of a VAW inverse): plain loops, one variant. */
int fastomkl_spd_inverse(int n, const double *S, double *work, double *P)
{
    double *L = work;                                  /* row-major, lower triangle used */
    for (int i = 0; i < n; ++i) {
        const double *s = S + (long)i * (i + 1) / 2;
        double *li = L + (long)i * n;
        for (int j = 0; j <= i; ++j) {
            const double *lj = L + (long)j * n;
            double v = s[j];
            for (int k = 0; k < j; ++k) v -= li[k] * lj[k];
            if (j < i) {
                li[j] = v / lj[j];
            } else {
                if (!(v > 0.0)) return -1;
                li[i] = sqrt(v);
            }
        }
    }
    /* L^{-1} in place, row by row: M_ii = 1 / L_ii, M_ij = -(sum_{j<=k<i} L_ik M_kj) / L_ii. */
    for (int i = 0; i < n; ++i) {
        double *li = L + (long)i * n;
        const double inv = 1.0 / li[i];
        for (int j = 0; j < i; ++j) {
            double v = 0.0;
            for (int k = j; k < i; ++k) v += li[k] * L[(long)k * n + j];
            li[j] = -v * inv;      /* L_ij is no longer needed: columns k > j of row i remain */
        }
        li[i] = inv;
    }
    /* P = M^T M: P_ij = sum_{k >= i} M_ki M_kj for j <= i. */
    for (int i = 0; i < n; ++i) {
        double *p = P + (long)i * (i + 1) / 2;
        for (int j = 0; j <= i; ++j) {
            double v = 0.0;
            for (int k = i; k < n; ++k) v += L[(long)k * n + i] * L[(long)k * n + j];
            p[j] = v;
        }
    }
    return 0;
}
