"""OMKL-GF's rate restart: does restarting its self-confident weight rate on a change help, and
does the change test stay silent where nothing changes?

    python bench/rate_restart.py [--rows 8000] [--seeds 4] [--out bench/results/rate_restart.md]

A self-confident rate sqrt(ln N / (1 + V)) only shrinks: after a change, the kernel weights stay
on the kernels of the old concept.  ``rate_restart="change"`` sets V = 0 when a Page-Hinkley
test on the combined prediction's mistakes (classifier) or squared errors in standard units
(regressor) fires.  This runs OMKL-GF with ``rate_restart=None`` and ``"change"`` (the default
``n_components=50``, seeds of stream and model alike) on ConceptDriftStream's abrupt and gradual
switch and FriedmanDrift's abrupt changes, several seeds each, in their recorded order, and on
the shipped data in both orders (``bench/defaults.py``'s ``load``: the first `rows` rows or a
seeded sample of them, x in the unit ball, y in [0, 1]).  Each row: the prequential error (0/1
or squared) over the whole stream and over its last 1,000 rounds, and the test's alarms.
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
from defaults import CLASSIFICATION, REGRESSION, is_classification, load  # noqa: E402
from machine import describe, write_report  # noqa: E402

DRIFTING = ("concept_drift_abrupt", "concept_drift_gradual", "friedman_global_abrupt",
            "friedman_local_abrupt")
RESTARTS = (None, "change")
LAST = 1000


def errors(name, restart, X, y, seed):
    classify = is_classification(name)
    model = (fo.OMKLGFClassifier if classify else fo.OMKLGF)(
        n_components=50, random_state=seed, rate_restart=restart)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = model.predict_learn(X, y)
    err = (pred != y).astype(float) if classify else (pred - y) ** 2
    return err, model.n_rate_restarts_


def row(name, order, seed, X, y):
    cells = []
    for restart in RESTARTS:
        err, alarms = errors(name, restart, X, y, seed)
        cells += [f"{err.mean():.4g}", f"{err[-LAST:].mean():.4g}", str(alarms)]
    return f"| {name} | {order} | {seed} | " + " | ".join(cells) + " |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=8000)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--out", default=str(HERE / "results" / "rate_restart.md"))
    args = parser.parse_args()
    lines = ["# OMKL-GF: restarting the self-confident weight rate on a change", "",
             "Command: `" + " ".join(["python bench/rate_restart.py", *sys.argv[1:]]) + "`  ",
             f"Machine: {describe()}", "",
             "Prequential error (0/1 for the classification streams, squared on y in [0, 1] for "
             f"the regression ones) over the whole stream and its last {LAST} rounds, and the "
             "alarms of the change test (each restarts the rate), with `rate_restart=None` "
             "(the rate only shrinks) and `\"change\"`; the classifier's default \"auto\" is "
             "\"change\", the regressor's None.", "",
             "| stream | order | seed | None: error | None: last 1000 | None: alarms | "
             "change: error | change: last 1000 | change: alarms |",
             "|---|---|---|---|---|---|---|---|---|"]
    start = time.perf_counter()
    for name in DRIFTING:
        for seed in range(args.seeds):
            X, y, _ = load(name, args.rows, seed, False, "natural")
            lines.append(row(name, "natural", seed, X, y))
            print(lines[-1], flush=True)
    for name in CLASSIFICATION + REGRESSION:
        for order in ("natural", "shuffled"):
            X, y, _ = load(name, args.rows, 0, False, order)
            lines.append(row(name, order, 0, X, y))
            print(lines[-1], flush=True)
    write_report(lines, args.out, time.perf_counter() - start)


if __name__ == "__main__":
    main()
