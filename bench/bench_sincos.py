"""Cost of the random-feature sine-cosine: fastomkl's fused kernel against glibc's libmvec and SLEEF.

    python bench/bench_sincos.py [--quick]

Measured in one run, on Raker-76's own projections (paper 000's 76 kernels, D = 50, the first 15
Naval features scaled as bench/compare_core.py does):
* cycles (rdtsc reference cycles) and ns per sine-cosine pair of every vector sine-cosine this CPU
  runs (bench/sincos_driver.c, built here with the kernels' flags);
* ns per sample of fastomkl_rff over the 76 kernels, fused against the libmvec kernel it replaced
  (src_c/fastomkl_kernels.c at LIBMVEC_REVISION), under every instruction-set variant;
* the frequencies each sample reads against this machine's L2 read bandwidth (a streaming read over a
  512 KB buffer);
* Raker-76's per-sample cost against the hand-written C loop (bench/compare_core.py's raker76, its
  contenders interleaved).
SLEEF (libsleef-dev) is a measurement reference only, used when installed.  Results go to
bench/results/sincos.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import fastomkl  # noqa: E402
from compare_core import naval, raker76  # noqa: E402
from fastomkl._core.features.rff import _sincos, isa_level# noqa: E402

# The last commit whose fastomkl_rff took sin and cos from libmvec (two loops after the projections).
LIBMVEC_REVISION = "0033b118c4f5a4b47f867126abb38ac59679f1ef"
KERNEL_FLAGS = ["-O3", "-ffast-math", "-fopenmp-simd", "-fno-semantic-interposition"]   # setup.py
RENAMED = ["fastomkl_rff", "fastomkl_dot", "fastomkl_shrink_axpy", "fastomkl_isa_in_use",
           "fastomkl_sincos_many"]
ISAS = {"v4": 4, "v3": 3, "base": 2}


def build(tmp: Path) -> tuple[Path, str]:
    """The driver linked with both kernels (and SLEEF when it links); and a note on SLEEF."""
    old = tmp / "libmvec_kernels.c"
    old.write_text(subprocess.run(["git", "-C", str(ROOT), "show",
                                   f"{LIBMVEC_REVISION}:src_c/fastomkl_kernels.c"],
                                  capture_output=True, text=True, check=True).stdout)
    cc = ["gcc", *KERNEL_FLAGS, "-I", str(ROOT / "src_c"), "-c"]
    subprocess.run(cc + [str(ROOT / "src_c" / "fastomkl_kernels.c"), "-o", str(tmp / "fused.o")],
                   check=True)
    subprocess.run(cc + [f"-D{name}=libmvec{name[len('fastomkl'):]}" for name in RENAMED]
                   + [str(old), "-o", str(tmp / "libmvec.o")], check=True)
    exe, objects = tmp / "driver", [str(tmp / "fused.o"), str(tmp / "libmvec.o")]
    why = ""
    for defines, libs in ((["-DWITH_SLEEF"], ["-lsleef"]), ([], [])):
        subprocess.run(cc + ["-Wno-psabi", *defines, str(HERE / "sincos_driver.c"), "-o",
                             str(tmp / "driver.o")], check=True)
        linked = subprocess.run(["gcc", str(tmp / "driver.o"), *objects, "-o", str(exe), "-lmvec",
                                 "-lm", *libs], capture_output=True, text=True)
        if linked.returncode == 0:
            return exe, ("SLEEF 3 (Debian libsleef-dev) linked" if libs else
                         f"SLEEF not measured, it does not link: {why[:200]}")
        why = linked.stderr.strip()
    raise RuntimeError(why)


def run(exe: Path, *args: str, isa: str | None = None) -> list[list[str]]:
    env = {**os.environ, **({"FASTOMKL_ISA": isa} if isa else {})}
    out = subprocess.run([str(exe), *args], capture_output=True, text=True, check=True, env=env)
    return [line.split("\t") for line in out.stdout.strip().splitlines()]


def raker76_inputs(tmp: Path, samples: int) -> tuple[Path, Path, str]:
    """The model's padded frequencies and Naval rows (rff input), their projections (pairs), and a
    line describing those projections."""
    X, y = naval(samples)
    model = fastomkl.Raker(fastomkl.paper000_dictionary(), n_components=50, eta=0.1, random_state=0)
    model.learn_one(X[0], y[0])
    bank = model._engine.features
    frequencies = bank.frequencies.transpose(0, 2, 1)                   # (N, d, D)
    N, d, ld = frequencies.shape[0], frequencies.shape[1], bank.ld
    W = np.zeros((N, d, ld))                                             # rows padded as stored
    W[:, :, :frequencies.shape[2]] = frequencies
    rff_input, pair_input = tmp / "rff.bin", tmp / "pairs.bin"
    with open(rff_input, "wb") as fh:
        fh.write(np.array([N, d, ld, 50, samples], dtype=np.int32).tobytes())
        fh.write(W.tobytes())
        fh.write(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    proj = np.einsum("kdj,nd->nkj", W[:, :, :50], X[:8]).ravel()          # 8 samples, 30400 values
    proj = proj[: len(proj) // 8 * 8]
    with open(pair_input, "wb") as fh:
        fh.write(np.array([len(proj)], dtype=np.int32).tobytes())
        fh.write(proj.tobytes())
    p50, p99 = np.percentile(np.abs(proj), [50, 99])
    described = (f"Raker-76's own projections W x (8 Naval samples, {len(proj)} values, median |W x| "
                 f"{p50:.2g}, 99th percentile {p99:.3g}, largest {np.abs(proj).max():.3g})")
    return rff_input, pair_input, described


ACCURACY = """
import sys
import numpy as np
sys.path.insert(0, "tests")
from test_sincos import edge_cases, ulps
from fastomkl._core.features.rff import _sincos
x = np.random.default_rng(0).uniform(-1e3, 1e3, 10 ** 6)
e = edge_cases()
worst, near_zero = 0.0, 0.0
for f, i in ((np.sin, 0), (np.cos, 1)):
    worst = max(worst, ulps(_sincos(x)[i], f(x)).max())
    zero = np.abs(f(e)) < 1e-6
    worst = max(worst, ulps(_sincos(e)[i], f(e))[~zero].max())
    near_zero = max(near_zero, np.abs(_sincos(e)[i] - f(e))[zero].max())
