from fastomkl._core.base cimport Combiner


cdef int tsallis_normalise(const double* q, const double* eta, const double* ctilde, int K,
                           double alpha, double tol, int max_iter, bint newton, bint renormalize,
                           double* b, double* q_out, double* mu_out) noexcept nogil


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
