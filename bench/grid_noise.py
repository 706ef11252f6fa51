"""How much of a default's ratio to the best point of its grid is the luck of the best of five?

    python bench/grid_noise.py [--families IOKS RF-IOKS ...] [--rows 8000] [--seeds 5]
                               [--out bench/results/grid_noise.md]

bench/defaults.py divides a default's prequential error by the lowest of its grid's (five or six
points, one seed).  For a model that draws at random every round (the bandit families, DSG's
random features) each point's error carries the noise of its draws, and the lowest of five noisy
errors sits below their common mean: a default that is itself a point of the grid is at least 1
in every cell, and above 1 on average even where no point is better.  Here, on every stream of
bench/defaults.py shuffled (the order where the defaults' geometric means sit just above 1), the
default's error (seed 0) is divided by the lowest of its grid's (seed 0, as bench/defaults.py
does) and by the lowest of `seeds` copies of the default itself with seeds 0 .. seeds - 1: the
ratio a default gets against copies of itself that differ only in their draws.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import defaults as B  # noqa: E402
from machine import describe, write_report  # noqa: E402
from recovery_seeds import seeded  # noqa: E402

STREAMS = B.REGRESSION + B.CLASSIFICATION + tuple(name for name, _ in B.SYNTHETIC)


def ratios(family, stream, rows, seeds):
    """(default / best of the grid, default / best of `seeds` reseeded defaults) on one stream."""
    _, regressor, classifier, grid, cap, _ = family
    classify = B.is_classification(stream)
    make = classifier if classify else regressor
    X, y, _ = B.load(stream, min(rows, cap or rows), 0, False, "shuffled")
    default = B.prequential_error(make(), X, y, classify)
    points = [B.prequential_error(make(**B._grid_kwargs(p)), X, y, classify) for p in grid]
    copies = [default] + [B.prequential_error(seeded(make, s), X, y, classify)
                          for s in range(1, seeds)]
    count = len(y) if classify else None
    return B._ratio(default, min(points), count), B._ratio(default, min(copies), count)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", nargs="*", default=["IOKS", "RF-IOKS", "OKS++", "DSG"])
    parser.add_argument("--rows", type=int, default=8000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", default=str(HERE / "results" / "grid_noise.md"))
    args = parser.parse_args()
    families = [f for f in B.FAMILIES if f[0] in args.families]
    lines = ["# A default against its grid, and against reseeded copies of itself", "",
             "Command: `" + " ".join(["python bench/grid_noise.py", *sys.argv[1:]]) + "`  ",
             f"Machine: {describe()}", "",
             "Shuffled streams of bench/defaults.py; per family, the geometric mean (and the "
             "worst) over the streams of the default's error divided by the lowest of its "
             f"grid's (one seed, as bench/defaults.py measures it) and by the lowest of "
             f"{args.seeds} copies of the default with seeds 0 .. {args.seeds - 1} (itself "
             "among them).  Where the second is as high as the first, the default's ratio to "
             "its grid is what the lowest of a few noisy errors gives, not a better point.", "",
             "| family | vs its grid: geometric mean (worst) | vs reseeded copies: geometric "
             "mean (worst) | streams where a grid point beats every copy |",
             "|---|---|---|---|"]
    start = time.perf_counter()
    for family in families:
        grid_r, copy_r, beaten = [], [], []
        for stream in STREAMS:
            if family[2 if B.is_classification(stream) else 1] is None:
                continue
            g, c = ratios(family, stream, args.rows, args.seeds)
            grid_r.append(g)
            copy_r.append(c)
            if g > c:
                beaten.append(f"{stream} ({g:.2f} vs {c:.2f})")
            print(f"{family[0]:10s} {stream:24s} grid {g:.3f} copies {c:.3f}", flush=True)
        lines.append(f"| {family[0]} | {np.exp(np.mean(np.log(grid_r))):.4f} "
                     f"({max(grid_r):.2f}) | {np.exp(np.mean(np.log(copy_r))):.4f} "
                     f"({max(copy_r):.2f}) | {', '.join(beaten) or '-'} |")
    write_report(lines, args.out, time.perf_counter() - start)


if __name__ == "__main__":
    main()
