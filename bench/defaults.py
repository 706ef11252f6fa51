"""Do the default models learn without tuning?  The default of each family against a grid of its step.

For every shipped data set (rows in a seeded random order, x scaled to the unit ball, regression y
scaled to [0, 1], or left in its raw units with ``--raw``) and every family, the prequential error
(MSE, or the error rate for classification) of

* the default model (``eta="auto"``),
* the same model at each step of the grid eta in {0.01, 0.1, 0.5, 1, 2} x {constant, 1/sqrt(t)}
  (VAW-EWA: its rate eta in {0.01, ..., 2}; VAW2, which has no step: its ridge lam),
* the mean / majority predictor (prequential: the running mean or majority of the past labels),

the ratio default / best of the grid, and whether any step (VAW2: lam) in [1e-4, 1e4] gave a
non-finite prediction.  Results: ``bench/results/defaults.md`` (and ``defaults_raw.md``).

Data arrive in two orders (``--order``): "natural", the first rows in the order they were recorded
(the order a service sees them in, with whatever drift the recording has), and "shuffled", a seeded
random sample of the rows (stationary by construction).  Beside the shipped data sets, river's
seeded synthetic drifting streams (``SYNTHETIC``: FriedmanDrift with global abrupt, local abrupt
and global gradual drift, ConceptDriftStream abrupt and gradual, RandomRBFDrift, Hyperplane with
drift) are generated offline.  After each known change point of a synthetic stream in natural order
the report gives the recovery time: the rounds after the change until the error over the next
``window`` rounds is back within 10% of its level over the ``window`` rounds before the change,
for the default and for the best constant step of the grid, and the error over the rounds after
the change against the best constant step's on the same rounds.  ``--candidates`` adds other step
rules of the same family (their ratios to the best of the grid, and their recovery times), and the
per-sample cost of each candidate against the default's (Raker, 76 kernels, one run) is reported.

    python bench/defaults.py                           # y scaled to [0, 1], both orders
    python bench/defaults.py --order natural           # the recorded order only
    python bench/defaults.py --raw                     # y in its raw units
    python bench/defaults.py --quick                   # Raker, 2000 rows, no sweep: ~3 minutes
    python bench/defaults.py --families Raker --candidates adagrad ensemble
    python bench/defaults.py --data DIR                # the .npz files of DIR, not the shipped ones
    python bench/defaults.py --families OKS --candidates adagrad adaraker --no-sweep \
        --merge bench/results/defaults_orders.json --out bench/results/defaults_orders.md \
        --note "what changed"                          # one family again, the others' cells kept
                                                       # (each cell names the run that measured it)
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

import fastomkl as fo
from fastomkl.dsg import DoublySGDClassifier, DoublySGDRegressor
from fastomkl.datasets import (impute_column_means, load_arrays, scale_to_unit_ball,
                               scale_to_unit_interval)

HERE = Path(__file__).resolve().parent
REGRESSION = ("airfoil", "concrete", "naval", "bias_correction", "casp", "elevators", "ailerons",
              "bank32nh", "cpusmall", "istanbul_stock")
CLASSIFICATION = ("magic04", "phishing", "a9a")
# river's synthetic streams: (name, task).  Generated offline from fixed seeds (make_synthetic).
SYNTHETIC = (("friedman_global_abrupt", "regression"), ("friedman_local_abrupt", "regression"),
             ("friedman_global_gradual", "regression"), ("concept_drift_abrupt", "classification"),
             ("concept_drift_gradual", "classification"), ("rbf_drift", "classification"),
             ("hyperplane_drift", "classification"))
SYNTHETIC_TASK = dict(SYNTHETIC)
ORDERS = ("natural", "shuffled")
# Other step rules a family may be judged with beside its default (--candidates): keyword
# arguments of the family's own model (a family whose parameters refuse one is skipped for it), or
# another model judged beside one family, (family, regressor, classifier).
CANDIDATES = {"adagrad": {"eta": "adagrad"}, "ensemble": {"eta": "ensemble"},
              "one_ridge": {"lam": "auto"},     # TaylorAWV's and KernelAWV's single-lam default
              "adaraker": ("Raker", lambda: fo.AdaRaker(n_components=50, random_state=0),
                           lambda: fo.AdaRakerClassifier(n_components=50, random_state=0))}
GRID = [(eta, schedule) for eta in (0.01, 0.1, 0.5, 1.0, 2.0) for schedule in ("constant", "inv_sqrt")]
SWEEP = np.logspace(-4, 4, 9)
D = 50                      # random features per kernel
SMALL_DICTIONARY = [fo.Gaussian(s) for s in (0.1, 0.3, 1.0, 3.0)] + [fo.Laplacian(s) for s in (0.3, 3.0)]


# DSG's schedules: constant, or its paper's eta / (1 + decay t).
DSG_GRID = [(eta, schedule) for eta in (0.01, 0.1, 0.5, 1.0, 2.0)
            for schedule in ("constant", "inverse")]


# OKS's numeric eta scales Remark 1's constant step lambda = eta sqrt(delta / (K T)), which needs
# the horizon T: the grid gives it the bench's longest stream, so with the default 6 kernels the
# scales below are steps of about 0.00014 to 14.
OKS_SCALES = (0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)
OKS_HORIZON = 8000
# OKS++ and IOKS adapt their steps to the data: what a user may set is the radius U of the ball
# the hypotheses are projected on (the paper's 1 for targets in [0, 1]) and IOKS's eta constant
# (8 in the paper's experiments, 1.5 in its theorem); LKMBooks's is its step nu in (0, 1).
RADII = (0.1, 0.3, 1.0, 3.0, 10.0)
IOKS_CONSTANTS = (0.5, 1.5, 8.0, 32.0, 128.0)
LKM_NUS = (0.02, 0.05, 0.1, 0.25, 0.5, 0.9)
# The AWV family has no step: its grid is the ridge lam (VAW2's, measured first, and the
# single-kernel AWV models', whose best lam is smaller: their features are a smooth kernel's).
RIDGES = (0.01, 0.1, 1.0, 10.0)
AWV_RIDGES = (1e-4, 1e-3, 0.01, 0.1, 1.0)


def _horizon(kwargs):
    """An OKS model's parameters, with the horizon a numeric eta needs."""
    numeric = "eta" in kwargs and not isinstance(kwargs["eta"], str)
    return {**kwargs, "T": OKS_HORIZON} if numeric else kwargs


