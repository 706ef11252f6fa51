from fastomkl._core.base cimport DictionaryBank


cdef class NystromExperts(DictionaryBank):
    # Sequential-Nystrom PKAWV / projected KRR with a KORS dictionary (see nystrom.pyx).  Arrays
    # have room for cap_t samples and cap_m centres; info = [samples seen, dictionary size].
    cdef readonly double sigma, lam, mu, beta, eps
    cdef readonly int mode, weights_kind, n_features
    cdef readonly long max_centres
    cdef readonly long max_inputs         # inputs kept for insertions at most (0: no limit)
    cdef readonly bint cache_kernel       # keep K (memory O(t m)) or recompute it on insertion
    cdef public long n_refused           # insertions refused as numerically dependent
    cdef long[::1] info
    cdef double[:, ::1] X                 # (cap_t, d) every input learnt
    cdef double[::1] Y                    # (cap_t,) every label learnt
    cdef double[:, ::1] K                 # (cap_t, cap_m) K[s, j] = k(x_s, centre j); (0, 0)
                                          # unless cache_kernel
    cdef double[:, ::1] R                 # (cap_m, cap_m) upper, R^T R = K_tI^T K_tI + lam K_II
    cdef double[:, ::1] L                 # (cap_m, cap_m) upper, L^T L = S K_II S + mu I (KORS)
    cdef double[:, ::1] centres           # (cap_m, d)
    cdef double[::1] S                    # (cap_m,) KORS weights of the centres
    cdef double[::1] h                    # (cap_m,) K_tI^T Y_t
    cdef long[::1] index                  # (cap_m,) round (from 0) at which each centre entered
    cdef double[::1] a, w, g, v, c, col   # scratch
    cdef double lev
    cdef void kernel_row(self, const double* x, double* out) noexcept nogil
    cdef bint frozen(self) noexcept nogil
    cdef void insert(self, const double* x, double y, double p) noexcept nogil
