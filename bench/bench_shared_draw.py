"""Shared frequency draws: what one projection per kernel family saves, and what it costs in MSE.

    python bench/bench_shared_draw.py [--callgrind] [--rounds 21]

Raker with paper 000's 76 kernels (51 Gaussians, 25 Laplacians: two families), D = 50, Naval's
first 15 features scaled as in the paper, eta = 0.1:

* time per sample with ``shared_draw=False`` (76 frequency matrices, 76 projections) and True (two
  base draws, two projections per sample, each kernel's features from its family's projection
  scaled by 1/sigma): ``predict_learn_one`` from Python, ``predict_learn`` (loop in C) and the
  features alone (``features_.transform``); blocks of samples timed alternately, medians, one run;
* with ``--callgrind``, instructions per sample of ``predict_learn`` (valgrind; difference of runs
  over 2T and T samples; AVX2 code paths);
* the prequential MSE of both settings on Naval and Airfoil over three seeds, with the paper's
  step (eta = 0.1) and the default (eta = "auto").

Writes bench/results/shared_draw.md.
"""
from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import fastomkl  # noqa: E402
from fastomkl.reproduce.paper000 import load_paper_dataset  # noqa: E402

D, SEEDS, DATASETS = 50, (0, 1, 2), ("naval", "airfoil")
SETTINGS = (False, True)
LABEL = {False: "independent draws", True: "shared draw"}

DRIVER = """
import os; os.environ["OPENBLAS_NUM_THREADS"] = "1"     # no spinning BLAS threads in the count
import sys, fastomkl
from fastomkl.reproduce.paper000 import load_paper_dataset
X, y = load_paper_dataset("naval")
n, shared = int(sys.argv[1]), sys.argv[2] == "1"
model = fastomkl.Raker(fastomkl.paper000_dictionary(), n_components=50, eta=0.1,
                       shared_draw=shared, random_state=0)
model.learn_one(X[0], y[0])
model.predict_learn(X[1:n + 1], y[1:n + 1])
"""


def raker(shared: bool, seed: int = 0, eta=0.1) -> fastomkl.Raker:
    return fastomkl.Raker(fastomkl.paper000_dictionary(), n_components=D, eta=eta,
                          shared_draw=shared, random_state=seed)


def timings(rounds: int, block: int = 400) -> dict:
    """Median microseconds per sample of each setting and path, blocks interleaved."""
    X, y = load_paper_dataset("naval")
    models = {s: raker(s) for s in SETTINGS}
    streams = {s: raker(s) for s in SETTINGS}
    for s in SETTINGS:
        models[s].learn_one(X[0], y[0])
        streams[s].learn_one(X[0], y[0])
    features = {s: models[s].features_ for s in SETTINGS}
    got = {(s, path): [] for s in SETTINGS for path in ("one", "stream", "features")}
    start = 1
    for r in range(rounds):
        rows = slice(start, start + block)
        start = start + block if start + 2 * block < len(y) else 1
        Xb, yb = X[rows], y[rows]
        for s in (SETTINGS if r % 2 == 0 else SETTINGS[::-1]):
            model = models[s]
            t0 = time.perf_counter()
            for x, t in zip(Xb, yb):
                model.predict_learn_one(x, t)
            t1 = time.perf_counter()
            streams[s].predict_learn(Xb, yb)
            t2 = time.perf_counter()
            features[s].transform(Xb)
            t3 = time.perf_counter()
            got[s, "one"].append((t1 - t0) / block * 1e6)
            got[s, "stream"].append((t2 - t1) / block * 1e6)
            got[s, "features"].append((t3 - t2) / block * 1e6)
    return {key: float(np.median(v)) for key, v in got.items()}


def instructions(T: int = 300) -> dict:
    from callgrind import callgrind_total
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        driver = Path(tmp) / "driver.py"
        driver.write_text(DRIVER)
        for s in SETTINGS:
            run = lambda n: [sys.executable, str(driver), str(n), "1" if s else "0"]  # noqa: E731
            counts[s] = (callgrind_total(run(2 * T)) - callgrind_total(run(T))) / T
    return counts


