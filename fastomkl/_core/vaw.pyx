"""Compiled Vovk-Azoury-Warmuth experts: one VAW (or online ridge) forecaster per kernel.

See vaw.pxd for the round (one dsymv in predict, one dsyr in learn) and for the drift guards.
"""
import numpy as np

from fastomkl._core.base cimport ExpertBank
from fastomkl._core.vaw cimport vaw_predict, vaw_update, VAW_MODE_VAW, VAW_MODE_RIDGE
from scipy.linalg.cython_blas cimport dsyr, dsymv
from scipy.linalg.cython_lapack cimport dpotrf, dpotri

MODES = {"vaw": VAW_MODE_VAW, "ridge": VAW_MODE_RIDGE}


def lower_to_full(P):
    """The full symmetric matrix(es) from arrays whose lower triangle (row >= column) is valid."""
    P = np.asarray(P)
    low = np.tril(P)
    return low + np.swapaxes(np.tril(P, -1), -1, -2)


cdef class VAWExperts(ExpertBank):
    """Per kernel k, a VAW forecaster on z_k (mode "vaw", the paper's definition) or online ridge
    regression (mode "ridge", what the paper's experiments ran).

    predict(k, z) = b_k^T P_k z / (1 + z^T P_k z) in mode "vaw", b_k^T P_k z in mode "ridge", with
    P_k = (lam I + sum_s w_s z_s z_s^T)^{-1} over past rounds and b_k = sum_s w_s y_s z_s.
    learn() adds the round with importance weight w (1 under full information) and returns the
    squared loss (f_k - y)^2 of the prediction.  Cost per expert and round: one dsymv and one dsyr
    (about 3 dim^2 flops); memory dim^2 + 3 dim doubles (twice the matrices with refresh_every > 0).
    """

    def __init__(self, int n_experts, int dim, double lam=1.0, mode="vaw", long refresh_every=0):
        if n_experts < 1 or dim < 1:
            raise ValueError(f"n_experts and dim must be >= 1, got {n_experts} and {dim}")
        if not lam > 0.0:
            raise ValueError(f"lam must be > 0, got {lam}")
        if mode not in MODES:
            raise ValueError(f"mode must be 'vaw' or 'ridge', got {mode!r}")
        if refresh_every < 0:
            raise ValueError(f"refresh_every must be >= 0 (0 = never), got {refresh_every}")
        self.n_experts = n_experts
        self.dim = dim
        self.lam = lam
        self.mode = MODES[mode]
        self.refresh_every = refresh_every
        eye = np.eye(dim)
        self.P = np.repeat((eye / lam)[None], n_experts, axis=0)
        if refresh_every > 0:
            self.S = np.repeat((eye * lam)[None], n_experts, axis=0)
            self._work = np.zeros((dim, dim))
        else:
            self.S = np.zeros((0, 0, 0))
            self._work = np.zeros((0, 0))
        self.b = np.zeros((n_experts, dim))
        self.n_updates = np.zeros(n_experts, dtype=np.int_)
        self.u = np.zeros((n_experts, dim))
        self.q = np.zeros(n_experts)

    @property
    def mode_name(self):
        return "vaw" if self.mode == VAW_MODE_VAW else "ridge"

    def _state_arrays(self):
        state = {"P": self.P, "b": self.b, "n_updates": self.n_updates}
        if self.refresh_every > 0:
            state["S"] = self.S
        return state

    def inverse(self):
        """(n_experts, dim, dim) copy of the inverses P_k (both triangles filled)."""
        return lower_to_full(self.P)

    def gram(self):
        """(n_experts, dim, dim) copy of S_k = P_k^{-1}, computed (or read, with refresh_every > 0)."""
        if self.refresh_every > 0:
            return lower_to_full(self.S)
        return np.linalg.inv(self.inverse())

    @property
    def targets(self):
        """(n_experts, dim) copy of b_k = sum_s w_s y_s z_s."""
        return np.array(self.b, copy=True)

    @property
    def coef_(self):
        """(n_experts, dim) current ridge weights P_k b_k (the terminal weights of the paper)."""
        return np.einsum("kij,kj->ki", self.inverse(), np.asarray(self.b))

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        return vaw_predict(self.dim, &self.P[k, 0, 0], &self.b[k, 0], z, &self.u[k, 0],
                           &self.q[k], self.mode)

    cdef double learn(self, int k, const double* x, const double* z, double f, double y,
                      long t, double weight) noexcept nogil:
        cdef char uplo = b'U'
        cdef int inc = 1, D = self.dim
        vaw_update(self.dim, &self.P[k, 0, 0], &self.b[k, 0], z, &self.u[k, 0], self.q[k], y,
                   weight)
        self.n_updates[k] += 1
        if self.refresh_every > 0:
            dsyr(&uplo, &D, &weight, <double*>z, &inc, &self.S[k, 0, 0], &D)
            if self.n_updates[k] % self.refresh_every == 0:
                self.refresh(k)
        return (f - y) * (f - y)

    cdef void refresh(self, int k) noexcept nogil:
        """P_k <- S_k^{-1} by Cholesky (dpotrf, dpotri) on a scratch copy; if S_k is numerically
        not positive definite the Sherman-Morrison P_k is kept."""
        cdef char uplo = b'U'
        cdef int D = self.dim, info = 0, i, j
        cdef double* w = &self._work[0, 0]
        cdef double* s = &self.S[k, 0, 0]
        cdef double* p = &self.P[k, 0, 0]
        for i in range(D):
            for j in range(i + 1):
                w[i * D + j] = s[i * D + j]
        dpotrf(&uplo, &D, w, &D, &info)
        if info != 0:
            return
        dpotri(&uplo, &D, w, &D, &info)
        if info != 0:
            return
        for i in range(D):
            for j in range(i + 1):
                p[i * D + j] = w[i * D + j]

    def refresh_now(self):
        """Recompute every P_k from S_k now (only with refresh_every > 0)."""
        if self.refresh_every <= 0:
            raise ValueError("refresh_now needs refresh_every > 0 (S is not kept otherwise)")
        cdef int k
        for k in range(self.n_experts):
            self.refresh(k)


def blas_floor(double[:, :, ::1] P, const double[:, ::1] z, long n_rounds):
    """Time reference: n_rounds x (one dsymv and one dsyr per matrix P[k] on z[k]), nothing else.

    This is the arithmetic floor of a round of VAWExperts (the same BLAS calls on the same sizes).
    The rank-one term is scaled so the matrices stay bounded; returns the last u[0] for use.
    """
    cdef int n = P.shape[0], D = P.shape[1], inc = 1, k
    cdef long t
    cdef char uplo = b'U'
    cdef double one = 1.0, zero = 0.0, alpha = -1e-9
    u = np.zeros(D)
    cdef double[::1] uv = u
    with nogil:
        for t in range(n_rounds):
            for k in range(n):
                dsymv(&uplo, &D, &one, &P[k, 0, 0], &D, <double*>&z[k, 0], &inc, &zero, &uv[0],
                      &inc)
                dsyr(&uplo, &D, &alpha, &uv[0], &inc, &P[k, 0, 0], &D)
    return u[0]
