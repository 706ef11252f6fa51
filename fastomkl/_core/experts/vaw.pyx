"""Compiled Vovk-Azoury-Warmuth experts: one VAW (or online ridge) forecaster per kernel.

See linalg.pxd for the round (one packed matrix-vector product in predict, one rank-one update in
learn), the packed storage and the drift guards.
"""
import numpy as np

from fastomkl._core.checks import require, require_packed_spd
from fastomkl._core.packed import pack, packed_size, unpack

from fastomkl._core.base cimport ExpertBank, Round
from fastomkl._core.linalg cimport (vaw_update_safe, VAW_MODE_VAW, VAW_MODE_RIDGE, VAW_PENDING,
                                    fastomkl_spmv, fastomkl_spr, fastomkl_spr4,
                                    fastomkl_spd_inverse, fastomkl_dot, scale, add_diagonal,
                                    discount_period)
from fastomkl._core.numeric cimport saturate
from libc.float cimport DBL_MAX
from libc.math cimport isfinite

MODES = {"vaw": VAW_MODE_VAW, "ridge": VAW_MODE_RIDGE}


def _with_pending(state) -> np.ndarray:
    """Every expert's inverse with its buffered Sherman-Morrison terms applied, times its scale
    (forget < 1), packed: the inverse the expert predicts with, which the next updates keep
    positive definite only if it is (the stored P alone is larger by the pending terms)."""
    P = np.array(state["P"], dtype=np.float64)
    dim = state["pend_u"].shape[2]
    rows, cols = np.tril_indices(dim)
    pending = np.asarray(state["n_pending"])
    for k in range(P.shape[0]):
        for s in range(int(pending[k]) if 0 <= pending[k] < VAW_PENDING else 0):
            u = state["pend_u"][k, s]
            P[k] += state["pend_a"][k, s] * u[rows] * u[cols]
    if "scale" in state:
        P *= np.asarray(state["scale"])[:, None]
    return P


