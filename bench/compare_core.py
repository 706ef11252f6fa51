"""Per-sample cost of the core, every contender measured in one process and one run.

    python bench/compare_core.py [--quick] [--out bench/results/core_comparison.md]

Contenders, per prequential sample (predict, then learn the label):
* Raker with paper 000's 76 kernels, D = 50, on the first 15 Naval features (d = 15):
  fastomkl from Python one sample at a time (``predict_learn_one``), fastomkl over the stream
  (``predict_learn``, loop in C), both again with ``dtype="float32"``, the straightforward
  vectorised NumPy step (tests/reference.py), and a hand-written C loop
  (bench/handwritten_raker.c) on the same frequencies and data.
* One Gaussian kernel, D = 50: fastomkl, the NumPy step, and what a user would otherwise write:
  river ``RBFSampler | LinearRegression`` and scikit-learn ``RBFSampler`` + ``SGDRegressor.partial_fit``
  (both with 100 random features, the width of fastomkl's [cos; sin] map of 50 frequencies).
* ``predict_one`` of a tiny model (one kernel, D = 1): the cost of the Python boundary.
* Memory: parameter bytes, and Python-heap growth over a long stream (tracemalloc).
* On an AVX-512 machine, the Raker-76 table again under ``FASTOMKL_ISA=avx2`` (its own process,
  the C loop built for AVX2 too), so one run reports both instruction sets.

Times are medians over repeated passes, the contenders of a table interleaved pass by pass.  For
Raker-76 a pass is the next chunk of the stream (200 rows; the stream cycles), every contender
learning the same chunk in turn, the C loop too (built as a shared library and called through
ctypes): a process's ratio is the median over the rounds of each round's ratio, so a slow spell
of the shared machine moves both sides of a ratio, and the table is the median of five such
processes.  (Timed as a program of its own, once a round, the C loop's time moved by up to 40%
from one process to the next on this machine, 24 to 42 µs, and the ratios with it.  Taking turns
in one process, a process's per-round ratios agree to a few hundredths, but the process itself
still matters: the C loop took 22 to 39 µs a sample from one to the next, as its arrays landed
in memory.)  Results go to bench/results/core_comparison.{json,md}.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")       # single-sample latency: no BLAS threads

import argparse
import ctypes
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from machine import describe

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import fastomkl  # noqa: E402
from fastomkl.datasets import load_dataset, scale_to_unit_ball, scale_to_unit_interval  # noqa: E402
from reference import NumpyRaker  # noqa: E402


def timed(run, n: int):
    """A contender: one call runs `run()` (n samples) and returns its seconds per sample."""
    def once() -> float:
        start = time.perf_counter()
        run()
        return (time.perf_counter() - start) / n
    return once


def interleaved(contenders: dict, repeats: int, rounds: list | None = None) -> dict:
    """Median seconds per sample of each contender, the passes interleaved round by round (in a
    rotating order), so that a slow spell of this shared machine hits every contender alike.
    Each round's times are appended to `rounds` (one dict per round) if it is given."""
    times = {name: [] for name in contenders}
    names = list(contenders)
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            times[name].append(contenders[name]())
        if rounds is not None:
            rounds.append({name: t[-1] for name, t in times.items()})
    return {name: float(np.median(t)) for name, t in times.items()}


def paired_ratio(rounds: list, name: str, to: str) -> float:
    """The median over rounds of name's time / to's time in the same round: the two passes ran
    next to each other, so a spell of the shared machine moves both (a ratio of two medians
    would compare passes that ran minutes apart)."""
    return float(np.median([r[name] / r[to] for r in rounds]))


def naval(n: int):
    X, y = load_dataset("naval")
    X = scale_to_unit_ball(X[:, :15])
    return X[:n].copy(), scale_to_unit_interval(y)[:n].copy()


