"""The compiled losses' codes by name, for the Python layer (the enums in losses.pxd are the one
source of truth)."""

LOSSES = {"squared": LOSS_SQUARED, "absolute": LOSS_ABSOLUTE, "logistic": LOSS_LOGISTIC,
          "hinge": LOSS_HINGE}
