# cython: freethreading_compatible = True
"""Random features in blocks for doubly stochastic gradients (Dai et al., NeurIPS 2014).

Block ``t`` of ``r`` random Fourier features of a model is a pure function of
``(seed, stream, t)``: every draw is SplitMix64 of a per-block key plus the draw's counter, so a
block is generated bit-identically in any order, on any thread, on any CPU.  Gaussians come from
Box-Muller (no rejection); the transforms use IEEE basic operations only
(src_c/fastomkl_draws.c), so the draws are the same bits on every CPU, whatever its vector width
or libm.

Block layout: ``W`` is (d, r) row-major (column k is the frequency of feature k), ``b`` (r,) the
phases; the block's features are ``z(x) = sqrt(2/r) cos(W^T x + b)``, so that
``E[z(x)^T z(x')] = k(x, x')``.

``BlockFeatures`` is the feature bank of the DSG models: the blocks a model holds, keyed as
above, with their frequencies kept in memory as a cache of what the keys determine (a saved
model stores the keys, and loading generates the cache again), so a round's features are a
projection and cosines, as for any random-feature model.

The functions below serve the checks and the GP's variance operator: ``generate_block`` and
``features`` give a block and its features of a matrix; ``run_blocks`` generates blocks and
combines their features into the GP variance operator of two independent draws
(``operator_apply``, ``operator_diagonal``), whose O((n_blocks r)^2) multiply-adds are the hot
loop of that method.
"""
from libc.math cimport fabs, fmax, fmin, isfinite, sqrt
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dgemm, sgemm

from fastomkl._core.base cimport FeatureBank
from fastomkl._core.numeric cimport FLOAT_SAFE


cdef extern from "fastomkl_dsg.h":
    void fastomkl_dsg_cos(double* z, const double* b, long n, int r, double scale) nogil
    void fastomkl_dsg_cos_float(double* z, const float* p, const double* b, long n, int r,
                                double scale) nogil
    void fastomkl_dsg_project_sparse(double* z, const double* x, int d, const double* W,
                                     int r) nogil
    void fastomkl_dsg_project_float(float* p, const double* x, int d, const float* W,
                                    int r) nogil

cdef extern from "fastomkl_draws.h" nogil:
    uint64_t fastomkl_draw_key(uint64_t seed, uint64_t stream, uint64_t t, uint64_t what)
    void fastomkl_draw_gaussian(uint64_t key, long n, double scale, double* out)
    void fastomkl_draw_cauchy(uint64_t key, long n, double scale, double* out)
    void fastomkl_draw_laplace(uint64_t key, long n, double scale, double* out)
    void fastomkl_draw_phases(uint64_t key, long n, double* out)

import numpy as np

from fastomkl._core.arrays import aligned_zeros
from fastomkl._core.checks import require

# The smallest bandwidth a bank takes (the median heuristic's floor too): below it the inverse
# bandwidth, and so every frequency, overflows.
MIN_BANDWIDTH = 1e-100

# The generator, named in saved models: a change in any draw must change this id.
GENERATOR = "splitmix64-boxmuller-v3"

KERNEL_IDS = {"gaussian": GAUSSIAN, "laplacian": LAPLACIAN, "cauchy": CAUCHY, "matern": MATERN}

# The GP's second, independent draws are the blocks (stream + SECOND_DRAWS, index); the models'
# own streams stay below it.
SECOND_DRAWS = 1 << 62

# Rows of a prediction are processed in slices of this many, so the buffers stay small.
DEF ROW_SLICE = 512


