"""Raker: random-feature online multi-kernel learning with exponential weights.

Shen, Chen & Giannakis, "Random feature-based online multi-kernel learning in environments with
unknown dynamics", JMLR 2019, as restated by Ghari & Shen, "Graph-Aided Online Multi-Kernel
Learning", JMLR 2023, eqs. (6)-(9).

Each kernel i keeps a linear model theta_i on its random features z_i(x); the prediction is
y_hat = sum_i w_bar_i theta_i . z_i(x).  After the label, every kernel takes an OGD step on
L_i = loss(theta_i . z_i, y) + lam ||theta_i||^2 and its weight becomes w_i exp(-eta_t L_i).
"""
from __future__ import annotations

import numpy as np

from fastomkl._estimator import BinaryClassifier, OnlineEstimator
from fastomkl._core.combiners.hedge import Hedge
from fastomkl._core.engine import Engine
from fastomkl._core.steps import FORMER_ENSEMBLE_STEPS
from fastomkl._estimator.params import Options, take_renamed
from fastomkl._rff_models import (CLASSIFICATION_LOSSES, OGD_PARAMETERS, OGD_STEP, REGRESSION_LOSSES,
                                  RFF_PARAMETERS, SHARE, ChangeDetection, RFFModelMixin,
                                  class_doc_intro, ogd_experts, with_dtype_doc)
from fastomkl.kernels import Gaussian, Laplacian

__all__ = ["Raker", "RakerClassifier"]

