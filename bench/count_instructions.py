"""Instructions per sample (valgrind --tool=callgrind): repeatable where timings are noisy.

    python bench/count_instructions.py

Counts the Raker step (76 kernels, D = 50, d = 15, Naval data) three ways, each as the difference
between a run over 2T and one over T samples, so start-up costs cancel:
* fastomkl ``predict_learn`` (the loop in C),
* fastomkl ``predict_learn_one`` called from Python for every sample,
* the hand-written C loop of bench/handwritten_raker.c on the same frequencies and data;
and ``predict_learn`` once more with ``dtype="float32"``.
Valgrind emulates up to AVX2, so the library runs its AVX2 clone and the C loop is built for
x86-64-v3.  Writes bench/results/core_instructions.md.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from callgrind import callgrind_total  # noqa: E402

T = 300

DRIVER = """
import os; os.environ["OPENBLAS_NUM_THREADS"] = "1"     # no spinning BLAS threads in the count
import sys, numpy as np, fastomkl
from fastomkl.datasets import load_dataset, scale_to_unit_ball, scale_to_unit_interval
X, y = load_dataset("naval"); X = scale_to_unit_ball(X[:, :15]); y = scale_to_unit_interval(y)
n, mode, dtype = int(sys.argv[1]), sys.argv[2], sys.argv[3]
model = fastomkl.Raker(fastomkl.paper000_dictionary(), n_components=50, eta=0.1, random_state=0,
                       dtype=dtype)
model.learn_one(X[0], y[0])
if mode == "stream":
    model.predict_learn(X[1:n + 1], y[1:n + 1])
else:
    for i in range(1, n + 1):
        model.predict_learn_one(X[i], y[i])
"""


def per_sample(cmd_for_n) -> float:
    return (callgrind_total(cmd_for_n(2 * T)) - callgrind_total(cmd_for_n(T))) / T


def main() -> None:
    import fastomkl
    from fastomkl.datasets import load_dataset, scale_to_unit_ball, scale_to_unit_interval
    with tempfile.TemporaryDirectory() as tmp:
        driver = Path(tmp) / "driver.py"
        driver.write_text(DRIVER)
        stream = per_sample(lambda n: [sys.executable, str(driver), str(n), "stream", "float64"])
        one = per_sample(lambda n: [sys.executable, str(driver), str(n), "one", "float64"])
        stream32 = per_sample(lambda n: [sys.executable, str(driver), str(n), "stream", "float32"])
        exe = Path(tmp) / "hw"
        subprocess.run(["gcc", "-O3", "-ffast-math", "-fopenmp-simd", "-march=x86-64-v3",
                        str(HERE / "handwritten_raker.c"), "-o", str(exe), "-lmvec", "-lm"],
                       check=True)
        X, y = load_dataset("naval")
        X, y = scale_to_unit_ball(X[:, :15]), scale_to_unit_interval(y)
        model = fastomkl.Raker(fastomkl.paper000_dictionary(), n_components=50, eta=0.1, random_state=0)
        model.learn_one(X[0], y[0])
        weights = np.asarray(model.features_.frequencies_).transpose(0, 2, 1)   # (N, d, D)

        def hand(n):
            data = Path(tmp) / f"in{n}.bin"
            with open(data, "wb") as fh:
                fh.write(np.array([76, 50, 15, n], dtype=np.int32).tobytes())
                for a in (weights, X[1:n + 1], y[1:n + 1]):
                    fh.write(np.ascontiguousarray(a, dtype=np.float64).tobytes())
            return [str(exe), str(data), "1"]
        handwritten = per_sample(hand)
    N, D, d = 76, 50, 15
    lines = [
        "# Instructions per sample: Raker, 76 kernels, D = 50, d = 15 (Naval)", "",
        "Command: `python bench/count_instructions.py` (valgrind callgrind; difference of runs over "
        f"{2 * T} and {T} samples; AVX2 code paths).", "",
        "| contender | instructions per sample | ratio to hand-written C |", "|---|---|---|",
        f"| fastomkl `predict_learn` (loop in C) | {stream:,.0f} | {stream / handwritten:.3f} |",
        f"| fastomkl `predict_learn_one` from Python | {one:,.0f} | {one / handwritten:.3f} |",
        f"| fastomkl `predict_learn`, `dtype=\"float32\"` | {stream32:,.0f} | "
        f"{stream32 / handwritten:.3f} |",
        f"| hand-written C loop, same frequencies and data | {handwritten:,.0f} | 1.000 |", "",
        f"Work per sample: {N * D * d:,} multiply-adds for the projections, {2 * N * D:,} sin/cos "
        f"values, {3 * N * 2 * D:,} multiply-adds for the predictions, OGD steps and norms, {N} exp.",
        "",
    ]
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "core_instructions.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
