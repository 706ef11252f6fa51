"""Serving latency: percentiles of single calls, the Python boundary separated from the compiled step.

    python bench/serving.py [--calls 100000]

For a 1-kernel and a 76-kernel Raker (paper 000's dictionary, D = 50, the first 15 Naval features,
as in bench/compare_core.py), in float64 and in float32 (``dtype="float32"``), each call timed alone
with ``time.perf_counter_ns``:

* ``model.predict_one(x)`` and ``model.predict_learn_one(x, y)``: what a service calls;
* ``engine.predict_one(x)`` / ``engine.predict_learn_one(x, y)``: the compiled step behind them,
  without the estimator's Python layer;
* an empty Python call: the floor of timing one call from Python;
* the compiled step alone, as a mean: ``predict_many`` over the whole batch, divided by its size.

Each request's x (a new float64 array) and y (a float) are made just before its call, outside the
timing, as a service decodes a payload.  One more row times ``model.predict_one`` reading its 10^5
inputs in place instead (23 MB of rows, cold in cache): the difference is the cost of the misses
on the input, which a benchmark that prebuilds its requests would charge to the call.

Percentiles p50, p99, p99.9 over ``--calls`` calls after a warm-up, and p99 / p50.  Allocation:
the Python-heap growth (tracemalloc) over 10^4 further calls.  Results in
bench/results/serving.md.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import platform
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fastomkl  # noqa: E402
from compare_core import naval  # noqa: E402


def latencies(call, X, y, learn: bool, fresh: bool = True) -> np.ndarray:
    """Nanoseconds of each call, one row of X (and value of y) per call.

    With `fresh`, each request's x and y are made just before its call, outside the timing, as a
    service decodes a request's payload into new objects; else the calls read the rows of X in
    place, 10^5 of them spread over 23 MB, so part of each call's time is the cache misses of
    reading an input no service would have let go cold."""
    clock = time.perf_counter_ns
    n = len(X)
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        x, t = (X[i].copy(), float(y[i])) if fresh else (X[i], y[i])
        if learn:
            start = clock()
            call(x, t)
            out[i] = clock() - start
        else:
            start = clock()
            call(x)
            out[i] = clock() - start
    return out


def heap_growth(call, xs, ys, learn: bool) -> int:
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    latencies(call, xs, ys, learn, fresh=False)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before


def row(name: str, ns: np.ndarray) -> str:
    p50, p99, p999 = np.percentile(ns, [50, 99, 99.9]) / 1e3
    return f"| {name} | {p50:.2f} | {p99:.2f} | {p999:.2f} | {p99 / p50:.2f} |"


def measure(label: str, kernels, X, y, calls: int, dtype: str) -> list[str]:
    model = fastomkl.Raker(kernels, n_components=50, random_state=0,
                           dtype=dtype).fit(X[:1000], y[:1000])
    engine = model._engine
    reps = -(-calls // len(y))
    xs, ys = np.tile(X, (reps, 1))[:calls], np.tile(y, reps)[:calls]
    lines = [f"### {label}", "",
             "| call | p50 (us) | p99 (us) | p99.9 (us) | p99 / p50 |", "|---|---|---|---|---|"]
    empty = lambda x: None                                   # noqa: E731
    for name, call, learn in (("empty Python call", empty, False),
                              ("model.predict_one", model.predict_one, False),
                              ("engine.predict_one (compiled step)", engine.predict_one, False),
                              ("model.predict_learn_one", model.predict_learn_one, True),
                              ("engine.predict_learn_one (compiled step)",
                               engine.predict_learn_one, True)):
        latencies(call, xs[:2000], ys[:2000], learn)         # warm-up
        lines.append(row(name, latencies(call, xs, ys, learn)))
    lines.append(row("model.predict_one, x read in place (cold)",
                     latencies(model.predict_one, xs, ys, False, fresh=False)))
    batch = xs[:20000]
    out = np.empty(len(batch))
    start = time.perf_counter()
    engine.predict_many(batch, out)
    per_sample = (time.perf_counter() - start) / len(batch) * 1e6
    growth = {name: heap_growth(call, xs[:10000], ys[:10000], learn)
              for name, call, learn in (("predict_one", model.predict_one, False),
                                        ("predict_learn_one", model.predict_learn_one, True))}
    lines += ["", f"Compiled step alone (`predict_many` over {len(batch)} rows): "
              f"{per_sample:.2f} us per sample.  Python-heap growth over 10^4 calls: "
              + ", ".join(f"{k} {v} B" for k, v in growth.items()) + ".", ""]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    X, y = naval(11934)
    lines = ["# Serving latency", "",
             f"`python bench/serving.py --calls {args.calls}` on {platform.machine()}, Python "
             f"{platform.python_version()}, NumPy {np.__version__}; one thread; a shared machine "
             "(other processes run beside it).", ""]
    for dtype in ("float64", "float32"):
        lines += measure(f"Raker, 1 Gaussian kernel, D = 50, d = 15, {dtype}",
                         [fastomkl.Gaussian(1.0)], X, y, args.calls, dtype)
        lines += measure(f"Raker, 76 kernels (paper 000), D = 50, d = 15, {dtype}",
                         fastomkl.paper000_dictionary(), X, y, args.calls, dtype)
    text = "\n".join(lines) + "\n"
    (HERE / "results" / "serving.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
