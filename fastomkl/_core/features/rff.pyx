"""Compiled feature maps: random Fourier features, and their concatenation over kernels."""
import numpy as np

from fastomkl._core.arrays import aligned_zeros
from fastomkl._core.checks import require

from fastomkl._core.base cimport FeatureBank
from fastomkl._core.numeric cimport FLOAT_SAFE
from libc.math cimport cos, fabs, sin, sqrt


cdef extern from "fastomkl_kernels.h" nogil:
    enum: FASTOMKL_RFF_ALIGN
    enum: FASTOMKL_RFF_ALIGN_F32
    void fastomkl_rff(const double *W, const double *x, int d, int D, int ld, double scale,
                      double *z)
    void fastomkl_rff_project_scaled(const double *W, const double *x, int d, int D, int ld,
                                     double factor, double scale, double *p, double *z)
    void fastomkl_rff_scaled(const double *p, int D, double factor, double scale, double *z)
    void fastomkl_rff_f32(const float *W, const double *x, int d, int D, int ld, double scale,
                          double *z)
    void fastomkl_rff_project_scaled_f32(const float *W, const double *x, int d, int D, int ld,
                                         double factor, double scale, float *p, double *z)
    void fastomkl_rff_scaled_f32(const float *p, int D, double factor, double scale, double *z)

# The element types a bank may store its frequencies in: float32 halves the bytes a sample's
# projection reads and computes projections and sines in float (features and sums stay float64).
DTYPES = ("float64", "float32")


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


def _padded_rows(sets, int ld, dtype):
    """Sets (n, n_features, n_components) stored (n, n_features, ld) in `dtype` (rounded to
    nearest), rows zero-padded and starting on cache lines (ld is whole vectors)."""
    padded = aligned_zeros(sets.shape[:2] + (ld,), dtype)
    padded[:, :, :sets.shape[2]] = sets
    return padded


cdef int _row_length(int n_components, bint single):
    """n_components rounded up to whole vectors of the widest instruction set."""
    cdef int align = FASTOMKL_RFF_ALIGN_F32 if single else FASTOMKL_RFF_ALIGN
    return (n_components + align - 1) // align * align


cdef double _float_safe_x(padded, double max_factor):
    """The largest max|x_j| for which the float path cannot overflow on these frequencies."""
    cdef double bound = float(np.abs(padded).max(initial=0.0)) * max_factor * padded.shape[1]
    return FLOAT_SAFE / bound if bound > 0.0 else np.inf


cdef inline bint _fits_float(const double* x, int d, double limit) noexcept nogil:
    cdef int l
    for l in range(d):
        if not fabs(x[l]) <= limit:
            return False
    return True


cdef void _rff_float32_exact(const float* W, const double* x, int d, int D, int ld,
                             double factor, double scale, double* z) noexcept nogil:
    """z as the float32 kernels define it, for a sample whose float projection could overflow:
    the projection of the stored frequencies in double and libm's sine and cosine (rare inputs
    only; |x_j| up to 1e150 is accepted)."""
    cdef int j, l
    cdef double p
    for j in range(D):
        p = 0.0
        for l in range(d):
            p += <double>W[<long>l * ld + j] * x[l]
        p *= factor
        z[j] = scale * cos(p)
        z[D + j] = scale * sin(p)


def _check_dtype(dtype):
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {list(DTYPES)}, got {dtype!r}")
    return dtype == "float32"


# A float32 bank computes a kernel in float only if its angles |w x| stay within this bound for
# every x in the unit ball (its largest frequency norm): the float path computes an angle to
# about 1.2e-7 of its size (the rounding of the frequencies, of x and of the sum), so a feature
# moves by at most ~2e-6 there.  Narrow or heavy-tailed kernels (paper 000's Gaussians below
# sigma ~ 0.3 and Laplacians below sigma ~ 2 on 15 features, whose angles reach 20 to 1e6 on
# unit-scale data) would move by 1e-5 to 1e-1, which reaches the predictions (VAW2's ridge
# solves amplify it most): they stay float64, computed as in a float64 bank.
FLOAT32_ANGLE_LIMIT = 16.0


