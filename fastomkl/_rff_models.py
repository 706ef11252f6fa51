"""What every random-feature model shares: its kernels, feature bank and the public views of them."""
from __future__ import annotations

import textwrap

import numpy as np

from fastomkl._core.combiners.hedge import Hedge
from fastomkl._core.combiners.meta import MLPoly
from fastomkl._core.steps import (ADAGRAD, CHANGE_STATISTICS, ENSEMBLE, ENSEMBLE_STEPS, SCHEDULES,
                                  SELF_CONFIDENT, ChangeTest)
from fastomkl._core.experts.ogd import OGDExperts, OGDStepEnsemble
from fastomkl._core.losses import FUNCTIONAL_LOSSES, LOSSES
from fastomkl._core.features.rff import DTYPES, RFFBank
from fastomkl._estimator.classifiers import _Classifier
from fastomkl._estimator.params import Boolean, Interval, Kernels, Options, RandomState
from fastomkl._validation import check_int, split_random_state
from fastomkl.features import (RandomFourierFeatures, check_legacy_kernels, draw_legacy_frequencies,
                               feature_bank, legacy_bit_generator, n_frequency_draws)
from fastomkl.kernels import paper000_dictionary

REGRESSION_LOSSES = ("squared", "absolute")
RNG_PROTOCOLS = ("default", "legacy")
CLASSIFICATION_LOSSES = ("logistic", "hinge")
# The loss codes of a regressor's step ensemble (StepEnsembleCombiner) whose members are mixed
# clipped to the targets' range: those whose targets are real values (OGD's squared and absolute
# losses, NORMA's functional ones).
MEMBER_CLIPPED_LOSSES = frozenset(
    [LOSSES[name] for name in REGRESSION_LOSSES]
    + [FUNCTIONAL_LOSSES[name] for name in ("squared", "huber", "epsilon_insensitive", "absolute",
                                            "quantile")])

# The declared parameters shared by the random-feature models (fastomkl._estimator.params).  The
# bounds keep every accepted setting finite and its saved file loadable: a model's size is
# bounded by what a file may hold (MAX_COMPONENTS frequencies per kernel), and steps, rates and
# regularisers beyond 1e6 only ever push the numeric guard into refusing every update.
MAX_COMPONENTS = 100_000
MAX_RATE = 1e6
RFF_PARAMETERS = {
    "kernels": [None, Kernels()],
    "n_components": [Interval("int", 1, MAX_COMPONENTS)],
    "shared_draw": [Boolean()],
    "rng_protocol": [Options(*RNG_PROTOCOLS)],
    "random_state": [RandomState()],
    "dtype": [Options(*DTYPES)],
}
AUTO = "auto"
STEP = [AUTO, Interval("real", 0.0, MAX_RATE, closed="right")]
STEP_PARAMETERS = {
    "eta": STEP,
    "eta_schedule": [Options(*SCHEDULES)],
    "eta_combiner": STEP,
}
# A fixed share of exponential weights (Herbster & Warmuth 1998): Raker's, AdaRaker's second
# layer's, a composed Hedge's.
SHARE = [Interval("real", 0.0, 0.5)]
# The step of a model whose experts may be an ensemble of steps per kernel (Raker): besides
# "auto" and a number, the step rules by name.
STEP_RULES = ("adagrad", "ensemble")
OGD_STEP = [AUTO, *STEP_RULES, Interval("real", 0.0, MAX_RATE, closed="right")]
OGD_PARAMETERS = {
    **STEP_PARAMETERS,
    "lam": [Interval("real", 0.0, MAX_RATE)],
    "regularizer_after_update": [Boolean()],
}

