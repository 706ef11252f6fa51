"""The Vovk-Azoury-Warmuth family (Rokhlin & Gurtovaya, "double VAW"): VAW, concatenated VAW,
VAW^2, VAW-EWA and VAW experts under the other meta-learners (Aggregating Algorithm, BOA, ML-Poly,
ML-Prod).

All are presets of one engine (features -> experts -> combiner):

=============  ============================  ========================  ======================
model          features                      experts                   combiner
=============  ============================  ========================  ======================
``VAW``        one kernel (or concatenated)  one VAW on z(x)           ``Single``
``ConcatVAW``  all kernels concatenated      one VAW on N * 2m values  ``Single``
``VAW2``       one block per kernel          N VAW experts             second-level VAW
``VAWMeta``    one block per kernel          N VAW experts             EWA, AA, BOA, ML-*, ...
``VAWEWA``     one block per kernel          N VAW experts             EWA
=============  ============================  ========================  ======================

The compiled parts compose with the rest of the library: ``fastomkl._core.vaw.VAWExperts`` runs
under Hedge or graph feedback (importance-weighted updates), and the meta-learners of
``fastomkl._core.meta`` combine any experts.

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
"""
from __future__ import annotations

import numpy as np

from fastomkl._base import OnlineEstimator
from fastomkl._core.combiners import Hedge
from fastomkl._core.engine import Engine
from fastomkl._core.features import ConcatenatedFeatures
from fastomkl._core.meta import AA, BOA, EWA, MLPoly, MLProd, Single, VAWCombiner
from fastomkl._core.base import SCHEDULES
from fastomkl._core.vaw import VAWExperts
from fastomkl._rff_models import RFFModelMixin
from fastomkl._validation import check_choice, check_float, check_int, check_kernels
from fastomkl.kernels import Gaussian, paper003_dictionary

__all__ = ["VAW", "ConcatVAW", "VAW2", "VAWMeta", "VAWEWA", "m_for_T", "META_LEARNERS"]

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


def _check_range(value, name: str):
    """(lo, hi) finite with lo < hi, or a ValueError."""
    try:
        lo, hi = value
        lo, hi = check_float(lo, name + "[0]"), check_float(hi, name + "[1]")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a pair (lo, hi) of finite numbers with lo < hi, "
                         f"got {value!r}") from exc
    if not lo < hi:
        raise ValueError(f"{name} must have lo < hi, got {value!r}")
    return lo, hi


class _VAWFamily(RFFModelMixin):
    """Parameters and engine pieces shared by the family (not an estimator by itself)."""

    _default_kernels = staticmethod(paper003_dictionary)

    @property
    def kernels_(self) -> list:
        """The kernel dictionary in use (``kernels``, or the model's default when None)."""
        return self._default_kernels() if self.kernels is None else check_kernels(self.kernels)

    def _check_vaw_params(self) -> dict:
        config = self._check_rff_params()
        config["lam"] = check_float(self.lam, "lam", 0.0, strict=True)
        config["mode"] = check_choice(self.mode, "mode", MODES)
        config["refresh_every"] = check_int(self.refresh_every, "refresh_every", 0)
        return config

    def _expert_bank(self, config, n_experts, dim) -> VAWExperts:
        return VAWExperts(n_experts, dim, config["lam"], config["mode"], config["refresh_every"])


_COMMON_DOC = """
    n_components : int, default 50
        Random frequencies m per kernel; each kernel gives 2m features.
    lam : float, default 1.0
        Ridge parameter of the VAW experts (> 0).
    mode : {"vaw", "ridge"}, default "vaw"
        "vaw": the current features enter the Gram matrix before predicting (the paper's VAW);
        "ridge": online ridge regression (what produced the paper's Table 2).
    refresh_every : int, default 0
        Drift guard for very long streams: when > 0 every expert also keeps its Gram matrix S and
        recomputes its inverse from a Cholesky factorisation of S every ``refresh_every`` updates
        (twice the memory, one extra rank-one update per round).  0 relies on the Sherman-Morrison
        updates alone, which store one triangle only so the inverse stays exactly symmetric; drift
        from a direct inverse is about 5e-13 relative (3e-11 on the weights) after 1e5 updates of a
        100-dimensional expert.
    rng_protocol : {"default", "legacy"}, default "default"
        "legacy" draws the frequencies exactly as the paper's notebooks
        (``fastomkl.features.legacy_frequencies``; these models draw nothing per round);
        it needs an integer ``random_state``.
    random_state : None, int, SeedSequence or Generator
        Seeds the frequency draws.
"""


