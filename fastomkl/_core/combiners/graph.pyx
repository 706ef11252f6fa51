"""Compiled combiners that run a subset of the kernels each round, chosen through a feedback graph.

* ``GraphFeedback``: OMKL-GF (paper 000, Alg. 1-3), a random bipartite graph regenerated from the
  kernel weights (optionally frozen after a given round).
* ``SimilarityGraphFeedback``: OMKL-SFG (Alg. 5) on a fixed similarity graph with a dominating set,
  and with ``refine`` OMKL-SFG-R (Alg. 6), whose graph is refined every round so that q >= beta.

Every combiner selects its subset and sets the importance weights 1/q of the experts it runs; the
Hedge update of the kernel weights uses the importance-weighted loss L_i / q_i.  Kernel weights are
kept in the log domain and mixed over the subset with a local shift, so no global renormalisation
is needed.  Sampling uses inverse-CDF draws from the engine's bit generator, one uniform per
categorical draw, so a plain NumPy ``Generator.random()`` replays the same draws.

The rates of the exponential weights (GF's and SFG's eta, SFG's eta_u) follow their schedule, or
with SCHEDULE_SELF_CONFIDENT are tuned to the losses they are fed, eta_t = scale
sqrt(ln N / (1 + V_t)): V_t sums, over the rounds so far and this one, the second moment of the
importance-weighted losses of the update under the weights that predicted the round,
sum_{i in S_t} w_bar_i (L_i / q_i)^2 for the kernel weights (w_bar: the round's mixture) and
u_bar_I (loss / p_I)^2 for the node weights (second-order tuning of exponential weights in the
manner of Cesa-Bianchi, Mansour & Stoltz 2007, where the variance term of estimated losses is
their second moment).  The 1/q weights inflate that moment, so the rate shrinks as far as the
variance of the estimates requires and no further, and it does not depend on the units of the
losses beyond the 1 of 1 + V (losses in standard units: standardised targets or a unit-free
classification loss).
"""
import numpy as np

from fastomkl._core.checks import require

from fastomkl._core.base cimport Combiner, Round, bitgen_t
from fastomkl._core.losses cimport loss_value
from fastomkl._core.steps cimport ChangeTest, SCHEDULE_SELF_CONFIDENT, Schedule, schedule_at
from libc.math cimport exp, log, log1p, expm1, isfinite, sqrt, INFINITY


cdef inline double _uniform(bitgen_t* rng) noexcept nogil:
    return rng.next_double(rng.state)


cdef inline double _ipow(double b, int n) noexcept nogil:
    """b^n for n >= 0 by repeated squaring."""
    cdef double r = 1.0
    while n > 0:
        if n & 1:
            r *= b
        b *= b
        n >>= 1
    return r


cdef inline double _clip01(double v) noexcept nogil:
    if v > 1.0:
        return 1.0
    if v < 0.0:
        return 0.0
    return v


# ------------------------------------------------------------------------------------------------
cdef inline bint finite_increments(double eta, const int* active, int n_active,
                                   const double* losses, const double* q) noexcept nogil:
    """True when every log-weight step eta L_i / q_i of the round is finite (else the round's
    weight update is refused: one huge importance-weighted loss must not turn log_w into inf)."""
    cdef int j
    for j in range(n_active):
        if not isfinite(eta * losses[active[j]] / q[active[j]]):
            return False
    return True


cdef inline double mixture_second_moment(const double* log_w, const int* active, int n_active,
                                         const unsigned char* mask, const double* losses,
                                         const double* q) noexcept nogil:
    """sum_i w_i (L_i / q_i)^2, w the normalised exp(log_w) of the active kernels the round
    predicted with (those with mask[j]; every one when mask is NULL)."""
    cdef double top = -INFINITY, total = 0.0, moment = 0.0, w, r
    cdef int j, i
    for j in range(n_active):
        if (mask == NULL or mask[j]) and log_w[active[j]] > top:
            top = log_w[active[j]]
    for j in range(n_active):
        if mask == NULL or mask[j]:
            i = active[j]
            w = exp(log_w[i] - top)
            r = losses[i] / q[i]
            total += w
            moment += w * r * r
    return moment / total


cdef inline double self_confident(Schedule s, int n, double v) noexcept nogil:
    """The self-confident rate scale sqrt(ln n / (1 + V)) (see the module docstring)."""
    return s.scale * sqrt(log(<double>n) / (1.0 + v))


def _check_exploration(Schedule s, str name):
    if s.kind == SCHEDULE_SELF_CONFIDENT:
        raise ValueError(f"{name} takes a constant or 1/sqrt(t) schedule, not a self-confident one")


cdef inline void _sort_ints(int* a, int n) noexcept nogil:
    """Insertion sort of a[0:n] (a node's few experts)."""
    cdef int i, j, v
    for i in range(1, n):
        v = a[i]
        j = i
        while j > 0 and a[j - 1] > v:
            a[j] = a[j - 1]
            j -= 1
        a[j] = v


