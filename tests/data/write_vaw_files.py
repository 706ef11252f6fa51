"""Wrote the VAW-family model files beside it with fastomkl at commit c54360c (before the
``forget`` parameter), and what that code then predicted while it kept learning (vaw_stream.npz,
with the stream): a file of that code must load with forget = 1 and keep predicting,
to the bit, what it did.  Runs only against that version."""
from pathlib import Path

import numpy as np

import fastomkl
from fastomkl import VAW, VAW2, Gaussian, Laplacian, TaylorAWV, VAWMeta
from fastomkl.compose import OnlineMKL, RandomFeatures, SecondLevelVAW, VAWExperts

rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, (150, 3))
y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]
probe = rng.uniform(-1, 1, (40, 3))
probe_y = np.sin(2 * probe[:, 0]) + probe[:, 1] * probe[:, 2]
out = Path(__file__).parent
kernels = [Gaussian(0.5), Laplacian(1.0), Gaussian(2.0)]
cases = {
    "vaw_ridge_refresh": VAW(Gaussian(0.7), n_components=8, mode="ridge", refresh_every=5,
                             random_state=1),
    "vaw2_auto": VAW2(kernels, n_components=6, random_state=2),
    "vaw2_fixed": VAW2(kernels, n_components=6, lam=0.1, lam_meta=1.0, center=False,
                       random_state=3),
    "vawmeta_vaw": VAWMeta(kernels, meta="vaw", n_components=5, random_state=5),
    "taylor_awv": TaylorAWV(Gaussian(1.0), degree=2, refresh_every=7),
    "compose_vaw": OnlineMKL(RandomFeatures(kernels, 5), VAWExperts(lam=0.1), SecondLevelVAW(),
                             random_state=4),
}
expected = {}
for name, model in cases.items():
    model.partial_fit(X, y)
    model.save(out / f"{name}.npz")
    values = model.predict_learn(probe, probe_y)
    expected[f"predicted_{name}"] = values
    back = fastomkl.load(out / f"{name}.npz")
    assert np.array_equal(back.predict_learn(probe, probe_y), values), name
np.savez(out / "vaw_stream.npz", X=X, y=y, probe=probe, probe_y=probe_y, **expected)