_PARAMS_DOC = """
    Parameters
    ----------
    kernels : list of Kernel, default None
        The dictionary; None is paper 000's 76 kernels (``fastomkl.paper000_dictionary()``).
    n_components : int, default 50
        Random frequencies per kernel (D); each kernel's model has 2D weights.
    eta : "ensemble", "auto", "adagrad" or float, default "ensemble"
        OGD step size.  "ensemble" adapts to the data and keeps adapting on a stream that
        changes: each kernel learns with three constant steps 2^-4, 2^-2, 1 (truncated so that an
        update never takes the example's prediction past the minimiser of its loss: onto y at
        most for the squared loss; the regulariser taken proximally; regression targets
        standardised online: winsorised running mean and standard deviation, a target beyond 8
        sd clipped, ``fastomkl._core.engine``), and the exponential weights, at the constant rate
        2, weigh all kernel x step experts, so the weight moves to the step that suits the data
        now.  On 13 shipped data sets and 7 drifting streams, in their recorded order and
        shuffled, it is within 1.13x of the best point of a step grid in every cell, where
        "auto" is 3.82x in recorded order (elevators); three linear models per kernel share its
        features, at 1.4-1.9x the cost per sample of "auto" for the 76-kernel dictionary
        (bench/results/defaults_orders.md, step_rule_costs.md).  "auto" (the same as
        "adagrad"; the default before the ensemble) is AdaGrad-norm: one step per kernel that only shrinks, truncated at the
        zero of its loss's tangent, targets standardised online, exponential weights at rate 1:
        as good on shuffled data, slower after a change, cheaper.  A number is the paper's step,
        constant or eta / sqrt(t) (``eta_schedule``): ``eta=0.1`` is the paper's experimental
        setting.
    eta_schedule : {"inv_sqrt", "constant"}, default "inv_sqrt"
        Schedule of a numeric ``eta`` and of a numeric ``eta_combiner``: the paper's experiments
        use 0.1 / sqrt(t), its theory a constant.
    lam : float, default 1e-3
        Weight of the regulariser lam * ||theta_i||^2 in every kernel's loss.
    loss : str, default "auto"
        {loss_choices}
    eta_combiner : "auto" or float, default "auto"
        Rate of the exponential weights; "auto" uses ``eta``, as the paper (or the constant 2
        under ``eta="ensemble"``, 1 under ``eta="auto"``, on standardised losses).  A number
        follows ``eta_schedule`` whatever ``eta`` is: ``eta_combiner=2.0`` alone is 2 / sqrt(t),
        and ``eta_schedule="constant"`` makes it the constant 2.  Formerly ``eta_hedge`` (still
        accepted, with a FutureWarning).
    regularizer_after_update : bool, default False
        Fidelity switch: False evaluates lam ||theta||^2 in L_i before the OGD step (the paper);
        True after it (the authors' released code).
    shared_draw : bool, default False
        Share one standard frequency draw per kernel family (same kind and shape parameters),
        kernel i using it scaled by 1/sigma_i, as paper 001's authors draw; False draws every
        kernel independently (paper 000).  Faster: each sample is projected once per family, not
        once per kernel (about 1.3x fewer instructions per sample for the 76-kernel dictionary, see
        bench/results/shared_draw.md).  The trade-off: each kernel's features remain an unbiased
        random-feature approximation of its kernel, but the features of kernels of one family
        are functions of the same frequencies, so their errors, their losses and the kernel
        weights estimated from them are correlated across kernels instead of independent (on
        Naval and Airfoil the MSE moved by less than 1% over three seeds).
    rng_protocol : {"default", "legacy"}, default "default"
        "legacy" replays the authors' notebooks: with an integer ``random_state`` s, the stream of
        ``np.random.seed(s)`` draws the frequencies (``fastomkl.features.legacy_frequencies``, Gaussian
        and Laplacian kernels) and then, continuing, the per-round draws.
    random_state : None, int, SeedSequence or Generator
        Seeds the frequency draws (its own stream: same seed, same features in every model;
        under ``rng_protocol="legacy"`` the one ``np.random.seed`` stream).
    share : float in [0, 0.5], default 0
        Fixed share of the exponential weights (Herbster & Warmuth 1998): after each update the
        weights become (1 - share) w_bar + share / N, so no expert's weight falls below share / N
        and a kernel (or, under ``eta="ensemble"``, a step) that was bad can take the lead again
        soon after it becomes the best, however long it lost before.  0 is the paper's Hedge.
    detect_changes : "auto" or bool, default "auto"
        Under the adaptive step rules (``eta="ensemble"`` or ``"auto"``), mix the weights the
        same way with share 1/2 when the stream changes: a Page-Hinkley test (tolerance 0.005,
        threshold 50) on the combined prediction's mistakes (classifier) or squared errors in
        standard units, capped at 4 (regressor); ``n_changes_detected_`` counts its alarms.
        While nothing changes the weights keep their lead; after a change every kernel x step
        is a few rounds from taking it.  On ConceptDriftStream's abrupt switch the
        classifier's error over the stream fell from 0.20-0.31 to 0.15-0.19 (four seeds),
        after FriedmanDrift's global changes the regressor's by up to 8% (on one seed of four
        it rose by 0.2%), the test never fired on the shipped classification data in either
        order, and the shipped regression data moved by at most 2%
        (bench/results/change_detection.md).  "auto" is True; False is the rule of earlier
        releases (files written by them load with it).  A numeric ``eta`` (the paper's) has no
        test (True raises).

    Attributes
    ----------
    features_ : RandomFourierFeatures
        The fitted features; ``features_.transform(X)`` is exactly what the model computes.
    weights_ : ndarray (n_kernels,)
        Normalised kernel weights w_bar.
    n_samples_seen_ : int
    n_features_in_ : int
"""
_PARAMS_DOC = with_dtype_doc(_PARAMS_DOC)


_INTRO = class_doc_intro(__doc__)


