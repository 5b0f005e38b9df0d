"""``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian`` (see the package docstring
for how they compose)."""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..autodiff import enable_grad
from ..autograd import grad as _autograd_grad
from ..backward import topological_sort
from ..creation import zeros_like
from ..errors import GradientError
from ..pytree import ArgNums, Func, Spec, tree_flatten, tree_map, tree_unflatten
from ..tensor import Tensor
from ..tensor_join import stack
from .vmap import check_randomness

# --- differentiation helpers ---

def _argnums(argnums: Any, count: int) -> tuple[int, ...]:
    """``argnums`` as a tuple of non-negative positions among ``count`` positional arguments (PyTorch's errors)."""
    items = (argnums,) if isinstance(argnums, int) and not isinstance(argnums, bool) else argnums
    if not isinstance(items, tuple) or not all(isinstance(a, int) and not isinstance(a, bool) for a in items):
        raise GradientError(f"argnums must be int or Tuple[int, ...], got: {type(argnums).__name__}")
    if not items:
        raise GradientError("argnums must be non-empty")
    for a in items:
        if not -count <= a < count:
            raise GradientError(f"Got argnum={a}, but only {count} positional inputs")
    picked = tuple(a % count for a in items)
    if len(set(picked)) != len(picked):
        raise GradientError(f"argnums elements must be unique, got {argnums}")
    return picked


_FRESH: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()
"""The leaves the transforms made (by unique_id): once their transform returns, they are nobody's inputs."""


class _Running(threading.local):
    """Per thread (as grad mode is): the unique_ids of the tracked inputs of each transform running now, innermost
    last."""

    def __init__(self) -> None:
        self.scopes: list[set[int]] = []


_RUNNING = _Running()


