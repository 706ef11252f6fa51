"""The step rules' codes by name, for the Python layer (the enums in steps.pxd are the one source
of truth)."""

SCHEDULES = {"constant": SCHEDULE_CONSTANT, "inv_sqrt": SCHEDULE_INV_SQRT}
ADAGRAD = SCHEDULE_ADAGRAD
SELF_CONFIDENT = SCHEDULE_SELF_CONFIDENT