# The ``dtype`` parameter of every random-feature model, as their docstrings state it.
DTYPE_DOC = """
    dtype : "float64" or "float32", default "float64"
        Storage of the random frequencies.  "float32" stores them rounded to float32 and
        computes each projection and its sines and cosines in float, for every kernel whose
        angles w.x stay within 16 over the unit ball (its largest frequency norm; paper 000's
        dictionary on Naval: 39 of its 76 kernels); the narrower ones keep float64
        frequencies and compute as in a float64 model, since rounding would move their angles
        (up to 1e6 for narrow Laplacians) by more than their features can bear.  The features,
        the weights and every sum stay float64.  On the shipped data sets the predictions of
        Raker and VAW2 stay within 9e-6 of the float64 model's scale and their prequential
        errors do not move (bench/results/float32.md); ``features_.float32_kernels_`` says
        which kernels compute in float.  Saved and loaded with the model."""


def with_dtype_doc(doc: str) -> str:
    """`doc` with DTYPE_DOC inserted before its ``rng_protocol`` (or ``random_state``) entry."""
    for anchor in ("\n    rng_protocol :", "\n    random_state :"):
        if anchor in doc:
            return doc.replace(anchor, DTYPE_DOC + anchor, 1)
    raise ValueError("no rng_protocol or random_state entry to place dtype before")


def class_doc_intro(module_doc: str) -> str:
    """A module's text as the opening of its classes' docstrings: indented as the parameters
    that follow it, so that help() and Sphinx, which remove the common indentation, show it flush
    with them."""
    return textwrap.indent(module_doc, "    ").lstrip()


class RFFModelMixin:
    _auto_rate = None        # the combiner's rate under eta="auto" (None: AUTO_RATE)
    _ensemble_rate = None    # the combiner's rate under eta="ensemble" (None: ENSEMBLE_RATE)

    """Parameters and attributes common to models on random Fourier features.

    Subclasses keep ``kernels``, ``n_components``, ``rng_protocol``, ``random_state`` (and
    optionally ``shared_draw``) among their parameters; ``kernels=None`` means paper 000's 76-kernel
    dictionary.

    ``rng_protocol="legacy"`` replays the authors' notebooks: with an integer seed s, the stream of
    ``np.random.seed(s)`` draws the frequencies (``fastomkl.features.legacy_frequencies``) and then,
    continuing, every per-round draw of a sampling model (OMKL-GF's uniforms, for example).
    """

    def _check_rff_params(self) -> dict:
        config = {
            "kernels": self.kernels_,
            "n_components": self.n_components,
            "rng_protocol": self.rng_protocol,
            "dtype": getattr(self, "dtype", "float64"),
        }
        if config["rng_protocol"] == "legacy":
            check_int(self.random_state, "random_state (rng_protocol='legacy' needs an int seed)", 0,
                      2 ** 32 - 1)
            check_legacy_kernels(config["kernels"])
            if getattr(self, "shared_draw", False):
                raise ValueError("shared_draw=True cannot be combined with rng_protocol='legacy' "
                                 "(the legacy protocol draws each kernel's block in turn)")
        return config

    def _check_ogd_params(self) -> dict:
        """The parameters of models with OGD experts and exponential weights (Raker, the graph
        family): step sizes and their schedule, lam and the loss among ``self._losses``."""
        config = self._check_rff_params()
        config["loss"] = LOSSES[self._loss_name()]
        config.update(check_steps(self.eta, self.eta_schedule, config["loss"]))
        config["eta_combiner"] = check_rate(self.eta_combiner, self.eta, self.eta_schedule,
                                            self._auto_rate, self._ensemble_rate)
        config["lam"] = float(self.lam)
        return config

    def _implied_state_size(self, n_features: int) -> int:
        """The frequencies (one n_components x n_features draw per kernel, or per kernel family
        under ``shared_draw``) and a weight vector of 2D per expert."""
        kernels = self.kernels_
        draws = n_frequency_draws(kernels) if getattr(self, "shared_draw", False) else len(kernels)
        experts = len(kernels) * self._members(getattr(self, "eta", None))
        return self.n_components * (draws * n_features + 2 * experts)

    @staticmethod
    def _members(eta) -> int:
        """Experts per kernel: the steps of an ensemble (eta="ensemble"), else one."""
        return len(ENSEMBLE_STEPS) if isinstance(eta, str) and eta == "ensemble" else 1

    def _loss_name(self) -> str:
        """The loss: ``loss``, or under "auto" the first of ``_losses`` (the squared loss for
        regression, the logistic loss for classification)."""
        return self._losses[0] if self.loss == "auto" else self.loss

    def _random_streams(self, config: dict):
        """(feature stream, per-round bit generator); one legacy stream serves both, in turn."""
        if config["rng_protocol"] == "legacy":
            bit_generator = legacy_bit_generator(int(self.random_state))
            return np.random.RandomState(bit_generator), bit_generator
        return split_random_state(self.random_state)

    def _rff_bank(self, config: dict, n_features: int, feature_rng):
        """The model's features: RFFBank, or SharedDrawRFFBank under ``shared_draw=True``, with
        frequencies stored in the model's dtype."""
        if config["rng_protocol"] == "legacy":
            return RFFBank(draw_legacy_frequencies(config["kernels"], config["n_components"],
                                                   n_features, feature_rng), config["dtype"])
        return feature_bank(config["kernels"], config["n_components"], n_features, feature_rng,
                            getattr(self, "shared_draw", False), config["dtype"])

    @property
    def kernels_(self) -> list:
        """The kernel dictionary in use (``kernels``, or the default dictionary when None)."""
        return paper000_dictionary() if self.kernels is None else list(self.kernels)

    @property
    def features_(self) -> RandomFourierFeatures:
        """The fitted random features (``frequencies_``, ``transform``) the model computes with."""
        engine = self._fitted_engine()
        bank = engine.features
        bank = getattr(bank, "inner", bank)
        return RandomFourierFeatures.from_bank(self.kernels_, bank,
                                               getattr(self, "shared_draw", False))


