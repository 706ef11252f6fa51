/* Plain C kernels of the exact kernel expansions (OMKR, single-kernel online regression).
 * Compiled like fastomkl_kernels.c (fast-math, OpenMP SIMD, one variant per instruction set): exp vectorises through
 * libmvec.  Callers validate their input. */
#ifndef FASTOMKL_EXPANSION_H
#define FASTOMKL_EXPANSION_H

/* sum_i alpha[i] * exp(-g * v[i]) (vectorised; the summation order differs from a plain loop). */
double fastomkl_exp_dot(const double *alpha, const double *v, long n, double g);

/* out[i] = exp(-g * v[i]) (vectorised): the kernel values of one kernel, which the members of a
 * step ensemble share. */
void fastomkl_exp_values(const double *v, long n, double g, double *out);

/* For each of the n rows s of S (row-major n x d): sq[i] = ||x - s||^2, l1[i] = ||x - s||_1,
 * dot[i] = x . s; an output pointer may be NULL when that quantity is not needed. */
void fastomkl_support_distances(const double *S, const double *x, long n, int d, double *sq,
                                double *l1, double *dot);

#endif
