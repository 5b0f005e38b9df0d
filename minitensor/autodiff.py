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

from .autodiff_nodes import AccumulateGrad, Node, RemovableHandle, add_hook, new_hook_dict, node_of  # noqa: F401 - re-exported
from .errors import GradientError, HigherOrderGradError

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


def _key(var: Any, history: History | None) -> int:
    """Graph-node key: the History for a result (so a value rebased by an in-place op keeps its old node), the
    variable for a leaf."""
    return id(history) if history is not None else -1 - var.unique_id


_PLAIN = frozenset({int, float, bool, str, tuple, type(None)})
"""Types of Function arguments that are never variables (dims, flags, shapes)."""


def _requires_grad(value: Any) -> bool:
    """A Tensor's flag (its attribute, not the property), else ``requires_grad`` if the value has one."""
    flag = getattr(value, "_requires_grad", None)
    return bool(getattr(value, "requires_grad", False)) if flag is None else flag


def topological_sort(*roots: Variable) -> list[tuple[Variable, History | None]]:
    """Non-leaf-first order of the graph behind ``roots`` (every node before its inputs), without recursion.

    A node is (variable, the History it had when it was used): an in-place op that later rebased the variable does
    not change the graph of results computed before it. Leaves are the variables without History that require grad.
    """
    order: list[tuple[Variable, History | None]] = []
    visited: set[int] = set()
    seen, emit = visited.add, order.append
    stack: list[tuple[Variable, History | None, bool]] = [(root, root.history, False) for root in roots]
    pop, push = stack.pop, stack.append
    while stack:
        var, history, expanded = pop()
        if expanded:
            emit((var, history))
            continue
        if history is None:  # a leaf has no inputs: it is finished as soon as it is reached
            key = -1 - var.unique_id  # _key, inlined (it runs per edge)
            if key not in visited:
                seen(key)
                emit((var, None))
            continue
        key = id(history)
        if key in visited:
            continue
        seen(key)
        push((var, history, True))
        inputs, input_histories = history.inputs, history.input_histories
        if len(input_histories) != len(inputs):
            input_histories = tuple([history.input_history(i) for i in range(len(inputs))])
        for parent, parent_history in zip(inputs, input_histories):
            if parent_history is not None:
                if id(parent_history) not in visited:
                    push((parent, parent_history, False))
            elif type(parent) not in _PLAIN and _requires_grad(parent) and -1 - parent.unique_id not in visited:
                push((parent, None, False))
    order.reverse()
    return order


def backpropagate(root: Variable, grad: Any, retain_graph: bool = True) -> None:
    """Push ``grad`` (d out / d root) back through the graph; leaves accumulate into ``.grad``."""
    run_backward([root], [grad], retain_graph)


def _check_graph(order: list[tuple[Variable, History | None]]) -> None:
    """GradientError if the graph was freed or a value a node saved was changed in place since."""
    for _, history in order:
        if history is None:
            continue
        ctx = history.ctx
        if ctx is None:
            raise GradientError(FREED_GRAPH_MESSAGE)
        if not ctx.saved_versions:  # saved nothing (or nothing yet): nothing can have changed
            continue
        changed = history.modified_input()
        if changed is not None:
            assert history.last_fn is not None
            raise GradientError(
                f"a tensor of shape {getattr(changed, 'shape', ())} that {history.last_fn.__name__} needs for its "
                f"gradient was modified by an in-place operation after it was used (its version is "
                f"{getattr(changed, '_version', 0)}; clone() it before changing it)"
            )


def _run_hooks(var: Any, g: Any) -> Any:
    """``var``'s tensor hooks in registration order; a hook's non-None return replaces the gradient."""
    for hook in list(var._grad_hooks.values()):
        result = hook(g)
        if result is not None:
            g = result
    return g


