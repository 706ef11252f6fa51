"""PKAWV: projected Kernel-AWV (Jezequel, Gaillard & Rudi, "Efficient online learning with kernels
for adversarial large scale problems", NeurIPS 2019), and the baselines it is compared with.

Kernel-AWV is the Vovk-Azoury-Warmuth forecaster in a reproducing-kernel Hilbert space H:

    f_t = argmin_{f in H_t}  sum_{s<t} (y_s - f(x_s))^2 + lam ||f||^2 + f(x_t)^2,   y_hat_t = f_t(x_t)

with H_t = H (exact, O(t^2) per round) or a subspace of it (PKAWV).  Dropping the f(x_t)^2 term gives
(projected) kernel ridge regression, what the paper's real-data curves show: every model here has
``mode="vaw"`` (the forecaster above, the default) and ``mode="ridge"``.  Both give the same sign,
so the same classification decisions, on the same subspace (the AWV prediction is the ridge one
divided by 1 + the leverage of x_t).

All kernels are Gaussian, k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)) (sigma as in the paper; sklearn's
gamma is 1 / (2 sigma^2)), and the defaults (sigma = 1, lam = 1) assume inputs scaled to [-1, 1]^d.

=====================  ============================================  ==========================
model                  subspace                                      cost per round
=====================  ============================================  ==========================
``TaylorAWV``          span of the C(M + d, d) Taylor functions      O(r^2), r = C(M + d, d)
``NystromAWV``         span of k(x_j, .), x_j chosen online by KORS  O(m^2 + m d); insertions
                                                                     O(t (m + d))
``BeforehandNystromAWV`` span of k(c_j, .), centres given in advance   O(m^2 + m d)
``FixedEmbeddingAWV``  span of a user's feature map phi               O(r^2) + phi
``KernelAWV``          H (exact)                                     O(t^2 + t d)
``FOGD``               (baseline) OGD on D random Fourier features   O(D d)
``ProsNKons``          (baseline) kernel ONS on a KORS dictionary,   O(m^2 + m d)
                       restarted when it grows
=====================  ============================================  ==========================
"""
from __future__ import annotations

import copy
import math
import warnings

import numpy as np

from fastomkl._core.combiners.meta import EWA, Single, VAWCombiner
from fastomkl._core.engine import Engine
from fastomkl._core.steps import ENSEMBLE, ENSEMBLE_STEPS, SCHEDULES
from fastomkl._core.experts.kernel_awv import KernelAWVExperts
from fastomkl._core.experts.models import ModelExperts
from fastomkl._core.experts.nystrom import NystromExperts
from fastomkl._core.combiners.hedge import ScaledHedge
from fastomkl._core.experts.pros_n_kons import ProsNKonsExperts
from fastomkl._core.experts.vaw import VAWExperts
from fastomkl._core.features.embedding import IdentityFeatures, NullFeatures, NystromFeatures
from fastomkl._core.features.rff import RFFBank
from fastomkl._core.features.taylor import TaylorBank, n_taylor_features
from fastomkl._core.losses import LOSSES
from fastomkl._estimator import BinaryClassifier, OnlineEstimator
from fastomkl._estimator.params import (Array, Boolean, Function, Interval, OneKernel, Options,
                                        RandomState, Range, Regressors, take_renamed,
                                        with_standardize_target)
from fastomkl._rff_models import (AUTO_STEP, MAX_COMPONENTS, OGD_STEP, StepEnsembleCombiner,
                                  STEP_PARAMETERS, auto, check_steps, ogd_experts)
from fastomkl._validation import MAX_ABS_INPUT, check_float, check_int, check_sample
from fastomkl.features import draw_frequencies
from fastomkl.kernels import Gaussian
from fastomkl.vaw import FORGET

KORS_WEIGHTS = ("sqrt", "inverse")

__all__ = ["TaylorAWV", "TaylorAWVClassifier", "NystromAWV", "NystromAWVClassifier",
           "KernelAWV", "KernelAWVClassifier", "FOGD", "FOGDClassifier",
           "BeforehandNystromAWV", "BeforehandNystromAWVClassifier", "kors_centres", "ProsNKons",
           "ProsNKonsClassifier", "FixedEmbeddingAWV", "FixedEmbeddingAWVClassifier", "Mixture",
           "taylor_degree_theory"]

MODES = ("vaw", "ridge")
# Above this many features a round (r^2 flops, r^2 / 2 doubles of state) gets slow: warn; beyond
# the second bound the packed inverse alone would pass 400 MB: refuse.
LARGE_BASIS = 5000
MAX_BASIS = 10_000


def taylor_degree_theory(n: int, lam: float, radius: float, sigma: float) -> int:
    """The degree M of Theorem 4, ceil(max(8 R^2 / sigma^2, 2 log(n / min(lam, 1)))), with which
    TaylorAWV's regret is within 3/2 of exact Kernel-AWV's bound on inputs of norm <= R.

    Documentation only: it is large in practice (64 for 8 inputs in [-1, 1] and sigma = 1); the
    paper's experiments use M in {2, 3, 4}.
    """
    n = check_int(n, "n", 1)
    lam = check_float(lam, "lam", 0.0, strict=True)
    radius = check_float(radius, "radius", 0.0)
    sigma = check_float(sigma, "sigma", 0.0, strict=True)
    return int(np.ceil(max(8.0 * radius ** 2 / sigma ** 2, 2.0 * np.log(n / min(lam, 1.0)))))


# Declared parameters (fastomkl._estimator.params): the Gaussian kernel of every exact or
# Nystrom model (``sigma`` in earlier releases), and ridges that keep every factor and inverse
# finite and every saved file loadable.
GAUSSIAN = [None, OneKernel(("Gaussian",))]
RIDGE = [Interval("real", 1e-8, 1e8)]
POSITIVE = Interval("real", 0.0, 1e8, closed="right")
_AWV_PARAMETERS = {"kernel": GAUSSIAN, "lam": RIDGE, "mode": [Options(*MODES)]}
# TaylorAWV's and KernelAWV's lam="auto" (see their docstrings): with centred labels, the best
# lam of {1e-4, ..., 1} over bench/defaults.py's streams in both orders was 1e-4 for regression
# (low-noise data want little ridge) and 0.01 for classification (-1/+1 labels of overlapping
# classes want more).  Files written before centring existed learnt the labels as they came.
AWV_LAMS = {"regressor": 1e-4, "classifier": 0.01}
# lam="ensemble": three forecasters whose ridges span the best lams of those streams, mixed by
# exponential weights at AWV_ENSEMBLE_RATE over the running variance of the targets (ScaledHedge:
# squared losses in standardised units).  Chosen on the same protocol from the mixtures of every
# three ridges of {1e-4, ..., 1} (the regressors' and the classifiers' best triples differ: 0.1 and
# 1 are what noisy -1/+1 labels want); measured: worst ratio to the best single lam 1.10 / 1.07
# (TaylorAWV) and 1.07 / 1.08 (KernelAWV), recorded / shuffled.
AWV_ENSEMBLE_LAMS = {"regressor": (1e-4, 1e-2, 0.1), "classifier": (1e-3, 0.1, 1.0)}
AWV_ENSEMBLE_RATE = 1.0
_UNCENTRED = {"center": False}
_AUTO_OR_RIDGE = [Options("auto", "ensemble"), *RIDGE]