cdef int fill_block(int kind, int matern_df, double inv_bandwidth, uint64_t seed,
                    uint64_t stream, uint64_t t, int d, int r, double* W, double* b) noexcept nogil:
    """Frequencies W (d, r) and phases b (r,) of block (seed, stream, t); -1 if out of memory.

    Draw i of the frequency key fills W's i-th entry in row-major order.  Matern frequencies are
    multivariate Student t: Gaussian rows scaled per feature by sqrt(df / chi2(df)), the chi2
    made of df Gaussians per feature from their own key.
    """
    cdef long n = <long>d * r
    cdef uint64_t frequency_key = fastomkl_draw_key(seed, stream, t, 0)
    cdef double* normals
    cdef double chi2
    cdef int j, k, m
    fastomkl_draw_phases(fastomkl_draw_key(seed, stream, t, 1), r, b)
    if kind == LAPLACIAN:
        fastomkl_draw_cauchy(frequency_key, n, inv_bandwidth, W)
    elif kind == CAUCHY:
        fastomkl_draw_laplace(frequency_key, n, inv_bandwidth, W)
    else:
        fastomkl_draw_gaussian(frequency_key, n, inv_bandwidth, W)
    if kind != MATERN:
        return 0
    normals = <double*>malloc(<long>r * matern_df * sizeof(double))
    if normals == NULL:
        return -1
    fastomkl_draw_gaussian(fastomkl_draw_key(seed, stream, t, 2), <long>r * matern_df, 1.0,
                           normals)
    for k in range(r):
        chi2 = 0.0
        for m in range(matern_df):
            chi2 += normals[k * matern_df + m] * normals[k * matern_df + m]
        chi2 = sqrt(matern_df / chi2)
        for j in range(d):
            W[j * r + k] *= chi2
    free(normals)
    return 0


cdef void mark_sparse(const double* X, int n, int d, unsigned char* sparse) noexcept nogil:
    """sparse[i] = 1 where at most a quarter of row i's entries are nonzero (then summing the
    rows of W they select is cheaper than a dense product); once per call, not per block."""
    cdef int i, j, nonzero
    for i in range(n):
        nonzero = 0
        for j in range(d):
            nonzero += X[<long>i * d + j] != 0.0
        sparse[i] = 4 * nonzero <= d


cdef double largest(const double* a, long n) noexcept nogil:
    cdef double top = 0.0
    cdef long i
    for i in range(n):
        if fabs(a[i]) > top:
            top = fabs(a[i])
    return top


cdef void block_features(const double* X, const unsigned char* sparse, const float* X32, int n,
                         int d, int r, const double* W, const float* W32, const double* b,
                         double* Z, float* Z32, bint may_overflow=0) noexcept nogil:
    """Z (n, r) row-major = sqrt(2/r) cos(X W + b), X (n, d) row-major, `sparse` its rows' marks
    (``mark_sparse``).

    In single precision when X32 is not NULL: the projection (sgemm) and the cosine in float32
    from X32 and W32 (float copies of X and W), the features written as doubles into Z, through
    the scratch Z32 (n, r).  When the caller says the float projection `may_overflow` (|x| is
    accepted up to 1e150), a row whose projection did is projected again in double.
    """
    cdef double one = 1.0, zero = 0.0
    cdef float one32 = 1.0, zero32 = 0.0
    cdef int i = 0, run
    if X32 == NULL:
        # Rows with few nonzeros (one-hot data such as a9a: 14 of 123) add the rows of W they
        # select; runs of the other rows go to dgemm.  Either way a row's features depend on
        # that row alone, so predictions regenerate the learnt features bit for bit.
        while i < n:
            if sparse[i]:
                fastomkl_dsg_project_sparse(Z + <long>i * r, X + <long>i * d, d, W, r)
                i += 1
                continue
            run = 1
            while i + run < n and not sparse[i + run]:
                run += 1
            dgemm(b"N", b"N", &r, &run, &d, &one, <double*>W, &r, <double*>(X + <long>i * d), &d,
                  &zero, Z + <long>i * r, &r)
            i += run
        fastomkl_dsg_cos(Z, b, n, r, sqrt(2.0 / r))
    else:
        sgemm(b"N", b"N", &r, &n, &d, &one32, <float*>W32, &r, <float*>X32, &d, &zero32, Z32, &r)
        fastomkl_dsg_cos_float(Z, Z32, b, n, r, sqrt(2.0 / r))
        for i in range(n if may_overflow else 0):
            if not row_finite(Z32 + <long>i * r, r):
                run = 1
                dgemm(b"N", b"N", &r, &run, &d, &one, <double*>W, &r, <double*>(X + <long>i * d),
                      &d, &zero, Z + <long>i * r, &r)
                fastomkl_dsg_cos(Z + <long>i * r, b, 1, r, sqrt(2.0 / r))


