"""Reproduce tier 1 of Dai et al., "Scalable Kernel Methods via Doubly Stochastic Gradients"
(NeurIPS 2014) that runs here: ``fastomkl reproduce 004 [options]``.

* Section 7.1, synthetic kernel ridge regression (Fig. 4(2)): y = cos(0.5 pi |x|) exp(-0.1 pi |x|)
  + 0.1 e on x ~ U[-5, 5]^2, RBF bandwidth 0.1 x median distance, nu = 1e-6, batch = block = 2^10
  (2^8 with --quick), fresh samples each iteration, gamma_t = theta / t with theta = 300 (the
  paper does not give theta; 1 barely moves in 128 iterations); the error of the averaged
  iterate |f^_t - f*|^2 on held-out points against t, on log-log axes with a 1/t guide.
* Section 7.2, GP regression (Fig. 5): 2^11 training and 2^10 test points of the same model, noise
  0.1, batch 64, block 512; the relative error of the DSG posterior mean (at the 2^10 test points)
  and variance (at the first 2^6 of them: each is a ridge regression of its own) against the
  closed form after each pass, at the paper's median bandwidth and at 0.1 x median.
* Section 7.3, Adult (Fig. 6(1)): the shipped a9a (32,561 training and 16,281 test rows, 123
  binary features), hinge loss, nu = 1 / (100 n), batch 2^6, block 2^5, median bandwidth, one
  pass, over --seeds seeds (seed s orders the rows and draws the features); test error against
  training time beside scikit-learn's RBFSampler and Nystroem with 2^8 features feeding an
  averaged SGDClassifier (the paper's r-Pegasos and n-Pegasos), same batches.  The paper: DSG at
  15.3 % after one pass.  Switches add a row each, run as they say (see their help); the
  comparison table gives the spread test of every row and says whether a switch traces a cell
  outside it.
* MNIST-8M is not available here; scikit-learn's bundled digits (1,797 images of 8 x 8 pixels,
  10 classes) stand in for it as a small multiclass check (softmax loss, one pass).

Not run: Forest, MNIST-8M, the CNN-feature experiments (CIFAR-10, ImageNet) and the molecular
data sets (not available offline), and the out-of-core 10^7-sample stream (a DSG prediction costs
O(t) blocks, so a one-machine pass of that length is hours; ``fastomkl.dask`` trains such streams
chunk by chunk on a cluster).

Writes ``paper004_results.md`` and the figures ``paper004_fig4_rate.png``,
``paper004_fig5_gp.png`` and ``paper004_fig6_adult.png`` into the output folder.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

from fastomkl.reproduce.common import (HelpFormatter, add_output_arguments, check_data_folder,
                                       code_commit, count_line, figure_backend,
                                       kernels_variant, note, output_folder, progress,
                                       provenance_clause, save_figure, spread_row, verdict,
                                       write_text)

PAPER_ADULT_ERROR = 15.3
THETA = 300.0              # step theta / t of the rate experiment
RATE_FROM = 4              # the rate is fitted from this iteration on (before, the step dominates)
GP_SCALES = (1.0, 0.1)     # GP bandwidths, times the median: the paper's, and section 7.1's
GP_VARIANCE_POINTS = 2 ** 6
GP_PASSES = {False: 4, True: 2}   # by --quick: a pass costs more than the one before it
DSG = "DSG"
# Adult's DSG setting: gamma_t = eta / (1 + 1e-4 t) (the authors' code: the paper gives no step),
# one pass (the paper's SC1).
ADULT = {"eta": 1.0, "passes": 1}
# The switches: setting key -> (command-line flag, type, what its row runs, whether its row can
# trace the cell).  The paper gives no step, so another step is a candidate cause; it states one
# pass (SC1), so a row after more passes measures how much more training ours needs to reach the
# paper's figure and traces nothing.
SWITCHES = {"eta": ("--eta", float, "Adult's DSG row with the step gamma_t = ETA / (1 + 1e-4 t)",
                    True),
            "passes": ("--passes", int, "Adult's DSG row after PASSES passes (the paper states "
                       "one: this row measures the gap and traces nothing)", False)}


# -- the sentences and the verdicts of the report, computed from the numbers ----------------------

def loglog_slope(ts, errors) -> float:
    """The least-squares slope of log(error) against log(t)."""
    return float(np.polyfit(np.log(np.asarray(ts, float)), np.log(np.asarray(errors, float)),
                            1)[0])


def rate_summary(ts, errors, start: int = RATE_FROM) -> dict:
    """The fitted log-log slope over the checkpoints t >= start (at least three) and over the
    first and second half of them (an odd count shares the middle checkpoint)."""
    ts, errors = np.asarray(ts, float), np.asarray(errors, float)
    keep = ts >= start
    ts, errors = ts[keep], errors[keep]
    if len(ts) < 3:
        raise ValueError(f"the rate needs three checkpoints from t = {start} on, got {len(ts)}")
    half = len(ts) // 2
    halves = [(ts[:half + len(ts) % 2], errors[:half + len(ts) % 2]),
              (ts[half:], errors[half:])]
    return {"slope": loglog_slope(ts, errors), "range": (ts[0], ts[-1]),
            "halves": [(loglog_slope(t, e), (t[0], t[-1])) for t, e in halves]}


def rate_sentence(summary: dict) -> str:
    """Says what the fitted slopes show: the decay steepens when the second half's slope is the
    more negative, else it flattens."""
    (first, (a0, a1)), (second, (b0, b1)) = summary["halves"]
    trend = "steepens" if second < first else "flattens"
    return (f"Log-log slope over t = {summary['range'][0]:g}..{summary['range'][1]:g}: "
            f"**{summary['slope']:.2f}** (the paper: about -1, 'converges in the rate of "
            "O(1/t)').  "
            f"Over t = {a0:g}..{a1:g} it is {first:.2f} and over t = {b0:g}..{b1:g} {second:.2f}: "
            f"the decay {trend} with t.")


def ranking_sentence(finals: dict) -> str:
    """The methods' final errors ranked, lowest first, from {name: (mean, std)}."""
    ranked = sorted(finals.items(), key=lambda item: item[1][0])
    listed = "; ".join(f"{name} {mean:.2f} ± {std:.2f} %" for name, (mean, std) in ranked)
    best, (mean, _) = ranked[0]
    gap = ranked[1][1][0] - mean if len(ranked) > 1 else 0.0
    return (f"Final test errors, lowest first: {listed}.  {best} ends lowest, "
            f"{gap:.2f} points below the next.")


