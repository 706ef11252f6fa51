"""Plain NumPy references for the PKAWV family (spec 002): closed-form Taylor features, the
authors' tensor basis, and AWV / ridge by a direct solve every round."""
import itertools
from math import factorial

import numpy as np


def gaussian(X, Y, sigma):
    sq = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    return np.exp(-sq / (2.0 * sigma ** 2))


def taylor_exponents(d, M):
    """Multi-indices k with |k| <= M in graded, combinations-with-replacement order."""
    out = []
    for degree in range(M + 1):
        for combo in itertools.combinations_with_replacement(range(d), degree):
            k = np.zeros(d, dtype=int)
            for i in combo:
                k[i] += 1
            out.append(k)
    return np.array(out)


def taylor_features(X, M, sigma):
    """g_k(x) = exp(-||x||^2 / (2 sigma^2)) prod_i (x_i / sigma)^k_i / sqrt(k_i!), from the formula."""
    K = taylor_exponents(X.shape[1], M)
    norm = np.array([np.prod([np.sqrt(factorial(int(v))) for v in k]) for k in K])
    envelope = np.exp(-(X ** 2).sum(1) / (2.0 * sigma ** 2))
    mono = np.prod((X[:, None, :] / sigma) ** K[None, :, :], axis=2)
    return envelope[:, None] * mono / norm[None, :]


def tensor_taylor_features(X, M, sigma):
    """The authors' basis: every ordered k-tuple, mm / (sigma^k sqrt(k!)), times the envelope."""
    rows = []
    for x in X:
        res, mm = [np.ones(1)], np.ones(1)
        for k in range(1, M + 1):
            mm = np.outer(mm, x).ravel()
            res.append(mm / (sigma ** k * np.sqrt(factorial(k))))
        rows.append(np.concatenate(res) * np.exp(-x @ x / (2.0 * sigma ** 2)))
    return np.array(rows)


def linear_awv(Z, y, lam, mode="vaw"):
    """Online predictions of AWV (mode "vaw") or ridge on features Z, by a direct solve per round."""
    n, r = Z.shape
    out = np.zeros(n)
    for t in range(n):
        past = Z[:t]
        A = lam * np.eye(r) + past.T @ past
        if mode == "vaw":
            A += np.outer(Z[t], Z[t])
        out[t] = Z[t] @ np.linalg.solve(A, past.T @ y[:t])
    return out
