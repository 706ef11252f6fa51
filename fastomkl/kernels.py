"""Shift-invariant kernels, their spectral samplers, and the kernel dictionaries of the papers.

One parameterisation throughout, by the bandwidth ``sigma``:

==============  ==========================================  ==========================================
kernel          k(x, y), with delta = x - y                  spectral density (what random features draw)
==============  ==========================================  ==========================================
``Gaussian``    exp(-||delta||_2^2 / (2 sigma^2))            N(0, sigma^-2 I)
``Laplacian``   exp(-||delta||_1 / sigma)                    i.i.d. Cauchy(0, 1/sigma) per coordinate
``Cauchy``      prod_l 1 / (1 + delta_l^2 / sigma^2)         i.i.d. Laplace(0, 1/sigma) per coordinate
``Matern``      2^(1-nu)/Gamma(nu) (sqrt(2nu) r/sigma)^nu    multivariate Student t, 2 nu degrees of
                K_nu(sqrt(2nu) r/sigma), r = ||delta||_2     freedom, scale 1/sigma
==============  ==========================================  ==========================================

The papers write their grids in other parameters; every kernel has converters:
``Gaussian.from_variance(a)`` (exp(-||delta||^2/(2a)), a = sigma^2), ``Gaussian.from_gamma(g)``
(exp(-g ||delta||^2)), ``Gaussian.from_precision(p)`` (p = 1/sigma^2), ``Laplacian.from_gamma(g)``
(exp(-g ||delta||_1)).
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Kernel", "Gaussian", "Laplacian", "Cauchy", "Matern", "Polynomial", "kernel_from_dict",
    "paper000_dictionary", "paper001_dictionary", "paper003_dictionary", "DICTIONARIES",
]


@dataclass(frozen=True)
class Kernel(ABC):
    """A normalised shift-invariant kernel k(x, y) = k(x - y) with k(0) = 1.

    The base of ``Gaussian``, ``Laplacian``, ``Cauchy`` and ``Matern``: calling a kernel gives
    exact values, ``gram`` exact matrices, ``sample_frequencies`` draws from its spectral density
    (what random Fourier features use).

    Parameters
    ----------
    sigma : float
        The bandwidth (> 0); its meaning for each kernel is in the table of ``fastomkl.kernels``.

    Examples
    --------
    >>> from fastomkl import Gaussian, Kernel
    >>> k = Gaussian(2.0)
    >>> isinstance(k, Kernel), k.to_dict()
    (True, {'kind': 'Gaussian', 'sigma': 2.0})
    >>> k.gram([[0.0, 0.0], [1.0, 1.0]]).round(4)        # exp(-||x - y||^2 / (2 sigma^2))
    array([[1.    , 0.7788],
           [0.7788, 1.    ]])
    """

    sigma: float

    def __post_init__(self):
        if not (isinstance(self.sigma, (int, float, np.floating, np.integer))
                and math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"{type(self).__name__} sigma must be a positive finite number, "
                             f"got {self.sigma!r}")
        object.__setattr__(self, "sigma", float(self.sigma))

    def __call__(self, x, y) -> np.ndarray:
        """Exact kernel value(s); x and y broadcast over leading axes, the last axis is features."""
        delta = np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64)
        return self._profile(delta)

    def gram(self, X, Y=None) -> np.ndarray:
        """Exact kernel matrix K[i, j] = k(X[i], Y[j])."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        Y = X if Y is None else np.atleast_2d(np.asarray(Y, dtype=np.float64))
        return self(X[:, None, :], Y[None, :, :])

    def sample_frequencies(self, n_components: int, n_features: int,
                           rng: np.random.Generator) -> np.ndarray:
        """Draw n_components frequencies from the spectral density: array (n_components, n_features)."""
        return self._standard_draw(rng, (n_components, n_features)) / self.sigma

    def to_dict(self) -> dict:
        return {"kind": type(self).__name__, "sigma": self.sigma}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(sigma={self.sigma:.6g})"

    # Subclasses: k as a function of delta, and the spectral draw for sigma = 1.
    @abstractmethod
    def _profile(self, delta: np.ndarray) -> np.ndarray:
        """k as a function of delta = x - y (last axis: features)."""

    @staticmethod
    @abstractmethod
    def _standard_draw(rng: np.random.Generator, shape) -> np.ndarray:
        """Spectral draws of the kernel with sigma = 1."""


