"""Figures 1-6 of Ghari & Shen (JMLR 2023), drawn from the runs behind Tables 1-5.

* Figures 1-2: the two feedback graphs, from the library's own code (a fitted ``OMKLGF``'s
  bipartite graph; ``fastomkl.graph.similarity_graph`` and ``dominating_set`` for Alg. 4).
* Figures 3-4: final MSE and run time against M for OMKL-GF, SFG and SFG-R (Tables 3-5's runs),
  ours as mean ± standard deviation over the draws, the paper's tabulated values dashed.
* Figure 5: MSE(t) = (1/t) sum of the squared errors up to t, mean over the draws, M = 10.
* Figure 6: cumulative regret sum_t [(y_hat_t - y_t)^2 - l*_t] of GF, SFG and SFG-R, where l*_t is
  the per-sample squared error of the best batch kernel ridge regression (lambda = 1e-3, fitted on
  the whole stream) among the 76 kernels.  The released code adds the regulariser of the
  prediction to each term; this plots the regret as the paper defines it.

A figure of a quick run (fewer draws or samples) says so on the plot itself, since it is often
seen without its table: its title names the run's size, and Figures 3-4, which draw the paper's
full-data numbers beside it, label those as full-data values.
"""
from __future__ import annotations

import contextlib
import os

import numpy as np

from fastomkl.reproduce.common import save_figure

COLORS = {"OMKR": "tab:gray", "Raker": "tab:blue", "OMKL-GF": "tab:red", "OMKL-SFG": "tab:green",
          "OMKL-SFG-R": "tab:purple"}
GRAPH_ALGORITHMS = ("OMKL-GF", "OMKL-SFG", "OMKL-SFG-R")
FIG5_ALGORITHMS = ("OMKR", "Raker", "OMKL-GF", "OMKL-SFG", "OMKL-SFG-R")
MAX_REGRET_SAMPLES = 2500      # the batch comparator solves 76 dense n x n systems
RIDGE_LAMBDA = 1e-3


def draw_all(plt, args, runs, sweeps) -> None:
    """Every figure the runs of this invocation support, into args.out."""
    from fastomkl.reproduce.paper000 import LABELS, SWEEP, SWEEP_TABLES, stream

    def out(number: int) -> str:
        return os.path.join(args.out, f"paper000_fig{number}{_suffix(args)}.png")
    bipartite_graph(plt, out(1), args)
    similarity_graph_figure(plt, out(2), args)
    if sweeps:
        paper = {alg: tab for alg, tab in (SWEEP_TABLES[t] for t in (3, 4, 5))}
        against_m(plt, out(3), sweeps, paper, SWEEP, LABELS, args, index=0)
        against_m(plt, out(4), sweeps, paper, SWEEP, LABELS, args, index=1)
    if runs:
        mse_over_time(plt, out(5), runs, LABELS, args)
        comparators = {d: best_kernel_ridge_errors(*stream(d, args)) for d in args.datasets}
        cumulative_regret(plt, out(6), runs, comparators, LABELS, args)


def _suffix(args) -> str:
    return ("_legacy" if args.legacy else "") + ("_quick" if args.partial else "")


def _panels(plt, n: int, title: str, args, quick_note: str = ""):
    """``n`` panels under a title that names the run's size, and ``quick_note`` in a quick run."""
    cols = min(n, 2)
    rows = (n + 1) // 2
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    note = f"; {quick_note}" if args.partial and quick_note else ""
    fig.suptitle(f"{title}\n{_subtitle(args)}{note}", fontsize=10)
    return fig, list(axes.flat[:n])


def _subtitle(args) -> str:
    size = f"{args.draws} draws" + (f", first {args.n_samples:,} samples per data set"
                                    if args.n_samples else ", full data sets")
    return ("quick run: " if args.partial else "") + size + (", --legacy" if args.legacy else "")


def _quick_note(args, what: str) -> str:
    """The line a quick-mode drawing without panels carries on the plot itself."""
    return f"\nquick run ({_subtitle(args)[len('quick run: '):]}); {what}" if args.partial else ""


# -- Figures 1-2: the feedback graphs --------------------------------------------------------------
def _node(ax, xy, label, highlight=False, square=False):
    ax.scatter(*xy, s=900, marker="s" if square else "o", zorder=3,
               facecolor="gold" if highlight else "white", edgecolor="black")
    ax.text(*xy, label, ha="center", va="center", fontsize=8, zorder=4)


