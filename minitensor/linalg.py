"""Linear algebra of Tensor (the ``LinalgMethods`` mixin) and the matching ``mt.`` functions.

Every contraction runs on the backend's matmul kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import tensor_functions as F
from .errors import ShapeError

if TYPE_CHECKING:
    from .tensor import Tensor


def matmul(self: Tensor, other: Tensor) -> Tensor:
    """NumPy/PyTorch matmul: 1-D operands are promoted to a row/column and the added dim is dropped after."""
    a, b = self, self._operand(other)
    if a.dims == 0 or b.dims == 0:
        raise ShapeError(f"matmul needs at least 1-D operands, got shapes {a.shape} and {b.shape}")
    squeeze_a, squeeze_b = a.dims == 1, b.dims == 1
    if squeeze_a:
        a = a.reshape(1, a.shape[0])
    if squeeze_b:
        b = b.reshape(b.shape[0], 1)
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"matmul inner dims differ: {self.shape} @ {other.shape} ({a.shape[-1]} != {b.shape[-2]})")
    out = F.MatMul.apply(a, b)
    if squeeze_a or squeeze_b:
        shape = out.shape[:-2] + (() if squeeze_a else out.shape[-2:-1]) + (() if squeeze_b else out.shape[-1:])
        out = out.view(*shape)
    return out


class LinalgMethods:
    """Linear-algebra methods of Tensor."""

    matmul = matmul


__all__ = ["matmul"]
