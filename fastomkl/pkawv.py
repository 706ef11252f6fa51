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

import math
import warnings

import numpy as np

from fastomkl._estimator import BinaryClassifier, OnlineEstimator
from fastomkl._core.engine import Engine
from fastomkl._core.features.embedding import NullFeatures
from fastomkl._core.combiners.meta import Single
from fastomkl._core.losses import LOSSES
from fastomkl._core.features.embedding import IdentityFeatures, NystromFeatures
from fastomkl._core.experts.ogd import OGDExperts
from fastomkl._core.features.rff import RFFBank
from fastomkl._core.experts.kernel_awv import KernelAWVExperts
from fastomkl._core.experts.nystrom import NystromExperts
from fastomkl._core.experts.pros_n_kons import ProsNKonsExperts
from fastomkl._core.features.taylor import TaylorBank, n_taylor_features
from fastomkl._core.experts.vaw import VAWExperts
from fastomkl._rff_models import check_steps
from fastomkl._validation import (MAX_ABS_INPUT, check_choice, check_float, check_int,
                                  check_matrix, check_sample, check_targets, split_random_state)
from fastomkl.features import draw_frequencies
from fastomkl.kernels import Gaussian

KORS_WEIGHTS = ("sqrt", "inverse")

__all__ = ["TaylorAWV", "TaylorAWVClassifier", "NystromAWV", "NystromAWVClassifier",
           "KernelAWV", "KernelAWVClassifier", "FOGD", "FOGDClassifier",
           "BeforehandNystromAWV", "BeforehandNystromAWVClassifier", "kors_centres", "ProsNKons",
           "ProsNKonsClassifier", "FixedEmbeddingAWV", "FixedEmbeddingAWVClassifier", "Mixture",
           "taylor_degree_theory"]

MODES = ("vaw", "ridge")
# Above this many features a round (r^2 flops, r^2 / 2 doubles of state) gets slow: warn.
LARGE_BASIS = 5000


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


class _Deterministic:
    """Models that draw nothing: the round stream exists only because every engine has one."""

    def _random_streams(self, config: dict):
        return split_random_state(0)


