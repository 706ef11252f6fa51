"""Kernel divergences, the similarity feedback graph (paper 000, Alg. 4) and dominating sets.

These are the offline pieces of OMKL-SFG and OMKL-SFG-R, public so the graph can be inspected and
plotted.  Kernels follow the library's convention (``fastomkl.kernels``): Gaussian
exp(-||d||^2 / (2 sigma^2)) and Laplacian exp(-||d||_1 / sigma).

Divergence (eq. 27): S(k_i, k_j) = integral over R^dim of (k_i(r) - k_j(r))^2 dr, in closed form.
Writing I(k_i, k_j) = integral of k_i k_j, S = I_ii + I_jj - 2 I_ij and each I factorises over the
dim coordinates, I = I_1^dim, with (a = sigma^2 for a Gaussian, b = sigma for a Laplacian):

* Gaussian a1, Gaussian a2: I_1 = sqrt(2 pi a1 a2 / (a1 + a2))      (I_1(k, k) = sqrt(pi a))
* Laplacian b1, Laplacian b2: I_1 = 2 b1 b2 / (b1 + b2)              (I_1(k, k) = b)
* Gaussian a, Laplacian b: I_1 = sqrt(2 pi a) erfcx(sqrt(a / 2) / b)
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import erfcx, ndtr

from fastomkl.kernels import Gaussian, Kernel, Laplacian

__all__ = ["kernel_divergence", "divergence_matrix", "similarity_graph", "dominating_set",
           "adjacency_to_csr", "DIVERGENCES"]

DIVERGENCES = ("exact", "legacy_code", "legacy_nan")


def _family(kernel) -> str:
    if isinstance(kernel, Gaussian):
        return "gaussian"
    if isinstance(kernel, Laplacian):
        return "laplacian"
    raise ValueError(f"the kernel divergence is defined for Gaussian and Laplacian kernels, got "
                     f"{kernel!r}")


def _cross_1d(k1, k2) -> float:
    """Integral over R of k1(r) k2(r) for the 1-D profiles."""
    f1, f2 = _family(k1), _family(k2)
    if f1 == f2 == "gaussian":
        a1, a2 = k1.sigma ** 2, k2.sigma ** 2
        return math.sqrt(2.0 * math.pi * a1 * a2 / (a1 + a2))
    if f1 == f2 == "laplacian":
        return 2.0 * k1.sigma * k2.sigma / (k1.sigma + k2.sigma)
    g, lap = (k1, k2) if f1 == "gaussian" else (k2, k1)
    a, b = g.sigma ** 2, lap.sigma
    return math.sqrt(2.0 * math.pi * a) * float(erfcx(math.sqrt(a / 2.0) / b))


def _legacy_code(k1, k2) -> float:
    """The released code's 1-D formulas (with the missing return added), parameter a or b."""
    f1, f2 = _family(k1), _family(k2)
    p1 = k1.sigma ** 2 if f1 == "gaussian" else k1.sigma
    p2 = k2.sigma ** 2 if f2 == "gaussian" else k2.sigma
    sp = math.sqrt(math.pi)
    if f1 == f2 == "gaussian":
        return (p1 ** 1.5 / sp + p2 ** 1.5 / sp
                - math.sqrt(p1 * p2) / math.sqrt(2 * math.pi / p1 + 2 * math.pi / p2))
    if f1 == f2 == "laplacian":
        return (p1 + p2) / (4 * math.pi ** 2) - p1 * p2 / (2 * math.pi ** 2 * (p1 + p2))
    if f1 == "laplacian":
        p1, p2 = p2, p1                      # the mixed case is symmetric: p1 Gaussian, p2 Laplacian
    arg = math.sqrt(p1) / (math.sqrt(2.0) * p2)
    return (p1 ** 1.5 / sp + p2 / (4 * math.pi ** 2)
            - (p1 / (2 * math.pi)) * (1 + float(ndtr(arg)) - float(ndtr(-arg))))


def kernel_divergence(k1: Kernel, k2: Kernel, dim: int = 1, method: str = "exact") -> float:
    """Divergence Delta(k1, k2) between two Gaussian/Laplacian kernels.

    ``method="exact"``: S = integral over R^dim of (k1 - k2)^2 (eq. 27), closed form (module
    docstring).  ``"legacy_code"``: the released code's 1-D formulas (they are not eq. 27; ``dim``
    is ignored).  ``"legacy_nan"``: NaN, what the released code actually produced (its function has
    no return statement).

    Parameters
    ----------
    k1, k2 : Gaussian or Laplacian
    dim : int, default 1
        Dimension of the integral (the number of input features).
    method : {"exact", "legacy_code", "legacy_nan"}, default "exact"

    Returns
    -------
    float

    Examples
    --------
    >>> import math
    >>> from fastomkl import Gaussian, Laplacian
    >>> from fastomkl.graph import kernel_divergence
    >>> d = kernel_divergence(Gaussian(1.0), Gaussian(2.0))   # a = 1 and 4: I_11, I_22, I_12 above
    >>> pi = math.pi
    >>> math.isclose(d, math.sqrt(pi) + math.sqrt(4 * pi) - 2 * math.sqrt(8 * pi / 5))
    True
    >>> k = Gaussian(1.0)
    >>> kernel_divergence(k, k), kernel_divergence(k, Laplacian(1.0), dim=3) > 0
    (0.0, True)
    """
    if method not in DIVERGENCES:
        raise ValueError(f"method must be one of {DIVERGENCES}, got {method!r}")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    _family(k1)
    _family(k2)
    if method == "legacy_nan":
        return float("nan")
    if method == "legacy_code":
        return _legacy_code(k1, k2)
    i11, i22, i12 = _cross_1d(k1, k1), _cross_1d(k2, k2), _cross_1d(k1, k2)
    return i11 ** dim + i22 ** dim - 2.0 * i12 ** dim


