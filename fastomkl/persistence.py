"""Saving and loading models in a format that can never execute code, and that treats every file
it reads as untrusted.

A model file is a zip archive of ``.npy`` arrays (NumPy's ``.npz``, read with ``allow_pickle=False``):

* ``__header__``: a JSON document ``{"format": "fastomkl-model", "version": 3,
  "fastomkl_version": "0.1.0", "class": ..., "params": ..., "n_features_in": ..., "classes": ...,
  "feature_names": ..., "rng_state": ..., "digest": {"algorithm": "sha256" | "hmac-sha256",
  "value": ...}}``.  ``version`` is the file format, ``fastomkl_version`` the package that wrote
  the file.  Files of format 2 (written before the package recorded its version, with no
  ``fastomkl_version``) still load; a file of any other format is refused with a message naming
  the package version that wrote it.  ``class`` names a fastomkl
  estimator; ``params`` holds only JSON values (kernels as ``{"kind", "sigma"}``, a list of them
  under ``__kernels__``, one kernel under ``__kernel__``);
  ``feature_names`` (optional) are the names of a model that learnt from dict samples.
* one array per entry of the model's compiled state (``engine.t``, ``experts.theta``, ...).

The digest covers the whole file: the header (all but the digest itself) and every array's name,
dtype, shape and bytes.  ``save(path, key=...)`` makes it an HMAC-SHA256 under a secret key, and
``load(path, key=...)`` then refuses any file not written with that key: use it for files that
come from elsewhere.  Without a key the SHA-256 catches accidents, not attackers (anyone can
recompute it), so ``load`` never relies on it: before any compiled code sees a file it checks

* the archive: members, their ``.npy`` headers and the memory they declare (at most ``max_bytes``
  in all, and by default at most ``MAX_EXPANSION`` times the file's size beyond 32 MiB, checked
  before anything is decompressed); under a key, the signature, computed over the members as they
  stream out, before any array is read;
* the header: every field's type, the parameters as the model's constructor and ``set_params``
  would check them, and the size of the model they imply against the arrays present (a small
  file cannot make ``load`` allocate gigabytes);
* the state: exactly the arrays the model has, with its shapes and dtypes, every float finite, and
  every index, count and structure in range (each compiled component's ``check_state``).

Any file that is unreadable or fails a check raises one ``ValueError`` saying what is wrong (a
missing path raises ``FileNotFoundError``).  After ``load(save(model))`` the next predictions and
updates are bit-identical to the original's, including the per-round random stream.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import stat
import warnings
import zipfile

import numpy as np

from fastomkl.kernels import Kernel, Polynomial, kernel_from_dict

FORMAT = "fastomkl-model"
VERSION = 3
# Formats this package reads: 2 is 3 without "fastomkl_version" (files of 0.1, whose parameters
# may carry the names they had before the renames, see _build).
READABLE = (2, 3)
MAX_BYTES = 1 << 30            # default bound on the memory the arrays of a file may take
# Under the default bound a file's arrays may also expand to at most this many times the archive's
# size on disk beyond a floor: deflate reaches ~1000x on zeros, a compression bomb's ratio, while
# model states (floats) hardly compress; the most compressible real state measured, support rows
# of binary features (a9a), reaches 60x.
MAX_EXPANSION = 64
_EXPANSION_FLOOR = 32 << 20
_CHUNK = 1 << 20               # bytes hashed at a time when a signature is checked before reading
_MAX_HEADER_BYTES = 1 << 22    # the JSON header (its parameters hold at most a kernel list)
_MAX_MEMBERS = 4096
_DTYPES = {np.dtype(t) for t in ("<f8", "<f4", "<i8", "<i4", "|u1", "|b1")}
# A model's engine allocates what its parameters imply before the file's state replaces it: allow
# up to this many times the elements the file holds (the frequencies are stored, so a real file
# holds about as much as its engine allocates), plus a fixed allowance of doubles.
_IMPLIED_FACTOR = 8
_IMPLIED_ALLOWANCE = 1 << 21


def save(model, path, key=None) -> None:
    """Write ``model`` to ``path`` (any fastomkl estimator, fitted or not).

    Parameters
    ----------
    model : fastomkl estimator
    path : str, path-like or binary file object
    key : bytes or str, optional
        Sign the file with HMAC-SHA256 under this secret: ``load`` then needs the same key.
    """
    from fastomkl._estimator import OnlineEstimator
    if not isinstance(model, OnlineEstimator):
        raise ValueError(f"save expects a fastomkl estimator, got {type(model).__name__}")
    engine = model._engine
    arrays = {} if engine is None else engine.get_state()
    # a classifier's labels in the order of their codes (classes_ is sorted; a label's code
    # depends on when it arrived)
    classes = getattr(model, "_by_code", None)
    from fastomkl import __version__
    header = {
        "format": FORMAT,
        "version": VERSION,
        "fastomkl_version": __version__,
        "class": type(model).__name__,
        "params": {k: _encode_param(k, v) for k, v in model.get_params().items()},
        "n_features_in": None if engine is None else int(engine.n_features),
        "classes": None if classes is None else [_plain(c) for c in classes],
        "feature_names": _feature_names(model),
        "rng_state": None if engine is None else _plain(engine.rng_state),
    }
    header["digest"] = _digest(header, arrays, _key_bytes(key))
    if hasattr(path, "write"):          # an open binary file
        np.savez_compressed(path, __header__=np.array(json.dumps(header)), **arrays)
        return
    with open(path, "wb") as fh:
        np.savez_compressed(fh, __header__=np.array(json.dumps(header)), **arrays)


def load(path, key=None, max_bytes: int | None = None):
    """Read a model written by ``save``, checking everything in it first.

    Parameters
    ----------
    path : str, path-like or binary file object
    key : bytes or str, optional
        The secret the file was signed with (``save(..., key=...)``); required for signed files,
        refused for unsigned ones.  The signature is checked before any array is read into
        memory.
    max_bytes : int, optional
        Refuse files whose arrays would take more memory than this.  By default (None) the bound
        is 1 GiB, and the arrays may take at most 64 times the file's size on disk beyond 32 MiB
        (a small file that inflates to gigabytes is a compression bomb, not a model), and the
        model they build at most 8 times the numbers they hold beyond 2^21 (a budgeted model
        holds its budget's capacity, its file the rows in use); pass a number to vouch for
        larger or more compressible files, and the models they build, up to that many bytes.

    Returns
    -------
    model : the fastomkl estimator saved in the file.

    Raises
    ------
    ValueError
        The file is not a fastomkl model, is damaged or altered, fails a check, or does not match
        the key.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from fastomkl import VAW, load
    >>> X = np.random.default_rng(0).uniform(-1, 1, (50, 2))
    >>> model = VAW(n_components=8, random_state=0).fit(X, X.sum(1))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     model.save(os.path.join(folder, "vaw.npz"))
    ...     loaded = load(os.path.join(folder, "vaw.npz"))
    >>> bool(np.array_equal(loaded.predict(X), model.predict(X)))
    True
    """
    if max_bytes is not None and (isinstance(max_bytes, bool)
                                  or not isinstance(max_bytes, (int, np.integer))
                                  or max_bytes < 1):
        raise ValueError(f"max_bytes must be None or a whole number of bytes >= 1, got "
                         f"{max_bytes!r}")
    key = _key_bytes(key)
    try:
        header, arrays = _read_archive(path, max_bytes, key)
        if key is None:
            _verify_digest(header, arrays, None)
        return _build(header, arrays, max_bytes)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    except (FileNotFoundError, IsADirectoryError):
        raise
    except Exception as exc:       # whatever a damaged file provokes, it is one kind of error
        raise ValueError(f"{path}: not a valid fastomkl model file ({type(exc).__name__}: "
                         f"{exc})") from None


# -- reading, in order -----------------------------------------------------------------------------
def _read_archive(path, max_bytes: int | None, key: bytes | None) -> tuple[dict, dict]:
    """(header, name -> array of every state member): the members' declared sizes checked first,
    then the header, then (under a key) the signature over the members' bytes as they stream by,
    and only then the arrays read into memory."""
    if not hasattr(path, "read"):
        _check_regular_file(path)
    try:
        archive = zipfile.ZipFile(path)
    except (FileNotFoundError, IsADirectoryError):
        raise
    except Exception as exc:
        raise ValueError(f"not a fastomkl model file (not a zip archive: {exc})") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > _MAX_MEMBERS:
            raise ValueError(f"the archive has {len(infos)} members (at most {_MAX_MEMBERS})")
        names = [info.filename for info in infos]
        if len(set(names)) != len(names) or not all(n.endswith(".npy") and "/" not in n
                                                     for n in names):
            raise ValueError("the archive must hold distinct .npy members only")
        if "__header__.npy" not in names:
            raise ValueError("not a fastomkl model file (no header)")
        declared = {info.filename[:-4]: _npy_header(archive, info) for info in infos}
        _check_declared_size(declared, max_bytes, _archive_size(path))
        members = {info.filename[:-4]: info for info in infos}
        header = _read_header(_read_member(archive, members.pop("__header__")))
        if key is not None:
            _verify_signature(header, archive, members, declared, key)
        elif header["digest"]["algorithm"] == "hmac-sha256":
            raise ValueError("the file is signed (saved with a key): load it with key=...")
        arrays = {name: _read_member(archive, info) for name, info in members.items()}
        return header, arrays


def _check_declared_size(declared: dict, max_bytes: int | None, archive_size: int) -> None:
    total = sum(math.prod(shape) * dtype.itemsize for shape, dtype, _ in declared.values())
    if max_bytes is not None:
        if total > max_bytes:
            raise ValueError(f"the arrays would take more than max_bytes={max_bytes} bytes of "
                             f"memory (pass a larger max_bytes to load bigger models)")
        return
    if total > MAX_BYTES:
        raise ValueError(f"the arrays would take more than {MAX_BYTES} bytes of memory, the "
                         f"default bound (pass a larger max_bytes to load bigger models)")
    if total > max(_EXPANSION_FLOOR, MAX_EXPANSION * archive_size):
        raise ValueError(f"the arrays would take {total} bytes, {total / archive_size:.0f} times "
                         f"the {archive_size} bytes of the file (a compression bomb?); pass "
                         f"max_bytes to load such a file anyway")


def _archive_size(path) -> int:
    """Bytes of the archive on disk (the members' recorded compressed sizes can be forged)."""
    if hasattr(path, "seek") and hasattr(path, "tell"):
        here = path.tell()
        size = path.seek(0, os.SEEK_END)
        path.seek(here)
        return max(int(size), 1)
    return max(os.stat(path).st_size, 1)


def _read_member(archive, info) -> np.ndarray:
    with archive.open(info) as fh:
        return np.lib.format.read_array(fh, allow_pickle=False)


def _verify_signature(header: dict, archive, members: dict, declared: dict, key: bytes) -> None:
    """The HMAC of a signed file, computed over its members' bytes in chunks as they are
    decompressed, before any of them is read into memory."""
    algorithm = _check_algorithm(header, key)
    h = hmac.new(key, digestmod=hashlib.sha256)
    h.update(_canonical_header(header))
    for name in sorted(members):
        shape, dtype, fortran_order = declared[name]
        if fortran_order and len(shape) > 1:      # the digest is of C-order bytes: read it whole
            _update_with_array(h, name, _read_member(archive, members[name]))
            continue
        h.update(name.encode())
        h.update(str(dtype).encode())
        h.update(str(shape or (1,)).encode())   # as np.ascontiguousarray gives a scalar's
        left = math.prod(shape) * dtype.itemsize
        with archive.open(members[name]) as fh:
            _read_npy_header(fh, name)
            while left:
                chunk = fh.read(min(left, _CHUNK))
                if not chunk:
                    raise ValueError(f"member {name} is shorter than its header declares")
                h.update(chunk)
                left -= len(chunk)
    _compare(header, {"algorithm": algorithm, "value": h.hexdigest()})


def _read_npy_header(fh, name: str) -> tuple[tuple, bool, np.dtype]:
    """(shape, fortran_order, dtype) of the .npy stream at fh, leaving fh at the data."""
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fh)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(fh)
    raise ValueError(f"member {name}: unsupported .npy version {version}")


def _check_regular_file(path) -> None:
    """Refuse devices, FIFOs and sockets: reading one may never end (``/dev/zero``, a pipe)."""
    mode = os.stat(path).st_mode          # FileNotFoundError / IsADirectoryError pass through
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{path} is a directory")
    if not stat.S_ISREG(mode):
        raise ValueError("not a regular file (a device, FIFO or socket is never a model file)")


def _npy_header(archive, info) -> tuple[tuple, np.dtype, bool]:
    """(shape, dtype, fortran_order) an .npy member declares, read without its data; only plain
    dtypes."""
    with archive.open(info) as fh:
        shape, fortran_order, dtype = _read_npy_header(fh, info.filename)
    if info.filename == "__header__.npy":
        if dtype.kind != "U" or shape != () or dtype.itemsize > _MAX_HEADER_BYTES:
            raise ValueError("__header__ must be one JSON string of reasonable size")
    elif dtype not in _DTYPES:
        raise ValueError(f"member {info.filename}: dtype {dtype} is not a state dtype")
    return shape, dtype, fortran_order


def _read_header(value) -> dict:
    if value is None:
        raise ValueError("not a fastomkl model file (no header)")
    header = json.loads(str(value))
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError("not a fastomkl model file")
    from fastomkl import __version__
    version = header.get("version")
    if type(version) is not int or version not in READABLE:
        writer = header.get("fastomkl_version")
        writer = (f"fastomkl {writer}" if isinstance(writer, str) and len(writer) <= 64
                  else "an unknown fastomkl version")
        newer = type(version) is int and version > VERSION
        raise ValueError(f"model format version {version!r:.64} (written by {writer}) is not "
                         f"supported: this fastomkl {__version__} reads format versions "
                         f"{list(READABLE)}; "
                         + ("load it with the fastomkl that wrote it, or a newer one" if newer
                            else "save the model again with this fastomkl"))
    expected = {"format", "version", "class", "params", "n_features_in", "classes",
                "feature_names", "rng_state", "digest"}
    if version >= 3:
        expected.add("fastomkl_version")
    if set(header) != expected:
        raise ValueError(f"the header must have exactly the fields {sorted(expected)}")
    checks = {"class": lambda v: isinstance(v, str),
              "params": lambda v: isinstance(v, dict),
              "n_features_in": lambda v: v is None or (type(v) is int and 1 <= v <= 10 ** 7),
              "classes": lambda v: v is None or (isinstance(v, list) and len(v) >= 1
                                                 and all(_scalar(c) for c in v)),
              "feature_names": lambda v: v is None or isinstance(v, list),
              "rng_state": lambda v: v is None or isinstance(v, dict),
              "fastomkl_version": lambda v: isinstance(v, str) and 1 <= len(v) <= 64,
              "digest": lambda v: isinstance(v, dict) and set(v) == {"algorithm", "value"}}
    for name, ok in checks.items():
        if name in header and not ok(header[name]):
            raise ValueError(f"the header's {name!r} is invalid: {header[name]!r:.200}")
    return header


def _verify_digest(header: dict, arrays: dict, key: bytes | None) -> None:
    _check_algorithm(header, key)
    _compare(header, _digest({k: v for k, v in header.items() if k != "digest"}, arrays, key))


def _check_algorithm(header: dict, key: bytes | None) -> str:
    algorithm = header["digest"]["algorithm"]
    if algorithm == "hmac-sha256" and key is None:
        raise ValueError("the file is signed (saved with a key): load it with key=...")
    if algorithm == "sha256" and key is not None:
        raise ValueError("the file is not signed, but a key was given: refusing it")
    if algorithm not in ("sha256", "hmac-sha256"):
        raise ValueError(f"unknown digest algorithm {algorithm!r}")
    return algorithm


def _compare(header: dict, expected: dict) -> None:
    if not hmac.compare_digest(str(header["digest"]["value"]), expected["value"]):
        raise ValueError("the file does not match its digest (altered, damaged, or signed with "
                         "another key)")


def _build(header: dict, arrays: dict, max_bytes: int | None = None):
    from fastomkl._estimator import _REGISTRY
    cls = _REGISTRY.get(header["class"])
    if cls is None:                     # estimator modules load lazily: register them all first
        import fastomkl
        fastomkl._import_all()
        cls = _REGISTRY.get(header["class"])
    if cls is None:
        raise ValueError(f"unknown model class {header['class']!r}")
    params = {name: _decode_param(name, value) for name, value in header["params"].items()}
    if header.get("fastomkl_version") is None:      # written by 0.1, before some renames
        renamed = getattr(cls, "_renamed_in_files", {})
        params = {renamed.get(name, name): value for name, value in params.items()}
    # a parameter added with a default that changed the model: files without it keep the old one
    for name, value in getattr(cls, "_defaults_of_older_files", {}).items():
        params.setdefault(name, value)
    # JSON gives a tuple back as a list: the parameter's declared forms restore what it was given
    from fastomkl._estimator.params import Constraint
    for name, forms in getattr(cls, "_parameter_constraints", {}).items():
        for form in forms if name in params else ():
            if isinstance(form, Constraint):
                params[name] = form.from_file(params[name])
    unknown = set(params) - set(cls._param_names()) - set(cls._renamed_parameters)
    if unknown:
        raise ValueError(f"parameters {sorted(unknown)} are not parameters of {cls.__name__}")
    with warnings.catch_warnings():      # a file written before a parameter was renamed: its
        warnings.simplefilter("ignore", FutureWarning)      # old name is the file's, not the user's
        model = cls(**params)
    model._check_all_params()
    if header["classes"] is not None:
        if not hasattr(model, "_restore_classes"):
            raise ValueError(f"{cls.__name__} is not a classifier, but the file has classes")
        model._restore_classes(header["classes"])
    n_features = header["n_features_in"]
    if n_features is None:
        if arrays:
            raise ValueError("a model that has seen no data has no state arrays")
        return model
    _check_implied_size(model, params, n_features, arrays, max_bytes)
    if not isinstance(header["rng_state"], dict):
        raise ValueError("a fitted model's file must hold its random stream's state")
    model._restore_engine(n_features, arrays, header["rng_state"])
    names = header["feature_names"]
    if names is not None:
        if len(names) != n_features:
            raise ValueError("feature_names do not match the number of features")
        if not all(isinstance(n, (str, int)) and not isinstance(n, bool) for n in names) \
                or len(set(names)) < len(names):
            raise ValueError("feature_names must be distinct strings or integers")
        model._feature_names = tuple(names)
    return model


def _check_implied_size(model, params: dict, n_features: int, arrays: dict,
                        max_bytes: int | None = None) -> None:
    """Refuse a header implying an engine far larger than the state in the file: building the
    engine allocates before the state is read (the random frequencies, a model's own
    ``_implied_state_size``, e.g. the r^2 inverse of Taylor features, or a budget's capacity
    where the file holds the rows in use).  A caller's ``max_bytes`` vouches for an engine of
    up to that many bytes."""
    held = sum(a.size for a in arrays.values())
    implied = model._implied_state_size(n_features)
    n_components = params.get("n_components")
    if not implied and isinstance(n_components, int):      # random features of one kernel
        kernels = getattr(model, "kernels_", None)
        implied = (len(kernels) if kernels is not None else 1) * n_components * (n_features + 2)
    if max_bytes is not None:
        if 8 * implied > max_bytes:
            raise ValueError(f"the parameters and n_features_in={n_features} imply a model of "
                             f"{8 * implied} bytes, more than max_bytes={max_bytes}")
    elif implied > _IMPLIED_FACTOR * held + _IMPLIED_ALLOWANCE:
        raise ValueError(f"the parameters and n_features_in={n_features} imply a model far "
                         f"larger ({implied} numbers) than the state the file holds ({held}); "
                         f"pass max_bytes to load it anyway")


# -- encoding ------------------------------------------------------------------------------------
def _encode_param(name, value):
    from fastomkl.compose import Part
    if isinstance(value, Part):
        return {"__part__": type(value).__name__,
                "params": {k: _encode_param(k, v) for k, v in value.get_params().items()}}
    if isinstance(value, (Kernel, Polynomial)):
        return {"__kernel__": value.to_dict()}
    if isinstance(value, (list, tuple)) and value and all(isinstance(k, Kernel) for k in value):
        return {"__kernels__": [k.to_dict() for k in value]}
    if isinstance(value, (np.random.Generator, np.random.SeedSequence)):
        return None        # a live generator is not data; the saved streams carry its state
    value = _plain(value)
    try:
        json.dumps(value)
    except TypeError:
        raise ValueError(f"parameter {name}={value!r} cannot be saved (not JSON data)") from None
    return value


def _decode_param(name, value):
    if isinstance(value, dict) and set(value) == {"__part__", "params"}:
        from fastomkl.compose import PARTS
        part = PARTS.get(value["__part__"]) if isinstance(value["__part__"], str) else None
        if part is None or not isinstance(value["params"], dict) \
                or not set(value["params"]) <= set(part._param_names()):
            raise ValueError(f"parameter {name!r} holds an unknown model part")
        return part(**{k: _decode_param(k, v) for k, v in value["params"].items()})
    if isinstance(value, dict) and set(value) == {"__kernel__"}:
        if not isinstance(value["__kernel__"], dict):
            raise ValueError(f"parameter {name!r}: a kernel must be a JSON object")
        return kernel_from_dict(value["__kernel__"])
    if isinstance(value, dict):
        if set(value) != {"__kernels__"} or not isinstance(value["__kernels__"], list):
            raise ValueError(f"parameter {name!r} holds an unknown object")
        kernels = []
        for spec in value["__kernels__"]:
            if not isinstance(spec, dict):
                raise ValueError(f"parameter {name!r}: a kernel must be a JSON object")
            kernels.append(kernel_from_dict(spec))
        return kernels
    return value


def _feature_names(model):
    """The names of a model that learnt from dict samples (strings or integers), else None."""
    names = model.__dict__.get("_feature_names")
    if names is None:
        return None
    if not all(isinstance(name, (str, int)) for name in names):
        raise ValueError(f"feature names {list(names)} cannot be saved (only strings and integers)")
    return list(names)


def _plain(value):
    """NumPy scalars and containers as plain JSON values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.generic, np.ndarray)):     # an MT19937 state holds its key as an array
        return value.tolist()
    return value


def _scalar(value) -> bool:
    return isinstance(value, (str, int, float, bool)) and value == value     # no NaN


def _key_bytes(key) -> bytes | None:
    if key is None:
        return None
    if isinstance(key, str):
        key = key.encode()
    if not isinstance(key, (bytes, bytearray)) or not key:
        raise ValueError("key must be non-empty bytes or a non-empty string")
    return bytes(key)


def _digest(header: dict, arrays: dict, key: bytes | None) -> dict:
    """SHA-256 (or HMAC-SHA256 under key) of the canonical header and every array."""
    h = hmac.new(key, digestmod=hashlib.sha256) if key is not None else hashlib.sha256()
    h.update(_canonical_header(header))
    for name in sorted(arrays):
        _update_with_array(h, name, arrays[name])
    return {"algorithm": "hmac-sha256" if key is not None else "sha256", "value": h.hexdigest()}


def _canonical_header(header: dict) -> bytes:
    """The header's bytes the digest covers: every field but the digest, keys sorted."""
    fields = {k: v for k, v in header.items() if k != "digest"}
    return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()


def _update_with_array(h, name: str, array: np.ndarray) -> None:
    a = np.ascontiguousarray(array)
    h.update(name.encode())
    h.update(str(a.dtype).encode())
    h.update(str(a.shape).encode())
    h.update(a.tobytes())
