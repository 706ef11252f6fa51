"""
Graph-aided OMKL: the cost of a round against the number of kernels
====================================================================

Raker evaluates every kernel each round; the graph-aided models (OMKL-GF, OMKL-SFG) evaluate
only the kernels their feedback graph picks, so their cost grows more slowly with the
dictionary.  The figure times ``predict_learn`` over 2,000 Airfoil rows for dictionaries of
4 to 76 kernels (median of three runs; absolute times depend on the machine building the
documentation).
"""
import time

import matplotlib.pyplot as plt
import numpy as np

import fastomkl
from fastomkl.datasets import scale_to_unit_ball, scale_to_unit_interval

X, y = fastomkl.load_dataset("airfoil")
X, y = scale_to_unit_ball(X), scale_to_unit_interval(y)
X, y = np.tile(X, (2, 1))[:2000], np.tile(y, 2)[:2000]
dictionary = fastomkl.paper000_dictionary()


def microseconds_per_sample(make) -> float:
    runs = []
    for _ in range(3):
        model = make()
        start = time.perf_counter()
        model.predict_learn(X, y)
        runs.append((time.perf_counter() - start) / len(X) * 1e6)
    return float(np.median(runs))


sizes = [4, 19, 38, 76]
families = {"Raker": fastomkl.Raker, "OMKL-GF": fastomkl.OMKLGF, "OMKL-SFG": fastomkl.OMKLSFG}
fig, ax = plt.subplots(figsize=(5, 3.5))
for label, cls in families.items():
    costs = [microseconds_per_sample(
        lambda: cls(dictionary[::max(1, 76 // n)][:n], n_components=50, random_state=0))
        for n in sizes]
    ax.plot(sizes, costs, marker="o", label=label)
ax.set(xlabel="kernels in the dictionary", ylabel="us per sample", title="cost of a round")
ax.legend()
fig.tight_layout()
plt.show()
