"""Prediction on Dask workers: wall time with one and with two worker processes.

    python bench/bench_dask.py [--rows 200000]

A Raker (76 kernels of paper 000, D = 50) and a doubly stochastic gradient regressor (64 blocks of
64 features) trained on 5000 rows of a synthetic 15-feature problem predict ``--rows`` rows held in
a dask array of 16 chunks, through ``fastomkl.dask.predict`` on a ``distributed.LocalCluster``
with one, then two, single-threaded worker processes (the model shipped once per run).  Median of
3 runs each; the chunks are persisted on the workers first, so the time is prediction, not data
transfer.  Results in bench/results/dask_bench.md.
"""
from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def main() -> None:
    import dask.array as da
    import distributed

    import fastomkl
    from fastomkl import dask as fd

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (5000, 15))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2
    models = {"Raker, 76 kernels, D = 50": fastomkl.Raker(fastomkl.paper000_dictionary(),
                                                          n_components=50, eta="adagrad",
                                                          random_state=0),
              "DoublySGDRegressor, 64 blocks of 64": fastomkl.DoublySGDRegressor(
                  kernel=fastomkl.Gaussian(1.0), batch_size=78, block_size=64,
                  n_features_max=None, random_state=0)}
    for model in models.values():
        model.fit(X, y)
    big = da.random.default_rng(1).uniform(-1, 1, (args.rows, 15),
                                           chunks=(-(-args.rows // 16), 15))
    times = {}
    for workers in (1, 2):
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            data = client.persist(big)
            distributed.wait(data)
            for name, model in models.items():
                runs = []
                for _ in range(3):
                    start = time.perf_counter()
                    fd.predict(model, data).compute()
                    runs.append(time.perf_counter() - start)
                times[name, workers] = float(np.median(runs))
    lines = ["# Prediction on Dask workers", "",
             f"`python bench/bench_dask.py --rows {args.rows}` on {platform.machine()} "
             "(2 cores, shared with other work), Python "
             f"{platform.python_version()}; LocalCluster of single-threaded worker processes; "
             "median of 3.", "", "| model | 1 worker (s) | 2 workers (s) | speed-up |",
             "|---|---|---|---|"]
    for name in models:
        one, two = times[name, 1], times[name, 2]
        lines.append(f"| {name} | {one:.2f} | {two:.2f} | {one / two:.2f}× |")
    text = "\n".join(lines) + "\n"
    (HERE / "results" / "dask_bench.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
