"""PKAWV with a sequential Nystrom dictionary chosen by KORS (Jezequel, Gaillard & Rudi 2019, section
3.2 and Algorithm 2; KORS from Calandriello, Lazaric & Valko 2017).

The model lives in the span of k(x_j, .) over a dictionary I of past inputs, which only grows.  With
a = k_I(x_t) and M = K_{t,I}^T K_{t,I} + lam K_II (rows s <= t-1 of the kernel matrix against the
dictionary) and h = K_{t,I}^T Y:

    ridge  (mode "ridge", projected KRR):  y_hat = a^T M^{-1} h
    AWV    (mode "vaw", PKAWV):            y_hat = a^T (M + a a^T)^{-1} h = ridge / (1 + a^T M^{-1} a)

The Cholesky factor R (R^T R = M, upper) is maintained:

* every round, the new row: R <- cholupdate(R, a) (Givens rotations, BLAS drot), O(m^2);
* when x_t enters the dictionary, the new column c = K_{t,I}^T k(X_t, x_t) + lam a and diagonal
  dd = ||k(X_t, x_t)||^2 + lam k(x_t, x_t) border R: s = R^{-T} c, rho^2 = dd - s.s,
  R <- [[R, s], [0, sqrt(rho^2)]].  Nothing already stored changes.  An insertion with
  rho^2 <= 1e-10 dd (x_t numerically in the span already, e.g. a duplicate) is refused and counted
  in n_refused.
* a prediction is two triangular solves on R, O(m^2).

KORS adds x_t with probability p_t = min(beta tau_t, 1), tau_t = (1 + eps) e / (e + mu), with
e = k(x_t, x_t) - u^T (S K_II S + mu I)^{-1} u and u = S k_I(x_t) (the closed form of the authors'
temporary inverse), and gives it the weight S_t = 1 / sqrt(p_t) ("sqrt", unbiased) or 1 / p_t
("inverse", the authors' code).  The factor of S K_II S + mu I is kept like R.  The uniform comes
from the engine's seeded round stream.

Order of a round: the prediction uses the dictionary I_{t-1} (predict is pure, so it cannot draw);
KORS and the possible insertion run in the update, as in the paper's projected-KRR variant.  For the
AWV variant this is the paper's algorithm with the dictionary update of round t deferred by one
round (Theorem 9 holds for any sequence of projections).

Cost: an ordinary round O(m d + m^2).  An insertion needs K_{t,I}^T k(X_t, x_t), the new column
against every past input: with ``cache_kernel`` the matrix K_{t,I} is kept (memory O(t (d + m) +
m^2), insertion O(t (d + m))); without it K_{t,I} is recomputed row by row from the
stored inputs at each insertion (memory O(t d + m^2), insertion O(t m d)).  Either way every input
is kept.  Capacities double when full (the engine grows them between rounds, with the GIL).

Budget.  With ``max_centres`` m_max > 0 the dictionary is frozen once it holds m_max centres or
once ``max_inputs`` inputs are stored (the inputs serve insertions only).  From then on no input
is stored and KORS no longer runs: each round adds its row to R and h (the projected ridge / AWV
forecaster on the frozen dictionary, as between two insertions), O(m d + m^2) per round, with
memory O(m^2 + max_inputs (d + m)) for ever.  ``info[0]`` counts the inputs stored.
"""

import numpy as np

from fastomkl._core.checks import (MAX_ROUNDS, require_inputs, require_names, require_shapes,
                                    require_triangular)

from fastomkl._core.base cimport DictionaryBank, Round
from fastomkl._core.kernel_rows cimport gaussian_row
from fastomkl._core.kors cimport DEPENDENT, kors_append, kors_probability
from fastomkl._core.linalg cimport (blas_dot, cholupdate, fastomkl_dot, fastomkl_solve_lower,
                                    solve_upper_transposed)
from libc.math cimport sqrt
from libc.string cimport memcpy

MODES = {"vaw": 0, "ridge": 1}
KORS_WEIGHTS = {"sqrt": 0, "inverse": 1}


