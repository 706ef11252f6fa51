/* Plain C kernels of fastomkl's hot loop.
 *
 * Compiled on their own with -O3 -ffast-math -fopenmp-simd (see setup.py), once per instruction set
 * (AVX-512, AVX2, SSE2) with the variant chosen when the library loads (fastomkl_dispatch.h); the
 * random features take sine and cosine from one fused vector routine (fastomkl_sincos.h), in
 * double or, for float32 frequencies, in float.  Callers validate their input: these functions
 * assume finite values.
 */
#ifndef FASTOMKL_KERNELS_H
#define FASTOMKL_KERNELS_H

/* Random Fourier features of one kernel.
 *   W: frequencies, d rows of ld doubles: W[l*ld + j] is coordinate l of frequency j (j < D);
 *      ld >= D is a multiple of FASTOMKL_RFF_ALIGN and the padding W[l*ld + j], j >= D, is zero,
 *      so that every vector the kernel reads is whole and finite.
 *   z: output of length 2D, z[j] = scale*cos(w_j.x), z[D+j] = scale*sin(w_j.x).  */
#define FASTOMKL_RFF_ALIGN 8     /* doubles in the widest vector (AVX-512) */
void fastomkl_rff(const double *W, const double *x, int d, int D, int ld, double scale,
                  double *z);

/* The same for float32 frequencies (ld a multiple of FASTOMKL_RFF_ALIGN_F32): the projection and
 * the sine-cosine in float (fastomkl_sincos.h's float twin), z widened to double. */
#define FASTOMKL_RFF_ALIGN_F32 16     /* floats in the widest vector */
void fastomkl_rff_f32(const float *W, const double *x, int d, int D, int ld, double scale,
                      double *z);

/* s[i] = sin x[i] and c[i] = cos x[i] by the fused sine-cosine of fastomkl_rff (fastomkl_sincos.h). */
void fastomkl_sincos_many(const double *x, long n, double *s, double *c);
void fastomkl_sincos_many_f32(const float *x, long n, float *s, float *c);

/* sum_j a[j] b[j] (vectorised: the summation order differs from a sequential loop). */
double fastomkl_dot(const double *a, const double *b, int n);

/* a . b, with b . b stored in *bb (one pass over b). */
double fastomkl_dot_sqnorm(const double *a, const double *b, int n, double *bb);

/* theta <- shrink * theta - g * z, with ||theta||^2 before and after the step. */
void fastomkl_shrink_axpy(double *theta, const double *z, int n, double shrink, double g,
                          double *norm_before, double *norm_after);

/* Instruction-set level of the variants in use: 4 (AVX-512), 3 (AVX2 + FMA) or 2 (SSE2). */
int fastomkl_isa_in_use(void);

/* Shared frequency draws (one base per kernel family, each kernel a scale of it):
 *   fastomkl_rff_project_scaled: z = scale [cos(factor W^T x); sin(factor W^T x)] for W laid
 *     out as in fastomkl_rff, and p = W^T x (if p is not NULL: D rounded up to whole vectors).
 *   fastomkl_rff_scaled: z[j] = scale*cos(factor*p[j]), z[D+j] = scale*sin(factor*p[j]), j < D,
 *     reading p up to D rounded up to FASTOMKL_RFF_ALIGN (finite values).  */
void fastomkl_rff_project_scaled(const double *W, const double *x, int d, int D, int ld,
                                 double factor, double scale, double *p, double *z);
void fastomkl_rff_scaled(const double *p, int D, double factor, double scale, double *z);
void fastomkl_rff_project_scaled_f32(const float *W, const double *x, int d, int D, int ld,
                                     double factor, double scale, float *p, double *z);
void fastomkl_rff_scaled_f32(const float *p, int D, double factor, double scale, double *z);

#endif
