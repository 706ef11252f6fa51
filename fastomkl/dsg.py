"""Doubly stochastic gradients (DSG) for kernel machines: Dai, Xie, He, Liang, Raj, Balcan and Song,
"Scalable Kernel Methods via Doubly Stochastic Gradients", NeurIPS 2014.

Each iteration takes a mini-batch of B samples and a fresh block of r random Fourier features, and
takes one functional gradient step::

    F       = f_t(X_batch)                               (the blocks committed so far)
    G       = l'(F, y)                                   (the loss derivative, per sample)
    alpha_t = -gamma_t / B * z_t(X_batch)^T G            (the new block's coefficients)
    alpha_s <- (1 - gamma_t nu) alpha_s,  s < t          (the shrink of every older block)

with ``z_t(x) = sqrt(2/r) cos(W_t^T x + b_t)``, so that ``E[z(x)^T z(x')] = k(x, x')``.  With
B = r = 1 this is the paper's Algorithm 1.  The models run on the compiled engine of every
fastomkl model (``fastomkl._core``): the features are a ``BlockFeatures`` bank, whose block t is a
pure function of ``(seed, stream, t)`` (its frequencies are kept in memory as a cache, and a
saved model stores only the keys), and the functional SGD is ``FunctionalSGDExperts``.

A batch is B consecutive samples of the stream, rounds kB + 1 .. (k + 1)B, whatever calls they
arrive in: a round predicts with f_t and accumulates its gradient, and the batch's last round
commits the iteration.  So ``learn_one`` costs one round (not one block), a stream learnt sample
by sample or in chunks of any size gives the same model, and the samples of an unfinished batch
wait in the model (``n_samples_seen_`` counts them) until their batch is complete.

Bounded size.  ``n_features_max`` (default 4096, ``DEFAULT_FEATURES_MAX``) bounds the features a
model holds, so a round's cost stops growing: an unbounded model fed one sample at a time adds 2
features per sample (B = 32, r = 64) and a round costs about 3 us at 2,000 features and 9 us at
4,096 (d = 8), while on cpusmall, naval and elevators the prequential error of the default
regressor with the bound is within 1.2% of the unbounded one's (bounds from 1024 up move it by at
most 7%, with no trend; bench/results/dsg_bench.md): 4096 keeps a round under 10 us at no
measurable cost in error.
Once it is reached, each iteration revisits a held block, block (t mod n_blocks),
and adds its step to that block's coefficients (``on_max_features="revisit"``, the authors' GPU
code), or only shrinks the past (``"stop"``, the paper's "as many random features as the memory
allowed").  ``n_features_max=None`` is the paper's unbounded model.

Data-parallel training: W models with the same seed and parameters but different ``stream``
draw disjoint feature blocks; ``merge(models)`` returns one model whose prediction is the
average of theirs (the blocks concatenated, each model's coefficients divided by W, and for
regressors that standardise their targets also put in the merged model's units; see ``merge``).

Kernels: ``fastomkl.kernels`` objects, ``Gaussian``, ``Laplacian``, ``Cauchy`` and ``Matern``
(nu in {0.5, 1.5, 2.5}), with their parameterisation and spectral densities; ``kernel=None`` is
the data-driven default, a Gaussian kernel whose sigma is ``median_scale`` times the median
distance between the first rows of the stream (its first batch, at most 256 rows; the median
heuristic of ``median_bandwidth``, each coordinate clipped to +-1e8 first, so a first batch of
huge values cannot set sigma beyond what later data of ordinary scale can use).  Until they have
come nothing is committed and every prediction is 0 whatever sigma, so sigma is set when they
have, and a stream learnt sample by sample has the same kernel as one learnt in one call.

Persistence: files saved by the DSG models of the NumPy engine (entries ``dsg.*`` and ``gp.*``,
parameters under their old names) load: the entries keep their meaning (the coefficients, their
lazy scale, the blocks' keys, the bandwidth, the counts) and are translated to the engine's
(``_upgraded_state``).  They predict what they predicted to within rounding (4e-16 relative on
the files of tests/data, checked to 1e-12: the sums run in another order, the engine's dot product
instead of BLAS over parts of eight blocks), not to the bit; learning then goes on by the rules
above.
"""
from __future__ import annotations

import copy
import functools
import math
import warnings

import numpy as np

from fastomkl._core.combiners.direct import BestOutput, FirstOutput
from fastomkl._core.engine import Engine
from fastomkl._core.experts.functional_sgd import FunctionalSGDExperts
from fastomkl._core.features.dsg import (MIN_BANDWIDTH, SECOND_DRAWS, BlockFeatures,
                                         median_distances, operator_diagonal)
from fastomkl._core.losses import FUNCTIONAL_LOSSES
from fastomkl._core.steps import ITERATION_SCHEDULES
from fastomkl._estimator import BinaryClassifier, MulticlassClassifier, OnlineEstimator
from fastomkl._estimator.base import _sample_weight, _unchanged_on_error
from fastomkl._estimator.classifiers import _label
from fastomkl._estimator.params import (Array, Boolean, Interval, OneKernel, Options,
                                        RandomState, StepScales, take_renamed)
from fastomkl._rff_models import StepEnsembleCombiner
from fastomkl._validation import check_int, check_matrix, check_sample, check_targets
from fastomkl.kernels import Cauchy, Gaussian, Kernel, Laplacian, Matern

__all__ = ["DoublySGDRegressor", "DoublySGDClassifier", "DoublySGDOneClass",
           "DoublySGDDensityRatio", "DoublySGDGP", "DoublySGDSoftmaxClassifier", "NORMA", "merge",
           "on_stream", "median_bandwidth"]

DEFAULT_FEATURES_MAX = 4096
MATERN_NUS = (0.5, 1.5, 2.5)
MEDIAN_INPUT_LIMIT = 1e8      # |x_j| is clipped to this before the median heuristic
MEDIAN_ROWS = 256             # the first rows of the stream (at most) that set the median bandwidth
MAX_TEST_POINTS = 1 << 16
_KINDS = {Gaussian: "gaussian", Laplacian: "laplacian", Cauchy: "cauchy", Matern: "matern"}
_FAMILIES = {name: cls for cls, name in _KINDS.items()}
REGRESSION_LOSSES = ("squared", "huber", "epsilon_insensitive", "absolute", "quantile")
CLASSIFICATION_LOSSES = ("hinge", "squared_hinge", "logistic")


def median_bandwidth(X, scale: float = 1.0, max_rows: int = 2000, random_state=0) -> float:
    """The median Euclidean distance between distinct rows of X, times ``scale`` (the median trick).

    Each coordinate is clipped to +-1e8 first (``MEDIAN_INPUT_LIMIT``): the heuristic sets the
    scale of a model that learns from what follows, and a first batch of huge values would
    otherwise fix a sigma at which every later row of ordinary scale looks like one point.

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
    median = median_distances(X, MEDIAN_INPUT_LIMIT)
    if median is None:
        return math.sqrt(X.shape[1]) * scale
    return max(median * scale, MIN_BANDWIDTH)


def _legacy_kernel(kind: str, bandwidth, matern_nu: float):
    """The kernel the old parameters (kernel name, bandwidth, matern_nu) meant: a Kernel, None
    (the Gaussian median default), or the family's name with the median bandwidth."""
    if bandwidth == "median":
        if kind == "matern" and matern_nu != 1.5:
            raise ValueError(f"kernel='matern' with matern_nu={matern_nu} and the median "
                             f"bandwidth has no new spelling: give kernel=Matern(sigma, "
                             f"nu={matern_nu})")
        return None if kind == "gaussian" else kind
    extra = {"nu": matern_nu} if kind == "matern" else {}
    return _FAMILIES[kind](bandwidth, **extra)


def _kind_and_nu(kernel):
    if isinstance(kernel, Kernel):
        return _KINDS.get(type(kernel), "gaussian"), getattr(kernel, "nu", 1.5)
    return kernel or "gaussian", 1.5


def _convert_bandwidth(value, model):
    kind, nu = _kind_and_nu(model.kernel)
    return _legacy_kernel(kind, value, nu)


def _convert_matern_nu(value, model):
    kind, _ = _kind_and_nu(model.kernel)
    if kind != "matern":
        return model.kernel
    sigma = model.kernel.sigma if isinstance(model.kernel, Kernel) else "median"
    return _legacy_kernel("matern", sigma, value)


_LEGACY_ORDER = ("bandwidth", "matern_nu")     # the bandwidth first: matern_nu reads its kernel