class VAW(_VAWFamily, OnlineEstimator):
    __doc__ = """Vovk-Azoury-Warmuth regression on random Fourier features of one kernel.

    With several kernels their features are concatenated into one vector (this is ``ConcatVAW``).

    Parameters
    ----------
    kernels : Kernel or list of Kernel, default None
        None is one Gaussian kernel with sigma = 1.
""" + _COMMON_DOC + """
    Attributes
    ----------
    coef_ : ndarray (n_kernels * 2 m,)
        Current weights w = S^{-1} b on the (concatenated) features.
    features_ : RandomFourierFeatures
    """

    _default_kernels = staticmethod(lambda: [Gaussian(1.0)])

    def __init__(self, kernels=None, n_components=50, lam=1.0, mode="vaw", refresh_every=0,
                 rng_protocol="default", random_state=None):
        self.kernels = kernels
        self.n_components = n_components
        self.lam = lam
        self.mode = mode
        self.refresh_every = refresh_every
        self.rng_protocol = rng_protocol
        self.random_state = random_state

    def _check_params(self) -> dict:
        return self._check_vaw_params()

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        features = ConcatenatedFeatures(self._rff_bank(config, n_features, feature_rng))
        experts = self._expert_bank(config, 1, features.n_outputs)
        return Engine(features, experts, Single(1), round_bit_generator)

    @property
    def coef_(self) -> np.ndarray:
        return self._fitted_engine().experts.coef_[0]


class ConcatVAW(VAW):
    __doc__ = """Concatenated VAW (Theorem 1 of the paper): one VAW over the features of all N
    kernels side by side (N * 2m values).  It competes with the sum-kernel RKHS, at O((N m)^2) time
    and memory per round: with the default 76 kernels and m = 50 the inverse (stored packed, one
    triangle) alone takes 7600 * 7601 / 2 doubles (231 MB), and a round costs about 1.7e8 flops.

    Parameters
    ----------
    kernels : list of Kernel, default None
        None is the paper's 76 kernels (``fastomkl.paper003_dictionary()``).
""" + _COMMON_DOC

    _default_kernels = staticmethod(paper003_dictionary)


