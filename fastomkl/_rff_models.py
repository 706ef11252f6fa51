"""What every random-feature model shares: its kernels, feature bank and the public views of them."""
from __future__ import annotations

from fastomkl._core.base import LOSSES, SCHEDULES
from fastomkl._core.features import RFFBank
from fastomkl._validation import (check_choice, check_float, check_int, check_kernels)
from fastomkl.features import RandomFourierFeatures, draw_frequencies
from fastomkl.kernels import paper000_dictionary

REGRESSION_LOSSES = ("squared", "absolute")
CLASSIFICATION_LOSSES = ("logistic", "hinge")


class RFFModelMixin:
    """Parameters and attributes common to models on random Fourier features.

    Subclasses keep ``kernels``, ``n_components``, ``shared_draw`` and ``random_state`` among their
    parameters; ``kernels=None`` means paper 000's 76-kernel dictionary.
    """

    def _check_rff_params(self) -> dict:
        return {
            "kernels": self.kernels_,
            "n_components": check_int(self.n_components, "n_components", 1),
        }

    def _rff_bank(self, config: dict, n_features: int, feature_rng) -> RFFBank:
        return RFFBank(draw_frequencies(config["kernels"], config["n_components"], n_features,
                                        feature_rng, getattr(self, "shared_draw", False)))

    @property
    def kernels_(self) -> list:
        """The kernel dictionary in use (``kernels``, or the default dictionary when None)."""
        return paper000_dictionary() if self.kernels is None else check_kernels(self.kernels)

    @property
    def features_(self) -> RandomFourierFeatures:
        """The fitted random features (``frequencies_``, ``transform``) the model computes with."""
        engine = self._fitted_engine()
        bank = engine.features
        bank = getattr(bank, "inner", bank)
        return RandomFourierFeatures.from_bank(self.kernels_, bank,
                                               getattr(self, "shared_draw", False))


def check_loss(loss: str, allowed) -> int:
    return LOSSES[check_choice(loss, "loss", allowed)]


def check_schedule(eta, schedule: str, name: str = "eta") -> tuple[float, int]:
    """A step size (positive) and its schedule code ('constant' or 'inv_sqrt': eta / sqrt(t))."""
    value = check_float(eta, name, 0.0, strict=True)
    return value, SCHEDULES[check_choice(schedule, name + "_schedule", SCHEDULES)]
