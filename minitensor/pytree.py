"""Pytrees for the transforms: nested tuples, lists and dicts of anything else (the leaves), flattened to a list and
a structure ``Spec`` and rebuilt from them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

Func = Callable[..., Any]
ArgNums = int | tuple[int, ...]


# --- pytrees: nested tuples, lists and dicts with anything else as leaves ---

class Spec(NamedTuple):
    """A pytree's structure: the container type (None for a leaf), a dict's keys, the children's structures."""

    kind: type | None
    keys: tuple[Any, ...]
    children: tuple[Spec, ...]

    @property
    def num_leaves(self) -> int:
        """How many leaves a tree of this structure holds."""
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    @property
    def num_nodes(self) -> int:
        """How many nodes (containers and leaves) a tree of this structure has."""
        return 1 + sum(c.num_nodes for c in self.children)

    def is_leaf(self) -> bool:
        """Whether this is the structure of a single leaf."""
        return self.kind is None

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """The tree of this structure holding ``leaves``; ValueError unless there is exactly one per leaf."""
        values = list(leaves)
        if len(values) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(values)} but the spec refers to a "
                             f"pytree that holds {self.num_leaves} items ({self})")
        return tree_unflatten(values, self)

    def __str__(self) -> str:
        if self.kind is None:
            return "*"
        parts = [str(c) for c in self.children]
        if issubclass(self.kind, dict):
            return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(self.keys, parts)) + "}"
        if issubclass(self.kind, list):
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


LEAF = Spec(None, (), ())


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], Spec]:
    """The leaves of ``tree`` in order (dicts in key order) and its structure; a subtree for which ``is_leaf``
    returns True is one leaf."""
    if is_leaf is not None and is_leaf(tree):
        return [tree], LEAF
    if isinstance(tree, dict):
        keys, items = tuple(tree), list(tree.values())
    elif isinstance(tree, (tuple, list)):
        keys, items = (), list(tree)
    else:
        return [tree], LEAF
    parts = [tree_flatten(item, is_leaf) for item in items]
    return [leaf for leaves, _ in parts for leaf in leaves], Spec(type(tree), keys, tuple(s for _, s in parts))


def tree_unflatten(leaves: list[Any], spec: Spec) -> Any:
    """The tree of structure ``spec`` holding ``leaves`` (the inverse of :func:`tree_flatten`)."""
    return _build(spec, iter(leaves))


def _build(spec: Spec, leaves: Iterator[Any]) -> Any:
    """The tree of structure ``spec`` taking its leaves from ``leaves`` in order. (A module function, not a closure:
    a self-referencing closure would be a reference cycle keeping the leaves alive until the garbage collector runs.)"""
    if spec.kind is None:
        return next(leaves)
    children: list[Any] = [_build(c, leaves) for c in spec.children]
    kind: Any = spec.kind
    if issubclass(kind, dict):
        return kind(zip(spec.keys, children))
    return kind(*children) if hasattr(kind, "_fields") else kind(children)  # a namedtuple takes fields


def tree_map(fn: Func, tree: Any, *rests: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``tree`` with each leaf replaced by ``fn(leaf, *matching parts of rests)``; each of ``rests`` has ``tree``'s
    structure down to its leaves, where it may hold whole subtrees (handed to ``fn`` as they are)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    columns = [tree_flatten_up_to(spec, rest) for rest in rests]
    return tree_unflatten([fn(*args) for args in zip(leaves, *columns)], spec)


def tree_flatten_up_to(spec: Spec, tree: Any) -> list[Any]:
    """The parts of ``tree`` at the leaf positions of ``spec`` (whole subtrees where ``spec`` has a leaf); ValueError
    naming the first place where ``tree`` does not have ``spec``'s containers."""
    if spec.kind is None:
        return [tree]
    kind: Any = type(tree)  # (compared as Any: an ``is`` test on types would narrow ``tree`` to object)
    if kind is not spec.kind:
        raise ValueError(f"Node type mismatch; expected {spec.kind}, but got {kind}.")
    if len(tree) != len(spec.children):
        raise ValueError(f"Node arity mismatch; expected {len(spec.children)}, but got {len(tree)}.")
    if issubclass(spec.kind, dict):
        missing, extra = set(spec.keys) - set(tree), set(tree) - set(spec.keys)
        if missing or extra:
            raise ValueError(f"Node keys mismatch; missing key(s): {missing}; extra key(s): {extra}.")
        items = [tree[k] for k in spec.keys]
    else:
        items = list(tree)
    return [part for child, item in zip(spec.children, items) for part in tree_flatten_up_to(child, item)]


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` in :func:`tree_flatten`'s order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> Spec:
    """The structure of ``tree`` (what :func:`tree_flatten` returns beside the leaves)."""
    return tree_flatten(tree, is_leaf)[1]


def broadcast_prefix(prefix: Any, tree: Any) -> list[Any] | None:
    """One value of ``prefix`` per leaf of ``tree``, a non-container in ``prefix`` standing for its whole subtree;
    None where the structures do not match."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * len(tree_flatten(tree)[0])
    if type(prefix) is not type(tree) or len(prefix) != len(tree):
        return None
    if isinstance(prefix, dict):
        if set(prefix) != set(tree):
            return None
        pairs = [(prefix[k], tree[k]) for k in tree]
    else:
        pairs = list(zip(prefix, tree))
    out: list[Any] = []
    for p, t in pairs:
        part = broadcast_prefix(p, t)
        if part is None:
            return None
        out += part
    return out
