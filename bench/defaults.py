"""Do the default models learn without tuning?  The default of each family against a grid of its step.

For every shipped data set (rows in a seeded random order, x scaled to the unit ball, regression y
scaled to [0, 1], or left in its raw units with ``--raw``) and every family, the prequential error
(MSE, or the error rate for classification) of

* the default model (``eta="auto"``),
* the same model at each step of the grid eta in {0.01, 0.1, 0.5, 1, 2} x {constant, 1/sqrt(t)}
  (VAW-EWA: its rate eta in {0.01, ..., 2}; VAW2, which has no step: its ridge lam),
* the mean / majority predictor (prequential: the running mean or majority of the past labels),

the ratio default / best of the grid, and whether any step (VAW2: lam) in [1e-4, 1e4] gave a
non-finite prediction.  Results: ``bench/results/defaults.md`` (and ``defaults_raw.md``).

    python bench/defaults.py                 # y scaled to [0, 1]
    python bench/defaults.py --raw           # y in its raw units
    python bench/defaults.py --rows 2000     # quicker
    python bench/defaults.py --data DIR      # the .npz files of DIR instead of the shipped ones
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

import fastomkl as fo
from fastomkl.datasets import (impute_column_means, load_arrays, scale_to_unit_ball,
                               scale_to_unit_interval)

HERE = Path(__file__).resolve().parent
REGRESSION = ("airfoil", "concrete", "naval", "bias_correction", "casp", "elevators", "ailerons",
              "bank32nh", "cpusmall", "istanbul_stock")
CLASSIFICATION = ("magic04", "phishing", "a9a")
GRID = [(eta, schedule) for eta in (0.01, 0.1, 0.5, 1.0, 2.0) for schedule in ("constant", "inv_sqrt")]
SWEEP = np.logspace(-4, 4, 9)
D = 50                      # random features per kernel
SMALL_DICTIONARY = [fo.Gaussian(s) for s in (0.1, 0.3, 1.0, 3.0)] + [fo.Laplacian(s) for s in (0.3, 3.0)]


def _step_grid(eta, schedule):
    return {"eta": eta, "eta_schedule": schedule}


def _points(name, values):
    return [((name, v),) for v in values]


def _sweep_step(eta):
    return {"eta": eta, "eta_schedule": "constant"}


# (family, regressor factory, classifier factory, grid of parameter sets, rows cap or None, the
# parameters of one point of the never-NaN sweep).  A factory takes the keyword arguments of one
# grid point ({} for the default).  The VAW family has no step size: VAW-EWA's grid and sweep are
# its rate, VAW2's its ridge lam (on 6 kernels: a VAW expert costs (2D)^2 per round).
FAMILIES = [
    ("Raker", lambda **kw: fo.Raker(n_components=D, random_state=0, **kw),
     lambda **kw: fo.RakerClassifier(n_components=D, random_state=0, **kw), GRID, None,
     _sweep_step),
    ("OMKL-GF", lambda **kw: fo.OMKLGF(n_components=D, random_state=0, **kw),
     lambda **kw: fo.OMKLGFClassifier(n_components=D, random_state=0, **kw), GRID, None,
     _sweep_step),
    ("OMKL-SFG", lambda **kw: fo.OMKLSFG(n_components=D, random_state=0, **kw),
     lambda **kw: fo.OMKLSFGClassifier(n_components=D, random_state=0, **kw), GRID, None,
     _sweep_step),
    ("OMKL-SFG-R", lambda **kw: fo.OMKLSFGR(n_components=D, random_state=0, **kw),
     lambda **kw: fo.OMKLSFGRClassifier(n_components=D, random_state=0, **kw), GRID, None,
     _sweep_step),
    ("RFOMKR", lambda **kw: fo.RFOMKR(n_components=D, random_state=0, **kw),
     lambda **kw: fo.RFOMKRClassifier(n_components=D, random_state=0, **kw), GRID, None,
     _sweep_step),
    ("OMKR", lambda **kw: fo.OMKR(SMALL_DICTIONARY, **kw),
     lambda **kw: fo.OMKRClassifier(SMALL_DICTIONARY, **kw), GRID, 1000, _sweep_step),
    ("VAW-EWA", lambda **kw: fo.VAWEWA(SMALL_DICTIONARY, n_components=D, random_state=0, **kw),
     lambda **kw: fo.VAWEWAClassifier(SMALL_DICTIONARY, n_components=D, random_state=0, **kw),
     _points("eta", (0.01, 0.1, 0.5, 1.0, 2.0)), None, lambda eta: {"eta": eta}),
    ("VAW2", lambda **kw: fo.VAW2(SMALL_DICTIONARY, n_components=D, random_state=0, **kw),
     lambda **kw: fo.VAW2Classifier(SMALL_DICTIONARY, n_components=D, random_state=0, **kw),
     _points("lam", (0.01, 0.1, 1.0, 10.0)), None, lambda lam: {"lam": lam}),
]


def _grid_kwargs(point):
    return dict(point) if isinstance(point[0], tuple) else _step_grid(*point)


def load(name: str, rows: int, seed: int, raw: bool, data_dir=None):
    data = load_arrays(name, data_dir)
    X, y = impute_column_means(data["X"]), np.asarray(data["y"], dtype=np.float64)
    labelled = np.flatnonzero(np.isfinite(y))          # bias_correction has rows without a target
    order = labelled[np.random.default_rng(seed).permutation(len(labelled))[:rows]]
    X, y = scale_to_unit_ball(X[order]), y[order]
    if name in REGRESSION and not raw:
        y = scale_to_unit_interval(y)
    return X, y


def prequential_error(model, X, y, classify: bool) -> float:
    pred = _quietly(model.predict_learn, X, y)
    if classify:
        return float(np.mean(pred != y))
    return float(np.mean((pred - y) ** 2)) if np.isfinite(pred).all() else float("nan")


def _quietly(learn, X, y):
    """learn(X, y) without the warnings of refused updates (the sweep provokes them on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fo.NumericalWarning)
        return learn(X, y)


