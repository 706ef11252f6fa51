"""Compiled feature maps: random Fourier features, and their concatenation over kernels."""
import numpy as np

from fastomkl._core.base import require

from fastomkl._core.base cimport FeatureBank
from libc.math cimport sqrt


cdef extern from "fastomkl_kernels.h" nogil:
    enum: FASTOMKL_RFF_ALIGN
    void fastomkl_rff(const double *W, const double *x, int d, int D, int ld, double scale,
                      double *z)
    void fastomkl_rff_project_scaled(const double *W, const double *x, int d, int D, int ld,
                                     double factor, double scale, double *p, double *z)
    void fastomkl_rff_scaled(const double *p, int D, double factor, double scale, double *z)


# The largest |frequency| a state may hold: W x stays finite for every accepted x (|x_j| <= 1e150).
cdef double MAX_FREQUENCY = 1e100


def transform_many(FeatureBank bank, const double[:, ::1] X, double[:, :, ::1] out,
                   bint prepared=True):
    """out[i, k] = z_k(X[i]) for every sample i and kernel k (validated by the caller), by the
    per-sample path the models take, or with ``prepared=False`` by each kernel's own transform
    (what shares work across kernels must not change the features)."""
    cdef double[::1] work = np.zeros(max(bank.n_work, 1))      # this call's own: threads may
    cdef Py_ssize_t i                                           # transform with one bank at once
    cdef int k
    with nogil:
        for i in range(X.shape[0]):
            if prepared:
                bank.prepare(&X[i, 0], &work[0])
            for k in range(bank.n_kernels):
                if prepared:
                    bank.transform_prepared(&X[i, 0], &work[0], k, &out[i, k, 0])
                else:
                    bank.transform(&X[i, 0], k, &out[i, k, 0])


def _padded_rows(frequencies, int ld):
    """(n, n_components, n_features) frequencies stored (n, n_features, ld), rows zero-padded."""
    n, n_components, n_features = frequencies.shape
    padded = np.zeros((n, n_features, ld))
    padded[:, :, :n_components] = frequencies.transpose(0, 2, 1)
    return padded


cdef int _row_length(int n_components):
    """n_components rounded up to whole vectors of the widest instruction set."""
    return (n_components + FASTOMKL_RFF_ALIGN - 1) // FASTOMKL_RFF_ALIGN * FASTOMKL_RFF_ALIGN


cdef class RFFBank(FeatureBank):
    """z_k(x) = [cos(W_k x); sin(W_k x)] / sqrt(D) for each kernel k (no phase)."""

    def __init__(self, frequencies):
        """`frequencies`: array (n_kernels, n_components, n_features) of spectral draws."""
        frequencies = np.asarray(frequencies, dtype=np.float64)
        if frequencies.ndim != 3:
            raise ValueError("frequencies must have shape (n_kernels, n_components, n_features)")
        self.n_kernels, self.n_components, self.n_features = frequencies.shape
        self.weights = _padded_rows(frequencies, _row_length(self.n_components))
        self.n_outputs = 2 * self.n_components
        self.scale = 1.0 / sqrt(<double>self.n_components)

    @property
    def frequencies(self):
        """A read-only view (n_kernels, n_components, n_features) of the frequencies."""
        view = np.asarray(self.weights)[:, :, :self.n_components].transpose(0, 2, 1)
        view.flags.writeable = False
        return view

    def _state_arrays(self):
        # Without the padding, so a saved state does not depend on the storage layout.
        return {"weights": np.asarray(self.weights)[:, :, :self.n_components]}

    def _check_semantics(self, state):
        # |frequency| <= 1e100 keeps W x finite for every accepted x (|x_j| <= 1e150).
        require(np.abs(state["weights"]).max(initial=0.0) <= MAX_FREQUENCY, self,
                "frequencies must lie within +-1e100")

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        fastomkl_rff(&self.weights[k, 0, 0], x, self.n_features, self.n_components,
                     self.weights.shape[2], self.scale, z)