def _step_grid(eta, schedule):
    return {"eta": eta, "eta_schedule": schedule}


def _points(name, values):
    return [((name, v),) for v in values]


def _sweep_step(eta):
    return {"eta": eta, "eta_schedule": "constant"}


# (family, regressor factory, classifier factory, grid of parameter sets, rows cap or None, the
# parameters of one point of the never-NaN sweep).  A factory takes the keyword arguments of one
# grid point ({} for the default).  The VAW family has no step size: VAW-EWA's grid and sweep are
# its rate, VAW2's its ridge lam (on 6 kernels: a VAW expert costs (2D)^2 per round).
FAMILIES = [
    ("Raker", lambda **kw: fo.Raker(n_components=D, random_state=0, **kw),
     lambda **kw: fo.RakerClassifier(n_components=D, random_state=0, **kw), GRID, None,
     _sweep_step),
    ("OMKL-GF", lambda **kw: fo.OMKLGF(n_components=D, random_state=0, **kw),
     lambda **kw: fo.OMKLGFClassifier(n_components=D, random_state=0, **kw), GRID, None,
     _sweep_step),
    ("OMKL-SFG", lambda **kw: fo.OMKLSFG(n_components=D, random_state=0, **kw),
     lambda **kw: fo.OMKLSFGClassifier(n_components=D, random_state=0, **kw), GRID, None,
     _sweep_step),
    ("OMKL-SFG-R", lambda **kw: fo.OMKLSFGR(n_components=D, random_state=0, **kw),
     lambda **kw: fo.OMKLSFGRClassifier(n_components=D, random_state=0, **kw), GRID, None,
     _sweep_step),
    ("RFOMKR", lambda **kw: fo.RFOMKR(n_components=D, random_state=0, **kw),
     lambda **kw: fo.RFOMKRClassifier(n_components=D, random_state=0, **kw), GRID, None,
     _sweep_step),
    ("OMKR", lambda **kw: fo.OMKR(SMALL_DICTIONARY, **kw),
     lambda **kw: fo.OMKRClassifier(SMALL_DICTIONARY, **kw), GRID, 1000, _sweep_step),
    ("FOGD", lambda **kw: fo.FOGD(random_state=0, **kw),
     lambda **kw: fo.FOGDClassifier(random_state=0, **kw), GRID, None, _sweep_step),
    ("DSG", lambda **kw: DoublySGDRegressor(random_state=0, **kw),
     lambda **kw: DoublySGDClassifier(random_state=0, **kw), DSG_GRID, None, _sweep_step),
    ("RF-OKS", lambda **kw: fo.RFOKS(random_state=0, **_horizon(kw)),
     lambda **kw: fo.RFOKSClassifier(random_state=0, **_horizon(kw)), _points("eta", OKS_SCALES),
     None, lambda eta: _horizon({"eta": eta})),
    ("OKS", lambda **kw: fo.OKS(random_state=0, **_horizon(kw)),
     lambda **kw: fo.OKSClassifier(random_state=0, **_horizon(kw)), _points("eta", OKS_SCALES),
     None, lambda eta: _horizon({"eta": eta})),
    ("OKS++", lambda **kw: fo.OKSPlusPlus(random_state=0, **kw),
     lambda **kw: fo.OKSPlusPlusClassifier(random_state=0, **kw), _points("U", RADII), None,
     lambda u: {"U": u}),
    ("RF-OKS++", lambda **kw: fo.RFOKSPlusPlus(random_state=0, **kw),
     lambda **kw: fo.RFOKSPlusPlusClassifier(random_state=0, **kw), _points("U", RADII), None,
     lambda u: {"U": u}),
    ("IOKS", lambda **kw: fo.IOKS(random_state=0, **kw),
     lambda **kw: fo.IOKSClassifier(random_state=0, **kw), _points("eta_const", IOKS_CONSTANTS),
     None, lambda c: {"eta_const": c}),
    ("RF-IOKS", lambda **kw: fo.RFIOKS(random_state=0, **kw),
     lambda **kw: fo.RFIOKSClassifier(random_state=0, **kw),
     _points("eta_const", IOKS_CONSTANTS), None, lambda c: {"eta_const": c}),
    ("LKMBooks", lambda **kw: fo.LKMBooks(random_state=0, **kw),
     lambda **kw: fo.LKMBooksClassifier(random_state=0, **kw), _points("nu", LKM_NUS), None,
     lambda nu: {"nu": min(nu, 0.999)}),
    ("OnlineKernel", lambda **kw: fo.OnlineKernelRegressor(**kw), None, GRID, None, _sweep_step),
    ("NORMA", lambda **kw: fo.NORMA(**kw), None, DSG_GRID, None, _sweep_step),
    ("VAW-EWA", lambda **kw: fo.VAWEWA(SMALL_DICTIONARY, n_components=D, random_state=0, **kw),
     lambda **kw: fo.VAWEWAClassifier(SMALL_DICTIONARY, n_components=D, random_state=0, **kw),
     _points("eta_combiner", (0.01, 0.1, 0.5, 1.0, 2.0)), None,
     lambda eta: {"eta_combiner": eta}),
    ("VAW2", lambda **kw: fo.VAW2(SMALL_DICTIONARY, n_components=D, random_state=0, **kw),
     lambda **kw: fo.VAW2Classifier(SMALL_DICTIONARY, n_components=D, random_state=0, **kw),
     _points("lam", RIDGES), None, lambda lam: {"lam": lam}),
    ("TaylorAWV", lambda **kw: fo.TaylorAWV(**kw), lambda **kw: fo.TaylorAWVClassifier(**kw),
     _points("lam", AWV_RIDGES), 1000, lambda lam: {"lam": lam}),
    ("NystromAWV", lambda **kw: fo.NystromAWV(random_state=0, **kw),
     lambda **kw: fo.NystromAWVClassifier(random_state=0, **kw), _points("lam", AWV_RIDGES), None,
     lambda lam: {"lam": lam}),
    ("KernelAWV", lambda **kw: fo.KernelAWV(**kw), lambda **kw: fo.KernelAWVClassifier(**kw),
     _points("lam", AWV_RIDGES), 1000, lambda lam: {"lam": lam}),
]