def _arrow(ax, start, end, highlight=False):
    ax.annotate("", xy=end, xytext=start, zorder=2,
                arrowprops=dict(arrowstyle="-|>", shrinkA=15, shrinkB=15, lw=2 if highlight else 1,
                                color="tab:red" if highlight else "0.5",
                                connectionstyle="arc3,rad=0.12"))


def bipartite_graph(plt, path, args) -> None:
    """Figure 1: the bipartite graph B_t of OMKL-GF (Alg. 2) after 100 rounds of Airfoil."""
    from fastomkl.graph_omkl import OMKLGF
    from fastomkl.kernels import paper000_dictionary
    from fastomkl.reproduce.paper000 import load_paper_dataset
    X, y = load_paper_dataset("airfoil")
    kernels = paper000_dictionary()[::10]
    # one expert per kernel (the paper's graph), with the step the committed figure was drawn with
    model = OMKLGF(kernels, n_components=10, M=3, J=2, eta="auto", random_state=0)
    model.predict_learn(X[:100], y[:100])
    A = model.graph_                              # (n_kernels, J): kernel i on selective node j
    n, J = A.shape
    fig, ax = plt.subplots(figsize=(7, 3.6))
    kernel_xy = [(i, 1.0) for i in range(n)]
    node_xy = [((n - 1) * (j + 1) / (J + 1), 0.0) for j in range(J)]
    for j in range(J):
        for i in np.flatnonzero(A[:, j]):
            _arrow(ax, node_xy[j], kernel_xy[i], highlight=j == J - 1)
    for i, xy in enumerate(kernel_xy):
        _node(ax, xy, f"v{i + 1}")
    for j, xy in enumerate(node_xy):
        _node(ax, xy, f"v_s,{j + 1}", highlight=j == J - 1, square=True)
    ax.set(xlim=(-0.7, n - 0.3), ylim=(-0.45, 1.45), xticks=[], yticks=[])
    ax.set_title(f"Fig. 1: bipartite feedback graph of OMKL-GF (Alg. 2) after 100 rounds of "
                 f"Airfoil\n{n} kernels (every 10th of the 76), J = {J} selective nodes, "
                 f"M = 3 draws per node\nnode v_s,{J} and its kernels highlighted"
                 + _quick_note(args, "this figure is the same in every run"), fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)


def similarity_graph_figure(plt, path, args) -> None:
    """Figure 2: Alg. 4's similarity graph on 5 Gaussian kernels (sigma = 10^(i-3)), M = 3."""
    from fastomkl.graph import dominating_set, similarity_graph
    from fastomkl.kernels import Gaussian
    A = similarity_graph([Gaussian(10.0 ** (i - 3)) for i in range(1, 6)], 3)
    dom = set(dominating_set(A).tolist())
    n = len(A)
    angle = np.pi / 2 - 2 * np.pi * np.arange(n) / n
    xy = np.column_stack([np.cos(angle), np.sin(angle)])
    fig, axes = plt.subplots(1, 2, figsize=(8, 4))
    for ax, drawn in zip(axes, (None, 1)):
        for i in range(n):
            for j in np.flatnonzero(A[i]):
                if i != j:
                    _arrow(ax, xy[i], xy[j], highlight=i == drawn)
        for i in range(n):
            _node(ax, xy[i], f"v{i + 1}", highlight=drawn is not None and A[drawn, i],
                  square=i in dom)
        ax.set(xlim=(-1.4, 1.4), ylim=(-1.4, 1.4), aspect="equal", xticks=[], yticks=[])
    axes[0].set_title("(a) out-degree 3 with the self-loop;\nsquares: dominating set", fontsize=9)
    out = ", ".join(f"v{j + 1}" for j in np.flatnonzero(A[1]))
    axes[1].set_title(f"(b) drawn node v2 and its out-neighbours\n{out}", fontsize=9)
    fig.suptitle("Fig. 2: similarity feedback graph (Alg. 4, exact divergence (27)) on Gaussian "
                 "kernels σ = 10^(i−3), i = 1..5"
                 + _quick_note(args, "this figure does not depend on the data"), fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)


