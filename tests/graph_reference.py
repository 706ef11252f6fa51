"""Plain NumPy versions of the graph-feedback rounds (paper 000, Alg. 1-6), for the tests.

Each function runs a whole prequential stream with the same random-feature frequencies and the same
uniform draws (``Generator.random()`` on the same bit generator) as the compiled model, written
directly from the equations of the spec, one round at a time and without any incremental trick.
"""
import numpy as np

from reference import PageHinkley, change_statistic, ensemble_step


def rff(W, x):
    """z(x) = [cos(W x); sin(W x)] / sqrt(D) for frequencies W of shape (D, d)."""
    proj = W @ x
    return np.concatenate([np.cos(proj), np.sin(proj)]) / np.sqrt(W.shape[0])


def schedule(scale, kind, t):
    return scale / np.sqrt(t) if kind == 1 else scale


def _ogd(theta, z, f, y, lam, step):
    """Squared loss: L = (f - y)^2 + lam ||theta||^2 before the step; theta -= step * grad."""
    L = (f - y) ** 2 + lam * theta @ theta
    theta -= step * (2.0 * (f - y) * z + 2.0 * lam * theta)
    return L


def _auto_step(scale, grad_sq, z, f, y, weight):
    """eta="auto" for the squared loss: AdaGrad-norm, scale / sqrt(grad_sq[0]) after
    grad_sq[0] += weight ||loss' z||^2, times the importance weight, at most
    loss / (loss'^2 ||z||^2) (where the tangent of the loss reaches 0)."""
    d, zz = 2.0 * (f - y), z @ z
    grad_sq[0] += weight * d * d * zz
    step = scale / np.sqrt(grad_sq[0]) * weight
    return min(step, (f - y) ** 2 / (d * d * zz)) if d != 0 and zz > 0 else step


def _member_step(theta, z, f, y, lam, step):
    """A step ensemble's member (eta="ensemble"), squared loss, with its constant step times the
    importance weight: ``reference.ensemble_step`` on one member (truncated at the loss's minimiser
    along the step, the regulariser proximal).  Updates theta; returns L = loss + lam ||theta||^2
    before the step."""
    new, L = ensemble_step(theta[None, None, :], z[None, :], np.array([[f]]), y, [step], lam,
                           "squared")
    theta[:] = new[0, 0]
    return float(L[0, 0])


def _experts_learn(S, theta, z, f, y, lam, step, q, auto, grad_sq, steps=None):
    """{i: L_i} after each observed expert's OGD step with importance weight 1/q_i: the step
    `step` / q_i, or eta="auto"'s (``_auto_step``, ``auto`` its scale), or with `steps` (an
    ensemble of m steps per kernel) member i's steps[i % m] / q_i (``_member_step``)."""
    if steps is not None:
        return {i: _member_step(theta[i], z[i], f[i], y, lam, steps[i % len(steps)] / q[i])
                for i in S}
    return {i: _ogd(theta[i], z[i], f[i], y, lam,
                    _auto_step(auto, grad_sq[i], z[i], f[i], y, 1.0 / q[i]) if auto
                    else step / q[i]) for i in S}


def _experts(freqs, steps):
    """(number of experts, members per kernel): one per kernel, or with `steps` m per kernel,
    expert k * m + s the member s of kernel k."""
    m = 1 if steps is None else len(steps)
    return freqs.shape[0] * m, m


def _self_confident(n, v):
    """The rate sqrt(ln n / (1 + V))."""
    return np.sqrt(np.log(n) / (1.0 + v))


def _second_moment(logw, S, L, q):
    """sum_{i in S} w_i (L_i / q_i)^2, w the normalised exp(log w) over S."""
    w = np.exp(logw[S] - logw[S].max())
    return float(np.sum(w / w.sum() * (np.array([L[i] for i in S]) / q[S]) ** 2))


