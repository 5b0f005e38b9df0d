"""Broadcasting and grids (the ``BroadcastMethods`` mixin) and the matching ``mt.`` functions: broadcast_shapes,
broadcast_to, broadcast_tensors, meshgrid.

Every result is a stride-0 view made by ``expand`` (it shares storage, as in PyTorch), so gradients sum back.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .errors import DTypeError, ShapeError
from .tensor_data import shape_broadcast

if TYPE_CHECKING:
    from .tensor import Tensor


def _as_shape(shape: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a shape tuple."""
    try:
        return (operator.index(shape),) if not isinstance(shape, Sequence) else tuple(operator.index(s) for s in shape)
    except TypeError as error:
        raise TypeError(f"a shape is an int or a sequence of ints, got {shape!r}") from error


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape that tensors of ``shapes`` (ints or sequences of ints) broadcast to; ShapeError if they cannot."""
    out: tuple[int, ...] = ()
    for shape in shapes:
        dims = _as_shape(shape)
        if any(s < 0 for s in dims):
            raise ShapeError(f"broadcast_shapes(): negative size in shape {dims}")
        try:
            out = shape_broadcast(out, dims)
        except ShapeError as error:
            raise ShapeError(f"broadcast_shapes(): shapes {tuple(_as_shape(s) for s in shapes)} cannot be broadcast together "
                             f"(at {dims})") from error
    return out


def broadcast_to(input: Tensor, size: Any) -> Tensor:  # noqa: A002 - PyTorch's name
    """``input`` broadcast to ``size`` as a view (stride 0 along new and stretched dims; -1 keeps an existing dim):
    ``input.expand(size)``, as in PyTorch."""
    shape = _as_shape(size)
    try:
        return input.expand(*shape)
    except ShapeError as error:
        fewer = "fewer dims " if len(shape) < input.dims else ""
        raise ShapeError(f"broadcast_to(): cannot broadcast shape {input.shape} to {fewer}{shape}") from error


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """All ``tensors`` broadcast to their common shape (views)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, BroadcastMethods):  # every Tensor is one
            raise TypeError(f"broadcast_tensors(): expected Tensor as element {i}, but got {type(t).__name__}")
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(*shape) for t in tensors)


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids of 0-d or 1-d tensors of one dtype (views): with ``indexing="ij"`` (the default, without
    PyTorch's warning) result i varies along dim i; with ``"xy"`` the first two dims are swapped."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f'meshgrid(): indexing must be "ij" or "xy", got {indexing!r}')
    if not tensors:
        raise ShapeError("meshgrid() needs at least one tensor")
    for i, t in enumerate(tensors):
        if not isinstance(t, BroadcastMethods):  # every Tensor is one
            raise TypeError(f"meshgrid(): expected Tensor as element {i}, but got {type(t).__name__}")
    for i, t in enumerate(tensors):
        if t.dims > 1:
            raise ShapeError(f"meshgrid(): expected 0-d or 1-d tensors, got shape {t.shape} at position {i}")
        if t.dtype != tensors[0].dtype:
            raise DTypeError(f"meshgrid(): all tensors need one dtype, got {tensors[0].dtype} and {t.dtype} (position {i})")
        tensors[0]._check_backend(t)
    order = list(range(len(tensors)))
    if indexing == "xy" and len(order) > 1:
        order[0], order[1] = 1, 0
    shape = [0] * len(tensors)
    for i, t in enumerate(tensors):
        shape[order[i]] = t.numel()
    grids = []
    for i, t in enumerate(tensors):
        local = [1] * len(tensors)
        local[order[i]] = shape[order[i]]
        grids.append(t.reshape(*local).expand(*shape))
    return tuple(grids)


class BroadcastMethods:
    """Broadcasting methods of Tensor."""

    broadcast_to = broadcast_to


__all__ = ["broadcast_shapes", "broadcast_to", "broadcast_tensors", "meshgrid"]
