"""Plain NumPy implementations of the models' equations, written independently of the compiled core.

Tests compare the compiled models with these on the same random frequencies; the benchmarks use them
as the "straightforward vectorised NumPy" baseline of the same algorithm.
"""
from __future__ import annotations

import numpy as np


def rff(frequencies: np.ndarray, x: np.ndarray) -> np.ndarray:
    """z_i(x) = [cos(Psi_i x); sin(Psi_i x)] / sqrt(D) for every kernel: (N, 2D)."""
    proj = frequencies @ x                                  # (N, D)
    return np.concatenate([np.cos(proj), np.sin(proj)], axis=1) / np.sqrt(frequencies.shape[1])


def loss_value(kind: str, f, y):
    if kind == "squared":
        return (f - y) ** 2
    if kind == "absolute":
        return np.abs(f - y)
    if kind == "logistic":
        return np.logaddexp(0.0, -y * f)
    if kind == "hinge":
        return np.maximum(0.0, 1.0 - y * f)
    raise ValueError(kind)


def loss_derivative(kind: str, f, y):
    if kind == "squared":
        return 2.0 * (f - y)
    if kind == "absolute":
        return np.sign(f - y)
    if kind == "logistic":
        return -y / (1.0 + np.exp(y * f))
    if kind == "hinge":
        return np.where(y * f < 1.0, -y, 0.0)
    raise ValueError(kind)


class NumpyMLPoly:
    """ML-Poly with the gradient trick (Gaillard, Stoltz & van Erven 2014; opera's rates, as
    tests/vaw_reference.mlpoly), written from its equations: w_k = lr_k max(R_k, 0), normalised
    (uniform while no R_k is positive); each round r_k = g (mix - f_k) for g the loss's slope at
    the mixture, R_k += r_k, lr_k <- 1 / (1 / lr_k + r_k^2 + delta), delta the growth of the
    largest r^2 seen (Smax), lr starting at 2^-20.

    ``clipped``: the members' predictions enter clipped to [min y, max y] of the labels seen
    before the round (``members``; none before the first label), as a regressor's step
    ensemble mixes them; ``learn`` then takes the round's label ``y``."""

    def __init__(self, n: int, clipped: bool = False):
        self.lr, self.regret, self.largest = np.full(n, 2.0 ** -20), np.zeros(n), 0.0
        self.clipped, self.seen = clipped, None

    def weights(self) -> np.ndarray:
        lead = self.lr * np.maximum(self.regret, 0.0)
        return lead / lead.sum() if lead.sum() > 0 else np.full(len(lead), 1.0 / len(lead))

    def members(self, f) -> np.ndarray:
        """The members' predictions as they are mixed."""
        f = np.asarray(f, dtype=np.float64)
        return f if self.seen is None else np.clip(f, *self.seen)

    def mix(self, f) -> float:
        return float(self.weights() @ self.members(f))

    def learn(self, f, slope, y=None) -> None:
        """`f` the members' predictions of the round, slope(mix) the loss's derivative at their
        mixture, `y` the label (needed when ``clipped``)."""
        f = self.members(f)
        mix = self.weights() @ f
        self.learn_regrets(slope(mix) * (mix - f))
        if self.clipped:
            self.seen = (y, y) if self.seen is None else (min(self.seen[0], y),
                                                          max(self.seen[1], y))

    def learn_regrets(self, r) -> None:
        """The round's instantaneous regrets r_k."""
        delta = max((r * r).max() - self.largest, 0.0)
        self.regret += r
        self.lr = 1.0 / (1.0 / self.lr + r * r + delta)
        self.largest += delta


# The winsorised target statistics (fastomkl._core.engine: TARGET_WARMUP, TARGET_CLIP; a test
# checks the two agree): once WARMUP targets are seen, a target is clipped to mean +- CLIP sd of
# the (clipped) targets before it, and the clipped value is what the statistics take in and what
# the model learns.
WARMUP = 10
CLIP = 8.0


def winsorised(targets: list, y: float) -> float:
    """y clipped to mean +- CLIP * std (NumPy's population std) of `targets` (the clipped
    targets seen before it) once there are WARMUP of them and their std is positive."""
    if len(targets) >= WARMUP:
        mean, std = float(np.mean(targets)), float(np.std(targets))
        if std > 0:
            return min(max(y, mean - CLIP * std), mean + CLIP * std)
    return y


def winsorised_stream(y) -> np.ndarray:
    """Every target of a stream winsorised against the (winsorised) ones before it."""
    out: list = []
    for value in y:
        out.append(winsorised(out, float(value)))
    return np.array(out)


class StandardisedTargets:
    """Online standardisation of regression targets: the mean and standard deviation (NumPy's
    population std; 1 until it is positive) of the winsorised targets seen so far, or the
    identity when `on` is False (classification labels)."""

    def __init__(self, on: bool):
        self.on, self.targets = on, []

    def units(self) -> tuple[float, float]:
        """(center, scale) of the targets seen so far."""
        if not self.on or not self.targets:
            return 0.0, 1.0
        std = float(np.std(self.targets)) if len(self.targets) > 1 else 0.0
        return float(np.mean(self.targets)), std if std > 0 else 1.0

    def learn(self, y: float) -> float:
        """y winsorised and taken into the statistics, in the units they then give."""
        if not self.on:
            return y
        self.targets.append(winsorised(self.targets, y))
        center, scale = self.units()
        return (self.targets[-1] - center) / scale


