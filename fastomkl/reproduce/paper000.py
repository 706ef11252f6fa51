"""Reproduce Tables 1-5 of Ghari & Shen, "Graph-Aided Online Multi-Kernel Learning" (JMLR 2023).

    fastomkl reproduce 000 --table 1            # MSE of the 8 algorithms on the 4 datasets
    fastomkl reproduce 000 --table 2            # their run times (the same runs as Table 1)
    fastomkl reproduce 000 --table 3            # OMKL-GF versus M (4 and 5: SFG, SFG-R)
    fastomkl reproduce 000 --table 1 --legacy   # with the released code's behaviour
    fastomkl reproduce 000 --table 1 --quick    # 2 draws, first 1000 samples (CI)
    fastomkl reproduce 000 --table 1 2 3 4 5 --out DIR   # every table and Figures 1-6 into DIR

Protocol (the paper's experiments): one prequential pass in file order; MSE(T) = mean squared
error of the predictions made before each label, y scaled into [0, 1] (reported x 1e-3); x divided
by its largest row norm; Bias: 21 predictors, column means imputed (the 27 missing targets too); Naval: the 15 measurements, target lever
position.  76 kernels (paper000_dictionary), D = 50, every rate 0.1 / sqrt(t), lambda = 1e-3,
M = 10, J = 2, 20 draws of the random features (shared by every random-feature model of a draw, as
in the released code); OMKR, RBF-1 and POLY-2 are deterministic and run once.  The paper's
experimental settings are used in both modes: the GF graph is frozen after 300 rounds and SFG /
SFG-R exploit argmax u after 300 rounds (the paper's text).  ``--legacy`` switches to the released
code's behaviour instead (``fastomkl.graph_omkl.legacy_options``; OMKR with exp(-||d||^2 / a);
RFOMKR predicting with un-normalised weights; Bias with the 20 columns the released code selects
and 500 instead of 300 rounds).

Results go to ``DIR/paper000_table{N}[_legacy][_quick].md`` (``--out DIR``; by default a new
folder in the current directory, the committed full runs are in ``bench/results/``), with the
paper's figures beside them (``paper000_fig{N}.png``, needs matplotlib): Figures 1-2 (the feedback
graphs) always, 5-6 (MSE(t), cumulative regret) from the runs of Tables 1-2, 3-4 (MSE and run time
against M) from those of Tables 3-5.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

from fastomkl.datasets import (impute_column_means, load_dataset, scale_to_unit_ball,
                               scale_to_unit_interval)
from fastomkl.graph_omkl import OMKLGF, OMKLSFG, OMKLSFGR, _cached_graph, legacy_options
from fastomkl.kernels import Gaussian, Polynomial
from fastomkl.omkr import OMKR, RFOMKR, OnlineKernelRegressor, omkr_legacy_dictionary
from fastomkl.raker import Raker
from fastomkl.reproduce import figures000 as figures
from fastomkl.reproduce.common import (HelpFormatter, add_output_arguments, figure_backend,
                                       note, output_folder, progress, write_text)

DATASETS = ("airfoil", "bias_correction", "concrete", "naval")
LABELS = {"airfoil": "Airfoil", "bias_correction": "Bias", "concrete": "Concrete",
          "naval": "Naval"}
ALGORITHMS = ("OMKR", "RBF-1", "POLY-2", "RFOMKR", "Raker", "OMKL-GF", "OMKL-SFG", "OMKL-SFG-R")
DETERMINISTIC = ("OMKR", "RBF-1", "POLY-2")
SWEEP = (1, 5, 10, 15, 20)

# Tables 1-5 of the paper (MSE x 1e-3, run time in seconds), copied from spec 000 §7.
TABLE1 = {
    "OMKR": (32.68, 15.54, 41.72, 9.22), "RBF-1": (33.17, 15.96, 41.73, 11.99),
    "POLY-2": (355.67, 23.36, 50.06, 90.06), "RFOMKR": (350.52, 405.44, 210.42, 347.06),
    "Raker": (28.64, 12.70, 35.22, 11.35), "OMKL-GF": (25.73, 8.15, 34.45, 5.11),
    "OMKL-SFG": (32.49, 12.06, 37.75, 5.35), "OMKL-SFG-R": (33.99, 13.24, 38.58, 7.89),
}
TABLE2 = {
    "OMKR": (889.36, 80010.03, 547.93, 163688.82), "RBF-1": (14.39, 3914.67, 6.60, 1499.78),
    "POLY-2": (7.22, 195.19, 3.33, 951.93), "RFOMKR": (2.17, 27.72, 1.53, 18.37),
    "Raker": (3.81, 46.28, 2.71, 31.24), "OMKL-GF": (2.56, 17.01, 2.06, 10.63),
    "OMKL-SFG": (1.65, 13.58, 1.34, 9.00), "OMKL-SFG-R": (2.81, 17.86, 2.24, 11.45),
}
SWEEP_TABLES = {  # table -> algorithm, dataset -> (MSE per M, time per M)
    3: ("OMKL-GF", {
        "airfoil": ((49.53, 24.95, 25.73, 26.47, 26.91), (0.70, 1.53, 2.56, 3.40, 4.30)),
        "bias_correction": ((12.56, 7.11, 8.15, 8.93, 9.79), (5.44, 11.24, 17.01, 23.17, 27.74)),
        "concrete": ((79.27, 34.58, 34.45, 34.04, 33.84), (0.55, 1.27, 2.06, 2.82, 3.65)),
        "naval": ((14.60, 4.78, 5.11, 5.69, 6.06), (3.58, 7.61, 10.63, 14.16, 18.11))}),
    4: ("OMKL-SFG", {
        "airfoil": ((51.03, 33.49, 32.49, 31.82, 30.89), (1.17, 1.36, 1.65, 1.98, 2.27)),
        "bias_correction": ((12.35, 11.78, 12.06, 12.11, 12.13), (6.58, 9.94, 13.57, 17.49, 21.26)),
        "concrete": ((79.60, 48.03, 37.75, 33.83, 32.59), (1.03, 1.15, 1.34, 1.60, 1.79)),
        "naval": ((8.15, 6.18, 5.35, 4.85, 4.68), (4.45, 6.22, 9.00, 11.69, 14.09))}),
    5: ("OMKL-SFG-R", {
        "airfoil": ((106.66, 38.03, 33.99, 32.42, 31.21), (2.28, 2.32, 2.81, 2.97, 3.18)),
        "bias_correction": ((48.81, 14.77, 13.24, 12.78, 12.57), (10.87, 13.98, 17.86, 21.13, 25.13)),
        "concrete": ((110.08, 50.96, 38.58, 34.32, 32.85), (1.91, 2.06, 2.24, 2.51, 2.63)),
        "naval": ((95.37, 14.32, 7.89, 6.03, 5.33), (6.77, 8.55, 11.45, 13.65, 15.84))}),
}


def load_paper_dataset(name: str, legacy: bool = False):
    """(X, y) of a dataset with the paper's preprocessing (see the module docstring)."""
    X, y = load_dataset(name)
    if name == "naval":
        X = X[:, :15]
    if name == "bias_correction":
        X = impute_column_means(X)
        y = np.where(np.isnan(y), np.nanmean(y), y)       # mean-imputed like every column
        if legacy:
            X = X[:, 1:]             # the released code's column slice drops Present_Tmax
    return scale_to_unit_ball(X), scale_to_unit_interval(y)


