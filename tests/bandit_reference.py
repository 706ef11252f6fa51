"""Plain NumPy versions of the bandit kernel-selection rounds (paper 001), for the tests.

Written from the equations of spec 001 (sections 3.0-3.4), one round at a time, without the
compiled code's incremental tricks (the kernel expansions keep explicit coefficients and compute
their norms from the Gram matrix).  The kernel I_t is drawn by inverse CDF from
``Generator.random()`` on the same bit generator as the compiled model.
"""
import numpy as np

from reference import NumpyMLPoly

SQUARED, ABSOLUTE, LOGISTIC, HINGE = 0, 1, 2, 3


def loss(kind, f, y):
    if kind == SQUARED:
        return (f - y) ** 2
    if kind == ABSOLUTE:
        return abs(f - y)
    if kind == LOGISTIC:
        return np.logaddexp(0.0, -y * f)
    return max(0.0, 1.0 - y * f)


def dloss(kind, f, y):
    if kind == SQUARED:
        return 2.0 * (f - y)
    if kind == ABSOLUTE:
        return float(np.sign(f - y))
    if kind == LOGISTIC:
        return -y / (1.0 + np.exp(y * f))
    return -y if y * f < 1.0 else 0.0


def unit_scale(kind, s):
    """What a loss is divided by in units of the targets' scale s (U = "auto")."""
    return s * s if kind == SQUARED else (s if kind == ABSOLUTE else 1.0)


def horizon(fixed, t):
    if fixed:
        return fixed
    h = 64
    while h < t:
        h *= 2
    return h


# -- experts --------------------------------------------------------------------------------------
class Steps:
    """The step-size rules: 'fixed', 'adagrad_norm' (OKS default), 'okspp', 'adagrad_u' (IOKS)."""

    def __init__(self, K, kind, rule, scale=0.0, U=1.0, gc0=1.0, tem1=False):
        self.K, self.kind, self.rule, self.scale, self.U0, self.gc0 = K, kind, rule, scale, U, gc0
        self.tem1 = tem1
        self.sums = np.zeros(K)
        self.ctilde_total = 0.0
        self.ymax = 0.0

    @property
    def U(self):
        """The radius in units of the targets' scale s (1 when U is "auto")."""
        return self.U0 if self.U0 > 0 else 1.0

    def scaled_step(self, k, f, y, p):
        """(s, s lambda g~) of the round, in units of s = max |y| when U is "auto"; None when
        there is no scale yet."""
        self.ymax = max(self.ymax, abs(y))
        s = 1.0 if self.U0 > 0 else self.ymax
        if s <= 0:
            return s, None
        scale = unit_scale(self.kind, s)
        g = dloss(self.kind, f, y) / p * s / scale
        return s, s * self.step(k, f, y, loss(self.kind, f, y) / p / scale, g) * g

    def step(self, k, f, y, c, g):
        U, K = self.U, self.K
        if self.rule == "fixed":
            return self.scale
        if self.rule == "adagrad_norm":
            self.sums[k] += g * g
            return self.scale / np.sqrt(self.sums[k]) if self.sums[k] > 0 else 0.0
        if self.rule == "adagrad_u":
            self.sums[k] += g * g
            return U / np.sqrt(2 * (1 + self.sums[k]))
        self.ctilde_total += c
        self.sums[k] += c
        a3 = np.exp(-3 * y * f) if self.tem1 else self.gc0 * U ** 2 * K ** 2
        return (U ** (4 / 3) * max(a3, 8 * self.ctilde_total) ** (-1 / 6)
                / (np.sqrt(4 / 3) * K ** (1 / 6) * self.gc0 ** (1 / 3)
                   * np.sqrt(1 + self.sums[k])))


class RFExperts:
    def __init__(self, freqs, steps, project, clip_count=None):
        self.freqs, self.steps, self.project = freqs, steps, project
        self.w = np.zeros((freqs.shape[0], 2 * freqs.shape[1]))
        self.clip_count = freqs.shape[1] if clip_count is None else clip_count

    def features(self, k, x):
        proj = self.freqs[k] @ x
        return np.concatenate([np.cos(proj), np.sin(proj)]) / np.sqrt(self.freqs.shape[1])

    def predict(self, k, x):
        return self.w[k] @ self.features(k, x)

    def learn(self, k, x, f, y, p):
        s, step = self.steps.scaled_step(k, f, y, p)
        if step is None:
            return
        w = self.w[k] - step * self.features(k, x)
        if self.project:
            bound = s * self.steps.U / np.sqrt(self.clip_count)
            w = np.clip(w, -bound, bound)
        self.w[k] = w


