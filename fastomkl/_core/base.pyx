"""Base classes of the compiled components (interfaces in base.pxd) and their state handling."""
import numpy as np


cdef class Component:
    """A compiled part of a model whose mutable state lives in NumPy arrays."""

    def _state_arrays(self):
        """Name -> live array of everything a round may change (overridden by subclasses)."""
        return {}

    def get_state(self):
        state = {name: np.array(value, copy=True) for name, value in self._state_arrays().items()}
        rejected = getattr(self, "n_rejected", None)
        if rejected is not None:
            state["n_rejected"] = np.array(rejected, dtype=np.int64)
        return state

    def _split_counter(self, state):
        """(state without the refusal counter, the counter) for experts and combiners."""
        if getattr(self, "n_rejected", None) is None:
            return state, None
        state = dict(state)
        if "n_rejected" not in state:
            raise ValueError(f"{type(self).__name__} state has no 'n_rejected'")
        counter = np.asarray(state.pop("n_rejected"))
        if counter.shape != () or counter.dtype != np.int64 or counter < 0:
            raise ValueError(f"{type(self).__name__} state 'n_rejected' must be a non-negative "
                             f"int64 scalar")
        return state, int(counter)

    def check_state(self, state):
        """Raise ValueError unless `state` has exactly this component's arrays, shapes and dtypes."""
        state, _ = self._split_counter(state)
        live = self._state_arrays()
        if set(state) != set(live):
            raise ValueError(f"{type(self).__name__} state must have arrays {sorted(live)}, "
                             f"got {sorted(state)}")
        for name, value in state.items():
            target = np.asarray(live[name])
            value = np.asarray(value)
            if value.shape != target.shape or value.dtype != target.dtype:
                raise ValueError(f"{type(self).__name__} state '{name}' must be {target.dtype} "
                                 f"with shape {target.shape}, got {value.dtype} {value.shape}")
            if value.dtype.kind == "f" and not np.isfinite(value).all():
                raise ValueError(f"{type(self).__name__} state '{name}' holds NaN or infinity")
        self._check_semantics({name: np.asarray(value) for name, value in state.items()})

    def _check_semantics(self, state):
        """Raise ValueError unless the values of `state` (names, shapes and dtypes checked, floats
        finite) are ones the compiled code can run on: indices in range, counts consistent, ...
        Overridden by components whose state holds indices or structure."""

    def set_state(self, state):
        """Copy `state` into the live arrays (after check_state)."""
        self.check_state(state)
        state, counter = self._split_counter(state)
        live = self._state_arrays()
        for name, value in state.items():
            np.asarray(live[name])[...] = value
        if counter is not None:
            self.n_rejected = counter
        self._state_restored()

    def _state_restored(self):
        """Recompute what is derived from the state arrays (after set_state)."""


def aligned_zeros(shape, dtype=np.float64):
    """Zeros of `shape`, starting on a 64-byte boundary.  The allocator only promises 16 bytes,
    and which of the four offsets an array gets depends on the heap's history: arrays streamed
    by whole-vector loads (frequencies, expert weights) whose rows are whole cache lines then
    straddle two lines on every load, or none, from one model to the next (Raker-76: 12-15%
    of a round between otherwise identical models)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64))
    raw = np.zeros(size + 64 // dtype.itemsize, dtype=dtype)
    start = (-raw.ctypes.data % 64) // dtype.itemsize
    return raw[start:start + size].reshape(shape)


def aligned_rows(int n, int dim):
    """Zeros (n, ld), ld >= dim a multiple of 8 doubles, starting on a 64-byte boundary: every
    row starts a cache line, so whole-vector loads of a row never straddle two."""
    return aligned_zeros((n, (dim + 7) // 8 * 8))


def require(bint condition, owner, str what):
    """Raise ValueError naming the component and the broken invariant unless `condition`."""
    if not condition:
        raise ValueError(f"{type(owner).__name__} state: {what}")


def require_names(owner, state, names):
    """ValueError unless `state` holds exactly the arrays `names` (components whose arrays grow
    with the data, so the base check cannot compare their shapes with live arrays)."""
    if set(state) != set(names):
        raise ValueError(f"{type(owner).__name__} state must have arrays {sorted(names)}, "
                         f"got {sorted(state)}")


def require_shapes(owner, state, shapes):
    """ValueError unless each array named in `shapes` is finite float64 of that shape."""
    for name, shape in shapes.items():
        value = np.asarray(state[name])
        if value.dtype != np.float64 or value.shape != shape or not np.all(np.isfinite(value)):
            raise ValueError(f"{type(owner).__name__} state '{name}' must be finite float64 of "
                             f"shape {shape}")


def require_triangular(owner, state, name, str side):
    """ValueError unless `state[name]` is a Cholesky factor: `side` ("upper" or "lower")
    triangular with a positive diagonal."""
    value = np.asarray(state[name])
    outside = np.tril(value, -1) if side == "upper" else np.triu(value, 1)
    if np.any(outside != 0) or np.any(np.diag(value) <= 0):
        raise ValueError(f"{type(owner).__name__} state '{name}' must be {side} triangular with "
                         f"a positive diagonal")


cdef class FeatureBank(Component):
    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        pass

    cdef void prepare(self, const double* x, double* work) noexcept nogil:
        pass

    cdef void transform_prepared(self, const double* x, double* work, int k,
                                 double* z) noexcept nogil:
        self.transform(x, k, z)


cdef class ExpertBank(Component):
    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        return 0.0

    cdef double learn(self, int k, const double* x, const double* z, double f, double y,
                      long t, double weight) noexcept nogil:
        return 0.0


cdef class Combiner(Component):
    cdef int select(self, long t, bitgen_t* rng, int* active, double* weight) noexcept nogil:
        return 0

    cdef int select_predict(self, int* active) noexcept nogil:
        return 0

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        return 0.0

    cdef void learn(self, long t, const int* active, int n_active, const double* preds,
                    const double* losses, double y_hat, double y) noexcept nogil:
        pass


cdef class FullInformation(Combiner):
    cdef int select(self, long t, bitgen_t* rng, int* active, double* weight) noexcept nogil:
        cdef int k
        for k in range(self.n_experts):
            active[k] = k
            weight[k] = 1.0
        return self.n_experts

    cdef int select_predict(self, int* active) noexcept nogil:
        cdef int k
        for k in range(self.n_experts):
            active[k] = k
        return self.n_experts


# Names of the compiled codes, for the Python layer (one source of truth: the enums in base.pxd).
LOSSES = {"squared": LOSS_SQUARED, "absolute": LOSS_ABSOLUTE, "logistic": LOSS_LOGISTIC,
          "hinge": LOSS_HINGE}
SCHEDULES = {"constant": SCHEDULE_CONSTANT, "inv_sqrt": SCHEDULE_INV_SQRT}
ADAGRAD = SCHEDULE_ADAGRAD
SELF_CONFIDENT = SCHEDULE_SELF_CONFIDENT