def _tracked(x: Any) -> Tensor:
    """A fresh tensor to differentiate with respect to, standing for ``x``."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise GradientError(f"only Tensors of floating point dtype can require gradients, got {x.dtype}")
    if x.requires_grad:
        return x.view_as(x)
    leaf = x.detach().requires_grad_(True)
    _FRESH[leaf.unique_id] = leaf
    return leaf


@contextmanager
def _running(tracked: list[Tensor]) -> Iterator[None]:
    """Grad mode on, and ``tracked`` known as the inputs of a running transform (an enclosing one, to those inside)."""
    _RUNNING.scopes.append({t.unique_id for t in tracked})
    try:
        with enable_grad():
            yield
    finally:
        _RUNNING.scopes.pop()


Picks = list[tuple[list[Tensor], Spec]]


def _track(args: tuple[Any, ...], picked: tuple[int, ...]) -> tuple[list[Any], Picks, list[Tensor]]:
    """``args`` with the picked ones' tensors replaced by tracked copies; (tracked leaves, structure) per pick; all
    the tracked leaves."""
    new_args, per = list(args), []
    with enable_grad():
        for a in picked:
            leaves, spec = tree_flatten(args[a])
            tracked = [_tracked(x) for x in leaves]
            new_args[a] = tree_unflatten(tracked, spec)
            per.append((tracked, spec))
    return new_args, per, [t for leaves, _ in per for t in leaves]


def _regroup(values: list[Any], per: Picks, single: bool) -> Any:
    """``values`` (one per tracked leaf) in the structure of the differentiated arguments: one tree for an int
    ``argnums``, a tuple of trees for a tuple."""
    trees, start = [], 0
    for leaves, spec in per:
        trees.append(tree_unflatten(values[start:start + len(leaves)], spec))
        start += len(leaves)
    return trees[0] if single else tuple(trees)


def _reaches_outside(roots: list[Any], tracked: list[Tensor]) -> bool:
    """Whether the graph behind ``roots`` reaches a leaf that requires grad and belongs to someone outside: not one
    of our ``tracked`` leaves, nor a leaf of a transform that has returned (a nested one's), unless it is an input of a
    transform still running around us (then the results must stay differentiable for it)."""
    ours = {t.unique_id for t in tracked}
    enclosing = set().union(*_RUNNING.scopes)
    live = [r for r in roots if isinstance(r, Tensor) and r.requires_grad]
    for var, history in topological_sort(*live):
        uid = var.unique_id
        if history is None and uid not in ours and (uid not in _FRESH or uid in enclosing):
            return True
    return False


def _detach(tree: Any) -> Any:
    return tree_map(lambda x: x.detach() if isinstance(x, Tensor) else x, tree)


def _grads(outputs: list[Tensor], inputs: list[Tensor], cotangents: list[Any] | None = None,
           retain_graph: bool = True) -> list[Tensor]:
    """d outputs / d inputs (weighted by ``cotangents``) with a graph, zeros for an input the outputs ignore."""
    cts = [None] * len(outputs) if cotangents is None else cotangents
    pairs = [(o, c) for o, c in zip(outputs, cts) if o.requires_grad]
    found: tuple[Tensor | None, ...] = (None,) * len(inputs)
    if pairs and inputs:
        found = _autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=retain_graph,
                               create_graph=True, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(found, inputs)]


def _split_aux(out: Any, has_aux: bool, caller: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise GradientError(f"{caller}: output of function f should be a tuple: (output, aux) if has_aux is True")
    for leaf in tree_flatten(out[1])[0]:
        if not isinstance(leaf, Tensor):
            raise GradientError(f"{caller}: expected the aux output to hold only tensors, got {type(leaf).__name__}")
    return out


def _tensor_leaves(out: Any, caller: str) -> tuple[list[Tensor], Spec]:
    leaves, spec = tree_flatten(out)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise GradientError(f"{caller}: expected f(*primals) to return only tensors, got unsupported type "
                                f"{type(leaf).__name__}")
    return leaves, spec


# --- the transforms ---

def grad_and_value(func: Func, argnums: ArgNums = 0, has_aux: bool = False) -> Func:
    """``f -> (args -> (grad, value))``: the gradient of a scalar-valued ``func`` with respect to the arguments at
    ``argnums`` (one tree for an int, a tuple for a tuple), and its value; ``has_aux``: func returns (value, aux) and
    the result is (grad, (value, aux))."""
    caller = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        picked = _argnums(argnums, len(args))
        new_args, per, tracked = _track(args, picked)
        with _running(tracked):
            value, aux = _split_aux(func(*new_args, **kwargs), has_aux, caller)
            if not isinstance(value, Tensor):
                raise GradientError(f"{caller}: Expected f(*args) to return a Tensor, got {type(value).__name__}")
            if value.dim() != 0:
                raise GradientError(f"{caller}: Expected f(*args) to return a scalar Tensor, got tensor with "
                                    f"{value.dim()} dims (shape {value.shape}). Maybe you wanted to use the vjp or "
                                    "jacrev APIs instead?")
            grads = _regroup(_grads([value], tracked), per, isinstance(argnums, int))
        result = (grads, (value, aux) if has_aux else value)
        return result if _reaches_outside([value, *tree_flatten(aux)[0]], tracked) else _detach(result)

    return wrapper


def grad(func: Func, argnums: ArgNums = 0, has_aux: bool = False) -> Func:
    """``f -> (args -> d f / d args[argnums])`` for a ``func`` returning a scalar (0-dim) Tensor; with ``has_aux``
    func returns (value, aux) and the result is (grad, aux)."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func: Func, *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), vjp_fn)`` (and aux): ``vjp_fn(cotangents)`` is the tuple, one tree per primal, of
    ``cotangents^T J``, the cotangents shaped like the output; it may be called again unless called with
    ``retain_graph=False``; ``create_graph=False`` detaches the result even when something outside could use its graph."""
    caller = "vjp(f, *primals)"
    new_args, per, tracked = _track(primals, tuple(range(len(primals))))
    with _running(tracked):
        out, aux = _split_aux(func(*new_args), has_aux, caller)
        outs, out_spec = _tensor_leaves(out, caller)
    outside = _reaches_outside([*outs, *tree_flatten(aux)[0]], tracked)

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None) -> tuple[Any, ...]:
        cts, spec = tree_flatten(cotangents)
        if spec != out_spec:
            raise GradientError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                                f"to the function. cotangents: {spec}, primal output: {out_spec}")
        for i, (c, o) in enumerate(zip(cts, outs)):
            if not isinstance(c, Tensor) or c.shape != o.shape:
                got = c.shape if isinstance(c, Tensor) else type(c).__name__
                raise GradientError(f"Mismatch in shape: cotangent {i} has a shape of {got} and output {i} has a shape "
                                    f"of {o.shape}")
        with enable_grad():
            result = _regroup(_grads(outs, tracked, cts, retain_graph), per, single=False)
        keep = create_graph is not False and (outside or any(c.requires_grad for c in cts))
        return result if keep else _detach(result)

    out, aux = (out, aux) if outside else (_detach(out), _detach(aux))
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jvp(func: Func, primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), J tangents)`` (and aux), the tangents shaped like the primals, by the double-backward
    trick: ``u -> u^T J`` is linear in a dummy cotangent ``u``; differentiating it along the tangents gives ``J t``.
    ``strict`` is accepted for PyTorch's signature (PyTorch does not implement it either)."""
    caller = "jvp(f, primals, tangents)"
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, tuple):
            raise GradientError(f"{caller}: Expected {name} to be a tuple. E.g. it should be valid to call f(*primals).")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise GradientError(f"{caller}: Expected primals and tangents to have the same python structure, got primals "
                            f"with structure {p_spec} and tangents with structure {t_spec}")
    if not p_leaves:
        raise GradientError(f"{caller}: Expected primals to contain at least one Tensor.")
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        if not isinstance(t, Tensor) or (isinstance(p, Tensor) and t.shape != p.shape):
            got = t.shape if isinstance(t, Tensor) else type(t).__name__
            raise GradientError(f"{caller}: tangent {i} must be a Tensor of its primal's shape "
                                f"{getattr(p, 'shape', None)}, got {got}")
    new_args, per, tracked = _track(primals, tuple(range(len(primals))))
    with _running(tracked):
        out, aux = _split_aux(func(*new_args), has_aux, caller)
        outs, out_spec = _tensor_leaves(out, caller)
        live = [o for o in outs if o.requires_grad]
        dummies = [zeros_like(o, requires_grad=True) for o in live]
        _FRESH.update((d.unique_id, d) for d in dummies)  # the dummy cotangents are ours too
        back = _grads(live, tracked, list(dummies))
        pairs = [(g, t if t.dtype == g.dtype else t.to(g.dtype)) for g, t in zip(back, t_leaves) if g.requires_grad]
        forward = _grads([g for g, _ in pairs], dummies, [t for _, t in pairs]) if pairs else [zeros_like(d) for d in dummies]
    by_output = dict(zip((id(o) for o in live), forward))
    jvp_out = tree_unflatten([by_output.get(id(o), zeros_like(o)) for o in outs], out_spec)
    outside = _reaches_outside([*outs, *tree_flatten(aux)[0]], tracked)
    out, aux = (out, aux) if outside else (_detach(out), _detach(aux))
    jvp_out = jvp_out if outside or any(t.requires_grad for t in t_leaves) else _detach(jvp_out)
    return (out, jvp_out, aux) if has_aux else (out, jvp_out)