print(worst, near_zero)
"""


def accuracy(isa: str) -> tuple[float, float]:
    """Largest error in ulp against NumPy (10^6 points on [-1e3, 1e3] and tests/test_sincos.py's edge
    cases), and largest absolute error within 1e-6 of a zero, under one variant."""
    out = subprocess.run([sys.executable, "-c", ACCURACY], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={**os.environ, "FASTOMKL_ISA": isa})
    worst, near_zero = map(float, out.stdout.split())
    return worst, near_zero


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and samples")
    args = parser.parse_args()
    rounds, samples = (5, 300) if args.quick else (15, 1000)
    level = isa_level()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        exe, sleef_note = build(tmp)
        rff_input, pair_input, described = raker76_inputs(tmp, samples)
        pairs = run(exe, "pairs", str(pair_input), str(rounds))
        rff = {isa: {row[0]: float(row[2]) for row in run(exe, "rff", str(rff_input), str(rounds),
                                                          isa=isa)}
               for isa, lv in ISAS.items() if lv <= level}
        l2 = float(run(exe, "l2", "512", str(rounds))[0][2])
    errors = {isa: accuracy(isa) for isa in rff}
    core = raker76(T=1000 if args.quick else 3000, T_numpy=100 if args.quick else 300,
                   repeats=10 * rounds)           # rounds of one chunk of the stream each
    write(pairs, rff, l2, core, errors, described, sleef_note, args.quick)


def _pair_ns(dtype: str) -> float:
    """ns per sine-cosine pair of the kernel's routine in `dtype`, through the test entry."""
    x = np.random.default_rng(0).uniform(-100, 100, 4096).astype(dtype)
    best = np.inf
    for _ in range(200):
        start = time.perf_counter()
        _sincos(x, dtype)
        best = min(best, time.perf_counter() - start)
    return best / x.size * 1e9


def _float32_storage() -> tuple[int, int]:
    """(kernels computing in float, bytes of stored frequencies) of the float32 Raker-76."""
    X, y = naval(2)
    model = fastomkl.Raker(fastomkl.paper000_dictionary(), n_components=50, eta=0.1,
                           random_state=0, dtype="float32").learn_one(X[0], y[0])
    return int(model.features_.float32_kernels_.sum()), model._engine.features.stored_bytes


