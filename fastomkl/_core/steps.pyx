"""The step rules' codes by name, for the Python layer (the enums in steps.pxd are the one source
of truth)."""

import numpy as np

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
# a squared error in standard units).  On bench/defaults.py's shipped classification data in
# either order OMKL-GF's test stays silent (phishing, a9a, magic04), and it fires once after
# ConceptDriftStream's change.
PAGE_HINKLEY_DELTA = 0.005
PAGE_HINKLEY_THRESHOLD = 50.0
