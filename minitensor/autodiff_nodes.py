"""The graph's user-facing objects: ``grad_fn`` nodes (:class:`Node`, :class:`AccumulateGrad`) and tensor-hook
registries with their removable handles. :mod:`minitensor.autodiff` re-exports all of them."""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .autodiff import History


class RemovableHandle:
    """What ``register_hook`` and the module hook registrations return: ``remove()`` (or leaving a ``with`` block)
    unregisters the hook from ``hooks`` and drops its id from ``extra`` (the ids a registry flags, such as the
    module pre-hooks that take kwargs) (``torch.utils.hooks.RemovableHandle``)."""

    _ids = itertools.count()

    def __init__(self, hooks: dict[int, Any], extra: set[int] | None = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks) if _weakrefable(hooks) else (lambda: hooks)
        self.extra = extra if extra is not None else set()
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        hooks = self.hooks_dict_ref()
        if hooks is not None:
            hooks.pop(self.id, None)
        self.extra.discard(self.id)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class _HookDict(dict):  # type: ignore[type-arg]
    """A dict that a handle can refer to weakly."""


def _weakrefable(value: Any) -> bool:
    return isinstance(value, _HookDict)


def new_hook_dict() -> dict[int, Any]:
    """An empty hook registry (handles keep only a weak reference to it)."""
    return _HookDict()


def add_hook(hooks: dict[int, Any], fn: Callable[..., Any]) -> RemovableHandle:
    """Register ``fn`` in ``hooks``; the handle removes it."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class Node:
    """``grad_fn`` of a result: the backward of the Function that made it (``name()``, ``next_functions``)."""

    def __init__(self, history: History) -> None:
        self._history = history

    def name(self) -> str:
        fn = self._history.last_fn
        return getattr(fn, "backward_name", None) or f"{fn.__name__ if fn is not None else 'Unknown'}Backward0"

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """(grad_fn of each input, or an AccumulateGrad for a leaf that requires grad, or None; 0) per input."""
        history = self._history
        out: list[tuple[Any, int]] = []
        for i, value in enumerate(history.inputs):
            parent = history.input_history(i)
            if parent is not None:
                out.append((node_of(parent), 0))
            elif getattr(value, "requires_grad", False):
                out.append((AccumulateGrad(value), 0))
            else:
                out.append((None, 0))
        return tuple(out)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


class AccumulateGrad:
    """The node of a leaf that requires grad: its gradient is added into ``variable.grad``."""

    def __init__(self, variable: Any) -> None:
        self.variable = variable
        self.next_functions: tuple[tuple[Any, int], ...] = ()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"


def node_of(history: History) -> Node:
    """The (cached) grad_fn object of ``history``."""
    node = history.node
    if node is None:
        node = history.node = Node(history)
    return node
