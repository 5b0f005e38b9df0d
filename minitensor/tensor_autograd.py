"""Autograd methods of Tensor (the ``AutogradMethods`` mixin): ``requires_grad``, hooks, ``retain_grad``,
``backward``, gradient accumulation, ``detach``, ``clone`` and ``.data``.

``backward`` hands the graph to :func:`minitensor.backward.run_backward`, which calls ``accumulate_grad`` on the
leaves (and ``_retain`` on non-leaves that ``retain_grad()``) with gradients summed back by ``sum_to_shape``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import tensor_functions as F
from .autodiff import RemovableHandle, add_hook, is_grad_enabled, new_hook_dict, node_of
from .backward import run_backward
from .errors import DTypeError, GradientError, ShapeError
from .tensor_inplace import is_view_function

if TYPE_CHECKING:
    from .autodiff import History
    from .backends import Backend
    from .tensor import Tensor
    from .tensor_data import TensorData


class AutogradMethods:
    """Autograd state and entry points of Tensor (every Tensor is one)."""

    _grad_hooks: dict[int, Any] | None = None
    _retains_grad = False
    # set by Tensor.__init__ (declared here for the type checker)
    _data: TensorData
    backend: Backend
    history: History | None
    grad: Tensor | None
    _requires_grad: bool
    _counter: list[int] | None

    @property
    def is_leaf(self: Any) -> bool:
        return self.history is None

    @property
    def requires_grad(self: Any) -> bool:
        """Whether ops on this tensor record history. Only a leaf's flag can be set (``torch.Tensor.requires_grad``)."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self: Any, value: bool) -> None:
        if self.history is not None and not value:
            raise GradientError(
                f"you can only change requires_grad flags of leaf tensors (this one, of shape {self.shape}, is the "
                "result of an op); use .detach() to get a tensor that does not require grad"
            )
        self.requires_grad_(bool(value))

    def requires_grad_(self: Any, requires_grad: bool = True) -> Tensor:
        """Start (or stop) recording operations on this tensor; only float tensors can require grad."""
        if requires_grad and self._data.dtype.kind != "f":
            raise GradientError(f"only float tensors can require gradients, got a {self._data.dtype} tensor of shape {self.shape}")
        if not requires_grad and self.history is not None:
            raise GradientError(f"requires_grad_(False) on a non-leaf tensor of shape {self.shape}; use .detach()")
        self._requires_grad = requires_grad
        return self

    @property
    def grad_fn(self: Any) -> Any:
        """The backward node of the op that made this tensor (``<MulBackward0 ...>``, with ``name()`` and
        ``next_functions``); None for a leaf."""
        return None if self.history is None else node_of(self.history)

    def register_hook(self: Any, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` whenever the gradient with respect to this tensor is computed; a non-None return
        replaces it. Hooks run in registration order; the handle's ``remove()`` unregisters it."""
        if not self.requires_grad:
            raise GradientError(f"cannot register a hook on a tensor of shape {self.shape} that does not require grad")
        if self._grad_hooks is None:
            self._grad_hooks = new_hook_dict()
        return add_hook(self._grad_hooks, hook)

    def retain_grad(self: Any) -> None:
        """Keep ``.grad`` for this non-leaf after backward (a no-op for leaves, which always get it)."""
        if not self.requires_grad:
            raise GradientError(f"retain_grad() on a tensor of shape {self.shape} that does not require grad")
        if self.history is not None:
            self._retains_grad = True

    @property
    def retains_grad(self: Any) -> bool:
        """Whether this non-leaf keeps its ``.grad`` (``retain_grad()`` was called)."""
        return self._retains_grad and self.history is not None

    def _retain(self: Any, grad: Tensor) -> None:
        """Store a retained non-leaf's gradient (added to an earlier one, as for leaves)."""
        self.accumulate_grad(grad)

    def accumulate_grad(self: Any, grad: Tensor) -> None:
        """Add ``grad`` into ``.grad`` (summed to this shape, contiguous, of this dtype). Under grad mode
        (``create_graph=True``) the sum is differentiable: ``.grad`` then has history."""
        if is_grad_enabled() and grad.requires_grad:
            grad = grad.sum_to_shape(self.shape).cast(self.dtype)
            if grad.shape != self.shape or not grad._data.is_contiguous():
                grad = grad.expand(*self.shape).contiguous()
            self.grad = grad if self.grad is None else self.grad + grad
            return
        grad = grad.sum_to_shape(self.shape)
        if grad.shape != self.shape or not grad._data.is_contiguous() or grad.dtype != self.dtype:
            grad = grad.expand(*self.shape)._map("id", dtype=self.dtype)
        self.grad = grad if self.grad is None else self.grad._zip("add", grad)

    def backward(self: Any, gradient: Tensor | None = None, retain_graph: bool | None = None, create_graph: bool = False) -> None:
        """Gradients of this tensor with respect to every leaf that requires grad, added into ``.grad``.

        The graph is freed on the way unless ``retain_graph`` (then a second backward adds again). With
        ``create_graph`` the backward pass is itself recorded (``.grad`` has history, for second derivatives) and
        ``retain_graph`` defaults to True, as in PyTorch.
        """
        if not self.requires_grad:
            raise GradientError(f"backward() on a tensor of shape {self.shape} that does not require grad")
        retain = create_graph if retain_graph is None else bool(retain_graph)
        run_backward([self], [self._root_grad(gradient)], retain, create_graph=create_graph)

    def _root_grad(self: Any, gradient: Any) -> Tensor:
        """``gradient`` (d out / d self) checked against this tensor; ones for a one-element tensor when None."""
        if gradient is None:
            if self._data.size != 1:
                raise GradientError(
                    f"backward() without a gradient needs a tensor with one element, got shape {self.shape}; pass gradient="
                )
            return self._view_of(self.backend.from_numpy(np.ones(self.shape, self._data.dtype)))
        if not isinstance(gradient, AutogradMethods):
            gradient = self._lift(gradient)
        if gradient.shape != self.shape:
            raise ShapeError(f"gradient of shape {gradient.shape} does not match tensor of shape {self.shape}")
        return gradient

    def detach(self: Any) -> Tensor:
        """The same data (sharing the storage and its version counter), cut from the graph."""
        out = self._alias(self._data)
        out._base = None  # writes through it are not recorded into this tensor's graph (as in PyTorch)
        return out

    def detach_(self: Any) -> Tensor:
        """Cut this tensor from the graph in place: it becomes a leaf that does not require grad."""
        if self.history is not None and is_view_function(self.history.last_fn):
            raise GradientError(
                f"detach_() on a view (shape {self.shape}) of a tensor that requires grad is not allowed; use detach()"
            )
        self.history = None
        self._requires_grad = False
        return self

    def clone(self: Any, *, memory_format: Any = None) -> Tensor:
        """A contiguous copy with its own storage; gradients flow back to this tensor (``torch.clone``)."""
        return F.Contiguous.apply(self)

    @property
    def data(self: Any) -> Tensor:
        """This tensor's values as a new leaf that does not require grad, sharing the storage (not the version
        counter: writes through ``.data`` are invisible to autograd, as in PyTorch)."""
        return self._view_of(self._data)

    @data.setter
    def data(self: Any, other: Tensor) -> None:
        """Replace the storage, backend, dtype and shape by ``other``'s, keeping this object (and its history)."""
        if not isinstance(other, AutogradMethods):
            raise TypeError(f"assigned data must be a Tensor, got {type(other).__name__}")
        if self.requires_grad and other.dtype.kind != "f":
            raise DTypeError(f"cannot assign {other.dtype} data to a tensor that requires grad (shape {self.shape})")
        self._data, self.backend = other._data, other.backend
        self._counter = None

    def sum_to_shape(self: Any, shape: tuple[int, ...]) -> Tensor:
        """Sum a broadcast gradient back down to ``shape`` (differentiable under grad mode when it has history)."""
        if self.shape == shape:
            return self
        extra = self.dims - len(shape)
        dims = tuple(d for d in range(self.dims) if d < extra or (shape[d - extra] == 1 and self.shape[d] != 1))
        if self.requires_grad and is_grad_enabled():
            return self.sum(dims, keepdim=True).view(*shape) if dims else self.view(*shape)
        out = self
        for dim in dims:
            out = out._reduce("sum", dim)
        return out._view_of(out._data.view(*shape)) if out.dims != len(shape) else out
