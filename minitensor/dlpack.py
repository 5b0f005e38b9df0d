"""DLPack and buffer interop: ``from_dlpack``, ``to_dlpack`` and ``frombuffer`` (the export side is
``Tensor.__dlpack__``/``__dlpack_device__``, tensor_storage.py).

Imports share memory, as PyTorch's: the tensor's storage is a 1-D NumPy view spanning the source's elements, read with
the source's strides, so writes through either side are seen by the other. The source must hold one of minitensor's
dtypes (float32, float64, int32, int64, bool; others raise DTypeError) and live on the host (``device="cuda"``
copies the shared CPU tensor there). A source with negative strides is copied. A read-only source (``bytes`` given
to ``frombuffer``, or a legacy "dltensor" capsule such as ``torch.utils.dlpack.to_dlpack`` makes, which NumPy
imports read-only) stays read-only: writing into the tensor raises NumPy's ValueError instead of changing the
memory (``frombuffer`` gives PyTorch's warning first).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import dtypes
from .backends import get_backend
from .errors import DTypeError, ShapeError
from .tensor import Tensor
from .tensor_data import TensorData

_READ_ONLY_WARNING = ("The given buffer is not writable, and minitensor does not support writing into it: writes to "
                      "this tensor raise. You may want to copy the buffer or make it writable before converting it "
                      "to a tensor.")


class _Capsule:
    """A bare DLPack capsule (``to_dlpack``'s result, or a library's) as the object NumPy's ``from_dlpack`` takes."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def _shared_tensor(array: np.ndarray, device: Any, requires_grad: bool = False) -> Tensor:
    """A tensor whose storage is a 1-D view over ``array``'s elements (no copy unless a stride is negative or not a
    whole number of elements); on ``device`` (default: the CPU backend), copied there if that is not the host."""
    if array.dtype not in dtypes.SUPPORTED:
        raise DTypeError(f"cannot share memory with data of dtype {array.dtype}: minitensor's dtypes are "
                         "float32, float64, int32, int64 and bool")
    item = array.dtype.itemsize
    if array.size == 0 or any(s < 0 or s % item for s in array.strides):
        array = np.ascontiguousarray(array)
    steps = tuple(s // item for s in array.strides)
    extent = 0 if array.size == 0 else 1 + sum((n - 1) * s for n, s in zip(array.shape, steps))
    storage = np.lib.stride_tricks.as_strided(array, shape=(extent,), strides=(item,))
    host = get_backend("cpu")
    out = Tensor(TensorData(storage, array.shape, steps), host)
    target = get_backend("cpu" if device is None else device)
    if target is not host:
        out = out._to_backend(target)
    return out.requires_grad_(True) if requires_grad else out


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor sharing the memory of ``ext_tensor`` (anything with ``__dlpack__``: a NumPy array, a torch or
    minitensor tensor; or a DLPack capsule); ``copy=True`` copies first."""
    if hasattr(ext_tensor, "__dlpack__"):
        source = ext_tensor
    elif type(ext_tensor).__name__ == "PyCapsule":
        source = _Capsule(ext_tensor)
    else:
        raise TypeError(f"from_dlpack(): expected an object with __dlpack__ or a DLPack capsule, got "
                        f"{type(ext_tensor).__name__}")
    array = np.from_dlpack(source, copy=copy)
    return _shared_tensor(array, device)


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack 1.0 ("dltensor_versioned") capsule viewing ``tensor``'s storage, which marks it writable (a legacy
    capsule cannot, so NumPy would import it read-only)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")
    return tensor.__dlpack__(max_version=(1, 0))


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """A 1-D tensor sharing the memory of ``buffer`` (any object with the buffer protocol): ``count`` elements
    (negative: all that fit) of ``dtype`` from byte ``offset``."""
    resolved = dtypes.as_dtype(dtype)
    view = memoryview(buffer).cast("B")
    length, item = view.nbytes, resolved.itemsize
    if length == 0 or count == 0:
        raise ShapeError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ShapeError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} "
                         "bytes) minus 1")
    if count < 0:
        if (length - offset) % item:
            raise ShapeError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({item})")
        count = (length - offset) // item
    elif offset + count * item > length:
        raise ShapeError(f"requested buffer length ({count} * {item} bytes) after offset ({offset} bytes) must not be "
                         f"greater than actual buffer length ({length} bytes)")
    if view.readonly:
        warnings.warn(_READ_ONLY_WARNING, UserWarning, stacklevel=2)
    array = np.frombuffer(view, dtype=resolved, count=count, offset=offset)
    return _shared_tensor(array, None, requires_grad)


__all__ = ["from_dlpack", "frombuffer", "to_dlpack"]
