"""Functional gradient experts of doubly stochastic gradients (Dai et al., NeurIPS 2014).

An iteration takes the B rounds of a mini-batch (rounds kB + 1 .. (k + 1)B of the stream) and
one new block of r random features (the bank's pending block, whose features every round's z
carries after those of the committed blocks)::

    f_t(x_b)  = scale * coef . z(x_b) over the committed blocks    (every round of the batch)
    g_b       = l'(f_t(x_b), y_b)                                  (loss_derivative_with)
    alpha_t   = -gamma_t / B  sum_b z_new(x_b) g_b^T               (r x outputs, accumulated
                                                                    round by round in `acc`)
    alpha_s  <- (1 - gamma_t nu) alpha_s,  s < t                   (the lazy shrink: `scale`)

then the pending block is committed with alpha_t as its coefficients.  Predictions within the
batch use f_t: the paper's mini-batch iteration, with a round costing one round, not one block.
With ``precondition`` (the authors' code) alpha_t is multiplied by the inverse of the batch's
feature covariance (sum_b z z^T / B + 1e-7 I); with ``average`` predictions use the average of the
iterates (the paper's Corollaries 11 and 13), kept as avg <- (1 - 1/t) avg + scale coef / t.

Once the bank is full (n_features_max), an iteration either revisits a held block, block
(t mod n_blocks), adding its step to that block's coefficients (``revisit``, the authors' GPU
code), or only shrinks (the paper's "as many random features as the memory allowed").

One-class (loss LOSS_ONE_CLASS): the outputs are f - tau, and tau <- tau - gamma (b/B - nu) with b
the rows of the batch below tau.  Softmax: the outputs are the scores of the classes, the
gradient softmax(f) - e_y.  A GP (``points``): output 0 learns y round by round, outputs i > 0
the targets k(x, points[i - 1]) (the paper's method 2) at the end of each iteration, from the
batch's rows kept for it, with one matrix product over the batch (``variance_gradients``): m
test points would make a round cost m dot products over every feature, where a batch shares each
coefficient read between its rows; only output 0 runs in rounds (``FirstOutput(n, 1)``).  With
``operator`` the variance operator of method 1 (eq. 18) gains a column per iteration, from the
batch's rows too.

A data-driven bandwidth (``median_rows`` > 0): the bank's is provisional until the first
median_rows rows of the stream (the first batch, up to 256 rows) have come.  Until then nothing
is committed, so every prediction is 0 whatever the bandwidth, and each row and its slopes are
kept; the last of them sets the bandwidth, median_scale times the median distance between them
(their values clipped to +-median_clip, ``median_distance``), and their contributions to the
iteration are then computed with it.  So the model is the same however the stream is cut into
calls, and a first sample alone does not set the kernel.

The experts of a bank share its one z (view 0, see BlockFeatures): predict(0) keeps its address
for the others, and learn(n_experts - 1) ends the round (and, at a batch's end, the iteration),
so the engine must call them in index order, which the combiners of these models do.

A step ensemble (``step_scales``): output k learns the same targets as output 0 with its step
gamma_t times step_scales[k] (the shrink of the regulariser, shared by the lazy scale, stays
1 - gamma_t nu), and each output's loss goes to the combiner that weighs them (Hedge).

Guards (refused iterations are counted in n_rejected and change nothing): |1 - gamma nu| <= 1
(a larger shrink would grow the past without bound), every new or revisited coefficient and the
offset within STATE_LIMIT, everything finite.  The scale stays in [1e-100, 1] in magnitude: below,
it is folded into the coefficients.
"""
import numpy as np

from fastomkl._core.checks import require
from fastomkl._core.inputs import MAX_ABS_INPUT

from libc.math cimport exp, fabs, fmax, isfinite, sqrt
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dgemm
from scipy.linalg.cython_lapack cimport dgesv

from fastomkl._core.base cimport ExpertBank, Round
from fastomkl._core.features.dsg cimport (ADD_OPERATOR, BlockFeatures, block_features,
                                          fill_block, mark_sparse, median_distance, run_blocks)
