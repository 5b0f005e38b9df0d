"""PyTorch's ``torch.autograd`` namespace: ``grad``, ``backward``, custom ``Function`` and the grad-mode switches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..autodiff import (
    Context,
    History,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from ..backward import run_backward
from ..errors import GradientError, ShapeError
from ..tensor import Tensor
from ..tensor_data import shape_broadcast
from ..tensor_functions import TensorFunction

__all__ = [
    "Function",
    "FunctionCtx",
    "backward",
    "enable_grad",
    "grad",
    "inference_mode",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
]

TensorOrTensors = Tensor | Sequence[Tensor]


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _root_grads(outputs: tuple[Tensor, ...], grads: Any) -> list[Tensor]:
    """One checked gradient per output (ones for a one-element output given None)."""
    grads = (None,) * len(outputs) if grads is None else _as_tuple(grads)
    if len(grads) != len(outputs):
        raise GradientError(f"got {len(grads)} gradients for {len(outputs)} outputs")
    for out in outputs:
        if not isinstance(out, Tensor) or not out.requires_grad:
            raise GradientError("every output must be a tensor that requires grad")
    return [out._root_grad(g) for out, g in zip(outputs, grads)]


def grad(
    outputs: TensorOrTensors,
    inputs: TensorOrTensors,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Tensor | None, ...]:
    """d outputs / d inputs as a tuple, one per input (leaves or not); no ``.grad`` changes (``torch.autograd.grad``).

    An input the outputs do not depend on is an error, or None with ``allow_unused``. With ``create_graph`` the
    gradients have history (differentiate them again); ``retain_graph`` defaults to ``create_graph``.
    """
    outs, ins = _as_tuple(outputs), _as_tuple(inputs)
    for x in ins:
        if not isinstance(x, Tensor) or not x.requires_grad:
            raise GradientError("every input must be a tensor that requires grad")
    retain = create_graph if retain_graph is None else bool(retain_graph)
    found = run_backward(outs, _root_grads(outs, grad_outputs), retain, targets=ins, create_graph=create_graph)
    result: list[Tensor | None] = []
    for x in ins:
        g = found.get(x.unique_id)
        if g is None and not allow_unused:
            raise GradientError(f"an input of shape {x.shape} was not used in the graph of the outputs; pass allow_unused=True")
        if g is not None and not g._data.is_contiguous():
            if create_graph:
                g = g.contiguous()
            else:
                with no_grad():
                    g = g.contiguous()
        result.append(g)
    return tuple(result)


def backward(
    tensors: TensorOrTensors, grad_tensors: Any = None, retain_graph: bool | None = None, create_graph: bool = False
) -> None:
    """Sum of ``tensors[i].backward(grad_tensors[i])`` in one pass (``torch.autograd.backward``)."""
    outs = _as_tuple(tensors)
    retain = create_graph if retain_graph is None else bool(retain_graph)
    run_backward(outs, _root_grads(outs, grad_tensors), retain, create_graph=create_graph)


class FunctionCtx(Context):
    """The ``ctx`` of a custom Function: ``save_for_backward``, ``saved_tensors``, ``needs_input_grad``,
    ``mark_non_differentiable`` and any attribute forward sets."""

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Outputs that get no history (e.g. indices)."""
        self.non_differentiable = {id(t) for t in tensors}


class Function(TensorFunction):
    """A custom differentiable op, PyTorch style: subclass with static ``forward(ctx, *args)`` (ordinary tensor ops,
    run without recording) and ``backward(ctx, grad)`` (one gradient or None per forward input), then ``.apply``.
    Under ``create_graph=True`` backward runs with grad mode on: written with tensor ops, it is differentiable."""

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


from . import functional  # noqa: E402, F401 - torch.autograd.functional, built on grad above