def _t0(name: str, legacy: bool) -> int:
    return 500 if legacy and name == "bias_correction" else 300


PAPER_ETA = 0.1      # every model of the paper steps 0.1 / sqrt(t) (the library default adapts)


def make_model(algorithm: str, dataset: str, seed: int, legacy: bool, M: int = 10):
    """The model the paper runs as `algorithm`, in paper (default) or released-code mode."""
    t0 = _t0(dataset, legacy)
    if algorithm == "OMKR":
        return OMKR(omkr_legacy_dictionary() if legacy else None, eta=PAPER_ETA, budget=None)
    if algorithm == "RBF-1":
        return OnlineKernelRegressor(Gaussian.from_gamma(1.0), eta=PAPER_ETA, budget=None)
    if algorithm == "POLY-2":
        return OnlineKernelRegressor(Polynomial(2), eta=PAPER_ETA, budget=None)
    if algorithm == "RFOMKR":
        return RFOMKR(normalize=not legacy, eta=PAPER_ETA, random_state=seed)
    if algorithm == "Raker":
        return Raker(regularizer_after_update=legacy, eta=PAPER_ETA, random_state=seed)
    if algorithm == "OMKL-GF":
        opts = legacy_options("OMKLGF", dataset) if legacy else {"freeze_graph_after": t0}
        return OMKLGF(M=M, J=2, eta=PAPER_ETA, random_state=seed, **opts)
    if algorithm == "OMKL-SFG":
        opts = legacy_options("OMKLSFG", dataset) if legacy else {"exploit_after": t0}
        return OMKLSFG(M=M, eta=PAPER_ETA, random_state=seed, **opts)
    if algorithm == "OMKL-SFG-R":
        opts = legacy_options("OMKLSFGR", dataset) if legacy else {"exploit_after": t0}
        return OMKLSFGR(M=M, eta=PAPER_ETA, random_state=seed, **opts)
    raise ValueError(algorithm)