def gf_stream(freqs, X, y, seed, *, J, M, eta=(0.1, 1), eta_e=(0.1, 1), lam=1e-3,
              freeze_after=0, conditional_q=False, q_floor=0.0, legacy_sampler=False, auto=None,
              steps=None, change=None):
    """``auto``: the AdaGrad scale of eta="auto"'s experts (``_auto_step``), whose weight rate is
    then self-confident over the second moment of L_i / q_i under the round's mixture; None: the
    schedule ``eta``.  ``steps``: the experts are a step ensemble's members (``_experts``), the
    graph's nodes draw them, and the weight rate is self-confident as under ``auto``.
    ``change``: (statistic, delta, threshold) of a Page-Hinkley test whose alarms restart the
    self-confident rate (V = 0); the test is the last element of the record."""
    N, m = _experts(freqs, steps)
    grad_sq, v = np.zeros((N, 1)), 0.0
    test = None if change is None else PageHinkley(*change[1:])
    rng = np.random.Generator(np.random.PCG64(seed))
    theta = np.zeros((N, 2 * freqs.shape[1]))
    logw = np.zeros(N)
    members = None
    out = np.empty(len(y))
    record = []
    for t in range(1, len(y) + 1):
        x = X[t - 1]
        e = min(schedule(*eta_e, t), 1.0)
        if members is None or freeze_after <= 0 or t <= freeze_after:
            wbar = np.exp(logw - logw.max())
            wbar /= wbar.sum()
            members, edge = [], np.zeros((J, N))
            for j in range(J):
                ej = e ** (j + 1)
                pi = (1 - ej) * wbar + ej / N
                edge[j] = 1.0 - (1.0 - pi) ** M
                cdf = (1 - ej) * np.cumsum(wbar) + ej * np.arange(1, N + 1) / N
                mj = []
                for _ in range(M):
                    i = min(int(np.searchsorted(cdf, rng.random(), side="right")), N - 1)
                    if legacy_sampler:
                        i = min(i + 1, N - 1)
                    if i not in mj:
                        mj.append(i)
                members.append(mj)
            adj = np.zeros((J, N))
            for j in range(J):
                adj[j, members[j]] = 1.0
        w = np.exp(logw - logw.max())
        u = np.array([w[m].sum() for m in members])
        p = (1 - e) * u / u.sum() + e / J
        I = min(int(np.searchsorted(np.cumsum(p), rng.random(), side="right")), J - 1)
        S = members[I]
        q = (adj if conditional_q else edge).T @ p
        q = np.maximum(np.minimum(q, 1.0), q_floor)
        z = {i: rff(freqs[i // m], x) for i in S}
        f = {i: theta[i] @ z[i] for i in S}
        ws = np.array([np.exp(logw[i]) for i in S])
        out[t - 1] = np.dot(ws, [f[i] for i in S]) / ws.sum()
        step = schedule(*eta, t)
        L = _experts_learn(S, theta, z, f, y[t - 1], lam, step, q, auto, grad_sq, steps)
        if auto is not None or steps is not None:
            v += _second_moment(logw, S, L, q)
            step = _self_confident(N, v)
        for i in S:
            logw[i] -= step * L[i] / q[i]
        if test is not None and test.add(change_statistic(change[0], out[t - 1], y[t - 1]), t):
            v = 0.0
        record.append((I, list(S), q[S].copy()))
    if test is not None:
        record.append(test)
    return out, theta, logw, record


def refine_parents(A, dom, div, refine_all=False, argmin=False):
    """Refinement edges of Alg. 6: parent[i] in D for each node not covered by D (or every node)."""
    N = A.shape[0]
    dlist = np.flatnonzero(dom)
    covered = A[dlist].any(axis=0)
    parent = np.full(N, -1)
    for i in range(N):
        if refine_all or not covered[i]:
            vals = div[dlist, i]
            parent[i] = dlist[int(np.argmin(vals) if argmin else np.argmax(vals))]
    return parent


def sfg_stream(freqs, X, y, seed, *, A, dom=None, div=None, eta=(0.1, 1), eta_u=(0.1, 1),
               xi=(0.1, 1), lam=1e-3, q_floor=0.0, p_floor=0.0, exploit_after=0, exploit_mode=0,
               legacy_sampler=False, refine=False, beta=-1.0, top_k=10, refine_all=False,
               refine_argmin=False, predict_unrefined=False, freeze_after=0, auto=None,
               steps=None):
    """``auto``: as ``gf_stream``'s, and the node weights' rate self-confident over the second
    moment u_I / U (loss / p_I)^2; ``steps``: as ``gf_stream``'s (A and div are then over the
    members), with both rates self-confident."""
    N, m = _experts(freqs, steps)
    grad_sq, v, v_u = np.zeros((N, 1)), 0.0, 0.0
    rng = np.random.Generator(np.random.PCG64(seed))
    theta = np.zeros((N, 2 * freqs.shape[1]))
    logw = np.zeros(N)
    u = np.ones(N)
    A = np.asarray(A, dtype=bool)
    dom = None if refine else np.asarray(dom, dtype=bool)
    parent = np.full(N, -1)
    out = np.empty(len(y))
    record = []
    for t in range(1, len(y) + 1):
        x = X[t - 1]
        x_i = min(schedule(*xi, t), 1.0)
        U = u.sum()
        if refine and (dom is None or freeze_after <= 0 or t <= freeze_after):
            if top_k > 0:
                thr = np.sort(u)[::-1][min(top_k, N) - 1]
            else:
                thr = U * (beta - x_i / N) / (1 - x_i)
            new = u >= thr
            if not new.any():
                new = np.zeros(N, dtype=bool)
                new[np.argmax(u)] = True
            if dom is None or (new != dom).any():
                dom = new
                parent = refine_parents(A, dom, div, refine_all, refine_argmin)
        At = A.copy()
        for i in np.flatnonzero(parent >= 0):
            At[parent[i], i] = True
        dlist = np.flatnonzero(dom)
        p = (1 - x_i) * u / U + x_i * dom / dom.sum()
        if exploit_after > 0 and t > exploit_after:
            I = int(np.argmax(u)) if exploit_mode == 0 else 0
        else:
            r1, r2 = rng.random(), rng.random()
            if r1 < x_i:
                I = int(dlist[min(int(r2 * len(dlist)), len(dlist) - 1)])
            else:
                I = min(int(np.searchsorted(np.cumsum(u), r2 * U, side="right")), N - 1)
            if legacy_sampler:
                I = min(I + 1, N - 1)
        S = np.flatnonzero(At[I])
        P = np.flatnonzero(A[I]) if predict_unrefined else S
        q = np.maximum(np.minimum(At.T.astype(float) @ p, 1.0), q_floor)
        z = {i: rff(freqs[i // m], x) for i in S}
        f = {i: theta[i] @ z[i] for i in S}
        w = np.exp(logw[P] - logw[P].max())
        yhat = np.dot(w, [f[i] for i in P]) / w.sum()
        out[t - 1] = yhat
        step, step_u = schedule(*eta, t), schedule(*eta_u, t)
        loss, p_I = (yhat - y[t - 1]) ** 2, max(p[I], p_floor)
        L = _experts_learn(S, theta, z, f, y[t - 1], lam, step, q, auto, grad_sq, steps)
        if auto is not None or steps is not None:
            v += _second_moment(logw, P, L, q)
            v_u += u[I] / U * (loss / p_I) ** 2
            step, step_u = _self_confident(N, v), _self_confident(N, v_u)
        for i in S:
            logw[i] -= step * L[i] / q[i]
        u[I] *= np.exp(-step_u * loss / p_I)
        record.append((I, S.copy(), q[S].copy(), dlist.copy()))
    return out, theta, logw, u, record
