"""
VAW and VAW²: second-order learners against a first-order one
==============================================================

The Vovk-Azoury-Warmuth forecaster (``VAW``) learns random features with a rank-one update of
an inverse per round; ``VAW2`` runs one per kernel and combines them by a second VAW.  Against
Raker on the same features, the figure shows the running MSE on the shipped Concrete data.
"""
import matplotlib.pyplot as plt
import numpy as np

import fastomkl
from fastomkl.datasets import scale_to_unit_ball, scale_to_unit_interval

X, y = fastomkl.load_dataset("concrete")
X, y = scale_to_unit_ball(X), scale_to_unit_interval(y)
kernels = [fastomkl.Gaussian(s) for s in (0.3, 1.0, 3.0)]
models = {
    "VAW (one kernel)": fastomkl.VAW(kernel=kernels[1], n_components=100, random_state=0),
    "VAW2 (three kernels)": fastomkl.VAW2(kernels, n_components=100, random_state=0),
    "Raker (three kernels)": fastomkl.Raker(kernels, n_components=100, random_state=0),
}
fig, ax = plt.subplots(figsize=(5, 3.5))
for label, model in models.items():
    errors = (model.predict_learn(X, y) - y) ** 2
    ax.plot(np.cumsum(errors) / np.arange(1, len(y) + 1), label=label)
ax.set(xlabel="samples seen", ylabel="running MSE", yscale="log", title="Concrete")
ax.legend()
fig.tight_layout()
plt.show()
