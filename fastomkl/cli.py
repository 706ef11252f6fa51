"""Command line: ``fastomkl run`` streams a data set through a model; ``fastomkl predict`` applies
a saved run's model to new rows; ``fastomkl reproduce`` runs a paper's tables and figures.

    fastomkl run                                 # Raker, median dictionary, embedded Airfoil
    fastomkl run --csv data.csv --target price --plot mse.png --save model.npz
    fastomkl predict model.npz --csv new.csv     # predictions in the target's units
    fastomkl reproduce                           # the papers that can be reproduced
    fastomkl reproduce 000 --quick               # a short run into a new folder
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time

import numpy as np

from fastomkl.datasets import DATASETS, load_dataset
from fastomkl.kernels import Gaussian, median_dictionary

CHUNK = 256            # samples per compiled call between progress updates
MEDIAN_SAMPLES = 500   # the first samples that set the median dictionary's bandwidths
SCALING_SUFFIX = ".scaling.json"      # beside a --save file: the scaling the run applied


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
    except ValueError as refused:
        if "kernels" not in settings:
            raise
        model.set_params(kernels=[k for k in settings["kernels"] if isinstance(k, Gaussian)])
        try:
            model._check_all_params()
        except ValueError:           # not the kernels, then: the first refusal says what
            raise refused from None
    return model


def read_csv(path: str, target) -> tuple[np.ndarray, np.ndarray, list]:
    """Numeric columns of a CSV with a header (empty cells as NaN); `target` names the label
    column (None: every column is a feature, and y is all NaN)."""
    try:
        with open(path, newline="") as fh:
            rows = list(csv.reader(fh))
    except FileNotFoundError:
        raise SystemExit(f"fastomkl: no such file: {path}") from None
    if len(rows) < 2:
        raise SystemExit(f"fastomkl: {path} needs a header line and at least one row")
    header = [h.strip() for h in rows[0]]
    if target is not None and target not in header:
        raise SystemExit(f"fastomkl: {path} has no column {target!r}; columns: {header}")
    try:
        data = np.array([[float(v) if v.strip() else np.nan for v in r] for r in rows[1:] if r],
                        dtype=np.float64)
    except ValueError as exc:
        raise SystemExit(f"fastomkl: {path} has a non-numeric value ({exc})") from None
    if data.ndim != 2 or data.shape[1] != len(header):
        raise SystemExit(f"fastomkl: {path}: every row must have {len(header)} values")
    j = header.index(target) if target is not None else None
    if j is None:
        return data, np.full(len(data), np.nan), header
    return np.delete(data, j, axis=1), data[:, j], [h for h in header if h != target]


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


class Scaling:
    """The scaling ``fastomkl run`` applies, saved beside the model so new rows get the same:
    x divided by the largest row norm of the training rows (one scalar), y mapped to [0, 1] by the
    training targets' minimum and span."""

    def __init__(self, x_divisor: float, y_min: float, y_span: float, columns, target):
        self.x_divisor, self.y_min, self.y_span = float(x_divisor), float(y_min), float(y_span)
        self.columns, self.target = [str(c) for c in columns], target

    @classmethod
    def fit(cls, X, y, columns, target):
        top = float(np.sqrt((X * X).sum(axis=1)).max()) if X.size else 0.0
        span = float(y.max() - y.min()) if y.size else 0.0
        return cls(top if top > 0 else 1.0, float(y.min()) if y.size else 0.0,
                   span if span > 0 else 1.0, columns, target)

    def x(self, X):
        return X / self.x_divisor

    def y(self, y):
        return (y - self.y_min) / self.y_span

    def y_back(self, y01):
        """Predictions in [0, 1] units back in the target's units."""
        return y01 * self.y_span + self.y_min

    def save(self, path: str) -> None:
        with open(path, "w") as fh:
            json.dump({"format": "fastomkl-cli-scaling", "version": 1,
                       "x_divisor": self.x_divisor, "y_min": self.y_min, "y_span": self.y_span,
                       "columns": self.columns, "target": self.target}, fh, indent=1)

    @classmethod
    def load(cls, path: str):
        try:
            with open(path) as fh:
                doc = json.load(fh)
        except FileNotFoundError:
            raise SystemExit(f"fastomkl: no scaling file {path}: fastomkl predict takes a model "
                             "saved by `fastomkl run --save`, which writes that file beside it; "
                             "a model saved from Python predicts from Python "
                             "(fastomkl.load(path).predict(X))") from None
        except ValueError as exc:
            raise SystemExit(f"fastomkl: {path} is not a scaling file ({exc})") from None
        try:
            if doc.get("format") != "fastomkl-cli-scaling" or doc.get("version") != 1:
                raise ValueError("not a fastomkl scaling file")
            scaling = cls(doc["x_divisor"], doc["y_min"], doc["y_span"], doc["columns"],
                          doc["target"])
            if not (np.isfinite([scaling.x_divisor, scaling.y_min, scaling.y_span]).all()
                    and scaling.x_divisor > 0 and scaling.y_span > 0):
                raise ValueError("x_divisor and y_span must be positive finite numbers")
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise SystemExit(f"fastomkl: {path} is not a valid scaling file ({exc})") from None
        return scaling


