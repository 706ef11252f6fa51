"""Command line: ``fastomkl run`` streams a data set through a model; ``fastomkl reproduce`` runs a
paper's tables and figures.

    fastomkl run                                 # Raker, median dictionary, embedded Airfoil
    fastomkl run --csv data.csv --target price --plot mse.png --save model.npz
    fastomkl reproduce                           # the papers that can be reproduced
    fastomkl reproduce 000 --quick               # a short run into a new folder
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import numpy as np

from fastomkl.datasets import (DATASETS, impute_column_means, load_dataset, scale_to_unit_ball,
                               scale_to_unit_interval)
from fastomkl.kernels import Gaussian, median_dictionary

CHUNK = 256            # samples per compiled call between progress updates
MEDIAN_SAMPLES = 500   # the first samples that set the median dictionary's bandwidths


def _regressors() -> dict:
    import fastomkl
    from fastomkl._estimator import _REGISTRY, BinaryClassifier, MulticlassClassifier, OnlineEstimator
    fastomkl._import_all()
    return {name.lower(): cls for name, cls in sorted(_REGISTRY.items())
            if issubclass(cls, OnlineEstimator)
            and not issubclass(cls, (BinaryClassifier, MulticlassClassifier))
            and not name.startswith("_") and not getattr(cls, "_unsupervised", False)
            and _needs_nothing(cls)}


def _needs_nothing(cls) -> bool:
    """Whether the class runs with its defaults (not those that need centres or a feature map
    given in Python)."""
    try:
        cls()._check_all_params()
    except (TypeError, ValueError):      # required arguments, or defaults that need the data's
        return False
    return True


def _model(name: str, X: np.ndarray, args):
    """The model --model names, on the kernels --kernels chooses (its Gaussian members for the
    models that take only Gaussian kernels; the single-kernel models keep their own bandwidth)."""
    cls = _regressors()[name]
    accepted = cls._param_names()
    settings = {"n_components": args.n_components, "random_state": args.seed}
    if args.kernels == "median":
        settings["kernels"] = median_dictionary(X[:MEDIAN_SAMPLES])
    model = cls(**{k: v for k, v in settings.items() if k in accepted})
    try:
        model._check_all_params()
    except ValueError:
        if "kernels" not in settings:
            raise
        model.set_params(kernels=[k for k in settings["kernels"] if isinstance(k, Gaussian)])
    return model


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


def _check_writable(path: str, option: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise SystemExit(f"fastomkl: {option} {path}: no such folder {folder}")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise SystemExit(f"fastomkl: {option} {path}: not writable")


def _plotting():
    """pyplot, checked before the run so a missing matplotlib costs no work."""
    from fastomkl.reproduce.common import pyplot
    plt = pyplot()
    if plt is None:
        raise SystemExit("fastomkl: --plot needs matplotlib (pip install 'fastomkl[plot]')")
    return plt


def plot_mse(plt, mse, title: str, path: str) -> None:
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(np.arange(1, len(mse) + 1), mse)
    ax.set(xlabel="samples seen", ylabel="prequential MSE", yscale="log", title=title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def cmd_run(args) -> int:
    from fastomkl.reproduce.common import progress
    for path, option in ((args.save, "--save"), (args.plot, "--plot")):
        if path:
            _check_writable(path, option)
    plt = _plotting() if args.plot else None
    if args.csv:
        X, y, _ = read_csv(args.csv, args.target)
        source = args.csv
    else:
        X, y = load_dataset(args.dataset)
        source = f"{args.dataset} (embedded)"
    X = scale_to_unit_ball(impute_column_means(X))
    y = scale_to_unit_interval(y)
    model = _model(args.model, X, args)
    n = len(y)
    preds = np.empty(n)
    start = time.perf_counter()
    with progress(n, args.quiet, "sample", type(model).__name__) as bar:
        for lo in range(0, n, CHUNK):
            preds[lo:lo + CHUNK] = model.predict_learn(X[lo:lo + CHUNK], y[lo:lo + CHUNK])
            bar.update(min(CHUNK, n - lo))
    elapsed = time.perf_counter() - start
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
    if args.save:                     # first, so that a failing plot cannot lose the model
        model.save(args.save)
        print(f"saved       {args.save}")
    if plt is not None:
        try:
            plot_mse(plt, mse, f"{type(model).__name__} on {source}", args.plot)
        except Exception as exc:      # noqa: BLE001 - whatever failed, the model is saved
            kept = f" (the model is saved in {args.save})" if args.save else ""
            raise SystemExit(f"fastomkl: could not draw {args.plot}: {exc}{kept}") from None
        print(f"plot        {args.plot}")
    return 0


REPRODUCE_USAGE = """usage: fastomkl reproduce PAPER [options]    (PAPER --help: that paper's options)

Runs a paper's experiments and writes its tables (Markdown, with the published numbers beside
ours) and figures (PNG, needs fastomkl[plot]) into --out DIR, by default a new folder
./fastomkl-reproduce-PAPER-YYYYmmdd-HHMMSS.  --quick makes a short run that says so.

papers:
"""


def cmd_reproduce(args) -> int:
    from fastomkl.reproduce import describe, run
    if args.paper in (None, "-h", "--help"):
        print(REPRODUCE_USAGE + describe())
        return 0
    try:
        return run(args.paper, args.rest)
    except ValueError as exc:
        raise SystemExit(f"fastomkl: {exc}") from None


def main(argv=None) -> int:
    from fastomkl.reproduce import describe
    from fastomkl.reproduce.common import HelpFormatter
    parser = argparse.ArgumentParser(prog="fastomkl", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="papers for `fastomkl reproduce`:\n" + describe())
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", formatter_class=HelpFormatter,
                         help="stream a data set through a model (prequential MSE, speed)",
                         description="Stream a data set through a model, one prediction before "
                                     "each label; print the prequential MSE and the speed.")
    run.add_argument("--model", default="raker", choices=sorted(_regressors()), metavar="MODEL",
                     help="regressor, one of: %(choices)s")
    run.add_argument("--dataset", default="airfoil", choices=DATASETS,
                     help="embedded data set when no --csv is given")
    run.add_argument("--csv", help="a CSV file with a header line")
    run.add_argument("--target", help="the CSV's label column (required with --csv)")
    run.add_argument("--kernels", default="median", choices=("median", "paper000"),
                     help="median: Gaussian and Laplacian bandwidths around the median distance "
                          f"of the first {MEDIAN_SAMPLES} samples (fastomkl.median_dictionary); "
                          "paper000: the 76 kernels of paper 000")
    run.add_argument("--n-components", type=int, default=50, help="random features per kernel")
    run.add_argument("--seed", type=int, default=0, help="random_state of the model")
    run.add_argument("--plot", metavar="FILE.png", help="plot the MSE over time (needs matplotlib)")
    run.add_argument("--save", metavar="FILE", help="save the trained model")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    rep = sub.add_parser("reproduce", add_help=False,
                         help="reproduce a paper's tables and figures into a new folder "
                              "(fastomkl reproduce lists the papers)")
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