class _TaylorAWVBase(_Deterministic):
    def __init__(self, sigma=1.0, degree=2, lam=1.0, mode="vaw", refresh_every=0):
        self.sigma = sigma
        self.degree = degree
        self.lam = lam
        self.mode = mode
        self.refresh_every = refresh_every

    def _check_params(self) -> dict:
        return {"sigma": check_float(self.sigma, "sigma", 0.0, strict=True),
                "degree": check_int(self.degree, "degree", 0, 64),
                "lam": check_float(self.lam, "lam", 0.0, strict=True),
                "mode": check_choice(self.mode, "mode", MODES),
                "refresh_every": check_int(self.refresh_every, "refresh_every", 0)}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        r = n_taylor_features(n_features, config["degree"])
        if r > LARGE_BASIS:
            warnings.warn(f"{type(self).__name__}: degree {config['degree']} on {n_features} "
                          f"inputs gives {r} Taylor features; a round costs about {r}^2 flops",
                          RuntimeWarning, stacklevel=4)
        bank = TaylorBank(n_features, config["degree"], [config["sigma"]])
        experts = VAWExperts(1, bank.n_outputs, config["lam"], config["mode"],
                             config["refresh_every"])
        return Engine(bank, experts, Single(1), round_bit_generator)

    def _implied_state_size(self, n_features: int) -> int:
        """Doubles the engine allocates when it is built: the packed r x r inverse and r-vectors
        (checked by ``load`` before building)."""
        r = math.comb(check_int(self.degree, "degree", 0, 64) + n_features, n_features)
        return r * (r + 1) // 2 + 4 * r

    @property
    def n_taylor_features_(self) -> int:
        """r = C(degree + d, d), the number of Taylor features."""
        return self._fitted_engine().features.n_outputs

    @property
    def coef_(self) -> np.ndarray:
        """(r,) current weights A^{-1} b on the Taylor features (the ridge weights)."""
        return self._fitted_engine().experts.coef_[0]

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
    sigma : float, default 1.0
        Bandwidth of k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)).
    degree : int, default 2
        M, the largest total degree of the Taylor features (the paper's experiments: 2, 3, 4;
        ``taylor_degree_theory`` gives Theorem 4's value).  A warning is issued above 5000 features.
    lam : float, default 1.0
        Ridge parameter lambda (> 0).
    mode : {"vaw", "ridge"}, default "vaw"
        "vaw": PKAWV (x_t enters the Gram matrix before predicting); "ridge": projected kernel
        ridge regression (the paper's real-data curves).
    refresh_every : int, default 0
        When > 0, recompute the inverse from a Cholesky factorisation every that many rounds
        (see ``fastomkl.VAW``).

    Attributes
    ----------
    n_taylor_features_ : int
        r = C(degree + d, d).
    coef_ : ndarray (r,)
        Current ridge weights on the Taylor features.
"""


class TaylorAWV(_TaylorAWVBase, OnlineEstimator):
    __doc__ = ("PKAWV with Taylor features of the Gaussian kernel (regression).\n" + _TAYLOR_DOC
               + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import TaylorAWV
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = TaylorAWV(sigma=0.5, degree=6).fit(X, y)
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
    >>> from fastomkl import TaylorAWVClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = TaylorAWVClassifier(sigma=0.5, degree=4).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)


class _NystromAWVBase:
    def __init__(self, sigma=1.0, lam=1.0, mode="vaw", mu=None, beta=1.0, eps=0.5,
                 kors_weights="sqrt", max_centres=None, cache_kernel=True, random_state=None):
        self.sigma = sigma
        self.lam = lam
        self.mode = mode
        self.mu = mu
        self.beta = beta
        self.eps = eps
        self.kors_weights = kors_weights
        self.max_centres = max_centres
        self.cache_kernel = cache_kernel
        self.random_state = random_state

    def _check_params(self) -> dict:
        lam = check_float(self.lam, "lam", 0.0, strict=True)
        return {"sigma": check_float(self.sigma, "sigma", 0.0, strict=True), "lam": lam,
                "mode": check_choice(self.mode, "mode", MODES),
                "mu": lam if self.mu is None else check_float(self.mu, "mu", 0.0, strict=True),
                "beta": check_float(self.beta, "beta", 0.0, strict=True),
                "eps": check_float(self.eps, "eps", 0.0),
                "kors_weights": check_choice(self.kors_weights, "kors_weights", KORS_WEIGHTS),
                "max_centres": 0 if self.max_centres is None else check_int(self.max_centres,
                                                                            "max_centres", 1),
                "cache_kernel": bool(check_choice(self.cache_kernel, "cache_kernel",
                                                  (False, True)))}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        experts = NystromExperts(n_features, config["sigma"], config["lam"], config["mode"],
                                 config["mu"], config["beta"], config["eps"],
                                 config["kors_weights"], config["max_centres"],
                                 config["cache_kernel"])
        return Engine(NullFeatures(1, n_features), experts, Single(1), round_bit_generator)

    @property
    def n_centres_(self) -> int:
        """m, the size of the dictionary."""
        return self._fitted_engine().experts.n_centres

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
    given the (weighted) dictionary.  The dictionary only grows; a new centre borders the Cholesky
    factor of K_{t,I}^T K_{t,I} + lam K_II, which every round also updates by the new row, so a
    round costs O(m^2 + m d) (two triangular solves and one rank-one Cholesky update).  Every input
    is kept (O(t d) memory): an insertion needs K_{t,I}^T k(X_t, x_t), its kernel column against
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
    sigma : float, default 1.0
        Bandwidth of k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)).
    lam : float, default 1.0
        Ridge parameter lambda.
    mode : {"vaw", "ridge"}, default "vaw"
        PKAWV or projected kernel ridge regression (the paper's real-data curves).
    mu : float or None, default None
        KORS regulariser (the paper's mu); None is ``lam``.  Smaller keeps more centres.
    beta : float, default 1.0
        KORS oversampling factor (the paper's experiments: 1; its theory 12 log(n / delta)).
    eps : float, default 0.5
        KORS accuracy parameter.
    kors_weights : {"sqrt", "inverse"}, default "sqrt"
        Weight of a kept centre: 1 / sqrt(p) (unbiased leverage sampling) or 1 / p (the authors'
        code, for reproduction; about half as many centres).
    max_centres : int or None, default None
        Stop growing the dictionary at this size.
    cache_kernel : bool, default True
        Keep the matrix K_{t,I} of every input against the centres (as the authors' code does):
        faster insertions; False bounds the memory beyond the inputs by O(m^2).
    random_state : None, int, SeedSequence or Generator
        Seeds the KORS draws (the model's round stream; the global NumPy state is never touched).

    Attributes
    ----------
    n_centres_ : int
    dictionary_ : ndarray (m,)
        Rounds whose inputs became centres.
    centres_ : ndarray (m, d)
"""


class NystromAWV(_NystromAWVBase, OnlineEstimator):
    __doc__ = "PKAWV with a KORS Nystrom dictionary (regression).\n" + _NYSTROM_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import NystromAWV
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = NystromAWV(sigma=0.5, lam=0.1, random_state=0).fit(X, y)
    >>> 0 < model.n_centres_ < len(X), model.score(X, y) > 0.8
    (True, True)
    """


class NystromAWVClassifier(_NystromAWVBase, BinaryClassifier):
    __doc__ = ("PKAWV with a KORS Nystrom dictionary, as a binary classifier (square loss on "
               "labels coded -1/+1, prediction by sign).\n" + _NYSTROM_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import NystromAWVClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = NystromAWVClassifier(sigma=0.5, lam=0.1, random_state=0).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)


class _KernelAWVBase(_Deterministic):
    def __init__(self, sigma=1.0, lam=1.0, mode="vaw", max_samples=20000):
        self.sigma = sigma
        self.lam = lam
        self.mode = mode
        self.max_samples = max_samples

    def _check_params(self) -> dict:
        return {"sigma": check_float(self.sigma, "sigma", 0.0, strict=True),
                "lam": check_float(self.lam, "lam", 0.0, strict=True),
                "mode": check_choice(self.mode, "mode", MODES),
                "max_samples": 0 if self.max_samples is None else check_int(self.max_samples,
                                                                            "max_samples", 1)}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        experts = KernelAWVExperts(n_features, config["sigma"], config["lam"], config["mode"],
                                   config["max_samples"])
        return Engine(NullFeatures(1, n_features), experts, Single(1), round_bit_generator)


_KERNEL_DOC = """
    Exact Kernel-AWV (eq. 3 of the paper) or exact online kernel ridge regression: the baseline
    PKAWV approximates.  A round solves one triangular system with the Cholesky factor of
    K + lam I over every past input and borders it with the new one: O(t^2 + t d) time and
    O(t^2) memory at round t.

    Parameters
    ----------
    sigma : float, default 1.0
        Bandwidth of k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)).
    lam : float, default 1.0
        Ridge parameter lambda.
    mode : {"vaw", "ridge"}, default "vaw"
        Kernel-AWV (the paper's adversarial baseline) or KRR (its real-data baseline).
    max_samples : int or None, default 20000
        Learning beyond this many samples raises ValueError (the factor alone would take
        8 max_samples^2 bytes: 3.2 GB at 20000); None removes the guard.
"""


class KernelAWV(_KernelAWVBase, OnlineEstimator):
    __doc__ = ("Exact Kernel-AWV / kernel ridge regression, online (regression).\n" + _KERNEL_DOC
               + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import KernelAWV
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = KernelAWV(sigma=0.5, lam=0.1).fit(X, y)
    >>> model.score(X, y) > 0.8
    True
    """)


