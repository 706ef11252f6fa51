"""Figures 2-4 of Jezequel, Gaillard & Rudi (PKAWV), drawn from the runs of ``paper002``.

* Figure 3: regret against t of every learner under its own greedy adversary.
* Figures 4 and 2: per data set, the average loss (left) and the cumulative time (right) against t,
  each curve ending where its learner's wall-clock budget ran out.  Figure 4 shows casp and phishing
  (for the paper's casp and ijcnn1), Figure 2 magic04 (for its cod-rna; SUSY has no stand-in).
"""
from __future__ import annotations

import os

import numpy as np

from fastomkl.reproduce.common import save_figure

STYLES = {"KRR": ("black", "-"), "Kernel-AWV": ("black", "-"), "Taylor M=2": ("tab:blue", "-"),
          "Taylor M=3": ("tab:blue", "--"), "Taylor M=4": ("tab:blue", ":"),
          "Nyström": ("tab:green", "-"), "Pros-N-KONS": ("tab:red", "-"),
          "FOGD": ("tab:orange", "-")}
FIGURES = {4: ("casp", "phishing"), 2: ("magic04",)}
# A stand-in says so in its panel's title: the paper's figure shows another data set there.
TITLES = {"casp": "casp (regression)",
          "phishing": "phishing: stand-in for ijcnn1\n(d = 68, not 22; Taylor M > 2 not run)",
          "magic04": "magic04: stand-in for cod-rna"}


def regret(plt, path, regrets, bound, label) -> None:
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, reg in regrets.items():
        color, style = STYLES[name]
        ax.plot(np.arange(1, len(reg) + 1), reg, color=color, ls=style, label=name)
    if bound is not None:
        ax.plot(np.arange(1, len(bound) + 1), bound, color="0.6", ls="-.",
                label="Prop. 1 bound (Kernel-AWV)")
    ax.set(xlabel="t", ylabel="regret", title=f"Fig. 3: regret in the adversarial setting\n{label}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)


def draw_curves(plt, out, suffix, curves, datasets, label) -> None:
    """Figures 4 and 2 for the data sets that were run."""
    for number, names in FIGURES.items():
        shown = [name for name in names if name in datasets]
        if shown:
            loss_and_time(plt, os.path.join(out, f"paper002_fig{number}{suffix}.png"), curves,
                          shown, f"Fig. {number}: average loss and time, {label}")


def loss_and_time(plt, path, curves, datasets, title) -> None:
    fig, axes = plt.subplots(len(datasets), 2, figsize=(10.4, 3.6 * len(datasets)),
                             squeeze=False)
    fig.suptitle(title, fontsize=10)
    for (ax_loss, ax_time), name in zip(axes, datasets):
        classification = name != "casp"
        for (data, learner), rows in curves.items():
            if data != name or isinstance(rows, str):
                continue
            color, style = STYLES[learner]
            t = rows[:, 0]
            ax_loss.plot(t, rows[:, 1] / t, color=color, ls=style, label=learner)
            ax_time.plot(t, rows[:, 2], color=color, ls=style, label=learner)
        ax_loss.set(xscale="log", xlabel="t", title=TITLES[name],
                    ylabel="average classification error" if classification
                    else "average square loss")
        ax_time.set(xscale="log", yscale="log", xlabel="t", ylabel="time (s)", title=TITLES[name])
        ax_loss.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)
