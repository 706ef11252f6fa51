"""Per-sample cost of every exported estimator in two builds of fastomkl, interleaved.

    python bench/per_sample_builds.py --python BEFORE_PYTHON --python AFTER_PYTHON \
        [--repeats 7] [--n 2000] [--warm 200] [--only NAME ...] [--json out.json]
    python bench/per_sample_builds.py --count-python BEFORE_PYTHON --count-python AFTER_PYTHON \
        [--only NAME ...]                    (instructions per sample, valgrind callgrind)

Each interpreter is one build's environment (its own installed fastomkl); nothing is put on
PYTHONPATH, so each process imports its own build.  A worker process (``--worker``) builds every
model with the spelling its version accepts (the same values: ``sigma=s`` before is
``kernel=Gaussian(s)`` after, ``eta_hedge`` is ``eta_combiner``, DSG ``kernel="gaussian",
bandwidth=s`` is ``kernel=Gaussian(s)``), lets it learn ``--warm`` samples with
``predict_learn_one``, then times ``--n`` further ``predict_learn_one`` calls (one per sample, from
Python) and reports microseconds per sample.  The driver runs the workers of the two builds in
turn, A B B A A B ..., ``--repeats`` times each, and reports the medians and their ratio.

The stream: d = 10, x uniform in [-1, 1]^10 scaled into the unit ball, y = sin(x . w) + noise
(regression), sign of it (binary labels 0/1), its tercile (3 classes), fixed seed.  Kernels:
four Gaussians of bandwidths 0.5, 1, 2, 4 for the multi-kernel models, D = 50 random frequencies
per kernel; Gaussian(1.0) for the one-kernel models.

``--count-python`` counts instructions per sample instead (valgrind --tool=callgrind, one run
per build holding every model named by ``--only``): callgrind dumps its counters at each
``os.getsid`` call, made just before and after each model's T samples (after its ``--warm``
ones), so a dump holds exactly the T samples' ``predict_learn_one`` loop (T = 200 by default).
"Raker-76" is Raker with paper 000's 76 kernels, D = 50, on Naval's first 15 features, as
bench/count_instructions.py counts it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

D_IN = 10


def stream(n: int, seed: int = 0):
    import numpy as np
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, D_IN)) / np.sqrt(D_IN)
    w = rng.normal(size=D_IN) * 3.0
    f = np.sin(X @ w)
    y = f + 0.1 * rng.normal(size=n)
    binary = (f > 0).astype(np.int64)
    terciles = np.digitize(f, np.quantile(f, [1 / 3, 2 / 3])).astype(np.int64)
    return X, y, binary, terciles


def _squares(X):
    import numpy as np
    X = np.asarray(X, dtype=float)
    return np.hstack([X, X ** 2])


def models(new: bool) -> dict:
    """name -> (factory, target kind); `new` picks the spelling of the redesigned version."""
    import numpy as np

    import fastomkl as f
    from fastomkl import Gaussian

    def dictionary():
        return [Gaussian(s) for s in (0.5, 1.0, 2.0, 4.0)]

    def one(sigma=1.0):
        """A one-kernel model's kernel: kernel=Gaussian(s) (after) / sigma=s (before)."""
        return {"kernel": Gaussian(sigma)} if new else {"sigma": sigma}

    def dsg_kernel(sigma=1.0):
        return {"kernel": Gaussian(sigma)} if new else {"kernel": "gaussian", "bandwidth": sigma}

    rf = {"kernels": None, "n_components": 50, "random_state": 0}
    centres = np.random.default_rng(1).uniform(-1, 1, (20, D_IN)) / np.sqrt(D_IN)
    m = {}

    def add(name, factory, kind="reg"):
        m[name] = (factory, kind)

    for cls_name, kind in (("Raker", "reg"), ("RakerClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(**{**rf, "kernels": dictionary()}), kind)
    add("Raker-2048", lambda: f.Raker([Gaussian(1.0)], n_components=1024, eta="adagrad",
                                                random_state=0))
    # the graph models and OMKR: eta="auto", every build's rule (their default is now "ensemble")
    for cls_name, kind in (("OMKLGF", "reg"), ("OMKLGFClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(**{**rf, "kernels": dictionary()}, M=2, J=2,
                                                       eta="auto"), kind)
    for cls_name, kind in (("OMKLSFG", "reg"), ("OMKLSFGClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(**{**rf, "kernels": dictionary()}, M=2,
                                                       eta="auto"), kind)
    for cls_name, kind in (("OMKLSFGR", "reg"), ("OMKLSFGRClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(**{**rf, "kernels": dictionary()}, M=2,
                                                       top_k=2, eta="auto"), kind)
    for cls_name, kind in (("OMKR", "reg"), ("OMKRClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(kernels=dictionary(), eta="auto"), kind)
    add("OnlineKernelRegressor",      # Gaussian(1): exp(-||x - y||^2 / 2), gamma = 0.5
        lambda: f.OnlineKernelRegressor(kernel=Gaussian(1.0)) if new
        else f.OnlineKernelRegressor(kernel="rbf", gamma=0.5))
    for cls_name, kind in (("RFOMKR", "reg"), ("RFOMKRClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(**{**rf, "kernels": dictionary()}), kind)
    for cls_name, kind in (("VAW", "reg"), ("VAWClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(
            **({"kernel": Gaussian(1.0)} if new else {"kernels": [Gaussian(1.0)]}),
            n_components=50, random_state=0), kind)
    for cls_name, kind in (("ConcatVAW", "reg"), ("ConcatVAWClassifier", "bin"), ("VAW2", "reg"),
                           ("VAW2Classifier", "bin"), ("VAWEWA", "reg"),
                           ("VAWEWAClassifier", "bin"), ("VAWMeta", "reg"),
                           ("VAWMetaClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(**{**rf, "kernels": dictionary()}), kind)
    for base in ("OKS", "OKSPlusPlus", "IOKS", "LKMBooks"):
        for cls_name, kind in ((base, "reg"), (base + "Classifier", "bin")):
            add(cls_name, lambda c=cls_name: getattr(f, c)(kernels=dictionary(), random_state=0),
                kind)
    for base in ("RFOKS", "RFOKSPlusPlus", "RFIOKS"):
        for cls_name, kind in ((base, "reg"), (base + "Classifier", "bin")):
            add(cls_name, lambda c=cls_name: getattr(f, c)(kernels=dictionary(), n_components=50,
                                                           random_state=0), kind)
    for cls_name, kind in (("TaylorAWV", "reg"), ("TaylorAWVClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(**one()), kind)
    for cls_name, kind in (("NystromAWV", "reg"), ("NystromAWVClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(**one(), random_state=0), kind)
    for cls_name, kind in (("KernelAWV", "reg"), ("KernelAWVClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(**one()), kind)
    for cls_name, kind in (("FOGD", "reg"), ("FOGDClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(**one(), n_components=50, random_state=0),
            kind)
    for cls_name, kind in (("BeforehandNystromAWV", "reg"), ("BeforehandNystromAWVClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(centres=centres, **one()), kind)
    for cls_name, kind in (("ProsNKons", "reg"), ("ProsNKonsClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(**one(), random_state=0), kind)
    for cls_name, kind in (("FixedEmbeddingAWV", "reg"), ("FixedEmbeddingAWVClassifier", "bin")):
        add(cls_name, lambda c=cls_name: getattr(f, c)(phi=_squares), kind)
    # Mixture had no one-sample methods before: both versions timed over the stream by
    # predict_learn (one call, after a warm-up call).
    add("Mixture", lambda: f.Mixture([f.NystromAWV(**one(0.5), random_state=0),
                                      f.TaylorAWV(**one(1.0))]), "batch")
    # Mixture's members alone, over the stream by predict_learn as Mixture is timed
    add("NystromAWV(0.5) by predict_learn", lambda: f.NystromAWV(**one(0.5), random_state=0),
        "batch")
    add("TaylorAWV by predict_learn", lambda: f.TaylorAWV(**one(1.0)), "batch")
    dsg_small = {"random_state": 0}
    add("DoublySGDRegressor", lambda: f.DoublySGDRegressor(**dsg_kernel(), **dsg_small))
    add("DoublySGDClassifier", lambda: f.DoublySGDClassifier(**dsg_kernel(), **dsg_small), "bin")
    add("DoublySGDOneClass", lambda: f.DoublySGDOneClass(**dsg_kernel(), **dsg_small), "none")
    add("DoublySGDDensityRatio", lambda: f.DoublySGDDensityRatio(**dsg_kernel(), **dsg_small),
        "bin")
    add("DoublySGDSoftmaxClassifier",
        lambda: f.DoublySGDSoftmaxClassifier(**dsg_kernel(), **dsg_small), "multi")
    add("DoublySGDGP", lambda: f.DoublySGDGP(**dsg_kernel(), random_state=0))
    # NORMA had only partial_fit before: both timed by partial_fit over batches of 32 rows; its
    # budget (after) holds every row, as the unbounded expansion before did.
    add("NORMA", lambda: f.NORMA(Gaussian(1.0), budget=1 << 16) if new else
        f.NORMA(Gaussian(1.0)), "partial")
    if new:      # only in the redesigned version: the composition API, the Raker preset's parts
        from fastomkl.compose import OGD, Hedge, RandomFeatures
        for cls_name, kind in (("OnlineMKL", "reg"), ("OnlineMKLClassifier", "bin")):
            add(cls_name, lambda c=cls_name: getattr(f, c)(
                features=RandomFeatures(dictionary(), 50), experts=OGD(), combiner=Hedge(),
                random_state=0), kind)
    return m


def is_new() -> bool:
    import fastomkl
    return "OnlineMKL" in fastomkl.__all__


def worker(names: list[str] | None, n: int, warm: int) -> dict:
    import warnings
    warnings.simplefilter("ignore")
    import numpy as np  # noqa: F401
    X, y, binary, terciles = stream(warm + n)
    targets = {"reg": y, "bin": binary, "multi": terciles, "none": None}
    targets["batch"] = targets["partial"] = y
    out = {}
    for name, (factory, kind) in models(is_new()).items():
        if names and name not in names:
            continue
        try:
            model = factory()
            t = targets[kind]
            if kind == "none":                     # one-class: predict, then learn (no target)
                def run(lo, hi):
                    for i in range(lo, hi):
                        model.predict_one(X[i])
                        model.learn_one(X[i])
            elif kind == "batch":
                def run(lo, hi):
                    model.predict_learn(X[lo:hi], t[lo:hi])
            elif kind == "partial":
                def run(lo, hi):
                    for i in range(lo, hi, 32):
                        model.partial_fit(X[i:min(i + 32, hi)], t[i:min(i + 32, hi)])
            else:
                def run(lo, hi):
                    step = model.predict_learn_one
                    for i in range(lo, hi):
                        step(X[i], t[i])
            if kind == "none":                     # a one-class model predicts once it has learnt
                model.learn_one(X[0])
            run(1 if kind == "none" else 0, warm)
            wall, cpu = time.perf_counter(), time.process_time()
            run(warm, warm + n)
            out[name] = [(time.perf_counter() - wall) / n * 1e6,
                         (time.process_time() - cpu) / n * 1e6]
        except Exception as exc:                      # reported, not hidden
            out[name] = f"error: {type(exc).__name__}: {exc}"[:300]
    return out


def run_worker(python: str, args, names) -> dict:
    cmd = ["nice", "-n", "10", python, os.path.abspath(__file__), "--worker", "--n", str(args.n),
           "--warm", str(args.warm)]
    if names:
        cmd += ["--only", *names]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode:
        raise RuntimeError(res.stderr[-3000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


# -- instruction counts -----------------------------------------------------------------------------
# One process per build under callgrind, every model in it: callgrind dumps its counters each time
# getsid() is called (--dump-before=getsid), and the driver calls os.getsid(0) just before and just
# after each model's T timed samples, so one dump holds exactly those samples' instructions (the
# loop itself, as the timings run it); construction and warm-up fall in other dumps.
COUNT_DRIVER = """
import os; os.environ["OPENBLAS_NUM_THREADS"] = "1"
import sys, json, warnings; warnings.simplefilter("ignore")
sys.path.insert(0, {here!r})
import per_sample_builds as p
names, T, warm = sys.argv[1].split(","), int(sys.argv[2]), int(sys.argv[3])
import fastomkl
from fastomkl.datasets import load_dataset, scale_to_unit_ball, scale_to_unit_interval
specs = p.models(p.is_new())
Xs, ys, binary, terciles = p.stream(warm + T)
order = []
for name in names:
    if name == "Raker-76":
        X, y = load_dataset("naval"); X = scale_to_unit_ball(X[:, :15]); y = scale_to_unit_interval(y)
        model = fastomkl.Raker(fastomkl.paper000_dictionary(), n_components=50, eta=0.1,
                               random_state=0)
        t, kind = y, "reg"
    else:
        X = Xs
        factory, kind = specs[name]
        model = factory()
        t = {{"reg": ys, "bin": binary, "multi": terciles, "none": None, "batch": ys,
              "partial": ys}}[kind]
    if kind in ("batch", "partial"):           # the models that had no one-sample methods before
        if kind == "batch":
            model.predict_learn(X[:warm], t[:warm])
        else:
            for i in range(0, warm, 32):
                model.partial_fit(X[i:min(i + 32, warm)], t[i:min(i + 32, warm)])
        os.getsid(0)
        if kind == "batch":
            model.predict_learn(X[warm:warm + T], t[warm:warm + T])
        else:
            for i in range(warm, warm + T, 32):
                model.partial_fit(X[i:min(i + 32, warm + T)], t[i:min(i + 32, warm + T)])
        os.getsid(0)
        order.append(name)
        continue
    if kind == "none":
        model.learn_one(X[0])
    for i in range(1 if kind == "none" else 0, warm):
        if kind == "none":
            model.predict_one(X[i]); model.learn_one(X[i])
        else:
            model.predict_learn_one(X[i], t[i])
    os.getsid(0)                                   # dump: everything up to here
    if kind == "none":
        for i in range(warm, warm + T):
            model.predict_one(X[i]); model.learn_one(X[i])
    else:
        step = model.predict_learn_one
        for i in range(warm, warm + T):
            step(X[i], t[i])
    os.getsid(0)                                   # dump: the T samples
    order.append(name)
print(json.dumps(order))
"""


def count_all(python: str, names: list[str], T: int, warm: int) -> dict:
    """Instructions per sample of each model (T samples after `warm`), one callgrind run."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with tempfile.TemporaryDirectory() as tmp:
        driver = os.path.join(tmp, "driver.py")
        with open(driver, "w") as fh:
            fh.write(COUNT_DRIVER.format(here=here))
        out = subprocess.run(["nice", "-n", "10", "valgrind", "--tool=callgrind",
                              "--dump-before=getsid", f"--callgrind-out-file={tmp}/cg.out",
                              python, driver, ",".join(names), str(T), str(warm)],
                             capture_output=True, text=True, env=env)
        if out.returncode:
            raise RuntimeError(out.stderr[-3000:])
        order = json.loads(out.stdout.strip().splitlines()[-1])
        totals = {}
        for fname in os.listdir(tmp):
            m = re.fullmatch(r"cg\.out\.(\d+)", fname)
            if m:
                with open(os.path.join(tmp, fname)) as fh:
                    totals[int(m.group(1))] = int(re.search(r"^summary: (\d+)", fh.read(),
                                                            re.M).group(1))
    # dumps 1, 2 | 3, 4 | ...: dump 2k is model k's T samples (dump 2k-1: its set-up and warm-up)
    return {name: totals[2 * (k + 1)] / T for k, name in enumerate(order)}


def render(table: dict, pythons: list[str]) -> str:
    """Markdown: medians (wall time and process CPU time, us per sample) and after / before."""
    a, b = pythons[0], pythons[-1]

    def cell(v):
        return "-" if v is None else f"{v:,.2f}"

    def ratio(x, y):
        return "-" if not x or not y else f"{y / x:.2f}"

    def med(entry, k):
        pairs = [v for v in entry["all"] if isinstance(v, list)]
        return statistics.median(v[k] for v in pairs) if pairs else None

    lines = ["| model | before, wall | after, wall | after/before, wall | before, CPU | after, CPU "
             "| after/before, CPU |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, row in table.items():
        wa, wb, ca, cb = med(row[a], 0), med(row[b], 0), med(row[a], 1), med(row[b], 1)
        lines.append(f"| {name} | {cell(wa)} | {cell(wb)} | {ratio(wa, wb)} | {cell(ca)} | "
                     f"{cell(cb)} | {ratio(ca, cb)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--python", action="append", default=[])
    ap.add_argument("--count-python", action="append", default=[])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--warm", type=int, default=200)
    ap.add_argument("--T", type=int, default=200)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--json")
    ap.add_argument("--render", help="print the table of a --json file of an earlier run")
    args = ap.parse_args(argv)
    if args.render:
        with open(args.render) as fh:
            saved = json.load(fh)
        print(render(saved["table"], saved["pythons"]))
        return 0
    if args.worker:
        print(json.dumps(worker(args.only, args.n, args.warm)))
        return 0
    if args.count_python:
        results = {py: count_all(py, args.only, args.T, args.warm) for py in args.count_python}
        a, b = args.count_python[0], args.count_python[-1]
        print("| model | before instructions/sample | after | after/before |")
        print("|---|---:|---:|---:|")
        for name in args.only:
            print(f"| {name} | {results[a][name]:,.0f} | {results[b][name]:,.0f} | "
                  f"{results[b][name] / results[a][name]:.3f} |")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(results, fh, indent=1)
        return 0
    pythons = args.python
    samples = {py: [] for py in pythons}
    for r in range(args.repeats):
        order = pythons if r % 2 == 0 else pythons[::-1]
        for py in order:
            samples[py].append(run_worker(py, args, args.only))
            print(f"repeat {r + 1}/{args.repeats} {py} done", file=sys.stderr, flush=True)
    names = []
    for py in pythons:
        for s in samples[py]:
            names += [k for k in s if k not in names]
    table = {}
    for name in names:
        row = {}
        for py in pythons:
            vals = [s.get(name) for s in samples[py]]
            pairs = [v for v in vals if isinstance(v, list)]
            row[py] = {"wall": statistics.median(v[0] for v in pairs) if pairs else None,
                       "cpu": statistics.median(v[1] for v in pairs) if pairs else None,
                       "all": vals}
        table[name] = row
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"pythons": pythons, "n": args.n, "warm": args.warm,
                       "repeats": args.repeats, "table": table}, fh, indent=1)
    print(render(table, pythons))
    return 0


if __name__ == "__main__":
    sys.exit(main())
