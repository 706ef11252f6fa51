"""Random Fourier features as a public object: exactly the representation the models compute."""
from __future__ import annotations

import numpy as np

from fastomkl._core.features.rff import RFFBank, SharedDrawRFFBank, transform_many
from fastomkl._validation import check_int, check_kernels, check_matrix, split_random_state

__all__ = ["RandomFourierFeatures", "legacy_frequencies"]


class RandomFourierFeatures:
    """Random Fourier features of a list of shift-invariant kernels.

    For kernel i with frequencies Psi_i (n_components x n_features, drawn from the kernel's spectral
    density), z_i(x) = [cos(Psi_i x); sin(Psi_i x)] / sqrt(n_components), so that
    z_i(x) . z_i(y) is an unbiased estimate of k_i(x - y).

    Parameters
    ----------
    kernels : list of Kernel
        The dictionary (see ``fastomkl.kernels``).
    n_components : int, default 50
        Frequencies per kernel (D); each z_i has 2D values.
    random_state : None, int, SeedSequence or Generator
        Seeds the frequency draws.  A model built with the same seed, kernels and n_components
        draws exactly these frequencies.
    shared_draw : bool, default False
        Draw one standard base B_f for each kernel family f (same kind and shape parameters, in
        order of first use) and give kernel i the frequencies B_f / sigma_i (as the released
        code of Li & Liao does), instead of independent draws per kernel.  A sample is then
        projected once per family, B_f x, and each kernel's features are cos and sin of that
        projection times 1/sigma_i: fewer multiply-adds and far less frequency storage.  Each
        z_i stays an unbiased estimate of its kernel, but the features of different kernels of
        one family are no longer independent, so their errors (and, in a model, the losses and
        kernel weights estimated from them) are correlated across kernels.
    dtype : "float64" or "float32", default "float64"
        Storage of the frequencies.  "float32" keeps the same draws rounded to float32 for every
        kernel whose angles w.x stay within 16 over the unit ball (its largest frequency norm,
        times 1/sigma_i with ``shared_draw``), and computes their projections and sines and
        cosines in float: such features differ from float64 by about 1e-7 of the angle (the
        rounding of the frequencies, the inputs and the sum; each sine and cosine within 2 ulp
        of float).  Narrower kernels keep float64 frequencies and give exactly the float64
        features.  It halves the memory and the bytes a sample reads for the float kernels.
        ``transform`` returns float64 either way.  A sample large enough that a float projection
        could overflow is computed in double from the float32 frequencies.

    Attributes
    ----------
    frequencies_ : ndarray (n_kernels, n_components, n_features), read-only
        Every kernel's frequencies in float64, a float kernel's as rounded (with
        ``shared_draw``, B_f * (1 / sigma_i); the features scale the projection B_f x instead,
        equal up to rounding).
    float32_kernels_ : ndarray of bool (n_kernels,)
        Which kernels compute in float (none unless ``dtype="float32"``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from fastomkl import Gaussian, Laplacian, RandomFourierFeatures
    >>> X = np.random.default_rng(0).uniform(-1, 1, (5, 3))
    >>> rff = RandomFourierFeatures([Gaussian(1.0), Laplacian(2.0)], n_components=2000, random_state=0)
    >>> Z = rff.fit(X).transform(X)                      # (n_samples, n_kernels, 2 n_components)
    >>> Z.shape, bool(np.abs(Z[:, 0] @ Z[:, 0].T - Gaussian(1.0).gram(X)).max() < 0.1)
    ((5, 2, 4000), True)
    """

    def __init__(self, kernels, n_components: int = 50, random_state=None, shared_draw: bool = False,
                 dtype: str = "float64"):
        self.kernels = kernels
        self.n_components = n_components
        self.random_state = random_state
        self.shared_draw = shared_draw
        self.dtype = dtype

    def fit(self, X=None, y=None, *, n_features: int | None = None):
        """Draw the frequencies for inputs of X's width (or ``n_features``)."""
        if n_features is None:
            if X is None:
                raise ValueError("fit needs X or n_features")
            n_features = check_matrix(X).shape[1]
        kernels = check_kernels(self.kernels)
        n_components = check_int(self.n_components, "n_components", 1)
        n_features = check_int(n_features, "n_features", 1)
        self.bank_ = feature_bank(kernels, n_components, n_features,
                                  split_random_state(self.random_state)[0], self.shared_draw,
                                  self.dtype)
        return self

    @classmethod
    def from_bank(cls, kernels, bank, shared_draw: bool = False):
        """The public view of a model's compiled feature bank (shares its frequencies)."""
        self = cls(kernels, bank.n_components, None, shared_draw, bank.dtype)
        self.bank_ = bank
        return self

    @property
    def frequencies_(self) -> np.ndarray:
        return self._fitted().frequencies

    @property
    def float32_kernels_(self) -> np.ndarray:
        return self._fitted().float32_kernels

    @property
    def n_features_in_(self) -> int:
        return self._fitted().n_features

    def transform(self, X) -> np.ndarray:
        """Features of every kernel: array (n_samples, n_kernels, 2 * n_components)."""
        bank = self._fitted()
        X = check_matrix(X, n_features=bank.n_features)
        out = np.empty((X.shape[0], bank.n_kernels, bank.n_outputs))
        transform_many(bank, X, out)
        return out

    def fit_transform(self, X, y=None) -> np.ndarray:
        return self.fit(X).transform(X)

    def kernel_estimate(self, x, y) -> np.ndarray:
        """z_i(x) . z_i(y) for every kernel i: the random-feature estimate of k_i(x, y)."""
        zx, zy = self.transform(np.vstack([x, y]))
        return np.einsum("kd,kd->k", zx, zy)

    def _fitted(self):
        if not hasattr(self, "bank_"):
            from fastomkl._validation import NotFittedError
            raise NotFittedError("RandomFourierFeatures is not fitted: call fit(X) first")
        return self.bank_


