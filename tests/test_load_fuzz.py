"""``load`` treats a file as untrusted: whatever is in it, the result is a model that predicts and
learns finite values, or one ValueError, never a crash.  Every public class is covered."""
import io
import json
import os
import re
import time
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastomkl
from load_mutations import (EXTREME_FLOATS, EXTREME_INTS, configuration_id, configurations,
                            edit_array, fitted, read, saved, write, zip_bomb)

CONFIGURATIONS = configurations()
FUZZ = settings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", params=CONFIGURATIONS, ids=configuration_id)
def original(request):
    cls, extra = request.param
    model, X = fitted(cls, **extra)
    return model, X, saved(model)


def load_bytes(data: bytes, **kw):
    return fastomkl.load(io.BytesIO(data), **kw)


def usable(model, X):
    """A loaded model predicts, learns and predicts again, all finite."""
    y = model.predict(X)
    target = np.where(X[:, 0] > 0, 1.0, -1.0) if hasattr(model, "classes_") else X[:, 0]
    if hasattr(model, "classes_"):
        target = model.classes_[(target > 0).astype(int)]
    model.partial_fit(X, target)
    scores = model.decision_function(X) if hasattr(model, "decision_function") else model.predict(X)
    return np.all(np.isfinite(np.asarray(scores, dtype=float))) and len(y) == len(X)


def accepted_or_refused(data: bytes, X) -> str:
    """A file is refused, or loads into a model that predicts and learns finite values and can
    then be saved into a file that loads."""
    try:
        model = load_bytes(data)
    except ValueError:
        return "refused"
    assert usable(model, X)
    load_bytes(saved(model))
    return "loaded"


def set_at(index, value):
    def edit(a):
        a = a.copy()
        a.reshape(-1)[index] = value
        return a
    return edit


def set_diagonal(value):
    def edit(a):
        a = a.copy()
        np.fill_diagonal(a, value)
        return a
    return edit


def scale_second_factor(value):
    """Scale the second of the factors a ridge ensemble stacks in (r t, t) (KernelAWV's 'L')."""
    def edit(a):
        a = a.copy()
        t = a.shape[1]
        a[t:2 * t] *= value
        return a
    return edit


# Values that pass finiteness and sign checks but not the magnitudes the equations allow: each
# made a loaded model predict NaN, or left it unable to load its own file after a few rounds.
SEMANTIC_EDITS = [
    (fastomkl.VAW2, "experts.P", set_at(4, -1.0), "positive definite"),      # indefinite
    (fastomkl.VAW, "experts.P", lambda a: a * 1e299, "diagonal entry above"),
    (fastomkl.TaylorAWV, "experts.P", set_at(3, -1.0), "positive definite"),
    (fastomkl.IOKS, "combiner.n_increases", set_at(0, 2 ** 31 - 1), "n_increases"),
    (fastomkl.OKSPlusPlus, "experts.mult", set_at(1, 1e308), "'mult' must lie"),
    (fastomkl.OKS, "experts.mult", set_at(0, 5e-324), "'mult' must lie"),
    (fastomkl.OMKLGF, "combiner.log_w", set_at(0, 2.0 ** 31), "wlin"),
    (fastomkl.OMKLGF, "combiner.wstate", set_at(0, 2.3e-301), "sum of wlin"),
    (fastomkl.OMKLGF, "combiner.wlin", set_at(0, 1e6), "wlin"),
    (fastomkl.NystromAWV, "experts.R", lambda a: a * 1e-300, "'R' must have a diagonal"),
    (fastomkl.NystromAWV, "experts.R", set_at(1, 1e308), "'R' has an entry"),
    (fastomkl.NystromAWV, "experts.L", set_diagonal(1e-20), "'L' must have a diagonal"),
    (fastomkl.KernelAWV, "experts.L", set_diagonal(5e-324), "'L' must have a diagonal"),
    (fastomkl.KernelAWV, "experts.L", set_at(-2, 1e300), "squared norm"),
    (fastomkl.KernelAWV, "experts.L", scale_second_factor(3.0), "squared norm"),
    (fastomkl.KernelAWV, "combiner.moments", set_at(2, -1.0), "moments"),
    (fastomkl.TaylorAWV, "combiner.moments", set_at(0, 2.5), "moments"),
    (fastomkl.FOGD, "combiner.lr", set_at(0, -1.0), "'lr' must be > 0"),
    (fastomkl.NORMA, "combiner.Smax", set_at(0, -1.0), "'Smax' must be >= 0"),
]


