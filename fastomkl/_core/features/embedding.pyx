"""A fixed Nystrom embedding: z(x) = L^{-1} k_C(x) with L L^T = K_CC (+ jitter), for centres C known
in advance (PKAWV with beforehand-known inputs, Corollary 8 of Jezequel, Gaillard & Rudi 2019).

z(x).z(x') = k_C(x)^T K_CC^{-1} k_C(x') is the Nystrom approximation of the kernel, and the squared
norm of w in these coordinates is the RKHS norm of sum_j alpha_j k(c_j, .), so linear AWV on z is
Kernel-AWV projected onto span{k(c_j, .)}.  Cost O(m d + m^2) per sample (kernel row and one
triangular solve).
"""
import numpy as np

from fastomkl._core.checks import require_inputs

from fastomkl._core.base cimport FeatureBank
from libc.math cimport exp
from fastomkl._core.linalg cimport fastomkl_solve_lower


cdef class NystromFeatures(FeatureBank):
    """z(x) = L^{-1} (exp(-||c_j - x||^2 / (2 sigma^2)))_j for fixed centres c_j."""

    cdef readonly double sigma
    cdef double[:, ::1] centres
    cdef double[:, ::1] L                 # lower, L L^T = K_CC + jitter I

    def __init__(self, centres, double sigma, double jitter=1e-10):
        centres = np.ascontiguousarray(centres, dtype=np.float64)
        if centres.ndim != 2 or centres.shape[0] < 1 or not np.all(np.isfinite(centres)):
            raise ValueError("centres must be a non-empty finite 2-D array (m, n_features)")
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be finite and > 0, got {sigma}")
        sq = ((centres[:, None, :] - centres[None, :, :]) ** 2).sum(-1)
        K = np.exp(-sq / (2.0 * sigma ** 2))
        try:
            L = np.linalg.cholesky(K + jitter * np.trace(K) / K.shape[0] * np.eye(K.shape[0]))
        except np.linalg.LinAlgError:
            raise ValueError("the centres' kernel matrix is not positive definite even with the "
                             "jitter (duplicate centres?)") from None
        self.n_kernels = 1
        self.n_features = centres.shape[1]
        self.n_outputs = centres.shape[0]
        self.sigma = sigma
        self.centres = centres
        self.L = np.ascontiguousarray(L)

    def _state_arrays(self):
        return {"centres": np.asarray(self.centres), "factor": np.asarray(self.L)}

    def check_state(self, state):
        FeatureBank.check_state(self, state)
        L = np.asarray(state["factor"])
        if not (np.all(np.isfinite(L)) and np.all(np.isfinite(np.asarray(state["centres"])))):
            raise ValueError("NystromFeatures state must be finite")
        if np.any(np.triu(L, 1) != 0) or np.any(np.diag(L) <= 0):
            raise ValueError("NystromFeatures state 'factor' must be lower triangular with a "
                             "positive diagonal")
        # row i of L has squared norm k(c_i, c_i) + jitter = 1 + jitter, jitter in [0, 1]
        rows = np.einsum("ij,ij->i", L, L)
        if not ((rows >= 1.0 - 1e-6) & (rows <= 2.0 + 1e-6)).all():
            raise ValueError("NystromFeatures state 'factor' must have rows of squared norm "
                             "1 + jitter (a Cholesky factor of K_CC + jitter I)")
        require_inputs(self, "centres", state["centres"])

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        cdef int j, i, m = self.n_outputs, d = self.n_features
        cdef double sq, diff, scale = 0.5 / (self.sigma * self.sigma)
        for j in range(m):
            sq = 0.0
            for i in range(d):
                diff = self.centres[j, i] - x[i]
                sq += diff * diff
            z[j] = exp(-sq * scale)
        fastomkl_solve_lower(m, &self.L[0, 0], m, z)


cdef class IdentityFeatures(FeatureBank):
    """z(x) = x: for inputs that are already feature vectors."""

    def __init__(self, int n_features):
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        self.n_kernels = 1
        self.n_features = n_features
        self.n_outputs = n_features

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        cdef int j
        for j in range(self.n_features):
            z[j] = x[j]


cdef class NullFeatures(FeatureBank):
    """n_kernels empty representations of x (n_outputs = 0)."""

    def __init__(self, int n_kernels, int n_features):
        self.n_kernels = n_kernels
        self.n_features = n_features
        self.n_outputs = 0

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        pass
