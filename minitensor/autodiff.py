"""Reverse-mode autodiff shared by Scalar and Tensor.

A value produced by a :class:`Function` remembers its history: the Function class, a :class:`Context`
with whatever forward saved, and its inputs. :func:`backpropagate` walks that graph once in reverse
topological order (iteratively: no recursion, linear time) and accumulates gradients into leaves.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

_grad_enabled = True
_ids = itertools.count()


def next_id() -> int:
    """A process-unique id for a new variable."""
    return next(_ids)


def is_grad_enabled() -> bool:
    return _grad_enabled


@contextlib.contextmanager
def no_grad() -> Iterator[None]:
    """Within this block, operations record no history (like ``torch.no_grad``)."""
    global _grad_enabled
    previous = _grad_enabled
    _grad_enabled = False
    try:
        yield
    finally:
        _grad_enabled = previous


@dataclass
class Context:
    """What forward hands to backward."""

    needs_input_grad: tuple[bool, ...] = ()
    saved_values: tuple[Any, ...] = ()

    def save_for_backward(self, *values: Any) -> None:
        self.saved_values = values


@dataclass
class History:
    """How a variable was made: ``last_fn.forward(ctx, *inputs)``."""

    last_fn: type[Function] | None = None
    ctx: Context | None = None
    inputs: tuple[Any, ...] = field(default_factory=tuple)


class Variable(Protocol):
    """What backpropagate needs from a Scalar or Tensor."""

    unique_id: int
    history: History | None

    def is_leaf(self) -> bool: ...

    def accumulate_grad(self, grad: Any) -> None: ...


class Function:
    """An op with ``forward(ctx, *inputs)`` and ``backward(ctx, grad) -> one grad per input``.

    Subclasses of a value type override :meth:`_unwrap`/:meth:`_wrap` via a mixin
    (see ScalarFunction, TensorFunction); ``apply`` is shared.
    """

    @staticmethod
    def forward(ctx: Context, *inputs: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, grad: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def _prepare(cls, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        """Convert raw arguments (e.g. Python floats) to variables."""
        return inputs

    @classmethod
    def _raw_forward(cls, ctx: Context, inputs: tuple[Any, ...]) -> Any:
        return cls.forward(ctx, *inputs)

    @classmethod
    def _finish(cls, raw: Any, history: History | None, inputs: tuple[Any, ...]) -> Any:
        """Wrap the forward result with its history."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *args: Any) -> Any:
        inputs = cls._prepare(args)
        if _grad_enabled:
            needs = tuple([getattr(v, "requires_grad", False) for v in inputs])
            record = any(needs)
        else:
            needs, record = (False,) * len(inputs), False
        ctx = Context(needs)
        raw = cls._raw_forward(ctx, inputs)
        return cls._finish(raw, History(cls, ctx, inputs) if record else None, inputs)

    @classmethod
    def chain_rule(cls, ctx: Context, inputs: tuple[Any, ...], grad: Any) -> list[tuple[Any, Any]]:
        """(input, its gradient) for every input that needs one."""
        grads = cls.backward(ctx, grad)
        if not isinstance(grads, tuple):
            grads = (grads,)
        return [(v, g) for v, g, need in zip(inputs, grads, ctx.needs_input_grad) if need and g is not None]


def topological_sort(root: Variable) -> list[Variable]:
    """Non-leaf-first order of the graph behind ``root`` (root first), without recursion."""
    order: list[Variable] = []
    visited: set[int] = set()
    stack: list[tuple[Variable, bool]] = [(root, False)]
    while stack:
        var, expanded = stack.pop()
        if expanded:
            order.append(var)
            continue
        if var.unique_id in visited:
            continue
        visited.add(var.unique_id)
        stack.append((var, True))
        if var.history is not None:
            for parent in var.history.inputs:
                if getattr(parent, "history", None) is not None or getattr(parent, "requires_grad", False):
                    if parent.unique_id not in visited:
                        stack.append((parent, False))
    order.reverse()
    return order


def backpropagate(root: Variable, grad: Any) -> None:
    """Push ``grad`` (d out / d root) back through the graph; leaves accumulate into ``.grad``."""
    grads: dict[int, Any] = {root.unique_id: grad}
    with no_grad():
        for var in topological_sort(root):
            g = grads.pop(var.unique_id, None)
            if g is None:
                continue
            if var.is_leaf():
                var.accumulate_grad(g)
                continue
            history = var.history
            assert history is not None and history.last_fn is not None and history.ctx is not None
            for parent, parent_grad in history.last_fn.chain_rule(history.ctx, history.inputs, g):
                if parent.unique_id in grads:
                    grads[parent.unique_id] = grads[parent.unique_id] + parent_grad
                else:
                    grads[parent.unique_id] = parent_grad
