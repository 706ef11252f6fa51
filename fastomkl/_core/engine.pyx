"""The one compiled engine of every model: features -> experts -> combiner, and the updates.

The single-sample entry points validate their argument here (a NaN, a wrong length or a wrong type
raises ValueError before anything changes); the batch entry points take arrays the Python layer has
already validated and run their loop without the GIL.

Threads.  Every round runs under the engine's lock, so threads may share a model.  A batch call
(``predict_many``, ``predict_learn_many``) holds the lock round by round: between two rounds it
checks whether another call is waiting for the lock and, if one is, lets it run first.  So a
``predict_one`` served while another thread learns a batch waits for at most the round in
progress, and it sees the model as it is between two rounds of that batch (never a torn state);
a batch call is a sequence of rounds that other calls may interleave with, in an order the
scheduler picks.  The check costs one relaxed atomic load per round when nobody waits.

Serving while a batch learns.  A ``predict_one`` that finds the lock taken does not wait for the
model: it reads a snapshot.  The engine keeps two twins (engines of the same layout, built when a
prediction first meets a batch call), and a batch call that a prediction is waiting on copies the
model into the twin not read last between two of its rounds, then at most once per 20 copies'
time (so the copies cost at most about 5 % of learning).  A learning batch call also leaves the
newest twin as the model after its last round (same spacing), so the next call finds a twin that
holds the model as it starts, if nothing has learnt in between.  A prediction reads the twin
published last, under that twin's own lock, if it was published during the batch call in
progress or holds the model as the call found it, and if it is recent: it holds the model at its
round, or the model has learnt for at most max(40 copies' time, 1 ms) since the state it holds;
otherwise it waits for the next round boundary (one round at most), when the call publishes one.
So a prediction made while a batch learns is the model's prediction at a round boundary of that
batch: never a torn state, never older than the call, and at most max(one round, 40 copies'
time, 1 ms) of learning behind its newest round (20 copies' time while predictions keep coming:
the call then publishes every 20 copies' time).  Twins are read
only while a batch call runs its rounds (``running``; each call, even one let in between two
rounds of another, has an epoch of its own): a prediction that meets another holder of the lock
(a single round, a save, a read of the weights) waits for it and reads the model.  A prediction
that finds the lock free reads the model itself, as do single-round calls
(``predict_learn_one``); ``predict_many`` waits its turn as before.  The
twins double the model's memory once a service predicts while it learns.  The copy is a plan of
byte ranges, run without the GIL: every state array of a fixed-size component, and of a growing
one the arrays its predictions read (``Component._prediction_arrays``, the twin given the model's
capacities), planned again whenever the model makes room; a component that offers none is copied
through ``set_state`` with the GIL.  A batch call that has
left its rounds, the lock still held, says it wants the GIL back (``gil_wanted``); a prediction
that meets the call then waits, without the GIL, until the call has it.  Otherwise a serving
thread that keeps the GIL between its predictions would make each batch wait for the
interpreter's switch interval (5 ms) before it can return, many times the batch's own work.  The
same holds for the Python steps around a batch (validating its arrays, whose NumPy calls let the
GIL go): the estimators announce a batch call before those steps (``announce_batch``) and
withdraw it after, and a ``predict_one`` that finds an announced call outside its rounds waits,
without the GIL, until the call runs its rounds (then it reads a snapshot) or has returned, for
100 us at most (then it goes on: the lock is free, and it reads the model).  So a prediction
waits for a call's Python steps, usually tens of microseconds, never more than 100 us, and a
batch waits for a serving thread's turn with the interpreter only in Python steps longer than
that.  Batch calls also count themselves process-wide (announced, in their rounds, waiting for the
GIL after them: ``batch_calls``), and a ``predict_one`` or ``predict_learn_one`` on any other
model lets a call that is outside its rounds go first in the same way (100 us at most): a thread
serving one model back to back would otherwise give a thread that learns another model the
interpreter only at its switch interval, several times per batch (bench/serving_cases.py: 79
batches of 1,000 rows a second before, 822-1,282 after in three runs, 0.75-1.08 of learning
alone).

Growth.  Components whose arrays grow with the stream (kernel expansions, Nystrom dictionaries)
say so (``grows``); before each round the engine asks them whether the next round fits and, when
it does not, makes room with the GIL (``Component.reserve``), then goes on without it.  A batch
call making room counts itself out of its rounds meanwhile, so that predictions let it have the
GIL first, as in its Python steps before and after them: their copies let the GIL go, and a
serving thread that took it then kept it for the switch interval (a NystromAWV growing from 1,000
to 6,000 rows beside a server of another model: 0.59-0.66 of its speed alone before, 0.94-1.16
after, bench/serving_cases.py).
"""
import numpy as np
cimport cython
cimport numpy as cnp
from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_Check
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.pythread cimport (PyThread_allocate_lock, PyThread_free_lock, PyThread_acquire_lock,
                               PyThread_release_lock, PyThread_type_lock, NOWAIT_LOCK, WAIT_LOCK)
from libc.math cimport fabs, isfinite, sqrt
from libc.string cimport memcpy

from fastomkl._core.base cimport Component, FeatureBank, ExpertBank, Combiner, bitgen_t
from fastomkl._core.numeric cimport saturate
from fastomkl._core.arrays import aligned_rows, aligned_zeros
from fastomkl._core.base import Component as _Component
import warnings

from fastomkl._core.inputs import (MAX_ABS_INPUT, NumericalWarning, check_sample,
                                   check_target_value)

cdef extern from *:
    """
    #if defined(_WIN32)
    #include <windows.h>
    #define fastomkl_yield_cpu() SwitchToThread()
    #else
    #include <sched.h>
    #define fastomkl_yield_cpu() sched_yield()
    #endif
    static inline void fastomkl_atomic_add(int *p, int v) { __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST); }
    static inline int fastomkl_atomic_read(int *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline void fastomkl_atomic_store(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    static inline long fastomkl_atomic_read_long(long *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void fastomkl_atomic_store_long(long *p, long v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    #if defined(_WIN32)
    static inline long long fastomkl_now_ns(void) { return (long long)GetTickCount64() * 1000000LL; }
    #else
    #include <time.h>
    static inline long long fastomkl_now_ns(void) {
        struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    }
    #endif
    """
    void fastomkl_yield_cpu() nogil
    void fastomkl_atomic_add(int* p, int v) nogil
    int fastomkl_atomic_read(int* p) nogil
    void fastomkl_atomic_store(int* p, int v) nogil
    long fastomkl_atomic_read_long(long* p) nogil
    void fastomkl_atomic_store_long(long* p, long v) nogil
    long long fastomkl_now_ns() nogil

