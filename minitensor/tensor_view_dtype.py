"""Reading a tensor's bytes as another dtype: ``x.view(dtype)`` (tensor_shape.py's ``view`` hands a dtype argument to
:func:`view_dtype`), PyTorch's bit reinterpretation, with its checks on sizes, strides and the storage offset.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from . import dtypes
from .errors import NonContiguousError, ShapeError
from .tensor_data import TensorData, storage_address

if TYPE_CHECKING:
    from .tensor import Tensor


def view_dtype(self: Tensor, dtype: Any) -> Tensor:
    """The same bytes read as ``dtype`` (``torch.Tensor.view(dtype)``: a bit reinterpretation, not a conversion),
    sharing storage and its version counter. The result never requires grad and writes through it are not recorded
    (as PyTorch, for every dtype, the same one included).

    Same element size: the same shape and strides. Otherwise the last dim's size and the other strides scale by the
    size ratio, with PyTorch's checks: not 0-d (ShapeError); to a smaller element, stride(-1) must be 1; to a larger
    one, size(-1) must be divisible by the ratio (ShapeError), and the storage offset and the other strides too, and
    stride(-1) must be 1 (NonContiguousError). Strides of size-1 dims are not checked (minitensor gives them other
    values than PyTorch: ``unsqueeze`` makes them 0)."""
    new, old, data = dtypes.as_dtype(dtype), self.dtype, self._data
    shape, strides = list(data.shape), list(data.strides)
    if new.itemsize != old.itemsize:
        what = f"to view {old} as {new} (different element sizes)"
        if not shape:
            raise ShapeError(f"view(dtype): self.dim() cannot be 0 {what} (a 0-d tensor)")
        if old.itemsize > new.itemsize:
            ratio = old.itemsize // new.itemsize
            if shape[-1] != 1 and strides[-1] != 1:
                raise NonContiguousError(f"view(dtype): self.stride(-1) must be 1 {what}, but got {strides[-1]} "
                                         f"(shape {data.shape}, strides {data.strides}); call .contiguous() first")
            strides = [s * ratio for s in strides[:-1]] + [1]
            shape[-1] *= ratio
        else:
            ratio = new.itemsize // old.itemsize
            if shape[-1] % ratio:
                raise ShapeError(f"view(dtype): self.size(-1) must be divisible by {ratio} {what}, but got "
                                 f"{shape[-1]} (shape {data.shape})")
            offset = _storage_offset_mod(data.storage, ratio)
            if offset:
                raise NonContiguousError(f"view(dtype): self.storage_offset() must be divisible by {ratio} {what}, but "
                                         f"it is {offset} more than a multiple of {ratio} (shape {data.shape}); call "
                                         ".clone() first")
            for d, (size, stride) in enumerate(zip(shape[:-1], strides[:-1])):
                if size != 1 and stride % ratio:
                    raise NonContiguousError(f"view(dtype): self.stride({d}) must be divisible by {ratio} {what}, but "
                                             f"got {stride} (shape {data.shape}, strides {data.strides})")
            if strides[-1] != 1:
                raise NonContiguousError(f"view(dtype): self.stride(-1) must be 1 {what}, but got {strides[-1]} "
                                         f"(shape {data.shape}, strides {data.strides}); call .contiguous() first")
            strides = [s // ratio for s in strides[:-1]] + [1]
            shape[-1] //= ratio
    storage = self.backend.view_storage(data.storage, new)
    out = self._alias(TensorData.trusted(storage, tuple(shape), tuple(strides), math.prod(shape)))
    out._base = None  # like detach(): writes through it are not recorded into this tensor's graph
    return out


def _storage_offset_mod(storage: Any, ratio: int) -> int:
    """Where ``storage`` starts, in its elements, modulo ``ratio``: storages start on aligned allocations (at least
    8 bytes), so this is PyTorch's storage_offset() % ratio. 0 when the storage has no address."""
    address = storage_address(storage)
    return 0 if address is None else (address // storage.dtype.itemsize) % ratio
