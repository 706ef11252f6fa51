/* Body of the packed symmetric kernels and the triangular solves, included once per instruction
 * set by fastomkl_linalg.c with LINALG_NAME(base) naming the variant and LINALG_TARGET its target
 * attribute. */

/* Both kernels walk the packed triangle four rows at a time: the columns j < i0 that the four rows
 * share are streamed once with z_j / u_j loaded once for four rows (register blocking), then the
 * small 4 x 4 corner is done one element at a time. */

LINALG_TARGET static void LINALG_NAME(fastomkl_spmv)(int n, const double *A, const double *z,
                                                     double *u)
{
    for (int i = 0; i < n; ++i) u[i] = 0.0;
    int i0 = 0;
    for (; i0 + 4 <= n; i0 += 4) {
        const double *r0 = A + (long)i0 * (i0 + 1) / 2;
        const double *r1 = r0 + i0 + 1, *r2 = r1 + i0 + 2, *r3 = r2 + i0 + 3;
        const double z0 = z[i0], z1 = z[i0 + 1], z2 = z[i0 + 2], z3 = z[i0 + 3];
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
        /* rows i0..i0+3 against columns j < i0: u_i += row . z and u_j += row_j z_i */
        #pragma omp simd reduction(+:a0, a1, a2, a3)
        for (int j = 0; j < i0; ++j) {
            const double zj = z[j];
            a0 += r0[j] * zj;
            a1 += r1[j] * zj;
            a2 += r2[j] * zj;
            a3 += r3[j] * zj;
            u[j] += r0[j] * z0 + r1[j] * z1 + r2[j] * z2 + r3[j] * z3;
        }
        /* the 4 x 4 corner (lower triangle, diagonal included) */
        const double *rows[4] = {r0, r1, r2, r3};
        double accs[4] = {a0, a1, a2, a3};
        for (int a = 0; a < 4; ++a) {
            const double *row = rows[a];
            const int i = i0 + a;
            const double zi = z[i];
            double acc = accs[a];
            for (int j = i0; j < i; ++j) {
                acc += row[j] * z[j];
                u[j] += row[j] * zi;
            }
            u[i] += acc + row[i] * zi;
        }
    }
    for (int i = i0; i < n; ++i) {
        const double *row = A + (long)i * (i + 1) / 2;
        const double zi = z[i];
        double acc = 0.0;
        #pragma omp simd reduction(+:acc)
        for (int j = 0; j < i; ++j) {
            acc += row[j] * z[j];
            u[j] += row[j] * zi;
        }
        u[i] += acc + row[i] * zi;
    }
}

LINALG_TARGET static void LINALG_NAME(fastomkl_spr)(int n, double alpha, const double *u, double *A)
{
    int i0 = 0;
    for (; i0 + 4 <= n; i0 += 4) {
        double *r0 = A + (long)i0 * (i0 + 1) / 2;
        double *r1 = r0 + i0 + 1, *r2 = r1 + i0 + 2, *r3 = r2 + i0 + 3;
        const double c0 = alpha * u[i0], c1 = alpha * u[i0 + 1], c2 = alpha * u[i0 + 2],
                     c3 = alpha * u[i0 + 3];
        #pragma omp simd
        for (int j = 0; j < i0; ++j) {
            const double uj = u[j];
            r0[j] += c0 * uj;
            r1[j] += c1 * uj;
            r2[j] += c2 * uj;
            r3[j] += c3 * uj;
        }
        double *rows[4] = {r0, r1, r2, r3};
        const double cs[4] = {c0, c1, c2, c3};
        for (int a = 0; a < 4; ++a)
            for (int j = i0; j <= i0 + a; ++j) rows[a][j] += cs[a] * u[j];
    }
    for (int i = i0; i < n; ++i) {
        double *row = A + (long)i * (i + 1) / 2;
        const double c = alpha * u[i];
        #pragma omp simd
        for (int j = 0; j <= i; ++j) row[j] += c * u[j];
    }
}