def divergence_matrix(kernels, dim: int = 1, method: str = "exact") -> np.ndarray:
    """Delta[i, j] = kernel_divergence(kernels[i], kernels[j], dim, method), shape (N, N).

    The exact divergence is computed for all pairs at once (vectorised closed form).

    Parameters
    ----------
    kernels : list of Gaussian or Laplacian
    dim : int, default 1
    method : {"exact", "legacy_code", "legacy_nan"}, default "exact"

    Returns
    -------
    ndarray of float, shape (N, N)
        Symmetric, zero on the diagonal; divided by a common positive factor when the
        divergences themselves would overflow (hundreds of dimensions): the graphs depend only on
        their order.

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian
    >>> from fastomkl.graph import divergence_matrix, kernel_divergence
    >>> kernels = [Gaussian(0.5), Gaussian(2.0), Laplacian(1.0)]
    >>> delta = divergence_matrix(kernels, dim=2)
    >>> delta.shape, bool(np.allclose(delta, delta.T)), np.diag(delta).tolist()
    ((3, 3), True, [0.0, 0.0, 0.0])
    >>> bool(np.isclose(delta[0, 2], kernel_divergence(kernels[0], kernels[2], dim=2)))
    True
    """
    kernels = list(kernels)
    n = len(kernels)
    if method not in DIVERGENCES:
        raise ValueError(f"method must be one of {DIVERGENCES}, got {method!r}")
    if n:
        kernel_divergence(kernels[0], kernels[0], dim, method)      # validates dim
    gauss = np.array([_family(k) == "gaussian" for k in kernels])
    if method == "legacy_nan":
        return np.full((n, n), np.nan)
    if method == "legacy_code":
        return np.array([[_legacy_code(a, b) for b in kernels] for a in kernels]).reshape(n, n)
    sigma = np.array([k.sigma for k in kernels], dtype=np.float64)
    a = sigma ** 2                                   # Gaussian variance
    b = sigma                                        # Laplacian scale
    cross = np.empty((n, n))
    gg = gauss[:, None] & gauss[None, :]
    ll = ~gauss[:, None] & ~gauss[None, :]
    with np.errstate(all="ignore"):
        cross_gg = np.sqrt(2.0 * np.pi * a[:, None] * a[None, :] / (a[:, None] + a[None, :]))
        cross_ll = 2.0 * b[:, None] * b[None, :] / (b[:, None] + b[None, :])
        ag = np.where(gauss[:, None], a[:, None], a[None, :])     # the Gaussian of a mixed pair
        bl = np.where(gauss[:, None], b[None, :], b[:, None])     # the Laplacian of a mixed pair
        cross_gl = np.sqrt(2.0 * np.pi * ag) * erfcx(np.sqrt(ag / 2.0) / bl)
    cross[:] = np.where(gg, cross_gg, np.where(ll, cross_ll, cross_gl))
    self_ = np.where(gauss, np.sqrt(np.pi * a), b)
    with np.errstate(all="ignore"):
        out = self_[:, None] ** dim + self_[None, :] ** dim - 2.0 * cross ** dim
        if not np.isfinite(out).all():
            # The dim-th powers overflow (hundreds of input dimensions): the same matrix divided
            # by the largest of them, computed in the log domain.  The graphs depend on the
            # divergences only through their order, which a common positive factor keeps.
            logs = dim * np.log(self_)
            top = max(logs.max(), float(dim * np.log(cross).max()))
            out = (np.exp(logs[:, None] - top) + np.exp(logs[None, :] - top)
                   - 2.0 * np.exp(dim * np.log(cross) - top))
    np.fill_diagonal(out, 0.0)
    return out


