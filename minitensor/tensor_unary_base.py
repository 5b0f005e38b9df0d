"""What the element-wise functions of one tensor share (tensor_math.py, tensor_erf_gamma.py, tensor_rounding.py,
tensor_trig.py, and the modules that import these from tensor_math.py): lifting integer and bool inputs to the default
float dtype (``_float_input``), the dtype checks (``_integral``, ``_not_bool``), and ``_Unary``, the Function of an
op whose gradient is ``d * derivative(a, out)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .errors import DTypeError

if TYPE_CHECKING:
    from .tensor import Tensor


def _float_input(x: Tensor) -> Tensor:
    """Integer and bool tensors become the default float dtype (``exp`` of an int tensor is a float tensor)."""
    return x if x.dtype.kind == "f" else x.cast(dtypes.get_default_dtype())


def _integral(x: Tensor, name: str) -> None:
    if x.dtype.kind not in "iub":
        raise DTypeError(f"{name} needs integer or bool tensors, got {x.dtype} (shape {x.shape})")


def _not_bool(x: Tensor, name: str, hint: str = "cast with .int() or .float() first") -> None:
    if x.dtype.kind == "b":
        raise DTypeError(f"{name}() is not supported for bool tensors (shape {x.shape}); {hint}")


class _Unary(F.TensorFunction):
    """out = op(a); the gradient is d * ``derivative(a, out)``."""

    op = "id"
    higher_order = True  # the backward multiplies d by derivative(), built from differentiable tensor ops

    @staticmethod
    def derivative(a: Tensor, out: Tensor) -> Tensor:
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx: Context, a: Tensor) -> Tensor:  # type: ignore[override]
        out = a._map(cls.op)
        ctx.save_for_backward(a, out)
        return out

    @classmethod
    def backward(cls, ctx: Context, d: Tensor) -> Tensor:  # type: ignore[override]
        a, out = ctx.saved_values
        return d * cls.derivative(a, out)