# eta="ensemble": the members' steps eta_k / (1 + eta_decay t), mixed by ML-Poly as FOGD's
# (fastomkl._rff_models.StepEnsembleCombiner)
DSG_ENSEMBLE_STEPS = (0.25, 1.0, 2.0)
# NORMA's: its exact kernel takes full steps where DSG's features of one block are noisy, so its
# members stop short of 2 (the edge of a squared-loss step on a kernel with k(x, x) = 1: a member
# at 2 diverged on most of bench/defaults.py's regression streams and took the ensemble with it,
# 1.75 already cost up to 1.11x).  The member at 1.5 brought the geometric mean of the ratio to the
# best step of the grid from 1.01 to 1.00 on the shuffled streams (0.96 to 0.92 in recorded order;
# on other seeds 1.00 to 0.99) for 5% more time a round; files written with the three members
# before it keep them (NORMA._defaults_of_older_files).
NORMA_ENSEMBLE_STEPS = (0.25, 0.5, 1.0, 1.5)
ENSEMBLE_OR_STEP = [Interval("real", 0, None, closed="neither"), Options("ensemble")]


class _DSGEngine(Engine):
    """The engine of the DSG models, with ``with_outputs(n)`` for the multiclass one: a new engine
    of n outputs (the new classes' coefficients zero), as MulticlassClassifier's contract asks,
    with snapshots if this one has them."""

    def with_outputs(self, n_outputs: int):
        if n_outputs == self.experts.n_experts:
            return self
        state = self.get_state()
        grown = self._rebuild(n_outputs)
        extra = n_outputs - self.experts.n_experts
        for name, axis in (("experts.coef", 1), ("experts.avg", 1), ("experts.acc", 0),
                           ("experts.first_g", 1)):
            pad = [(0, 0), (0, 0)]
            pad[axis] = (0, extra)
            state[name] = np.pad(state[name], pad)
        grown.set_state(state)
        grown.rng_state = self.rng_state
        grown.twin_factory = functools.partial(grown._rebuild, n_outputs)
        if self.has_snapshots:               # a service's snapshots follow the model
            grown.prepare_snapshots()
        return grown


