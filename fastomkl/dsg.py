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

import math
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from fastomkl._base import BinaryClassifier, OnlineEstimator, _sample_weight
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


def _core():
    from fastomkl._core import dsg
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

    def predict_one(self, x) -> float:
        x = check_sample(x, self.n_features)
        return float(self.decision(x[None, :])[0, 0]) - self.offset

    def predict_many(self, X: np.ndarray, out: np.ndarray) -> None:
        out[:] = self.decision(X)[:, 0] - self.offset

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
            out[start:start + rows.shape[0]] = (self.decision(rows) if self.config["average"]
                                                else F)[:, 0] - self.offset
            self.learn_batch(rows, targets, F)
        if self.n_rejected_updates > rejected:
            warnings.warn(f"{self.n_rejected_updates - rejected} update(s) refused: they would "
                          f"have made the model's coefficients non-finite", NumericalWarning,
                          stacklevel=4)

    def learn_batch(self, X: np.ndarray, y: np.ndarray, F: np.ndarray) -> None:
        """One DSG iteration on the batch (X, y), given its predictions F = f_t(X)."""
        c = self.config
        t = self.iterations + 1
        gamma = step_size(c["learning_rate"], t, c["eta0"], c["eta1"], c["nu"])
        offset = self.offset
        with np.errstate(all="ignore"):
            if c["loss"] == "one_class":     # l(u, tau) = max(0, tau - u), and -nu tau
                below = F < offset
                G = np.where(below, -1.0, 0.0)
                offset = offset - gamma * (below.mean() - c["nu"])
            else:
                G = LOSSES[c["loss"]](F, y, c)
            W, b = _core().generate_block(*self._kernel_args(), self.stream, self.next_index,
                                          self.n_features, self.r)
            Z = _core().features(X, W, b, c.get("dtype") == "float32")
            alpha = (-gamma / X.shape[0]) * (Z.T @ G)
            if c["precondition"]:           # the authors' code: solve with the batch covariance
                alpha = _precondition(Z, alpha)
        shrink = 1.0 - gamma * c["nu"]
        full = c.get("n_features_max") is not None and \
            (self.n_blocks + 1) * self.r > c["n_features_max"]
        if full:                    # the paper's memory bound reached: old blocks only shrink
            alpha = alpha[:0]
        if not (np.isfinite(F).all() and np.isfinite(alpha).all()
                and np.abs(alpha).max(initial=0.0) <= MAX_COEF and math.isfinite(shrink)
                and abs(offset) <= MAX_COEF):
            self.n_rejected_updates += 1
            return
        self._append(alpha, shrink, t)
        self.offset = offset
        self.t += X.shape[0]

    def _append(self, alpha: np.ndarray, shrink: float, t: int) -> None:
        """Shrink every stored block by ``shrink`` (lazily), then store ``alpha`` as a new block."""
        n = self.n_blocks * self.r
        if shrink == 0.0:           # gamma nu = 1 exactly: the past is wiped out (Lemma 8)
            self.coef[:n] = 0.0
            self.scale = 1.0
        else:
            self.scale *= shrink
            if abs(self.scale) < RENORMALISE_BELOW:
                self.coef[:n] *= self.scale
                self.scale = 1.0
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
        if (streams < 0).any() or (indices < 0).any():
            raise ValueError("state entries 'dsg.streams' and 'dsg.indices' must be non-negative")
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


