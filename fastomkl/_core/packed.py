"""Packed storage of symmetric matrices (one triangle, row by row: see linalg.pxd)."""
import numpy as np


def packed_size(dim: int) -> int:
    return dim * (dim + 1) // 2


def pack(A):
    """Packed storage (..., dim (dim + 1) / 2) of symmetric matrices A (..., dim, dim)."""
    A = np.asarray(A, dtype=np.float64)
    rows, cols = np.tril_indices(A.shape[-1])
    return np.ascontiguousarray(A[..., rows, cols])


def unpack(P, dim: int):
    """Full symmetric matrices (..., dim, dim) from packed storage (..., dim (dim + 1) / 2)."""
    P = np.asarray(P)
    out = np.zeros(P.shape[:-1] + (dim, dim))
    rows, cols = np.tril_indices(dim)
    out[..., rows, cols] = P
    out[..., cols, rows] = P
    return out
