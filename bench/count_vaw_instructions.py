"""Instructions per sample of VAW^2 (valgrind --tool=callgrind): repeatable where timings are noisy.

    python bench/count_vaw_instructions.py

VAW^2 with the paper's 76 kernels, m = 50 (2m = 100), d = 15 (Naval), counted as the difference
between a run over 2T and one over T samples so start-up costs cancel:
* fastomkl ``VAW2.predict_learn`` (the loop in C);
* the floor: 76 packed spmv + spr of the package's kernels per round, nothing else;
* the same floor with OpenBLAS dsymv + dsyr on full matrices (one thread).
Valgrind emulates up to AVX2, so the AVX2 variants run.  Writes bench/results/vaw_instructions.md.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from callgrind import callgrind_total  # noqa: E402

T = 100

DRIVER = """
import os; os.environ["OPENBLAS_NUM_THREADS"] = "1"
import sys, numpy as np, fastomkl
from fastomkl.datasets import load_dataset, scale_to_unit_ball, scale_to_unit_interval
from fastomkl._core.packed import pack
from floors import load as load_floors

blas_floor, kernel_floor = load_floors().blas_floor, load_floors().kernel_floor
n, mode = int(sys.argv[1]), sys.argv[2]
if mode == "vaw2":
    X, y = load_dataset("naval"); X = scale_to_unit_ball(X[:, :15]); y = scale_to_unit_interval(y)
    model = fastomkl.VAW2(fastomkl.paper003_dictionary(), n_components=50, random_state=0)
    model.learn_one(X[0], y[0])
    model.predict_learn(X[1:n + 1], y[1:n + 1])
else:
    z = np.random.default_rng(0).standard_normal((76, 100)) / 10
    if mode == "kernels":
        kernel_floor(np.repeat(pack(np.eye(100))[None], 76, axis=0), z, n)
    else:
        blas_floor(np.repeat(np.eye(100).ravel()[None], 76, axis=0), z, n, False)
"""


def per_sample(mode: str) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(DRIVER)
    one = callgrind_total([sys.executable, fh.name, str(T), mode])
    two = callgrind_total([sys.executable, fh.name, str(2 * T), mode])
    return (two - one) / T


def main() -> int:
    rows = {"fastomkl VAW2 `predict_learn`": per_sample("vaw2"),
            "floor: 76 packed spmv + spr (fastomkl kernels)": per_sample("kernels"),
            "floor: 76 dsymv + dsyr (OpenBLAS, full matrices)": per_sample("blas")}
    base = rows["floor: 76 dsymv + dsyr (OpenBLAS, full matrices)"]
    lines = ["# Instructions per sample: VAW², 76 kernels, 2m = 100, d = 15 (Naval)", "",
             f"Command: `python bench/count_vaw_instructions.py` (valgrind callgrind; difference of "
             f"runs over {2 * T} and {T} samples; AVX2 code paths).", "",
             "| contender | instructions per sample | ratio to dsymv + dsyr floor |", "|---|---|---|"]
    lines += [f"| {k} | {v:,.0f} | {v / base:.3f} |" for k, v in rows.items()]
    lines += ["", "Work per sample: 76 × (10,100 multiply-adds for the packed matrix-vector product + "
              "5,050 for the rank-one update) = 1.15 M, plus 57,000 multiply-adds and 7,600 sin/cos "
              "for the features, 22,800 for z·u, b·u and b += y z, and about 9,000 for the 76 × 76 "
              "meta level: about 1.24 M multiply-adds."]
    out = HERE / "results" / "vaw_instructions.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
