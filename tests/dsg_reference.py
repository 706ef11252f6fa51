"""Doubly stochastic gradients written out in NumPy, for the checks of the compiled models.

The paper's mini-batch iteration (Dai et al. 2014, as tests/test_dsg_core.py states it) on the
library's blocks (``fastomkl._core.features.dsg.generate_block``), kept the plain way: a list of
blocks and their true coefficients, every shrink applied at once, the average of the iterates
kept as its own list.  Nothing here shares code with the compiled experts but the draws.
"""
import numpy as np

from fastomkl._core.features import dsg as core
from reference import NumpyMLPoly


def slope(loss, f, y, p):
    """l'(f, y) of the DSG losses, from their definitions (the squared ones halved)."""
    r = f - y
    return {"squared": lambda: r,
            "huber": lambda: np.clip(r, -p, p),
            "epsilon_insensitive": lambda: np.sign(r) * (abs(r) > p),
            "absolute": lambda: np.sign(r),
            "quantile": lambda: 1.0 - p if f >= y else -p,
            "hinge": lambda: -y if y * f < 1 else 0.0,
            "squared_hinge": lambda: r if y * f < 1 else 0.0,
            "logistic": lambda: -y / (1.0 + np.exp(y * f)),
            "kl": lambda: -2.0 if y == 1 else 2.0 * np.exp(min(f, 800.0)),
            "one_class": lambda: -1.0 if f < 0 else 0.0}[loss]()


class ReferenceDSG:
    """One DSG model: ``predict_learn_one(x, y)`` returns the prediction before learning, and
    ``predict(x)`` the model's outputs (a vector, one per output; less tau for one-class).

    ``gamma(t)`` is the step of iteration t; ``features(x, W, b)`` the block's features of x
    (NumPy's cosines by default); ``max_blocks`` with ``revisit`` the bounded model.
    """

    def __init__(self, kernel, df, sigma, seed, d, r, B, loss, gamma, nu, outputs=1, param=0.0,
                 average=False, precondition=False, max_blocks=None, revisit=True, stream=0,
                 features=None, steps=None):
        self.kernel, self.df, self.sigma, self.seed, self.d, self.r, self.B = (
            kernel, df, sigma, seed, d, r, B)
        self.loss, self.gamma, self.nu, self.C, self.param = loss, gamma, nu, outputs, param
        self.average, self.precondition = average, precondition
        self.max_blocks, self.revisit, self.stream = max_blocks, revisit, stream
        self.features = features or (lambda x, W, b: np.sqrt(2.0 / r) * np.cos(x @ W + b))
        self.blocks, self.alpha, self.avg = [], [], []
        self.tau, self.iterations, self.t = 0.0, 0, 0
        self.batch = []                 # (x, y) of the batch in progress
        # a step ensemble: output k learns y with gamma(t) steps[k] (the shrink stays gamma nu)
        self.steps = None if steps is None else np.asarray(steps, dtype=float)

    def block(self, index):
        return core.generate_block(self.kernel, self.df, self.sigma, self.seed, self.stream,
                                   index, self.d, self.r)

    def scores(self, x, coefficients):
        out = np.zeros(self.C)
        for (W, b), a in zip(self.blocks, coefficients):
            out += self.features(x, W, b) @ a
        return out

    def current(self, x):
        f = self.scores(x, self.alpha)
        f[0] -= self.tau
        return f

    def predict(self, x):
        if not self.average:
            return self.current(x)
        f = self.scores(x, self.avg)
        f[0] -= self.tau
        return f

    def gradient(self, f, y):
        if self.loss == "softmax":
            p = np.exp(f - f.max())
            p /= p.sum()
            p[int(y)] -= 1.0
            return p
        if self.steps is not None:
            return np.array([slope(self.loss, f_k, y, self.param) for f_k in f])
        return np.array([slope(self.loss, f[0], y, self.param)])

    def predict_learn_one(self, x, y):
        out = self.predict(x)
        self.batch.append((x, self.gradient(self.current(x), y), self.current(x)[0] < 0))
        self.t += 1
        if self.t % self.B == 0:
            self.iterate()
        return out

    def iterate(self):
        t = self.iterations + 1
        gamma, rows = self.gamma(t), len(self.batch)
        full = self.max_blocks is not None and len(self.blocks) >= self.max_blocks
        target = None if full and not self.revisit else (t % len(self.blocks) if full
                                                          else len(self.blocks))
        new = self.block(len(self.blocks)) if not full else None
        W, b = new if new is not None else (self.blocks[target] if target is not None
                                            else (None, None))
        step = np.zeros((self.r, self.C))
        if target is not None:
            Z = np.array([self.features(x, W, b) for x, _, _ in self.batch])
            G = np.array([g for _, g, _ in self.batch])
            step = -gamma / rows * Z.T @ G
            if self.steps is not None:
                step = step * self.steps
            if self.precondition:
                P = Z.T @ Z / rows + 1e-7 * np.eye(self.r)
                step = np.linalg.solve(P, step)
        below = sum(flag for _, _, flag in self.batch)
        self.alpha = [(1.0 - gamma * self.nu) * a for a in self.alpha]
        if new is not None:
            self.blocks.append(new)
            self.alpha.append(step)
            self.avg.append(np.zeros((self.r, self.C)))
        elif target is not None:
            self.alpha[target] = self.alpha[target] + step
        if self.loss == "one_class":
            self.tau -= gamma * (below / rows - self.nu)
        self.avg = [(1.0 - 1.0 / t) * v + a / t for v, a in zip(self.avg, self.alpha)]
        self.iterations = t
        self.batch = []


def loss_value(loss, f, y, p):
    """The DSG losses' values, from their definitions (the squared ones halved)."""
    r = f - y
    return {"squared": lambda: 0.5 * r * r,
            "huber": lambda: 0.5 * r * r if abs(r) <= p else p * abs(r) - 0.5 * p * p,
            "epsilon_insensitive": lambda: max(abs(r) - p, 0.0),
            "absolute": lambda: abs(r),
            "quantile": lambda: (1.0 - p) * r if f >= y else -p * r,
            "hinge": lambda: max(1.0 - y * f, 0.0),
            "squared_hinge": lambda: 0.5 * max(1.0 - y * f, 0.0) ** 2,
            "logistic": lambda: np.log1p(np.exp(-y * f))}[loss]()


class ReferenceEnsemble:
    """A DSG step ensemble: ReferenceDSG with one output per step, the outputs mixed by ML-Poly
    on the loss's slope at the mixture (reference.NumpyMLPoly); ``predict_learn_one`` returns the
    combination."""

    def __init__(self, **dsg):
        self.model, self.mixer = ReferenceDSG(**dsg), NumpyMLPoly(len(dsg["steps"]))

    def weights(self):
        return self.mixer.weights()

    def predict_learn_one(self, x, y):
        f = self.model.predict_learn_one(x, y)
        y_hat = self.weights() @ f
        self.mixer.learn(f, lambda mix: slope(self.model.loss, mix, y, self.model.param))
        return y_hat
