"""What every random-feature model shares: its kernels, feature bank and the public views of them."""
from __future__ import annotations

import numpy as np

from fastomkl._core.base import LOSSES, SCHEDULES
from fastomkl._core.features import RFFBank
from fastomkl._validation import (check_choice, check_float, check_int, check_kernels,
                                  split_random_state)
from fastomkl.features import (RandomFourierFeatures, check_legacy_kernels, draw_frequencies,
                               draw_legacy_frequencies, legacy_bit_generator)
from fastomkl.kernels import paper000_dictionary

REGRESSION_LOSSES = ("squared", "absolute")
RNG_PROTOCOLS = ("default", "legacy")
CLASSIFICATION_LOSSES = ("logistic", "hinge")


class RFFModelMixin:
    """Parameters and attributes common to models on random Fourier features.

    Subclasses keep ``kernels``, ``n_components``, ``rng_protocol``, ``random_state`` (and
    optionally ``shared_draw``) among their parameters; ``kernels=None`` means paper 000's 76-kernel
    dictionary.

    ``rng_protocol="legacy"`` replays the authors' notebooks: with an integer seed s, the stream of
    ``np.random.seed(s)`` draws the frequencies (``fastomkl.features.legacy_frequencies``) and then,
    continuing, every per-round draw of a sampling model (OMKL-GF's uniforms, for example).
    """

    def _check_rff_params(self) -> dict:
        config = {
            "kernels": self.kernels_,
            "n_components": check_int(self.n_components, "n_components", 1),
            "rng_protocol": check_choice(self.rng_protocol, "rng_protocol", RNG_PROTOCOLS),
        }
        if config["rng_protocol"] == "legacy":
            check_int(self.random_state, "random_state (rng_protocol='legacy' needs an int seed)", 0,
                      2 ** 32 - 1)
            check_legacy_kernels(config["kernels"])
            if getattr(self, "shared_draw", False):
                raise ValueError("shared_draw=True cannot be combined with rng_protocol='legacy' "
                                 "(the legacy protocol draws each kernel's block in turn)")
        return config

    def _check_ogd_params(self) -> dict:
        """The parameters of models with OGD experts and exponential weights (Raker, the graph
        family): step sizes and their schedule, lam and the loss among ``self._losses``."""
        config = self._check_rff_params()
        config["eta"] = check_schedule(self.eta, self.eta_schedule)
        config["eta_hedge"] = check_schedule(self.eta if self.eta_hedge is None else self.eta_hedge,
                                             self.eta_schedule, "eta_hedge")
        config["lam"] = check_float(self.lam, "lam", 0.0)
        config["loss"] = check_loss(self.loss, self._losses)
        return config

    def _random_streams(self, config: dict):
        """(feature stream, per-round bit generator); one legacy stream serves both, in turn."""
        if config["rng_protocol"] == "legacy":
            bit_generator = legacy_bit_generator(int(self.random_state))
            return np.random.RandomState(bit_generator), bit_generator
        return split_random_state(self.random_state)

    def _rff_bank(self, config: dict, n_features: int, feature_rng) -> RFFBank:
        if config["rng_protocol"] == "legacy":
            return RFFBank(draw_legacy_frequencies(config["kernels"], config["n_components"],
                                                   n_features, feature_rng))
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
