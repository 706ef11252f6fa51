"""Compiled feature maps: random Fourier features, and their concatenation over kernels."""
import numpy as np

from fastomkl._core.base import require

from fastomkl._core.base cimport FeatureBank
from libc.math cimport sqrt


cdef extern from "fastomkl_kernels.h" nogil:
    enum: FASTOMKL_RFF_ALIGN
    void fastomkl_rff(const double *W, const double *x, int d, int D, int ld, double scale,
                      double *z)



def transform_many(FeatureBank bank, const double[:, ::1] X, double[:, :, ::1] out):
    """out[i, k] = z_k(X[i]) for every sample i and kernel k (validated by the caller)."""
    cdef Py_ssize_t i
    cdef int k
    with nogil:
        for i in range(X.shape[0]):
            for k in range(bank.n_kernels):
                bank.transform(&X[i, 0], k, &out[i, k, 0])


cdef class RFFBank(FeatureBank):
    """z_k(x) = [cos(W_k x); sin(W_k x)] / sqrt(D) for each kernel k (no phase)."""

    def __init__(self, frequencies):
        """`frequencies`: array (n_kernels, n_components, n_features) of spectral draws."""
        frequencies = np.asarray(frequencies, dtype=np.float64)
        if frequencies.ndim != 3:
            raise ValueError("frequencies must have shape (n_kernels, n_components, n_features)")
        self.n_kernels, self.n_components, self.n_features = frequencies.shape
        row = (self.n_components + FASTOMKL_RFF_ALIGN - 1) // FASTOMKL_RFF_ALIGN * FASTOMKL_RFF_ALIGN
        padded = np.zeros((self.n_kernels, self.n_features, row))
        padded[:, :, :self.n_components] = frequencies.transpose(0, 2, 1)
        self.weights = padded
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
        require(np.abs(state["weights"]).max(initial=0.0) <= 1e100, self,
                "frequencies must lie within +-1e100")

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        fastomkl_rff(&self.weights[k, 0, 0], x, self.n_features, self.n_components,
                     self.weights.shape[2], self.scale, z)


cdef class ConcatenatedFeatures(FeatureBank):
    """One representation made of every kernel of `inner`, side by side (for concatenated models)."""

    def __init__(self, FeatureBank inner):
        self.inner = inner
        self.n_kernels = 1
        self.n_features = inner.n_features
        self.n_outputs = inner.n_kernels * inner.n_outputs

    def _state_arrays(self):
        return {"inner_" + name: value for name, value in self.inner._state_arrays().items()}

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        cdef int i
        for i in range(self.inner.n_kernels):
            self.inner.transform(x, i, z + i * self.inner.n_outputs)


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
