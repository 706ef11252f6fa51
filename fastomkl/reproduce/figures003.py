"""Figures 1-2 of Rokhlin & Gurtovaya (double VAW), drawn from the runs behind Table 2.

* Figure 1: MSE over the iterations of Raker, OMKL-GF, VAW-Aggr, VAW-EWA, VAW-ML-Prod and VAW²
  (ridge mode, mean over the seeds), with the notebooks' colours and first plotted iteration.  By
  default the running MSE (1/t) sum_{s<=t} e_s; ``plot_style="paper"`` draws what the notebooks
  plotted, that running MSE divided once more by t (so the published curves fall like 1/t).
* Figure 2: the terminal kernel weights of VAW², VAW-EWA and VAW-ML-Prod (ridge mode, mean over
  the seeds).  The notebooks overwrote VAW²'s weights with VAW²(trunc)'s before plotting;
  ``plot_style="paper"`` does the same.
"""
from __future__ import annotations

import os

import numpy as np

from fastomkl.reproduce.common import save_figure

# Notebook styles (colour, line style) and first plotted iteration per data set.
STYLES = {"Raker": ("tab:blue", "-"), "OMKL-GF": ("tab:green", ":"), "VAW-Aggr": ("tab:blue", ":"),
          "VAW-EWA": ("tab:green", "-"), "VAW-ML-Prod": ("black", "-"), "VAW²": ("tab:red", "-")}
START = {"AR(4)": 100, "Airfoil": 200, "Bias": 700, "Concrete": 100, "Naval": 2000}
WEIGHT_METHODS = ("VAW²", "VAW-EWA", "VAW-ML-Prod")
N_GAUSSIAN = 51


def draw_all(plt, out, curves, weights, plot_style, label) -> None:
    """Figures 1-2 for the data sets that were run (the paper's four real ones; AR(4) only when it
    is the only one)."""
    run = sorted({key[0] for key in list(curves) + list(weights)}, key=list(START).index)
    shown = [d for d in run if d != "AR(4)"] or run
    if not shown:
        return
    if curves:
        running_mse(plt, os.path.join(out, "paper003_fig1.png"), curves, shown, plot_style, label)
    if weights:
        terminal_weights(plt, os.path.join(out, "paper003_fig2.png"), weights, shown,
                         plot_style, label)


def _panels(plt, n, title):
    cols = min(n, 2)
    rows = (n + 1) // 2
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=10)
    return fig, list(axes.flat[:n])


def plotted_mse(errors, plot_style: str = "running") -> np.ndarray:
    """Figure 1's curve from per-sample squared errors: the running MSE (1/t) sum_{s<=t} e_s, or
    with ``plot_style="paper"`` that value divided once more by t, as the notebooks plotted it."""
    t = np.arange(1, len(errors) + 1)
    mse = np.cumsum(errors) / t
    return mse / t if plot_style == "paper" else mse


def running_mse(plt, path, curves, datasets, plot_style, label) -> None:
    what = ("running MSE / t, as the notebooks plotted it" if plot_style == "paper"
            else "running MSE (1/t) Σ (ŷ − y)²")
    fig, axes = _panels(plt, len(datasets), f"Fig. 1: {what}, ridge mode, mean over the seeds\n"
                                            f"{label}")
    for ax, dataset in zip(axes, datasets):
        for method, (color, style) in STYLES.items():
            errors = curves.get((dataset, method, "ridge"))
            if errors is None:
                continue
            first = min(START[dataset], len(errors) // 2)
            t = np.arange(1, len(errors) + 1)
            ax.plot(t[first:], plotted_mse(errors, plot_style)[first:], color=color, ls=style,
                    label=method)
        ax.set(xlabel="Iteration number", ylabel="MSE", title=dataset)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)


def terminal_weights(plt, path, weights, datasets, plot_style, label) -> None:
    fig, axes = _panels(plt, len(datasets), "Fig. 2: terminal weights of VAW², VAW-EWA and "
                                            f"VAW-ML-Prod, ridge mode, mean over the seeds\n{label}")
    sources = {"VAW²": "VAW²(trunc)" if plot_style == "paper" else "VAW²",
               "VAW-EWA": "VAW-EWA", "VAW-ML-Prod": "VAW-ML-Prod"}
    colors = {"VAW²": "tab:red", "VAW-EWA": "tab:green", "VAW-ML-Prod": "black"}
    for ax, dataset in zip(axes, datasets):
        for method in WEIGHT_METHODS:
            w = weights.get((dataset, sources[method], "ridge"))
            if w is not None:
                ax.plot(np.arange(1, len(w) + 1), w, color=colors[method], label=method, lw=1)
        ax.axhline(0, color="0.7", lw=0.5)
        ax.axvline(N_GAUSSIAN + 0.5, color="0.7", lw=0.5, ls="--")
        ax.set_xticks([1, 25, N_GAUSSIAN, 60, 76], ["1", "Gaussian", str(N_GAUSSIAN), "Laplacian",
                                                     "76"])
        ax.set(ylabel="Weights", title=dataset)
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)
