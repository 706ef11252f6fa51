/* Small dense linear algebra for the VAW and Cholesky-based forecasters, single-threaded and
 * vectorised.
 *
 * Symmetric matrices are kept in packed storage: the lower triangle row by row, element (i, j) with
 * j <= i at i(i+1)/2 + j (the layout column-major BLAS calls packed 'U', so these functions and
 * dspmv/dspr are interchangeable on the same arrays).  Multithreaded BLAS is slower than one core for
 * matrices of order ~100 and makes the timing depend on the machine's load; these loops are not.
 * Compiled like the other kernels (see setup.py): -O3 -ffast-math -fopenmp-simd, one variant per
 * instruction set chosen at load time (fastomkl_dispatch.h; FASTOMKL_ISA caps it).
 */
#ifndef FASTOMKL_LINALG_H
#define FASTOMKL_LINALG_H

/* u = A z, one pass over A.  */
void fastomkl_spmv(int n, const double *A, const double *z, double *u);

/* A += alpha u u^T.  */
void fastomkl_spr(int n, double alpha, const double *u, double *A);

/* A += sum_{k<4} alpha[k] U_k U_k^T, U row-major (4, n): four rank-one updates in one pass.  */
void fastomkl_spr4(int n, const double *alpha, const double *U, double *A);

/* Triangular solves on row-major factors with leading dimension ld (m <= ld), in place:
 *   fastomkl_solve_lower:            x <- L^{-1} x for L lower triangular (a dot product per row);
 *   fastomkl_solve_upper_transposed: x <- R^{-T} x for R upper triangular (an axpy per row of R).
 * BLAS dtrsv does the same, but OpenBLAS takes a buffer from its allocator, under a lock shared by
 * every thread, at each call: a thread predicting and a thread learning a Nystrom model met there
 * at every round.  These loops allocate nothing (bench/triangular_solves.py).  */
void fastomkl_solve_lower(int m, const double *L, int ld, double *x);
void fastomkl_solve_upper_transposed(int m, const double *R, int ld, double *x);

/* Forget the first of the n inputs of a Cholesky factor: L (n x n, lower, row-major with leading
 * dimension ld) becomes, in L[:n-1, :n-1], the factor L' of (L L^T)[1:, 1:], by the rotations of a
 * rank-one update, in one pass that also moves it up-left; the solves u = L^{-1} b and w = L^{-1} c
 * (w may be NULL) become L'^{-1} b[1:] and L'^{-1} c[1:] in u[:n-1] and w[:n-1] by the same
 * rotations.  n >= 1; cs: scratch of 2 (n - 1) doubles.  O(n^2), the order of one solve.  */
void fastomkl_chol_drop_first(int n, double *L, int ld, double *u, double *w, double *cs);

/* P = S^{-1} for a symmetric positive definite S, both packed, through the Cholesky factor
 * S = L L^T (L and L^{-1} kept in `work`, n*n doubles).  Single-threaded and O(n^3 / 2); returns 0,
 * or -1 if S is not numerically positive definite (P is then left unchanged).  */
int fastomkl_spd_inverse(int n, const double *S, double *work, double *P);

#endif
