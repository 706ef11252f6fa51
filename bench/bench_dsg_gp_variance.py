"""The DSG Gaussian process's two posterior variances against the closed form, and the cost of the
operator's compiled loop against NumPy.

    python bench/bench_dsg_gp_variance.py [--quick]

* Accuracy: 32 training points in 1-D (uniform on [-1, 1], y = sin 3x), Gaussian kernel of
  bandwidth 0.5, noise 0.3, full batches; the variance at 13 points of [-1.5, 1.5] against
  1 - k*^T (K + s^2 I)^-1 k* from a direct solve, RMS over points and 4 seeds, for method 2
  (``variance="test_points"``) and method 1 (``variance="operator"``) at the same block size and
  iterations, with a constant step and with a decaying one; seconds per fit (median of seeds).
* Cost: A(., x) for a batch (``operator_apply``: every second-draw block regenerated, then its
  packed column applied) against the same in NumPy (``generate_block``, ``cos``, one matrix
  product per block), median of repeats, one BLAS thread.

Results go to bench/results/dsg_gp_variance.md.
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

from threadpoolctl import threadpool_limits  # noqa: E402

from fastomkl import Gaussian  # noqa: E402
from fastomkl._core.features import dsg as core  # noqa: E402
from fastomkl.dsg import DoublySGDGP  # noqa: E402


def accuracy(iterations: int, block: int, seeds: int) -> list[tuple[str, float, float]]:
    rng = np.random.default_rng(0)
    n, noise, sigma = 32, 0.3, 0.5
    x = rng.uniform(-1, 1, (n, 1))
    y = np.sin(3 * x[:, 0])
    star = np.linspace(-1.5, 1.5, 13)[:, None]
    kernel = Gaussian(sigma)
    K_star = kernel.gram(star, x)
    exact = 1 - np.einsum("ij,ji->i", K_star,
                          np.linalg.solve(kernel.gram(x) + noise * np.eye(n), K_star.T))
    settings = [("test_points (method 2), constant step", dict(test_points=star,
                                                               eta_schedule="constant")),
                ("operator (method 1), constant step", dict(variance="operator",
                                                            eta_schedule="constant")),
                ("operator (method 1), step 1/(1 + 0.02 t)", dict(variance="operator",
                                                                  eta_decay=0.02))]
    rows = []
    for name, extra in settings:
        errors, seconds = [], []
        for seed in range(seeds):
            start = time.perf_counter()
            gp = DoublySGDGP(noise, kernel=Gaussian(sigma), batch_size=n, block_size=block,
                             n_epochs=iterations, random_state=seed, **extra).fit(x, y)
            seconds.append(time.perf_counter() - start)
            _, std = gp.predict(star, return_std=True)
            errors.append(std ** 2 - exact)
        rows.append((name, float(np.sqrt(np.mean(np.square(errors)))),
                     statistics.median(seconds)))
    return rows


def apply_numpy(X, seed, bandwidth, theta, r, n_blocks):
    out = np.zeros((X.shape[0], n_blocks * r))
    offset = 0
    for u in range(n_blocks):
        W, b = core.generate_block("gaussian", 0, bandwidth, seed, 1 << 62, u, X.shape[1], r)
        Z = np.sqrt(2.0 / r) * np.cos(X @ W + b)
        size = r * (u + 1) * r
        out[:, :(u + 1) * r] += Z @ theta[offset:offset + size].reshape(r, (u + 1) * r)
        offset += size
    return out


def cost(n_blocks: int, r: int, repeats: int) -> tuple[float, float]:
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (64, 8))
    theta = rng.normal(size=r * r * n_blocks * (n_blocks + 1) // 2)
    streams = np.full(n_blocks, 1 << 62, dtype=np.int64)
    indices = np.arange(n_blocks, dtype=np.int64)
    compiled, numpy = [], []
    for _ in range(repeats):
        out = np.zeros((X.shape[0], n_blocks * r))
        start = time.perf_counter()
        core.operator_apply(X, "gaussian", 0, 0.7, 3, streams, indices, theta, 1.0, r, out)
        compiled.append(time.perf_counter() - start)
        start = time.perf_counter()
        reference = apply_numpy(X, 3, 0.7, theta, r, n_blocks)
        numpy.append(time.perf_counter() - start)
        assert np.allclose(out, reference, rtol=1e-10, atol=1e-10)
    return statistics.median(compiled), statistics.median(numpy)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    iterations, seeds, repeats = (100, 2, 3) if args.quick else (200, 4, 7)
    with threadpool_limits(1):
        rows = accuracy(iterations, 8, seeds)
        timings = [(n_blocks, r, *cost(n_blocks, r, repeats)) for n_blocks, r in
                   ((100, 8), (50, 32))]
    lines = ["# DSG GP: posterior variance by ridge regressions at the test points (method 2) "
             "and by the operator (method 1)", "",
             f"32 points, noise 0.3, bandwidth 0.5, full batches, block 8, {iterations} "
             f"iterations; RMS error of the variance at 13 points against the closed form, "
             f"over {seeds} seeds.", "",
             "| method | RMS error | seconds per fit |", "|---|---|---|"]
    lines += [f"| {name} | {error:.4f} | {seconds:.3f} |" for name, error, seconds in rows]
    lines += ["", "A(., x) for 64 rows of width 8 (one BLAS thread, median of "
              f"{repeats}):", "", "| blocks x block size | compiled (ms) | NumPy (ms) | ratio |",
              "|---|---|---|---|"]
    lines += [f"| {n} x {r} | {1e3 * c:.2f} | {1e3 * p:.2f} | {p / c:.2f}x |"
              for n, r, c, p in timings]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        (HERE / "results" / "dsg_gp_variance.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
