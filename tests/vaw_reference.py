"""Plain NumPy versions of the VAW family and of the meta-learners, written from their formulas.

Every function takes whole streams and loops over rounds with direct solves or explicit sums; they
share nothing with the compiled core.  E is the (T, N) matrix of expert predictions, y the labels.
"""
from __future__ import annotations

import numpy as np


def vaw_direct(Z, y, lam, mode):
    """Predictions z_t^T S^{-1} b_{t-1}, S = lam I + sum_{s<=t} z_s z_s^T (vaw) or s < t (ridge),
    by a fresh linear solve every round.  Z: (T, D)."""
    T, D = Z.shape
    S = lam * np.eye(D)
    b = np.zeros(D)
    out = np.empty(T)
    for t in range(T):
        z = Z[t]
        if mode == "vaw":
            S = S + np.outer(z, z)
            out[t] = z @ np.linalg.solve(S, b)
        else:
            out[t] = z @ np.linalg.solve(S, b)
            S = S + np.outer(z, z)
        b = b + y[t] * z
    return out


def vaw_experts(F, y, lam, mode):
    """F: (T, N, D) features of N kernels -> (T, N) expert predictions."""
    return np.column_stack([vaw_direct(F[:, k], y, lam, mode) for k in range(F.shape[1])])


def ogd_experts(F, y, lam, eta):
    """Raker's experts: f = theta.z; theta <- theta - eta_t (2 (f - y) z + 2 lam theta),
    eta_t = eta / sqrt(t).  Returns (T, N) predictions and (T, N) Hedge losses (pre-step norm)."""
    T, N, D = F.shape
    theta = np.zeros((N, D))
    preds = np.empty((T, N))
    losses = np.empty((T, N))
    for t in range(T):
        z = F[t]
        f = np.einsum("kd,kd->k", theta, z)
        preds[t] = f
        losses[t] = (f - y[t]) ** 2 + lam * np.einsum("kd,kd->k", theta, theta)
        theta = theta - eta / np.sqrt(t + 1) * (2 * (f - y[t])[:, None] * z + 2 * lam * theta)
    return preds, losses


def clip(E, clip_range):
    return E if clip_range is None else np.clip(E, *clip_range)


def meta_vaw(E, y, lam, mode, clip_range=None):
    return vaw_direct(clip(E, clip_range), y, lam, mode)


def softmax(v):
    w = np.exp(v - v.max())
    return w / w.sum()


def ewa(E, y, eta, clip_range):
    X = clip(E, clip_range)
    L = np.zeros(E.shape[1])
    out = np.empty(len(y))
    for t in range(len(y)):
        out[t] = softmax(-eta * L) @ X[t]
        L += (X[t] - y[t]) ** 2
    return out


def aggregating(E, y, eta, clip_range):
    """Vovk's AA: gamma = (lo+hi)/2 + (g(lo) - g(hi)) / (2 (hi - lo)), clipped to [lo, hi]."""
    lo, hi = clip_range
    X = clip(E, clip_range)
    L = np.zeros(E.shape[1])
    out = np.empty(len(y))
    for t in range(len(y)):
        pi = softmax(-eta * L)

        def g(v):
            return -np.log(np.sum(pi * np.exp(-eta * (v - X[t]) ** 2))) / eta

        gamma = 0.5 * (lo + hi) + (g(lo) - g(hi)) / (2 * (hi - lo))
        out[t] = min(max(gamma, lo), hi)
        L += (X[t] - y[t]) ** 2
    return out


def boa(E, y, clip_range):
    X = clip(E, clip_range)
    T, K = X.shape
    lr = np.full(K, 2.0 ** -20)
    V = np.full(K, 2.0 ** -20)
    M = np.full(K, 2.0 ** -20)
    Rreg = np.zeros(K)
    out = np.empty(T)
    for t in range(T):
        w = softmax(np.log(lr) + np.log(1 / K) + lr * Rreg)
        out[t] = w @ X[t]
        r = (out[t] - y[t]) ** 2 - (X[t] - y[t]) ** 2
        M = np.maximum(M, np.abs(r))
        B = 2.0 ** np.ceil(np.log2(M))
        V = V + r ** 2
        lr = np.minimum(1 / B, np.sqrt(np.log(K) / V))
        Rreg = Rreg + 0.5 * (r - lr * r ** 2 + B * (lr * r > 0.5))
    return out


def mlpoly(E, y, clip_range):
    X = clip(E, clip_range)
    T, K = X.shape
    lr = np.full(K, 2.0 ** -20)
    R = np.zeros(K)
    Smax = 0.0
    out = np.empty(T)
    for t in range(T):
        v = lr * np.maximum(R, 0)
        w = np.full(K, 1 / K) if v.sum() == 0 else v / v.sum()
        out[t] = w @ X[t]
        r = (out[t] - y[t]) ** 2 - (X[t] - y[t]) ** 2
        R = R + r
        delta = max(np.max(r ** 2) - Smax, 0.0)
        lr = 1 / (1 / lr + r ** 2 + delta)
        Smax += delta
    return out


def mlprod(E, y, clip_range):
    X = clip(E, clip_range)
    T, K = X.shape
    lr = np.full(K, 2.0 ** -20)
    V = np.full(K, 2.0 ** -20)
    M = np.full(K, 2.0 ** -20)
    R = np.zeros(K)
    out = np.empty(T)
    for t in range(T):
        w = lr * np.exp(R)
        w = w / w.sum()
        out[t] = w @ X[t]
        r = (out[t] - y[t]) ** 2 - (X[t] - y[t]) ** 2
        V = V + r ** 2
        M = np.maximum(M, np.abs(r))
        new = np.minimum(np.minimum(0.5 / M, np.sqrt(np.log(K) / V)), 1e30)
        R = new / lr * R + np.log(1 + new * r)
        lr = new
    return out


def hedge(E, losses, eta):
    """Exponential weights with rate eta / sqrt(t) on the given per-round losses (T, N)."""
    log_w = np.zeros(E.shape[1])
    out = np.empty(E.shape[0])
    for t in range(E.shape[0]):
        out[t] = softmax(log_w) @ E[t]
        log_w = log_w - eta / np.sqrt(t + 1) * losses[t]
    return out
