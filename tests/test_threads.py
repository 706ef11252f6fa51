"""Threads may share a model: rounds never interleave, so a concurrent reader disturbs nothing."""
import io
import threading
import time
import warnings

import numpy as np
import pytest

import fastomkl

from fastomkl import Gaussian, Laplacian, NystromAWV, Raker
from fastomkl.kernels import Polynomial
from helpers import state_bytes


def test_concurrent_predictions_do_not_disturb_learning():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(20000, 6)) / 3
    y = np.sin(X.sum(1))
    kernels = [Gaussian(0.5), Laplacian(1.0), Gaussian(2.0)]
    serial = Raker(kernels, n_components=30, random_state=1).partial_fit(X, y)
    shared = Raker(kernels, n_components=30, random_state=1)
    shared.learn_one(X[0], y[0])
    probe = rng.uniform(-1, 1, size=(50, 6)) / 3
    stop = threading.Event()
    answers = []

    def reader():
        while not stop.is_set():
            answers.append(shared.predict_one(probe[len(answers) % 50]))
            answers.append(float(shared.predict(probe[:3])[0]))

    def readers_answered(since):
        deadline = time.monotonic() + 5.0
        while len(answers) <= since and time.monotonic() < deadline:
            time.sleep(1e-4)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    # Learning in chunks, each one started only once the readers have answered since the last:
    # predictions and learning interleave however fast either is (partial_fit releases the GIL).
    for chunk in np.array_split(np.arange(1, len(y)), 20):
        readers_answered(len(answers))
        shared.partial_fit(X[chunk], y[chunk])
    stop.set()
    for t in threads:
        t.join()
    assert len(answers) > 10 and np.isfinite(answers).all()
    assert state_bytes(shared) == state_bytes(serial)



def test_a_model_whose_snapshot_cannot_be_made_serves_from_itself():
    """When the twins cannot be built, the engine warns and predictions made during a batch wait
    for its rounds, as they did before snapshots: still round boundaries, learning unchanged."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(2000, 4))
    y = np.cos(X.sum(1))
    probe = X[0]
    shared = Raker([Gaussian(1.0)], n_components=20, random_state=0).learn_one(X[0], y[0])
    shared._engine.twin_factory = lambda: 1 / 0
    done, answers, passes = threading.Event(), [], [0]

    def reader():
        while not done.is_set():
            answers.append(shared.predict_one(probe))

    thread = threading.Thread(target=reader)
    thread.start()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        while shared._engine.twin_factory is not None and passes[0] < 500:
            shared.partial_fit(X[1:], y[1:])
            passes[0] += 1
        for _ in range(2):                          # predictions wait for these rounds
            shared.partial_fit(X[1:], y[1:])
            passes[0] += 1
    done.set()
    thread.join()
    assert [str(w.message) for w in caught if w.category is RuntimeWarning][0].startswith(
        "predictions made while a batch learns wait for its rounds")
    assert shared._engine.n_snapshot_reads == 0

    serial = Raker([Gaussian(1.0)], n_components=20, random_state=0).learn_one(X[0], y[0])
    seen = {serial.predict_one(probe)}
    for _ in range(passes[0]):
        for x, t in zip(X[1:], y[1:]):
            serial.learn_one(x, t)
            seen.add(serial.predict_one(probe))
    assert answers and all(answer in seen for answer in answers)
    assert state_bytes(shared) == state_bytes(serial)


@pytest.mark.parametrize("n_components", [16, 50])
def test_a_snapshot_copies_padded_rows(n_components):
    """Weights kept in padded rows (50 features per kernel in rows of 56) are copied row by row:
    the twin predicts what the model predicts, and it is brought up to date by copies alone."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(400, 5))
    y = np.sin(X.sum(1))
    model = Raker([Gaussian(0.5), Laplacian(1.0), Gaussian(2.0)], n_components=n_components,
                  random_state=0).fit(X[:200], y[:200])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model._engine._publish_snapshot()
        for x, t in zip(X[200:], y[200:]):
            model.learn_one(x, t)
        model._engine._publish_snapshot()
    assert model._engine.snapshot_copy_bytes > 0
    for x in X[:20]:
        assert model._engine._predict_snapshot(x) == model.predict_one(x)