# How long a batch call lets the calls that wait for the lock go first, at most, between two of its
# rounds (in yields of the CPU): bounded, so a stream of requests cannot starve learning.
cdef enum: WAITER_YIELDS = 256

# How long a predict_one lets an announced batch call's Python steps have the interpreter, at most
# (ns): a step that takes longer then shares it with the serving thread as Python threads do.
cdef enum: ANNOUNCED_WAIT_NS = 100000

# A batch call publishes a snapshot for the predictions waiting on it at most once per this many
# times the last copy took: the copies then cost at most about 1/20 of learning's time.
cdef enum: PUBLISH_SPACING = 20
# A snapshot the model has learnt on from for longer than twice the spacing of publications, and
# than this, is not read (Engine.twin_is_recent): a floor, so that a small model whose copy
# takes a microsecond does not make its predictions wait for a round every 40 us (ns)
cdef long long SNAPSHOT_AGE_FLOOR_NS = 1000000

# The accepted magnitude of a feature value or target (see fastomkl._validation).
cdef double MAX_ABS = MAX_ABS_INPUT

from fastomkl._core.checks import MAX_ROUNDS

# Winsorised online statistics of the targets (every regressor's engine keeps them; a standardising
# engine learns (y - mean) / sd with them).  Once TARGET_WARMUP targets are counted, a target
# further than TARGET_CLIP standard deviations from the mean of those before it is clipped to
# mean +- TARGET_CLIP sd, and the clipped value is what enters the mean and the variance and what
# the model learns, so a spike enters as a target of a few standard deviations and washes out
# instead of holding the statistics (and the model) at its scale for ever.  Measured: on the ten
# shipped regression data sets (115,000 rows in their recorded order) 12 targets lie beyond 8 sd of
# the ones before them (elevators 6, ailerons 3, cpusmall 3; none in 7 of the sets, and at most one
# per set shuffled), and no reproduction clips one; 40 targets of +-1e140 among 1,000 normal ones
# leave every regressor within 10x the normal targets' scale once normal data return
# (tests/test_target_spikes.py), against 30x to 50x with a bound at 10 sd and hundreds at 12 sd,
# where each clipped target, entering at the bound, widens the variance more.  What the bound
# cannot tell: a spike among the first TARGET_WARMUP targets (taken as it is), and a lasting jump
# of the targets by more than TARGET_CLIP sd, which enters clipped until the widened variance
# takes it in.
TARGET_WARMUP = 10
TARGET_CLIP = 8.0
cdef double WARMUP = TARGET_WARMUP
cdef double CLIP = TARGET_CLIP


cdef inline double winsorised_update(double* target, double y, bint clip) noexcept nogil:
    """y, with `clip` clipped to mean +- CLIP sd once WARMUP targets are counted (target =
    [count, mean, variance] of the targets so far, as learnt), then added to those statistics by
    Welford's update of the mean and of the (population) variance itself, which stays below
    (2 * 1e150)^2 for accepted targets where a sum of squares could overflow.  Returns y as
    learnt."""
    cdef double bound, delta
    if clip and target[0] >= WARMUP and target[2] > 0.0:
        bound = CLIP * sqrt(target[2])
        if y > target[1] + bound:
            y = target[1] + bound
        elif y < target[1] - bound:
            y = target[1] - bound
    target[0] += 1.0
    delta = y - target[1]
    target[1] += delta / target[0]
    target[2] += (delta * (y - target[1]) - target[2]) / target[0]
    return y

cnp.import_array()


cdef inline cnp.ndarray _sample(object x, int n_features):
    """x itself when it is a contiguous float64 vector of the right length (no copy, no
    allocation), else the Python layer's validated conversion.  The caller holds the returned
    array while it uses the values."""
    if (cnp.PyArray_Check(x) and cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray>x) == 1
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>x)):
        if cnp.PyArray_DIM(<cnp.ndarray>x, 0) != n_features:
            raise ValueError(f"x has {cnp.PyArray_DIM(<cnp.ndarray>x, 0)} features, but the model "
                             f"is expecting {n_features} features as input")
        return <cnp.ndarray>x
    return check_sample(x, n_features)


# A list or tuple of Python floats and ints up to this long is read straight into a stack buffer:
# the common shape of a request's payload, validated without allocating an array.
cdef enum: STACK_FEATURES = 64


cdef inline bint _fill_plain(object x, int n_features, double* buf) except -1:
    """Copy x into buf when it is a list or tuple of n_features floats (NumPy's float64 scalars
    included: they subclass float) or Python ints; False for anything else (the general path then
    converts, or explains the error)."""
    cdef Py_ssize_t j = 0
    if (type(x) is not list and type(x) is not tuple) or len(x) != n_features:
        return False
    for item in x:
        if PyFloat_Check(item):
            buf[j] = PyFloat_AS_DOUBLE(item)
        elif type(item) is int:
            try:
                buf[j] = float(item)
            except OverflowError:
                return False
        else:
            return False
        j += 1
    return True


cdef inline cnp.ndarray _sample_into(object x, int n_features, double* buf):
    """x's n_features values, checked finite and within MAX_ABS: read into buf (lists and tuples of
    Python numbers, up to STACK_FEATURES; returns None) or held by the validated array it returns."""
    cdef cnp.ndarray arr = None
    cdef const double* p = buf
    cdef int j
    if n_features > STACK_FEATURES or not _fill_plain(x, n_features, buf):
        arr = _sample(x, n_features)
        p = <const double*>cnp.PyArray_DATA(arr)
    for j in range(n_features):
        if not fabs(p[j]) <= MAX_ABS:        # also NaN
            if not isfinite(p[j]):
                raise ValueError(f"x contains NaN or infinity (feature {j} is {p[j]})")
            raise ValueError(f"x contains a value beyond the accepted range |x| <= {MAX_ABS:g} "
                             f"(feature {j} is {p[j]})")
    return arr


cdef inline void _take_twin_lock(PyThread_type_lock lock):
    """Take a twin's lock, waiting without the GIL while a prediction reads the twin or a batch
    publishes into it."""
    if not PyThread_acquire_lock(lock, NOWAIT_LOCK):
        with nogil:
            PyThread_acquire_lock(lock, WAIT_LOCK)