@pytest.mark.parametrize("cls,classes", [
    (fastomkl.RakerClassifier, [1, "a"]), (fastomkl.RakerClassifier, [1.5, 2.5]),
    (fastomkl.DoublySGDSoftmaxClassifier, [1, "a"]),
])
def test_classes_a_model_could_not_learn_are_refused(cls, classes):
    """Mixed kinds or continuous values: the model would refuse every label it is then given."""
    model, X = fitted(cls)
    header, arrays = read(saved(model))
    header["classes"] = classes
    with pytest.raises(ValueError, match="classes"):
        load_bytes(write(header, arrays))


def test_a_kernel_awv_state_beyond_its_max_samples_is_refused():
    model, X = fitted(fastomkl.KernelAWV)
    header, arrays = read(saved(model))
    header["params"]["max_samples"] = 5
    with pytest.raises(ValueError, match="max_samples"):
        load_bytes(write(header, arrays))


@pytest.mark.parametrize("cls,entry,edit,message", SEMANTIC_EDITS,
                         ids=[f"{c.__name__}-{e}-{m}" for c, e, _, m in SEMANTIC_EDITS])
def test_magnitudes_the_equations_rule_out_are_refused(cls, entry, edit, message):
    model, X = fitted(cls, n=40)
    header, arrays = read(saved(model))
    arrays[entry] = edit(arrays[entry])
    with pytest.raises(ValueError, match=message):
        load_bytes(write(header, arrays))


def test_round_trip_is_bit_identical(original):
    """The loaded model is the saved one: the same predictions, then the same 300 further rounds
    (a derived quantity recomputed on load in another summation order than learning's would
    show here within a few rounds, on some instruction sets only; CI runs every variant)."""
    model, X, data = original          # the fixture's own model: no other test uses it
    loaded = load_bytes(data)
    y = np.asarray(model.predict(X))
    np.testing.assert_array_equal(np.asarray(loaded.predict(X)), y)
    more = np.random.default_rng(7).uniform(-1, 1, (300, X.shape[1]))
    stream = np.vstack([X, more])
    target = np.asarray(model.classes_)[np.arange(len(stream)) % 2] \
        if hasattr(model, "classes_") else stream[:, 1] + stream[:, 0] ** 2
    a = [model.predict_learn_one(x, t) for x, t in zip(stream, target)]
    b = [loaded.predict_learn_one(x, t) for x, t in zip(stream, target)]
    assert a == b


@FUZZ
@given(flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)),
                      min_size=1, max_size=4))
def test_byte_flips(original, flips):
    _, X, data = original
    raw = bytearray(data)
    for where, bits in flips:
        raw[int(where * len(raw))] ^= bits
    accepted_or_refused(bytes(raw), X)


@FUZZ
@given(cut=st.floats(0, 1, exclude_max=True))
def test_truncation(original, cut):
    _, X, data = original
    with pytest.raises(ValueError):
        load_bytes(data[:int(cut * len(data))])


@FUZZ
@given(pick=st.integers(0, 10 ** 6), index=st.integers(0, 10 ** 6),
       value=st.sampled_from(EXTREME_INTS + EXTREME_FLOATS))
def test_edited_arrays_with_recomputed_digest(original, pick, index, value):
    _, X, data = original
    _, arrays = read(data)
    names = sorted(arrays)
    name = names[pick % len(names)]
    accepted_or_refused(edit_array(data, name, index, value), X)


