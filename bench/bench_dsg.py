"""Cost of doubly stochastic gradients: fastomkl's compiled blocks against NumPy, threads, memory.

    python bench/bench_dsg.py [--quick]

Measured in one process and one run (ratios only compare numbers from the same run), medians of
repeats, one BLAS thread throughout (``threadpoolctl``):

* one DSG iteration (batch B = 256, feature block r = 256, d = 123, as on a9a) after t blocks:
  fastomkl's ``learn`` step against a straightforward NumPy implementation of the same algorithm
  (a block regenerated with ``numpy.random.default_rng((seed, stream, t))``, ``X @ W``, ``cos``,
  one gradient step), checked to learn the same function up to the features' randomness;
* prediction throughput (rows per second) of a model of t blocks, fastomkl against NumPy, and
  fastomkl with 1 and 2 threads (the same bits either way);
* memory: the bytes of the model's state after t iterations against t r doubles.

Results go to bench/results/dsg_bench.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from threadpoolctl import threadpool_limits  # noqa: E402

import fastomkl._core.features.dsg_blocks  # noqa: E402,F401  (loads scipy's BLAS before the thread limit)
from fastomkl.dsg import DoublySGDClassifier  # noqa: E402

B, R, D = 256, 256, 123


class NumpyDSG:
    """The same algorithm (hinge loss, gamma_t = 1 / (1 + 1e-4 t)) in plain NumPy."""

    def __init__(self, bandwidth, nu=1e-6, seed=0):
        self.bandwidth, self.nu, self.seed = bandwidth, nu, seed
        self.alphas = []

    def block(self, t):
        rng = np.random.default_rng((self.seed, 0, t))
        return rng.standard_normal((D, R)) / self.bandwidth, rng.uniform(0, 2 * np.pi, R)

    def decision(self, X):
        f = np.zeros(X.shape[0])
        for t, alpha in enumerate(self.alphas):
            W, b = self.block(t)
            f += np.sqrt(2.0 / R) * np.cos(X @ W + b) @ alpha
        return f

    def learn(self, X, y):
        f = self.decision(X)
        g = np.where(y * f < 1, -y, 0.0)
        gamma = 1.0 / (1.0 + 1e-4 * (len(self.alphas) + 1))
        W, b = self.block(len(self.alphas))
        Z = np.sqrt(2.0 / R) * np.cos(X @ W + b)
        self.alphas = [a * (1 - gamma * self.nu) for a in self.alphas]
        self.alphas.append(-gamma / X.shape[0] * Z.T @ g)


def a9a_rows(n):
    """The first n rows of the shipped a9a (one-hot, 14 of 123 entries nonzero), if present."""
    folder = Path(os.environ.get("FASTOMKL_DATA", HERE.parent.parent / "shared" / "data"))
    if not (folder / "a9a.npz").exists():
        return None
    with np.load(folder / "a9a.npz") as data:
        return np.asarray(data["X"][:n], dtype=np.float64), np.asarray(data["y"][:n], float)


def trained(X, y, blocks):
    """fastomkl float64 and float32 models and the NumPy model after `blocks` batches."""
    models = [DoublySGDClassifier(bandwidth=1.0, batch_size=B, block_size=R, random_state=0,
                                  dtype=dtype) for dtype in ("float64", "float32")]
    reference = NumpyDSG(1.0)
    for t in range(blocks):
        rows = slice(t * B, (t + 1) * B)
        for model in models:
            model.partial_fit(X[rows], y[rows])
        reference.learn(X[rows], y[rows])
    return models, reference


def iteration_times(models, reference, X, y, blocks, repeats):
    """Seconds of one iteration on batch `blocks`: NumPy, then each fastomkl model."""
    last = slice(blocks * B, (blocks + 1) * B)

    def step(engine):
        engine.learn_batch(X[last], y[last], engine.decision(X[last], averaged=False))
        engine.n_blocks -= 1            # undo: the same t for every repeat
        engine.next_index -= 1
        engine.iterations -= 1
        engine.t -= B

    def numpy_step():
        reference.learn(X[last], y[last])
        reference.alphas.pop()

    return [median_time(numpy_step, repeats)] + [
        median_time(lambda m=m: step(m._engine), repeats) for m in models]


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer blocks and repeats")
    args = parser.parse_args(argv)
    blocks, repeats = (8, 3) if args.quick else (32, 5)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(B * (blocks + 1), D)) / np.sqrt(D)
    y = np.where(X[:, 0] + X[:, 1] ** 2 > 0.05, 1.0, -1.0)
    command = "python bench/bench_dsg.py" + (" --quick" if args.quick else "")
    lines = ["# DSG benchmark", "", f"Command: `{command}`",
             "", f"Machine: {platform.machine()}, Python {platform.python_version()}, "
             f"one BLAS thread; medians of {repeats} repeats; B = {B}, r = {R}, d = {D}.", ""]
    with threadpool_limits(1):
        (model, single), reference = trained(X, y, blocks)
        last = slice(blocks * B, (blocks + 1) * B)
        agreement = np.mean(np.sign(model.decision_function(X)) == np.sign(reference.decision(X)))
        single_gap = np.max(np.abs(single.decision_function(X) - model.decision_function(X)))
        scale = np.max(np.abs(model.decision_function(X)))
        step_numpy, step_fast, step_single = iteration_times((model, single), reference, X, y,
                                                             blocks, repeats)
        # The floor of any implementation that projects with BLAS: one iteration's blocks + 1
        # projections of the batch (B x d times d x r), nothing else.
        W64 = reference.block(0)[0]
        W32, X32 = W64.astype(np.float32), X[last].astype(np.float32)
        out64, out32 = np.empty((B, R)), np.empty((B, R), dtype=np.float32)
        floor64 = median_time(lambda: [np.dot(X[last], W64, out=out64)
                                       for _ in range(blocks + 1)], repeats)
        floor32 = median_time(lambda: [np.dot(X32, W32, out=out32)
                                       for _ in range(blocks + 1)], repeats)
        test = X[:2048]
        model.n_jobs = 1
        predict_1 = median_time(lambda: model.decision_function(test), repeats)
        predict_single = median_time(lambda: single.decision_function(test), repeats)
        predict_numpy = median_time(lambda: reference.decision(test), repeats)
        one_thread = model.decision_function(test)
        model.n_jobs = 2
        model._engine.config["n_jobs"] = 2
        predict_2 = median_time(lambda: model.decision_function(test), repeats)
        same_bits = np.array_equal(model.decision_function(test), one_thread)
        a9a = a9a_rows(B * (blocks + 1))
        sparse = None if a9a is None else iteration_times(*trained(*a9a, blocks), *a9a, blocks,
                                                          repeats)
    state = model._engine.get_state()
    lines += [
        f"## One iteration after t = {blocks} blocks", "",
        "| implementation | seconds | ratio |", "|---|---|---|",
        f"| NumPy | {step_numpy:.4f} | 1.0 |",
        f"| fastomkl | {step_fast:.4f} | {step_numpy / step_fast:.2f}x |",
        f"| fastomkl, dtype=\"float32\" | {step_single:.4f} | {step_numpy / step_single:.2f}x |",
        f"| projections alone (dgemm), float64 | {floor64:.4f} | {step_numpy / floor64:.2f}x |",
        f"| projections alone (sgemm), float32 | {floor32:.4f} | {step_numpy / floor32:.2f}x |",
        "",
        "The last two rows are floors, not implementations: an iteration regenerates and projects "
        f"all {blocks + 1} blocks, and the projections alone, at the BLAS's speed, bound what any "
        "implementation of the algorithm can gain over the NumPy one.",
        "",
        f"Sign agreement of the two models' decisions on {X.shape[0]} rows (different random "
        f"features, same algorithm): {agreement:.3f}.  Largest gap between the float32 and "
        f"float64 models' decisions: {single_gap:.1e} (decisions up to {scale:.2f}).", "",
        *([] if sparse is None else [
            "## One iteration on a9a's own rows (one-hot: 14 of 123 entries nonzero)", "",
            "Rows with at most a quarter of their entries nonzero are projected by summing the "
            "rows of W they select (float64), instead of a dense product.", "",
            "| implementation | seconds | ratio |", "|---|---|---|",
            f"| NumPy | {sparse[0]:.4f} | 1.0 |",
            f"| fastomkl | {sparse[1]:.4f} | {sparse[0] / sparse[1]:.2f}x |",
            f"| fastomkl, dtype=\"float32\" | {sparse[2]:.4f} | {sparse[0] / sparse[2]:.2f}x |",
            ""]),
        f"## Prediction of 2048 rows with t = {blocks} blocks", "",
        "| implementation | seconds | rows/s | ratio |", "|---|---|---|---|",
        f"| NumPy | {predict_numpy:.4f} | {2048 / predict_numpy:,.0f} | 1.0 |",
        f"| fastomkl, 1 thread | {predict_1:.4f} | {2048 / predict_1:,.0f} | "
        f"{predict_numpy / predict_1:.2f}x |",
        f"| fastomkl, 1 thread, float32 | {predict_single:.4f} | {2048 / predict_single:,.0f} | "
        f"{predict_numpy / predict_single:.2f}x |",
        f"| fastomkl, 2 threads | {predict_2:.4f} | {2048 / predict_2:,.0f} | "
        f"{predict_numpy / predict_2:.2f}x |", "",
        f"1 and 2 threads give the same bits: {same_bits}. (The machine has 2 cores shared with "
        f"other work: the thread speed-up is a lower bound.)", "",
        "## Memory", "",
        f"State after {blocks} iterations: {sum(a.nbytes for a in state.values())} bytes; the "
        f"coefficients are t r = {blocks * R} doubles = {blocks * R * 8} bytes, the rest is "
        f"{sum(a.nbytes for a in state.values()) - blocks * R * 8} bytes of counters.", "",
    ]
    text = "\n".join(lines)
    out = HERE / "results" / "dsg_bench.md"
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