class ExpansionExperts:
    """f_k = sum_j alpha_j exp(-gamma_k ||x_j - x||^2) with explicit coefficients; the projection
    rescales every coefficient of the kernel when the exact RKHS norm exceeds U."""

    def __init__(self, gamma, steps, project):
        self.gamma, self.steps, self.project = gamma, steps, project
        self.S = [[] for _ in gamma]
        self.alpha = [[] for _ in gamma]

    def gram(self, k):
        S = np.array(self.S[k])
        d2 = ((S[:, None, :] - S[None, :, :]) ** 2).sum(-1)
        return np.exp(-self.gamma[k] * d2)

    def norm(self, k):
        if not self.S[k]:
            return 0.0
        a = np.array(self.alpha[k])
        return float(np.sqrt(max(a @ self.gram(k) @ a, 0.0)))

    def predict(self, k, x):
        if not self.S[k]:
            return 0.0
        S = np.array(self.S[k])
        return float(np.array(self.alpha[k]) @ np.exp(-self.gamma[k] * ((S - x) ** 2).sum(1)))

    def learn(self, k, x, f, y, p):
        s, step = self.steps.scaled_step(k, f, y, p)
        self.S[k].append(np.array(x))
        self.alpha[k].append(0.0 if step is None else -step)
        nrm, U = self.norm(k), s * self.steps.U
        if self.project and nrm > U:
            self.alpha[k] = [a * U / nrm for a in self.alpha[k]]


# -- samplers -------------------------------------------------------------------------------------
def softmax(v):
    e = np.exp(v - v.max())
    return e / e.sum()


class OKS:
    """Alg. 1: fixed (or horizon-driven) delta and eta, FTRL on the cumulative IW loss."""

    def __init__(self, K, T=0, ell_max=1.0, eta=0.0):
        self.K, self.T, self.ell_max, self.eta_fixed = K, T, ell_max, eta
        self.p = np.full(K, 1 / K)
        self.q = self.p.copy()
        self.L = np.zeros(K)
        self.lmax = 0.0

    def learn(self, t, I, f, l, y):
        K = self.K
        self.lmax = max(self.lmax, l)
        self.L[I] += l / self.p[I]
        h = horizon(self.T, t)
        delta = min(1.0, (K / h) ** (1 / 3))
        eta = self.eta_fixed
        if not eta:
            scale = self.ell_max if self.ell_max > 0 else self.lmax
            eta = np.sqrt(2 * (1 - delta) * np.log(K) / (K * h)) / (scale if scale > 0 else 1)
        self.q = softmax(-eta * self.L)
        self.p = (1 - delta) * self.q + delta / K


class OKSPlusPlus:
    """Section 3.2: data-adaptive delta_t and eta_t; FTRL (Alg. 3) or OMD (App. A)."""

    def __init__(self, K, gc0, U, omd=False, eta=0.0, tem1=False, kind=-1):
        self.K, self.gc0, self.U0, self.omd, self.eta_fixed, self.tem1 = K, gc0, U, omd, eta, tem1
        self.kind = kind
        self.p = np.full(K, 1 / K)
        self.q = self.p.copy()
        self.L = np.zeros(K)
        self.C = self.V = self.ymax = 0.0

    def learn(self, t, I, f, l, y):
        K = self.K
        self.ymax = max(self.ymax, abs(y))
        s = 1.0 if self.U0 > 0 else self.ymax
        if s <= 0:
            return
        U = self.U0 if self.U0 > 0 else 1.0
        c = l / unit_scale(self.kind, s) / self.p[I]
        self.C += c
        self.V += self.q[I] * c * c
        self.L[I] += c
        A = np.exp(-y * f) if self.tem1 else self.gc0 ** (1 / 3) * (U * K) ** (2 / 3)
        delta = 0.5 * A / max(A, 2 * self.C ** (1 / 3))
        eta = self.eta_fixed or np.sqrt(2 * np.log(K)) / np.sqrt(1 + self.V)
        if self.omd:
            lw = np.log(self.q)
            lw[I] -= eta * c
            self.q = softmax(lw)
        else:
            self.q = softmax(-eta * self.L)
        self.p = (1 - delta) * self.q + delta / K