def c_loop_march_for(cap: str) -> str:
    """The hand-written loop's target: this machine's, or the instruction set FASTOMKL_ISA caps the
    kernels to (so that an AVX-512 machine measures the AVX2 comparison on equal terms)."""
    return {"v3": "-march=x86-64-v3", "avx2": "-march=x86-64-v3", "base": "-march=x86-64",
            "sse2": "-march=x86-64"}.get(cap, "-march=native")


def c_loop_march() -> str:
    return c_loop_march_for(os.environ.get("FASTOMKL_ISA", ""))


def chunked(learn, n_rows: int, chunk: int):
    """A contender whose pass learns the next `chunk` rows of a stream of `n_rows` (cycling):
    `learn(a, b)` learns rows a .. b - 1; one call returns its seconds per sample."""
    at = [0]

    def once() -> float:
        a = at[0]
        b = min(a + chunk, n_rows)
        start = time.perf_counter()
        learn(a, b)
        seconds = (time.perf_counter() - start) / (b - a)
        at[0] = b % n_rows
        return seconds
    return once


def handwritten_c(model, X, y, tmp: Path):
    """`learn(a, b)` running bench/handwritten_raker.c's loop on rows a .. b - 1 of the stream,
    with the model's own frequencies and a state of its own (built as a shared library for this
    machine's instruction set, or the one FASTOMKL_ISA caps the kernels to), or None."""
    weights = np.ascontiguousarray(
        np.asarray(model.features_.frequencies_).transpose(0, 2, 1), dtype=np.float64)   # (N, d, D)
    library, objects = tmp / "handwritten_raker.so", tmp / "handwritten_raker.o"
    # compiled with -ffast-math, linked without it: a library linked with it would switch the
    # whole process to flush denormals to zero when loaded, the library's contenders included
    for step in (["gcc", "-O3", "-ffast-math", "-fopenmp-simd", c_loop_march(), "-fPIC",
                  "-DHANDWRITTEN_LIBRARY", "-c", str(HERE / "handwritten_raker.c"), "-o",
                  str(objects)],
                 ["gcc", "-shared", str(objects), "-o", str(library), "-lmvec", "-lm"]):
        build = subprocess.run(step, capture_output=True, text=True)
        if build.returncode != 0:
            print("hand-written C not built:", build.stderr.strip()[:200])
            return None
    rows = ctypes.CDLL(str(library)).handwritten_raker_rows_as_program
    rows.restype = ctypes.c_double
    rows.argtypes = [ctypes.c_int] * 3 + [ctypes.POINTER(ctypes.c_double)] * 3 + \
        [ctypes.c_int] * 2 + [ctypes.POINTER(ctypes.c_double)] * 4
    n, d, D = weights.shape
    X, y = np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)
    theta, logw, z, f = np.zeros(n * 2 * D), np.zeros(n), np.zeros(2 * D), np.zeros(n)
    pointer = lambda a: a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))  # noqa: E731
    arrays = [pointer(a) for a in (weights, X, y)]
    state = [pointer(a) for a in (theta, logw, z, f)]

    def learn(a: int, b: int) -> None:
        rows(n, D, d, *arrays, a, b, *state)
    learn.arrays = (weights, X, y, theta, logw, z, f)     # alive as long as the contender
    return learn