class _DoublySGD(StepEnsembleCombiner):
    """Parameters, their checks and the engine shared by the DSG estimators."""

    _clips_members = False          # merge() averages models exactly (StepEnsembleCombiner)

    _losses: tuple = ()
    loss = ""
    _parameter_constraints = {
        "kernel": [OneKernel(), None, Options("gaussian", "laplacian", "cauchy", "matern")],
        "median_scale": [Interval("real", 0, 1e100, closed="right")],
        "nu": [Interval("real", 0, None)],
        "batch_size": [Interval("int", 1, 1 << 20)],
        "block_size": [Interval("int", 1, 1 << 16)],
        "eta": [Interval("real", 0, None, closed="neither")],
        "eta_schedule": [Options("inverse", "theory", "constant")],
        "eta_decay": [Interval("real", 0, None)],
        "average": [Boolean()],
        "precondition": [Boolean()],
        "n_features_max": [Interval("int", 1, 1 << 40), None],
        "on_max_features": [Options("revisit", "stop")],
        "random_state": [RandomState()],
        "stream": [Interval("int", 0, SECOND_DRAWS - 1)],
        "dtype": [Options("float64", "float32")],
        "epsilon": [Interval("real", 0, None)],
        "quantile": [Interval("real", 0, 1, closed="neither")],
    }
    _renamed_parameters = {"n_jobs": None,      # predictions are one compiled loop now
                           "eta0": "eta", "eta1": "eta_decay", "learning_rate": "eta_schedule",
                           "bandwidth_scale": "median_scale",
                           "bandwidth": ("kernel", _convert_bandwidth),
                           "matern_nu": ("kernel", _convert_matern_nu)}

    def __init_subclass__(cls, **kwargs):
        # every class declares the shared constraints of the parameters it has
        super().__init_subclass__(**kwargs)
        names = set(cls._param_names())
        cls._parameter_constraints = {name: forms for name, forms
                                      in cls._parameter_constraints.items() if name in names}

    def _take_old_names(self, renamed: dict) -> None:
        """The parameters' old spellings, for one release (FutureWarning each)."""
        if isinstance(self.kernel, str) and self.kernel in _FAMILIES:
            warnings.warn(f"{type(self).__name__}: kernel={self.kernel!r} is the old spelling; "
                          f"give a fastomkl kernel (kernel=Gaussian(sigma), ...) or None for the "
                          f"median heuristic", FutureWarning, stacklevel=3)
        ordered = sorted(renamed, key=lambda k: _LEGACY_ORDER.index(k) if k in _LEGACY_ORDER
                         else -1)
        take_renamed(self, {name: renamed[name] for name in ordered})
        if self.kernel == "gaussian":
            self.kernel = None

    @classmethod
    def _unit_test_params(cls):
        return [{"batch_size": 4, "block_size": 8, "n_features_max": 64},
                {"kernel": Laplacian(1.0), "batch_size": 2, "block_size": 4, "average": True,
                 "precondition": True, "on_max_features": "stop", "n_features_max": 8,
                 "random_state": 0}]

    # -- configuration ------------------------------------------------------------------------
    def _check_params(self) -> dict:
        kernel = self.kernel
        if isinstance(kernel, Kernel):
            if type(kernel) not in _KINDS:
                raise ValueError(f"kernel must be Gaussian, Laplacian, Cauchy or Matern, got "
                                 f"{kernel!r}")
            if not kernel.sigma >= MIN_BANDWIDTH:
                raise ValueError(f"kernel sigma must be at least {MIN_BANDWIDTH} (a smaller one "
                                 f"overflows the random frequencies), got {kernel.sigma}")
            if isinstance(kernel, Matern) and kernel.nu not in MATERN_NUS:
                raise ValueError(f"a Matern kernel's nu must be one of {MATERN_NUS} (its spectral "
                                 f"density is drawn with 2 nu Gaussians), got {kernel.nu}")
        config = {name: getattr(self, name, default) for name, default in (
            ("nu", 0.0), ("batch_size", 32), ("block_size", 64), ("eta", 1.0),
            ("eta_schedule", "inverse"), ("eta_decay", 1e-4), ("average", False),
            ("precondition", False), ("n_features_max", None), ("on_max_features", "stop"),
            ("stream", 0), ("dtype", "float64"), ("median_scale", 1.0))}
        if config["n_features_max"] is not None and config["n_features_max"] < config["block_size"]:
            raise ValueError(f"n_features_max ({config['n_features_max']}) must hold one block "
                             f"of block_size ({config['block_size']}) features at least")
        config["steps"] = None
        if config["eta"] == "ensemble":
            # the members' steps scale the schedule's of eta 1, which also sets the shrink
            config["eta"], config["steps"] = 1.0, DSG_ENSEMBLE_STEPS
        self._check_shrink(config["eta"], config["eta_schedule"], config["eta_decay"],
                           config["nu"])
        config["loss"] = self.loss
        config["param"] = {"huber": getattr(self, "epsilon", 0.0),
                           "epsilon_insensitive": getattr(self, "epsilon", 0.0),
                           "quantile": getattr(self, "quantile", 0.5)}.get(self.loss, 0.0)
        if self.loss not in self._losses:
            raise ValueError(f"loss must be one of {list(self._losses)}, got {self.loss!r}")
        seed = self.random_state
        config["seed"] = int(seed) if isinstance(seed, (int, np.integer)) and seed < 1 << 63 \
            else None
        return config

    @staticmethod
    def _check_shrink(eta: float, schedule: str, decay: float, nu: float) -> None:
        """ValueError unless every step keeps |1 - gamma_t nu| <= 1: a larger shrink factor of
        the old coefficients would grow them without bound (the largest step is the first)."""
        first = eta / (1.0 + decay) if schedule == "inverse" else eta
        if not first * nu <= 2.0:
            raise ValueError(f"the first step gamma_1 = {first:g} times nu = {nu:g} is beyond 2: "
                             f"the shrink 1 - gamma nu of the old coefficients would exceed 1 "
                             f"in magnitude and grow them without bound; lower eta or nu")

    def _block_seed(self, config: dict, feature_rng) -> int:
        """The 63-bit seed of the blocks: an int random_state itself (the seeds of the models
        before, whose blocks stay the same), else drawn from the feature stream."""
        if config["seed"] is not None:
            return config["seed"]
        return int(feature_rng.integers(0, 1 << 63))

    def _kernel_for(self, config: dict):
        """(kind, matern_df, sigma, rows of the stream that set sigma: 0 when the kernel fixes
        it; then sigma is a placeholder until they have come)."""
        kernel = self.kernel
        if isinstance(kernel, Kernel):
            kind = _KINDS[type(kernel)]
            return kind, int(round(2 * getattr(kernel, "nu", 0.0))), kernel.sigma, 0
        kind = kernel or "gaussian"
        return kind, 3 if kind == "matern" else 0, 1.0, min(config["batch_size"], MEDIAN_ROWS)

    def _n_outputs(self, config: dict) -> int:
        return 1 if config["steps"] is None else len(config["steps"])

    def _outputs_extra(self, config: dict, n_features: int) -> dict:
        """What a model adds to its experts (the GP's nu, test points and operator)."""
        return {}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator,
                      n_outputs=None):
        kind, df, sigma, median_rows = self._kernel_for(config)
        n_outputs = self._n_outputs(config) if n_outputs is None else n_outputs
        limit = config["n_features_max"]
        r = config["block_size"]
        bank = BlockFeatures(kind, df, sigma, self._block_seed(config, feature_rng),
                             config["stream"], n_features, r,
                             (1 << 50) // r if limit is None else limit // r, n_outputs,
                             config["dtype"], config["seed"] is not None, median_rows == 0)
        extra = self._outputs_extra(config, n_features)
        experts = FunctionalSGDExperts(
            bank, n_outputs, FUNCTIONAL_LOSSES[config["loss"]], config["param"],
            extra.pop("nu", config["nu"]), config["eta"],
            ITERATION_SCHEDULES[config["eta_schedule"]], config["eta_decay"],
            config["batch_size"], config["average"], config["precondition"],
            config["on_max_features"] == "revisit", median_rows=median_rows,
            median_scale=config["median_scale"], median_clip=MEDIAN_INPUT_LIMIT,
            step_scales=config["steps"], **extra)
        # a GP's variance functions learn at the end of each iteration: only its mean runs in
        # rounds
        if config["steps"] is not None:         # the step ensemble's members
            combiner = self._ensemble_combiner(n_outputs, FUNCTIONAL_LOSSES[config["loss"]],
                                               config["param"])
        elif config["loss"] == "softmax":
            combiner = BestOutput(n_outputs)
        else:
            combiner = FirstOutput(n_outputs, 1 if extra.get("points") is not None else n_outputs)
        engine = _DSGEngine(bank, experts, combiner, round_bit_generator,
                            bool(getattr(self, "standardize_target", False)))
        engine._rebuild = lambda n: self._build_engine(config, n_features, feature_rng,
                                                       np.random.PCG64(), n)
        return engine

    # -- loading -------------------------------------------------------------------------------
    def _restore_engine(self, n_features, arrays, rng_state):
        if "dsg.counts" in arrays:          # a file of the NumPy engine, which drew no rounds
            arrays, rng_state = self._upgraded_state(dict(arrays), n_features), None
        super()._restore_engine(n_features, arrays, rng_state)

    def _upgraded_state(self, old: dict, n_features: int) -> dict:
        """The state of a file saved by the DSG models of the NumPy engine, in the engine's
        entries (same meanings; checked again by every component's check_state)."""
        names = {"dsg.coef", "dsg.avg", "dsg.streams", "dsg.indices", "dsg.reals", "dsg.counts",
                 "dsg.generator"} | ({"gp.theta", "gp.reals"} if isinstance(self, DoublySGDGP)
                                     else set())
        if set(old) != names:
            raise ValueError(f"a file of the DSG models' first format must hold exactly "
                             f"{sorted(names)}, got {sorted(old)}")
        counts, reals = np.asarray(old["dsg.counts"]), np.asarray(old["dsg.reals"])
        coef = np.asarray(old["dsg.coef"])
        if counts.shape != (6,) or counts.dtype != np.int64 or reals.shape != (3,) \
                or coef.ndim != 2:
            raise ValueError("'dsg.counts' must hold 6 int64 counts, 'dsg.reals' 3 values, "
                             "'dsg.coef' a matrix")
        t, iterations, next_index, rejected, seed, width = counts.tolist()
        if width != n_features:
            raise ValueError(f"'dsg.counts': a model of {width} inputs, not {n_features}")
        scale, bandwidth, offset = reals.tolist()
        n_outputs, r = coef.shape[1], int(self.block_size)
        theta_scale, nu = 1.0, float(getattr(self, "nu", 0.0))
        if isinstance(self, DoublySGDGP):
            gp = np.asarray(old["gp.reals"])
            if gp.shape != (2,):
                raise ValueError("'gp.reals' must hold nu and the operator's scale")
            nu, theta_scale = gp.tolist()
        keeps_batch = isinstance(self, DoublySGDGP) and (
            self.variance == "operator" or self.test_points is not None)
        median_rows = self._kernel_for({"batch_size": int(self.batch_size)})[3]
        batch = int(self.batch_size) if keeps_batch else 0
        return {
            "engine.t": np.array(t, dtype=np.int64),
            "features.streams": old["dsg.streams"], "features.indices": old["dsg.indices"],
            "features.next_index": np.array(next_index, dtype=np.int64),
            "features.seed": np.array(seed, dtype=np.int64),
            "features.bandwidth": np.array(bandwidth),
            "features.generator": old["dsg.generator"],
            "experts.coef": coef, "experts.avg": old["dsg.avg"],
            "experts.acc": np.zeros((n_outputs, r)),
            "experts.gram": np.zeros((r if self.__dict__.get("precondition") else 0, r)),
            "experts.reals": np.array([scale, offset, 0.0, theta_scale]),
            "experts.counts": np.array([iterations, 0, 0], dtype=np.int64),
            "experts.first_x": np.zeros((median_rows, n_features)),
            "experts.first_g": np.zeros((median_rows, n_outputs)),
            "experts.nu": np.array(nu),
            "experts.batch_x": np.zeros((batch, n_features)),
            "experts.batch_z": np.zeros((batch, r)),
            "experts.theta": old.get("gp.theta", np.zeros(0)),
            "experts.n_rejected": np.array(rejected, dtype=np.int64),
            "combiner.n_rejected": np.array(0, dtype=np.int64),
        }

    # -- views ---------------------------------------------------------------------------------
    @property
    def n_features_(self) -> int:
        """The number of random features the model holds: ``block_size`` per committed block."""
        return self._fitted_engine().features.n_features_held

    @property
    def budget_reached_(self) -> bool:
        """True once the model holds ``n_features_max`` features (never with None)."""
        return bool(self._fitted_engine().experts.budget_reached)

    @property
    def bandwidth_(self):
        """The kernel's sigma in use: the median heuristic's value for ``kernel=None``, None
        until the first rows that set it have come."""
        engine = self._fitted_engine()
        return None if engine.experts.bandwidth_waits else engine.features.bandwidth

    @property
    def kernel_(self) -> Kernel:
        """The kernel the features estimate, at the sigma in use."""
        bank = self._fitted_engine().features
        kind = {0: Gaussian, 1: Laplacian, 2: Cauchy, 3: Matern}[bank.kind]
        extra = {"nu": bank.matern_df / 2} if kind is Matern else {}
        return kind(bank.bandwidth, **extra)

    def _decisions(self, X) -> np.ndarray:
        """f(X), one column per output (every expert's prediction, the engine's lock held)."""
        engine = self._fitted_engine()
        X = check_matrix(X, engine.n_features, owner=type(self).__name__)
        out = np.empty((X.shape[0], engine.experts.n_experts))
        engine.predict_outputs_many(X, out)
        return out


