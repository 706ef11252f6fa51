"""Base classes of the compiled components (the contract is in base.pxd) and their state handling."""
import warnings

import numpy as np

from fastomkl._core.inputs import BudgetWarning


cdef class Component:
    """A compiled part of a model whose mutable state lives in NumPy arrays."""

    # -- growth (components whose arrays grow with the stream override these) -----------------
    cdef bint needs_room(self) noexcept nogil:
        return False

    def reserve(self):
        """Make room for one more round (called with the GIL when needs_room() says so)."""

    def admit(self, long n_more):
        """Raise ValueError if n_more further rounds would pass a size limit (nothing learnt)."""

    def check_input(self, X):
        """Raise ValueError for rows of X (validated, 2-D float64) this component cannot take."""

    # -- state ----------------------------------------------------------------------------------
    def _state_arrays(self):
        """Name -> live array of everything a round may change (overridden by subclasses)."""
        return {}

    def _stored_arrays(self):
        """Name -> what get_state copies of each state array: the live arrays (overridden by the
        components allocated at a budget's capacity, which store the rows in use only:
        arrays.rows_in_use, and put back by arrays.at_capacity)."""
        return self._state_arrays()

    def get_state(self):
        state = {name: np.array(value, copy=True) for name, value in self._stored_arrays().items()}
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

    def _prediction_arrays(self, twin):
        """For a component whose state is not all in fixed arrays (it grows, or has its own
        get_state): (name -> live array of this component, the same of `twin`) for everything its
        predict reads, after giving `twin` (a component of the same layout that holds this one's
        state) this one's capacities; or None (the default) when it offers none.  Copying the first
        into the second brings `twin`'s predictions up to date until this component next reserves
        room (a snapshot's copy plan, engine module docstring); the rest of `twin`'s state is left
        behind, so such a twin only predicts."""
        return None


cdef class FeatureBank(Component):
    cdef void transform(self, const double* x, int k, double* z) noexcept nogil:
        pass

    cdef void prepare(self, const double* x, double* work) noexcept nogil:
        pass

    cdef void transform_prepared(self, const double* x, double* work, int k,
                                 double* z) noexcept nogil:
        self.transform(x, k, z)

    cdef void learn(self, const double* x, double* work, Round* ctx) noexcept nogil:
        pass


cdef class ExpertBank(Component):
    def __cinit__(self, *args, **kwargs):
        self.per_kernel = 1

    def budget_warning(self, str message):
        """The bank's one ``BudgetWarning`` (its admit() checks ``warned`` first, so that a full
        bank builds no message at each call)."""
        self.warned = True
        warnings.warn(message, BudgetWarning, stacklevel=3)

    cdef void prepare(self, const double* x) noexcept nogil:
        pass

    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        return 0.0

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        return 0.0

    cdef double predict_learn(self, int k, const double* x, const double* z, Round* ctx,
                              double* loss) noexcept nogil:
        cdef double f = self.predict(k, x, z)
        loss[0] = self.learn(k, x, z, f, ctx)
        return f


cdef class DictionaryBank(ExpertBank):
    """Experts on a dictionary that grows until its budget freezes it (NystromAWV's, Pros-N-KONS'):
    ``budget_reached`` says whether it is frozen, and ``admit`` gives a ``BudgetWarning`` (the
    subclass's ``frozen_message()``) once, at the first call after it froze: a round adds a
    centre by a random draw, so no call can tell beforehand that it will fill the budget."""

    cdef bint frozen(self) noexcept nogil:
        return False

    def frozen_message(self):
        return "the dictionary is frozen"

    @property
    def budget_reached(self):
        """True once the dictionary is frozen."""
        return bool(self.frozen())

    def admit(self, long n_more):
        if not self.warned and self.frozen():
            self.budget_warning(self.frozen_message())


cdef class Combiner(Component):
    cdef int select(self, Round* ctx, int* active, double* weight) noexcept nogil:
        return 0

    cdef int select_predict(self, int* active) noexcept nogil:
        return 0

    cdef double combine(self, const int* active, int n_active, const double* preds) noexcept nogil:
        return 0.0

    cdef void learn(self, Round* ctx, const int* active, int n_active, const double* preds,
                    const double* losses) noexcept nogil:
        pass


cdef class FullInformation(Combiner):
    cdef int select(self, Round* ctx, int* active, double* weight) noexcept nogil:
        return run_first(self.n_experts, active, weight)

    cdef int select_predict(self, int* active) noexcept nogil:
        return run_first(self.n_experts, active, NULL)