cdef class GraphFeedback(Combiner):
    """OMKL-GF: bipartite graph feedback with J selective nodes of at most M kernels each.

    Round t (t >= 1), with eta_e = eta_e(t):

    1. Unless frozen (t > freeze_after > 0, and a graph exists), regenerate the graph from the
       current weights: selective node j draws M kernels i.i.d. from
       pi_j = (1 - eta_e^j) w_bar + eta_e^j / N (duplicates collapse) by a Fenwick-tree descent on
       the weights, O(M log N) per node, and keeps w_bar of the drawn kernels for
       P_ij = 1 - (1 - pi_ij)^M.
    2. p_j = (1 - eta_e) u_j / U + eta_e / J with u_j the sum of the weights attached to node j.
    3. Draw the selective node I from p; the subset is its kernels, with
       q_i = sum_j p_j P_ij (eq. 21) or, with ``conditional_q``, sum_j p_j A_ij (exact given the
       graph); the importance weight is 1 / max(q_i, q_floor).
    4. After the label, log w_i -= eta(t) L_i / q_i for the kernels of the subset (eta(t) may be
       self-confident, see the module docstring).
    5. With a ``change`` test (``steps.ChangeTest``; a self-confident eta only), an alarm on the
       round's combined prediction restarts the rate: V = 0, as before the first round.

    Uniforms consumed per round: J*M for a regenerated graph (node by node), then one for I.
    Cost per round: O(J M log N + J M) plus the features of the subset; nothing is O(N) except a
    full refresh of the weight tree every 1024 rounds (or when a dominant weight collapses).
    ``legacy_sampler`` returns min(k + 1, N - 1) for each kernel draw k (the released code's
    off-by-one).  Prediction without learning uses the M kernels of largest weight (ties: smallest
    index), or every kernel with ``predict_all``.

    The experts may be an ensemble's kernel x step members (expert k * m + s: member s of kernel
    k); with ``sort_members`` each node keeps its experts, and a prediction its subset, in index
    order, so that the members of one kernel run in turn and share its features (the order changes
    nothing else: the combination is a weighted mean, q_i depends on i alone).
    """

    def __init__(self, int n_experts, int n_nodes, int degree, double eta_scale, int eta_kind,
                 double eta_e_scale, int eta_e_kind, long freeze_after=0, bint conditional_q=False,
                 double q_floor=0.0, bint legacy_sampler=False, bint predict_all=False,
                 bint sort_members=False, ChangeTest change=None):
        if n_experts < 1 or n_nodes < 1 or degree < 1:
            raise ValueError("n_experts, n_nodes and degree must be >= 1")
        if change is not None and eta_kind != SCHEDULE_SELF_CONFIDENT:
            raise ValueError("a change test restarts a self-confident rate: eta_kind must be "
                             "SELF_CONFIDENT")
        self.n_experts = n_experts
        self.n_nodes = n_nodes
        self.degree = degree
        self.eta.scale = eta_scale
        self.eta.kind = eta_kind
        self.eta_e.scale = eta_e_scale
        self.eta_e.kind = eta_e_kind
        _check_exploration(self.eta_e, "eta_e")
        self.freeze_after = freeze_after
        self.conditional_q = conditional_q
        self.q_floor = q_floor
        self.legacy_sampler = legacy_sampler
        self.predict_all = predict_all
        self.sort_members = sort_members
        self.log_w = np.zeros(n_experts)
        self.members = np.zeros((n_nodes, degree), dtype=np.intc)
        self.n_members = np.zeros(n_nodes, dtype=np.intc)
        self.adj = np.zeros((n_nodes, n_experts), dtype=np.uint8)
        self.wlin = np.ones(n_experts)
        self.tree = np.zeros(n_experts + 1)
        self.wstate = np.zeros(2)
        self.wbar_gen = np.zeros(n_experts)
        self.e_gen = np.zeros(n_nodes)
        self.node_p = np.zeros(n_nodes)
        self.q = np.ones(n_experts)
        self.info = np.zeros(2, dtype=np.int64)
        self.order = np.zeros(n_experts, dtype=np.intc)
        self.rate_v = np.zeros(1)
        self.change = change
        self.rebuild_weights()

    def _state_arrays(self):
        state = {"log_w": self.log_w, "members": self.members, "n_members": self.n_members,
                 "adj": self.adj, "wlin": self.wlin, "tree": self.tree, "wstate": self.wstate,
                 "wbar_gen": self.wbar_gen, "e_gen": self.e_gen, "node_p": self.node_p,
                 "q": self.q, "info": self.info}
        if self.eta.kind == SCHEDULE_SELF_CONFIDENT:
            state["rate_v"] = self.rate_v
        if self.change is not None:
            state["change_test"] = self.change.sums
        return state

    def _check_semantics(self, state):
        N, J, M = self.n_experts, self.n_nodes, self.degree
        n_members, members, adj = state["n_members"], state["members"], state["adj"]
        require(((n_members >= 0) & (n_members <= M)).all(), self,
                f"n_members must lie in [0, {M}]")
        require(((members >= 0) & (members < N)).all(), self, f"members must be kernels in [0, {N})")
        for j in range(J):
            chosen = members[j, :n_members[j]]
            row = np.zeros(N, dtype=np.uint8)
            row[chosen] = 1
            require(row.sum() == n_members[j] and np.array_equal(row, adj[j]), self,
                    f"adj of node {j} must mark exactly its distinct members")
        require(0 <= state["info"][1] < J and state["info"][0] >= 0, self,
                f"info must be [graph round >= 0, chosen node in [0, {J})]")
        require((state["wlin"] >= 0).all() and state["wstate"][0] > 0, self,
                "linear weights must be >= 0 with a positive sum")
        # wlin_i = exp(log_w_i - ref) and W their sum are kept beside log_w (the sum by
        # increments): they must say the same, or the first update could overflow them
        wlin, log_w, (W, ref) = state["wlin"], state["log_w"], state["wstate"][:2]
        with np.errstate(over="ignore"):
            require(np.allclose(wlin, np.exp(log_w - ref), rtol=1e-9, atol=0.0), self,
                    "wlin must be exp(log_w - wstate[1])")
        require(abs(W - wlin.sum()) <= 1e-6 * W, self, "wstate[0] must be the sum of wlin")
        require(((state["q"] >= 0) & (state["q"] <= 1)).all(), self, "q must lie in [0, 1]")
        if "rate_v" in state:
            require((state["rate_v"] >= 0).all(), self, "rate_v must be >= 0")
        if "change_test" in state:
            self.change.check(self, state["change_test"])

    def rebuild_weights_state(self):
        """Recompute the linear weights and their tree from log_w (after editing log_w)."""
        self.rebuild_weights()

    @property
    def graph_round(self):
        """The round at which the current graph was generated (0: none yet)."""
        return int(self.info[0])

    @property
    def chosen_node(self):
        return int(self.info[1])

    cdef void rebuild_weights(self) noexcept nogil:
        """wlin = exp(log_w - max log_w), their sum and their Fenwick tree, exactly."""
        cdef int N = self.n_experts, i, k, up
        cdef double top = self.log_w[0], total = 0.0
        for i in range(1, N):
            if self.log_w[i] > top:
                top = self.log_w[i]
        for i in range(N):
            self.wlin[i] = exp(self.log_w[i] - top)
            total += self.wlin[i]
            self.tree[i + 1] = self.wlin[i]
        for k in range(1, N + 1):
            up = k + (k & -k)
            if up <= N:
                self.tree[up] += self.tree[k]
        self.wstate[0] = total
        self.wstate[1] = top

    cdef int mixture_find(self, double x, double e) noexcept nogil:
        """Smallest i with (1 - e) (w_0 + ... + w_i) / W + e (i + 1) / N > x (Fenwick descent)."""
        cdef int N = self.n_experts, pos = 0, step = 1, nxt
        cdef double acc = 0.0, a = (1.0 - e) / self.wstate[0], b = e / N
        while step * 2 <= N:
            step *= 2
        while step > 0:
            nxt = pos + step
            if nxt <= N and a * (acc + self.tree[nxt]) + b * nxt <= x:
                pos = nxt
                acc += self.tree[nxt]
            step >>= 1
        return pos if pos < N else N - 1

    cdef void generate(self, long t, double eta_e, bitgen_t* rng) noexcept nogil:
        """Alg. 2 in O(J M log N): node j draws M kernels from (1 - e_j) w_bar + e_j / N."""
        cdef int N = self.n_experts, M = self.degree, i, j, r
        cdef double e = eta_e, W = self.wstate[0]
        for j in range(self.n_nodes):
            self.e_gen[j] = e
            for r in range(self.n_members[j]):
                self.adj[j, self.members[j, r]] = 0
            self.n_members[j] = 0
            for r in range(M):
                i = self.mixture_find(_uniform(rng), e)
                if self.legacy_sampler and i < N - 1:
                    i += 1
                if not self.adj[j, i]:
                    self.adj[j, i] = 1
                    self.members[j, self.n_members[j]] = i
                    self.n_members[j] += 1
                self.wbar_gen[i] = self.wlin[i] / W
            if self.sort_members:
                _sort_ints(&self.members[j, 0], self.n_members[j])
            e *= eta_e
        self.info[0] = t

    cdef int select(self, Round* ctx, int* active, double* weight) noexcept nogil:
        cdef long t = ctx.t
        cdef bitgen_t* rng = ctx.rng
        cdef int J = self.n_nodes, j, r, i, chosen
        cdef double eta_e = _clip01(schedule_at(self.eta_e, t))
        cdef double top = -INFINITY, total = 0.0, x, acc, qi, pi
        if self.info[0] == 0 or self.freeze_after <= 0 or t <= self.freeze_after:
            self.generate(t, eta_e, rng)
        for j in range(J):                 # u_j from the linear weights
            self.node_p[j] = 0.0
            for r in range(self.n_members[j]):
                self.node_p[j] += self.wlin[self.members[j, r]]
            total += self.node_p[j]
        if not total > 1e-280:             # all attached weights underflowed: log domain
            total = 0.0
            for j in range(J):
                for r in range(self.n_members[j]):
                    if self.log_w[self.members[j, r]] > top:
                        top = self.log_w[self.members[j, r]]
            for j in range(J):
                self.node_p[j] = 0.0
                for r in range(self.n_members[j]):
                    self.node_p[j] += exp(self.log_w[self.members[j, r]] - top)
                total += self.node_p[j]
        for j in range(J):
            self.node_p[j] = (1.0 - eta_e) * self.node_p[j] / total + eta_e / J
        x = _uniform(rng)
        acc = 0.0
        chosen = J - 1
        for j in range(J):
            acc += self.node_p[j]
            if acc > x:
                chosen = j
                break
        self.info[1] = chosen
        for r in range(self.n_members[chosen]):
            i = self.members[chosen, r]
            qi = 0.0
            for j in range(J):
                if self.conditional_q:
                    if self.adj[j, i]:
                        qi += self.node_p[j]
                else:
                    pi = (1.0 - self.e_gen[j]) * self.wbar_gen[i] + self.e_gen[j] / self.n_experts
                    qi += self.node_p[j] * (1.0 - _ipow(1.0 - pi, self.degree))
            if qi > 1.0:
                qi = 1.0
            if qi < self.q_floor:
                qi = self.q_floor
            self.q[i] = qi
            active[r] = i
            weight[r] = 1.0 / qi
        return self.n_members[chosen]

    cdef int select_predict(self, int* active) noexcept nogil:
        cdef int N = self.n_experts, n, i, r, pos
        if self.predict_all:
            for i in range(N):
                active[i] = i
            return N
        n = self.degree if self.degree < N else N
        r = 0                              # order[0:r]: best so far, by log_w descending
        for i in range(N):
            if r == n and self.log_w[i] <= self.log_w[self.order[r - 1]]:
                continue
            pos = r if r < n else n - 1
            while pos > 0 and self.log_w[i] > self.log_w[self.order[pos - 1]]:
                self.order[pos] = self.order[pos - 1]
                pos -= 1
            self.order[pos] = i
            if r < n:
                r += 1
        for i in range(n):
            active[i] = self.order[i]
        if self.sort_members:
            _sort_ints(active, n)
        return n

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef double top = -INFINITY, num = 0.0, den = 0.0, w
        cdef int j
        for j in range(n_active):
            if self.log_w[active[j]] > top:
                top = self.log_w[active[j]]
        for j in range(n_active):
            w = exp(self.log_w[active[j]] - top)
            num += w * preds[active[j]]
            den += w
        return num / den

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        cdef long t = ctx.t
        cdef double eta, v = 0.0, W = self.wstate[0], ref = self.wstate[1]
        cdef double new, delta
        cdef int j, i
        cdef bint rebuild = t % 1024 == 0
        if self.eta.kind == SCHEDULE_SELF_CONFIDENT:
            v = self.rate_v[0] + mixture_second_moment(&self.log_w[0], active, n_active, NULL,
                                                       losses, &self.q[0])
            eta = self_confident(self.eta, self.n_experts, v)
        else:
            eta = schedule_at(self.eta, t)
        if not (isfinite(v) and finite_increments(eta, active, n_active, losses, &self.q[0])):
            self.n_rejected += 1
            return
        if self.eta.kind == SCHEDULE_SELF_CONFIDENT:
            self.rate_v[0] = v
        for j in range(n_active):
            i = active[j]
            self.log_w[i] -= eta * losses[i] / self.q[i]
            new = exp(self.log_w[i] - ref)
            delta = new - self.wlin[i]
            if -delta > 0.5 * W:           # cancellation: recompute everything exactly below
                rebuild = True
            self.wlin[i] = new
            W += delta
            i += 1
            while i <= self.n_experts:
                self.tree[i] += delta
                i += i & -i
        self.wstate[0] = W
        # W is at least 1 after a rebuild (its largest term is exp(0)), and each increment leaves
        # a rounding error of its own size: once W has fallen a thousandfold (a large rate moves
        # the weights fast, as after a restart) those errors are no longer small beside it
        if rebuild or W < 1e-3:
            self.rebuild_weights()
        if self.change is not None and self.change.fires(ctx.y_hat, ctx.y):
            self.rate_v[0] = 0.0


