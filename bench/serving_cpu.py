"""The learning thread's own CPU time per batch beside a serving thread: what serving costs the
learning, apart from waiting.

    python bench/serving_cpu.py [--rounds 40]

For one model of some families (bench/serving.py's configurations), a thread learns batches of
1,000 rows through the compiled batch call (``predict_learn_many``: no Python steps, so no
interpreter hand-over) while a second thread, in turn, sleeps, serves ``predict_one`` on the same
model (reading the snapshots the batch publishes), or serves another model (a copy).  The three
modes take turns every 10 batches, ``--rounds`` times, and each batch is timed by the learning
thread's CPU time (``time.thread_time``), so the machine's other load moves all three alike.
Medians per mode, and the extra CPU time a batch takes beside each server against the idle one.
Results in bench/results/serving_cpu.md.
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare_core import naval  # noqa: E402
from machine import describe  # noqa: E402
from serving import families  # noqa: E402

from fastomkl._core.inputs import BudgetWarning  # noqa: E402

FAMILIES = ["Raker, 1 kernel", "Raker, 76 kernels", "OMKL-GF, 76 kernels", "NystromAWV",
            "DoublySGDRegressor"]
MODES = ("idle", "same model", "another model")


def cpu_per_batch(make, X, y, rounds: int) -> dict:
    """Median CPU seconds of the learning thread per batch of 1,000 rows, per serving mode."""
    stream_X, stream_y = X[1000:], y[1000:]
    model = make().fit(X[:1000], y[:1000], shuffle=False).prepare_serving()
    model.partial_fit(stream_X[:5000], stream_y[:5000])           # past any growth
    other = copy.deepcopy(model).prepare_serving()
    engine = getattr(model._engine, "_inner", model._engine)
    batches = [(np.ascontiguousarray(stream_X[j:j + 1000]),
                np.ascontiguousarray(stream_y[j:j + 1000]))
               for j in range(0, len(stream_y) - 1000, 1000)]
    mode, stop = [MODES[0]], threading.Event()

    def serve() -> None:
        while not stop.is_set():
            if mode[0] == "idle":
                time.sleep(0.001)
                continue
            served = model if mode[0] == "same model" else other
            for x in stream_X[:50]:
                served.predict_one(x.copy())

    seconds = {m: [] for m in MODES}

    def learn() -> None:
        out, i = np.empty(1000), 0
        for _ in range(rounds):
            for m in MODES:
                mode[0] = m
                time.sleep(0.003)                  # the server takes up its new mode
                for _ in range(10):
                    Xb, yb = batches[i % len(batches)]
                    i += 1
                    start = time.thread_time()
                    engine.predict_learn_many(Xb, yb, out)
                    seconds[m].append(time.thread_time() - start)

    server = threading.Thread(target=serve)
    server.start()
    learner = threading.Thread(target=learn)
    learner.start()
    learner.join()
    stop.set()
    server.join()
    return {m: float(np.median(v)) for m, v in seconds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    warnings.simplefilter("ignore", BudgetWarning)      # the growing models reach their budgets
    X, y = naval(11934)
    makes = dict(families())
    lines = ["# The learning thread's CPU time beside a server (one run, medians)", "",
             f"`python bench/serving_cpu.py --rounds {args.rounds}` on {describe()}.", "",
             "| model | idle (us per batch) | same model served | another model served | "
             "extra, same model | extra, another model |", "|---|---|---|---|---|---|"]
    for name in FAMILIES:
        m = cpu_per_batch(makes[name], X, y, args.rounds)
        idle, same, other = (m[k] * 1e6 for k in MODES)
        lines.append(f"| {name} | {idle:.0f} | {same:.0f} | {other:.0f} | {same - idle:+.0f} "
                     f"({same / idle - 1:+.0%}) | {other - idle:+.0f} ({other / idle - 1:+.0%}) |")
        print(lines[-1], flush=True)
    (HERE / "results" / "serving_cpu.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