def _complete_rows(X, y):
    """Rows without a missing value in x or y (the models learn from complete rows only)."""
    keep = np.isfinite(y) & np.isfinite(X).all(axis=1)
    return X[keep], y[keep], int((~keep).sum())


def _order(args, y) -> str:
    """The row order: --order, or by default shuffled when the file is sorted by its target (a
    prequential pass would see one label, then the other) and natural otherwise (a stream)."""
    if args.order != "auto":
        return args.order
    return "shuffled" if len(y) > 1 and (np.all(np.diff(y) >= 0) or np.all(np.diff(y) <= 0)) \
        else "natural"


def cmd_run(args) -> int:
    from fastomkl.reproduce.common import progress
    for path, option in ((args.save, "--save"), (args.plot, "--plot")):
        if path:
            _check_writable(path, option)
    plt = _plotting() if args.plot else None
    if args.csv:
        X, y, columns = read_csv(args.csv, args.target)
        source, target = args.csv, args.target
    else:
        data = load_dataset(args.dataset)
        X, y, columns, target = data.X, data.y, data.columns, data.target
        source = f"{args.dataset} (embedded)"
    X, y, dropped = _complete_rows(np.asarray(X, dtype=np.float64), np.asarray(y, np.float64))
    if len(y) == 0:
        raise SystemExit(f"fastomkl: {source} has no row without missing values")
    order = _order(args, y)
    if order == "shuffled":
        perm = np.random.default_rng(args.seed).permutation(len(y))
        X, y = X[perm], y[perm]
    scaling = Scaling.fit(X, y, columns, target)
    X, y = scaling.x(X), scaling.y(y)
    try:
        model = _model(args.model, X, args)
    except ValueError as exc:         # an option the model refuses, data that set no scale
        raise SystemExit(f"fastomkl: {exc}") from None
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
    if dropped:
        print(f"            {dropped} rows with a missing value (NaN) in x or y dropped")
    print("order       " + (f"shuffled (seed {args.seed}" + (", the file is sorted by its target)"
                                                           if args.order == "auto" else ")")
                            if order == "shuffled" else "file order"))
    print(f"model       {model!r}")
    print(f"MSE         {mse[-1]:.6g}  (prequential, y in [0, 1])")
    print(f"speed       {elapsed / n * 1e6:.2f} us per sample ({elapsed:.3f} s in all)")
    weights = getattr(model, "weights_", None)
    kernels = getattr(model, "kernels_", None)
    if weights is not None and kernels is not None and len(kernels) > 1:
        # normalised weights, or (VAW2) the signed coefficients of the kernels' predictions
        normalised = bool(np.all(weights >= 0) and abs(np.sum(weights) - 1.0) < 1e-6)
        print("top kernels (weight)" if normalised else "top kernels (coefficient, by size)")
        for i in np.argsort(np.abs(weights))[::-1][:5]:
            print(f"  {i:3d}  {kernels[i]!r:32s} {weights[i]:.4f}")
    if args.save:                     # first, so that a failing plot cannot lose the model
        model.save(args.save)
        scaling.save(args.save + SCALING_SUFFIX)
        print(f"saved       {args.save} (the model, on scaled data) and "
              f"{args.save + SCALING_SUFFIX} (the scaling: fastomkl predict applies it)")
    if plt is not None:
        try:
            plot_mse(plt, mse, f"{type(model).__name__} on {source}", args.plot)
        except Exception as exc:      # noqa: BLE001 - whatever failed, the model is saved
            kept = f" (the model is saved in {args.save})" if args.save else ""
            raise SystemExit(f"fastomkl: could not draw {args.plot}: {exc}{kept}") from None
        print(f"plot        {args.plot}")
    return 0


