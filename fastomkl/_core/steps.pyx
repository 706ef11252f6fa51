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
# The steps of an ensemble: a geometric grid 2^-5 ... 2 (ratio 2), on standardised targets and
# truncated steps, so the grid is free of the units of y.  Its top is the largest step a truncated
# step can use on the unit ball without oscillating (the truncation stops the rest); seven members
# reach from there down to the small steps that stationary data want late in the stream.
ENSEMBLE_STEPS = 2.0 ** np.arange(-5, 2)
