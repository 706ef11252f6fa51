"""Arithmetic floors of a VAW round: the BLAS or fastomkl packed kernels of a round and nothing else.

Benchmark-only code, compiled on first use by ``bench/floors.py`` (it is not part of the package).
"""
import numpy as np

from scipy.linalg.cython_blas cimport dspr, dspmv, dsyr, dsymv

cdef extern from "fastomkl_linalg.h" nogil:
    void fastomkl_spmv(int n, const double* A, const double* z, double* u)
    void fastomkl_spr(int n, double alpha, const double* u, double* A)


def packed_size(int dim):
    return dim * (dim + 1) // 2


def blas_floor(double[:, ::1] P, const double[:, ::1] z, long n_rounds, bint packed=True):
    """Time reference: n_rounds x, for every k, the two BLAS calls of a VAW round on P[k] and z[k]
    and nothing else: dspmv + dspr on packed P[k] (packed=True), or dsymv + dsyr on a full
    (dim x dim) P[k] stored flat (packed=False).  The arithmetic floor of a round with BLAS.
    The rank-one term is scaled so the matrices stay bounded; returns the last u[0].
    """
    cdef int n = P.shape[0], D = z.shape[1], inc = 1, k
    cdef long t
    cdef char uplo = b'U'
    cdef double one = 1.0, zero = 0.0, alpha = -1e-9
    if P.shape[1] != (packed_size(D) if packed else D * D):
        raise ValueError("P has the wrong width for z")
    u = np.zeros(D)
    cdef double[::1] uv = u
    with nogil:
        for t in range(n_rounds):
            for k in range(n):
                if packed:
                    dspmv(&uplo, &D, &one, &P[k, 0], <double*>&z[k, 0], &inc, &zero, &uv[0], &inc)
                    dspr(&uplo, &D, &alpha, &uv[0], &inc, &P[k, 0])
                else:
                    dsymv(&uplo, &D, &one, &P[k, 0], &D, <double*>&z[k, 0], &inc, &zero, &uv[0],
                          &inc)
                    dsyr(&uplo, &D, &alpha, &uv[0], &inc, &P[k, 0], &D)
    return u[0]


def kernel_floor(double[:, ::1] P, const double[:, ::1] z, long n_rounds):
    """Like blas_floor, with the package's own packed kernels (what VAWExperts runs)."""
    cdef int n = P.shape[0], D = z.shape[1], k
    cdef long t
    if P.shape[1] != packed_size(D):
        raise ValueError("P has the wrong width for z")
    u = np.zeros(D)
    cdef double[::1] uv = u
    with nogil:
        for t in range(n_rounds):
            for k in range(n):
                fastomkl_spmv(D, &P[k, 0], &z[k, 0], &uv[0])
                fastomkl_spr(D, -1e-9, &uv[0], &P[k, 0])
    return u[0]
