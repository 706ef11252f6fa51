"""Triangular solves: fastomkl's own loops against BLAS dtrsv (SciPy's OpenBLAS), alone and from
two threads at once.

    python bench/triangular_solves.py [--quick]

The Cholesky-based models (NystromAWV's predictions and KORS, KernelAWV, the fixed Nystrom
embedding, PROS-N-KONS) solve one or two triangular systems a round.  OpenBLAS's dtrsv takes a work
buffer from its allocator, under a lock every thread shares, at each call, so a thread serving a
model and a thread learning it met at that lock at every round.  bench/triangular_solves.c runs
both on the same factor, built here with the kernels' flags (setup.py) and linked with the
OpenBLAS SciPy ships:
* us per solve, best of 7 passes, for the two solves the models make (L x = b with L lower, and
  R^T x = b with R upper), orders 8 to 500;
* solves per second of one thread, and of two threads at once (each its own factor), of R^T x = b.
OpenBLAS chooses its kernels for the CPU itself (FASTOMKL_ISA caps fastomkl's only).  Results go to
bench/results/triangular_solves.md.
"""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_sincos import KERNEL_FLAGS  # noqa: E402  (setup.py's flags for src_c)
from machine import describe  # noqa: E402


def openblas() -> Path:
    """SciPy's OpenBLAS library (the dtrsv scipy.linalg.cython_blas calls)."""
    import scipy
    libs = Path(scipy.__file__).parent.parent / "scipy.libs"
    found = glob.glob(str(libs / "libscipy_openblas*.so"))
    if not found:
        raise SystemExit("SciPy's OpenBLAS library (scipy.libs/libscipy_openblas*.so) not found")
    return Path(found[0])


def build(tmp: Path) -> Path:
    lib, exe = openblas(), tmp / "triangular_solves"
    sources = [str(HERE / "triangular_solves.c"), str(ROOT / "src_c" / "fastomkl_linalg.c")]
    subprocess.run(["gcc", *KERNEL_FLAGS, "-I", str(ROOT / "src_c"), *sources, "-o", str(exe),
                    "-L", str(lib.parent), f"-l:{lib.name}", f"-Wl,-rpath,{lib.parent}",
                    "-lpthread", "-lm"], check=True)
    return exe


def run(exe: Path, *args) -> list[float]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([str(exe), *map(str, args)], env=env, capture_output=True, text=True,
                         check=True).stdout
    return [float(v) for v in out.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter passes")
    args = parser.parse_args()
    seconds = 0.3 if args.quick else 1.0
    lines = ["# Triangular solves (one run)", "",
             f"`python bench/triangular_solves.py{' --quick' if args.quick else ''}` on "
             f"{describe()}; OpenBLAS single-threaded (OPENBLAS_NUM_THREADS=1), its kernels "
             "chosen for this CPU.", "",
             "## us per solve (best of 7 passes)", "",
             "| order | L x = b: dtrsv | fastomkl | ratio | R^T x = b: dtrsv | fastomkl | ratio |",
             "|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(Path(tmp))
        for m in (8, 32, 100, 300, 500):
            reps = max(20, int((4e5 if args.quick else 2e6) / (m * m)))
            ob_l, us_l, ob_u, us_u = run(exe, "single", m, reps)
            lines.append(f"| {m} | {ob_l:.3f} | {us_l:.3f} | {us_l / ob_l:.2f} | {ob_u:.3f} | "
                         f"{us_u:.3f} | {us_u / ob_u:.2f} |")
            print(lines[-1], flush=True)
        lines += ["", "## R^T x = b from one thread and from two at once (solves per second)", "",
                  "| order | dtrsv, 1 thread | dtrsv, 2 threads | 2 / 1 | fastomkl, 1 thread | "
                  "fastomkl, 2 threads | 2 / 1 |", "|---|---|---|---|---|---|---|"]
        for m in (8, 32, 100):
            ob1, ob2, us1, us2 = run(exe, "threads", m, seconds)
            lines.append(f"| {m} | {ob1:,.0f} | {ob2:,.0f} | {ob2 / ob1:.2f} | {us1:,.0f} | "
                         f"{us2:,.0f} | {us2 / us1:.2f} |")
            print(lines[-1], flush=True)
    lines.append("")
    (HERE / "results" / "triangular_solves.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