def baseline(y, classify: bool) -> float:
    """The running mean (or majority) of the labels seen before each round."""
    seen = np.concatenate([[0.0], np.cumsum(y)[:-1]])
    counts = np.maximum(np.arange(len(y)), 1)
    if classify:
        guess = np.where(seen >= 0, 1.0, -1.0)
        return float(np.mean(guess != y))
    return float(np.mean((seen / counts - y) ** 2))


def evaluate(family, make, grid, sweep, X, y, classify):
    start = time.perf_counter()
    default = prequential_error(make(), X, y, classify)
    errors = {point: prequential_error(make(**_grid_kwargs(point)), X, y, classify)
              for point in grid}
    finite = [np.isfinite(_quietly(make(**sweep(v)).predict_learn, X[:500], y[:500])).all()
              for v in SWEEP]
    best_point = min(errors, key=lambda p: errors[p] if np.isfinite(errors[p]) else np.inf)
    return {"family": family, "default": default, "best": errors[best_point],
            "best_point": best_point, "never_nan": all(finite),
            "seconds": time.perf_counter() - start}


def run(rows: int, seed: int, raw: bool, families, datasets, data_dir=None):
    results = []
    for name in datasets:
        classify = name in CLASSIFICATION
        X, y = load(name, rows, seed, raw, data_dir)
        base = baseline(y, classify)
        for family, reg, clf, grid, cap, sweep in families:
            n = len(y) if cap is None else min(cap, len(y))
            r = evaluate(family, clf if classify else reg, grid, sweep, X[:n], y[:n], classify)
            r.update(dataset=name, rows=n, baseline=baseline(y[:n], classify) if cap else base,
                     task="classification" if classify else "regression")
            results.append(r)
            print(f"{name:16s} {family:11s} default {r['default']:.4g}  best {r['best']:.4g} "
                  f"{r['best_point']}  ratio {r['default'] / r['best']:.2f}  base "
                  f"{r['baseline']:.4g}  never NaN {r['never_nan']}  ({r['seconds']:.1f} s)",
                  flush=True)
    return results


def report(results, rows, seed, raw) -> str:
    units = "raw units" if raw else "y scaled to [0, 1]"
    lines = [f"# Default models against the best of their step grid ({units})", "",
             f"`python bench/defaults.py{' --raw' if raw else ''} --rows {rows} --seed {seed}`: "
             f"rows in a seeded random order (at most {rows}; OMKR at most 1000, it is O(t) per "
             f"round), x scaled to the unit ball; prequential MSE (regression) or error rate "
             f"(classification).  Grid: eta in {{0.01, 0.1, 0.5, 1, 2}} x {{constant, 1/sqrt(t)}}; "
             f"'never NaN': every constant eta in 1e-4 ... 1e4 gave finite predictions.", "",
             "| data set | family | default | best of grid (eta, schedule) | default / best | "
             "mean or majority | never NaN |", "|---|---|---|---|---|---|---|"]
    for r in results:
        point = r["best_point"]
        eta, schedule = (point[0][1], point[0][0]) if isinstance(point[0], tuple) else point
        lines.append(f"| {r['dataset']} | {r['family']} | {r['default']:.4g} | {r['best']:.4g} "
                     f"({eta}, {schedule}) | {r['default'] / r['best']:.2f} | {r['baseline']:.4g} "
                     f"| {'yes' if r['never_nan'] else '**no**'} |")
    ratios = {}
    for r in results:
        ratios.setdefault((r["family"], r["task"]), []).append(r["default"] / r["best"])
    lines += ["", "Worst ratio default / best of grid, per family and task:", "",
              "| family | task | worst ratio | median ratio |", "|---|---|---|---|"]
    for (family, task), v in ratios.items():
        lines.append(f"| {family} | {task} | {max(v):.2f} | {np.median(v):.2f} |")
    beaten = sum(r["default"] < r["baseline"] for r in results)
    lines += ["", f"The default beats the mean / majority predictor in {beaten} of {len(results)} "
              f"cells."]
    over = [r for r in results if r["default"] > 1.2 * r["best"]]
    lines += ["", f"Cells where the default is more than 1.2x the best of the grid: {len(over)} of "
              f"{len(results)}" + "".join(f"; {r['dataset']} {r['family']} "
                                          f"{r['default'] / r['best']:.2f}" for r in over) + "."]
    unbeaten = [r for r in results if r["default"] >= r["baseline"]]
    lines += ["", "Cells where the default does not beat the mean / majority predictor, and how the "
              "best of the grid does there: " + ("none." if not unbeaten else "; ".join(
                  f"{r['dataset']} {r['family']} (best of grid / baseline "
                  f"{r['best'] / r['baseline']:.2f})" for r in unbeaten) + ".")]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--raw", action="store_true", help="leave regression targets in raw units")
    parser.add_argument("--families", nargs="+", default=[f[0] for f in FAMILIES])
    parser.add_argument("--datasets", nargs="+", default=list(REGRESSION + CLASSIFICATION))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--data", default=None,
                        help="folder of .npz data sets to read instead of the shipped copies")
    args = parser.parse_args(argv)
    families = [f for f in FAMILIES if f[0] in args.families]
    results = run(args.rows, args.seed, args.raw, families, args.datasets, args.data)
    out = args.out or HERE / "results" / ("defaults_raw.md" if args.raw else "defaults.md")
    out.write_text(report(results, args.rows, args.seed, args.raw))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