_LAM_DOC = """    lam : "ensemble", "auto" or float, default "ensemble"
        Ridge parameter lambda (> 0).  No single lam suits every stream: over bench/defaults.py's
        streams the best of {{1e-4, ..., 1}} ranges from 1e-4 to 1.  "ensemble" runs three
        forecasters, lam 1e-4, 0.01 and 0.1 for the regressor, 1e-3, 0.1 and 1 for the
        classifier (``AWV_ENSEMBLE_LAMS``), on the same {inputs}, and mixes their predictions by
        exponential weights on their squared losses over the running variance of the targets
        (rate 1: the same in any units of y); a round costs {cost} times one forecaster's.
        Worst ratio to the best lam of each stream, in recorded and shuffled order: {ensemble}
        (bench/results/defaults_orders.md).  "auto" is one forecaster, lam 1e-4 for the
        regressor and 0.01 for the classifier (``AWV_LAMS``, the single best over those
        streams): {auto}.  The paper's setting is 1 (up to {paper} on uncentred labels).
"""
_CENTER_DOC = """    center : bool, default True
        Learn each label less the running mean of the labels with it, and add the mean of those
        before to every prediction (the engine's ``center_target``; a regressor's labels are
        winsorised first, as in every regressor): an intercept the features lack, so a constant
        added to the labels moves every prediction after the first by that constant, and, least
        squares being equivariant in the labels' scale, the model learns in the units it is
        given.  False learns the labels as they come, as the paper (and files written before
        the parameter existed).
"""


class _CentredAWV:
    """TaylorAWV's and KernelAWV's shared settings: the ridges and label centring."""

    def _ridges(self) -> tuple:
        """The forecasters' ridges: lam, or under "auto" ``AWV_LAMS``' value for the model's
        task, or under "ensemble" ``AWV_ENSEMBLE_LAMS``'."""
        task = "classifier" if isinstance(self, BinaryClassifier) else "regressor"
        if self.lam == "ensemble":
            return AWV_ENSEMBLE_LAMS[task]
        if self.lam == "auto":
            return (AWV_LAMS[task],)
        return (float(self.lam),)

    @staticmethod
    def _combiner(n_ridges: int):
        """One forecaster as it is, or the ridge ensemble's exponential weights."""
        return ScaledHedge(n_ridges, AWV_ENSEMBLE_RATE) if n_ridges > 1 else Single(1)

    @property
    def ridge_weights_(self) -> np.ndarray:
        """(n_ridges,) the weights of the forecasters of each ridge (``lam="ensemble"``; one
        forecaster: [1.0]), in the order of ``AWV_ENSEMBLE_LAMS``."""
        combiner = self._fitted_engine().combiner
        return np.array(combiner.w_bar) if isinstance(combiner, ScaledHedge) else np.ones(1)
_SIGMA = {"sigma": ("kernel", lambda sigma, model: Gaussian(sigma))}


class _OneKernel:
    """Models of one kernel: ``kernel`` (None: Gaussian(1))."""

    @property
    def kernel_(self):
        """The kernel in use."""
        return Gaussian(1.0) if self.kernel is None else self.kernel

    @property
    def _sigma(self) -> float:
        return self.kernel_.sigma


