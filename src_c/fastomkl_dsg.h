/* The feature map of a doubly-stochastic-gradient block (see fastomkl/_core/features/dsg.pyx).
 * Compiled with the kernel flags of setup.py, so cos vectorises through libmvec; callers pass
 * finite values only. */
#ifndef FASTOMKL_DSG_H
#define FASTOMKL_DSG_H

/* z[i*r + k] <- scale * cos(z[i*r + k] + b[k]) for i < n, k < r (z holds X W on entry). */
void fastomkl_dsg_cos(double *z, const double *b, long n, int r, double scale);
/* z[i*r + k] <- scale * cos(p[i*r + k] + b[k]) computed in float32 (p holds X W in float32). */
void fastomkl_dsg_cos_float(double *z, const float *p, const double *b, long n, int r,
                            double scale);
/* z (r) = W^T x for one row x (d), W (d, r) row-major: the rows of W that x's nonzeros select,
 * scaled and summed in order. */
void fastomkl_dsg_project_sparse(double *z, const double *x, int d, const double *W, int r);
/* The same in float32: p (r) = W^T x with W and x rounded to float. */
void fastomkl_dsg_project_float(float *p, const double *x, int d, const float *W, int r);

#endif
