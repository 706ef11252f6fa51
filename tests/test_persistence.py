"""save/load and pickling: bit-identical continuation; refusing anything that is not a model file."""
import io
import json
import pickle
import zipfile

import numpy as np
import pytest

import fastomkl
from fastomkl import Gaussian, Laplacian, Raker, RakerClassifier
from helpers import state_bytes

KERNELS = [Gaussian(0.5), Laplacian(1.0)]


@pytest.fixture
def trained(stream):
    X, y = stream
    return Raker(KERNELS, n_components=8, eta=0.2, random_state=3).partial_fit(X[:150], y[:150])


def test_round_trip_is_bit_identical(tmp_path, trained, stream):
    X, y = stream
    path = tmp_path / "model.npz"
    trained.save(path)
    loaded = fastomkl.load(path)
    assert type(loaded) is Raker and loaded.get_params().keys() == trained.get_params().keys()
    assert state_bytes(loaded) == state_bytes(trained)
    np.testing.assert_array_equal(loaded.predict_learn(X[150:], y[150:]),
                                  trained.predict_learn(X[150:], y[150:]))
    assert state_bytes(loaded) == state_bytes(trained)


def test_round_trip_keeps_the_round_stream(tmp_path, trained):
    """The per-round generator's position survives (models that sample depend on it)."""
    path = tmp_path / "m.npz"
    trained._engine.bit_generator.random_raw(7)          # move the stream
    trained.save(path)
    loaded = fastomkl.load(path)
    assert loaded._engine.bit_generator.random_raw() == trained._engine.bit_generator.random_raw()


def test_unfitted_and_classifier(tmp_path, labelled_stream):
    X, y = labelled_stream
    Raker(KERNELS, eta=0.7).save(tmp_path / "u.npz")
    u = fastomkl.load(tmp_path / "u.npz")
    assert u.eta == 0.7 and u._engine is None and u.kernels == KERNELS
    c = RakerClassifier(KERNELS, n_components=4, random_state=0).fit(X, np.where(y > 0, "b", "a"))
    c.save(tmp_path / "c.npz")
    c2 = fastomkl.load(tmp_path / "c.npz")
    assert list(c2.classes_) == ["a", "b"]
    np.testing.assert_array_equal(c2.predict(X), c.predict(X))


def test_pickle_and_joblib(tmp_path, trained, stream):
    X, y = stream
    clone = pickle.loads(pickle.dumps(trained))
    assert state_bytes(clone) == state_bytes(trained)
    np.testing.assert_array_equal(clone.predict_learn(X, y), trained.predict_learn(X, y))
    import joblib
    joblib.dump(trained, tmp_path / "j.pkl")
    back = joblib.load(tmp_path / "j.pkl")
    np.testing.assert_array_equal(back.predict(X), trained.predict(X))


def test_truncated_file(tmp_path, trained):
    path = tmp_path / "m.npz"
    trained.save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not a fastomkl model file"):
        fastomkl.load(path)


def test_foreign_files(tmp_path):
    txt = tmp_path / "a.npz"
    txt.write_text("hello")
    with pytest.raises(ValueError):
        fastomkl.load(txt)
    np.savez(tmp_path / "b.npz", x=np.arange(3))
    with pytest.raises(ValueError, match="no header"):
        fastomkl.load(tmp_path / "b.npz")
    np.savez(tmp_path / "c.npz", __header__=np.array(json.dumps({"format": "other"})))
    with pytest.raises(ValueError, match="not a fastomkl model"):
        fastomkl.load(tmp_path / "c.npz")
    obj = np.array([{"a": 1}], dtype=object)
    np.savez(tmp_path / "d.npz", __header__=obj)
    with pytest.raises(ValueError):
        fastomkl.load(tmp_path / "d.npz")
    with pytest.raises(FileNotFoundError):
        fastomkl.load(tmp_path / "missing.npz")


def _rewrite(path, out, header_change=None, array_change=None):
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(str(arrays["__header__"]))
    if header_change:
        header_change(header)
    if array_change:
        array_change(arrays)
    arrays["__header__"] = np.array(json.dumps(header))
    np.savez(out, **arrays)