def errors() -> dict:
    """(dataset, eta, shared) -> MSE of one prequential pass for each seed."""
    out = {}
    for name in DATASETS:
        X, y = load_paper_dataset(name)
        for eta in (0.1, "auto"):
            for s in SETTINGS:
                out[name, eta, s] = [float(np.mean((raker(s, seed, eta).predict_learn(X, y) - y)
                                                   ** 2)) for seed in SEEDS]
    return out


def report(times: dict, counts: dict | None, mse: dict, rounds: int) -> str:
    lines = [
        "# Shared frequency draws: Raker-76 (paper 000 dictionary), D = 50, Naval d = 15", "",
        f"Command: `python bench/bench_shared_draw.py{' --callgrind' if counts else ''}` "
        f"({platform.processor() or platform.machine()}, ISA level "
        f"{fastomkl._core.features.rff.isa_level()}; {rounds} interleaved blocks of 400 samples, "
        "medians, one run; eta = 0.1).", "",
        "With `shared_draw=True` the 51 Gaussians share one standard draw and the 25 Laplacians "
        "another; each sample is projected once per family (2 x 15 x 50 multiply-adds instead of "
        "76 x 15 x 50) and each kernel's features are cos/sin of its family's projection times "
        "1/sigma.  The frequency storage shrinks from 76 x 15 x 56 to 2 x 15 x 56 doubles "
        "(rows padded to whole vectors).  The 2 x 76 x 50 sines and cosines remain.", "",
        "| path | independent draws (µs/sample) | shared draw (µs/sample) | ratio |",
        "|---|---|---|---|",
    ]
    names = {"one": "`predict_learn_one` from Python", "stream": "`predict_learn` (loop in C)",
             "features": "features alone (`features_.transform`)"}
    for path, name in names.items():
        a, b = times[False, path], times[True, path]
        lines.append(f"| {name} | {a:.2f} | {b:.2f} | {a / b:.2f}x |")
    if counts:
        lines += ["", "Instructions per sample of `predict_learn` (valgrind callgrind, difference "
                  "of runs over 600 and 300 samples, AVX2 code paths):", "",
                  "| independent draws | shared draw | ratio |", "|---|---|---|",
                  f"| {counts[False]:,.0f} | {counts[True]:,.0f} | "
                  f"{counts[False] / counts[True]:.2f}x |"]
    lines += [
        "", "## What it costs statistically", "",
        "Shared draws make the features of different kernels of one family functions of the same "
        "random frequencies: their errors are no longer independent, so the kernels' losses, and "
        "the kernel weights estimated from them, are correlated across kernels (each kernel's "
        "own feature map is still an unbiased random-feature estimate of its kernel).  Paper "
        "001's authors draw this way in their released code; the other papers draw each kernel "
        "independently, the default here.", "",
        "Prequential MSE (×10⁻³) of one pass in file order (paper 000's preprocessing), seeds "
        f"{', '.join(map(str, SEEDS))}: mean ± standard deviation over seeds, then each seed.", "",
        "| dataset | eta | independent draws | shared draw | shared / independent |",
        "|---|---|---|---|---|",
    ]
    for name in DATASETS:
        for eta in (0.1, "auto"):
            a, b = np.array(mse[name, eta, False]) * 1e3, np.array(mse[name, eta, True]) * 1e3
            cell = lambda v: (f"{v.mean():.3f} ± {v.std(ddof=1):.3f} "  # noqa: E731
                              f"({', '.join(f'{e:.3f}' for e in v)})")
            lines.append(f"| {name} | {eta} | {cell(a)} | {cell(b)} | {b.mean() / a.mean():.3f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--callgrind", action="store_true", help="count instructions too")
    parser.add_argument("--rounds", type=int, default=21, help="interleaved blocks per setting")
    args = parser.parse_args(argv)
    times = timings(args.rounds)
    counts = instructions() if args.callgrind else None
    text = report(times, counts, errors(), args.rounds)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "shared_draw.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