def normalise(q, eta, ct, alpha=8.0, tol=1e-5, max_iter=200, newton=True, renormalize=True):
    """Section 3.4: the bracketed (optionally Newton-safeguarded) root of sum q(mu) = 1."""
    e_in, e_out = 1 / alpha - 1, alpha / (1 - alpha)
    b = q ** e_in + eta * ct
    hi = min(ct.max(), (b / eta).min() * (1 - 1e-12))
    lo = 0.0

    def F(mu):
        base = b - eta * mu
        v = base ** e_out
        return v.sum(), -e_out * (eta * v / base).sum()

    mu = hi
    val, dval = F(mu)
    evals = 1
    if abs(val - 1) > tol:
        mu = 0.0
        val, dval = F(mu)
        evals = 2
        if abs(val - 1) > tol:
            mu = hi
            val, dval = F(mu)
            evals = 3
            dx = dxold = hi - lo
            while evals < max_iter:
                if (newton and dval > 0
                        and ((mu - hi) * dval - (val - 1)) * ((mu - lo) * dval - (val - 1)) < 0
                        and abs(2 * (val - 1)) <= abs(dxold * dval)):
                    dxold, dx = dx, (val - 1) / dval
                    mu -= dx
                else:
                    dxold, dx = dx, 0.5 * (hi - lo)
                    mu = lo + dx
                val, dval = F(mu)
                evals += 1
                if val < 1:
                    lo = mu
                else:
                    hi = mu
                if abs(val - 1) <= tol or hi - lo <= 1e-15 * max(1.0, hi):
                    break
    out = (b - eta * mu) ** e_out
    return (out / out.sum() if renormalize else out), mu, evals


class IOKS:
    """Alg. 2 with eq. (4); rho_1 = 2K; eta_i = base upsilon^n_i."""

    def __init__(self, K, T=0, U=1.0, ell_max=1.0, eta_const=8.0, square=False, ge=True,
                 kind=-1, **solver):
        self.kind = kind
        self.K, self.T, self.U0, self.ell0, self.c8, self.square, self.ge = (
            K, T, U, ell_max, eta_const, square, ge)
        self.solver = solver
        self.p = np.full(K, 1 / K)
        self.q = self.p.copy()
        self.rho = np.full(K, 2.0 * K)
        self.n = np.zeros(K)
        self.eta = np.zeros(K)
        self.base = self.ups = 0.0
        self.ymax = self.lmax = 0.0
        self.mus = []

    def learn(self, t, I, f, l, y):
        K = self.K
        self.ymax = max(self.ymax, abs(y))
        s = 1.0 if self.U0 > 0 else self.ymax
        if s <= 0:
            return
        l = l / unit_scale(self.kind, s)
        self.lmax = max(self.lmax, l)
        h = horizon(self.T, t)
        U = self.U0 if self.U0 > 0 else 1.0
        lm = self.ell0 if self.ell0 > 0 else self.lmax
        g1 = 2 * (U + 1) if self.square else 1.0
        base = self.c8 * lm * K ** 0.375 / (U * g1 * np.sqrt(h * np.log(h)))
        ups = np.exp(2 / (3 * np.log(h)))
        if base != self.base or ups != self.ups:
            self.eta = base * ups ** self.n
        self.base, self.ups = base, ups
        c = l / lm
        top = self.eta.max()
        pI = self.p[I]
        ct = c / pI if (pI > top or (self.ge and pI == top)) else c / (pI + top)
        if ct > 0:
            vec = np.zeros(K)
            vec[I] = ct
            self.q, mu, _ = normalise(self.q, self.eta, vec, **self.solver)
            self.mus.append((mu, ct))
        delta = h ** -0.75
        self.p = (1 - delta) * self.q + delta / K
        grow = 1 / self.p > self.rho
        self.rho[grow] = 2 / self.p[grow]
        self.eta[grow] *= ups
        self.n[grow] += 1


