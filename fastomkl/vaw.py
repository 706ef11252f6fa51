"""The Vovk-Azoury-Warmuth family (Rokhlin & Gurtovaya, "double VAW"): VAW, concatenated VAW,
VAW^2, VAW-EWA and VAW experts under the other meta-learners (Aggregating Algorithm, BOA, ML-Poly,
ML-Prod).

All are presets of one engine (features -> experts -> combiner):

=============  ============================  ========================  ======================
model          features                      experts                   combiner
=============  ============================  ========================  ======================
``VAW``        one kernel                    one VAW on z(x)           ``Single``
``ConcatVAW``  all kernels concatenated      one VAW on N * 2m values  ``Single``
``VAW2``       one block per kernel          N VAW experts             second-level VAW
``VAWMeta``    one block per kernel          N VAW experts             EWA, AA, BOA, ML-*, ...
``VAWEWA``     one block per kernel          N VAW experts             EWA
=============  ============================  ========================  ======================

The compiled parts compose with the rest of the library: ``fastomkl._core.experts.vaw.VAWExperts``
runs under Hedge or graph feedback (importance-weighted updates), and the meta-learners of
``fastomkl._core.combiners.meta`` combine any experts.

The VAW forecaster on features z_t with ridge lam predicts

    mode="vaw"   : y_hat_t = z_t^T (lam I + sum_{s<=t} z_s z_s^T)^{-1} sum_{s<t} y_s z_s
                   (the paper's definition)
    mode="ridge" : y_hat_t = z_t^T (lam I + sum_{s<t} z_s z_s^T)^{-1} sum_{s<t} y_s z_s
                   (online ridge: what the authors' experiments ran, and what Table 2 shows)

and keeps the inverse matrix, packed, by symmetric rank-one (Sherman-Morrison) updates: one
symmetric matrix-vector product and one rank-one update per round (BLAS dspmv / dspr).  Random
features are z(x) = [cos(W x); sin(W x)] / sqrt(m) with m = ``n_components`` frequencies (2m values,
||z(x)|| = 1).  Note the scale: lam on these features equals lam * m on unscaled [cos, sin] features.

Frequencies are drawn from ``random_state`` (a NumPy Generator stream) by default.  With
``rng_protocol="legacy"`` and an integer ``random_state`` s, they are drawn exactly as the paper's
notebooks do: ``np.random.seed(s)`` (legacy MT19937), then per kernel in dictionary order a (d, m)
block of ``randn`` (Gaussian) or ``standard_cauchy`` (Laplacian) divided by sigma.  This reproduces
the published numbers seed by seed.

Every regressor has a classifier twin (``VAWClassifier``, ...): the same model regressing on the
labels mapped to -1/+1 with the square loss, as the VAW-type classifiers of the papers do, and
predicting the class of the score's sign.

Defaults are data-adaptive: multiplying the labels by c multiplies every prediction by c (the VAW
experts are linear in y; the second levels adapt to the observed label range or scale), and every
expert and second-level VAW learns the labels minus their running mean (``center=True``), so labels
in raw units, far from 0, are learnt about as well as labels scaled to [0, 1].  The paper's model
is ``center=False`` with ``label_range=(0, 1)`` (``VAWMeta`` / ``VAWEWA``: the clip range and the
rates it implies) or ``lam_meta=1`` (``VAW2``).
"""
from __future__ import annotations

import numpy as np

from fastomkl._estimator import BinaryClassifier, OnlineEstimator
from fastomkl._core.combiners.hedge import Hedge
from fastomkl._core.engine import Engine
from fastomkl._core.features.rff import ConcatenatedFeatures
from fastomkl._core.combiners.meta import AA, BOA, EWA, MLPoly, MLProd, Single, VAWCombiner
from fastomkl._core.steps import SCHEDULES
from fastomkl._core.experts.vaw import VAWExperts
from fastomkl._estimator.params import (Boolean, Interval, Kernels, OneKernel, Options, Range,
                                        take_renamed)
