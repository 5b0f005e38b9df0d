"""Arguments and results of a compiled function as nested structures: the tensors in them (flattened into the
guard key), and the same structure rebuilt around other tensors (the traced buffers going in, the replay's outputs
coming out) with :func:`minitensor.pytree.tree_map`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..backends.base import Backend
from ..errors import CompileError
from ..module import Module
from ..pytree import tree_map
from ..tensor import Tensor
from ..tensor_data import TensorData


def is_optimizer(obj: Any) -> bool:
    return hasattr(obj, "param_groups") and hasattr(obj, "state") and not isinstance(obj, type)


def flatten(value: Any, leaves: list[Tensor], parts: list[Any]) -> None:
    """Tensors of ``value`` (nested tuples, lists, dicts) into ``leaves``; the guard key of everything into ``parts``."""
    if isinstance(value, Tensor):
        leaves.append(value)
        parts.append((value.shape, value.dtype.str, id(value.backend), value.requires_grad))
    elif isinstance(value, (tuple, list)):
        parts.append((type(value).__name__, len(value)))
        for item in value:
            flatten(item, leaves, parts)
    elif isinstance(value, dict):
        parts.append(("dict", tuple(value)))
        for item in value.values():
            flatten(item, leaves, parts)
    elif isinstance(value, Module) or is_optimizer(value):
        parts.append(("object", id(value)))
    elif isinstance(value, np.ndarray):
        raise CompileError(f"a compiled function got a NumPy array argument (shape {value.shape}); its values would be "
                           "frozen into the recording. Pass a tensor instead (minitensor.tensor(array))")
    else:
        try:
            hash(value)
        except TypeError:
            raise CompileError(f"a compiled function got an unhashable {type(value).__name__} argument; only tensors, "
                               "nested tuples/lists/dicts of them, and hashable values (compared by value) can be "
                               "arguments") from None
        parts.append((type(value).__name__, value))


class _Out:
    """Where a returned tensor goes in the output structure."""


def rebuild(template: Any, values: Iterator[Any]) -> Any:
    """``template`` with each tensor (or output placeholder) replaced by the next of ``values``."""
    return tree_map(lambda leaf: next(values) if isinstance(leaf, (Tensor, _Out)) else leaf, template)


def template_of(result: Any, outputs: list[tuple[Backend, TensorData]]) -> Any:
    """The structure of ``result`` with its tensors replaced by placeholders; their data appended to ``outputs``."""

    def placeholder(tensor: Tensor) -> _Out:
        outputs.append((tensor.backend, tensor._data))
        return _Out()

    return tree_map(lambda leaf: placeholder(leaf) if isinstance(leaf, Tensor) else leaf, result)
