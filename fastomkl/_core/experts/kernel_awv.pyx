"""Exact Kernel-AWV and online kernel ridge regression (Gaussian kernel), O(t^2) per round.

With K the Gram matrix of the t - 1 past inputs, L L^T = K + lam I (lower Cholesky factor) and
q = L^{-1} Y, a round at x_t is (Jezequel, Gaillard & Rudi 2019, section 2):

    k = (k(x_s, x_t))_{s<t},   s = L^{-1} k,   ridge = s.q,   e = k(x_t, x_t) - s.s  (>= 0)
    y_hat = ridge / (1 + e / lam)  (mode "vaw", Kernel-AWV)   or   ridge  (mode "ridge", KRR)
    then  L <- [[L, 0], [s^T, sqrt(k(x_t, x_t) + lam - s.s)]],   q <- [q; (y_t - s.q) / l]

(the AWV prediction is the KRR one shrunk by 1 + posterior variance / lam).  One triangular solve
and a bordered append per round; memory O(t^2 + t d).

With ``max_samples`` m > 0 the model is exact Kernel-AWV on the last m inputs: once m are held,
the oldest leaves before a new one joins.  Removing input 1 leaves K' + lam I = (L L^T)[1:, 1:]
= L[1:, 1:] L[1:, 1:]^T + l l^T with l = L[1:, 0], so the new factor is a rank-one update of
L[1:, 1:] (Givens rotations), and the rotations that make it also turn q = L^{-1} Y into
q' = L'^{-1} Y[1:] and the round's s = L^{-1} k into L'^{-1} k[1:] (fastomkl_chol_drop_first):
one pass over the factor, O(m^2), as a round's solve; where a new solve for q and for s, and
Y = L q, would take three passes more.  m = 0 keeps every input.

With several ridges lam_1 ... lam_r the bank holds r such forecasters on the same inputs (expert i
the one of lam_i, a factor L_i and q_i each): the kernel row k of a sample is computed once
(``prepare``) and each expert solves its own system with it, so r ridges cost r triangular solves
a round but one kernel row.  A combiner weighs them (KernelAWV's lam="ensemble").
"""
import numpy as np

from libc.math cimport exp, sqrt
from libc.string cimport memcpy, memmove
from scipy.linalg.cython_blas cimport ddot

from fastomkl._core.checks import (require_inputs, require_names, require_shapes,
                                    require_triangular)

from fastomkl._core.base cimport ExpertBank, Round
from fastomkl._core.kernel_rows cimport gaussian_row
from fastomkl._core.linalg cimport fastomkl_chol_drop_first, fastomkl_solve_lower
from fastomkl._core.experts.nystrom import MODES


def _chol_drop_first(double[:, ::1] L, double[::1] u, w, int n):
    """The compiled downdate on the leading n x n block of L (row length L.shape[1]), in place
    (tests): L[:n-1, :n-1] becomes the factor of (L L^T)[1:n, 1:n], u[:n-1] and w[:n-1] (w may
    be None) the solves L'^{-1} b[1:] of b = L u and L w."""
    cdef double[::1] w_view = None if w is None else w
    if not (1 <= n <= L.shape[0] and n <= L.shape[1] and n <= u.shape[0]
            and (w is None or n <= w_view.shape[0])):
        raise ValueError(f"n = {n} does not fit L {L.shape[0]} x {L.shape[1]} and the vectors")
    cs = np.zeros(2 * n)
    cdef double[::1] cs_view = cs
    fastomkl_chol_drop_first(n, &L[0, 0], <int>L.shape[1], &u[0],
                             NULL if w is None else &w_view[0], &cs_view[0])


