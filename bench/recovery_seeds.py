"""Recovery after an abrupt change, over several seeds: is a default's figure the stream's or luck's?

    python bench/recovery_seeds.py [--seeds 5] [--rows 8000] [--families Raker OMKL-SFG ...]

bench/defaults.py measures the recovery time (rounds after a change until the error over the next
``window`` rounds is back within 10% of its level over the ``window`` rounds before it) on one
seed of each synthetic stream and one seed of each model.  One seed of a prequential error over
200 rounds is noisy, and the best constant step of one seed's grid is partly chosen by that noise.
Here every abrupt stream (FriedmanDrift's global and local abrupt drift, ConceptDriftStream's
abrupt switch) is drawn with each seed s in 0 .. seeds - 1, and on it the default model (its
``random_state`` s) and every constant step of the family's grid run; per seed the best constant
step is the one with the lowest mean error on that seed's stream.  The report gives, per family,
stream and change point, the median over seeds of each recovery time, the share of seeds where the
default's is within 2x the best constant step's (or within the window: a few rounds either way are
noise), and the mean error after the change of both (``error_after``).  Families without constant
steps in their grid (the OKS family, LKMBooks, the AWV family) are left out.  Results go to
bench/results/recovery_seeds.md.
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

ABRUPT = ("friedman_global_abrupt", "friedman_local_abrupt", "concept_drift_abrupt")


def constant_points(grid):
    return [p for p in grid if not isinstance(p[0], tuple) and p[1] == "constant"]


def seeded(make, seed: int, **kwargs):
    """The family's model with `kwargs`, its random_state (where it has one) `seed`."""
    model = make(**kwargs)
    return model.set_params(random_state=seed) if "random_state" in model.get_params() else model


def one_seed(family, name, seed, rows, window):
    _, regressor, classifier, grid, _, _ = family
    X, y, points = B.load(name, rows, seed, False, "natural")
    classify = B.is_classification(name)
    make = classifier if classify else regressor
    default = B.prequential_errors(seeded(make, seed), X, y, classify)
    constants = {p: B.prequential_errors(seeded(make, seed, **B._grid_kwargs(p)), X, y, classify)
                 for p in constant_points(grid)}
    best = min(constants, key=lambda p: np.mean(constants[p]) if np.isfinite(
        np.mean(constants[p])) else np.inf)
    return {"points": points, "best": best,
            "default": [B.recovery_time(default, p, window) for p in points],
            "constant": [B.recovery_time(constants[best], p, window) for p in points],
            "after_default": B.error_after(default, points, window),
            "after_constant": B.error_after(constants[best], points, window),
            "before_default": [float(np.mean(default[p - window:p])) for p in points],
            "before_constant": [float(np.mean(constants[best][p - window:p])) for p in points]}


def within(default: float, constant: float, window: int) -> bool:
    """The default recovers within 2x the best constant step, or within a window of it."""
    return default <= max(2 * constant, constant + window) if np.isfinite(constant) \
        else True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rows", type=int, default=8000)
    parser.add_argument("--window", type=int, default=200)
    parser.add_argument("--families", nargs="*")
    parser.add_argument("--out", default=str(HERE / "results" / "recovery_seeds.md"))
    args = parser.parse_args()
    families = [f for f in B.FAMILIES if constant_points(f[3])
                and (not args.families or f[0] in args.families)]
    lines = ["# Recovery after an abrupt change, over seeds", "",
             f"Command: `python bench/recovery_seeds.py {' '.join(sys.argv[1:])}`".rstrip() + "  ",
             f"Machine: {describe()}", "",
             f"Each cell: the median over {args.seeds} seeds (stream and model seeded alike) of the "
             f"rounds until the error over the next {args.window} rounds is back within 10% of "
             f"its level over the {args.window} rounds before the change ('never': not within the "
             f"stream); 'within 2x': the seeds where the default's is at most max(2x, + one "
             f"window) the best constant step's of the same seed (the step with the lowest mean "
             f"error on that seed's stream); error after: the mean error over the rounds from the "
             f"change to the next one (at most {B.AFTER_WINDOWS} windows), default / best "
             f"constant step, mean over seeds; error before: over the {args.window} rounds "
             f"before the change, the level each must return to (a rule that learnt the old "
             f"concept well has further to fall: on ConceptDriftStream the second concept is "
             f"the harder one, and a rule near its old level never learnt the first).", "",
             "| stream | family | change point | default (median) | best constant (median) | "
             "within 2x | error before: default / best constant | "
             "error after: default / best constant |", "|---|---|---|---|---|---|---|---|"]
    start = time.perf_counter()
    for name in ABRUPT:
        for family in families:
            if family[2 if B.is_classification(name) else 1] is None:
                continue                         # a regressor only: no classification stream
            runs = [one_seed(family, name, s, args.rows, args.window) for s in range(args.seeds)]
            for i, point in enumerate(runs[0]["points"]):
                d = [r["default"][i] for r in runs]
                c = [r["constant"][i] for r in runs]
                ok = sum(within(a, b, args.window) for a, b in zip(d, c))
                ad = np.mean([r["after_default"][i] for r in runs])
                ac = np.mean([r["after_constant"][i] for r in runs])
                bd = np.mean([r["before_default"][i] for r in runs])
                bc = np.mean([r["before_constant"][i] for r in runs])
                lines.append(f"| {name} | {family[0]} | {point} | {B._rounds([np.median(d)])} | "
                             f"{B._rounds([np.median(c)])} | {ok} of {args.seeds} | "
                             f"{bd:.4g} / {bc:.4g} | {ad:.4g} / {ac:.4g} |")
            print(lines[-1], flush=True)
    write_report(lines, args.out, time.perf_counter() - start)


if __name__ == "__main__":
    main()