class Gaussian(Kernel):
    """Gaussian kernel exp(-||x - y||^2 / (2 sigma^2)); frequencies ~ N(0, I / sigma^2).

    Parameters
    ----------
    sigma : float
        The bandwidth (> 0); ``from_variance``, ``from_gamma`` and ``from_precision`` convert the
        other usual parameters.

    Examples
    --------
    >>> from fastomkl import Gaussian
    >>> k = Gaussian(1.0)
    >>> round(float(k([0.0, 0.0], [1.0, 1.0])), 4)         # exp(-2 / 2)
    0.3679
    >>> Gaussian.from_gamma(0.5)                           # scikit-learn's exp(-gamma ||x - y||^2)
    Gaussian(sigma=1)
    """

    def _profile(self, delta):
        return np.exp(-np.sum(delta * delta, axis=-1) / (2.0 * self.sigma ** 2))

    @staticmethod
    def _standard_draw(rng, shape):
        return rng.standard_normal(shape)

    @classmethod
    def from_variance(cls, a: float) -> "Gaussian":
        """exp(-||delta||^2 / (2a)): a is sigma^2 (papers 000 and 003 write their grid in a)."""
        return cls(math.sqrt(a))

    @classmethod
    def from_gamma(cls, gamma: float) -> "Gaussian":
        """exp(-gamma ||delta||^2) (scikit-learn's convention): sigma = 1/sqrt(2 gamma)."""
        return cls(1.0 / math.sqrt(2.0 * gamma))

    @classmethod
    def from_precision(cls, p: float) -> "Gaussian":
        """p = 1/sigma^2."""
        return cls(1.0 / math.sqrt(p))


class Laplacian(Kernel):
    """Laplacian kernel exp(-||x - y||_1 / sigma); frequencies i.i.d. Cauchy(0, 1/sigma).

    Parameters
    ----------
    sigma : float
        The bandwidth (> 0); ``from_gamma`` converts exp(-gamma ||x - y||_1).

    Examples
    --------
    >>> from fastomkl import Laplacian
    >>> k = Laplacian(2.0)
    >>> round(float(k([0.0, 0.0], [1.0, 1.0])), 4)         # exp(-||x - y||_1 / sigma) = exp(-1)
    0.3679
    >>> Laplacian.from_gamma(0.5)
    Laplacian(sigma=2)
    """

    def _profile(self, delta):
        return np.exp(-np.sum(np.abs(delta), axis=-1) / self.sigma)

    @staticmethod
    def _standard_draw(rng, shape):
        return rng.standard_cauchy(shape)

    @classmethod
    def from_gamma(cls, gamma: float) -> "Laplacian":
        """exp(-gamma ||delta||_1): sigma = 1/gamma."""
        return cls(1.0 / gamma)


class Cauchy(Kernel):
    """Cauchy kernel prod_l 1/(1 + (x_l - y_l)^2 / sigma^2); frequencies i.i.d. Laplace(0, 1/sigma).

    Parameters
    ----------
    sigma : float
        The bandwidth (> 0).

    Examples
    --------
    >>> from fastomkl import Cauchy
    >>> float(Cauchy(1.0)([0.0, 0.0], [1.0, 1.0]))         # 1 / (1 + 1) for each coordinate
    0.25
    """

    def _profile(self, delta):
        return np.prod(1.0 / (1.0 + (delta / self.sigma) ** 2), axis=-1)

    @staticmethod
    def _standard_draw(rng, shape):
        return rng.laplace(0.0, 1.0, shape)


