"""PyTorch's ``torch.autograd.functional``: Jacobian products, Jacobians and Hessians of a function of tensors.

Every function takes ``func`` and its ``inputs`` (a Tensor or a tuple of Tensors) and gives results shaped like
PyTorch's: a tuple where ``inputs`` (or ``func``'s output) is a tuple, a single Tensor where it is one.

- ``vjp``: ``v^T J`` by one backward pass; ``vhp``: ``v^T H`` by differentiating the gradient once more.
- ``jvp`` and ``hvp``: ``J v`` and ``H v`` by the double-backward trick: ``g(u) = u^T J`` is linear in a dummy
  cotangent ``u`` (built with ``create_graph=True``), so differentiating ``g(u) . v`` with respect to ``u`` gives ``J v``.
- ``jacobian``: one backward pass per output element; ``hessian``: the Jacobian of the Jacobian.

``strict=True`` raises :class:`~minitensor.errors.GradientError` (a RuntimeError, as PyTorch raises) where a result
would be identically zero because the output does not depend on an input; otherwise such entries are zeros.
Results carry history only with ``create_graph=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autodiff import enable_grad, is_grad_enabled, set_grad_enabled
from ..creation import zeros_like
from ..errors import GradientError
from ..tensor import Tensor
from ..tensor_join import stack
from . import grad as _autograd_grad_entry

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

Func = Callable[..., Any]
Tensors = tuple[Tensor, ...]
MaybeTensors = tuple[Tensor | None, ...]


def _as_tuple(value: Any, what: str, caller: str) -> tuple[bool, Tensors]:
    """(whether ``value`` was a tuple, ``value`` as a tuple of Tensors); TypeError naming a non-tensor entry."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {what}"
            raise TypeError(f"the {what} given to {caller} must be a Tensor or a tuple of Tensors, but {where} has type "
                            f"{type(item).__name__}")
    return is_tuple, items


def _untuple(result: Any, keep: bool | tuple[bool, bool]) -> Any:
    """Undo :func:`_as_tuple` on a result: ``keep`` says whether each level (outputs, then inputs) was a tuple."""
    if isinstance(keep, tuple):
        keep_outer, keep_inner = keep
        if not keep_inner:
            result = tuple(row[0] for row in result)
        return result if keep_outer else result[0]
    return result if keep else result[0]