from fastomkl._rff_models import (MAX_RATE, RFF_PARAMETERS, RFFModelMixin, auto, with_dtype_doc)
from fastomkl._validation import check_float, check_int
from fastomkl.kernels import Gaussian, Laplacian, paper003_dictionary

__all__ = ["VAW", "ConcatVAW", "VAW2", "VAWMeta", "VAWEWA", "VAWClassifier", "ConcatVAWClassifier",
           "VAW2Classifier", "VAWMetaClassifier", "VAWEWAClassifier", "m_for_T", "META_LEARNERS"]

MODES = ("vaw", "ridge")
META_LEARNERS = ("vaw", "ewa", "aa", "boa", "mlpoly", "mlprod", "hedge")


def m_for_T(T: int, R_over_Y: float = 1.0, lam: float = 1.0) -> int:
    """Frequencies per kernel that balance the two m-dependent terms of the VAW^2 regret bound:
    minimising T R^2 / m + (m Y^2 / 2) ln(1 + 2T / lam) gives m* = (R/Y) sqrt(2T / ln(1 + 2T/lam))
    (49 for T = 12 000 and R = Y, close to the paper's m = 50), rounded to the nearest integer."""
    T = check_int(T, "T", 1)
    R_over_Y = check_float(R_over_Y, "R_over_Y", 0.0, strict=True)
    lam = check_float(lam, "lam", 0.0, strict=True)
    return max(1, int(round(R_over_Y * np.sqrt(2.0 * T / np.log1p(2.0 * T / lam)))))


# Ridge parameters: the inverse 1 / lam of a VAW forecaster's Gram matrix, and the features'
# unit norm, keep every state finite and every saved file loadable within these bounds.
RIDGE = [Interval("real", 1e-8, 1e8)]
# Forgetting factor gamma of discounted least squares (1: none, the papers' forecasters).
FORGET = [Interval("real", 0.0, 1.0, closed="right")]
_VAW_PARAMETERS = {
    **{name: RFF_PARAMETERS[name] for name in ("n_components", "rng_protocol", "random_state",
                                               "dtype")},
    "lam": RIDGE,
    "mode": [Options(*MODES)],
    "center": [Boolean()],
    "refresh_every": [Interval("int", 0, 2 ** 62)],
    "forget": FORGET,
}
_DICTIONARY = {"kernels": [None, Kernels()]}


def _unit_kernels():
    return [Gaussian(0.5), Laplacian(1.0)]


def _one_kernel(kernels, model):
    """VAW's older ``kernels`` argument as its ``kernel``: a one-kernel list (or a kernel)."""
    if kernels is None:
        return None
    if not isinstance(kernels, (list, tuple)):
        return kernels
    if len(kernels) != 1:
        raise ValueError("VAW is a one-kernel model: ConcatVAW(kernels=[...]) concatenates the "
                         "features of several kernels")
    return kernels[0]