LINALG_TARGET static void LINALG_NAME(fastomkl_spr4)(int n, const double *alpha, const double *U,
                                                     double *A)
{
    const double *u0 = U, *u1 = U + n, *u2 = U + 2 * n, *u3 = U + 3 * n;
    for (int i = 0; i < n; ++i) {
        double *row = A + (long)i * (i + 1) / 2;
        const double c0 = alpha[0] * u0[i], c1 = alpha[1] * u1[i], c2 = alpha[2] * u2[i],
                     c3 = alpha[3] * u3[i];
        #pragma omp simd
        for (int j = 0; j <= i; ++j) row[j] += c0 * u0[j] + c1 * u1[j] + c2 * u2[j] + c3 * u3[j];
    }
}

/* Forward substitution by rows: x_i = (x_i - L_i,<i . x_<i) / L_ii.  The dot product keeps four
 * independent accumulators of four doubles (a multiply-add waits 4 cycles for the one before in
 * its chain: with one chain, a solve of order 300 would be bound by that latency). */
LINALG_TARGET static void LINALG_NAME(fastomkl_solve_lower)(int m, const double *L, int ld,
                                                            double *x)
{
    typedef double quad __attribute__((vector_size(32)));
    for (int i = 0; i < m; ++i) {
        const double *row = L + (long)i * ld;
        quad s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, a, b;
        int j = 0;
        for (; j + 16 <= i; j += 16) {
            memcpy(&a, row + j, sizeof a); memcpy(&b, x + j, sizeof b); s0 += a * b;
            memcpy(&a, row + j + 4, sizeof a); memcpy(&b, x + j + 4, sizeof b); s1 += a * b;
            memcpy(&a, row + j + 8, sizeof a); memcpy(&b, x + j + 8, sizeof b); s2 += a * b;
            memcpy(&a, row + j + 12, sizeof a); memcpy(&b, x + j + 12, sizeof b); s3 += a * b;
        }
        for (; j + 4 <= i; j += 4) {
            memcpy(&a, row + j, sizeof a); memcpy(&b, x + j, sizeof b); s0 += a * b;
        }
        s0 = (s0 + s1) + (s2 + s3);
        double acc = (s0[0] + s0[1]) + (s0[2] + s0[3]);
        for (; j < i; ++j) acc += row[j] * x[j];
        x[i] = (x[i] - acc) / row[i];
    }
}

/* Forward substitution by rows of R (R^T's columns), four at a time: x_k.. x_k+3 from the 4 x 4
 * triangle, then x_>k+3 -= their four rows' terms in one pass.  A pass per row would read x back
 * right after writing it, one element further on each time: vector loads that straddle the
 * stores before them wait for those to drain (5x slower than OpenBLAS at order 300). */
LINALG_TARGET static void LINALG_NAME(fastomkl_solve_upper_transposed)(int m, const double *R,
                                                                       int ld, double *x)
{
    int k = 0;
    for (; k + 4 <= m; k += 4) {
        const double *r0 = R + (long)k * ld, *r1 = r0 + ld, *r2 = r1 + ld, *r3 = r2 + ld;
        const double x0 = x[k] / r0[k];
        const double x1 = (x[k + 1] - x0 * r0[k + 1]) / r1[k + 1];
        const double x2 = (x[k + 2] - x0 * r0[k + 2] - x1 * r1[k + 2]) / r2[k + 2];
        const double x3 = (x[k + 3] - x0 * r0[k + 3] - x1 * r1[k + 3] - x2 * r2[k + 3])
                          / r3[k + 3];
        x[k] = x0;
        x[k + 1] = x1;
        x[k + 2] = x2;
        x[k + 3] = x3;
        #pragma omp simd
        for (int j = k + 4; j < m; ++j)
            x[j] -= (x0 * r0[j] + x1 * r1[j]) + (x2 * r2[j] + x3 * r3[j]);
    }
    for (; k < m; ++k) {
        const double *row = R + (long)k * ld;
        const double xk = x[k] / row[k];
        x[k] = xk;
        for (int j = k + 1; j < m; ++j) x[j] -= xk * row[j];
    }
}