_ETA_DOC = """    eta : float, default 1
        With features normalised per block (||z(x)||^2 about k(x, x) = 1), a step of 1 fits a
        batch's residual without overshooting, whatever the units of x and y.  eta nu (the
        first step times nu) must stay at most 2, or the shrink would grow the past.
"""
_ENSEMBLE_ETA_DOC = """    eta : "ensemble" or float, default "ensemble"
        "ensemble": three models on the same blocks, with steps 0.25, 1 and 2 times the schedule
        (gamma_t = eta_k / (1 + eta_decay t)), mixed by ML-Poly on the loss's tangent (as
        FOGD's: ``fastomkl._rff_models.StepEnsembleCombiner``): the steps that suit the data, in
        recorded order as shuffled (worst ratio to the best step of a grid over 20 streams 1.04,
        against 1.26 for eta=1; bench/results/defaults_orders.md), at about 1.2x the cost per
        sample (the features are shared; bench/results/step_rule_costs.md).  The shrink of the
        regulariser stays 1 - gamma_t nu with eta 1.  A float: one model (the papers' setting
        is 1).  With features normalised per block (||z(x)||^2 about k(x, x) = 1), a
        step of 1 fits a batch's residual without overshooting, whatever the units of x and y;
        eta nu (the first step times nu) must stay at most 2, or the shrink would grow the past.
"""
_PARAMETERS_DOC = """
    kernel : fastomkl kernel or None, default None
        ``Gaussian(sigma)``, ``Laplacian(sigma)``, ``Cauchy(sigma)`` or ``Matern(sigma, nu)``
        (nu in {0.5, 1.5, 2.5}), with the parameterisation of ``fastomkl.kernels``; None is a
        Gaussian kernel whose sigma is the median distance between the first rows of the stream
        (the first batch, at most 256 rows) times ``median_scale`` (``median_bandwidth``).
    median_scale : float, default 1
        The multiplier of the median heuristic (the paper uses 0.1, 1 or 4).
    nu : float, default 1e-6
        The regulariser nu of (nu/2) ||f||^2.  Beside the shrink's bound (see ``eta``), a smooth
        loss's step has to leave room for it: an iteration multiplies the batch's residual by
        about 1 - gamma (nu + step scale x lambda), lambda the largest eigenvalue of the batch's
        kernel matrix over B (1 for a batch of one point, far less for a spread batch), so a
        large nu can make the steps diverge, which no check sees in advance.  On a unit-scale
        stream (B = 32) nu up to 0.3 learnt as expected under the default ensemble, whose largest
        member steps 2, and nu = 1 diverged; a heavy regulariser wants ``eta=1.0``.
    batch_size : int, default 32
        Samples per iteration (B): rounds kB + 1 .. (k + 1)B of the stream.
    block_size : int, default 64
        Random features added per iteration (r).
    eta_schedule : {"inverse", "theory", "constant"}, default "inverse"
        gamma_t = eta / (1 + eta_decay t) (the authors' code), eta / t (the paper's theta / t,
        theta = eta: its theory needs theta nu in (1, 2) or a whole number) or eta.
{eta}    eta_decay : float, default 1e-4
    average : bool, default False
        Predict with the average of the iterates (the paper's Corollaries 11 and 13).
    n_features_max : int or None, default 4096
        The features the model holds at most (see the module docstring: a round's cost grows
        with them); a ``BudgetWarning`` says when they are reached, and ``budget_reached_`` says
        so after.  None is the paper's unbounded model.
    on_max_features : {"revisit", "stop"}, default "revisit"
        Once ``n_features_max`` is reached: revisit a held block per iteration (its coefficients
        take the step), or only shrink the past (the paper's memory bound).
    precondition : bool, default False
        Multiply each new block's step by the inverse of its features' batch covariance
        (Z^T Z / B + 1e-7 I), as the authors' code does; the paper's plain step by default.
    random_state : None, int, SeedSequence or Generator, default None
        The seed of the random features (with ``stream``, it fixes every block): an int is the
        blocks' seed itself, any other value draws one (kept in the model's state).
    stream : int, default 0
        Models with the same seed and different streams draw disjoint blocks (see ``merge``).
    dtype : {"float64", "float32"}, default "float64"
        The precision of the random features: "float32" projects and takes the cosines in single
        precision (blocks whose projection could overflow a float stay float64), while
        coefficients, predictions and every sum stay float64."""


def _dsg_init(model, params: dict, renamed: dict) -> None:
    """Store the constructor's parameters, then take the old spellings (``renamed``)."""
    for name, value in params.items():
        if name not in ("self", "__class__", "renamed"):
            setattr(model, name, value)
    model._take_old_names(renamed)


class DoublySGDRegressor(_DoublySGD, OnlineEstimator):
    __doc__ = """Kernel regression by doubly stochastic functional gradients (Dai et al., 2014).

    Each batch of ``batch_size`` consecutive samples is predicted with the current model while
    its gradient accumulates on a block of ``block_size`` new random features; its last sample
    commits the block, fitted by one gradient step, and shrinks the old ones (see the module
    docstring).  The paper's settings are one argument away: ``eta_schedule="theory", eta=theta``
    for gamma_t = theta / t, ``batch_size=1, block_size=1`` for Algorithm 1, ``nu`` and
    ``median_scale`` per data set (its section 5), ``n_features_max=None``.

    Parameters
    ----------
    loss : {"squared", "huber", "epsilon_insensitive", "absolute", "quantile"}, default "squared"
        Squared ((f - y)^2 / 2): kernel ridge regression; huber (threshold ``epsilon``);
        epsilon-insensitive (SVR); absolute (least absolute deviations); quantile (level
        ``quantile``).
    epsilon : float, default 1
        The Huber threshold, or the width of the epsilon-insensitive tube.
    quantile : float, default 0.5
        The level tau in (0, 1) of the quantile loss.""" + _PARAMETERS_DOC.replace(
        "{eta}", _ENSEMBLE_ETA_DOC) + """
    standardize_target : bool, default True
        Learn the targets standardised online, (y - mean) / std of the targets seen so far (each
        winsorised first: after 10 targets, one beyond 8 sd of the mean enters as mean +- 8 sd,
        as in every regressor), and map the predictions back, as ``NystromAWV`` does: the model
        starts from the targets' mean instead of 0, and ``nu``, ``epsilon`` and the steps mean
        the same whatever the units of y.  Each round of a batch takes its gradient at its target
        standardised with the statistics of that round.  On scikit-learn's diabetes (columns
        standardised, y in 25 ... 346, its 442 rows in order) the prequential mean absolute error
        of the default model is 52.2, against 63.1 in raw units and 65.8 for predicting the
        running mean.  False learns y in its raw units, as the paper (and files written before
        the parameter existed).

    Attributes
    ----------
    n_features_ : int
        Random features held (``block_size`` per iteration).
    budget_reached_ : bool
        True once ``n_features_`` is ``n_features_max``.
    bandwidth_ : float
    kernel_ : Kernel

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import DoublySGDRegressor
    >>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2))
    >>> model = DoublySGDRegressor(random_state=0).fit(X, np.sin(3 * X[:, 0]))
    >>> model.n_features_                 # 12 complete batches of 32
    768
    """

    _losses = REGRESSION_LOSSES
    _parameter_constraints = {**_DoublySGD._parameter_constraints,
                              "loss": [Options(*REGRESSION_LOSSES)],
                              "eta": ENSEMBLE_OR_STEP,
                              "standardize_target": [Boolean()]}
    # files written before the parameter existed learnt in raw units
    _defaults_of_older_files = {"standardize_target": False}

    def __init__(self, loss="squared", *, epsilon=1.0, quantile=0.5, kernel=None,
                 median_scale=1.0, nu=1e-6, batch_size=32, block_size=64, eta="ensemble",
                 eta_schedule="inverse", eta_decay=1e-4, average=False, precondition=False,
                 n_features_max=DEFAULT_FEATURES_MAX, on_max_features="revisit",
                 random_state=None, stream=0, dtype="float64", standardize_target=True,
                 **renamed):
        _dsg_init(self, locals(), renamed)

    @classmethod
    def _unit_test_params(cls):
        return [*super()._unit_test_params(),
                {"batch_size": 4, "block_size": 8, "n_features_max": 64,
                 "standardize_target": False, "random_state": 0}]


class DoublySGDClassifier(_DoublySGD, BinaryClassifier):
    __doc__ = """Binary kernel classification by doubly stochastic functional gradients.

    Labels map to -1/+1 (see ``BinaryClassifier``); the learning is ``DoublySGDRegressor``'s with
    a classification loss.  ``predict_proba`` needs ``loss="logistic"``.

    Parameters
    ----------
    loss : {"hinge", "squared_hinge", "logistic"}, default "hinge"
        The kernel SVM, the L2-SVM (max(0, 1 - y f)^2 / 2) or kernel logistic regression.""" \
        + _PARAMETERS_DOC.replace("{eta}", _ENSEMBLE_ETA_DOC) + """

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import DoublySGDClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (4000, 2))
    >>> model = DoublySGDClassifier(random_state=0).partial_fit(X, X[:, 0] * X[:, 1] > 0)
    >>> model.score(X, X[:, 0] * X[:, 1] > 0) > 0.9
    True
    """

    _losses = CLASSIFICATION_LOSSES
    _parameter_constraints = {**_DoublySGD._parameter_constraints,
                              "loss": [Options(*CLASSIFICATION_LOSSES)],
                              "eta": ENSEMBLE_OR_STEP}

    def __init__(self, loss="hinge", *, kernel=None, median_scale=1.0, nu=1e-6, batch_size=32,
                 block_size=64, eta="ensemble", eta_schedule="inverse", eta_decay=1e-4,
                 average=False,
                 precondition=False, n_features_max=DEFAULT_FEATURES_MAX,
                 on_max_features="revisit", random_state=None, stream=0, dtype="float64",
                 **renamed):
        _dsg_init(self, locals(), renamed)


