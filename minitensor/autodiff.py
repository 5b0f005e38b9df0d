"""Reverse-mode autodiff shared by Scalar and Tensor: grad mode and the graph.

A value produced by a :class:`Function` remembers its history: the Function class, a :class:`Context`
with whatever forward saved, and its inputs. :mod:`minitensor.backward` walks that graph once in reverse
topological order and accumulates gradients into leaves. Grad mode (whether ops record history) is per thread,
as in PyTorch.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from .autodiff_nodes import AccumulateGrad, Node, RemovableHandle, add_hook, new_hook_dict, node_of  # noqa: F401 - re-exported

_ids = itertools.count()
_F = TypeVar("_F", bound=Callable[..., Any])

def next_id() -> int:
    """A process-unique id for a new variable."""
    return next(_ids)


class _GradState(threading.local):
    """This thread's grad mode (each thread starts with recording on)."""

    def __init__(self) -> None:
        self.enabled = True
        self.inference = 0  # how many inference_mode blocks this thread is inside


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


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside an ``inference_mode`` block."""
    return _state.inference > 0


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

    def __enter__(self) -> None:
        super().__enter__()
        _state.inference += 1

    def __exit__(self, *exc: object) -> None:
        _state.inference -= 1
        super().__exit__(*exc)


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
        # A tensor's version is its storage counter's value (no counter yet: 0); other values have none.
        self.saved_versions = tuple([0 if (c := getattr(v, "_counter", None)) is None else c[0] for v in values])

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

    node: Any = None
    """The cached grad_fn object (autodiff.Node)."""

    def input_history(self, i: int) -> History | None:
        """Input ``i``'s History when this op ran."""
        if i < len(self.input_histories):
            return self.input_histories[i]  # type: ignore[no-any-return]
        return getattr(self.inputs[i], "history", None)

    def modified_input(self) -> Any:
        """A saved value changed in place (its storage's version moved) since this op ran, or None."""
        assert self.ctx is not None
        for value, version in zip(self.ctx.saved_values, self.ctx.saved_versions):
            counter = getattr(value, "_counter", None)
            if (0 if counter is None else counter[0]) != version:
                return value
        return None

    def free(self) -> None:
        """Drop the saved values and the inputs, so they can be garbage-collected."""
        self.ctx = None
        self.inputs = ()
        self.input_histories = ()


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
    (see ScalarFunction, TensorFunction); ``apply`` is shared. ``higher_order`` says that ``backward`` is built from
    differentiable ops, so ``create_graph=True`` may pass through it.
    """

    higher_order = False

    backward_into: Callable[..., Any] | None = None
    """Optional ``backward_into(ctx, grad, into) -> buffer | None``, for a Function whose only differentiable input
    is the first: add that input's gradient into ``into`` (a buffer of the input's shape, dtype and backend that
    autodiff owns: nothing else refers to it) and return it; with ``into=None`` return a new buffer holding that
    gradient (autodiff then owns it); return None to decline (autodiff then calls ``backward``). Used only without
    ``create_graph``. The sums are backward's, term by term in the same order, except that a -0.0 already in ``into``
    outside the written region stays -0.0 (backward's zeros added to it gave +0.0)."""

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