def _precondition(Z: np.ndarray, step: np.ndarray) -> np.ndarray:
    """(Z^T Z / B + 1e-7 I)^-1 step: with a step of 1 the new block is the least-squares fit of
    the negative gradient (the paper's remark on the empirical covariance, the authors' ``solvePD``)."""
    P = Z.T @ Z / Z.shape[0]
    P[np.diag_indices_from(P)] += 1e-7
    try:
        return np.linalg.solve(P, step)
    except np.linalg.LinAlgError:
        return np.full_like(step, np.nan)       # refused as non-finite by the caller


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
            "nu": check_float(self.nu, "nu", 0.0),
            "batch_size": check_int(self.batch_size, "batch_size", 1, 1 << 20),
            "block_size": check_int(self.block_size, "block_size", 1, 1 << 16),
            "learning_rate": check_choice(self.learning_rate, "learning_rate", SCHEDULES),
            "eta0": check_float(self.eta0, "eta0", 0.0, strict=True),
            "eta1": check_float(self.eta1, "eta1", 0.0),
            "epsilon": check_float(getattr(self, "epsilon", 0.0), "epsilon", 0.0),
            "stream": check_int(self.stream, "stream", 0, (1 << 62)),
            "n_jobs": check_int(self.n_jobs, "n_jobs", 1, 256),
            "dtype": check_choice(self.dtype, "dtype", ("float64", "float32")),
        }
        limit = getattr(self, "n_features_max", None)
        config["n_features_max"] = None if limit is None else check_int(
            limit, "n_features_max", 1, 1 << 40)
        if not isinstance(self.average, (bool, np.bool_)):
            raise ValueError(f"average must be True or False, got {self.average!r}")
        config["average"] = bool(self.average)
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

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        if config["seed"] is None:       # a fresh seed, kept in the state so features replay
            seed = np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1)
            config = {**config, "seed": int(seed)}
        return _DSGEngine(config, n_features)

    def _restore_engine(self, n_features, arrays, rng_state):
        self._engine = None
        config = self._check_all_params()
        counts = arrays.get("dsg.counts")
        if config["seed"] is None and isinstance(counts, np.ndarray) and counts.shape == (6,) \
                and counts.dtype == np.int64:
            config["seed"] = int(counts[4])
        if config["seed"] is None or config["seed"] < 0:
            raise ValueError("state entry 'dsg.counts' must hold the model's seed")
        engine = _DSGEngine(config, n_features)
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
    >>> model = DoublySGDClassifier(random_state=0).fit(X, X[:, 0] * X[:, 1] > 0)
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


