"""DSG's per-sample cost in two builds, against Raker with the same number of features.

    python bench/dsg_builds.py --python BEFORE_PYTHON --python AFTER_PYTHON [--repeats 5]

Each interpreter is one build's environment (nothing on PYTHONPATH).  A worker process builds
``DoublySGDRegressor(random_state=0)`` (the defaults: batch 32, block 64, the median bandwidth of
the first batch), calls ``predict_learn_one`` once per sample over its first 1,000 samples (d = 8,
the stream of bench/bench_dsg.py), and reports the mean (total / 1,000, every block-adding call
included), the median per call, and the mean over the first 200 calls; then
``Raker([Gaussian(1.0)], n_components=F / 2)`` on the same stream, F the number of features the DSG
model holds after its 1,000 samples (fitted blocks plus the pending one), one call per sample,
both fresh; ``DoublySGDRegressor(random_state=0)`` fed the same 1,000 samples as 32-row batches
(``predict`` then ``partial_fit`` on each: one block per batch in both versions, the like-for-like
comparison of the engines, since a one-sample call of the version before added one block per
sample); and ``Raker([Gaussian(1.0)], n_components=1024)`` (2,048 features) as one yardstick
for both builds.  Wall time and process CPU time.  The driver
alternates the builds' workers (A B B A ...) and reports medians over the repeats.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

N, D_IN = 1000, 8


def timed_calls(step, X, y):
    wall, cpu = [], []
    for x, t in zip(X, y):
        w0, c0 = time.perf_counter(), time.process_time()
        step(x, t)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return wall, cpu


def summary(wall, cpu) -> dict:
    us = 1e6
    return {"mean_wall": sum(wall) / len(wall) * us, "mean_cpu": sum(cpu) / len(cpu) * us,
            "median_wall": statistics.median(wall) * us,
            "first200_mean_wall": sum(wall[:200]) / 200 * us,
            "first200_mean_cpu": sum(cpu[:200]) / 200 * us}


def worker() -> dict:
    import warnings
    warnings.simplefilter("ignore")
    import numpy as np

    from fastomkl import Gaussian, Raker
    from fastomkl.dsg import DoublySGDRegressor
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (N, D_IN))
    y = np.sin(X @ rng.normal(size=D_IN))
    dsg = DoublySGDRegressor(random_state=0)
    out = {"dsg": summary(*timed_calls(dsg.predict_learn_one, X, y))}
    fitted = getattr(dsg, "n_features_", None)
    if fitted is None:                     # the NumPy-engine version: count its blocks' features
        engine = getattr(dsg, "_engine", None) or getattr(dsg, "engine_", None)
        fitted = getattr(engine, "n_features_", None)
    out["dsg_features"] = None if fitted is None else int(fitted)
    block = dsg.block_size
    features = (int(fitted) + block) if fitted is not None else 2048
    raker = Raker([Gaussian(1.0)], n_components=features // 2, eta="adagrad", random_state=0)
    out["raker"] = summary(*timed_calls(raker.predict_learn_one, X, y))
    out["raker_features"] = 2 * (features // 2)
    # Like for like: the same batches in both versions (predict 32 rows, then partial_fit on them:
    # one block of features per batch, as a one-sample-at-a-time model of the redesign adds).
    batched = DoublySGDRegressor(random_state=0)
    w0, c0 = time.perf_counter(), time.process_time()
    for i in range(0, N, 32):
        if i:
            batched.predict(X[i:i + 32])
        batched.partial_fit(X[i:i + 32], y[i:i + 32])
    out["dsg_batched"] = {"mean_wall": (time.perf_counter() - w0) / N * 1e6,
                          "mean_cpu": (time.process_time() - c0) / N * 1e6}
    out["dsg_batched_features"] = int(getattr(batched, "n_features_", -1))
    fixed = Raker([Gaussian(1.0)], n_components=1024, eta="adagrad",   # one yardstick
                  random_state=0)
    out["raker2048"] = summary(*timed_calls(fixed.predict_learn_one, X, y))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--python", action="append", default=[])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker()))
        return 0
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    runs = {py: [] for py in args.python}
    for r in range(args.repeats):
        for py in (args.python if r % 2 == 0 else args.python[::-1]):
            res = subprocess.run(["nice", "-n", "10", py, os.path.abspath(__file__), "--worker"],
                                 capture_output=True, text=True, env=env)
            if res.returncode:
                raise RuntimeError(res.stderr[-3000:])
            runs[py].append(json.loads(res.stdout.strip().splitlines()[-1]))
            print(f"repeat {r + 1} {py}: {runs[py][-1]}", file=sys.stderr, flush=True)
    table = {}
    for py, rs in runs.items():
        table[py] = {"dsg_features": rs[-1]["dsg_features"], "raker_features": rs[-1]["raker_features"]}
        table[py]["dsg_batched_features"] = rs[-1].get("dsg_batched_features")
        for model in ("dsg", "dsg_batched", "raker", "raker2048"):
            for key in rs[0][model]:
                table[py][f"{model}.{key}"] = statistics.median(r[model][key] for r in rs)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"runs": runs, "medians": table}, fh, indent=1)
    print(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