cdef inline bint row_finite(const float* p, int r) noexcept nogil:
    cdef int k
    for k in range(r):
        if not isfinite(p[k]):
            return False
    return True


cdef inline void to_float(const double* a, long n, float* out) noexcept nogil:
    cdef long i
    for i in range(n):
        out[i] = <float>a[i]


cdef int run_blocks(const double* X, int n, int d, int r, int kind, int matern_df,
                    double inv_bandwidth, uint64_t seed, const long long* streams,
                    const long long* indices, long lo, long hi, bint single, int combine,
                    const double* coef, int C, double scale, double* out) noexcept nogil:
    """For blocks lo..hi-1 in order: regenerate the block, take its features of X (n, d) by
    slices of rows (in float32 if `single`), and combine them into `out` as `combine` says.

    ``coef`` is the packed operator (ADD_OPERATOR: block u's column (r, (u+1) r) row-major at
    offset r^2 u (u+1) / 2; ``out`` has C columns), or G (ADD_DOT: (n, C)).  Returns -1 if a
    buffer could not be allocated, else 0.
    """
    cdef int rows = n if n < ROW_SLICE else ROW_SLICE
    cdef double* W = <double*>malloc(d * r * sizeof(double))
    cdef double* b = <double*>malloc(r * sizeof(double))
    cdef double* Z = <double*>malloc(rows * r * sizeof(double))
    cdef unsigned char* sparse = <unsigned char*>malloc(n)
    cdef float* X32 = NULL
    cdef float* W32 = NULL
    cdef float* Z32 = NULL
    cdef double one = 1.0, dot, x_max = 0.0
    cdef long blk
    cdef int start, m, i, j, width, status = 0
    cdef bint may_overflow = False
    if single:
        X32 = <float*>malloc(<long>n * d * sizeof(float))
        W32 = <float*>malloc(<long>d * r * sizeof(float))
        Z32 = <float*>malloc(<long>rows * r * sizeof(float))
    if W == NULL or b == NULL or Z == NULL or sparse == NULL \
            or (single and (X32 == NULL or W32 == NULL or Z32 == NULL)):
        status = -1
    elif single:
        to_float(X, <long>n * d, X32)
        x_max = largest(X, <long>n * d)
    else:
        mark_sparse(X, n, d, sparse)
    blk = lo
    while status == 0 and blk < hi:
        status = fill_block(kind, matern_df, inv_bandwidth, seed, <uint64_t>streams[blk],
                            <uint64_t>indices[blk], d, r, W, b)
        if single:
            to_float(W, <long>d * r, W32)
            may_overflow = x_max * largest(W, <long>d * r) * d > FLOAT_SAFE
        start = 0
        while status == 0 and start < n:
            m = n - start if n - start < rows else rows
            block_features(X + start * d, sparse + start, X32 + start * d if single else NULL,
                           m, d, r, W, W32, b, Z, Z32, may_overflow)
            if combine == ADD_OPERATOR:
                # out[:, :(blk+1) r]^T ((blk+1) r, m) += scale * theta_blk^T @ Z^T (r, m)
                width = <int>((blk + 1) * r)
                dgemm(b"N", b"N", &width, &m, &r, &scale,
                      <double*>(coef + <long>r * r * (blk * (blk + 1) // 2)), &width, Z, &r,
                      &one, out + <long>start * C, &C)
            else:
                for i in range(m):
                    dot = 0.0
                    for j in range(r):
                        dot = dot + Z[<long>i * r + j] * coef[<long>(start + i) * C + blk * r + j]
                    out[start + i] += dot
            start += m
        blk += 1
    free(W); free(b); free(Z); free(sparse); free(X32); free(W32); free(Z32)
    return status


cdef int _ascending(const void* a, const void* b) noexcept nogil:
    cdef double u = (<const double*>a)[0], v = (<const double*>b)[0]
    return (u > v) - (u < v)


cdef double median_distance(const double* X, int n, int d, double clip) noexcept nogil:
    """The median Euclidean distance between the rows i < j of X (n, d) that differ, each value
    clipped to [-clip, clip] first (the median of an even count is the mean of the middle two);
    -1 if no two rows differ, -2 if out of memory."""
    cdef long pairs = <long>n * (n - 1) // 2, m = 0, i, j
    cdef double* distances = <double*>malloc((pairs + 1) * sizeof(double))
    cdef double total, delta, median
    cdef int l
    if distances == NULL:
        return -2.0
    for i in range(n):
        for j in range(i + 1, n):
            total = 0.0
            for l in range(d):
                delta = (fmin(fmax(X[i * d + l], -clip), clip)
                         - fmin(fmax(X[j * d + l], -clip), clip))
                total += delta * delta
            if total > 0.0:
                distances[m] = sqrt(total)
                m += 1
    if m == 0:
        free(distances)
        return -1.0
    qsort(distances, m, sizeof(double), _ascending)
    median = distances[m // 2] if m % 2 else (distances[m // 2 - 1] + distances[m // 2]) / 2.0
    free(distances)
    return median


def median_distances(const double[:, ::1] X, double clip):
    """``median_distance`` of the rows of X (None when no two differ)."""
    cdef double median
    with nogil:
        median = median_distance(&X[0, 0], X.shape[0], X.shape[1], clip) \
            if X.shape[0] > 1 and X.shape[1] > 0 else -1.0
    if median == -2.0:
        raise MemoryError("no memory for the pairwise distances")
    return None if median < 0 else median


def generate_block(str kernel, int matern_df, double bandwidth, unsigned long long seed,
                   long long stream, long long t, int d, int r):
    """(W (d, r), b (r,)) of block (seed, stream, t), the frequencies already divided by the
    bandwidth."""
    W = np.empty((d, r))
    b = np.empty(r)
    cdef double[:, ::1] Wv = W
    cdef double[::1] bv = b
    cdef int kind = KERNEL_IDS[kernel]
    cdef int status = 0
    if d > 0 and r > 0:
        with nogil:
            status = fill_block(kind, matern_df, 1.0 / bandwidth, seed, <uint64_t>stream,
                                <uint64_t>t, d, r, &Wv[0, 0], &bv[0])
    if status != 0:
        raise MemoryError("no memory for a feature block")
    return W, b


def features(const double[:, ::1] X, const double[:, ::1] W, const double[::1] b,
             bint single=False):
    """sqrt(2/r) cos(X W + b) for X (n, d) and one block (W (d, r), b (r,)), computed in float32
    if `single`."""
    cdef int n = X.shape[0], d = X.shape[1], r = W.shape[1]
    if W.shape[0] != d or b.shape[0] != r:
        raise ValueError("the block does not match the width of X")
    Z = np.empty((n, r))
    cdef double[:, ::1] Zv = Z
    cdef float[:, ::1] X32, W32, Z32
    cdef unsigned char[::1] sparse
    if n > 0 and r > 0 and d > 0:
        if single:
            X32 = np.asarray(X, dtype=np.float32)
            W32 = np.asarray(W, dtype=np.float32)
            Z32 = np.empty((n, r), dtype=np.float32)
            with nogil:
                block_features(&X[0, 0], NULL, &X32[0, 0], n, d, r, &W[0, 0], &W32[0, 0], &b[0],
                               &Zv[0, 0], &Z32[0, 0],
                               largest(&X[0, 0], <long>n * d) * largest(&W[0, 0], <long>d * r) * d
                               > FLOAT_SAFE)
        else:
            sparse = np.empty(n, dtype=np.uint8)
            with nogil:
                mark_sparse(&X[0, 0], n, d, &sparse[0])
                block_features(&X[0, 0], &sparse[0], NULL, n, d, r, &W[0, 0], NULL, &b[0],
                               &Zv[0, 0], NULL)
    return Z


# -- the GP variance operator (the paper's method 1) -------------------------------------------------
# A = sum over blocks s <= u of Z_s(.)^T Theta_su Z'_u(.), with Z_s the features of block s of the
# first draws (omega) and Z'_u those of block u of the second, independent draws (omega').  Theta
# is packed by columns: column u, (Theta_0u; ...; Theta_uu)^T of shape (r, (u+1) r), row-major,
# at offset r^2 u (u+1) / 2, so the operator grows by one column per iteration.

def _check_operator(const long long[::1] streams, const long long[::1] indices,
                    const double[::1] theta, int r):
    cdef long n_blocks = streams.shape[0]
    if indices.shape[0] != n_blocks or theta.shape[0] != <long>r * r * (n_blocks * (n_blocks + 1) // 2):
        raise ValueError("theta must hold r^2 n (n + 1) / 2 values for n blocks")
    return n_blocks


def operator_apply(const double[:, ::1] X, str kernel, int matern_df, double bandwidth,
                   unsigned long long seed, const long long[::1] streams,
                   const long long[::1] indices, const double[::1] theta, double scale, int r,
                   double[:, ::1] out, bint single=False):
    """out (n, P) += scale * the coordinates of A(., x) in the first draws' features, for every
    row x of X: out[:, s r + j] = sum over u >= s of (Theta_su Z'_u(x))_j.

    ``streams``, ``indices`` are the second draws' blocks (regenerated here); P >= n_blocks r.
    Releases the GIL; O(n (n_blocks r)^2 / 2) multiply-adds.
    """
    cdef long n_blocks = _check_operator(streams, indices, theta, r)
    cdef int n = X.shape[0], d = X.shape[1], P = out.shape[1], status = 0
    cdef int kind = KERNEL_IDS[kernel]
    if out.shape[0] != n or P < n_blocks * r:
        raise ValueError("out must have a row per row of X and n_blocks r columns at least")
    if n_blocks == 0 or n == 0:
        return
    with nogil:
        status = run_blocks(&X[0, 0], n, d, r, kind, matern_df, 1.0 / bandwidth, seed,
                            &streams[0], &indices[0], 0, n_blocks, single, ADD_OPERATOR,
                            &theta[0], P, scale, &out[0, 0])
    if status != 0:
        raise MemoryError("no memory for a feature block")


def operator_diagonal(const double[:, ::1] X, str kernel, int matern_df, double bandwidth,
                      unsigned long long seed, const long long[::1] streams,
                      const long long[::1] second_streams, const long long[::1] indices,
                      const double[::1] theta, double scale, int r, bint single=False):
    """A(x, x) = sum over s <= u of Z_s(x)^T Theta_su Z'_u(x) for every row x of X, shape (n,);
    the first draws' blocks are (streams, indices), the second's (second_streams, indices)."""
    cdef long n_blocks = _check_operator(streams, indices, theta, r)
    cdef int n = X.shape[0], d = X.shape[1], P = <int>(n_blocks * r), status = 0, start, m
    cdef int kind = KERNEL_IDS[kernel]
    if second_streams.shape[0] != n_blocks:
        raise ValueError("second_streams must have one entry per block")
    out = np.zeros(n)
    if n_blocks == 0 or n == 0:
        return out
    cdef double[::1] q = out
    cdef double[:, ::1] G = np.empty((min(n, ROW_SLICE), P))
    for start in range(0, n, ROW_SLICE):
        m = min(n - start, ROW_SLICE)
        with nogil:
            memset(&G[0, 0], 0, <size_t>m * P * sizeof(double))
            status = run_blocks(&X[start, 0], m, d, r, kind, matern_df, 1.0 / bandwidth, seed,
                                &second_streams[0], &indices[0], 0, n_blocks, single,
                                ADD_OPERATOR, &theta[0], P, scale, &G[0, 0])
            if status == 0:
                status = run_blocks(&X[start, 0], m, d, r, kind, matern_df, 1.0 / bandwidth,
                                    seed, &streams[0], &indices[0], 0, n_blocks, single, ADD_DOT,
                                    &G[0, 0], P, 1.0, &q[start])
        if status != 0:
            raise MemoryError("no memory for a feature block")
    return out


# -- the feature bank of the DSG models --------------------------------------------------------------
cdef class BlockFeatures(FeatureBank):
    """The random-feature blocks of a DSG model: z(x) is the features of its committed blocks,
    then those of the pending block (see dsg.pxd), each block r wide, ``sqrt(2/r) cos(W^T x + b)``.

    The bank has ``n_views`` views of that one representation (one per output of the experts
    above it: a multiclass model's classes): view 0 computes z, and the other views write
    nothing, since the experts read view 0's features (``FunctionalSGDExperts``) and computing
    the same z once per class would multiply a round's cosines by the number of classes.

    Growth: the cache holds ``capacity`` slots and doubles before a round that could commit the
    pending block without a free slot for the next one (``needs_room``); ``max_blocks`` bounds the
    blocks (n_features_max // r), after which there is no pending block.

    ``seed_fixed`` / ``bandwidth_fixed``: whether a loaded state must carry the seed and the
    bandwidth given here (a model whose parameters fix them) or brings its own (a seed drawn at
    random, a bandwidth set by the median heuristic on the first data).
    """

    def __init__(self, str kernel, int matern_df, double bandwidth, uint64_t seed,
                 long long stream, int n_features, int r, long max_blocks, int n_views=1,
                 dtype="float64", bint seed_fixed=True, bint bandwidth_fixed=True):
        if kernel not in KERNEL_IDS or dtype not in ("float64", "float32"):
            raise ValueError(f"unknown kernel {kernel!r} or dtype {dtype!r}")
        if not (bandwidth >= MIN_BANDWIDTH and isfinite(bandwidth)) or r < 1 or max_blocks < 1:
            raise ValueError("BlockFeatures needs a finite bandwidth >= 1e-100, r >= 1, "
                             "max_blocks >= 1")
        if not 0 <= stream < SECOND_DRAWS:
            raise ValueError(f"stream must be in [0, 2^62), got {stream}")
        self.kind = KERNEL_IDS[kernel]
        self.matern_df = matern_df
        self.bandwidth = bandwidth
        self.seed = seed
        self.stream = stream
        self.n_features = n_features
        self.r = r
        self.max_blocks = max_blocks
        self.n_kernels = n_views
        self.single = dtype == "float32"
        self.n_work = r // 2 + 1 if self.single else 0     # the float projection of a block
        self.grows = True
        self.seed_fixed = seed_fixed
        self.bandwidth_fixed = bandwidth_fixed
        self.n_blocks = 0
        self.next_index = 0
        self._allocate(min(max_blocks, 4))
        self._generate(0, stream, 0)

    # -- the cache ---------------------------------------------------------------------------------
    def _allocate(self, long capacity):
        """Slots for `capacity` blocks, the first n_blocks + 1 (or n_blocks when full) kept."""
        cdef long keep = min(self.n_blocks + self.has_pending(), capacity)
        cdef int d = self.n_features, r = self.r
        streams = np.zeros(capacity, dtype=np.int64)
        indices = np.zeros(capacity, dtype=np.int64)
        W = aligned_zeros((capacity, d * r))
        W32 = aligned_zeros((capacity if self.single else 0, d * r), np.float32)
        b = np.zeros((capacity, r))
        w_max = np.zeros(capacity)
        if self.capacity:
            streams[:keep] = np.asarray(self.streams)[:keep]
            indices[:keep] = np.asarray(self.indices)[:keep]
            W[:keep] = np.asarray(self.W)[:keep]
            b[:keep] = np.asarray(self.b)[:keep]
            w_max[:keep] = np.asarray(self.w_max)[:keep]
            if self.single:
                W32[:keep] = np.asarray(self.W32)[:keep]
        self.streams, self.indices, self.W, self.W32, self.b, self.w_max = (
            streams, indices, W, W32, b, w_max)
        self.capacity = capacity
        self.n_outputs = <int>(capacity * r)

    cdef int _fill(self, long slot, long long stream, long long index) noexcept nogil:
        cdef long n = <long>self.n_features * self.r, i
        cdef double* W = &self.W[slot, 0]
        cdef double top = 0.0
        self.streams[slot] = stream
        self.indices[slot] = index
        if fill_block(self.kind, self.matern_df, 1.0 / self.bandwidth, self.seed,
                      <uint64_t>stream, <uint64_t>index, self.n_features, self.r, W,
                      &self.b[slot, 0]) != 0:
            return -1
        for i in range(n):
            if fabs(W[i]) > top:
                top = fabs(W[i])
            if self.single:
                self.W32[slot, i] = <float>W[i]
        self.w_max[slot] = top
        return 0

    def _generate(self, long slot, long long stream, long long index):
        if self._fill(slot, stream, index) != 0:
            raise MemoryError("no memory for a feature block")

    cdef bint has_pending(self) noexcept nogil:
        return self.n_blocks < self.max_blocks

    cdef void commit(self) noexcept nogil:
        """The pending block becomes block n_blocks; the next one (if the model may still grow)
        is generated into the following slot, which reserve() has made room for."""
        self.n_blocks += 1
        self.next_index += 1
        if self.has_pending():
            self._fill(self.n_blocks, self.stream, self.next_index)

    cdef bint needs_room(self) noexcept nogil:
        return self.n_blocks + 1 < self.max_blocks and self.capacity < self.n_blocks + 2

    def reserve(self):
        self._allocate(min(self.max_blocks, max(self.n_blocks + 2, 2 * self.capacity)))

    # -- a round ---------------------------------------------------------------------------------
    cdef void block_row(self, long j, const double* x, double x_max, float* work,
                        double* z) noexcept nogil:
        """z (r) = the features of slot j's block at x, in float32 (through `work`, r floats)
        when the bank is single and the float projection cannot overflow (|x| <= x_max)."""
        cdef int d = self.n_features, r = self.r
        cdef double norm = sqrt(2.0 / r)
        if self.single and x_max * self.w_max[j] * d <= FLOAT_SAFE:
            fastomkl_dsg_project_float(work, x, d, &self.W32[j, 0], r)
            fastomkl_dsg_cos_float(z, work, &self.b[j, 0], 1, r, norm)
        else:
            fastomkl_dsg_project_sparse(z, x, d, &self.W[j, 0], r)
            fastomkl_dsg_cos(z, &self.b[j, 0], 1, r, norm)

    cdef double largest_input(self, const double* x) noexcept nogil:
        """max |x_j| (the float32 guard's argument; 0 for a float64 bank, which needs none)."""
        return largest(x, self.n_features) if self.single else 0.0

    cdef void transform_prepared(self, const double* x, double* work, int k,
                                 double* z) noexcept nogil:
        cdef long j, blocks = self.n_blocks + self.has_pending()
        cdef double x_max
        if k != 0:
            return
        x_max = self.largest_input(x)
        for j in range(blocks):
            self.block_row(j, x, x_max, <float*>work, z + j * self.r)

    cdef void set_bandwidth(self, double bandwidth) noexcept nogil:
        """Adopt `bandwidth` for the pending block (generated again) and the blocks after it:
        for a model whose first batch sets it, before any block is committed."""
        self.bandwidth = bandwidth
        if self.has_pending():
            self._fill(self.n_blocks, self.stream, self.next_index)

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        cdef double* work = <double*>malloc((self.n_work + 1) * sizeof(double))
        if work != NULL:
            self.transform_prepared(x, work, k, z)
            free(work)

    # -- views -----------------------------------------------------------------------------------
    @property
    def block_keys(self):
        """(streams, indices) of the committed blocks, int64 (n_blocks,) each."""
        n = self.n_blocks
        return np.asarray(self.streams)[:n].copy(), np.asarray(self.indices)[:n].copy()

    def block(self, long j):
        """(W (d, r), b (r,)) of slot j: the committed block j, or the pending block for
        j = n_blocks."""
        if not 0 <= j < self.n_blocks + self.has_pending():
            raise IndexError(f"no block {j}")
        return (np.asarray(self.W)[j].reshape(self.n_features, self.r).copy(),
                np.asarray(self.b)[j].copy())

    def transform_held(self, const double[:, ::1] X):
        """The features of the committed blocks for every row of X (validated by the caller),
        (n, n_blocks r): what the experts' predictions read."""
        cdef long held = self.n_blocks * self.r, i, j
        out = np.zeros((X.shape[0], held))
        cdef double[:, ::1] Z = out
        cdef float[::1] work = np.zeros(self.r + 1, dtype=np.float32)
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, the bank {self.n_features}")
        with nogil:
            for i in range(X.shape[0] if held else 0):
                for j in range(self.n_blocks):
                    self.block_row(j, &X[i, 0], self.largest_input(&X[i, 0]), &work[0],
                                   &Z[i, j * self.r])
        return out

    @property
    def n_features_held(self):
        """The features of the committed blocks (n_blocks r)."""
        return self.n_blocks * self.r

    # -- state -----------------------------------------------------------------------------------
    def _prediction_arrays(self, BlockFeatures twin):
        """A round's z reads the slots' frequencies, phases and float32 guards, and the number
        of committed blocks (a view of the count itself; the seeds and keys only matter to
        learning and to files)."""
        if twin.capacity != self.capacity:
            twin._allocate(self.capacity)
        def arrays(BlockFeatures bank):
            return {"W": bank.W, "W32": bank.W32, "b": bank.b, "w_max": bank.w_max,
                    "n_blocks": np.asarray(<long[:1]>&bank.n_blocks)}
        return arrays(self), arrays(twin)

    def get_state(self):
        streams, indices = self.block_keys
        return {"streams": streams, "indices": indices,
                "next_index": np.array(self.next_index, dtype=np.int64),
                "seed": np.array(<long long>self.seed, dtype=np.int64),
                "bandwidth": np.array(self.bandwidth),
                "generator": np.frombuffer(GENERATOR.encode(), dtype=np.uint8).copy()}

    def check_state(self, state):
        names = {"streams", "indices", "next_index", "seed", "bandwidth", "generator"}
        require(set(state) == names, self, f"must have arrays {sorted(names)}, got "
                f"{sorted(state)}")
        state = {name: np.asarray(value) for name, value in state.items()}
        for name in ("streams", "indices", "next_index", "seed"):
            require(state[name].dtype == np.int64 and state[name].ndim == (name in
                    ("streams", "indices")), self, f"'{name}' must be int64"
                    f"{' (n_blocks,)' if name in ('streams', 'indices') else ' scalar'}")
        require(state["generator"].dtype == np.uint8
                and bytes(state["generator"]) == GENERATOR.encode(), self,
                f"the file's features come from another generator than {GENERATOR!r}")
        streams, indices = state["streams"], state["indices"]
        n = streams.shape[0]
        require(indices.shape == (n,), self, "'indices' must have one entry per block")
        require(n <= self.max_blocks, self, f"holds {n} blocks, more than the {self.max_blocks} "
                f"that n_features_max allows")
        require(((streams >= 0) & (streams < SECOND_DRAWS)).all() and (indices >= 0).all(), self,
                "block streams must be in [0, 2^62) and indices non-negative")
        require(len(set(zip(streams.tolist(), indices.tolist()))) == n, self,
                "a block appears twice")
        own = indices[streams == self.stream]
        require(state["next_index"] >= (own.max() + 1 if own.size else 0), self,
                "'next_index' must follow the blocks of the model's own stream")
        bandwidth = float(state["bandwidth"])
        require(state["bandwidth"].dtype == np.float64 and bandwidth >= MIN_BANDWIDTH
                and bandwidth < np.inf, self, "'bandwidth' must be a finite float64 >= 1e-100")
        require(not self.bandwidth_fixed or bandwidth == self.bandwidth, self,
                f"'bandwidth' {bandwidth} is not the kernel's {self.bandwidth}")
        require(state["seed"] >= 0 and (not self.seed_fixed or
                                        int(state["seed"]) == self.seed), self,
                f"'seed' {int(state['seed'])} is not the model's seed {self.seed}")

    def set_state(self, state):
        """Adopt the blocks of `state` and generate their frequencies (the cache) again."""
        self.check_state(state)
        streams, indices = np.asarray(state["streams"]), np.asarray(state["indices"])
        self.seed = <uint64_t>int(state["seed"])
        self.bandwidth = float(state["bandwidth"])
        self.n_blocks = 0
        self.capacity = 0
        n = streams.shape[0]
        self._allocate(min(self.max_blocks, max(n + 1, 4)))
        for j in range(n):
            self._generate(j, streams[j], indices[j])
        self.n_blocks = n
        self.next_index = int(state["next_index"])
        if self.has_pending():
            self._generate(n, self.stream, self.next_index)