class KernelAWVClassifier(_KernelAWVBase, BinaryClassifier):
    __doc__ = ("Exact Kernel-AWV / kernel ridge regression as a binary classifier (square loss "
               "on labels coded -1/+1).\n" + _KERNEL_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import KernelAWVClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = KernelAWVClassifier(sigma=0.5, lam=0.1).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)


class _FOGDBase:
    _standardize = True

    def __init__(self, sigma=1.0, n_components=1000, eta="auto", eta_schedule="constant",
                 random_state=None):
        self.sigma = sigma
        self.n_components = n_components
        self.eta = eta
        self.eta_schedule = eta_schedule
        self.random_state = random_state

    def _check_params(self) -> dict:
        config = {"sigma": check_float(self.sigma, "sigma", 0.0, strict=True),
                  "n_components": check_int(self.n_components, "n_components", 1)}
        config.update(check_steps(self.eta, self.eta_schedule, LOSSES["squared"]))
        return config

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        bank = RFFBank(draw_frequencies([Gaussian(config["sigma"])], config["n_components"],
                                        n_features, feature_rng))
        scale, kind = config["eta"]
        experts = OGDExperts(1, bank.n_outputs, LOSSES["squared"], 0.0, scale, kind)
        return Engine(bank, experts, Single(1), round_bit_generator,
                      config["standardize"] and self._standardize)

    @property
    def coef_(self) -> np.ndarray:
        """(2 D,) current weights theta on the normalised features [cos(U x); sin(U x)] / sqrt(D)."""
        return np.array(self._fitted_engine().experts.theta[0])


