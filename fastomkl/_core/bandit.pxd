from fastomkl._core.base cimport Combiner, ExpertBank, FullInformation, bitgen_t

# Step-size rules of the bandit experts (the sampled kernel's step lambda_{t,k}):
cdef enum:
    STEP_FIXED = 0          # lambda = scale (OKS, Remark 1: m sqrt(delta / (K T)))
    STEP_ADAGRAD_NORM = 1   # lambda = s_t / sqrt(sum_tau g~^2), s_t = max |y| so far (OKS default)
    STEP_OKSPP = 2          # OKS++ (Theorem 3.1), from C~_t and Delta_{t,k}
    STEP_ADAGRAD_U = 3      # IOKS (eq. 6): U / sqrt(2 (1 + sum_tau g~^2))


cdef int tsallis_normalise(const double* q, const double* eta, const double* ctilde, int K,
                           double alpha, double tol, int max_iter, bint newton, bint renormalize,
                           double* b, double* q_out, double* mu_out) noexcept nogil


cdef class BanditExperts(ExpertBank):
    # The step-size statistics and the ball radius shared by the bandit experts.
    cdef readonly int loss, rule
    cdef readonly double scale, radius_fixed, gc0
    cdef double okspp_const                  # 1 / (sqrt(4/3) K^(1/6) (G C_0)^(1/3))
    cdef readonly bint project, legacy_tem1
    cdef readonly double[::1] sums           # (K,) Delta_k (OKS++) or sum of g~^2 (AdaGrad rules)
    cdef readonly double[::1] info           # [C~ (OKS++), max |y| seen, last step size]
    cdef double unit(self, double y) noexcept nogil
    cdef double radius(self) noexcept nogil
    cdef double scaled_step(self, int k, double f, double y, double weight,
                            double* s_out) noexcept nogil
    cdef double step_size(self, int k, double f, double y, double ct, double g) noexcept nogil


cdef class BanditRFFExperts(BanditExperts):
    # One weight vector w_k (2D) per kernel on its random features, clipped to
    # |w_j| <= U / sqrt(D').
    cdef readonly double[:, ::1] w
    cdef readonly int dim
    cdef readonly double clip_count           # D' of the box U / sqrt(D')


cdef class BanditExpansionExperts(BanditExperts):
    # One Gaussian kernel expansion per kernel, f_k = s_k sum_{r in S_k} c_r k_k(x_r, .), over rows
    # stored once (each row belongs to the kernel that was sampled when it arrived).
    cdef readonly double[::1] gamma           # (K,) 1 / (2 sigma_k^2)
    cdef readonly int n_features
    cdef readonly double[:, ::1] support      # (capacity, d)
    cdef readonly double[::1] sqnorm, coef    # (capacity,) ||x_r||^2 and c_r
    cdef readonly int[::1] owner              # (capacity,) kernel of row r
    cdef readonly long[::1] next_row          # (capacity,) next row of the kernel, -1: last
    cdef readonly long[::1] head, tail, sizes # (K,)
    cdef readonly double[::1] mult, norm2     # (K,) lazy multiplier s_k and ||f_k||^2
    cdef readonly long[::1] rows              # [rows stored]
    cdef void _restore_sqnorms(self, long n) noexcept


cdef class BanditSampler(Combiner):
    # One kernel per round drawn from p (inverse CDF, one uniform), importance weight 1 / p_I.
    cdef readonly double[::1] p, q
    cdef readonly long[::1] counts            # (K,) rounds each kernel was sampled
    cdef readonly bint predict_mixture
    cdef void mix(self, double delta) noexcept nogil


cdef class Exp3Sampler(BanditSampler):
    # OKS (Alg. 1, fixed or horizon-driven delta and eta) and OKS++ (adaptive delta_t, eta_t).
    cdef readonly bint adaptive, omd, legacy_tem1
    cdef readonly int loss                    # the loss code (sets the units), -1: raw losses
    cdef readonly double gc0, radius_fixed, loss_scale_fixed, eta_fixed
    cdef double log_k
    cdef readonly long horizon
    cdef readonly double[::1] cum_loss        # (K,) cumulative importance-weighted loss L_k
    cdef readonly double[::1] log_q           # (K,) OMD log-weights (q_update="omd")
    cdef readonly double[::1] stats           # [C~, V, max |y|, max loss, eta, delta, horizon]


cdef class TsallisSampler(BanditSampler):
    # IOKS (Alg. 2): OMD with the modified alpha-Tsallis entropy and increasing per-kernel rates.
    cdef readonly double alpha, tol, eta_const, radius_fixed, loss_scale_fixed
    cdef readonly int max_iter, g1_kind
    cdef readonly int loss                    # the loss code (sets the units), -1: raw losses
    cdef readonly bint newton, renormalize, ctilde_ge, clip_c
    cdef readonly long horizon
    cdef readonly double[::1] eta, rho        # (K,) eta_{t,k} and the thresholds rho_{t,k}
    cdef readonly long[::1] n_increases       # (K,)
    cdef readonly double[::1] stats           # [max |y|, max loss, horizon, eta base, upsilon,
                                              #  delta, mu*, iterations, c~]
    cdef double[::1] b                        # scratch (K,)


cdef class BudgetMixture(FullInformation):
    # LKMBooks' kernel weights (Li & Liao, MLJ 2022): exponential weights on
    # the linearised losses of the p-mixture, and the round's uniform for the support decision.
    cdef readonly int loss
    cdef readonly long horizon
    cdef readonly double eta_fixed
    cdef readonly double[::1] p
    cdef readonly double[::1] stats           # [g_max, the round's uniform]
    cdef double log_k
    cdef double[::1] scratch                  # (K,) log-weights of the update


cdef class BudgetedExpansion(ExpertBank):
    # LKMBooks' hypotheses: one support set of at most B rows and ONE coefficient vector shared by
    # all kernels, f_k(x) = sum_j alpha_j exp(-gamma_k ||x_j - x||^2).
    cdef readonly BudgetMixture mixture
    cdef readonly double[::1] gamma
    cdef readonly int n_features, loss, budget
    cdef readonly long horizon
    cdef readonly double nu, step_fixed
    cdef readonly bint logistic_step
    cdef readonly double[:, ::1] support      # (B, d)
    cdef readonly double[::1] coef            # (B,)
    cdef readonly long[::1] rows              # [rows in use]
    cdef double[::1] sq, f                    # scratch: distances (B,), this round's f_k (K,)
