"""Scalar: a differentiable Python float, the micrograd-sized face of the autodiff engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import operators as ops
from .autodiff import Context, Function, History, next_id
from .backward import backpropagate
from .errors import GradientError


class Scalar:
    """A float that records the operations applied to it, so ``backward()`` can fill ``.grad``."""

    def __init__(self, value: float, history: History | None = None, requires_grad: bool = True, name: str | None = None):
        self.data = float(value)
        self.history = history
        self.requires_grad = requires_grad or history is not None
        self.grad: float | None = None
        self.unique_id = next_id()
        self.name = name or f"s{self.unique_id}"

    def __repr__(self) -> str:
        return f"Scalar({self.data})"

    # --- autodiff protocol ---

    @property
    def is_leaf(self) -> bool:
        return self.history is None

    def accumulate_grad(self, grad: float) -> None:
        self.grad = grad if self.grad is None else self.grad + grad

    def backward(self, grad: float | None = None) -> None:
        """d self / d leaf, added into every leaf's ``.grad``."""
        if not self.requires_grad:
            raise GradientError("backward() on a Scalar that does not require grad and has no history")
        backpropagate(self, 1.0 if grad is None else float(grad))

    # --- operators ---

    def __add__(self, b: Any) -> Scalar:
        return Add.apply(self, b)

    __radd__ = __add__

    def __sub__(self, b: Any) -> Scalar:
        return Add.apply(self, Neg.apply(b))

    def __rsub__(self, b: Any) -> Scalar:
        return Add.apply(b, Neg.apply(self))

    def __mul__(self, b: Any) -> Scalar:
        return Mul.apply(self, b)

    __rmul__ = __mul__

    def __truediv__(self, b: Any) -> Scalar:
        return Mul.apply(self, Inv.apply(b))

    def __rtruediv__(self, b: Any) -> Scalar:
        return Mul.apply(b, Inv.apply(self))

    def __neg__(self) -> Scalar:
        return Neg.apply(self)

    def __lt__(self, b: Any) -> Scalar:
        return LT.apply(self, b)

    def __gt__(self, b: Any) -> Scalar:
        return LT.apply(b, self)

    def __eq__(self, b: Any) -> Scalar:  # type: ignore[override]
        return EQ.apply(self, b)

    __hash__ = object.__hash__

    def __abs__(self) -> Scalar:
        return Abs.apply(self)

    def __bool__(self) -> bool:
        return bool(self.data)

    def __float__(self) -> float:
        return self.data

    def abs(self) -> Scalar:
        return Abs.apply(self)

    def max(self, b: Any) -> Scalar:
        return Max.apply(self, b)

    def min(self, b: Any) -> Scalar:
        return Neg.apply(Max.apply(Neg.apply(self), Neg.apply(b)))

    def exp(self) -> Scalar:
        return Exp.apply(self)

    def log(self) -> Scalar:
        return Log.apply(self)

    def relu(self) -> Scalar:
        return ReLU.apply(self)

    def sigmoid(self) -> Scalar:
        return Sigmoid.apply(self)

    def tanh(self) -> Scalar:
        return Tanh.apply(self)


class ScalarFunction(Function):
    """Function over Scalars: forward and backward work on plain floats."""

    @classmethod
    def _prepare(cls, inputs: tuple[Any, ...]) -> tuple[Scalar, ...]:
        return tuple(v if isinstance(v, Scalar) else Scalar(v, requires_grad=False) for v in inputs)

    @classmethod
    def _raw_forward(cls, ctx: Context, inputs: tuple[Any, ...]) -> float:
        return float(cls.forward(ctx, *(v.data for v in inputs)))

    @classmethod
    def _finish(cls, raw: float, history: History | None, inputs: tuple[Any, ...]) -> Scalar:
        return Scalar(raw, history, requires_grad=history is not None)


class UnaryScalarFunction(ScalarFunction):
    """out = f(a) with d/da given by f_back(a, d); subclasses name both from ``operators``."""

    f: Callable[[float], float] = staticmethod(ops.id)
    f_back: Callable[[float, float], float] = staticmethod(ops.mul)

    @classmethod
    def forward(cls, ctx: Context, a: float) -> float:  # type: ignore[override]
        ctx.save_for_backward(a)
        return cls.f(a)

    @classmethod
    def backward(cls, ctx: Context, d: float) -> float:  # type: ignore[override]
        return cls.f_back(ctx.saved_values[0], d)


class Inv(UnaryScalarFunction):
    f, f_back = staticmethod(ops.inv), staticmethod(ops.inv_back)


class Log(UnaryScalarFunction):
    f, f_back = staticmethod(ops.log), staticmethod(ops.log_back)


class ReLU(UnaryScalarFunction):
    f, f_back = staticmethod(ops.relu), staticmethod(ops.relu_back)


class Abs(UnaryScalarFunction):
    f, f_back = staticmethod(ops.abs), staticmethod(ops.abs_back)


class Add(ScalarFunction):
    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        return ops.add(a, b)

    @staticmethod
    def backward(ctx: Context, d: float) -> tuple[float, float]:
        return d, d


class Mul(ScalarFunction):
    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        ctx.save_for_backward(a, b)
        return ops.mul(a, b)

    @staticmethod
    def backward(ctx: Context, d: float) -> tuple[float, float]:
        a, b = ctx.saved_values
        return d * b, d * a


class Neg(ScalarFunction):
    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        return ops.neg(a)

    @staticmethod
    def backward(ctx: Context, d: float) -> float:
        return -d


class Exp(ScalarFunction):
    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        out = ops.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d: float) -> float:
        return d * ctx.saved_values[0]


class Sigmoid(ScalarFunction):
    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        out = ops.sigmoid(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d: float) -> float:
        s = ctx.saved_values[0]
        return d * s * (1.0 - s)


class Tanh(ScalarFunction):
    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        out = ops.tanh(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d: float) -> float:
        t = ctx.saved_values[0]
        return d * (1.0 - t * t)


class Max(ScalarFunction):
    """max(a, b); the gradient goes to the larger input (split evenly on a tie)."""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        ctx.save_for_backward(a, b)
        return ops.max(a, b)

    @staticmethod
    def backward(ctx: Context, d: float) -> tuple[float, float]:
        a, b = ctx.saved_values
        if a == b:
            return d / 2.0, d / 2.0
        return (d, 0.0) if a > b else (0.0, d)


class LT(ScalarFunction):
    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        return ops.lt(a, b)

    @staticmethod
    def backward(ctx: Context, d: float) -> tuple[float, float]:
        return 0.0, 0.0


class EQ(ScalarFunction):
    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        return ops.eq(a, b)

    @staticmethod
    def backward(ctx: Context, d: float) -> tuple[float, float]:
        return 0.0, 0.0