# What eta="auto" means (measured on the shipped data sets: bench/defaults.py and
# bench/results/defaults.md).  Each expert takes AdaGrad-norm steps AUTO_STEP / sqrt(G), G the sum
# of its squared gradient norms, each times the round's importance weight 1/q (an unbiased estimate
# of the full-information sum, so an expert of a graph model, observed with probability q, learns
# as fast as one that sees every round, in expectation), and no step takes the example's prediction
# past the zero of its loss's tangent (truncated steps, fastomkl/_core/base.pxd): scale-free in the
# gradients, so the units of y, the loss and the weights 1/q cannot make it diverge or overshoot.
# Regression targets are standardised online (the engine learns (y - mean) / std of the targets
# seen so far, winsorised: fastomkl._core.engine.winsorised_update, and maps its predictions
# back), so the exponential weights see losses in standard
# units and their rate AUTO_RATE is scale-free too; classification losses are unit-free already.
AUTO_STEP = 2.0
AUTO_RATE = (1.0, SCHEDULES["constant"])
# The graph models feed their exponential weights importance-weighted losses L / q, whose spread
# grows with 1/q: under eta="auto" their rates are self-confident, sqrt(ln N / (1 + V_t)) with V_t
# the accumulated second moment of those estimates (fastomkl/_core/graph.pyx), instead of a
# constant.  Exploration probabilities (OMKL-GF's eta_e, SFG's xi) are unit-free: under
# eta="auto" they keep the papers' 0.1 / sqrt(t).
SELF_CONFIDENT_RATE = (1.0, SELF_CONFIDENT)
# The exponential weights over an ensemble's kernel x step experts (eta="ensemble"), on
# standardised losses: a constant rate, so the weights can move to another member after a change
# at any time (bench/defaults.py --candidates ensemble).
ENSEMBLE_RATE = (2.0, SCHEDULES["constant"])
PAPER_EXPLORATION = (0.1, SCHEDULES["inv_sqrt"])