@pytest.mark.parametrize("max_centres", [None, 12])
def test_a_nystrom_snapshot_copies_what_predictions_read(max_centres):
    """A Nystrom dictionary's twins are brought up to date by copies alone (no set_state) while
    the dictionary gains centres within its capacity, and once it is frozen: the twin predicts
    what the model predicts, and a copy moves the centres, R and h, not the stored inputs."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(700, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2]
    model = NystromAWV(Gaussian(0.4), max_centres=max_centres, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # the budget's warning
        model.fit(X[:300], y[:300])
        engine = model._engine
        experts = engine.experts
        engine._publish_snapshot()
        copied = engine.snapshot_copy_bytes
        cap_t, cap_m = experts.capacity
        centres_before = experts.n_centres
        rounds = 0
        for x, t in zip(X[300:], y[300:]):
            if not experts.budget_reached and (experts.n_centres + 1 >= cap_m
                                               or 300 + rounds + 1 >= cap_t):
                break                                   # the next round could move the arrays
            model.learn_one(x, t)
            rounds += 1
            if rounds % 7 == 0:
                warnings.simplefilter("error", RuntimeWarning)
                engine._publish_snapshot()
                assert engine.snapshot_copy_bytes == copied     # the same plan, no rebuild
                for probe in X[:5]:
                    assert engine._predict_snapshot(probe) == model.predict_one(probe)
    assert rounds >= 100
    assert max_centres is not None or experts.n_centres > centres_before   # the twin gained centres
    d = X.shape[1]
    # the counts, centres, R and h, and the engine's target statistics (count, mean, variance)
    assert copied == 8 * (2 + cap_m * d + cap_m * cap_m + cap_m + 3)


@pytest.mark.parametrize("make", [
    lambda: NystromAWV(Gaussian(0.4), random_state=0),
    lambda: fastomkl.OMKR([Gaussian(0.5), Laplacian(1.0)], budget=None),
    lambda: fastomkl.OnlineKernelRegressor(Polynomial(2), budget=100),
    lambda: fastomkl.DoublySGDRegressor(kernel=Gaussian(0.8), batch_size=4, block_size=8,
                                        random_state=0),
    lambda: fastomkl.DoublySGDRegressor(kernel=Gaussian(0.8), batch_size=4, block_size=8,
                                        dtype="float32", eta=1.0, average=True, random_state=0),
    lambda: fastomkl.DoublySGDSoftmaxClassifier(kernel=Gaussian(0.8), batch_size=4,
                                                block_size=8, random_state=0),
    lambda: fastomkl.OKS([Gaussian(0.5), Gaussian(2.0)], budget=None, random_state=0),
    lambda: fastomkl.IOKS([Gaussian(0.5), Gaussian(2.0)], budget=150, random_state=0),
    lambda: fastomkl.ProsNKons(Gaussian(0.4), random_state=0)],
    ids=["Nystrom", "OMKR", "OnlineKernelRegressor-budget", "DSG", "DSG-float32-average",
         "DSG-softmax", "OKS", "IOKS-budget", "ProsNKons"])
def test_growing_models_keep_their_snapshots_when_their_arrays_grow(make):
    """A growing model's arrays move when they grow: its twins are planned again for the new
    arrays rather than built again, and they still hold the model after each publication."""
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, size=(400, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2]
    model = make()
    if isinstance(model, fastomkl.DoublySGDSoftmaxClassifier):
        y = np.digitize(y, [-0.5, 0.5])                 # three classes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # budget warnings
        model = model.fit(X[:20], y[:20]).prepare_serving()
        engine = getattr(model._engine, "_inner", model._engine)
        size = sum(a.nbytes for a in engine.get_state().values())
        built = []
        factory = engine.twin_factory
        engine.twin_factory = lambda: built.append(1) or factory()
        for start in range(20, 400, 20):                # the arrays grow within these chunks
            model.partial_fit(X[start:start + 20], y[start:start + 20])
            warnings.simplefilter("error", RuntimeWarning)
            engine._publish_snapshot()
            for probe in X[:3]:
                assert engine._predict_snapshot(probe) == engine.predict_one(probe)
    assert sum(a.nbytes for a in engine.get_state().values()) > 4 * size    # it grew
    assert built == []
    assert engine.snapshot_copy_bytes > 0       # by a copy plan, not set_state's checks


def test_prepare_serving_builds_the_snapshots_ahead_of_the_first_batch():
    """prepare_serving builds the twins a prediction would otherwise wait for when it first meets
    a batch: they hold the model, and a model that has learnt nothing refuses."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(200, 3))
    model = Raker([Gaussian(0.5), Laplacian(1.0)], n_components=12, random_state=0)
    with pytest.raises(fastomkl.NotFittedError):
        model.prepare_serving()
    model.fit(X[:100], X[:100, 0])
    assert model._engine.snapshot_copy_bytes == 0            # no twins yet
    assert model.prepare_serving() is model
    assert model._engine.snapshot_copy_bytes > 0
    for x in X[100:110]:
        assert model._engine._predict_snapshot(x) == model.predict_one(x)
    model.prepare_serving()                                   # built once: nothing to do
    mixture = fastomkl.Mixture([Raker([Gaussian(0.5)], n_components=4, random_state=0),
                                Raker([Gaussian(2.0)], n_components=4, random_state=0)])
    mixture.fit(X[:50], X[:50, 0]).prepare_serving()          # serves from the model itself


