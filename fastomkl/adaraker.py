"""AdaRaker: Raker instances on intervals of geometric lengths, combined by a second Hedge layer.

Shen, Chen & Giannakis, "Random feature-based online multi-kernel learning in environments with
unknown dynamics", JMLR 2019, section 5.  A Raker tuned for T rounds tracks nothing that changes
within them; AdaRaker runs, for every interval length 2^i of a geometric cover of the stream, an
instance of Raker that lives on one such interval at a time (restarted from zero at each interval's
start) with the step its length calls for, eta 2^(-i/2) (eta / sqrt of the length), and weighs the
instances by exponential weights on the losses of their predictions.  After a change, the short
intervals' instances restart soon and learn the new data with large steps, and the second layer
moves to them; on stationary data the long intervals' instances, with small steps, lead.

How it runs here: one model of the engine.  The random features of each kernel are computed once
per sample and shared by all instances (expert k * n_levels + i is instance i's linear model on
kernel k; ``fastomkl._core.experts.ogd.OGDRestarts``), each instance's kernel weights and the
instances' weights are two layers of exponential weights (``fastomkl._core.combiners.nested``).
Regression targets are standardised online (winsorised running mean and standard deviation, as
under ``Raker(eta="auto")``; the predictions are in the units of y), and each step is truncated
with the regulariser taken proximally, as in ``Raker(eta="ensemble")``: the steps of the short intervals' instances are
large, and a truncated step cannot overshoot.
"""
from __future__ import annotations

import numpy as np

from fastomkl._core.combiners.nested import NestedHedge
from fastomkl._core.engine import Engine
from fastomkl._core.experts.ogd import OGDRestarts
from fastomkl._core.losses import LOSSES
from fastomkl._estimator import BinaryClassifier, OnlineEstimator
from fastomkl._estimator.params import Interval, Options, take_renamed
from fastomkl._rff_models import (AUTO, CLASSIFICATION_LOSSES, MAX_RATE, REGRESSION_LOSSES,
                                  RFF_PARAMETERS, SHARE, RFFModelMixin, class_doc_intro,
                                  with_dtype_doc)
from fastomkl.kernels import Gaussian, Laplacian

__all__ = ["AdaRaker", "AdaRakerClassifier", "interval_levels"]

MAX_LEVELS = 40
RATE = [Interval("real", 0.0, MAX_RATE, closed="right")]


def interval_levels(n_levels: int, eta: float, eta_combiner="auto"):
    """(steps, kernel rates, restart periods) of AdaRaker's instances, one per level.

    Level i runs on intervals of 2^i rounds with the step eta 2^(-i/2) and restarts after each;
    the last level never restarts (its interval is the whole stream: for a stream of at most
    2^(n_levels - 1) rounds this is the paper's geometric cover).  Each instance's exponential
    weights over its kernels take the rate of its step ("auto", the paper's one eta for both) or
    eta_combiner 2^(-i/2).

    Examples
    --------
    >>> steps, rates, periods = interval_levels(3, 2.0)
    >>> steps.round(3).tolist(), periods.tolist()
    ([2.0, 1.414, 1.0], [1, 2, 0])
    """
    shrink = 2.0 ** (-0.5 * np.arange(n_levels))
    steps = float(eta) * shrink
    rates = steps.copy() if isinstance(eta_combiner, str) else float(eta_combiner) * shrink
    periods = 2 ** np.arange(n_levels, dtype=np.int64)
    periods[-1] = 0
    return steps, rates, periods


_PARAMS_DOC = """
    Parameters
    ----------
    kernels : list of Kernel, default None
        The dictionary; None is paper 000's 76 kernels (``fastomkl.paper000_dictionary()``).
    n_components : int, default 50
        Random frequencies per kernel (D); each instance's model of a kernel has 2D weights.
    n_levels : int, default 12
        Instances, one per interval length 2^0, ..., 2^(n_levels - 1); the last never restarts.
        The paper's setting for a stream of T rounds is ceil(log2 T) + 1.  The cost per sample
        grows with it: every instance updates a linear model per kernel (the features are
        computed once); 12 levels and 76 kernels cost about 3.4x ``Raker()`` per sample (the
        cost table of bench/results/defaults_orders.md).
    eta : float, default 2.0
        Step of the shortest intervals' instance; level i steps eta 2^(-i/2) (eta / sqrt of its
        interval's length).  Steps are truncated as ``Raker``'s ensemble's (no update takes the
        example's prediction past the minimiser of its loss along the step: onto y at most for
        the squared loss) and the regulariser is taken proximally.
    eta_combiner : "auto" or float, default "auto"
        Rate of each instance's exponential weights over its kernels, scaled by 2^(-i/2) like the
        steps; "auto" uses the instance's step, as Raker uses one eta for both.
    eta_meta : float, default 2.0
        Rate of the second layer's exponential weights over the instances (constant), on the
        losses of the instances' predictions (0: the instances averaged with equal weights for
        ever).  An instance's weight is its level's record: it carries on across the instance's
        restarts.
    share : float in [0, 0.5], default 0.001
        Fixed share of the second layer (Herbster & Warmuth 1998): after each update its weights
        become (1 - share) h_bar + share / n_levels, so after a change a level that restarts often
        can lead again within about log(n_levels / share) / (eta_meta * loss gap) rounds, however
        long the never-restarting level led before.  0 is plain exponential weights on each
        level's record, which after a long stationary stretch follow a change only as slowly as
        the never-restarting instance itself (tests/test_adaraker.py).
    lam : float, default 1e-3
        Weight of the regulariser lam * ||theta||^2 in every instance's kernel losses.
    loss : str, default "auto"
        {loss_choices}
    shared_draw : bool, default False
        One standard frequency draw per kernel family (see ``Raker``).
    random_state : None, int, SeedSequence or Generator
        Seeds the frequency draws.

    Attributes
    ----------
    features_ : RandomFourierFeatures
        The fitted features, shared by every instance.
    weights_ : ndarray (n_kernels,)
        What the model puts on each kernel: sum over instances of the instance's weight times its
        kernel weight.
    instance_weights_ : ndarray (n_levels,)
        The second layer's weights, by level (interval length 2^i).
    n_samples_seen_ : int
    n_features_in_ : int
"""
_PARAMS_DOC = with_dtype_doc(_PARAMS_DOC)