cdef class StoredFrequencies(FeatureBank):
    """What the random-feature banks share: sets of frequencies (a kernel's, or a family's base
    draw) in padded rows, in float32 for the kernels that compute in float, in float64 for the
    others."""

    def _store(self, frequencies, dtype, kernel_set, kernel_bounds):
        """Keep `frequencies` (n, n_components, n_features), float64, for kernels using set
        `kernel_set[k]`: in float64, or with dtype "float32" in float32 (rounded to nearest) for
        the kernels whose `kernel_bounds` (largest |w x| over the unit ball) are at most
        FLOAT32_ANGLE_LIMIT, and in float64 for the others."""
        self.single = _check_dtype(dtype)
        self._arrange(frequencies.transpose(0, 2, 1), kernel_set,
                      np.asarray(kernel_bounds) <= FLOAT32_ANGLE_LIMIT if self.single
                      else np.zeros(len(kernel_set), dtype=bool))

    def _arrange(self, sets, kernel_set, in_float32):
        """Store `sets` (n, n_features, n_components): in float32 those used by a kernel that
        computes in float (`in_float32[k]`), in float64 those used by another kernel or none."""
        self.n_features, self.n_components = sets.shape[1], sets.shape[2]
        self.ld = _row_length(self.n_components, False)
        self.ld32 = _row_length(self.n_components, True)
        has32, has64 = _storage_of(sets.shape[0], kernel_set, in_float32)
        self.in_float32 = in_float32.astype(np.uint8)
        self.row32 = np.where(has32, np.cumsum(has32) - 1, -1).astype(np.int32)
        self.row64 = np.where(has64, np.cumsum(has64) - 1, -1).astype(np.int32)
        self.f32 = _padded_rows(sets[has32], self.ld32, np.float32)
        self.f64 = _padded_rows(sets[has64], self.ld, np.float64)

    def _sets(self):
        """Every set (n, n_features, n_components) in float64 (exact, or a float32-only set as
        stored), without the padding: what a file holds, whatever the storage layout."""
        row32, row64 = np.asarray(self.row32), np.asarray(self.row64)
        sets = np.empty((row32.shape[0], self.n_features, self.n_components))
        only32 = row64 < 0
        sets[~only32] = np.asarray(self.f64)[row64[~only32], :, :self.n_components]
        sets[only32] = np.asarray(self.f32)[row32[only32], :, :self.n_components]
        return sets

    @property
    def dtype(self):
        """The element type asked for: "float64", or "float32" (see ``float32_kernels``)."""
        return DTYPES[self.single]

    @property
    def float32_kernels(self):
        """Which kernels compute in float: bool (n_kernels,)."""
        return np.asarray(self.in_float32).astype(bool)

    @property
    def stored(self):
        """The storage itself, (float32 sets, float64 sets), each (n, n_features, ld) padded."""
        return np.asarray(self.f32), np.asarray(self.f64)

    @property
    def stored_bytes(self):
        """Bytes the stored frequencies take, rows padded to whole vectors."""
        return sum(part.nbytes for part in self.stored)

    def _sets_state(self, name):
        # The sets in float64 and, for a float32 bank, which kernels compute in float.
        state = {name: self._sets()}
        if self.single:
            state["in_float32"] = self.float32_kernels
        return state

    def _check_sets(self, state, name, kernel_set):
        sets = state[name]
        require(np.abs(sets).max(initial=0.0) <= MAX_FREQUENCY, self, f"{name} frequencies "
                "must lie within +-1e100")
        if self.single:
            has32, has64 = _storage_of(sets.shape[0], kernel_set, state["in_float32"])
            only32 = sets[has32 & ~has64]
            with np.errstate(over="ignore"):
                require(np.array_equal(only32.astype(np.float32), only32), self, f"{name} sets "
                        "used only by float32 kernels must hold float32 values")

    def _with_precision(self, state, name):
        """`state`, or a float32 bank's state from a file written when every set was stored in
        float32 ('{name}' float32, no 'in_float32'): its sets in float64, every kernel float."""
        if self.single and "in_float32" not in state and name in state:
            sets = np.asarray(state[name])
            if sets.dtype == np.float32 and sets.ndim == 3:
                return {**state, name: sets.astype(np.float64),
                        "in_float32": np.ones(self.n_kernels, dtype=bool)}
        return state

    def _upgraded(self, state):
        return state

    def check_state(self, state):
        FeatureBank.check_state(self, self._upgraded(state))

    def set_state(self, state):
        state = self._upgraded(state)
        FeatureBank.check_state(self, state)
        self._restore(state)
        self._state_restored()

    def _restore(self, state):
        """Rebuild the storage from a checked state."""