def similarity_graph(kernels, M: int, dim: int = 1, divergence: str = "exact",
                     return_divergence: bool = False):
    """The similarity feedback graph of Alg. 4: adjacency A (N, N) bool, A[i, j] = edge (i, j).

    Every node i gets its self-loop, then M - 1 out-neighbours added greedily: at each step the
    node j not yet in N_out(i) with the largest mean divergence sum_{m in N_out(i)} Delta[m, j] /
    |N_out(i)| (ties: smallest index; a NaN score counts as the largest, as ``np.argmax`` does, so
    ``divergence="legacy_nan"`` gives N_out(i) = {i} and the first M - 1 other nodes).  Out-degree
    is exactly M, the self-loop included.  ``kernels`` may also be a precomputed (N, N) divergence
    matrix.

    Parameters
    ----------
    kernels : list of Gaussian or Laplacian, or ndarray (N, N)
    M : int
        Out-degree, 1 <= M <= N.
    dim : int, default 1
    divergence : {"exact", "legacy_code", "legacy_nan"}, default "exact"
    return_divergence : bool, default False
        Return the divergence matrix as well.

    Returns
    -------
    A : ndarray of bool, shape (N, N)
    delta : ndarray of float, shape (N, N)
        Only with ``return_divergence``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import paper001_dictionary
    >>> from fastomkl.graph import similarity_graph
    >>> A = similarity_graph(paper001_dictionary(), M=3)          # six Gaussian kernels
    >>> A.shape, A.sum(1).tolist(), np.flatnonzero(A[0]).tolist()
    ((6, 6), [3, 3, 3, 3, 3, 3], [0, 1, 5])
    """
    if isinstance(kernels, np.ndarray) and kernels.ndim == 2:
        delta = np.asarray(kernels, dtype=np.float64)
        if delta.shape[0] != delta.shape[1]:
            raise ValueError("a divergence matrix must be square")
    else:
        delta = divergence_matrix(kernels, dim, divergence)
    n = delta.shape[0]
    if isinstance(M, bool) or not isinstance(M, (int, np.integer)) or not 1 <= M <= n:
        raise ValueError(f"M must be an integer in 1..{n} (the out-degree with the self-loop), "
                         f"got {M!r}")
    # All nodes at once: step k adds, for every node i, the best j given its current members.
    A = np.eye(n, dtype=bool)
    total = delta.copy()                     # row i: sum over the members m of Delta[m, :]
    rows = np.arange(n)
    for size in range(1, M):
        score = total / size
        score[A] = -np.inf
        j = np.argmax(score, axis=1)         # first maximum; a NaN counts as the maximum
        A[rows, j] = True
        total += delta[j]
    return (A, delta) if return_divergence else A


def dominating_set(adjacency, method: str = "chvatal") -> np.ndarray:
    """A dominating set of the directed graph (node v dominates its closed out-neighbourhood).

    ``"chvatal"``: Chvatal's greedy set cover, v* = argmax_v |N_out(v) & uncovered| over all nodes
    (ties: smallest index).  ``"legacy"``: the released code's variant, which only considers
    uncovered candidates.  Both return a sorted array of node indices that covers every node.

    Parameters
    ----------
    adjacency : array-like of bool, shape (N, N)
        A[v, w]: edge v -> w (self-loops are added).
    method : {"chvatal", "legacy"}, default "chvatal"

    Returns
    -------
    ndarray of intp

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl.graph import dominating_set
    >>> A = np.array([[1, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1]], dtype=bool)
    >>> dominating_set(A).tolist()                   # node 0 covers 0 and 1, node 2 covers 2 and 3
    [0, 2]
    """
    A = np.asarray(adjacency, dtype=bool).copy()
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"adjacency must be a square matrix, got shape {A.shape}")
    if method not in ("chvatal", "legacy"):
        raise ValueError(f"method must be 'chvatal' or 'legacy', got {method!r}")
    n = A.shape[0]
    np.fill_diagonal(A, True)
    uncovered = np.ones(n, dtype=bool)
    chosen = []
    while uncovered.any():
        gain = (A & uncovered).sum(axis=1)
        if method == "legacy":
            gain = np.where(uncovered, gain, -1)
        v = int(np.argmax(gain))
        chosen.append(v)
        uncovered &= ~A[v]
    return np.array(sorted(chosen), dtype=np.intp)


def adjacency_to_csr(adjacency):
    """(out_ptr, out_idx) of a boolean adjacency matrix, out-neighbours in increasing order.

    Parameters
    ----------
    adjacency : array-like of bool, shape (N, N)

    Returns
    -------
    out_ptr : ndarray of intc, shape (N + 1,)
    out_idx : ndarray of intc
        Node i's out-neighbours are ``out_idx[out_ptr[i]:out_ptr[i + 1]]``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl.graph import adjacency_to_csr
    >>> ptr, idx = adjacency_to_csr([[1, 1, 0], [0, 1, 0], [1, 0, 1]])
    >>> ptr.tolist(), idx.tolist()
    ([0, 2, 3, 5], [0, 1, 1, 0, 2])
    """
    A = np.asarray(adjacency, dtype=bool)
    rows, cols = np.nonzero(A)
    ptr = np.searchsorted(rows, np.arange(A.shape[0] + 1)).astype(np.intc)
    return ptr, cols.astype(np.intc)
