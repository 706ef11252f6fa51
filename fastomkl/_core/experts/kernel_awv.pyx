"""Exact Kernel-AWV and online kernel ridge regression (Gaussian kernel), O(t^2) per round.

With K the Gram matrix of the t - 1 past inputs, L L^T = K + lam I (lower Cholesky factor) and
q = L^{-1} Y, a round at x_t is (Jezequel, Gaillard & Rudi 2019, section 2):

    k = (k(x_s, x_t))_{s<t},   s = L^{-1} k,   ridge = s.q,   e = k(x_t, x_t) - s.s  (>= 0)
    y_hat = ridge / (1 + e / lam)  (mode "vaw", Kernel-AWV)   or   ridge  (mode "ridge", KRR)
    then  L <- [[L, 0], [s^T, sqrt(k(x_t, x_t) + lam - s.s)]],   q <- [q; (y_t - s.q) / l]

(the AWV prediction is the KRR one shrunk by 1 + posterior variance / lam).  One triangular solve
(BLAS dtrsv) and a bordered append per round; memory O(t^2 + t d).

With ``max_samples`` m > 0 the model is exact Kernel-AWV on the last m inputs: once m are held,
the oldest leaves before a new one joins.  Removing input 1 leaves K' + lam I = (L L^T)[1:, 1:]
= L[1:, 1:] L[1:, 1:]^T + l l^T with l = L[1:, 0], so the new factor is a rank-one update of
L[1:, 1:] (Givens rotations, BLAS drot) and q' = L'^{-1} Y[1:], with Y = L q: O(m^2), the order
of a round.  m = 0 keeps every input.
"""
import warnings

import numpy as np

from libc.math cimport exp, sqrt
from libc.string cimport memcpy, memmove
from scipy.linalg.cython_blas cimport dtrsv, ddot

from fastomkl._core.checks import (require_inputs, require_names, require_shapes,
                                    require_triangular)

from fastomkl._core.base cimport ExpertBank, Round
from fastomkl._core.kernel_rows cimport gaussian_row
from fastomkl._core.linalg cimport cholupdate
from fastomkl._core.experts.nystrom import MODES
from fastomkl._core.inputs import BudgetWarning