from fastomkl._core.kernel_rows cimport shift_invariant
from fastomkl._core.losses cimport (LOSS_ONE_CLASS, LOSS_SOFTMAX, loss_derivative_with,
                                    loss_value_with)
from fastomkl._core.numeric cimport STATE_LIMIT
from fastomkl._core.steps cimport schedule_at

from fastomkl._core.features.dsg import MIN_BANDWIDTH, SECOND_DRAWS

# The GP's second draws are the blocks (stream + SECOND_DRAWS, index).
cdef long long SECOND_DRAWS_C = SECOND_DRAWS

cdef extern from "fastomkl_kernels.h" nogil:
    double fastomkl_dot(const double *a, const double *b, int n)

# The lazy scale is folded into the coefficients when its magnitude falls below this.
cdef double RENORMALISE_BELOW = 1e-100
# The ridge of the preconditioner (the authors' solvePD).
cdef double PRECONDITION_RIDGE = 1e-7
cdef double MIN_BANDWIDTH_C = MIN_BANDWIDTH      # the median heuristic's floor


cdef class FunctionalSGDExperts(ExpertBank):
    """The coefficients of a DSG model's blocks and their updates (see the module docstring)."""

    def __init__(self, BlockFeatures bank, int n_outputs, int loss, double param, double nu,
                 double eta, int eta_kind, double eta_decay, int batch_size, bint average=False,
                 bint precondition=False, bint revisit=False, points=None, bint operator=False,
                 bint nu_fixed=True, int median_rows=0, double median_scale=1.0,
                 double median_clip=1e8, step_scales=None):
        if n_outputs < 1 or bank.n_kernels != n_outputs or batch_size < 1:
            raise ValueError("FunctionalSGDExperts needs one bank view per output, batch >= 1")
        self.weighed = step_scales is not None
        self.step_scales = np.ones(n_outputs) if step_scales is None else \
            np.ascontiguousarray(step_scales, dtype=np.float64)
        if (self.step_scales.shape[0] != n_outputs
                or not np.all(np.asarray(self.step_scales) > 0)):
            raise ValueError("step_scales needs one positive scale per output")
        self.bank = bank
        self.n_experts = n_outputs
        self.grows = True
        self.loss = loss
        self.r = bank.r
        self.param = param
        self.nu = nu
        self.nu_fixed = nu_fixed
        self.eta.scale = eta
        self.eta.kind = eta_kind
        self.eta.decay = eta_decay
        self.batch_size = batch_size
        self.average = average
        self.precondition = precondition
        self.revisit = revisit
        self.operator = operator
        self.points = np.zeros((0, bank.n_features)) if points is None else \
            np.ascontiguousarray(points, dtype=np.float64)
        if self.points.shape[0] and self.points.shape[0] != n_outputs - 1:
            raise ValueError("a GP has one output per test point after its mean")
        self.acc = np.zeros((n_outputs, self.r))
        self.gram = np.zeros((self.r if precondition else 0, self.r))
        self.reals = np.array([1.0, 0.0, 0.0, 1.0])
        self.counts = np.array([0, 0, median_rows > 0], dtype=np.int64)
        self.median_rows = median_rows
        self.median_scale = median_scale
        self.median_clip = median_clip
        self.first_x = np.zeros((median_rows, bank.n_features))
        self.first_g = np.zeros((median_rows, n_outputs))
        self.current = np.zeros(n_outputs)
        self.probs = np.zeros(n_outputs)
        self.batch_x = np.zeros((batch_size if self.keeps_batch() else 0, bank.n_features))
        self.batch_z = np.zeros((batch_size if self.keeps_batch() else 0, self.r))
        self.per_round = 1 if self.points.shape[0] else n_outputs
        # one output in rounds: the engine may finish it alone, with one feature buffer (several
        # learn together, expert 0's features kept for the others)
        self.independent = self.per_round == 1
        self.coef = np.zeros((n_outputs, 0))
        self.avg = np.zeros((n_outputs, 0))
        self.theta = np.zeros(0)
        self.theta_size = 0
        self._allocate(bank.capacity * self.r)

    @property
    def budget_reached(self):
        """True once the bank holds its n_features_max features (no block is pending)."""
        return not self.bank.has_pending()

    def admit(self, long n_more):
        """Warns once (``BudgetWarning``) when the call of n_more rounds fills the bank: each
        iteration (``batch_size`` rounds) commits one block."""
        cdef long iterations = (self.counts[1] + n_more) // self.batch_size
        if not self.warned and self.bank.n_blocks + iterations >= self.bank.max_blocks:
            after = "revisits a held block" if self.revisit else "only shrinks the past"
            self.budget_warning(f"the model reaches its n_features_max of "
                                f"{self.bank.max_blocks * self.r} random features: from then on "
                                f"each iteration {after} (memory and the cost per sample stay "
                                f"flat; n_features_max=None keeps adding blocks)")

    def keeps_batch(self):
        """Whether the batch's rows are kept for the end of the iteration (a GP's variance)."""
        return self.operator or self.points.shape[0] > 0

    def _allocate(self, long width, bint keep=True):
        """Coefficients for `width` features (the committed ones kept, or zeros)."""
        cdef long held = self.bank.n_blocks * self.r if keep else 0
        coef = np.zeros((self.n_experts, width))
        avg = np.zeros((self.n_experts, width if self.average else 0))
        coef[:, :held] = np.asarray(self.coef)[:, :held]
        if self.average:
            avg[:, :held] = np.asarray(self.avg)[:, :held]
        self.coef, self.avg = coef, avg

    cdef long operator_size(self, long blocks) noexcept nogil:
        """Values of a variance operator over `blocks` blocks: r^2 blocks (blocks + 1) / 2."""
        return <long>self.r * self.r * (blocks * (blocks + 1) // 2)

    cdef bint needs_room(self) noexcept nogil:
        cdef long blocks = self.bank.n_blocks + self.bank.has_pending()
        return (self.coef.shape[1] < blocks * self.r
                or (self.operator and self.theta.shape[0] < self.operator_size(blocks)))

    def reserve(self):
        cdef long blocks = self.bank.n_blocks + self.bank.has_pending()
        if self.coef.shape[1] < blocks * self.r:
            self._allocate(max(blocks * self.r, self.bank.capacity * self.r))
        if self.operator and self.theta.shape[0] < self.operator_size(blocks):
            theta = np.zeros(max(self.operator_size(blocks), 2 * self.theta.shape[0]))
            theta[:self.theta_size] = np.asarray(self.theta)[:self.theta_size]
            self.theta = theta

    # -- a round ---------------------------------------------------------------------------------
    cdef double predict(self, int k, const double* x, const double* z) noexcept nogil:
        cdef int n = <int>(self.bank.n_blocks * self.r)
        if k == 0:
            self.z0 = z
        self.current[k] = self.reals[0] * fastomkl_dot(&self.coef[k, 0], self.z0, n) \
            if n else 0.0
        if k == 0:
            self.current[0] -= self.reals[1]
        if self.average:
            return (fastomkl_dot(&self.avg[k, 0], self.z0, n) if n else 0.0) \
                - (self.reals[1] if k == 0 else 0.0)
        return self.current[k]

    cdef long target_block(self) noexcept nogil:
        """The block this iteration learns: the pending one, a held one to revisit, or none
        (-1)."""
        if self.bank.has_pending():
            return self.bank.n_blocks
        if self.revisit and self.bank.n_blocks > 0:
            return (self.counts[0] + 1) % self.bank.n_blocks
        return -1

    cdef void softmax(self) noexcept nogil:
        cdef int c, C = self.n_experts
        cdef double top = self.current[0], total = 0.0
        for c in range(1, C):
            if self.current[c] > top:
                top = self.current[c]
        for c in range(C):
            self.probs[c] = exp(self.current[c] - top)
            total += self.probs[c]
        for c in range(C):
            self.probs[c] /= total

    cdef double learn(self, int k, const double* x, const double* z, double f,
                      Round* ctx) noexcept nogil:
        cdef long block = self.target_block(), rows = self.counts[1]
        cdef int j, i, r = self.r, d = self.bank.n_features
        cdef double g, y = ctx.y
        cdef const double* learnt = self.z0 + block * r
        cdef bint waiting = self.counts[2] != 0     # the bandwidth waits for the first rows
        if self.loss == LOSS_SOFTMAX:
            if k == 0:
                self.softmax()
            g = self.probs[k] - (1.0 if k == <int>y else 0.0)
        else:
            if k > 0 and self.points.shape[0]:      # a GP's variance function: k(x, point)
                y = shift_invariant(self.bank.kind, self.bank.matern_df, self.bank.bandwidth, x,
                                    &self.points[k - 1, 0], d)
            g = loss_derivative_with(self.loss, self.current[k], y, self.param)
        if waiting:
            self.first_g[rows, k] = g
        elif block >= 0:
            for j in range(r):
                self.acc[k, j] += g * learnt[j]
        if k == 0:
            if self.loss == LOSS_ONE_CLASS and self.current[0] < 0.0:
                self.reals[2] += 1.0
            if waiting:
                memcpy(&self.first_x[rows, 0], x, d * sizeof(double))
            elif self.precondition and block >= 0:
                self.add_gram(learnt)
            if self.batch_x.shape[0] and block >= 0:
                memcpy(&self.batch_x[rows, 0], x, d * sizeof(double))
                memcpy(&self.batch_z[rows, 0], learnt, r * sizeof(double))
        if k == self.per_round - 1:
            self.counts[1] = rows + 1
            if waiting and rows + 1 == self.median_rows:
                self.decide_bandwidth()
            if ctx.t % self.batch_size == 0:
                self.iterate()
        # only a step ensemble's combiner weighs the outputs by their losses
        return loss_value_with(self.loss, f, y, self.param) if self.weighed else 0.0

    cdef void add_gram(self, const double* z) noexcept nogil:
        cdef int i, j, r = self.r
        for i in range(r):
            for j in range(r):
                self.gram[i, j] += z[i] * z[j]

    cdef void decide_bandwidth(self) noexcept nogil:
        """The first rows have come: the bandwidth from their median distance, then their
        contributions to the iteration with the features it gives (every f was 0, so their
        slopes hold but a GP's targets k(x, point), computed again)."""
        cdef int m = self.median_rows, d = self.bank.n_features, r = self.r, k, j
        cdef long b, slot = self.bank.n_blocks
        cdef double median = median_distance(&self.first_x[0, 0], m, d, self.median_clip)
        cdef double g
        cdef double* z = <double*>malloc(r * sizeof(double))
        cdef float* work = <float*>malloc((r + 1) * sizeof(float))
        if median < 0.0:                # no two rows differ: sqrt(d), the median of N(0, I)/sqrt 2
            median = sqrt(<double>d)
        self.bank.set_bandwidth(fmax(median * self.median_scale, MIN_BANDWIDTH_C))
        self.counts[2] = 0
        if z == NULL or work == NULL:   # out of memory: the rows are left out of the iteration
            free(z)
            free(work)
            return
        for b in range(m):
            self.bank.block_row(slot, &self.first_x[b, 0],
                                self.bank.largest_input(&self.first_x[b, 0]), work, z)
            for k in range(self.per_round):
                g = self.first_g[b, k]
                for j in range(r):
                    self.acc[k, j] += g * z[j]
            if self.precondition:
                self.add_gram(z)
            if self.batch_z.shape[0]:
                memcpy(&self.batch_z[b, 0], z, r * sizeof(double))
        free(z)
        free(work)

    # -- an iteration ----------------------------------------------------------------------------
    cdef void iterate(self) noexcept nogil:
        cdef long iteration = self.counts[0] + 1, rows = self.counts[1]
        cdef long block = self.target_block(), held = self.bank.n_blocks * self.r
        cdef long width = held + (self.r if self.bank.has_pending() else 0), i
        cdef int k, j, C = self.n_experts, r = self.r, info = 0, one = 1
        cdef double gamma = schedule_at(self.eta, iteration), shrink = 1.0 - gamma * self.nu
        cdef double scale = self.reals[0], offset = self.reals[1], value, step
        cdef bint ok = fabs(shrink) <= 1.0 and isfinite(gamma)
        cdef double* column = NULL
        cdef double* lhs = NULL
        cdef int* pivots = NULL
        if block >= 0 and ok and self.points.shape[0]:
            ok = self.variance_gradients(rows)
        if block >= 0 and ok:
            step = -gamma / rows
            for k in range(C):
                for j in range(r):
                    self.acc[k, j] *= step * self.step_scales[k]
            if self.precondition:
                lhs = <double*>malloc(<long>r * r * sizeof(double))
                pivots = <int*>malloc(r * sizeof(int))
                if lhs == NULL or pivots == NULL:
                    ok = False
                else:
                    for i in range(<long>r * r):
                        lhs[i] = (&self.gram[0, 0])[i] / rows
                    for j in range(r):
                        lhs[j * r + j] += PRECONDITION_RIDGE
                    # acc (C, r) row-major is the (r, C) column-major right-hand side
                    dgesv(&r, &C, lhs, &r, pivots, &self.acc[0, 0], &r, &info)
                    ok = info == 0
                free(lhs)
                free(pivots)
            for k in range(C):
                for j in range(r):
                    value = self.acc[k, j]
                    if block < self.bank.n_blocks:          # revisited: its coefficient grows
                        value = value + scale * shrink * self.coef[k, block * r + j]
                    if not fabs(value) <= STATE_LIMIT:
                        ok = False
        if self.loss == LOSS_ONE_CLASS:
            offset = offset - gamma * (self.reals[2] / rows - self.nu)
            ok = ok and fabs(offset) <= STATE_LIMIT
        if self.operator and ok and block >= 0:
            column = <double*>malloc(<long>r * width * sizeof(double))
            ok = column != NULL and self.operator_column(gamma, rows, column)
        if not ok:
            self.n_rejected += 1
        else:
            scale *= shrink
            if shrink == 0.0 or fabs(scale) < RENORMALISE_BELOW:
                for k in range(C):
                    for i in range(held):
                        self.coef[k, i] *= scale
                scale = 1.0
            if block >= 0:
                for k in range(C):
                    for j in range(r):
                        self.coef[k, block * r + j] += self.acc[k, j] / scale
            self.reals[0] = scale
            self.reals[1] = offset
            self.counts[0] = iteration
            if self.average:
                for k in range(C):
                    for i in range(held):
                        self.avg[k, i] *= 1.0 - 1.0 / iteration
                    for i in range(width):
                        self.avg[k, i] += (scale / iteration) * self.coef[k, i]
            if column != NULL:
                self.append_column(column, shrink, width)
            if self.bank.has_pending():
                self.bank.commit()
        free(column)
        memset(&self.acc[0, 0], 0, C * r * sizeof(double))
        if self.precondition:
            memset(&self.gram[0, 0], 0, <long>r * r * sizeof(double))
        self.counts[1] = 0
        self.reals[2] = 0.0

    # -- a GP's variance functions (method 2) ----------------------------------------------------
    cdef bint variance_gradients(self, long rows) noexcept nogil:
        """acc[1:] += sum_b (f_k(x_b) - k(x_b, point_k)) z_new(x_b) over the batch kept: f (rows x m)
        is one product of the rows' features and the coefficients.  False if out of memory."""
        cdef long held = self.bank.n_blocks * self.r, b, j
        cdef int m = self.n_experts - 1, r = self.r, d = self.bank.n_features, k
        cdef int n = <int>rows, width = <int>held, ld = <int>self.coef.shape[1], one = 1
        cdef double scale = self.reals[0], zero = 0.0, unit = 1.0
        cdef double* Z = <double*>malloc((<long>n * held + 1) * sizeof(double))
        cdef double* F = <double*>malloc((<long>n * m + 1) * sizeof(double))
        cdef float* work = <float*>malloc((r + 1) * sizeof(float))
        cdef const double* x
        if Z == NULL or F == NULL or work == NULL:
            free(Z); free(F); free(work)
            return False
        memset(F, 0, <long>n * m * sizeof(double))
        for b in range(n):
            x = &self.batch_x[b, 0]
            for j in range(self.bank.n_blocks):
                self.bank.block_row(j, x, self.bank.largest_input(x), work, Z + b * held + j * r)
        if held:
            # F^T (m x n, column-major) = coef[1:, :held] Z^T
            dgemm(b"T", b"N", &m, &n, &width, &scale, &self.coef[1, 0], &ld, Z, &width, &zero,
                  F, &m)
        for b in range(n):
            for k in range(m):
                F[b * m + k] = loss_derivative_with(self.loss, F[b * m + k], shift_invariant(
                    self.bank.kind, self.bank.matern_df, self.bank.bandwidth,
                    &self.batch_x[b, 0], &self.points[k, 0], d), self.param)
        # acc[1:]^T (r x m, column-major) += batch_z^T G
        dgemm(b"N", b"T", &r, &m, &n, &unit, &self.batch_z[0, 0], &r, F, &m, &unit,
              &self.acc[1, 0], &r)
        free(Z); free(F); free(work)
        return True

    # -- the GP's variance operator (method 1) ---------------------------------------------------
    cdef bint operator_column(self, double gamma, long rows, double* column) noexcept nogil:
        """The operator's new column (the paper's eq. 18 on the batch), r x width row-major: its
        blocks s < t are -gamma/B sum_b A_t(., x_b)_s z'_t(x_b)^T, its last gamma/B sum_b
        z_t(x_b) z'_t(x_b)^T, stored transposed.  False if out of memory or not finite."""
        cdef long n = self.bank.n_blocks, held = n * self.r, width = held + self.r, i, j, b
        cdef int r = self.r, d = self.bank.n_features, m = <int>rows
        cdef double value, factor = gamma / rows
        cdef double* A = <double*>malloc((<long>m * held + 1) * sizeof(double))
        cdef double* W = <double*>malloc(<long>d * r * sizeof(double))
        cdef double* phases = <double*>malloc(r * sizeof(double))
        cdef double* second = <double*>malloc(<long>m * r * sizeof(double))
        cdef unsigned char* sparse = <unsigned char*>malloc(m)
        cdef long long* streams = <long long*>malloc((n + 1) * sizeof(long long))
        cdef bint ok = not (A == NULL or W == NULL or phases == NULL or second == NULL
                            or sparse == NULL or streams == NULL)
        if ok:
            memset(A, 0, <long>m * held * sizeof(double))
            for i in range(n):
                streams[i] = self.bank.streams[i] + SECOND_DRAWS_C
            if n:
                ok = run_blocks(&self.batch_x[0, 0], m, d, r, self.bank.kind, self.bank.matern_df,
                                1.0 / self.bank.bandwidth, self.bank.seed, streams, &self.bank.indices[0], 0, n,
                                False, ADD_OPERATOR, &self.theta[0], <int>held,
                                self.reals[3], A) == 0
            ok = ok and fill_block(self.bank.kind, self.bank.matern_df, 1.0 / self.bank.bandwidth, self.bank.seed,
                                   self.bank.stream + SECOND_DRAWS_C, self.bank.next_index, d, r, W,
                                   phases) == 0
        if ok:
            mark_sparse(&self.batch_x[0, 0], m, d, sparse)
            block_features(&self.batch_x[0, 0], sparse, NULL, m, d, r, W, NULL, phases, second,
                           NULL)
            for i in range(r):
                for j in range(width):
                    value = 0.0
                    for b in range(m):
                        value = value + second[b * r + i] * (
                            -A[b * held + j] if j < held else self.batch_z[b, j - held])
                    value *= factor
                    column[i * width + j] = value
                    if not fabs(value) <= STATE_LIMIT:
                        ok = False
        free(A); free(W); free(phases); free(second); free(sparse); free(streams)
        return ok

    cdef void append_column(self, const double* column, double shrink, long width) noexcept nogil:
        """Shrink the operator's columns by `shrink` (lazily, as the coefficients), then append
        `column` (r x width)."""
        cdef long i, size = self.theta_size, n = <long>self.r * width
        cdef double scale = self.reals[3] * shrink
        if shrink == 0.0 or fabs(scale) < RENORMALISE_BELOW:
            for i in range(size):
                self.theta[i] *= scale
            scale = 1.0
        for i in range(n):
            self.theta[size + i] = column[i] / scale
        self.theta_size = size + n
        self.reals[3] = scale

    # -- views -----------------------------------------------------------------------------------
    @property
    def coefficients(self):
        """The true coefficients of the committed features, (n_blocks r, n_outputs): scale *
        coef (the average of the iterates' with average=True is ``averaged``)."""
        held = self.bank.n_blocks * self.r
        return (self.reals[0] * np.asarray(self.coef)[:, :held]).T.copy()

    @property
    def averaged(self):
        held = self.bank.n_blocks * self.r
        return np.asarray(self.avg)[:, :held].T.copy()

    @property
    def bandwidth_waits(self):
        """Whether the bank's bandwidth waits for the first rows of the stream."""
        return bool(self.counts[2])

    @property
    def offset(self):
        return float(self.reals[1])

    @property
    def iterations(self):
        return int(self.counts[0])

    @property
    def operator_values(self):
        """The GP operator's packed values (true values: theta times its scale)."""
        return self.reals[3] * np.asarray(self.theta)[:self.theta_size]

    # -- state -----------------------------------------------------------------------------------
    # Entries keep the meaning of the files of the DSG models before the compiled engine: coef
    # (n_blocks r, outputs) with its lazy scale, avg the same shape (or empty), offset; beside
    # them what a batch in progress has accumulated.
    def _prediction_arrays(self, FunctionalSGDExperts twin):
        """predict reads the coefficients (and their average), their scale and offset; the
        number of blocks is the bank's (copied with it)."""
        if twin.coef.shape[1] != self.coef.shape[1]:
            twin._allocate(self.coef.shape[1])
        return ({"coef": self.coef, "avg": self.avg, "reals": self.reals},
                {"coef": twin.coef, "avg": twin.avg, "reals": twin.reals})

    def get_state(self):
        held = self.bank.n_blocks * self.r
        return {"coef": np.asarray(self.coef)[:, :held].T.copy(),
                "avg": np.asarray(self.avg)[:, :held].T.copy() if self.average
                else np.zeros((0, self.n_experts)),
                "acc": np.array(self.acc), "gram": np.array(self.gram),
                "reals": np.array(self.reals), "counts": np.array(self.counts),
                "nu": np.array(self.nu),
                "batch_x": np.array(self.batch_x), "batch_z": np.array(self.batch_z),
                "first_x": np.array(self.first_x), "first_g": np.array(self.first_g),
                "theta": np.asarray(self.theta)[:self.theta_size].copy(),
                "n_rejected": np.array(self.n_rejected, dtype=np.int64)}

    def check_state(self, state):
        names = set(self.get_state())
        require(set(state) == names, self, f"must have arrays {sorted(names)}, got "
                f"{sorted(state)}")
        state, _ = self._split_counter(state)
        state = {name: np.asarray(value) for name, value in state.items()}
        C, r = self.n_experts, self.r
        for name, value in state.items():
            require(value.dtype == (np.int64 if name == "counts" else np.float64), self,
                    f"'{name}' has dtype {value.dtype}")
            require(value.dtype == np.int64 or np.isfinite(value).all(), self,
                    f"'{name}' holds NaN or infinity")
        coef = state["coef"]
        require(coef.ndim == 2 and coef.shape[1] == C and coef.shape[0] % r == 0, self,
                f"'coef' must be (n_blocks * {r}, {C})")
        n = coef.shape[0] // r
        shapes = {"avg": coef.shape if self.average else (0, C), "acc": (C, r),
                  "gram": (r if self.precondition else 0, r), "reals": (4,), "counts": (3,),
                  "first_x": np.asarray(self.first_x).shape,
                  "first_g": np.asarray(self.first_g).shape,
                  "nu": (), "batch_x": np.asarray(self.batch_x).shape,
                  "batch_z": np.asarray(self.batch_z).shape,
                  "theta": (self.operator_size(n) if self.operator else 0,)}
        for name, shape in shapes.items():
            require(state[name].shape == shape, self, f"'{name}' must have shape {shape}, got "
                    f"{state[name].shape}")
        scale, offset, below, theta_scale = state["reals"].tolist()
        iterations, rows, waiting = state["counts"].tolist()
        require(waiting in (0, 1) and (not waiting or (self.median_rows and n == 0
                                                       and iterations == 0
                                                       and rows < self.median_rows)), self,
                "counts[2] says the bandwidth waits for the first rows: only before them")
        require(RENORMALISE_BELOW <= abs(scale) <= 1.0 and RENORMALISE_BELOW
                <= abs(theta_scale) <= 1.0, self, "'reals': the lazy scales must have "
                "magnitudes in [1e-100, 1]")
        # learning keeps every true coefficient within STATE_LIMIT (the scale only shrinks it)
        require(np.abs(coef).max(initial=0.0) * abs(scale) <= STATE_LIMIT
                and np.abs(state["avg"]).max(initial=0.0) <= STATE_LIMIT
                and np.abs(state["theta"]).max(initial=0.0) * abs(theta_scale) <= STATE_LIMIT
                and abs(offset) <= STATE_LIMIT, self,
                f"coefficients and offset must stay within {STATE_LIMIT:g}")
        require(offset == 0.0 or self.loss == LOSS_ONE_CLASS, self,
                "only a one-class model has an offset")
        require(0 <= rows < self.batch_size and 0 <= below <= rows and below == int(below)
                and iterations >= 0 and n <= self.bank.max_blocks, self,
                f"counts must be [iterations >= 0, rows of the batch < {self.batch_size}], with "
                f"at most that many rows below the offset")
        require(rows > 0 or (not np.any(state["acc"]) and not np.any(state["gram"])), self,
                "a batch without rows has accumulated nothing")
        require(np.abs(state["first_x"]).max(initial=0.0) <= MAX_ABS_INPUT, self,
                f"'first_x' holds inputs, within {MAX_ABS_INPUT:g}")
        nu = float(state["nu"])
        require(nu >= 0.0 and (not self.nu_fixed or nu == self.nu), self,
                f"'nu' {nu} is not the model's nu {self.nu}")
        return n

    def set_state(self, state):
        """Adopt `state` (the bank's, set first, must hold as many blocks)."""
        n = self.check_state(state)
        require(n == self.bank.n_blocks, self, f"'coef' holds {n} blocks, the features "
                f"{self.bank.n_blocks}")
        state, counter = self._split_counter(state)
        held = n * self.r
        self._allocate(max(self.bank.capacity * self.r, held), keep=False)
        np.asarray(self.coef)[:, :held] = np.asarray(state["coef"]).T
        if self.average:
            np.asarray(self.avg)[:, :held] = np.asarray(state["avg"]).T
        for live, name in ((self.acc, "acc"), (self.gram, "gram"), (self.reals, "reals"),
                           (self.counts, "counts"), (self.batch_x, "batch_x"),
                           (self.batch_z, "batch_z"), (self.first_x, "first_x"),
                           (self.first_g, "first_g")):
            np.asarray(live)[...] = state[name]
        self.nu = float(state["nu"])
        self.theta = np.array(state["theta"])
        self.theta_size = self.theta.shape[0]
        self.n_rejected = counter
        self.warned = self.budget_reached