# -- Figures 3-4: against M ------------------------------------------------------------------------
def against_m(plt, path, sweeps, paper, sweep, labels, args, index) -> None:
    """index 0: final MSE (Fig. 3); 1: run time (Fig. 4).  ``sweeps`` is {algorithm: {dataset:
    [(MSE x 1e3 per draw, seconds per draw) for each M]}}."""
    datasets = list(next(iter(sweeps.values())))
    what = "MSE (×10⁻³)" if index == 0 else "run time (s)"
    paper_label = "paper (full data)" if args.partial else "paper"
    fig, axes = _panels(plt, len(datasets),
                        f"Fig. {3 + index}: {what} against M — ours (mean ± std) solid, the "
                        "paper's Tables 3-5 dashed", args,
                        quick_note="the paper's points are full-data runs")
    for ax, dataset in zip(axes, datasets):
        for algorithm, rows in sweeps.items():
            ours = [pair[index] for pair in rows[dataset]]
            ax.errorbar(sweep, [v.mean() for v in ours],
                        yerr=[v.std(ddof=1) if len(v) > 1 else 0.0 for v in ours],
                        color=COLORS[algorithm], marker="o", capsize=3,
                        label=f"{algorithm}: ours")
            ax.plot(sweep, paper[algorithm][dataset][index], color=COLORS[algorithm], ls="--",
                    marker="x", alpha=0.7, label=f"{algorithm}: {paper_label}")
        ax.set(yscale="log", xlabel="M (kernels per round)", ylabel=what, xticks=sweep,
               title=labels[dataset])
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)


# -- Figures 5-6: over time ------------------------------------------------------------------------
def mse_over_time(plt, path, runs, labels, args) -> None:
    fig, axes = _panels(plt, len(args.datasets),
                        "Fig. 5: MSE(t) = mean squared error of the first t predictions, M = 10, "
                        "mean over the draws", args)
    for ax, dataset in zip(axes, args.datasets):
        for algorithm in FIG5_ALGORITHMS:
            errors = np.array([r[2] for r in runs[algorithm][dataset]])
            t = np.arange(1, errors.shape[1] + 1)
            ax.plot(t, (np.cumsum(errors, axis=1) / t).mean(axis=0), color=COLORS[algorithm],
                    label=algorithm)
        ax.set(yscale="log", xlabel="t", ylabel="MSE(t)", title=labels[dataset])
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)


def one_blas_thread():
    """A context running BLAS on one thread (threadpoolctl, installed with fastomkl[plot]).

    The comparator's 76 factorisations of order 1000 are too small for OpenBLAS's threads, which
    mostly wait for each other, and far worse when other processes share the cores: Airfoil's
    first 1000 samples took 57 s with 2 threads and 3.4 s with one on a 2-core machine under load.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:           # without it the figure is the same, only slower
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def best_kernel_ridge_errors(X, y, lam: float = RIDGE_LAMBDA):
    """Per-sample squared errors of the best batch kernel ridge fit among the 76 kernels (the
    smallest total squared error on the stream it was fitted on), or None above
    MAX_REGRET_SAMPLES samples."""
    from scipy.linalg import cho_factor, cho_solve
    from scipy.spatial.distance import cdist

    from fastomkl.kernels import Gaussian, paper000_dictionary
    if len(y) > MAX_REGRET_SAMPLES:
        return None
    sq, l1 = cdist(X, X, "sqeuclidean"), cdist(X, X, "cityblock")
    best = None
    with one_blas_thread():
        for kernel in paper000_dictionary():
            K = np.exp(-sq / (2 * kernel.sigma ** 2)) if isinstance(kernel, Gaussian) else \
                np.exp(-l1 / kernel.sigma)
            coef = cho_solve(cho_factor(K + lam * np.eye(len(y))), y)
            errors = (K @ coef - y) ** 2
            if best is None or errors.sum() < best.sum():
                best = errors
    return best


def cumulative_regret(plt, path, runs, comparators, labels, args) -> None:
    fig, axes = _panels(plt, len(args.datasets),
                        "Fig. 6: cumulative regret against the best batch kernel ridge fit "
                        "(λ = 1e-3) of the 76 kernels, M = 10, mean over the draws", args)
    for ax, dataset in zip(axes, args.datasets):
        best = comparators[dataset]
        ax.set(xlabel="t", ylabel="cumulative regret", title=labels[dataset])
        if best is None:
            ax.text(0.5, 0.5, f"not drawn: the batch comparator is computed for at most\n"
                    f"{MAX_REGRET_SAMPLES} samples (use --n-samples)", ha="center",
                    va="center", transform=ax.transAxes, fontsize=8)
            continue
        for algorithm in GRAPH_ALGORITHMS:
            errors = np.array([r[2] for r in runs[algorithm][dataset]])
            regret = np.cumsum(errors - best, axis=1).mean(axis=0)
            ax.plot(np.arange(1, len(regret) + 1), regret, color=COLORS[algorithm],
                    label=algorithm)
        if ax.get_lines() and min(line.get_ydata().min() for line in ax.get_lines()) > 0:
            ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)
