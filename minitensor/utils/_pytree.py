"""``torch.utils._pytree`` for minitensor: nested tuples, lists and dicts flattened to leaves and a ``TreeSpec`` and
rebuilt, from :mod:`minitensor.pytree`.

As in torch, None is a leaf and dicts flatten in insertion order. Differences: only tuples (namedtuples too), lists and
dicts (and their subclasses) are containers, so a ``deque`` is a leaf and a ``defaultdict`` cannot be rebuilt; there is
no ``register_pytree_node``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..pytree import Spec, tree_flatten, tree_leaves, tree_map, tree_structure

__all__ = ["TreeSpec", "tree_flatten", "tree_leaves", "tree_map", "tree_structure", "tree_unflatten"]

TreeSpec = Spec
"""A pytree's structure (``num_leaves``, ``num_nodes``, ``is_leaf()``, ``unflatten(leaves)``)."""


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> Any:
    """The tree of structure ``treespec`` holding ``leaves`` (one per leaf, else ValueError)."""
    if not isinstance(treespec, Spec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)
