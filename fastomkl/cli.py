"""Command line: ``fastomkl run`` streams a dataset through a model; ``fastomkl reproduce`` runs a
paper's tables.

    fastomkl run                                 # Raker, paper 000's 76 kernels, embedded Airfoil
    fastomkl run --csv data.csv --target price --plot mse.png --save model.npz
    fastomkl reproduce 000 --table 1 --quick
"""
from __future__ import annotations

import argparse
import csv
import sys
import time

import numpy as np

from fastomkl.datasets import (DATASETS, impute_column_means, load_dataset, scale_to_unit_ball,
                               scale_to_unit_interval)

CHUNK = 256            # samples per compiled call between progress updates


def _regressors() -> dict:
    from fastomkl._base import _REGISTRY, BinaryClassifier, OnlineEstimator
    return {name.lower(): cls for name, cls in sorted(_REGISTRY.items())
            if issubclass(cls, OnlineEstimator) and not issubclass(cls, BinaryClassifier)
            and not name.startswith("_")}


def read_csv(path: str, target: str) -> tuple[np.ndarray, np.ndarray, list]:
    """Numeric columns of a CSV with a header; `target` names the label column."""
    try:
        with open(path, newline="") as fh:
            rows = list(csv.reader(fh))
    except FileNotFoundError:
        raise SystemExit(f"fastomkl: no such file: {path}") from None
    if len(rows) < 2:
        raise SystemExit(f"fastomkl: {path} needs a header line and at least one row")
    header = [h.strip() for h in rows[0]]
    if target not in header:
        raise SystemExit(f"fastomkl: {path} has no column {target!r}; columns: {header}")
    try:
        data = np.array([[float(v) if v.strip() else np.nan for v in r] for r in rows[1:] if r],
                        dtype=np.float64)
    except ValueError as exc:
        raise SystemExit(f"fastomkl: {path} has a non-numeric value ({exc})") from None
    if data.ndim != 2 or data.shape[1] != len(header):
        raise SystemExit(f"fastomkl: {path}: every row must have {len(header)} values")
    j = header.index(target)
    keep = ~np.isnan(data[:, j])
    return np.delete(data[keep], j, axis=1), data[keep, j], [h for h in header if h != target]


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
        return tqdm(total=total, unit="sample", file=sys.stderr, leave=False)
    except ImportError:
        return None


def cmd_run(args) -> int:
    models = _regressors()
    if args.model not in models:
        raise SystemExit(f"fastomkl: unknown model {args.model!r}; choose from {sorted(models)}")
    if args.csv:
        X, y, _ = read_csv(args.csv, args.target)
        source = args.csv
    else:
        X, y = load_dataset(args.dataset)
        source = f"{args.dataset} (embedded)"
    X = scale_to_unit_ball(impute_column_means(X))
    y = scale_to_unit_interval(y)
    cls = models[args.model]
    accepted = cls._param_names()
    model = cls(**{k: v for k, v in (("n_components", args.n_components),
                                      ("random_state", args.seed)) if k in accepted})
    n = len(y)
    preds = np.empty(n)
    bar = _progress(n, n >= 20 * CHUNK and not args.quiet)
    start = time.perf_counter()
    for lo in range(0, n, CHUNK):
        preds[lo:lo + CHUNK] = model.predict_learn(X[lo:lo + CHUNK], y[lo:lo + CHUNK])
        if bar is not None:
            bar.update(min(CHUNK, n - lo))
    elapsed = time.perf_counter() - start
    if bar is not None:
        bar.close()
    mse = np.cumsum((preds - y) ** 2) / np.arange(1, n + 1)
    print(f"data        {source}: {n} samples, {X.shape[1]} features "
          "(x scaled into the unit ball, y into [0, 1])")
    print(f"model       {model!r}")
    print(f"MSE         {mse[-1]:.6g}  (prequential, y in [0, 1])")
    print(f"speed       {elapsed / n * 1e6:.2f} us per sample ({elapsed:.3f} s in all)")
    weights = getattr(model, "weights_", None)
    kernels = getattr(model, "kernels_", None)
    if weights is not None and kernels is not None and len(kernels) > 1:
        print("top kernels (weight)")
        for i in np.argsort(weights)[::-1][:5]:
            print(f"  {i:3d}  {kernels[i]!r:32s} {weights[i]:.4f}")
    if args.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise SystemExit("fastomkl: --plot needs matplotlib (pip install 'fastomkl[plot]')") from None
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(np.arange(1, n + 1), mse)
        ax.set(xlabel="samples seen", ylabel="prequential MSE", yscale="log",
               title=f"{type(model).__name__} on {source}")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"plot        {args.plot}")
    if args.save:
        model.save(args.save)
        print(f"saved       {args.save}")
    return 0


def cmd_reproduce(args) -> int:
    from fastomkl.reproduce import available, run
    if args.paper in (None, "-h", "--help"):
        print("usage: fastomkl reproduce PAPER [options]   (PAPER --help for its options)")
        print(f"papers: {', '.join(available())}")
        return 0
    try:
        return run(args.paper, args.rest)
    except ValueError as exc:
        raise SystemExit(f"fastomkl: {exc}") from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="fastomkl", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="stream a dataset through a model (prequential MSE, speed)")
    run.add_argument("--model", default="raker", help="regressor name (default: raker)")
    run.add_argument("--dataset", default="airfoil", choices=DATASETS,
                     help="embedded dataset when no --csv is given (default: airfoil)")
    run.add_argument("--csv", help="a CSV file with a header line")
    run.add_argument("--target", help="the CSV's label column (required with --csv)")
    run.add_argument("--n-components", type=int, default=50, help="random features per kernel")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--plot", metavar="FILE.png", help="plot the MSE over time (needs matplotlib)")
    run.add_argument("--save", metavar="FILE", help="save the trained model")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    rep = sub.add_parser("reproduce", add_help=False,
                         help="reproduce a paper's tables into bench/results/ "
                              "(fastomkl reproduce PAPER --help for its options)")
    rep.add_argument("paper", nargs="?", help="paper number, e.g. 000 or 003")
    rep.add_argument("rest", nargs=argparse.REMAINDER)
    args, rest = parser.parse_known_args(argv)
    if args.command is None:
        args = parser.parse_args(["run"] + list(argv or []))
        rest = []
    if args.command == "run":
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        if args.csv and not args.target:
            parser.error("--csv needs --target COLUMN")
        return cmd_run(args)
    return cmd_reproduce(args)


if __name__ == "__main__":
    sys.exit(main())