_INTRO = class_doc_intro(__doc__)


class _AdaRakerBase(RFFModelMixin):
    _losses = REGRESSION_LOSSES
    rng_protocol = "default"            # the frequencies are drawn as Raker's default draws them
    _parameter_constraints = {
        **{name: RFF_PARAMETERS[name] for name in ("kernels", "n_components", "shared_draw",
                                                   "random_state", "dtype")},
        "n_levels": [Interval("int", 1, MAX_LEVELS)],
        "eta": RATE, "eta_combiner": [AUTO, *RATE], "eta_meta": [Interval("real", 0.0, MAX_RATE)],
        "share": SHARE,
        "lam": [Interval("real", 0.0, MAX_RATE)],
        "loss": [Options("auto", *REGRESSION_LOSSES)],
    }

    def __init__(self, kernels=None, n_components=50, n_levels=12, eta=2.0, eta_combiner="auto",
                 eta_meta=2.0, share=0.001, lam=1e-3, loss="auto", shared_draw=False,
                 random_state=None, dtype="float64", **unknown):
        self.kernels = kernels
        self.n_components = n_components
        self.n_levels = n_levels
        self.eta = eta
        self.eta_combiner = eta_combiner
        self.eta_meta = eta_meta
        self.share = share
        self.lam = lam
        self.loss = loss
        self.shared_draw = shared_draw
        self.random_state = random_state
        self.dtype = dtype
        take_renamed(self, unknown)           # none renamed: refused naming this class

    @classmethod
    def _unit_test_params(cls):
        return [{"kernels": [Gaussian(0.5), Laplacian(1.0)], "n_components": 4, "n_levels": 3,
                 "random_state": 0},
                {"kernels": [Gaussian(0.5), Gaussian(2.0)], "n_components": 4, "n_levels": 5,
                 "eta": 0.5, "eta_combiner": 1.0, "share": 0.0, "shared_draw": True,
                 "random_state": 0}]

    def _check_params(self) -> dict:
        config = self._check_rff_params()
        config["loss"] = LOSSES[self._loss_name()]
        config["standardize"] = self._loss_name() in REGRESSION_LOSSES
        config["steps"], config["rates"], config["periods"] = interval_levels(
            int(self.n_levels), self.eta, self.eta_combiner)
        return config

    def _implied_state_size(self, n_features: int) -> int:
        return super()._implied_state_size(n_features) + \
            2 * self.n_components * len(self.kernels_) * (int(self.n_levels) - 1)

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        bank = self._rff_bank(config, n_features, feature_rng)
        experts = OGDRestarts(bank.n_kernels, config["steps"], config["periods"], bank.n_outputs,
                              config["loss"], float(self.lam))
        combiner = NestedHedge(bank.n_kernels, config["rates"], config["periods"],
                               float(self.eta_meta), config["loss"], float(self.share))
        return Engine(bank, experts, combiner, round_bit_generator, config["standardize"])

    @property
    def weights_(self) -> np.ndarray:
        """What the model puts on each kernel: sum_i h_bar_i w_bar_{k,i} (sums to 1).

        Returns
        -------
        ndarray of float, shape (n_kernels,)

        Raises
        ------
        NotFittedError
            If the model has learnt nothing yet.
        """
        engine = self._fitted_engine()
        return engine.locked(lambda: engine.combiner.kernel_weights_)

    @property
    def instance_weights_(self) -> np.ndarray:
        """The second layer's weights over the instances, by level (interval length 2^i).

        Returns
        -------
        ndarray of float, shape (n_levels,)

        Raises
        ------
        NotFittedError
            If the model has learnt nothing yet.
        """
        engine = self._fitted_engine()
        return engine.locked(lambda: np.array(engine.combiner.h_bar))


class AdaRaker(_AdaRakerBase, OnlineEstimator):
    __doc__ = _INTRO + "\n    Regression.\n" + _PARAMS_DOC.replace(
        "{loss_choices}", '"auto" (the squared loss), "squared" or "absolute".') + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import AdaRaker, Gaussian, Laplacian
    >>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2))
    >>> y = np.where(np.arange(400) < 200, np.sin(3 * X[:, 0]), -np.sin(3 * X[:, 0]))  # a change
    >>> model = AdaRaker([Gaussian(0.5), Laplacian(1.0)], n_components=20, random_state=0)
    >>> model.predict_learn(X, y).shape, model.instance_weights_.shape
    ((400,), (12,))
    """


class AdaRakerClassifier(_AdaRakerBase, BinaryClassifier):
    _parameter_constraints = {**_AdaRakerBase._parameter_constraints,
                              "loss": [Options("auto", *CLASSIFICATION_LOSSES)]}
    _losses = CLASSIFICATION_LOSSES
    __doc__ = (_INTRO + "\n    Binary classification: labels map to -1/+1 (see ``classes_``); "
               "``predict*`` return labels, ``decision_function`` the scores.\n"
               + _PARAMS_DOC.replace("{loss_choices}",
                                     '"auto" (the logistic loss), "logistic" or "hinge".') + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import AdaRakerClassifier, Gaussian
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = AdaRakerClassifier([Gaussian(0.5)], n_components=20, random_state=0).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)
