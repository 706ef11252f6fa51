# cython: freethreading_compatible = True
"""Random-access random features for doubly stochastic gradients (Dai et al., NeurIPS 2014).

Block ``t`` of ``r`` random Fourier features of a model is a pure function of
``(seed, stream, t)``: every draw is SplitMix64 of a per-block key plus the draw's counter, so a
block is regenerated bit-identically at prediction time, in any order, on any thread, without
storing it.  Gaussians come from Box-Muller (no rejection); the transforms use IEEE basic
operations only (src_c/fastomkl_draws.c), so the draws are the same bits on every CPU, whatever
its vector width or libm.

Block layout: ``W`` is (d, r) row-major (column k is the frequency of feature k), ``b`` (r,) the
phases; the block's features are ``z(x) = sqrt(2/r) cos(W^T x + b)``, so that
``E[z(x)^T z(x')] = k(x, x')``.

One loop (``run_blocks``) regenerates blocks and combines their features: into predictions
(``accumulate``), or into the GP variance operator of two independent draws (``operator_apply``,
``operator_diagonal``), whose O((n_blocks r)^2) multiply-adds are the hot loop of that method.
"""
from libc.math cimport fabs, isfinite, sqrt
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dgemm, sgemm

from fastomkl._core.numeric cimport FLOAT_SAFE


cdef extern from "fastomkl_dsg.h":
    void fastomkl_dsg_cos(double* z, const double* b, long n, int r, double scale) nogil
    void fastomkl_dsg_cos_float(double* z, const float* p, const double* b, long n, int r,
                                double scale) nogil
    void fastomkl_dsg_project_sparse(double* z, const double* x, int d, const double* W,
                                     int r) nogil

cdef extern from "fastomkl_draws.h" nogil:
    uint64_t fastomkl_draw_key(uint64_t seed, uint64_t stream, uint64_t t, uint64_t what)
    void fastomkl_draw_gaussian(uint64_t key, long n, double scale, double* out)
    void fastomkl_draw_cauchy(uint64_t key, long n, double scale, double* out)
    void fastomkl_draw_laplace(uint64_t key, long n, double scale, double* out)
    void fastomkl_draw_phases(uint64_t key, long n, double* out)

import numpy as np

# The generator, named in saved models: a change in any draw must change this id.
GENERATOR = "splitmix64-boxmuller-v3"

DEF GAUSSIAN = 0
DEF LAPLACIAN = 1
DEF CAUCHY = 2
DEF MATERN = 3

KERNEL_IDS = {"gaussian": GAUSSIAN, "laplacian": LAPLACIAN, "cauchy": CAUCHY, "matern": MATERN}

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
                         double* Z, float* Z32, bint may_overflow=False) noexcept nogil:
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


# What the block loop does with each block's features Z (rows x r) of a slice of rows:
DEF ADD_COEF = 0        # out (n, C) += scale Z coef_blk              (a prediction)
DEF ADD_OPERATOR = 1    # out (n, P)[:, :(blk+1) r] += scale Z theta_blk  (A(., x), the GP operator)
DEF ADD_DOT = 2         # out (n,) += the rows of Z . the rows of G[:, blk r:(blk+1) r]


cdef int run_blocks(const double* X, int n, int d, int r, int kind, int matern_df,
                    double inv_bandwidth, uint64_t seed, const long long* streams,
                    const long long* indices, long lo, long hi, bint single, int combine,
                    const double* coef, int C, double scale, double* out) noexcept nogil:
    """For blocks lo..hi-1 in order: regenerate the block, take its features of X (n, d) by
    slices of rows (in float32 if `single`), and combine them into `out` as `combine` says.

    ``coef`` is the coefficients (ADD_COEF: (n_blocks r, C)), the packed operator (ADD_OPERATOR:
    block u's column (r, (u+1) r) row-major at offset r^2 u (u+1) / 2; ``out`` has C columns), or
    G (ADD_DOT: (n, C)).  Returns -1 if a buffer could not be allocated, else 0.
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
            if combine == ADD_COEF:
                # out^T (C, m) += scale * coef_blk^T (C, r) @ Z^T (r, m)
                dgemm(b"N", b"N", &C, &m, &r, &scale, <double*>(coef + blk * r * C), &C, Z, &r,
                      &one, out + start * C, &C)
            elif combine == ADD_OPERATOR:
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


def accumulate(const double[:, ::1] X, str kernel, int matern_df, double bandwidth,
               unsigned long long seed, const long long[::1] streams, const long long[::1] indices,
               const double[:, ::1] coef, double scale, long lo, long hi, double[:, ::1] out,
               bint single=False):
    """out += scale * (the sum over blocks lo..hi-1 of their features of X times their
    coefficients), with the blocks regenerated; releases the GIL.

    ``coef`` is (n_blocks * r, C); ``out`` (n, C).  The sum runs in block order, so a fixed
    partition of the blocks, reduced in a fixed order, gives the same bits on any thread count.
    """
    cdef int n = X.shape[0], d = X.shape[1], C = coef.shape[1]
    cdef int kind = KERNEL_IDS[kernel]
    cdef long n_blocks = streams.shape[0]
    cdef int r, status = 0
    if lo < 0 or hi > n_blocks or indices.shape[0] != n_blocks or out.shape[0] != n \
            or out.shape[1] != C:
        raise ValueError("inconsistent block range or shapes")
    if hi <= lo or n == 0:
        return
    r = coef.shape[0] // n_blocks
    if r * n_blocks != coef.shape[0] or r == 0:
        raise ValueError("coef must have n_blocks * block_size rows")
    with nogil:
        status = run_blocks(&X[0, 0], n, d, r, kind, matern_df, 1.0 / bandwidth, seed,
                            &streams[0], &indices[0], lo, hi, single, ADD_COEF, &coef[0, 0], C,
                            scale, &out[0, 0])
    if status != 0:
        raise MemoryError("no memory for a feature block")


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