def raker76(T: int, T_numpy: int, repeats: int, chunk: int = 200) -> dict:
    """Raker-76's contenders taking turns on chunks of the stream, `repeats` rounds (the NumPy
    step on chunks a tenth as long: it is ten times slower)."""
    X, y = naval(T)

    def raker(dtype="float64"):
        return fastomkl.Raker(fastomkl.paper000_dictionary(), n_components=50, eta=0.1,
                              random_state=0, dtype=dtype)
    model, stream_model, single, single_stream = raker(), raker(), raker("float32"), raker("float32")
    model.learn_one(X[0], y[0])
    single.learn_one(X[0], y[0])
    ref = NumpyRaker(model.features_.frequencies_)

    def one(m):
        return lambda a, b: [m.predict_learn_one(X[i], y[i]) for i in range(a, b)]

    def stream(m):
        return lambda a, b: m.predict_learn(X[a:b], y[a:b])
    contenders = {
        "one": chunked(one(model), T, chunk), "stream": chunked(stream(stream_model), T, chunk),
        "one32": chunked(one(single), T, chunk),
        "stream32": chunked(stream(single_stream), T, chunk),
        "numpy": chunked(lambda a, b: [ref.predict_learn_one(X[i], y[i]) for i in range(a, b)],
                         T_numpy, max(chunk // 10, 1))}
    with tempfile.TemporaryDirectory() as tmp:
        hand = handwritten_c(model, X, y, Path(tmp))
        if hand is not None:
            contenders["hand"] = chunked(hand, T, chunk)
        rounds: list = []
        med = interleaved(contenders, repeats, rounds)
    one_us, stream_us, hand_us = med["one"], med["stream"], med.get("hand")
    ratio = ((lambda name: None) if hand_us is None
             else (lambda name: paired_ratio(rounds, name, "hand")))
    return {"config": "Raker, 76 kernels, D=50, d=15 (Naval)",
            "fastomkl_predict_learn_one_us": one_us * 1e6,
            "fastomkl_predict_learn_us": stream_us * 1e6,
            "numpy_step_us": med["numpy"] * 1e6,
            "handwritten_c_us": None if hand_us is None else hand_us * 1e6,
            "speedup_vs_numpy": paired_ratio(rounds, "numpy", "one"),
            "ratio_to_handwritten_c": ratio("one"),
            "stream_ratio_to_handwritten_c": ratio("stream"),
            "ratio_quartiles": None if hand_us is None else {
                name: [float(np.percentile([r[name] / r["hand"] for r in rounds], q))
                       for q in (25, 75)] for name in ("one", "stream", "one32", "stream32")},
            "float32_predict_learn_one_us": med["one32"] * 1e6,
            "float32_predict_learn_us": med["stream32"] * 1e6,
            "float32_ratio_to_handwritten_c": ratio("one32"),
            "float32_stream_ratio_to_handwritten_c": ratio("stream32"),
            "chunk": chunk, "rounds": repeats}


def single_gaussian(T: int, T_peers: int, repeats: int) -> dict:
    X, y = naval(T)
    sigma = 0.5
    kernel = fastomkl.Gaussian(sigma)
    model = fastomkl.Raker([kernel], n_components=50, eta=0.1, random_state=0)
    model.learn_one(X[0], y[0])
    ref = NumpyRaker(model.features_.frequencies_)
    contenders = {
        "fastomkl": timed(lambda: [model.predict_learn_one(x, t) for x, t in zip(X, y)], T),
        "numpy": timed(lambda: [ref.predict_learn_one(x, t) for x, t in zip(X, y)], T)}
    gamma = 1.0 / (2 * sigma ** 2)
    Xp, yp = X[:T_peers], y[:T_peers]
    try:
        from river import feature_extraction, linear_model
        pipe = feature_extraction.RBFSampler(gamma=gamma, n_components=100, seed=0) | \
            linear_model.LinearRegression()
        dicts = [dict(enumerate(x)) for x in Xp]

        def river_pass():
            for xd, t in zip(dicts, yp):
                pipe.predict_one(xd)
                pipe.learn_one(xd, t)
        contenders["river"] = timed(river_pass, T_peers)
    except ImportError:
        print("river not installed: skipped")
    try:
        from sklearn.kernel_approximation import RBFSampler
        from sklearn.linear_model import SGDRegressor
        rbf = RBFSampler(gamma=gamma, n_components=100, random_state=0).fit(X[:1])
        sgd = SGDRegressor(learning_rate="invscaling", eta0=0.1)
        sgd.partial_fit(rbf.transform(X[:1]), y[:1])

        def sklearn_pass():
            for i in range(T_peers):
                z = rbf.transform(Xp[i:i + 1])
                sgd.predict(z)
                sgd.partial_fit(z, yp[i:i + 1])
        contenders["sklearn"] = timed(sklearn_pass, T_peers)
    except ImportError:
        print("scikit-learn not installed: skipped")
    med = interleaved(contenders, repeats)
    ours = med["fastomkl"]
    result = {"config": "one Gaussian kernel (sigma=0.5), D=50, d=15 (Naval)",
              "fastomkl_predict_learn_one_us": ours * 1e6, "numpy_step_us": med["numpy"] * 1e6,
              "speedup_vs_numpy": med["numpy"] / ours}
    for peer in ("river", "sklearn"):
        if peer in med:
            result.update({f"{peer}_us": med[peer] * 1e6, f"speedup_vs_{peer}": med[peer] / ours})
    return result


def tiny_predict_one(repeats: int) -> dict:
    x = np.array([0.3])
    model = fastomkl.Raker([fastomkl.Gaussian(1.0)], n_components=1, eta=0.1, random_state=0)
    model.learn_one(x, 0.5)
    n = 200_000
    as_list = [0.3]                                  # a request's payload, decoded from JSON
    med = interleaved({"predict_one": timed(lambda: [model.predict_one(x) for _ in range(n)], n),
                       "list": timed(lambda: [model.predict_one(as_list) for _ in range(n)], n),
                       "loop": timed(lambda: [None for _ in range(n)], n)}, repeats)
    return {"config": "one Gaussian kernel, D=1, d=1", "predict_one_us": med["predict_one"] * 1e6,
            "predict_one_list_us": med["list"] * 1e6,
            "python_loop_overhead_us": med["loop"] * 1e6}


def memory(T: int) -> dict:
    X, y = naval(T)
    model = fastomkl.Raker(fastomkl.paper000_dictionary(), n_components=50, eta=0.1, random_state=0)
    model.partial_fit(X[:100], y[:100])
    params = sum(np.asarray(v).nbytes for v in model._engine.get_state().values())
    tracemalloc.start()
    for x, t in zip(X[100:], y[100:]):
        model.predict_learn_one(x, t)
    snapshot_mid = tracemalloc.get_traced_memory()[0]
    for x, t in zip(X[100:], y[100:]):
        model.predict_learn_one(x, t)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"config": "Raker-76, D=50, d=15", "state_bytes": params,
            "frequencies_bytes": 76 * 50 * 15 * 8, "theta_bytes": 76 * 100 * 8,
            # rows zero-padded from 50 to 56 frequencies (whole AVX-512 vectors)
            "frequencies_stored_bytes": model._engine.features.stored_bytes,
            "scratch_bytes": model._engine.scratch_bytes,
            "python_heap_growth_over_stream_bytes": current - snapshot_mid,
            "python_heap_peak_during_stream_bytes": peak, "samples": 2 * (T - 100)}


def spread(r: dict) -> str:
    """How a Raker-76 table was measured, and its ratios' range over the processes."""
    ranges = r.get("ratio_ranges")
    if not ranges:
        return ""
    names = dict(zip(RATIOS, ("float64 one sample", "float64 stream", "float32 one sample",
                              "float32 stream")))
    lo, hi = r["handwritten_c_range_us"]
    return (f"The median of {r['processes']} processes.  In each, every contender learnt the same "
            f"{r['chunk']} rows in turn for {r['rounds']} rounds, and a ratio is the median of "
            f"the rounds' ratios.  From one process to the next the C loop took {lo:.1f} to "
            f"{hi:.1f} µs a sample; the ratios' range over the processes: " + "; ".join(
                f"{names[k]} {a:.2f}–{b:.2f}" for k, (a, b) in ranges.items()) + ".")


def write(results: dict, quick: bool, path: Path) -> None:
    path.parent.mkdir(exist_ok=True)
    path.with_suffix(".json").write_text(json.dumps(results, indent=2))
    r, g, s, m = results["raker76"], results["single_gaussian"], results["tiny"], results["memory"]
    fmt = lambda v: "n/a" if v is None else f"{v:.2f}"  # noqa: E731
    lines = [
        "# Core per-sample cost (one run, medians)", "",
        f"Machine: {results['machine']}; command: `python bench/compare_core.py"
        f"{' --quick' if quick else ''}"
        f"{'' if path.name == 'core_comparison.md' else f' --out bench/results/{path.name}'}`.",
        "",
        f"## {r['config']}", "",
        "| contender | µs per sample | fastomkl one-sample is faster by |", "|---|---|---|",
        f"| fastomkl `predict_learn_one` (from Python) | {fmt(r['fastomkl_predict_learn_one_us'])} | |",
        f"| fastomkl `predict_learn` (stream, loop in C) | {fmt(r['fastomkl_predict_learn_us'])} | |",
        f"| NumPy step (vectorised over kernels) | {fmt(r['numpy_step_us'])} | "
        f"{fmt(r['speedup_vs_numpy'])}× |",
        f"| hand-written C loop, same frequencies | {fmt(r['handwritten_c_us'])} | "
        f"ratio to it: {fmt(r['ratio_to_handwritten_c'])} (stream: "
        f"{fmt(r['stream_ratio_to_handwritten_c'])}) |",
        f"| fastomkl float32 `predict_learn_one` | {fmt(r['float32_predict_learn_one_us'])} | "
        f"ratio to the C loop: {fmt(r['float32_ratio_to_handwritten_c'])} |",
        f"| fastomkl float32 `predict_learn` (stream) | {fmt(r['float32_predict_learn_us'])} | "
        f"ratio to the C loop: {fmt(r['float32_stream_ratio_to_handwritten_c'])} |", "",
        "The hand-written C loop is float64 (bench/handwritten_raker.c); float32 rows: "
        "`dtype=\"float32\"` (float32 frequencies, float projection and sine-cosine, float64 "
        "features, weights and sums).  " + spread(r), "",
    ]
    for cap, v in results.get("raker76_variants", {}).items():
        lines += [
            f"Under `FASTOMKL_ISA={cap}` (processes of their own; the C loop built with "
            f"`{c_loop_march_for(cap)}`): {v['machine']}.", "",
            "| contender | µs per sample | ratio to the C loop (stream) |", "|---|---|---|",
            f"| fastomkl float64 `predict_learn_one` | {fmt(v['fastomkl_predict_learn_one_us'])} | "
            f"{fmt(v['ratio_to_handwritten_c'])} ({fmt(v['stream_ratio_to_handwritten_c'])}) |",
            f"| fastomkl float32 `predict_learn_one` | {fmt(v['float32_predict_learn_one_us'])} | "
            f"{fmt(v['float32_ratio_to_handwritten_c'])} "
            f"({fmt(v['float32_stream_ratio_to_handwritten_c'])}) |",
            f"| hand-written C loop | {fmt(v['handwritten_c_us'])} | |", "", spread(v), ""]
    lines += [
        f"## {g['config']}", "",
        "| contender | µs per sample | fastomkl is faster by |", "|---|---|---|",
        f"| fastomkl `predict_learn_one` | {fmt(g['fastomkl_predict_learn_one_us'])} | |",
        f"| NumPy step | {fmt(g['numpy_step_us'])} | {fmt(g['speedup_vs_numpy'])}× |",
        f"| river `RBFSampler \\| LinearRegression` | {fmt(g.get('river_us'))} | "
        f"{fmt(g.get('speedup_vs_river'))}× |",
        f"| scikit-learn `RBFSampler` + `SGDRegressor.partial_fit` | {fmt(g.get('sklearn_us'))} | "
        f"{fmt(g.get('speedup_vs_sklearn'))}× |", "",
        f"## Python boundary: `predict_one`, {s['config']}", "",
        f"{fmt(s['predict_one_us'])} µs per call with a NumPy array, {fmt(s['predict_one_list_us'])} "
        f"µs with a Python list (an empty Python loop iteration costs "
        f"{s['python_loop_overhead_us']:.3f} µs).", "",
        f"## Memory, {m['config']}", "",
        f"State {m['state_bytes']} bytes (frequencies {m['frequencies_bytes']}, stored as "
        f"{m['frequencies_stored_bytes']} with each row padded to whole vectors; theta "
        f"{m['theta_bytes']}; weights); scratch {m['scratch_bytes']} bytes; Python-heap growth over "
        f"{m['samples']} more samples: {m['python_heap_growth_over_stream_bytes']} bytes.", "",
    ]
    path.write_text("\n".join(lines))
    print("\n".join(lines))


RATIOS = ("ratio_to_handwritten_c", "stream_ratio_to_handwritten_c",
          "float32_ratio_to_handwritten_c", "float32_stream_ratio_to_handwritten_c")


def raker76_processes(cap: str, processes: int, quick: bool) -> dict:
    """The Raker-76 table measured in `processes` processes of its own (``--raker76-json``), with
    FASTOMKL_ISA=`cap` ("": this machine's instruction set; the variant is chosen at load time,
    the C loop built for the same set): every figure the median over the processes, and each
    ratio's range over them in ``ratio_ranges``.  Within a process the per-round ratios agree
    to a few hundredths; from one process to the next the C loop's time moved between 22 and
    39 µs a sample on this machine (where its arrays landed in memory), and the ratios with it,
    so one process is one draw of that placement."""
    command = [sys.executable, __file__, "--raker76-json"] + (["--quick"] if quick else [])
    env = {k: v for k, v in os.environ.items() if k != "FASTOMKL_ISA"}
    if cap:
        env["FASTOMKL_ISA"] = cap
    runs = [json.loads(subprocess.run(command, env=env, capture_output=True, text=True,
                                      check=True).stdout.splitlines()[-1])
            for _ in range(processes)]
    table = {key: float(np.median([run[key] for run in runs])) if isinstance(value, float)
             else value for key, value in runs[0].items() if key != "ratio_quartiles"}
    table["processes"] = processes
    if runs[0]["handwritten_c_us"] is not None:
        table["ratio_ranges"] = {key: [min(run[key] for run in runs), max(run[key] for run in runs)]
                                 for key in RATIOS}
        table["handwritten_c_range_us"] = [min(run["handwritten_c_us"] for run in runs),
                                           max(run["handwritten_c_us"] for run in runs)]
    return table


def narrower_variants(processes: int, quick: bool) -> dict:
    """The Raker-76 table again under each narrower variant this machine can run (AVX2 on an
    AVX-512 machine)."""
    from fastomkl._core.features.rff import isa_level
    return {"avx2": raker76_processes("avx2", processes, quick)} if isa_level() >= 4 else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples and passes")
    parser.add_argument("--raker76-json", action="store_true",
                        help="only the Raker-76 table, as one line of JSON (one process's)")
    parser.add_argument("--processes", type=int, default=None,
                        help="processes the Raker-76 tables are measured in (default 5; --quick 2)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "core_comparison.md",
                        help="the report (its .json beside it): another machine's run may keep "
                             "its own")
    args = parser.parse_args()
    processes = args.processes or (2 if args.quick else 5)
    T, T_numpy, repeats = (1000, 200, 3) if args.quick else (4000, 1000, 15)
    raker_rounds = 30 if args.quick else 200         # rounds of one chunk each: about 6 s
    if args.raker76_json:
        print(json.dumps({"machine": describe(), **raker76(T, T_numpy, raker_rounds)}))
        return
    results = {"machine": describe()}
    results["raker76"] = raker76_processes("", processes, args.quick)
    results["raker76_variants"] = narrower_variants(processes, args.quick)
    results["single_gaussian"] = single_gaussian(T // 2, T // 8, repeats)
    results["tiny"] = tiny_predict_one(repeats)
    results["memory"] = memory(T)
    write(results, args.quick, args.out)


if __name__ == "__main__":
    main()
