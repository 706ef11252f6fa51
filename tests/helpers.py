"""Shared test helpers."""
import numpy as np

from fastomkl.reproduce.common import KERNEL_VARIANTS


def state_bytes(model) -> dict:
    """Everything that defines a model's future behaviour, as bytes (for exact comparisons)."""
    engine = model._engine
    out = {"params": repr(sorted(model.get_params().items(), key=lambda kv: kv[0])),
           "classes": repr(getattr(model, "classes_", None))}
    if engine is not None:
        out.update({k: np.asarray(v).tobytes() for k, v in engine.get_state().items()})
        out["rng"] = repr(engine.rng_state)
        out["t"] = engine.t
    return out


def can_be_saved(cls) -> bool:
    """A model holding a Python function (a user feature map) or other models (a mixture)
    cannot be written to a file."""
    from fastomkl._estimator import OnlineEstimator
    return "phi" not in cls._param_names() and cls.save is OnlineEstimator.save


def cpu_isa_level() -> int:
    """The widest kernel variant this CPU runs (4: AVX-512, 3: AVX2 + FMA, 2: SSE2), whatever
    FASTOMKL_ISA caps this process to (CI runs the suite under each cap)."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "FASTOMKL_ISA"}
    run = subprocess.run([sys.executable, "-c",
                          "from fastomkl._core.features.rff import isa_level; print(isa_level())"],
                         env=env, capture_output=True, text=True, check=True)
    return int(run.stdout)


def as_older_file(path, out, params=(), arrays=(), edit=None):
    """The model file at `path` as a release before some parameters existed wrote it, saved to
    `out` with a valid digest: without the header parameters `params` and the state arrays
    `arrays`; `edit(arrays)` then changes the others in place."""
    import json
    from fastomkl.persistence import _digest
    with np.load(path, allow_pickle=False) as z:
        state = {name: z[name] for name in z.files}
    header = json.loads(str(state.pop("__header__")))
    for name in params:
        del header["params"][name]
    for name in arrays:
        del state[name]
    if edit is not None:
        edit(state)
    header["digest"] = _digest({k: v for k, v in header.items() if k != "digest"}, state, None)
    np.savez(out, __header__=np.array(json.dumps(header)), **state)


def loaded_as_older_file(model, tmp_path, params, X, y):
    """`model`'s file as a release before the parameters `params` existed wrote it, loaded:
    asserts that it learns on (X, y) exactly as `model` does, and returns it."""
    import fastomkl
    model.save(tmp_path / "new.npz")
    as_older_file(tmp_path / "new.npz", tmp_path / "old.npz", params=params)
    loaded = fastomkl.load(tmp_path / "old.npz")
    np.testing.assert_array_equal(loaded.predict_learn(X, y), model.predict_learn(X, y))
    return loaded


# The kernels' instruction-set levels (fastomkl_dispatch.h) by their FASTOMKL_ISA names.
VARIANT_LEVELS = {name: level for level, name in KERNEL_VARIANTS.items()}


def ran_on_variant(request, variant: str) -> bool:
    """For a test of numbers recorded on kernels' variant `variant` to the bit (sums take another
    order on each variant): False when this process runs that variant (the test goes on here);
    else True once the test has run again in a pytest process under FASTOMKL_ISA=`variant` and
    passed there (its failure fails this test).  Skips on a CPU without those instructions."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    import pytest
    from fastomkl._core.features.rff import isa_level
    if isa_level() == VARIANT_LEVELS[variant]:
        return False
    if VARIANT_LEVELS[variant] > cpu_isa_level():
        pytest.skip(f"the numbers were recorded on the kernels' variant {variant}, which this "
                    f"CPU cannot run")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          request.node.nodeid], env={**os.environ, "FASTOMKL_ISA": variant},
                         capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    return True
