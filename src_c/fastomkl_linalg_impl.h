/* Body of the packed symmetric kernels, included once per instruction set by fastomkl_linalg.c with
 * LINALG_NAME(base) naming the variant and LINALG_TARGET its target attribute. */

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
