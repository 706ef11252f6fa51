cimport cython
from cpython.pythread cimport PyThread_type_lock
from fastomkl._core.base cimport FeatureBank, ExpertBank, Combiner, Round, bitgen_t

cdef class Engine:
    # A thread serving this model writes the object's header (its reference count) at every
    # call, while a batch in another thread reads the engine's fields at every round: the fields
    # start a cache line past the header, and the methods of a round are final (called without
    # reading the vtable pointer there), so that the rounds do not wait for that line to come
    # back from the other core (a one-kernel Raker learning beside a server of the same model:
    # 190 -> 90 us more per batch of 1,000 rows than beside an idle one).
    cdef char _header_pad[64]
    cdef readonly FeatureBank features
    cdef readonly ExpertBank experts
    cdef readonly Combiner combiner
    cdef readonly object bit_generator   # owns the state `round.rng` points into
    cdef Round round                     # the context of the round in progress
    cdef public long t                   # rounds learned so far
    cdef readonly int n_features
    cdef readonly bint standardize_target  # learn (y - mean) / std of the targets seen so far
    cdef readonly bint center_target       # learn y - mean (implied by standardize_target)
    cdef readonly bint winsorize_target    # clip far targets (implied by standardize_target)
    cdef readonly bint grows             # a component's arrays grow with the stream
    cdef readonly bint checks_input      # a component refuses some inputs (check_input)
    cdef double[::1] target               # [count, mean, variance] of the (winsorised) targets
    cdef int[::1] active
    cdef double[::1] weight, preds, losses
    cdef double[:, ::1] z
    cdef Py_ssize_t z_stride             # features of kernel k start at z + k * z_stride
    cdef double[::1] work                # the features' per-sample work (FeatureBank.prepare)
    cdef PyThread_type_lock lock         # one round at a time: the scratch above is shared
    cdef int waiting                     # calls blocked on the lock (read by the batch loops)
    # Serving while a batch learns (engine.pyx, "snapshots"): two twins of this engine, each a
    # copy of the model at a round boundary of the batch call in progress, that predict_one reads
    # while the batch holds the lock.  Raw pointers into the twins for the loops without the GIL.
    cdef public object twin_factory      # builds an engine of this layout (None: no snapshots)
    cdef object twins                    # [Engine, Engine] or None
    cdef object plans                    # per twin, (n, 3) intp rows (to, from, bytes), or None
    cdef Py_ssize_t* plan_rows[2]
    cdef Py_ssize_t plan_length[2]       # -1: the twin is brought up to date by set_state
    cdef PyThread_type_lock twin_lock[2]
    cdef long* twin_epoch[2]             # &twin.epoch: the batch call it was published in
    # &twin.published_t, &twin.published_at: the round a twin holds the model at and when it was
    # written (each twin's own, stamped under its lock: the engine's are the newest twin's)
    cdef long* twin_round[2]
    cdef long long* twin_time[2]
    cdef long epoch                      # + 1 when a batch call starts and when it ends
    cdef int running                     # batch calls in their rounds (begin_batch .. end_batch)
    cdef int newest                      # the twin published last
    cdef int snapshot_wanted             # a predict_one found the lock taken (read by the loops)
    cdef int gil_wanted                  # a batch call left its rounds and waits for the GIL
    cdef readonly int arriving           # batch calls in their Python steps (announce_batch)
    cdef bint snapshots_off              # a snapshot could not be made: predictions wait
    cdef long long publish_ns, published_at   # the last publication's cost and end (ns)
    cdef long long batch_started_at      # when the batch call in progress began its rounds (ns)
    # a twin is read until the model has learnt this long since the state it holds, at least
    # (twin_is_recent; ns, 1 ms)
    cdef public long long snapshot_age_floor_ns
    cdef long published_t                # the round the newest twin holds the model at
    cdef long clock_due_t                # serve_snapshot reads the clock from this round on
    cdef char _reads_pad[64]             # every read of a twin writes the count: a line apart
    cdef readonly long n_snapshot_reads  # predictions answered from a twin
    @cython.final
    cdef void serve_snapshot(self, bint now) noexcept nogil
    cdef bint publish(self, int target) noexcept nogil
    cdef bint twin_holds_the_model(self) noexcept nogil
    cdef bint twin_is_recent(self, int i) noexcept nogil
    cdef void carry_snapshot(self) noexcept nogil
    cdef int make_twins(self) except -1
    cdef int drop_twins(self) except -1
    cdef int outdate_twins(self) except -1
    cdef int replan_twins(self) except -1
    cdef void adopt_plans(self, list plans)
    cdef int begin_batch(self) except -1
    cdef int end_batch(self) except -1
    cdef double predict_while_busy(self, const double* x) except? -1.0
    cdef int acquire(self) except -1
    cdef void release(self) noexcept
    @cython.final
    cdef void let_waiters_run(self) noexcept nogil
    @cython.final
    cdef bint needs_room(self) noexcept nogil
    cdef int make_room(self) except -1
    @cython.final
    cdef double predict_ptr(self, const double* x) noexcept nogil
    @cython.final
    cdef double step_ptr(self, const double* x, double y) noexcept nogil
    @cython.final
    cdef double target_scale(self) noexcept nogil