def _track(inputs: Tensors, create_graph: bool, need_graph: bool) -> Tensors:
    """New tensor objects to differentiate with respect to: a view (keeps history) under ``create_graph``, else a
    detached copy that requires grad when ``need_graph`` (so tensors func captures itself are never confused with them)."""
    out = []
    for x in inputs:
        if create_graph and x.requires_grad:
            out.append(x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(results: Any, create_graph: bool) -> Any:
    """Detach (nested tuples of) results unless the caller asked for a graph."""
    if create_graph:
        return results
    return tuple(_finish(r, False) if isinstance(r, tuple) else r.detach() for r in results)


def _check_v(v: Tensors, like: Tensors, like_is_tuple: bool) -> None:
    if len(v) != len(like):
        if like_is_tuple:
            raise GradientError(f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}")
        raise GradientError("the given v should contain a single Tensor")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.shape != b.shape:
            where = f"entry {i} in " if like_is_tuple else ""
            raise GradientError(f"{where}v has invalid shape: should be {b.shape} but got {a.shape}")


_STRICT_MESSAGES = {
    "outputs": "output {i} of the user-provided function does not require gradients; in strict mode the outputs must "
               "be computed in a differentiable manner from the inputs",
    "grad_inputs": "the gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function; this is not allowed in strict mode",
    "jacobian": "while computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {i} is independent of the input; this is not allowed in strict mode (a linear function, "
                "for example)",
    "hessian": "the hessian of the user-provided function with respect to input {i} is independent of the input; "
               "this is not allowed in strict mode",
}


def _check_requires_grad(values: MaybeTensors, kind: str, strict: bool) -> None:
    """Under ``strict``: every value exists and requires grad (the message says which one failed and how)."""
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:
            raise GradientError(f"the output of the user-provided function is independent of input {i}; this is not "
                                "allowed in strict mode")
        if not value.requires_grad:
            raise GradientError(_STRICT_MESSAGES[kind].format(i=i))


def _grad(outputs: MaybeTensors, inputs: Tensors, grad_outputs: MaybeTensors | None = None,
          create_graph: bool = False) -> MaybeTensors:
    """``autograd.grad`` over the outputs that require grad (None for every input when none does), unused inputs None."""
    grads = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    pairs = [(o, g) for o, g in zip(outputs, grads) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, gouts = zip(*pairs)
    return _autograd_grad_entry(list(outs), list(inputs), list(gouts), retain_graph=True, create_graph=create_graph,
                                allow_unused=True)


_ZERO_MESSAGES = {
    "back": "the output of the user-provided function is independent of input {i}",
    "back_trick": "the gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients",
    "double_back": "the jacobian of the user-provided function is independent of input {i}",
    "double_back_trick": "the hessian of the user-provided function is independent of entry {i} in the grad_jacobian",
}


def _fill_zeros(grads: MaybeTensors, like: Tensors, strict: bool, create_graph: bool, stage: str) -> Tensors:
    """Zeros for the missing gradients, or (``strict``) the error naming the independent input."""
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise GradientError(_ZERO_MESSAGES[stage].format(i=i) + "; this is not allowed in strict mode")
            g = zeros_like(like[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise GradientError(f"the {what} of the user-provided function is independent of input {i}; this is not "
                                "allowed in strict mode when create_graph=True")
        out.append(g)
    return tuple(out)


def _prepare(func: Func, inputs: Any, v: Any, create_graph: bool, strict: bool, caller: str,
             v_like_outputs: bool) -> tuple[bool, Tensors, Tensors | None, bool, Tensors]:
    """The shared start: tracked inputs, checked v (shaped like the outputs or like the inputs), func's outputs."""
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", caller)
    ins = _track(ins, create_graph, need_graph=True)
    vs: Tensors | None = None
    if v is not None:
        vs = _track(_as_tuple(v, "v", caller)[1], create_graph, need_graph=False)
        if not v_like_outputs:
            _check_v(vs, ins, is_inputs_tuple)
    elif not v_like_outputs and (len(ins) != 1 or ins[0].numel() != 1):
        raise GradientError("the vector v can only be None if the input to the user-provided function is a single "
                            "Tensor with a single element")
    is_outputs_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", caller)
    _check_requires_grad(outs, "outputs", strict)
    if v_like_outputs:
        if vs is not None:
            _check_v(vs, outs, is_outputs_tuple)
        elif len(outs) != 1 or outs[0].numel() != 1:
            raise GradientError("the vector v can only be None if the user-provided function returns a single Tensor "
                                "with a single element")
    return is_inputs_tuple, ins, vs, is_outputs_tuple, outs


def vjp(func: Func, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product, shaped like the inputs (``v`` shaped like the outputs;
    optional for a one-element output)."""
    with enable_grad():
        is_in, ins, vs, is_out, outs = _prepare(func, inputs, v, create_graph, strict, "vjp", v_like_outputs=True)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        result = _fill_zeros(_grad(outs, ins, vs, create_graph), ins, strict, create_graph, "back")
    return _untuple(_finish(outs, create_graph), is_out), _untuple(_finish(result, create_graph), is_in)


def jvp(func: Func, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product, shaped like the outputs (``v`` shaped like the inputs),
    by the double-backward trick."""
    with enable_grad():
        is_in, ins, vs, is_out, outs = _prepare(func, inputs, v, create_graph, strict, "jvp", v_like_outputs=False)
        dummies = tuple(zeros_like(o, requires_grad=True) for o in outs)
        grad_inputs = _grad(outs, ins, dummies, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        result = _fill_zeros(_grad(grad_inputs, dummies, vs, create_graph), outs, strict, create_graph, "back_trick")
    return _untuple(_finish(outs, create_graph), is_out), _untuple(_finish(result, create_graph), is_out)


def _scalar_output(outs: Tensors, is_tuple: bool, caller: str) -> None:
    if is_tuple:
        raise GradientError(f"the function given to {caller} should return a single Tensor")
    if outs[0].numel() != 1:
        raise GradientError(f"the Tensor returned by the function given to {caller} should contain a single element, "
                            f"got shape {outs[0].shape}")


def vhp(func: Func, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a function with one output element: the gradient differentiated once more."""
    with enable_grad():
        is_in, ins, vs, is_out, outs = _prepare(func, inputs, v, create_graph, strict, "vhp", v_like_outputs=False)
        _scalar_output(outs, is_out, "vhp")
        jac = _grad(outs, ins, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        result = _fill_zeros(_grad(jac, ins, vs, create_graph), ins, strict, create_graph, "double_back")
    return _untuple(_finish(outs, create_graph), is_out), _untuple(_finish(result, create_graph), is_in)


def hvp(func: Func, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a function with one output element, by the double-backward trick on the gradient
    (equal to :func:`vhp` for a twice continuously differentiable function, whose Hessian is symmetric)."""
    with enable_grad():
        is_in, ins, vs, is_out, outs = _prepare(func, inputs, v, create_graph, strict, "hvp", v_like_outputs=False)
        _scalar_output(outs, is_out, "hvp")
        jac = _grad(outs, ins, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        dummies = tuple(zeros_like(x, requires_grad=True) for x in ins)
        double_back = _grad(jac, ins, dummies, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(double_back, dummies, vs, create_graph)
        result = _fill_zeros(grads, ins, strict, create_graph, "double_back_trick")
    return _untuple(_finish(outs, create_graph), is_out), _untuple(_finish(result, create_graph), is_in)


def jacobian(func: Func, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """d outputs / d inputs, entry (i, j) of shape ``outputs[i].shape + inputs[j].shape``; nested tuples as PyTorch
    gives them. ``vectorize`` changes nothing here (one backward pass per output element either way);
    ``strategy="forward-mode"`` raises NotImplementedError, as PyTorch does without ``vectorize=True``."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(f'strategy must be "forward-mode" or "reverse-mode", got {strategy!r}')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('jacobian: create_graph=True and strategy="forward-mode" are not supported '
                                      'together; set create_graph=False or strategy="reverse-mode"')
        if strict:
            raise GradientError('jacobian: strict=True and strategy="forward-mode" are not supported together; set '
                                'strict=False or strategy="reverse-mode"')
        raise NotImplementedError('jacobian: strategy="forward-mode" needs forward-mode AD with vectorize=True, which '
                                  'minitensor does not have; use strategy="reverse-mode" (the same values)')
    if vectorize and strict:
        raise GradientError("jacobian: strict=True and vectorize=True are not supported together; set strict=False or "
                            "vectorize=False")
    with enable_grad():
        is_in, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _track(ins, create_graph, need_graph=True)
        is_out, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outs, "outputs", strict)
        rows = tuple(_jacobian_rows(i, out, ins, create_graph, strict) for i, out in enumerate(outs))
    return _untuple(_finish(rows, create_graph), (is_out, is_in))


def _jacobian_rows(i: int, out: Tensor, ins: Tensors, create_graph: bool, strict: bool) -> Tensors:
    """d out / d ins[j] for every j, one backward pass per element of ``out``."""
    per_input: list[list[Tensor]] = [[] for _ in ins]
    flat = out.reshape(-1)
    for k in range(out.numel()):
        for j, (g, x) in enumerate(zip(_grad((flat[k],), ins, create_graph=create_graph), ins)):
            if g is None:
                if strict:
                    raise GradientError(f"output {i} of the user-provided function is independent of input {j}; this "
                                        "is not allowed in strict mode")
                g = zeros_like(x)
            elif strict and create_graph and not g.requires_grad:
                raise GradientError(f"the jacobian of the user-provided function is independent of input {j}; this is "
                                    "not allowed in strict mode when create_graph=True")
            per_input[j].append(g)
    return tuple(stack(rows, 0).reshape(*out.shape, *x.shape) if rows else x.new_zeros((*out.shape, *x.shape))
                 for rows, x in zip(per_input, ins))


def hessian(func: Func, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a function with one output element: entry (i, j) of shape ``inputs[i].shape + inputs[j].shape``
    (a single Tensor for a single input)."""
    is_in, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(f'outer_jacobian_strategy must be "forward-mode" or "reverse-mode", got '
                         f'{outer_jacobian_strategy!r}')

    def scalar_func(*args: Tensor) -> Tensor:
        out = func(*args)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        _scalar_output(outs, is_tuple, "hessian")
        return outs[0].squeeze()

    def jacobian_func(*args: Tensor) -> Tensors:
        jac = jacobian(scalar_func, args, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(jacobian_func, ins, create_graph=create_graph, strict=strict, vectorize=vectorize,
                      strategy=outer_jacobian_strategy)
    return _untuple(result, (is_in, is_in))