def predict_saved(model_path: str, X) -> np.ndarray:
    """Predictions, in the target's units, of a model saved by ``fastomkl run --save`` for rows
    ``X`` in the training data's units (the saved scaling applied to x, and undone on y)."""
    import fastomkl
    scaling = Scaling.load(model_path + SCALING_SUFFIX)
    model = fastomkl.load(model_path)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != len(scaling.columns):
        raise ValueError(f"X must have {len(scaling.columns)} columns ({scaling.columns}), "
                         f"got shape {X.shape}")
    return scaling.y_back(model.predict(scaling.x(X)))


def cmd_predict(args) -> int:
    scaling = Scaling.load(args.model + SCALING_SUFFIX)
    X, _, columns = read_csv(args.csv, None)
    missing = [c for c in scaling.columns if c not in columns]
    if missing:
        raise SystemExit(f"fastomkl: {args.csv} lacks the columns {missing} the model learnt from")
    X = X[:, [columns.index(c) for c in scaling.columns]]
    if not np.isfinite(X).all():
        bad = int((~np.isfinite(X).all(axis=1)).sum())
        raise SystemExit(f"fastomkl: {args.csv}: {bad} rows have a missing value (NaN) in "
                         "the model's columns")
    try:
        predictions = predict_saved(args.model, X)
    except ValueError as exc:
        raise SystemExit(f"fastomkl: {exc}") from None
    out = open(args.out, "w") if args.out else sys.stdout
    try:
        out.write(f"{scaling.target or 'prediction'}\n")
        out.writelines(f"{v:.10g}\n" for v in predictions)
    finally:
        if args.out:
            out.close()
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
    run.add_argument("--model", default="raker", type=str.lower, choices=sorted(_regressors()),
                     metavar="MODEL", help="regressor, one of: %(choices)s (any case)")
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
    run.add_argument("--order", default="auto", choices=("auto", "natural", "shuffled"),
                     help="row order: natural (the file's), shuffled (seeded by --seed), or auto: "
                          "shuffled when the file is sorted by its target (magic04), else natural")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    pred = sub.add_parser("predict", formatter_class=HelpFormatter,
                          help="predict new rows with a model saved by fastomkl run --save",
                          description="Predict the rows of a CSV with a model saved by "
                                      "`fastomkl run --save FILE`: the run's scaling (saved in "
                                      f"FILE{SCALING_SUFFIX}) is applied to x and undone on the "
                                      "predictions, which are in the target's units.")
    pred.add_argument("model", help="the file given to fastomkl run --save")
    pred.add_argument("--csv", required=True,
                      help="a CSV with a header holding the columns the model learnt from")
    pred.add_argument("--out", help="write the predictions here (default: standard output)")
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
    if args.command == "predict":
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        return cmd_predict(args)
    return cmd_reproduce(args)


if __name__ == "__main__":
    sys.exit(main())
