/* Plain C kernels of the bandit kernel-selection models (paper 001): the sums of the Tsallis
 * normaliser and the projected gradient step of a random-feature expert.  Compiled like
 * fastomkl_kernels.c (fast-math, OpenMP SIMD, one variant per instruction set): exp and log vectorise through
 * libmvec.  Callers validate their input. */
#ifndef FASTOMKL_BANDIT_H
#define FASTOMKL_BANDIT_H

/* out[i] = x[i]^e for x[i] > 0 (as exp(e log x)). */
void fastomkl_pow_array(const double *x, int n, double e, double *out);

/* F(mu) = sum_i (b_i - eta_i mu)^e and *slope = -e sum_i eta_i (b_i - eta_i mu)^(e - 1), for
 * bases b_i - eta_i mu > 0 (the summation order differs from a plain loop). */
double fastomkl_tsallis_sum(const double *b, const double *eta, int n, double mu, double e,
                            double *slope);

/* w <- w - step z, then (with project) every w_j clipped to [-bound, bound]. */
void fastomkl_step_clip(double *w, const double *z, int n, double step, double bound,
                        int project);

/* out = softmax(scale v) = exp(scale v_i - top) / sum, top = max_j scale v_j (returned); out may
 * alias v. */
double fastomkl_gibbs(const double *v, int n, double scale, double *out);

#endif