class StepEnsembleCombiner:
    """The combiner of a one-kernel model's step ensemble (FOGD, DSG, NORMA and
    OnlineKernelRegressor under eta="ensemble"): ML-Poly (the ``MLPoly`` meta-learner of paper
    003, opera's rates) on the tangent of the model's loss at the mixture (the gradient trick).
    With one kernel there is no kernel weight to learn, only how to mix the members, and a
    mixture of a long and a short step beats either on a stream that drifts: against Hedge at
    ``ENSEMBLE_RATE`` on the members' own losses (OnlineKernelRegressor: OMKR's discounted
    Hedge), the geometric mean of the ratio to the best step of bench/defaults.py's grid falls
    by 0.02-0.07 in recorded order and by up to 0.03 shuffled (docs/defaults.rst).  A file
    written when the ensemble was mixed by Hedge (its combiner's state holds ``log_w``) keeps
    that combiner: its predictions are the file's, and it learns on with them; a refit takes
    ML-Poly.

    A regressor's members are mixed clipped to the range of the targets seen so far (in the
    units the members learn in: standardised and winsorised where the model standardises), the
    paper's "truncated" experts.  Unclipped, one member that diverges (a step too long for the
    data: NORMA's member at 2 on casp) makes regrets so large that every member's rate
    collapses and the mixture follows the diverging member (casp's MSE 4,426 against 0.086
    clipped); on the defaults it moves the geometric means of bench/defaults.py by at most 0.02,
    down (OnlineKernelRegressor in recorded order, 0.936 to 0.919; docs/defaults.rst).  A
    classifier's members are scores, mixed unclipped (``members_clip_range``); so are the DSG
    family's (``_clips_members``), whose ``merge`` averages models exactly, which clipping
    against each model's own range would break.  A file written before the clipping (its
    combiner's state has no ``observed`` range) keeps mixing unclipped."""

    _clips_members = True

    def _ensemble_combiner(self, n_members: int, loss: int, param: float = 0.0):
        if self._from_file("hedge"):
            return self._former_ensemble_combiner(n_members)
        clipped = self._clips_members and not self._from_file("unclipped")
        return MLPoly(n_members, members_clip_range(self, loss) if clipped else None, loss, param)

    def _member_weights(self) -> np.ndarray:
        """The members' mixing weights (non-negative, summing to 1): ML-Poly's, or a file's
        Hedge's."""
        engine = self._fitted_engine()
        combiner = engine.combiner
        if isinstance(combiner, MLPoly):        # computed into the scratch a round uses
            return engine.locked(lambda: combiner.weights_)
        return np.array(combiner.w_bar)

    def _former_ensemble_combiner(self, n_members: int):
        """The combiner files written before ML-Poly hold."""
        return Hedge(n_members, *ENSEMBLE_RATE)

    def _layout_in_file(self, arrays: dict) -> dict:
        layout = super()._layout_in_file(arrays)
        if self.eta == "ensemble" and "combiner.log_w" in arrays:
            layout["hedge"] = True
        if "combiner.lr" in arrays and "combiner.observed" not in arrays:
            layout["unclipped"] = True
        return layout


class ChangeDetection:
    """``detect_changes`` of the models whose kernel weights stop moving on a stream that
    changes (Raker, RFOMKR, OMKL-GF): a Page-Hinkley test (``fastomkl._core.steps.ChangeTest``)
    on the combined prediction's mistakes (classifier) or squared errors in the standard units
    the model learns in (regressor); what an alarm restarts is the combiner's (Raker's Hedge and
    RFOMKR's discounted weights spread half their weight evenly, OMKL-GF restarts its
    self-confident rate).  The test runs under the
    adaptive step rules only (``eta`` "ensemble" or "auto"; for OMKL-GF, whose rate it restarts,
    with ``eta_combiner`` "auto" too): the papers' settings stay as they were.  A file written
    before the parameter existed loads with it False, the rule it learnt with."""

    _change_parameters = {"detect_changes": [Options("auto"), Boolean()]}
    _defaults_of_older_files = {"detect_changes": False}

    def _change_kind(self, adaptive: bool, by_default: bool):
        """The statistic (CHANGE_STATISTICS' code) of the combiner's change test, or None: a
        test if ``detect_changes`` is True, or "auto" and `by_default`, under an `adaptive`
        rule."""
        setting = self.detect_changes
        if not isinstance(setting, str):
            setting = bool(setting)             # NumPy's booleans too
        if setting is True and not adaptive:
            raise ValueError("detect_changes=True restarts the weights of the adaptive step "
                             "rules (eta 'ensemble' or 'auto'), and this model's rate is a "
                             "number: pass detect_changes=False or 'auto'")
        if not (adaptive and (setting is True or (setting == "auto" and by_default))):
            return None
        return CHANGE_STATISTICS["mistakes" if isinstance(self, _Classifier) else "squared"]

    @staticmethod
    def _new_change_test(kind):
        """A fresh test of statistic `kind` for one engine (None: none); each engine, a
        snapshot's too, holds its own."""
        return None if kind is None else ChangeTest(kind)

    @property
    def n_changes_detected_(self) -> int:
        """Alarms of the change test so far (0 without one; see ``detect_changes``)."""
        engine = self._fitted_engine()
        change = engine.combiner.change
        return 0 if change is None else engine.locked(lambda: change.alarms)