def run_one(algorithm, dataset, X, y, seed, legacy, M=10):
    """(final MSE, wall seconds, per-sample squared errors) of one online pass; the graph is
    rebuilt inside the timing."""
    _cached_graph.cache_clear()
    model = make_model(algorithm, dataset, seed, legacy, M)
    start = time.perf_counter()
    pred = model.predict_learn(X, y)
    elapsed = time.perf_counter() - start
    errors = (pred - y) ** 2
    return float(np.mean(errors)), elapsed, errors


def _fmt(values, scale=1.0, digits=2):
    v = np.asarray(values) * scale
    if len(v) == 1:
        return f"{v[0]:.{digits}f}"
    return f"{v.mean():.{digits}f} ± {v.std():.{digits}f}"


def _size(args) -> str:
    return f"{args.draws} draws" + (f", first {args.n_samples} samples" if args.n_samples
                                    else ", full datasets")


def _header(title, args, wall):
    mode = "released-code switches (--legacy)" if args.legacy else "paper-faithful defaults"
    quick = f" — quick run ({_size(args)})" if args.partial else ""
    return [f"# Paper 000 — {title}{quick}", "",
            f"Mode: {mode}; {_size(args)}.  "
            f"Command: `fastomkl reproduce 000 {' '.join(args.argv)}`.",
            f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, NumPy {np.__version__}; wall time of the runs behind this "
            f"table: "
            f"{wall:.1f} s.", ""]


def stream(dataset, args):
    """The data set of a run, cut to --n-samples."""
    X, y = load_paper_dataset(dataset, args.legacy)
    if args.n_samples:
        X, y = X[:args.n_samples], y[:args.n_samples]
    return X, y


def tables_1_2(args):
    results = {a: {} for a in ALGORITHMS}
    start = time.perf_counter()
    n_runs = sum(1 if a in DETERMINISTIC else args.draws for a in ALGORITHMS) * len(args.datasets)
    with progress(n_runs, args.quiet, "run", "Tables 1-2") as bar:
        for dataset in args.datasets:
            X, y = stream(dataset, args)
            for algorithm in ALGORITHMS:
                draws = 1 if algorithm in DETERMINISTIC else args.draws
                runs = []
                for seed in range(draws):
                    runs.append(run_one(algorithm, dataset, X, y, seed, args.legacy))
                    bar.update()
                results[algorithm][dataset] = runs
                note(bar, f"{LABELS[dataset]:9s} {algorithm:11s} MSE "
                          f"{_fmt([r[0] for r in runs], 1e3)}  time "
                          f"{_fmt([r[1] for r in runs], 1, 3)} s")
    return results, time.perf_counter() - start