def test_batch_calls_withdraw_their_announcement_whether_they_succeed_or_fail():
    """The estimators announce a batch call for its Python steps (engine.announce_batch): a
    failed validation must withdraw it too, or every later predict_one would wait for it."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (40, 3))
    model = Raker([Gaussian(1.0)], n_components=8, random_state=0).partial_fit(X, X[:, 0])
    engine = model._engine
    bad = X.copy()
    bad[5, 1] = np.nan
    for call in (lambda: model.partial_fit(bad, X[:, 0]), lambda: model.predict(bad),
                 lambda: model.predict_learn(X[:, :2], X[:, 0])):
        with pytest.raises(ValueError):
            call()
        assert engine.arriving == 0
    model.predict(X)
    model.partial_fit(X, X[:, 0])
    assert engine.arriving == 0
    assert np.isfinite(model.predict_one(X[0]))


@pytest.mark.parametrize("model", ["raker", "growing"])
def test_learning_another_model_beside_a_serving_thread_learns_as_alone(model):
    """Batch calls count themselves process-wide (announced, in their rounds, waiting for the GIL
    after them; a growing model's call out of its rounds while it makes room between two), so
    that predictions on another model let them go first: whatever the threads, both models end
    as they would alone, the predictions are the served model's, and the counts are back to 0
    when the calls have returned (also after a refused call), or every prediction would wait for
    them."""
    from fastomkl._core.engine import batch_calls
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (6000, 4)) / 2
    y = np.sin(X.sum(1))
    if model == "raker":
        make = lambda: Raker([Gaussian(0.5), Gaussian(2.0)], n_components=16,  # noqa: E731
                             random_state=2).fit(X[:500], y[:500], shuffle=False)
    else:        # its stored inputs double at 512, 1,024, 2,048 and 4,096, amid batch calls
        make = lambda: NystromAWV(Gaussian(0.5), max_centres=None,  # noqa: E731
                                  random_state=2).fit(X[:500], y[:500], shuffle=False)
    served, learnt = make(), make().prepare_serving()
    expected = served.predict(X[:200])
    answers, stop = [], threading.Event()

    def learner():
        for start in range(500, 6000, 500):
            learnt.partial_fit(X[start:start + 500], y[start:start + 500])
        stop.set()

    thread = threading.Thread(target=learner)
    thread.start()
    while not stop.is_set():
        answers.append(served.predict_one(X[len(answers) % 200]))
    thread.join()
    alone = make().partial_fit(X[500:], y[500:])
    assert np.array_equal(learnt.predict(X[:300]), alone.predict(X[:300]))
    assert answers and all(a == expected[i % 200] for i, a in enumerate(answers))
    assert batch_calls() == (0, 0, 0)
    with pytest.raises(ValueError):
        learnt.partial_fit(X[:10, :3], y[:10])
    assert batch_calls() == (0, 0, 0)


def test_predict_one_does_not_wait_for_an_announced_batch_call_that_stays_out_of_its_rounds():
    """A prediction that meets an announced batch call outside its rounds lets the call have the
    interpreter for a moment, then answers from the model, which the call has not begun to learn:
    a call that spends long in its Python steps (encoding many labels) does not hold predictions
    for that long."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (40, 3))
    model = Raker([Gaussian(1.0)], n_components=8, random_state=0).partial_fit(X, X[:, 0])
    expected = model.predict_one(X[1])
    engine = model._engine
    answers = []
    engine.announce_batch()
    try:
        reader = threading.Thread(target=lambda: answers.append(model.predict_one(X[1])))
        reader.start()
        reader.join(timeout=30)
        assert answers == [expected]          # answered while the call is still announced
        assert engine.arriving == 1
    finally:
        engine.withdraw_batch()


def hold_the_lock(engine, release):
    """A thread holding the engine's lock (as a save or a read of the weights does) until
    `release` is set; returns (thread, event set once the lock is held)."""
    held = threading.Event()

    def holder():
        engine.locked(lambda: (held.set(), release.wait(30)))

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(30)
    return thread


@pytest.mark.parametrize("make", [
    lambda: Raker([Gaussian(0.5), Laplacian(1.0)], n_components=12, random_state=0),
    lambda: fastomkl.OMKR([Gaussian(0.5), Gaussian(2.0)], budget=50)])
def test_a_prediction_that_meets_no_batch_reads_the_model_not_an_old_snapshot(make):
    """Snapshots are read only while a batch call runs its rounds.  A model that serves with
    prepare_serving and learns one sample at a time never runs one: a predict_one that finds the
    lock held by something else (a save, a read of the weights) waits for it and answers from the
    model as it is, not from the snapshots made when serving was prepared."""
    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, size=(600, 3))
    y = np.sin(3 * X[:, 0])
    model = make().fit(X[:50], y[:50])
    model.prepare_serving()
    engine = model._engine
    at_prepare = engine._predict_snapshot(X[0])
    for x, t in zip(X[50:], y[50:]):
        model.learn_one(x, t)
    now = model.predict_one(X[0])
    assert now != at_prepare
    release = threading.Event()
    holder = hold_the_lock(engine, release)
    answers = []
    reader = threading.Thread(target=lambda: answers.append(model.predict_one(X[0])))
    reader.start()
    time.sleep(0.05)                      # the reader meets the held lock
    release.set()
    holder.join(30)
    reader.join(30)
    assert answers == [now] and engine.n_snapshot_reads == 0