def members_clip_range(model, loss: int):
    """The ``clip_range`` a model's members are mixed with: "observed" (the range of the targets
    seen) for a regressor's members on a loss of real targets, None for a classifier's (scores)."""
    return ("observed" if loss in MEMBER_CLIPPED_LOSSES and not isinstance(model, _Classifier)
            else None)


def auto(value):
    """A parameter whose "auto" was once spelled None: None reads as "auto"."""
    return "auto" if value is None else value


def check_steps(eta, schedule: str, loss: int) -> dict:
    """{"eta": (scale, schedule code), "standardize": bool} for the experts' step size (declared
    and accepted already): "auto" or "adagrad" (AdaGrad-norm and, for regression losses, online
    standardised targets), "ensemble" (a grid of constant steps per kernel, ``ENSEMBLE_STEPS``,
    also with standardised targets; the steps are in "steps") or the papers' number with its
    schedule."""
    standardize = loss in (LOSSES["squared"], LOSSES["absolute"])
    if isinstance(eta, str) and eta == "ensemble":
        return {"eta": (0.0, ENSEMBLE), "standardize": standardize, "steps": ENSEMBLE_STEPS}
    if isinstance(eta, str):
        return {"eta": (AUTO_STEP, ADAGRAD), "standardize": standardize}
    return {"eta": (float(eta), SCHEDULES[schedule]), "standardize": False}


def ogd_experts(config: dict, n_kernels: int, dim: int, lam: float,
                regularizer_after_update: bool = False, steps=None, adagrad_scale: float = 0.0,
                schedules=None):
    """The OGD experts of a step rule (``check_steps``'s config, with its "loss"): the step
    ensemble under eta="ensemble" (``steps``, default the config's, and ``adagrad_scale`` for an
    AdaGrad-norm member), else one learner per kernel with the rule's schedule."""
    if config["eta"][1] == ENSEMBLE:
        return OGDStepEnsemble(n_kernels, config["steps"] if steps is None else steps, dim,
                               config["loss"], lam, regularizer_after_update, adagrad_scale,
                               schedules)
    return OGDExperts(n_kernels, dim, config["loss"], lam, *config["eta"],
                      regularizer_after_update)


def check_rate(rate, eta, schedule: str, auto=None, ensemble=None) -> tuple[float, int]:
    """A combiner's rate (declared and accepted already): a number with the step's schedule, or
    "auto": the step's own number (the papers), under eta="auto" (or "adagrad") `auto` (default
    AUTO_RATE), under eta="ensemble" `ensemble` (default ENSEMBLE_RATE)."""
    if isinstance(rate, str):
        if isinstance(eta, str) and eta == "ensemble":
            return ENSEMBLE_RATE if ensemble is None else ensemble
        if isinstance(eta, str):
            return AUTO_RATE if auto is None else auto
        rate = eta
    return float(rate), SCHEDULES[schedule]
