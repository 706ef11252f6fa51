"""
PKAWV: kernel ridge regression online, exact and approximated
=============================================================

``KernelAWV`` is the exact kernelised Vovk-Azoury-Warmuth forecaster (its cost grows with the
stream); ``NystromAWV`` approximates it with centres chosen online, ``TaylorAWV`` with a Taylor
expansion of the Gaussian kernel.  The figure shows the running MSE of each on the first 600
Airfoil rows and the number of centres Nyström keeps.
"""
import matplotlib.pyplot as plt
import numpy as np

import fastomkl
from fastomkl.datasets import scale_to_unit_ball, scale_to_unit_interval

X, y = fastomkl.load_dataset("airfoil")
X, y = scale_to_unit_ball(X)[:600], scale_to_unit_interval(y)[:600]
kernel = fastomkl.Gaussian(0.5)
models = {"KernelAWV (exact)": fastomkl.KernelAWV(kernel),
          "NystromAWV": fastomkl.NystromAWV(kernel, random_state=0),
          "TaylorAWV (degree 3)": fastomkl.TaylorAWV(kernel, degree=3)}
fig, ax = plt.subplots(figsize=(5, 3.5))
for label, model in models.items():
    errors = (model.predict_learn(X, y) - y) ** 2
    ax.plot(np.cumsum(errors) / np.arange(1, len(y) + 1), label=label)
ax.set(xlabel="samples seen", ylabel="running MSE", title="Airfoil, one Gaussian kernel")
ax.legend()
fig.tight_layout()
plt.show()
