"""
Raker: prequential error and kernel weights over time
=====================================================

Raker (random features, one online gradient learner per kernel, a Hedge combiner) streams the
shipped Airfoil data once, in its recorded order.  ``predict_learn`` gives the prequential
predictions (each made before its label is learnt); the kernel weights are read after every
chunk of 100 rows.
"""
import matplotlib.pyplot as plt
import numpy as np

import fastomkl
from fastomkl.datasets import scale_to_unit_ball, scale_to_unit_interval

X, y = fastomkl.load_dataset("airfoil")
X, y = scale_to_unit_ball(X), scale_to_unit_interval(y)
kernels = [fastomkl.Gaussian(s) for s in (0.1, 0.3, 1.0, 3.0)]
model = fastomkl.Raker(kernels, n_components=50, random_state=0)

errors, weights = [], []
for start in range(0, len(X), 100):
    predictions = model.predict_learn(X[start:start + 100], y[start:start + 100])
    errors.append((predictions - y[start:start + 100]) ** 2)
    weights.append(model.weights_.copy())
errors = np.concatenate(errors)
running_mse = np.cumsum(errors) / np.arange(1, len(errors) + 1)

fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
left.plot(running_mse)
left.set(xlabel="samples seen", ylabel="running MSE", title="prequential error")
right.stackplot(np.arange(1, len(weights) + 1) * 100, np.array(weights).T,
                labels=[f"Gaussian({k.sigma})" for k in kernels])
right.set(xlabel="samples seen", ylabel="weight", title="kernel weights")
right.legend(loc="upper left", fontsize="small")
fig.tight_layout()
plt.show()