def _grid_kwargs(point):
    return dict(point) if isinstance(point[0], tuple) else _step_grid(*point)


def make_synthetic(name: str, rows: int, seed: int):
    """(X, y, change points) of one of river's drifting streams, `rows` long, from fixed seeds.
    Labels of the classification streams are -1/+1; the change points are the rounds (0-based)
    where a new concept starts (the start of the transition of a gradual drift)."""
    from river.datasets import synth
    n = rows
    if name.startswith("friedman"):
        kind = {"global_abrupt": "gra", "local_abrupt": "lea", "global_gradual": "gsg"}[
            name[len("friedman_"):]]
        if kind == "lea":
            points = (n // 4, n // 2, 3 * n // 4)
            stream = synth.FriedmanDrift(drift_type=kind, position=points, seed=seed + 1)
        else:
            points = (n // 3, 2 * n // 3)
            stream = synth.FriedmanDrift(drift_type=kind, position=points,
                                         transition_window=max(n // 20, 1), seed=seed + 1)
            if kind == "gsg":          # the transition is centred on each position
                points = tuple(p - max(n // 20, 1) // 2 for p in points)
    elif name.startswith("concept_drift"):
        # river draws the concept from a sigmoid of width `width` centred on the position (its
        # exp overflows for a width much below n / 175): "abrupt" switches within 1% of the stream
        width = max(n // 100, 1) if name.endswith("abrupt") else max(n // 10, 1)
        points = (n // 2 - width // 2,)
        stream = synth.ConceptDriftStream(
            stream=synth.Agrawal(classification_function=0, seed=seed + 2),
            drift_stream=synth.Agrawal(classification_function=2, seed=seed + 3),
            position=n // 2, width=width, seed=seed + 4)
    elif name == "rbf_drift":
        points = ()
        stream = synth.RandomRBFDrift(seed_model=seed + 5, seed_sample=seed + 6, n_classes=2,
                                      n_features=5, n_centroids=20, change_speed=0.01,
                                      n_drift_centroids=20)
    elif name == "hyperplane_drift":
        points = ()
        stream = synth.Hyperplane(seed=seed + 7, n_features=10, n_drift_features=5,
                                  mag_change=0.001, noise_percentage=0.05, sigma=0.1)
    else:
        raise ValueError(f"unknown synthetic stream {name!r}")
    X, y = [], []
    for x, target in stream.take(n):
        X.append([float(x[key]) for key in sorted(x)])
        y.append(float(target))
    X, y = np.asarray(X), np.asarray(y)
    if SYNTHETIC_TASK[name] == "classification":
        y = np.where(y > 0, 1.0, -1.0)
    return X, y, points


def load(name: str, rows: int, seed: int, raw: bool, order: str = "shuffled", data_dir=None):
    """(X, y, change points): the first `rows` rows in the recorded order ("natural") or a seeded
    random sample of them ("shuffled"); the change points (of a synthetic stream in natural
    order) are empty for data whose changes are unknown."""
    if name in SYNTHETIC_TASK:
        X, y, points = make_synthetic(name, rows, seed)
        if order == "shuffled":
            perm = np.random.default_rng(seed).permutation(len(y))
            X, y, points = X[perm], y[perm], ()
        # columns first to [0, 1] (Agrawal's salary is in the 100,000s, its age in the tens: by the
        # largest row norm alone every other feature would vanish), then into the unit ball
        span = X.max(axis=0) - X.min(axis=0)
        X = scale_to_unit_ball((X - X.min(axis=0)) / np.where(span > 0, span, 1.0))
        if SYNTHETIC_TASK[name] == "regression" and not raw:
            y = scale_to_unit_interval(y)
        return X, y, points
    data = load_arrays(name, data_dir)
    X, y = impute_column_means(data["X"]), np.asarray(data["y"], dtype=np.float64)
    labelled = np.flatnonzero(np.isfinite(y))          # bias_correction has rows without a target
    if order == "natural":
        rows_taken = labelled[:rows]
    else:
        rows_taken = labelled[np.random.default_rng(seed).permutation(len(labelled))[:rows]]
    X, y = scale_to_unit_ball(X[rows_taken]), y[rows_taken]
    if name in REGRESSION and not raw:
        y = scale_to_unit_interval(y)
    return X, y, ()


def is_classification(name: str) -> bool:
    return name in CLASSIFICATION or SYNTHETIC_TASK.get(name) == "classification"


def recovery_time(errors, point: int, window: int) -> float:
    """Rounds after the change at `point` until the mean error over the next `window` rounds is
    within 10% of its mean over the `window` rounds before the change (inf: never within the
    stream)."""
    errors = np.asarray(errors, dtype=np.float64)
    if point < window or point + window > len(errors):
        return float("nan")
    before = errors[point - window:point].mean()
    sums = np.concatenate([[0.0], np.cumsum(errors[point:])])
    after = (sums[window:] - sums[:-window]) / window      # after[s]: rounds point+s ... +window
    ok = np.flatnonzero(after <= 1.1 * before)
    return float(ok[0]) if ok.size else float("inf")


def error_after(errors, points, window: int) -> list:
    """The mean error over the rounds after each change point, up to the next one (or the end
    of the stream), at most AFTER_WINDOWS * `window` rounds: how well a rule learns the new
    concept, where the recovery time only says how soon it is back to its own former level."""
    errors = np.asarray(errors, dtype=np.float64)
    ends = list(points[1:]) + [len(errors)]
    return [float(errors[p:min(end, p + AFTER_WINDOWS * window)].mean())
            for p, end in zip(points, ends)]


AFTER_WINDOWS = 5


def prequential_errors(model, X, y, classify: bool) -> np.ndarray:
    """Each round's error (0/1, or the squared error) of the prediction made before learning."""
    pred = _quietly(model.predict_learn, X, y)
    if classify:
        return (pred != y).astype(np.float64)
    return (pred - y) ** 2 if np.isfinite(pred).all() else np.full(len(y), np.nan)


def prequential_error(model, X, y, classify: bool) -> float:
    return float(np.mean(prequential_errors(model, X, y, classify)))


def _quietly(learn, X, y):
    """learn(X, y) without the warnings of refused updates (the sweep provokes them on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fo.NumericalWarning)
        warnings.simplefilter("ignore", fo.BudgetWarning)     # every budget fills on 8000 rows
        return learn(X, y)


def baseline(y, classify: bool) -> float:
    """The running mean (or majority) of the labels seen before each round."""
    seen = np.concatenate([[0.0], np.cumsum(y)[:-1]])
    counts = np.maximum(np.arange(len(y)), 1)
    if classify:
        guess = np.where(seen >= 0, 1.0, -1.0)
        return float(np.mean(guess != y))
    return float(np.mean((seen / counts - y) ** 2))


def _candidate_makes(family, make, candidates, classify):
    """{name: factory} of the candidates judged beside `family`: the step rules it accepts and the
    other models named for it."""
    makes = {}
    for name in candidates:
        candidate = CANDIDATES[name]
        if isinstance(candidate, tuple):
            if candidate[0] == family:
                makes[name] = candidate[2 if classify else 1]
            continue
        try:
            make(**candidate)._check_all_params()   # a family that refuses the rule skips it
        except (ValueError, TypeError, AttributeError):
            continue
        makes[name] = lambda kwargs=candidate: make(**kwargs)
    return makes


def evaluate(family, make, grid, sweep, X, y, classify, points=(), window=200, candidates=(),
             do_sweep=True):
    start = time.perf_counter()
    default_errors = prequential_errors(make(), X, y, classify)
    grid_errors = {point: prequential_errors(make(**_grid_kwargs(point)), X, y, classify)
                   for point in grid}
    errors = {point: float(np.mean(e)) for point, e in grid_errors.items()}
    finite = [np.isfinite(_quietly(make(**sweep(v)).predict_learn, X[:500], y[:500])).all()
              for v in (SWEEP if do_sweep else ())]
    best_point = min(errors, key=lambda p: errors[p] if np.isfinite(errors[p]) else np.inf)
    constant = [p for p in grid if not isinstance(p[0], tuple) and p[1] == "constant"]
    best_constant = min(constant, key=lambda p: errors[p] if np.isfinite(errors[p]) else np.inf,
                        default=None)
    result = {"family": family, "default": float(np.mean(default_errors)),
              "best": errors[best_point], "best_point": best_point,
              "never_nan": all(finite) if do_sweep else None, "candidates": {},
              "recovery": {"default": [recovery_time(default_errors, p, window) for p in points]},
              "after": {"default": error_after(default_errors, points, window)}}
    if best_constant is not None and points:
        result["recovery"]["best constant"] = [recovery_time(grid_errors[best_constant], p, window)
                                               for p in points]
        result["after"]["best constant"] = error_after(grid_errors[best_constant], points, window)
    for name, candidate in _candidate_makes(family, make, candidates, classify).items():
        e = prequential_errors(candidate(), X, y, classify)
        result["candidates"][name] = float(np.mean(e))
        if points:
            result["recovery"][name] = [recovery_time(e, p, window) for p in points]
            result["after"][name] = error_after(e, points, window)
    result["seconds"] = time.perf_counter() - start
    return result


def run(rows: int, seed: int, raw: bool, families, datasets, orders=ORDERS, candidates=(),
        do_sweep=True, data_dir=None):
    results = []
    for name in datasets:
        classify = is_classification(name)
        for order in orders:
            X, y, points = load(name, rows, seed, raw, order, data_dir)
            window = max(50, len(y) // 40)
            base = baseline(y, classify)
            for family, reg, clf, grid, cap, sweep in families:
                if (clf if classify else reg) is None:    # a regressor without a classifier
                    continue
                n = len(y) if cap is None else min(cap, len(y))
                kept = tuple(p for p in points if p + window <= n)
                r = evaluate(family, clf if classify else reg, grid, sweep, X[:n], y[:n],
                             classify, kept, window, candidates, do_sweep)
                r.update(dataset=name, order=order, rows=n, points=kept, window=window,
                         baseline=baseline(y[:n], classify) if cap else base,
                         task="classification" if classify else "regression")
                results.append(r)
                extra = "".join(f"  {c} {_cell_ratio(r, v):.2f}" for c, v in r["candidates"].items())
                print(f"{name:24s} {order:8s} {family:11s} default {r['default']:.4g}  best "
                      f"{r['best']:.4g} {r['best_point']}  ratio {_cell_ratio(r, r['default']):.2f}"
                      f"{extra}  base {r['baseline']:.4g}  never NaN {r['never_nan']}  "
                      f"({r['seconds']:.1f} s)", flush=True)
    return results


def time_per_sample(makes, rows=2000, seed=0, repeats=3):
    """{name: seconds per sample} of each model make() builds, learning the same rows (casp,
    shuffled), interleaved and the best of `repeats` runs, so their ratios are measured in one run
    on one machine."""
    X, y, _ = load("casp", rows, seed, False, "shuffled")
    best = {name: np.inf for name in makes}
    for _ in range(repeats):
        for name, make in makes.items():
            model = make()
            model.learn_one(X[0], y[0])                      # build outside the timing
            start = time.perf_counter()
            _quietly(model.predict_learn, X[1:], y[1:])
            best[name] = min(best[name], (time.perf_counter() - start) / (len(y) - 1))
    return best


def per_sample_cost(candidates, rows=2000, seed=0, repeats=3):
    """Seconds per sample of Raker (76 kernels, D = 50) with its default and with each candidate
    rule it takes (``time_per_sample``)."""
    raker = FAMILIES[0][1]
    return time_per_sample({"default": raker, **_candidate_makes("Raker", raker, candidates, False)},
                           rows, seed, repeats)


def _ratio(value, best, rows=None):
    """value / best; for error rates over `rows` rounds (classification), (mistakes + 1) /
    (best's mistakes + 1): a stream the best step predicts without a mistake (magic04's first
    8000 rows are all of one class) gives a finite ratio that still counts every mistake."""
    if rows is not None:
        return (value * rows + 1.0) / (best * rows + 1.0)
    return value / best if best > 0 else (1.0 if value == best else float("inf"))


def _cell_ratio(r, value):
    return _ratio(value, r["best"], r["rows"] if r["task"] == "classification" else None)


def _never_nan(r):
    return "-" if r["never_nan"] is None else ("yes" if r["never_nan"] else "**no**")


def _rounds(values):
    return ", ".join("-" if np.isnan(v) else ("never" if np.isinf(v) else f"{v:.0f}")
                     for v in values)


def report(results, rows, seed, raw, command="", costs=None) -> str:
    units = "raw units" if raw else "y scaled to [0, 1]"
    candidates = sorted({c for r in results for c in r["candidates"]})
    lines = [f"# Default models against the best of their step grid ({units})", "",
             f"`{command or 'python bench/defaults.py'}`{_provenance(results, command)}: the "
             f"first {rows} rows in their recorded "
             f"order (natural) or a seeded random sample of {rows} rows (shuffled; OMKR, "
             f"KernelAWV and TaylorAWV at most 1000: their rounds cost O(t) or O(d^4)), river's "
             f"seeded drifting streams generated offline, x scaled to the unit ball; prequential "
             f"MSE (regression) or error rate (classification).  Grid: eta in "
             f"{{0.01, 0.1, 0.5, 1, 2}} x {{constant, 1/sqrt(t)}} (DSG and NORMA: x {{constant, "
             f"eta / (1 + 1e-4 t)}}); the other families' grid is named in each cell: RF-OKS's "
             f"and OKS's eta (Remark 1's multiplier), OKS++'s radius U, IOKS's eta constant, "
             f"LKMBooks's nu, the VAW family's rate or ridge lam; 'never NaN': every constant "
             f"eta in 1e-4 ... 1e4 gave finite predictions ('-': not swept).  Ratios of "
             f"classification cells are (mistakes + 1) / (best's mistakes + 1).", "",
             "| data set | order | family | default | best of grid (eta, schedule) | "
             "default / best | " + "".join(f"{c} / best | " for c in candidates)
             + "mean or majority | never NaN |",
             "|---|---|---|---|---|---|" + "---|" * len(candidates) + "---|---|"]
    for r in results:
        point = r["best_point"]
        eta, schedule = (point[0][1], point[0][0]) if isinstance(point[0], tuple) else point
        extra = "".join(f"{_cell_ratio(r, r['candidates'][c]):.2f} | " if c in r["candidates"]
                        else "- | " for c in candidates)
        lines.append(f"| {r['dataset']} | {r['order']} | {r['family']} | {r['default']:.4g} | "
                     f"{r['best']:.4g} ({eta}, {schedule}) | "
                     f"{_cell_ratio(r, r['default']):.2f} | {extra}{r['baseline']:.4g} "
                     f"| {_never_nan(r)} |")
    rules = ["default"] + candidates
    lines += ["", "Ratio to the best of the grid, per family, task and order (worst, geometric "
              "mean, cells above 1.2):", "",
              "| family | task | order | rule | worst | geometric mean | cells > 1.2 |",
              "|---|---|---|---|---|---|---|"]
    groups = {}
    for r in results:
        groups.setdefault((r["family"], r["task"], r["order"]), []).append(r)
    for (family, task, order), rs in groups.items():
        for rule in rules:
            v = [_cell_ratio(r, r["default"] if rule == "default" else r["candidates"][rule])
                 for r in rs if rule == "default" or rule in r["candidates"]]
            if v:
                lines.append(f"| {family} | {task} | {order} | {rule} | {max(v):.2f} | "
                             f"{np.exp(np.mean(np.log(np.maximum(v, 1e-12)))):.2f} | "
                             f"{sum(x > 1.2 for x in v)} of {len(v)} |")
    lines += ["", "Over every task (worst / geometric mean of the ratio):", "",
              "| family | order | rule | worst | geometric mean |", "|---|---|---|---|---|"]
    overall = {}
    for r in results:
        for rule in rules:
            if rule == "default" or rule in r["candidates"]:
                value = r["default"] if rule == "default" else r["candidates"][rule]
                overall.setdefault((r["family"], r["order"], rule), []).append(
                    _cell_ratio(r, value))
    for (family, order, rule), v in overall.items():
        lines.append(f"| {family} | {order} | {rule} | {max(v):.2f} | "
                     f"{np.exp(np.mean(np.log(np.maximum(v, 1e-12)))):.2f} |")
    recovered = [r for r in results if r["points"]]
    if recovered:
        lines += ["", "Recovery after each known change point (natural order): rounds until the "
                  "error over the next `window` rounds is back within 10% of its level over the "
                  "`window` rounds before the change ('never': not within the stream).", "",
                  "| stream | family | change points | window | default | best constant step | "
                  + "".join(f"{c} | " for c in candidates), "|---|---|---|---|---|---|"
                  + "---|" * len(candidates)]
        for r in recovered:
            rec = r["recovery"]
            lines.append(f"| {r['dataset']} | {r['family']} | {', '.join(map(str, r['points']))} "
                         f"| {r['window']} | {_rounds(rec['default'])} | "
                         f"{_rounds(rec.get('best constant', []))} | "
                         + "".join(f"{_rounds(rec[c]) if c in rec else '-'} | "
                                   for c in candidates))
    if recovered:
        lines += ["", f"Error after each known change point (natural order): the mean error over "
                  f"the rounds from the change to the next one, at most {AFTER_WINDOWS} windows, "
                  f"over the best constant step's on the same rounds (below 1: the rule learns "
                  f"the new concept better than the best constant step; a rule that learns the "
                  f"old concept better than a constant step also has further to fall, which the "
                  f"recovery times above count against it).", "",
                  "| stream | family | change points | default | "
                  + "".join(f"{c} | " for c in candidates), "|---|---|---|---|"
                  + "---|" * len(candidates)]
        for r in recovered:
            after = r.get("after", {})
            if "best constant" not in after:
                continue
            ref = after["best constant"]

            def ratios(values):
                return ", ".join(f"{v / b:.2f}" if b > 0 else "-" for v, b in zip(values, ref))
            lines.append(f"| {r['dataset']} | {r['family']} | {', '.join(map(str, r['points']))} "
                         f"| {ratios(after['default'])} | "
                         + "".join(f"{ratios(after[c]) if c in after else '-'} | "
                                   for c in candidates))
    if costs:
        lines += ["", "Per-sample cost of Raker (76 kernels, D = 50, casp, 2000 rows, best of 3 "
                  "interleaved runs):", "", "| rule | microseconds per sample | / default |",
                  "|---|---|---|"]
        for name, seconds in costs.items():
            lines.append(f"| {name} | {seconds * 1e6:.1f} | {seconds / costs['default']:.2f} |")
    beaten = sum(r["default"] < r["baseline"] for r in results)
    lines += ["", f"The default beats the mean / majority predictor in {beaten} of {len(results)} "
              f"cells."]
    over = [r for r in results if _cell_ratio(r, r["default"]) > 1.2]
    lines += ["", f"Cells where the default is more than 1.2x the best of the grid: {len(over)} of "
              f"{len(results)}" + "".join(f"; {r['dataset']} ({r['order']}) {r['family']} "
                                          f"{_cell_ratio(r, r['default']):.2f}"
                                          for r in over) + "."]
    unbeaten = [r for r in results if r["default"] >= r["baseline"]]
    lines += ["", "Cells where the default does not beat the mean / majority predictor, and how the "
              "best of the grid does there: " + ("none." if not unbeaten else "; ".join(
                  f"{r['dataset']} ({r['order']}) {r['family']} (best of grid / baseline "
                  f"{_ratio(r['best'], r['baseline']):.2f})"
                  for r in unbeaten) + ".")]
    return "\n".join(lines) + "\n"


def _provenance(results, command) -> str:
    """Which run measured which families, when the report joins the cells of several runs
    (``--merge``): each cell keeps the run that measured it ("run": its command and ``--note``);
    this run first, then the others in the order of the families."""
    runs: dict = {}
    for r in results:
        run = r.get("run") or {"command": "", "note": ""}
        runs.setdefault((run["command"], run.get("note", "")), []).append(r["family"])
    if len(runs) <= 1:
        return ""
    parts = []
    for (run_command, note), families in sorted(runs.items(), key=lambda kv: kv[0][0] != command):
        names = ", ".join(dict.fromkeys(families))
        what = ("this run" if run_command == command
                else f"`{run_command}`" if run_command else "an earlier run")
        parts.append(f"{what}: {names}" + (f" ({note})" if note else ""))
    return (", joined with the cells of earlier runs (`--merge`), each family from the last "
            "run that measured it: " + "; ".join(parts))


def _from_json(cell: dict) -> dict:
    """A cell as run() made it: JSON turned its tuples (grid points, change points) into lists."""
    def point(p):
        return tuple(tuple(x) for x in p) if isinstance(p[0], list) else tuple(p)
    return {**cell, "best_point": point(cell["best_point"]), "points": tuple(cell["points"])}


def merged(results: list, earlier: list) -> list:
    """`results` with the cells of the `earlier` result files whose family `results` does not
    hold, in the order run() gives (data set, order, family)."""
    import json
    measured = {r["family"] for r in results}
    cells = results + [_from_json(c) for path in earlier for c in json.loads(path.read_text())
                       if c["family"] not in measured]
    datasets = list(REGRESSION + CLASSIFICATION) + [s for s, _ in SYNTHETIC]
    families = [f[0] for f in FAMILIES]
    return sorted(cells, key=lambda r: (datasets.index(r["dataset"]), ORDERS.index(r["order"]),
                                        families.index(r["family"])))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--raw", action="store_true", help="leave regression targets in raw units")
    parser.add_argument("--families", nargs="+", default=[f[0] for f in FAMILIES])
    parser.add_argument("--datasets", nargs="+",
                        default=list(REGRESSION + CLASSIFICATION) + [s for s, _ in SYNTHETIC])
    parser.add_argument("--order", choices=ORDERS + ("both",), default="both")
    parser.add_argument("--candidates", nargs="*", choices=sorted(CANDIDATES), default=[])
    parser.add_argument("--quick", action="store_true",
                        help="Raker only, 2000 rows, no never-NaN sweep (about 3 minutes)")
    parser.add_argument("--no-sweep", action="store_true", help="skip the never-NaN sweep")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--data", default=None,
                        help="folder of .npz data sets to read instead of the shipped copies")
    parser.add_argument("--merge", nargs="+", type=Path, default=[],
                        help="results (.json) of earlier runs: their cells of the families this "
                             "run does not measure join the report")
    parser.add_argument("--note", default="",
                        help="what this run measures and why (kept with its cells, so a report "
                             "that merges them names it)")
    args = parser.parse_args(argv)
    missing = [str(path) for path in args.merge if not path.is_file()]
    if missing:                            # before measuring for many minutes
        parser.error(f"--merge: no such file: {', '.join(missing)}")
    import sys
    words = [w for w in (sys.argv[1:] if argv is None else argv) if not w.startswith("--note=")]
    if "--note" in words:                  # the note is shown beside the command, not in it
        del words[words.index("--note"):words.index("--note") + 2]
    command = "python bench/defaults.py " + " ".join(words)
    if args.quick:
        args.rows = min(args.rows, 2000)
        if "--families" not in (sys.argv if argv is None else argv):
            args.families = ["Raker"]
    families = [f for f in FAMILIES if f[0] in args.families]
    orders = ORDERS if args.order == "both" else (args.order,)
    results = run(args.rows, args.seed, args.raw, families, args.datasets, orders,
                  args.candidates, not (args.quick or args.no_sweep), args.data)
    for r in results:
        r["run"] = {"command": command.strip(), "note": args.note}
    results = merged(results, args.merge)
    out = args.out or HERE / "results" / ("defaults_raw.md" if args.raw else "defaults.md")
    # the measurements first, so a report can be rewritten from them without measuring again
    import json
    out.with_suffix(".json").write_text(json.dumps(
        [{k: (list(v) if isinstance(v, tuple) else v) for k, v in r.items()} for r in results],
        default=str))
    costs = per_sample_cost(args.candidates) if args.candidates else None
    out.write_text(report(results, args.rows, args.seed, args.raw, command.strip(), costs))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