def _storage_of(n_sets, kernel_set, in_float32):
    """(float32 copy, float64 copy): whether each set is stored in each precision."""
    kernel_set, in_float32 = np.asarray(kernel_set), np.asarray(in_float32, dtype=bool)
    has32, used64 = np.zeros(n_sets, dtype=bool), np.zeros(n_sets, dtype=bool)
    has32[kernel_set[in_float32]] = True
    used64[kernel_set[~in_float32]] = True
    return has32, used64 | ~has32


cdef class RFFBank(StoredFrequencies):
    """z_k(x) = [cos(W_k x); sin(W_k x)] / sqrt(D) for each kernel k (no phase)."""

    def __init__(self, frequencies, dtype="float64"):
        """`frequencies`: array (n_kernels, n_components, n_features) of spectral draws, stored
        in float64, or with `dtype` "float32" rounded to float32 for every kernel whose angles
        stay within FLOAT32_ANGLE_LIMIT over the unit ball (``float32_kernels``)."""
        frequencies = np.asarray(frequencies, dtype=np.float64)
        if frequencies.ndim != 3:
            raise ValueError("frequencies must have shape (n_kernels, n_components, n_features)")
        with np.errstate(over="ignore"):
            bounds = np.linalg.norm(frequencies, axis=2).max(axis=1, initial=0.0)
        self.n_kernels = frequencies.shape[0]
        self._store(frequencies, dtype, np.arange(self.n_kernels), bounds)
        self.n_work = self.single       # whether the sample fits the float path
        self.n_outputs = 2 * self.n_components
        self.scale = 1.0 / sqrt(<double>self.n_components)
        self._state_restored()

    def _state_restored(self):
        self.float_safe_x = _float_safe_x(np.asarray(self.f32), 1.0)

    @property
    def frequencies(self):
        """A read-only array (n_kernels, n_components, n_features) of the frequencies, in
        float64 (a float32 kernel's as stored)."""
        view = self._sets().transpose(0, 2, 1)
        view.flags.writeable = False
        return view

    def _state_arrays(self):
        return self._sets_state("weights")

    def _upgraded(self, state):
        return self._with_precision(state, "weights")

    def _check_semantics(self, state):
        # |frequency| <= 1e100 keeps W x finite for every accepted x (|x_j| <= 1e150).
        self._check_sets(state, "weights", np.arange(self.n_kernels))

    def _restore(self, state):
        self._arrange(state["weights"], np.arange(self.n_kernels),
                      np.asarray(state["in_float32"]) if self.single
                      else np.zeros(self.n_kernels, dtype=bool))

    cdef void prepare(self, const double* x, double* work) noexcept nogil:
        if self.single:
            work[0] = _fits_float(x, self.n_features, self.float_safe_x)

    cdef void transform_prepared(self, const double* x, double* work, int k,
                                 double* z) noexcept nogil:
        self.transform_fitting(x, k, work[0] != 0.0, z)

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        self.transform_fitting(x, k, self.in_float32[k]
                               and _fits_float(x, self.n_features, self.float_safe_x), z)

    cdef void transform_fitting(self, const double* x, int k, bint fits,
                                double* z) noexcept nogil:
        """z of kernel k; `fits`: whether x fits the float path (read by float kernels only)."""
        if not self.in_float32[k]:
            fastomkl_rff(&self.f64[self.row64[k], 0, 0], x, self.n_features, self.n_components,
                         self.ld, self.scale, z)
        elif fits:
            fastomkl_rff_f32(&self.f32[self.row32[k], 0, 0], x, self.n_features,
                             self.n_components, self.ld32, self.scale, z)
        else:
            _rff_float32_exact(&self.f32[self.row32[k], 0, 0], x, self.n_features,
                               self.n_components, self.ld32, 1.0, self.scale, z)