def _triangular_solve(double[:, ::1] T, double[::1] x, int m, bint lower):
    """The compiled triangular solves on the leading m x m block of T (row length T.shape[1]), in
    place in x[:m] (tests): x <- T^{-1} x for a lower T, x <- T^{-T} x for an upper T."""
    if not (0 <= m <= T.shape[0] and m <= T.shape[1] and m <= x.shape[0]):
        raise ValueError(f"m = {m} does not fit T {T.shape[0]} x {T.shape[1]} and x ({x.shape[0]})")
    if m == 0:
        return
    if lower:
        fastomkl_solve_lower(m, &T[0, 0], <int>T.shape[1], &x[0])
    else:
        solve_upper_transposed(m, &T[0, 0], <int>T.shape[1], &x[0])


cdef class NystromExperts(DictionaryBank):
    """One PKAWV / projected-KRR forecaster on a KORS-grown Nystrom dictionary (module docstring).

    Made for full-information combiners: learn() ignores the importance weight (every round
    counts once).
    """

    def __init__(self, int n_features, double sigma, double lam, mode, double mu, double beta,
                 double eps, kors_weights, long max_centres, bint cache_kernel=False,
                 int capacity=64, long max_inputs=0):
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        for name, value in (("sigma", sigma), ("lam", lam), ("mu", mu), ("beta", beta)):
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be finite and > 0, got {value}")
        if not (np.isfinite(eps) and eps >= 0):
            raise ValueError(f"eps must be finite and >= 0, got {eps}")
        if mode not in MODES or kors_weights not in KORS_WEIGHTS:
            raise ValueError(f"mode must be in {sorted(MODES)} and kors_weights in "
                             f"{sorted(KORS_WEIGHTS)}, got {mode!r} and {kors_weights!r}")
        self.n_experts = 1
        self.independent = True
        self.n_features = n_features
        self.sigma, self.lam, self.mu, self.beta, self.eps = sigma, lam, mu, beta, eps
        self.mode = MODES[mode]
        self.weights_kind = KORS_WEIGHTS[kors_weights]
        if max_centres < 0 or max_inputs < 0:
            raise ValueError(f"max_centres and max_inputs must be >= 0 (0: no limit), got "
                             f"{max_centres} and {max_inputs}")
        self.max_centres = max_centres
        self.max_inputs = max_inputs
        self.warned = False
        self.cache_kernel = cache_kernel
        self.grows = True
        self.info = np.zeros(2, dtype=np.int_)
        self._allocate(max(capacity, 1), max(min(capacity, 16), 1), False)

    def _allocate(self, long cap_t, long cap_m, bint keep=True):
        """(Re)allocate for cap_t samples and cap_m centres, keeping the contents when `keep`."""
        d = self.n_features
        old = self._trimmed() if keep else None
        self.X = np.zeros((cap_t, d))
        self.Y = np.zeros(cap_t)
        self.K = np.zeros((cap_t, cap_m) if self.cache_kernel else (0, 0))
        self.R = np.zeros((cap_m, cap_m))
        self.L = np.zeros((cap_m, cap_m))
        self.centres = np.zeros((cap_m, d))
        self.S = np.zeros(cap_m)
        self.h = np.zeros(cap_m)
        self.index = np.zeros(cap_m, dtype=np.int_)
        self.a, self.w, self.g = np.zeros(cap_m), np.zeros(cap_m), np.zeros(cap_m)
        self.v, self.c = np.zeros(cap_m), np.zeros(cap_m)
        self.col = np.zeros(cap_t)
        if old is not None:
            self._write(old)

    @property
    def capacity(self):
        """(samples, centres) the arrays have room for."""
        return self.X.shape[0], self.R.shape[0]

    def reserve(self):
        """Room for one more round (sample and possible centre), by doubling (never past the
        budget)."""
        cap_t, cap_m = self.capacity
        if self.frozen():
            return
        if self.info[0] >= cap_t or self.info[1] >= cap_m:
            cap_t = 2 * cap_t if self.info[0] >= cap_t else cap_t
            cap_m = 2 * cap_m if self.info[1] >= cap_m else cap_m
            if self.max_inputs > 0:
                cap_t = min(cap_t, self.max_inputs)
            if self.max_centres > 0:
                cap_m = min(cap_m, self.max_centres)
            self._allocate(cap_t, cap_m)

    cdef bint needs_room(self) noexcept nogil:
        return not self.frozen() and (self.info[0] >= self.X.shape[0]
                                      or self.info[1] >= self.R.shape[0])

    cdef bint frozen(self) noexcept nogil:
        """The dictionary can no longer grow (max_centres centres, or max_inputs inputs)."""
        return self.max_centres > 0 and (self.info[1] >= self.max_centres or
                                         (self.max_inputs > 0 and self.info[0] >= self.max_inputs))

    def frozen_message(self):
        return (f"the Nystrom dictionary is frozen at {int(self.info[1])} centres "
                f"(max_centres={self.max_centres}, or {self.max_inputs} inputs stored): from "
                f"then on the model learns on this dictionary, with flat memory and cost per "
                f"sample (max_centres=None lets it grow for ever)")

    # -- state --------------------------------------------------------------------------------------
    def _trimmed(self):
        t, m = int(self.info[0]), int(self.info[1])
        state = {"info": np.array(self.info, dtype=np.int64),
                 "X": np.array(self.X[:t]), "Y": np.array(self.Y[:t]),
                 "R": np.array(np.asarray(self.R)[:m, :m]),
                 "L": np.array(np.asarray(self.L)[:m, :m]),
                 "centres": np.array(np.asarray(self.centres)[:m]), "S": np.array(self.S[:m]),
                 "h": np.array(self.h[:m]), "index": np.array(self.index[:m], dtype=np.int64),
                 "n_refused": np.array(self.n_refused, dtype=np.int64)}
        if self.cache_kernel:
            state["K"] = np.array(np.asarray(self.K)[:t, :m])
        return state

    def _write(self, state):
        t, m = int(state["info"][0]), int(state["info"][1])
        np.asarray(self.X)[:t] = state["X"]
        np.asarray(self.Y)[:t] = state["Y"]
        if self.cache_kernel:
            np.asarray(self.K)[:t, :m] = state["K"]
        np.asarray(self.R)[:m, :m] = state["R"]
        np.asarray(self.L)[:m, :m] = state["L"]
        np.asarray(self.centres)[:m] = state["centres"]
        np.asarray(self.S)[:m] = state["S"]
        np.asarray(self.h)[:m] = state["h"]
        np.asarray(self.index)[:m] = state["index"]
        self.info[0], self.info[1] = t, m
        self.n_refused = int(state["n_refused"])

    def get_state(self):
        state = self._trimmed()
        state["n_rejected"] = np.array(self.n_rejected, dtype=np.int64)
        return state

    def check_state(self, state):
        """ValueError unless `state` is a consistent state of this forecaster: every array present
        with sizes that match the counts, finite values, Cholesky factors upper triangular with a
        positive diagonal, KORS weights >= 1, centre rounds increasing and in range."""
        names = {"info", "X", "Y", "R", "L", "centres", "S", "h", "index", "n_refused",
                 "n_rejected"}
        require_names(self, state, names | {"K"} if self.cache_kernel else names)
        state, _ = self._split_counter(state)
        info = np.asarray(state["info"])
        if info.dtype != np.int64 or info.shape != (2,) or info[0] < 0 or not 0 <= info[1] <= info[0]:
            raise ValueError("NystromExperts state 'info' must be int64 [samples, centres] with "
                             "0 <= centres <= samples")
        t, m, d = int(info[0]), int(info[1]), self.n_features
        if self.max_centres > 0 and m > self.max_centres:
            raise ValueError(f"NystromExperts state has {m} centres, beyond max_centres="
                             f"{self.max_centres}")
        require_shapes(self, state, {"X": (t, d), "Y": (t,), "R": (m, m), "L": (m, m),
                                     "centres": (m, d), "S": (m,), "h": (m,)})
        if self.cache_kernel:
            require_shapes(self, state, {"K": (t, m)})
        require_triangular(self, state, "R", "upper")
        require_triangular(self, state, "L", "upper")
        self._check_conditioning(state)
        require_inputs(self, "X", state["X"])
        if np.any(np.asarray(state["S"]) < 1.0):
            raise ValueError("NystromExperts state 'S' (KORS weights 1/p or 1/sqrt(p)) must be >= 1")
        index = np.asarray(state["index"])
        if (index.dtype != np.int64 or index.shape != (m,) or np.any(index < 0) or np.any(index >= t)
                or np.any(np.diff(index) <= 0)):
            raise ValueError("NystromExperts state 'index' must be increasing rounds in [0, samples)")
        if not np.array_equal(np.asarray(state["centres"]), np.asarray(state["X"])[index]):
            raise ValueError("NystromExperts state 'centres' must be the inputs of the rounds in "
                             "'index'")
        refused = np.asarray(state["n_refused"])
        if refused.dtype != np.int64 or refused.shape != () or refused < 0:
            raise ValueError("NystromExperts state 'n_refused' must be a non-negative int64 scalar")

    def _check_conditioning(self, state):
        """The factors' magnitudes that learning guarantees (Gaussian kernel, 0 < k <= 1):
        R^T R = K_tI^T K_tI + lam K_II gains a centre only when its Schur complement exceeds
        1e-10 of its diagonal (>= lam), and later rows only raise it, so R_jj^2 > 1e-10 lam;
        |R_ij| <= sqrt(rounds + lam).  The KORS factor of S K_II S + mu I has L_jj^2 >= mu and
        |L_ij| <= sqrt(max S^2 + mu).  A factor outside them (a diagonal of 1e-300, an entry of
        1e308) would make the next triangular solve overflow."""
        R, L, S = np.asarray(state["R"]), np.asarray(state["L"]), np.asarray(state["S"])
        if R.size and not (np.diag(R) >= 0.5 * sqrt(1e-10 * self.lam)).all():
            raise ValueError(f"NystromExperts state 'R' must have a diagonal >= "
                             f"{0.5 * sqrt(1e-10 * self.lam):.3g} (insertions need a Schur "
                             f"complement above 1e-10 lam)")
        if R.size and not (np.abs(R) <= sqrt(MAX_ROUNDS + self.lam)).all():
            raise ValueError("NystromExperts state 'R' has an entry beyond sqrt(rounds + lam)")
        if L.size and not (np.diag(L) >= (1.0 - 1e-9) * sqrt(self.mu)).all():
            raise ValueError("NystromExperts state 'L' must have a diagonal >= sqrt(mu)")
        if L.size and not (np.abs(L) <= (1.0 + 1e-9) * sqrt(S.max() ** 2 + self.mu)).all():
            raise ValueError("NystromExperts state 'L' has an entry beyond sqrt(max S^2 + mu)")

    def set_state(self, state):
        self.check_state(state)
        info = np.asarray(state["info"])
        self.info[0] = self.info[1] = 0
        self._allocate(max(int(info[0]), 1), max(int(info[1]), 1), False)
        self._write(state)
        self.n_rejected = int(state["n_rejected"])
        self.warned = self.frozen()

    def _prediction_arrays(self, NystromExperts twin):
        """predict reads the counts, the centres, R and h (the stored inputs, KORS' factor and the
        kernel cache only matter to learning)."""
        if twin.capacity != self.capacity:
            twin._allocate(*self.capacity)
        return ({"info": self.info, "centres": self.centres, "R": self.R, "h": self.h},
                {"info": twin.info, "centres": twin.centres, "R": twin.R, "h": twin.h})

    # -- views ----------------------------------------------------------------------------------------
    @property
    def n_centres(self):
        return int(self.info[1])

    @property
    def dictionary(self):
        """(m,) rounds (counted from 0) whose inputs are the centres."""
        return np.array(self.index[:self.info[1]])

    @property
    def kors_weights(self):
        return np.array(self.S[:self.info[1]])

    def factor(self):
        """(m, m) copy of R, upper triangular with R^T R = K_{t,I}^T K_{t,I} + lam K_II."""
        m = self.info[1]
        return np.array(np.asarray(self.R)[:m, :m])

    def kors_factor(self):
        """(m, m) copy of the upper factor of S K_II S + mu I."""
        m = self.info[1]
        return np.array(np.asarray(self.L)[:m, :m])

    # -- a round ------------------------------------------------------------------------------------
    cdef void kernel_row(self, const double* x, double* out) noexcept nogil:
        """out[j] = k(centre j, x)."""
        gaussian_row(&self.centres[0, 0], self.info[1], self.centres.shape[1], self.n_features, x,
                     0.5 / (self.sigma * self.sigma), out)

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef int m = self.info[1], ld = self.R.shape[0]
        cdef double ridge
        self.kernel_row(x, &self.a[0])
        if m == 0:
            self.lev = 0.0
            return 0.0
        memcpy(&self.w[0], &self.a[0], m * sizeof(double))
        memcpy(&self.g[0], &self.h[0], m * sizeof(double))
        solve_upper_transposed(m, &self.R[0, 0], ld, &self.w[0])      # w = R^{-T} a
        solve_upper_transposed(m, &self.R[0, 0], ld, &self.g[0])      # g = R^{-T} h
        ridge = blas_dot(m, &self.w[0], &self.g[0])
        self.lev = blas_dot(m, &self.w[0], &self.w[0])
        if self.mode == 0:
            return ridge / (1.0 + self.lev)
        return ridge

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double y = ctx.y
        cdef int m = self.info[1], ld = self.R.shape[0], j
        cdef long n = self.info[0]
        cdef double p, u
        if self.frozen():        # the frozen dictionary's forecaster: R and h take the row
            for j in range(m):
                self.h[j] += y * self.a[j]
                self.v[j] = self.a[j]
            cholupdate(m, &self.R[0, 0], ld, &self.v[0])
            return (f - y) * (f - y)
        # the sample and its row of K (a = k_I(x_t), left by predict)
        memcpy(&self.X[n, 0], x, self.n_features * sizeof(double))
        self.Y[n] = y
        for j in range(m):
            if self.cache_kernel:
                self.K[n, j] = self.a[j]
            self.h[j] += y * self.a[j]
            self.v[j] = self.a[j]
        cholupdate(m, &self.R[0, 0], ld, &self.v[0])
        self.info[0] = n + 1
        p = kors_probability(m, &self.L[0, 0], ld, &self.S[0], &self.a[0], &self.v[0], self.mu,
                             self.beta, self.eps)
        u = ctx.rng.next_double(ctx.rng.state)
        if u < p and (self.max_centres <= 0 or m < self.max_centres):
            self.insert(x, y, p)
        return (f - y) * (f - y)

    cdef void insert(self, const double* x, double y, double p) noexcept nogil:
        """Adds x (the sample of the round just stored) to the dictionary with KORS probability p;
        self.v holds R_KORS^{-T} S a from the KORS step."""
        cdef int m = self.info[1], ld = self.R.shape[0], j, i
        cdef int n = self.info[0], d = self.n_features, s
        cdef double sq, diff, dd, rho2, lam = self.lam, weight
        cdef double* row
        cdef double* c
        cdef double scale = 0.5 / (self.sigma * self.sigma)
        # col[s] = k(x_s, x) over every stored sample (the last one is x itself)
        gaussian_row(&self.X[0, 0], n, self.X.shape[1], d, x, scale, &self.col[0])
        # c = K_{t,I}^T col + lam a, row by row of K (n, ldk), and the dot products over the n
        # stored samples below, on one core: OpenBLAS spreads dgemv and ddot of this length over
        # its threads, which made a pass 2x slower on a loaded two-core machine (casp, paper 002's
        # settings; see the linalg.pxd note on threaded level-2 BLAS)
        for j in range(m):
            self.c[j] = lam * self.a[j]
        if m > 0:
            if self.cache_kernel:
                c = &self.c[0]
                for s in range(n):
                    row = &self.K[s, 0]
                    weight = self.col[s]
                    for j in range(m):
                        c[j] += weight * row[j]
            else:                   # the rows k_I(x_s) again, into the scratch w
                for s in range(n):
                    self.kernel_row(&self.X[s, 0], &self.w[0])
                    for j in range(m):
                        self.c[j] += self.col[s] * self.w[j]
            solve_upper_transposed(m, &self.R[0, 0], ld, &self.c[0])
        dd = fastomkl_dot(&self.col[0], &self.col[0], n) + lam
        rho2 = dd - blas_dot(m, &self.c[0], &self.c[0])
        if not rho2 > DEPENDENT * dd:
            self.n_refused += 1
            return
        for j in range(m):
            self.R[j, m] = self.c[j]
        self.R[m, m] = sqrt(rho2)
        kors_append(m, &self.L[0, 0], ld, &self.S[0], &self.v[0], self.mu, p, self.weights_kind)
        # the new column of K and entry of h = K^T Y (this round's y included)
        if self.cache_kernel:
            for j in range(n):
                self.K[j, m] = self.col[j]
        self.h[m] = fastomkl_dot(&self.col[0], &self.Y[0], n)
        memcpy(&self.centres[m, 0], x, d * sizeof(double))
        self.index[m] = n - 1
        self.info[1] = m + 1
