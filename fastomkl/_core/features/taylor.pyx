"""Taylor features of the Gaussian kernel (Jezequel, Gaillard & Rudi 2019, section 3.1).

For a multi-index k in N^d with |k| <= M the basis function is

    g_k(x) = exp(-||x||^2 / (2 sigma^2)) prod_i (x_i / sigma)^{k_i} / sqrt(k_i!)

These r = C(M + d, d) functions are orthonormal in the RKHS of k(x, x') = exp(-||x - x'||^2 /
(2 sigma^2)), and sum_{|k| <= M} g_k(x) g_k(x') is that kernel with exp(x.x' / sigma^2) cut after
its degree-M Taylor term.  Linear models on them are therefore projections of kernel models onto a
fixed subspace (no Gram matrix to invert: Q = I).

Generation in O(r + d) per input: the features are numbered in graded order (degree 0, then the
monomials of degree 1, 2, ... each as a non-decreasing tuple of variables, in
itertools.combinations_with_replacement order).  Feature j > 0 extends its parent (the tuple without
its last variable v) by v, and g_{k + e_v} = g_k (x_v / sigma) / sqrt(k_v + 1), so

    z[0] = exp(-||x||^2 / (2 sigma^2)),    z[j] = z[parent[j]] * x[var[j]] * coef[j]

with coef[j] = 1 / (sigma sqrt(exponent of var[j] in feature j)).
"""
import numpy as np
from math import comb

from fastomkl._core.base cimport FeatureBank
from libc.math cimport exp


def n_taylor_features(int n_features, int degree):
    """r = C(degree + d, d): the number of monomials of degree <= `degree` in d variables."""
    return comb(degree + n_features, n_features)


def taylor_tables(int n_features, int degree):
    """(parent, var, exponent) of the compact basis in graded order (length r; entry 0 is the
    constant monomial, whose parent and var are -1 and exponent 0)."""
    parent, var, exponent = [-1], [-1], [0]
    level = [0]                                  # features of the previous degree
    for _ in range(degree):
        next_level = []
        for p in level:
            first = max(var[p], 0)               # non-decreasing tuples: extend by v >= last var
            for v in range(first, n_features):
                parent.append(p)
                var.append(v)
                exponent.append(exponent[p] + 1 if v == var[p] else 1)
                next_level.append(len(parent) - 1)
        level = next_level
    return (np.array(parent, dtype=np.intc), np.array(var, dtype=np.intc),
            np.array(exponent, dtype=np.intc))


cdef class TaylorBank(FeatureBank):
    """The degree-M Taylor features of one Gaussian kernel per bandwidth in `sigmas`."""

    def __init__(self, int n_features, int degree, sigmas):
        sigmas = np.ascontiguousarray(sigmas, dtype=np.float64).reshape(-1)
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        if degree < 0:
            raise ValueError(f"degree must be >= 0, got {degree}")
        if sigmas.shape[0] < 1 or not np.all(np.isfinite(sigmas)) or not np.all(sigmas > 0):
            raise ValueError(f"sigmas must be finite and > 0, got {sigmas}")
        parent, var, exponent = taylor_tables(n_features, degree)
        self.n_kernels = sigmas.shape[0]
        self.n_features = n_features
        self.n_outputs = parent.shape[0]
        self.degree = degree
        self.parent = parent
        self.var = var
        safe = np.maximum(exponent, 1).astype(np.float64)
        self.coef = np.ascontiguousarray(1.0 / (sigmas[:, None] * np.sqrt(safe)[None, :]))
        self.half_inv_var = 0.5 / sigmas ** 2

    @property
    def sigmas(self):
        """(n_kernels,) the bandwidths."""
        return np.sqrt(0.5 / np.asarray(self.half_inv_var))

    @property
    def exponents(self):
        """(r, d) integer exponents k of every feature, in the order of the features."""
        parent, var = np.asarray(self.parent), np.asarray(self.var)
        out = np.zeros((self.n_outputs, self.n_features), dtype=np.intc)
        for j in range(1, self.n_outputs):
            out[j] = out[parent[j]]
            out[j, var[j]] += 1
        return out

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        cdef int j
        cdef double sq = 0.0
        cdef const int* parent = &self.parent[0]
        cdef const int* var = &self.var[0]
        cdef const double* coef = &self.coef[k, 0]
        for j in range(self.n_features):
            sq += x[j] * x[j]
        z[0] = exp(-sq * self.half_inv_var[k])
        for j in range(1, self.n_outputs):
            z[j] = z[parent[j]] * x[var[j]] * coef[j]