class DoublySGDOneClass(_DoublySGD, OnlineEstimator):
    __doc__ = """Novelty detection by doubly stochastic gradients (the paper's section 4, after
    Schoelkopf et al.): min over f and tau of E[max(0, tau - f(x))] + (nu/2) ||f||^2 - nu tau.

    Each iteration adds ``gamma / B`` times the features of the batch rows with f(x) < tau, and
    moves tau by ``-gamma (fraction below tau - nu)``, from tau = 0.  ``nu`` is both the
    regulariser and (as in the nu-SVM) about the fraction of training rows left below tau.
    ``decision_function`` is f(x) - tau; ``predict`` is +1 (normal) or -1 (novel: f(x) < tau).
    Targets are not used: ``fit(X)``, ``partial_fit(X)``, ``learn_one(x)``.

    Parameters
    ----------""" + _PARAMETERS_DOC.replace("{eta}", _ETA_DOC).replace("nu : float, default 1e-6",
                                            "nu : float, default 0.1") + """

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import DoublySGDOneClass
    >>> X = np.random.default_rng(0).normal(size=(1000, 2))
    >>> model = DoublySGDOneClass(random_state=0).fit(X)
    >>> model.predict([[0.0, 0.0], [6.0, 6.0]]).tolist()
    [1, -1]
    """

    _losses = ("one_class",)
    _unsupervised = True      # learns from X alone: not a regressor (the command line's list)
    _sklearn_differences = {"check_outliers_train": "tau is learnt by stochastic steps, not set "
                            "by a contamination rate: after the few iterations of a 300-row "
                            "fit, the fraction of training rows below it is anywhere from 0 to "
                            "40%, not yet about nu"}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "outlier_detector"
        tags.target_tags.required = False
        tags.regressor_tags = None
        return tags

    def __init__(self, *, kernel=None, median_scale=1.0, nu=0.1, batch_size=32, block_size=64,
                 eta=1.0, eta_schedule="inverse", eta_decay=1e-4, average=False,
                 precondition=False, n_features_max=DEFAULT_FEATURES_MAX,
                 on_max_features="revisit", random_state=None, stream=0, dtype="float64",
                 **renamed):
        _dsg_init(self, locals(), renamed)

    loss = "one_class"

    def _winsorises_targets(self, config: dict) -> bool:
        return False                               # no targets: every one is 0

    def _known_code(self, y):
        return 0.0

    def _prepare_target(self, y):
        return 0.0, lambda: None

    def _encode_many(self, y, n_samples: int) -> np.ndarray:
        return np.zeros(n_samples)

    def _decode_one(self, score: float):
        return 1 if score >= 0 else -1

    def _decode_many(self, scores: np.ndarray) -> np.ndarray:
        return np.where(scores >= 0, 1, -1)       # integers, as scikit-learn's detectors

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
        1
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

    def fit(self, X, y=None, *, shuffle=True, n_epochs=1):
        """Start afresh and learn the rows of X (see ``OnlineEstimator.fit``: shuffled from
        ``random_state`` unless ``shuffle=False``, ``n_epochs`` passes).

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : ignored
        shuffle : bool, default True
        n_epochs : int, default 1

        Returns
        -------
        self

        Examples
        --------
        >>> from fastomkl import DoublySGDOneClass
        >>> DoublySGDOneClass().fit([[0.0], [0.1]]).n_samples_seen_
        2
        """
        return super().fit(X, y, shuffle=shuffle, n_epochs=n_epochs)

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
    ----------""" + _PARAMETERS_DOC.replace("{eta}", _ETA_DOC) + """

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

    _losses = ("kl",)
    loss = "kl"

    def __init__(self, *, kernel=None, median_scale=1.0, nu=1e-6, batch_size=32, block_size=64,
                 eta=1.0, eta_schedule="inverse", eta_decay=1e-4, average=False,
                 precondition=False, n_features_max=DEFAULT_FEATURES_MAX,
                 on_max_features="revisit", random_state=None, stream=0, dtype="float64",
                 **renamed):
        _dsg_init(self, locals(), renamed)

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
        return self._public_scores(X)


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

    Both variances are clipped to [0, k(x, x)], where the true one lies.  The model holds every
    block (no ``n_features_max``).

    Targets are learnt in their own units, as the paper (``DoublySGDRegressor`` standardises
    them by default; the GP does not): the mean's iteration is linear in y, so only its prior
    mean 0 depends on their units, and ``fit``'s passes learn it (scikit-learn's diabetes,
    columns standardised, y in 25 ... 346, fit on 300 rows and tested on 142: MAE 41.7 with the
    defaults, 40.8 with y standardised by hand, 65.4 for the mean of the training targets);
    while ``noise`` is a variance in the units of y and the standard deviations are the prior's,
    k(x, x) = 1, which online statistics would change between the passes of ``fit``.  For
    targets far from unit scale, standardise y yourself and scale the standard deviations back.

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
    n_epochs : int in [1, 1000], default 10
        Passes over the data in ``fit``.  Each pass adds blocks the model keeps (memory and the
        cost of a pass grow with the passes made), hence the bound.
    kernel, median_scale, batch_size, block_size, eta, eta_schedule, eta_decay, random_state, dtype : see DoublySGDRegressor
        As for ``DoublySGDRegressor``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian
    >>> from fastomkl.dsg import DoublySGDGP
    >>> X = np.linspace(-1, 1, 30)[:, None]
    >>> gp = DoublySGDGP(noise=0.3, kernel=Gaussian(0.5), batch_size=30, test_points=X[:3])
    >>> mean, std = gp.fit(X, np.sin(3 * X[:, 0])).predict(X[:3], return_std=True)
    >>> std.shape
    (3,)

    The operator gives the variance anywhere, growing where the data end:

    >>> gp = DoublySGDGP(noise=0.3, kernel=Gaussian(0.5), variance="operator", block_size=8,
    ...                  batch_size=30, n_epochs=100, random_state=0).fit(X, np.sin(3 * X[:, 0]))
    >>> _, std = gp.predict([[0.0], [3.0]], return_std=True)
    >>> bool(std[0] < 0.5 < std[1])
    True
    """

    _losses = ("squared",)
    loss = "squared"
    _parameter_constraints = {**_DoublySGD._parameter_constraints,
                              "noise": [Interval("real", 0, None, closed="neither")],
                              "variance": [Options("test_points", "operator")],
                              "test_points": [Array(2), None],
                              "n_samples": [Interval("int", 1, None), None],
                              "n_epochs": [Interval("int", 1, 1000)]}

    def __init__(self, noise=0.1, *, variance="test_points", test_points=None, n_samples=None,
                 n_epochs=10, kernel=None, median_scale=1.0, batch_size=32, block_size=64,
                 eta=1.0, eta_schedule="inverse", eta_decay=1e-4, random_state=None,
                 dtype="float64", **renamed):
        _dsg_init(self, locals(), renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"batch_size": 4, "block_size": 8, "n_epochs": 1},
                {"variance": "operator", "batch_size": 4, "block_size": 2, "n_epochs": 1,
                 "random_state": 0}]

    def _check_params(self) -> dict:
        config = super()._check_params()
        points = None if self.test_points is None else check_matrix(self.test_points,
                                                                    name="test_points")
        if points is not None and points.shape[0] > MAX_TEST_POINTS:
            raise ValueError(f"test_points may hold at most {MAX_TEST_POINTS} points (one ridge "
                             f"regression each), got {points.shape[0]}")
        if points is not None and self.variance != "test_points":
            raise ValueError("test_points are for variance='test_points'; the operator gives "
                             "the variance at any point")
        if self.n_samples is not None:
            self._check_shrink(self.eta, self.eta_schedule, self.eta_decay,
                               self.noise / self.n_samples)
        config["points"] = points
        return config

    def _n_outputs(self, config):
        return 1 if config["points"] is None else 1 + config["points"].shape[0]

    # -- the rows of the first learning call are the n of nu = noise / n by default --------------
    def predict_learn(self, X, y=None):
        if self._engine is None:
            self._first_rows = check_matrix(X).shape[0]
        try:
            return super().predict_learn(X, y)
        finally:
            self.__dict__.pop("_first_rows", None)

    def _outputs_extra(self, config, n_features):
        points = config["points"]
        if points is not None and points.shape[1] != n_features:
            raise ValueError(f"test_points has {points.shape[1]} features, but the model is "
                             f"expecting {n_features} features as input")
        # n from the first batch when the engine is built (a file says the nu it was built with);
        # the snapshots' engines, built later from the same config, take the nu it gave
        if "gp_nu" not in config:
            in_file = None if self.n_samples else self._from_file("nu")  # a fixed n is checked
            config["gp_nu"] = (in_file if in_file is not None else self.noise
                               / (self.n_samples or self.__dict__.get("_first_rows", 1)))
        nu = config["gp_nu"]
        self._check_shrink(self.eta, self.eta_schedule, self.eta_decay, nu)
        return {"points": points, "operator": self.variance == "operator",
                "nu": nu, "nu_fixed": self.n_samples is not None}

    def _layout_in_file(self, arrays: dict) -> dict:
        layout = super()._layout_in_file(arrays)
        if "experts.nu" in arrays:              # noise / n of the first batch it learnt
            layout["nu"] = float(np.asarray(arrays["experts.nu"]))
        return layout

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
        >>> DoublySGDGP(n_epochs=3, batch_size=20).fit(X, X[:, 0]).n_samples_seen_
        60
        """
        X = check_matrix(X)
        y = check_targets(y, X.shape[0])
        config = self._check_all_params()
        order = np.random.default_rng(config["seed"])

        def learn(fresh):
            for _ in range(self.n_epochs):
                rows = order.permutation(X.shape[0])
                fresh.partial_fit(X[rows], y[rows])
        self._refit(learn)
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
        >>> from fastomkl import Gaussian
        >>> from fastomkl.dsg import DoublySGDGP
        >>> X = np.linspace(-1, 1, 20)[:, None]
        >>> gp = DoublySGDGP(kernel=Gaussian(0.5), batch_size=20, test_points=X[:2]).fit(X, X[:, 0])
        >>> [a.shape for a in gp.predict(X[:2], return_std=True)]
        [(2,), (2,)]
        """
        if not isinstance(return_std, (bool, np.bool_)):
            raise ValueError(f"return_std must be True or False, got {return_std!r}")
        if not return_std:
            return self._scores(X)
        engine = self._fitted_engine()
        X = check_matrix(X, engine.n_features, owner=type(self).__name__)
        if self.variance == "operator":
            mean = self._scores(X)
            explained = engine.locked(lambda: self._operator_diagonal(engine, X))
        elif self.test_points is None or not np.array_equal(X, check_matrix(self.test_points)):
            raise ValueError("return_std=True needs variance='operator', or X equal to the "
                             "test_points the variance was learnt for")
        else:
            mean = self._scores(X)
            explained = engine.locked(lambda: self._variance_functions(engine, X))
        return mean, np.sqrt(np.clip(1.0 - explained, 0.0, 1.0))

    @staticmethod
    def _variance_functions(engine, points):
        """g_i(x*_i) for every test point: its ridge regression's value there (method 2)."""
        features = engine.features.transform_held(points)
        return np.einsum("ij,ji->i", features, engine.experts.coefficients[:, 1:])

    @staticmethod
    def _operator_diagonal(engine, X):
        """A(x, x) for every row of X, from the operator's columns and the blocks' keys."""
        bank, experts = engine.features, engine.experts
        streams, indices = bank.block_keys
        kind = ("gaussian", "laplacian", "cauchy", "matern")[bank.kind]
        return operator_diagonal(X, kind, bank.matern_df, bank.bandwidth, bank.seed, streams,
                                 streams + SECOND_DRAWS, indices, experts.operator_values, 1.0,
                                 bank.r, bank.single)