cdef class KernelAWVExperts(ExpertBank):
    """One exact Kernel-AWV (or KRR) forecaster with a Gaussian kernel (module docstring).

    Made for full-information combiners: learn() ignores the importance weight (every round
    counts once).
    """

    cdef readonly double sigma, lam
    cdef readonly int mode, n_features
    cdef readonly long max_samples
    cdef long[::1] info                  # [samples learnt]
    cdef double[:, ::1] X                # (cap, d)
    cdef double[:, ::1] L                # (cap, cap) lower, L L^T = K + lam I
    cdef double[::1] q                   # (cap,) L^{-1} Y
    cdef double[::1] s                   # scratch: L^{-1} k of the last prediction
    cdef double ss, sq
    cdef bint warned                     # the BudgetWarning was given

    def __init__(self, int n_features, double sigma, double lam, mode, long max_samples,
                 int capacity=64):
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        if not (np.isfinite(sigma) and sigma > 0 and np.isfinite(lam) and lam > 0):
            raise ValueError(f"sigma and lam must be finite and > 0, got {sigma} and {lam}")
        if mode not in MODES:
            raise ValueError(f"mode must be in {sorted(MODES)}, got {mode!r}")
        self.n_experts = 1
        self.independent = True
        self.n_features = n_features
        self.sigma, self.lam = sigma, lam
        self.mode = MODES[mode]
        self.max_samples = max_samples
        self.info = np.zeros(1, dtype=np.int_)
        self.grows = True
        if max_samples > 0:
            capacity = min(capacity, max_samples)
        self._allocate(max(capacity, 1), False)

    def _allocate(self, long cap, bint keep=True):
        old = self.get_state() if keep else None
        self.X = np.zeros((cap, self.n_features))
        self.L = np.zeros((cap, cap))
        self.q = np.zeros(cap)
        self.s = np.zeros(cap)
        if old is not None:
            self._write(old)

    @property
    def capacity(self):
        """Samples the arrays have room for."""
        return self.X.shape[0]

    def reserve(self):
        """Room for one more sample: double the capacity, never beyond max_samples (a full
        window makes room by dropping its oldest input instead)."""
        cdef long cap = self.X.shape[0]
        if self.info[0] >= cap:
            self._allocate(min(2 * cap, self.max_samples) if self.max_samples > 0 else 2 * cap)

    def admit(self, long n_more):
        """Warns once (``BudgetWarning``) when the call of n_more rounds fills the window."""
        if self.max_samples > 0 and not self.warned and self.info[0] + n_more > self.max_samples:
            self.warned = True
            warnings.warn(f"exact Kernel-AWV reaches max_samples={self.max_samples}: from then "
                          f"on it learns on the last {self.max_samples} inputs, the oldest "
                          f"leaving as each new one joins (memory and cost per sample stay "
                          f"flat; max_samples=None keeps every input)", BudgetWarning,
                          stacklevel=2)

    cdef bint needs_room(self) noexcept nogil:
        return self.info[0] >= self.X.shape[0] and not self.window_full()

    cdef bint window_full(self) noexcept nogil:
        return self.max_samples > 0 and self.info[0] >= self.max_samples

    @property
    def budget_reached(self):
        """True once the window holds max_samples inputs."""
        return bool(self.window_full())

    cdef void drop_oldest(self) noexcept nogil:
        """Remove the first input: L' = cholupdate(L[1:, 1:], L[1:, 0]), q' = L'^{-1} (L q)[1:]
        (module docstring).  Uses s as scratch (the caller predicts again after)."""
        cdef int n = self.info[0], m = n - 1, ld = self.L.shape[0], one = 1, i, width
        cdef double* L = &self.L[0, 0]
        cdef double* v = &self.s[0]
        cdef char up = b'U', tr = b'T', no = b'N'
        for i in range(n - 1, 0, -1):           # Y = L q in place, last row first (row i reads
            width = i + 1                       # q[0..i], not yet overwritten); Y[0] leaves
            self.q[i] = ddot(&width, &L[i * ld], &one, &self.q[0], &one)
        memmove(&self.q[0], &self.q[1], m * sizeof(double))
        for i in range(1, n):                   # l = L[1:, 0], then L[1:, 1:] moved up-left
            v[i - 1] = L[i * ld]                # (old row i - 1 is nonzero in columns < i only:
            memmove(&L[(i - 1) * ld], &L[i * ld + 1], i * sizeof(double))   # all overwritten)
        cholupdate(m, L, ld, ld, v)             # L' L'^T = L[1:, 1:] L[1:, 1:]^T + l l^T
        dtrsv(&up, &tr, &no, &m, L, &ld, &self.q[0], &one)
        memmove(&self.X[0, 0], &self.X[1, 0], m * self.X.shape[1] * sizeof(double))
        self.info[0] = m

    @property
    def n_samples(self):
        return int(self.info[0])

    def factor(self):
        """(t, t) copy of the lower Cholesky factor of K + lam I."""
        n = self.info[0]
        return np.array(np.asarray(self.L)[:n, :n])

    def get_state(self):
        n = int(self.info[0])
        return {"info": np.array(self.info, dtype=np.int64), "X": np.array(self.X[:n]),
                "L": np.array(np.asarray(self.L)[:n, :n]), "q": np.array(self.q[:n]),
                "n_rejected": np.array(self.n_rejected, dtype=np.int64)}

    def _write(self, state):
        n = int(state["info"][0])
        np.asarray(self.X)[:n] = state["X"]
        np.asarray(self.L)[:n, :n] = state["L"]
        np.asarray(self.q)[:n] = state["q"]
        self.info[0] = n

    def check_state(self, state):
        """ValueError unless `state` is consistent: sizes match the count, finite values, L lower
        triangular with the magnitudes its equations give: each row's squared norm is
        k(x_i, x_i) + lam = 1 + lam, and each diagonal entry's square a Schur complement of
        K + lam I, at least lam up to rounding (a tiny diagonal or a huge entry would make the next triangular
        solve overflow)."""
        require_names(self, state, {"info", "X", "L", "q", "n_rejected"})
        state, _ = self._split_counter(state)
        info = np.asarray(state["info"])
        if info.dtype != np.int64 or info.shape != (1,) or info[0] < 0:
            raise ValueError("KernelAWVExperts state 'info' must be int64 [samples >= 0]")
        n = int(info[0])
        if self.max_samples > 0 and n > self.max_samples:
            raise ValueError(f"KernelAWVExperts state holds {n} samples, more than max_samples="
                             f"{self.max_samples}")
        require_shapes(self, state, {"X": (n, self.n_features), "L": (n, n), "q": (n,)})
        require_triangular(self, state, "L", "lower")
        require_inputs(self, "X", state["X"])
        L = np.asarray(state["L"])
        # (rounding in 1 + lam - s.s: 1e-12 absolute, for a lam near the float resolution)
        if n and not (np.diag(L) ** 2 >= 0.5 * self.lam - 1e-12).all():
            raise ValueError("KernelAWVExperts state 'L' must have a diagonal >= sqrt(lam / 2)")
        if n and not np.allclose(np.einsum("ij,ij->i", L, L), 1.0 + self.lam, rtol=1e-6,
                                 atol=0.0):
            raise ValueError("KernelAWVExperts state 'L' must have rows of squared norm 1 + lam")

    def set_state(self, state):
        self.check_state(state)
        self.info[0] = 0
        self._allocate(max(int(state["info"][0]), 1), False)
        self._write(state)
        self.n_rejected = int(state["n_rejected"])
        self.warned = self.window_full()

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef int n = self.info[0], j, i, d = self.n_features, one = 1, ld = self.L.shape[0]
        cdef double sq, diff, scale = 0.5 / (self.sigma * self.sigma), ridge, e
        cdef char up = b'U', tr = b'T', no = b'N'
        if n == 0:
            self.ss = 0.0
            self.sq = 0.0
            return 0.0
        gaussian_row(&self.X[0, 0], n, self.X.shape[1], d, x, scale, &self.s[0])
        # row-major lower L is column-major upper L^T: L s = k is (L^T)^T s = k
        dtrsv(&up, &tr, &no, &n, &self.L[0, 0], &ld, &self.s[0], &one)
        self.ss = ddot(&n, &self.s[0], &one, &self.s[0], &one)
        self.sq = ddot(&n, &self.s[0], &one, &self.q[0], &one)
        if self.mode == 1:
            return self.sq
        e = 1.0 - self.ss
        if e < 0.0:
            e = 0.0
        return self.sq / (1.0 + e / self.lam)

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double y = ctx.y
        cdef int n, j
        cdef double l2, l, qn
        if self.window_full():                 # the oldest leaves; x's row against the rest
            self.drop_oldest()
            self.predict(k, x, z)
        n = self.info[0]
        l2 = 1.0 + self.lam - self.ss
        # l2 >= lam in exact arithmetic; below lam / 2 (beyond rounding) the stored inputs and
        # factor disagree: refuse, as check_state would refuse the factor it leads to
        if not l2 >= 0.5 * self.lam - 1e-12:
            self.n_rejected += 1
            return (f - y) * (f - y)
        l = sqrt(l2)
        qn = (y - self.sq) / l
        if not (qn == qn and -1e300 < qn < 1e300):
            self.n_rejected += 1
            return (f - y) * (f - y)
        for j in range(n):
            self.L[n, j] = self.s[j]
        self.L[n, n] = l
        self.q[n] = qn
        memcpy(&self.X[n, 0], x, self.n_features * sizeof(double))
        self.info[0] = n + 1
        return (f - y) * (f - y)