@dataclass(frozen=True, repr=False)
class Matern(Kernel):
    """Matern kernel of smoothness nu (1/2: exp(-r/sigma); nu -> inf: the Gaussian), r = ||x - y||_2.

    Frequencies ~ multivariate Student t with 2 nu degrees of freedom and scale 1/sigma:
    w = g / sigma * sqrt(2 nu / u), g ~ N(0, I), u ~ chi^2(2 nu).

    Parameters
    ----------
    sigma : float
        The bandwidth (> 0).
    nu : float, default 1.5
        The smoothness (> 0).

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Matern
    >>> k = Matern(1.0, nu=0.5)                            # nu = 1/2: exp(-||x - y|| / sigma)
    >>> bool(np.isclose(k([0.0, 0.0], [0.6, 0.8]), np.exp(-1.0)))
    True
    >>> Matern(0.5).sample_frequencies(3, 2, np.random.default_rng(0)).shape
    (3, 2)
    """

    nu: float = 1.5

    def __post_init__(self):
        super().__post_init__()
        if not (isinstance(self.nu, (int, float)) and math.isfinite(self.nu) and self.nu > 0):
            raise ValueError(f"Matern nu must be a positive finite number, got {self.nu!r}")
        object.__setattr__(self, "nu", float(self.nu))

    def _profile(self, delta):
        from scipy.special import gamma, kv
        r = np.sqrt(2.0 * self.nu) * np.sqrt(np.sum(delta * delta, axis=-1)) / self.sigma
        with np.errstate(invalid="ignore"):
            k = 2.0 ** (1.0 - self.nu) / gamma(self.nu) * r ** self.nu * kv(self.nu, r)
        return np.where(r > 0, k, 1.0)

    def sample_frequencies(self, n_components, n_features, rng):
        return self._standard_draw(rng, (n_components, n_features), self.nu) / self.sigma

    @staticmethod
    def _standard_draw(rng, shape, nu=1.5):
        u = rng.chisquare(2.0 * nu, size=shape[:-1] + (1,))
        return rng.standard_normal(shape) * np.sqrt(2.0 * nu / u)

    def to_dict(self) -> dict:
        return {"kind": "Matern", "sigma": self.sigma, "nu": self.nu}

    def __repr__(self) -> str:
        return f"Matern(sigma={self.sigma:.6g}, nu={self.nu:g})"


@dataclass(frozen=True)
class Polynomial:
    """Polynomial kernel (gamma x.y + coef0)^degree.

    Not shift-invariant, so it has no random features: only the exact kernel expansions
    (``OnlineKernelRegressor``) take it.

    Parameters
    ----------
    degree : int, default 2
    gamma : float, default 1.0
        Positive.
    coef0 : float, default 0.0

    Examples
    --------
    >>> from fastomkl.kernels import Polynomial
    >>> k = Polynomial(2)
    >>> float(k([1.0, 2.0], [3.0, 1.0]))                   # (1 * 5 + 0)^2
    25.0
    >>> k.to_dict()
    {'kind': 'Polynomial', 'degree': 2, 'gamma': 1.0, 'coef0': 0.0}
    """

    degree: int = 2
    gamma: float = 1.0
    coef0: float = 0.0

    def __post_init__(self):
        if isinstance(self.degree, bool) or not isinstance(self.degree, (int, np.integer)) \
                or not 1 <= self.degree <= 16:
            raise ValueError(f"Polynomial degree must be an int in [1, 16], got {self.degree!r}")
        for name, value, positive in (("gamma", self.gamma, True), ("coef0", self.coef0, False)):
            if not (isinstance(value, (int, float, np.floating, np.integer))
                    and not isinstance(value, bool) and math.isfinite(value)
                    and (value > 0 or not positive) and abs(value) <= 1e6):
                raise ValueError(f"Polynomial {name} must be a finite number"
                                 f"{' > 0' if positive else ''} of magnitude at most 1e6, "
                                 f"got {value!r}")
        object.__setattr__(self, "degree", int(self.degree))
        object.__setattr__(self, "gamma", float(self.gamma))
        object.__setattr__(self, "coef0", float(self.coef0))

    def __call__(self, x, y) -> np.ndarray:
        """Exact kernel value(s); x and y broadcast over leading axes, the last axis is features."""
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        return (self.gamma * np.sum(x * y, axis=-1) + self.coef0) ** self.degree

    def to_dict(self) -> dict:
        return {"kind": "Polynomial", "degree": self.degree, "gamma": self.gamma,
                "coef0": self.coef0}


_KINDS = {cls.__name__: cls for cls in (Gaussian, Laplacian, Cauchy, Matern)}


def kernel_from_dict(spec: dict) -> Kernel:
    """Inverse of ``Kernel.to_dict`` (used by persistence; only the known kinds are accepted)."""
    try:
        if spec["kind"] == "Polynomial":
            return Polynomial(int(spec["degree"]), float(spec["gamma"]), float(spec["coef0"]))
        extra = {"nu": float(spec["nu"])} if spec["kind"] == "Matern" else {}
        return _KINDS[spec["kind"]](float(spec["sigma"]), **extra)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a kernel description: {spec!r}") from exc


