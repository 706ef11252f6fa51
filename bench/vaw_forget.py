"""Forgetting in the VAW family: does ``forget`` < 1 help on real streams, and what does it cost?

    python bench/vaw_forget.py [--rows 8000] [--out bench/results/vaw_forget.md]

On the shipped regression data sets elevators, airfoil, ailerons, casp, naval and concrete, the
first `rows` rows in their recorded order (natural: the order a service sees them in, with
whatever drift the recording has) and a seeded random sample of as many rows (shuffled:
stationary by construction), x scaled to the unit ball and y to [0, 1] (``bench/defaults.py``'s
``load``), the prequential MSE of VAW2 (the default dictionary of 76 kernels, m = 50) and VAW (one
kernel, the default Gaussian) at their defaults, with forget in {1, 0.9999, 0.999, 0.99}, and its
ratio to forget = 1.  The cost: the time per sample of ``predict_learn`` with each forget against
forget = 1, best of three runs each, interleaved, in one process (the machine is shared: only the
ratios of one run compare), and where the extra time of VAW's one expert (dimension 100) goes:
keeping S alone, and recomputing the inverse from it every 100 updates as ``refresh_every=100``
does, against forget = 0.999 (whose period is 100 at that dimension).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import fastomkl as fo  # noqa: E402
from defaults import load  # noqa: E402
from fastomkl.reproduce.common import code_commit  # noqa: E402

DATASETS = ("elevators", "airfoil", "ailerons", "casp", "naval", "concrete")
ORDERS = ("natural", "shuffled")
GAMMAS = (1.0, 0.9999, 0.999, 0.99)
MODELS = {"VAW2": lambda gamma: fo.VAW2(forget=gamma, random_state=0),
          "VAW": lambda gamma: fo.VAW(forget=gamma, random_state=0)}


def prequential_mse(name: str, gamma: float, X, y) -> float:
    return float(np.mean((MODELS[name](gamma).predict_learn(X, y) - y) ** 2))


def seconds_per_sample(makers: dict, X, y, repeats: int = 3) -> dict:
    """label -> best time per sample of predict_learn of makers[label]() over `repeats`
    interleaved runs."""
    best = {label: np.inf for label in makers}
    for _ in range(repeats):
        for label, make in makers.items():
            model = make()
            start = time.perf_counter()
            model.predict_learn(X, y)
            best[label] = min(best[label], (time.perf_counter() - start) / len(y))
    return best


# VAW's one expert of dimension 2m = 100 with S kept, refreshed or discounted (see the docstring)
PARTS = {"forget = 1": {}, "S kept, never recomputed": {"refresh_every": 10 ** 9},
         "S kept, recomputed every 100": {"refresh_every": 100},
         "forget = 0.999 (period 100)": {"forget": 0.999}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=8000)
    parser.add_argument("--out", default=str(HERE / "results" / "vaw_forget.md"))
    args = parser.parse_args()
    command = "python bench/vaw_forget.py" + (f" --rows {args.rows}" if args.rows != 8000 else "")
    lines = ["# Forgetting in the VAW family (`forget`)", "",
             f"`{command}`, at commit {code_commit()}: the first {args.rows} rows of each data set "
             f"in their recorded order (natural) or a seeded random sample of {args.rows} rows "
             f"(shuffled), x scaled to the unit ball, y to [0, 1]; prequential MSE at forget = 1 "
             f"and MSE(forget) / MSE(1) at each forget < 1 (below 1: forgetting helps).  VAW2 and "
             f"VAW at their defaults (VAW2: 76 kernels, m = 50, lam = 0.01, lam_meta auto; VAW: "
             f"Gaussian(1), m = 50, lam = 1), center=True.", "",
             "| data set | rows | order | model | MSE, forget = 1 | "
             + " | ".join(f"{g} / 1" for g in GAMMAS[1:]) + " |",
             "|---|---|---|---|---|" + "---|" * (len(GAMMAS) - 1)]
    ratios = {}
    for data in DATASETS:
        for order in ORDERS:
            X, y, _ = load(data, args.rows, 0, False, order)
            for name in MODELS:
                mse = {gamma: prequential_mse(name, gamma, X, y) for gamma in GAMMAS}
                row = [mse[g] / mse[1.0] for g in GAMMAS[1:]]
                ratios.setdefault((name, order), []).append(row)
                lines.append(f"| {data} | {len(y)} | {order} | {name} | {mse[1.0]:.4g} | "
                             + " | ".join(f"{r:.3f}" for r in row) + " |")
                print(lines[-1], flush=True)
    lines += ["", "Geometric mean of the ratios over the six data sets:", "",
              "| order | model | " + " | ".join(f"{g} / 1" for g in GAMMAS[1:]) + " |",
              "|---|---|" + "---|" * (len(GAMMAS) - 1)]
    for (name, order), rows in sorted(ratios.items(), key=lambda item: (item[0][1], item[0][0])):
        means = np.exp(np.log(np.array(rows)).mean(axis=0))
        lines.append(f"| {order} | {name} | " + " | ".join(f"{m:.3f}" for m in means) + " |")
    X, y, _ = load("casp", args.rows, 0, False, "natural")
    lines += ["", f"Time per sample of `predict_learn` (casp, {len(y)} rows, natural order, best "
              "of 3 interleaved runs) and its ratio to forget = 1:", "",
              "| model | forget = 1 | " + " | ".join(f"{g}" for g in GAMMAS[1:]) + " |",
              "|---|---|" + "---|" * (len(GAMMAS) - 1)]
    for name in MODELS:
        best = seconds_per_sample({g: (lambda g=g: MODELS[name](g)) for g in GAMMAS}, X, y)
        lines.append(f"| {name} | {best[1.0] * 1e6:.1f} us | "
                     + " | ".join(f"{best[g] * 1e6:.1f} us ({best[g] / best[1.0]:.2f}x)"
                                  for g in GAMMAS[1:]) + " |")
        print(lines[-1], flush=True)
    best = seconds_per_sample({label: (lambda kw=kw: fo.VAW(random_state=0, **kw))
                               for label, kw in PARTS.items()}, X, y)
    lines += ["", "Where VAW's extra time goes (the same rows, best of 3 interleaved runs):", "",
              "| VAW | time per sample | ratio |", "|---|---|---|"]
    lines += [f"| {label} | {best[label] * 1e6:.2f} us | {best[label] / best['forget = 1']:.2f}x |"
              for label in PARTS]
    print("\n".join(lines[-len(PARTS):]), flush=True)
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
