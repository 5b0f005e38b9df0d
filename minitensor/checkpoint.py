"""Checkpoints: module state dicts and safetensors files (no pickle).

* :func:`load_state_dict` (``Module.load_state_dict``) copies a state dict into a module's parameters and
  buffers in place, checking every name and shape first.
* :func:`save` writes an object in the safetensors format atomically (a temp file in the same directory,
  fsync, ``os.replace``), so a crash mid-write leaves any old file intact; the file gets the mode a plain
  ``open()`` would give it (``0o666`` less the umask, or the mode of the file it replaces). A flat
  ``{name: Tensor or ndarray}`` dict (a model state dict) is written as plain safetensors entries; anything
  else (nested dicts, lists and tuples of tensors, arrays, numbers, bools, strings, None, e.g.
  ``{"model": ..., "optimizer": opt.state_dict(), "epoch": 3}``) has its tensors stored as entries under dotted
  keys and its structure and other leaves as JSON in the file's metadata (see :func:`flatten`).
* :func:`load` reads either back, tensors on a chosen backend.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import safetensors.numpy as safetensors_numpy

from .autodiff import no_grad
from .backends import get_backend
from .creation import inferred_dtype
from .errors import MinitensorError
from .tensor import Tensor

if TYPE_CHECKING:
    from .module import Module  # the module layer calls load_state_dict from below


class CheckpointError(MinitensorError, ValueError):
    """A checkpoint file that cannot be read, or a state dict that does not fit a module."""


class LoadResult(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]


def _to_numpy(value: Any) -> np.ndarray:
    return value.to_numpy() if isinstance(value, Tensor) else np.asarray(value)


def load_state_dict(module: Module, state: Mapping[str, Any], strict: bool = True) -> LoadResult:
    """Copy ``state`` (tensors or arrays by dotted name) into ``module``'s parameters and buffers, in place.

    Values are converted to each target's backend and dtype. Mis-shaped entries always raise; with
    ``strict`` (the default) missing and unexpected names raise too. The error lists every problem.
    Nothing is changed when an error is raised.
    """
    slots = module.state_dict(keep_vars=True)  # dotted name -> the parameter or persistent buffer itself
    missing = [name for name in slots if name not in state]
    unexpected = [name for name in state if name not in slots]
    mismatched = []
    for name, current in slots.items():
        if name in state and current is not None:
            got = tuple(state[name].shape if isinstance(state[name], Tensor) else np.shape(state[name]))
            if current.shape != got:
                mismatched.append(f"{name}: checkpoint has shape {got}, module has {current.shape}")
    problems = []
    if mismatched:
        problems.append("mis-shaped: " + "; ".join(mismatched))
    if strict and missing:
        problems.append("missing: " + ", ".join(missing))
    if strict and unexpected:
        problems.append("unexpected: " + ", ".join(unexpected))
    if problems:
        raise CheckpointError(f"cannot load state dict into {type(module).__name__}: " + " | ".join(problems))
    with no_grad():
        for name, current in slots.items():
            if name in state and current is not None:
                array = _to_numpy(state[name]).astype(current.dtype, copy=False)
                current.copy_(Tensor(current.backend.from_numpy(array), current.backend))
    return LoadResult(missing, unexpected)


def _write_all(handle: Any, data: bytes) -> None:
    """Write ``data`` in chunks (a seam for tests that simulate a failure mid-write)."""
    view = memoryview(data)
    chunk = 1 << 20
    for start in range(0, len(view), chunk):
        handle.write(view[start : start + chunk])


# --- nested objects: tensors as entries, structure as JSON ---

STRUCTURE_KEY = "minitensor.structure"
_SCALARS = (str, int, float, bool, type(None))


def flatten(obj: Any) -> tuple[dict[str, np.ndarray], str]:
    """``obj`` as (arrays by dotted key, structure JSON).

    The structure mirrors ``obj``: JSON values for strings, numbers, bools and None; lists for lists;
    ``{"$tuple": [...]}`` for tuples; objects for dicts whose keys are strings not starting with ``$``, else
    ``{"$dict": [[key, value], ...]}`` (int, float, bool, None keys kept); ``{"$tensor": key}`` and
    ``{"$ndarray": key}`` for tensors and arrays stored under ``key`` (the dotted path, made unique).
    """
    arrays: dict[str, np.ndarray] = {}

    def entry(path: str) -> str:
        key, n = path or "tensor", 1
        while key in arrays:
            n += 1
            key = f"{path}#{n}"
        return key

    def encode(value: Any, path: str) -> Any:
        if isinstance(value, (Tensor, np.ndarray)):
            key = entry(path)
            arrays[key] = _host_array(value)
            return {"$tensor" if isinstance(value, Tensor) else "$ndarray": key}
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, _SCALARS):
            return value
        if isinstance(value, Counter):
            return {"$counter": [[encode(k, path), n] for k, n in value.items()]}
        if isinstance(value, dict):
            if all(isinstance(k, str) and not k.startswith("$") for k in value):
                return {k: encode(v, f"{path}.{k}" if path else k) for k, v in value.items()}
            pairs = []
            for k, v in value.items():
                if isinstance(k, np.generic):
                    k = k.item()
                if not isinstance(k, _SCALARS):
                    raise TypeError(f"cannot save a dict key of type {type(k).__name__} at {path or 'the top level'!r}")
                pairs.append([k, encode(v, f"{path}.{k}" if path else str(k))])
            return {"$dict": pairs}
        if isinstance(value, (list, tuple)):
            items = [encode(v, f"{path}.{i}" if path else str(i)) for i, v in enumerate(value)]
            return {"$tuple": items} if isinstance(value, tuple) else items
        raise TypeError(f"cannot save a {type(value).__name__} at {path or 'the top level'!r}: only tensors, NumPy "
                        "arrays, numbers, bools, strings, None and dicts/lists/tuples of them")

    structure = encode(obj, "")
    return arrays, json.dumps(structure)


def unflatten(structure: str, arrays: Mapping[str, np.ndarray], as_tensor: Any) -> Any:
    """The object :func:`flatten` described; tensors made by ``as_tensor(array)``."""
    def decode(value: Any) -> Any:
        if isinstance(value, list):
            return [decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (tag, body), = value.items()
            if tag == "$tensor":
                return as_tensor(arrays[body])
            if tag == "$ndarray":
                return np.array(arrays[body])
            if tag == "$tuple":
                return tuple(decode(v) for v in body)
            if tag == "$dict":
                return {k: decode(v) for k, v in body}
            if tag == "$counter":
                return Counter({decode(k): n for k, n in body})
        return {k: decode(v) for k, v in value.items()}

    return decode(json.loads(structure))


def _is_flat(obj: Any) -> bool:
    """A ``{str: Tensor or ndarray}`` dict: written as plain safetensors entries (the original format)."""
    return isinstance(obj, dict) and all(
        isinstance(k, str) and isinstance(v, (Tensor, np.ndarray)) for k, v in obj.items()
    ) and not any(k.startswith("$") for k in obj)


def _umask() -> int:
    """The process umask, read without changing it where /proc allows (os.umask is process-wide)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def save(obj: Any, path: str | os.PathLike[str], metadata: Mapping[str, str] | None = None) -> None:
    """Write ``obj`` to ``path`` in the safetensors format, atomically, with the mode ``open()`` would give.

    ``obj``: a ``{name: Tensor or ndarray}`` dict, or nested dicts/lists/tuples of Tensors, NumPy arrays, Python
    numbers, bools, strings and None (TypeError naming the path of anything else). ``metadata``: extra strings
    stored in the header.
    """
    header = {"format": "minitensor", **(dict(metadata) if metadata else {})}
    if _is_flat(obj):
        arrays = {name: _host_array(value) for name, value in obj.items()}
    else:
        arrays, structure = flatten(obj)
        header[STRUCTURE_KEY] = structure
    data = safetensors_numpy.save(arrays, metadata=header)
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            _write_all(handle, data)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:  # make the rename itself durable (POSIX; best effort elsewhere)
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def _host_array(value: Any) -> np.ndarray:
    """A C-contiguous host copy (0-d arrays stay 0-d)."""
    return np.array(_to_numpy(value), order="C")


