from fastomkl._core.base cimport ExpertBank

# Step-size rules of the bandit experts (the sampled kernel's step lambda_{t,k}):
cdef enum:
    STEP_FIXED = 0          # lambda = scale (OKS, Remark 1: m sqrt(delta / (K T)))
    STEP_ADAGRAD_NORM = 1   # lambda = s_t / sqrt(sum_tau g~^2), s_t = max |y| so far (OKS default)
    STEP_OKSPP = 2          # OKS++ (Theorem 3.1), from C~_t and Delta_{t,k}
    STEP_ADAGRAD_U = 3      # IOKS (eq. 6): U / sqrt(2 (1 + sum_tau g~^2))


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
    cdef readonly long budget                 # most rows stored (0: unbounded)
    cdef readonly long[::1] oldest            # [the slot the next round takes once full]
    cdef void _restore_sqnorms(self, long n) noexcept
    cdef double _drop(self, long r, int k, const double* x, double f) noexcept nogil
