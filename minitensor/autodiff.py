"""Reverse-mode autodiff shared by Scalar and Tensor.

A value produced by a :class:`Function` remembers its history: the Function class, a :class:`Context`
with whatever forward saved, and its inputs. :func:`backpropagate` walks that graph once in reverse
topological order (iteratively: no recursion, linear time) and accumulates gradients into leaves.
Unless told to retain it, a backward pass frees each node's saved values and inputs as it goes.
Grad mode (whether ops record history) is per thread, as in PyTorch.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from .errors import GradientError

_ids = itertools.count()
_F = TypeVar("_F", bound=Callable[..., Any])

FREED_GRAPH_MESSAGE = (
    "trying to backward through the graph a second time, but the graph was freed by a previous backward(); "
    "pass retain_graph=True to the first call"
)


def next_id() -> int:
    """A process-unique id for a new variable."""
    return next(_ids)


class _GradState(threading.local):
    """This thread's grad mode (each thread starts with recording on)."""

    def __init__(self) -> None:
        self.enabled = True


_state = _GradState()
_threads_without_grad = 0  # threads whose mode is off: while 0, Function.apply skips the thread-local read
_mode_lock = threading.Lock()


def _set_grad_mode(enabled: bool) -> None:
    """Set this thread's grad mode, keeping the count of threads without grad."""
    global _threads_without_grad
    if enabled != _state.enabled:
        with _mode_lock:
            _threads_without_grad += -1 if enabled else 1
        _state.enabled = enabled


def is_grad_enabled() -> bool:
    """Whether ops in this thread record history."""
    return _state.enabled


class _GradMode:
    """Context manager and decorator that sets this thread's grad mode to ``enabled`` for a block."""

    enabled = False

    def __new__(cls, func: Callable[..., Any] | None = None) -> Any:
        """``@no_grad`` without parentheses decorates ``func`` directly."""
        self = super().__new__(cls)
        return self(func) if callable(func) else self

    def __init__(self, func: Callable[..., Any] | None = None) -> None:
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        self._previous.append(_state.enabled)
        _set_grad_mode(self.enabled)

    def __exit__(self, *exc: object) -> None:
        _set_grad_mode(self._previous.pop())

    def __call__(self, func: _F) -> _F:
        mode = type(self)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with mode():
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Within this block (or decorated function), this thread's ops record no history (``torch.no_grad``)."""

    enabled = False


class enable_grad(_GradMode):  # noqa: N801
    """Within this block (or decorated function), this thread's ops record history again (``torch.enable_grad``)."""

    enabled = True


class inference_mode(no_grad):  # noqa: N801
    """``torch.inference_mode``: in minitensor the same as no_grad."""

    def __init__(self, mode: Any = True) -> None:
        if not mode:
            raise NotImplementedError("inference_mode(False) is not supported; use enable_grad()")
        super().__init__()