class DoublySGDSoftmaxClassifier(_DoublySGD, MulticlassClassifier):
    __doc__ = """Multiclass kernel logistic regression by doubly stochastic gradients (the
    paper's 4.3b).

    One block of random features per iteration is shared by every class (alpha_t is r x C);
    the gradient is softmax(f(x)) - e_y.  Classes join as their labels arrive (see
    ``MulticlassClassifier``: a new class's scores start at 0), or all at once with
    ``partial_fit(X, y, classes=...)``.  ``decision_function`` gives one column per class of
    ``classes_``, ``predict_proba`` their softmax.

    Parameters
    ----------""" + _PARAMETERS_DOC.replace("{eta}", _ETA_DOC) + """

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl.dsg import DoublySGDSoftmaxClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (2000, 2))
    >>> y = np.digitize(X[:, 0], [-0.3, 0.3])               # three bands
    >>> DoublySGDSoftmaxClassifier(random_state=0).fit(X, y).score(X, y) > 0.9
    True
    """

    _losses = ("softmax",)
    loss = "softmax"

    def __init__(self, *, kernel=None, median_scale=1.0, nu=1e-6, batch_size=32, block_size=64,
                 eta=1.0, eta_schedule="inverse", eta_decay=1e-4, average=False,
                 precondition=False, n_features_max=DEFAULT_FEATURES_MAX,
                 on_max_features="revisit", random_state=None, stream=0, dtype="float64",
                 **renamed):
        _dsg_init(self, locals(), renamed)

    def _n_outputs(self, config):
        return max(len(getattr(self, "classes_", ())), 1)

    def _careful_predict_learn_one(self, x, y):
        # a new label's column joins before the round that learns it (the engine's outputs are
        # fixed within a round)
        with _unchanged_on_error(self):
            codes = self._learn_classes([_label(y)]) if y is not None else None
            if codes is not None and len(codes) != len(getattr(self, "_codes", {})):
                self._commit_classes(codes)
            return super()._careful_predict_learn_one(x, y)

    def decision_function(self, X) -> np.ndarray:
        """f(X), one column per class of ``classes_``; with two classes, as scikit-learn's
        classifiers give it, the one column f_1 - f_0 (positive: ``classes_[1]``).

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, n_classes), or (n_samples,) for two classes

        Examples
        --------
        >>> from fastomkl.dsg import DoublySGDSoftmaxClassifier
        >>> model = DoublySGDSoftmaxClassifier().fit([[0.0], [0.5], [1.0]], ["a", "b", "c"])
        >>> model.decision_function([[0.2]]).shape
        (1, 3)
        """
        return _binary_as_one_column(self._in_class_order(self._decisions(X)))

    def decision_function_one(self, x) -> np.ndarray:
        """f(x) of one sample, one value per class of ``classes_`` (with two classes the one
        value f_1 - f_0, as ``decision_function``).

        Parameters
        ----------
        x : sequence of float, shape (n_features,), or dict

        Returns
        -------
        ndarray, shape (n_classes,), or float for two classes

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
        scores = _binary_as_one_column(self._in_class_order(
            self._decisions(check_sample(x, engine.n_features)[None, :])))[0]
        return float(scores) if scores.ndim == 0 else scores

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
        F = self._in_class_order(self._decisions(X))
        P = np.exp(F - F.max(axis=1, keepdims=True))
        return P / P.sum(axis=1, keepdims=True)



def _binary_as_one_column(F: np.ndarray) -> np.ndarray:
    """Two classes' scores as the one column f_1 - f_0 (its sign is the argmax)."""
    return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F


def _copy_learnt_names(source, target) -> None:
    """The classes and feature names `source` learnt, given to the fresh model `target`."""
    if "_codes" in source.__dict__:
        target._commit_classes(dict(source._codes))
    if "_feature_names" in source.__dict__:
        target._feature_names = copy.copy(source._feature_names)


def _fitted_state(model):
    engine = model._fitted_engine()
    return engine, engine.get_state()


