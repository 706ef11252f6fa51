"""Pros-N-KONS (Calandriello, Lazaric & Valko, NeurIPS 2017): kernel online Newton steps in the
Nystrom embedding of a KORS dictionary, restarted whenever the dictionary grows (the baseline of
Jezequel, Gaillard & Rudi 2019, as their experiments run it).

Embedding phi(x) = R^{-T} k_I(x) with R^T R = K_II (any factor gives the same predictions: the
Newton steps start from the isotropic alpha I).  With A^{-1} kept by Sherman-Morrison, the slab
|w.phi_t| <= C and h(z) = sign(z) max(|z| - C, 0), a round is

    predict:  y_hat = clip(phi.v, -C, C)                 v = w_{t-1} - A^{-1} g_{t-1}
    learn:    w = v - h(phi.v) / (phi^T A^{-1} phi) A^{-1} phi     (A-norm projection on the slab)
              g = 2 (w.phi - y) phi;   A <- A + g g^T / 16;   v <- w - A^{-1} g
              KORS (regulariser alpha): if x_t joins, R and the KORS factor are bordered and the
              learner restarts (A^{-1} = I / alpha, w = v = 0)

which is the proper KONS order (w_t projected on x_t's slab before predicting); the authors' code
predicts with the previous round's w.  An insertion numerically dependent on the dictionary
(1 - phi.phi <= 1e-10) is refused and counted in n_refused; a Newton step whose
Sherman-Morrison denominator fails ``sherman_morrison_ok`` (1 + g.A^{-1}g / 16 beyond 1e12, where
the step is rounding) is refused and counted in n_rejected.  O(m d + m^2) per round, O(m^2) on a
restart; memory O(m^2 + m d).

Budget.  With ``max_centres`` m_max > 0 the dictionary is frozen once it holds m_max centres: no
KORS draw is made from then on (nor its O(m^2) probability), and the learner keeps its Newton
steps in that embedding without restarting, so memory and the cost per round stay flat.  0: no
limit (the paper's setting).
"""
import numpy as np

from libc.math cimport sqrt, fabs
from libc.string cimport memcpy

from fastomkl._core.checks import (positive_definite, require_names, require_shapes,
                                    require_triangular)
from fastomkl._core.experts.nystrom import KORS_WEIGHTS

from fastomkl._core.base cimport DictionaryBank, Round
from fastomkl._core.kernel_rows cimport gaussian_row
from fastomkl._core.kors cimport DEPENDENT, kors_append, kors_probability
from fastomkl._core.linalg cimport fastomkl_dot, sherman_morrison_ok, solve_upper_transposed


