"""PyTorch's ``torch.autograd.function``: custom differentiable ops (``Function`` with its ``FunctionCtx``) and
``once_differentiable``, the decorator for a backward that is itself not differentiable.

A ``once_differentiable`` backward runs with grad mode off. Under ``create_graph=True`` (when the incoming gradient
requires grad) each gradient it returns gets a history whose own backward raises PyTorch's error, so a second
derivative through it fails loudly instead of being silently zero.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ..autodiff import Context, History, is_grad_enabled, no_grad
from ..errors import GradientError, ShapeError
from ..tensor import Tensor
from ..tensor_data import shape_broadcast
from ..tensor_functions import TensorFunction

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

_Backward = TypeVar("_Backward", bound=Callable[..., Any])

TWICE_MESSAGE = "trying to differentiate twice a function that was marked with @once_differentiable"


class FunctionCtx(Context):
    """The ``ctx`` of a custom Function: ``save_for_backward``, ``saved_tensors``, ``needs_input_grad``,
    ``mark_non_differentiable`` and any attribute forward sets."""

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Outputs that get no history (e.g. indices)."""
        self.non_differentiable = {id(t) for t in tensors}


class Function(TensorFunction):
    """A custom differentiable op, PyTorch style: subclass with static ``forward(ctx, *args)`` (ordinary tensor ops,
    run without recording) and ``backward(ctx, grad)`` (one gradient or None per forward input), then ``.apply``.
    Under ``create_graph=True`` backward runs with grad mode on: written with tensor ops, it is differentiable.
    Check a backward against finite differences with :func:`minitensor.autograd.gradcheck`."""

    higher_order = True

    @classmethod
    def apply(cls, *args: Any) -> Any:
        record = is_grad_enabled()
        ctx = FunctionCtx(tuple(record and isinstance(a, Tensor) and a.requires_grad for a in args))
        with no_grad():
            out = cls.forward(ctx, *args)
        if not isinstance(out, Tensor):
            raise GradientError(f"{cls.__name__}.forward must return one Tensor, got {type(out).__name__}")
        if any(out is a for a in args):
            out = out._alias(out._data)  # never give an input a new history
        if any(ctx.needs_input_grad) and id(out) not in getattr(ctx, "non_differentiable", ()):
            return cls._finish(out, History(cls, ctx, args, tuple(getattr(a, "history", None) for a in args)), args)
        return out

    @classmethod
    def chain_rule(cls, ctx: Context, inputs: tuple[Any, ...], grad: Any) -> list[tuple[Any, Any]]:
        grads = cls.backward(ctx, grad)
        grads = grads if isinstance(grads, tuple) else (grads,)
        name = cls.__name__
        if len(grads) != len(inputs):
            raise GradientError(f"{name}.backward returned {len(grads)} gradients, expected {len(inputs)} (one per input)")
        pairs = []
        for i, (x, g, need) in enumerate(zip(inputs, grads, ctx.needs_input_grad)):
            if g is None:
                continue
            if not isinstance(x, Tensor):
                raise GradientError(f"{name}.backward returned a gradient for input {i}, which is not a tensor")
            if not isinstance(g, Tensor):
                raise GradientError(f"{name}.backward returned a {type(g).__name__} for input {i}, expected a Tensor")
            if g.shape != x.shape:
                if not _expands_to(x.shape, g.shape):
                    raise ShapeError(f"{name}.backward returned a gradient of shape {g.shape} for input {i} of shape {x.shape}")
                g = g.sum_to_shape(x.shape)
            if need:
                pairs.append((x, g if g.dtype == x.dtype else g.cast(x.dtype)))
        return pairs


def _expands_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to exactly ``target``."""
    try:
        return shape_broadcast(shape, target) == target
    except ShapeError:
        return False


class DelayedError(Function):
    """Identity whose backward raises: the history a ``once_differentiable`` gradient carries under create_graph."""

    @staticmethod
    def forward(ctx: Context, x: Tensor) -> Tensor:
        return x

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> Tensor:
        raise GradientError(TWICE_MESSAGE)


def _poisoned(value: Any) -> Any:
    """A float tensor as a fresh tensor whose backward raises (anything else unchanged)."""
    if not isinstance(value, Tensor) or not value.is_floating_point():
        return value
    return DelayedError.apply(value.detach().requires_grad_(True))


def once_differentiable(fn: _Backward) -> _Backward:
    """Decorate a custom Function's ``backward``: it runs with grad mode off, and under ``create_graph=True`` the
    gradients it returns raise "trying to differentiate twice ..." (a GradientError) when differentiated again."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not is_grad_enabled() or not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        if isinstance(outputs, tuple):
            return tuple(_poisoned(g) for g in outputs)
        return _poisoned(outputs)

    return wrapper  # type: ignore[return-value]
