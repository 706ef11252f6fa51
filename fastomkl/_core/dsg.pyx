# cython: freethreading_compatible = True
"""Random-access random features for doubly stochastic gradients (Dai et al., NeurIPS 2014).

Block ``t`` of ``r`` random Fourier features of a model is a pure function of
``(seed, stream, t)``: every draw is SplitMix64 of a per-block key plus the draw's counter, so a
block is regenerated bit-identically at prediction time, in any order, on any thread, without
storing it.  Gaussians come from Box-Muller (no rejection), so the draws are the same on every
platform with IEEE doubles and the same libm.

Block layout: ``W`` is (d, r) row-major (column k is the frequency of feature k), ``b`` (r,) the
phases; the block's features are ``z(x) = sqrt(2/r) cos(W^T x + b)``, so that
``E[z(x)^T z(x')] = k(x, x')``.
"""
from libc.math cimport cos, log, sin, sqrt, tan, M_PI
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc
from scipy.linalg.cython_blas cimport dgemm

cdef extern from "fastomkl_dsg.h":
    void fastomkl_dsg_cos(double* z, const double* b, long n, int r, double scale) nogil

import numpy as np

# The generator, named in saved models: a change in any draw must change this id.
GENERATOR = "splitmix64-boxmuller-v2"

DEF GAUSSIAN = 0
DEF LAPLACIAN = 1
DEF CAUCHY = 2
DEF MATERN = 3

KERNEL_IDS = {"gaussian": GAUSSIAN, "laplacian": LAPLACIAN, "cauchy": CAUCHY, "matern": MATERN}

# Rows of a prediction are processed in slices of this many, so the buffers stay small.
DEF ROW_SLICE = 512


cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x += <uint64_t>0x9E3779B97F4A7C15
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EB
    return x ^ (x >> 31)


cdef inline uint64_t draw_key(uint64_t seed, uint64_t stream, uint64_t t, uint64_t what) noexcept nogil:
    """The key of one kind of draw (frequencies, phases, Matern scales) of one block."""
    return splitmix64(splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ t) ^ what)


cdef inline double uniform(uint64_t key, uint64_t i) noexcept nogil:
    """The i-th uniform of a key, in the open interval (0, 1)."""
    return (<double>(splitmix64(key + i * <uint64_t>0xD1B54A32D192ED03) >> 11) + 0.5) \
        * 1.1102230246251565e-16


cdef inline double gaussian(uint64_t key, uint64_t i) noexcept nogil:
    """The i-th standard normal of a key (Box-Muller on uniforms 2i and 2i+1)."""
    return sqrt(-2.0 * log(uniform(key, 2 * i))) * cos(2.0 * M_PI * uniform(key, 2 * i + 1))