def cell(name: str, paper: float, paper_sd: float, ours: tuple, switched: dict,
         tracing=None) -> dict:
    """One comparison with the paper: ``ours`` is (mean, std) of the row run as the paper
    describes it, ``switched`` maps a switch (its flag and value) to the (mean, std) of the row it
    adds, ``tracing`` names the switches whose rows can trace the cell (None: all).  The verdict
    is "within" the spread, "traced" (outside, but a tracing switch's row is within;
    ``traced_by`` names those switches) or "untraced"."""
    main = spread_row(paper, paper_sd, *ours)
    rows = {flag: {**spread_row(paper, paper_sd, mean, std),
                   "traces": tracing is None or flag in tracing}
            for flag, (mean, std) in switched.items()}
    outcome, traced_by = verdict(main["within"], {flag: row["within"]
                                                  for flag, row in rows.items() if row["traces"]})
    return {"name": name, "paper": paper, "paper_sd": paper_sd, **main, "switched": rows,
            "traced_by": traced_by, "verdict": outcome}


def mean_std(values) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    values = list(values)
    return statistics.mean(values), statistics.stdev(values) if len(values) > 1 else 0.0


# -- the experiments -------------------------------------------------------------------------------

def synthetic(n: int, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inputs, noisy targets and the noiseless function of the paper's dataset (2)."""
    X = rng.uniform(-5.0, 5.0, (n, 2))
    r = np.linalg.norm(X, axis=1)
    f = np.cos(0.5 * np.pi * r) * np.exp(-0.1 * np.pi * r)
    return X, f + 0.1 * rng.standard_normal(n), f


def rate_experiment(quick: bool, bar) -> dict:
    from fastomkl.dsg import DoublySGDRegressor, median_bandwidth
    from fastomkl.kernels import Gaussian
    rng = np.random.default_rng(0)
    size = 2 ** 8 if quick else 2 ** 10
    iterations = 16 if quick else 128
    X_test, _, f_test = synthetic(2000, rng)
    sigma = 0.1 * median_bandwidth(X_test)
    model = DoublySGDRegressor(kernel=Gaussian(sigma), nu=1e-6, batch_size=size, block_size=size,
                               eta_schedule="theory", eta=THETA, average=True,
                               n_features_max=None, random_state=0,
                               standardize_target=False)     # the paper's raw units
    checkpoints = {2 ** k for k in range(int(np.log2(iterations)) + 1)}
    ts, errors = [], []
    for t in range(1, iterations + 1):
        X, y, _ = synthetic(size, rng)
        model.partial_fit(X, y)
        if t in checkpoints:
            ts.append(t)
            errors.append(float(np.mean((model.predict(X_test) - f_test) ** 2)))
        bar.update()
    return {"t": ts, "error": errors, "summary": rate_summary(ts, errors), "size": size,
            "sigma": sigma}


def gp_experiment(quick: bool, bar) -> dict:
    """The DSG posterior mean and variance against the closed form after each pass, per
    bandwidth: {scale: {"passes", "mean_rel", "var_rel", ...}}."""
    from fastomkl.dsg import DoublySGDGP, median_bandwidth
    from fastomkl.kernels import Gaussian
    rng = np.random.default_rng(1)
    n, m = (2 ** 9, 2 ** 8) if quick else (2 ** 11, 2 ** 10)
    passes = GP_PASSES[quick]
    X, y, _ = synthetic(n, rng)
    X_star, _, f_star = synthetic(m, rng)
    points = X_star[:GP_VARIANCE_POINTS]
    noise = 0.1
    out = {"n": n, "m": m, "runs": {}}
    for scale in GP_SCALES:
        kernel = Gaussian(scale * median_bandwidth(X))
        K = kernel.gram(X) + noise * np.eye(n)
        Ks = kernel.gram(X_star, X)
        exact_mean = Ks @ np.linalg.solve(K, y)
        Kp = Ks[:GP_VARIANCE_POINTS]
        exact_var = 1.0 - np.einsum("ij,ji->i", Kp, np.linalg.solve(K, Kp.T))
        gp = DoublySGDGP(noise=noise, test_points=points, n_samples=n, kernel=kernel,
                         batch_size=64, block_size=512, random_state=0)
        run = {"sigma": kernel.sigma, "passes": [], "mean_rel": [], "var_rel": [],
               "exact_var": float(np.mean(exact_var)),
               "exact_mean_mse": float(np.mean((exact_mean - f_star) ** 2))}
        order = np.random.default_rng(0)
        for p in range(1, passes + 1):
            rows = order.permutation(n)
            gp.partial_fit(X[rows], y[rows])
            mean = gp.predict(X_star)
            _, std = gp.predict(points, return_std=True)
            run["passes"].append(p)
            run["mean_rel"].append(float(np.linalg.norm(mean - exact_mean)
                                         / np.linalg.norm(exact_mean)))
            run["var_rel"].append(float(np.linalg.norm(std ** 2 - exact_var)
                                        / np.linalg.norm(exact_var)))
            bar.update()
        run["dsg_mean_mse"] = float(np.mean((mean - f_star) ** 2))
        out["runs"][scale] = run
    return out


def gp_sentence(scale: float, run: dict) -> str:
    """What the passes show for one bandwidth: each relative error's first and last value, its
    log-log slope against the passes and, at that rate, the passes it would need to reach 0.1."""
    parts = []
    for key, what in (("mean_rel", "mean"), ("var_rel", "variance")):
        values, passes = run[key], run["passes"]
        slope = loglog_slope(passes, values) if len(passes) > 1 else 0.0
        text = (f"the {what}'s relative error goes from {values[0]:.3f} after 1 pass to "
                f"{values[-1]:.3f} after {passes[-1]} (log-log slope {slope:.2f} against the "
                "passes")
        if values[-1] <= 0.1:
            text += ")"
        elif slope < 0:
            needed = passes[-1] * (0.1 / values[-1]) ** (1.0 / slope)
            text += ("; at that rate 0.1 takes more than a million passes)" if needed > 1e6
                     else f"; at that rate 0.1 takes about {needed:,.0f} passes)")
        else:
            text += "; it does not fall)"
        parts.append(text)
    return f"At {scale:g} x median (sigma = {run['sigma']:.3f}): " + "; ".join(parts) + "."


def load_a9a(data, quick: bool):
    """a9a's training rows in a seeded order and its test rows (the shipped copy when ``data``
    is None)."""
    from fastomkl.datasets import load_arrays
    z = load_arrays("a9a", data)
    X, y, X_test, y_test = (np.asarray(z[k], dtype=np.float64)
                            for k in ("X", "y", "X_test", "y_test"))
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    if quick:
        X, y, X_test, y_test = X[:3000], y[:3000], X_test[:2000], y_test[:2000]
    return X, y, X_test, y_test


def switch_name(key: str, value) -> str:
    """A switched row's name: the switch as typed."""
    return f"{DSG} ({SWITCHES[key][0]} {value:g})"


def adult_experiment(data, quick: bool, seeds: int, switched: dict, bar) -> dict:
    """Test error against training time (prediction for the curves not counted) of DSG (as the
    paper describes it, and one row per switch in ``switched`` {key: value}) and two averaged-SGD
    pipelines on 2^8 fixed features, in batches of 64, for seeds 0..seeds-1 (seed s orders the
    rows and draws the features).  The curves are the means over the seeds."""
    from sklearn.kernel_approximation import Nystroem, RBFSampler

    from fastomkl.dsg import median_bandwidth
    X0, y0, X_test, y_test = load_a9a(data, quick)
    n, batch = len(y0), 64
    sigma = median_bandwidth(X0)
    gamma = 1.0 / (2 * sigma ** 2)
    nu = 1.0 / (100 * n)
    settings = {DSG: ADULT}
    settings.update({switch_name(k, v): {**ADULT, k: v} for k, v in switched.items()})
    runs = {name: [] for name in settings}
    runs.update({"RBFSampler(2^8) + averaged SGD": [], "Nystroem(2^8) + averaged SGD": []})
    for seed in range(seeds):
        order = np.random.default_rng(seed).permutation(n) if seed else np.arange(n)
        X, y = X0[order], y0[order]
        for name, setting in settings.items():
            runs[name].append(_dsg_curve(X, y, X_test, y_test, sigma, nu, batch, setting, seed,
                                         bar))
        for name, features in (("RBFSampler(2^8) + averaged SGD",
                                 RBFSampler(gamma=gamma, n_components=256, random_state=seed)),
                               ("Nystroem(2^8) + averaged SGD",
                                Nystroem(gamma=gamma, n_components=256, random_state=seed))):
            runs[name].append(_pipeline_curve(X, y, X_test, y_test, features, nu, batch, seed,
                                              bar))
    curves = {name: [tuple(np.mean(column) for column in zip(*points))
                     for points in zip(*per_seed)] for name, per_seed in runs.items()}
    finals = {name: mean_std(points[-1][2] for points in per_seed)
              for name, per_seed in runs.items()}
    return {"n": n, "n_test": len(y_test), "sigma": sigma, "seeds": seeds, "curves": curves,
            "finals": finals, "switched": switched}


def _checkpoints(batches: int) -> set:
    return set(np.unique(np.geomspace(1, batches, 8).astype(int)))


def _dsg_curve(X, y, X_test, y_test, sigma, nu, batch, setting, seed, bar) -> list:
    """[(seconds, rows seen, test error %)] of one DSG run of ``setting`` (each pass after the
    first in a new order drawn from the seed)."""
    from fastomkl.dsg import DoublySGDClassifier
    from fastomkl.kernels import Gaussian
    model = DoublySGDClassifier(loss="hinge", kernel=Gaussian(sigma), nu=nu, batch_size=batch,
                                block_size=32, eta=setting["eta"], n_features_max=None,
                                random_state=seed)
    per_pass = len(y) // batch
    checkpoints = _checkpoints(setting["passes"] * per_pass)
    elapsed, points, done = 0.0, [], 0
    for p in range(setting["passes"]):
        order = np.random.default_rng([seed, p]).permutation(len(y)) if p else np.arange(len(y))
        for i in range(per_pass):
            rows = order[i * batch:(i + 1) * batch]
            start = time.perf_counter()
            model.partial_fit(X[rows], y[rows])
            elapsed += time.perf_counter() - start
            done += 1
            if done in checkpoints:
                points.append((elapsed, done * batch,
                               100.0 * float(np.mean(model.predict(X_test) != y_test))))
                bar.update()
    return points


def _pipeline_curve(X, y, X_test, y_test, features, nu, batch, seed, bar) -> list:
    """[(seconds, rows seen, test error %)] of fixed features (fitted on the first 1000 rows,
    counted in the time) feeding scikit-learn's averaged SGD on the hinge loss, the averaged
    Pegasos-style solver its documentation recommends for such linear models."""
    from sklearn.linear_model import SGDClassifier
    start = time.perf_counter()
    features.fit(X[:1000])
    elapsed = time.perf_counter() - start
    model = SGDClassifier(loss="hinge", alpha=nu, learning_rate="optimal", average=True,
                          random_state=seed)
    batches = len(y) // batch
    checkpoints, points = _checkpoints(batches), []
    Z_test = features.transform(X_test)
    for i in range(batches):
        rows = slice(i * batch, (i + 1) * batch)
        start = time.perf_counter()
        model.partial_fit(features.transform(X[rows]), y[rows], classes=[-1.0, 1.0])
        elapsed += time.perf_counter() - start
        if i + 1 in checkpoints:
            points.append((elapsed, (i + 1) * batch,
                           100.0 * float(np.mean(model.predict(Z_test) != y_test))))
            bar.update()
    return points


def digits_experiment(bar) -> dict:
    """One pass of the softmax DSG over 1400 digits in batches of 32, the error on the other 397
    after each eighth of the pass."""
    from sklearn.datasets import load_digits

    from fastomkl.dsg import DoublySGDSoftmaxClassifier
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    split, batch = 1400, 32
    model = DoublySGDSoftmaxClassifier(batch_size=batch, block_size=64, random_state=0)
    chunks = np.linspace(0, split, 9).astype(int)
    elapsed, curve = 0.0, []
    for a, b in zip(chunks[:-1], chunks[1:]):
        start = time.perf_counter()
        model.partial_fit(X[a:b], y[a:b], classes=np.arange(10))
        elapsed += time.perf_counter() - start
        curve.append((int(b), 100.0 * float(np.mean(model.predict(X[split:]) != y[split:]))))
    bar.update()
    return {"error": curve[-1][1], "curve": curve, "seconds": elapsed, "n_train": split,
            "n_test": len(y) - split}


# -- the report and the figures --------------------------------------------------------------------

def adult_cells(adult: dict) -> list[dict]:
    """The comparison with the paper's one figure for Adult: DSG's error after one pass."""
    switched = {f"{SWITCHES[k][0]} {v:g}": adult["finals"][switch_name(k, v)]
                for k, v in adult["switched"].items()}
    tracing = {f"{SWITCHES[k][0]} {v:g}" for k, v in adult["switched"].items() if SWITCHES[k][3]}
    return [cell("Adult (a9a), DSG test error after one pass (%)", PAPER_ADULT_ERROR, 0.0,
                 adult["finals"][DSG], switched, tracing)]


def comparison_lines(cells: list[dict]) -> list[str]:
    """The comparison table: the paper's figure, ours, the spread test and the verdict of each
    cell, then the rows its switches add."""
    lines = ["| cell | paper | ours | difference | bound | within | verdict |",
             "|---|---|---|---|---|---|---|"]
    for c in cells:
        verdict = {"within": "within", "untraced": "outside, untraced",
                   "traced": "outside, traced by " + ", ".join(f"`{f}`" for f in
                                                               c["traced_by"])}[c["verdict"]]
        lines.append(_comparison_row(c["name"], c, c, verdict))
        for flag, row in c["switched"].items():
            lines.append(_comparison_row(f"{c['name']}: {flag}", c, row,
                                         "row of a switch" if row["traces"] else
                                         "row of a switch that measures, traces nothing"))
    return lines


def _comparison_row(name: str, c: dict, row: dict, verdict: str) -> str:
    return (f"| {name} | {c['paper']:.2f} ± {c['paper_sd']:.2f} | {row['ours']:.2f} ± "
            f"{row['ours_sd']:.2f} | {row['difference']:+.2f} | {row['bound']:.2f} | "
            f"{'yes' if row['within'] else 'no'} | {verdict} |")


def verdict_sentence(c: dict) -> str:
    """A cell's verdict in words, from its numbers."""
    head = (f"{c['name']}: ours {c['ours']:.2f} ± {c['ours_sd']:.2f} against the paper's "
            f"{c['paper']:.2f} (difference {c['difference']:+.2f}, bound {c['bound']:.2f})")
    if c["verdict"] == "within":
        return head + ", within the spread."
    if c["verdict"] == "traced":
        rows = "; ".join(f"with {flag} {c['switched'][flag]['ours']:.2f} ± "
                         f"{c['switched'][flag]['ours_sd']:.2f}" for flag in c["traced_by"])
        return head + f", outside; traced: {rows}, within the spread."
    tried = "; ".join(f"with {flag} {row['ours']:.2f} (difference {row['difference']:+.2f}, bound "
                      f"{row['bound']:.2f})" for flag, row in c["switched"].items())
    return head + ", outside and untraced" + (f" ({tried})." if tried else " (no switch run).")


def report(rate, gp, adult, digits, run: dict) -> str:
    """The results file; every number, comparison and verdict in it is computed from the run's
    results (``run``: command, commit, label)."""
    label = run["label"]
    cells = adult_cells(adult)
    lines = ["# Paper 004 (Dai et al. 2014), tier 1: ours against the paper" + label, "",
             provenance_clause(run["command"], run["commit"], run.get("isa"))
             + ".  Adult: mean ± sample std "
             f"over {adult['seeds']} seed(s).  Spread test: within when |difference| <= bound = "
             "2 sqrt(s_paper^2 + s_ours^2), s_paper = 0 where the paper gives no spread; a cell "
             "outside is traced by a switch when the row the switch adds is within.", "",
             "## Comparison with the paper", "", count_line(cells), ""]
    lines += comparison_lines(cells) + [""] + [f"* {verdict_sentence(c)}" for c in cells] + [""]
    summary = rate["summary"]
    lines += ["## Section 7.1: convergence rate of kernel ridge regression (Fig. 4(2))", "",
              f"Batch = block = {rate['size']}, sigma = {rate['sigma']:.3f} (0.1 x median), "
              f"gamma_t = {THETA:g}/t, averaged iterate; error = mean (f^_t(x) - f*(x))^2 over "
              "2000 held-out points.", "", "| t | error |", "|---|---|"]
    lines += [f"| {t} | {e:.3e} |" for t, e in zip(rate["t"], rate["error"])]
    lines += ["", rate_sentence(summary), ""]
    lines += ["## Section 7.2: GP regression (Fig. 5)", "",
              f"{gp['n']} training and {gp['m']} test points, noise 0.1, batch 64, block 512, "
              f"nu = 0.1 / n.  Relative error ||DSG - exact|| / ||exact|| of the posterior mean at "
              f"the {gp['m']} test points and of the posterior variance at the first "
              f"{GP_VARIANCE_POINTS} after each pass.", "",
              "| bandwidth | passes | mean: relative error | variance: relative error |",
              "|---|---|---|---|"]
    for scale, g in gp["runs"].items():
        lines += [f"| {scale:g} x median | {p} | {a:.3f} | {b:.3f} |"
                  for p, a, b in zip(g["passes"], g["mean_rel"], g["var_rel"])]
    lines += [""] + [f"* {gp_sentence(scale, g)}  Mean exact variance {g['exact_var']:.4f}; MSE "
                     f"to f* of the exact mean {g['exact_mean_mse']:.4f}, of DSG's "
                     f"{g['dsg_mean_mse']:.4f}." for scale, g in gp["runs"].items()]
    lines += ["", "The paper gives no numbers, only that DSG and NORMA converge to the "
              "posterior.  Each pass adds blocks that are never updated again, so the error "
              "left after a pass is fitted only by later blocks, at steps that shrink; the "
              "slopes above say how many passes the closed form would take.  The tests check "
              "the DSG GP against the closed form on a small problem (tests/test_dsg_gp.py).", ""]
    lines += ["## Section 7.3: Adult (a9a) (Fig. 6(1))", "",
              f"{adult['n']} training rows (seed s orders them), {adult['n_test']} test rows, "
              f"sigma = {adult['sigma']:.3f} (median), nu = 1/(100 n), batches of 64, block 2^5.  "
              "Mean over the seeds of the test error at each checkpoint; time: training only "
              "(for the pipelines, also fitting the feature map on 1000 rows).  The pipelines "
              "stand for the paper's r-Pegasos and n-Pegasos: scikit-learn's SGDClassifier, "
              "hinge loss, alpha = nu, 'optimal' step, averaged iterate (average=True).", "",
              "| method | rows seen | seconds | test error (%) |", "|---|---|---|---|"]
    for name, points in adult["curves"].items():
        lines += [f"| {name} | {rows:.0f} | {secs:.2f} | {err:.2f} |"
                  for secs, rows, err in points]
    lines += ["", ranking_sentence(adult["finals"]) + "  The paper reports NORMA and k-SDCA at "
              f"15 % and DSG at {PAPER_ADULT_ERROR} % after one pass.", ""]
    lines += ["## Stand-in for MNIST: scikit-learn's digits", "",
              f"{digits['n_train']} training and {digits['n_test']} test images, softmax loss, "
              f"one pass: test error **{digits['error']:.2f} %** in {digits['seconds']:.2f} s.  "
              "A small multiclass check, not comparable with the paper's MNIST-8M numbers.", ""]
    lines += ["## Not run", "",
              "Forest, MNIST-8M 8 vs 6, CIFAR-10, ImageNet, QuantumMachine and MolecularSpace "
              "are not available offline.  The out-of-core 10^7-sample stream is not run on one "
              "machine: a DSG prediction costs O(t) feature blocks, so one pass is quadratic in "
              "its length; `fastomkl.dask` trains such streams chunk by chunk on a cluster.", ""]
    return "\n".join(lines)


QUICK_MARK = "quick run (smaller problems): not comparable with the paper"


def _finish(fig, quick: bool, path: str) -> None:
    """Marks a quick run's figure as such above its panels, then saves it."""
    if quick:
        fig.suptitle(QUICK_MARK, color="tab:red", fontsize=9)
        fig.tight_layout(rect=(0, 0, 1, 0.93))
    else:
        fig.tight_layout()
    save_figure(fig, path)


def figures(plt, out: str, rate, gp, adult, digits, quick: bool, adult_source: str) -> None:
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    t = np.array(rate["t"], dtype=float)
    ax.loglog(t, rate["error"], "o-", label="DSG, averaged iterate")
    ax.loglog(t, rate["error"][0] * t[0] / t, ":", color="tab:blue", label="1/t")
    ax.set_xlabel("iteration t")
    ax.set_ylabel("mean squared error to f*")
    ax.set_title("Fig. 4(2): convergence rate,\nsynthetic kernel ridge regression", fontsize=8)
    ax.legend(fontsize=7)
    _finish(fig, quick, os.path.join(out, "paper004_fig4_rate.png"))

    fig, axes = plt.subplots(1, 2, figsize=(8, 3.5))
    for ax, key, what in zip(axes, ("mean_rel", "var_rel"), ("mean", "variance")):
        for scale, g in gp["runs"].items():
            ax.semilogy(g["passes"], g[key], "o-", label=f"DSG, {scale:g} x median bandwidth")
        ax.set_xticks(gp["runs"][GP_SCALES[0]]["passes"])
        ax.set_xlabel("passes over the training points")
        ax.set_ylabel(f"relative error of the posterior {what}")
        ax.set_title(f"Fig. 5: GP posterior {what} against\nthe closed form, synthetic",
                     fontsize=8)
        ax.legend(fontsize=7)
    _finish(fig, quick, os.path.join(out, "paper004_fig5_gp.png"))

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
    ax = axes[0]
    for name, points in adult["curves"].items():
        ax.semilogx([p[0] for p in points], [p[2] for p in points], "o-", label=name)
    ax.axhline(PAPER_ADULT_ERROR, color="gray", ls="--", label="paper, DSG after one pass")
    ax.set_xlabel("training time (s)")
    ax.set_ylabel(f"test error (%), mean of {adult['seeds']} seed(s)")
    ax.set_title(f"Fig. 6(1): {adult_source}", fontsize=8)
    ax.legend(fontsize=6)
    ax = axes[1]
    ax.plot([c[0] for c in digits["curve"]], [c[1] for c in digits["curve"]], "o-",
            label="DSG, softmax loss")
    ax.set_xlabel("training images seen")
    ax.set_ylabel("test error (%)")
    ax.set_title("digits 8 x 8 (scikit-learn),\nstand-in for MNIST-8M, one pass", fontsize=8)
    ax.legend(fontsize=7)
    _finish(fig, quick, os.path.join(out, "paper004_fig6_adult.png"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="fastomkl reproduce 004", description=__doc__,
                                     formatter_class=HelpFormatter)
    parser.add_argument("--data", default=os.environ.get("FASTOMKL_DATA") or None,
                        help="folder holding an a9a.npz to read instead of the shipped copy "
                             "(default: the environment variable FASTOMKL_DATA if set, else the "
                             "data shipped with the package)")
    parser.add_argument("--quick", action="store_true",
                        help="smaller runs: batch = block = 2^8 and 16 iterations, 2^9 GP "
                             "points and 2 passes, the first 3000 a9a rows, 1 seed")
    parser.add_argument("--seeds", type=int, default=None,
                        help="Adult's seeds (default 3, 1 with --quick)")
    for key, (flag, kind, text, _) in SWITCHES.items():
        parser.add_argument(flag, dest=key, type=kind, default=None,
                            help=f"add {text} (the default row: {ADULT[key]:g})")
    add_output_arguments(parser, "004")
    args = parser.parse_args(argv)
    check_data_folder(parser, args.data, ["a9a"])
    seeds = args.seeds or (1 if args.quick else 3)
    if seeds < 1:
        parser.error("--seeds must be at least 1")
    switched = {k: getattr(args, k) for k in SWITCHES if getattr(args, k) is not None}
    if any(v <= 0 for v in switched.values()):
        parser.error("a switch's value must be positive")
    try:                      # the Adult baselines and the digits are scikit-learn's
        import sklearn  # noqa: F401
    except ImportError:
        parser.error("the Adult and digits experiments need scikit-learn: "
                     "pip install 'fastomkl[reproduce]'")
    plt = figure_backend(args.figures)
    out = output_folder(args.out, "004")
    label = " — quick run (smaller problems)" if args.quick else ""
    if args.quick:
        print("quick run: smaller problems, not comparable with the paper", file=sys.stderr)
    adult_steps = seeds * (8 * (1 + len(switched)) + 16)
    steps = (16 if args.quick else 128) + len(GP_SCALES) * GP_PASSES[args.quick] + adult_steps + 1
    with progress(steps, args.quiet, "step", "paper 004") as bar:
        rate = rate_experiment(args.quick, bar)
        note(bar, f"rate: slope {rate['summary']['slope']:.2f}")
        gp = gp_experiment(args.quick, bar)
        adult = adult_experiment(args.data, args.quick, seeds, switched, bar)
        digits = digits_experiment(bar)
    command = "fastomkl reproduce 004 " + " ".join(argv if argv is not None else sys.argv[1:])
    run = {"command": command.strip(), "commit": code_commit(), "isa": kernels_variant(),
           "label": label}
    write_text(os.path.join(out, "paper004_results.md"), report(rate, gp, adult, digits, run))
    if plt is not None:
        source = "Adult (a9a)" if args.data is None else f"a9a.npz from {args.data}"
        figures(plt, out, rate, gp, adult, digits, args.quick,
                source + ", one pass\nbaselines: 2^8 features, averaged SGD")
    return 0