def run_backward(
    roots: Iterable[Variable],
    grads: Iterable[Any],
    retain_graph: bool,
    targets: Iterable[Variable] | None = None,
    create_graph: bool = False,
) -> dict[int, Any]:
    """Backpropagate ``grads`` (d out / d root, one per root) through the graph behind ``roots``.

    Without ``targets``, leaves accumulate into ``.grad`` and an empty dict comes back; with them, no ``.grad``
    changes and the result maps each target's ``unique_id`` to its total gradient (targets that get none are
    absent). Unless ``retain_graph``, every node passed frees its saved values and inputs. With ``create_graph``
    the backward pass runs with grad mode on, so the gradients have history (second derivatives); every Function
    on the way must then have a differentiable backward (``Function.higher_order``), else HigherOrderGradError.
    Tensor hooks (``register_hook``) run on each variable's total gradient; ``retain_grad()`` non-leaves keep it.
    """
    roots = list(roots)
    pending: dict[int, Any] = {}
    for root, g in zip(roots, grads):
        key = _key(root, root.history)
        pending[key] = g if key not in pending else pending[key] + g
    order = topological_sort(*roots)
    _check_graph(order)
    wanted = None if targets is None else {_key(var, var.history): var.unique_id for var in targets}
    found: dict[int, Any] = {}
    pop = pending.pop
    # Pending keys whose gradient buffer autodiff allocated itself (its own accumulation sum, or a backward_into
    # buffer) and that sit in no other slot: later contributions are added into it in place. A popped gradient goes
    # to hooks, .grad or a backward that may hand the same object to several parents, so popping drops ownership.
    owned: set[int] = set()
    drop = owned.discard
    in_place = not create_graph
    with enable_grad() if create_graph else no_grad():
        for var, history in order:
            if history is None:  # a leaf: hooks, then into .grad (or the result)
                key = -1 - var.unique_id
                g = pop(key, None)
                if g is None:
                    continue
                drop(key)
                if var.history is None and getattr(var, "_grad_hooks", None):
                    g = _run_hooks(var, g)
                if wanted is None:
                    var.accumulate_grad(g)
                elif key in wanted:
                    found[wanted[key]] = g
                continue
            key = id(history)
            g = pop(key, None)
            if g is None:
                continue
            drop(key)
            if history is var.history:
                if getattr(var, "_grad_hooks", None):
                    g = _run_hooks(var, g)
                if wanted is None and getattr(var, "_retains_grad", False):
                    var._retain(g)  # type: ignore[attr-defined]
            if wanted is not None and key in wanted:
                found[wanted[key]] = g
            fn, ctx = history.last_fn, history.ctx
            assert fn is not None and ctx is not None
            if create_graph and not fn.higher_order:
                raise HigherOrderGradError(
                    f"create_graph=True: the backward of {fn.__name__} is not differentiable, so second derivatives "
                    "through it are not supported"
                )
            inputs, input_histories = history.inputs, history.input_histories
            single = len(inputs) == 1 and len(input_histories) == 1
            if in_place and fn.backward_into is not None and ctx.needs_input_grad[0]:
                parent = inputs[0]
                parent_history = input_histories[0] if input_histories else history.input_history(0)
                pkey = id(parent_history) if parent_history is not None else -1 - parent.unique_id
                buf = pending.get(pkey)
                if (buf is None or pkey in owned) and _fits(buf, g, parent):
                    result = fn.backward_into(ctx, g, buf)
                    if result is not None:
                        pending[pkey] = result
                        owned.add(pkey)
                        if not retain_graph:
                            history.free()
                        continue
            for parent, parent_grad in fn.chain_rule(ctx, inputs, g):
                parent_history = input_histories[0] if single else _input_history(history, parent)
                pkey = id(parent_history) if parent_history is not None else -1 - parent.unique_id
                if pkey not in pending:
                    pending[pkey] = parent_grad
                elif pkey in owned and _add_into(pending[pkey], parent_grad):
                    pass
                else:
                    pending[pkey] = pending[pkey] + parent_grad
                    if in_place and hasattr(pending[pkey], "_data"):
                        owned.add(pkey)
            if not retain_graph:
                history.free()
    return found


def _fits(buf: Any, grad: Any, parent: Any) -> bool:
    """Whether a gradient for ``parent`` can go into ``buf`` (None: a new buffer) in place: ``grad`` (the node's
    incoming gradient) has ``parent``'s dtype, and ``buf``, if any, has ``parent``'s shape and dtype and ``grad``'s
    backend."""
    data, pdata = getattr(grad, "_data", None), getattr(parent, "_data", None)
    if data is None or pdata is None or data.dtype != pdata.dtype:
        return False
    if buf is None:
        return True
    bdata = buf._data
    return bdata.shape == pdata.shape and bdata.dtype == pdata.dtype and buf.backend is grad.backend  # type: ignore[no-any-return]


def _add_into(buf: Any, grad: Any) -> bool:
    """``buf += grad`` in place (one kernel call, the same bits as ``buf + grad``) when both are tensors of the same
    shape, dtype and backend; False (nothing done) otherwise."""
    bdata, data = buf._data, getattr(grad, "_data", None)
    if data is None or data.shape != bdata.shape or data.dtype != bdata.dtype or grad.backend is not buf.backend:
        return False
    buf.backend.zip("add", bdata, data, bdata)
    return True


def _input_history(history: History, parent: Any) -> History | None:
    """The History ``parent`` had when ``history``'s op used it."""
    inputs, input_histories = history.inputs, history.input_histories
    for i, value in enumerate(inputs):
        if value is parent:
            return input_histories[i] if i < len(input_histories) else history.input_history(i)
    return getattr(parent, "history", None)
