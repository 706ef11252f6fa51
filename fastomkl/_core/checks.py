"""Checks of saved component states: each raises one ValueError naming the component and the
broken invariant, before anything is written."""
import numpy as np

from fastomkl._core.inputs import MAX_ABS_INPUT

# The most rounds a saved engine may have counted: exact in a double.
MAX_ROUNDS = 1 << 53


def _name(owner) -> str:
    return owner if isinstance(owner, str) else type(owner).__name__


def require(condition, owner, what: str) -> None:
    """Raise ValueError naming the component (an object or its name) and the broken invariant
    unless `condition`."""
    if not condition:
        raise ValueError(f"{_name(owner)} state: {what}")


def require_names(owner, state, names) -> None:
    """ValueError unless `state` holds exactly the arrays `names` (components whose arrays grow
    with the data, so the base check cannot compare their shapes with live arrays)."""
    if set(state) != set(names):
        raise ValueError(f"{_name(owner)} state must have arrays {sorted(names)}, "
                         f"got {sorted(state)}")


def require_shapes(owner, state, shapes) -> None:
    """ValueError unless each array named in `shapes` is finite float64 of that shape."""
    for name, shape in shapes.items():
        value = np.asarray(state[name])
        if value.dtype != np.float64 or value.shape != shape or not np.all(np.isfinite(value)):
            raise ValueError(f"{_name(owner)} state '{name}' must be finite float64 of "
                             f"shape {shape}")


def require_triangular(owner, state, name, side: str) -> None:
    """ValueError unless `state[name]` is a Cholesky factor: `side` ("upper" or "lower")
    triangular with a positive diagonal."""
    value = np.asarray(state[name])
    outside = np.tril(value, -1) if side == "upper" else np.triu(value, 1)
    if np.any(outside != 0) or np.any(np.diag(value) <= 0):
        raise ValueError(f"{_name(owner)} state '{name}' must be {side} triangular with "
                         f"a positive diagonal")


def require_inputs(owner, name, value) -> None:
    """Stored inputs (support rows, centres) hold no value an input could not: at most
    MAX_ABS_INPUT in magnitude, as every sample is checked when it arrives."""
    require((np.abs(np.asarray(value)) <= MAX_ABS_INPUT).all(), owner,
            f"'{name}' must hold inputs of magnitude at most {MAX_ABS_INPUT:g}")


def require_packed_spd(owner, name, value, dim: int, strict: bool = True,
                       max_eigenvalue: float | None = None) -> None:
    """Finite, with a non-negative diagonal, or (strict) positive definite: a Cholesky
    factorisation of every matrix succeeds (packed by rows of the lower triangle, see linalg.pxd);
    a matrix whose eigenvalues cannot exceed `max_eigenvalue` (an inverse (lam I + ...)^-1) has no
    diagonal entry beyond it.  A matrix that only looks positive definite would lose its positive
    diagonal in the updates that follow, and the model its ability to be saved."""
    value = np.asarray(value)
    require(np.isfinite(value).all(), owner, f"'{name}' must be finite")
    diag = value[..., np.arange(dim) * (np.arange(dim) + 1) // 2 + np.arange(dim)]
    if not strict:
        require((diag >= 0).all(), owner, f"'{name}' must have a non-negative diagonal")
        return
    require((diag > 0).all(), owner, f"'{name}' must have a positive diagonal")
    if max_eigenvalue is not None:          # a number, or one per matrix
        bound = np.asarray(max_eigenvalue, dtype=np.float64)
        bound = bound.reshape(bound.shape + (1,) * (diag.ndim - bound.ndim))
        require((diag <= bound * (1.0 + 1e-6)).all(), owner,
                f"'{name}' must have no diagonal entry above {bound.max()!r}")
    rows, cols = np.tril_indices(dim)
    full = np.empty((dim, dim))
    for packed in value.reshape(-1, value.shape[-1]):
        full[rows, cols] = packed
        full[cols, rows] = packed
        require(positive_definite(full), owner, f"'{name}' must be positive definite")


def positive_definite(matrix) -> bool:
    """Whether a Cholesky factorisation of the symmetric `matrix` succeeds."""
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return False
    return True


def require_ranges(owner, state, nonneg=(), probability=(), counts=()) -> None:
    """Every float finite; the arrays `nonneg` and `counts` >= 0; those of `probability`
    probability vectors (non-negative, summing to 1 within 1e-4)."""
    for key, value in state.items():
        value = np.asarray(value)
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            raise ValueError(f"{_name(owner)} state '{key}' has NaN or infinite values")
    for key in nonneg:
        if (np.asarray(state[key]) < 0).any():
            raise ValueError(f"{_name(owner)} state '{key}' must be nonnegative")
    for key in probability:
        v = np.asarray(state[key])
        if (v < 0).any() or abs(v.sum() - 1.0) > 1e-4:
            raise ValueError(f"{_name(owner)} state '{key}' must be a probability vector (sum "
                             f"{v.sum()!r})")
    for key in counts:
        if (np.asarray(state[key]) < 0).any():
            raise ValueError(f"{_name(owner)} state '{key}' must hold nonnegative counts")