cdef class VAWExperts(ExpertBank):
    """Per kernel k, a VAW forecaster on z_k (mode "vaw", the paper's definition) or online ridge
    regression (mode "ridge", what the paper's experiments ran).

    predict(k, z) = b_k^T P_k z / (1 + z^T P_k z) in mode "vaw", b_k^T P_k z in mode "ridge", with
    P_k = (lam I + sum_s w_s z_s z_s^T)^{-1} over past rounds and b_k = sum_s w_s y_s z_s.
    ``lam`` is one ridge for every expert or one per expert; with ``per_kernel`` m > 1 the
    experts k m ... k m + m - 1 all learn on kernel k's features (a ridge ensemble).
    With forget = gamma < 1 (discounted least squares, see linalg.pxd) an update that is `age`
    updates of expert k old weighs gamma^age in S_k, b_k and the label mean (half-life
    ln 2 / -ln gamma updates): P_k = (lam_t I + sum_s gamma^age w_s z_s z_s^T)^{-1}, and mode "vaw"
    predicts b_k^T P_k z / (1 + z^T P_k z / gamma).  The ridge lam_t is lam each time P_k is
    recomputed from S_k (every ``period`` = discount_period(gamma, dim) updates, or refresh_every
    if that is smaller) and lam gamma^k, k updates later: it stays in [gamma^period lam, lam],
    and gamma^period >= min(gamma, 1/2) (>= 0.99 when gamma^dim >= 0.99).  Each recomputation
    costs about dim^3 flops, at most dim^2 a round while 0.5^(1 / dim) <= gamma; S_k doubles the
    memory.
    forget = 1 is the undiscounted forecaster, with no extra work.
    With center=True every expert also keeps the weighted mean m_k of the labels it has learnt
    from, predicts m_k + (the above) and learns the target y - m_k (m_k before the update): a
    data-adaptive intercept, which the paper's features lack (its default is False).
    learn() adds the round with importance weight w (1 under full information) and returns the
    squared loss (f_k - y)^2 of the prediction.  Cost per expert and round: one packed symmetric
    matrix-vector product and a quarter of a rank-4 update (the rank-one Sherman-Morrison terms are
    buffered four at a time, see vaw.pxd), about 3 dim^2 flops; memory dim (dim + 1) / 2 + 7 dim
    doubles (the inverse is stored packed; twice that when S is kept: refresh_every > 0 or
    forget < 1).

    An update that would make the state non-finite (a Sherman-Morrison denominator 1 + w z.u not
    finite and positive, or b overflowing) is refused, whole, and counted in ``n_rejected``; a
    prediction whose arithmetic overflows saturates at the largest finite double.
    """

    def __init__(self, int n_experts, int dim, lam=1.0, mode="vaw", long refresh_every=0,
                 bint center=False, double forget=1.0, int per_kernel=1):
        if n_experts < 1 or dim < 1:
            raise ValueError(f"n_experts and dim must be >= 1, got {n_experts} and {dim}")
        lams = np.broadcast_to(np.asarray(lam, dtype=np.float64), (n_experts,)).copy()
        if not (lams > 0.0).all():
            raise ValueError(f"lam must be > 0, got {lam}")
        if per_kernel < 1 or n_experts % per_kernel:
            raise ValueError(f"per_kernel must divide n_experts ({n_experts}), got {per_kernel}")
        if mode not in MODES:
            raise ValueError(f"mode must be 'vaw' or 'ridge', got {mode!r}")
        if refresh_every < 0:
            raise ValueError(f"refresh_every must be >= 0 (0 = never), got {refresh_every}")
        if not 0.0 < forget <= 1.0:
            raise ValueError(f"forget must be in (0, 1], got {forget}")
        self.n_experts = n_experts
        self.per_kernel = per_kernel
        self.independent = True
        self.dim = dim
        self.lams = lams
        self.mode = MODES[mode]
        self.refresh_every = refresh_every
        self.forget = forget
        self.period = refresh_every
        if forget < 1.0:
            self.period = discount_period(forget, dim)
            if 0 < refresh_every < self.period:
                self.period = refresh_every
        self.center = center
        self.label_sums = np.zeros((n_experts if center else 0, 2))
        eye = pack(np.eye(dim))
        self.P = eye[None] / lams[:, None]
        self.scale = np.ones(n_experts if forget < 1.0 else 0)
        if self.period > 0:
            self.S = eye[None] * lams[:, None]
            self._work = np.zeros(dim * dim)
        else:
            self.S = np.zeros((0, 0))
            self._work = np.zeros(0)
        self.b = np.zeros((n_experts, dim))
        self.n_updates = np.zeros(n_experts, dtype=np.int_)
        self.u = np.zeros((n_experts, dim))
        self.q = np.zeros(n_experts)
        self.pend_u = np.zeros((n_experts, VAW_PENDING, dim))
        self.pend_a = np.zeros((n_experts, VAW_PENDING))
        self.n_pending = np.zeros(n_experts, dtype=np.int_)

    @property
    def mode_name(self):
        return "vaw" if self.mode == VAW_MODE_VAW else "ridge"

    def _state_arrays(self):
        state = {"P": self.P, "b": self.b, "n_updates": self.n_updates, "pend_u": self.pend_u,
                 "pend_a": self.pend_a, "n_pending": self.n_pending}
        if self.period > 0:
            state["S"] = self.S
        if self.forget < 1.0:
            state["scale"] = self.scale
        if self.center:
            state["label_sums"] = self.label_sums
        return state

    @property
    def offsets(self):
        """(n_experts,) the offset every expert adds to its prediction (center=True: the mean of
        the labels it has learnt from; 0 otherwise)."""
        sums = np.asarray(self.label_sums)
        if not self.center:
            return np.zeros(self.n_experts)
        return np.where(sums[:, 1] > 0, sums[:, 0] / np.where(sums[:, 1] > 0, sums[:, 1], 1), 0.0)

    def _check_semantics(self, state):
        """P (and S) positive definite, P's eigenvalues at most 1 / lam (an inverse of lam I plus
        a sum of outer products; 1 / (gamma^(period - 1) lam) with forget = gamma < 1, whose ridge
        decays between recomputations), scale in [1, gamma^-(period - 1)] (it grows by 1 / gamma
        an update from 1), every buffered coefficient <= 0 (a Sherman-Morrison term removes),
        0 <= n_pending < VAW_PENDING, n_updates >= 0 (the base checked names, shapes, dtypes and
        finiteness)."""
        cdef double decay = 1.0
        if self.forget < 1.0:
            decay = self.forget ** (self.period - 1)
            require(((state["scale"] >= 1.0) & (state["scale"] <= (1.0 + 1e-9) / decay)).all(),
                    self, f"'scale' must be in [1, {1.0 / decay!r}]")
        require_packed_spd(self, "P", _with_pending(state), self.dim,
                           max_eigenvalue=1.0 / (np.asarray(self.lams) * decay))
        if self.period > 0:
            require_packed_spd(self, "S", state["S"], self.dim)
        if self.center:
            require((state["label_sums"][:, 1] >= 0).all(), self,
                    "'label_sums' must have non-negative weight sums (column 1)")
        require((state["pend_a"] <= 0).all(), self, "'pend_a' must be <= 0")
        pending = np.asarray(state["n_pending"])
        require(((pending >= 0) & (pending < VAW_PENDING)).all(), self,
                f"'n_pending' must be in [0, {VAW_PENDING - 1}]")
        require((np.asarray(state["n_updates"]) >= 0).all(), self, "'n_updates' must be >= 0")

    def inverse(self):
        """(n_experts, dim, dim) copy of the inverses (both triangles filled, buffered terms
        included)."""
        full = unpack(self.P, self.dim)
        U, a = np.asarray(self.pend_u), np.asarray(self.pend_a)
        for k in range(self.n_experts):
            for j in range(self.n_pending[k]):
                full[k] += a[k, j] * np.outer(U[k, j], U[k, j])
        if self.forget < 1.0:
            full *= np.asarray(self.scale)[:, None, None]
        return full

    def gram(self):
        """(n_experts, dim, dim) copy of S_k = P_k^{-1}, computed (or read when S is kept: with
        refresh_every > 0 or forget < 1; this S has the ridge lam, P's the decayed lam_t)."""
        if self.period > 0:
            full = unpack(self.S, self.dim)
            return full / np.asarray(self.scale)[:, None, None] if self.forget < 1.0 else full
        return np.linalg.inv(self.inverse())

    @property
    def targets(self):
        """(n_experts, dim) copy of b_k = sum_s w_s y_s z_s (times gamma^age with forget < 1)."""
        return np.array(self.b, copy=True)

    @property
    def coef_(self):
        """(n_experts, dim) current ridge weights P_k b_k (the terminal weights of the paper)."""
        return np.einsum("kij,kj->ki", self.inverse(), np.asarray(self.b))

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef int D = self.dim, j, i
        cdef double* u = &self.u[k, 0]
        cdef const double* v
        cdef double c, q, r
        fastomkl_spmv(D, &self.P[k, 0], z, u)
        for j in range(self.n_pending[k]):
            v = &self.pend_u[k, j, 0]
            c = self.pend_a[k, j] * fastomkl_dot(v, z, D)
            for i in range(D):
                u[i] += c * v[i]
        if self.forget < 1.0:
            scale(D, self.scale[k], u)
        q = fastomkl_dot(z, u, D)
        r = fastomkl_dot(&self.b[k, 0], u, D)
        self.q[k] = q
        if self.mode == VAW_MODE_VAW:
            r = r / (1.0 + q / self.forget)
        if self.center:
            r = r + self.offset(k)
        return saturate(r)

    cdef double offset(self, int k) noexcept nogil:
        """The (weighted) mean of the labels expert k has learnt from; 0 before the first."""
        if self.label_sums[k, 1] > 0.0:
            return self.label_sums[k, 0] / self.label_sums[k, 1]
        return 0.0

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef double y = ctx.y
        cdef double weight = ctx.weight
        cdef double g = self.forget, c = 1.0
        cdef int D = self.dim, i
        cdef long slot = self.n_pending[k]
        cdef double target = y - self.offset(k) if self.center else y
        cdef double wy = weight * target
        cdef double* u = &self.u[k, 0]
        cdef double* b = &self.b[k, 0]
        cdef double* dst = &self.pend_u[k, slot, 0]
        cdef double loss = (f - y) * (f - y)
        if not isfinite(loss):
            loss = DBL_MAX
        if not (vaw_update_safe(D, b, z, self.q[k], target, weight, g) and (
                not self.center or (isfinite(self.label_sums[k, 0] + weight * y)
                                    and isfinite(self.label_sums[k, 1] + weight)))):
            self.n_rejected += 1
            return loss
        if g < 1.0:
            # discount the past; the inverse's own 1 / gamma goes into its scale c, and the
            # buffered term is on the stored matrix, which the inverse is c times
            c = self.scale[k]
            self.scale[k] = c / g
            scale(D, g, b)
            if self.center:
                scale(2, g, &self.label_sums[k, 0])
        if self.center:
            self.label_sums[k, 0] += weight * y
            self.label_sums[k, 1] += weight
        # Sherman-Morrison term of this round, buffered (u = current inverse times z)
        self.pend_a[k, slot] = -weight / (c * (g + weight * self.q[k]))
        for i in range(D):
            dst[i] = u[i]
            b[i] += wy * z[i]
        self.n_pending[k] = slot + 1
        if slot + 1 == VAW_PENDING:
            fastomkl_spr4(D, &self.pend_a[k, 0], &self.pend_u[k, 0, 0], &self.P[k, 0])
            self.n_pending[k] = 0
        self.n_updates[k] += 1
        if self.period > 0:
            c = self.scale[k] if g < 1.0 else 1.0       # S is kept times the inverse's scale
            fastomkl_spr(D, weight * c, z, &self.S[k, 0])
            if g < 1.0:
                add_diagonal(D, (1.0 - g) * self.lams[k] * c, &self.S[k, 0])
            if self.n_updates[k] % self.period == 0:
                self.refresh(k)
        return loss

    cdef void refresh(self, int k) noexcept nogil:
        """P_k <- S_k^{-1} through the Cholesky factor of S_k; if S_k is numerically not positive
        definite the Sherman-Morrison P_k is kept.  With forget < 1 both are first brought to
        scale 1 (S_k divided by it; on failure, P_k and its pending terms multiplied by it)."""
        cdef int D = self.dim, size = D * (D + 1) // 2, j
        cdef double c = 1.0
        if self.forget < 1.0:
            c = self.scale[k]
            self.scale[k] = 1.0
            scale(size, 1.0 / c, &self.S[k, 0])
        if fastomkl_spd_inverse(D, &self.S[k, 0], &self._work[0], &self.P[k, 0]) == 0:
            self.n_pending[k] = 0
        elif c != 1.0:
            for j in range(self.n_pending[k]):
                fastomkl_spr(D, self.pend_a[k, j], &self.pend_u[k, j, 0], &self.P[k, 0])
            self.n_pending[k] = 0
            scale(size, c, &self.P[k, 0])

    def predict_expert(self, int k, z):
        """Python access to one expert's prediction on a feature vector z (fills its scratch)."""
        if not 0 <= k < self.n_experts:
            raise ValueError(f"expert index must be in [0, {self.n_experts}), got {k}")
        cdef double[::1] zv = np.ascontiguousarray(z, dtype=np.float64)
        if zv.shape[0] != self.dim:
            raise ValueError(f"z must have {self.dim} values, got {zv.shape[0]}")
        return self.predict(k, NULL, &zv[0])

    def learn_expert(self, int k, z, double y, double weight=1.0):
        """Python access to one round of expert k on z with importance weight `weight` (predicts
        first, so the update uses this z); returns the squared loss of that prediction."""
        if not weight > 0.0:
            raise ValueError(f"weight must be > 0, got {weight}")
        f = self.predict_expert(k, z)
        cdef double[::1] zv = np.ascontiguousarray(z, dtype=np.float64)
        cdef Round ctx
        ctx.t, ctx.y, ctx.weight = self.n_updates[k] + 1, y, weight
        return self.learn(k, NULL, &zv[0], f, &ctx)

    def refresh_now(self):
        """Recompute every P_k from S_k now (only with refresh_every > 0 or forget < 1)."""
        if self.period <= 0:
            raise ValueError("refresh_now needs refresh_every > 0 or forget < 1 (S is not kept "
                             "otherwise)")
        cdef int k
        for k in range(self.n_experts):
            self.refresh(k)
