"""fastomkl models on Dask: streaming training over the chunks of a dask array, prediction on the
workers, and data-parallel doubly stochastic gradients merged exactly.

Needs the optional extra ``pip install 'fastomkl[dask]'`` (dask[array], distributed).  Every
function runs on whatever scheduler is active: a ``distributed.Client`` when one exists (the data
then stay on the workers that hold them), else dask's local threads.

* ``partial_fit(model, X, y)``: one ``partial_fit`` call per row chunk, in chunk order, each run on
  a worker next to its chunk; only the model travels from chunk to chunk, the data are never
  gathered.  The result equals calling ``model.partial_fit`` on the chunks in order in one process.
* ``predict(model, X)`` (and ``decision_function``): the model is shipped once and each row chunk
  is predicted where it lies; the result is a lazy dask array.
* ``fit_data_parallel(model, X, y, n_shards, periods)``: for the doubly stochastic gradient
  models.  Shard s takes every n_shards-th chunk and trains a copy of ``model`` with ``stream=s``
  (disjoint random-feature blocks) in parallel; ``fastomkl.dsg.merge`` then concatenates them
  into one model that predicts the average of the shard models exactly; with ``periods`` > 1 the
  shards restart from the merged model after each period (periodic averaging).  It helps when one pass over the
  data is the bottleneck and the shards are alike (a random row order): W shards take about 1/W
  of the time, at the statistical cost of averaging W models that each saw 1/W of the data.
"""
from __future__ import annotations

import numpy as np

__all__ = ["partial_fit", "predict", "decision_function", "fit_data_parallel"]


def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError:
        raise ImportError("fastomkl.dask needs dask: pip install 'fastomkl[dask]'") from None
    return dask, da


def _row_chunks(X, y=None):
    """The row blocks of X (and y) as lists of delayed arrays, after checking their layout."""
    dask, da = _dask()
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array, got {type(X).__name__}")
    if len(X.chunks[1]) != 1:
        raise ValueError("X must have a single chunk along its columns (rechunk({1: -1}))")
    x_blocks = list(X.to_delayed()[:, 0])
    if y is None:
        return x_blocks, None
    if not isinstance(y, da.Array) or y.ndim != 1:
        raise ValueError(f"y must be a 1-D dask array, got {type(y).__name__}")
    if y.chunks[0] != X.chunks[0]:
        raise ValueError(f"y must be chunked like the rows of X: {y.chunks[0]} against "
                         f"{X.chunks[0]} (rechunk one of them)")
    return x_blocks, list(y.to_delayed())


def _learn_chunk(model, X, y):
    return model.partial_fit(X, y)


def partial_fit(model, X, y):
    """Train ``model`` (any fastomkl estimator with ``partial_fit``) on the row chunks of the dask
    arrays ``X`` (n, d) and ``y`` (n,), in order.

    Each chunk's ``partial_fit`` runs as one task that depends on the chunk and on the model
    returned by the previous task, so a distributed scheduler runs it next to the chunk: the
    model (small) moves, the data do not.  ``model`` itself is not modified.

    Returns
    -------
    the trained model (a copy of ``model``)

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from fastomkl import VAW
    >>> from fastomkl import dask as fd
    >>> X = da.random.default_rng(0).uniform(-1, 1, (1000, 3), chunks=(250, 3))
    >>> y = X[:, 0] ** 2
    >>> model = fd.partial_fit(VAW(n_components=20, random_state=0), X, y)
    >>> model.n_samples_seen_
    1000
    """
    import copy
    dask, _ = _dask()
    x_blocks, y_blocks = _row_chunks(X, y)
    learn = dask.delayed(_learn_chunk, pure=False)
    trained = dask.delayed(copy.deepcopy(model), traverse=False)
    for xb, yb in zip(x_blocks, y_blocks):
        trained = learn(trained, xb, yb)
    return trained.compute()


def _apply(method: str, model, X):
    dask, da = _dask()
    x_blocks, _ = _row_chunks(X)
    if not hasattr(model, method):
        raise ValueError(f"{type(model).__name__} has no {method}")
    shipped = dask.delayed(model, traverse=False)        # one key: the model is sent once
    classes = getattr(model, "classes_", None) if method == "predict" else None
    dtype = np.asarray(classes).dtype if classes is not None else np.float64
    parts = [da.from_delayed(dask.delayed(getattr(type(model), method))(shipped, xb),
                             shape=(n,), dtype=dtype)
             for xb, n in zip(x_blocks, X.chunks[0])]
    return da.concatenate(parts)


def predict(model, X):
    """Lazy dask array of ``model.predict`` over the row chunks of ``X``, computed on the
    workers; the model is shipped once.  Equal to ``model.predict(X.compute())``.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from fastomkl import Raker
    >>> from fastomkl import dask as fd
    >>> X = da.random.default_rng(0).uniform(-1, 1, (600, 3), chunks=(200, 3))
    >>> model = Raker(n_components=10, random_state=0).fit(X[:200].compute(), np.zeros(200))
    >>> fd.predict(model, X).shape
    (600,)
    """
    return _apply("predict", model, X)