def paper000_dictionary() -> list[Kernel]:
    """The 76 kernels of Ghari & Shen (JMLR 2023): 51 Gaussian, then 25 Laplacian.

    Gaussian k = 0..50: exp(-||delta||^2 / (2 a_k)) with a_k = 10^(-2 + 0.08 k) (a = sigma^2, from
    0.01 to 100).  Laplacian k = 0..24: exp(-||delta||_1 / b_k) with b_k = 10^(-2 + k/6).

    Returns
    -------
    list of Kernel

    Examples
    --------
    >>> from fastomkl import paper000_dictionary
    >>> kernels = paper000_dictionary()
    >>> len(kernels), kernels[0], kernels[-1]
    (76, Gaussian(sigma=0.1), Laplacian(sigma=100))
    """
    gaussians = [Gaussian.from_variance(10.0 ** (-2.0 + 0.08 * k)) for k in range(51)]
    laplacians = [Laplacian(10.0 ** (-2.0 + k / 6.0)) for k in range(25)]
    return gaussians + laplacians


def paper003_dictionary() -> list[Kernel]:
    """The 76 kernels of Rokhlin & Gurtovaya (VAW^2): the same grid as ``paper000_dictionary``.

    Returns
    -------
    list of Kernel

    Examples
    --------
    >>> from fastomkl import paper000_dictionary, paper003_dictionary
    >>> paper003_dictionary() == paper000_dictionary()
    True
    """
    return paper000_dictionary()


def paper001_dictionary() -> list[Kernel]:
    """The six Gaussian kernels of Li & Liao (ECML-PKDD 2022): sigma = 2^-2, ..., 2^3.

    Returns
    -------
    list of Kernel

    Examples
    --------
    >>> from fastomkl import paper001_dictionary
    >>> [k.sigma for k in paper001_dictionary()]
    [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    """
    return [Gaussian(2.0 ** e) for e in range(-2, 4)]


DICTIONARIES = {
    "paper000": paper000_dictionary,
    "paper001": paper001_dictionary,
    "paper003": paper003_dictionary,
}


def median_dictionary(X, n_per_family: int = 9, spread: float = 16.0, n_pairs: int = 20000,
                      random_state=0) -> list[Kernel]:
    """A dictionary centred on the scale of the data (the median heuristic, made a grid).

    Gaussian kernels with sigma = m_2 * r and Laplacian kernels with sigma = m_1 * r, where m_2 and
    m_1 are the median Euclidean and L1 distances between rows of ``X`` (over ``n_pairs`` pairs of
    distinct rows drawn with ``random_state``) and r runs over ``n_per_family`` ratios spaced evenly in log scale
    from 1/sqrt(spread) to sqrt(spread).  Give it the first samples of a stream (a few hundred are
    plenty): the dictionary then fits data in any units, where a fixed grid such as
    ``paper000_dictionary()`` assumes inputs scaled to the unit ball.  The kernels are isotropic:
    columns of very different scales should be standardised first.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), n_samples >= 2
    n_per_family : int, default 9
    spread : float, default 16
        Ratio of the largest bandwidth of a family to its smallest.
    n_pairs : int, default 20000
    random_state : int or None, default 0

    Returns
    -------
    list of Kernel
        ``n_per_family`` Gaussian kernels, then ``n_per_family`` Laplacian kernels.

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl.kernels import median_dictionary
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> len(median_dictionary(X))
    18
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2 or not np.isfinite(X).all():
        raise ValueError("median_dictionary needs a 2-D array of at least two rows of finite values")
    if int(n_per_family) < 1 or not spread >= 1.0:
        raise ValueError(f"n_per_family must be >= 1 and spread >= 1, got {n_per_family}, {spread}")
    rng = np.random.default_rng(random_state)
    i = rng.integers(0, X.shape[0], n_pairs)
    j = (i + rng.integers(1, X.shape[0], n_pairs)) % X.shape[0]       # a row other than i
    delta = X[i] - X[j]
    m2 = float(np.median(np.sqrt(np.einsum("ij,ij->i", delta, delta))))
    m1 = float(np.median(np.abs(delta).sum(axis=1)))
    if not (m2 > 0.0 and m1 > 0.0):
        raise ValueError("median_dictionary: the rows of X are (mostly) identical, so they set no "
                         "scale")
    ratios = np.sqrt(spread) ** np.linspace(-1.0, 1.0, int(n_per_family))
    return [Gaussian(m2 * r) for r in ratios] + [Laplacian(m1 * r) for r in ratios]
