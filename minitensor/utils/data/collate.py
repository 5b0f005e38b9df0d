"""Turning samples into batches (``torch.utils.data.default_collate`` and ``default_convert``).

:func:`default_collate` merges a list of samples of one structure into one batch of that structure, going by the
type of the first sample:

=============================  ==============================================================
sample                         batch
=============================  ==============================================================
Tensor                         the tensors stacked along a new dim 0
NumPy array                    the same, after each array becomes a tensor (its dtype kept)
NumPy scalar                   a 1-D tensor of its dtype
Python float / int / bool      a 1-D float64 / int64 / bool tensor
str / bytes                    the samples as they came (a tuple in a tuple sample)
dict (any Mapping)             the same type, each key's values collated
namedtuple                     the same type, field by field
tuple                          a *list*, position by position (as PyTorch)
list (other Sequences)         the same type where it can be rebuilt, else a list
=============================  ==============================================================

Anything else is a TypeError naming its type. NumPy dtypes minitensor lacks (uint8, int16, float16, ...) take
the dtype :func:`~minitensor.tensor` gives them (int64, float32), where PyTorch keeps them.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping, MutableMapping, MutableSequence, Sequence
from typing import Any

import numpy as np

from ...creation import tensor
from ...dtypes import float64
from ...tensor import Tensor
from ...tensor_join import stack

_STRINGS_OR_OBJECTS = re.compile(r"[SaUO]")
"""NumPy dtype codes (``dtype.str``) of bytes, str and object arrays, which do not become tensors."""

ERROR_FORMAT = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy_text(x: Any) -> bool:
    return isinstance(x, (np.str_, np.bytes_)) or (isinstance(x, np.ndarray) and bool(_STRINGS_OR_OBJECTS.search(x.dtype.str)))


def _rebuilt(template: Any, parts: list, convert: Callable[[Any], Any]) -> Any:
    """``parts`` mapped by ``convert``, in a container like ``template`` (a copy of a mutable one, else a new one
    of its type, else a plain list)."""
    done = [convert(p) for p in parts]
    try:
        if isinstance(template, MutableSequence):
            clone = copy.copy(template)
            for i, value in enumerate(done):
                clone[i] = value
            return clone
        return type(template)(done)
    except TypeError:
        return done


def _rebuilt_mapping(template: Mapping, values: dict) -> Any:
    """``values`` in a mapping like ``template`` (a copy of a mutable one, else a new one of its type, else a dict)."""
    try:
        if isinstance(template, MutableMapping):
            clone = copy.copy(template)
            clone.update(values)
            return clone
        return type(template)(values)  # type: ignore[call-arg]
    except TypeError:
        return values


def default_convert(data: Any) -> Any:
    """NumPy arrays and scalars in ``data`` become tensors (their dtype kept), through dicts, namedtuples, tuples
    (which become lists) and lists; everything else, tensors included, is left as it is. The DataLoader's collation
    without batching (``batch_size=None``)."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)):
        return data if _is_numpy_text(data) else tensor(np.asarray(data))
    if isinstance(data, Mapping):
        return _rebuilt_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt(data, list(data), default_convert)
    return data


def _collate_numbers(batch: Sequence[Any]) -> Tensor:
    elem = batch[0]
    if isinstance(elem, np.generic):
        return tensor(np.array(batch))  # the scalars' own dtype
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    return tensor(list(batch))  # ints: int64; bools: bool


def default_collate(batch: Sequence[Any]) -> Any:
    """One batch from a list of samples of one structure (table in the module docstring). Sequences of different
    lengths are a RuntimeError, tensors of different shapes a ShapeError."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if _is_numpy_text(elem):
            raise TypeError(ERROR_FORMAT.format(elem.dtype))
        return default_collate([tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number, np.object_, float, int)):
        return _collate_numbers(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, Mapping):
        return _rebuilt_mapping(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            sizes = [len(sample) for sample in batch]
            raise RuntimeError(f"each element in list of batch should be of equal size, got sizes {sizes}")
        transposed = list(zip(*batch))  # tuples: a column of strings stays a tuple, as in PyTorch
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        return _rebuilt(elem, transposed, default_collate)
    raise TypeError(ERROR_FORMAT.format(type(elem)))
