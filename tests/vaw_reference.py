"""Plain NumPy versions of the VAW family and of the meta-learners, written from their formulas.

Every function takes whole streams and loops over rounds with direct solves or explicit sums; they
share nothing with the compiled core.  E is the (T, N) matrix of expert predictions, y the labels.
"""
from __future__ import annotations

import numpy as np

from reference import NumpyMLPoly


def vaw_direct(Z, y, lam, mode, center=False):
    """Predictions z_t^T S^{-1} b_{t-1}, S = lam I + sum_{s<=t} z_s z_s^T (vaw) or s < t (ridge),
    by a fresh linear solve every round.  Z: (T, D).  center: predict m + that, m the mean of the
    labels before round t (0 at first), with b the sum of (y_s - m_s) z_s."""
    T, D = Z.shape
    S = lam * np.eye(D)
    b = np.zeros(D)
    out = np.empty(T)
    for t in range(T):
        z = Z[t]
        offset = np.mean(y[:t]) if center and t > 0 else 0.0
        if mode == "vaw":
            S = S + np.outer(z, z)
            out[t] = offset + z @ np.linalg.solve(S, b)
        else:
            out[t] = offset + z @ np.linalg.solve(S, b)
            S = S + np.outer(z, z)
        b = b + (y[t] - offset) * z
    return out


def vaw_experts(F, y, lam, mode, center=False):
    """F: (T, N, D) features of N kernels -> (T, N) expert predictions."""
    return np.column_stack([vaw_direct(F[:, k], y, lam, mode, center) for k in range(F.shape[1])])


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


def observed_ranges(y):
    """(lo, hi) per round: min and max of the labels before it (NaN before the first label)."""
    lo = np.concatenate([[np.nan], np.minimum.accumulate(y)[:-1]])
    hi = np.concatenate([[np.nan], np.maximum.accumulate(y)[:-1]])
    return lo, hi


def ranges(clip_range, y):
    """Per-round (lo, hi) arrays of a fixed range, "observed", or None (no clipping: NaN)."""
    T = len(y)
    if clip_range is None:
        return np.full(T, np.nan), np.full(T, np.nan)
    if isinstance(clip_range, str):
        return observed_ranges(y)
    return np.full(T, float(clip_range[0])), np.full(T, float(clip_range[1]))


def clip(E, clip_range, y=None):
    lo, hi = ranges(clip_range, y if y is not None else np.zeros(len(E)))
    X = E.copy()
    known = ~np.isnan(lo)
    X[known] = np.clip(E[known], lo[known, None], hi[known, None])
    return X


def meta_vaw(E, y, lam, mode, clip_range=None, scale_lam=False, center=False):
    """Second-level VAW.  scale_lam: ridge lam * s^2, s the largest |target| so far (lam before a
    nonzero one).  center: with m the mean of the labels before the round (0 at first), regress
    y - m on x - m and predict m + that."""
    X = clip(E, clip_range, y)
    if not (scale_lam or center):
        return vaw_direct(X, y, lam, mode)
    T, N = X.shape
    G, b, top, out = np.zeros((N, N)), np.zeros(N), 0.0, np.empty(T)
    for t in range(T):
        m = np.mean(y[:t]) if center and t > 0 else 0.0
        z, target = X[t] - m, y[t] - m
        reg = lam * top ** 2 if scale_lam and top > 0 else lam
        S = reg * np.eye(N) + G + (np.outer(z, z) if mode == "vaw" else 0.0)
        out[t] = m + z @ np.linalg.solve(S, b)
        G, b, top = G + np.outer(z, z), b + target * z, max(top, abs(target))
    return out


def softmax(v):
    w = np.exp(v - v.max())
    return w / w.sum()


def ewa(E, y, eta, clip_range):
    """Exponential weights on the cumulative square losses; eta=None: AdaHedge's rate
    ln K / (cumulative mixability gap), follow-the-leader while the gap is 0."""
    X = clip(E, clip_range, y)
    K = E.shape[1]
    L, gap = np.zeros(K), 0.0
    out = np.empty(len(y))
    for t in range(len(y)):
        rate = eta if eta is not None else (np.log(K) / gap if gap > 0 else np.inf)
        if np.isinf(rate):
            w = (L == L.min()) / np.sum(L == L.min())
        else:
            w = softmax(-rate * L)
        out[t] = w @ X[t]
        loss = (X[t] - y[t]) ** 2
        if eta is None:
            live = w > 0
            low = loss[live].min()
            mix = low if np.isinf(rate) else low - np.log(
                np.sum(w[live] * np.exp(-rate * (loss[live] - low)))) / rate
            gap += max(w @ loss - mix, 0.0)
        L += loss
    return out


def aggregating(E, y, eta, clip_range):
    """Vovk's AA: gamma = (lo+hi)/2 + (g(lo) - g(hi)) / (2 (hi - lo)), clipped to [lo, hi];
    eta=None: 2 / (hi - lo)^2 of the round's range; the mean of the clipped predictions while
    there is no range of positive width."""
    los, his = ranges(clip_range, y)
    X = clip(E, clip_range, y)
    L = np.zeros(E.shape[1])
    out = np.empty(len(y))
    for t in range(len(y)):
        lo, hi = los[t], his[t]
        if np.isnan(lo) or not hi > lo:
            out[t] = X[t].mean()
        else:
            rate = eta if eta is not None else 2.0 / (hi - lo) ** 2
            pi = softmax(-rate * L)

            def g(v):
                return -np.log(np.sum(pi * np.exp(-rate * (v - X[t]) ** 2))) / rate

            gamma = 0.5 * (lo + hi) + (g(lo) - g(hi)) / (2 * (hi - lo))
            out[t] = min(max(gamma, lo), hi)
        L += (X[t] - y[t]) ** 2
    return out


def boa(E, y, clip_range):
    X = clip(E, clip_range, y)
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
    """ML-Poly on the square loss's own regrets (reference.NumpyMLPoly's rates)."""
    X = clip(E, clip_range, y)
    T, K = X.shape
    mixer = NumpyMLPoly(K)
    out = np.empty(T)
    for t in range(T):
        out[t] = mixer.weights() @ X[t]
        mixer.learn_regrets((out[t] - y[t]) ** 2 - (X[t] - y[t]) ** 2)
    return out


def mlprod(E, y, clip_range):
    X = clip(E, clip_range, y)
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