cdef inline void _between_rounds(Engine engine) noexcept nogil:
    """What a batch call does between two of its rounds: let the calls that wait for the lock go
    first, and publish a snapshot for the predictions that read one (two relaxed loads when nobody
    waits)."""
    if fastomkl_atomic_read(&engine.waiting):
        engine.let_waiters_run()
    if fastomkl_atomic_read(&engine.snapshot_wanted):
        engine.serve_snapshot(False)


# Batch calls of any engine of the process that have left their rounds and wait for the GIL, and
# the calls announced and in their rounds: a prediction on another model lets the former have the
# GIL, and the announced calls outside their rounds (more announced than running) run their
# Python steps first (``_let_batches_go``).
cdef int _batches_wanting_gil = 0
cdef int _batches_announced = 0
cdef int _batches_running = 0


def batch_calls():
    """The process's batch calls: (waiting for the GIL after their rounds, announced, in their
    rounds); (0, 0, 0) once every call has returned."""
    return (fastomkl_atomic_read(&_batches_wanting_gil), fastomkl_atomic_read(&_batches_announced),
            fastomkl_atomic_read(&_batches_running))


cdef inline void _leave_rounds(Engine engine) noexcept nogil:
    """A batch call's last step without the GIL: it takes the GIL next (module docstring)."""
    fastomkl_atomic_store(&engine.gil_wanted, 1)
    fastomkl_atomic_add(&_batches_wanting_gil, 1)


cdef inline void _back_with_gil(Engine engine) noexcept:
    """The batch call that left its rounds has the GIL again (once per _leave_rounds)."""
    if engine.gil_wanted:
        fastomkl_atomic_store(&engine.gil_wanted, 0)
        fastomkl_atomic_add(&_batches_wanting_gil, -1)


cdef inline bint _batches_to_let_go(Engine engine) noexcept nogil:
    """Whether a single-round call on `engine` should let a batch call go first: one announced on
    this engine that has not begun its rounds (its Python steps), or one of any engine of the
    process that waits for the GIL after its rounds or is announced outside them (a few relaxed
    loads)."""
    return ((fastomkl_atomic_read(&engine.arriving) and not fastomkl_atomic_read(&engine.running))
            or fastomkl_atomic_read(&_batches_wanting_gil) > 0
            or fastomkl_atomic_read(&_batches_announced) > fastomkl_atomic_read(&_batches_running))


cdef inline void _let_batches_go(Engine engine) noexcept:
    """predict_one or predict_learn_one, with the GIL, before its round: while batch calls are
    outside their rounds (``_batches_to_let_go``), let them have the GIL.  A thread that serves
    back to back keeps the GIL between its calls, so a thread learning would get it only at the
    interpreter's switch interval (5 ms), several times per batch.  Wait, without the GIL, until
    they have run their Python steps or taken the GIL back, ANNOUNCED_WAIT_NS at most (their
    Python steps grow with the batch: encoding 200,000 string labels takes 80 ms; a call whose GIL
    a third thread holds is not this one's to wait for), then go on: a call that has not begun its
    rounds leaves the lock free (module docstring).  A few relaxed loads when none is."""
    cdef long long until
    if not _batches_to_let_go(engine):
        return
    with nogil:
        until = fastomkl_now_ns() + ANNOUNCED_WAIT_NS
        while _batches_to_let_go(engine) and fastomkl_now_ns() < until:
            fastomkl_yield_cpu()


cdef inline void _let_the_batch_return(Engine engine) noexcept nogil:
    """A prediction that met a batch call, without the GIL: if the call waits for the GIL, wait
    until it has it (its rounds are done; it only has to release the lock and return)."""
    while fastomkl_atomic_read(&engine.gil_wanted):
        fastomkl_yield_cpu()


cdef inline double _target(object y) except? -1.0:
    """y as a double: a float (NumPy's float64 scalars, what iterating a target array gives,
    included) or a Python int read directly, anything else (and anything out of range) by the
    Python layer's rule, which accepts or explains."""
    cdef double v
    if PyFloat_Check(y):
        v = PyFloat_AS_DOUBLE(y)
    elif type(y) is int:
        try:
            v = y
        except OverflowError:
            return check_target_value(y)
    else:
        return check_target_value(y)
    if not fabs(v) <= MAX_ABS:
        return check_target_value(y)
    return v


def _warn_rejected(long count):
    warnings.warn(f"{count} update(s) refused: they would have made the model's state non-finite "
                  f"(a step size too large for the data, or extreme values); the model kept its "
                  f"previous state for them (see n_rejected_updates_)", NumericalWarning,
                  stacklevel=3)


def _overrides(Component part, str method):
    """Whether a component's class overrides a Python hook of Component (so the engine calls it)."""
    return getattr(type(part), method) is not getattr(_Component, method)


