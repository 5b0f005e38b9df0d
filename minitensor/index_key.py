"""Reading an indexing key for tensor_index.py's advanced ``x[key]``: each item told apart as basic (int, slice,
None, ``...``) or an index tensor (int64/int32 tensors, and lists or NumPy arrays lifted to one), the Ellipsis
filled in, bool masks replaced by their ``nonzero()`` indices; and the view that the basic items select.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from .errors import DTypeError, IndexOutOfRangeError
from .tensor_data import shape_broadcast
from .tensor_math import _is_tensor
from .tensor_shape import getitem as basic_getitem

if TYPE_CHECKING:
    from .tensor import Tensor

INDEX_DTYPES = (dtypes.int64, dtypes.int32)


def _is_mask(k: Any) -> bool:
    return _is_tensor(k) and k.dtype == dtypes.bool_


def _is_basic(k: Any) -> bool:
    return k is None or k is Ellipsis or isinstance(k, slice) or (isinstance(k, (int, np.integer)) and not isinstance(k, bool))


def _index_item(x: Tensor, k: Any) -> Any:
    """One key item as a basic item, an int64/int32 index tensor, or a bool mask tensor."""
    if isinstance(k, (bool, np.bool_)):
        raise DTypeError(f"a Python bool ({k}) is not supported as an index; use None to add a dim")
    if _is_basic(k):
        return k
    if _is_tensor(k):
        x._check_backend(k)
        tensor = k
    else:
        array = np.asarray(k)
        if array.size == 0 and array.dtype.kind == "f":
            array = array.astype(np.int64)  # an empty list
        if array.dtype.kind not in "iub":
            raise DTypeError(f"index arrays must be integers or bools, got {array.dtype} from {type(k).__name__}")
        tensor = x._lift(array, dtypes.bool_ if array.dtype.kind == "b" else dtypes.int64)
    if tensor.dtype != dtypes.bool_ and tensor.dtype not in INDEX_DTYPES:
        raise DTypeError(f"tensors used as indices must be int64, int32 or bool tensors, got {tensor.dtype}")
    if tensor.dims == 0 and tensor.dtype == dtypes.bool_:
        raise DTypeError("a 0-d bool mask is not supported as an index; use None to add a dim")
    if tensor.dims == 0:
        return int(tensor.item())  # a 0-d int tensor selects like an int, as in PyTorch
    return tensor


def _expand_key(x: Tensor, key: tuple[Any, ...]) -> list[Any]:
    """Items with the Ellipsis filled in and each bool mask replaced by its int64 ``nonzero`` indices."""
    items = [_index_item(x, k) for k in key]
    width = [0 if k is None or k is Ellipsis else k.dims if _is_mask(k) else 1 for k in items]
    ellipses = [i for i, k in enumerate(items) if k is Ellipsis]
    if len(ellipses) > 1:
        raise IndexOutOfRangeError("an index can only have a single ellipsis ('...')")
    if sum(width) > x.dims:
        raise IndexOutOfRangeError(f"too many indices for tensor of shape {x.shape}: {sum(width)} dims indexed")
    if ellipses:
        at = ellipses[0]
        items[at : at + 1] = [slice(None)] * (x.dims - sum(width))
    out: list[Any] = []
    dim = 0
    for k in items:
        if _is_mask(k):
            covered = x.shape[dim : dim + k.dims]
            if tuple(k.shape) != tuple(covered):
                raise IndexOutOfRangeError(
                    f"mask of shape {k.shape} does not match the shape {covered} of dims {dim}..{dim + k.dims - 1} "
                    f"of the indexed tensor of shape {x.shape}"
                )
            out.extend(x._lift(col, dtypes.int64) for col in np.nonzero(k.to_numpy()))
        else:
            out.append(k)
        dim += 0 if k is None else k.dims if _is_mask(k) else 1
    return out


def _broadcast_all(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The broadcast of every shape in ``shapes``."""
    out: tuple[int, ...] = ()
    for shape in shapes:
        out = shape_broadcast(out, tuple(shape))
    return out


def _basic(x: Tensor, items: list[Any]) -> Tensor:
    """x[items] for ints, slices and None (no Ellipsis): a view, with the None dims unsqueezed after slicing."""
    new_dims, out_dim = [], 0
    for k in items:
        if k is None:
            new_dims.append(out_dim)
        out_dim += 0 if isinstance(k, (int, np.integer)) else 1
    view = basic_getitem(x, tuple(k for k in items if k is not None))
    for d in new_dims:
        view = view.unsqueeze(d)
    return view
