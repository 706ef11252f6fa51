"""The truncated AdaGrad-norm step of eta="auto" in closed form: however large the step scale, one
update moves the example's own prediction at most to the zero of the tangent of its loss,
f + loss / |loss'| towards the label (half-way to y for the squared loss, onto the kink of the
absolute and hinge losses, 2 ln 2 for the logistic loss from f = 0)."""
import numpy as np
import pytest

from fastomkl._core.steps import ADAGRAD
from fastomkl._core.losses import LOSSES
from fastomkl._core.combiners.hedge import Hedge
from fastomkl._core.engine import Engine
from fastomkl._core.experts.expansion import KernelExpansionExperts
from fastomkl._core.features.embedding import NullFeatures
from fastomkl._core.experts.ogd import OGDExperts
from fastomkl._core.features.rff import RFFBank
from fastomkl._core.combiners.hedge import DiscountHedge

HUGE = 1e6          # an AdaGrad scale that alone would throw the prediction far past the label
X = np.array([0.3, -0.2])

# (loss, label, where a first update from f = 0 lands at x)
LANDING = [("squared", 0.8, 0.4), ("squared", -3.0, -1.5), ("absolute", 0.8, 0.8),
           ("hinge", 1.0, 1.0), ("hinge", -1.0, -1.0), ("logistic", 1.0, 2.0 * np.log(2.0)),
           ("logistic", -1.0, -2.0 * np.log(2.0))]


@pytest.mark.parametrize("loss, y, landing", LANDING)
def test_random_feature_expert_lands_on_the_tangent_zero(loss, y, landing):
    freqs = np.random.default_rng(0).standard_normal((1, 16, 2))
    eng = Engine(RFFBank(freqs), OGDExperts(1, 32, LOSSES[loss], 0.0, HUGE, ADAGRAD),
                 Hedge(1, 1.0, 0), np.random.PCG64(0))
    assert eng.predict_learn_one(X, y) == 0.0
    assert eng.predict_one(X) == pytest.approx(landing, rel=1e-12)


@pytest.mark.parametrize("loss, y, landing", LANDING)
def test_kernel_expansion_expert_lands_on_the_tangent_zero(loss, y, landing):
    experts = KernelExpansionExperts([0], [1.0], 2, LOSSES[loss], HUGE, ADAGRAD, grad_scale=0.5)
    eng = Engine(NullFeatures(1, 2), experts, DiscountHedge(1), np.random.PCG64(0))
    eng.predict_learn_one(X, y)
    assert eng.predict_one(X) == pytest.approx(landing, rel=1e-12)


def test_small_steps_are_not_truncated():
    """Below the truncation the step is AdaGrad-norm's: scale / ||g|| on the first round, so the
    prediction at x moves by scale ||z||^2 / ||z|| = scale ||z|| (||z|| = 1 for these features)."""
    freqs = np.random.default_rng(1).standard_normal((1, 16, 2))
    eng = Engine(RFFBank(freqs), OGDExperts(1, 32, LOSSES["squared"], 0.0, 0.01, ADAGRAD),
                 Hedge(1, 1.0, 0), np.random.PCG64(0))
    eng.predict_learn_one(X, 0.8)
    assert eng.predict_one(X) == pytest.approx(0.01, rel=1e-12)