class DoublySGDGP:
    """Gaussian-process regression by doubly stochastic gradients (the paper's section 4.10).

    The posterior mean k*^T (K + s^2 I)^-1 y is kernel ridge regression with the square loss and
    nu = s^2 / n (the paper writes 2 s^2, which is the minimiser of the summed, not averaged,
    loss, not the paper's averaged form).  The posterior variance at test points known in advance
    (method 2) solves one such ridge problem per test point x*_i with targets k(x*_i, x_j),
    all m of them on the same features and batches (O(t m) memory):
    var(x*_i) = k(x*_i, x*_i) - g_i(x*_i).

    Parameters
    ----------
    noise : float, default 0.1
        The noise variance s^2.
    n_epochs : int, default 10
        Passes over the data, reshuffled each time (seeded by ``random_state``).
    kernel, bandwidth, bandwidth_scale, matern_nu, batch_size, block_size, learning_rate, eta0,
    eta1, random_state, dtype
        As for ``DoublySGDRegressor`` (the exact kernel of the variance targets is the kernel
        the features estimate).

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl.dsg import DoublySGDGP
    >>> X = np.linspace(-1, 1, 30)[:, None]
    >>> gp = DoublySGDGP(noise=0.3, bandwidth=0.5).fit(X, np.sin(3 * X[:, 0]), X_star=X[:3])
    >>> mean, std = gp.predict(X[:3], return_std=True)
    >>> std.shape
    (3,)
    """

    def __init__(self, noise=0.1, *, n_epochs=10, kernel="gaussian", bandwidth="median",
                 bandwidth_scale=1.0, matern_nu=1.5, batch_size=32, block_size=64,
                 learning_rate="inverse", eta0=1.0, eta1=1e-4, random_state=0, dtype="float64"):
        self.noise = noise
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

    def _exact_kernel(self, bandwidth):
        from fastomkl.kernels import Cauchy, Gaussian, Laplacian, Matern
        if self.kernel == "matern":
            return Matern(bandwidth, nu=self.matern_nu)
        return {"gaussian": Gaussian, "laplacian": Laplacian, "cauchy": Cauchy}[self.kernel](
            bandwidth)

    def fit(self, X, y, X_star=None):
        """Learn the posterior mean from (X, y), and the variance at ``X_star`` if given.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
        X_star : array-like, shape (m, n_features), optional
            The test points of ``predict(X_star, return_std=True)``.

        Returns
        -------
        self
        """
        X = check_matrix(X)
        y = check_targets(y, X.shape[0])
        noise = check_float(self.noise, "noise", 0.0, strict=True)
        epochs = check_int(self.n_epochs, "n_epochs", 1, 1 << 20)
        mean = DoublySGDRegressor(
            kernel=self.kernel, bandwidth=self.bandwidth, bandwidth_scale=self.bandwidth_scale,
            matern_nu=self.matern_nu, nu=noise / X.shape[0], batch_size=self.batch_size,
            block_size=self.block_size, learning_rate=self.learning_rate, eta0=self.eta0,
            eta1=self.eta1, random_state=self.random_state, dtype=self.dtype)
        config = mean._check_all_params()
        if config["seed"] is None:
            raise ValueError("DoublySGDGP needs an integer random_state")
        if config["bandwidth"] is None:
            config["bandwidth"] = median_bandwidth(X, config["bandwidth_scale"],
                                                   random_state=config["seed"] % (2 ** 32))
        self.X_star_ = None if X_star is None else check_matrix(X_star, X.shape[1], "X_star")
        self.mean_ = _DSGEngine(config, X.shape[1])
        if self.X_star_ is not None:
            kernel = self._exact_kernel(config["bandwidth"])
            self.variance_ = _DSGEngine({**config, "n_outputs": self.X_star_.shape[0]},
                                        X.shape[1])
        order_rng = np.random.default_rng(config["seed"])
        B = config["batch_size"]
        for _ in range(epochs):
            order = order_rng.permutation(X.shape[0])
            for start in range(0, X.shape[0], B):
                rows = X[order[start:start + B]]
                targets = y[order[start:start + B]]
                self.mean_.learn_batch(rows, targets, self.mean_.decision(rows))
                if self.X_star_ is not None:
                    self.variance_.learn_batch(rows, kernel.gram(rows, self.X_star_),
                                               self.variance_.decision(rows))
        return self

    def predict(self, X, return_std=False):
        """The posterior mean at X, and its standard deviation at ``X_star`` (``X`` must then be
        ``X_star``, the points the variance was learnt for).

        Parameters
        ----------
        X : array-like, shape (m, n_features)
        return_std : bool, default False

        Returns
        -------
        mean : ndarray, shape (m,)
        std : ndarray, shape (m,), if return_std
        """
        X = check_matrix(X, self.mean_.n_features)
        mean = self.mean_.decision(X)[:, 0]
        if not return_std:
            return mean
        if self.X_star_ is None or not np.array_equal(X, self.X_star_):
            raise ValueError("return_std=True needs X to be the X_star given to fit")
        explained = np.diag(self.variance_.decision(X))
        return mean, np.sqrt(np.maximum(1.0 - explained, 0.0))