def test_tampered_files(tmp_path, trained):
    path = tmp_path / "m.npz"
    trained.save(path)

    def bump(a):
        a["experts.theta"] = a["experts.theta"] + 1.0
    _rewrite(path, tmp_path / "t1.npz", array_change=bump)
    with pytest.raises(ValueError, match="digest"):
        fastomkl.load(tmp_path / "t1.npz")

    _rewrite(path, tmp_path / "t2.npz", header_change=lambda h: h.update({"class": "os.system"}))
    with pytest.raises(ValueError, match="digest"):      # the header is covered by the digest
        fastomkl.load(tmp_path / "t2.npz")

    _rewrite(path, tmp_path / "t3.npz", header_change=lambda h: h.update({"version": 99}))
    with pytest.raises(ValueError, match="version"):
        fastomkl.load(tmp_path / "t3.npz")

    def shrink(a):
        a["experts.theta"] = a["experts.theta"][:1]
    _rewrite(path, tmp_path / "t4.npz", array_change=shrink,
             header_change=lambda h: None)
    # recompute a valid checksum for the altered arrays: the shape check must still refuse it
    from fastomkl.persistence import _digest
    with np.load(tmp_path / "t4.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(str(arrays.pop("__header__")))
    header["digest"] = _digest({k: v for k, v in header.items() if k != "digest"}, arrays, None)
    np.savez(tmp_path / "t5.npz", __header__=np.array(json.dumps(header)), **arrays)
    with pytest.raises(ValueError, match="experts.theta|theta"):
        fastomkl.load(tmp_path / "t5.npz")


def test_file_is_plain_zip_of_npy(tmp_path, trained):
    """No pickle inside: every member is a .npy array readable without allow_pickle."""
    path = tmp_path / "m.npz"
    trained.save(path)
    with zipfile.ZipFile(path) as zf:
        assert all(name.endswith(".npy") for name in zf.namelist())
    with np.load(path, allow_pickle=False) as z:
        assert all(z[k].dtype != object for k in z.files)


def _resigned(path, out, header_change):
    """A copy of a model file with its header changed and its digest recomputed (as a file
    written that way would have it)."""
    from fastomkl.persistence import _digest
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(str(arrays.pop("__header__")))
    header_change(header)
    header.pop("digest")
    header["digest"] = _digest(header, arrays, None)
    np.savez(out, __header__=np.array(json.dumps(header)), **arrays)


def test_files_record_the_version_that_wrote_them(tmp_path, trained):
    path = tmp_path / "m.npz"
    trained.save(path)
    with np.load(path, allow_pickle=False) as z:
        header = json.loads(str(z["__header__"]))
    assert header["fastomkl_version"] == fastomkl.__version__
    assert header["version"] == 3


def test_a_file_of_an_unknown_format_names_the_version_that_wrote_it(tmp_path, trained):
    path = tmp_path / "m.npz"
    trained.save(path)

    def newer(h):
        h.update({"version": 4, "fastomkl_version": "7.3.1", "something_new": [1, 2]})
    _resigned(path, tmp_path / "newer.npz", newer)
    with pytest.raises(ValueError, match=r"format version 4 \(written by fastomkl 7\.3\.1\) is not "
                                         r"supported.*reads format versions \[2, 3\]"):
        fastomkl.load(tmp_path / "newer.npz")
    _resigned(path, tmp_path / "anon.npz", lambda h: (h.update({"version": 9}),
                                                      h.pop("fastomkl_version")))
    with pytest.raises(ValueError, match=r"written by an unknown fastomkl version"):
        fastomkl.load(tmp_path / "anon.npz")
    # format 3 requires the field; a string it is
    _resigned(path, tmp_path / "nofield.npz", lambda h: h.pop("fastomkl_version"))
    with pytest.raises(ValueError, match="exactly the fields"):
        fastomkl.load(tmp_path / "nofield.npz")
    _resigned(path, tmp_path / "number.npz", lambda h: h.update({"fastomkl_version": 1}))
    with pytest.raises(ValueError, match="fastomkl_version"):
        fastomkl.load(tmp_path / "number.npz")


def test_files_written_before_the_version_was_recorded_still_load(tmp_path, trained, stream):
    X, y = stream
    path = tmp_path / "m.npz"
    trained.save(path)
    _resigned(path, tmp_path / "old.npz", lambda h: (h.update({"version": 2}),
                                                     h.pop("fastomkl_version")))
    old = fastomkl.load(tmp_path / "old.npz")
    assert state_bytes(old) == state_bytes(trained)
    np.testing.assert_array_equal(old.predict_learn(X[150:], y[150:]),
                                  trained.predict_learn(X[150:], y[150:]))


def test_a_renamed_parameter_keeps_its_value_through_a_file(tmp_path):
    """Files that record their version are read under the current names: a bandit model's eta
    (renamed from step, while eta became eta_combiner) is not taken for an old-style name."""
    from fastomkl import OKS
    model = OKS(eta=3.0, eta_combiner=0.7, T=100)
    model.save(tmp_path / "oks.npz")
    loaded = fastomkl.load(tmp_path / "oks.npz")
    assert loaded.get_params() == model.get_params()


def test_a_tuple_parameter_comes_back_a_tuple(tmp_path):
    """JSON has only lists: NORMA's ensemble_steps, given as a tuple, comes back a tuple (its
    declared form restores it), so the loaded model's parameters equal the saved one's."""
    from fastomkl import NORMA
    model = NORMA(ensemble_steps=(0.5, 1.25), budget=10).fit(np.zeros((4, 2)), np.arange(4.0))
    model.save(tmp_path / "norma.npz")
    loaded = fastomkl.load(tmp_path / "norma.npz")
    assert loaded.get_params() == model.get_params()
    assert type(loaded.ensemble_steps) is tuple and loaded.ensemble_steps == (0.5, 1.25)


def test_norma_files_written_before_its_step_ensemble_load_and_continue(tmp_path):
    """NORMA's files of one expansion in raw units (before eta="ensemble" and
    standardize_target): coef and pending_g vectors, no standardize_target in the header.  They
    load as the one-expansion raw-unit model they are and continue bit-identically."""
    from fastomkl import NORMA
    from helpers import as_older_file
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (90, 3))
    y = np.sin(3 * X[:, 0])
    older = NORMA(eta=1.0, standardize_target=False, batch_size=8).fit(X[:60], y[:60],
                                                                       shuffle=False)
    older.save(tmp_path / "new.npz")

    def as_vectors(arrays):                              # the vectors of the releases before
        for name in ("experts.coef", "experts.pending_g"):
            assert arrays[name].shape[1:] == (1,)
            arrays[name] = arrays[name][:, 0]
    as_older_file(tmp_path / "new.npz", tmp_path / "old.npz", params=["standardize_target"],
                  edit=as_vectors)
    loaded = fastomkl.load(tmp_path / "old.npz")
    assert loaded.standardize_target is False and loaded.eta == 1.0
    np.testing.assert_array_equal(loaded.predict_learn(X[60:], y[60:]),
                                  older.predict_learn(X[60:], y[60:]))


def test_norma_writes_the_rows_it_holds_and_reads_files_of_its_whole_capacity():
    """A NORMA model with room for 2^20 rows that has learnt 24 writes 24 (its file is small),
    and a state holding the spare zero rows too (files of 0.1) loads into the same model."""
    from fastomkl import NORMA
    X = np.random.default_rng(0).uniform(-1, 1, (24, 3))
    model = NORMA(budget=2 ** 20).fit(X, X[:, 0], shuffle=False)
    state = model._engine.get_state()
    held, pending = state["experts.counts"][2], state["experts.counts"][1]
    assert state["experts.support"].shape == (held, 3) and held < 2 ** 20
    assert state["experts.pending_x"].shape == (pending, 3)
    out = io.BytesIO()
    model.save(out)
    assert len(out.getvalue()) < 1 << 16
    whole = dict(state)
    for name, rows in (("experts.support", 2 ** 20), ("experts.coef", 2 ** 20)):
        padded = np.zeros((rows,) + state[name].shape[1:])
        padded[:held] = state[name]
        whole[name] = padded
    twin = NORMA(budget=2 ** 20).fit(X[:1], X[:1, 0])
    twin._engine.set_state(whole)
    np.testing.assert_array_equal(twin.predict(X), model.predict(X))