def merge(models, base=None):
    """One model whose prediction is the average of the predictions of ``models`` (data-parallel
    DSG): ``merge([m_1, ..., m_W]).predict(X) == mean_w m_w.predict(X)`` up to rounding.

    The models must be of one class with the same parameters except ``stream`` (so the same
    seed: pass ``random_state`` as an int), have learnt from inputs of the same width with the
    same kernel (give ``kernel`` explicitly, e.g. ``Gaussian(median_bandwidth(sample))``, since
    ``kernel=None`` reads each model's own data), and draw disjoint blocks (distinct ``stream``
    values).  Classifiers must share ``classes_``.  The result holds every block, each model's
    coefficients divided by W (and the mean of one-class offsets), so its ``n_features_max``
    must hold them all (``None`` does); it keeps learning on ``models[0]``'s stream, after its
    blocks, with the largest iteration count of the models (so its step size continues).  A
    batch a model has not completed is not carried over.

    Periodic averaging: models that all continued from one merged model (``base``, each through
    ``on_stream(base, w)``) share its blocks; a shared block's coefficient in the result is the
    sum of the models' coefficients divided by W, like any other, so the result is still exactly
    the average of the models, and ``base``'s samples are counted once in ``n_samples_seen_``.

    Standardised targets (``standardize_target=True``, the regressor's default): model w predicts
    m_w + s_w f_w(x) with the mean m_w and standard deviation s_w of the targets it has seen, and
    the merged model m + s f(x) with f = mean_w (s_w / s) f_w: its statistics are the models'
    pooled count and variance and the mean of their means (the pooled mean when they have counted
    as many targets, as the shards of a stream nearly have), so the average stays exact and its
    next targets are standardised with statistics of all the models' targets.

    Parameters
    ----------
    models : sequence of fitted DSG models (not the GP)
    base : the model they all continued from, or None (their blocks must then be disjoint)

    Returns
    -------
    a new model of the same class (the inputs are unchanged)

    Raises
    ------
    ValueError
        If the models differ in anything but ``stream``, share a block that is not ``base``'s,
        hold more features together than ``n_features_max``, or one has not learnt.

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian
    >>> from fastomkl.dsg import DoublySGDRegressor, merge
    >>> X = np.random.default_rng(0).uniform(-1, 1, (200, 2))
    >>> parts = [DoublySGDRegressor(kernel=Gaussian(1.0), random_state=0, stream=w,
    ...                             n_features_max=None).fit(X[w::2], X[w::2, 0]) for w in range(2)]
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
    for model in models:
        if type(model) is not type(first) or not _same_params(
                {k: v for k, v in model.get_params().items() if k != "stream"}, params):
            raise ValueError("merge needs models of one class with the same parameters "
                             "(except stream)")
    parts = [_fitted_state(m) for m in models]
    head = parts[0][1]
    for engine, state in parts:
        if (int(state["features.seed"]), engine.n_features, float(state["features.bandwidth"])) \
                != (int(head["features.seed"]), parts[0][0].n_features,
                    float(head["features.bandwidth"])):
            raise ValueError("merge needs models with the same seed, input width and bandwidth")
    if hasattr(first, "classes_") and any(
            getattr(m, "_codes", None) != first._codes for m in models):
        raise ValueError("merge needs classifiers with the same classes_, coded alike (a first "
                         "batch that shows both labels, or partial_fit's classes=, codes them "
                         "alike)")
    W, r = len(models), int(first.block_size)
    shared, base_t = set(), 0
    if base is not None:
        base_state = _fitted_state(base)[1]
        shared = set(zip(base_state["features.streams"].tolist(),
                         base_state["features.indices"].tolist()))
        base_t = int(base_state["engine.t"])
        if any(int(s["engine.t"]) < base_t for _, s in parts):
            raise ValueError("merge: a model has seen fewer samples than base")
    target, units = None, [1.0] * W
    if "engine.target" in head:
        target, units = _merged_targets(
            [s["engine.target"] for _, s in parts],
            bool(getattr(first, "standardize_target", False)))
    weights, shares = _member_shares(models, parts)
    coef, avg = {}, {}                          # block key -> summed rows, in first-seen order
    for (engine, state), unit, share in zip(parts, units, shares):
        scale = state["experts.reals"][0] * unit
        for b, key in enumerate(zip(state["features.streams"].tolist(),
                                    state["features.indices"].tolist())):
            rows = slice(b * r, (b + 1) * r)
            c = state["experts.coef"][rows] * (scale / W) * share
            a = state["experts.avg"][rows] * (unit / W) * share if state["experts.avg"].size \
                else None
            if key in coef:
                if key not in shared:
                    raise ValueError("merge needs models that draw disjoint blocks: give each "
                                     "its own stream")
                coef[key] = coef[key] + c
                avg[key] = None if a is None else avg[key] + a
            else:
                coef[key], avg[key] = c, a
    keys = list(coef)
    state = dict(head)
    state["features.streams"] = np.array([k[0] for k in keys], dtype=np.int64)
    state["features.indices"] = np.array([k[1] for k in keys], dtype=np.int64)
    state["features.next_index"] = np.array(max(int(s["features.next_index"]) for _, s in parts),
                                            dtype=np.int64)
    state["experts.coef"] = np.concatenate([coef[k] for k in keys])
    if head["experts.avg"].size:
        state["experts.avg"] = np.concatenate([avg[k] for k in keys])
    for name in ("experts.acc", "experts.gram", "experts.batch_x", "experts.batch_z",
                 "experts.first_x", "experts.first_g"):
        state[name] = np.zeros_like(head[name])
    offset = np.mean([s["experts.reals"][1] for _, s in parts])
    state["experts.reals"] = np.array([1.0, offset, 0.0, 1.0])
    state["experts.counts"] = np.array([max(max(int(s["experts.counts"][0]) for _, s in parts),
                                            len(keys)), 0, 0], dtype=np.int64)
    state["experts.n_rejected"] = state["combiner.n_rejected"] = np.array(0, dtype=np.int64)
    state["engine.t"] = np.array(base_t + sum(int(s["engine.t"]) - base_t for _, s in parts),
                                 dtype=np.int64)
    if target is not None:
        state["engine.target"] = target
    if weights is not None:
        state.update(_merged_combiner(parts, weights))
    merged = type(first)(**first.get_params())
    _copy_learnt_names(first, merged)
    merged._restore_engine(parts[0][0].n_features, state, None)
    return merged


def _member_shares(models, parts):
    """A step ensemble's merged weights (the mean of the models' weights of each member) and, per
    model, each member's factor w_k / mean weight_k: member k of the merged model is the mean of
    the models' members k so scaled, and the merged prediction sum_k mean_w(w_k) f_k is then the
    mean of the models' predictions exactly.  (None, factors 1) for a model of one output."""
    if "combiner.w_bar" not in parts[0][1] and "combiner.lr" not in parts[0][1]:
        return None, [1.0] * len(parts)
    each = np.array([model._member_weights() for model in models])
    weights = each.mean(axis=0)
    weights = weights / weights.sum()
    # a member no model weighs (ML-Poly's weights can be 0) adds nothing to any prediction: it
    # keeps the mean of the models' members
    mean = each.mean(axis=0)
    return weights, list(each / np.where(mean > 0, mean, 1.0))


def _merged_combiner(parts, weights) -> dict:
    """The combiner state of a merged step ensemble whose weights are `weights`: Hedge's log
    weights (files written when the members were mixed by Hedge), or ML-Poly's: the mean
    learning rates, the largest range correction, and regrets that give exactly `weights` on the
    scale of the models' own (their mean total lr_k max(R_k, 0))."""
    if "combiner.log_w" in parts[0][1]:
        return {"combiner.w_bar": weights,
                "combiner.log_w": np.log(weights) - np.log(weights.max())}
    lr = np.mean([s["combiner.lr"] for _, s in parts], axis=0)
    lead = np.mean([(s["combiner.lr"] * np.maximum(s["combiner.R"], 0.0)).sum()
                    for _, s in parts])
    return {"combiner.lr": lr, "combiner.R": weights * lead / lr,
            "combiner.Smax": np.max([s["combiner.Smax"] for _, s in parts], axis=0)}


def _pooled_targets(stats) -> np.ndarray:
    """[count, mean, variance] of the targets of several models together (Chan's pairwise
    update, which cannot overflow where sums of squares could): the statistics a merged model
    winsorises its next targets with (the targets of ``base`` counted once per model)."""
    n, mean, m2 = 0.0, 0.0, 0.0
    for count, part_mean, variance in stats:
        if count == 0:
            continue
        total = n + count
        delta = part_mean - mean
        mean += delta * (count / total)
        m2 = (m2 / total) * n + variance * (count / total) + delta * delta * (n / total) * (
            count / total)
        n = total
    return np.array([n, mean, m2 if n else 0.0])


def _target_scale(stats) -> float:
    """The standard deviation a standardising engine divides by (its ``target_scale``): 1 until
    two targets are counted or while their variance is 0."""
    count, _, variance = stats
    return math.sqrt(variance) if count >= 2 and variance > 0.0 else 1.0


def _merged_targets(stats, standardized: bool):
    """(the merged model's target statistics, each model's factor for its coefficients).

    Raw-unit models: the pooled statistics (``_pooled_targets``), factors 1.  Standardising
    models predict m_w + s_w f_w(x), f_w learnt on (y - m_w) / s_w; the merged model predicts
    m + s f(x), so it takes f = mean_w (s_w / s) f_w (each model's coefficients times s_w / s,
    on top of 1 / W) and, so that m + s f is exactly the average of the models' predictions, the
    mean m of the models' means (the pooled mean when they have counted as many targets; shards
    of a stream differ by at most a chunk) with the pooled variance about it (the pooled one
    plus the square of the gap), and the pooled count."""
    pooled = _pooled_targets(stats)
    if not standardized:
        return pooled, [1.0] * len(stats)
    mean = float(np.mean([part[1] for part in stats]))
    gap = pooled[1] - mean
    merged = np.array([pooled[0], mean, pooled[2] + gap * gap])
    scale = _target_scale(merged)
    return merged, [_target_scale(part) / scale for part in stats]


def _same_params(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        (a[k] is b[k]) or (not isinstance(a[k], np.ndarray) and a[k] == b[k]) for k in a)