cdef class Engine:
    """Runs rounds of a model made of a FeatureBank, an ExpertBank and a Combiner."""

    def __init__(self, FeatureBank features, ExpertBank experts, Combiner combiner, bit_generator,
                 bint standardize_target=False, bint winsorize_target=False,
                 bint center_target=False):
        if not (features.n_kernels * experts.per_kernel == experts.n_experts
                == combiner.n_experts):
            raise ValueError(f"features ({features.n_kernels} kernels), experts "
                             f"({experts.n_experts}, {experts.per_kernel} per kernel) and "
                             f"combiner ({combiner.n_experts}) disagree")
        self.features = features
        self.experts = experts
        self.combiner = combiner
        self.bit_generator = bit_generator
        self.round.rng = <bitgen_t*>PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")
        self.t = 0
        self.n_features = features.n_features
        self.standardize_target = standardize_target
        self.center_target = center_target or standardize_target
        self.winsorize_target = winsorize_target or standardize_target
        self.grows = features.grows or experts.grows or combiner.grows
        self.checks_input = any(_overrides(part, "check_input")
                                for part in (features, experts, combiner))
        self.target = np.zeros(3)
        cdef int n = experts.n_experts
        self.active = np.zeros(n, dtype=np.intc)
        self.weight = np.ones(n)
        self.preds = np.zeros(n)
        self.losses = np.zeros(n)
        self.round.preds = &self.preds[0]
        self._fit_buffers()
        self.lock = PyThread_allocate_lock()
        if self.lock == NULL:
            raise MemoryError("could not allocate the engine's lock")
        self.snapshot_age_floor_ns = SNAPSHOT_AGE_FLOOR_NS
        self._forget_twins()

    def keeps_target(self):
        """Whether the engine keeps statistics of its targets (to centre or winsorise them)."""
        return self.center_target or self.winsorize_target

    def winsorize_targets(self):
        """Winsorise the targets from the first round on, in their own units (a regressor's
        engine, set once when it is built; standardising engines always do)."""
        if self.t:
            raise ValueError("an engine winsorises its targets from its first round or never")
        self.winsorize_target = True

    def __dealloc__(self):
        if self.lock != NULL:
            PyThread_free_lock(self.lock)

    def _fit_buffers(self):
        """The per-round feature buffers, for the bank's current n_outputs and n_work.
        Independent experts are finished one at a time and share one feature buffer (stride 0);
        otherwise every active kernel keeps its features until the updates.  Each kernel's
        features start a cache line, as the experts' weights do."""
        features = self.features
        self.z = aligned_rows(1 if self.experts.independent else features.n_kernels,
                              max(features.n_outputs, 1))
        self.z_stride = 0 if self.experts.independent else self.z.shape[1]
        self.work = aligned_zeros(max(features.n_work, 1))

    # -- the lock ---------------------------------------------------------------------------------
    cdef int acquire(self) except -1:
        """Take the lock; when another call has it, wait without the GIL (it may need the GIL),
        counted in `waiting` so that a batch call in progress lets this call in at its next
        round."""
        if not PyThread_acquire_lock(self.lock, NOWAIT_LOCK):
            fastomkl_atomic_add(&self.waiting, 1)
            with nogil:
                PyThread_acquire_lock(self.lock, WAIT_LOCK)
            fastomkl_atomic_add(&self.waiting, -1)
        return 0

    cdef void release(self) noexcept:
        PyThread_release_lock(self.lock)

    @cython.final
    cdef void let_waiters_run(self) noexcept nogil:
        """Between two rounds of a batch call: release the lock while calls are waiting for it (a
        bounded while), then take it back."""
        cdef int spins = 0
        PyThread_release_lock(self.lock)
        while fastomkl_atomic_read(&self.waiting) > 0 and spins < WAITER_YIELDS:
            fastomkl_yield_cpu()
            spins += 1
        PyThread_acquire_lock(self.lock, WAIT_LOCK)

    # -- growth -----------------------------------------------------------------------------------
    @cython.final
    cdef bint needs_room(self) noexcept nogil:
        return (self.features.needs_room() or self.experts.needs_room()
                or self.combiner.needs_room())

    cdef int make_room(self) except -1:
        """Let the growing components reserve room for the next round (with the GIL), and widen
        the feature buffers if the bank's representation grew."""
        cdef Component part
        for part in (self.features, self.experts, self.combiner):
            if part.needs_room():
                self.outdate_twins()            # the copy's sources move
                part.reserve()
                self.replan_twins()
                if part.needs_room():
                    raise ValueError(f"{type(part).__name__} has no room for another round "
                                     f"(its size limit was reached by learning in another "
                                     f"thread since this call was admitted)")
        if (self.z.shape[1] < self.features.n_outputs
                or self.work.shape[0] < self.features.n_work):
            self._fit_buffers()
        return 0

    def _admit(self, long n_more):
        """Raise ValueError if n_more further rounds would pass a component's size limit."""
        self.features.admit(n_more)
        self.experts.admit(n_more)
        self.combiner.admit(n_more)

    def _check_input(self, X):
        """Raise ValueError for rows of X (2-D float64) a component cannot take."""
        self.features.check_input(X)
        self.experts.check_input(X)
        self.combiner.check_input(X)

    # -- a round ----------------------------------------------------------------------------------
    @cython.final
    cdef double predict_ptr(self, const double* x) noexcept nogil:
        cdef int* active = &self.active[0]
        cdef int n = self.combiner.select_predict(active)
        cdef int j, k, kernel, last = -1
        cdef int per_kernel = self.experts.per_kernel
        cdef double* z
        self.features.prepare(x, &self.work[0])
        self.experts.prepare(x)
        for j in range(n):
            k = active[j]
            kernel = k if per_kernel == 1 else k // per_kernel
            z = &self.z[0, 0] + kernel * self.z_stride
            if kernel != last:      # the members of one kernel share its features
                self.features.transform_prepared(x, &self.work[0], kernel, z)
                last = kernel
            self.preds[k] = self.experts.predict(k, x, z)
        if self.center_target:
            return saturate(self.target[1] + self.target_scale()
                            * self.combiner.combine(active, n, &self.preds[0]))
        return self.combiner.combine(active, n, &self.preds[0])

    @cython.final
    cdef double target_scale(self) noexcept nogil:
        """The standard deviation of the targets seen so far (1 before it is defined, and for
        an engine that only centres)."""
        if self.standardize_target and self.target[0] >= 2.0 and self.target[2] > 0.0:
            return sqrt(self.target[2])
        return 1.0

    @cython.final
    cdef double step_ptr(self, const double* x, double y) noexcept nogil:
        cdef int* active = &self.active[0]
        cdef double* preds = &self.preds[0]
        cdef double* losses = &self.losses[0]
        cdef Round* ctx = &self.round
        cdef int n, j, k, kernel, last = -1
        cdef int per_kernel = self.experts.per_kernel
        cdef double y_hat, center = 0.0, scale = 1.0
        cdef double* z
        cdef bint finish_each = self.experts.independent
        cdef bint whole_models = self.experts.whole_models
        ctx.t = self.t + 1
        n = self.combiner.select(ctx, active, &self.weight[0])
        if self.center_target:
            # Predict in the units of the targets seen before y; learn the (winsorised) y in
            # those of the targets with it (winsorised_update), so the first round learns
            # nothing but the mean.
            center, scale = self.target[1], self.target_scale()
            y = winsorised_update(&self.target[0], y, self.winsorize_target)
            y = (y - self.target[1]) / self.target_scale()
        elif self.winsorize_target:
            y = winsorised_update(&self.target[0], y, True)     # learnt in the units of y
        ctx.y = y
        self.features.prepare(x, &self.work[0])
        self.experts.prepare(x)
        for j in range(n):
            k = active[j]
            kernel = k if per_kernel == 1 else k // per_kernel
            z = &self.z[0, 0] + kernel * self.z_stride
            if kernel != last:      # the members of one kernel share its features
                self.features.transform_prepared(x, &self.work[0], kernel, z)
                last = kernel
            if whole_models:          # a member's own step predicts and learns
                ctx.weight = self.weight[j]
                preds[k] = self.experts.predict_learn(k, x, z, ctx, &losses[k])
                continue
            preds[k] = self.experts.predict(k, x, z)
            if finish_each:           # the combination below reads only the stored predictions
                ctx.weight = self.weight[j]
                losses[k] = self.experts.learn(k, x, z, preds[k], ctx)
        y_hat = self.combiner.combine(active, n, preds)
        ctx.y_hat = y_hat
        if not finish_each:
            for j in range(n):
                k = active[j]
                z = &self.z[0, 0] + (k // per_kernel) * self.z_stride
                ctx.weight = self.weight[j]
                losses[k] = self.experts.learn(k, x, z, preds[k], ctx)
        if self.center_target:
            y_hat = saturate(center + scale * y_hat)  # in the units of y
            ctx.y_hat = (y_hat - self.target[1]) / self.target_scale()
        self.combiner.learn(ctx, active, n, preds, losses)
        if self.features.learns:
            self.features.learn(x, &self.work[0], ctx)
        self.t = ctx.t
        return y_hat

    # -- single samples (validated here) ---------------------------------------------------------
    def predict_one(self, x):
        cdef double buf[STACK_FEATURES]
        cdef cnp.ndarray sample = _sample_into(x, self.n_features, buf)
        cdef const double* p = (&buf[0] if sample is None
                                else <const double*>cnp.PyArray_DATA(sample))
        cdef double y_hat
        if self.checks_input:
            self._check_input(np.array(<double[:self.n_features]>p)[None, :])
        _let_batches_go(self)
        if not PyThread_acquire_lock(self.lock, NOWAIT_LOCK):
            return self.predict_while_busy(p)
        y_hat = self.predict_ptr(p)
        self.release()
        return y_hat

    def predict_learn_one(self, x, y):
        cdef double buf[STACK_FEATURES]
        cdef cnp.ndarray sample = _sample_into(x, self.n_features, buf)
        cdef const double* p = (&buf[0] if sample is None
                                else <const double*>cnp.PyArray_DATA(sample))
        cdef double target = _target(y)
        cdef double y_hat
        cdef long rejected = self.experts.n_rejected + self.combiner.n_rejected
        if self.checks_input:
            self._check_input(np.array(<double[:self.n_features]>p)[None, :])
        _let_batches_go(self)
        self.acquire()
        if self.grows:
            try:
                self._admit(1)
                self.make_room()
            except BaseException:
                self.release()
                raise
        y_hat = self.step_ptr(p, target)
        self.release()
        if self.experts.n_rejected + self.combiner.n_rejected != rejected:
            _warn_rejected(self.experts.n_rejected + self.combiner.n_rejected - rejected)
        return y_hat

    # -- streams (validated by the caller) -------------------------------------------------------
    def predict_many(self, const double[:, ::1] X, double[::1] out):
        cdef Py_ssize_t i
        if self.checks_input:
            self._check_input(np.asarray(X))
        self.acquire()
        self.begin_batch()
        with nogil:
            for i in range(X.shape[0]):
                out[i] = self.predict_ptr(&X[i, 0])
                _between_rounds(self)
            _leave_rounds(self)
        self.end_batch()
        self.release()

    def predict_outputs_many(self, const double[:, ::1] X, double[:, ::1] out):
        """Every expert's prediction for each row of X, out (n, n_experts) (the combination's
        inputs: a class's score in a multiclass model, where the combination is their best)."""
        cdef Py_ssize_t i
        cdef int k
        if self.checks_input:
            self._check_input(np.asarray(X))
        self.acquire()
        self.begin_batch()
        with nogil:
            for i in range(X.shape[0]):
                self.predict_ptr(&X[i, 0])
                for k in range(self.experts.n_experts):
                    out[i, k] = self.preds[k]
                _between_rounds(self)
            _leave_rounds(self)
        self.end_batch()
        self.release()

    def predict_learn_many(self, const double[:, ::1] X, const double[::1] y, double[::1] out):
        cdef Py_ssize_t i = 0, n = X.shape[0]
        cdef long rejected = self.experts.n_rejected + self.combiner.n_rejected
        if self.checks_input:
            self._check_input(np.asarray(X))
        self.acquire()
        self.begin_batch()
        try:
            if self.grows:
                self._admit(n)
            while i < n:
                if self.grows:
                    # Python steps amid the rounds (reallocations whose copies let the GIL go):
                    # counted out of its rounds meanwhile, so that predictions on any model let
                    # the call have the GIL first, as in its steps before and after them
                    fastomkl_atomic_add(&_batches_running, -1)
                    try:
                        self.make_room()
                    finally:
                        fastomkl_atomic_add(&_batches_running, 1)
                with nogil:
                    while i < n and not (self.grows and self.needs_room()):
                        out[i] = self.step_ptr(&X[i, 0], y[i])
                        i += 1
                        _between_rounds(self)
                    if i == n:
                        self.carry_snapshot()
                    _leave_rounds(self)
                _back_with_gil(self)
        finally:
            self.end_batch()
            self.release()
        if self.experts.n_rejected + self.combiner.n_rejected != rejected:
            _warn_rejected(self.experts.n_rejected + self.combiner.n_rejected - rejected)

    # -- snapshots for predictions made while a batch learns (module docstring) ---------------------
    def announce_batch(self):
        """A batch call's Python steps begin (the estimator validating its arrays): until
        ``withdraw_batch``, a predict_one that finds no batch running waits for it without the
        GIL (module docstring).  Every announcement must be withdrawn."""
        fastomkl_atomic_add(&self.arriving, 1)
        fastomkl_atomic_add(&_batches_announced, 1)

    def withdraw_batch(self):
        """The announced batch call has returned (or failed)."""
        fastomkl_atomic_add(&self.arriving, -1)
        fastomkl_atomic_add(&_batches_announced, -1)

    cdef int begin_batch(self) except -1:
        """A batch call starts: its predictions read the twins published during it, and the newest
        twin already if it holds the model as it is now (published at the round the model is at,
        and not out of date: learning changes the round, a new state forgets the twins), as the
        call before leaves it (``carry_snapshot``)."""
        cdef int i = self.newest
        if self.twin_holds_the_model():
            _take_twin_lock(self.twin_lock[i])
            self.twin_epoch[i][0] = self.epoch + 1
            PyThread_release_lock(self.twin_lock[i])
        # A fresh epoch for every call, even one let in between two rounds of another (which has
        # a fresh one again after it): a twin is read only in the epoch it was published in.
        fastomkl_atomic_store_long(&self.epoch, self.epoch + 1)
        fastomkl_atomic_add(&self.running, 1)
        fastomkl_atomic_add(&_batches_running, 1)
        self.batch_started_at = fastomkl_now_ns()
        return 0

    cdef int end_batch(self) except -1:
        """The call's twins go out of date with its last round: predictions read the model again
        (or, if this call ran between two rounds of another, the snapshots that call publishes
        next)."""
        _back_with_gil(self)
        fastomkl_atomic_store_long(&self.epoch, self.epoch + 1)
        fastomkl_atomic_add(&self.running, -1)
        fastomkl_atomic_add(&_batches_running, -1)
        fastomkl_atomic_store(&self.snapshot_wanted, 0)
        return 0

    cdef double predict_while_busy(self, const double* x) except? -1.0:
        """predict_one when another call holds the lock: from the twin published last if it is of
        the batch call in progress, else from the model once the lock is free, asking the call
        meanwhile to publish (see the module's docstring)."""
        cdef Engine twin
        cdef bint free = False
        cdef double y_hat
        cdef int i
        # with no batch call in its rounds, the holder is a single round (learn_one), a save or
        # a read of the weights: wait for the lock (a batch call starting meanwhile lets this
        # call in at its next round, as any waiting call)
        while self.twin_factory is not None and fastomkl_atomic_read(&self.running):
            if not fastomkl_atomic_read(&self.snapshot_wanted):     # a store every call would
                fastomkl_atomic_store(&self.snapshot_wanted, 1)     # take the line from the batch
            twins = self.twins
            if twins is not None:
                i = fastomkl_atomic_read(&self.newest)
                twin = twins[i]
                _take_twin_lock(twin.lock)
                # only a twin of the batch call in its rounds now (its epoch): between calls the
                # lock's holder (learn_one, save, a weights_ read) may have changed the model since;
                # and a recent one (else the call publishes one at its next round boundary)
                if (fastomkl_atomic_read(&self.running)
                        and twin.epoch == fastomkl_atomic_read_long(&self.epoch)
                        and self.twin_is_recent(i)):
                    with nogil:                 # the batch's Python steps may run meanwhile
                        y_hat = twin.predict_ptr(x)
                        PyThread_release_lock(twin.lock)    # free for the next publication
                        _let_the_batch_return(self)
                    self.n_snapshot_reads += 1      # every reader holds the GIL here
                    return y_hat
                PyThread_release_lock(twin.lock)
            with nogil:
                free = PyThread_acquire_lock(self.lock, NOWAIT_LOCK)
                if not free:
                    fastomkl_yield_cpu()
                    _let_the_batch_return(self)
            if free:
                break
        if not free:
            self.acquire()
        y_hat = self.predict_ptr(x)
        self.release()
        return y_hat

    @cython.final
    cdef void serve_snapshot(self, bint now) noexcept nogil:
        """Between two rounds of a batch call, a prediction waiting: publish the model into a twin
        unless this call published one less than PUBLISH_SPACING copies' time ago (or `now`).
        The clock is read only from round `clock_due_t` on: a read costs 40 ns, a tenth of a
        one-kernel Raker's round, so after a look that finds the spacing not yet over, the next
        comes after half the rounds its rest would take at the pace since the last publication."""
        cdef long long start, waited, spacing
        cdef long rounds
        cdef int target = 1 - self.newest
        if self.snapshots_off:
            return
        if self.twin_lock[0] == NULL:
            with gil:
                self.make_twins()
            return
        if not now and self.twin_epoch[self.newest][0] == self.epoch:
            if self.t < self.clock_due_t:
                return
            start = fastomkl_now_ns()
            waited = start - self.published_at
            spacing = PUBLISH_SPACING * self.publish_ns
            if waited < spacing:
                rounds = self.t - self.published_t
                self.clock_due_t = self.t + 1 + <long>(
                    (spacing - waited) / (2.0 * max(waited, 1)) * max(rounds, 0))
                return
        else:
            start = fastomkl_now_ns()
        if not PyThread_acquire_lock(self.twin_lock[target], NOWAIT_LOCK):
            target = self.newest             # the other twin is being read: this one is not
            if not PyThread_acquire_lock(self.twin_lock[target], NOWAIT_LOCK):
                return
        if not self.publish(target):
            PyThread_release_lock(self.twin_lock[target])
            return
        PyThread_release_lock(self.twin_lock[target])
        fastomkl_atomic_store(&self.newest, target)
        self.published_at = fastomkl_now_ns()
        self.clock_due_t = self.t + 1         # the next round measures the pace
        # a copy the scheduler interrupted would space the next ones by 20 times the pause: the
        # estimate at most doubles per copy (a model that grew reaches its new cost in a few)
        self.publish_ns = min(self.published_at - start, 2 * self.publish_ns + 1000)

    cdef bint twin_holds_the_model(self) noexcept nogil:
        """Whether the newest twin holds the model as it is now: published at the round the model
        is at and not out of date since (learning moves the round; setting a state forgets the
        twins; moving the arrays marks them out of date)."""
        return (self.twin_lock[0] != NULL and self.published_t == self.t
                and self.twin_epoch[self.newest][0] >= 0)

    cdef bint twin_is_recent(self, int i) noexcept nogil:
        """Whether a prediction may read twin i (its lock held: the stamps are those of the state
        it holds, whatever the call publishes into the other meanwhile): it holds the model at
        its round (no round has ended since it was written), or the model has learnt for at most
        max(2 PUBLISH_SPACING copies' time, snapshot_age_floor_ns) since the state it holds:
        since it was written, or, for the twin the call found (the model as the call began),
        since the call began.  An older one (the call's first twin once the call has learnt for a
        while) would answer as the model was that long ago: the prediction waits for the next
        round boundary instead, where the call publishes (the spacing is over).  A read of the
        clock (40 ns), on predictions that meet a batch."""
        cdef long long since = max(self.twin_time[i][0], self.batch_started_at)
        return (self.twin_round[i][0] == self.t or fastomkl_now_ns() - since
                <= max(2 * PUBLISH_SPACING * self.publish_ns, self.snapshot_age_floor_ns))

    cdef void carry_snapshot(self) noexcept nogil:
        """A learning batch call's last round is done: if predictions read snapshots (the twins
        exist), publish the model as the call leaves it, unless the newest twin already holds it.
        The next batch call's first predictions then read that twin at once (``begin_batch``),
        where they would wait for that call's first publication: a round and a whole copy (VAW2
        with 76 kernels: 6 MB, a millisecond).  Only if the call's rounds took PUBLISH_SPACING
        copies' time, or the last publication was that long ago: the copy costs at most 1/20 of
        learning, as between rounds (a publication every round would, for a serving thread that
        asks all the time, always be that recent)."""
        cdef long long now, spacing = PUBLISH_SPACING * self.publish_ns
        if self.snapshots_off or self.twin_lock[0] == NULL or self.twin_holds_the_model():
            return
        now = fastomkl_now_ns()
        if now - self.batch_started_at >= spacing or now - self.published_at >= spacing:
            self.serve_snapshot(True)

    cdef bint publish(self, int target) noexcept nogil:
        """Copy the model into twin `target` (its lock held): the copy plan's bytes without the
        GIL, or, for a model whose state is not all in fixed arrays, the whole state through
        set_state with it.  False if set_state refused the state: the twin is then out of date
        (epoch -1), so that nothing reads what it holds."""
        cdef Py_ssize_t i
        cdef Py_ssize_t* row = self.plan_rows[target]
        if self.plan_length[target] >= 0:
            for i in range(self.plan_length[target]):
                memcpy(<void*>row[3 * i], <const void*>row[3 * i + 1], <size_t>row[3 * i + 2])
        else:
            with gil:
                if not self._copy_state_into(target):
                    self.twin_epoch[target][0] = -1
                    return False
        self.twin_epoch[target][0] = self.epoch
        self.twin_round[target][0] = self.published_t = self.t
        self.twin_time[target][0] = fastomkl_now_ns()
        return True

    def _copy_state_into(self, int target):
        """The whole state into twin `target` through set_state; False (and snapshots off from
        then on, with a warning) for a state set_state refuses (one learning left non-finite)."""
        twin = self.twins[target]
        try:
            twin._write_state(*twin._checked_parts(self._state()))
        except ValueError as exc:
            self._stop_snapshots(exc)
            return False
        return True

    def _stop_snapshots(self, reason):
        self.twin_factory = None
        self.snapshots_off = True
        warnings.warn(f"predictions made while a batch learns wait for its rounds from now on: "
                      f"the model's snapshots cannot be made ({reason})", RuntimeWarning)

    cdef int make_twins(self) except -1:
        """Build the two twins (the lock held) and publish the model into both; when that fails,
        warn and serve from the model itself from then on."""
        cdef Engine twin
        cdef int i
        cdef long long start = fastomkl_now_ns()
        try:
            twins = [self.twin_factory(), self.twin_factory()]
            state = self._state()
            for twin in twins:
                twin._write_state(*twin._checked_parts(state))
            plans = [self._copy_plan(twin) for twin in twins]
        except Exception as exc:                # noqa: BLE001 (a model that cannot be twinned)
            self._stop_snapshots(exc)
            return 0
        self.twins = twins
        for i in range(2):
            twin = twins[i]
            twin.epoch = self.epoch
            self.twin_lock[i] = twin.lock
            self.twin_epoch[i] = &twin.epoch
            self.twin_round[i] = &twin.published_t
            self.twin_time[i] = &twin.published_at
            twin.published_t, twin.published_at = self.t, start     # both hold the model now
        self.adopt_plans(plans)
        self.newest = 0
        self.published_t = self.t
        if self.plan_length[0] >= 0:    # the cost of one copy, which spaces the publications
            start = fastomkl_now_ns()
            self.publish(0)
            self.published_at = fastomkl_now_ns()
            self.publish_ns = self.published_at - start
        else:
            self.published_at = fastomkl_now_ns()
            self.publish_ns = (self.published_at - start) // 2
        return 0

    def _copy_plan(self, Engine twin):
        """The (to, from, bytes) rows that bring `twin` up to date, or None when a part keeps
        state outside fixed arrays (it grows, or defines its own get_state) and offers no arrays
        its predictions read (Component._prediction_arrays)."""
        pairs = [(self.experts, twin.experts), (self.combiner, twin.combiner)]
        if self.features.learns or self.features.grows:
            pairs.append((self.features, twin.features))
        rows = []
        for mine, its in pairs:
            if (mine.grows or type(mine).get_state is not _Component.get_state
                    or type(mine).set_state is not _Component.set_state):
                arrays = mine._prediction_arrays(its)
                if arrays is None:
                    return None
                sources, theirs = arrays
            else:
                sources, theirs = mine._state_arrays(), its._state_arrays()
            for name, source in sources.items():
                rows += _copy_rows(theirs[name], source)
        if self.keeps_target():
            rows += _copy_rows(twin.target, self.target)
        twin._fit_buffers()             # a growing bank given the model's capacity is wider
        return np.array(rows, dtype=np.intp).reshape(-1, 3)

    cdef int drop_twins(self) except -1:
        """Forget the twins (the lock held; before the model's state is replaced)."""
        self.outdate_twins()
        self._forget_twins()
        return 0

    cdef int outdate_twins(self) except -1:
        """Mark every twin out of date under its lock (the lock held; before the model's arrays
        move), so a prediction reading one finishes first and none reads one until the next
        publication; the copy plans go with them."""
        cdef Engine twin
        cdef int i
        if self.twins is None:
            return 0
        for i in range(2):
            twin = self.twins[i]
            _take_twin_lock(twin.lock)
            twin.epoch = -1
            self.plan_length[i] = -1
            PyThread_release_lock(twin.lock)
        self.plans = None
        return 0

    cdef int replan_twins(self) except -1:
        """After the model's arrays moved (outdate_twins, then a component's reserve): the copy
        plans again, for the new arrays (a growing component gives its twin its new capacities),
        so that the twins serve on without being built again."""
        cdef Engine twin
        cdef int i
        if self.twins is None:
            return 0
        try:
            plans = [self._copy_plan(twin) for twin in self.twins]
        except Exception as exc:                # noqa: BLE001 (as make_twins)
            self.drop_twins()
            self._stop_snapshots(exc)
            return 0
        self.adopt_plans(plans)
        return 0

    cdef void adopt_plans(self, list plans):
        """Publish by `plans` from now on (one per twin; None: through set_state)."""
        cdef int i
        self.plans = plans
        for i in range(2):
            if plans[i] is None:
                self.plan_length[i] = -1
            else:
                self.plan_rows[i] = <Py_ssize_t*>cnp.PyArray_DATA(plans[i])
                self.plan_length[i] = plans[i].shape[0]

    def _forget_twins(self):
        self.twins = self.plans = None
        for i in range(2):
            self.twin_lock[i] = NULL
            self.plan_length[i] = -1

    def prepare_snapshots(self):
        """Build the twins now (the lock held, with the GIL), if the engine serves from snapshots
        and has none: what the first prediction that meets a batch would otherwise wait for."""
        self.acquire()
        try:
            if self.twin_factory is not None and self.twins is None:
                self.make_twins()
        finally:
            self.release()

    @property
    def has_snapshots(self):
        """Whether the twins exist (a prediction met a batch call, or prepare_snapshots ran)."""
        return self.twins is not None

    def _publish_snapshot(self):
        """Publish the model into a twin now, as a batch call does for a waiting prediction (for
        tests: the twins' predictions must be the model's)."""
        self.acquire()
        try:
            self.serve_snapshot(True)
        finally:
            self.release()

    def _twin_holds_the_model(self):
        """Whether a batch call starting now would serve its first predictions from the newest
        twin at once (for tests)."""
        return self.twin_holds_the_model()

    def _predict_snapshot(self, x):
        """The newest twin's prediction for x (for tests)."""
        cdef Engine twin = self.twins[self.newest]
        cdef double[::1] row = np.ascontiguousarray(x, dtype=np.float64)
        return twin.predict_ptr(&row[0])

    # -- state -----------------------------------------------------------------------------------
    def get_state(self):
        self.acquire()
        try:
            return self._state()
        finally:
            self.release()

    def _state(self):
        """get_state's arrays (the caller holds the lock)."""
        state = {"engine.t": np.array(self.t, dtype=np.int64)}
        if self.keeps_target():
            state["engine.target"] = np.array(self.target)
        for prefix, part in self._parts():
            for name, value in part.get_state().items():
                state[prefix + name] = value
        return state

    def locked(self, read):
        """read() with the engine's lock held: for views that compute into a component's scratch
        (a meta-learner's weights), which a round in another thread also writes."""
        self.acquire()
        try:
            return read()
        finally:
            self.release()

    def _parts(self):
        return (("features.", self.features), ("experts.", self.experts),
                ("combiner.", self.combiner))

    def set_state(self, state):
        parts, rounds, target = self._checked_parts(state)
        for prefix, part in self._parts():          # every part checked before any is written
            part.check_state(parts[prefix])
        self.acquire()
        try:
            self.drop_twins()
            self._write_state(parts, rounds, target)
        finally:
            self.release()

    def _checked_parts(self, state):
        """(each part's entries by prefix, the round count, the target statistics or None) of a
        state, the engine's own entries validated."""
        parts = {"features.": {}, "experts.": {}, "combiner.": {}}
        target = self._checked_target(state)
        for name, value in state.items():
            if name in ("engine.t", "engine.target"):
                continue
            prefix = name[:name.index(".") + 1] if "." in name else ""
            if prefix not in parts:
                raise ValueError(f"unknown state entry '{name}'")
            parts[prefix][name[len(prefix):]] = value
        if "engine.t" not in state:
            raise ValueError("state has no 'engine.t'")
        rounds = np.asarray(state["engine.t"])
        # Rounds are counted exactly in a double only up to 2**53; a count past what any stream
        # can reach would only make the doubling horizons and step schedules spin.
        if (rounds.shape != () or rounds.dtype.kind not in "iu"
                or not 0 <= int(rounds) <= MAX_ROUNDS):
            raise ValueError(f"state 'engine.t' must be a whole count of rounds in [0, 2**53], "
                             f"got {rounds!r}")
        return parts, int(rounds), target

    def _write_state(self, parts, rounds, target):
        """Write checked parts (the caller holds the lock)."""
        for prefix, part in self._parts():
            part.set_state(parts[prefix])
        self._fit_buffers()                      # a grown representation's width
        self.t = rounds
        if target is not None:
            np.asarray(self.target)[:] = target

    def _checked_target(self, state):
        """The saved target statistics (None unless the engine keeps them), validated.  An engine
        that only winsorises takes a state without them (files written before it did) as no
        target seen: the warm-up starts again."""
        if not self.keeps_target():
            if "engine.target" in state:
                raise ValueError("unknown state entry 'engine.target'")
            return None
        if "engine.target" not in state:
            if not self.center_target:
                return np.zeros(3)
            raise ValueError("state has no 'engine.target'")
        target = np.asarray(state["engine.target"])
        if (target.shape != (3,) or target.dtype != np.float64 or not np.isfinite(target).all()
                or target[0] < 0 or target[0] != np.floor(target[0])
                or not abs(target[1]) <= MAX_ABS_INPUT
                or not 0.0 <= target[2] <= 4.0 * MAX_ABS_INPUT ** 2):
            raise ValueError("state 'engine.target' must be [count, mean, variance] of accepted "
                             "targets: a whole count >= 0, |mean| <= 1e150, variance in "
                             "[0, 4e300]")
        return target

    @property
    def n_rejected_updates(self):
        """Updates refused so far because they would have made the state non-finite."""
        return self.experts.n_rejected + self.combiner.n_rejected

    @property
    def snapshot_copy_bytes(self):
        """Bytes one snapshot publication copies by its copy plan; 0 before the twins are built
        and for models whose twins are brought up to date through set_state."""
        if self.plans is None or self.plans[self.newest] is None:
            return 0
        return int(self.plans[self.newest][:, 2].sum())

    @property
    def scratch_bytes(self):
        """Bytes of per-round scratch (fixed at construction, independent of the stream)."""
        n = self.active.shape[0]
        return (n * sizeof(int) + 3 * n * sizeof(double)
                + self.z.shape[0] * self.z.shape[1] * sizeof(double)
                + self.work.shape[0] * sizeof(double))

    @property
    def rng_state(self):
        return self.bit_generator.state

    @rng_state.setter
    def rng_state(self, value):
        self.bit_generator.state = value


def _copy_rows(destination, source):
    """The rows of a copy plan for two live arrays of one shape and type: (to, from, bytes), one
    for a contiguous array, one per row for a matrix whose rows are padded (arrays.aligned_rows)."""
    to, frm = np.asarray(destination), np.asarray(source)
    if to.shape != frm.shape or to.dtype != frm.dtype or not to.flags.writeable:
        raise ValueError(f"a state array cannot be copied in place ({frm.dtype} {frm.shape} "
                         f"into {to.dtype} {to.shape})")
    if to.flags.c_contiguous and frm.flags.c_contiguous:
        return [(to.ctypes.data, frm.ctypes.data, frm.nbytes)]
    if to.ndim == 2 and to.strides[1] == frm.strides[1] == to.itemsize:
        return [(to.ctypes.data + i * to.strides[0], frm.ctypes.data + i * frm.strides[0],
                 to.shape[1] * to.itemsize) for i in range(to.shape[0])]
    raise ValueError(f"a state array of strides {frm.strides} cannot be copied in place")
