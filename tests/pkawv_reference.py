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


def centred(predictions, y):
    """A forecaster that learns its labels less their running mean: at round t it predicts
    m_{t-1} + (the forecaster on the targets y_s - m_s, s < t), with m_s the mean of
    y_0 .. y_s (m_{-1} = 0).  `predictions(targets)` are the online predictions of the
    uncentred forecaster on a stream of targets."""
    y = np.asarray(y, dtype=np.float64)
    mean = np.cumsum(y) / np.arange(1, len(y) + 1)
    return np.concatenate([[0.0], mean[:-1]]) + predictions(y - mean)


def scaled_hedge(P, targets, rate):
    """Exponential weights over the columns of P (each a forecaster's online predictions of
    `targets`): round t predicts w_t . P[t], then log w -= rate / v_t (P[t] - y_t)^2 with v_t the
    variance of targets[0 .. t] (no update while it is 0).  Returns (predictions, final w)."""
    log_w = np.zeros(P.shape[1])
    out = np.zeros(len(targets))
    for t in range(len(targets)):
        w = np.exp(log_w - log_w.max())
        w /= w.sum()
        out[t] = w @ P[t]
        v = np.var(targets[:t + 1])
        if v > 0:
            log_w -= rate / v * (P[t] - targets[t]) ** 2
    w = np.exp(log_w - log_w.max())
    return out, w / w.sum()


def centred_ridge_ensemble(solves, y, rate):
    """``centred`` for the ridge ensemble: the forecasters solves[i](targets) all learn the
    labels less their running mean, mixed by ``scaled_hedge`` on those targets.  Returns
    (predictions, final weights)."""
    y = np.asarray(y, dtype=np.float64)
    mean = np.cumsum(y) / np.arange(1, len(y) + 1)
    targets = y - mean
    mixed, w = scaled_hedge(np.column_stack([solve(targets) for solve in solves]), targets, rate)
    return np.concatenate([[0.0], mean[:-1]]) + mixed, w


def kors_probability(C, S, x, sigma, mu, beta, eps):
    """KORS as the authors' code computes it: the dictionary C (m, d) with weights S plus x with
    weight 1, the inverse of S K S + mu I over it; returns p = clip(beta tau, 0, 1)."""
    C = np.vstack([C, x[None]])
    w = np.append(S, 1.0)
    kS = w * gaussian(C, x[None], sigma)[:, 0]
    G = np.linalg.inv(w[:, None] * gaussian(C, C, sigma) * w[None, :] + mu * np.eye(len(w)))
    tau = (1.0 + eps) / mu * (1.0 - kS @ G @ kS)
    return min(max(beta * tau, 0.0), 1.0)


def nystrom_awv(X, y, sigma, lam, mu, beta, eps, weights, uniforms, mode="vaw"):
    """Sequential Nystrom PKAWV with KORS by direct solves: (predictions, dictionary, weights).

    Round t predicts with the dictionary I_{t-1}: a^T (K^T K + lam K_II [+ a a^T])^{-1} K^T Y over
    the past rows; then KORS decides with uniforms[t] whether x_t joins."""
    n = X.shape[0]
    index, S, out = [], [], np.zeros(n)
    for t in range(n):
        C = X[index]
        if index:
            Kp = gaussian(X[:t], C, sigma)
            a = gaussian(X[t:t + 1], C, sigma)[0]
            M = Kp.T @ Kp + lam * gaussian(C, C, sigma)
            if mode == "vaw":
                M = M + np.outer(a, a)
            out[t] = a @ np.linalg.solve(M, Kp.T @ y[:t])
        p = kors_probability(C, np.array(S), X[t], sigma, mu, beta, eps)
        if uniforms[t] < p:
            index.append(t)
            S.append(1.0 / (np.sqrt(p) if weights == "sqrt" else p))
    return out, np.array(index), np.array(S)


def cholupdate(R, x, sign=1.0):
    """Upper R' with R'^T R' = R^T R + sign x x^T (LINPACK form; sign -1 is the downdate).  A zero
    last diagonal entry (the padded factor of the paper's append) is allowed."""
    R, x = R.copy(), np.array(x, dtype=float)
    for k in range(len(x)):
        r = np.sqrt(R[k, k] ** 2 + sign * x[k] ** 2)
        if k == len(x) - 1:
            R[k, k] = r
            break
        c, s = r / R[k, k], x[k] / R[k, k]
        R[k, k] = r
        R[k, k + 1:] = (R[k, k + 1:] + sign * s * x[k + 1:]) / c
        x[k + 1:] = c * x[k + 1:] - s * R[k, k + 1:]
    return R


def append_by_update_downdate(R, c, dd):
    """The paper's append: the factor of [[R^T R, c], [c^T, dd]] from R by one update and one
    downdate of the zero-padded factor (Algorithm 2)."""
    m = R.shape[0]
    padded = np.zeros((m + 1, m + 1))
    padded[:m, :m] = R
    g = np.sqrt(1.0 + dd)
    u = np.append(c / (1.0 + g), g)
    v = np.append(c / (1.0 + g), -1.0)
    return cholupdate(cholupdate(padded, u, 1.0), v, -1.0)


def kernel_awv(X, y, sigma, lam, mode="vaw"):
    """Kernel-AWV by the authors' zero-label trick, c = (K_tt + lam I)^{-1} (Y_{t-1}, 0) and
    y_hat = k_t(x_t)^T c; KRR with c = (K_{t-1} + lam I)^{-1} Y_{t-1}."""
    n = X.shape[0]
    out = np.zeros(n)
    for t in range(n):
        rows = t + 1 if mode == "vaw" else t
        K = gaussian(X[:rows], X[:rows], sigma)
        c = np.linalg.solve(K + lam * np.eye(rows), np.append(y[:t], 0.0)[:rows])
        out[t] = gaussian(X[t:t + 1], X[:rows], sigma)[0] @ c
    return out


def pros_n_kons(X, y, sigma, alpha, beta, eps, C, weights, uniforms, max_centres=None):
    """Pros-N-KONS in the proper KONS order with the authors' SVD embedding
    phi(x) = diag(1 / sqrt(s)) U^T k_I(x), K_II = U diag(s) U^T, by dense NumPy algebra; with
    `max_centres`, no centre joins once the dictionary holds that many."""
    index, S, out = [], [], np.zeros(len(y))
    w = A_inv = g = E = None
    for t, x in enumerate(X):
        if index:
            phi = E @ gaussian(X[index], x[None], sigma)[:, 0]
            v = w - A_inv @ g
            delta, z = phi @ A_inv @ phi, phi @ v
            w = v - np.sign(z) * max(abs(z) - C, 0.0) / delta * (A_inv @ phi)
            out[t] = w @ phi
            g = 2 * (out[t] - y[t]) * phi
            u = A_inv @ (g / 4)
            A_inv = A_inv - np.outer(u, u) / (1 + (g / 4) @ u)
        if max_centres is not None and len(index) >= max_centres:
            continue
        p = kors_probability(X[index], np.array(S), x, sigma, alpha, beta, eps)
        if uniforms[t] < p:
            index.append(t)
            S.append(1.0 / (np.sqrt(p) if weights == "sqrt" else p))
            U, s, _ = np.linalg.svd(gaussian(X[index], X[index], sigma))
            E = (U / np.sqrt(s)).T
            m = len(index)
            w, g, A_inv = np.zeros(m), np.zeros(m), np.eye(m) / alpha
    return out, np.array(index)