def run(experts, sampler, X, y, seed):
    """The prequential stream: returns the predictions and the sampled kernels."""
    rng = generator(seed)
    preds, chosen = np.empty(len(y)), []
    for t in range(1, len(y) + 1):
        x, target = X[t - 1], y[t - 1]
        cdf = np.cumsum(sampler.p)
        I = min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), sampler.K - 1)
        f = experts.predict(I, x)
        pI = sampler.p[I]
        experts.learn(I, x, f, target, pI)
        sampler.learn(t, I, f, loss(experts.steps.kind, f, target), target)
        preds[t - 1] = f
        chosen.append(I)
    return preds, np.array(chosen)


def generator(seed):
    """A Generator on PCG64(seed), or on a given bit generator (a model's round stream)."""
    if isinstance(seed, np.random.BitGenerator):
        return np.random.Generator(seed)
    return np.random.Generator(np.random.PCG64(seed))


class LKMBooksLearner:
    """Spec 001 section 3.9: shared budgeted support, p-mixture, exponential weights."""

    def __init__(self, gamma, kind, B, nu, T=0, logistic_step=False):
        self.gamma, self.kind, self.B, self.nu, self.T = gamma, kind, B, nu, T
        self.logistic_step = logistic_step
        self.p, self.gmax, self.S, self.alpha = np.full(len(gamma), 1 / len(gamma)), 1.0, [], []

    def predict(self, x):
        """(the kernels' predictions f, their p-mixture)."""
        if self.S:
            d2 = ((np.array(self.S) - x) ** 2).sum(1)
            f = np.array([np.array(self.alpha) @ np.exp(-g * d2) for g in self.gamma])
        else:
            f = np.zeros(len(self.gamma))
        return f, self.p @ f

    def learn(self, t, x, target, f, y_hat, u):
        """Round t's update from the predictions of ``predict`` and the round's uniform u."""
        g = dloss(self.kind, y_hat, target)
        h = horizon(self.T, t)
        nu, B = self.nu, self.B
        P = min(1.0, B / ((1 - nu) * h ** (1 - nu) * t ** nu))
        if u < P and len(self.S) < B:
            lam = (10 / np.sqrt(h) if self.logistic_step
                   else np.sqrt((1 + nu) * B) / (np.sqrt(1 - nu) * h))
            self.S.append(x)
            self.alpha.append(-lam * g / P)
        eta = np.sqrt(8 * np.log(len(self.gamma)) / h)
        ref = f.min() if g > 0 else f.max()
        self.p = self.p * np.exp(-eta * g * (f - ref) / self.gmax)
        self.p /= self.p.sum()
        self.gmax = max(self.gmax, f.max() - f.min())


def lkmbooks_stream(X, y, gamma, kind, B, nu, seed, T=0, logistic_step=False):
    """One LKMBooks learner's prequential predictions, final p and support size."""
    rng = generator(seed)
    learner = LKMBooksLearner(gamma, kind, B, nu, T, logistic_step)
    out = np.empty(len(y))
    for t in range(1, len(y) + 1):
        u = rng.random()
        f, out[t - 1] = learner.predict(X[t - 1])
        learner.learn(t, X[t - 1], y[t - 1], f, out[t - 1], u)
    return out, learner.p, len(learner.S)


def lkmbooks_ensemble_stream(X, y, gamma, kind, B, nus, seed, T=0, logistic_step=False):
    """LKMBooks learners, one per nu (each drawing its uniform in turn), their p-mixtures mixed
    by ML-Poly on the loss's tangent at the mixture (a regression loss's clipped to the range of
    the targets seen): the prequential predictions, the learners and the mixer."""
    rng = generator(seed)
    learners = [LKMBooksLearner(gamma, kind, B, nu, T, logistic_step) for nu in nus]
    mixer = NumpyMLPoly(len(nus), clipped=kind != LOGISTIC)
    out = np.empty(len(y))
    for t in range(1, len(y) + 1):
        x, target = X[t - 1], y[t - 1]
        predictions = [learner.predict(x) for learner in learners]
        members = np.array([y_hat for _, y_hat in predictions])
        out[t - 1] = mixer.mix(members)
        for learner, (f, y_hat) in zip(learners, predictions):
            learner.learn(t, x, target, f, y_hat, rng.random())
        mixer.learn(members, lambda mix: dloss(kind, mix, target), target)
    return out, learners, mixer
