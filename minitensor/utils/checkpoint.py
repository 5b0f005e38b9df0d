"""``torch.utils.checkpoint`` for minitensor: activation checkpointing, memory traded for a second forward.

``checkpoint(function, *args)`` returns what ``function(*args)`` returns but keeps none of the intermediate results
inside the call for the backward pass: the backward pass runs the call again (grad mode on; with
``preserve_rng_state``, from the random state the first run started from, so dropout draws the same masks) and
backpropagates through that recomputation. The activations alive between forward and backward fall from all of them
to the checkpointed calls' inputs and outputs; while one call is recomputed, its own intermediates are alive too.

The outputs of a checkpointed call hang off one node (:class:`CheckpointRecompute`) through one small node each
(:class:`CheckpointOutput`, whose gradient names its output), so the recomputation runs once per backward pass with
every output's gradient. Two variants, as torch's:

* ``use_reentrant=True`` (what torch does when ``use_reentrant`` is not passed, with a warning): the call runs under
  no_grad, and the node's inputs are the positional tensor arguments that require grad. Its backward recomputes on
  detached copies of them and runs a nested backward pass, which adds into ``.grad`` of the leaves the function
  reads itself (module parameters) and hands the arguments' gradients on. No keyword arguments.
* ``use_reentrant=False`` (recommended): the call records its graph, which is then cut: the node's inputs are the
  tensors from outside the call that the graph reads (arguments, keyword arguments and tensors the function
  captures, such as parameters), and the rest of the graph, with every intermediate its nodes saved, is dropped
  when the call returns. The backward recomputes with those tensors standing in as leaves and hands their gradients
  to the surrounding pass, so ``autograd.grad`` works and gradient hooks run once.

Differences from torch: no double backward through a checkpoint (``create_graph=True`` raises HigherOrderGradError);
the non-reentrant variant holds the call's intermediates until the call returns (torch's saved-tensor hooks drop them
as they are made), and it does not support in-place writes inside the call to tensors from outside it; the
reentrant variant under ``autograd.grad`` also adds into the ``.grad`` of the parameters it reads (torch raises).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from ..autodiff import Context, Function, History, enable_grad, is_grad_enabled, next_id, no_grad
from ..backward import run_backward
from ..errors import MinitensorError
from ..generators import get_rng_state, set_rng_state
from ..nn.container import Sequential
from ..pytree import tree_flatten, tree_unflatten
from ..tensor import Tensor

__all__ = [
    "CheckpointError",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
]

DETERMINISM_CHECKS = ("default", "none")
"""The ``determinism_check`` values: compare each output's shape, dtype and device with the recomputation's, or not."""


class CheckpointError(MinitensorError, RuntimeError):
    """The recomputation of a checkpointed call did not give what the first run gave (``torch.utils.checkpoint``'s)."""


def noop_context_fn() -> tuple[AbstractContextManager[Any], AbstractContextManager[Any]]:
    """The default ``context_fn``: no context around the first run nor around the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``inputs`` with each tensor replaced by a detached one that keeps its ``requires_grad``; RuntimeError for a
    non-tuple."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    return tuple(x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x for x in inputs)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn (UserWarning) when no tensor among ``inputs`` requires grad: the reentrant variant then gives no
    gradients."""
    if not any(x.requires_grad for x in inputs if isinstance(x, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


# --- the nodes ---

class _Grads:
    """The gradients reaching a checkpointed call's outputs, by output position; ``+`` merges two, adding where both
    have one (the backward pass sums what reaches a node this way)."""

    __slots__ = ("by_slot",)

    def __init__(self, by_slot: dict[int, Tensor]) -> None:
        self.by_slot = by_slot

    def __add__(self, other: _Grads) -> _Grads:
        merged = dict(self.by_slot)
        for slot, grad in other.by_slot.items():
            merged[slot] = merged[slot] + grad if slot in merged else grad
        return _Grads(merged)


class CheckpointOutput(Function):
    """Output ``ctx.slot`` of a checkpointed call: hands its gradient to the call's node, tagged with its position."""

    backward_name = "CheckpointFunctionBackward"

    @classmethod
    def chain_rule(cls, ctx: Context, inputs: tuple[Any, ...], grad: Any) -> list[tuple[Any, Any]]:
        return [(inputs[0], _Grads({ctx.slot: grad}))]  # type: ignore[attr-defined]


class CheckpointRecompute(Function):
    """A checkpointed call: its backward recomputes the call (``ctx.call``) and backpropagates the outputs'
    gradients through the recomputation to the node's inputs."""

    backward_name = "CheckpointRecomputeBackward"

    @classmethod
    def chain_rule(cls, ctx: Context, inputs: tuple[Any, ...], grad: Any) -> list[tuple[Any, Any]]:
        call: _Call = ctx.call  # type: ignore[attr-defined]
        return call.reentrant_grads(grad) if call.reentrant else call.grads(inputs, grad)


class _Hub:
    """The variable a checkpointed call's outputs hang off; it holds no data, only the call's node."""

    _requires_grad = requires_grad = True

    def __init__(self, history: History) -> None:
        self.history: History | None = history
        self.unique_id = next_id()


# --- one checkpointed call ---

Metadata = tuple[tuple[int, ...], Any, Any]


def _metadata(value: Any) -> Metadata | None:
    """What the determinism check compares: a tensor's shape, dtype and device."""
    return (value.shape, value.dtype, value.device) if isinstance(value, Tensor) else None


@contextlib.contextmanager
def _rng_at(state: Tensor | None) -> Iterator[None]:
    """Draw from ``state`` inside the block (None: from wherever the shared generator is), and put the shared
    generator back where it was on leaving."""
    if state is None:
        yield
        return
    outer = get_rng_state()
    set_rng_state(state)
    try:
        yield
    finally:
        set_rng_state(outer)


@contextlib.contextmanager
def _as_leaves(variables: list[Tensor]) -> Iterator[None]:
    """Within the block each of ``variables`` is a leaf without gradient hooks (a recomputation's graph stops at it
    and runs none of its hooks: the surrounding pass does); on leaving it has its history and hooks back."""
    saved = [(v, v.history, v.__dict__.get("_grad_hooks"), "_grad_hooks" in v.__dict__) for v in variables]
    try:
        for v, _, _, _ in saved:
            v.history, v._grad_hooks = None, None
        yield
    finally:
        for v, history, hooks, had_hooks in saved:
            v.history = history
            if had_hooks:
                v._grad_hooks = hooks
            else:
                del v._grad_hooks


@dataclass
class _Call:
    """What the backward pass needs to run a checkpointed call again."""

    function: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    reentrant: bool
    rng_state: Tensor | None
    recompute_context: AbstractContextManager[Any] = field(default_factory=contextlib.nullcontext)
    check: bool = False
    metadata: dict[int, Metadata | None] = field(default_factory=dict)

    def rerun(self, args: tuple[Any, ...]) -> list[Any]:
        """The flattened outputs of the call run again on ``args`` with grad mode on, from the first run's random
        state; CheckpointError if the determinism check finds an output that differs in shape, dtype or device."""
        with _rng_at(self.rng_state), enable_grad(), self.recompute_context:
            leaves = tree_flatten(self.function(*args, **self.kwargs))[0]
        for slot, expected in self.metadata.items() if self.check else ():
            found = _metadata(leaves[slot]) if slot < len(leaves) else None
            if found != expected:
                raise CheckpointError(
                    f"torch.utils.checkpoint: the recomputation of a checkpointed call gave output {slot} with (shape, "
                    f"dtype, device) {found}, the first run {expected}; the function must build the same tensors each "
                    "time (pass determinism_check='none' to skip this check)")
        return leaves

    def _roots(self, leaves: list[Any], grads: _Grads) -> tuple[list[Tensor], list[Tensor]]:
        """The recomputed outputs that got a gradient and require grad, and those gradients."""
        pairs = [(leaves[slot], g) for slot, g in grads.by_slot.items()
                 if isinstance(leaves[slot], Tensor) and leaves[slot].requires_grad]
        return [r for r, _ in pairs], [g for _, g in pairs]

    def grads(self, inputs: tuple[Any, ...], grads: _Grads) -> list[tuple[Any, Any]]:
        """Non-reentrant: (input, its gradient) for the tensors from outside the call, by a backward pass through
        the recomputation that stops at them."""
        variables = list(inputs)
        with _as_leaves(variables):
            roots, root_grads = self._roots(self.rerun(self.args), grads)
            found = run_backward(roots, root_grads, retain_graph=False, targets=variables) if roots else {}
        return [(v, found[v.unique_id]) for v in variables if v.unique_id in found]

    def reentrant_grads(self, grads: _Grads) -> list[tuple[Any, Any]]:
        """Reentrant: the positional arguments' gradients, by a nested backward pass through the recomputation on
        detached copies of them (which also adds into ``.grad`` of the leaves the function reads itself)."""
        detached = detach_variable(self.args)
        roots, root_grads = self._roots(self.rerun(detached), grads)
        if not roots:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        run_backward(roots, root_grads, retain_graph=False)
        return [(a, d.grad) for a, d in zip(self.args, detached)
                if isinstance(a, Tensor) and a.requires_grad and d.grad is not None]


def _attach(result: Any, call: _Call, inputs: list[Tensor], input_histories: list[History | None], start: int) -> Any:
    """``result`` with its outputs hung off one :class:`CheckpointRecompute` node reading ``inputs``: for the
    reentrant variant every float tensor (one from before the call, ``start`` being the first id made in it, as an
    alias), for the other the tensors the call made that carry history."""
    leaves, spec = tree_flatten(result)
    ctx = Context((True,) * len(inputs))
    ctx.call = call  # type: ignore[attr-defined]
    ctx.save_for_backward(*[a for a in (*call.args, *call.kwargs.values(), *inputs) if isinstance(a, Tensor)])
    hub = _Hub(History(CheckpointRecompute, ctx, tuple(inputs), tuple(input_histories)))
    made = {id(leaf) for leaf in leaves if isinstance(leaf, Tensor) and leaf.unique_id >= start}
    slots: dict[int, int] = {}  # id of each output to attach -> its first position
    for slot, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor) and (leaf.is_floating_point() if call.reentrant else id(leaf) in made and leaf.history is not None):
            if call.reentrant and id(leaf) not in made:
                leaf = leaves[slot] = leaf._alias(leaf._data)  # never give a tensor from outside a new history
            slots.setdefault(id(leaf), slot)
    for slot in slots.values():
        leaf = leaves[slot]
        if leaf._base is not None and leaf._base.unique_id >= start and id(leaf._base) not in slots:
            leaf._base = None  # a tensor of the call's that only this output views would keep the cut graph alive
        out_ctx = Context((True,))
        out_ctx.slot = slot  # type: ignore[attr-defined]
        leaf.history, leaf._requires_grad = History(CheckpointOutput, out_ctx, (hub,), (hub.history,)), True
        call.metadata[slot] = _metadata(leaf)
    return tree_unflatten(leaves, spec)


def _recorded_graph(outputs: list[Tensor], start: int) -> tuple[list[Tensor], list[History | None], list[History]]:
    """The graph a call recorded behind ``outputs``: the tensors from outside the call (made before id ``start``, or
    leaves that require grad) that it reads, each with the history it had when read, and the call's own nodes."""
    found: dict[int, tuple[Tensor, History | None]] = {}
    inside: dict[int, History] = {}
    stack = [out.history for out in outputs if out.history is not None]
    while stack:
        history = stack.pop()
        if id(history) in inside:
            continue
        inside[id(history)] = history
        for i, value in enumerate(history.inputs):
            if not isinstance(value, (Tensor, _Hub)):  # (a hub: a checkpoint nested in the call)
                continue
            parent = history.input_history(i)
            if parent is not None and value.unique_id >= start:
                stack.append(parent)
            elif isinstance(value, Tensor) and (parent is not None or value._requires_grad):
                found.setdefault(id(value), (value, parent))
    pairs = list(found.values())
    return [v for v, _ in pairs], [h for _, h in pairs], list(inside.values())


# --- the public functions ---

def _warn_use_reentrant(caller: str) -> None:
    warnings.warn(
        f"{caller}: the use_reentrant parameter should be passed explicitly (torch raises an exception for a missing "
        "one from version 2.9 on); use_reentrant=False is recommended, use_reentrant=True keeps the current default",
        stacklevel=3)


def _checkpoint_reentrant(function: Callable[..., Any], args: tuple[Any, ...], preserve_rng_state: bool) -> Any:
    """The reentrant variant: run under no_grad; the outputs hang off a node reading the positional tensors that
    require grad."""
    check_backward_validity(args)
    rng_state = get_rng_state() if preserve_rng_state else None
    start = next_id()
    with no_grad():
        result = function(*args)
    inputs = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
    if not (inputs and is_grad_enabled()):
        return result
    call = _Call(function, args, {}, reentrant=True, rng_state=rng_state)
    return _attach(result, call, inputs, [a.history for a in inputs], start)


def _checkpoint_recorded(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                         preserve_rng_state: bool, context_fn: Callable[[], Any], check: bool) -> Any:
    """The non-reentrant variant: run recording the graph, then cut it (the outputs hang off a node reading the
    tensors from outside the call the graph reads)."""
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():
        return function(*args, **kwargs)
    rng_state = get_rng_state() if preserve_rng_state else None
    start = next_id()
    with forward_context:
        result = function(*args, **kwargs)
    outputs = [leaf for leaf in tree_flatten(result)[0]
               if isinstance(leaf, Tensor) and leaf.history is not None and leaf.unique_id >= start]
    if not outputs:
        return result
    inputs, input_histories, inside = _recorded_graph(outputs, start)
    call = _Call(function, args, kwargs, reentrant=False, rng_state=rng_state, recompute_context=recompute_context,
                 check=check)
    result = _attach(result, call, inputs, input_histories, start)
    for history in inside:  # drop what the call's nodes saved now (an op that saves its output makes a cycle)
        history.free()
    return result


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[AbstractContextManager[Any], AbstractContextManager[Any]]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)``, keeping none of the call's intermediate results: the backward pass runs the
    call again (with the random state it started from when ``preserve_rng_state``) and backpropagates through that.

    ``use_reentrant`` picks the variant (see the module docstring; not passed: a warning, and True as torch);
    ``context_fn`` returns the two context managers to run the first call and the recomputation in (non-reentrant
    only); ``determinism_check="default"`` raises CheckpointError when a recomputed output differs in shape, dtype or
    device (``"none"``: no check); ``debug`` and ``early_stop`` are accepted (the recomputation always runs the
    whole call, and errors say what differs without an operator trace)."""
    if use_reentrant is None:
        _warn_use_reentrant("torch.utils.checkpoint")
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return _checkpoint_reentrant(function, args, preserve_rng_state)
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(DETERMINISM_CHECKS)}, but got {determinism_check}")
    return _checkpoint_recorded(function, args, kwargs, preserve_rng_state, context_fn, determinism_check == "default")


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,  # noqa: A002
                          **kwargs: Any) -> Any:
    """Run ``functions`` (an ``nn.Sequential`` or a list of modules or functions) in order on ``input``, in
    ``segments`` chunks of ``len(functions) // segments``: every chunk but the last under :func:`checkpoint` (which
    keeps only the chunk's input), the last (with what is left over) plainly. ``preserve_rng_state`` is the only
    keyword argument."""
    if use_reentrant is None:
        _warn_use_reentrant("torch.utils.checkpoint.checkpoint_sequential")
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for begin in range(0, size * (segments - 1), size):
        end = begin + size - 1
        input = checkpoint(_run_chunk(functions, begin, end), input, use_reentrant=use_reentrant,  # noqa: A001
                           preserve_rng_state=preserve)
    return _run_chunk(functions, end + 1, len(functions) - 1)(input)


def _run_chunk(functions: Any, first: int, last: int) -> Callable[[Any], Any]:
    """The function running ``functions[first..last]`` (inclusive) in order."""
    def run(value: Any) -> Any:
        for i in range(first, last + 1):
            value = functions[i](value)
        return value

    return run
