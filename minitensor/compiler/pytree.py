"""Arguments and results of a compiled function as nested structures: the tensors in them (flattened into the
guard key), and the same structure rebuilt around other tensors (the traced buffers going in, the replay's outputs
coming out)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends.base import Backend
from ..errors import CompileError
from ..module import Module
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


def rebuild(template: Any, values: Any) -> Any:
    """``template`` with each tensor (or output placeholder) replaced by the next of ``values``."""
    if isinstance(template, (Tensor, _Out)):
        return next(values)
    if isinstance(template, tuple) and not hasattr(template, "_fields"):
        return tuple(rebuild(item, values) for item in template)
    if isinstance(template, tuple):  # a namedtuple
        return type(template)(*(rebuild(item, values) for item in template))
    if isinstance(template, list):
        return [rebuild(item, values) for item in template]
    if isinstance(template, dict):
        return {key: rebuild(item, values) for key, item in template.items()}
    return template


class _Out:
    """Where a returned tensor goes in the output structure."""


def template_of(result: Any, outputs: list[tuple[Backend, TensorData]]) -> Any:
    """The structure of ``result`` with its tensors replaced by placeholders; their data appended to ``outputs``."""
    if isinstance(result, Tensor):
        outputs.append((result.backend, result._data))
        return _Out()
    if isinstance(result, tuple) and not hasattr(result, "_fields"):
        return tuple(template_of(item, outputs) for item in result)
    if isinstance(result, tuple):
        return type(result)(*(template_of(item, outputs) for item in result))
    if isinstance(result, list):
        return [template_of(item, outputs) for item in result]
    if isinstance(result, dict):
        return {key: template_of(item, outputs) for key, item in result.items()}
    return result
