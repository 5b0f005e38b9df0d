"""Element-wise differentiable ops as Function classes: unary (neg, inv, log, abs, exp, sqrt, sigmoid, tanh),
broadcasting binary (add, sub, mul, div), comparisons (bool results, no gradient) and where.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import dtypes
from .autodiff import Context, is_grad_enabled
from .functions_base import TensorFunction
from .tensor_data import shape_broadcast

if TYPE_CHECKING:
    from .tensor import Tensor


# --- element-wise unary ---


class UnaryFunction(TensorFunction):
    """out = op(a); grad = back_op(a, d). Subclasses name the two kernel ops."""

    op = "id"
    back_op = ""

    @classmethod
    def forward(cls, ctx: Context, a: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(a)
        return a._map(cls.op)

    @classmethod
    def backward(cls, ctx: Context, d: Tensor) -> Tensor:  # type: ignore[override]
        (a,) = ctx.saved_values
        if is_grad_enabled():  # create_graph: the same formula from differentiable ops
            return cls.differentiable(a, d)
        return a._zip(cls.back_op, d)

    @staticmethod
    def differentiable(a: Tensor, d: Tensor) -> Tensor:
        raise NotImplementedError


class Neg(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        return a._map("neg")

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return Neg.apply(d) if is_grad_enabled() else d._map("neg")


class Inv(UnaryFunction):
    """1 / a; d/da = -1 / a^2."""

    op, back_op = "inv", "inv_back"
    differentiable = staticmethod(lambda a, d: -d / (a * a))


class Log(UnaryFunction):
    """log a; d/da = 1 / a."""

    op, back_op = "log", "log_back"
    differentiable = staticmethod(lambda a, d: d / a)


class Abs(UnaryFunction):
    """|a|; d/da = sign(a) (0 at 0)."""

    op, back_op = "abs", "abs_back"
    differentiable = staticmethod(lambda a, d: d * a.sign())


class Exp(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        out = a._map("exp")
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d * ctx.saved_values[0]


class Sqrt(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        out = a._map("sqrt")
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d / (ctx.saved_values[0] * 2.0)


class Sigmoid(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        out = a._map("sigmoid")
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        s = ctx.saved_values[0]
        return d * s * (1.0 - s)


class Tanh(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        out = a._map("tanh")
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        t = ctx.saved_values[0]
        return d * (1.0 - t * t)


# --- element-wise binary (broadcasting) ---


class Add(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        return a._zip("add", b)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, Tensor]:
        return d, d


class Sub(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        return a._zip("sub", b)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, Tensor]:
        return d, -d


class Mul(TensorFunction):
    """a * b; d/da = b, d/db = a (each saved only when the other's gradient is needed, as in PyTorch)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        return a._zip("mul", b)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = ctx.saved_values
        need_a, need_b = ctx.needs_input_grad
        if not is_grad_enabled():  # the ordinary backward: raw kernels, no graph bookkeeping
            return (d._zip("mul", b) if need_a else None), (d._zip("mul", a) if need_b else None)
        return (d * b if need_a else None), (d * a if need_b else None)


class Div(TensorFunction):
    """a / b; d/da = 1 / b, d/db = -a / b^2 (a saved only when b's gradient is needed)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)
        same = a.dtype == b.dtype and a.dtype.kind == "f"
        return a._zip("div", b, dtype=a.dtype if same else dtypes.float_result(dtypes.result_type(a, b)))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = ctx.saved_values
        need_a, need_b = ctx.needs_input_grad
        if not is_grad_enabled() and b.dtype == d.dtype and (a is None or a.dtype == d.dtype):  # raw kernels
            grad_a = d._zip("div", b) if need_a else None
            grad_b = d._map("neg")._zip("mul", a)._zip("div", b._zip("mul", b)) if need_b else None
            return grad_a, grad_b
        return (d / b if need_a else None), (-d * a / (b * b) if need_b else None)


class Compare(TensorFunction):
    """Comparisons: a bool tensor with no gradient. Subclasses name the op."""

    op = "eq"

    @classmethod
    def forward(cls, ctx: Context, a: Tensor, b: Tensor) -> Tensor:  # type: ignore[override]
        return a._zip(cls.op, b, dtype=dtypes.bool_)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[None, None]:
        return None, None


class LT(Compare):
    op = "lt"


class GT(Compare):
    op = "gt"


class EQ(Compare):
    op = "eq"


class LE(Compare):
    op = "le"


class GE(Compare):
    op = "ge"


class NE(Compare):
    op = "ne"


# --- where: a kernel beyond the four ---


class Where(TensorFunction):
    """cond ? a : b with broadcasting; the gradient flows to a where cond holds and to b elsewhere."""

    @staticmethod
    def forward(ctx: Context, cond: Tensor, a: Tensor, b: Tensor) -> Tensor:
        ctx.save_for_backward(cond)
        shape = shape_broadcast(shape_broadcast(cond.shape, a.shape), b.shape)
        out = a.backend.empty(shape, dtypes.result_type(a, b))
        a.backend.where(cond._data, a._data, b._data, out)
        return a._view_of(out)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[None, Tensor | None, Tensor | None]:
        (cond,) = ctx.saved_values
        _, need_a, need_b = ctx.needs_input_grad
        zero = d._lift(0.0)
        pick = Where.apply if is_grad_enabled() else _where
        return None, (pick(cond, d, zero) if need_a else None), (pick(cond, zero, d) if need_b else None)


def _where(cond: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """Where's forward as a raw kernel call, without history (for the ordinary backward)."""
    out = a.backend.empty(shape_broadcast(shape_broadcast(cond.shape, a.shape), b.shape), dtypes.result_type(a, b))
    a.backend.where(cond._data, a._data, b._data, out)
    return a._view_of(out)