cdef class SharedDrawRFFBank(FeatureBank):
    """Random Fourier features of kernels that share one draw per family.

    Kernel k of family f = family[k] has frequencies scale[k] * B_f, B_f the family's base draw
    (n_components, n_features), so z_k(x) = [cos(scale[k] B_f x); sin(scale[k] B_f x)] / sqrt(D).
    A sample's projection B_f x is computed once, by the first kernel of its family that needs it
    (``prepare`` / ``transform_prepared``); each kernel then pays only for its sines and cosines.
    """

    def __init__(self, base, family, scale):
        """`base`: (n_families, n_components, n_features) draws; `family`: (n_kernels,) index of
        each kernel's base; `scale`: (n_kernels,) positive factor of each kernel (1 / sigma_k
        for a standard base draw)."""
        base = np.asarray(base, dtype=np.float64)
        family = np.asarray(family)
        scale = np.asarray(scale, dtype=np.float64)
        if base.ndim != 3:
            raise ValueError("base must have shape (n_families, n_components, n_features)")
        if family.ndim != 1 or family.dtype.kind not in "iu" or scale.shape != family.shape:
            raise ValueError("family (integers) and scale must be vectors of one length")
        self.n_families, self.n_components, self.n_features = base.shape
        self.n_kernels = family.shape[0]
        self.ld = _row_length(self.n_components)
        self.base = _padded_rows(base, self.ld)
        self.family = family.astype(np.int64)
        self.scale = np.array(scale)
        self.n_outputs = 2 * self.n_components
        self.norm = 1.0 / sqrt(<double>self.n_components)
        self.n_work = self.n_families * (self.ld + 1)
        self._check_semantics(self._state_arrays())

    @property
    def frequencies(self):
        """A read-only array (n_kernels, n_components, n_features) of each kernel's frequencies
        scale[k] * base[family[k]]."""
        base = np.asarray(self.base)[:, :, :self.n_components].transpose(0, 2, 1)
        view = base[np.asarray(self.family)] * np.asarray(self.scale)[:, None, None]
        view.flags.writeable = False
        return view

    def _state_arrays(self):
        # Without the padding, so a saved state does not depend on the storage layout.
        return {"base": np.asarray(self.base)[:, :, :self.n_components],
                "family": np.asarray(self.family), "scale": np.asarray(self.scale)}

    def _check_semantics(self, state):
        family, scale, base = state["family"], state["scale"], np.abs(state["base"])
        require(np.all((family >= 0) & (family < self.n_families)), self,
                f"family indices must lie in [0, {self.n_families})")
        require(np.all(scale > 0), self, "scales must be positive")
        require(base.max(initial=0.0) <= MAX_FREQUENCY, self, "base frequencies must lie within "
                "+-1e100")
        largest = base.reshape(self.n_families, -1).max(axis=1, initial=0.0)
        require(np.all(largest[family] * scale <= MAX_FREQUENCY), self,
                "scaled frequencies must lie within +-1e100")

    def check_state(self, state):
        FeatureBank.check_state(self, self._upgraded(state))

    def set_state(self, state):
        FeatureBank.set_state(self, self._upgraded(state))

    def _upgraded(self, state):
        """`state`, or the state of an older file re-expressed as one base per family: files
        that stored 'weights' (n, n_features, n_components), either every kernel's frequencies
        (n = n_kernels; accepted if they are one draw per family scaled by this bank's scales, up
        to rounding) or, for kernels of one family, the one shared draw itself (n = 1)."""
        if set(state) != {"weights"}:
            return state
        weights = np.asarray(state["weights"])
        shapes = {(n, self.n_features, self.n_components) for n in (self.n_kernels, 1)
                  if n == self.n_kernels or self.n_families == 1}
        if weights.dtype != np.float64 or weights.shape not in shapes \
                or not np.isfinite(weights).all():
            raise ValueError(f"{type(self).__name__} state 'weights' must be finite float64 of "
                             f"shape {' or '.join(map(str, sorted(shapes)))}")
        family, scale = np.asarray(self.family), np.asarray(self.scale)
        if self.n_kernels == 1:
            # one array, either the draw or the frequencies: the same only when sigma is 1
            require(scale[0] == 1.0, self, "a one-kernel 'weights' entry of an older file may be "
                    "the shared draw or the kernel's frequencies; refit the model")
        elif weights.shape[0] == 1:
            return {"base": weights.copy(), "family": family.copy(), "scale": scale.copy()}
        first = np.array([np.flatnonzero(family == f)[0] for f in range(self.n_families)])
        base = weights[first] / scale[first, None, None]
        expected = base[family] * scale[:, None, None]
        require(np.all(np.abs(weights - expected) <= 1e-12 * np.abs(weights) + 1e-300), self,
                "the saved per-kernel 'weights' are not one draw per kernel family scaled by "
                "each kernel's 1/sigma")
        return {"base": base, "family": family.copy(), "scale": scale.copy()}

    cdef void prepare(self, const double* x, double* work) noexcept nogil:
        cdef int f
        for f in range(self.n_families):            # no projection computed yet
            work[self.n_families * self.ld + f] = 0.0

    cdef void transform_prepared(self, const double* x, double* work, int k,
                                 double* z) noexcept nogil:
        cdef int f = <int>self.family[k]
        cdef double* p = work + f * self.ld
        cdef double* done = work + self.n_families * self.ld + f
        if done[0] == 0.0:           # the family's first kernel in this sample projects
            fastomkl_rff_project_scaled(&self.base[f, 0, 0], x, self.n_features,
                                        self.n_components, self.ld, self.scale[k], self.norm, p,
                                        z)
            done[0] = 1.0
        else:
            fastomkl_rff_scaled(p, self.n_components, self.scale[k], self.norm, z)

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        fastomkl_rff_project_scaled(&self.base[self.family[k], 0, 0], x, self.n_features,
                                    self.n_components, self.ld, self.scale[k], self.norm, NULL, z)


