"""
Kernel selection under bandit feedback: which kernel RF-OKS++ plays
===================================================================

The bandit models (OKS, OKS++, IOKS and their random-feature versions) update only the kernel
they draw each round.  ``weights_`` is the sampling distribution over the dictionary; the figure
shows how it concentrates while RF-OKS++ learns the shipped Phishing data (labels -1/+1), and the
running error rate.
"""
import matplotlib.pyplot as plt
import numpy as np

import fastomkl
from fastomkl.datasets import scale_to_unit_ball

X, y = fastomkl.load_dataset("phishing")
X = scale_to_unit_ball(X)[:3000]
y = y[:3000]
kernels = [fastomkl.Gaussian(s) for s in (0.05, 0.2, 0.5, 1.0, 3.0)]
model = fastomkl.RFOKSPlusPlusClassifier(kernels, n_components=100, random_state=0)

mistakes, weights = [], []
for start in range(0, len(X), 100):
    predictions = model.predict_learn(X[start:start + 100], y[start:start + 100])
    mistakes.append(predictions != y[start:start + 100])
    weights.append(model.weights_.copy())
mistakes = np.concatenate(mistakes)

fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
left.plot(np.cumsum(mistakes) / np.arange(1, len(mistakes) + 1))
left.set(xlabel="samples seen", ylabel="running error rate", title="prequential error")
right.plot(np.arange(1, len(weights) + 1) * 100, np.array(weights))
right.legend([f"Gaussian({k.sigma})" for k in kernels], fontsize="small")
right.set(xlabel="samples seen", ylabel="probability", title="sampling distribution")
fig.tight_layout()
plt.show()
