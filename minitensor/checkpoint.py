"""Checkpoints: module state dicts and safetensors files (no pickle).

* :func:`load_state_dict` (``Module.load_state_dict``) copies a state dict into a module's parameters and
  buffers in place, checking every name and shape first.
* :func:`save` writes ``{name: Tensor or ndarray}`` in the safetensors format atomically (a temp
  file in the same directory, fsync, ``os.replace``), so a crash mid-write leaves any old file intact.
* :func:`load` reads one back as tensors on a chosen backend.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from .autodiff import no_grad
from .backends import get_backend
from .creation import inferred_dtype
from .errors import MinitensorError
from .module import Module
from .tensor import Tensor


class CheckpointError(MinitensorError, ValueError):
    """A checkpoint file that cannot be read, or a state dict that does not fit a module."""


class LoadResult(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]


def _slots(module: Module) -> dict[str, Tensor | None]:
    """Dotted name -> the parameter or persistent buffer it names, in state-dict order."""
    return module.state_dict(keep_vars=True)


def _to_numpy(value: Any) -> np.ndarray:
    return value.to_numpy() if isinstance(value, Tensor) else np.asarray(value)


def load_state_dict(module: Module, state: Mapping[str, Any], strict: bool = True) -> LoadResult:
    """Copy ``state`` (tensors or arrays by dotted name) into ``module``'s parameters and buffers, in place.

    Values are converted to each target's backend and dtype. Mis-shaped entries always raise; with
    ``strict`` (the default) missing and unexpected names raise too. The error lists every problem.
    Nothing is changed when an error is raised.
    """
    slots = _slots(module)
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


def save(state: Mapping[str, Any], path: str | os.PathLike[str], metadata: Mapping[str, str] | None = None) -> None:
    """Write ``state`` ({name: Tensor or NumPy array}) to ``path`` in the safetensors format, atomically."""
    from safetensors.numpy import save as encode

    arrays = {}
    for name, value in state.items():
        if not isinstance(name, str):
            raise TypeError(f"state dict keys must be strings, got {name!r}")
        if not isinstance(value, (Tensor, np.ndarray)):
            raise TypeError(f"state dict value {name!r} must be a Tensor or NumPy array, got {type(value).__name__}")
        arrays[name] = np.ascontiguousarray(_to_numpy(value))
    data = encode(arrays, metadata={"format": "minitensor", **(dict(metadata) if metadata else {})})
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            _write_all(handle, data)
            handle.flush()
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


def load(path: str | os.PathLike[str], backend: Any = None) -> dict[str, Tensor]:
    """Read a safetensors file into {name: Tensor} on ``backend`` (default backend when None).

    float32/float64/int32/int64/bool arrays keep their dtype; other integers become int64, float16 float32.
    """
    from safetensors.numpy import load as decode

    with open(path, "rb") as handle:
        data = handle.read()
    try:
        arrays = decode(data)
    except Exception as error:  # safetensors raises its own error types for bad headers and truncated data
        raise CheckpointError(f"{os.fspath(path)!r} is not a readable safetensors file: {error}") from error
    chosen = get_backend(backend)
    out = {}
    for name, array in arrays.items():
        array = array.astype(inferred_dtype(array), copy=False)
        out[name] = Tensor(chosen.from_numpy(array), chosen)
    return out