cdef class KernelAWVExperts(ExpertBank):
    """Exact Kernel-AWV (or KRR) forecasters with a Gaussian kernel, one per ridge of `lams`
    (module docstring), expert i the one of lams[i].

    Made for full-information combiners: learn() ignores the importance weight (every round
    counts once), and the experts share their inputs, so they learn together (in expert 0's
    learn): a round that one expert refuses (n_rejected) is refused by all.
    """

    cdef readonly double sigma
    cdef readonly double[::1] lams
    cdef readonly int mode, n_features
    cdef readonly long max_samples
    cdef long[::1] info                  # [samples learnt]
    cdef double[:, ::1] X                # (cap, d)
    cdef double[:, :, ::1] L             # (r, cap, cap) lower, L_i L_i^T = K + lams[i] I
    cdef double[:, ::1] q                # (r, cap) L_i^{-1} Y
    cdef double[::1] krow                # scratch: the kernel row of this sample on X
    cdef double[:, ::1] s                # scratch: L_i^{-1} k of the last prediction
    cdef double[::1] ss, sq              # scratch: s_i.s_i, s_i.q_i
    cdef double[::1] scratch             # scratch: each expert's new diagonal entry, then q entry
    cdef double[::1] rotations           # scratch: the (c, s) of a downdate's rotations

    def __init__(self, int n_features, double sigma, lams, mode, long max_samples,
                 int capacity=64):
        lams = np.atleast_1d(np.asarray(lams, dtype=np.float64))
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        if lams.ndim != 1 or len(lams) == 0:
            raise ValueError("lams must give one ridge or more")
        if not (np.isfinite(sigma) and sigma > 0 and np.isfinite(lams).all() and (lams > 0).all()):
            raise ValueError(f"sigma and every lam must be finite and > 0, got {sigma} and "
                             f"{lams.tolist()}")
        if mode not in MODES:
            raise ValueError(f"mode must be in {sorted(MODES)}, got {mode!r}")
        self.n_experts = self.per_kernel = len(lams)
        self.independent = len(lams) == 1
        self.scratch = np.zeros(2 * len(lams))
        self.n_features = n_features
        self.sigma = sigma
        self.lams = lams
        self.mode = MODES[mode]
        self.max_samples = max_samples
        self.info = np.zeros(1, dtype=np.int_)
        self.ss = np.zeros(len(lams))
        self.sq = np.zeros(len(lams))
        self.grows = True
        if max_samples > 0:
            capacity = min(capacity, max_samples)
        self._allocate(max(capacity, 1), False)

    def _allocate(self, long cap, bint keep=True):
        old = self.get_state() if keep else None
        r = self.n_experts
        self.X = np.zeros((cap, self.n_features))
        self.L = np.zeros((r, cap, cap))
        self.q = np.zeros((r, cap))
        self.krow = np.zeros(cap)
        self.s = np.zeros((r, cap))
        self.rotations = np.zeros(2 * cap)
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
            self.budget_warning(f"exact Kernel-AWV reaches max_samples={self.max_samples}: "
                                f"from then on it learns on the last {self.max_samples} inputs, "
                                f"the oldest leaving as each new one joins (memory and cost per "
                                f"sample stay flat; max_samples=None keeps every input)")

    cdef bint needs_room(self) noexcept nogil:
        return self.info[0] >= self.X.shape[0] and not self.window_full()

    cdef bint window_full(self) noexcept nogil:
        return self.max_samples > 0 and self.info[0] >= self.max_samples

    @property
    def budget_reached(self):
        """True once the window holds max_samples inputs."""
        return bool(self.window_full())

    cdef void drop_oldest(self, int i) noexcept nogil:
        """Expert i forgets the first input: its factor becomes that of the other inputs, and
        q[i] and this round's s[i] (the solve of the prediction) those of the new factor, with
        ss[i] and sq[i] (module docstring).  The inputs X stay (learn_all moves them once every
        expert has forgotten)."""
        cdef int n = self.info[0], m = n - 1, ld = self.L.shape[2], one = 1
        fastomkl_chol_drop_first(n, &self.L[i, 0, 0], ld, &self.q[i, 0], &self.s[i, 0],
                                 &self.rotations[0])
        self.ss[i] = ddot(&m, &self.s[i, 0], &one, &self.s[i, 0], &one)
        self.sq[i] = ddot(&m, &self.s[i, 0], &one, &self.q[i, 0], &one)

    @property
    def n_samples(self):
        return int(self.info[0])

    def factor(self, int i=0):
        """(t, t) copy of the lower Cholesky factor of K + lams[i] I."""
        n = self.info[0]
        return np.array(np.asarray(self.L)[i, :n, :n])

    def get_state(self):
        """The inputs, and the experts' factors and q stacked: 'L' (r t, t) and 'q' (r t,), the
        rows of expert i from i t (one expert: the factor and q themselves)."""
        n = int(self.info[0])
        r = self.n_experts
        return {"info": np.array(self.info, dtype=np.int64), "X": np.array(self.X[:n]),
                "L": np.array(np.asarray(self.L)[:, :n, :n]).reshape(r * n, n),
                "q": np.array(np.asarray(self.q)[:, :n]).reshape(r * n),
                "n_rejected": np.array(self.n_rejected, dtype=np.int64)}

    def _write(self, state):
        n = int(state["info"][0])
        r = self.n_experts
        np.asarray(self.X)[:n] = state["X"]
        np.asarray(self.L)[:, :n, :n] = np.asarray(state["L"]).reshape(r, n, n)
        np.asarray(self.q)[:, :n] = np.asarray(state["q"]).reshape(r, n)
        self.info[0] = n

    def check_state(self, state):
        """ValueError unless `state` is consistent: sizes match the count, finite values, each
        expert's L lower triangular with the magnitudes its equations give: each row's squared
        norm is k(x_i, x_i) + lam = 1 + lam, and each diagonal entry's square a Schur complement
        of K + lam I, at least lam up to rounding (a tiny diagonal or a huge entry would make the
        next triangular solve overflow)."""
        require_names(self, state, {"info", "X", "L", "q", "n_rejected"})
        state, _ = self._split_counter(state)
        info = np.asarray(state["info"])
        if info.dtype != np.int64 or info.shape != (1,) or info[0] < 0:
            raise ValueError("KernelAWVExperts state 'info' must be int64 [samples >= 0]")
        n = int(info[0])
        r = self.n_experts
        if self.max_samples > 0 and n > self.max_samples:
            raise ValueError(f"KernelAWVExperts state holds {n} samples, more than max_samples="
                             f"{self.max_samples}")
        require_shapes(self, state, {"X": (n, self.n_features), "L": (r * n, n), "q": (r * n,)})
        require_inputs(self, "X", state["X"])
        factors = np.asarray(state["L"]).reshape(r, n, n)
        for i in range(r):
            L, lam = factors[i], self.lams[i]
            require_triangular(self, {"L": L}, "L", "lower")
            # (rounding in 1 + lam - s.s: 1e-12 absolute, for a lam near the float resolution)
            if n and not (np.diag(L) ** 2 >= 0.5 * lam - 1e-12).all():
                raise ValueError("KernelAWVExperts state 'L' must have a diagonal >= "
                                 "sqrt(lam / 2)")
            if n and not np.allclose(np.einsum("ij,ij->i", L, L), 1.0 + lam, rtol=1e-6,
                                     atol=0.0):
                raise ValueError("KernelAWVExperts state 'L' must have rows of squared norm "
                                 "1 + lam")

    def set_state(self, state):
        self.check_state(state)
        self.info[0] = 0
        self._allocate(max(int(state["info"][0]), 1), False)
        self._write(state)
        self.n_rejected = int(state["n_rejected"])
        self.warned = self.window_full()

    cdef void prepare(self, const double* x) noexcept nogil:
        cdef int n = self.info[0]
        if n > 0:
            gaussian_row(&self.X[0, 0], n, self.X.shape[1], self.n_features, x,
                         0.5 / (self.sigma * self.sigma), &self.krow[0])

    cdef double solve(self, int i, int n, const double* k) noexcept nogil:
        """Expert i's prediction from the kernel row k on its first n inputs (s[i], ss, sq)."""
        cdef int one = 1, ld = self.L.shape[2]
        cdef double e
        if n == 0:
            self.ss[i] = 0.0
            self.sq[i] = 0.0
            return 0.0
        memcpy(&self.s[i, 0], k, n * sizeof(double))
        fastomkl_solve_lower(n, &self.L[i, 0, 0], ld, &self.s[i, 0])
        self.ss[i] = ddot(&n, &self.s[i, 0], &one, &self.s[i, 0], &one)
        self.sq[i] = ddot(&n, &self.s[i, 0], &one, &self.q[i, 0], &one)
        if self.mode == 1:
            return self.sq[i]
        e = 1.0 - self.ss[i]
        if e < 0.0:
            e = 0.0
        return self.sq[i] / (1.0 + e / self.lams[i])

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        return self.solve(k, self.info[0], &self.krow[0])

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        # the bank learns as one, in expert 0's learn (the engine runs every prediction of the
        # round before any learn: the bank is not independent when it has several experts)
        cdef double y = ctx.y
        if k == 0:
            self.learn_all(x, y)
        return (f - y) * (f - y)

    cdef void learn_all(self, const double* x, double y) noexcept nogil:
        cdef int r = self.n_experts, n = self.info[0], i, j
        cdef double l2
        if self.window_full():                 # the oldest leaves (x's solves with it)
            for i in range(r):
                self.drop_oldest(i)
            n -= 1
            memmove(&self.X[0, 0], &self.X[1, 0], n * self.X.shape[1] * sizeof(double))
            self.info[0] = n
        for i in range(r):
            l2 = 1.0 + self.lams[i] - self.ss[i]
            # l2 >= lam in exact arithmetic; below lam / 2 (beyond rounding) the stored inputs
            # and factor disagree: refuse, as check_state would refuse the factor it leads to
            if not l2 >= 0.5 * self.lams[i] - 1e-12:
                self.n_rejected += 1
                return
            self.scratch[i] = sqrt(l2)
            self.scratch[r + i] = (y - self.sq[i]) / self.scratch[i]
            if not (self.scratch[r + i] == self.scratch[r + i]
                    and -1e300 < self.scratch[r + i] < 1e300):
                self.n_rejected += 1
                return
        for i in range(r):
            for j in range(n):
                self.L[i, n, j] = self.s[i, j]
            self.L[i, n, n] = self.scratch[i]
            self.q[i, n] = self.scratch[r + i]
        memcpy(&self.X[n, 0], x, self.n_features * sizeof(double))
        self.info[0] = n + 1
