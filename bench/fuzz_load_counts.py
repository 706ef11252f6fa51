"""How `fastomkl.load` meets hostile files: counts over many mutated model files of every class.

Each public class gets a small fitted model; its file is mutated at random (byte flips, truncation,
one state element set to an extreme value, a whole state array scaled to the float limits, or a
header field edited, all with the digest recomputed as anyone can).  Every class runs in its own
process, so a crash is counted, not fatal.

    python bench/fuzz_load_counts.py                 # 200 files per class
    python bench/fuzz_load_counts.py --per-class 1000 --seed 3

Prints per class and in all: files tried / refused with ValueError / loaded / loaded but
predicting a non-finite value, before or after learning from 12 rows / loaded, then learning, then
a file of its own that load refuses (unsaveable) / other exceptions / crashed processes; the
slowest refusal and each worker's peak resident memory.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def mutate(data: bytes, rng, read, write, edit_array, ints, floats) -> bytes:
    kind = rng.integers(5)
    if kind == 0:                                     # byte flips
        raw = bytearray(data)
        for _ in range(rng.integers(1, 5)):
            raw[rng.integers(len(raw))] ^= int(rng.integers(1, 256))
        return bytes(raw)
    if kind == 1:                                     # truncation
        return data[:rng.integers(len(data))]
    if kind == 2:                                     # one state element, digest recomputed
        names = sorted(read(data)[1])
        value = rng.choice(np.array(ints + floats, dtype=object))
        return edit_array(data, names[rng.integers(len(names))], int(rng.integers(10 ** 6)), value)
    header, arrays = read(data)
    if kind == 3:                                     # a whole array at a magnitude, recomputed
        name = sorted(arrays)[rng.integers(len(arrays))]
        a = arrays[name]
        scale = rng.choice([1e-300, 1e-20, 1e20, 1e150, 1e300, 2.0 ** 62])
        with np.errstate(all="ignore"):
            arrays[name] = (a * scale).astype(a.dtype) if a.dtype.kind in "fiu" else a
        return write(header, arrays)
    field = rng.choice(["class", "n_features_in", "classes", "rng_state", "feature_names",
                        "params"])
    header[field] = rng.choice(np.array([None, -1, 0, 10 ** 7, "x", [1, 1], {"a": 1},
                                         [["nested"]]], dtype=object))
    return write(header, arrays)


def worker(class_name: str, n: int, seed: int) -> dict:
    import io
    import warnings
    import fastomkl
    from fastomkl._estimator import BinaryClassifier, MulticlassClassifier
    from load_mutations import (EXTREME_FLOATS, EXTREME_INTS, edit_array, fitted, read, saved,
                                write)
    warnings.simplefilter("ignore")
    model, X = fitted(getattr(fastomkl, class_name))
    data = saved(model)
    rng = np.random.default_rng(seed)
    counts = {"tried": 0, "refused": 0, "loaded": 0, "other": 0, "nonfinite": 0,
              "unsaveable": 0, "slowest_refusal_s": 0.0}
    for _ in range(n):
        mutated = mutate(data, rng, read, write, edit_array, list(EXTREME_INTS),
                         list(EXTREME_FLOATS))
        counts["tried"] += 1
        start = time.perf_counter()
        try:
            loaded = fastomkl.load(io.BytesIO(mutated))
        except ValueError:
            counts["refused"] += 1
            counts["slowest_refusal_s"] = max(counts["slowest_refusal_s"],
                                              time.perf_counter() - start)
            continue
        except Exception:
            counts["other"] += 1
            continue
        counts["loaded"] += 1
        scores = loaded.decision_function(X) if hasattr(loaded, "decision_function") \
            else loaded.predict(X)
        if isinstance(loaded, (BinaryClassifier, MulticlassClassifier)):
            labels = getattr(loaded, "classes_", np.array([-1.0, 1.0]))
            target = labels[(X[:, 0] > 0).astype(int) % len(labels)]
        else:
            target = X[:, 0]
        loaded.partial_fit(X, target)
        after = loaded.decision_function(X) if hasattr(loaded, "decision_function") \
            else loaded.predict(X)
        if not (np.isfinite(np.asarray(scores, dtype=float)).all()
                and np.isfinite(np.asarray(after, dtype=float)).all()):
            counts["nonfinite"] += 1
        own = io.BytesIO()
        loaded.save(own)
        try:
            fastomkl.load(io.BytesIO(own.getvalue()))
        except ValueError:
            counts["unsaveable"] += 1
    counts["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.per_class, args.seed)))
        return
    from load_mutations import public_classes
    total = {"tried": 0, "refused": 0, "loaded": 0, "other": 0, "nonfinite": 0, "unsaveable": 0,
             "crashed": 0, "slowest_refusal_s": 0.0, "peak_rss_mb": 0.0}
    for cls in public_classes():
        run = subprocess.run([sys.executable, __file__, "--worker", cls.__name__, "--per-class",
                              str(args.per_class), "--seed", str(args.seed)],
                             capture_output=True, text=True)
        if run.returncode != 0:
            total["crashed"] += 1
            print(f"{cls.__name__:28s} CRASHED (exit {run.returncode}): {run.stderr[-300:]}")
            continue
        counts = json.loads(run.stdout.strip().splitlines()[-1])
        for k, v in counts.items():
            total[k] = max(total[k], v) if k in ("slowest_refusal_s", "peak_rss_mb") \
                else total[k] + v
        print(f"{cls.__name__:28s} {counts}", flush=True)
    print(f"\nfiles tried {total['tried']}, refused with ValueError {total['refused']}, loaded "
          f"{total['loaded']} (predicting non-finite values: {total['nonfinite']}; their own file "
          f"refused after learning: {total['unsaveable']}), other exceptions {total['other']}, "
          f"crashed processes {total['crashed']}; slowest refusal "
          f"{total['slowest_refusal_s'] * 1e3:.0f} ms, largest worker {total['peak_rss_mb']:.0f} "
          f"MB resident")


if __name__ == "__main__":
    main()
