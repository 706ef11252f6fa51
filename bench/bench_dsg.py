"""Cost of a DSG round on the compiled engine: ``predict_learn_one`` per sample.

    python bench/bench_dsg.py [--quick]

``DoublySGDRegressor()`` (defaults: batch 32, block 64, the median bandwidth of its first
sample) over its first 1,000 samples, one call per sample (river's protocol), against
``Raker([Gaussian(1.0)])`` with the same number of random features as the DSG model holds at
the end (2 n_components = n_features_ + the pending block), on the same stream (d = 8).  Both
in one process, medians of per-call times, repeated; the ratio compares numbers of one run.
A second table: the cost of a round of the default model as its features grow to
n_features_max (the default's bound), per 1,000 samples.  A third: what the bound costs in
accuracy, the prequential error (MSE over the variance of y, every sample predicted before it is
learnt, one call per sample) of the default regressor on three shipped data sets (standardised
columns and target, file order) for bounds 1024 .. 8192 and none, with its seconds.

Results go to bench/results/dsg_bench.md.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from fastomkl import Gaussian, Raker  # noqa: E402
from fastomkl.datasets import load_arrays  # noqa: E402
from fastomkl.dsg import DoublySGDRegressor  # noqa: E402


def per_call(model, X, y) -> list[float]:
    """Seconds of each predict_learn_one call over the stream."""
    times = []
    for x, target in zip(X, y):
        start = time.perf_counter()
        model.predict_learn_one(x, target)
        times.append(time.perf_counter() - start)
    return times


BOUNDS = (1024, 2048, 4096, 8192, None)


def bound_sweep(names, data_dir=None) -> list[str]:
    """Prequential relative MSE and seconds of DoublySGDRegressor() for each n_features_max."""
    lines = ["| data set | n | " + " | ".join(f"n_features_max={b}" for b in BOUNDS) + " |",
             "|---|---|" + "---|" * len(BOUNDS)]
    for name in names:
        z = load_arrays(name, data_dir)
        X, y = z["X"].astype(np.float64), z["y"].astype(np.float64)
        X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
        y = (y - y.mean()) / y.std()
        cells = []
        for bound in BOUNDS:
            model = DoublySGDRegressor(n_features_max=bound, random_state=0)
            start = time.perf_counter()
            online = np.array([model.predict_learn_one(x, t) for x, t in zip(X, y)])
            seconds = time.perf_counter() - start
            cells.append(f"{np.mean((online - y) ** 2):.4f} ({seconds:.1f} s)")
        lines.append(f"| {name} | {len(y)} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--data", default=None,
                        help="folder of .npz data sets to read instead of the shipped copies")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n, d, repeats = 1000, 8, 3 if args.quick else 7
    X = rng.uniform(-1, 1, (n, d))
    y = np.sin(X @ rng.normal(size=d))
    dsg_medians, raker_medians, features = [], [], 0
    for _ in range(repeats):
        dsg = DoublySGDRegressor(random_state=0)
        dsg_medians.append(statistics.median(per_call(dsg, X, y)))
        features = dsg.n_features_ + dsg.block_size
        raker = Raker([Gaussian(1.0)], n_components=features // 2, eta="adagrad", random_state=0)
        raker_medians.append(statistics.median(per_call(raker, X, y)))
    dsg_us, raker_us = 1e6 * statistics.median(dsg_medians), 1e6 * statistics.median(raker_medians)
    growth = []
    stream = rng.uniform(-1, 1, (8000 if args.quick else 16000, d))
    target = np.sin(stream @ rng.normal(size=d))
    model = DoublySGDRegressor(random_state=0)
    for start in range(0, stream.shape[0], 1000):
        times = per_call(model, stream[start:start + 1000], target[start:start + 1000])
        growth.append((start + 1000, model.n_features_, 1e6 * statistics.median(times)))
    lines = ["# DSG: a round on the compiled engine", "",
             "`python bench/bench_dsg.py` (d = 8, one `predict_learn_one` call per sample, "
             f"medians of per-call times over {repeats} repeats of one run).", "",
             "| model | features | us per predict_learn_one (median, t <= 1000) |",
             "|---|---|---|",
             f"| DoublySGDRegressor() | 0 .. {features} (grows) | {dsg_us:.1f} |",
             f"| Raker([Gaussian(1.0)], n_components={features // 2}) | {features} | "
             f"{raker_us:.1f} |", "",
             f"Ratio DSG / Raker: **{dsg_us / raker_us:.2f}** (the NumPy-engine DSG took "
             "1,150-1,280 us per call over its first 200 samples).", "",
             "## A round as the default model grows (n_features_max = 4096)", "",
             "| samples | features held | us per call (median over those 1000) |", "|---|---|---|"]
    lines += [f"| {t} | {D} | {us:.1f} |" for t, D, us in growth]
    lines += ["", "## What the bound costs: prequential MSE / var(y) (seconds)", ""]
    lines += bound_sweep(("cpusmall", "naval") if args.quick
                         else ("cpusmall", "naval", "elevators"), args.data)
    out = HERE / "results" / "dsg_bench.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