class set_grad_enabled:  # noqa: N801
    """Set this thread's grad mode now; used as a context manager, restore the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        self._previous = _state.enabled
        _set_grad_mode(bool(mode))

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _set_grad_mode(self._previous)


@dataclass
class Context:
    """What forward hands to backward. Extra attributes (``ctx.k = 3``) are allowed."""

    needs_input_grad: tuple[bool, ...] = ()
    saved_values: tuple[Any, ...] = ()
    saved_versions: tuple[int, ...] = ()

    def save_for_backward(self, *values: Any) -> None:
        self.saved_values = values
        self.saved_versions = tuple([getattr(v, "_version", 0) for v in values])

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """What forward saved (PyTorch's name)."""
        return self.saved_values


@dataclass
class History:
    """How a variable was made: ``last_fn.forward(ctx, *inputs)``; ``ctx`` is None once backward freed it."""

    last_fn: type[Function] | None = None
    ctx: Context | None = None
    inputs: tuple[Any, ...] = field(default_factory=tuple)
    input_histories: tuple[Any, ...] = field(default_factory=tuple)
    """Each input's own History when this op ran: an in-place op that rebases an input changes it."""

    def modified_input(self) -> Any:
        """An input or saved value changed in place since this op ran, or None."""
        assert self.ctx is not None
        for value, version in zip(self.ctx.saved_values, self.ctx.saved_versions):
            if getattr(value, "_version", 0) != version:
                return value
        for value, history in zip(self.inputs, self.input_histories):
            if getattr(value, "history", None) is not history:
                return value
        return None

    def free(self) -> None:
        """Drop the saved values and the inputs, so they can be garbage-collected."""
        self.ctx = None
        self.inputs = ()


class Variable(Protocol):
    """What backpropagate needs from a Scalar or Tensor."""

    unique_id: int
    history: History | None

    @property
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
        if _threads_without_grad == 0 or _state.enabled:
            needs = tuple([getattr(v, "requires_grad", False) for v in inputs])
            record = any(needs)
        else:
            needs, record = (False,) * len(inputs), False
        ctx = Context(needs)
        raw = cls._raw_forward(ctx, inputs)
        if not record:
            return cls._finish(raw, None, inputs)
        return cls._finish(raw, History(cls, ctx, inputs, tuple([getattr(v, "history", None) for v in inputs])), inputs)

    @classmethod
    def chain_rule(cls, ctx: Context, inputs: tuple[Any, ...], grad: Any) -> list[tuple[Any, Any]]:
        """(input, its gradient) for every input that needs one."""
        grads = cls.backward(ctx, grad)
        if not isinstance(grads, tuple):
            grads = (grads,)
        return [(v, g) for v, g, need in zip(inputs, grads, ctx.needs_input_grad) if need and g is not None]


def topological_sort(*roots: Variable) -> list[Variable]:
    """Non-leaf-first order of the graph behind ``roots`` (every var before its inputs), without recursion."""
    order: list[Variable] = []
    visited: set[int] = set()
    stack: list[tuple[Variable, bool]] = [(root, False) for root in roots]
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


def backpropagate(root: Variable, grad: Any, retain_graph: bool = True) -> None:
    """Push ``grad`` (d out / d root) back through the graph; leaves accumulate into ``.grad``."""
    run_backward([root], [grad], retain_graph)


def run_backward(
    roots: Iterable[Variable], grads: Iterable[Any], retain_graph: bool, targets: Iterable[Variable] | None = None
) -> dict[int, Any]:
    """Backpropagate ``grads`` (d out / d root, one per root) through the graph behind ``roots``.

    Without ``targets``, leaves accumulate into ``.grad`` and an empty dict comes back; with them, no ``.grad``
    changes and the result maps each target's ``unique_id`` to its total gradient (targets that get none are
    absent). Unless ``retain_graph``, every node passed frees its saved values and inputs.
    """
    roots = list(roots)
    pending: dict[int, Any] = {}
    for root, g in zip(roots, grads):
        pending[root.unique_id] = g if root.unique_id not in pending else pending[root.unique_id] + g
    order = topological_sort(*roots)
    if any(var.history is not None and var.history.ctx is None for var in order):
        raise GradientError(FREED_GRAPH_MESSAGE)
    for var in order:
        changed = var.history.modified_input() if var.history is not None else None
        if changed is not None:
            assert var.history is not None and var.history.last_fn is not None
            raise GradientError(
                f"a tensor of shape {getattr(changed, 'shape', ())} that {var.history.last_fn.__name__} needs for its "
                "gradient was modified by an in-place operation after it was used; clone() it before changing it"
            )
    wanted = None if targets is None else {var.unique_id for var in targets}
    found: dict[int, Any] = {}
    with no_grad():
        for var in order:
            g = pending.pop(var.unique_id, None)
            if g is None:
                continue
            if wanted is not None and var.unique_id in wanted:
                found[var.unique_id] = g
            if var.is_leaf:
                if wanted is None:
                    var.accumulate_grad(g)
                continue
            history = var.history
            assert history is not None and history.last_fn is not None and history.ctx is not None
            for parent, parent_grad in history.last_fn.chain_rule(history.ctx, history.inputs, g):
                if parent.unique_id in pending:
                    pending[parent.unique_id] = pending[parent.unique_id] + parent_grad
                else:
                    pending[parent.unique_id] = parent_grad
            if not retain_graph:
                history.free()
    return found
