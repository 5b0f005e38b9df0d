"""``vmap``: a function mapped over a batch dim, one call per batch element in Python, results stacked."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..errors import ShapeError
from ..pytree import Func, Spec, broadcast_prefix, tree_flatten, tree_unflatten
from ..random_state import SharedStream
from ..tensor import Tensor
from ..tensor_join import stack

# --- vmap ---

def check_randomness(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise ValueError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness!r}")


def vmap(func: Func, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Func:
    """``f -> (args -> stacked results)``: func mapped over dim ``in_dims`` of its (nested) tensor arguments (an int
    for all, a tuple per argument, None for an unmapped one), results stacked along ``out_dims``.

    Unlike PyTorch's, this vmap has no batching rules: it loops in Python, calling func once per batch element on
    slices (``select``) and stacking the results, so it costs one call per element. ``randomness``: "error" raises if
    func draws from the shared generator, "same" replays one draw for every element, "different" lets them differ.
    ``out_dims=None`` returns the first element's result, which must equal all the others. ``chunk_size`` is
    accepted and changes nothing.
    """
    check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", type(func).__name__)

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                             "to vmap over a function with no inputs. The latter is unsupported.")
        leaves, spec = tree_flatten(args)
        dims = _in_dims(in_dims, args, leaves, spec, where)
        sizes = [x.shape[d] for x, d in zip(leaves, dims) if d is not None]
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if len(set(sizes)) > 1:
            raise ShapeError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")

        def element(b: int) -> Any:
            sliced = [x if d is None else x.select(d, b) if b >= 0 else x.new_zeros(x.shape[:d] + x.shape[d + 1:])
                      for x, d in zip(leaves, dims)]
            return func(*tree_unflatten(sliced, spec), **kwargs)

        if sizes[0] == 0:  # nothing to map over: one call on zeros gives the results' shapes
            return _stack(name, [element(-1)], out_dims, empty=True)
        return _stack(name, _run(element, sizes[0], randomness), out_dims, empty=False)

    return wrapped


def _in_dims(in_dims: Any, args: tuple[Any, ...], leaves: list[Any], spec: Spec, where: str) -> list[int | None]:
    """One checked, non-negative mapped dim (or None) per leaf of ``args``."""
    if not (in_dims is None or isinstance(in_dims, (int, tuple))):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the structure "
                         f"of inputs, got: {type(in_dims).__name__}.")
    dims = broadcast_prefix(in_dims, args)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}.")
    out: list[int | None] = []
    for x, d in zip(leaves, dims):
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either an integer dimension or "
                             "None.")
        if d is not None and not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type {type(x).__name__}. We "
                             "cannot vmap over non-Tensor arguments, please use None as the respective in_dim")
        if d is not None and not -x.dim() <= d < x.dim():
            raise ShapeError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor of dimensionality "
                             f"{x.dim()} so expected in_dim to satisfy -{x.dim()} <= in_dim < {x.dim()}.")
        out.append(None if d is None else d % x.dim())
    return out


def _run(element: Callable[[int], Any], size: int, randomness: str) -> list[Any]:
    """element(0..size-1) under the ``randomness`` rule."""
    if randomness == "different":
        return [element(b) for b in range(size)]
    shared = SharedStream()  # the generator every random function without generator= draws from
    start = shared.state_words()
    results = []
    for b in range(size):
        if randomness == "same":
            shared.load_state(start, "vmap")
        results.append(element(b))
        if randomness == "error" and shared.state_words().tolist() != start.tolist():
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                               "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                               "of vmap")
    return results


def _stack(name: str, results: list[Any], out_dims: Any, empty: bool) -> Any:
    """The per-element results stacked along ``out_dims`` (a prefix of their structure); ``empty``: the one result
    stands for a batch of size 0."""
    if not (out_dims is None or isinstance(out_dims, (int, tuple, list, dict))) or isinstance(out_dims, bool):
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                         "collection of ints representing where in the outputs the vmapped dimension should appear.")
    leaves, spec = tree_flatten(results[0])
    columns = [leaves]
    for r in results[1:]:
        more, other = tree_flatten(r)
        if other != spec:
            raise ValueError(f"vmap({name}, ...): `{name}` returned outputs of different structures: {spec} and {other}")
        columns.append(more)
    dims = broadcast_prefix(out_dims, results[0])
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs has "
                         f"structure {spec}.")
    out = []
    for i, d in enumerate(dims):
        column = [c[i] for c in columns]
        if d is None:
            if not all(_same(column[0], v) for v in column[1:]):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            out.append(column[0])
            continue
        if not isinstance(column[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(column[0]).__name__}. Did you mean to set out_dims= to None for output?")
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must hold ints or None, got {d!r}")
        stacked = stack(column, d)
        out.append(stacked.narrow(d, 0, 0) if empty else stacked)
    return tree_unflatten(out, spec)


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and a.detach().to_numpy().tolist() == b.detach().to_numpy().tolist()
    return type(a) is type(b) and not isinstance(a, Tensor) and a == b