class _VAWFamily(RFFModelMixin):
    """Parameters and engine pieces shared by the family (not an estimator by itself)."""

    _default_kernels = staticmethod(paper003_dictionary)

    @property
    def kernels_(self) -> list:
        """The kernel dictionary in use (``kernels``, or the model's default when None)."""
        return self._default_kernels() if self.kernels is None else list(self.kernels)

    @classmethod
    def _unit_test_params(cls):
        return [{"kernels": _unit_kernels(), "n_components": 4, "random_state": 0},
                {"kernels": _unit_kernels(), "n_components": 4, "mode": "ridge", "center": False,
                 "refresh_every": 3, "random_state": 0},
                {"kernels": _unit_kernels(), "n_components": 4, "forget": 0.97, "random_state": 0}]

    def _implied_state_size(self, n_features: int) -> int:
        """The random features, and one packed inverse per expert: (2m)^2 / 2 each (of the
        concatenated N * 2m features for ConcatVAW), with S as much again when it is kept."""
        dims = self._expert_dims()
        keeps_gram = self.refresh_every or self.forget < 1
        inverses = sum(d * (d + 1) // 2 for d in dims) * (2 if keeps_gram else 1)
        return super()._implied_state_size(n_features) + inverses + len(dims) ** 2

    def _expert_dims(self) -> list:
        return [2 * self.n_components] * len(self.kernels_)

    def _check_vaw_params(self) -> dict:
        config = self._check_rff_params()
        config["lam"] = float(self.lam)
        config["mode"] = self.mode
        config["refresh_every"] = self.refresh_every
        config["center"] = bool(self.center)
        config["forget"] = float(self.forget)
        return config

    def _expert_bank(self, config, n_experts, dim) -> VAWExperts:
        return VAWExperts(n_experts, dim, config["lam"], config["mode"], config["refresh_every"],
                          config["center"], config["forget"])


_COMMON_DOC = """
    n_components : int, default 50
        Random frequencies m per kernel; each kernel gives 2m features.
    lam : float, default 1.0
        Ridge parameter of the VAW experts (> 0).
    mode : {"vaw", "ridge"}, default "vaw"
        "vaw": the current features enter the Gram matrix before predicting (the paper's VAW);
        "ridge": online ridge regression (what produced the paper's Table 2).
    center : bool, default True
        Every VAW expert predicts the running mean of the labels it has learnt from plus its VAW
        forecast, which learns the labels minus that mean: a data-adaptive intercept, so that
        labels far from 0 (raw units) are learnt as well as centred ones.  A second-level VAW
        likewise regresses the deviations from that mean.  False is the paper's model (no
        intercept; its experiments scale the labels to [0, 1] instead).
    refresh_every : int, default 0
        Drift guard for very long streams: when > 0 every expert also keeps its Gram matrix S and
        recomputes its inverse from a Cholesky factorisation of S every ``refresh_every`` updates
        (twice the memory, one extra rank-one update per round).  0 relies on the Sherman-Morrison
        updates alone, which store one triangle only so the inverse stays exactly symmetric; drift
        from a direct inverse is about 5e-13 relative (3e-11 on the weights) after 1e5 updates of a
        100-dimensional expert.
    forget : float in (0, 1], default 1.0
        Forgetting factor gamma for streams that drift: discounted least squares, in which a
        round seen `age` updates ago weighs gamma^age (half-life ln 2 / -ln gamma rounds: 6931
        for 0.9999, 693 for 0.999, 69 for 0.99) while the ridge lam keeps its full weight: the
        inverse is recomputed from the kept Gram matrix every max(D, ln 0.99 / ln gamma)
        updates or so (D the expert's dimension, see ``fastomkl/_core/linalg.pxd``), and in
        between the ridge stays within [gamma^R lam, lam], R that period.  It lets the model
        follow a change in the data's law at the price of a shorter memory: on an exchangeable
        stream it only adds variance (``bench/results/vaw_forget.md``).  A second-level VAW
        (``VAW2``, ``VAWMeta`` with meta="vaw") forgets at the same rate; the other meta-learners
        do not.  Costs S's memory and about three times the time per round at D = 100, nearly
        all of it the recomputation (as ``refresh_every`` at that period).  1, the papers'
        setting, weighs all the past equally, with no extra work.
    rng_protocol : {"default", "legacy"}, default "default"
        "legacy" draws the frequencies exactly as the paper's notebooks
        (``fastomkl.features.legacy_frequencies``; these models draw nothing per round);
        it needs an integer ``random_state``.
    random_state : None, int, SeedSequence or Generator
        Seeds the frequency draws.
"""
_COMMON_DOC = with_dtype_doc(_COMMON_DOC)


_CLASSIFIER_DOC = """
    Binary classification by least squares on the labels mapped to -1/+1 (``classes_``; the papers'
    VAW-type classifiers): ``decision_function`` gives the real score, ``predict*`` the class of its
    sign.  There is no ``predict_proba``: the square loss on +-1 labels is not a probability model
    (the score is not calibrated and can leave [-1, 1]).
"""


def _classifier(regressor_doc: str) -> str:
    first, rest = regressor_doc.split("\n", 1)
    return first + "\n" + _CLASSIFIER_DOC + rest


class _VAWModel(_VAWFamily):
    """One VAW forecaster on the features of one kernel (VAW) or of several side by side
    (ConcatVAW)."""

    def _check_params(self) -> dict:
        return self._check_vaw_params()

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        features = ConcatenatedFeatures(self._rff_bank(config, n_features, feature_rng))
        experts = self._expert_bank(config, 1, features.n_outputs)
        return Engine(features, experts, Single(1), round_bit_generator)

    @property
    def coef_(self) -> np.ndarray:
        return self._fitted_engine().experts.coef_[0]


class _OneKernelVAW(_VAWModel):
    _parameter_constraints = {"kernel": [None, OneKernel()], **_VAW_PARAMETERS}
    _renamed_parameters = {"kernels": ("kernel", _one_kernel)}

    def __init__(self, kernel=None, n_components=50, lam=1.0, mode="vaw", center=True,
                 refresh_every=0, forget=1.0, rng_protocol="default", random_state=None,
                 dtype="float64", **renamed):
        self.kernel = kernel
        self.n_components = n_components
        self.lam = lam
        self.mode = mode
        self.center = center
        self.refresh_every = refresh_every
        self.forget = forget
        self.rng_protocol = rng_protocol
        self.random_state = random_state
        self.dtype = dtype
        take_renamed(self, renamed)

    @property
    def kernels_(self) -> list:
        """The one kernel in use, as a dictionary of one (``kernel``, or Gaussian(1) if None)."""
        return [Gaussian(1.0) if self.kernel is None else self.kernel]

    @classmethod
    def _unit_test_params(cls):
        return [{"kernel": Gaussian(0.5), "n_components": 4, "random_state": 0},
                {"kernel": Laplacian(1.0), "n_components": 4, "mode": "ridge", "center": False,
                 "refresh_every": 3, "random_state": 0},
                {"kernel": Gaussian(0.5), "n_components": 4, "forget": 0.97, "random_state": 0}]


class _ConcatVAWModel(_VAWModel):
    def _expert_dims(self) -> list:
        return [2 * self.n_components * len(self.kernels_)]

    _parameter_constraints = {**_DICTIONARY, **_VAW_PARAMETERS}

    def __init__(self, kernels=None, n_components=50, lam=1.0, mode="vaw", center=True,
                 refresh_every=0, forget=1.0, rng_protocol="default", random_state=None,
                 dtype="float64"):
        self.kernels = kernels
        self.n_components = n_components
        self.lam = lam
        self.mode = mode
        self.center = center
        self.refresh_every = refresh_every
        self.forget = forget
        self.rng_protocol = rng_protocol
        self.random_state = random_state
        self.dtype = dtype


_VAW_DOC = """Vovk-Azoury-Warmuth regression on random Fourier features of one kernel.

    ``ConcatVAW`` concatenates the features of several kernels into one vector.

    Parameters
    ----------
    kernel : Kernel, default None
        None is the Gaussian kernel with sigma = 1.  (Formerly ``kernels``, a list of one kernel:
        still accepted, with a FutureWarning.)
""" + _COMMON_DOC + """
    Attributes
    ----------
    coef_ : ndarray (n_kernels * 2 m,)
        Current weights w = S^{-1} b on the (concatenated) features.
    features_ : RandomFourierFeatures
    """


class VAW(_OneKernelVAW, OnlineEstimator):
    __doc__ = _VAW_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, VAW
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = VAW(Gaussian(0.5), n_components=20, random_state=0).fit(X, y)
    >>> model.coef_.shape, model.score(X, y) > 0.8
    ((40,), True)
    """


class VAWClassifier(_OneKernelVAW, BinaryClassifier):
    __doc__ = _classifier(_VAW_DOC) + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, VAWClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = VAWClassifier(Gaussian(0.5), n_components=20, random_state=0).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """


_CONCAT_DOC = """Concatenated VAW (Theorem 1 of the paper): one VAW over the features of all N
    kernels side by side (N * 2m values).  It competes with the sum-kernel RKHS, at O((N m)^2) time
    and memory per round: with the default 76 kernels and m = 50 the inverse (stored packed, one
    triangle) alone takes 7600 * 7601 / 2 doubles (231 MB), and a round costs about 1.7e8 flops.

    Parameters
    ----------
    kernels : list of Kernel, default None
        None is the paper's 76 kernels (``fastomkl.paper003_dictionary()``).
""" + _COMMON_DOC


class ConcatVAW(_ConcatVAWModel, OnlineEstimator):
    __doc__ = _CONCAT_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import ConcatVAW, Gaussian, Laplacian
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = ConcatVAW([Gaussian(0.5), Laplacian(1.0)], n_components=10, random_state=0)
    >>> model.fit(X, y).coef_.shape, model.score(X, y) > 0.8
    ((40,), True)
    """
    _default_kernels = staticmethod(paper003_dictionary)


class ConcatVAWClassifier(_ConcatVAWModel, BinaryClassifier):
    __doc__ = _classifier(_CONCAT_DOC) + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import ConcatVAWClassifier, Gaussian, Laplacian
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = ConcatVAWClassifier([Gaussian(0.5), Laplacian(1.0)], n_components=10,
    ...                             random_state=0)
    >>> model.fit(X, y).classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """
    _default_kernels = staticmethod(paper003_dictionary)


class _VAW2Model(_VAWFamily):
    _parameter_constraints = {**_DICTIONARY, **_VAW_PARAMETERS,
                              "lam_meta": ["auto", Interval("real", 1e-8, 1e8)],
                              "truncate": [None, Range()]}

    def __init__(self, kernels=None, n_components=50, lam=0.01, mode="vaw", center=True,
                 lam_meta="auto", truncate=None, refresh_every=0, forget=1.0,
                 rng_protocol="default", random_state=None, dtype="float64"):
        self.kernels = kernels
        self.n_components = n_components
        self.lam = lam
        self.mode = mode
        self.center = center
        self.lam_meta = lam_meta
        self.truncate = truncate
        self.refresh_every = refresh_every
        self.forget = forget
        self.rng_protocol = rng_protocol
        self.random_state = random_state
        self.dtype = dtype

    def _check_params(self) -> dict:
        config = self._check_vaw_params()
        config["lam_meta"] = self.lam_meta if isinstance(self.lam_meta, str) else float(self.lam_meta)
        config["truncate"] = None if self.truncate is None else tuple(map(float, self.truncate))
        return config

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        bank = self._rff_bank(config, n_features, feature_rng)
        n = bank.n_kernels
        experts = self._expert_bank(config, n, bank.n_outputs)
        if config["lam_meta"] == "auto":
            combiner = VAWCombiner(n, config["lam"], config["mode"], config["truncate"],
                                   scale_lam=True, center=config["center"],
                                   forget=config["forget"])
        else:
            combiner = VAWCombiner(n, config["lam_meta"], config["mode"], config["truncate"],
                                   center=config["center"], forget=config["forget"])
        return Engine(bank, experts, combiner, round_bit_generator)

    @property
    def weights_(self) -> np.ndarray:
        return self._fitted_engine().combiner.coef_

    @property
    def experts_coef_(self) -> np.ndarray:
        return self._fitted_engine().experts.coef_


_LAM_DOC = """    lam : float, default 1.0
        Ridge parameter of the VAW experts (> 0)."""
_VAW2_LAM_DOC = """    lam : float, default 0.01
        Ridge parameter of the VAW experts (> 0), and through ``lam_meta="auto"`` of the second
        level.  The features have unit norm and the forecasts are linear in the labels, so lam is
        free of the data's units; 0.01 was the best of {0.01, 0.1, 1, 10} on 12 of the 13 shipped
        data sets (``bench/defaults.py``).  The paper uses ``lam=1``."""
assert _LAM_DOC in _COMMON_DOC      # VAW2 documents its own default of lam
_VAW2_DOC = """VAW^2 (double VAW): one VAW expert per kernel, combined by a second-level VAW on the
    vector of expert predictions, with signed (unconstrained) weights.

    Per round: x_hat_k = VAW_k(z_k(x)) for every kernel k; optionally x_hat <- clip(x_hat, lo, hi)
    (``truncate``, the paper's VAW^2(trunc)); y_hat = VAW_meta(x_hat).  Cost O(N m d + N m^2 + N^2)
    per round, memory N (2m)^2 + N^2 doubles (twice N^2 with ``lam_meta="auto"``), constant over
    the stream.

    Parameters
    ----------
    kernels : list of Kernel, default None
        None is the paper's 76 kernels (``fastomkl.paper003_dictionary()``).
""" + _COMMON_DOC.replace(_LAM_DOC, _VAW2_LAM_DOC) + """
    lam_meta : float or "auto", default "auto"
        Ridge of the second level.  Its inputs are expert predictions, on the scale of the labels,
        so a fixed value regularises the more the smaller the labels are.  "auto" is scale-free:
        ``lam`` times the square of the largest |y| seen so far (of the largest deviation from the
        running mean with ``center``; ``lam`` before any nonzero one; the inverse is recomputed,
        O(N^3), each time that grows).  On labels scaled to [0, 1], without ``center``, this is
        ``lam`` once a label 1 has been seen.  A number fixes it (the paper: ``lam_meta=1``).
    truncate : None or (lo, hi), default None
        Clip the expert predictions to [lo, hi] before the second level (VAW^2(trunc)); the final
        prediction is not clipped.

    Attributes
    ----------
    weights_ : ndarray (n_kernels,)
        Current signed second-level weights alpha = S2^{-1} b2 (the paper's Fig. 2).
    experts_coef_ : ndarray (n_kernels, 2 m)
        Current weights of every expert.
    """


class VAW2(_VAW2Model, OnlineEstimator):
    __doc__ = _VAW2_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, VAW2
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = VAW2([Gaussian(0.5), Laplacian(1.0)], n_components=10, random_state=0).fit(X, y)
    >>> model.weights_.shape, model.experts_coef_.shape, model.score(X, y) > 0.8
    ((2,), (2, 20), True)
    """


class VAW2Classifier(_VAW2Model, BinaryClassifier):
    __doc__ = _classifier(_VAW2_DOC) + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, VAW2Classifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = VAW2Classifier([Gaussian(0.5), Laplacian(1.0)], n_components=10, random_state=0)
    >>> model.fit(X, y).classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """


class _VAWMetaModel(_VAWFamily):
    _parameter_constraints = {**_DICTIONARY, **_VAW_PARAMETERS,
                              "meta": [Options(*META_LEARNERS)],
                              "label_range": [None, Range()],
                              "eta_combiner": ["auto", None,
                                               Interval("real", 0.0, MAX_RATE, closed="right")]}
    _renamed_parameters = {"eta": "eta_combiner"}

    def __init__(self, kernels=None, meta="ewa", n_components=50, lam=1.0, mode="vaw", center=True,
                 label_range=None, eta_combiner="auto", refresh_every=0, forget=1.0,
                 rng_protocol="default", random_state=None, dtype="float64", **renamed):
        self.kernels = kernels
        self.meta = meta
        self.n_components = n_components
        self.lam = lam
        self.mode = mode
        self.center = center
        self.label_range = label_range
        self.eta_combiner = eta_combiner
        self.refresh_every = refresh_every
        self.forget = forget
        self.rng_protocol = rng_protocol
        self.random_state = random_state
        self.dtype = dtype
        take_renamed(self, renamed)

    def _check_params(self) -> dict:
        config = self._check_vaw_params()
        meta = config["meta"] = self.meta
        span = None
        if self.label_range is None:
            config["label_range"] = None
        else:
            lo, hi = config["label_range"] = tuple(map(float, self.label_range))
            span = hi - lo
        rate = auto(self.eta_combiner)
        if rate != "auto":
            config["eta"] = float(rate)
        elif meta == "hedge":
            config["eta"] = 0.1
        elif span is not None and meta in ("ewa", "aa"):
            config["eta"] = (0.5 if meta == "ewa" else 2.0) / span ** 2
        else:
            config["eta"] = None                # chosen from the data by the combiner
        return config

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        bank = self._rff_bank(config, n_features, feature_rng)
        n = bank.n_kernels
        experts = self._expert_bank(config, n, bank.n_outputs)
        meta, eta = config["meta"], config["eta"]
        clip = "observed" if config["label_range"] is None else config["label_range"]
        if meta == "ewa":
            combiner = EWA(n, eta, clip)
        elif meta == "aa":
            combiner = AA(n, eta, clip)
        elif meta == "vaw":
            combiner = VAWCombiner(n, config["lam"], config["mode"], clip,
                                   scale_lam=config["label_range"] is None,
                                   center=config["center"], forget=config["forget"])
        elif meta == "hedge":
            combiner = Hedge(n, eta, SCHEDULES["inv_sqrt"])
        else:
            combiner = {"boa": BOA, "mlpoly": MLPoly, "mlprod": MLProd}[meta](n, clip)
        return Engine(bank, experts, combiner, round_bit_generator)

    @property
    def weights_(self) -> np.ndarray:
        engine = self._fitted_engine()
        combiner = engine.combiner
        if isinstance(combiner, VAWCombiner):
            return combiner.coef_
        if isinstance(combiner, Hedge):
            return np.array(combiner.w_bar)
        if isinstance(combiner, AA):
            raise AttributeError("the Aggregating Algorithm has no weight vector (its prediction "
                                 "is a substitution function)")
        return engine.locked(lambda: combiner.weights_)


_META_DOC = """VAW experts (one per kernel) under a chosen meta-learner.

    ``meta`` selects the combiner.  All but "hedge" combine the expert predictions clipped to a
    label range [lo, hi] (the paper's truncated experts): ``label_range`` if given, else the range
    of the labels seen so far (no clipping before the first label).

    * "ewa": exponentially weighted average, w_k prop. to exp(-eta L_k) over the cumulative square
      losses of the clipped experts.  Default rate: with ``label_range`` the exp-concavity rate
      1 / (2 (hi - lo)^2) (0.5 on [0, 1], the paper); without, AdaHedge's data-adaptive rate
      ln N / (cumulative mixability gap), which is scale-free.
    * "aa": Vovk's Aggregating Algorithm for the square loss, default rate the mixability rate
      2 / (hi - lo)^2 of the clip range (2 on [0, 1], the paper); its prediction lies in [lo, hi].
    * "boa", "mlpoly", "mlprod": BOA, ML-Poly, ML-Prod (parameter-free, second-order adaptive).
    * "vaw": second-level VAW on the clipped predictions (VAW^2(trunc); ``VAW2`` has more options),
      with ridge ``lam`` given ``label_range``, else ``lam`` times the largest squared label
      (deviation, with ``center``) seen (``VAW2``'s ``lam_meta="auto"``).
    * "hedge": Raker's exponential weights on the raw square losses of the experts, with rate
      ``eta`` (default 0.1) / sqrt(t); no clipping (not scale-free).

    Parameters
    ----------
    kernels : list of Kernel, default None
        None is the paper's 76 kernels.
    meta : str, default "ewa"
        One of "ewa", "aa", "boa", "mlpoly", "mlprod", "vaw", "hedge".
    label_range : None or (lo, hi), default None
        None adapts to the data: clip to the observed label range and choose the rates above from
        the data, so that the model is scale-free.  (lo, hi) is the paper's setting: labels known
        to lie in [lo, hi] (the paper scales them to [0, 1]: ``label_range=(0, 1)`` reproduces it).
    eta_combiner : "auto" or float, default "auto"
        Rate of "ewa", "aa" or "hedge" ("auto": the defaults above).  Formerly ``eta`` (still
        accepted, with a FutureWarning).
""" + _COMMON_DOC + """
    Attributes
    ----------
    weights_ : ndarray (n_kernels,)
        The meta-learner's current weights (the paper's Fig. 2); not defined for "aa".
    """


class VAWMeta(_VAWMetaModel, OnlineEstimator):
    __doc__ = _META_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, VAWMeta
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = VAWMeta([Gaussian(0.5), Laplacian(1.0)], meta="boa", n_components=10,
    ...                 random_state=0)
    >>> weights = model.fit(X, y).weights_                # BOA's convex weights
    >>> weights.shape, round(float(weights.sum()), 6), model.score(X, y) > 0.8
    ((2,), 1.0, True)
    """


class VAWMetaClassifier(_VAWMetaModel, BinaryClassifier):
    __doc__ = _classifier(_META_DOC) + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, VAWMetaClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = VAWMetaClassifier([Gaussian(0.5), Laplacian(1.0)], meta="mlpoly", n_components=10,
    ...                           random_state=0)
    >>> model.fit(X, y).classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """


class _EWAPreset:
    """``VAWMeta`` with meta="ewa" fixed (the parameter is not exposed)."""

    _parameter_constraints = {name: forms for name, forms
                              in _VAWMetaModel._parameter_constraints.items() if name != "meta"}

    def __init__(self, kernels=None, n_components=50, lam=1.0, mode="vaw", center=True,
                 label_range=None, eta_combiner="auto", refresh_every=0, forget=1.0,
                 rng_protocol="default", random_state=None, dtype="float64", **renamed):
        _VAWMetaModel.__init__(self, kernels, "ewa", n_components, lam, mode, center, label_range,
                               eta_combiner, refresh_every, forget, rng_protocol, random_state,
                               dtype,
                               **renamed)


_EWA_DOC = """VAW-EWA (Theorem 3 of the paper): VAW experts clipped to a label range, combined by
    the exponentially weighted average.  Default: clipped to the observed label range with
    AdaHedge's scale-free rate; ``label_range=(lo, hi)`` gives the paper's setting, rate
    1 / (2 (hi - lo)^2) (the paper's model: ``label_range=(0, 1), center=False``, eta = 0.5).


""" + _META_DOC[_META_DOC.index("    Parameters"):].replace(
        """    meta : str, default "ewa"
        One of "ewa", "aa", "boa", "mlpoly", "mlprod", "vaw", "hedge".
""", "")


class VAWEWA(_EWAPreset, VAWMeta):
    __doc__ = _EWA_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, VAWEWA
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = VAWEWA([Gaussian(0.5), Laplacian(1.0)], n_components=10, random_state=0).fit(X, y)
    >>> model.weights_.shape, round(float(model.weights_.sum()), 6), model.score(X, y) > 0.8
    ((2,), 1.0, True)
    """


class VAWEWAClassifier(_EWAPreset, VAWMetaClassifier):
    __doc__ = _classifier(_EWA_DOC) + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, VAWEWAClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = VAWEWAClassifier([Gaussian(0.5), Laplacian(1.0)], n_components=10, random_state=0)
    >>> model.fit(X, y).classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """
