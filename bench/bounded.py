"""Bounded by default: memory and cost per sample on a long stream, and what the budget costs.

    python bench/bounded.py [--max-t 100000] [--time-cap 150] [--n-accuracy 4000] [--only NAME]

Part 1.  Every family's regressor, at its defaults, learns one endless synthetic stream (d = 10, x uniform in [-1, 1]^d scaled to the unit ball, y = sin(3 x_0) + noise,
labels sign(y) for the classifiers) in batches of ``predict_learn``; at t = 10^3, 10^4, 10^5 (and
10^6 with ``--max-t 1000000``) it reports the state bytes, ``sum(a.nbytes for a in
model._engine.get_state().values())``, and the microseconds per sample of the 1,000 rounds that
end at t.  A checkpoint whose estimated run time passes ``--time-cap`` seconds is left out (and
said so).  The models with a budget parameter come first; the others keep a state of fixed size by
construction (random or Taylor features, or VAW's matrices), which the table shows.  The
classifiers share their regressors' engines and budgets, so they are not measured apart.

Part 2.  The accuracy cost of the budget: prequential error (``predict_learn``, every sample
predicted before it is learnt) of the default model and of the papers' unbounded setting
(``budget=None`` / ``max_centres=None``) on the first ``--n-accuracy`` rows of shipped data sets
in one fixed random order (seed 0; magic04's file is sorted by class), X scaled to the unit ball,
regression targets to [0, 1]: mean squared error for regression, error rate for
classification.

Results go to bench/results/bounded.md with the command, the CPU and its instruction set.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from machine import describe

import fastomkl
from fastomkl.datasets import load_dataset, scale_to_unit_ball, scale_to_unit_interval
from fastomkl.pkawv import NystromAWV, NystromAWVClassifier

HERE = Path(__file__).resolve().parent

# (name, budget parameter, regressor, classifier or None): the models with a budget, whose
# unbounded setting (the parameter None) Part 2 measures against the default
FAMILIES = [
    ("OMKR (76 kernels)", "budget", fastomkl.OMKR, fastomkl.OMKRClassifier),
    ("OnlineKernelRegressor", "budget", fastomkl.OnlineKernelRegressor, None),
    ("OKS", "budget", fastomkl.OKS, fastomkl.OKSClassifier),
    ("OKS++", "budget", fastomkl.OKSPlusPlus, fastomkl.OKSPlusPlusClassifier),
    ("IOKS", "budget", fastomkl.IOKS, fastomkl.IOKSClassifier),
    ("NystromAWV", "max_centres", NystromAWV, NystromAWVClassifier),
    ("KernelAWV", "max_samples", fastomkl.KernelAWV, fastomkl.KernelAWVClassifier),
    ("ProsNKons", "max_centres", fastomkl.ProsNKons, fastomkl.ProsNKonsClassifier),
    ("DoublySGDRegressor", "n_features_max", fastomkl.DoublySGDRegressor,
     fastomkl.DoublySGDClassifier),
]
# (name, budget parameter, regressor): budgets that are the algorithm itself (no unbounded
# setting), measured in Part 1 only
ALGORITHM_BUDGETS = [
    ("NORMA", "budget", fastomkl.NORMA),        # its truncation
    ("LKMBooks", "B", fastomkl.LKMBooks),       # paper 001's budgeted baseline
]
# (name, regressor): the models whose state has a fixed size whatever t, measured in Part 1 only
FIXED_SIZE = [
    ("Raker (76 kernels)", fastomkl.Raker),
    ("AdaRaker (76 kernels)", fastomkl.AdaRaker),
    ("OMKL-GF (76 kernels)", fastomkl.OMKLGF),
    ("OMKL-SFG (76 kernels)", fastomkl.OMKLSFG),
    ("OMKL-SFG-R (76 kernels)", fastomkl.OMKLSFGR),
    ("RFOMKR (76 kernels)", fastomkl.RFOMKR),
    ("OnlineMKL", fastomkl.OnlineMKL),
    ("FOGD", fastomkl.FOGD),
    ("RF-OKS", fastomkl.RFOKS),
    ("RF-OKS++", fastomkl.RFOKSPlusPlus),
    ("RF-IOKS", fastomkl.RFIOKS),
    ("VAW", fastomkl.VAW),
    ("VAW2 (76 kernels)", fastomkl.VAW2),
    ("VAW-EWA (76 kernels)", fastomkl.VAWEWA),
    ("VAWMeta (76 kernels)", fastomkl.VAWMeta),
    ("ConcatVAW (76 kernels)", fastomkl.ConcatVAW),
    ("TaylorAWV", fastomkl.TaylorAWV),
]
WINDOW = 1000


def make(name, cls, **params):
    if "random_state" in cls().get_params():
        params["random_state"] = 0
    return cls(**params)


def stream(n, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d)) / np.sqrt(d)
    return X, np.sin(3 * X[:, 0] * np.sqrt(d)) + 0.1 * rng.standard_normal(n)


def state_bytes(model) -> int:
    return sum(a.nbytes for a in model._engine.get_state().values())


def cost_rows(max_t: int, time_cap: float) -> list[str]:
    checkpoints = [t for t in (1_000, 10_000, 100_000, 1_000_000) if t <= max_t]
    rows = []
    models = [(name, param, cls) for name, param, cls, _ in FAMILIES] + ALGORITHM_BUDGETS
    models += [(name, None, cls) for name, cls in FIXED_SIZE]
    for name, param, cls in models:
        model = make(name, cls)
        budget = f"{param}={model.get_params()[param]}" if param else "none (fixed size)"
        t, cells, note = 0, [], ""
        rng_seed = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fastomkl.BudgetWarning)
            for target in checkpoints:
                if cells:
                    estimate = cells[-1][2] * 1e-6 * (target - t)   # the last µs/sample
                    if estimate > time_cap:
                        note = f"t = {target:,} left out (about {estimate:.0f} s)"
                        break
                while t < target - WINDOW:          # learn up to the window, in batches
                    n = min(10_000, target - WINDOW - t)
                    X, y = stream(n, seed=rng_seed)
                    rng_seed += 1
                    model.partial_fit(X, y)
                    t += n
                X, y = stream(WINDOW, seed=rng_seed)
                rng_seed += 1
                start = time.perf_counter()
                model.predict_learn(X, y)
                us = (time.perf_counter() - start) / WINDOW * 1e6
                t += WINDOW
                cells.append((target, state_bytes(model), us))
        reached = getattr(model, "budget_reached_", None) if param else None   # LKMBooks: none
        rows.append((name, budget, cells, reached, note))
        print(name, cells, note, flush=True)
    lines = ["| model (default) | budget | " + " | ".join(
        f"t = {t:,}: MB, µs/sample" for t in checkpoints) + " | budget full at the end |",
        "|---|---|" + "---|" * len(checkpoints) + "---|"]
    for name, budget, cells, reached, note in rows:
        by_t = {t: (b, us) for t, b, us in cells}
        parts = [f"{by_t[t][0] / 1e6:.2f} MB, {by_t[t][1]:.0f} µs" if t in by_t else "–"
                 for t in checkpoints]
        full = {True: "yes", False: "no", None: "–"}[reached]
        lines.append(f"| {name} | {budget} | " + " | ".join(parts)
                     + f" | {full}{'; ' + note if note else ''} |")
    return lines


def dataset(name, n, classify):
    X, y = load_dataset(name)
    order = np.random.default_rng(0).permutation(X.shape[0])[:n]
    X, y = scale_to_unit_ball(X[order]), np.asarray(y)[order]
    if classify:
        return X, np.where(y == np.unique(y)[-1], 1, -1)
    return X, scale_to_unit_interval(np.asarray(y, dtype=float))


def accuracy_rows(n: int) -> list[str]:
    sets = [("casp", False), ("naval", False), ("magic04", True)]
    lines = ["| model | data set (first n rows) | metric | default budget | unbounded "
             "(papers') | change | seconds (default / unbounded) |",
             "|---|---|---|---|---|---|---|"]
    for name, param, reg, clf in FAMILIES:
        for data, classify in sets:
            cls = clf if classify else reg
            if cls is None:
                continue
            X, y = dataset(data, n, classify)
            errors, seconds = [], []
            for value in ("default", None):
                model = make(name, cls) if value == "default" else make(name, cls, **{param: None})
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", fastomkl.BudgetWarning)
                    pred = model.predict_learn(X, y)
                seconds.append(time.perf_counter() - start)
                errors.append(float(np.mean(pred != y)) if classify
                              else float(np.mean((pred - y) ** 2)))
            metric = "error rate" if classify else "MSE"
            change = (errors[0] - errors[1]) / errors[1] * 100 if errors[1] else 0.0
            lines.append(f"| {cls.__name__} | {data} (n = {X.shape[0]:,}) | {metric} | "
                         f"{errors[0]:.5f} | {errors[1]:.5f} | {change:+.1f} % | "
                         f"{seconds[0]:.1f} / {seconds[1]:.1f} |")
            print(lines[-1], flush=True)
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-t", type=int, default=100_000)
    parser.add_argument("--time-cap", type=float, default=150.0)
    parser.add_argument("--n-accuracy", type=int, default=4000)
    parser.add_argument("--out", default=str(HERE / "results" / "bounded.md"))
    parser.add_argument("--only", help="the families whose name contains this (e.g. KernelAWV)")
    args = parser.parse_args(argv)
    if args.only:
        FAMILIES[:] = [family for family in FAMILIES if args.only in family[0]]
        ALGORITHM_BUDGETS[:] = [family for family in ALGORITHM_BUDGETS if args.only in family[0]]
        FIXED_SIZE[:] = [family for family in FIXED_SIZE if args.only in family[0]]
    command = "python bench/bounded.py " + " ".join(argv if argv is not None else sys.argv[1:])
    cost = cost_rows(args.max_t, args.time_cap)
    print("\n".join(cost), flush=True)
    accuracy = accuracy_rows(args.n_accuracy)
    text = "\n".join([
        "# Bounded by default: memory, cost per sample and the accuracy cost of the budget", "",
        f"Command: `{command.strip()}`  ", f"Machine: {describe()}  ",
        f"Python {platform.python_version()}, NumPy {np.__version__}, "
        f"fastomkl {fastomkl.__version__}", "",
        "## State bytes and µs per sample at t rounds (each model at its defaults)", "",
        "A synthetic stream, d = 10; µs per sample: the 1,000 rounds of `predict_learn` ending "
        "at t.", "", *cost, "",
        "## Prequential error: default budget against the papers' unbounded setting", "",
        *accuracy, ""])
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
