"""``detect_changes``: does a change test that restarts the kernel weights help on streams that
change, and does it stay silent where nothing changes?

    python bench/change_detection.py [--rows 8000] [--seeds 4]
                                     [--out bench/results/change_detection.md]

Raker's Hedge at its constant rate, RFOMKR's discounted weights and OMKL-GF's self-confident rate
that only shrinks all leave the weights on the old concept's kernels after a change: the kernels
that suit the new one were weighed down for the whole stream before it.  With ``detect_changes`` a
Page-Hinkley test on the combined prediction's mistakes (classifier) or squared errors in standard
units (regressor) fires after a change; Raker and RFOMKR then spread half of their weight evenly,
OMKL-GF restarts its rate.  This runs the three at their defaults (``n_components=50``, seeds of
stream and model alike) with ``detect_changes=False`` and True on ConceptDriftStream's abrupt and
gradual switch and FriedmanDrift's abrupt changes, several seeds each, in their recorded order, and
on the shipped data in both orders (``bench/defaults.py``'s ``load``: the first `rows` rows or a
seeded sample of them, x in the unit ball, y in [0, 1]).  Each row: the prequential error (0/1 or
squared) over the whole stream and over its last 1,000 rounds, and the test's alarms.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fastomkl as fo  # noqa: E402
from defaults import CLASSIFICATION, REGRESSION, is_classification, load  # noqa: E402
from machine import describe, write_report  # noqa: E402

DRIFTING = ("concept_drift_abrupt", "concept_drift_gradual", "friedman_global_abrupt",
            "friedman_local_abrupt")
MODELS = {"Raker": (fo.Raker, fo.RakerClassifier), "RFOMKR": (fo.RFOMKR, fo.RFOMKRClassifier),
          "OMKL-GF": (fo.OMKLGF, fo.OMKLGFClassifier)}
LAST = 1000


def errors(family, name, detect, X, y, seed):
    classify = is_classification(name)
    model = MODELS[family][classify](n_components=50, random_state=seed, detect_changes=detect)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = model.predict_learn(X, y)
    err = (pred != y).astype(float) if classify else (pred - y) ** 2
    return err, model.n_changes_detected_


def row(family, name, order, seed, X, y):
    cells = []
    for detect in (False, True):
        err, alarms = errors(family, name, detect, X, y, seed)
        cells += [f"{err.mean():.4g}", f"{err[-LAST:].mean():.4g}"] + ([str(alarms)] * detect)
    return f"| {family} | {name} | {order} | {seed} | " + " | ".join(cells) + " |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=8000)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--out", default=str(HERE / "results" / "change_detection.md"))
    args = parser.parse_args()
    lines = ["# detect_changes: restarting the kernel weights when the stream changes", "",
             "Command: `" + " ".join(["python bench/change_detection.py", *sys.argv[1:]]) + "`  ",
             f"Machine: {describe()}", "",
             "Prequential error (0/1 for the classification streams, squared on y in [0, 1] for "
             f"the regression ones) over the whole stream and its last {LAST} rounds, and the "
             "alarms of the change test, with `detect_changes=False` (the former rules) and "
             "True; \"auto\", the default, is True for Raker, RFOMKR and OMKL-GF's classifier, "
             "False for OMKL-GF's regressor.", "",
             "| model | stream | order | seed | False: error | False: last 1000 | "
             "True: error | True: last 1000 | True: alarms |",
             "|---|---|---|---|---|---|---|---|---|"]
    start = time.perf_counter()
    for family in MODELS:
        for name in DRIFTING:
            for seed in range(args.seeds):
                X, y, _ = load(name, args.rows, seed, False, "natural")
                lines.append(row(family, name, "natural", seed, X, y))
                print(lines[-1], flush=True)
        for name in CLASSIFICATION + REGRESSION:
            for order in ("natural", "shuffled"):
                X, y, _ = load(name, args.rows, 0, False, order)
                lines.append(row(family, name, order, 0, X, y))
                print(lines[-1], flush=True)
    write_report(lines, args.out, time.perf_counter() - start)


if __name__ == "__main__":
    main()