cdef class SharedDrawRFFBank(StoredFrequencies):
    """Random Fourier features of kernels that share one draw per family.

    Kernel k of family f = family[k] has frequencies scale[k] * B_f, B_f the family's base draw
    (n_components, n_features), so z_k(x) = [cos(scale[k] B_f x); sin(scale[k] B_f x)] / sqrt(D).
    A sample's projection B_f x is computed once, by the first kernel of its family that needs it
    (``prepare`` / ``transform_prepared``); each kernel then pays only for its sines and cosines.
    """

    def __init__(self, base, family, scale, dtype="float64"):
        """`base`: (n_families, n_components, n_features) draws; `family`: (n_kernels,) index of
        each kernel's base; `scale`: (n_kernels,) positive factor of each kernel (1 / sigma_k for a
        standard base draw).  With `dtype` "float32" the kernels whose angles stay within
        FLOAT32_ANGLE_LIMIT over the unit ball compute in float from their base rounded to float32
        (``float32_kernels``), the others in double: a family with both is stored in both."""
        base = np.asarray(base, dtype=np.float64)
        family = np.asarray(family)
        scale = np.asarray(scale, dtype=np.float64)
        if base.ndim != 3:
            raise ValueError("base must have shape (n_families, n_components, n_features)")
        if family.ndim != 1 or family.dtype.kind not in "iu" or scale.shape != family.shape:
            raise ValueError("family (integers) and scale must be vectors of one length")
        if not np.all((family >= 0) & (family < base.shape[0])):
            raise ValueError(f"family indices must lie in [0, {base.shape[0]})")
        with np.errstate(over="ignore"):
            bounds = np.linalg.norm(base, axis=2).max(axis=1, initial=0.0)[family] * np.abs(scale)
        self.n_families = base.shape[0]
        self.n_kernels = family.shape[0]
        self._store(base, dtype, family, bounds)
        self.family = family.astype(np.int64)
        self.scale = np.array(scale)
        self.n_outputs = 2 * self.n_components
        self.norm = 1.0 / sqrt(<double>self.n_components)
        # two projection slots per family (ld doubles' room: ld32 floats fit in it), then their
        # flags, then whether the sample fits the float path
        self.flags = 2 * self.n_families * self.ld
        self.n_work = self.flags + 2 * self.n_families + 1
        self._check_semantics(self._state_arrays())
        self._state_restored()

    def _state_restored(self):
        self.float_safe_x = _float_safe_x(np.asarray(self.f32),
                                          float(np.asarray(self.scale).max(initial=0.0)))

    @property
    def frequencies(self):
        """A read-only array (n_kernels, n_components, n_features) of each kernel's frequencies
        scale[k] * base[family[k]] (in float64)."""
        base = self._sets().transpose(0, 2, 1)
        view = base[np.asarray(self.family)] * np.asarray(self.scale)[:, None, None]
        view.flags.writeable = False
        return view

    def _state_arrays(self):
        return {**self._sets_state("base"), "family": np.asarray(self.family),
                "scale": np.asarray(self.scale)}

    def _check_semantics(self, state):
        family, scale = state["family"], state["scale"]
        require(np.all((family >= 0) & (family < self.n_families)), self,
                f"family indices must lie in [0, {self.n_families})")
        require(np.all(scale > 0), self, "scales must be positive")
        self._check_sets(state, "base", family)
        base = np.abs(state["base"])
        largest = base.reshape(self.n_families, -1).max(axis=1, initial=0.0)
        require(np.all(largest[family] * scale <= MAX_FREQUENCY), self,
                "scaled frequencies must lie within +-1e100")

    def _restore(self, state):
        self._arrange(state["base"], np.asarray(state["family"]),
                      np.asarray(state["in_float32"]) if self.single
                      else np.zeros(self.n_kernels, dtype=bool))
        self.family = np.asarray(state["family"]).astype(np.int64)
        self.scale = np.array(state["scale"], dtype=np.float64)

    def _upgraded(self, state):
        """`state`, or the state of an older file re-expressed as one base per family: files
        that stored 'weights' (n, n_features, n_components), either every kernel's frequencies
        (n = n_kernels; accepted if they are one draw per family scaled by this bank's scales, up
        to rounding) or, for kernels of one family, the one shared draw itself (n = 1); and
        float32 files written when every base was stored in float32."""
        if set(state) != {"weights"}:
            return self._with_precision(state, "base")
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
        cdef int slot
        for slot in range(2 * self.n_families):     # no projection computed yet
            work[self.flags + slot] = 0.0
        work[self.flags + 2 * self.n_families] = (not self.single
                                                  or _fits_float(x, self.n_features,
                                                                 self.float_safe_x))

    cdef void transform_prepared(self, const double* x, double* work, int k,
                                 double* z) noexcept nogil:
        cdef int f = <int>self.family[k]
        cdef bint single = self.in_float32[k]
        cdef int slot = 2 * f + single
        cdef double* done = work + self.flags + slot
        cdef bint fits = work[self.flags + 2 * self.n_families] != 0.0
        if single and not fits:      # the float path could overflow: exact per kernel
            self.project(x, f, True, False, self.scale[k], NULL, z)
        elif done[0] == 0.0:         # the slot's first kernel in this sample projects
            self.project(x, f, single, fits, self.scale[k], work, z)
            done[0] = 1.0
        elif single:
            fastomkl_rff_scaled_f32(<float*>(work + slot * self.ld), self.n_components,
                                    self.scale[k], self.norm, z)
        else:
            fastomkl_rff_scaled(work + slot * self.ld, self.n_components, self.scale[k],
                                self.norm, z)

    cdef void project(self, const double* x, int f, bint single, bint fits, double factor,
                      double* work, double* z) noexcept nogil:
        """z of a kernel of family f with scale `factor`, in float if `single` (`fits`: whether x
        fits the float path); its projection kept in `work`'s slot if `work` is not NULL."""
        cdef double* keep = NULL if work == NULL else work + (2 * f + single) * self.ld
        if not single:
            fastomkl_rff_project_scaled(&self.f64[self.row64[f], 0, 0], x, self.n_features,
                                        self.n_components, self.ld, factor, self.norm, keep, z)
        elif not fits:
            _rff_float32_exact(&self.f32[self.row32[f], 0, 0], x, self.n_features,
                               self.n_components, self.ld32, factor, self.norm, z)
        else:
            fastomkl_rff_project_scaled_f32(&self.f32[self.row32[f], 0, 0], x, self.n_features,
                                            self.n_components, self.ld32, factor, self.norm,
                                            <float*>keep, z)

    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        cdef bint single = self.in_float32[k]
        self.project(x, <int>self.family[k], single,
                     single and _fits_float(x, self.n_features, self.float_safe_x),
                     self.scale[k], NULL, z)


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
    void fastomkl_sincos_many_f32(const float *x, long n, float *s, float *c)


