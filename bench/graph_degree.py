"""The similarity-graph models' degree M: what OMKL-SFG and OMKL-SFG-R gain from observing more
kernels a round, what it costs, and how they stand against OMKL-GF at its default.

    python bench/graph_degree.py [--rows 8000] [--out bench/results/graph_degree.md]

OMKL-SFG draws one node of a fixed similarity graph a round and observes its M out-neighbours;
the node weights learn from that node's loss alone (bandit feedback over the nodes), so they
concentrate slowly, and a round whose node misses the good kernels predicts with poor ones.
OMKL-GF draws its subset from the kernel weights themselves.  On every stream of
``bench/defaults.py`` (the shipped data and river's drifting streams, first `rows` rows in their
recorded order and a seeded sample of as many, x in the unit ball, y in [0, 1]), each model at
its defaults (``n_components=50``) with M in {10 (the default and the paper's), 20, 30}: the
prequential error (0/1 or squared) and the time per sample of ``predict_learn`` (one run each:
the machine is shared, so only the medians over streams compare), and OMKL-GF's.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fastomkl as fo  # noqa: E402
from defaults import CLASSIFICATION, REGRESSION, SYNTHETIC, is_classification, load  # noqa: E402
from machine import describe, write_report  # noqa: E402

DEGREES = (10, 20, 30)
MODELS = {"OMKL-SFG": (fo.OMKLSFG, fo.OMKLSFGClassifier),
          "OMKL-SFG-R": (fo.OMKLSFGR, fo.OMKLSFGRClassifier),
          "OMKL-GF": (fo.OMKLGF, fo.OMKLGFClassifier)}
STREAMS = CLASSIFICATION + REGRESSION + tuple(name for name, _ in SYNTHETIC)


def measure(cls, X, y, classify, **params):
    """(prequential error, microseconds per sample) of cls(**params) learning the stream."""
    model = cls(n_components=50, random_state=0, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        pred = model.predict_learn(X, y)
        seconds = time.perf_counter() - start
    error = np.mean(pred != y) if classify else np.mean((pred - y) ** 2)
    return float(error), seconds / len(y) * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=8000)
    parser.add_argument("--out", default=str(HERE / "results" / "graph_degree.md"))
    args = parser.parse_args()
    contenders = [(name, M) for name in ("OMKL-SFG", "OMKL-SFG-R") for M in DEGREES]
    contenders.append(("OMKL-GF", None))
    head = " | ".join(f"{n}{'' if M is None else f' M={M}'}" for n, M in contenders)
    lines = ["# The similarity-graph models' degree M against OMKL-GF", "",
             "Command: `" + " ".join(["python bench/graph_degree.py", *sys.argv[1:]]) + "`  ",
             f"Machine: {describe()}", "",
             "Prequential error (0/1 for the classification streams, squared on y in [0, 1] "
             "for the regression ones) of each model at its defaults (`n_components=50`) with "
             "the degree M shown (10: the default and paper 000's), and of OMKL-GF at its "
             "defaults; the last rows give, per model, the geometric mean and the worst of its "
             "error over OMKL-GF's, and the median time per sample over the streams.", "",
             f"| stream | order | {head} |", "|---|---|" + "---|" * len(contenders)]
    ratios = {c: [] for c in contenders}
    times = {c: [] for c in contenders}
    start = time.perf_counter()
    for stream in STREAMS:
        classify = is_classification(stream)
        for order in ("natural", "shuffled"):
            X, y, _ = load(stream, args.rows, 0, False, order)
            cells = {}
            for name, M in contenders:
                params = {} if M is None else {"M": M}
                cells[name, M] = measure(MODELS[name][classify], X, y, classify, **params)
                times[name, M].append(cells[name, M][1])
            reference = cells["OMKL-GF", None][0]
            for c in contenders:
                # error rates as (mistakes + 1) / (reference's + 1), as bench/defaults.py does
                value = cells[c][0]
                ratios[c].append((value * len(y) + 1) / (reference * len(y) + 1) if classify
                                 else value / reference)
            lines.append(f"| {stream} | {order} | "
                         + " | ".join(f"{cells[c][0]:.4g}" for c in contenders) + " |")
            print(lines[-1], flush=True)
    lines.append("| **error / OMKL-GF's: geometric mean (worst)** | | " + " | ".join(
        f"{np.exp(np.mean(np.log(ratios[c]))):.2f} ({max(ratios[c]):.2f})"
        for c in contenders) + " |")
    lines.append("| **µs per sample, median over the streams** | | " + " | ".join(
        f"{np.median(times[c]):.1f}" for c in contenders) + " |")
    write_report(lines, args.out, time.perf_counter() - start)


if __name__ == "__main__":
    main()