def _table(results, paper, index, scale, digits, per_dataset_note=""):
    cols = [LABELS[d] for d in DATASETS]
    last = "diff" if index == 0 else "paper / ours"
    lines = ["| algorithm | " + " | ".join(f"{c}: paper | {c}: ours | {c}: {last}" for c in cols)
             + " |", "|---" * (1 + 3 * len(cols)) + "|"]
    for algorithm in ALGORITHMS:
        row = [algorithm]
        for j, dataset in enumerate(DATASETS):
            p = paper[algorithm][j]
            runs = results[algorithm].get(dataset)
            if runs is None:
                row += [f"{p:g}", "–", "–"]
                continue
            ours = np.array([r[index] for r in runs]) * scale
            diff = f"{ours.mean() - p:+.{digits}f}" if index == 0 else f"{p / ours.mean():.0f}× faster"
            row += [f"{p:.2f}", _fmt(ours, 1.0, digits), diff]
        lines.append("| " + " | ".join(row) + " |")
    return lines


NOTES_1 = {
    False: """## Deviations (paper-faithful mode)

* **OMKR, RBF-1, POLY-2, Raker and OMKL-GF reproduce the paper** (differences of 0.00-0.05 for the
  deterministic baselines, within one standard deviation of the 20 draws for Raker and GF).  GF's
  legacy details (off-by-one kernel draw, q clipped at 0.05) do not move its MSE at M = 10.
  The residual -0.03 to -0.05 on Bias for the deterministic baselines is the data: the released
  code also streams two trailing non-observation rows of the CSV (7,752 rows), which the shipped
  data set (the 7,750 observations) does not contain.
* **RFOMKR** is far below the published 200-400 because we predict with the normalised weights,
  as the algorithm is defined; the published errors come from the released code's un-normalised
  weights, which shrink the predictions towards 0 (spec §8.5).  `--legacy` reproduces them to
  within 0.1 (paper000_table1_legacy.md).
* **OMKL-SFG and OMKL-SFG-R** differ beyond the spread (Airfoil +7.7 / +5.0, Naval +1.2 / -1.5,
  Concrete -2.0 / -3.2, Bias +0.4 / -1.5).  The published numbers were produced with a different
  graph: the released divergence function has no return statement, so every score is NaN and the
  graph joins every node to the nine narrowest Gaussian kernels (a = 0.01-0.05), and after 300
  rounds the released SFG uses node 0 for ever, i.e. a fixed ensemble of the ten narrowest
  Gaussians (spec §8.2, §8.4).  With those switches (`--legacy`) our SFG and SFG-R land within
  0.5 of every published number.  The exact divergence of eq. (27) (used here, with the data's
  dimension) instead makes a hub graph: every node points to the same nine extreme kernels, the
  narrowest and widest Laplacians (spec §8.3), so nine of the ten evaluated kernels are fixed and
  poor, and the good mid-width kernels are only observed when drawn themselves (q = p_i).  That
  is worse on Airfoil and Naval, better on Concrete and for SFG-R on Bias: the paper's graph
  rule, implemented as printed, is not what produced its Table 1.
* Run times are those of one compiled online pass (graph construction included for SFG/SFG-R,
  feature draws excluded, as in the paper); the paper's are pure Python/NumPy on a laptop.
""",
    True: """## Deviations (released-code mode)

* Every switch of spec §10.1b is on (off-by-one samplers, NaN divergence, the code's dominating
  set, node 0 after 300 rounds (500 on Bias) for SFG, frozen refinement for SFG-R, q/p clips,
  regulariser after the update, un-normalised RFOMKR, OMKR with exp(-||d||^2/a), Bias with the
  20 columns the released code selects).  Every entry is then within one standard deviation of
  the 20 draws, or within 0.05 for the deterministic baselines, of the published number.
* Bias: the released code keeps two trailing non-observation rows of the CSV (7,752 rows); the
  shipped data has the 7,750 observations only (the -0.03 to -0.05 of the deterministic rows).
* The released notebooks draw the features and the per-round randomness from one global NumPy
  stream; ours come from separate seeded streams, so single draws differ and only the
  distribution over the 20 draws is comparable.
""",
}


def write(path, lines):
    write_text(path, "\n".join(lines))


def _suffix(args):
    return ("_legacy" if args.legacy else "") + ("_quick" if args.partial else "")


