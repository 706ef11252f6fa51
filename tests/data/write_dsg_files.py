"""Wrote the DSG model files beside it with fastomkl at commit 96f9de4 (the DSG family on its NumPy
engine), and the predictions that code made for them (dsg_saved_predictions.json): loading these
files must keep predicting what that code predicted.  Runs only against that version."""
import json
import numpy as np
import fastomkl
from fastomkl.dsg import (DoublySGDRegressor, DoublySGDClassifier, DoublySGDOneClass,
                          DoublySGDDensityRatio, DoublySGDGP, DoublySGDSoftmaxClassifier)
rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, (90, 3))
y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]
probe = rng.uniform(-1.2, 1.2, (25, 3))
out = "/work/wt-dsg/tests/data/"
cases = {
  "dsg_regressor": (DoublySGDRegressor(batch_size=16, block_size=8, random_state=3), y, "predict"),
  "dsg_regressor_huber_avg": (DoublySGDRegressor("huber", bandwidth=0.7, batch_size=10, block_size=6, average=True, n_features_max=36, random_state=4), y, "predict"),
  "dsg_classifier_float32": (DoublySGDClassifier("logistic", kernel="laplacian", bandwidth=1.3, batch_size=12, block_size=8, dtype="float32", random_state=5), y > 0, "decision_function"),
  "dsg_oneclass_matern": (DoublySGDOneClass(kernel="matern", matern_nu=2.5, bandwidth=0.9, batch_size=8, block_size=4, nu=0.2, random_state=6), None, "decision_function"),
  "dsg_density_ratio_cauchy": (DoublySGDDensityRatio(kernel="cauchy", bandwidth=0.8, batch_size=8, block_size=4, learning_rate="theory", eta0=2.0, random_state=7), y > 0, "log_ratio"),
  "dsg_softmax_precondition": (DoublySGDSoftmaxClassifier(batch_size=15, block_size=8, precondition=True, eta1=1e-3, random_state=8), np.digitize(X[:, 0], [-0.3, 0.3]), "decision_function"),
  "dsg_gp_points": (DoublySGDGP(noise=0.2, test_points=X[:4], bandwidth=0.6, batch_size=30, block_size=8, n_epochs=2, random_state=9), y, "predict"),
  "dsg_gp_operator": (DoublySGDGP(noise=0.2, variance="operator", bandwidth=0.6, batch_size=30, block_size=4, n_epochs=2, random_state=10), y, "predict"),
}
expected = {}
for name, (model, target, method) in cases.items():
    if target is None: model.fit(X)
    else: model.fit(X, target)
    model.save(out + name + ".npz")
    values = getattr(model, method)(probe)
    entry = {"method": method, "values": np.asarray(values, dtype=float).tolist()}
    if isinstance(model, DoublySGDGP):
        p = X[:4] if model.variance == "test_points" else probe
        entry["std"] = model.predict(p, return_std=True)[1].tolist()
    expected[name] = entry
    back = fastomkl.load(out + name + ".npz")
    assert np.array_equal(np.asarray(getattr(back, method)(probe)), np.asarray(values)), name
np.save(out + "dsg_probe.npy", probe)
with open(out + "dsg_saved_predictions.json", "w") as fh:
    json.dump(expected, fh, indent=0)
