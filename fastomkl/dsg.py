"""Doubly stochastic gradients (DSG) for kernel machines: Dai, Xie, He, Liang, Raj, Balcan and Song,
"Scalable Kernel Methods via Doubly Stochastic Gradients", NeurIPS 2014.

Each iteration takes a mini-batch of B samples and a fresh block of r random Fourier features, and
takes one functional gradient step::

    F      = f_t(X_batch)                               (every earlier block regenerated)
    G      = l'(F, y)                                   (the loss derivative, per sample)
    alpha_t = -gamma_t / B * z_t(X_batch)^T G           (the new block's coefficients)
    alpha_s <- (1 - gamma_t nu) alpha_s,  s < t         (the shrink of every older block)

with ``z_t(x) = sqrt(2/r) cos(W_t^T x + b_t)``, so that ``E[z(x)^T z(x')] = k(x, x')``.  With
B = r = 1 this is the paper's Algorithm 1.  Old blocks are never updated again, only shrunk; the
model grows by r coefficients per iteration, and the frequencies of block t are never stored:
they are a pure function of ``(seed, stream, t)`` (``fastomkl._core.dsg``) and regenerated at
every prediction.  The shrink is O(1): the coefficients are kept as ``scale * coef``.

Data-parallel training: W models with the same seed and parameters but different ``stream``
draw disjoint feature blocks; ``merge(models)`` returns one model whose prediction is the
average of theirs (the blocks concatenated, each model's coefficients divided by W).

Kernels: ``"gaussian"`` exp(-||d||^2 / (2 sigma^2)), ``"laplacian"`` exp(-||d||_1 / sigma),
``"cauchy"`` prod 1 / (1 + d_l^2 / sigma^2), ``"matern"`` (nu = ``matern_nu`` in {0.5, 1.5, 2.5}),
the conventions of ``fastomkl.kernels``; sigma is ``bandwidth`` (a number, or ``"median"``: the
median distance between rows of the first learning call, times ``bandwidth_scale``).
"""
from __future__ import annotations

import copy
import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from fastomkl._estimator import BinaryClassifier, MulticlassClassifier, OnlineEstimator
from fastomkl._estimator.base import _sample_weight, _unchanged_on_error
from fastomkl._validation import (NumericalWarning, check_choice, check_float, check_int,
                                  check_matrix, check_sample, check_target_value, check_targets)

__all__ = ["DoublySGDRegressor", "DoublySGDClassifier", "DoublySGDOneClass",
           "DoublySGDDensityRatio", "DoublySGDGP", "DoublySGDSoftmaxClassifier", "NORMA", "merge",
           "on_stream", "median_bandwidth"]

KERNELS = ("gaussian", "laplacian", "cauchy", "matern")
SCHEDULES = ("inverse", "theory", "constant")
MATERN_NUS = (0.5, 1.5, 2.5)
BLOCKS_PER_PART = 8           # prediction sums blocks in parts of this many, reduced in order
ROWS_PER_SLICE = 4096         # and rows in slices of this many
MAX_COEF = 1e200              # a new block beyond this magnitude is refused (non-finite guard)
RENORMALISE_BELOW = 1e-100    # fold the lazy scale into the coefficients below this magnitude
MIN_BANDWIDTH = 1e-100
MAX_STREAM = 1 << 62          # streams of the models' own blocks are below this
SECOND_DRAWS = 1 << 62        # the GP operator's second draws: block (stream + this, index)
VARIANCES = ("test_points", "operator")
MAX_TEST_POINTS = 1 << 16


def _core():
    from fastomkl._core.features import dsg_blocks as dsg
    return dsg


def median_bandwidth(X, scale: float = 1.0, max_rows: int = 2000, random_state=0) -> float:
    """The median Euclidean distance between distinct rows of X, times ``scale`` (the median trick).

    Parameters
    ----------
    X : array-like, shape (n_samples, n_features)
    scale : float, default 1
        The paper multiplies the median by 0.1, 1 or 4 depending on the data set.
    max_rows : int, default 2000
        The median runs over all pairs of at most this many rows, drawn with ``random_state``.
    random_state : int, default 0

    Returns
    -------
    float
        The bandwidth; ``sqrt(n_features) * scale`` when X has fewer than two distinct rows (the
        median distance of standardised data is about ``sqrt(2 n_features)``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    >>> median_bandwidth(X)
    5.0
    """
    X = check_matrix(X)
    if X.shape[0] > max_rows:
        rows = np.random.default_rng(random_state).choice(X.shape[0], max_rows, replace=False)
        X = X[np.sort(rows)]
    i, j = np.triu_indices(X.shape[0], k=1)
    with np.errstate(over="ignore"):
        distances = np.sqrt(np.square(X[i] - X[j]).sum(axis=1))
    distances = distances[distances > 0]
    if distances.size == 0:
        return math.sqrt(X.shape[1]) * scale
    median = float(np.median(distances))
    if not math.isfinite(median):           # rows near the input bound: the distance overflows
        median = float(np.median(np.abs(X[i] - X[j]).max(axis=1)))
    return max(median * scale, MIN_BANDWIDTH)


# -- losses: the derivative l'(F, y) in F, for F of shape (n, C) ----------------------------------
def _squared(F, y, p):
    return F - (y[:, None] if y.ndim == 1 else y)     # one target per row, or one per output


def _huber(F, y, p):
    return np.clip(F - y[:, None], -p["epsilon"], p["epsilon"])


def _epsilon_insensitive(F, y, p):
    r = F - y[:, None]
    return np.where(np.abs(r) > p["epsilon"], np.sign(r), 0.0)


def _absolute(F, y, p):
    return np.sign(F - y[:, None])


def _quantile(F, y, p):
    return np.where(F >= y[:, None], 1.0 - p["quantile"], -p["quantile"])


def _hinge(F, y, p):
    return np.where(y[:, None] * F < 1.0, -y[:, None], 0.0)


def _squared_hinge(F, y, p):
    return np.where(y[:, None] * F < 1.0, F - y[:, None], 0.0)


def _logistic(F, y, p):
    # -y sigma(-y F), with the logistic function in its overflow-free form
    m = -y[:, None] * F
    return -y[:, None] * np.where(m >= 0, 1.0 / (1.0 + np.exp(-np.abs(m))),
                                  np.exp(-np.abs(m)) / (1.0 + np.exp(-np.abs(m))))


def _kl_ratio(F, y, p):
    # rows with y = 1 come from p (the numerator), the others from q: 2 (1[q] exp(f) - 1[p])
    with np.errstate(over="ignore"):
        return 2.0 * np.where(y[:, None] == 1.0, -1.0, np.exp(np.minimum(F, 800.0)))


def _softmax(F, y, p):
    # y holds class indices: softmax(F) - e_y, with the maximum subtracted first
    G = np.exp(F - F.max(axis=1, keepdims=True))
    G /= G.sum(axis=1, keepdims=True)
    G[np.arange(F.shape[0]), y.astype(np.int64)] -= 1.0
    return G


REGRESSION_LOSSES = {"squared": _squared, "huber": _huber,
                     "epsilon_insensitive": _epsilon_insensitive, "absolute": _absolute,
                     "quantile": _quantile}
CLASSIFICATION_LOSSES = {"hinge": _hinge, "squared_hinge": _squared_hinge, "logistic": _logistic}
LOSSES = {**REGRESSION_LOSSES, **CLASSIFICATION_LOSSES, "kl": _kl_ratio, "softmax": _softmax}


def step_size(schedule: str, t: int, eta0: float, eta1: float, nu: float) -> float:
    """gamma_t of iteration t >= 1: ``"inverse"`` eta0 / (1 + eta1 t) (the authors' code),
    ``"theory"`` eta0 / t (the paper's theta / t, with theta = eta0), ``"constant"`` eta0."""
    if schedule == "inverse":
        return eta0 / (1.0 + eta1 * t)
    if schedule == "theory":
        return eta0 / t
    return eta0


class _Step(NamedTuple):
    """One iteration's update, computed before anything changes."""
    t: int                  # the iteration
    gamma: float            # its step size
    alpha: np.ndarray       # the new block's coefficients (r, C), or (0, C) for none
    shrink: float           # the factor of every older block
    offset: float           # the one-class threshold after the iteration
    Z: np.ndarray           # the new block's features of the batch (B, r)


