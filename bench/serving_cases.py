"""Serving's edge cases: how long a predict_one waits, and what it answers, beside learning that is
not a single batch call (bench/serving.py measures that one).

    python bench/serving_cases.py [--seconds 4] [--out bench/results/serving_cases.md]

One thread serves ``predict_one`` back to back on a model prepared for serving
(``prepare_serving()``) while the others:

* learn the model in batches, alone, beside a second learner or a ``predict`` on a batch of the
  same model (a batch let in between two rounds of another), or beside those on another model
  (the control: what two Python threads cost on this machine);
* learn another model in batches (one prepared for serving, about to be swapped in): how fast
  that learning goes beside the server, against the same batches alone;
* learn another model whose arrays grow between its rounds (a NystromAWV from its first 1,000
  rows to 6,000, its stored inputs doubling on the way): the same, from fresh models;
* learn a batch of a multiclass model that meets a new label (DoublySGDSoftmaxClassifier);
* learn a batch of a classifier whose 200,000 string labels take long to encode before its
  rounds;
* refit the model (``fit``) again and again: predictions raising an error are counted;
* learn one sample at a time while a third thread saves the model: predictions equal to the
  model's answer when serving was prepared, once the model has learnt far past it, are counted.

Each case reports the longest wait of a prediction (ms) and its counts.  Results go to
bench/results/serving_cases.md with the machine that ran.
"""
from __future__ import annotations

import argparse
import io
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
from machine import describe

import fastomkl
from fastomkl import Gaussian, Laplacian
from fastomkl._core.inputs import BudgetWarning
from fastomkl.dsg import DoublySGDSoftmaxClassifier

HERE = Path(__file__).resolve().parent
RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, size=(200_000, 6))
Y = np.sin(X.sum(1))


def raker():
    return fastomkl.Raker([Gaussian(0.5), Laplacian(1.0), Gaussian(2.0)], n_components=30,
                          random_state=0).fit(X[:100], Y[:100]).prepare_serving()


def serve(model, work, seconds=None):
    """Serve predict_one on `model` while `work(stop)` runs in other threads (a list of
    callables, each looping until `stop` is set, or returning when done if `seconds` is None):
    (longest wait in ms, predictions, errors raised, (answer, rounds the model had learnt))."""
    stop, waits, errors, answers = threading.Event(), [], [], []

    def server():
        while not stop.is_set():
            start = time.perf_counter_ns()
            try:
                t = model._engine.t          # before: the answer is of this round or later
                answers.append((model.predict_one(X[0]), t))
            except Exception as exc:             # noqa: BLE001 (counted: the case under test)
                errors.append(type(exc).__name__)
            waits.append(time.perf_counter_ns() - start)

    threads = [threading.Thread(target=job, args=(stop,)) for job in work]
    serving = threading.Thread(target=server)
    serving.start()
    time.sleep(0.1)
    for thread in threads:
        thread.start()
    if seconds is not None:
        time.sleep(seconds)
        stop.set()
    for thread in threads:
        thread.join()
    stop.set()
    serving.join()
    return max(waits) / 1e6, len(waits), len(errors), answers


def learning(model, rows=20_000):
    def job(stop):
        while not stop.is_set():
            model.partial_fit(X[:rows], Y[:rows])
    return job


def predicting(model, rows=20_000):
    def job(stop):
        while not stop.is_set():
            model.predict(X[:rows])
    return job


def nested(seconds):
    rows = []
    for name, extra in (("one learner", None), ("a second learner", learning),
                        ("a predict(X) thread", predicting)):
        for same in ((True, False) if extra else (True,)):
            model, other = raker(), raker()
            work = [learning(model)] + ([extra(model if same else other)] if extra else [])
            wait, n, _, _ = serve(model, work, seconds)
            label = name if extra is None else f"{name} on {'the same' if same else 'another'} model"
            rows.append((f"Raker, partial_fit beside {label}", wait, f"{n:,} predictions"))
    return rows


def another_model(seconds):
    """A thread learns another model, prepared for serving as one about to be swapped in would
    be, in batches of 1,000 rows while the model is served: the longest prediction, and how
    fast that learning goes against the same batches learnt alone."""
    model, other, batches = raker(), raker(), [0]

    def job(stop):
        while not stop.is_set():
            other.partial_fit(X[:1000], Y[:1000])
            batches[0] += 1

    wait, n, _, _ = serve(model, [job], seconds)
    alone = raker()
    start = time.perf_counter()
    for _ in range(batches[0]):
        alone.partial_fit(X[:1000], Y[:1000])
    alone_seconds = time.perf_counter() - start
    return [("Raker, partial_fit of another model in batches of 1,000 rows", wait,
             f"{n:,} predictions; {batches[0] / seconds:,.0f} batches/s, "
             f"{alone_seconds / seconds:.2f} of learning alone")]


