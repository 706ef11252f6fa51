"""Per-sample cost of exact Kernel-AWV on a full window and of Pros-N-KONS on a large dictionary,
in two builds of fastomkl, interleaved.

    python bench/dictionary_models.py --before PATH [--after PATH] [--repeats 3] [--only TEXT]
        [--out bench/results/dictionary_models.md]

PATH is a checkout whose compiled modules are built in place (``python setup.py build_ext
--inplace``); each measurement runs in a process of its own with that checkout first on
``sys.path`` (``--after`` defaults to this checkout).  The builds take turns, before then after,
``--repeats`` times, and the report gives each one's median and their ratio.

The stream: d = 10, x uniform in [-1, 1]^10 divided by sqrt(10), y = sin(3 x_0) + noise, fixed
seed.  Each case learns its first rows with ``partial_fit``, then times ``predict_learn`` over
the next ones (microseconds per sample):
* ``KernelAWV()``: 1,000 rows fill its window of ``max_samples=1000``; 400 timed (three ridges,
  the oldest input leaving at every round);
* ``ProsNKons(kernel=Gaussian(1.0), max_centres=None)``: 24,000 rows (566 centres on this
  stream, the paper's unbounded dictionary); 2,000 timed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CASES = {
    "KernelAWV (window of 1,000 full)": ("KernelAWV", {}, 1000, 400),
    "ProsNKons, max_centres=None (566 centres)": (
        "ProsNKons", {"kernel": ("Gaussian", 1.0), "max_centres": None, "random_state": 0},
        24000, 2000),
}

WORKER = r"""
import json, sys, time, warnings
import numpy as np
import fastomkl
warnings.simplefilter("ignore")
name, params, warm, timed = json.loads(sys.argv[1])
params = {k: getattr(fastomkl, v[0])(v[1]) if isinstance(v, list) else v
          for k, v in params.items()}
if name == "ProsNKons" and "max_centres" not in fastomkl.ProsNKons().get_params():
    params.pop("max_centres")                  # a build from before the parameter: unbounded
rng = np.random.default_rng(0)
n = warm + timed
X = rng.uniform(-1, 1, (n, 10)) / np.sqrt(10)
y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(n)
model = getattr(fastomkl, name)(**params)
model.partial_fit(X[:warm], y[:warm])
start = time.perf_counter()
model.predict_learn(X[warm:], y[warm:])
print(json.dumps((time.perf_counter() - start) / timed * 1e6))
"""


def measure(path: Path, case) -> float:
    env = {**os.environ, "PYTHONPATH": str(path), "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", WORKER, json.dumps(case)], env=env,
                         capture_output=True, text=True, check=True, cwd="/")
    return json.loads(out.stdout)


def commit(path: Path) -> str:
    """The checkout's commit (and whether its files differ from it)."""
    def git(*words):
        return subprocess.run(["git", "-C", str(path), *words], capture_output=True,
                              text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + (" with changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def main(argv=None) -> int:
    from machine import describe
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=HERE.parent)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="", help="the cases whose name contains this")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "dictionary_models.md")
    args = parser.parse_args(argv)
    rows = []
    for label, case in CASES.items():
        if args.only not in label:
            continue
        times = {"before": [], "after": []}
        for _ in range(args.repeats):
            for build, path in (("before", args.before), ("after", args.after)):
                times[build].append(measure(path, case))
        before, after = statistics.median(times["before"]), statistics.median(times["after"])
        rows.append(f"| {label} | {before:,.0f} | {after:,.0f} | {after / before:.2f} |")
        print(rows[-1], flush=True)
    command = "python bench/dictionary_models.py " + " ".join(
        sys.argv[1:] if argv is None else argv)
    lines = ["# Kernel-AWV's full window and Pros-N-KONS' dictionary: two builds, interleaved", "",
             f"Command: `{command}`  ", f"Machine: {describe()}  ",
             f"Builds: before {commit(args.before)}, after {commit(args.after)}", "",
             "Microseconds per sample of `predict_learn` (medians of "
             f"{args.repeats} runs of each build, before then after, in turn).", "",
             "| model | before | after | after / before |", "|---|---|---|---|", *rows]
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
