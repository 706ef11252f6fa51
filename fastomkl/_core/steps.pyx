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
# The steps of an ensemble: a geometric grid 2^-5, 2^-3, 2^-1, 2 (ratio 4), on standardised targets
# and truncated steps, so the grid is free of the units of y.  Its top is the largest step a
# truncated step can use on the unit ball without oscillating (the truncation stops the rest); the
# members reach from there down to the small steps that stationary data want late in the stream.
# Four members with ratio 4 did as well as seven with ratio 2 on the streams of bench/defaults.py
# (worst ratio to the best grid point 1.29 in natural order for both, 1.13 against 1.11 shuffled,
# geometric mean 0.92 for both) at 2.0x instead of 3.3x the cost per sample of AdaGrad-norm.
ENSEMBLE_STEPS = 2.0 ** np.arange(-5, 2, 2)
