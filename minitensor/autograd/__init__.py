"""PyTorch's ``torch.autograd`` namespace: ``grad``, ``backward``, custom ``Function`` (``autograd.function``), the
grad-mode switches, and ``gradcheck``/``gradgradcheck`` (finite differences against backward)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..autodiff import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from ..backward import run_backward
from ..errors import GradientError
from ..tensor import Tensor
from .function import Function, FunctionCtx

__all__ = [
    "Function",
    "FunctionCtx",
    "backward",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
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


from . import function, functional  # noqa: E402, F401 - torch.autograd.function/functional, built on grad above
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402 - built on grad above (torch's function, not its module)