def growing_model(repeats=5):
    """A thread learns another model whose arrays grow between its rounds (a NystromAWV from its
    first 1,000 rows to 6,000, in batches of 1,000: its stored inputs double twice and stop at
    5,000, each time with copies made in the middle of a batch call) while the model is served:
    the longest prediction, and the time of those batches against the same batches learnt
    alone, medians over `repeats` fresh models."""
    def fresh():
        return fastomkl.NystromAWV(Gaussian(1.0), random_state=0).fit(
            X[:1000], Y[:1000], shuffle=False).prepare_serving()

    def grow(learner):
        start = time.perf_counter()
        for j in range(1000, 6000, 1000):
            learner.partial_fit(X[j:j + 1000], Y[j:j + 1000])
        return time.perf_counter() - start

    beside, alone, waits, count = [], [], [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetWarning)       # the dictionary's freeze, once
        for _ in range(repeats):
            learner = fresh()
            wait, n, _, _ = serve(raker(), [lambda stop, m=learner: beside.append(grow(m))])
            waits.append(wait)
            count += n
            alone.append(grow(fresh()))
    ratio = np.median(alone) / np.median(beside)
    return [("NystromAWV growing from 1,000 to 6,000 rows in batches of 1,000, beside a server of "
             "another model", max(waits),
             f"{count:,} predictions; {np.median(beside) * 1e3:.0f} ms beside, "
             f"{np.median(alone) * 1e3:.0f} ms alone (medians of {repeats}): {ratio:.2f} of "
             "learning alone")]


def new_label():
    labels = np.where(X[:, 0] > 0.3, "c", np.where(X[:, 0] > -0.3, "b", "a"))
    first = labels != "c"
    model = DoublySGDSoftmaxClassifier(kernel=Gaussian(0.8), random_state=0)
    model.fit(X[first][:500], labels[first][:500]).prepare_serving()

    def job(stop):
        model.partial_fit(X, labels)
    wait, n, _, _ = serve(model, [job])
    return [("DoublySGDSoftmaxClassifier, a batch of 200,000 rows meeting a new label", wait,
             f"{n:,} predictions, {model._engine.n_snapshot_reads:,} from snapshots")]


def long_encoding():
    labels = np.where(X[:, 0] > 0, "yes", "no").astype(object)
    model = fastomkl.RakerClassifier([Gaussian(1.0)], n_components=8, random_state=0)
    model.fit(X[:100], labels[:100]).prepare_serving()
    start = time.perf_counter()
    model._encode_many(labels, len(labels))
    encoding = (time.perf_counter() - start) * 1e3

    def job(stop):
        for _ in range(3):
            model.partial_fit(X, labels)
    wait, n, _, _ = serve(model, [job])
    return [("RakerClassifier, 3 batches of 200,000 string labels", wait,
             f"{n:,} predictions; encoding the labels alone {encoding:.0f} ms")]


def refits():
    model = raker()

    def job(stop):
        for k in range(100):
            model.fit(X[k * 100:k * 100 + 2000], Y[k * 100:k * 100 + 2000])
    wait, n, errors, _ = serve(model, [job])
    return [("Raker, 100 refits of 2,000 rows", wait, f"{n:,} predictions, {errors:,} errors")]


def saves_beside_single_rounds(seconds):
    """Checkpoints beside learn_one: a save holds the lock while NumPy copies the state (letting
    the GIL go for large arrays), and a prediction that meets it must read the model."""
    model = fastomkl.Raker([Gaussian(s) for s in np.linspace(0.3, 3.0, 20)], n_components=50,
                           random_state=0).fit(X[:100], Y[:100]).prepare_serving()
    at_prepare = model.predict_one(X[0])
    done = threading.Event()

    def learner(stop):
        end = time.perf_counter() + seconds
        for x, y in zip(X[100:], Y[100:]):
            if time.perf_counter() > end:
                break
            model.learn_one(x, y)
        done.set()

    def saver(stop):
        while not done.is_set():
            model.save(io.BytesIO())
            time.sleep(0.02)
    wait, n, _, answers = serve(model, [learner, saver])
    late = [a for a, t in answers if t > 1000]      # the model far past t = 100
    stale = sum(a == at_prepare for a in late)
    return [(f"Raker (20 kernels), learn_one for {seconds:g} s beside a save every 20 ms", wait,
             f"{n:,} predictions, {len(late):,} once the model was past t = 1,000, of which "
             f"{stale:,} equal the answer when serving was prepared (t = 100)")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0,
                        help="how long each case of batches beside batches runs")
    parser.add_argument("--out", default=str(HERE / "results" / "serving_cases.md"))
    args = parser.parse_args(argv)
    rows = (nested(args.seconds) + another_model(args.seconds) + growing_model() + new_label()
            + long_encoding() + refits() + saves_beside_single_rounds(args.seconds))
    lines = ["# Serving's edge cases", "",
             f"`python bench/serving_cases.py {' '.join(sys.argv[1:] if argv is None else argv)}`"
             .replace(" `", "`") + f" on {describe()}.", "",
             "A thread serves `predict_one` back to back on a model prepared for serving while "
             "other threads learn it as each row says (bench/serving_cases.py's docstring).", "",
             "| case | longest predict_one (ms) | counts |", "|---|---|---|"]
    lines += [f"| {case} | {wait:.1f} | {counts} |" for case, wait, counts in rows]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