def _jacobian_transform(func: Func, argnums: ArgNums, has_aux: bool, caller: str) -> Func:
    """The Jacobian of every output with respect to ``argnums`` (one backward pass per output element), nested as
    output structure -> argnums -> argument structure, each of shape ``output.shape + input.shape``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        picked = _argnums(argnums, len(args))
        new_args, per, tracked = _track(args, picked)
        with _running(tracked):
            out, aux = _split_aux(func(*new_args, **kwargs), has_aux, caller)
            outs, out_spec = _tensor_leaves(out, caller)
            blocks = [_regroup(_jacobian_block(o, tracked), per, isinstance(argnums, int)) for o in outs]
        result = (tree_unflatten(blocks, out_spec), aux)
        result = result if _reaches_outside([*outs, *tree_flatten(aux)[0]], tracked) else _detach(result)
        return result if has_aux else result[0]

    return wrapper


def _jacobian_block(out: Tensor, inputs: list[Tensor]) -> list[Tensor]:
    if not out.requires_grad or out.numel() == 0:
        return [x.new_zeros((*out.shape, *x.shape)) for x in inputs]
    flat = out.reshape(-1)
    rows = [_grads([flat[k]], inputs) for k in range(out.numel())]
    return [stack([row[j] for row in rows], 0).reshape(*out.shape, *x.shape) for j, x in enumerate(inputs)]


def jacrev(func: Func, argnums: ArgNums = 0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Func:
    """``f -> (args -> Jacobian)`` by reverse mode, one backward pass per output element (``chunk_size`` changes
    nothing here); with ``has_aux`` the result is (Jacobian, aux)."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"jacrev: chunk_size should be None or greater than 0, got {chunk_size}")
    return _jacobian_transform(func, argnums, has_aux, "vjp(f, *primals)")


def jacfwd(func: Func, argnums: ArgNums = 0, has_aux: bool = False, *, randomness: str = "error") -> Func:
    """``f -> (args -> Jacobian)``, the same results as :func:`jacrev` (minitensor computes them in reverse mode)."""
    check_randomness(randomness)
    return _jacobian_transform(func, argnums, has_aux, "jvp(f, primals, tangents)")


def hessian(func: Func, argnums: ArgNums = 0) -> Func:
    """``f -> (args -> Hessian)`` of a scalar-valued func: ``jacfwd(jacrev(func, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)