# ------------------------------------------------------------------------------------------------
cdef class SimilarityGraphFeedback(Combiner):
    """OMKL-SFG and OMKL-SFG-R on a fixed directed graph G (CSR out/in lists, self-loops included).

    Round t, with xi = xi(t) and node weights u (U = sum u):

    * SFG-R (``refine``), unless frozen (t > freeze_after > 0): D_t = {i : u_i >= the top_k-th
      largest u} (ties included), or {i : u_i / U >= (beta - xi/N) / (1 - xi)} for a constant beta;
      {argmax u} if empty.  Each node i that no member of D_t points to (or every node, with
      ``refine_all``) gets the edge (d_i, i), d_i = argmax_{d in D_t} divergence[d, i] (argmin with
      ``refine_argmin``; ties: smallest index).  SFG uses the fixed dominating set given.
    * p_i = (1 - xi) u_i / U + xi / |D| 1{i in D}.  I is drawn with two uniforms: r1 < xi picks
      D[floor(r2 |D|)], otherwise the u-proportional node at r2 U (Fenwick tree).  With
      ``legacy_sampler`` I becomes min(I + 1, N - 1).  After ``exploit_after`` (> 0) rounds, I is
      argmax u (``exploit_mode`` 0) or node 0 (mode 1, the released code's SFG); no uniform used.
    * The subset is N_out(I) in the (refined) graph; q_i = sum_{j in N_in(i)} p_j is computed in
      O(1) from s_i = sum_{j in N_in(i)} u_j, kept incrementally; the importance weight is
      1 / max(q_i, q_floor).  The prediction mixes the subset with normalised w (only the unrefined
      N_out(I) with ``predict_unrefined``).
    * After the label: log w_i -= eta L_i / q_i on the subset, and
      u_I *= exp(-eta_u loss(y_hat, y) / max(p_I, p_floor)) (either rate may be self-confident,
      see the module docstring).

    Numerics: u, s, U and the tree are updated in O(M + log N) per round; a quantity that loses more
    than half its value is recomputed exactly, all of them are recomputed every 1024 rounds, and u is
    rescaled to sum 1 when U falls below 1e-200.  Prediction without learning uses the subset of
    argmax u (ties: smallest index), or every kernel with ``predict_all``.
    """

    def __init__(self, int n_experts, out_ptr, out_idx, dominating, divergence, int loss,
                 double eta_scale, int eta_kind, double eta_u_scale, int eta_u_kind,
                 double xi_scale, int xi_kind, double q_floor=0.0, double p_floor=0.0,
                 long exploit_after=0, int exploit_mode=0, bint legacy_sampler=False,
                 bint refine=False, double beta=-1.0, int top_k=10, bint refine_all=False,
                 bint refine_argmin=False, bint predict_unrefined=False, long freeze_after=0,
                 bint predict_all=False):
        cdef int N = n_experts, i, e
        out_ptr = np.ascontiguousarray(out_ptr, dtype=np.intc)
        out_idx = np.ascontiguousarray(out_idx, dtype=np.intc)
        if out_ptr.shape[0] != N + 1 or out_ptr[0] != 0 or out_ptr[N] != out_idx.shape[0]:
            raise ValueError("out_ptr/out_idx must be a CSR graph on n_experts nodes")
        if out_idx.size and (out_idx.min() < 0 or out_idx.max() >= N):
            raise ValueError("out_idx has a node outside 0..n_experts-1")
        adj = np.zeros((N, N), dtype=np.uint8)
        adj[np.repeat(np.arange(N), np.diff(out_ptr)), out_idx] = 1
        if not adj.diagonal().all():
            raise ValueError(f"node {int(np.argmin(adj.diagonal()))} has no self-loop")
        if adj.sum() != out_idx.shape[0]:
            raise ValueError("the graph has repeated edges")
        rows, cols = np.nonzero(adj.T)               # in-lists: for node j, the i with (i, j)
        self.in_ptr = np.searchsorted(rows, np.arange(N + 1)).astype(np.intc)
        self.in_idx = cols.astype(np.intc)
        self.out_ptr = out_ptr
        self.out_idx = out_idx
        self.adj = adj
        self.n_experts = N
        divergence = np.array(divergence, dtype=np.float64, order="C")
        if divergence.shape != (N, N):
            raise ValueError("divergence must be (n_experts, n_experts)")
        self.divergence = divergence
        self.loss = loss
        self.eta.scale = eta_scale
        self.eta.kind = eta_kind
        self.eta_u.scale = eta_u_scale
        self.eta_u.kind = eta_u_kind
        self.xi.scale = xi_scale
        self.xi.kind = xi_kind
        _check_exploration(self.xi, "xi")
        self.q_floor = q_floor
        self.p_floor = p_floor
        self.exploit_after = exploit_after
        self.exploit_mode = exploit_mode
        self.legacy_sampler = legacy_sampler
        self.refine = refine
        self.beta = beta
        self.top_k = top_k
        self.refine_all = refine_all
        self.refine_argmin = refine_argmin
        self.predict_unrefined = predict_unrefined
        self.freeze_after = freeze_after
        self.predict_all = predict_all
        self.log_w = np.zeros(N)
        self.u = np.ones(N)
        self.s = np.zeros(N)
        self.tree = np.zeros(N + 1)
        self.dstate = np.zeros(3)                    # [U, p of the drawn node, D_t threshold]
        self.istate = np.zeros(4, dtype=np.int64)    # [I, |D|, have D, D may be stale]
        self.dom_mask = np.zeros(N, dtype=np.uint8)
        self.dom_list = np.zeros(N, dtype=np.intc)
        self.cnt = np.zeros(N, dtype=np.intc)
        self.parent = np.full(N, -1, dtype=np.intc)
        self.child_head = np.full(N, -1, dtype=np.intc)
        self.child_next = np.full(N, -1, dtype=np.intc)
        self.q = np.ones(N)
        self.pred_mask = np.ones(N, dtype=np.uint8)
        self.scratch_mask = np.zeros(N, dtype=np.uint8)
        self.scratch_int = np.zeros(N, dtype=np.intc)
        self.rate_v = np.zeros(2)
        if not refine:
            dominating = np.asarray(dominating, dtype=bool)
            if dominating.shape != (N,) or not dominating.any():
                raise ValueError("dominating must be a non-empty boolean mask of n_experts nodes")
            covered = adj[dominating].any(axis=0)
            if not covered.all():
                raise ValueError(f"the dominating set does not cover node {np.argmin(covered)}")
            np.asarray(self.dom_mask)[...] = dominating.astype(np.uint8)
            self.rebuild_refinement()
            self.istate[2] = 1
        self.refresh()

    def _state_arrays(self):
        state = {"log_w": self.log_w, "u": self.u, "s": self.s, "tree": self.tree,
                 "dstate": self.dstate, "istate": self.istate, "dom_mask": self.dom_mask,
                 "dom_list": self.dom_list, "cnt": self.cnt, "parent": self.parent,
                 "child_head": self.child_head, "child_next": self.child_next, "q": self.q}
        if SCHEDULE_SELF_CONFIDENT in (self.eta.kind, self.eta_u.kind):
            state["rate_v"] = self.rate_v
        return state

    @property
    def chosen_node(self):
        return int(self.istate[0])

    def _check_semantics(self, state):
        """The dominating set must be a valid one (SFG: the fixed set of the parameters), and every
        structure derived from it (dom_list, in-counts, refinement edges and their child lists)
        must be exactly what rebuild_refinement makes of it: the compiled round walks these."""
        N = self.n_experts
        istate, dom_mask = state["istate"], state["dom_mask"]
        require(0 <= istate[0] < N, self, f"the drawn node must lie in [0, {N})")
        require(istate[2] in (0, 1) and istate[3] in (0, 1), self, "flags must be 0 or 1")
        require(np.isin(dom_mask, (0, 1)).all(), self, "dom_mask must be 0 or 1")
        require(((state["dom_list"] >= 0) & (state["dom_list"] < N)).all(), self,
                f"dom_list must hold nodes in [0, {N})")
        require((state["u"] >= 0).all() and (state["s"] >= 0).all(), self,
                "node weights and their sums must be >= 0")
        require(state["dstate"][0] > 0, self, "the total node weight must be positive")
        # u starts at 1 and only shrinks (a rescale divides by a total below 1e-200); U, kept by
        # increments, is their sum, and each s_j a sum of some of them
        u, U = state["u"], state["dstate"][0]
        require((u <= 1.0).all(), self, "node weights must be at most 1")
        require(abs(U - u.sum()) <= 1e-6 * U, self, "dstate[0] must be the sum of the weights u")
        require((state["s"] <= N * (1.0 + 1e-9)).all(), self,
                "the in-neighbour sums s must be at most the number of nodes")
        require(((state["q"] >= 0) & (state["q"] <= 1)).all(), self, "q must lie in [0, 1]")
        if "rate_v" in state:
            require((state["rate_v"] >= 0).all(), self, "rate_v must be >= 0")
        if not self.refine:
            require(np.array_equal(dom_mask, self.dom_mask) and istate[2] == 1, self,
                    "dom_mask must be the dominating set of the parameters")
        elif istate[2] == 0:
            require(not dom_mask.any() and istate[1] == 0, self,
                    "no dominating set may be marked before the first round")
        expected = self._derived_structure(dom_mask) if istate[2] else {
            "n_dom": 0, "cnt": np.zeros(N, np.intc), "parent": np.full(N, -1, np.intc),
            "child_head": np.full(N, -1, np.intc), "child_next": np.full(N, -1, np.intc)}
        require(istate[1] == expected["n_dom"] and expected["n_dom"] > 0 or not istate[2], self,
                "istate[1] must count the dominating set, which must not be empty")
        require(np.array_equal(state["dom_list"][:istate[1]], np.flatnonzero(dom_mask)), self,
                "dom_list must list the dominating set in order")
        for name in ("cnt", "parent", "child_head", "child_next"):
            require(np.array_equal(state[name], expected[name]), self,
                    f"{name} must be derived from dom_mask")

    def _derived_structure(self, dom_mask):
        """What rebuild_refinement derives from dom_mask, computed in NumPy."""
        N = self.n_experts
        adj = np.asarray(self.adj, dtype=np.intc)
        dom = np.flatnonzero(dom_mask)
        cnt = adj[dom].sum(axis=0).astype(np.intc)
        parent = np.full(N, -1, np.intc)
        head, nxt = np.full(N, -1, np.intc), np.full(N, -1, np.intc)
        if self.refine and dom.size:
            div = np.asarray(self.divergence)[dom]
            pick = np.argmin(div, axis=0) if self.refine_argmin else np.argmax(div, axis=0)
            for i in range(N - 1, -1, -1):
                if self.refine_all or cnt[i] == 0:
                    parent[i] = dom[pick[i]]
                    nxt[i] = head[parent[i]]
                    head[parent[i]] = i
        return {"n_dom": dom.size, "cnt": cnt, "parent": parent, "child_head": head,
                "child_next": nxt}

    def refresh_state(self):
        """Recompute the running sums from u (after u was edited from Python)."""
        self.refresh()

    def xi_at(self, long t):
        return _clip01(schedule_at(self.xi, t))

    @property
    def dominating_set(self):
        """The current dominating set (SFG: fixed; SFG-R: D_t of the last round)."""
        return np.flatnonzero(np.asarray(self.dom_mask)).astype(np.intp)

    def refined_adjacency(self):
        """Adjacency of the graph used in the last round (G plus the refinement edges)."""
        A = np.array(self.adj, dtype=bool)
        parent = np.asarray(self.parent)
        for i in np.flatnonzero(parent >= 0):
            A[parent[i], i] = True
        return A

    def observation_probabilities(self, long t):
        """q_i for every node at round t from the current state (Python helper for tests)."""
        A = self.refined_adjacency()
        return A.T.astype(float) @ self.node_probabilities(t)

    def node_probabilities(self, long t):
        """p_i for every node at round t from the current u and dominating set."""
        xi = self.xi_at(t)
        u = np.asarray(self.u)
        dom = np.asarray(self.dom_mask).astype(bool)
        return (1.0 - xi) * u / u.sum() + xi * dom / dom.sum()

    # -- bookkeeping -----------------------------------------------------------------------------
    cdef void rebuild_tree(self) noexcept nogil:
        cdef int N = self.n_experts, k, up
        for k in range(1, N + 1):
            self.tree[k] = self.u[k - 1]
        for k in range(1, N + 1):
            up = k + (k & -k)
            if up <= N:
                self.tree[up] += self.tree[k]

    cdef void refresh(self) noexcept nogil:
        """Recompute U, s and the tree exactly from u (rescaling u when it underflows)."""
        cdef int N = self.n_experts, i, e
        cdef double U = 0.0
        for i in range(N):
            U += self.u[i]
        if U == 0.0:                       # every weight underflowed: restart from uniform
            for i in range(N):
                self.u[i] = 1.0
            U = N
        elif U < 1e-200:
            for i in range(N):
                self.u[i] /= U
            U = 0.0
            for i in range(N):
                U += self.u[i]
        self.dstate[0] = U
        self.istate[3] = 1                 # u was rescaled or reset: recompute D_t
        for i in range(N):
            self.s[i] = 0.0
            for e in range(self.in_ptr[i], self.in_ptr[i + 1]):
                self.s[i] += self.u[self.in_idx[e]]
        self.rebuild_tree()

    cdef void fenwick_add(self, int i, double delta) noexcept nogil:
        cdef int k = i + 1
        while k <= self.n_experts:
            self.tree[k] += delta
            k += k & -k

    cdef int fenwick_find(self, double target) noexcept nogil:
        """Smallest i with u_0 + ... + u_i > target."""
        cdef int N = self.n_experts, pos = 0, step = 1, nxt
        while step * 2 <= N:
            step *= 2
        while step > 0:
            nxt = pos + step
            if nxt <= N and self.tree[nxt] <= target:
                pos = nxt
                target -= self.tree[nxt]
            step >>= 1
        return pos if pos < N else N - 1

    cdef int argmax_u(self) noexcept nogil:
        cdef int i, best = 0
        for i in range(1, self.n_experts):
            if self.u[i] > self.u[best]:
                best = i
        return best

    cdef void update_dominating(self, double xi) noexcept nogil:
        cdef int N = self.n_experts, i, r, pos, k, count = 0
        cdef double thr
        cdef bint same = True
        if self.top_k > 0:
            k = self.top_k if self.top_k < N else N
            r = 0                          # scratch_int[0:r]: the k largest u, descending
            for i in range(N):
                if r == k and self.u[i] <= self.u[self.scratch_int[r - 1]]:
                    continue
                pos = r if r < k else k - 1
                while pos > 0 and self.u[i] > self.u[self.scratch_int[pos - 1]]:
                    self.scratch_int[pos] = self.scratch_int[pos - 1]
                    pos -= 1
                self.scratch_int[pos] = i
                if r < k:
                    r += 1
            thr = self.u[self.scratch_int[k - 1]]
        elif xi >= 1.0:
            thr = 0.0
        else:
            thr = self.dstate[0] * (self.beta - xi / N) / (1.0 - xi)
        self.dstate[2] = thr
        for i in range(N):
            self.scratch_mask[i] = 1 if self.u[i] >= thr else 0
            count += self.scratch_mask[i]
        if count == 0:
            self.scratch_mask[self.argmax_u()] = 1
        if self.istate[2]:
            for i in range(N):
                if self.scratch_mask[i] != self.dom_mask[i]:
                    same = False
                    break
            if same:
                return
        for i in range(N):
            self.dom_mask[i] = self.scratch_mask[i]
        self.rebuild_refinement()
        self.istate[2] = 1

    cdef void rebuild_refinement(self) noexcept nogil:
        """dom_list, the in-counts |N_in(i) & D| and (SFG-R) the refinement edges, from dom_mask."""
        cdef int N = self.n_experts, i, e, r, n_dom = 0, best, d
        cdef double bv, v
        for i in range(N):
            if self.dom_mask[i]:
                self.dom_list[n_dom] = i
                n_dom += 1
        self.istate[1] = n_dom
        for i in range(N):
            self.cnt[i] = 0
            self.parent[i] = -1
            self.child_head[i] = -1
            self.child_next[i] = -1
        for r in range(n_dom):
            d = self.dom_list[r]
            for e in range(self.out_ptr[d], self.out_ptr[d + 1]):
                self.cnt[self.out_idx[e]] += 1
        if not self.refine:
            return
        for i in range(N - 1, -1, -1):       # descending, so child lists come out ascending
            if not (self.refine_all or self.cnt[i] == 0):
                continue
            best = self.dom_list[0]
            bv = self.divergence[best, i]
            for r in range(1, n_dom):
                d = self.dom_list[r]
                v = self.divergence[d, i]
                if (v < bv) if self.refine_argmin else (v > bv):
                    best = d
                    bv = v
            self.parent[i] = best
            self.child_next[i] = self.child_head[best]
            self.child_head[best] = i

    cdef int _subset(self, int I, int* active, bint with_unrefined_mask) noexcept nogil:
        cdef int n = 0, e, c
        for e in range(self.out_ptr[I], self.out_ptr[I + 1]):
            active[n] = self.out_idx[e]
            self.pred_mask[n] = 1
            n += 1
        c = self.child_head[I]
        while c >= 0:
            if not self.adj[I, c]:
                active[n] = c
                self.pred_mask[n] = 0 if with_unrefined_mask else 1
                n += 1
            c = self.child_next[c]
        return n

    # -- the round ------------------------------------------------------------------------------
    cdef int select(self, Round* ctx, int* active, double* weight) noexcept nogil:
        cdef long t = ctx.t
        cdef bitgen_t* rng = ctx.rng
        cdef int N = self.n_experts, I, n, j, i, n_dom, cn, par
        cdef double xi = _clip01(schedule_at(self.xi, t))
        cdef double U, r1, r2, su, qi
        if self.refine and (not self.istate[2] or
                            ((self.freeze_after <= 0 or t <= self.freeze_after)
                             and (self.istate[3] or self.top_k <= 0))):
            self.update_dominating(xi)
            self.istate[3] = 0
        U = self.dstate[0]
        n_dom = <int>self.istate[1]
        if self.exploit_after > 0 and t > self.exploit_after:
            I = self.argmax_u() if self.exploit_mode == 0 else 0
        else:
            r1 = _uniform(rng)
            r2 = _uniform(rng)
            if r1 < xi:
                j = <int>(r2 * n_dom)
                I = self.dom_list[j if j < n_dom else n_dom - 1]
            else:
                I = self.fenwick_find(r2 * U)
            if self.legacy_sampler and I < N - 1:
                I += 1
        self.istate[0] = I
        self.dstate[1] = (1.0 - xi) * self.u[I] / U + (xi / n_dom if self.dom_mask[I] else 0.0)
        n = self._subset(I, active, self.predict_unrefined)
        for j in range(n):
            i = active[j]
            su = self.s[i]
            cn = self.cnt[i]
            par = self.parent[i]
            if par >= 0 and not self.adj[par, i]:
                su += self.u[par]
                cn += 1
            qi = (1.0 - xi) * su / U + xi * cn / n_dom
            if qi > 1.0:
                qi = 1.0
            if qi < self.q_floor:
                qi = self.q_floor
            self.q[i] = qi
            weight[j] = 1.0 / qi
        return n

    cdef int select_predict(self, int* active) noexcept nogil:
        cdef int N = self.n_experts, i, n, e
        if self.predict_all:
            for i in range(N):
                active[i] = i
                self.pred_mask[i] = 1
            return N
        i = self.argmax_u()
        if self.predict_unrefined:
            n = 0
            for e in range(self.out_ptr[i], self.out_ptr[i + 1]):
                active[n] = self.out_idx[e]
                self.pred_mask[n] = 1
                n += 1
            return n
        return self._subset(i, active, False)

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        cdef double top = -INFINITY, num = 0.0, den = 0.0, w
        cdef int j
        for j in range(n_active):
            if self.pred_mask[j] and self.log_w[active[j]] > top:
                top = self.log_w[active[j]]
        for j in range(n_active):
            if self.pred_mask[j]:
                w = exp(self.log_w[active[j]] - top)
                num += w * preds[active[j]]
                den += w
        return num / den

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        cdef long t = ctx.t
        cdef double y_hat = ctx.y_hat
        cdef double y = ctx.y
        cdef double eta, eta_u, v = self.rate_v[0], v_u = self.rate_v[1]
        cdef double p, old, new, delta, U, loss = loss_value(self.loss, y_hat, y)
        cdef int j, i, e, I = <int>self.istate[0], f
        p = self.dstate[1]
        if p < self.p_floor:
            p = self.p_floor
        old = self.u[I]
        if self.eta.kind == SCHEDULE_SELF_CONFIDENT:
            v += mixture_second_moment(&self.log_w[0], active, n_active, &self.pred_mask[0],
                                       losses, &self.q[0])
            eta = self_confident(self.eta, self.n_experts, v)
        else:
            eta = schedule_at(self.eta, t)
        if self.eta_u.kind == SCHEDULE_SELF_CONFIDENT:
            v_u += old / self.dstate[0] * (loss / p) * (loss / p)
            eta_u = self_confident(self.eta_u, self.n_experts, v_u)
        else:
            eta_u = schedule_at(self.eta_u, t)
        new = old * exp(-eta_u * loss / p)
        if not (finite_increments(eta, active, n_active, losses, &self.q[0]) and isfinite(new)
                and isfinite(v) and isfinite(v_u)):
            self.n_rejected += 1
            return
        self.rate_v[0] = v
        self.rate_v[1] = v_u
        for j in range(n_active):
            i = active[j]
            self.log_w[i] -= eta * losses[i] / self.q[i]
        delta = new - old
        self.u[I] = new
        if self.dom_mask[I] and new < self.dstate[2]:
            self.istate[3] = 1             # I may leave the top-k set D_t
        U = self.dstate[0]
        if -delta > 0.5 * U or U + delta < 1e-200 or t % 1024 == 0:
            self.refresh()
            return
        self.dstate[0] = U + delta
        self.fenwick_add(I, delta)
        for e in range(self.out_ptr[I], self.out_ptr[I + 1]):
            j = self.out_idx[e]
            if -delta > 0.5 * self.s[j]:
                self.s[j] = 0.0
                for f in range(self.in_ptr[j], self.in_ptr[j + 1]):
                    self.s[j] += self.u[self.in_idx[f]]
            else:
                self.s[j] += delta
