"""The step rules' codes by name, for the Python layer (the enums in steps.pxd are the one source
of truth), and the change test that restarts a rule (``ChangeTest``)."""

import numpy as np

from fastomkl._core.checks import require


SCHEDULES = {"constant": SCHEDULE_CONSTANT, "inv_sqrt": SCHEDULE_INV_SQRT}
# The step schedules of doubly stochastic gradients, per iteration.
ITERATION_SCHEDULES = {"inverse": SCHEDULE_INVERSE, "theory": SCHEDULE_INV_T,
                       "constant": SCHEDULE_CONSTANT}
ADAGRAD = SCHEDULE_ADAGRAD
SELF_CONFIDENT = SCHEDULE_SELF_CONFIDENT
ENSEMBLE = SCHEDULE_ENSEMBLE
# The steps of an ensemble: a geometric grid 2^-4, 2^-2, 1 (ratio 4), on standardised targets and
# truncated steps, so the grid is free of the units of y.  Its top is a step the truncation takes
# onto the target on unit-norm features (a squared-loss step lands on y from 1 / (2 ||z||^2) = 1/2
# on); the members reach from there down to the small steps that stationary data want late in the
# stream.  Three members did as well as four (2^-5 ... 2) on the 40 cells of bench/defaults.py
# (worst ratio to the best grid point 1.13 for both, in either order) at 1.4-1.8x instead of 2.0x
# the cost per sample of AdaGrad-norm for 76 kernels (bench/results/step_rule_costs.md).
ENSEMBLE_STEPS = 2.0 ** np.arange(-4, 1, 2)
# The grid of eta="ensemble" before it had three members: files written with it keep it.
FORMER_ENSEMBLE_STEPS = 2.0 ** np.arange(-5, 2, 2)
# The statistic a Page-Hinkley test watches to restart a self-confident rate (steps.pxd).
CHANGE_STATISTICS = {"mistakes": CHANGE_MISTAKES, "squared": CHANGE_SQUARED}
# Its tolerance and threshold: river's PageHinkley defaults, for statistics of order 1 (a mistake,
# a squared error in standard units).  On the shipped classification data (phishing, a9a,
# magic04, whole, in either order) Raker's and OMKL-GF's tests stay silent, and they fire once
# after ConceptDriftStream's change (bench/results/change_detection.md).
PAGE_HINKLEY_DELTA = 0.005
PAGE_HINKLEY_THRESHOLD = 50.0


cdef class ChangeTest:
    """A Page-Hinkley test (Page 1954) on a per-round statistic of a combined prediction
    (``kind``: CHANGE_STATISTICS' "mistakes" or "squared"; steps.pxd), with tolerance ``delta``
    and alarm threshold ``threshold``.  ``sums`` is its state: [rounds since the last alarm,
    their statistic's mean, the cumulative deviation sum (x_i - mean_i - delta), its minimum
    (0 counts), alarms so far]; an alarm starts the test afresh."""

    def __init__(self, int kind, double delta=PAGE_HINKLEY_DELTA,
                 double threshold=PAGE_HINKLEY_THRESHOLD):
        if kind not in (CHANGE_MISTAKES, CHANGE_SQUARED):
            raise ValueError(f"kind must be one of CHANGE_STATISTICS' codes, got {kind}")
        if not (delta >= 0.0 and threshold > 0.0):
            raise ValueError(f"delta must be >= 0 and threshold > 0, got {delta} and {threshold}")
        self.kind = kind
        self.delta = delta
        self.threshold = threshold
        self.sums = np.zeros(PAGE_HINKLEY_SIZE)

    @property
    def alarms(self):
        """Alarms so far."""
        return int(self.sums[PAGE_HINKLEY_SIZE - 1])

    def check(self, owner, sums):
        """Refuse (ValueError naming `owner`) a state that no run of the test reaches."""
        top = 1.0 if self.kind == CHANGE_MISTAKES else <double>CHANGE_SQUARED_CAP
        n, mean, cum, low, alarms = sums       # finite: the state check refused NaN and inf
        require(0 <= n <= 2.0 ** 53 and 0 <= alarms <= 2.0 ** 53 and n == int(n)
                and alarms == int(alarms), owner,
                "change_test's counts (rounds, alarms) must be whole numbers in [0, 2^53]")
        require(0 <= mean <= top and low <= 0 and low <= cum and cum - low <= self.threshold,
                owner,
                f"change_test must be [rounds, their mean in [0, {top:g}], the cumulative "
                f"deviation, its minimum <= 0 and at most {self.threshold:g} below it, alarms]")
        require(n > 0 or mean == cum == low == 0, owner,
                "change_test: a test of no rounds has a mean and sums of 0")

    cdef bint fires(self, double y_hat, double y) noexcept nogil:
        """Add the round's statistic (a mistake of the sign of y_hat, 0 counting as -1 as
        predict does; or the squared error capped at CHANGE_SQUARED_CAP); on an alarm count it,
        start the test afresh and return True."""
        cdef double* s = &self.sums[0]
        cdef double x
        if self.kind == CHANGE_MISTAKES:
            x = 1.0 if (y_hat > 0.0) != (y > 0.0) else 0.0
        else:
            x = fmin((y_hat - y) * (y_hat - y), CHANGE_SQUARED_CAP)
        s[0] += 1.0
        s[1] += (x - s[1]) / s[0]
        s[2] += x - s[1] - self.delta
        if s[2] < s[3]:
            s[3] = s[2]
        if s[2] - s[3] <= self.threshold:
            return False
        s[0] = 0.0
        s[1] = 0.0
        s[2] = 0.0
        s[3] = 0.0
        s[4] += 1.0
        return True