HEADER_EDITS = [
    ("class", "Raker"), ("class", "os.system"), ("class", None), ("version", 1),
    ("n_features_in", 10 ** 6), ("n_features_in", 0), ("n_features_in", -3), ("n_features_in", 1.5),
    ("n_features_in", 2), ("classes", ["b", "a"]), ("classes", [1, 1]), ("classes", [[1], 2]),
    ("rng_state", {"bit_generator": "PCG64", "state": {"state": -1, "inc": "x"}}),
    ("rng_state", None), ("rng_state", {"bit_generator": "os.system"}), ("feature_names", [1]),
    ("params", {"n_components": 20000000}), ("params", {"n_components": -1}),
    ("params", {"kernels": {"__kernels__": [{"kind": "Gaussian", "sigma": -1}]}}),
    ("params", {"kernels": {"__kernels__": [[1, 2]]}}), ("params", {"no_such": 1}),
    ("params", {"random_state": "seed"}), ("params", {"M": 10 ** 9}), ("params", []),
    ("params", {"degree": 64}), ("params", {"max_samples": 10 ** 9}),
    ("extra", 1),
]


@pytest.mark.parametrize("field,value", HEADER_EDITS, ids=[f"{f}={v!r:.30}" for f, v in HEADER_EDITS])
def test_edited_header_with_recomputed_digest(original, field, value):
    _, X, data = original
    header, arrays = read(data)
    if field == "params" and isinstance(value, dict):
        value = {**header["params"], **value}
    header[field] = value
    accepted_or_refused(write(header, arrays), X)


def test_reversed_classes_cannot_pass_unnoticed(tmp_path):
    model, X = fitted(fastomkl.RakerClassifier)
    data = saved(model)
    header, arrays = read(data)
    header["classes"] = header["classes"][::-1]
    raw = io.BytesIO()
    np.savez_compressed(raw, __header__=np.array(json.dumps(header)), **arrays)
    with pytest.raises(ValueError, match="digest"):
        load_bytes(raw.getvalue())


# "nodes": the combiner's number of nodes (one past the last), "degree": one past a node's most
# members
@pytest.mark.parametrize("cls,entry,values", [
    (fastomkl.VAW2, "experts.n_pending", (10 ** 6, -7)),
    (fastomkl.OMKLGF, "combiner.n_members", ("degree", -1, 10 ** 6)),
    (fastomkl.OMKLGF, "combiner.members", (-1, "nodes", 10 ** 6)),
    (fastomkl.OMKLSFG, "combiner.parent", (-2, "nodes", 0)),
    (fastomkl.OMKLSFGR, "combiner.parent", (-2, "nodes", 10 ** 6)),
    (fastomkl.OMKLSFGR, "combiner.child_head", (-2, "nodes", 10 ** 6)),
    (fastomkl.OMKLSFGR, "combiner.child_next", (-2, "nodes", 10 ** 6)),
])
def test_crafted_indices_are_refused(cls, entry, values):
    """The integers that used to reach compiled code unchecked (segfaults, heap corruption)."""
    model, X = fitted(cls)
    combiner = model._fitted_engine().combiner
    past = {"nodes": combiner.n_experts, "degree": getattr(combiner, "degree", 0) + 1}
    values = [past.get(value, value) for value in values]
    data = saved(model)
    size = read(data)[1][entry].size
    for index in range(size):
        for value in values:
            with pytest.raises(ValueError, match="state"):
                load_bytes(edit_array(data, entry, index, value))