def isa_level():
    """The instruction set the C kernels run on: 4 (AVX-512), 3 (AVX2 + FMA) or 2 (SSE2)."""
    return fastomkl_isa_in_use()


ctypedef fused real:
    float
    double


def _sincos_into(const real[::1] x, real[::1] s, real[::1] c):
    if x.shape[0] == 0:
        return
    with nogil:
        if real is float:
            fastomkl_sincos_many_f32(&x[0], x.shape[0], &s[0], &c[0])
        else:
            fastomkl_sincos_many(&x[0], x.shape[0], &s[0], &c[0])


def _sincos(x, dtype="float64"):
    """(sin x, cos x) elementwise by the random-feature kernel's vector sine-cosine (for tests).

    Parameters
    ----------
    x : array_like, any shape
    dtype : {"float64", "float32"}
        The routine of float64 banks, or that of float32 banks (x rounded to float32).

    Returns
    -------
    s, c : ndarray of `dtype`
        Arrays of x's shape.
    """
    xs = np.ascontiguousarray(x, dtype=np.float32 if _check_dtype(dtype) else np.float64).ravel()
    s, c = np.empty_like(xs), np.empty_like(xs)
    _sincos_into(xs, s, c)
    shape = np.shape(x)
    return s.reshape(shape), c.reshape(shape)