class _TaylorAWVBase(_CentredAWV, _OneKernel):
    _parameter_constraints = {**_AWV_PARAMETERS, "lam": _AUTO_OR_RIDGE,
                              "degree": [Interval("int", 0, 32)],
                              "refresh_every": [Interval("int", 0, 2 ** 62)], "forget": FORGET,
                              "center": [Boolean()]}
    _renamed_parameters = _SIGMA
    _defaults_of_older_files = _UNCENTRED

    def __init__(self, kernel=None, degree=2, lam="ensemble", mode="vaw", refresh_every=0,
                 forget=1.0, center=True, **renamed):
        self.kernel = kernel
        self.degree = degree
        self.lam = lam
        self.mode = mode
        self.refresh_every = refresh_every
        self.forget = forget
        self.center = center
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"kernel": Gaussian(1.0)}, {"kernel": Gaussian(0.5), "degree": 3, "mode": "ridge",
                                            "refresh_every": 4},
                {"kernel": Gaussian(1.0), "lam": "auto"}, {"kernel": Gaussian(0.5), "forget": 0.97}]

    def _check_params(self) -> dict:
        return {"sigma": self._sigma, "degree": self.degree, "lams": self._ridges(),
                "mode": self.mode, "refresh_every": self.refresh_every,
                "forget": float(self.forget), "center": bool(self.center)}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        r = n_taylor_features(n_features, config["degree"])
        if r > MAX_BASIS:
            raise ValueError(f"degree {config['degree']} on {n_features} inputs gives {r} Taylor "
                             f"features, more than {MAX_BASIS} (an r x r inverse per model): "
                             f"lower the degree")
        n = len(config["lams"])
        if r > LARGE_BASIS:
            each = f" for each of the {n} forecasters of lam='ensemble'" if n > 1 else ""
            warnings.warn(f"{type(self).__name__}: degree {config['degree']} on {n_features} "
                          f"inputs gives {r} Taylor features; a round costs about {r}^2 flops"
                          f"{each}", RuntimeWarning, stacklevel=4)
        bank = TaylorBank(n_features, config["degree"], [config["sigma"]])
        experts = VAWExperts(n, bank.n_outputs, config["lams"], config["mode"],
                             config["refresh_every"], forget=config["forget"], per_kernel=n)
        return Engine(bank, experts, self._combiner(n), round_bit_generator,
                      center_target=config["center"])

    def _implied_state_size(self, n_features: int) -> int:
        """Doubles the engine allocates when it is built: per ridge, the packed r x r inverse
        (and as much for S when it is kept) and r-vectors (checked by ``load`` before
        building)."""
        r = math.comb(check_int(self.degree, "degree", 0, 32) + n_features, n_features)
        keeps_gram = self.refresh_every or self.forget < 1
        return len(self._ridges()) * (r * (r + 1) // 2 * (2 if keeps_gram else 1) + 4 * r)

    @property
    def n_taylor_features_(self) -> int:
        """r = C(degree + d, d), the number of Taylor features."""
        return self._fitted_engine().features.n_outputs

    @property
    def coef_(self) -> np.ndarray:
        """(r,) current weights A^{-1} b on the Taylor features (the ridge weights; under
        ``lam="ensemble"`` the forecasters' weights mixed by ``ridge_weights_``: the linear model
        the prediction's ridge part uses)."""
        return self.ridge_weights_ @ self._fitted_engine().experts.coef_

    def taylor_features(self, X) -> np.ndarray:
        """(n, r) Taylor features of the rows of X, exactly as the model computes them."""
        from fastomkl._core.features.rff import transform_many
        from fastomkl._validation import check_matrix
        engine = self._fitted_engine()
        X = check_matrix(X, engine.n_features)
        out = np.zeros((X.shape[0], 1, engine.features.n_outputs))
        transform_many(engine.features, X, out)
        return out[:, 0]


_TAYLOR_DOC = """
    Linear AWV on the degree-M Taylor features of the Gaussian kernel (section 3.1 of the paper):
    the r = C(M + d, d) functions g_k(x) = exp(-||x||^2 / (2 sigma^2)) prod_i (x_i / sigma)^{k_i} /
    sqrt(k_i!), |k| <= M, are orthonormal in the kernel's RKHS, so this is Kernel-AWV restricted to
    their span.  Features cost O(r + d) per sample; the forecaster keeps the packed inverse of
    lam I + sum z z^T by Sherman-Morrison (one packed symmetric matrix-vector product and one
    rank-one update per round, O(r^2)).  With d = 18 and M = 2 (the paper's SUSY run) r = 190.

    Parameters
    ----------
    kernel : Gaussian, default None
        The kernel k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)); None is ``Gaussian(1.0)``.
        (Formerly ``sigma``, a number: still accepted, with a FutureWarning.)
    degree : int, default 2
        M, the largest total degree of the Taylor features (the paper's experiments: 2, 3, 4;
        ``taylor_degree_theory`` gives Theorem 4's value).  A warning is issued above 5000 features.
{lam_doc}    mode : {"vaw", "ridge"}, default "vaw"
        "vaw": PKAWV (x_t enters the Gram matrix before predicting); "ridge": projected kernel
        ridge regression (the paper's real-data curves).
{center_doc}    refresh_every : int, default 0
        When > 0, recompute the inverse from a Cholesky factorisation every that many rounds
        (see ``fastomkl.VAW``).
    forget : float in (0, 1], default 1.0
        Forgetting factor gamma for streams that drift: discounted least squares, a round seen
        `age` rounds ago weighs gamma^age (half-life ln 2 / -ln gamma rounds) while the ridge
        keeps its weight (see ``fastomkl.VAW``).  1 (the paper's setting) forgets nothing.

    Attributes
    ----------
    n_taylor_features_ : int
        r = C(degree + d, d).
    coef_ : ndarray (r,)
        Current ridge weights on the Taylor features.
    ridge_weights_ : ndarray (n_ridges,)
        The weights of the ensemble's forecasters (``lam="ensemble"``; [1.0] for one).
""".replace(
    "{lam_doc}", _LAM_DOC.format(inputs="Taylor features", ensemble="1.10 and 1.07", cost="3",
                                 auto="1.26 and 1.40", paper=2.16)).replace(
    "{center_doc}", _CENTER_DOC)


class TaylorAWV(_TaylorAWVBase, OnlineEstimator):
    __doc__ = ("PKAWV with Taylor features of the Gaussian kernel (regression).\n" + _TAYLOR_DOC
               + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, TaylorAWV
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = TaylorAWV(kernel=Gaussian(0.5), degree=6).fit(X, y)
    >>> model.n_taylor_features_, model.coef_.shape, model.score(X, y) > 0.8
    (28, (28,), True)
    """)


class TaylorAWVClassifier(_TaylorAWVBase, BinaryClassifier):
    __doc__ = ("PKAWV with Taylor features of the Gaussian kernel, as a binary classifier: it "
               "learns the square loss on labels coded -1/+1 and predicts the sign.\n" + _TAYLOR_DOC
               + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, TaylorAWVClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = TaylorAWVClassifier(kernel=Gaussian(0.5), degree=4).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)


# The dictionary budget by default, and the inputs kept for insertions per centre of the budget.
DEFAULT_MAX_CENTRES = 500
INPUTS_PER_CENTRE = 10


# NystromAWV's defaults: the ridge lam of the paper (1) was up to 1.9x the error of the best lam of
# {1e-4, 1e-3, 0.01, 0.1, 1} on the shipped and drifting streams of bench/defaults.py, 1e-3 within
# 1.19 in either order; KORS's mu stays 1 (the paper's mu = lam = 1: "auto" follows lam), since
# mu = 1e-3 attempts many more insertions, each O(t (m + d)) (naval: 19 against 6 us a round).
NYSTROM_LAM = 1e-3
NYSTROM_MU = 1.0


class _NystromAWVBase(_OneKernel):
    _parameter_constraints = {**_AWV_PARAMETERS, "mu": ["auto", None, POSITIVE],
                              "beta": [POSITIVE], "eps": [Interval("real", 0.0, 1e8)],
                              "kors_weights": [Options(*KORS_WEIGHTS)],
                              "max_centres": [None, Interval("int", 1, 1_000_000)],
                              "cache_kernel": [Boolean()], "random_state": [RandomState()]}
    _renamed_parameters = _SIGMA

    def __init__(self, kernel=None, lam=NYSTROM_LAM, mode="vaw", mu=NYSTROM_MU, beta=1.0, eps=0.5,
                 kors_weights="sqrt", max_centres=DEFAULT_MAX_CENTRES, cache_kernel=True,
                 random_state=None,
                 **renamed):
        self.kernel = kernel
        self.lam = lam
        self.mode = mode
        self.mu = mu
        self.beta = beta
        self.eps = eps
        self.kors_weights = kors_weights
        self.max_centres = max_centres
        self.cache_kernel = cache_kernel
        self.random_state = random_state
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"kernel": Gaussian(1.0), "random_state": 0},
                {"kernel": Gaussian(0.5), "mode": "ridge", "mu": 0.1, "max_centres": 3,
                 "cache_kernel": False, "kors_weights": "inverse", "random_state": 0}]

    def _check_params(self) -> dict:
        lam = float(self.lam)
        return {"sigma": self._sigma, "lam": lam, "mode": self.mode,
                "mu": lam if auto(self.mu) == "auto" else float(self.mu),
                "beta": float(self.beta), "eps": float(self.eps),
                "kors_weights": self.kors_weights,
                "max_centres": 0 if self.max_centres is None else self.max_centres,
                "cache_kernel": bool(self.cache_kernel)}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        experts = NystromExperts(n_features, config["sigma"], config["lam"], config["mode"],
                                 config["mu"], config["beta"], config["eps"],
                                 config["kors_weights"], config["max_centres"],
                                 config["cache_kernel"],
                                 max_inputs=INPUTS_PER_CENTRE * config["max_centres"])
        return Engine(NullFeatures(1, n_features), experts, Single(1), round_bit_generator,
                      bool(getattr(self, "standardize_target", False)))

    @property
    def n_centres_(self) -> int:
        """m, the size of the dictionary."""
        return self._fitted_engine().experts.n_centres

    @property
    def budget_reached_(self) -> bool:
        """True once the dictionary is frozen (``max_centres`` centres, or 10 ``max_centres``
        inputs stored): the model then learns on it with flat memory and cost per sample."""
        return bool(self._fitted_engine().experts.budget_reached)

    @property
    def dictionary_(self) -> np.ndarray:
        """(m,) the rounds (counted from 0 over everything learnt) whose inputs are the centres."""
        return self._fitted_engine().experts.dictionary

    @property
    def centres_(self) -> np.ndarray:
        """(m, d) the centres x_j."""
        experts = self._fitted_engine().experts
        return np.array(experts.get_state()["centres"])


_NYSTROM_DOC = """
    PKAWV on a sequential Nystrom dictionary (section 3.2 and Algorithm 2 of the paper): the model
    lives in the span of k(x_j, .) over past inputs x_j that KORS (kernel online row sampling)
    keeps with probability min(beta (1 + eps) e / (e + mu), 1), e the posterior variance of x_t
    given the (weighted) dictionary.  The dictionary only grows (up to ``max_centres``); a new
    centre borders the Cholesky factor of K_{t,I}^T K_{t,I} + lam K_II, which every round also
    updates by the new row, so a round costs O(m^2 + m d) (two triangular solves and one rank-one
    Cholesky update).  Until the dictionary is frozen every input is kept (O(t d) memory): an insertion needs K_{t,I}^T k(X_t, x_t), its kernel column against
    all of them.  With ``cache_kernel=True`` (the default, as the authors' code) K_{t,I} is kept,
    O(t m) more memory, and an insertion costs O(t (m + d)); with False, memory beyond the inputs
    is O(m^2) and an insertion recomputes the rows of K_{t,I}, O(t m d).  Attempts the
    dependence guard refuses cost as much as insertions (on casp, 916 refusals for 11 centres
    over 40,000 rounds: 1.6 s cached, 7.6 s without the cache, with 6.7 MB against 3.2 MB).

    The prediction at x_t uses the dictionary of the previous round; KORS runs after it (predict
    draws nothing).  For mode "ridge" this is the paper's order; for "vaw" it defers the paper's
    change of basis by one round.

    Parameters
    ----------
    kernel : Gaussian, default None
        The kernel k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)); None is ``Gaussian(1.0)``.
        (Formerly ``sigma``, a number: still accepted, with a FutureWarning.)
    lam : float, default 0.001
        Ridge parameter lambda.  The paper's lam = 1 (with mu = lam, ``lam=1.0, mu="auto"``) was
        1.3-1.9x the error of the best lam of {1e-4, 1e-3, 0.01, 0.1, 1} on half the shipped and
        drifting streams of ``bench/defaults.py`` in either order; 0.001 is within 1.2x on
        every one (1.19 at worst, ``bench/results/defaults_orders.md``).
    mode : {"vaw", "ridge"}, default "vaw"
        PKAWV or projected kernel ridge regression (the paper's real-data curves).
    mu : "auto" or float, default 1.0
        KORS regulariser (the paper's mu); "auto" is ``lam`` (the paper).  Smaller keeps more
        centres and attempts more insertions, each O(t (m + d)): with the default lam, "auto"
        costs about three times as much per round.
    beta : float, default 1.0
        KORS oversampling factor (the paper's experiments: 1; its theory 12 log(n / delta)).
    eps : float, default 0.5
        KORS accuracy parameter.
    kors_weights : {"sqrt", "inverse"}, default "sqrt"
        Weight of a kept centre: 1 / sqrt(p) (unbiased leverage sampling) or 1 / p (the authors'
        code, for reproduction; about half as many centres).
    max_centres : int or None, default 500
        The dictionary's budget.  It is frozen once it holds ``max_centres`` centres, or once
        10 ``max_centres`` inputs are stored (an insertion needs every stored input); from then
        on no input is stored, KORS stops, and every round still updates the forecaster on the
        frozen dictionary (R and h take its row, as between two insertions), so memory
        (O(m^2 + 10 max_centres (d + m))) and the cost per sample (O(m d + m^2)) stay flat.  A
        ``BudgetWarning`` says when it froze and ``budget_reached_`` says so after.  None: the
        paper's dictionary, growing for ever, with every input kept.
    cache_kernel : bool, default True
        Keep the matrix K_{t,I} of every input against the centres (as the authors' code does):
        faster insertions; False bounds the memory beyond the inputs by O(m^2).
    random_state : None, int, SeedSequence or Generator
        Seeds the KORS draws (the model's round stream; the global NumPy state is never touched).

    Attributes
    ----------
    n_centres_ : int
    budget_reached_ : bool
        Whether the dictionary is frozen (see ``max_centres``).
    dictionary_ : ndarray (m,)
        Rounds whose inputs became centres.
    centres_ : ndarray (m, d)
"""


_STANDARDIZE_DOC = """
    standardize_target : bool, default True
        Learn the targets standardised online, (y - mean) / std of the targets seen so far (each
        winsorised first: after 10 targets, one beyond 8 sd of the mean enters as mean +- 8 sd,
        as in every regressor), and map the predictions back, as the gradient-based regressors
        do under ``eta="auto"``: the ridge lam and the prior mean 0 then mean the same whatever
        the units of y (on scikit-learn's diabetes, y in 25 ... 346, raw units leave the model
        predicting near 0 for hundreds of rounds).  False learns y in its raw units, as the paper.
    random_state :"""


class NystromAWV(_NystromAWVBase, OnlineEstimator):
    __doc__ = "PKAWV with a KORS Nystrom dictionary (regression).\n" + _NYSTROM_DOC.replace(
        "\n    random_state :", _STANDARDIZE_DOC, 1) + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, NystromAWV
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = NystromAWV(kernel=Gaussian(0.5), lam=0.1, random_state=0).fit(X, y)
    >>> 0 < model.n_centres_ < len(X), model.score(X, y) > 0.8
    (True, True)
    """
    _parameter_constraints, __init__, _defaults_of_older_files = with_standardize_target(
        _NystromAWVBase._parameter_constraints, _NystromAWVBase)

    @classmethod
    def _unit_test_params(cls):
        return [*super()._unit_test_params(),
                {"kernel": Gaussian(1.0), "standardize_target": False, "random_state": 0}]


class NystromAWVClassifier(_NystromAWVBase, BinaryClassifier):
    __doc__ = ("PKAWV with a KORS Nystrom dictionary, as a binary classifier (square loss on "
               "labels coded -1/+1, prediction by sign).\n" + _NYSTROM_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, NystromAWVClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = NystromAWVClassifier(kernel=Gaussian(0.5), lam=0.1, random_state=0).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)


class _KernelAWVBase(_CentredAWV, _OneKernel):
    _parameter_constraints = {**_AWV_PARAMETERS, "lam": _AUTO_OR_RIDGE,
                              "max_samples": [None, Interval("int", 1, 1_000_000)],
                              "center": [Boolean()]}
    _renamed_parameters = _SIGMA
    _defaults_of_older_files = _UNCENTRED

    def __init__(self, kernel=None, lam="ensemble", mode="vaw", max_samples=1000, center=True,
                 **renamed):
        self.kernel = kernel
        self.lam = lam
        self.mode = mode
        self.max_samples = max_samples
        self.center = center
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"kernel": Gaussian(1.0)}, {"kernel": Gaussian(0.5), "mode": "ridge",
                                            "max_samples": 500},
                {"kernel": Gaussian(1.0), "lam": "auto", "max_samples": 20}]

    def _check_params(self) -> dict:
        return {"sigma": self._sigma, "lams": self._ridges(), "mode": self.mode,
                "max_samples": 0 if self.max_samples is None else self.max_samples,
                "center": bool(self.center)}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        experts = KernelAWVExperts(n_features, config["sigma"], config["lams"], config["mode"],
                                   config["max_samples"])
        return Engine(NullFeatures(1, n_features), experts, self._combiner(len(config["lams"])),
                      round_bit_generator, center_target=config["center"])

    @property
    def budget_reached_(self) -> bool:
        """True once the model holds ``max_samples`` inputs: each round then drops the oldest."""
        return bool(self._fitted_engine().experts.budget_reached)


_KERNEL_DOC = """
    Exact Kernel-AWV (eq. 3 of the paper) or exact online kernel ridge regression: the baseline
    PKAWV approximates.  A round solves one triangular system with the Cholesky factor of
    K + lam I over every past input and borders it with the new one: O(t^2 + t d) time and
    O(t^2) memory at round t.

    Parameters
    ----------
    kernel : Gaussian, default None
        The kernel k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)); None is ``Gaussian(1.0)``.
        (Formerly ``sigma``, a number: still accepted, with a FutureWarning.)
{lam_doc}    mode : {"vaw", "ridge"}, default "vaw"
        Kernel-AWV (the paper's adversarial baseline) or KRR (its real-data baseline).
{center_doc}    max_samples : int or None, default 1000
        The most inputs kept: once full, the model is exact Kernel-AWV on the last
        ``max_samples`` inputs, the oldest leaving as each new one joins (its factor downdated
        exactly, in one pass that also updates the round's solves: O(max_samples^2) per round,
        about 2 ms a sample at 1,000 inputs and three ridges), so memory (8 max_samples^2 bytes: 8
        MB a ridge) and the cost per sample stay flat; a ``BudgetWarning`` says when it fills and
        ``budget_reached_`` says so after.  None keeps every input (the paper's setting: O(t^2)
        memory and time at round t).
""".replace(
    "{lam_doc}", _LAM_DOC.format(inputs="inputs", ensemble="1.07 and 1.08", cost="about 3",
                                 auto="1.73 and 1.45", paper=2.13)).replace(
    "{center_doc}", _CENTER_DOC)


class KernelAWV(_KernelAWVBase, OnlineEstimator):
    __doc__ = ("Exact Kernel-AWV / kernel ridge regression, online (regression).\n" + _KERNEL_DOC
               + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, KernelAWV
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = KernelAWV(kernel=Gaussian(0.5), lam=0.1).fit(X, y)
    >>> model.score(X, y) > 0.8
    True
    """)


class KernelAWVClassifier(_KernelAWVBase, BinaryClassifier):
    __doc__ = ("Exact Kernel-AWV / kernel ridge regression as a binary classifier (square loss "
               "on labels coded -1/+1).\n" + _KERNEL_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, KernelAWVClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = KernelAWVClassifier(kernel=Gaussian(0.5), lam=0.1).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)


# FOGD's ensemble members whose steps decay: c / sqrt(t) for these c (``_FOGDBase._experts``).
FOGD_DECAYING_STEPS = (0.25, 2.0)


class _FOGDBase(StepEnsembleCombiner, _OneKernel):
    _standardize = True
    _parameter_constraints = {"kernel": [None, OneKernel()],
                              "n_components": [Interval("int", 1, MAX_COMPONENTS)],
                              "eta": OGD_STEP,
                              "eta_schedule": STEP_PARAMETERS["eta_schedule"],
                              "random_state": [RandomState()]}
    _renamed_parameters = _SIGMA

    def __init__(self, kernel=None, n_components=1000, eta="ensemble", eta_schedule="constant",
                 random_state=None, **renamed):
        self.kernel = kernel
        self.n_components = n_components
        self.eta = eta
        self.eta_schedule = eta_schedule
        self.random_state = random_state
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"kernel": Gaussian(1.0), "n_components": 8, "random_state": 0},
                {"n_components": 8, "eta": 0.5, "eta_schedule": "inv_sqrt", "random_state": 0},
                {"n_components": 8, "eta": "auto", "random_state": 0}]

    def _check_params(self) -> dict:
        config = {"kernel": self.kernel_, "n_components": self.n_components}
        config.update(check_steps(self.eta, self.eta_schedule, LOSSES["squared"]))
        config["loss"] = LOSSES["squared"]        # on -1/+1 labels too, as the paper ran it
        return config

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        bank = RFFBank(draw_frequencies([config["kernel"]], config["n_components"],
                                        n_features, feature_rng))
        experts = self._experts(config, bank.n_outputs)
        combiner = (self._ensemble_combiner(experts.n_experts, config["loss"])
                    if experts.per_kernel > 1 else Single(1))
        return Engine(bank, experts, combiner, round_bit_generator,
                      config["standardize"] and self._standardize)

    def _experts(self, config: dict, dim: int):
        """One linear model per step rule on the features.  Under eta="ensemble", with one kernel
        there is no other kernel's weight to lean on when the data want a step that decays, so
        the constant steps are joined by eta="auto"'s AdaGrad-norm member (naval in recorded
        order: 1.37 of the best grid point without it, 1.19 with it) and by the steps
        FOGD_DECAYING_STEPS / sqrt(t), the schedule of the best grid point on most shuffled
        streams (geometric mean over bench/defaults.py's shuffled cells 1.009 -> 0.997, recorded
        order 0.990 -> 0.982).  A file written before those two members keeps its four."""
        if config["eta"][1] != ENSEMBLE:
            return ogd_experts(config, 1, dim, 0.0)
        decaying = () if self._from_file("constant_steps") else FOGD_DECAYING_STEPS
        steps = list(config["steps"]) + list(decaying)
        return ogd_experts(config, 1, dim, 0.0, steps=steps, adagrad_scale=AUTO_STEP,
                           schedules=[SCHEDULES["constant"]] * len(config["steps"])
                           + [SCHEDULES["inv_sqrt"]] * len(decaying))

    def _layout_in_file(self, arrays: dict) -> dict:
        layout = super()._layout_in_file(arrays)
        theta = arrays.get("experts.theta")
        if (self.eta == "ensemble" and theta is not None
                and theta.shape[0] == len(ENSEMBLE_STEPS) + 1):
            layout["constant_steps"] = True
        return layout

    @property
    def coef_(self) -> np.ndarray:
        """(2 D,) current weights theta on the normalised features [cos(U x); sin(U x)] / sqrt(D)
        (under ``eta="ensemble"`` the members' weights averaged with their mixture weights:
        the linear model the prediction uses)."""
        engine = self._fitted_engine()
        theta = np.asarray(engine.experts.theta)
        if engine.experts.per_kernel == 1:
            return np.array(theta[0])
        return self._member_weights() @ theta


_FOGD_DOC = """
    Fourier online gradient descent (Lu et al. 2016), the paper's random-feature baseline: online
    gradient descent on the square loss over z(x) = [cos(U x); sin(U x)] / sqrt(D), the rows of U
    drawn from N(0, I / sigma^2), so z(x).z(x') estimates the Gaussian kernel.  The authors' code
    keeps w = sqrt(D) theta and predicts w.[cos; sin] / D: the same predictions.  O(D d) per round.

    Parameters
    ----------
    kernel : Kernel, default None
        The kernel whose random Fourier features the model learns on (any shift-invariant
        kernel of ``fastomkl.kernels``); None is ``Gaussian(1.0)``, the paper's.  (Formerly
        ``sigma``, a Gaussian bandwidth: still accepted, with a FutureWarning.)
    n_components : int, default 1000
        D, the number of random frequencies (2 D features), the paper's setting.
    eta : "ensemble", "auto", "adagrad" or float, default "ensemble"
        Step size.  "ensemble": six models on the same features, three with the constant steps
        2^-4, 2^-2 and 1, two with the steps 0.25 / sqrt(t) and 2 / sqrt(t) (truncated: a step
        lands on the target at most, as ``Raker``'s) and one with "auto"'s AdaGrad-norm steps
        (with one kernel, nothing else can follow data that want a decaying step), mixed by
        ML-Poly on the loss's tangent (``fastomkl._rff_models.StepEnsembleCombiner``: each
        member weighed by its regret to the mixture, no rate to choose), targets standardised
        online; at most 1.15x the best point of a step grid on the shipped and drifting streams
        in recorded order and 1.08x shuffled (geometric means 0.98 and 1.00), where "auto" is
        3.69x and 1.30x (bench/results/defaults_orders.md; the three constant steps alone:
        1.37x on naval).  1.27x the cost per sample of the four members before the decaying
        two (elevators, D = 1000).
        "auto" (or "adagrad", the former default): truncated AdaGrad-norm steps, targets
        standardised online.  A number is the paper's step, theta <- theta - eta 2 (y_hat - y) z:
        the paper uses eta = 1 / sqrt(n) for a stream of n samples, constant.
    eta_schedule : {"constant", "inv_sqrt"}, default "constant"
        Schedule of a numeric ``eta``.
    random_state : None, int, SeedSequence or Generator
        Seeds the frequencies.
"""


class FOGD(_FOGDBase, OnlineEstimator):
    __doc__ = ("FOGD: online gradient descent on random Fourier features (regression).\n"
               + _FOGD_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, FOGD
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = FOGD(kernel=Gaussian(0.5), n_components=50, random_state=0).fit(X, y)
    >>> model.score(X, y) > 0.8
    True
    """)


class FOGDClassifier(_FOGDBase, BinaryClassifier):
    __doc__ = ("FOGD as a binary classifier: the square loss on labels coded -1/+1, as the paper "
               "ran it.\n" + _FOGD_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, FOGDClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = FOGDClassifier(kernel=Gaussian(0.5), n_components=50, random_state=0).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)
    _standardize = False


def kors_centres(X, kernel=None, mu=1.0, beta=1.0, eps=0.5, kors_weights="sqrt",
                 max_centres=None, random_state=None) -> np.ndarray:
    """The centres one KORS pass over the rows of X keeps (the dictionary of ``NystromAWV`` with
    the same parameters), for ``BeforehandNystromAWV`` when the inputs are known in advance.

    Returns
    -------
    ndarray (m, d)
    """
    X = np.asarray(X, dtype=np.float64)
    model = NystromAWV(kernel=kernel, mu=mu, beta=beta, eps=eps, kors_weights=kors_weights,
                       max_centres=max_centres, random_state=random_state, mode="ridge")
    return model.fit(X, np.zeros(X.shape[0])).centres_


_BEFOREHAND_DOC = """
    Linear AWV on z(x) = L^{-1} k_C(x), L L^T = K_CC (+ jitter): O(m^3) once, then O(m d + m^2)
    per round (kernel row, one triangular solve, one packed symmetric product and rank-one
    update).

    Parameters
    ----------
    centres : array-like (m, d)
        The centres c_j.
    kernel : Gaussian, default None
        The kernel k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)); None is ``Gaussian(1.0)``.
        (Formerly ``sigma``, a number: still accepted, with a FutureWarning.)
    lam : float, default 1.0
        Ridge parameter lambda.
    mode : {"vaw", "ridge"}, default "vaw"
        PKAWV or projected kernel ridge regression.
    jitter : float, default 1e-10
        Added to K_CC's diagonal, relative to its mean diagonal, before the Cholesky factorisation.
"""


# scikit-learn's estimator checks that fit data of widths their own: the centres fix this model's.
_WIDTH_CHECKS = ("check_estimators_overwrite_params", "check_estimators_fit_returns_self",
                 "check_readonly_memmap_input", "check_n_features_in_after_fitting",
                 "check_positive_only_tag_during_fit", "check_estimators_dtypes",
                 "check_regressors_train", "check_regressor_data_not_an_array",
                 "check_estimators_partial_fit_n_features", "check_regressors_no_decision_function",
                 "check_regressors_int", "check_fit2d_1sample", "check_fit2d_1feature",
                 "check_fit_idempotent", "check_fit_check_is_fitted", "check_n_features_in",
                 "check_classifier_data_not_an_array", "check_classifiers_classes",
                 "check_classifiers_train")


class _BeforehandNystromAWVBase(_OneKernel):
    _sklearn_differences = {name: "the centres, given in advance, fix the width of the inputs, "
                                  "and this check fits data of other widths"
                            for name in _WIDTH_CHECKS}
    _parameter_constraints = {"centres": [Array(2)], **_AWV_PARAMETERS,
                              "jitter": [Interval("real", 0.0, 1.0)]}
    _renamed_parameters = _SIGMA

    def __init__(self, centres=None, kernel=None, lam=1.0, mode="vaw", jitter=1e-10, **renamed):
        self.centres = centres
        self.kernel = kernel
        self.lam = lam
        self.mode = mode
        self.jitter = jitter
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls, n_features: int = 3):
        centres = np.linspace(-1.0, 1.0, 4 * n_features).reshape(4, n_features)
        return [{"centres": centres}, {"centres": centres[:2], "kernel": Gaussian(0.5),
                                       "mode": "ridge"}]

    def _check_params(self) -> dict:
        return {"centres": np.array(self.centres, dtype=np.float64), "sigma": self._sigma,
                "lam": float(self.lam), "mode": self.mode, "jitter": float(self.jitter)}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        if config["centres"].shape[1] != n_features:
            raise ValueError(f"centres have {config['centres'].shape[1]} features, X has "
                             f"{n_features}")
        bank = NystromFeatures(config["centres"], config["sigma"], config["jitter"])
        experts = VAWExperts(1, bank.n_outputs, config["lam"], config["mode"])
        return Engine(bank, experts, Single(1), round_bit_generator)


class BeforehandNystromAWV(_BeforehandNystromAWVBase, OnlineEstimator):
    __doc__ = ("PKAWV on a Nystrom subspace fixed in advance (Corollary 8 of the paper): the span "
               "of k(c_j, .) over given centres, e.g. ``kors_centres(X)`` when the inputs are "
               "known beforehand (regression).\n" + _BEFOREHAND_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, BeforehandNystromAWV
    >>> from fastomkl.pkawv import kors_centres
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> centres = kors_centres(X, Gaussian(0.5), mu=0.1, random_state=0)   # inputs known beforehand
    >>> model = BeforehandNystromAWV(centres, kernel=Gaussian(0.5), lam=0.1).fit(X, y)
    >>> len(centres) < len(X), model.score(X, y) > 0.8
    (True, True)
    """)


class BeforehandNystromAWVClassifier(_BeforehandNystromAWVBase, BinaryClassifier):
    __doc__ = ("PKAWV on a Nystrom subspace fixed in advance, as a binary classifier (square loss "
               "on labels coded -1/+1).\n" + _BEFOREHAND_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, BeforehandNystromAWVClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> centres = X[:30]
    >>> model = BeforehandNystromAWVClassifier(centres, kernel=Gaussian(0.5), lam=0.1).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)


_PROS_DOC = """Pros-N-KONS (Calandriello, Lazaric & Valko 2017), the paper's second-order baseline: kernel
    online Newton steps on the square loss in the Nystrom embedding of a KORS dictionary, with
    predictions kept in [-C, C]; every time the dictionary grows the learner restarts (the paper
    blames these restarts for its poor regret on short sequences).  O(m^2 + m d) per round.

    The prediction at x_t uses w_t, already projected on x_t's slab {|w.phi(x_t)| <= C} (proper
    KONS order); the authors' code predicted with the previous round's w.

    Parameters
    ----------
    kernel : Gaussian, default None
        The kernel k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)); None is ``Gaussian(1.0)``.
        (Formerly ``sigma``, a number: still accepted, with a FutureWarning.)
    alpha : float, default 1.0
        Initial curvature (A_0 = alpha I) and KORS regulariser (the paper: alpha = lambda = 1).
    beta : float, default 1.0
        KORS oversampling factor.
    eps : float, default 0.5
        KORS accuracy parameter.
    C : float, default 1.0
        Bound on the predictions (labels in [-1, 1] in the paper's experiments).
    kors_weights : {"sqrt", "inverse"}, default "sqrt"
        As in ``NystromAWV``.
    max_centres : int or None, default 500
        The dictionary's budget: once it holds ``max_centres`` centres it is frozen (no more KORS
        draws, so no more restarts) and the Newton steps go on in its embedding, so memory
        (O(max_centres^2)) and the cost per sample stay flat.  A ``BudgetWarning`` says when it
        froze and ``budget_reached_`` says so after.  None: the dictionary grows for ever (the
        paper's setting; files written before the parameter existed keep it): on a stream of
        40,000 inputs (d = 10) it held 709 centres.
    random_state : None, int, SeedSequence or Generator
        Seeds the KORS draws.

    Attributes
    ----------
    n_centres_ : int
        The dictionary's size m.
    budget_reached_ : bool
        Whether the dictionary is frozen (see ``max_centres``).
"""


class _ProsNKonsBase(_OneKernel):
    _parameter_constraints = {"kernel": GAUSSIAN, "alpha": [Interval("real", 1e-8, 1e8)],
                              "beta": [POSITIVE], "eps": [Interval("real", 0.0, 1e8)],
                              "C": [Interval("real", 0.0, 1e150, closed="right")],
                              "kors_weights": [Options(*KORS_WEIGHTS)],
                              "max_centres": [None, Interval("int", 1, 1_000_000)],
                              "random_state": [RandomState()]}
    _renamed_parameters = _SIGMA
    # files written before the budget existed grew their dictionary for ever
    _defaults_of_older_files = {"max_centres": None}

    def __init__(self, kernel=None, alpha=1.0, beta=1.0, eps=0.5, C=1.0, kors_weights="sqrt",
                 max_centres=DEFAULT_MAX_CENTRES, random_state=None, **renamed):
        self.kernel = kernel
        self.alpha = alpha
        self.beta = beta
        self.eps = eps
        self.C = C
        self.kors_weights = kors_weights
        self.max_centres = max_centres
        self.random_state = random_state
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"kernel": Gaussian(1.0), "random_state": 0},
                {"kernel": Gaussian(0.5), "C": 5.0, "kors_weights": "inverse", "max_centres": 3,
                 "random_state": 0}]

    def _check_params(self) -> dict:
        return {"sigma": self._sigma, "alpha": float(self.alpha), "beta": float(self.beta),
                "eps": float(self.eps), "C": float(self.C), "kors_weights": self.kors_weights,
                "max_centres": 0 if self.max_centres is None else self.max_centres}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        experts = ProsNKonsExperts(n_features, config["sigma"], config["alpha"], config["beta"],
                                   config["eps"], config["C"], config["kors_weights"],
                                   config["max_centres"])
        return Engine(NullFeatures(1, n_features), experts, Single(1), round_bit_generator,
                      bool(getattr(self, "standardize_target", False)))

    @property
    def n_centres_(self) -> int:
        """m, the size of the dictionary."""
        return self._fitted_engine().experts.n_centres

    @property
    def budget_reached_(self) -> bool:
        """True once the dictionary is frozen (``max_centres`` centres)."""
        return bool(self._fitted_engine().experts.budget_reached)


class ProsNKons(_ProsNKonsBase, OnlineEstimator):
    __doc__ = _PROS_DOC.replace("\n    random_state :", _STANDARDIZE_DOC.replace(
        "the ridge lam and the prior mean 0", "the radius C and the prior mean 0"), 1) + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, ProsNKons
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = ProsNKons(kernel=Gaussian(0.5), random_state=0).fit(X, y)
    >>> 0 < model.n_centres_ < len(X), model.score(X, y) > 0.3
    (True, True)
    """
    _parameter_constraints, __init__, _defaults_of_older_files = with_standardize_target(
        _ProsNKonsBase._parameter_constraints, _ProsNKonsBase)

    @classmethod
    def _unit_test_params(cls):
        return [*super()._unit_test_params(),
                {"kernel": Gaussian(1.0), "standardize_target": False, "random_state": 0}]


class ProsNKonsClassifier(_ProsNKonsBase, BinaryClassifier):
    __doc__ = _PROS_DOC + """
    As a binary classifier: the square loss on labels coded -1/+1 (as the paper ran it).

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, ProsNKonsClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = ProsNKonsClassifier(kernel=Gaussian(0.5), random_state=0).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """


class _MappedEngine:
    """An engine on phi(x) for raw inputs x: maps every sample through `phi` (in Python, checked)
    and runs the compiled engine on the result; everything else is the inner engine's."""

    def __init__(self, phi, n_features: int, n_outputs: int, inner):
        self._phi = phi
        self.n_features = n_features
        self._n_outputs = n_outputs
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def map(self, X: np.ndarray) -> np.ndarray:
        try:
            Z = np.ascontiguousarray(self._phi(X), dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"phi failed on the inputs: {exc}") from exc
        if Z.shape != (X.shape[0], self._n_outputs) or not np.all(np.isfinite(Z)):
            raise ValueError(f"phi must return finite values of shape ({X.shape[0]}, "
                             f"{self._n_outputs}), got shape {Z.shape}")
        if Z.size and np.max(np.abs(Z)) > MAX_ABS_INPUT:
            raise ValueError(f"phi returned a feature beyond the accepted range |phi(x)| <= "
                             f"{MAX_ABS_INPUT:g} for these inputs")
        return Z

    def predict_one(self, x):
        return self._inner.predict_one(self.map(check_sample(x, self.n_features)[None])[0])

    def predict_learn_one(self, x, y):
        return self._inner.predict_learn_one(self.map(check_sample(x, self.n_features)[None])[0],
                                             y)

    def predict_many(self, X, out):
        self._inner.predict_many(self.map(np.asarray(X)), out)

    def predict_learn_many(self, X, y, out):
        self._inner.predict_learn_many(self.map(np.asarray(X)), y, out)


_FIXED_EMBEDDING_DOC = """  For a non-orthonormal basis v with Gram matrix Q, pass
    phi(x) = Q^{-1/2} v(x) or L^{-1} v(x).

    phi runs in Python on each batch (one call per ``predict``/``partial_fit``, one per sample in
    the ``*_one`` methods); the forecaster is the compiled VAW expert, O(r^2) per sample.  A model
    with a function parameter cannot be saved to a file (``save`` raises ValueError): keep the
    function in your code and refit, or use a built-in representation.

    Parameters
    ----------
    phi : callable
        Maps an (n, d) array to an (n, r) array of finite features.
    lam : float, default 1.0
        Ridge parameter lambda.
    mode : {"vaw", "ridge"}, default "vaw"
        PKAWV (AWV on the features) or projected ridge regression.
    """


def _squares(X):
    """A small fixed embedding for the tests: the inputs and their squares."""
    return np.hstack([X, X ** 2])


class _FixedEmbeddingAWVBase:
    _parameter_constraints = {"phi": [Function()], "lam": RIDGE, "mode": [Options(*MODES)]}

    def __init__(self, phi=None, lam=1.0, mode="vaw"):
        self.phi = phi
        self.lam = lam
        self.mode = mode

    @classmethod
    def _unit_test_params(cls):
        return [{"phi": _squares}, {"phi": _squares, "mode": "ridge", "lam": 0.1}]

    def _check_params(self) -> dict:
        return {"phi": self.phi, "lam": float(self.lam), "mode": self.mode}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        probe = np.asarray(config["phi"](np.zeros((1, n_features))))
        if probe.ndim != 2 or probe.shape[0] != 1 or probe.shape[1] < 1:
            raise ValueError(f"phi must map (n, d) to (n, r) with r >= 1, got shape {probe.shape}")
        r = probe.shape[1]
        inner = Engine(IdentityFeatures(r), VAWExperts(1, r, config["lam"], config["mode"]),
                       Single(1), round_bit_generator)
        return _MappedEngine(config["phi"], n_features, r, inner)


class FixedEmbeddingAWV(_FixedEmbeddingAWVBase, OnlineEstimator):
    __doc__ = ("PKAWV with a fixed embedding given by the user (Algorithm 1 of the paper): linear "
               "AWV (or ridge) on phi(x), for any feature map whose inner products approximate a "
               "kernel." + _FIXED_EMBEDDING_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import FixedEmbeddingAWV
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> def cubic(X):                                 # the monomials x_0^i x_1^j, i + j <= 3
    ...     return np.stack([X[:, 0] ** i * X[:, 1] ** j
    ...                      for i in range(4) for j in range(4 - i)], axis=1)
    >>> model = FixedEmbeddingAWV(cubic, lam=0.1).fit(X, X[:, 0] ** 3 - X[:, 1])
    >>> model.score(X, X[:, 0] ** 3 - X[:, 1]) > 0.8
    True
    """)


class FixedEmbeddingAWVClassifier(_FixedEmbeddingAWVBase, BinaryClassifier):
    __doc__ = ("PKAWV with a fixed embedding given by the user, as a binary classifier (square "
               "loss on labels coded -1/+1)." + _FIXED_EMBEDDING_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import FixedEmbeddingAWVClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> def quadratic(X):
    ...     return np.column_stack([np.ones(len(X)), X, X ** 2])
    >>> model = FixedEmbeddingAWVClassifier(quadratic, lam=0.1).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)


class Mixture(OnlineEstimator):
    """Online combination of several models (for instance ``NystromAWV`` or ``TaylorAWV`` of
    different bandwidths: one representation per kernel of a dictionary) by a second-level learner
    on their predictions.

    A preset of the engine like every model: its experts are the members' own compiled engines
    (``fastomkl._core.experts.models``), its combiner the second-level VAW or EWA of paper 003
    (``fastomkl._core.combiners.meta``).  Each round every member predicts, the second level mixes
    the predictions, then every member and the second level learn the target (full information,
    so a member's online predictions do not depend on the mixture).  The mixture learns with its
    own copies of the members (``members_``, copied with what they have learnt when it starts
    learning): the models passed in are never changed, as scikit-learn's ensembles do.

    Parameters
    ----------
    members : list of fastomkl regressors
        The N experts, fresh or already trained; they keep learning.  Models with a Python
        feature map (``FixedEmbeddingAWV``) cannot be members.
    meta : {"vaw", "ewa"}, default "vaw"
        "vaw": second-level VAW with signed weights alpha_t = (lam I + sum_{s<=t} p_s p_s^T)^{-1}
        sum_{s<t} y_s p_s on the prediction vectors p (without p_t in the matrix when
        ``mode="ridge"``), as ``fastomkl.VAW2`` combines its kernels.  "ewa": exponentially
        weighted average, weights proportional to exp(-eta L_k) over the cumulative square losses.
    lam : float, default 1.0
        Ridge of the second-level VAW.
    mode : {"vaw", "ridge"}, default "ridge"
        Second-level VAW mode.
    eta_combiner : "auto" or float, default "auto"
        EWA rate; "auto" is 1 / (2 (hi - lo)^2) for ``label_range`` (lo, hi), else 1.  (Formerly
        ``eta``: still accepted, with a FutureWarning.)
    label_range : (lo, hi) or None, default None
        Clip the member predictions to [lo, hi] before combining them (the truncated experts of
        paper 003); None combines them as they are.

    Attributes
    ----------
    members_ : list
        The members as the mixture trains them.
    weights_ : ndarray (N,)
        The second level's current weights (signed for "vaw", convex for "ewa").

    A mixture holds other models, so it is not written to a model file (``save`` raises
    ValueError: save the members); it pickles (joblib, multiprocessing) with its members.

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Mixture, NystromAWV
    >>> X = np.random.default_rng(0).uniform(-1, 1, (200, 2))
    >>> members = [NystromAWV(Gaussian(s), random_state=0) for s in (0.5, 2.0)]
    >>> Mixture(members).predict_learn(X, np.sin(3 * X[:, 0])).shape
    (200,)
    """

    _parameter_constraints = {"members": [Regressors()], "meta": [Options("vaw", "ewa")],
                              "lam": RIDGE, "mode": [Options(*MODES)],
                              "eta_combiner": ["auto", None, Interval("real", 0.0, 1e6,
                                                                      closed="right")],
                              "label_range": [None, Range()]}
    _renamed_parameters = {"eta": "eta_combiner"}

    def __init__(self, members, meta="vaw", lam=1.0, mode="ridge", eta_combiner="auto",
                 label_range=None, **renamed):
        self.members = members
        self.meta = meta
        self.lam = lam
        self.mode = mode
        self.eta_combiner = eta_combiner
        self.label_range = label_range
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"members": [NystromAWV(Gaussian(0.5), random_state=0),
                             TaylorAWV(Gaussian(1.0))]},
                {"members": [KernelAWV(Gaussian(1.0)), FOGD(n_components=8, random_state=0)],
                 "meta": "ewa", "label_range": (-2.0, 2.0)}]

    def _check_params(self) -> dict:
        clip = None if self.label_range is None else tuple(map(float, self.label_range))
        rate = auto(self.eta_combiner)
        if rate == "auto":
            rate = 1.0 if clip is None else 1.0 / (2.0 * (clip[1] - clip[0]) ** 2)
        return {"clip": clip, "eta": float(rate), "lam": float(self.lam)}

    # its engine's experts are the members' own engines, which a snapshot could not copy: a
    # prediction made while the mixture learns a batch waits for the round in progress
    _snapshots = False

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        for member in self.members:               # every check before any member is built
            if isinstance(member, _FixedEmbeddingAWVBase):
                raise ValueError("a member with a Python feature map (FixedEmbeddingAWV) cannot "
                                 "join a Mixture")
            if member._engine is not None and member._engine.n_features != n_features:
                raise ValueError(f"X has {n_features} features, but the member "
                                 f"{type(member).__name__} is expecting "
                                 f"{member._engine.n_features} features as input")
        if "members_" not in self.__dict__:       # restored from a pickle: its own copies
            self.members_ = [copy.deepcopy(member) for member in self.members]
        engines = [member._engine_for(n_features) for member in self.members_]
        n = len(engines)
        if self.meta == "vaw":
            combiner = VAWCombiner(n, config["lam"], self.mode, config["clip"])
        else:
            combiner = EWA(n, config["eta"], config["clip"])
        return Engine(NullFeatures(n, n_features), ModelExperts(engines), combiner,
                      round_bit_generator)

    # a refit starts from the members given
    _learnt_attributes = (*OnlineEstimator._learnt_attributes, "members_")

    @property
    def weights_(self) -> np.ndarray:
        """The second level's current weights (signed for "vaw", convex for "ewa")."""
        engine = self._fitted_engine()
        combiner = engine.combiner
        if isinstance(combiner, VAWCombiner):
            return combiner.coef_
        return engine.locked(lambda: combiner.weights_)

    def save(self, path, key=None) -> None:
        """Refused: a mixture holds other models, so it is not written to a model file.

        Save each member with its own ``save``; the mixture itself pickles (joblib, pickle).

        Parameters
        ----------
        path : str or path-like
        key : bytes or str, optional

        Returns
        -------
        None

        Raises
        ------
        ValueError
            Always.

        Examples
        --------
        >>> from fastomkl import Gaussian, Mixture, NystromAWV
        >>> try:
        ...     Mixture([NystromAWV(Gaussian(1.0))]).save("mixture.npz")
        ... except ValueError as exc:
        ...     print(str(exc)[:30])
        a Mixture holds other models a
        """
        raise ValueError("a Mixture holds other models and is not written to a model file: save "
                         "its members, or pickle the mixture (joblib, pickle)")