@pytest.mark.parametrize("cls,field,value", [
    (fastomkl.Raker, "n_components", 20_000_000),
    (fastomkl.TaylorAWV, "n_features_in", 10 ** 6),      # r = C(10^6 + 2, 2): an r^2 inverse
    (fastomkl.TaylorAWV, "degree", 64),
    (fastomkl.VAW2, "n_components", 8000),               # 76 inverses of order 16,000
    (fastomkl.ConcatVAW, "n_components", 1500),          # one inverse of order 2 x 1500 x 76
    (fastomkl.OMKLSFG, "kernels", 3000),                 # the kernel list repeated 3000 times
])
def test_a_small_file_cannot_allocate_a_huge_model(cls, field, value):
    model, X = fitted(cls)
    header, arrays = read(saved(model))
    if field == "n_features_in":
        header[field] = value
    elif field == "kernels":
        header["params"]["kernels"]["__kernels__"] *= value
    else:
        header["params"][field] = value
    message, seconds, peak = refusal_cost(write(header, arrays))
    assert re.search("far larger|must be an int in|more than", message), message
    assert peak < 8 << 20 and seconds < 1.0               # refused before anything is drawn


def refusal_cost(data: bytes, **kw) -> tuple[str, float, int]:
    """(the ValueError's message, seconds, peak bytes NumPy and Python allocated) of refusing a
    file; the file must be refused."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ValueError) as refused:
            load_bytes(data, **kw)
        return str(refused.value), time.perf_counter() - start, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_zip_bomb_is_refused_before_reading():
    model, X = fitted(fastomkl.Raker)
    bomb = zip_bomb(saved(model), n_bytes=256 << 20)
    assert len(bomb) < 1 << 20
    message, seconds, peak = refusal_cost(bomb)            # within 1 GiB, but 1000x its size
    assert "compression bomb" in message and peak < 8 << 20 and seconds < 1.0
    message, _, peak = refusal_cost(bomb, max_bytes=64 << 20)
    assert "max_bytes" in message and peak < 8 << 20
    with pytest.raises(ValueError, match="digest"):
        load_bytes(bomb, max_bytes=1 << 30)                # vouched for: read, then altered


def test_the_expansion_bound_leaves_real_files_alone():
    """Support rows of binary features, the most compressible real state (a9a's rows deflate
    60x), load under the default bound; so does any file whose arrays fit in 32 MiB."""
    rng = np.random.default_rng(0)
    X = (rng.random((3000, 123)) < 0.11).astype(float)     # a9a's density of ones
    model = fastomkl.OKSClassifier(budget=None, random_state=0).partial_fit(
        X, np.where(X[:, 0] > 0, 1, -1))
    data = saved(model)
    assert len(data) * 30 < model._engine.get_state()["experts.support"].nbytes
    loaded = load_bytes(data)
    np.testing.assert_array_equal(loaded.predict(X[:50]), model.predict(X[:50]))


def test_a_signed_file_is_checked_before_its_arrays_are_read():
    """A bomb re-signed under a guessed key is refused by its signature, hashed as it streams:
    nothing of its 256 MiB is held in memory, even when max_bytes vouches for it."""
    model, X = fitted(fastomkl.Raker)
    signed = io.BytesIO()
    model.save(signed, key=b"secret")
    header, arrays = read(signed.getvalue())
    bomb = zip_bomb(write(header, arrays, key=b"guess"), n_bytes=256 << 20)
    message, _, peak = refusal_cost(bomb, key=b"secret", max_bytes=1 << 30)
    assert "digest" in message and peak < 8 << 20


@pytest.mark.parametrize("configuration", [c for c in CONFIGURATIONS
                                           if "n_components" in c[0]._param_names()],
                         ids=configuration_id)
def test_a_header_cannot_make_random_features_of_a_million_inputs(configuration):
    """n_features_in sets the size of the frequencies the engine draws before the state is
    read: a file claiming 10^6 inputs is refused before anything is drawn."""
    cls, extra = configuration
    model, X = fitted(cls, **extra)
    header, arrays = read(saved(model))
    header["n_features_in"] = 10 ** 6
    message, seconds, peak = refusal_cost(write(header, arrays))
    assert "far larger" in message and peak < 8 << 20 and seconds < 1.0


def test_foreign_and_odd_files(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(3))
    with pytest.raises(ValueError):
        fastomkl.load(tmp_path / "a.npy")
    objects = io.BytesIO()
    np.savez(objects, __header__=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="dtype|header"):
        load_bytes(objects.getvalue())
    with pytest.raises(FileNotFoundError):
        fastomkl.load(tmp_path / "missing.npz")


def test_devices_and_pipes_are_refused_without_reading(tmp_path):
    """/dev/zero would be read without end, a FIFO with no writer would block for ever."""
    with pytest.raises(ValueError, match="regular file"):
        fastomkl.load("/dev/zero")
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="regular file"):
        fastomkl.load(fifo)


@pytest.mark.parametrize("max_bytes", [float("nan"), 0, -1, 1.5, True, "1"])
def test_max_bytes_must_be_a_positive_whole_number(max_bytes):
    model, X = fitted(fastomkl.Raker)
    with pytest.raises(ValueError, match="max_bytes must be"):
        load_bytes(saved(model), max_bytes=max_bytes)


@pytest.mark.parametrize("cls", [fastomkl.Raker, fastomkl.OKS, fastomkl.RFOKSPlusPlus,
                                 fastomkl.OMKLSFG, fastomkl.VAW2])
@pytest.mark.parametrize("rounds", [2 ** 62, 2 ** 53 + 1, -1])
def test_a_round_count_no_stream_reaches_is_refused(cls, rounds):
    """engine.t = 2**62 used to load, then hang the next partial_fit (the doubling horizons)."""
    model, X = fitted(cls)
    with pytest.raises(ValueError, match="engine.t"):
        load_bytes(edit_array(saved(model), "engine.t", 0, rounds))
    edge = load_bytes(edit_array(saved(model), "engine.t", 0, 2 ** 53))
    assert usable(edge, X)


def test_signed_files(tmp_path):
    model, X = fitted(fastomkl.Raker)
    model.save(tmp_path / "s.npz", key=b"secret")
    loaded = fastomkl.load(tmp_path / "s.npz", key="secret".encode())
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    with pytest.raises(ValueError, match="another key|digest"):
        fastomkl.load(tmp_path / "s.npz", key=b"other")
    with pytest.raises(ValueError, match="signed"):
        fastomkl.load(tmp_path / "s.npz")
    model.save(tmp_path / "u.npz")
    with pytest.raises(ValueError, match="not signed"):
        fastomkl.load(tmp_path / "u.npz", key=b"secret")
    header, arrays = read((tmp_path / "s.npz").read_bytes())
    header["params"]["lam"] = 0.5                 # an edit re-signed without the key
    with pytest.raises(ValueError):
        load_bytes(write(header, arrays, key=b"guess"), key=b"secret")


def test_a_model_holding_a_function_refuses_to_be_saved_and_writes_nothing(tmp_path):
    """The classes the file harness leaves out hold a user's Python function or other models:
    saving one is a ValueError saying why, and no file appears."""
    import inspect
    from fastomkl._estimator import OnlineEstimator
    from helpers import can_be_saved
    estimators = [getattr(fastomkl, n) for n in fastomkl.__all__
                  if inspect.isclass(getattr(fastomkl, n))
                  and issubclass(getattr(fastomkl, n), OnlineEstimator)]
    left_out = [cls for cls in estimators if not can_be_saved(cls)]
    assert left_out, "no class is left out of the file harness"
    X = np.random.default_rng(0).uniform(-1, 1, (6, 3))
    for cls in left_out:
        y = X[:, 0] > 0 if hasattr(cls, "decision_function") else X[:, 0]
        model = cls(**cls._unit_test_params()[0]).fit(X, y)
        path = tmp_path / f"{cls.__name__}.npz"
        with pytest.raises(ValueError, match="phi|holds other models"):
            model.save(path)
        assert not path.exists()