def test_a_refit_serves_the_former_model_until_it_is_done_and_keeps_its_snapshots():
    """fit learns a fresh copy and takes its state in one step: a thread predicting meanwhile
    never meets an unfitted model, and the snapshots a service prepared are there for the new
    model (prepared before it is taken)."""
    rng = np.random.default_rng(9)
    X = rng.uniform(-1, 1, size=(3000, 3))
    y = np.sin(3 * X[:, 0])
    model = Raker([Gaussian(0.5), Laplacian(1.0)], n_components=12, random_state=0)
    model.fit(X[:100], y[:100]).prepare_serving()
    stop, errors, answers = threading.Event(), [], []

    def server():
        while not stop.is_set():
            try:
                answers.append(model.predict_one(X[0]))
            except Exception as exc:          # noqa: BLE001 (the failure under test)
                errors.append(exc)

    thread = threading.Thread(target=server)
    thread.start()
    try:
        for k in range(10):
            model.fit(X[k * 200:(k + 1) * 200 + 500], y[k * 200:(k + 1) * 200 + 500])
    finally:
        stop.set()
        thread.join(30)
    assert errors == [] and len(answers) > 0
    assert model._engine.has_snapshots
    fresh = Raker([Gaussian(0.5), Laplacian(1.0)], n_components=12, random_state=0)
    fresh.fit(X[1800:2500], y[1800:2500])
    assert model.predict_one(X[1]) == fresh.predict_one(X[1])
    assert model._engine._predict_snapshot(X[1]) == fresh.predict_one(X[1])