/* One row of the downdate below (fastomkl_chol_drop_first): the new row `row` of L' from the old
 * row of L22 at `old` (one row further down, one column right) and x = l_i, after the rotations
 * of the rows above (cs), ending with the rotation of its own diagonal. */
LINALG_TARGET static inline void LINALG_NAME(chol_drop_row)(int i, double *row, const double *old,
                                                            double x, double *cs)
{
    for (int k = 0; k < i; ++k) {
        const double c = cs[2 * k], s = cs[2 * k + 1], a = old[k];
        row[k] = c * a + s * x;
        x = c * x - s * a;
    }
    const double a = old[i], r = sqrt(a * a + x * x);
    cs[2 * i] = a / r;
    cs[2 * i + 1] = x / r;
    row[i] = r;
}

/* L' = the Cholesky factor of (L L^T)[1:, 1:], in place and moved up-left into L[:n-1, :n-1]:
 * (L L^T)[1:, 1:] = L22 L22^T + l l^T with L22 = L[1:, 1:] and l = L[1:, 0], so the rotations
 * of a rank-one update of L22 by l (those of LINPACK's dchud: rotation k mixes column k with l
 * and zeroes l_k) turn [L22 | l] into [L' | 0].  The same rotations carry a solve along: if
 * L u = b then L' u' = b[1:] for u' = (G^T [u[1:]; u[0]])[:n-1] (O(n) where a new solve is
 * O(n^2)), applied to u and w (w may be NULL).  Rows go by four, in the lanes of one vector: a
 * row's rotations form one chain of dependent multiply-adds, so one row at a time would wait on
 * it (twice the time at order 300; eight rows in two vectors were slower again).  cs: 2 (n - 1)
 * doubles. */
LINALG_TARGET static void LINALG_NAME(fastomkl_chol_drop_first)(int n, double *L, int ld,
                                                                 double *u, double *w, double *cs)
{
    const int m = n - 1;
    int i0 = 0;
    for (; i0 + 4 <= m; i0 += 4) {
        double *r0 = L + (long)i0 * ld, *r1 = r0 + ld, *r2 = r1 + ld, *r3 = r2 + ld;
        const double *o0 = r1 + 1, *o1 = r2 + 1, *o2 = r3 + 1, *o3 = r3 + ld + 1;
        double x0 = r1[0], x1 = r2[0], x2 = r3[0], x3 = r3[ld];
        /* each old entry is read (a step earlier, or before the writes of its step) before the
         * new row one up overwrites it */
        typedef double quad __attribute__((vector_size(32)));
        quad x = {x0, x1, x2, x3};
        for (int k = 0; k < i0; ++k) {
            const double c = cs[2 * k], s = cs[2 * k + 1];
            const quad a = {o0[k], o1[k], o2[k], o3[k]};
            const quad r = c * a + s * x;
            x = c * x - s * a;
            r0[k] = r[0];
            r1[k] = r[1];
            r2[k] = r[2];
            r3[k] = r[3];
        }
        x0 = x[0]; x1 = x[1]; x2 = x[2]; x3 = x[3];
        LINALG_NAME(chol_drop_row)(0, r0 + i0, o0 + i0, x0, cs + 2 * i0);
        LINALG_NAME(chol_drop_row)(1, r1 + i0, o1 + i0, x1, cs + 2 * i0);
        LINALG_NAME(chol_drop_row)(2, r2 + i0, o2 + i0, x2, cs + 2 * i0);
        LINALG_NAME(chol_drop_row)(3, r3 + i0, o3 + i0, x3, cs + 2 * i0);
    }
    for (int i = i0; i < m; ++i)
        LINALG_NAME(chol_drop_row)(i, L + (long)i * ld, L + (long)(i + 1) * ld + 1,
                                   L[(long)(i + 1) * ld], cs);
    double *carried[2] = {u, w};
    for (int v = 0; v < 2 && carried[v]; ++v) {
        double *y = carried[v], e = y[0];
        for (int k = 0; k < m; ++k) {
            const double c = cs[2 * k], s = cs[2 * k + 1], a = y[k + 1];
            y[k] = c * a + s * e;
            e = c * e - s * a;
        }
    }
}