class VAW2(_VAWFamily, OnlineEstimator):
    __doc__ = """VAW^2 (double VAW): one VAW expert per kernel, combined by a second-level VAW on the
    vector of expert predictions, with signed (unconstrained) weights.

    Per round: x_hat_k = VAW_k(z_k(x)) for every kernel k; optionally x_hat <- clip(x_hat, lo, hi)
    (``truncate``, the paper's VAW^2(trunc)); y_hat = VAW_meta(x_hat).  Cost O(N m d + N m^2 + N^2)
    per round, memory N (2m)^2 + N^2 doubles, constant over the stream.

    Parameters
    ----------
    kernels : list of Kernel, default None
        None is the paper's 76 kernels (``fastomkl.paper003_dictionary()``).
""" + _COMMON_DOC + """
    lam_meta : float or None, default None
        Ridge of the second level (None: ``lam``).
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

    def __init__(self, kernels=None, n_components=50, lam=1.0, mode="vaw", lam_meta=None,
                 truncate=None, refresh_every=0, rng_protocol="default", random_state=None):
        self.kernels = kernels
        self.n_components = n_components
        self.lam = lam
        self.mode = mode
        self.lam_meta = lam_meta
        self.truncate = truncate
        self.refresh_every = refresh_every
        self.rng_protocol = rng_protocol
        self.random_state = random_state

    def _check_params(self) -> dict:
        config = self._check_vaw_params()
        config["lam_meta"] = (config["lam"] if self.lam_meta is None
                              else check_float(self.lam_meta, "lam_meta", 0.0, strict=True))
        config["truncate"] = None if self.truncate is None else _check_range(self.truncate,
                                                                             "truncate")
        return config

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        bank = self._rff_bank(config, n_features, feature_rng)
        n = bank.n_kernels
        experts = self._expert_bank(config, n, bank.n_outputs)
        combiner = VAWCombiner(n, config["lam_meta"], config["mode"], config["truncate"])
        return Engine(bank, experts, combiner, round_bit_generator)

    @property
    def weights_(self) -> np.ndarray:
        return self._fitted_engine().combiner.coef_

    @property
    def experts_coef_(self) -> np.ndarray:
        return self._fitted_engine().experts.coef_


class VAWMeta(_VAWFamily, OnlineEstimator):
    __doc__ = """VAW experts (one per kernel) under a chosen meta-learner.

    ``meta`` selects the combiner; all but "vaw" and "hedge" combine the expert predictions clipped
    to ``label_range`` = [lo, hi] (the paper's truncated experts; labels are assumed in that range):

    * "ewa": exponentially weighted average, w_k prop. to exp(-eta L_k) over cumulative square
      losses; default eta = 1 / (2 (hi - lo)^2) (exp-concavity; 0.5 on [0, 1]).
    * "aa": Vovk's Aggregating Algorithm for the square loss, default eta = 2 / (hi - lo)^2
      (mixability; 2 on [0, 1]); its prediction lies in [lo, hi].
    * "boa", "mlpoly", "mlprod": BOA, ML-Poly, ML-Prod (parameter-free, second-order adaptive).
    * "vaw": second-level VAW on the clipped predictions (VAW^2(trunc); ``VAW2`` has more options).
    * "hedge": Raker's exponential weights on the raw square losses of the experts, with rate
      ``eta`` (default 0.1) / sqrt(t); no clipping.

    Parameters
    ----------
    kernels : list of Kernel, default None
        None is the paper's 76 kernels.
    meta : str, default "ewa"
        One of "ewa", "aa", "boa", "mlpoly", "mlprod", "vaw", "hedge".
    label_range : (lo, hi), default (0.0, 1.0)
        Range of the labels, used to clip the expert predictions and set the default rates.  The
        paper scales labels to [0, 1].
    eta : float or None, default None
        Rate of "ewa", "aa" or "hedge" (None: the default above).
""" + _COMMON_DOC + """
    Attributes
    ----------
    weights_ : ndarray (n_kernels,)
        The meta-learner's current weights (the paper's Fig. 2); not defined for "aa".
    """

    def __init__(self, kernels=None, meta="ewa", n_components=50, lam=1.0, mode="vaw",
                 label_range=(0.0, 1.0), eta=None, refresh_every=0, rng_protocol="default",
                 random_state=None):
        self.kernels = kernels
        self.meta = meta
        self.n_components = n_components
        self.lam = lam
        self.mode = mode
        self.label_range = label_range
        self.eta = eta
        self.refresh_every = refresh_every
        self.rng_protocol = rng_protocol
        self.random_state = random_state

    def _check_params(self) -> dict:
        config = self._check_vaw_params()
        config["meta"] = check_choice(self.meta, "meta", META_LEARNERS)
        lo, hi = config["label_range"] = _check_range(self.label_range, "label_range")
        if self.eta is not None:
            config["eta"] = check_float(self.eta, "eta", 0.0, strict=True)
        else:
            config["eta"] = {"ewa": 1.0 / (2.0 * (hi - lo) ** 2), "aa": 2.0 / (hi - lo) ** 2,
                             "hedge": 0.1}.get(config["meta"])
        return config

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        bank = self._rff_bank(config, n_features, feature_rng)
        n = bank.n_kernels
        experts = self._expert_bank(config, n, bank.n_outputs)
        meta, rng = config["meta"], config["label_range"]
        if meta == "ewa":
            combiner = EWA(n, config["eta"], rng)
        elif meta == "aa":
            combiner = AA(n, config["eta"], rng)
        elif meta == "boa":
            combiner = BOA(n, rng)
        elif meta == "mlpoly":
            combiner = MLPoly(n, rng)
        elif meta == "mlprod":
            combiner = MLProd(n, rng)
        elif meta == "vaw":
            combiner = VAWCombiner(n, config["lam"], config["mode"], rng)
        else:
            combiner = Hedge(n, config["eta"], SCHEDULES["inv_sqrt"])
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


class VAWEWA(VAWMeta):
    __doc__ = """VAW-EWA (Theorem 3 of the paper): VAW experts clipped to ``label_range``, combined
    by the exponentially weighted average with eta = 1 / (2 (hi - lo)^2) by default.

    Same parameters as ``VAWMeta`` without ``meta``.
    """

    def __init__(self, kernels=None, n_components=50, lam=1.0, mode="vaw", label_range=(0.0, 1.0),
                 eta=None, refresh_every=0, rng_protocol="default", random_state=None):
        super().__init__(kernels, "ewa", n_components, lam, mode, label_range, eta, refresh_every,
                         rng_protocol, random_state)