cdef class ProsNKonsExperts(DictionaryBank):
    """One Pros-N-KONS learner on the square loss (module docstring).

    Made for full-information combiners: learn() ignores the importance weight (every round
    counts once).
    """

    cdef readonly double sigma, alpha, beta, eps, clip
    cdef readonly int weights_kind, n_features
    cdef readonly long max_centres        # 0: no limit
    cdef public long n_refused
    cdef long[::1] info                   # [rounds learnt, dictionary size]
    cdef double[:, ::1] centres, R, L, A  # (cap, d), (cap, cap) x 3; A holds A^{-1} (full)
    cdef double[::1] S, w, v              # (cap,)
    cdef double[::1] a, phi, uA, tmp      # scratch

    def __init__(self, int n_features, double sigma, double alpha, double beta, double eps,
                 double clip, kors_weights, long max_centres=0, int capacity=16):
        for name, value in (("sigma", sigma), ("alpha", alpha), ("beta", beta), ("C", clip)):
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be finite and > 0, got {value}")
        if not (np.isfinite(eps) and eps >= 0) or kors_weights not in KORS_WEIGHTS:
            raise ValueError(f"eps must be >= 0 and kors_weights in {sorted(KORS_WEIGHTS)}")
        if max_centres < 0:
            raise ValueError(f"max_centres must be >= 0 (0: no limit), got {max_centres}")
        self.n_experts = 1
        self.independent = True
        self.n_features = n_features
        self.sigma, self.alpha, self.beta, self.eps, self.clip = sigma, alpha, beta, eps, clip
        self.weights_kind = KORS_WEIGHTS[kors_weights]
        self.max_centres = max_centres
        self.warned = False
        self.grows = True
        self.info = np.zeros(2, dtype=np.int_)
        self._allocate(max(min(capacity, max_centres) if max_centres > 0 else capacity, 1),
                       False)

    def _allocate(self, long cap, bint keep=True):
        old = self.get_state() if keep else None
        self.centres = np.zeros((cap, self.n_features))
        self.R, self.L, self.A = np.zeros((cap, cap)), np.zeros((cap, cap)), np.zeros((cap, cap))
        self.S, self.w, self.v = np.zeros(cap), np.zeros(cap), np.zeros(cap)
        self.a, self.phi, self.uA, self.tmp = np.zeros(cap), np.zeros(cap), np.zeros(cap), np.zeros(cap)
        if old is not None:
            self._write(old)

    def reserve(self):
        cdef long cap = self.R.shape[0]
        if self.info[1] >= cap:
            self._allocate(min(2 * cap, self.max_centres) if self.max_centres > 0 else 2 * cap)

    cdef bint needs_room(self) noexcept nogil:
        return self.info[1] >= self.R.shape[0] and not self.frozen()

    cdef bint frozen(self) noexcept nogil:
        return self.max_centres > 0 and self.info[1] >= self.max_centres

    def frozen_message(self):
        return (f"the Pros-N-KONS dictionary is frozen at max_centres={self.max_centres} "
                f"centres: from then on the Newton steps go on in this embedding, with flat "
                f"memory and cost per sample (max_centres=None lets it grow for ever)")

    @property
    def n_centres(self):
        return int(self.info[1])

    def _live(self):
        """Name -> (whole array, whether it is m x m (else its first axis is m))."""
        return {"centres": (np.asarray(self.centres), False), "R": (np.asarray(self.R), True),
                "L": (np.asarray(self.L), True), "A": (np.asarray(self.A), True),
                "S": (np.asarray(self.S), False), "w": (np.asarray(self.w), False),
                "v": (np.asarray(self.v), False)}

    def get_state(self):
        m = int(self.info[1])
        state = {"info": np.array(self.info, dtype=np.int64),
                 "n_refused": np.array(self.n_refused, dtype=np.int64),
                 "n_rejected": np.array(self.n_rejected, dtype=np.int64)}
        for name, (array, square) in self._live().items():
            state[name] = np.array(array[:m, :m] if square else array[:m])
        return state

    def _write(self, state):
        m = int(state["info"][1])
        for name, (array, square) in self._live().items():
            if square:
                array[:m, :m] = state[name]
            else:
                array[:m] = state[name]
        self.info[0], self.info[1] = int(state["info"][0]), m
        self.n_refused = int(state["n_refused"])

    def check_state(self, state):
        """ValueError unless `state` is consistent: sizes match the dictionary size, finite values,
        R and L upper triangular with a positive diagonal, A^{-1} symmetric with a positive
        diagonal, KORS weights >= 1."""
        require_names(self, state, {"info", "centres", "R", "L", "A", "S", "w", "v", "n_refused",
                                    "n_rejected"})
        state, _ = self._split_counter(state)
        info = np.asarray(state["info"])
        if info.dtype != np.int64 or info.shape != (2,) or not 0 <= info[1] <= info[0]:
            raise ValueError("ProsNKonsExperts state 'info' must be int64 [rounds, centres] with "
                             "0 <= centres <= rounds")
        m, d = int(info[1]), self.n_features
        if self.max_centres > 0 and m > self.max_centres:
            raise ValueError(f"ProsNKonsExperts state has {m} centres, beyond max_centres="
                             f"{self.max_centres}")
        require_shapes(self, state, {"centres": (m, d), "R": (m, m), "L": (m, m), "A": (m, m),
                                     "S": (m,), "w": (m,), "v": (m,)})
        require_triangular(self, state, "R", "upper")
        require_triangular(self, state, "L", "upper")
        A = np.asarray(state["A"])
        if np.any(A != A.T) or np.any(np.diag(A) <= 0):
            raise ValueError("ProsNKonsExperts state 'A' must be symmetric with a positive diagonal")
        # A^-1 = (alpha I + sum g g^T / 16)^-1: positive definite, eigenvalues at most 1 / alpha
        if m and (np.diag(A).max() > (1.0 + 1e-6) / self.alpha
                  or not positive_definite(A)):
            raise ValueError("ProsNKonsExperts state 'A' must be positive definite with no "
                             "diagonal entry above 1 / alpha")
        # R^T R = K_II (Gaussian, unit diagonal): unit columns, and each diagonal entry's square
        # a Schur complement that admitted its centre only above 1e-10
        R = np.asarray(state["R"])
        if m and not (np.allclose(np.einsum("ij,ij->j", R, R), 1.0, rtol=1e-6, atol=0.0)
                      and (np.diag(R) ** 2 >= 0.5e-10).all()):
            raise ValueError("ProsNKonsExperts state 'R' must be a factor of K_II: unit columns "
                             "and a diagonal >= 7e-6")
        if np.any(np.asarray(state["S"]) < 1.0):
            raise ValueError("ProsNKonsExperts state 'S' (KORS weights) must be >= 1")
        refused = np.asarray(state["n_refused"])
        if refused.dtype != np.int64 or refused.shape != () or refused < 0:
            raise ValueError("ProsNKonsExperts state 'n_refused' must be a non-negative int64")

    def set_state(self, state):
        self.check_state(state)
        self.info[0] = self.info[1] = 0
        self._allocate(max(int(state["info"][1]), 1), False)
        self._write(state)
        self.n_rejected = int(state["n_rejected"])
        self.warned = self.frozen()

    def _prediction_arrays(self, ProsNKonsExperts twin):
        """predict reads the counts, the centres, R and v (L, A, S and w only matter to
        learning): the snapshots copy those bytes, where set_state would check the whole state
        again (a Cholesky factorisation of A) and allocate it anew at every publication."""
        if twin.R.shape[0] != self.R.shape[0]:
            twin._allocate(self.R.shape[0], False)
        return ({"info": self.info, "centres": self.centres, "R": self.R, "v": self.v},
                {"info": twin.info, "centres": twin.centres, "R": twin.R, "v": twin.v})

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef int m = self.info[1], ld = self.R.shape[0], j, i, d = self.n_features
        cdef double sq, diff, scale = 0.5 / (self.sigma * self.sigma), f = 0.0
        gaussian_row(&self.centres[0, 0], m, self.centres.shape[1], d, x, scale, &self.a[0])
        for j in range(m):
            self.phi[j] = self.a[j]
        if m == 0:
            return 0.0
        solve_upper_transposed(m, &self.R[0, 0], ld, &self.phi[0])
        for j in range(m):
            f += self.phi[j] * self.v[j]
        return f if fabs(f) <= self.clip else (self.clip if f > 0 else -self.clip)

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double y = ctx.y
        cdef int m = self.info[1], ld = self.R.shape[0], i, j
        cdef double delta = 0.0, proj = 0.0, excess, yp = 0.0, gc, q, shrink, p, rho2
        cdef double* row
        cdef double* u
        if m > 0:
            for i in range(m):               # uA = A^{-1} phi, by rows (A^{-1} is symmetric)
                q = fastomkl_dot(&self.A[i, 0], &self.phi[0], m)
                self.uA[i] = q
                delta += self.phi[i] * q
                proj += self.phi[i] * self.v[i]
            excess = fabs(proj) - self.clip
            excess = (excess if proj > 0 else -excess) if excess > 0 and delta > 0 else 0.0
            for i in range(m):
                self.w[i] = self.v[i] - excess / delta * self.uA[i] if excess != 0.0 else self.v[i]
                yp += self.w[i] * self.phi[i]
            gc = 2.0 * (yp - y)
            q = 0.25 * gc
            if not sherman_morrison_ok(1.0 + q * q * delta):
                self.n_rejected += 1                        # the Newton step would be rounding
            else:
                shrink = q * q / (1.0 + q * q * delta)      # A <- A + g g^T / 16, g = gc phi
                # every entry along its row: shrink (u_i u_j) is the very number
                # shrink (u_j u_i), so A^{-1} stays exactly symmetric, where mirroring one
                # triangle wrote down its columns (a cache line per entry: 5x the cost at m ~ 500)
                u = &self.uA[0]
                for i in range(m):
                    row = &self.A[i, 0]
                    for j in range(m):
                        row[j] -= shrink * (u[i] * u[j])
                for i in range(m):                          # v = w - A_new^{-1} g
                    self.v[i] = self.w[i] - gc * self.uA[i] / (1.0 + q * q * delta)
        self.info[0] += 1
        if self.frozen():
            return (f - y) * (f - y)
        p = kors_probability(m, &self.L[0, 0], ld, &self.S[0], &self.a[0], &self.tmp[0],
                             self.alpha, self.beta, self.eps)
        if ctx.rng.next_double(ctx.rng.state) < p:
            rho2 = 1.0
            for j in range(m):
                rho2 -= self.phi[j] * self.phi[j]
            if not rho2 > DEPENDENT:
                self.n_refused += 1
                return (f - y) * (f - y)
            for j in range(m):
                self.R[j, m] = self.phi[j]
            self.R[m, m] = sqrt(rho2)
            kors_append(m, &self.L[0, 0], ld, &self.S[0], &self.tmp[0], self.alpha, p,
                        self.weights_kind)
            memcpy(&self.centres[m, 0], x, self.n_features * sizeof(double))
            m += 1
            self.info[1] = m
            for i in range(m):                              # restart
                self.w[i] = 0.0
                self.v[i] = 0.0
                for j in range(m):
                    self.A[i, j] = 1.0 / self.alpha if i == j else 0.0
        return (f - y) * (f - y)