class _RakerBase(ChangeDetection, RFFModelMixin):
    _losses = REGRESSION_LOSSES
    _parameter_constraints = {**RFF_PARAMETERS, **OGD_PARAMETERS, "eta": OGD_STEP,
                              "loss": [Options("auto", *REGRESSION_LOSSES)],
                              "share": SHARE, **ChangeDetection._change_parameters}
    _renamed_parameters = {"eta_hedge": "eta_combiner"}

    def __init__(self, kernels=None, n_components=50, eta="ensemble", eta_schedule="inv_sqrt",
                 lam=1e-3,
                 loss="auto", eta_combiner="auto", regularizer_after_update=False,
                 shared_draw=False, rng_protocol="default", random_state=None, dtype="float64",
                 share=0.0, detect_changes="auto", **renamed):
        self.kernels = kernels
        self.n_components = n_components
        self.eta = eta
        self.eta_schedule = eta_schedule
        self.lam = lam
        self.loss = loss
        self.eta_combiner = eta_combiner
        self.regularizer_after_update = regularizer_after_update
        self.shared_draw = shared_draw
        self.rng_protocol = rng_protocol
        self.random_state = random_state
        self.dtype = dtype
        self.share = share
        self.detect_changes = detect_changes
        take_renamed(self, renamed)

    @classmethod
    def _unit_test_params(cls):
        return [{"kernels": [Gaussian(0.5), Laplacian(1.0)], "n_components": 4, "random_state": 0},
                {"kernels": [Gaussian(0.5), Gaussian(2.0)], "n_components": 4, "eta": 0.1,
                 "shared_draw": True, "random_state": 0},
                {"kernels": [Gaussian(1.0)], "n_components": 4, "dtype": "float32",
                 "random_state": 0},
                {"kernels": [Gaussian(0.5), Laplacian(1.0)], "n_components": 4,
                 "eta": "ensemble", "share": 0.01, "random_state": 0}]

    def _check_params(self) -> dict:
        config = self._check_ogd_params()
        config["change"] = self._change_kind(isinstance(self.eta, str), True)
        return config

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        bank = self._rff_bank(config, n_features, feature_rng)
        n = bank.n_kernels
        experts = ogd_experts(config, n, bank.n_outputs, config["lam"],
                              bool(self.regularizer_after_update),
                              steps=self._from_file("steps"))
        combiner = Hedge(experts.n_experts, *config["eta_combiner"], float(self.share),
                         self._new_change_test(config["change"]))
        return Engine(bank, experts, combiner, round_bit_generator, config["standardize"])

    def _layout_in_file(self, arrays: dict) -> dict:
        # A file of eta="ensemble" written when its grid had four steps per kernel keeps them (its
        # models are of that grid): its predictions are the file's, and it learns on with them.
        layout = super()._layout_in_file(arrays)
        theta = arrays.get("experts.theta")
        if (self.eta == "ensemble" and theta is not None
                and theta.shape[0] == len(self.kernels_) * len(FORMER_ENSEMBLE_STEPS)):
            layout["steps"] = FORMER_ENSEMBLE_STEPS
        return layout

    @property
    def weights_(self) -> np.ndarray:
        """Normalised kernel weights w_bar (non-negative, summing to 1).

        Returns
        -------
        ndarray of float, shape (n_kernels,)

        Raises
        ------
        NotFittedError
            If the model has learnt nothing yet.

        Examples
        --------
        >>> from fastomkl import Gaussian, Laplacian, Raker
        >>> model = Raker([Gaussian(1.0), Laplacian(1.0)], n_components=8, random_state=0)
        >>> model = model.learn_one([0.1, 0.2], 1.0)
        >>> model.weights_.shape, bool(abs(model.weights_.sum() - 1) < 1e-12)
        ((2,), True)
        """
        return self._kernel_weights(self._fitted_engine().combiner.w_bar)


class Raker(_RakerBase, OnlineEstimator):
    __doc__ = _INTRO + "\n    Regression.\n" + _PARAMS_DOC.replace(
        "{loss_choices}", '"auto" (the squared loss), "squared" or "absolute".') + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, Raker
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> model = Raker([Gaussian(0.5), Laplacian(1.0)], n_components=20, random_state=0)
    >>> y_hat = model.predict_learn(X, np.sin(3 * X[:, 0]))    # predict each sample, then learn it
    >>> y_hat.shape, model.weights_.shape, model.score(X, np.sin(3 * X[:, 0])) > 0.8
    ((300,), (2,), True)
    """


class RakerClassifier(_RakerBase, BinaryClassifier):
    _parameter_constraints = {**_RakerBase._parameter_constraints,
                              "loss": [Options("auto", *CLASSIFICATION_LOSSES)]}
    __doc__ = (_INTRO + "\n    Binary classification: labels map to -1/+1 (see ``classes_``); "
               "``predict*`` return labels, ``decision_function`` the scores.\n"
               + _PARAMS_DOC.replace("{loss_choices}", '"auto" (the logistic loss), "logistic" or "hinge".') + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, RakerClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = RakerClassifier([Gaussian(0.5), Laplacian(1.0)], n_components=20, random_state=0)
    >>> model.fit(X, y).classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)
    _losses = CLASSIFICATION_LOSSES