def feature_bank(kernels, n_components: int, n_features: int, rng: np.random.Generator,
                 shared_draw: bool = False, dtype: str = "float64"):
    """The compiled features of `kernels`: an RFFBank of independent draws, or with
    ``shared_draw`` a SharedDrawRFFBank of one draw per family (``draw_shared_frequencies``);
    the draws are float64 and stored in `dtype`."""
    if shared_draw:
        return SharedDrawRFFBank(*draw_shared_frequencies(kernels, n_components, n_features, rng),
                                 dtype=dtype)
    return RFFBank(draw_frequencies(kernels, n_components, n_features, rng), dtype)


def draw_frequencies(kernels, n_components: int, n_features: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Independent spectral draws for every kernel in turn, shape (n_kernels, n_components,
    n_features)."""
    out = np.empty((len(kernels), n_components, n_features))
    for i, kernel in enumerate(kernels):
        out[i] = kernel.sample_frequencies(n_components, n_features, rng)
    return out


def draw_shared_frequencies(kernels, n_components: int, n_features: int,
                            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One standard spectral draw per kernel family (same kind and shape parameters, in order of
    first use): (base (n_families, n_components, n_features), family index of each kernel, scale
    1/sigma of each kernel).  Kernel k's frequencies are ``scale[k] * base[family[k]]``."""
    families, base = {}, []
    family = np.empty(len(kernels), dtype=np.int64)
    for i, kernel in enumerate(kernels):
        key = _family_key(kernel)
        if key not in families:
            families[key] = len(base)
            base.append(kernel.sample_frequencies(n_components, n_features, rng) * kernel.sigma)
        family[i] = families[key]
    scale = np.array([1.0 / kernel.sigma for kernel in kernels])
    return np.array(base), family, scale


def _family_key(kernel) -> tuple:
    """What kernels of one family share: kind and shape parameters, all but the bandwidth."""
    return tuple((k, v) for k, v in kernel.to_dict().items() if k != "sigma")


def n_frequency_draws(kernels) -> int:
    """Frequency draws a shared-draw bank of these kernels holds: one per kernel family."""
    return len({_family_key(kernel) for kernel in kernels})


def legacy_bit_generator(seed: int) -> np.random.MT19937:
    """An MT19937 in the state ``np.random.seed(seed)`` leaves (legacy seeding), private to the
    caller: ``np.random.RandomState(legacy_bit_generator(s))`` draws what ``np.random.*`` would."""
    bit_generator = np.random.MT19937()
    bit_generator.state = np.random.RandomState(seed).get_state(legacy=False)
    return bit_generator


def check_legacy_kernels(kernels) -> None:
    """The legacy protocol draws Gaussian and Laplacian kernels only (ValueError otherwise)."""
    from fastomkl.kernels import Gaussian, Laplacian
    for kernel in kernels:
        if type(kernel) not in (Gaussian, Laplacian):
            raise ValueError(f"rng_protocol='legacy' knows Gaussian and Laplacian kernels, "
                             f"got {kernel!r}")


def draw_legacy_frequencies(kernels, n_components: int, n_features: int,
                            stream: np.random.RandomState) -> np.ndarray:
    """The notebooks' draws from `stream`: per kernel in order a (d, m) block of ``randn`` divided
    by sigma (Gaussian) or ``standard_cauchy`` divided by sigma (Laplacian), transposed."""
    from fastomkl.kernels import Gaussian
    check_legacy_kernels(kernels)
    out = np.empty((len(kernels), n_components, n_features))
    for i, kernel in enumerate(kernels):
        if type(kernel) is Gaussian:
            block = stream.randn(n_features, n_components)
        else:
            block = stream.standard_cauchy((n_features, n_components))
        out[i] = (block / kernel.sigma).T
    return out


def legacy_frequencies(kernels, n_components: int, n_features: int, seed: int) -> np.ndarray:
    """Frequencies drawn as the VAW^2 paper's notebooks draw them, shape (N, n_components, d).

    ``np.random.seed(seed)`` then, for each kernel in order, a (d, m) block: ``randn(d, m) / sigma``
    for a Gaussian kernel exp(-||.||^2 / (2 sigma^2)) (the notebooks' ``sqrt(1/gamma)``, gamma =
    sigma^2) and ``standard_cauchy((d, m)) / sigma`` for a Laplacian exp(-||.||_1 / sigma).  Uses a
    private stream, so NumPy's global state is untouched.  Models draw these with
    ``rng_protocol="legacy"``.
    """
    return draw_legacy_frequencies(kernels, n_components, n_features,
                                   np.random.RandomState(legacy_bit_generator(seed)))
