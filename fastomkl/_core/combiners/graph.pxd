from fastomkl._core.base cimport Combiner, bitgen_t
from fastomkl._core.steps cimport ChangeTest, Schedule

cdef class GraphFeedback(Combiner):
    # OMKL-GF (paper 000, Alg. 1-3): a bipartite graph of J selective nodes, each attached to at
    # most M kernels drawn i.i.d. from pi_j = (1 - eta_e^j) w_bar + eta_e^j / N; one selective node
    # is drawn with p_j = (1 - eta_e) u_j / U + eta_e / J and its kernels are the round's subset.
    cdef readonly double[::1] log_w
    cdef readonly int n_nodes, degree
    cdef Schedule eta, eta_e
    cdef readonly long freeze_after
    cdef readonly bint conditional_q, legacy_sampler
    cdef readonly double q_floor
    cdef readonly int[:, ::1] members        # (J, M) kernels attached to each selective node
    cdef readonly int[::1] n_members         # (J,)
    cdef readonly unsigned char[:, ::1] adj  # (J, N) membership
    cdef readonly double[::1] wlin           # (N,) exp(log_w - ref), kept in a Fenwick tree
    cdef readonly double[::1] tree           # (N + 1,) Fenwick tree over wlin
    cdef readonly double[::1] wstate         # [W = sum wlin, ref]
    cdef readonly double[::1] wbar_gen       # (N,) w_bar of the graph's kernels when generated
    cdef readonly double[::1] e_gen          # (J,) eta_e^j when generated
    cdef readonly double[::1] node_p         # (J,) p_j of the last selection
    cdef readonly double[::1] q              # (N,) effective q of the last round's kernels
    cdef readonly long[::1] info             # [graph_round, chosen node]
    cdef readonly double[::1] rate_v         # (1,) V of a self-confident eta (see graph.pyx)
    cdef readonly ChangeTest change          # its alarms restart a self-confident eta (or None)
    cdef int[::1] order                      # scratch (N,) for the top-M prediction subset
    cdef readonly bint predict_all
    cdef readonly bint sort_members          # each node's experts in index order (an ensemble's
                                             # members of one kernel then run in turn)
    cdef void generate(self, long t, double eta_e, bitgen_t* rng) noexcept nogil
    cdef void rebuild_weights(self) noexcept nogil
    cdef int mixture_find(self, double x, double e) noexcept nogil


cdef class SimilarityGraphFeedback(Combiner):
    # OMKL-SFG (Alg. 5) and, with `refine`, OMKL-SFG-R (Alg. 6) on a fixed directed graph G with
    # self-loops.  Node weights u are kept linear, with a Fenwick tree for O(log N) sampling and
    # s_j = sum_{i in N_in(j)} u_i for O(1) observation probabilities (Ghari & Shen 2023, 6.2).
    cdef readonly int[::1] out_ptr, out_idx, in_ptr, in_idx
    cdef readonly unsigned char[:, ::1] adj
    cdef readonly double[:, ::1] divergence
    cdef readonly double[::1] log_w, u, s, tree
    cdef readonly double[::1] dstate          # [U, p of the drawn node]
    cdef readonly long[::1] istate            # [drawn node, n_dom, have_dom]
    cdef readonly unsigned char[::1] dom_mask
    cdef readonly int[::1] dom_list, cnt, parent, child_head, child_next
    cdef readonly double[::1] q
    cdef readonly double[::1] rate_v          # (2,) V of self-confident eta and eta_u
    cdef unsigned char[::1] pred_mask, scratch_mask
    cdef int[::1] scratch_int
    cdef int loss
    cdef Schedule eta, eta_u, xi
    cdef readonly double q_floor, p_floor, beta
    cdef readonly int top_k
    cdef readonly long exploit_after, freeze_after
    cdef readonly int exploit_mode
    cdef readonly bint refine, refine_all, refine_argmin, predict_unrefined, legacy_sampler
    cdef readonly bint predict_all
    cdef void refresh(self) noexcept nogil
    cdef void fenwick_add(self, int i, double delta) noexcept nogil
    cdef int fenwick_find(self, double target) noexcept nogil
    cdef void rebuild_tree(self) noexcept nogil
    cdef void update_dominating(self, double xi) noexcept nogil
    cdef void rebuild_refinement(self) noexcept nogil
    cdef int argmax_u(self) noexcept nogil
    cdef int _subset(self, int I, int* active, bint with_unrefined_mask) noexcept nogil
