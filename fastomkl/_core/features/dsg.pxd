from libc.stdint cimport uint64_t

from fastomkl._core.base cimport FeatureBank

cdef enum:
    GAUSSIAN = 0
    LAPLACIAN = 1
    CAUCHY = 2
    MATERN = 3

# What the block loop run_blocks does with each block's features Z (rows x r) of a slice of rows:
cdef enum:
    ADD_OPERATOR = 1    # out (n, P)[:, :(blk+1) r] += scale Z theta_blk  (A(., x), the GP operator)
    ADD_DOT = 2         # out (n,) += the rows of Z . the rows of G[:, blk r:(blk+1) r]

cdef int fill_block(int kind, int matern_df, double inv_bandwidth, uint64_t seed,
                    uint64_t stream, uint64_t t, int d, int r, double* W,
                    double* b) noexcept nogil
cdef void block_features(const double* X, const unsigned char* sparse, const float* X32, int n,
                         int d, int r, const double* W, const float* W32, const double* b,
                         double* Z, float* Z32, bint may_overflow=*) noexcept nogil
cdef double median_distance(const double* X, int n, int d, double clip) noexcept nogil
cdef void mark_sparse(const double* X, int n, int d, unsigned char* sparse) noexcept nogil
cdef int run_blocks(const double* X, int n, int d, int r, int kind, int matern_df,
                    double inv_bandwidth, uint64_t seed, const long long* streams,
                    const long long* indices, long lo, long hi, bint single, int combine,
                    const double* coef, int C, double scale, double* out) noexcept nogil


cdef class BlockFeatures(FeatureBank):
    # The committed blocks 0 .. n_blocks - 1 of r features each, block j keyed by (seed,
    # streams[j], indices[j]), then, while the model may still grow (n_blocks < max_blocks), the
    # pending block (seed, stream, next_index): its features are part of every round's z, and
    # the experts commit it at the end of an iteration.  Frequencies and phases are cached in
    # slots 0 .. capacity - 1 (slot j for block j, slot n_blocks for the pending one).
    cdef readonly int r, kind, matern_df
    cdef readonly double bandwidth
    cdef readonly uint64_t seed
    cdef readonly long long stream, next_index
    cdef readonly long n_blocks, max_blocks, capacity
    cdef readonly bint single           # projections and cosines in float32
    cdef long long[::1] streams, indices
    cdef double[:, ::1] W               # slot j: block j's frequencies (d, r), row-major
    cdef float[:, ::1] W32              # their float32 copy (single)
    cdef double[:, ::1] b               # slot j: its phases (r,)
    cdef double[::1] w_max              # slot j: its largest |frequency| (the float32 guard)
    cdef bint has_pending(self) noexcept nogil
    cdef void commit(self) noexcept nogil
    cdef void block_row(self, long j, const double* x, double x_max, float* work,
                        double* z) noexcept nogil
    cdef double largest_input(self, const double* x) noexcept nogil
    cdef void set_bandwidth(self, double bandwidth) noexcept nogil
    cdef readonly bint seed_fixed, bandwidth_fixed
    cdef int _fill(self, long slot, long long stream, long long index) noexcept nogil