_FOGD_DOC = """
    Fourier online gradient descent (Lu et al. 2016), the paper's random-feature baseline: online
    gradient descent on the square loss over z(x) = [cos(U x); sin(U x)] / sqrt(D), the rows of U
    drawn from N(0, I / sigma^2), so z(x).z(x') estimates the Gaussian kernel.  The authors' code
    keeps w = sqrt(D) theta and predicts w.[cos; sin] / D: the same predictions.  O(D d) per round.

    Parameters
    ----------
    sigma : float, default 1.0
        Bandwidth of k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)).
    n_components : int, default 1000
        D, the number of random frequencies (2 D features), the paper's setting.
    eta : "auto" or float, default "auto"
        Step size.  "auto": truncated AdaGrad-norm steps (and, for regression, targets
        standardised online; see ``fastomkl.Raker``).  A number is the paper's step, eta theta <- theta - eta 2 (y_hat - y)
        z: the paper uses eta = 1 / sqrt(n) for a stream of n samples, constant.
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
    >>> from fastomkl import FOGD
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = FOGD(sigma=0.5, n_components=50, random_state=0).fit(X, y)
    >>> model.score(X, y) > 0.8
    True
    """)


class FOGDClassifier(_FOGDBase, BinaryClassifier):
    __doc__ = ("FOGD as a binary classifier: the square loss on labels coded -1/+1, as the paper "
               "ran it.\n" + _FOGD_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import FOGDClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = FOGDClassifier(sigma=0.5, n_components=50, random_state=0).fit(X, y)
    >>> model.classes_.tolist(), model.score(X, y) > 0.8
    (['inside', 'outside'], True)
    """)
    _standardize = False


def kors_centres(X, sigma=1.0, mu=1.0, beta=1.0, eps=0.5, kors_weights="sqrt",
                 max_centres=None, random_state=None) -> np.ndarray:
    """The centres one KORS pass over the rows of X keeps (the dictionary of ``NystromAWV`` with
    the same parameters), for ``BeforehandNystromAWV`` when the inputs are known in advance.

    Returns
    -------
    ndarray (m, d)
    """
    X = np.asarray(X, dtype=np.float64)
    model = NystromAWV(sigma=sigma, mu=mu, beta=beta, eps=eps, kors_weights=kors_weights,
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
    sigma : float, default 1.0
        Bandwidth of k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)).
    lam : float, default 1.0
        Ridge parameter lambda.
    mode : {"vaw", "ridge"}, default "vaw"
        PKAWV or projected kernel ridge regression.
    jitter : float, default 1e-10
        Added to K_CC's diagonal, relative to its mean diagonal, before the Cholesky factorisation.
"""


class _BeforehandNystromAWVBase(_Deterministic):
    def __init__(self, centres=None, sigma=1.0, lam=1.0, mode="vaw", jitter=1e-10):
        self.centres = centres
        self.sigma = sigma
        self.lam = lam
        self.mode = mode
        self.jitter = jitter

    def _check_params(self) -> dict:
        if self.centres is None:
            raise ValueError("centres must be given (an (m, d) array; see kors_centres)")
        try:
            centres = np.asarray(self.centres, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"centres must be an (m, d) array of numbers, got "
                             f"{self.centres!r:.80}") from None
        if centres.ndim != 2 or centres.shape[0] < 1 or not np.all(np.isfinite(centres)):
            raise ValueError("centres must be a non-empty finite 2-D array (m, d)")
        return {"centres": centres, "sigma": check_float(self.sigma, "sigma", 0.0, strict=True),
                "lam": check_float(self.lam, "lam", 0.0, strict=True),
                "mode": check_choice(self.mode, "mode", MODES),
                "jitter": check_float(self.jitter, "jitter", 0.0)}

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
    >>> from fastomkl import BeforehandNystromAWV
    >>> from fastomkl.pkawv import kors_centres
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> centres = kors_centres(X, sigma=0.5, mu=0.1, random_state=0)   # inputs known beforehand
    >>> model = BeforehandNystromAWV(centres, sigma=0.5, lam=0.1).fit(X, y)
    >>> len(centres) < len(X), model.score(X, y) > 0.8
    (True, True)
    """)


class BeforehandNystromAWVClassifier(_BeforehandNystromAWVBase, BinaryClassifier):
    __doc__ = ("PKAWV on a Nystrom subspace fixed in advance, as a binary classifier (square loss "
               "on labels coded -1/+1).\n" + _BEFOREHAND_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import BeforehandNystromAWVClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> centres = X[:30]
    >>> model = BeforehandNystromAWVClassifier(centres, sigma=0.5, lam=0.1).fit(X, y)
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
    sigma : float, default 1.0
        Bandwidth of k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)).
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
    random_state : None, int, SeedSequence or Generator
        Seeds the KORS draws.
"""


class _ProsNKonsBase:
    def __init__(self, sigma=1.0, alpha=1.0, beta=1.0, eps=0.5, C=1.0, kors_weights="sqrt",
                 random_state=None):
        self.sigma = sigma
        self.alpha = alpha
        self.beta = beta
        self.eps = eps
        self.C = C
        self.kors_weights = kors_weights
        self.random_state = random_state

    def _check_params(self) -> dict:
        return {"sigma": check_float(self.sigma, "sigma", 0.0, strict=True),
                "alpha": check_float(self.alpha, "alpha", 0.0, strict=True),
                "beta": check_float(self.beta, "beta", 0.0, strict=True),
                "eps": check_float(self.eps, "eps", 0.0),
                "C": check_float(self.C, "C", 0.0, strict=True),
                "kors_weights": check_choice(self.kors_weights, "kors_weights", KORS_WEIGHTS)}

    def _build_engine(self, config, n_features, feature_rng, round_bit_generator):
        experts = ProsNKonsExperts(n_features, config["sigma"], config["alpha"], config["beta"],
                                   config["eps"], config["C"], config["kors_weights"])
        return Engine(NullFeatures(1, n_features), experts, Single(1), round_bit_generator)

    @property
    def n_centres_(self) -> int:
        """m, the size of the dictionary."""
        return self._fitted_engine().experts.n_centres


class ProsNKons(_ProsNKonsBase, OnlineEstimator):
    __doc__ = _PROS_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import ProsNKons
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = ProsNKons(sigma=0.5, random_state=0).fit(X, y)
    >>> 0 < model.n_centres_ < len(X), model.score(X, y) > 0.3
    (True, True)
    """


class ProsNKonsClassifier(_ProsNKonsBase, BinaryClassifier):
    __doc__ = _PROS_DOC + """
    As a binary classifier: the square loss on labels coded -1/+1 (as the paper ran it).

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import ProsNKonsClassifier
    >>> X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    >>> y = np.where((X ** 2).sum(1) < 0.5, "inside", "outside")
    >>> model = ProsNKonsClassifier(sigma=0.5, random_state=0).fit(X, y)
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


class _FixedEmbeddingAWVBase(_Deterministic):
    def __init__(self, phi=None, lam=1.0, mode="vaw"):
        self.phi = phi
        self.lam = lam
        self.mode = mode

    def _check_params(self) -> dict:
        if not callable(self.phi):
            raise ValueError(f"phi must be a function of an (n, d) array, got {self.phi!r}")
        return {"phi": self.phi, "lam": check_float(self.lam, "lam", 0.0, strict=True),
                "mode": check_choice(self.mode, "mode", MODES)}

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


class Mixture:
    """Online combination of several models (for instance ``NystromAWV`` or ``TaylorAWV`` of
    different bandwidths: one representation per kernel of a dictionary) by a second-level learner
    on their predictions.

    Every member learns every sample (full information), so its online predictions do not depend
    on the combination: ``predict_learn`` runs each member's compiled pass over the batch, then the
    second level over the (n, N) matrix of their predictions, which gives the same predictions as
    interleaving the two round by round.  The second level costs O(N^2) per round in NumPy.

    Parameters
    ----------
    members : list of fastomkl regressors
        The N experts, fresh or already trained; they keep learning.
    meta : {"vaw", "ewa"}, default "vaw"
        "vaw": second-level VAW with signed weights alpha_t = (lam I + sum_{s<=t} p_s p_s^T)^{-1}
        sum_{s<t} y_s p_s on the prediction vectors p (without p_t in the matrix when
        ``mode="ridge"``), as ``fastomkl.VAW2`` combines its kernels.  "ewa": exponentially
        weighted average, weights proportional to exp(-eta L_k) over the cumulative square losses.
    lam : float, default 1.0
        Ridge of the second-level VAW.
    mode : {"vaw", "ridge"}, default "ridge"
        Second-level VAW mode.
    eta : float or None, default None
        EWA rate; None is 1 / (2 (hi - lo)^2) for ``label_range`` (lo, hi), else 1.
    label_range : (lo, hi) or None, default None
        Clip the member predictions to [lo, hi] before combining them (the truncated experts of
        paper 003); None combines them as they are.

    Attributes
    ----------
    weights_ : ndarray (N,)
        The second level's current weights (signed for "vaw", convex for "ewa").

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl.pkawv import Mixture, NystromAWV
    >>> X = np.random.default_rng(0).uniform(-1, 1, (200, 2))
    >>> mix = Mixture([NystromAWV(sigma=s, mode="ridge", random_state=0) for s in (0.3, 1.0)])
    >>> mix.predict_learn(X, np.sin(3 * X[:, 0])).shape
    (200,)
    """

    def __init__(self, members, meta="vaw", lam=1.0, mode="ridge", eta=None, label_range=None):
        members = list(members)
        if not members or not all(isinstance(m, OnlineEstimator)
                                  and not isinstance(m, BinaryClassifier) for m in members):
            raise ValueError("members must be a non-empty list of fastomkl regressors")
        self.members = members
        self.meta = check_choice(meta, "meta", ("vaw", "ewa"))
        self.lam = check_float(lam, "lam", 0.0, strict=True)
        self.mode = check_choice(mode, "mode", MODES)
        self.label_range = None
        if label_range is not None:
            lo, hi = (check_float(v, "label_range") for v in label_range)
            if not lo < hi:
                raise ValueError(f"label_range must have lo < hi, got {label_range!r}")
            self.label_range = (lo, hi)
        default = 1.0 if label_range is None else 1.0 / (2.0 * (hi - lo) ** 2)
        self.eta = default if eta is None else check_float(eta, "eta", 0.0, strict=True)
        n = len(members)
        self._inverse = np.eye(n) / self.lam        # (lam I + sum p p^T)^{-1}
        self._b = np.zeros(n)                       # sum y p
        self._losses = np.zeros(n)                  # cumulative square losses (EWA)

    @property
    def weights_(self) -> np.ndarray:
        if self.meta == "vaw":
            return self._inverse @ self._b
        w = np.exp(-self.eta * (self._losses - self._losses.min()))
        return w / w.sum()

    def predict_learn(self, X, y) -> np.ndarray:
        """Prequential pass over the rows of X: the mixture's prediction for each row before it
        (and every member) learns its target.

        Parameters
        ----------
        X : array-like (n_samples, n_features)
        y : array-like (n_samples,)

        Returns
        -------
        ndarray (n_samples,)

        Raises
        ------
        ValueError
            For bad input (checked before any member learns: nothing changes).
        """
        # Checked before any member learns, so bad input leaves every member as it was.
        widths = {m.n_features_in_ for m in self.members if hasattr(m, "n_features_in_")}
        if len(widths) > 1:
            raise ValueError(f"members were trained on different numbers of features: "
                             f"{sorted(widths)}")
        X = check_matrix(X, widths.pop() if widths else None, owner="the mixture's members")
        y = check_targets(y, X.shape[0])
        P = np.column_stack([member.predict_learn(X, y) for member in self.members])
        if self.label_range is not None:
            P = np.clip(P, *self.label_range)
        if self.meta == "ewa":
            before = self._losses + np.vstack([np.zeros(P.shape[1]),
                                               np.cumsum((P - y[:, None]) ** 2, axis=0)[:-1]])
            W = np.exp(-self.eta * (before - before.min(axis=1, keepdims=True)))
            self._losses = before[-1] + (P[-1] - y[-1]) ** 2
            return (W * P).sum(axis=1) / W.sum(axis=1)
        out = np.empty(len(y))
        for t, (p, target) in enumerate(zip(P, y)):
            u = self._inverse @ p
            q = p @ u
            if self.mode == "vaw":
                out[t] = self._b @ u / (1.0 + q)
            else:
                out[t] = self._b @ u
            self._inverse -= np.outer(u, u) / (1.0 + q)
            self._b += target * p
        return out
