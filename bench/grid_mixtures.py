"""What a family's default would gain from mixing its whole parameter grid.

``bench/defaults.py`` judges each default against the best point of its family's grid, cell by
cell.  Where the default is itself a point of that grid (IOKS's and RF-IOKS's ``eta_const=8``) or
close to one, its ratio is at least 1 in every cell, and a geometric mean below 1 would need a
model that beats the best point on average.  This script asks whether running every grid point
at once and mixing their predictions by Hedge would: the members' prequential predictions
(the same streams, orders and ratios as ``bench/defaults.py``), mixed by exponential weights on
their losses (squared on [0, 1]-scaled targets at rate 2, or 0/1 at rate 0.5 with a weighted
vote), at m times the cost of one model for m points.

    python bench/grid_mixtures.py --families IOKS RF-IOKS "OKS++" LKMBooks
    python bench/grid_mixtures.py --families IOKS --rows 2000 --datasets airfoil magic04
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import defaults as bench
from machine import describe

RATES = {False: 2.0, True: 0.5}         # regression (squared loss), classification (0/1)


def hedge_mixture(predictions: np.ndarray, y: np.ndarray, classify: bool) -> np.ndarray:
    """Each round's prediction of the members' Hedge mixture, made before their losses are seen."""
    rate, n = RATES[classify], len(y)
    log_weights, mixed = np.zeros(len(predictions)), np.empty(n)
    for t in range(n):
        weights = np.exp(log_weights - log_weights.max())
        vote = weights @ predictions[:, t] / weights.sum()
        mixed[t] = (1.0 if vote >= 0 else -1.0) if classify else vote
        losses = (predictions[:, t] != y[t] if classify else (predictions[:, t] - y[t]) ** 2)
        log_weights -= rate * losses
    return mixed


def error(prediction, y, classify: bool) -> float:
    """The prequential error rate or MSE of predictions made before each round was learnt."""
    prediction = np.nan_to_num(prediction, nan=0.0)
    return float(np.mean(prediction != y) if classify else np.mean((prediction - y) ** 2))


def family_ratios(family, names, rows: int, seed: int) -> dict:
    """{order: {"default" | point | "mixture": [ratio to the best point, per cell]}}."""
    _, regressor, classifier, grid, cap, _ = {f[0]: f for f in bench.FAMILIES}[family]
    ratios = {order: {} for order in bench.ORDERS}
    for name in names:
        classify = bench.is_classification(name)
        make = classifier if classify else regressor
        if make is None:
            continue
        for order in bench.ORDERS:
            X, y, _ = bench.load(name, min(rows, cap or rows), seed, False, order)
            default = bench._quietly(make().predict_learn, X, y)
            members = np.array([bench._quietly(make(**bench._grid_kwargs(p)).predict_learn, X, y)
                                for p in grid])
            members = np.nan_to_num(members, nan=0.0)
            errors = {"default": error(default, y, classify),
                      **{str(dict(bench._grid_kwargs(p))): error(m, y, classify)
                         for p, m in zip(grid, members)},
                      "mixture": error(hedge_mixture(members, y, classify), y, classify)}
            best = min(v for k, v in errors.items() if k not in ("default", "mixture"))
            for key, value in errors.items():           # the bench's ratio of a cell
                ratios[order].setdefault(key, []).append(
                    bench._ratio(value, best, len(y) if classify else None))
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="+", default=["IOKS", "RF-IOKS", "OKS++", "LKMBooks"])
    parser.add_argument("--datasets", nargs="+",
                        default=list(bench.REGRESSION + bench.CLASSIFICATION)
                        + [name for name, _ in bench.SYNTHETIC])
    parser.add_argument("--rows", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    lines = ["# A family's whole grid mixed by Hedge, against its default", "",
             f"Machine: {describe()}; command: `python bench/grid_mixtures.py --families "
             f"{' '.join(args.families)}` ({args.rows} rows, the streams and orders of "
             "bench/defaults.py).  Ratio to the best grid point of each cell; the mixture runs "
             "every point (m models).", "",
             "| family | order | default: geometric mean / worst | best single point: "
             "geometric mean / worst | mixture of the m points: geometric mean / worst | m |",
             "|---|---|---|---|---|---|"]
    gm = lambda r: float(np.exp(np.mean(np.log(r))))            # noqa: E731
    for family in args.families:
        for order, ratios in family_ratios(family, args.datasets, args.rows, args.seed).items():
            points = [k for k in ratios if k not in ("default", "mixture")]
            single = min(points, key=lambda k: gm(ratios[k]))
            lines.append(f"| {family} | {order} | {gm(ratios['default']):.4f} / "
                         f"{max(ratios['default']):.3f} | {gm(ratios[single]):.4f} / "
                         f"{max(ratios[single]):.3f} ({single}) | {gm(ratios['mixture']):.4f} / "
                         f"{max(ratios['mixture']):.3f} | {len(points)} |")
            print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