def decision_function(model, X):
    """Lazy dask array of ``model.decision_function`` over the row chunks of ``X`` (classifiers).

    Parameters
    ----------
    model : fastomkl classifier
        A trained model; it is shipped to the workers once.
    X : dask array (n, d), one chunk along the columns

    Returns
    -------
    dask array of float (n,)
        Equal to ``model.decision_function(X.compute())``.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from fastomkl import RakerClassifier
    >>> from fastomkl import dask as fd
    >>> X = da.random.default_rng(0).uniform(-1, 1, (600, 3), chunks=(200, 3))
    >>> first = X[:200].compute()
    >>> model = RakerClassifier(n_components=10, random_state=0).fit(first, first[:, 0] > 0)
    >>> scores = fd.decision_function(model, X)          # a lazy dask array
    >>> scores.shape, bool(np.array_equal(scores[:200].compute(), model.decision_function(first)))
    ((600,), True)
    """
    return _apply("decision_function", model, X)


def fit_data_parallel(model, X, y, n_shards: int = 2, periods: int = 1):
    """Data-parallel training of a doubly stochastic gradient model, merged exactly.

    The row chunks are dealt out in turn: chunk i goes to shard i mod n_shards, and the chunks of
    each shard are split into ``periods`` consecutive runs.  In period 1 shard s trains a copy of
    ``model`` with ``stream=s`` (disjoint random-feature blocks) on its first run of chunks, in
    parallel with the other shards; ``fastomkl.dsg.merge`` joins the shard models into one that
    predicts their average.  Each later period restarts every shard from that merged model on its
    own stream (``fastomkl.dsg.on_stream``) and merges again (periodic averaging, with the merged
    model as the shared base).  ``model`` must have an explicit ``kernel`` (``None``, the median
    heuristic, would read each shard's own data: use ``Gaussian(fastomkl.dsg.median_bandwidth(
    sample))``) and an ``n_features_max`` that holds the features of all the shards (``None``
    does); every shard draws its blocks from one seed (``random_state`` itself when it is an int,
    else one drawn from it); ``model`` is not modified.  A regressor that standardises its targets
    (``standardize_target=True``, the default) standardises each shard's with the statistics of
    that shard's targets; the merge puts every shard in common units (see ``merge``), so the
    average stays exact.

    Parameters
    ----------
    model : DoublySGDRegressor, DoublySGDClassifier or another doubly stochastic gradient model
    X : dask array (n, d), one chunk along the columns
    y : dask array (n,), chunked like the rows of X
    n_shards : int, default 2
    periods : int, default 1

    Returns
    -------
    (merged model, list of the shard models of the last period)

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from fastomkl import DoublySGDRegressor
    >>> from fastomkl import dask as fd
    >>> X = da.random.default_rng(0).uniform(-1, 1, (800, 2), chunks=(100, 2))
    >>> from fastomkl import Gaussian
    >>> model = DoublySGDRegressor(kernel=Gaussian(0.5))
    >>> merged, shards = fd.fit_data_parallel(model, X, X[:, 0] ** 2)
    >>> x = X[:5].compute()
    >>> bool(np.allclose(merged.predict(x), (shards[0].predict(x) + shards[1].predict(x)) / 2))
    True
    """
    from fastomkl.dsg import _DoublySGD, merge, on_stream
    if not isinstance(model, _DoublySGD):
        raise ValueError(f"fit_data_parallel needs a doubly stochastic gradient model, got "
                         f"{type(model).__name__}")
    for name, value in (("n_shards", n_shards), ("periods", periods)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if model.kernel is None or isinstance(model.kernel, str):
        raise ValueError("fit_data_parallel needs a model with an explicit kernel (kernel=None "
                         "would set each shard's bandwidth from its own rows)")
    params = model.get_params()
    if not isinstance(params["random_state"], (int, np.integer)) \
            or params["random_state"] >= 1 << 63:
        params["random_state"] = int(np.random.default_rng(params["random_state"])
                                     .integers(0, 1 << 63))
    dask, _ = _dask()
    x_blocks, y_blocks = _row_chunks(X, y)
    if len(x_blocks) < n_shards * periods:
        raise ValueError(f"X has {len(x_blocks)} row chunks, fewer than n_shards x periods = "
                         f"{n_shards * periods}")
    learn = dask.delayed(_learn_chunk, pure=False)
    merged = None
    for period in range(periods):
        shards = []
        for s in range(n_shards):
            own = list(range(s, len(x_blocks), n_shards))
            run = np.array_split(own, periods)[period]
            start = (type(model)(**{**params, "stream": s}) if merged is None
                     else on_stream(merged, s))
            trained = dask.delayed(start, traverse=False)
            for i in run:
                trained = learn(trained, x_blocks[i], y_blocks[i])
            shards.append(trained)
        shard_models = list(dask.compute(*shards))
        merged = merge(shard_models, base=merged)
    return merged, shard_models
