"""Compose a model from its three parts: any feature map, any experts, any combiner.

Every model of the library is features -> experts -> combiner run by one compiled engine (see
``fastomkl._core.base``); the paper models are named presets.  ``OnlineMKL`` takes the parts
themselves, so an expert meets any combiner without a preset of its own: VAW experts under graph
feedback, Raker's OGD experts under a second-level VAW, Taylor features under exponential
weights, ...

>>> import numpy as np
>>> from fastomkl import Gaussian, Laplacian
>>> from fastomkl.compose import OnlineMKL, RandomFeatures, VAWExperts, GraphFeedback
>>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
>>> model = OnlineMKL(RandomFeatures([Gaussian(0.5), Gaussian(2.0), Laplacian(1.0)], 20),
...                   VAWExperts(lam=0.1), GraphFeedback(M=2), random_state=0)
>>> model.fit(X, np.sin(3 * X[:, 0])).score(X, np.sin(3 * X[:, 0])) > 0.8
True

A part is a small object of declared parameters (the same declarations as the estimators', so the
same checks and messages); ``OnlineMKL`` hands each one what the others decided (the kernels, the
loss, the experts' step) when it builds the engine on the first sample.
"""
from __future__ import annotations

import inspect

import numpy as np

from fastomkl._core.combiners.graph import GraphFeedback as _GraphFeedback
from fastomkl._core.combiners.graph import SimilarityGraphFeedback as _SimilarityGraphFeedback
from fastomkl._core.combiners.hedge import DiscountHedge as _DiscountHedge
from fastomkl._core.combiners.hedge import Hedge as _Hedge
from fastomkl._core.combiners.meta import AA, VAWCombiner
from fastomkl._core.combiners.meta import BOA as _BOA
from fastomkl._core.combiners.meta import EWA as _EWA
from fastomkl._core.combiners.meta import MLPoly as _MLPoly
from fastomkl._core.combiners.meta import MLProd as _MLProd
from fastomkl._core.engine import Engine
from fastomkl._core.experts.ogd import OGDExperts as _OGDExperts
from fastomkl._core.experts.vaw import VAWExperts as _VAWExperts
from fastomkl._core.features.taylor import TaylorBank
from fastomkl._core.losses import LOSSES
from fastomkl._estimator import BinaryClassifier, OnlineEstimator
from fastomkl._estimator.params import (Boolean, Constraint, Interval, Kernels, Options,
                                        RandomState, Range, validate_parameters)
from fastomkl._rff_models import (AUTO_RATE, CLASSIFICATION_LOSSES, MAX_COMPONENTS, MAX_RATE,
                                  PAPER_EXPLORATION, REGRESSION_LOSSES, SELF_CONFIDENT_RATE,
                                  SHARE, STEP, check_rate, check_steps)
from fastomkl.features import RandomFourierFeatures, feature_bank
from fastomkl.graph import adjacency_to_csr, dominating_set, similarity_graph
from fastomkl.kernels import Gaussian, Laplacian, paper000_dictionary
from fastomkl.vaw import FORGET

__all__ = ["OnlineMKL", "OnlineMKLClassifier", "RandomFeatures", "TaylorFeatures", "OGD",
           "VAWExperts", "Hedge", "DiscountedHedge", "GraphFeedback", "SimilarityGraph",
           "SecondLevelVAW", "EWA", "AggregatingAlgorithm", "BOA", "MLPoly", "MLProd"]