class _DSGEngine:
    """The state of one DSG model and its learning and prediction loops.

    The coefficients of block s are ``scale * coef[s r:(s + 1) r]``; block s's features are
    regenerated from ``(seed, streams[s], indices[s])``.
    """

    def __init__(self, config: dict, n_features: int):
        self.config = config
        self.n_features = n_features
        self.r = config["block_size"]
        self.C = config.get("n_outputs", 1)
        self.seed = config["seed"]
        self.stream = config["stream"]
        self.bandwidth = config["bandwidth"]      # None until the first batch ("median")
        self.nu = config["nu"]
        self.n_blocks = 0
        self.coef = np.zeros((0, self.C))
        self.avg = np.zeros((0, self.C))
        self.streams = np.zeros(0, dtype=np.int64)
        self.indices = np.zeros(0, dtype=np.int64)
        self.scale = 1.0
        self.offset = 0.0           # the one-class threshold tau (0 for the other tasks)
        self.t = 0                  # samples learnt
        self.iterations = 0
        self.next_index = 0
        self.n_rejected_updates = 0
        self.rng_state = {}         # DSG draws nothing per round: the features are keyed

    # -- prediction ---------------------------------------------------------------------------
    def _kernel_args(self):
        c = self.config
        return c["kernel"], int(round(2 * c["matern_nu"])), self.bandwidth, self.seed

    def decision(self, X: np.ndarray, averaged: bool | None = None) -> np.ndarray:
        """f(X), shape (n, C), with every block regenerated; the same bits on any thread count."""
        averaged = self.config["average"] if averaged is None else averaged
        coef, scale = (self.avg, 1.0) if averaged else (self.coef, self.scale)
        n = X.shape[0]
        out = np.zeros((n, self.C))
        if self.n_blocks == 0 or n == 0:
            return out
        coef = coef[:self.n_blocks * self.r]
        streams, indices = self.streams[:self.n_blocks], self.indices[:self.n_blocks]
        parts = [(lo, min(lo + BLOCKS_PER_PART, self.n_blocks))
                 for lo in range(0, self.n_blocks, BLOCKS_PER_PART)]
        accumulate = _core().accumulate
        args = self._kernel_args()
        single = self.config.get("dtype") == "float32"
        n_jobs = self.config["n_jobs"]
        for start in range(0, n, ROWS_PER_SLICE):
            rows = X[start:start + ROWS_PER_SLICE]
            partial = np.zeros((len(parts), rows.shape[0], self.C))

            def run(p, rows=rows, partial=partial):
                lo, hi = parts[p]
                accumulate(rows, *args, streams, indices, coef, scale, lo, hi, partial[p], single)

            if n_jobs == 1 or len(parts) == 1:
                for p in range(len(parts)):
                    run(p)
            else:
                with ThreadPoolExecutor(n_jobs) as pool:
                    list(pool.map(run, range(len(parts))))
            block = out[start:start + rows.shape[0]]
            for p in range(len(parts)):           # a fixed order: the bits do not depend on n_jobs
                block += partial[p]
        return out

    def _outputs(self, F: np.ndarray) -> np.ndarray:
        """The model's output per row of f(X): the first column, less the one-class threshold."""
        return F[:, 0] - self.offset

    def predict_one(self, x) -> float:
        x = check_sample(x, self.n_features)
        return float(self._outputs(self.decision(x[None, :]))[0])

    def predict_many(self, X: np.ndarray, out: np.ndarray) -> None:
        out[:] = self._outputs(self.decision(X))

    # -- learning -----------------------------------------------------------------------------
    def predict_learn_one(self, x, y: float) -> float:
        x = check_sample(x, self.n_features)
        y = check_target_value(y)
        out = np.empty(1)
        self.predict_learn_many(x[None, :], np.array([y]), out)
        return float(out[0])

    def predict_learn_many(self, X: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        """Mini-batches of ``batch_size`` rows in order: predict each batch, then learn it."""
        if self.bandwidth is None:
            self.bandwidth = median_bandwidth(X, self.config["bandwidth_scale"],
                                              random_state=self.seed % (2 ** 32))
        B = self.config["batch_size"]
        rejected = self.n_rejected_updates
        for start in range(0, X.shape[0], B):
            rows, targets = X[start:start + B], y[start:start + B]
            F = self.decision(rows, averaged=False)
            out[start:start + rows.shape[0]] = self._outputs(
                self.decision(rows) if self.config["average"] else F)
            self.learn_batch(rows, targets, F)
        if self.n_rejected_updates > rejected:
            warnings.warn(f"{self.n_rejected_updates - rejected} update(s) refused: they would "
                          f"have made the model's coefficients non-finite", NumericalWarning,
                          stacklevel=4)

    def learn_batch(self, X: np.ndarray, y: np.ndarray, F: np.ndarray) -> None:
        """One DSG iteration on the batch (X, y), given its predictions F = f_t(X)."""
        step = self._propose(X, y, F)
        if step is None:
            self.n_rejected_updates += 1
            return
        self._commit(step, X.shape[0])

    def _propose(self, X: np.ndarray, y: np.ndarray, F: np.ndarray) -> _Step | None:
        """The iteration on (X, y) without changing anything; None if it would make the
        coefficients non-finite (the caller refuses it)."""
        c = self.config
        t = self.iterations + 1
        gamma = step_size(c["learning_rate"], t, c["eta0"], c["eta1"], self.nu)
        offset = self.offset
        with np.errstate(all="ignore"):
            if c["loss"] == "one_class":     # l(u, tau) = max(0, tau - u), and -nu tau
                below = F < offset
                G = np.where(below, -1.0, 0.0)
                offset = offset - gamma * (below.mean() - self.nu)
            else:
                G = LOSSES[c["loss"]](F, y, c)
            W, b = _core().generate_block(*self._kernel_args(), self.stream, self.next_index,
                                          self.n_features, self.r)
            Z = _core().features(X, W, b, c.get("dtype") == "float32")
            alpha = (-gamma / X.shape[0]) * (Z.T @ G)
            if c["precondition"]:           # the authors' code: solve with the batch covariance
                alpha = _precondition(Z, alpha)
        shrink = 1.0 - gamma * self.nu
        full = c.get("n_features_max") is not None and \
            (self.n_blocks + 1) * self.r > c["n_features_max"]
        if full:                    # the paper's memory bound reached: old blocks only shrink
            alpha = alpha[:0]
        if not (np.isfinite(F).all() and np.isfinite(alpha).all()
                and np.abs(alpha).max(initial=0.0) <= MAX_COEF and math.isfinite(shrink)
                and abs(offset) <= MAX_COEF):
            return None
        return _Step(t, gamma, alpha, shrink, offset, Z)

    def _commit(self, step: _Step, n_rows: int) -> None:
        self._append(step.alpha, step.shrink, step.t)
        self.offset = step.offset
        self.t += n_rows

    def _append(self, alpha: np.ndarray, shrink: float, t: int) -> None:
        """Shrink every stored block by ``shrink`` (lazily), then store ``alpha`` as a new block."""
        n = self.n_blocks * self.r
        self.scale = _shrink_lazily(self.coef[:n], self.scale, shrink)
        if alpha.shape[0] == 0:     # no new block: the average still takes in f_{t+1}
            if self.config["average"]:
                self.avg[:n] = (1.0 - 1.0 / t) * self.avg[:n] + (self.scale / t) * self.coef[:n]
            self.iterations = t
            return
        self._grow(n + self.r)
        self.coef[n:n + self.r] = alpha / self.scale
        self.streams[self.n_blocks] = self.stream
        self.indices[self.n_blocks] = self.next_index
        if self.config["average"]:  # the average of the iterates f_1 .. f_t, f_1 = 0
            self.avg[:n] *= 1.0 - 1.0 / t
            self.avg[:n + self.r] += (self.scale / t) * self.coef[:n + self.r]
        self.n_blocks += 1
        self.next_index += 1
        self.iterations = t

    def _grow(self, rows: int) -> None:
        """Room for ``rows`` coefficient rows (amortised doubling)."""
        if rows <= self.coef.shape[0]:
            return
        capacity = max(rows, 2 * self.coef.shape[0])
        blocks = capacity // self.r
        self.coef = _resized(self.coef, capacity)
        self.avg = _resized(self.avg, capacity)
        self.streams = _resized(self.streams, blocks)
        self.indices = _resized(self.indices, blocks)

    # -- state --------------------------------------------------------------------------------
    def get_state(self) -> dict:
        n = self.n_blocks * self.r
        return {
            "dsg.coef": self.coef[:n].copy(),
            "dsg.avg": self.avg[:n].copy() if self.config["average"] else np.zeros((0, self.C)),
            "dsg.streams": self.streams[:self.n_blocks].copy(),
            "dsg.indices": self.indices[:self.n_blocks].copy(),
            "dsg.reals": np.array([self.scale, np.nan if self.bandwidth is None
                                   else self.bandwidth, self.offset]),
            "dsg.counts": np.array([self.t, self.iterations, self.next_index,
                                    self.n_rejected_updates, self.seed, self.n_features],
                                   dtype=np.int64),
            "dsg.generator": np.frombuffer(_core().GENERATOR.encode(), dtype=np.uint8).copy(),
        }

    def check_state(self, state: dict) -> None:
        """Raise ValueError naming the first entry of ``state`` that this model cannot hold."""
        expected = self.get_state()
        if set(state) != set(expected):
            raise ValueError(f"the state must hold exactly {sorted(expected)}, got {sorted(state)}")
        for name, value in state.items():
            if not isinstance(value, np.ndarray) or value.dtype != expected[name].dtype \
                    or value.ndim != expected[name].ndim:
                raise ValueError(f"state entry {name!r} must be a {expected[name].ndim}-D "
                                 f"{expected[name].dtype} array")
        if bytes(state["dsg.generator"]) != _core().GENERATOR.encode():
            raise ValueError(f"state entry 'dsg.generator': the file's features come from another "
                             f"generator than {_core().GENERATOR!r}")
        streams, indices, coef = state["dsg.streams"], state["dsg.indices"], state["dsg.coef"]
        n_blocks = streams.shape[0]
        if indices.shape != (n_blocks,):
            raise ValueError("state entry 'dsg.indices' must have one entry per block")
        if coef.shape != (n_blocks * self.r, self.C):
            raise ValueError(f"state entry 'dsg.coef' must have shape "
                             f"({n_blocks * self.r}, {self.C})")
        if self.config["average"] and state["dsg.avg"].shape != coef.shape:
            raise ValueError("state entry 'dsg.avg' must have the shape of 'dsg.coef'")
        if not self.config["average"] and state["dsg.avg"].size:
            raise ValueError("state entry 'dsg.avg' must be empty without average=True")
        for name in ("dsg.coef", "dsg.avg"):
            if not (np.isfinite(state[name]).all() and np.abs(state[name]).max(initial=0.0)
                    <= MAX_COEF / RENORMALISE_BELOW):
                raise ValueError(f"state entry {name!r} must hold finite coefficients")
        if (streams < 0).any() or (streams >= MAX_STREAM).any() or (indices < 0).any():
            raise ValueError(f"state entries 'dsg.streams' and 'dsg.indices' must be "
                             f"non-negative, the streams below {MAX_STREAM}")
        if len(set(zip(streams.tolist(), indices.tolist()))) < n_blocks:
            raise ValueError("state entries 'dsg.streams', 'dsg.indices': a block appears twice")
        if state["dsg.reals"].shape != (3,) or state["dsg.counts"].shape != (6,):
            raise ValueError("state entries 'dsg.reals' and 'dsg.counts' must have 3 and 6 entries")
        scale, bandwidth, offset = state["dsg.reals"]
        if not abs(offset) <= MAX_COEF or (offset != 0 and self.config["loss"] != "one_class"):
            raise ValueError(f"state entry 'dsg.reals': the offset must be finite, and 0 except "
                             f"for a one-class model, got {offset}")
        if not (math.isfinite(scale) and RENORMALISE_BELOW <= abs(scale) <= 1.0):
            raise ValueError(f"state entry 'dsg.reals': the scale must be finite, with magnitude "
                             f"in [{RENORMALISE_BELOW:g}, 1], got {scale}")
        if not (math.isfinite(bandwidth) and bandwidth >= MIN_BANDWIDTH):
            raise ValueError(f"state entry 'dsg.reals': the bandwidth must be a finite number "
                             f">= {MIN_BANDWIDTH:g}, got {bandwidth}")
        if self.config["bandwidth"] is not None and bandwidth != self.config["bandwidth"]:
            raise ValueError("state entry 'dsg.reals': the bandwidth differs from the parameters'")
        t, iterations, next_index, rejected, seed, width = state["dsg.counts"].tolist()
        if width != self.n_features:
            raise ValueError(f"state entry 'dsg.counts': the state is of a model of {width} "
                             f"inputs, not {self.n_features}")
        if min(t, iterations, next_index, rejected) < 0 or n_blocks > iterations \
                or iterations > t:
            raise ValueError("state entry 'dsg.counts': counts must be non-negative, with at most "
                             "one block per iteration and one sample per iteration at least")
        own = indices[streams == self.stream]
        if own.size and next_index <= own.max():
            raise ValueError("state entry 'dsg.counts': the next block index must follow the "
                             "model's own blocks")
        if seed != self.seed:
            raise ValueError(f"state entry 'dsg.counts': the seed {seed} is not the model's "
                             f"random_state {self.seed}")

    def set_state(self, state: dict) -> None:
        self.check_state(state)
        self.coef = state["dsg.coef"].copy()
        self.avg = state["dsg.avg"].copy() if self.config["average"] else np.zeros_like(self.coef)
        self.streams = state["dsg.streams"].copy()
        self.indices = state["dsg.indices"].copy()
        self.n_blocks = self.streams.shape[0]
        self.scale, self.bandwidth, self.offset = (float(v) for v in state["dsg.reals"])
        self.t, self.iterations, self.next_index, self.n_rejected_updates = (
            int(v) for v in state["dsg.counts"][:4])


class _SoftmaxEngine(_DSGEngine):
    """Multiclass scores, one column per class (targets are column indices); a row's output is
    its best column.  A class met for the first time gets a column of zeros."""

    def _outputs(self, F: np.ndarray) -> np.ndarray:
        return np.argmax(F, axis=1).astype(np.float64)

    def predict_learn_many(self, X: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        if y.size and y.max() >= self.C:
            self._add_columns(int(y.max()) + 1)
        super().predict_learn_many(X, y, out)

    def with_outputs(self, n_outputs: int) -> "_SoftmaxEngine":
        """This engine with ``n_outputs`` columns, as a new object (self if it has them)."""
        if n_outputs == self.C:
            return self
        grown = copy.copy(self)
        grown.config = dict(self.config)
        grown.streams, grown.indices = self.streams.copy(), self.indices.copy()
        grown._add_columns(n_outputs)
        return grown

    def _add_columns(self, n_outputs: int) -> None:
        pad = ((0, 0), (0, n_outputs - self.C))
        self.coef, self.avg = np.pad(self.coef, pad), np.pad(self.avg, pad)
        self.C = self.config["n_outputs"] = n_outputs


class _GPEngine(_DSGEngine):
    """A GP by doubly stochastic gradients: the posterior mean is output 0 of a ridge DSG with
    nu = noise / n; method 2's variance functions at the test points are its outputs 1..m (ridge
    regressions on the targets k(x, test_points), on the same blocks and batches); method 1's
    variance operator (``variance="operator"``) is ``theta``, one packed column per block (see
    ``fastomkl._core.dsg``), its second draws the blocks (stream + SECOND_DRAWS, index).

    ``nu`` is None until the first learning call when ``n_samples`` is None (then n is that
    call's number of rows).  The operator shrinks lazily, as the coefficients do: its values are
    ``theta_scale * theta``.
    """

    def __init__(self, config: dict, n_features: int):
        points = config["test_points"]
        outputs = 1 if points is None else 1 + points.shape[0]
        super().__init__({**config, "n_outputs": outputs}, n_features)
        if points is not None and points.shape[1] != n_features:
            raise ValueError(f"test_points has {points.shape[1]} features, but the model is "
                             f"expecting {n_features} features as input")
        self.points = points
        self.operator = config["variance"] == "operator"
        self.theta = np.zeros(0)
        self.theta_size = 0
        self.theta_scale = 1.0

    def exact_kernel(self):
        """The kernel the features estimate, at the bandwidth in use."""
        from fastomkl.kernels import Cauchy, Gaussian, Laplacian, Matern
        kernel = self.config["kernel"]
        if kernel == "matern":
            return Matern(self.bandwidth, nu=self.config["matern_nu"])
        return {"gaussian": Gaussian, "laplacian": Laplacian, "cauchy": Cauchy}[kernel](
            self.bandwidth)

    def _second_streams(self) -> np.ndarray:
        return self.streams[:self.n_blocks] + SECOND_DRAWS

    # -- learning -----------------------------------------------------------------------------
    def predict_learn_many(self, X: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        if self.nu is None:
            self.nu = self.config["noise"] / X.shape[0]
        super().predict_learn_many(X, y, out)

    def learn_batch(self, X: np.ndarray, y: np.ndarray, F: np.ndarray) -> None:
        """One iteration of every part on the batch, or of none if one part would turn
        non-finite."""
        if self.points is not None:
            y = np.column_stack([y, self.exact_kernel().gram(X, self.points)])
        step = self._propose(X, y, F)
        column = None if step is None or not self.operator else self._operator_column(X, step)
        if step is None or (self.operator and column is None):
            self.n_rejected_updates += 1
            return
        if self.operator:
            self._append_column(column, step.shrink)
        self._commit(step, X.shape[0])

    def _operator_column(self, X: np.ndarray, step: _Step) -> np.ndarray | None:
        """The operator's new column (the paper's eq. 18 on the batch): its blocks s < t are
        -gamma/B sum_b A_t(., x_b)_s z'_t(x_b)^T, its last gamma/B sum_b z_t(x_b) z'_t(x_b)^T,
        stored transposed; None if not finite."""
        single = self.config.get("dtype") == "float32"
        n = self.n_blocks
        A = np.zeros((X.shape[0], n * self.r))        # A_t(., x_b) in the first draws' features
        _core().operator_apply(X, *self._kernel_args(), self._second_streams(),
                               self.indices[:n], self.theta[:self.theta_size], self.theta_scale,
                               self.r, A, single)
        W, b = _core().generate_block(*self._kernel_args(), self.stream + SECOND_DRAWS,
                                      self.next_index, self.n_features, self.r)
        second = _core().features(X, W, b, single)
        with np.errstate(all="ignore"):
            column = (step.gamma / X.shape[0]) * (second.T @ np.hstack([-A, step.Z]))
        if not (np.isfinite(column).all() and np.abs(column).max(initial=0.0) <= MAX_COEF):
            return None
        return column

    def _append_column(self, column: np.ndarray, shrink: float) -> None:
        """Shrink the operator's columns by ``shrink`` (lazily), then append ``column``."""
        size = self.theta_size
        self.theta_scale = _shrink_lazily(self.theta[:size], self.theta_scale, shrink)
        if size + column.size > self.theta.shape[0]:      # amortised doubling
            self.theta = _resized(self.theta, max(size + column.size, 2 * self.theta.shape[0]))
        self.theta[size:size + column.size] = column.ravel() / self.theta_scale
        self.theta_size = size + column.size

    # -- the posterior variance ---------------------------------------------------------------
    def variance(self, X: np.ndarray) -> np.ndarray:
        """k(x, x) - k*^T (K + noise I)^-1 k* as estimated, for every row of X (k(x, x) = 1 for
        every kernel here); the estimate may leave [0, 1], where the true variance lies."""
        if self.operator:
            n = self.n_blocks
            explained = _core().operator_diagonal(
                X, *self._kernel_args(), self.streams[:n], self._second_streams(),
                self.indices[:n], self.theta[:self.theta_size], self.theta_scale, self.r,
                self.config.get("dtype") == "float32")
        elif self.points is None or not np.array_equal(X, self.points):
            raise ValueError("return_std=True needs variance='operator', or X equal to the "
                             "test_points the variance was learnt for")
        else:
            explained = np.diag(self.decision(X)[:, 1:])
        return 1.0 - explained

    # -- state --------------------------------------------------------------------------------
    def get_state(self) -> dict:
        return {**super().get_state(),
                "gp.theta": self.theta[:self.theta_size].copy(),
                "gp.reals": np.array([np.nan if self.nu is None else self.nu,
                                      self.theta_scale])}

    def check_state(self, state: dict) -> None:
        super().check_state(state)
        if state["gp.reals"].shape != (2,):
            raise ValueError("state entry 'gp.reals' must hold nu and the operator's scale")
        nu, scale = state["gp.reals"]
        noise = self.config["noise"]
        if not 0.0 <= nu <= noise or (self.config["nu"] is not None and nu != self.config["nu"]):
            raise ValueError(f"state entry 'gp.reals': nu must be noise / n_samples, in [0, "
                             f"{noise}], got {nu}")
        if not (math.isfinite(scale) and RENORMALISE_BELOW <= abs(scale) <= 1.0):
            raise ValueError(f"state entry 'gp.reals': the operator's scale must be finite, "
                             f"with magnitude in [{RENORMALISE_BELOW:g}, 1], got {scale}")
        n = state["dsg.streams"].shape[0]
        theta = state["gp.theta"]
        size = self.r * self.r * (n * (n + 1) // 2) if self.operator else 0
        if theta.shape != (size,):
            raise ValueError(f"state entry 'gp.theta' must hold {size} values (r^2 n (n + 1) / 2 "
                             f"for n = {n} blocks with variance='operator', else none)")
        if not (np.isfinite(theta).all() and np.abs(theta).max(initial=0.0)
                <= MAX_COEF / RENORMALISE_BELOW):
            raise ValueError("state entry 'gp.theta' must hold finite values")

    def set_state(self, state: dict) -> None:
        super().set_state(state)
        self.theta = state["gp.theta"].copy()
        self.theta_size = self.theta.shape[0]
        nu, self.theta_scale = (float(v) for v in state["gp.reals"])
        self.nu = nu


def _precondition(Z: np.ndarray, step: np.ndarray) -> np.ndarray:
    """(Z^T Z / B + 1e-7 I)^-1 step: with a step of 1 the new block is the least-squares fit of
    the negative gradient (the paper's remark on the empirical covariance, the authors' ``solvePD``)."""
    P = Z.T @ Z / Z.shape[0]
    P[np.diag_indices_from(P)] += 1e-7
    try:
        return np.linalg.solve(P, step)
    except np.linalg.LinAlgError:
        return np.full_like(step, np.nan)       # refused as non-finite by the caller


def _shrink_lazily(values: np.ndarray, scale: float, shrink: float) -> float:
    """The scale of `values` (true values = scale * values) after multiplying them by `shrink`:
    the factor goes into the scale, folded into `values` in place only when the scale would
    underflow.  shrink = 0 (gamma nu = 1 exactly) wipes the past out (Lemma 8)."""
    if shrink == 0.0:
        values[:] = 0.0
        return 1.0
    scale *= shrink
    if abs(scale) < RENORMALISE_BELOW:
        values *= scale
        return 1.0
    return scale


def _resized(a: np.ndarray, rows: int) -> np.ndarray:
    out = np.zeros((rows,) + a.shape[1:], dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


class _DoublySGD:
    """Parameters, checks and the engine shared by the DSG estimators."""

    _losses: dict = {}
    _default_loss = ""

    def _check_params(self) -> dict:
        config = {
            "loss": check_choice(self.loss, "loss", tuple(self._losses)),
            "kernel": check_choice(self.kernel, "kernel", KERNELS),
            "bandwidth_scale": check_float(self.bandwidth_scale, "bandwidth_scale", 0.0,
                                           strict=True),
            "nu": check_float(getattr(self, "nu", 0.0), "nu", 0.0),
            "batch_size": check_int(self.batch_size, "batch_size", 1, 1 << 20),
            "block_size": check_int(self.block_size, "block_size", 1, 1 << 16),
            "learning_rate": check_choice(self.learning_rate, "learning_rate", SCHEDULES),
            "eta0": check_float(self.eta0, "eta0", 0.0, strict=True),
            "eta1": check_float(self.eta1, "eta1", 0.0),
            "epsilon": check_float(getattr(self, "epsilon", 0.0), "epsilon", 0.0),
            "stream": check_int(getattr(self, "stream", 0), "stream", 0, MAX_STREAM - 1),
            "n_jobs": check_int(getattr(self, "n_jobs", 1), "n_jobs", 1, 256),
            "dtype": check_choice(self.dtype, "dtype", ("float64", "float32")),
        }
        limit = getattr(self, "n_features_max", None)
        config["n_features_max"] = None if limit is None else check_int(
            limit, "n_features_max", 1, 1 << 40)
        average = getattr(self, "average", False)
        if not isinstance(average, (bool, np.bool_)):
            raise ValueError(f"average must be True or False, got {average!r}")
        config["average"] = bool(average)
        precondition = getattr(self, "precondition", False)
        if not isinstance(precondition, (bool, np.bool_)):
            raise ValueError(f"precondition must be True or False, got {precondition!r}")
        config["precondition"] = bool(precondition)
        if self.matern_nu not in MATERN_NUS or isinstance(self.matern_nu, bool):
            raise ValueError(f"matern_nu must be one of {MATERN_NUS}, got {self.matern_nu!r}")
        config["matern_nu"] = float(self.matern_nu)
        config["quantile"] = check_float(getattr(self, "quantile", 0.5), "quantile", 0.0,
                                         strict=True)
        if not config["quantile"] < 1.0:
            raise ValueError(f"quantile must be in (0, 1), got {config['quantile']}")
        if isinstance(self.bandwidth, str):
            check_choice(self.bandwidth, "bandwidth", ("median",))
            config["bandwidth"] = None
        else:
            config["bandwidth"] = check_float(self.bandwidth, "bandwidth", MIN_BANDWIDTH)
        if self.random_state is None:
            config["seed"] = None
        else:
            config["seed"] = check_int(self.random_state, "random_state", 0, (1 << 63) - 1)
        return config

    def _random_streams(self, config: dict):
        return None, None

    def _new_engine(self, config: dict, n_features: int) -> _DSGEngine:
        return _DSGEngine(config, n_features)

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        if config["seed"] is None:       # a fresh seed, kept in the state so features replay
            seed = np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1)
            config = {**config, "seed": int(seed)}
        return self._new_engine(config, n_features)

    def _restore_engine(self, n_features, arrays, rng_state):
        self._engine = None
        config = self._check_all_params()
        counts = arrays.get("dsg.counts")
        if config["seed"] is None and isinstance(counts, np.ndarray) and counts.shape == (6,) \
                and counts.dtype == np.int64:
            config["seed"] = int(counts[4])
        if config["seed"] is None or config["seed"] < 0:
            raise ValueError("state entry 'dsg.counts' must hold the model's seed")
        engine = self._new_engine(config, n_features)
        engine.set_state(arrays)
        self._engine = engine
        self.n_features_in_ = n_features

    @property
    def n_features_(self) -> int:
        """The number of random features the model holds: ``block_size`` per block."""
        engine = self._fitted_engine()
        return engine.n_blocks * engine.r

    @property
    def bandwidth_(self) -> float:
        """The bandwidth in use (the median trick's value for ``bandwidth="median"``)."""
        return self._fitted_engine().bandwidth


_PARAMETERS_DOC = """
    kernel : {"gaussian", "laplacian", "cauchy", "matern"}, default "gaussian"
    bandwidth : float or "median", default "median"
        The kernel's sigma; ``"median"`` sets it from the first learning call's rows (the median
        distance between them, see ``median_bandwidth``) times ``bandwidth_scale``.
    bandwidth_scale : float, default 1
        The paper uses 0.1, 1 or 4.
    matern_nu : {0.5, 1.5, 2.5}, default 1.5
        The smoothness of the Matern kernel.
    nu : float, default 1e-6
        The regulariser nu of (nu/2) ||f||^2.
    batch_size : int, default 32
        Samples per iteration (B).
    block_size : int, default 64
        Random features added per iteration (r).
    learning_rate : {"inverse", "theory", "constant"}, default "inverse"
        gamma_t = eta0 / (1 + eta1 t) (the authors' code), eta0 / t (the paper's theta / t,
        theta = eta0: its theory needs theta nu in (1, 2) or a whole number) or eta0.
    eta0 : float, default 1
        With features normalised per block (||z(x)||^2 about k(x, x) = 1), a step of 1 fits a
        batch's residual without overshooting, whatever the units of x and y.
    eta1 : float, default 1e-4
    average : bool, default False
        Predict with the average of the iterates (the paper's Corollaries 11 and 13).
    n_features_max : int or None, default None
        Stop adding blocks once the model holds this many features (the paper's "as many random
        features as the memory allowed"); later iterations only shrink the old blocks.
    precondition : bool, default False
        Multiply each new block's step by the inverse of its features' batch covariance
        (Z^T Z / B + 1e-7 I), as the authors' code does; the paper's plain step by default.
    random_state : int or None, default 0
        The seed of the random features (with ``stream``, it fixes every block).
    stream : int, default 0
        Models with the same seed and different streams draw disjoint blocks (see ``merge``).
    n_jobs : int, default 1
        Threads for prediction; the result is the same to the bit for any value.
    dtype : {"float64", "float32"}, default "float64"
        The precision of the random features: "float32" projects and takes the cosines in single
        precision (about twice the throughput; features within about 1e-6 of the float64 ones),
        while coefficients, predictions and every sum stay float64.
"""


class DoublySGDRegressor(_DoublySGD, OnlineEstimator):
    __doc__ = """Kernel regression by doubly stochastic functional gradients (Dai et al., 2014).

    Each learning call processes its rows in mini-batches of ``batch_size`` (the last may be
    smaller; ``learn_one`` is an iteration on one sample): predict the batch with the current
    model, then add a block of ``block_size`` new random features fitted by one gradient step and
    shrink the old ones.  Prediction regenerates every block from the seed, so the model stores
    only its coefficients.

    The paper's settings are one argument away: ``learning_rate="theory", eta0=theta`` for
    gamma_t = theta / t, ``batch_size=1, block_size=1`` for Algorithm 1, ``nu`` and
    ``bandwidth_scale`` per data set (its section 5).

    Parameters
    ----------
    loss : {"squared", "huber", "epsilon_insensitive", "absolute", "quantile"}, default "squared"
        Squared: kernel ridge regression; huber (threshold ``epsilon``); epsilon-insensitive
        (SVR); absolute (least absolute deviations); quantile (level ``quantile``).
    epsilon : float, default 1
        The Huber threshold, or the width of the epsilon-insensitive tube.
    quantile : float, default 0.5
        The level tau in (0, 1) of the quantile loss.""" + _PARAMETERS_DOC + """
    Attributes
    ----------
    n_features_ : int
        Random features held (``block_size`` per iteration).
    bandwidth_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import DoublySGDRegressor
    >>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2))
    >>> model = DoublySGDRegressor(random_state=0).fit(X, np.sin(3 * X[:, 0]))
    >>> model.n_features_
    832
    """

    _losses = REGRESSION_LOSSES

    def __init__(self, loss="squared", *, epsilon=1.0, quantile=0.5, kernel="gaussian",
                 bandwidth="median", bandwidth_scale=1.0, matern_nu=1.5, nu=1e-6, batch_size=32,
                 block_size=64, learning_rate="inverse", eta0=1.0, eta1=1e-4, average=False,
                 precondition=False, n_features_max=None, random_state=0, stream=0, n_jobs=1,
                 dtype="float64"):
        self.loss = loss
        self.epsilon = epsilon
        self.quantile = quantile
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.bandwidth_scale = bandwidth_scale
        self.matern_nu = matern_nu
        self.nu = nu
        self.batch_size = batch_size
        self.block_size = block_size
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.eta1 = eta1
        self.average = average
        self.precondition = precondition
        self.n_features_max = n_features_max
        self.random_state = random_state
        self.stream = stream
        self.n_jobs = n_jobs
        self.dtype = dtype


class DoublySGDClassifier(_DoublySGD, BinaryClassifier):
    __doc__ = """Binary kernel classification by doubly stochastic functional gradients.

    Labels map to -1/+1 (see ``BinaryClassifier``); the learning loop is ``DoublySGDRegressor``'s
    with a classification loss.  ``predict_proba`` needs ``loss="logistic"``.

    Parameters
    ----------
    loss : {"hinge", "squared_hinge", "logistic"}, default "hinge"
        The kernel SVM, the L2-SVM or kernel logistic regression.""" + _PARAMETERS_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import DoublySGDClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (1000, 2))
    >>> model = DoublySGDClassifier(random_state=0).partial_fit(X, X[:, 0] * X[:, 1] > 0)
    >>> model.score(X, X[:, 0] * X[:, 1] > 0) > 0.9
    True
    """

    _losses = CLASSIFICATION_LOSSES

    def __init__(self, loss="hinge", *, kernel="gaussian", bandwidth="median",
                 bandwidth_scale=1.0, matern_nu=1.5, nu=1e-6, batch_size=32, block_size=64,
                 learning_rate="inverse", eta0=1.0, eta1=1e-4, average=False, precondition=False,
                 n_features_max=None, random_state=0, stream=0, n_jobs=1,
                 dtype="float64"):
        self.loss = loss
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.bandwidth_scale = bandwidth_scale
        self.matern_nu = matern_nu
        self.nu = nu
        self.batch_size = batch_size
        self.block_size = block_size
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.eta1 = eta1
        self.average = average
        self.precondition = precondition
        self.n_features_max = n_features_max
        self.random_state = random_state
        self.stream = stream
        self.n_jobs = n_jobs
        self.dtype = dtype

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities (columns in ``classes_`` order), for ``loss="logistic"``.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, 2)

        Raises
        ------
        ValueError
            For another loss, or bad input.

        Examples
        --------
        >>> import numpy as np
        >>> from fastomkl import DoublySGDClassifier
        >>> X = np.random.default_rng(0).uniform(-1, 1, (100, 2))
        >>> model = DoublySGDClassifier("logistic").fit(X, X[:, 0] > 0)
        >>> np.allclose(model.predict_proba(X).sum(1), 1.0)
        True
        """
        if self.loss != "logistic":
            raise ValueError(f"predict_proba needs loss='logistic', not {self.loss!r}")
        score = self._scores(X)
        positive = np.where(score >= 0, 1.0 / (1.0 + np.exp(-np.abs(score))),
                            np.exp(-np.abs(score)) / (1.0 + np.exp(-np.abs(score))))
        return np.column_stack([1.0 - positive, positive])


class DoublySGDOneClass(_DoublySGD, OnlineEstimator):
    __doc__ = """Novelty detection by doubly stochastic gradients (the paper's section 4, after
    Schoelkopf et al.): min over f and tau of E[max(0, tau - f(x))] + (nu/2) ||f||^2 - nu tau.

    Each iteration adds ``gamma / B`` times the features of the batch rows with f(x) < tau, and
    moves tau by ``-gamma (fraction below tau - nu)``, from tau = 0.  ``nu`` is both the
    regulariser and (as in the nu-SVM) about the fraction of training rows left below tau.
    ``decision_function`` is f(x) - tau; ``predict`` is +1 (normal) or -1 (novel: f(x) < tau).
    Targets are not used: ``fit(X)``, ``partial_fit(X)``, ``learn_one(x)``.

    Parameters
    ----------""" + _PARAMETERS_DOC.replace("nu : float, default 1e-6",
                                            "nu : float, default 0.1") + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import DoublySGDOneClass
    >>> X = np.random.default_rng(0).normal(size=(1000, 2))
    >>> model = DoublySGDOneClass(random_state=0).fit(X)
    >>> model.predict([[0.0, 0.0], [6.0, 6.0]]).tolist()
    [1.0, -1.0]
    """

    _losses = {"one_class": None}

    _unsupervised = True      # learns from X alone: not a regressor (the command line's list)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "outlier_detector"
        tags.target_tags.required = False
        tags.regressor_tags = None
        return tags

    def __init__(self, *, kernel="gaussian", bandwidth="median", bandwidth_scale=1.0,
                 matern_nu=1.5, nu=0.1, batch_size=32, block_size=64, learning_rate="inverse",
                 eta0=1.0, eta1=1e-4, average=False, precondition=False,
                 n_features_max=None, random_state=0, stream=0, n_jobs=1,
                 dtype="float64"):
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.bandwidth_scale = bandwidth_scale
        self.matern_nu = matern_nu
        self.nu = nu
        self.batch_size = batch_size
        self.block_size = block_size
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.eta1 = eta1
        self.average = average
        self.precondition = precondition
        self.n_features_max = n_features_max
        self.random_state = random_state
        self.stream = stream
        self.n_jobs = n_jobs
        self.dtype = dtype

    loss = "one_class"

    def _known_code(self, y):
        return 0.0

    def _prepare_target(self, y):
        return 0.0, lambda: None

    def _encode_many(self, y, n_samples: int) -> np.ndarray:
        return np.zeros(n_samples)

    def _decode_one(self, score: float):
        return 1.0 if score >= 0 else -1.0

    def _decode_many(self, scores: np.ndarray) -> np.ndarray:
        return np.where(scores >= 0, 1.0, -1.0)

    def learn_one(self, x, y=None):
        """Learn one sample.

        Parameters
        ----------
        x : sequence of float, shape (n_features,), or dict
        y : ignored

        Returns
        -------
        self

        Examples
        --------
        >>> from fastomkl import DoublySGDOneClass
        >>> DoublySGDOneClass().learn_one([0.1, 0.2]).n_samples_seen_
        1
        """
        return super().learn_one(x, y)

    def predict_learn_one(self, x, y=None):
        """+1 (normal) or -1 (novel) for x, then learn x.

        Parameters
        ----------
        x : sequence of float, shape (n_features,), or dict
        y : ignored

        Returns
        -------
        float

        Examples
        --------
        >>> from fastomkl import DoublySGDOneClass
        >>> DoublySGDOneClass().predict_learn_one([0.1, 0.2])     # tau = 0 = f: normal
        1.0
        """
        return super().predict_learn_one(x, y)

    def predict_learn(self, X, y=None) -> np.ndarray:
        """Each row's +1 (normal) or -1 (novel) before learning it.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        ndarray, shape (n_samples,)

        Examples
        --------
        >>> from fastomkl import DoublySGDOneClass
        >>> DoublySGDOneClass().predict_learn([[0.0], [0.1]]).shape
        (2,)
        """
        return super().predict_learn(X, y)

    def partial_fit(self, X, y=None):
        """Continue learning from the rows of X.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self

        Examples
        --------
        >>> from fastomkl import DoublySGDOneClass
        >>> DoublySGDOneClass().partial_fit([[0.0], [0.1]]).n_samples_seen_
        2
        """
        return super().partial_fit(X, y)

    def fit(self, X, y=None):
        """Start afresh and learn the rows of X in one pass.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self

        Examples
        --------
        >>> from fastomkl import DoublySGDOneClass
        >>> DoublySGDOneClass().fit([[0.0], [0.1]]).n_samples_seen_
        2
        """
        return super().fit(X, y)

    def decision_function(self, X) -> np.ndarray:
        """f(x) - tau for every row of X: negative for novel rows.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples,)

        Examples
        --------
        >>> from fastomkl import DoublySGDOneClass
        >>> model = DoublySGDOneClass().fit([[0.0], [0.1], [0.2]])
        >>> bool(((model.decision_function([[0.0]]) >= 0) == (model.predict([[0.0]]) > 0)).all())
        True
        """
        return self._scores(X)

    def decision_function_one(self, x) -> float:
        """f(x) - tau for one sample.

        Parameters
        ----------
        x : sequence of float, shape (n_features,), or dict

        Returns
        -------
        float

        Examples
        --------
        >>> from fastomkl import DoublySGDOneClass
        >>> model = DoublySGDOneClass().fit([[0.0], [0.1], [0.2]])
        >>> bool(model.decision_function_one([0.0]) == model.decision_function([[0.0]])[0])
        True
        """
        engine = self._fitted_engine()
        if type(x) is dict:
            x = self._dict_values(x)
        return engine.predict_one(x)

    def score(self, X, y=None, sample_weight=None) -> float:
        """The (weighted) fraction of the rows of X predicted normal.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : ignored
        sample_weight : array-like, shape (n_samples,), default None

        Returns
        -------
        float

        Examples
        --------
        >>> from fastomkl import DoublySGDOneClass
        >>> 0.0 <= DoublySGDOneClass().fit([[0.0], [0.1]]).score([[0.0], [5.0]]) <= 1.0
        True
        """
        normal = self.predict(X) > 0
        return float(np.average(normal, weights=_sample_weight(sample_weight, normal.shape[0])))


class DoublySGDDensityRatio(_DoublySGD, BinaryClassifier):
    __doc__ = """The log density ratio log(p(x) / q(x)) by doubly stochastic gradients (the paper's
    section 4, after Nguyen, Wainwright and Jordan): min_f E_q[exp f] - E_p[f] + (nu/2) ||f||^2.

    Rows come labelled by their sample, two labels as for a binary classifier: p is the law of
    the rows of ``classes_[-1]`` (label 1 for 0/1 labels), q of the others.  The minimiser of the
    objective as written is log(p/q) (the paper's text says log q/p; this follows its
    objective).  The batch gradient is the paper's 2 (1[q] exp f - 1[p]) features, which assumes
    the two samples in equal numbers: with a proportion pi of p-rows, the estimate is
    log(pi p / ((1 - pi) q)).  ``log_ratio`` (= ``decision_function``) returns the estimate;
    ``predict`` the label of the more likely sample.

    Parameters
    ----------""" + _PARAMETERS_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import DoublySGDDensityRatio
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0.5, 1, (2000, 1)), rng.normal(-0.5, 1, (2000, 1))])
    >>> y = np.repeat([1.0, 0.0], 2000)
    >>> order = rng.permutation(4000)
    >>> model = DoublySGDDensityRatio(random_state=0).fit(X[order], y[order])
    >>> bool(model.log_ratio([[1.5]])[0] > 0 > model.log_ratio([[-1.5]])[0])
    True
    """

    _losses = {"kl": _kl_ratio}

    def __init__(self, *, kernel="gaussian", bandwidth="median", bandwidth_scale=1.0,
                 matern_nu=1.5, nu=1e-6, batch_size=32, block_size=64, learning_rate="inverse",
                 eta0=1.0, eta1=1e-4, average=False, precondition=False,
                 n_features_max=None, random_state=0, stream=0, n_jobs=1,
                 dtype="float64"):
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.bandwidth_scale = bandwidth_scale
        self.matern_nu = matern_nu
        self.nu = nu
        self.batch_size = batch_size
        self.block_size = block_size
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.eta1 = eta1
        self.average = average
        self.precondition = precondition
        self.n_features_max = n_features_max
        self.random_state = random_state
        self.stream = stream
        self.n_jobs = n_jobs
        self.dtype = dtype

    loss = "kl"

    def log_ratio(self, X) -> np.ndarray:
        """The estimate of log(p(x) / q(x)) for every row of X (``decision_function``).

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples,)

        Examples
        --------
        >>> from fastomkl import DoublySGDDensityRatio
        >>> model = DoublySGDDensityRatio().fit([[0.0], [1.0]], [0, 1])
        >>> model.log_ratio([[0.5]]).shape
        (1,)
        """
        return self._scores(X)


_SMALL_PARAMETERS_DOC = """
    kernel, bandwidth, bandwidth_scale, matern_nu, batch_size, block_size, learning_rate, eta0,
    eta1, random_state, dtype
        As for ``DoublySGDRegressor``."""


class DoublySGDGP(_DoublySGD, OnlineEstimator):
    __doc__ = """Gaussian-process regression by doubly stochastic gradients (the paper's section 4.10).

    The posterior mean k*^T (K + s^2 I)^-1 y is kernel ridge regression with the square loss and
    nu = s^2 / n (the paper writes 2 s^2, the minimiser of the summed, not the averaged, loss).
    The posterior variance k(x*, x*) - k*^T (K + s^2 I)^-1 k* comes from one of the paper's two
    methods, ``variance``:

    * ``"test_points"`` (method 2): for each test point x*_i known in advance (``test_points``),
      a ridge regression with targets k(x*_i, x_j), learnt beside the mean on the same blocks and
      batches; var(x*_i) = k(x*_i, x*_i) - g_i(x*_i).  O(t m) memory for m points.
    * ``"operator"`` (method 1): the operator A = C (C + nu I)^-1, C the covariance operator of
      k(x, .), learnt by its stochastic gradient (the paper's eq. 18) with two independent draws
      of random features, A = sum over s <= u of z_s(.)^T Theta_su z'_u(.); then
      var(x) = k(x, x) - A(x, x) at any x.  Each iteration appends a column of Theta, so memory
      is O((r t)^2) and an iteration costs O(B (r t)^2) (compiled): use small blocks and few
      iterations.  It is unbiased but noisy: against the closed form on 32 points (block 8,
      full batches, 200 iterations, ``bench/bench_dsg_gp_variance.py``) its variance is off by
      0.16 RMS with a constant step and 0.07 with a decaying one, method 2's by 0.009 in a
      sixth of the time, so method 2 stays the default where the points are known.

    Both variances are clipped to [0, k(x, x)], where the true one lies.

    ``fit(X, y)`` starts afresh and makes ``n_epochs`` passes over (X, y), each in a new order
    drawn from ``random_state``; ``partial_fit`` and the ``*_one`` methods continue on a stream,
    in order.  ``predict`` gives the posterior mean (and ``predict(X, return_std=True)`` its
    standard deviation), ``score`` the R^2 of the mean.

    Parameters
    ----------
    noise : float, default 0.1
        The noise variance s^2.
    variance : {"test_points", "operator"}, default "test_points"
        How the posterior variance is learnt (above).
    test_points : array-like of shape (m, n_features), optional
        The points x*_i of ``variance="test_points"``; without them only the mean is learnt.
    n_samples : int, optional
        The n of nu = s^2 / n: the size of the data set the posterior conditions on.  By default
        the number of rows of the first learning call (all of them in ``fit``).
    n_epochs : int, default 10
        Passes over the data in ``fit``.""" + _SMALL_PARAMETERS_DOC + """

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl.dsg import DoublySGDGP
    >>> X = np.linspace(-1, 1, 30)[:, None]
    >>> gp = DoublySGDGP(noise=0.3, bandwidth=0.5, test_points=X[:3])
    >>> mean, std = gp.fit(X, np.sin(3 * X[:, 0])).predict(X[:3], return_std=True)
    >>> std.shape
    (3,)

    The operator gives the variance anywhere, growing where the data end:

    >>> gp = DoublySGDGP(noise=0.3, bandwidth=0.5, variance="operator", block_size=8,
    ...                  batch_size=30, n_epochs=100).fit(X, np.sin(3 * X[:, 0]))
    >>> _, std = gp.predict([[0.0], [3.0]], return_std=True)
    >>> bool(std[0] < 0.5 < std[1])
    True
    """

    _losses = {"squared": _squared}
    loss = "squared"

    def __init__(self, noise=0.1, *, variance="test_points", test_points=None, n_samples=None,
                 n_epochs=10, kernel="gaussian", bandwidth="median", bandwidth_scale=1.0,
                 matern_nu=1.5, batch_size=32, block_size=64, learning_rate="inverse", eta0=1.0,
                 eta1=1e-4, random_state=0, dtype="float64"):
        self.noise = noise
        self.variance = variance
        self.test_points = test_points
        self.n_samples = n_samples
        self.n_epochs = n_epochs
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.bandwidth_scale = bandwidth_scale
        self.matern_nu = matern_nu
        self.batch_size = batch_size
        self.block_size = block_size
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.eta1 = eta1
        self.random_state = random_state
        self.dtype = dtype

    def _check_params(self) -> dict:
        config = super()._check_params()
        config["noise"] = check_float(self.noise, "noise", 0.0, strict=True)
        config["n_epochs"] = check_int(self.n_epochs, "n_epochs", 1, 1 << 20)
        n = None if self.n_samples is None else check_int(self.n_samples, "n_samples", 1)
        config["nu"] = None if n is None else config["noise"] / n
        config["variance"] = check_choice(self.variance, "variance", VARIANCES)
        points = None if self.test_points is None else check_matrix(self.test_points,
                                                                    name="test_points")
        if points is not None and points.shape[0] > MAX_TEST_POINTS:
            raise ValueError(f"test_points may hold at most {MAX_TEST_POINTS} points (one ridge "
                             f"regression each), got {points.shape[0]}")
        if points is not None and config["variance"] != "test_points":
            raise ValueError("test_points are for variance='test_points'; the operator gives "
                             "the variance at any point")
        config["test_points"] = points
        return config

    def _new_engine(self, config: dict, n_features: int) -> _GPEngine:
        return _GPEngine(config, n_features)

    def fit(self, X, y):
        """Start afresh and make ``n_epochs`` passes over (X, y), each in a new random order.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For bad input or parameters; the model is then left exactly as it was.

        Examples
        --------
        >>> import numpy as np
        >>> from fastomkl.dsg import DoublySGDGP
        >>> X = np.linspace(-1, 1, 20)[:, None]
        >>> DoublySGDGP(n_epochs=3).fit(X, X[:, 0]).n_samples_seen_
        60
        """
        X = check_matrix(X)
        y = check_targets(y, X.shape[0])
        config = self._check_all_params()
        order = np.random.default_rng(config["seed"])
        with _unchanged_on_error(self):
            self._reset()
            for _ in range(config["n_epochs"]):
                rows = order.permutation(X.shape[0])
                self.partial_fit(X[rows], y[rows])
        return self

    def predict(self, X, return_std=False):
        """The posterior mean at every row of X, and with ``return_std`` its standard deviation.

        Parameters
        ----------
        X : array-like, shape (m, n_features)
        return_std : bool, default False
            Also return the standard deviation: at any X with ``variance="operator"``; with
            ``variance="test_points"``, X must be the ``test_points``.

        Returns
        -------
        mean : ndarray, shape (m,)
        std : ndarray, shape (m,), if return_std

        Raises
        ------
        ValueError
            For bad input, or a standard deviation the model has not learnt.

        Examples
        --------
        >>> import numpy as np
        >>> from fastomkl.dsg import DoublySGDGP
        >>> X = np.linspace(-1, 1, 20)[:, None]
        >>> gp = DoublySGDGP(bandwidth=0.5, test_points=X[:2]).fit(X, X[:, 0])
        >>> [a.shape for a in gp.predict(X[:2], return_std=True)]
        [(2,), (2,)]
        """
        if not isinstance(return_std, (bool, np.bool_)):
            raise ValueError(f"return_std must be True or False, got {return_std!r}")
        mean = self._scores(X)
        if not return_std:
            return mean
        engine = self._fitted_engine()
        X = check_matrix(X, engine.n_features, owner=type(self).__name__)
        return mean, np.sqrt(np.clip(engine.variance(X), 0.0, 1.0))


class DoublySGDSoftmaxClassifier(_DoublySGD, MulticlassClassifier):
    __doc__ = """Multiclass kernel logistic regression by doubly stochastic gradients (the
    paper's 4.3b).

    One block of random features per iteration is shared by every class (alpha_t is r x C);
    the gradient is softmax(f(x)) - e_y.  Classes join as their labels arrive (see
    ``MulticlassClassifier``: a new class's scores start at 0), or all at once with
    ``partial_fit(X, y, classes=...)``.  ``decision_function`` gives one column per class of
    ``classes_``, ``predict_proba`` their softmax.

    Parameters
    ----------""" + _PARAMETERS_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl.dsg import DoublySGDSoftmaxClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (2000, 2))
    >>> y = np.digitize(X[:, 0], [-0.3, 0.3])               # three bands
    >>> DoublySGDSoftmaxClassifier().fit(X, y).score(X, y) > 0.9
    True
    """

    _losses = {"softmax": _softmax}
    loss = "softmax"

    def __init__(self, *, kernel="gaussian", bandwidth="median", bandwidth_scale=1.0,
                 matern_nu=1.5, nu=1e-6, batch_size=32, block_size=64, learning_rate="inverse",
                 eta0=1.0, eta1=1e-4, average=False, precondition=False, n_features_max=None,
                 random_state=0, stream=0, n_jobs=1, dtype="float64"):
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.bandwidth_scale = bandwidth_scale
        self.matern_nu = matern_nu
        self.nu = nu
        self.batch_size = batch_size
        self.block_size = block_size
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.eta1 = eta1
        self.average = average
        self.precondition = precondition
        self.n_features_max = n_features_max
        self.random_state = random_state
        self.stream = stream
        self.n_jobs = n_jobs
        self.dtype = dtype

    def _new_engine(self, config: dict, n_features: int) -> _SoftmaxEngine:
        return _SoftmaxEngine({**config, "n_outputs": len(getattr(self, "classes_", ()))},
                              n_features)

    def decision_function(self, X) -> np.ndarray:
        """f(X), one column per class of ``classes_``.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, n_classes)

        Examples
        --------
        >>> from fastomkl.dsg import DoublySGDSoftmaxClassifier
        >>> model = DoublySGDSoftmaxClassifier().fit([[0.0], [0.5], [1.0]], ["a", "b", "c"])
        >>> model.decision_function([[0.2]]).shape
        (1, 3)
        """
        engine = self._fitted_engine()
        return engine.decision(check_matrix(X, engine.n_features, owner=type(self).__name__))

    def decision_function_one(self, x) -> np.ndarray:
        """f(x) of one sample, one value per class of ``classes_``.

        Parameters
        ----------
        x : sequence of float, shape (n_features,), or dict

        Returns
        -------
        ndarray, shape (n_classes,)

        Examples
        --------
        >>> from fastomkl.dsg import DoublySGDSoftmaxClassifier
        >>> model = DoublySGDSoftmaxClassifier().fit([[0.0], [0.5], [1.0]], ["a", "b", "c"])
        >>> bool((model.decision_function_one([0.2]) == model.decision_function([[0.2]])[0]).all())
        True
        """
        engine = self._fitted_engine()
        if type(x) is dict:
            x = self._dict_values(x)
        return engine.decision(check_sample(x, engine.n_features)[None, :])[0]

    def predict_proba(self, X) -> np.ndarray:
        """softmax(f(X)): the probability of every class of ``classes_``.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, n_classes)

        Examples
        --------
        >>> import numpy as np
        >>> from fastomkl.dsg import DoublySGDSoftmaxClassifier
        >>> model = DoublySGDSoftmaxClassifier().fit([[0.0], [0.5], [1.0]], ["a", "b", "c"])
        >>> bool(np.allclose(model.predict_proba([[0.2], [0.9]]).sum(1), 1.0))
        True
        """
        F = self.decision_function(X)
        P = np.exp(F - F.max(axis=1, keepdims=True))
        return P / P.sum(axis=1, keepdims=True)


class NORMA:
    """NORMA (Kivinen, Smola and Williamson, 2004): DSG with the exact kernel (a baseline, oracle).

    f <- (1 - gamma_t nu) f - gamma_t / B sum_b l'(f(x_b), y_b) k(x_b, .), on mini-batches of
    ``batch_size`` rows, with DSG's step sizes and losses; the model keeps every row it learnt
    (O(t d) memory, O(t d) per prediction), where DSG keeps r coefficients per iteration and
    regenerates its features.  As ``block_size`` grows, DSG's iterates approach NORMA's.

    Parameters
    ----------
    kernel : fastomkl.kernels.Kernel
        The exact kernel (e.g. ``Gaussian(sigma)``).
    loss : str, default "squared"
        A loss of ``DoublySGDRegressor`` or ``DoublySGDClassifier`` (labels -1/+1).
    nu, batch_size, learning_rate, eta0, eta1, epsilon, quantile
        As for ``DoublySGDRegressor``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian
    >>> from fastomkl.dsg import NORMA
    >>> X = np.random.default_rng(0).uniform(-1, 1, (64, 2))
    >>> NORMA(Gaussian(1.0)).partial_fit(X, X[:, 0]).predict(X[:2]).shape
    (2,)
    """

    def __init__(self, kernel, loss="squared", *, nu=1e-6, batch_size=32, learning_rate="inverse",
                 eta0=1.0, eta1=1e-4, epsilon=1.0, quantile=0.5):
        check_choice(loss, "loss", tuple(LOSSES))
        check_choice(learning_rate, "learning_rate", SCHEDULES)
        self.kernel, self.loss, self.nu, self.batch_size = kernel, loss, nu, batch_size
        self.learning_rate, self.eta0, self.eta1 = learning_rate, eta0, eta1
        self.params = {"epsilon": epsilon, "quantile": quantile}
        self.support = None
        self.coef = np.zeros(0)
        self.iterations = 0

    def decision_function(self, X) -> np.ndarray:
        """f(X) with the exact kernel.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples,)
        """
        X = check_matrix(X)
        if self.support is None:
            return np.zeros(X.shape[0])
        return self.kernel.gram(X, self.support) @ self.coef

    predict = decision_function

    def partial_fit(self, X, y):
        """Learn (X, y) in mini-batches of ``batch_size`` rows, in order.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)

        Returns
        -------
        self
        """
        X = check_matrix(X)
        y = check_targets(y, X.shape[0])
        for start in range(0, X.shape[0], self.batch_size):
            rows, targets = X[start:start + self.batch_size], y[start:start + self.batch_size]
            g = LOSSES[self.loss](self.decision_function(rows)[:, None], targets, self.params)
            self.iterations += 1
            gamma = step_size(self.learning_rate, self.iterations, self.eta0, self.eta1, self.nu)
            self.coef = np.concatenate([self.coef * (1.0 - gamma * self.nu),
                                        -gamma / rows.shape[0] * g[:, 0]])
            self.support = rows.copy() if self.support is None else np.vstack([self.support,
                                                                                rows])
        return self


def merge(models, base=None):
    """One model whose prediction is the average of the predictions of ``models`` (data-parallel
    DSG): ``merge([m_1, ..., m_W]).predict(X) == mean_w m_w.predict(X)`` up to rounding.

    The models must be of one class with the same parameters except ``stream`` (so the same
    seed: pass ``random_state`` explicitly), have learnt from inputs of the same width with the
    same bandwidth (give ``bandwidth`` as a number, e.g. ``median_bandwidth`` of a shared sample,
    since ``"median"`` reads each model's own data), and draw disjoint blocks (distinct
    ``stream`` values).  Classifiers must share ``classes_``.  The result holds every block,
    each model's coefficients divided by W; it keeps learning on ``models[0]``'s stream, after
    its blocks, with the largest iteration count of the models (so its step size continues).

    Periodic averaging: models that all continued from one merged model (``base``, each through
    ``on_stream(base, w)``) share its blocks; a shared block's coefficient in the result is the
    sum of the models' coefficients divided by W, like any other, so the result is still exactly
    the average of the models, and ``base``'s samples are counted once in ``n_samples_seen_``.

    Parameters
    ----------
    models : sequence of fitted DoublySGDRegressor or DoublySGDClassifier
    base : the model they all continued from, or None (their blocks must then be disjoint)

    Returns
    -------
    a new model of the same class (the inputs are unchanged)

    Raises
    ------
    ValueError
        If the models differ in anything but ``stream``, share a block that is not ``base``'s,
        or one has not learnt.

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl.dsg import DoublySGDRegressor, merge
    >>> X = np.random.default_rng(0).uniform(-1, 1, (200, 2))
    >>> parts = [DoublySGDRegressor(bandwidth=1.0, stream=w).fit(X[w::2], X[w::2, 0])
    ...          for w in range(2)]
    >>> both = merge(parts)
    >>> bool(np.allclose(both.predict(X), (parts[0].predict(X) + parts[1].predict(X)) / 2))
    True
    """
    models = list(models)
    if not models:
        raise ValueError("merge needs at least one model")
    first = models[0]
    if not isinstance(first, _DoublySGD) or isinstance(first, DoublySGDGP):
        raise ValueError(f"merge takes DSG models other than the GP, got {type(first).__name__}")
    params = {k: v for k, v in first.get_params().items() if k != "stream"}
    engines = []
    for model in models:
        if type(model) is not type(first) or \
                {k: v for k, v in model.get_params().items() if k != "stream"} != params:
            raise ValueError("merge needs models of one class with the same parameters "
                             "(except stream)")
        engines.append(model._fitted_engine())
    head = engines[0]
    for engine in engines:
        if (engine.seed, engine.n_features, engine.bandwidth) != \
                (head.seed, head.n_features, head.bandwidth):
            raise ValueError("merge needs models with the same seed, input width and bandwidth")
    if hasattr(first, "classes_") and any(
            not np.array_equal(getattr(m, "classes_", None), first.classes_) for m in models):
        raise ValueError("merge needs classifiers with the same classes_")
    W = len(models)
    merged = type(first)(**first.get_params())
    engine = type(head)({**head.config, "n_outputs": head.C}, head.n_features)
    engine.bandwidth = head.bandwidth
    shared, base_t = set(), 0
    if base is not None:
        start = base._fitted_engine()
        shared = set(zip(start.streams[:start.n_blocks].tolist(),
                         start.indices[:start.n_blocks].tolist()))
        base_t = start.t
        if any(e.t < base_t for e in engines):
            raise ValueError("merge: a model has seen fewer samples than base")
    coef, avg = {}, {}                          # block key -> summed rows, in first-seen order
    for e in engines:
        for b, key in enumerate(zip(e.streams[:e.n_blocks].tolist(),
                                    e.indices[:e.n_blocks].tolist())):
            rows = slice(b * e.r, (b + 1) * e.r)
            if key in coef:
                if key not in shared:
                    raise ValueError("merge needs models that draw disjoint blocks: give each "
                                     "its own stream")
                coef[key] = coef[key] + e.coef[rows] * (e.scale / W)
                avg[key] = avg[key] + e.avg[rows] / W
            else:
                coef[key], avg[key] = e.coef[rows] * (e.scale / W), e.avg[rows] / W
    keys = list(coef)
    engine.coef = np.concatenate([coef[k] for k in keys])
    engine.avg = np.concatenate([avg[k] for k in keys]) if head.config["average"] \
        else np.zeros_like(engine.coef)
    engine.streams = np.array([k[0] for k in keys], dtype=np.int64)
    engine.indices = np.array([k[1] for k in keys], dtype=np.int64)
    engine.n_blocks = len(keys)
    engine.t = base_t + sum(e.t - base_t for e in engines)
    engine.iterations = max(max(e.iterations for e in engines), engine.n_blocks)
    engine.next_index = max(e.next_index for e in engines)
    merged._engine = engine
    merged.n_features_in_ = head.n_features
    for name in ("_codes", "classes_", "_feature_names"):
        if name in first.__dict__:
            setattr(merged, name, first.__dict__[name])
    return merged


def on_stream(model, stream: int):
    """A copy of the fitted DSG ``model`` that continues learning on ``stream``: its next blocks
    are drawn from (seed, stream, i) for indices after every block it holds, so copies on
    distinct streams draw disjoint new blocks (periodic averaging: train the copies on their
    shards, then ``merge(copies, base=model)``).

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl.dsg import DoublySGDRegressor, merge, on_stream
    >>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2))
    >>> start = merge([DoublySGDRegressor(bandwidth=1.0, stream=w).fit(X[w:200:2], X[w:200:2, 0])
    ...                for w in range(2)])
    >>> parts = [on_stream(start, w).partial_fit(X[200 + w::2], X[200 + w::2, 0]) for w in range(2)]
    >>> both = merge(parts, base=start)
    >>> bool(np.allclose(both.predict(X), (parts[0].predict(X) + parts[1].predict(X)) / 2))
    True
    """
    if not isinstance(model, _DoublySGD) or isinstance(model, DoublySGDGP):
        raise ValueError(f"on_stream takes a DSG model other than the GP, got "
                         f"{type(model).__name__}")
    stream = check_int(stream, "stream", 0, (1 << 62))
    engine = model._fitted_engine()
    out = copy.deepcopy(model)
    out.__dict__["stream"] = stream
    moved = out._engine
    moved.stream = stream
    moved.config["stream"] = stream
    held = engine.indices[:engine.n_blocks]
    moved.next_index = max(engine.next_index, int(held.max()) + 1 if held.size else 0)
    return out