def test_a_multiclass_model_meeting_a_new_label_keeps_its_snapshots():
    """A multiclass model that meets a new label moves to an engine with one more column: the
    snapshots a service prepared move with it (built before the new engine is taken)."""
    from fastomkl.dsg import DoublySGDSoftmaxClassifier
    rng = np.random.default_rng(10)
    X = rng.uniform(-1, 1, size=(300, 3))
    labels = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)]
    model = DoublySGDSoftmaxClassifier(kernel=Gaussian(1.0), batch_size=8, block_size=8,
                                       random_state=0)
    first = labels != "c"
    model.partial_fit(X[first][:100], labels[first][:100]).prepare_serving()
    assert model._engine.has_snapshots and list(model.classes_) == ["a", "b"]
    model.partial_fit(X[100:], labels[100:])
    assert list(model.classes_) == ["a", "b", "c"] and model._engine.has_snapshots



def snapshot_answers(model, X, y, probe, first=False):
    """The predictions of `probe` that read a snapshot while another thread learns X, y in one
    batch call (the reader polls until the call returns, or until one does with `first`)."""
    engine = model._engine
    started, answers = threading.Event(), []

    def learner():
        started.set()
        model.partial_fit(X, y)

    thread = threading.Thread(target=learner)
    thread.start()
    started.wait()
    while thread.is_alive() and not (first and answers):
        reads = engine.n_snapshot_reads
        value = model.predict_one(probe)
        if engine.n_snapshot_reads > reads:
            answers.append(value)
    thread.join()
    assert answers, "no prediction met the batch in progress"
    return answers


def predictions_after_each_round(model, X, y, probe):
    """`probe`'s prediction by a replica of `model` (saved and loaded) after each round of X, y."""
    out = io.BytesIO()
    model.save(out)
    replica = fastomkl.load(io.BytesIO(out.getvalue()))
    predictions = []
    for x, t in zip(X, y):
        replica.learn_one(x, t)
        predictions.append(replica.predict_one(probe))
    return predictions


def test_a_batch_leaves_a_snapshot_that_the_next_batch_serves_at_once():
    """A batch call leaves the newest twin as the model after its last round, so the next batch
    call's first prediction reads the model as that call found it, without waiting for a
    publication.  After a round learnt in between, that twin no longer holds the model: the first
    prediction waits for the next call's first publication, the model after a later round."""
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, size=(40000, 8))
    y = np.sin(X[:, :3].sum(1))
    probe = X[0]
    kernels = [Gaussian(0.7), Laplacian(1.5), Gaussian(3.0)]
    model = Raker(kernels, n_components=64, random_state=0).fit(X[:100], y[:100])
    model.prepare_serving()
    engine = model._engine
    # the twin the call finds is read for as long as the call has learnt less than this (1 ms by
    # default): ten seconds, so that the first prediction reads it whenever the threads run
    engine.snapshot_age_floor_ns = 10 ** 10
    time.sleep(0.01)                   # well past the spacing of publications (the twins' own)
    model.partial_fit(X[100:200], y[100:200])
    assert engine._twin_holds_the_model()
    at_start = model.predict_one(probe)
    assert engine._predict_snapshot(probe) == at_start
    assert snapshot_answers(model, X[200:], y[200:], probe, first=True)[0] == at_start

    time.sleep(0.01)
    model.learn_one(X[1], y[1])                                 # a round between two calls
    assert not engine._twin_holds_the_model()
    at_start = model.predict_one(probe)
    boundaries = predictions_after_each_round(model, X[200:], y[200:], probe)
    answer = snapshot_answers(model, X[200:], y[200:], probe, first=True)[0]
    assert answer != at_start and answer in boundaries