def load(path: str | os.PathLike[str], backend: Any = None) -> Any:
    """Read a file written by :func:`save`: the saved object, tensors on ``backend`` (default backend when None).

    A flat file gives ``{name: Tensor}`` (any safetensors file reads this way); a nested one gives back its
    structure, with NumPy arrays saved as arrays and tensors as tensors. float32/float64/int32/int64/bool keep
    their dtype; other integers become int64, float16 float32.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        arrays = safetensors_numpy.load(data)
        header = _metadata(data)
    except Exception as error:  # safetensors raises its own error types for bad headers and truncated data
        raise CheckpointError(f"{os.fspath(path)!r} is not a readable safetensors file: {error}") from error
    chosen = get_backend(backend)

    def as_tensor(array: np.ndarray) -> Tensor:
        return Tensor(chosen.from_numpy(array.astype(inferred_dtype(array), copy=False)), chosen)

    if STRUCTURE_KEY not in header:
        return {name: as_tensor(array) for name, array in arrays.items()}
    try:
        return unflatten(header[STRUCTURE_KEY], arrays, as_tensor)
    except (ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"{os.fspath(path)!r} has a damaged structure record: {error}") from error


def _metadata(data: bytes) -> dict[str, str]:
    """The ``__metadata__`` strings of a safetensors file's JSON header."""
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + size])
    return dict(header.get("__metadata__") or {})
