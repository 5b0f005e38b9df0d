"""The backward pass shared by Scalar and Tensor: the graph behind some roots in reverse topological order
(iteratively: no recursion, linear time), gradients summed per node and handed to each Function's backward, leaves
accumulating into ``.grad`` (or the results :func:`minitensor.autograd.grad` asks for).

Gradient contributions to one node are summed as they arrive. A sum autodiff made itself (or a buffer a Function's
``backward_into`` made) is owned by its pending slot until the node is reached, so later contributions are added
into it in place; a gradient handed over by a backward (which may give the same object to several inputs) never is.
Unless told to retain it, the pass frees each node's saved values and inputs as it goes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .autodiff import History, Variable, enable_grad, no_grad
from .errors import GradientError, HigherOrderGradError
from .flags import check_gradients, nan_check_enabled

FREED_GRAPH_MESSAGE = (
    "trying to backward through the graph a second time, but the graph was freed by a previous backward(); "
    "pass retain_graph=True to the first call"
)


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
    needed = None if wanted is None else _leading_to(order, wanted)  # autograd.grad runs only these nodes, as torch
    found: dict[int, Any] = {}
    pop = pending.pop
    # Pending keys whose gradient buffer autodiff allocated itself (its own accumulation sum, or a backward_into
    # buffer) and that sit in no other slot: later contributions are added into it in place. A popped gradient goes
    # to hooks, .grad or a backward that may hand the same object to several parents, so popping drops ownership.
    owned: set[int] = set()
    drop = owned.discard
    check_nan = nan_check_enabled()  # anomaly detection: each node's gradients are checked (flags.py)
    in_place = not create_graph and not check_nan
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
                    if getattr(var, "_post_accumulate_grad_hooks", None):  # register_post_accumulate_grad_hook
                        var._run_post_accumulate_grad_hooks()  # type: ignore[attr-defined]
                elif key in wanted:
                    found[wanted[key]] = g
                continue
            key = id(history)
            g = pop(key, None)
            if g is None or (needed is not None and key not in needed):
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
            pairs = fn.chain_rule(ctx, inputs, g)
            if check_nan:
                check_gradients(fn.__name__, inputs, pairs)
            for parent, parent_grad in pairs:
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


def _leading_to(order: list[tuple[Variable, History | None]], wanted: dict[int, int]) -> set[int]:
    """The keys of the nodes of ``order`` (non-leaf first) from which a node in ``wanted`` can be reached: the
    wanted ones and every node with a needed input. The others' backwards would compute gradients nobody asked for
    (and, under create_graph, could refuse to without need)."""
    needed: set[int] = set()
    for var, history in reversed(order):  # inputs before the nodes that use them
        if history is None:
            key = -1 - var.unique_id
            if key in wanted:
                needed.add(key)
            continue
        key = id(history)
        if key in wanted:
            needed.add(key)
            continue
        inputs, input_histories = history.inputs, history.input_histories
        for i, parent in enumerate(inputs):
            parent_history = input_histories[i] if i < len(input_histories) else history.input_history(i)
            if parent_history is not None:
                parent_key = id(parent_history)
            elif type(parent) not in _PLAIN and _requires_grad(parent):
                parent_key = -1 - parent.unique_id
            else:
                continue
            if parent_key in needed:
                needed.add(key)
                break
    return needed


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