def deviations(notes: str, args, table: str) -> str:
    """The full run's discussion of deviations, or, for a quick run, a pointer to it: its numbers
    are about 20 draws on the whole data sets, which a quick run does not have."""
    if not args.partial:
        return notes
    full = f"bench/results/{table}{'_legacy' if args.legacy else ''}.md"
    return ("## Deviations\n\nThis is a quick run (" + _size(args) + "): its entries are not "
            "comparable with the paper's one by one.  The deviations of the full run (20 draws, "
            f"full data sets) are discussed in {full}.\n")


def report_1_2(args, results, wall, tables):
    if 1 in tables:
        lines = _header("Table 1: MSE (×10⁻³), M = 10, J = 2", args, wall)
        lines += _table(results, TABLE1, 0, 1e3, 2)
        lines += ["", "ours: mean ± standard deviation over the draws (one run for the "
                  "deterministic OMKR, RBF-1, POLY-2); diff: ours − paper.", ""]
        lines += deviations(NOTES_1[args.legacy], args, "paper000_table1").splitlines()
        write(os.path.join(args.out, f"paper000_table1{_suffix(args)}.md"), lines)
    if 2 in tables:
        lines = _header("Table 2: run time (s) of one online pass", args, wall)
        lines += _table(results, TABLE2, 1, 1.0, 3)
        lines += ["", "## Speed-up over Raker measured in this run (mean time ratio)", "",
                  "| algorithm | " + " | ".join(LABELS[d] for d in DATASETS) + " |",
                  "|---" * (1 + len(DATASETS)) + "|"]
        for algorithm in ("RFOMKR", "OMKL-GF", "OMKL-SFG", "OMKL-SFG-R"):
            row = [algorithm]
            for j, d in enumerate(DATASETS):
                if d not in results["Raker"]:
                    row.append("–")
                    continue
                ours = np.mean([r[1] for r in results["Raker"][d]]) / np.mean(
                    [r[1] for r in results[algorithm][d]])
                paper = TABLE2["Raker"][j] / TABLE2[algorithm][j]
                row.append(f"{ours:.2f}× (paper {paper:.2f}×)")
            lines.append("| " + " | ".join(row) + " |")
        lines += ["", "Times: wall-clock of `predict_learn` over the whole stream (one compiled "
                  "call), graph construction included for SFG/SFG-R (the cache is cleared before "
                  "each run), frequency draws excluded as in the paper; the paper's times are "
                  "pure Python/NumPy on an i7-10510U.  The ratios, measured in the same run, are "
                  "the comparable quantity; short streams make the graph construction of SFG and "
                  "SFG-R (a 76×76 closed-form divergence matrix in Python) a visible share."]
        write(os.path.join(args.out, f"paper000_table2{_suffix(args)}.md"), lines)


def sweep_table(args, table):
    algorithm, paper = SWEEP_TABLES[table]
    start = time.perf_counter()
    rows = []
    n_runs = len(args.datasets) * len(SWEEP) * args.draws
    with progress(n_runs, args.quiet, "run", f"Table {table}") as bar:
        for dataset in args.datasets:
            X, y = stream(dataset, args)
            mse_row, time_row = [], []
            for k, M in enumerate(SWEEP):
                runs = []
                for seed in range(args.draws):
                    runs.append(run_one(algorithm, dataset, X, y, seed, args.legacy, M))
                    bar.update()
                mse = np.array([r[0] for r in runs]) * 1e3
                sec = np.array([r[1] for r in runs])
                mse_row.append((paper[dataset][0][k], mse))
                time_row.append((paper[dataset][1][k], sec))
                note(bar, f"{LABELS[dataset]:9s} {algorithm} M={M:2d} MSE {_fmt(mse)} time "
                          f"{_fmt(sec, 1, 3)} s")
            rows.append((dataset, mse_row, time_row))
    wall = time.perf_counter() - start
    lines = _header(f"Table {table}: {algorithm} versus M (MSE ×10⁻³ and run time in s)", args,
                    wall)
    lines += ["| dataset | M | MSE: paper | MSE: ours | MSE: diff | time: paper | time: ours |",
              "|---|---|---|---|---|---|---|"]
    for dataset, mse_row, time_row in rows:
        for k, M in enumerate(SWEEP):
            (pm, om), (pt, ot) = mse_row[k], time_row[k]
            lines.append(f"| {LABELS[dataset]} | {M} | {pm:.2f} | {_fmt(om)} | "
                         f"{om.mean() - pm:+.2f} | {pt:.2f} | {_fmt(ot, 1, 3)} |")
    lines += [""] + deviations(SWEEP_NOTES[args.legacy], args, f"paper000_table{table}").splitlines()
    write(os.path.join(args.out, f"paper000_table{table}{_suffix(args)}.md"), lines)
    return rows