def write(pairs, rff, l2_gbs, core, errors, described, sleef_note, quick) -> None:
    tsc_ghz = next(float(r[2]) for r in pairs if r[0] == "tsc_ghz")
    freq_bytes = 76 * 15 * 50 * 8
    stored_bytes = 76 * 15 * 56 * 8
    floor_ns = stored_bytes / l2_gbs
    n_float, single_bytes = _float32_storage()
    names = {4: "AVX-512", 3: "AVX2 + FMA", 2: "SSE2"}
    lines = [
        "# Sine-cosine of the random features (one run, medians)", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, TSC {tsc_ghz:.3f} GHz (cycles are "
        "rdtsc reference cycles: `perf stat` reports core cycles as <not supported> in this VM); "
        f"{sleef_note}; command: `python bench/bench_sincos.py{' --quick' if quick else ''}`.", "",
        f"Arguments: {described}.", "",
        "## Cycles per sine-cosine pair (throughput, results stored)", "",
        "| implementation | variant | cycles / pair | ns / pair |", "|---|---|---|---|"]
    lines += [f"| {r[0]} | {names[int(r[1])]} | {float(r[2]):.2f} | {float(r[3]):.2f} |"
              for r in pairs if r[0] != "tsc_ghz"]
    lines += ["", "## fastomkl_rff over Raker-76's 76 kernels (ns per sample)", "",
              "| variant | fused sine-cosine | libmvec cos then sin | fused / libmvec |",
              "|---|---|---|---|"]
    lines += [f"| {names[ISAS[isa]]} | {r['fused']:.0f} | {r['libmvec']:.0f} | "
              f"{r['fused'] / r['libmvec']:.2f} |" for isa, r in rff.items()]
    widest = max(rff, key=lambda isa: ISAS[isa])
    step_ns = rff[widest]["fused"]
    pair_ns = next(float(r[3]) for r in pairs if r[0].startswith("fastomkl") and
                   int(r[1]) == ISAS[widest])
    lines += ["", "## Accuracy against NumPy's float64 sin and cos", "",
              "| variant | largest error (ulp) | largest absolute error within 1e-6 of a zero |",
              "|---|---|---|"]
    lines += [f"| {names[ISAS[isa]]} | {worst:.2f} | {near_zero:.1e} |"
              for isa, (worst, near_zero) in errors.items()]
    lines += ["", "10^6 points uniform on [-1e3, 1e3] plus the edge cases of tests/test_sincos.py "
              "(multiples of pi/4 and their neighbours, the 2^20 boundary of the reduction, values "
              "up to 1.7e308 taken by glibc).", "",
              "## Bytes per sample", "",
              f"Frequencies read per sample: 76 × 15 × 50 × 8 = {freq_bytes} B ({stored_bytes} B as "
              f"stored, rows padded to 56). L2 streaming read (512 KB buffer): {l2_gbs:.1f} GB/s, so "
              f"reading them takes at least {floor_ns:.0f} ns per sample. The whole feature step "
              f"takes {step_ns:.0f} ns on the widest variant, of which the 3800 sine-cosine pairs "
              f"take about {3800 * pair_ns:.0f} ns at {pair_ns:.2f} ns per pair.", "",
              f"With `dtype=\"float32\"`: {n_float} of the 76 kernels compute in float, their "
              f"frequencies in float32 (rows padded to 64 floats), the {76 - n_float} narrower "
              f"ones in float64: {single_bytes} B as stored, at least {single_bytes / l2_gbs:.0f} "
              f"ns per sample; the float sine-cosine takes {_pair_ns('float32'):.2f} ns per pair "
              f"against {_pair_ns('float64'):.2f} in double (through `_sincos` on 4096 values in "
              "L1, best of 200).", "",
              "## Raker-76 against the hand-written C loop (bench/compare_core.py, interleaved)", "",
              "| contender | µs per sample |", "|---|---|",
              f"| fastomkl `predict_learn_one` (from Python) | "
              f"{core['fastomkl_predict_learn_one_us']:.2f} |",
              f"| fastomkl `predict_learn` (stream) | {core['fastomkl_predict_learn_us']:.2f} |",
              f"| fastomkl float32 `predict_learn_one` | "
              f"{core['float32_predict_learn_one_us']:.2f} |",
              f"| fastomkl float32 `predict_learn` (stream) | "
              f"{core['float32_predict_learn_us']:.2f} |",
              f"| hand-written C loop (libmvec cos, sin) | {core['handwritten_c_us']:.2f} |", "",
              f"Ratio to the hand-written loop: {core['ratio_to_handwritten_c']:.2f} one sample at a "
              f"time, {core['stream_ratio_to_handwritten_c']:.2f} over the stream; float32 "
              f"{core['float32_ratio_to_handwritten_c']:.2f} and "
              f"{core['float32_stream_ratio_to_handwritten_c']:.2f} (before the fused "
              f"sine-cosine: 0.85 and 0.77, bench/results/core_comparison.md at {LIBMVEC_REVISION[:7]}, "
              f"another run).", ""]
    out = HERE / "results" / "sincos.md"
    out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