class Part:
    """A part of a model: declared parameters (``_parameter_constraints``) and ``build``."""

    _parameter_constraints: dict = {}
    _renamed_parameters: dict = {}
    role = ""

    @classmethod
    def _param_names(cls) -> list[str]:
        return [p.name for p in inspect.signature(cls.__init__).parameters.values()
                if p.name != "self" and p.kind is not p.VAR_KEYWORD]

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's parameters, as passed (scikit-learn's protocol)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set parameters (checked when the model using the part is built)."""
        for name, value in params.items():
            if name not in self._param_names():
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}")
            setattr(self, name, value)
        return self

    def __eq__(self, other):
        return type(self) is type(other) and self.get_params() == other.get_params()

    def __hash__(self):
        return hash(type(self).__name__)

    def __repr__(self) -> str:
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = [f"{k}={v!r}" for k, v in self.get_params().items()
                   if not (v is defaults.get(k) or _equal(v, defaults.get(k)))]
        return f"{type(self).__name__}({', '.join(changed)})"


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


# -- feature maps --------------------------------------------------------------------------------
class RandomFeatures(Part):
    """Random Fourier features z_k(x) = [cos(W_k x); sin(W_k x)] / sqrt(D) of each kernel.

    Parameters
    ----------
    kernels : list of Kernel, default None
        The dictionary; None is paper 000's 76 kernels.
    n_components : int, default 50
        Frequencies D per kernel.
    shared_draw : bool, default False
        One standard draw per kernel family, scaled per bandwidth (see ``fastomkl.Raker``).
    dtype : {"float64", "float32"}, default "float64"
        Storage of the frequencies (see ``fastomkl.Raker``).
    """

    role = "features"
    _parameter_constraints = {"kernels": [None, Kernels()],
                              "n_components": [Interval("int", 1, MAX_COMPONENTS)],
                              "shared_draw": [Boolean()],
                              "dtype": [Options("float64", "float32")]}

    def __init__(self, kernels=None, n_components=50, shared_draw=False, dtype="float64"):
        self.kernels = kernels
        self.n_components = n_components
        self.shared_draw = shared_draw
        self.dtype = dtype

    @property
    def kernels_(self) -> list:
        return paper000_dictionary() if self.kernels is None else list(self.kernels)

    def size(self, n_features: int) -> int:
        return len(self.kernels_) * self.n_components * (n_features + 2)

    def build(self, n_features: int, rng):
        return feature_bank(self.kernels_, self.n_components, n_features, rng,
                            bool(self.shared_draw), self.dtype)


class TaylorFeatures(Part):
    """The degree-M Taylor features of each Gaussian kernel (``fastomkl.TaylorAWV``'s basis).

    Parameters
    ----------
    kernels : list of Gaussian, default None
        None is ``[Gaussian(1.0)]``.
    degree : int, default 2
        The largest total degree M: C(M + d, d) features per kernel.
    """

    role = "features"
    _parameter_constraints = {"kernels": [None, Kernels(("Gaussian",))],
                              "degree": [Interval("int", 0, 16)]}

    def __init__(self, kernels=None, degree=2):
        self.kernels = kernels
        self.degree = degree

    @property
    def kernels_(self) -> list:
        return [Gaussian(1.0)] if self.kernels is None else list(self.kernels)

    def size(self, n_features: int) -> int:
        from math import comb
        return len(self.kernels_) * comb(self.degree + n_features, n_features)

    def build(self, n_features: int, rng):
        return TaylorBank(n_features, self.degree, [k.sigma for k in self.kernels_])


# -- experts -------------------------------------------------------------------------------------
class OGD(Part):
    """Raker's experts: online gradient descent on loss(theta_k . z_k, y) + lam ||theta_k||^2.

    Parameters
    ----------
    eta : "auto" or float, default "auto"
        The step ("auto": truncated AdaGrad-norm steps on standardised targets, see
        ``fastomkl.Raker``).
    eta_schedule : {"inv_sqrt", "constant"}, default "inv_sqrt"
        Schedule of a numeric step (and of the combiner's rate when it follows the step).
    lam : float, default 1e-3
        The regulariser's weight.
    regularizer_after_update : bool, default False
        lam ||theta||^2 after the step (the released code) instead of before (the paper).
    """

    role = "experts"
    _parameter_constraints = {"eta": STEP, "eta_schedule": [Options("inv_sqrt", "constant")],
                              "lam": [Interval("real", 0.0, MAX_RATE)],
                              "regularizer_after_update": [Boolean()]}

    def __init__(self, eta="auto", eta_schedule="inv_sqrt", lam=1e-3,
                 regularizer_after_update=False):
        self.eta = eta
        self.eta_schedule = eta_schedule
        self.lam = lam
        self.regularizer_after_update = regularizer_after_update

    def steps(self, loss: int) -> dict:
        return check_steps(self.eta, self.eta_schedule, loss)

    def size(self, n_kernels: int, dim: int) -> int:
        return n_kernels * dim

    def build(self, n_kernels: int, dim: int, loss: int):
        return _OGDExperts(n_kernels, dim, loss, float(self.lam), *self.steps(loss)["eta"],
                           bool(self.regularizer_after_update))


class VAWExperts(Part):
    """Vovk-Azoury-Warmuth (or online ridge) experts on each kernel's features (square loss).

    Parameters
    ----------
    lam : float, default 1.0
        Ridge of every expert.
    mode : {"vaw", "ridge"}, default "vaw"
        The VAW forecaster or online ridge regression (see ``fastomkl.VAW``).
    center : bool, default True
        Learn the labels minus their running mean (a data-adaptive intercept).
    forget : float in (0, 1], default 1.0
        Forgetting factor gamma for streams that drift: an update seen `age` updates of that
        expert ago weighs gamma^age (half-life ln 2 / -ln gamma), the ridge keeps its weight
        (see ``fastomkl.VAW``).  1 forgets nothing.
    """

    role = "experts"
    _parameter_constraints = {"lam": [Interval("real", 1e-8, 1e8)],
                              "mode": [Options("vaw", "ridge")], "center": [Boolean()],
                              "forget": FORGET}

    def __init__(self, lam=1.0, mode="vaw", center=True, forget=1.0):
        self.lam = lam
        self.mode = mode
        self.center = center
        self.forget = forget

    def steps(self, loss: int) -> dict:
        return {"eta": AUTO_RATE, "standardize": False}

    def size(self, n_kernels: int, dim: int) -> int:
        return n_kernels * dim * (dim + 1) // 2 * (2 if self.forget < 1 else 1)

    def build(self, n_kernels: int, dim: int, loss: int):
        if loss not in (LOSSES["squared"],):
            raise ValueError("VAW experts learn the square loss: use loss='squared' (a classifier "
                             "of VAW experts regresses the -1/+1 labels)")
        return _VAWExperts(n_kernels, dim, float(self.lam), self.mode, 0, bool(self.center),
                           float(self.forget))


# -- combiners -----------------------------------------------------------------------------------
class _Combiner(Part):
    role = "combiner"

    def build(self, context: dict):
        raise NotImplementedError


def _rate(rate, context, auto=None):
    """A combiner's rate: a number, or "auto" following the experts' step (see
    ``fastomkl._rff_models.check_rate``)."""
    return check_rate(rate, context["eta"], context["eta_schedule"], auto)


class Hedge(_Combiner):
    """Exponential weights over every kernel (Raker's combiner).

    Parameters
    ----------
    eta_combiner : "auto" or float, default "auto"
        The rate; "auto" follows the experts' step (rate 1 on standardised losses under an
        "auto" step).
    share : float in [0, 0.5], default 0
        Fixed share (Herbster & Warmuth 1998), as ``Raker``'s: after each update the weights
        become (1 - share) w_bar + share / N, so no kernel's weight falls below share / N and a
        kernel that was bad can lead again soon after the stream changes.
    """

    _parameter_constraints = {"eta_combiner": STEP, "share": SHARE}

    def __init__(self, eta_combiner="auto", share=0.0):
        self.eta_combiner = eta_combiner
        self.share = share

    def build(self, context):
        return _Hedge(context["n_kernels"], *_rate(self.eta_combiner, context), float(self.share))


class DiscountedHedge(_Combiner):
    """Hedge with the fixed factor w <- w beta^L of OMKR and RFOMKR: exponential weights at the
    rate ln(1 / beta) on the summed losses (it forgets nothing; ``Hedge(share=...)`` does).

    Parameters
    ----------
    beta : float in (0, 1], default 0.5
    """

    _parameter_constraints = {"beta": [Interval("real", 0.0, 1.0, closed="right")]}

    def __init__(self, beta=0.5):
        self.beta = beta

    def build(self, context):
        return _DiscountHedge(context["n_kernels"], float(self.beta), True)


class GraphFeedback(_Combiner):
    """OMKL-GF's bipartite feedback graph: each round, the kernels of one selective node run.

    Parameters
    ----------
    M : int, default 10
        Kernel draws per selective node.
    J : int, default 2
        Selective nodes.
    eta_combiner : "auto" or float, default "auto"
        Rate of the kernel weights (self-confident under an "auto" step).
    """

    _parameter_constraints = {"M": [Interval("int", 1, 10_000)], "J": [Interval("int", 1, 10_000)],
                              "eta_combiner": STEP}

    def __init__(self, M=10, J=2, eta_combiner="auto"):
        self.M = M
        self.J = J
        self.eta_combiner = eta_combiner

    def build(self, context):
        eta = _rate(self.eta_combiner, context, SELF_CONFIDENT_RATE)
        explore = _rate("auto", context, PAPER_EXPLORATION)
        return _GraphFeedback(context["n_kernels"], self.J, self.M, *eta,
                              min(explore[0], 1.0), explore[1])


class SimilarityGraph(_Combiner):
    """OMKL-SFG's similarity feedback graph over the kernels (Alg. 4 and 5 of paper 000).

    Parameters
    ----------
    M : "auto" or int, default "auto"
        Out-degree of the graph, self-loop included; "auto" is min(10, the number of kernels).
    eta_combiner : "auto" or float, default "auto"
        Rate of the kernel weights and of the node weights (self-confident under "auto").
    """

    _parameter_constraints = {"M": ["auto", Interval("int", 1, 10_000)], "eta_combiner": STEP}

    def __init__(self, M="auto", eta_combiner="auto"):
        self.M = M
        self.eta_combiner = eta_combiner

    def build(self, context):
        kernels, n = context["kernels"], context["n_kernels"]
        if not all(isinstance(k, (Gaussian, Laplacian)) for k in kernels):
            raise ValueError("the similarity graph measures Gaussian and Laplacian kernels only")
        M = min(10, n) if self.M == "auto" else self.M
        if M > n:
            raise ValueError(f"M must be at most the number of kernels ({n}), got {M}")
        A, delta = similarity_graph(kernels, M, dim=context["n_features"],
                                    return_divergence=True)
        dom = np.zeros(n, dtype=bool)
        dom[dominating_set(A)] = True
        ptr, idx = adjacency_to_csr(A)
        eta = _rate(self.eta_combiner, context, SELF_CONFIDENT_RATE)
        xi = _rate("auto", context, PAPER_EXPLORATION)
        return _SimilarityGraphFeedback(n, ptr, idx, dom, delta, context["loss"], *eta, *eta,
                                        *xi)


class SecondLevelVAW(_Combiner):
    """A VAW on the vector of expert predictions (VAW^2's second level), signed weights.

    Parameters
    ----------
    lam : float, default 1.0
    mode : {"vaw", "ridge"}, default "vaw"
    label_range : (lo, hi) or None, default None
        Clip the expert predictions to [lo, hi] first (None: as they are).
    forget : float in (0, 1], default 1.0
        Forgetting factor gamma: a round seen `age` rounds ago weighs gamma^age, the ridge keeps
        its weight (see ``fastomkl.VAW2``).  1 forgets nothing.
    """

    _parameter_constraints = {"lam": [Interval("real", 1e-8, 1e8)],
                              "mode": [Options("vaw", "ridge")], "label_range": [None, Range()],
                              "forget": FORGET}

    def __init__(self, lam=1.0, mode="vaw", label_range=None, forget=1.0):
        self.lam = lam
        self.mode = mode
        self.label_range = label_range
        self.forget = forget

    def build(self, context):
        return VAWCombiner(context["n_kernels"], float(self.lam), self.mode, self.label_range,
                           forget=float(self.forget))


class _ClippedMeta(_Combiner):
    """Meta-learners of paper 003 on the expert predictions clipped to ``label_range`` (the
    range of the labels seen so far when None)."""

    _parameter_constraints = {"label_range": [None, Range()]}

    def __init__(self, label_range=None):
        self.label_range = label_range

    def _clip(self):
        return "observed" if self.label_range is None else self.label_range


class EWA(_ClippedMeta):
    """Exponentially weighted average on the clipped experts' cumulative square losses.

    Parameters
    ----------
    eta_combiner : "auto" or float, default "auto"
        The rate; "auto" is AdaHedge's, from the data.
    label_range : (lo, hi) or None, default None
    """

    _parameter_constraints = {"eta_combiner": STEP, "label_range": [None, Range()]}

    def __init__(self, eta_combiner="auto", label_range=None):
        self.eta_combiner = eta_combiner
        self.label_range = label_range

    def build(self, context):
        rate = None if self.eta_combiner == "auto" else float(self.eta_combiner)
        return _EWA(context["n_kernels"], rate, self._clip())


class AggregatingAlgorithm(_ClippedMeta):
    """Vovk's Aggregating Algorithm for the square loss.

    Parameters
    ----------
    label_range : (lo, hi) or None, default None
    """

    def build(self, context):
        return AA(context["n_kernels"], None, self._clip())


class BOA(_ClippedMeta):
    """BOA (Wintenberger 2017), second-order adaptive weights.

    Parameters
    ----------
    label_range : (lo, hi) or None, default None
    """

    def build(self, context):
        return _BOA(context["n_kernels"], self._clip())


class MLPoly(_ClippedMeta):
    """ML-Poly (Gaillard, Stoltz & van Erven 2014).

    Parameters
    ----------
    label_range : (lo, hi) or None, default None
    """

    def build(self, context):
        return _MLPoly(context["n_kernels"], self._clip())


class MLProd(_ClippedMeta):
    """ML-Prod (Gaillard, Stoltz & van Erven 2014).

    Parameters
    ----------
    label_range : (lo, hi) or None, default None
    """

    def build(self, context):
        return _MLProd(context["n_kernels"], self._clip())



# -- the model -----------------------------------------------------------------------------------
class PartOf(Constraint):
    """A part of the given role ("features", "experts" or "combiner")."""

    def __init__(self, role: str):
        self.role = role

    def accepts(self, value) -> bool:
        return isinstance(value, Part) and value.role == self.role

    def describe(self) -> str:
        return f"a {self.role} part of fastomkl.compose"

    def invalid_examples(self) -> list:
        return ["hedge", 1.0, None]


class _Composed:
    """What the regressor and the classifier share: the parts, their checks and the build."""

    _losses = REGRESSION_LOSSES

    def __init__(self, features=None, experts=None, combiner=None, loss="auto",
                 random_state=None):
        self.features = features
        self.experts = experts
        self.combiner = combiner
        self.loss = loss
        self.random_state = random_state

    @classmethod
    def _unit_test_params(cls):
        kernels = [Gaussian(0.5), Gaussian(2.0), Laplacian(1.0)]
        return [{"features": RandomFeatures(kernels, 4), "experts": OGD(),
                 "combiner": Hedge(), "random_state": 0},
                {"features": RandomFeatures(kernels, 4), "experts": VAWExperts(lam=0.1),
                 "combiner": GraphFeedback(M=2), "random_state": 0},
                {"features": TaylorFeatures([Gaussian(1.0), Gaussian(2.0)], degree=2),
                 "experts": OGD(eta=0.1), "combiner": SecondLevelVAW(), "random_state": 0},
                {"features": RandomFeatures(kernels, 4), "experts": OGD(eta=0.5),
                 "combiner": SimilarityGraph(M=2), "random_state": 0},
                {"features": RandomFeatures(kernels, 4), "experts": VAWExperts(forget=0.97),
                 "combiner": SecondLevelVAW(forget=0.97), "random_state": 0}]

    def _parts(self):
        return (RandomFeatures() if self.features is None else self.features,
                OGD() if self.experts is None else self.experts,
                Hedge() if self.combiner is None else self.combiner)

    def _check_params(self) -> dict:
        for part in self._parts():          # the parts' own declarations, named by the part
            try:
                validate_parameters(part)
            except ValueError as exc:
                raise ValueError(f"{type(part).__name__}: {exc}") from None
        if isinstance(self._parts()[1], VAWExperts) and self.loss != "auto":
            raise ValueError("loss must be 'auto' with VAW experts: they learn the square "
                             "loss (a classifier of them regresses the -1/+1 labels)")
        return {"loss": LOSSES[self._loss_name()]}

    def _loss_name(self) -> str:
        """The loss the experts learn: the square loss for VAW experts (whatever the task),
        else ``loss`` ("auto": the first of the task's losses)."""
        if isinstance(self._parts()[1], VAWExperts):
            return "squared"
        return self._losses[0] if self.loss == "auto" else self.loss

    def _implied_state_size(self, n_features: int) -> int:
        features, experts, _ = self._parts()
        n_kernels = len(features.kernels_)
        dim = features.size(n_features) // max(n_kernels, 1)
        return features.size(n_features) + experts.size(n_kernels, dim)

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        features, experts, combiner = self._parts()
        bank = features.build(n_features, feature_rng)
        steps = experts.steps(config["loss"])
        context = {"n_kernels": bank.n_kernels, "kernels": features.kernels_,
                   "n_features": n_features, "loss": config["loss"],
                   "eta": getattr(experts, "eta", "auto"),
                   "eta_schedule": getattr(experts, "eta_schedule", "constant")}
        return Engine(bank, experts.build(bank.n_kernels, bank.n_outputs, config["loss"]),
                      combiner.build(context), round_bit_generator, steps["standardize"])

    @property
    def weights_(self) -> np.ndarray:
        """The combiner's current weights over the kernels (for combiners that keep them)."""
        combiner = self._fitted_engine().combiner
        for name in ("w_bar", "p"):
            if hasattr(combiner, name):
                return np.array(getattr(combiner, name))
        if hasattr(combiner, "log_w"):
            return self._combiner_weights()
        if hasattr(combiner, "coef_"):
            return combiner.coef_
        return self._fitted_engine().locked(lambda: combiner.weights_)

    @property
    def features_(self) -> RandomFourierFeatures:
        """The fitted random features (with ``RandomFeatures`` parts)."""
        features = self._parts()[0]
        if not isinstance(features, RandomFeatures):
            raise AttributeError("features_ is the view of random features")
        return RandomFourierFeatures.from_bank(features.kernels_, self._fitted_engine().features,
                                               bool(features.shared_draw))


_DOC = """{title}

    Parameters
    ----------
    features : RandomFeatures or TaylorFeatures, default None
        The feature map, one representation per kernel (None: ``RandomFeatures()``, paper 000's
        76 kernels with 50 frequencies).
    experts : OGD or VAWExperts, default None
        The learner of each kernel (None: ``OGD()``, Raker's).
    combiner : Hedge, DiscountedHedge, GraphFeedback, SimilarityGraph, SecondLevelVAW, EWA,
        AggregatingAlgorithm, BOA, MLPoly or MLProd, default None
        Which experts run each round and how their predictions mix (None: ``Hedge()``).
    loss : str, default "auto"
        {losses}
    random_state : None, int, SeedSequence or Generator
        Seeds the frequency draws and, on another stream, the combiner's draws.

    Attributes
    ----------
    weights_ : ndarray (n_kernels,)
        The combiner's weights over the kernels.
    features_ : RandomFourierFeatures
        With ``RandomFeatures``: the fitted features.

    Examples
    --------
{example}
"""


class OnlineMKL(_Composed, OnlineEstimator):
    __doc__ = _DOC.format(
        title="Online multi-kernel regression composed of a feature map, experts and a combiner.",
        losses='"auto" (the squared loss), "squared" or "absolute" ("auto" with VAW experts).',
        example="""    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian
    >>> from fastomkl.compose import OGD, OnlineMKL, RandomFeatures, SecondLevelVAW
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> parts = RandomFeatures([Gaussian(0.5), Laplacian(1.0)], 20), OGD(), SecondLevelVAW()
    >>> model = OnlineMKL(*parts, random_state=0).fit(X, np.sin(3 * X[:, 0]))
    >>> model.weights_.shape, model.score(X, np.sin(3 * X[:, 0])) > 0.8
    ((2,), True)""")
    _parameter_constraints = {"features": [None, PartOf("features")],
                              "experts": [None, PartOf("experts")],
                              "combiner": [None, PartOf("combiner")],
                              "loss": [Options("auto", *REGRESSION_LOSSES)],
                              "random_state": [RandomState()]}


class OnlineMKLClassifier(_Composed, BinaryClassifier):
    __doc__ = _DOC.format(
        title="Online multi-kernel binary classification composed of a feature map, experts and "
              "a combiner (labels map to -1/+1).",
        losses='"auto" (the logistic loss; with VAW experts, the square loss on the -1/+1 '
               'labels), "logistic" or "hinge".',
        example="""    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian
    >>> from fastomkl.compose import OGD, OnlineMKLClassifier, RandomFeatures, Hedge
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> parts = RandomFeatures([Gaussian(0.5), Laplacian(1.0)], 20), OGD(), Hedge()
    >>> OnlineMKLClassifier(*parts, random_state=0).fit(X, y).score(X, y) > 0.8
    True""")
    _losses = CLASSIFICATION_LOSSES
    _parameter_constraints = {**OnlineMKL._parameter_constraints,
                              "loss": [Options("auto", *CLASSIFICATION_LOSSES)]}


PARTS = {cls.__name__: cls for cls in (RandomFeatures, TaylorFeatures, OGD, VAWExperts, Hedge,
                                       DiscountedHedge, GraphFeedback, SimilarityGraph,
                                       SecondLevelVAW, EWA, AggregatingAlgorithm, BOA, MLPoly,
                                       MLProd)}
