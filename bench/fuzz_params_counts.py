"""Constructor parameters against what a model then does: every declared parameter of every public
estimator at the edges of what it accepts, just outside them, and at values drawn log-uniformly
inside its interval (several parameters at once), each model learning a short stream (with a
target spike) and, where models are written to files, saved and loaded back.

    python bench/fuzz_params_counts.py                    # 40 random settings per class
    python bench/fuzz_params_counts.py --per-class 200 --seed 3

Prints per class and in all: settings tried / refused with ValueError (naming a parameter or the
size bound) / left out as large (a state over 64 MiB: valid, too slow for a sweep) / accepted,
and of those accepted the ones predicting a non-finite value or holding a
non-finite state (goal 0) and the ones whose own file ``load`` refuses (goal 0); any other
exception is counted and shown.
"""
from __future__ import annotations

import argparse
import io
import math
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import fastomkl  # noqa: E402
from fastomkl._estimator.params import Interval  # noqa: E402
from helpers import can_be_saved  # noqa: E402
from test_common import (ESTIMATORS, build, invalid_values, is_classifier,  # noqa: E402
                         stream, valid_edges)


def random_value(form: Interval, rng):
    """A value inside the interval, log-uniform over its magnitude (either sign if it allows)."""
    low = -1e300 if form.low is None else float(form.low)
    high = 1e300 if form.high is None else float(form.high)
    if high > 0:
        lo_pos = max(low, 1e-300) if low > 0 else 1e-300
        exponent = rng.uniform(math.log10(lo_pos), math.log10(high))
        value = 10.0 ** exponent
        if low < 0 and rng.random() < 0.3:
            value = -min(value, -low)
    else:
        value = rng.uniform(low, high)
    value = min(max(value, low), high)
    if form.kind == "int":
        value = int(min(max(round(value), math.ceil(low)), math.floor(high)))
    return value if form.accepts(value) else None


def random_settings(cls, rng, n: int):
    """n settings of 1 to 3 parameters drawn inside their declared intervals."""
    intervals = [(name, form) for name, forms in cls._parameter_constraints.items()
                 for form in forms if isinstance(form, Interval)]
    for _ in range(n if intervals else 0):
        chosen = rng.choice(len(intervals), size=min(len(intervals), rng.integers(1, 4)),
                            replace=False)
        setting = {}
        for i in chosen:
            name, form = intervals[i]
            value = random_value(form, rng)
            if value is not None:
                setting[name] = value
        yield setting


# Settings whose state passes this many doubles (64 MiB) are left out: valid, but a sweep of
# thousands of fits cannot wait minutes for one (a VAW of 2 x 3437 features refreshing its
# inverse by Cholesky takes one)
LARGEST = 1 << 23


def outcome(cls, setting: dict, X, y) -> str:
    try:
        model = build(cls, **setting)
        model._check_all_params()               # what fit checks first
        if model._implied_state_size(X.shape[1]) > LARGEST:
            return "large"
        model.fit(X, y)
    except ValueError:
        return "refused"
    scores = model.decision_function(X) if hasattr(model, "decision_function") \
        else model.predict(X)
    state = model._engine.get_state().values() if model._engine is not None else []
    if not (np.isfinite(np.asarray(scores, dtype=float)).all()
            and all(np.isfinite(v).all() for v in state if np.asarray(v).dtype.kind == "f")):
        return "nonfinite"
    if can_be_saved(cls):
        out = io.BytesIO()
        model.save(out)
        try:
            fastomkl.load(io.BytesIO(out.getvalue()))
        except ValueError:
            return "unsaveable"
    return "accepted"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(args.seed)
    keys = ("tried", "refused", "large", "accepted", "nonfinite", "unsaveable", "other")
    total = dict.fromkeys(keys, 0)
    for cls in ESTIMATORS:
        X, y = stream(cls, 40)
        if not is_classifier(cls):                # a regression stream: one target spike
            y = np.array(y, dtype=float)
            y[7] = 1e6 * (np.abs(y).max() + 1.0)
        settings = [{name: value} for name, value in valid_edges(cls)]
        settings += [{name: value} for name, value in invalid_values(cls)]
        settings += list(random_settings(cls, rng, args.per_class))
        counts = dict.fromkeys(keys, 0)
        for setting in settings:
            counts["tried"] += 1
            try:
                result = outcome(cls, setting, X, y)
                counts[result] += 1
                if result in ("nonfinite", "unsaveable"):
                    print(f"  {cls.__name__}({setting}): {result}"[:300])
            except Exception as exc:            # a defect: anything but ValueError
                counts["other"] += 1
                print(f"  {cls.__name__}({setting}): {type(exc).__name__}: {exc}"[:300])
        for k in keys:
            total[k] += counts[k]
        print(f"{cls.__name__:30s} " + " ".join(f"{k} {counts[k]:4d}" for k in keys), flush=True)
    print("\nsettings " + ", ".join(f"{k} {total[k]}" for k in keys))


if __name__ == "__main__":
    main()