cdef class ConcatenatedFeatures(FeatureBank):
    """One representation made of every kernel of `inner`, side by side (for concatenated models)."""

    def __init__(self, FeatureBank inner):
        self.inner = inner
        self.n_kernels = 1
        self.n_features = inner.n_features
        self.n_outputs = inner.n_kernels * inner.n_outputs
        self.n_work = inner.n_work

    def _state_arrays(self):
        return {"inner_" + name: value for name, value in self.inner._state_arrays().items()}

    def check_state(self, state):
        self.inner.check_state(self._inner_state(state))

    def set_state(self, state):
        self.inner.set_state(self._inner_state(state))

    def _inner_state(self, state):
        names = [name for name in state if not name.startswith("inner_")]
        if names:
            raise ValueError(f"{type(self).__name__} state: unknown entries {sorted(names)}")
        return {name[len("inner_"):]: value for name, value in state.items()}

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        cdef int i
        for i in range(self.inner.n_kernels):
            self.inner.transform(x, i, z + i * self.inner.n_outputs)

    cdef void prepare(self, const double* x, double* work) noexcept nogil:
        self.inner.prepare(x, work)

    cdef void transform_prepared(self, const double* x, double* work, int k,
                                 double* z) noexcept nogil:
        cdef int i
        for i in range(self.inner.n_kernels):
            self.inner.transform_prepared(x, work, i, z + i * self.inner.n_outputs)


cdef extern from "fastomkl_kernels.h" nogil:
    int fastomkl_isa_in_use()
    void fastomkl_sincos_many(const double *x, long n, double *s, double *c)


def isa_level():
    """The instruction set the C kernels run on: 4 (AVX-512), 3 (AVX2 + FMA) or 2 (SSE2)."""
    return fastomkl_isa_in_use()


def _sincos(x):
    """(sin x, cos x) elementwise by the random-feature kernel's vector sine-cosine (for tests).

    Parameters
    ----------
    x : array_like of float64, any shape

    Returns
    -------
    s, c : ndarray
        Arrays of x's shape.
    """
    cdef const double[::1] xs = np.ascontiguousarray(x, dtype=np.float64).ravel()
    s, c = np.empty(xs.shape[0]), np.empty(xs.shape[0])
    cdef double[::1] sv = s, cv = c
    if xs.shape[0]:
        with nogil:
            fastomkl_sincos_many(&xs[0], xs.shape[0], &sv[0], &cv[0])
    shape = np.shape(x)
    return s.reshape(shape), c.reshape(shape)