def test_a_long_batch_keeps_publishing_snapshots_as_it_learns():
    """A batch call publishes a newer snapshot again and again while predictions wait on it (the
    clock is looked at every few rounds only, at the pace since the last publication): over a
    batch of 60,000 rounds the predictions read many different rounds, in the order learnt, each
    one the model's prediction after some round of the batch."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(60100, 8))
    y = np.sin(X[:, :3].sum(1))
    probe = X[0]
    model = Raker([Gaussian(1.0)], n_components=16, random_state=0).fit(X[:100], y[:100])
    model.prepare_serving()
    after_round = {model.predict_one(probe): -1}             # the model as the batch finds it
    for i, value in enumerate(predictions_after_each_round(model, X[100:], y[100:], probe)):
        after_round.setdefault(value, i)
    answers = snapshot_answers(model, X[100:], y[100:], probe)
    rounds = [after_round[value] for value in answers]      # KeyError: not a round boundary
    assert rounds == sorted(rounds)
    assert len(set(rounds)) >= 20, f"{len(set(rounds))} snapshots read over 60,000 rounds"


def late_batch_model():
    """A small Raker, its snapshots prepared, and 20,000 rows to learn in one batch (about 10 ms)."""
    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, size=(20100, 8))
    y = np.sin(X[:, :3].sum(1))
    model = Raker([Gaussian(1.0), Laplacian(2.0)], n_components=32, random_state=0)
    model.fit(X[:100], y[:100]).prepare_serving()
    return model, X[100:], y[100:]


def answer_late_in_a_batch(model, X, y, probe, rounds):
    """(the round the batch had reached, the answer) of a prediction asked once the batch that
    learns X, y in one call has learnt `rounds` rounds."""
    engine, asked = model._engine, {}
    start = engine.t

    def reader():
        while engine.t < start + rounds:
            time.sleep(0.0002)
        asked["round"] = engine.t - start
        asked["value"] = model.predict_one(probe)

    thread = threading.Thread(target=reader)
    thread.start()
    model.partial_fit(X, y)
    thread.join()
    assert asked["round"] < len(X), "the batch ended before the prediction was asked"
    return asked["round"], asked["value"]


def test_a_prediction_late_in_a_batch_does_not_read_the_snapshot_the_batch_began_with():
    """The snapshot a batch finds as it begins holds the model as the batch found it: a
    prediction asked once the batch has learnt 10,000 rounds (several milliseconds) does not
    read it (it is as old as the batch) but waits for the round in progress, when the batch
    publishes: its answer is the model after a round at most 1 ms of learning (here about 500
    rounds; 5,000 allowed) before the round it was asked at."""
    model, X, y = late_batch_model()
    probe = X[0]
    after_round = {}
    for i, value in enumerate(predictions_after_each_round(model, X, y, probe)):
        after_round.setdefault(value, i + 1)
    asked, answer = answer_late_in_a_batch(model, X, y, probe, 10000)
    assert after_round.get(answer, -1) >= asked - 5000


def test_predictions_late_in_batches_never_read_the_snapshot_those_began_with():
    """The same, 30 batches over: a reader that takes a snapshot's lock as the batch publishes
    into the other judges the one it holds (its own stamps), so no answer is the model as the
    batch found it (judged by the newest publication's stamps instead, about a fifth were)."""
    model, X, y = late_batch_model()
    probe = X[0]
    stale = 0
    for _ in range(30):
        before = model.predict_one(probe)
        stale += answer_late_in_a_batch(model, X, y, probe, 8000)[1] == before
    assert stale == 0