SWEEP_NOTES = {
    False: """## Deviations (paper-faithful mode)

* **M = 1** diverges in some draws (huge means and standard deviations): with one kernel per
  round the observation probabilities are tiny (q >= eta_e^2 / (N J) for GF, xi / |D| for SFG)
  and the paper's updates divide by q with no clip, so an early step of size eta / q throws
  theta far away; the losses are not bounded as assumption (as2) requires (spec §9.17).  The
  released code clips 1/q at 20 (GF) or 10 (SFG, SFG-R), which is what the published M = 1
  numbers reflect (`--legacy` reproduces them).  Set `q_floor` for a bounded variant.
* **OMKL-GF at M >= 5** reproduces the paper within the spread on every data set.
* **OMKL-SFG and OMKL-SFG-R** use the graph of the exact divergence, not the released code's
  NaN-divergence graph: see paper000_table1.md.  The gap to the published numbers grows as M
  shrinks (the fixed hub kernels take a larger share of a small subset).  On Concrete the exact
  graph is better than the published numbers up to M = 15 and worse at M = 20 (38.7 against
  32.6); we have not analysed that case further.  `--legacy` reproduces the published sweep.
""",
    True: """## Deviations (released-code mode)

Every switch of spec §10.1b on (see paper000_table1_legacy.md).  All entries are within about one
standard deviation of the published ones, except OMKL-SFG at M = 1 on Bias (15.3 against 12.35),
which we have not explained: with M = 1 the released graph has self-loops only, every node is in
the dominating set, and after 500 rounds the released SFG uses kernel 0 alone.""",
}


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="fastomkl reproduce 000", description=__doc__,
                                     formatter_class=HelpFormatter)
    parser.add_argument("--table", type=int, nargs="+", action="extend", choices=[1, 2, 3, 4, 5],
                        help="tables to reproduce (default: 1 2, which come from the same runs)")
    parser.add_argument("--legacy", action="store_true", help="the released code's behaviour")
    parser.add_argument("--quick", action="store_true",
                        help="a short run: 2 draws and the first 1000 samples of each data set")
    parser.add_argument("--draws", type=int, default=None,
                        help="random-feature draws (default: 20, or 2 with --quick)")
    parser.add_argument("--n-samples", type=int, default=None,
                        help="first n samples only (default: all, or 1000 with --quick)")
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS),
                        help="data sets to run")
    add_output_arguments(parser, "000")
    args = parser.parse_args(argv)
    args.argv = argv
    tables = sorted(set(args.table or [1, 2]))
    if args.draws is None:
        args.draws = 2 if args.quick else 20
    if args.n_samples is None and args.quick:
        args.n_samples = 1000
    if args.draws < 1 or (args.n_samples is not None and args.n_samples < 1):
        parser.error("--draws and --n-samples must be positive")
    args.partial = args.quick or args.n_samples is not None or args.draws < 20
    plt = figure_backend(args.figures)
    args.out = output_folder(args.out, "000")
    if args.partial:
        print(f"quick run ({_size(args)}): not comparable with the paper entry by entry",
              file=sys.stderr)
    runs, sweeps = None, {}
    if 1 in tables or 2 in tables:
        runs, wall = tables_1_2(args)
        report_1_2(args, runs, wall, tables)
    for table in (3, 4, 5):
        if table in tables:
            sweeps[SWEEP_TABLES[table][0]] = sweep_table(args, table)
    if plt is not None:
        figures.draw_all(plt, args, runs, sweeps)
    print(f"results in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
