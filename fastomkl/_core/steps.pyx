"""The step rules' codes by name, for the Python layer (the enums in steps.pxd are the one source
of truth)."""

SCHEDULES = {"constant": SCHEDULE_CONSTANT, "inv_sqrt": SCHEDULE_INV_SQRT}
# The step schedules of doubly stochastic gradients, per iteration.
ITERATION_SCHEDULES = {"inverse": SCHEDULE_INVERSE, "theory": SCHEDULE_INV_T,
                       "constant": SCHEDULE_CONSTANT}
ADAGRAD = SCHEDULE_ADAGRAD
SELF_CONFIDENT = SCHEDULE_SELF_CONFIDENT