cdef void fill_block(int kind, int matern_df, double inv_bandwidth, uint64_t seed,
                     uint64_t stream, uint64_t t, int d, int r, double* W, double* b) noexcept nogil:
    """Frequencies W (d, r) and phases b (r,) of block (seed, stream, t).

    Draw i of the frequency key fills W[j, k] with i = k d + j (feature by feature); Gaussians
    come in Box-Muller pairs (draws 2p and 2p + 1 share uniforms 2p and 2p + 1).
    """
    cdef uint64_t kw = draw_key(seed, stream, t, 0)
    cdef uint64_t kb = draw_key(seed, stream, t, 1)
    cdef uint64_t ks = draw_key(seed, stream, t, 2)
    cdef long n = <long>d * r
    cdef long i, p
    cdef int j, k, m
    cdef double u, radius, angle, chi2
    for k in range(r):
        b[k] = 2.0 * M_PI * uniform(kb, k)
    if kind == GAUSSIAN or kind == MATERN:
        for p in range((n + 1) // 2):
            radius = inv_bandwidth * sqrt(-2.0 * log(uniform(kw, 2 * p)))
            angle = 2.0 * M_PI * uniform(kw, 2 * p + 1)
            i = 2 * p
            W[(i % d) * r + i // d] = radius * cos(angle)
            i += 1
            if i < n:
                W[(i % d) * r + i // d] = radius * sin(angle)
        if kind == MATERN:          # multivariate Student t: N(0, I) * sqrt(df / chi2(df))
            for k in range(r):
                chi2 = 0.0
                for m in range(matern_df):
                    u = gaussian(ks, <uint64_t>k * matern_df + m)
                    chi2 += u * u
                u = sqrt(matern_df / chi2)
                for j in range(d):
                    W[j * r + k] *= u
        return
    for i in range(n):
        u = uniform(kw, i) - 0.5
        if kind == LAPLACIAN:       # Cauchy(0, 1) by inversion
            u = tan(M_PI * u)
        else:                       # Laplace(0, 1) by inversion
            u = -log(1.0 - 2.0 * u) if u >= 0 else log(1.0 + 2.0 * u)
        W[(i % d) * r + i // d] = inv_bandwidth * u


cdef void block_features(const double* X, int n, int d, int r, const double* W, const double* b,
                         double* Z) noexcept nogil:
    """Z (n, r) row-major = sqrt(2/r) cos(X W + b), X (n, d) row-major."""
    cdef double one = 1.0, zero = 0.0
    dgemm(b"N", b"N", &r, &n, &d, &one, <double*>W, &r, <double*>X, &d, &zero, Z, &r)
    fastomkl_dsg_cos(Z, b, n, r, sqrt(2.0 / r))


cdef int accumulate_blocks(const double* X, int n, int d, int r, int C, int kind, int matern_df,
                           double inv_bandwidth, uint64_t seed, const long long* streams,
                           const long long* indices, const double* coef, double scale,
                           long lo, long hi, double* out) noexcept nogil:
    """out (n, C) += scale * sum over blocks lo..hi-1 of z_blk(X) @ coef_blk (in block order).

    Returns -1 if a buffer could not be allocated, else 0.
    """
    cdef double* W = <double*>malloc(d * r * sizeof(double))
    cdef double* b = <double*>malloc(r * sizeof(double))
    cdef int rows = n if n < ROW_SLICE else ROW_SLICE
    cdef double* Z = <double*>malloc(rows * r * sizeof(double))
    cdef double one = 1.0
    cdef long blk
    cdef int start, m
    if W == NULL or b == NULL or Z == NULL:
        free(W); free(b); free(Z)
        return -1
    for blk in range(lo, hi):
        fill_block(kind, matern_df, inv_bandwidth, seed, <uint64_t>streams[blk],
                   <uint64_t>indices[blk], d, r, W, b)
        start = 0
        while start < n:
            m = n - start if n - start < rows else rows
            block_features(X + start * d, m, d, r, W, b, Z)
            # out^T (C, m) += scale * coef_blk^T (C, r) @ Z^T (r, m)
            dgemm(b"N", b"N", &C, &m, &r, &scale, <double*>(coef + blk * r * C), &C, Z, &r,
                  &one, out + start * C, &C)
            start += m
    free(W); free(b); free(Z)
    return 0


def generate_block(str kernel, int matern_df, double bandwidth, unsigned long long seed,
                   long long stream, long long t, int d, int r):
    """(W (d, r), b (r,)) of block (seed, stream, t), the frequencies already divided by the
    bandwidth."""
    W = np.empty((d, r))
    b = np.empty(r)
    cdef double[:, ::1] Wv = W
    cdef double[::1] bv = b
    cdef int kind = KERNEL_IDS[kernel]
    with nogil:
        fill_block(kind, matern_df, 1.0 / bandwidth, seed, <uint64_t>stream,
                   <uint64_t>t, d, r, &Wv[0, 0], &bv[0])
    return W, b


def features(const double[:, ::1] X, const double[:, ::1] W, const double[::1] b):
    """sqrt(2/r) cos(X W + b) for X (n, d) and one block (W (d, r), b (r,))."""
    cdef int n = X.shape[0], d = X.shape[1], r = W.shape[1]
    if W.shape[0] != d or b.shape[0] != r:
        raise ValueError("the block does not match the width of X")
    Z = np.empty((n, r))
    cdef double[:, ::1] Zv = Z
    if n > 0 and r > 0:
        with nogil:
            block_features(&X[0, 0], n, d, r, &W[0, 0], &b[0], &Zv[0, 0])
    return Z


def accumulate(const double[:, ::1] X, str kernel, int matern_df, double bandwidth,
               unsigned long long seed, const long long[::1] streams, const long long[::1] indices,
               const double[:, ::1] coef, double scale, long lo, long hi, double[:, ::1] out):
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
        status = accumulate_blocks(&X[0, 0], n, d, r, C, kind, matern_df, 1.0 / bandwidth, seed,
                                   &streams[0], &indices[0], &coef[0, 0], scale, lo, hi,
                                   &out[0, 0])
    if status != 0:
        raise MemoryError("no memory for a feature block")
