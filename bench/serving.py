"""Serving latency: percentiles of single calls, the Python boundary separated from the compiled step.

    python bench/serving.py [--calls 100000]

For a 1-kernel and a 76-kernel Raker (paper 000's dictionary, D = 50, the first 15 Naval features,
as in bench/compare_core.py), in float64 and in float32 (``dtype="float32"``), each call timed alone
with ``time.perf_counter_ns``:

* ``model.predict_one(x)`` and ``model.predict_learn_one(x, y)``: what a service calls;
* ``engine.predict_one(x)`` / ``engine.predict_learn_one(x, y)``: the compiled step behind them,
  without the estimator's Python layer;
* an empty Python call: the floor of timing one call from Python;
* the compiled step alone, as a mean: ``predict_many`` over the whole batch, divided by its size.

Each request's x (a new float64 array) and y (a float) are made just before its call, outside the
timing, as a service decodes a payload.  One more row times ``model.predict_one`` reading its 10^5
inputs in place instead (23 MB of rows, cold in cache): the difference is the cost of the misses
on the input, which a benchmark that prebuilds its requests would charge to the call.

Percentiles p50, p99, p99.9 over ``--calls`` calls after a warm-up, and p99 / p50.  Allocation:
the Python-heap growth (tracemalloc) over 10^4 further calls.

Then one model of every family (``--family-calls`` calls each), ``predict_one`` idle and while a
second thread learns the stream with ``partial_fit`` in batches of 1,000 rows (a service learning
from the labels that come back): p50 / p99 / p99.9 and the longest wait, and the learning
throughput with the serving thread beside it against learning alone.  A prediction that meets a
batch reads the snapshot the batch publishes for it (fastomkl._core.engine's docstring): it waits
for at most one round of learning, and learning does not wait for it.  The longest wait is also
measured while the second thread learns another model, which the served one never waits for:
that wait is what two Python threads cost on the machine (the interpreter handed from one to the
other, the scheduler), the floor under the first.

Results in bench/results/serving.md, with the CPU and the instruction-set variant that ran.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import copy
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
from machine import describe

HERE = Path(__file__).resolve().parent
# Serving beside learning goes on for at least this long and this many learnt batches.
SERVE_SECONDS = 1.0
MIN_BATCHES = 3
sys.path.insert(0, str(HERE))

import fastomkl  # noqa: E402
from compare_core import naval  # noqa: E402


def latencies(call, X, y, learn: bool, fresh: bool = True) -> np.ndarray:
    """Nanoseconds of each call, one row of X (and value of y) per call.

    With `fresh`, each request's x and y are made just before its call, outside the timing, as a
    service decodes a request's payload into new objects; else the calls read the rows of X in
    place, 10^5 of them spread over 23 MB, so part of each call's time is the cache misses of
    reading an input no service would have let go cold."""
    clock = time.perf_counter_ns
    n = len(X)
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        x, t = (X[i].copy(), float(y[i])) if fresh else (X[i], y[i])
        if learn:
            start = clock()
            call(x, t)
            out[i] = clock() - start
        else:
            start = clock()
            call(x)
            out[i] = clock() - start
    return out


def heap_growth(call, xs, ys, learn: bool) -> int:
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    latencies(call, xs, ys, learn, fresh=False)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before


def row(name: str, ns: np.ndarray) -> str:
    p50, p99, p999 = np.percentile(ns, [50, 99, 99.9]) / 1e3
    return f"| {name} | {p50:.2f} | {p99:.2f} | {p999:.2f} | {p99 / p50:.2f} |"


def measure(label: str, kernels, X, y, calls: int, dtype: str) -> list[str]:
    model = fastomkl.Raker(kernels, n_components=50, eta="adagrad", random_state=0,
                           dtype=dtype).fit(X[:1000], y[:1000])
    engine = model._engine
    reps = -(-calls // len(y))
    xs, ys = np.tile(X, (reps, 1))[:calls], np.tile(y, reps)[:calls]
    lines = [f"### {label}", "",
             "| call | p50 (us) | p99 (us) | p99.9 (us) | p99 / p50 |", "|---|---|---|---|---|"]
    empty = lambda x: None                                   # noqa: E731
    for name, call, learn in (("empty Python call", empty, False),
                              ("model.predict_one", model.predict_one, False),
                              ("engine.predict_one (compiled step)", engine.predict_one, False),
                              ("model.predict_learn_one", model.predict_learn_one, True),
                              ("engine.predict_learn_one (compiled step)",
                               engine.predict_learn_one, True)):
        latencies(call, xs[:2000], ys[:2000], learn)         # warm-up
        lines.append(row(name, latencies(call, xs, ys, learn)))
    lines.append(row("model.predict_one, x read in place (cold)",
                     latencies(model.predict_one, xs, ys, False, fresh=False)))
    batch = xs[:20000]
    out = np.empty(len(batch))
    start = time.perf_counter()
    engine.predict_many(batch, out)
    per_sample = (time.perf_counter() - start) / len(batch) * 1e6
    growth = {name: heap_growth(call, xs[:10000], ys[:10000], learn)
              for name, call, learn in (("predict_one", model.predict_one, False),
                                        ("predict_learn_one", model.predict_learn_one, True))}
    lines += ["", f"Compiled step alone (`predict_many` over {len(batch)} rows): "
              f"{per_sample:.2f} us per sample.  Python-heap growth over 10^4 calls: "
              + ", ".join(f"{k} {v} B" for k, v in growth.items()) + ".", ""]
    return lines


# One model of every family, as a service would configure it (D = 50 random features where the
# family has them); the Python name, the label and the keyword arguments.  Raker, the graph
# models and OMKR run eta="adagrad" and DSG eta=1.0, the rules of the committed figures (their
# default since, eta="ensemble", costs more per sample: bench/results/step_rule_costs.md).
def families():
    from fastomkl import Gaussian, paper000_dictionary
    from fastomkl.dsg import DoublySGDRegressor
    one, many = [Gaussian(1.0)], paper000_dictionary()
    three = [Gaussian(0.5), Gaussian(1.0), Gaussian(2.0)]
    return [
        ("Raker, 1 kernel", lambda: fastomkl.Raker(one, n_components=50, eta="adagrad",
                                                                   random_state=0)),
        ("Raker, 76 kernels", lambda: fastomkl.Raker(many, n_components=50, eta="adagrad",
                                                                     random_state=0)),
        ("OMKL-GF, 76 kernels", lambda: fastomkl.OMKLGF(many, n_components=50, eta="adagrad",
                                                        random_state=0)),
        ("OMKL-SFG, 76 kernels", lambda: fastomkl.OMKLSFG(many, n_components=50, eta="adagrad",
                                                          random_state=0)),
        ("OMKR, 1 kernel", lambda: fastomkl.OMKR(one, eta="adagrad")),
        ("VAW2, 76 kernels", lambda: fastomkl.VAW2(many, n_components=50, random_state=0)),
        ("RF-OKS++, 76 kernels", lambda: fastomkl.RFOKSPlusPlus(many, n_components=50,
                                                                random_state=0)),
        ("OKS, 3 kernels (exact)", lambda: fastomkl.OKS(three, random_state=0)),
        ("LKMBooks, 3 kernels", lambda: fastomkl.LKMBooks(three)),
        ("TaylorAWV (degree 2)", lambda: fastomkl.TaylorAWV(Gaussian(1.0), degree=2)),
        ("NystromAWV", lambda: fastomkl.NystromAWV(Gaussian(1.0), random_state=0)),
        ("DoublySGDRegressor", lambda: DoublySGDRegressor(kernel=Gaussian(1.0), eta=1.0,
                                                          random_state=0)),
    ]


def serving_while_learning(make, X, y, calls: int) -> str:
    """One row: predict_one idle, while another thread learns the same model, and while it learns
    another model (what threads cost on this machine and interpreter, the model's lock apart);
    learning throughput alone and beside the serving thread."""
    model = make().fit(X[:1000], y[:1000], shuffle=False).prepare_serving()
    other = make().fit(X[:1000], y[:1000], shuffle=False)
    stream_X, stream_y = X[1000:], y[1000:]
    idle = latencies(model.predict_one, stream_X[:calls], stream_y[:calls], False)

    def batch(learning, i: int) -> None:
        """The i-th batch of 1,000 rows of the stream (cycling through it)."""
        j = (1000 * i) % (len(stream_X) - 1000)
        learning.partial_fit(stream_X[j:j + 1000], stream_y[j:j + 1000])

    def serve_beside(learning) -> tuple[np.ndarray, int, float]:
        """predict_one's latencies while a thread learns batches; the batches learnt while the
        serving went on (those that ended before it did) and the seconds they took.  Serving
        goes on for at least SERVE_SECONDS and MIN_BATCHES batches, so that the learning
        measured is learning beside a server throughout."""
        ends, stop = [], threading.Event()

        def learner() -> None:
            i = 0
            while not stop.is_set():
                batch(learning, i)
                ends.append(time.perf_counter())
                i += 1

        thread = threading.Thread(target=learner)
        start = time.perf_counter()
        thread.start()
        busy = [latencies(model.predict_one, stream_X[:calls], stream_y[:calls], False)]
        while time.perf_counter() - start < SERVE_SECONDS or len(ends) < MIN_BATCHES:
            busy.append(latencies(model.predict_one, stream_X[:calls], stream_y[:calls], False))
        served_until = time.perf_counter()
        stop.set()
        thread.join()
        learnt = [end for end in ends if end <= served_until]
        return np.concatenate(busy), len(learnt), learnt[-1] - start

    def beside_and_alone(learning) -> tuple[np.ndarray, float, float]:
        """serve_beside(learning), its learning throughput (rows/s), and the ratio of that to
        learning alone: a copy from the same state, prepared for serving as `learning` is,
        learns the same batches with no server beside it.  A model whose support is still
        filling learns faster while it is small (OKS: 23,800 rows/s in its first second,
        15,000 once its budget is full), so learning alone covers the same rounds."""
        alone = copy.deepcopy(learning).prepare_serving()
        busy, batches, beside_seconds = serve_beside(learning)
        start = time.perf_counter()
        for i in range(batches):
            batch(alone, i)
        alone_seconds = time.perf_counter() - start
        return busy, 1000 * batches / beside_seconds, alone_seconds / beside_seconds

    busy, beside_rate, ratio = beside_and_alone(model)
    engine = getattr(model._engine, "_inner", model._engine)
    snapshot_share = engine.n_snapshot_reads / len(busy)      # the stream may hold fewer rows
    apart, _, _ = serve_beside(other)
    p = lambda ns: np.percentile(ns, [50, 99, 99.9]) / 1e3          # noqa: E731
    (i50, i99, i999), (b50, b99, b999) = p(idle), p(busy)
    return (f"| {i50:.2f} | {i99:.2f} | {i999:.2f} | {idle.max() / 1e3:.0f} | {b50:.2f} | "
            f"{b99:.2f} | {b999:.2f} | {busy.max() / 1e3:.0f} | {apart.max() / 1e3:.0f} | "
            f"{b99 / i99:.1f} | {beside_rate / ratio:,.0f} | {beside_rate:,.0f} | {ratio:.2f} | "
            f"{snapshot_share:.0%} |")


def family_table(X, y, calls: int, only: str | None = None) -> list[str]:
    lines = ["## Every family: predict_one idle and while another thread learns", "",
             f"Columns: predict_one p50 / p99 / p99.9 and the longest call over "
             f"{min(calls, len(y) - 1000):,} calls "
             "(the rows after the first 1,000, which the model learns first) idle, then while "
             "a thread runs `partial_fit` over batches of 1,000 rows (the calls repeated until "
             f"the thread has learnt for {SERVE_SECONDS:g} s and {MIN_BATCHES} batches), the "
             "snapshots built beforehand with `prepare_serving()` as a service does (us); the "
             "longest wait "
             "while learning (us), and while the thread learns another model instead (us: the "
             "wait that two Python threads on this machine cause, the handing over of the "
             "interpreter and the scheduler, whatever the model's lock does); p99 "
             "learning / p99 idle; learning throughput alone (on a copy from the same state, "
             "the same batches) and with the serving thread beside it (the batches that ended "
             "while it served), in rows/s, and their ratio; the share of the predictions made "
             "while learning that read a snapshot (the others found the lock free, between two "
             "batches, or waited for one round while the batch published its first).", "",
             "| model | p50 | p99 | p99.9 | max | p50 learning | p99 learning | p99.9 learning | "
             "max learning | max, another learning | p99 ratio | learn alone | learn beside | "
             "ratio | from snapshots |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, make in families():
        if only is not None and only not in label:
            continue
        lines.append(f"| {label} " + serving_while_learning(make, X, y, calls))
        print(lines[-1], flush=True)
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--family-calls", type=int, default=20_000)
    parser.add_argument("--families-only", action="store_true",
                        help="only the table of every family")
    parser.add_argument("--only", help="print the rows of the families whose label holds this "
                                       "(e.g. LKMBooks), leaving the results file as it is")
    args = parser.parse_args()
    X, y = naval(11934)
    if args.only is not None:
        family_table(X, y, args.family_calls, args.only)
        return
    command = (f"python bench/serving.py --calls {args.calls} --family-calls {args.family_calls}"
               + (" --families-only" if args.families_only else ""))
    lines = ["# Serving latency", "",
             f"`{command}` on {describe()}; a shared machine (other processes run beside it).", ""]
    lines += family_table(X, y, args.family_calls)
    for dtype in () if args.families_only else ("float64", "float32"):
        lines += measure(f"Raker, 1 Gaussian kernel, D = 50, d = 15, {dtype}",
                         [fastomkl.Gaussian(1.0)], X, y, args.calls, dtype)
        lines += measure(f"Raker, 76 kernels (paper 000), D = 50, d = 15, {dtype}",
                         fastomkl.paper000_dictionary(), X, y, args.calls, dtype)
    text = "\n".join(lines) + "\n"
    (HERE / "results" / "serving.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