class DoublySGDSoftmaxClassifier:
    """Multiclass kernel logistic regression by doubly stochastic gradients (the paper's 4.3b).

    One block of random features per iteration is shared by every class (alpha_t is r x C);
    the gradient is softmax(f(x)) - e_y.  Parameters as for ``DoublySGDClassifier`` (without
    ``loss``, ``stream`` and ``n_jobs``).  This model keeps scikit-learn's batch API (``fit``,
    ``partial_fit``, ``predict``, ``predict_proba``, ``decision_function``, ``score``); it is not
    saved by ``fastomkl.save`` (pickle it).

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl.dsg import DoublySGDSoftmaxClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (2000, 2))
    >>> y = np.digitize(X[:, 0], [-0.3, 0.3])               # three bands
    >>> DoublySGDSoftmaxClassifier().fit(X, y).score(X, y) > 0.9
    True
    """

    def __init__(self, *, kernel="gaussian", bandwidth="median", bandwidth_scale=1.0,
                 matern_nu=1.5, nu=1e-6, batch_size=32, block_size=64, learning_rate="inverse",
                 eta0=1.0, eta1=1e-4, average=False, random_state=0, dtype="float64"):
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
        self.random_state = random_state
        self.dtype = dtype

    def partial_fit(self, X, y, classes=None):
        """One pass over (X, y) in mini-batches; ``classes`` (all labels) on the first call.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
        classes : array-like, optional
            Every label the model will see; needed on the first call unless ``y`` shows them all.

        Returns
        -------
        self
        """
        engine = getattr(self, "_engine", None)
        X = check_matrix(X, None if engine is None else engine.n_features)
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must be 1-D with {X.shape[0]} labels, got shape {y.shape}")
        known = self.classes_ if engine is not None else np.unique(
            y if classes is None else np.asarray(classes))
        codes = np.searchsorted(known, y)
        if known.shape[0] < 2 or (codes >= known.shape[0]).any() or \
                not np.array_equal(known[np.minimum(codes, known.shape[0] - 1)], y):
            raise ValueError(f"labels must be among the model's classes {known.tolist()}, and "
                             f"there must be two at least")
        if engine is None:
            regressor = DoublySGDRegressor(
                kernel=self.kernel, bandwidth=self.bandwidth,
                bandwidth_scale=self.bandwidth_scale, matern_nu=self.matern_nu, nu=self.nu,
                batch_size=self.batch_size, block_size=self.block_size,
                learning_rate=self.learning_rate, eta0=self.eta0, eta1=self.eta1,
                average=self.average, random_state=self.random_state, dtype=self.dtype)
            config = regressor._check_all_params()
            if config["seed"] is None:
                raise ValueError("DoublySGDSoftmaxClassifier needs an integer random_state")
            config = {**config, "loss": "softmax", "n_outputs": known.shape[0]}
            engine = _DSGEngine(config, X.shape[1])
            engine.bandwidth = engine.bandwidth or median_bandwidth(
                X, config["bandwidth_scale"], random_state=config["seed"] % (2 ** 32))
            self._engine, self.classes_ = engine, known
        B = engine.config["batch_size"]
        for start in range(0, X.shape[0], B):
            rows = X[start:start + B]
            engine.learn_batch(rows, codes[start:start + B].astype(float),
                               engine.decision(rows, averaged=False))
        return self

    def fit(self, X, y):
        """Start afresh and learn (X, y) in one pass.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)

        Returns
        -------
        self
        """
        self.__dict__.pop("_engine", None)
        return self.partial_fit(X, y)

    def decision_function(self, X) -> np.ndarray:
        """f(X), one column per class of ``classes_``.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, n_classes)
        """
        return self._engine.decision(check_matrix(X, self._engine.n_features))

    def predict_proba(self, X) -> np.ndarray:
        """softmax(f(X)).

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, n_classes)
        """
        F = self.decision_function(X)
        P = np.exp(F - F.max(axis=1, keepdims=True))
        return P / P.sum(axis=1, keepdims=True)

    def predict(self, X) -> np.ndarray:
        """The label of the largest score.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples,)
        """
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]

    def score(self, X, y) -> float:
        """Accuracy of ``predict(X)`` against y.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)

        Returns
        -------
        float
        """
        return float(np.mean(self.predict(X) == np.asarray(y)))


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
    if not isinstance(first, _DoublySGD):
        raise ValueError(f"merge takes DSG models, got {type(first).__name__}")
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
    engine = _DSGEngine(dict(head.config), head.n_features)
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
    import copy
    if not isinstance(model, _DoublySGD):
        raise ValueError(f"on_stream takes a DSG model, got {type(model).__name__}")
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
