"""
Doubly stochastic gradients: a Gaussian-process posterior without a kernel matrix
=================================================================================

``DoublySGDGP`` learns the posterior mean of a Gaussian process and, at test points given in
advance, its variance, by doubly stochastic gradients: each iteration draws a new block of random
features and a batch of rows.  On a one-dimensional problem the figure draws the mean and a band
of two standard deviations, wider where the data end.
"""
import matplotlib.pyplot as plt
import numpy as np

from fastomkl import Gaussian
from fastomkl.dsg import DoublySGDGP

rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, (200, 1))
y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=200)
grid = np.linspace(-3, 3, 61)[:, None]
model = DoublySGDGP(noise=0.1, kernel=Gaussian(0.7), test_points=grid, batch_size=50,
                    n_epochs=30, random_state=0).fit(X, y)
mean, std = model.predict(grid, return_std=True)

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.scatter(X[:, 0], y, s=6, color="grey", label="data")
ax.plot(grid[:, 0], mean, label="posterior mean")
ax.fill_between(grid[:, 0], mean - 2 * std, mean + 2 * std, alpha=0.3, label="± 2 sd")
ax.set(xlabel="x", ylabel="y", title="DoublySGDGP")
ax.legend(fontsize="small")
fig.tight_layout()
plt.show()