def on_stream(model, stream: int):
    """A copy of the fitted DSG ``model`` that continues learning on ``stream``: its next blocks
    are drawn from (seed, stream, i) for indices after every block it holds, so copies on
    distinct streams draw disjoint new blocks (periodic averaging: train the copies on their
    shards, then ``merge(copies, base=model)``).

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian
    >>> from fastomkl.dsg import DoublySGDRegressor, merge, on_stream
    >>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2))
    >>> params = dict(kernel=Gaussian(1.0), random_state=0, n_features_max=None)
    >>> start = merge([DoublySGDRegressor(stream=w, **params).fit(X[w:200:2], X[w:200:2, 0])
    ...                for w in range(2)])
    >>> parts = [on_stream(start, w).partial_fit(X[200 + w::2], X[200 + w::2, 0]) for w in range(2)]
    >>> both = merge(parts, base=start)
    >>> bool(np.allclose(both.predict(X), (parts[0].predict(X) + parts[1].predict(X)) / 2))
    True
    """
    if not isinstance(model, _DoublySGD) or isinstance(model, DoublySGDGP):
        raise ValueError(f"on_stream takes a DSG model other than the GP, got "
                         f"{type(model).__name__}")
    stream = check_int(stream, "stream", 0, SECOND_DRAWS - 1)
    engine, state = _fitted_state(model)
    held = state["features.indices"]
    state["features.next_index"] = np.array(max(int(state["features.next_index"]),
                                                int(held.max()) + 1 if held.size else 0),
                                            dtype=np.int64)
    out = type(model)(**{**model.get_params(), "stream": stream})
    _copy_learnt_names(model, out)
    out._restore_engine(engine.n_features, state, engine.rng_state)
    return out


class NORMA(StepEnsembleCombiner, OnlineEstimator):
    """NORMA (Kivinen, Smola and Williamson, 2004): DSG with the exact kernel (a baseline, oracle).

    f <- (1 - gamma_t nu) f - gamma_t / B sum_b l'(f(x_b), y_b) k(x_b, .), on mini-batches of
    ``batch_size`` consecutive samples, with DSG's step sizes and losses; predictions within a
    batch use f_t (``NormaExpansion``).  Where DSG keeps r coefficients per iteration, NORMA keeps
    the rows it learnt: at most ``budget`` of them, a new row replacing the oldest (the truncated
    expansion NORMA's paper analyses: a term dropped after tau iterations has been shrunk by
    prod (1 - gamma nu) over them), so a prediction costs O(budget d).  As ``block_size`` grows,
    DSG's iterates approach NORMA's (with a budget that holds every row).

    Parameters
    ----------
    kernel : fastomkl kernel, default Gaussian(1.0)
        The exact kernel: Gaussian, Laplacian, Cauchy or Matern (nu in {0.5, 1.5, 2.5}).
    loss : str, default "squared"
        A loss of ``DoublySGDRegressor`` or ``DoublySGDClassifier`` (targets -1/+1 for the
        latter).
    budget : int, default 1000
        The rows the expansion holds at most: once full, each new row replaces the oldest (the
        truncation), so memory and the cost per sample stay flat.  A ``BudgetWarning`` says when
        it fills, and ``budget_reached_`` says so after.
    eta : "ensemble" or float, default "ensemble"
        "ensemble": expansions over the same rows, one per member of ``ensemble_steps``, each
        stepping its scale times the schedule (gamma_t = 1 / (1 + eta_decay t); the shrink stays
        1 - gamma_t nu), mixed by ML-Poly as DSG's ensemble: the steps that suit the data, in
        recorded order as shuffled.  The kernel values of a sample are computed once for all
        members, so a round costs little more than one expansion's (four members: 5% more than
        three).  A float: one expansion (the paper's setting is 1; on elevators in recorded
        order its prequential MSE is 1.8 times that of the best step of a grid).
    ensemble_steps : list, tuple or 1-d array of 1 to 16 positive numbers, default (0.25, 0.5, 1.0, 1.5)
        The members' step scales under ``eta="ensemble"``.  Keep them below 2: with a kernel of
        k(x, x) = 1 a squared-loss step of 2 lands as far past the target as it started, and a
        member at 2 diverged on most regression streams of bench/defaults.py, taking the mixture
        with it.  Over those streams, in recorded order and shuffled, the default is within
        1.05x of the best step of a grid on each, and better on geometric mean
        (bench/results/defaults_orders.md).  Files written before this parameter existed keep
        their three members (0.25, 0.5, 1.0).
    standardize_target : bool, default True
        For a regression loss, learn the targets standardised online, as
        ``DoublySGDRegressor`` does (see there), and map the predictions back.  The
        classification losses learn their -1/+1 labels as they are.  False learns y in its raw
        units, as the paper (and files written before the parameter existed).
    nu, batch_size, eta_schedule, eta_decay, epsilon, quantile : see DoublySGDRegressor
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

    _parameter_constraints = {
        "kernel": [OneKernel()],
        "loss": [Options(*REGRESSION_LOSSES, *CLASSIFICATION_LOSSES)],
        "budget": [Interval("int", 1, 1 << 24)],
        **{name: _DoublySGD._parameter_constraints[name] for name in (
            "nu", "batch_size", "eta_schedule", "eta_decay", "epsilon", "quantile")},
        "eta": ENSEMBLE_OR_STEP, "ensemble_steps": [StepScales()],
        "standardize_target": [Boolean()]}
    _renamed_parameters = {"eta0": "eta", "eta1": "eta_decay", "learning_rate": "eta_schedule"}
    # files written before each parameter existed learnt in raw units (and name their eta), and
    # with the ensemble's first three members
    _defaults_of_older_files = {"standardize_target": False, "ensemble_steps": (0.25, 0.5, 1.0)}

    def __init__(self, kernel=Gaussian(1.0), loss="squared", *, budget=1000, nu=1e-6,
                 batch_size=32, eta="ensemble", eta_schedule="inverse", eta_decay=1e-4,
                 epsilon=1.0, quantile=0.5, standardize_target=True,
                 ensemble_steps=NORMA_ENSEMBLE_STEPS, **renamed):
        for name, value in locals().items():
            if name not in ("self", "__class__", "renamed"):
                setattr(self, name, value)
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"budget": 8, "batch_size": 2},
                {"kernel": Matern(1.0, nu=2.5), "loss": "huber", "budget": 4}]

    def _implied_state_size(self, n_features: int) -> int:
        """Doubles the engine allocates when it is built: the support, its coefficients (one per
        member) and kernel values at the budget's capacity, and a batch's rows and slopes
        (checked by ``load`` before building, files holding the rows in use only)."""
        members = len(self.ensemble_steps) if self.eta == "ensemble" else 1
        return (self.budget * (n_features + members + 1)
                + self.batch_size * (n_features + members))

    def _check_params(self) -> dict:
        if type(self.kernel) not in _KINDS or getattr(self.kernel, "nu", 0.5) not in MATERN_NUS:
            raise ValueError(f"kernel must be Gaussian, Laplacian, Cauchy or Matern with nu in "
                             f"{MATERN_NUS}, got {self.kernel!r}")
        # the members' steps scale the schedule's of eta 1, which also sets the shrink
        eta, steps = ((1.0, tuple(float(v) for v in self.ensemble_steps)) if self.eta == "ensemble"
                      else (self.eta, None))
        _DoublySGD._check_shrink(eta, self.eta_schedule, self.eta_decay, self.nu)
        return {"eta": eta, "steps": steps}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        from fastomkl._core.experts.norma import NormaExpansion
        from fastomkl._core.features.embedding import NullFeatures
        param = {"quantile": self.quantile}.get(self.loss, self.epsilon)
        experts = NormaExpansion(
            list(_KINDS).index(type(self.kernel)), int(round(2 * getattr(self.kernel, "nu", 0))),
            self.kernel.sigma, n_features, FUNCTIONAL_LOSSES[self.loss], param, self.nu,
            config["eta"], ITERATION_SCHEDULES[self.eta_schedule], self.eta_decay,
            self.batch_size, self.budget, config["steps"])
        combiner = (FirstOutput(1) if config["steps"] is None
                    else self._ensemble_combiner(experts.n_experts, FUNCTIONAL_LOSSES[self.loss],
                                                 param))
        return Engine(NullFeatures(1, n_features), experts, combiner, round_bit_generator,
                      bool(self.standardize_target) and self._winsorises_targets(config))

    def _random_streams(self, config: dict):
        return None, np.random.PCG64(0)          # NORMA draws nothing

    def _winsorises_targets(self, config: dict) -> bool:
        return self.loss in REGRESSION_LOSSES     # not the -1/+1 labels of a classifier's loss

    @property
    def n_support_(self) -> int:
        """The rows the expansion holds (at most ``budget``)."""
        return self._fitted_engine().experts.n_support

    @property
    def budget_reached_(self) -> bool:
        """True once the expansion holds ``budget`` rows: each new row then replaces the oldest."""
        return bool(self._fitted_engine().experts.budget_reached)
