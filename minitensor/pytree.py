"""Pytrees for the transforms: nested tuples, lists and dicts of anything else (the leaves), flattened to a list and
a structure ``Spec`` and rebuilt from them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

Func = Callable[..., Any]
ArgNums = int | tuple[int, ...]


# --- pytrees: nested tuples, lists and dicts with anything else as leaves ---

class Spec(NamedTuple):
    """A pytree's structure: the container type (None for a leaf), a dict's keys, the children's structures."""

    kind: type | None
    keys: tuple[Any, ...]
    children: tuple[Spec, ...]

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


def tree_flatten(tree: Any) -> tuple[list[Any], Spec]:
    """The leaves of ``tree`` in order (dicts in key order) and its structure."""
    if isinstance(tree, dict):
        keys, items = tuple(tree), list(tree.values())
    elif isinstance(tree, (tuple, list)):
        keys, items = (), list(tree)
    else:
        return [tree], LEAF
    parts = [tree_flatten(item) for item in items]
    return [leaf for leaves, _ in parts for leaf in leaves], Spec(type(tree), keys, tuple(s for _, s in parts))


def tree_unflatten(leaves: list[Any], spec: Spec) -> Any:
    """The tree of structure ``spec`` holding ``leaves`` (the inverse of :func:`tree_flatten`)."""
    it = iter(leaves)

    def build(s: Spec) -> Any:
        if s.kind is None:
            return next(it)
        children: list[Any] = [build(c) for c in s.children]
        kind: Any = s.kind
        if issubclass(kind, dict):
            return kind(zip(s.keys, children))
        return kind(*children) if hasattr(kind, "_fields") else kind(children)  # a namedtuple takes fields

    return build(spec)


def tree_map(fn: Func, tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


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
