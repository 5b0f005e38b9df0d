"""Python operators of Tensor (the ``OperatorMethods`` mixin): ``+ - * / // % ** @``, comparisons, ``& | ^ ~``.

A Python number works on either side and follows PyTorch's type promotion (see :meth:`_operand`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from . import dtypes
from . import tensor_functions as F

if TYPE_CHECKING:
    from .tensor import Tensor


class OperatorMethods:
    """Operator overloads of Tensor."""

    def _operand(self: Any, value: Any) -> Tensor:
        """``value`` as a tensor operand: Python numbers are lifted to the dtype the op will compute in."""
        if isinstance(value, OperatorMethods):  # every Tensor is one
            return cast("Tensor", value)
        if self._data.dtype.kind == "f" and type(value) in (float, int, bool):
            return self._lift(value)  # a Python number never widens a float tensor
        if isinstance(value, np.ndarray):
            return self._lift(value, value.dtype if value.dtype in dtypes.SUPPORTED else None)
        return self._lift(value, dtypes.result_type(self, value))

    def __add__(self: Any, b: Any) -> Tensor:
        return F.Add.apply(self, self._operand(b))

    def __radd__(self: Any, b: Any) -> Tensor:
        return F.Add.apply(self._operand(b), self)

    def __sub__(self: Any, b: Any) -> Tensor:
        return self.sub(b)

    def __rsub__(self: Any, b: Any) -> Tensor:
        return self._operand(b).sub(self)

    def __mul__(self: Any, b: Any) -> Tensor:
        return F.Mul.apply(self, self._operand(b))

    def __rmul__(self: Any, b: Any) -> Tensor:
        return F.Mul.apply(self._operand(b), self)

    def __truediv__(self: Any, b: Any) -> Tensor:
        return F.Div.apply(self, self._operand(b))

    def __rtruediv__(self: Any, b: Any) -> Tensor:
        return F.Div.apply(self._operand(b), self)

    def __floordiv__(self: Any, b: Any) -> Tensor:
        return self.floor_divide(b)

    def __rfloordiv__(self: Any, b: Any) -> Tensor:
        return self._operand(b).floor_divide(self)

    def __mod__(self: Any, b: Any) -> Tensor:
        return self.remainder(b)

    def __rmod__(self: Any, b: Any) -> Tensor:
        return self._operand(b).remainder(self)

    def __pow__(self: Any, b: Any) -> Tensor:
        return self.pow(b)

    def __rpow__(self: Any, b: Any) -> Tensor:
        return self._operand(b).pow(self)

    def __neg__(self: Any) -> Tensor:
        return self.neg()

    def __pos__(self: Any) -> Tensor:
        return self

    def __matmul__(self: Any, b: Tensor) -> Tensor:
        return self.matmul(b)

    def __rmatmul__(self: Any, b: Any) -> Tensor:
        return self._operand(b).matmul(self)

    def __lt__(self: Any, b: Any) -> Tensor:
        return self.lt(b)

    def __gt__(self: Any, b: Any) -> Tensor:
        return self.gt(b)

    def __le__(self: Any, b: Any) -> Tensor:
        return self.le(b)

    def __ge__(self: Any, b: Any) -> Tensor:
        return self.ge(b)

    def __eq__(self: Any, b: Any) -> Tensor:  # type: ignore[override]
        return self.eq(b)

    def __ne__(self: Any, b: Any) -> Tensor:  # type: ignore[override]
        return self.ne(b)

    __hash__ = object.__hash__

    def __abs__(self: Any) -> Tensor:
        return self.abs()

    def __and__(self: Any, b: Any) -> Tensor:
        return self.bitwise_and(b)

    __rand__ = __and__

    def __or__(self: Any, b: Any) -> Tensor:
        return self.bitwise_or(b)

    __ror__ = __or__

    def __xor__(self: Any, b: Any) -> Tensor:
        return self.bitwise_xor(b)

    __rxor__ = __xor__

    def __invert__(self: Any) -> Tensor:
        return self.bitwise_not()
