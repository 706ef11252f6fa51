"""fastomkl.dask on a two-process distributed.LocalCluster: streaming training equals the in-memory
chunk-by-chunk run, prediction on the workers equals local prediction, and data-parallel doubly
stochastic gradients merge into the average of their shard models."""
import dask.array as da
import distributed
import numpy as np
import pytest

import fastomkl
from fastomkl import Gaussian
from fastomkl import dask as fd

CHUNK = 150


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (6 * CHUNK, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2
    return X, y, da.from_array(X, chunks=(CHUNK, 3)), da.from_array(y, chunks=CHUNK)


def chunk_by_chunk(model, X, y):
    for lo in range(0, len(y), CHUNK):
        model.partial_fit(X[lo:lo + CHUNK], y[lo:lo + CHUNK])
    return model


MODELS = [lambda: fastomkl.Raker(n_components=10, random_state=0),
          lambda: fastomkl.VAW(n_components=10, random_state=0),
          lambda: fastomkl.NystromAWV(kernel=Gaussian(0.5), random_state=0),
          lambda: fastomkl.DoublySGDRegressor(kernel=Gaussian(1.0), random_state=0)]


@pytest.mark.parametrize("make", MODELS, ids=["Raker", "VAW", "NystromAWV", "DSG"])
def test_streaming_training_equals_the_in_memory_run(client, data, make):
    X, y, dX, dy = data
    untouched = make()
    trained = fd.partial_fit(untouched, dX, dy)
    expected = chunk_by_chunk(make(), X, y)
    assert trained.n_samples_seen_ == len(y) and getattr(untouched, "n_samples_seen_", 0) == 0
    np.testing.assert_array_equal(trained.predict(X), expected.predict(X))


def test_one_training_task_per_chunk_runs_on_the_workers(client, data):
    X, y, dX, dy = data
    with distributed.get_task_stream(client) as stream:
        fd.partial_fit(fastomkl.Raker(n_components=4, random_state=0), dX, dy)
    learnt = [t for t in stream.data if "_learn_chunk" in str(t["key"])]
    workers = set(client.scheduler_info()["workers"])
    assert len(learnt) == len(dX.chunks[0]) and {t["worker"] for t in learnt} <= workers


@pytest.mark.parametrize("make,labels", [
    (lambda: fastomkl.Raker(n_components=10, random_state=0), False),
    (lambda: fastomkl.VAWClassifier(n_components=10, random_state=0), True),
    (lambda: fastomkl.DoublySGDClassifier(kernel=Gaussian(1.0), random_state=0), True)])
def test_prediction_on_the_workers_equals_local_prediction(client, data, make, labels):
    X, y, dX, _ = data
    target = np.where(y > np.median(y), "high", "low") if labels else y
    model = make().fit(X, target)
    got = fd.predict(model, dX)
    assert got.chunks[0] == dX.chunks[0]
    np.testing.assert_array_equal(got.compute(), model.predict(X))
    if labels:           # BLAS may round a 150-row product differently from a 900-row one
        np.testing.assert_allclose(fd.decision_function(model, dX).compute(),
                                   model.decision_function(X), rtol=1e-12, atol=1e-14)


def test_data_parallel_dsg_is_the_average_of_its_shards(client, data):
    X, y, dX, dy = data
    model = fastomkl.DoublySGDRegressor(kernel=Gaussian(1.0), random_state=3)
    merged, shards = fd.fit_data_parallel(model, dX, dy, n_shards=3)
    for s, shard in enumerate(shards):         # shard s: chunks s, s + 3 on stream s
        rows = np.concatenate([np.arange(c * CHUNK, (c + 1) * CHUNK) for c in (s, s + 3)])
        local = chunk_by_chunk(fastomkl.DoublySGDRegressor(kernel=Gaussian(1.0), random_state=3,
                                                           stream=s), X[rows], y[rows])
        np.testing.assert_array_equal(shard.predict(X), local.predict(X))
    average = np.mean([shard.predict(X) for shard in shards], axis=0)
    np.testing.assert_allclose(merged.predict(X), average, rtol=1e-12, atol=1e-12)
    assert np.mean((merged.predict(X) - y) ** 2) < np.var(y)


def test_periodic_averaging_restarts_the_shards_from_the_merge(client, data):
    """Two periods of two shards: the second-period shards start from the first merge on their
    own streams, and the final model is exactly their average; the same run in one process
    through dsg.merge / dsg.on_stream gives the same model."""
    from fastomkl.dsg import merge, on_stream
    X, y, dX, dy = data
    model = fastomkl.DoublySGDRegressor(kernel=Gaussian(1.0), random_state=3)
    merged, shards = fd.fit_data_parallel(model, dX, dy, n_shards=2, periods=2)
    average = np.mean([shard.predict(X) for shard in shards], axis=0)
    np.testing.assert_allclose(merged.predict(X), average, rtol=1e-12, atol=1e-12)

    def rows(chunks):
        return np.concatenate([np.arange(c * CHUNK, (c + 1) * CHUNK) for c in chunks])
    first = merge([chunk_by_chunk(fastomkl.DoublySGDRegressor(kernel=Gaussian(1.0), random_state=3,
                                                              stream=s), X[rows(own)], y[rows(own)])
                   for s, own in ((0, (0, 2)), (1, (1, 3)))])
    second = [chunk_by_chunk(on_stream(first, s), X[rows((c,))], y[rows((c,))])
              for s, c in ((0, 4), (1, 5))]
    local = merge(second, base=first)
    np.testing.assert_allclose(merged.predict(X), local.predict(X), rtol=1e-12, atol=1e-12)
    assert merged.n_samples_seen_ == len(y)


def test_bad_arguments_are_value_errors(data):
    X, y, dX, dy = data
    with pytest.raises(ValueError, match="dask array"):
        fd.partial_fit(fastomkl.VAW(), X, y)
    with pytest.raises(ValueError, match="chunked like"):
        fd.partial_fit(fastomkl.VAW(), dX, dy.rechunk(100))
    with pytest.raises(ValueError, match="single chunk along its columns"):
        fd.predict(fastomkl.VAW(), dX.rechunk((CHUNK, 1)))
    with pytest.raises(ValueError, match="doubly stochastic"):
        fd.fit_data_parallel(fastomkl.VAW(), dX, dy)
    with pytest.raises(ValueError, match="n_shards"):
        fd.fit_data_parallel(fastomkl.DoublySGDRegressor(kernel=Gaussian(1.0)), dX, dy, n_shards=0)
    with pytest.raises(ValueError, match="fewer than n_shards"):
        fd.fit_data_parallel(fastomkl.DoublySGDRegressor(kernel=Gaussian(1.0)), dX, dy, n_shards=7)
    with pytest.raises(ValueError, match="periods"):
        fd.fit_data_parallel(fastomkl.DoublySGDRegressor(kernel=Gaussian(1.0)), dX, dy, periods=0)
