"""``torch.Size``: a tuple of ints with ``numel()``, taken wherever a shape is (it is a tuple). Slicing, ``+`` and
``*`` keep the type, as PyTorch's. ``Tensor.shape``/``size()`` stay plain tuples (see README)."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from typing import Any, SupportsIndex, overload


class Size(tuple[int, ...]):
    """A shape: ``Size([2, 3])``; each item is an int (or anything with ``__index__``, a one-element int tensor)."""

    def __new__(cls, sizes: Iterable[Any] = ()) -> Size:
        items = []
        for i, item in enumerate(sizes):
            try:
                items.append(operator.index(item))
            except TypeError:
                raise TypeError(f"Size() takes an iterable of 'int' (item {i} is '{type(item).__name__}')") from None
        return super().__new__(cls, items)

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds (1 for the 0-d shape)."""
        return math.prod(self)

    @overload
    def __getitem__(self, key: SupportsIndex) -> int: ...

    @overload
    def __getitem__(self, key: slice) -> Size: ...

    def __getitem__(self, key: SupportsIndex | slice) -> int | Size:
        if isinstance(key, slice):
            return Size(super().__getitem__(key))
        return super().__getitem__(key)

    def __add__(self, other: tuple[Any, ...]) -> Size:  # type: ignore[override]
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other: tuple[Any, ...]) -> Size:
        return Size(tuple(other) + tuple(self))

    def __mul__(self, count: SupportsIndex) -> Size:
        return Size(tuple(self) * count)

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"minitensor.Size({list(self)})"

    __str__ = __repr__


__all__ = ["Size"]