def ensemble_step(theta, z, f, y, steps, lam: float, loss: str):
    """One round of a step ensemble's members theta[k, i] (linear models on kernel k's features
    z[k] with the constant step steps[i]), f[k, i] their predictions: the step truncated at the
    minimiser of the loss along it, s = min(steps[i], r loss / (d^2 ||z_k||^2)) (r = 2 for the
    squared loss: onto y; 1 for the others), the regulariser taken proximally,
    theta <- (theta - s d z_k) / (1 + 2 s lam).  Returns the new theta and the members' losses
    loss + lam ||theta||^2 (theta before the step)."""
    d, value = loss_derivative(loss, f, y), loss_value(loss, f, y)
    zz = np.einsum("kj,kj->k", z, z)[:, None]
    moves = (d != 0) & (zz > 0)
    reach = 2.0 if loss == "squared" else 1.0
    limit = np.divide(reach * value, d ** 2 * zz, out=np.full_like(f, np.inf), where=moves)
    s = np.minimum(np.asarray(steps)[None, :], limit)
    norm_before = np.einsum("kij,kij->ki", theta, theta)
    theta = (theta - (s * d)[:, :, None] * z[:, None, :]) / (1.0 + 2.0 * s * lam)[:, :, None]
    return theta, value + lam * norm_before


class PageHinkley:
    """Page's (1954) test, as its textbook states it: with m_n the mean of x_1 .. x_n,
    C_n = sum_{i <= n} (x_i - m_i - delta); an alarm when C_n - min_{i <= n} C_i > threshold (C_0 =
    0 counts in the minimum), after which the test starts again from nothing."""

    def __init__(self, delta, threshold):
        self.delta, self.threshold, self.alarms = delta, threshold, []
        self.xs, self.cs = [], [0.0]

    def add(self, x, t):
        self.xs.append(x)
        self.cs.append(self.cs[-1] + x - np.mean(self.xs) - self.delta)
        if self.cs[-1] - min(self.cs) > self.threshold:
            self.alarms.append(t)
            self.xs, self.cs = [], [0.0]
            return True
        return False


def change_statistic(kind, y_hat, y):
    """What the test watches: a mistake of the sign of y_hat (0 counts as -1, as a classifier's
    predict does) against a label -1 / +1 ("mistakes"), or the squared error capped at 4."""
    if kind == "mistakes":
        return float((y_hat > 0) != (y > 0))
    return min((y_hat - y) ** 2, 4.0)


def step_size(eta: float, schedule: str, t: int) -> float:
    return eta / np.sqrt(t) if schedule == "inv_sqrt" else eta


class NumpyRaker:
    """Raker (Shen, Chen & Giannakis 2019) vectorised over kernels with NumPy, one sample at a time.

    ``eta="auto"`` is the library's data-adaptive default: AdaGrad-norm steps 2 / sqrt(G_k) per
    kernel (G_k the sum of its squared gradient norms, this round's included) truncated at
    loss / (d^2 ||z||^2) (the step at which f_k would reach the zero of its loss's tangent),
    regression targets standardised with the mean and standard deviation of the targets seen so far
    (this one included when learning, excluded when predicting), each target winsorised first
    (``winsorised``), exponential weights at the constant rate 1.
    """

    def __init__(self, frequencies, eta=0.1, eta_schedule="inv_sqrt", lam=1e-3, loss="squared",
                 eta_hedge=None, regularizer_after_update=False):
        self.frequencies = np.asarray(frequencies, dtype=np.float64)     # (N, D, d)
        n, d = self.frequencies.shape[0], self.frequencies.shape[1]
        self.theta = np.zeros((n, 2 * d))
        self.log_w = np.zeros(n)
        self.auto = eta == "auto"
        self.hedge_schedule = eta_schedule
        if self.auto:
            eta, self.hedge_schedule = 2.0, "constant"
            eta_hedge = 1.0 if eta_hedge is None else eta_hedge
        self.eta, self.schedule, self.lam, self.loss = eta, eta_schedule, lam, loss
        self.eta_hedge = eta if eta_hedge is None else eta_hedge
        self.after = regularizer_after_update
        self.grad_sq = np.zeros(n)
        self.targets = StandardisedTargets(self.auto and loss in ("squared", "absolute"))
        self.t = 0

    def weights(self) -> np.ndarray:
        w = np.exp(self.log_w - self.log_w.max())
        return w / w.sum()

    def predict_one(self, x) -> float:
        f = np.einsum("kj,kj->k", self.theta, rff(self.frequencies, x))
        center, scale = self.targets.units()
        return center + scale * float(self.weights() @ f)

    def predict_learn_one(self, x, y) -> float:
        self.t += 1
        z = rff(self.frequencies, x)
        f = np.einsum("kj,kj->k", self.theta, z)
        center, scale = self.targets.units()
        y_hat = center + scale * float(self.weights() @ f)
        y = self.targets.learn(y)
        d = loss_derivative(self.loss, f, y)
        if self.auto:
            zz = np.einsum("kj,kj->k", z, z)
            self.grad_sq += d ** 2 * zz
            eta = np.divide(self.eta, np.sqrt(self.grad_sq), out=np.zeros_like(self.grad_sq),
                            where=self.grad_sq > 0)
            moves = (d != 0) & (zz > 0)
            limit = np.divide(loss_value(self.loss, f, y), d ** 2 * zz,
                              out=np.full_like(eta, np.inf), where=moves)
            eta = np.minimum(eta, limit)[:, None]
        else:
            eta = step_size(self.eta, self.schedule, self.t)
        norm_before = np.einsum("kj,kj->k", self.theta, self.theta)
        grad = d[:, None] * z + 2.0 * self.lam * self.theta
        self.theta = self.theta - eta * grad
        norm = np.einsum("kj,kj->k", self.theta, self.theta) if self.after else norm_before
        losses = loss_value(self.loss, f, y) + self.lam * norm
        self.log_w -= step_size(self.eta_hedge, self.hedge_schedule, self.t) * losses
        return y_hat
