"""Buffer reuse in a replay plan: intermediates whose lifetimes do not overlap share one allocation.

A traced step allocates a fresh buffer for every intermediate (activations, saved values, gradients of non-leaf
tensors). A replay keeps all of them, so without reuse a plan holds every intermediate of the step at once. Here,
before the calls are bound, each buffer the step allocated uninitialised (``empty``) and that nothing outside the
plan can see is given the memory of an earlier such buffer of the same dtype and size whose last use came before its
first use (greedy, in call order). The calls then read and write the shared memory; since a buffer's old values are
never read after its last use, the results are the same bits.

What "nothing outside the plan can see" means: no :class:`~minitensor.tensor.Tensor` alive after the traced call
(outputs, parameters and their gradients, optimizer state, module buffers, tensors the function stored anywhere)
refers to the allocation, the replay's input checks do not read it, and it is never read before the step writes it.
Host storage only (NumPy arrays); device buffers keep their own allocations.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ..backends.base import is_host
from ..tensor import Tensor
from ..tensor_data import TensorData
from .capture import Trace, root_of


@dataclass
class ReuseStats:
    """What :func:`share_dead_buffers` did: buffers and bytes before and after."""

    buffers_before: int = 0
    buffers_after: int = 0
    bytes_before: int = 0
    bytes_after: int = 0


def visible_roots() -> set[int]:
    """Ids of the allocations that some live Tensor's data lies in (after collecting garbage cycles).

    Objects are classified by ``type(obj)``, never ``isinstance``: ``isinstance`` reads ``obj.__class__``, which raises
    on a dead ``weakref.proxy`` and runs arbitrary attribute hooks (a deprecated torch name warns)."""
    gc.collect()
    roots: set[int] = set()
    for obj in gc.get_objects():
        if issubclass(type(obj), Tensor):
            data = getattr(obj, "_data", None)
            if isinstance(data, TensorData):
                roots.add(id(root_of(data.storage)))
    return roots


def _datas(trace: Trace) -> Iterable[TensorData]:
    for op in trace.ops:
        for arg in (*op.args, *op.kwargs.values()):
            if isinstance(arg, TensorData):
                yield arg
    for alloc in trace.allocs:
        yield alloc.data


def share_dead_buffers(trace: Trace, visible: Callable[[], set[int]]) -> ReuseStats:
    """Let the trace's dead intermediates share memory (see the module docstring), rewriting the storages of the
    trace's TensorData in place. ``visible()``: ids of the allocations seen outside the plan (asked only when some
    sharing is possible)."""
    strided = {id(root_of(d.storage)) for d in _datas(trace)  # roots seen through a storage that is not a plain run
               if not isinstance(d.storage, np.ndarray) or (d.storage.size > 1 and d.storage.strides != (d.storage.itemsize,))}
    candidates: dict[int, np.ndarray] = {}
    for alloc in trace.allocs:
        root = root_of(alloc.data.storage)
        if (alloc.kind == "empty" and is_host(alloc.backend) and isinstance(root, np.ndarray) and root.ndim == 1
                and root.flags.c_contiguous and root.size and id(root) not in strided):
            candidates[id(root)] = root
    total = sum(r.nbytes for r in candidates.values())
    stats = ReuseStats(len(candidates), len(candidates), total, total)
    sizes = Counter((r.dtype.str, r.size) for r in candidates.values())
    if all(n < 2 for n in sizes.values()):
        return stats
    keep = visible()
    for _, _, _, reads in trace.checks:  # the replay's input checks read these before the calls run
        keep.update(id(root_of(d.storage)) for d in reads)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    read_first: set[int] = set()
    for i, op in enumerate(trace.ops):
        written = {id(d) for d in op.outputs()}
        for data in (*op.inputs(), *op.outputs()):
            key = id(root_of(data.storage))
            if key in candidates:
                if key not in first:
                    first[key] = i
                    if id(data) not in written:
                        read_first.add(key)
                last[key] = i
    order = sorted((k for k in first if k not in keep and k not in read_first), key=first.__getitem__)
    free: dict[tuple[str, int], list[tuple[int, np.ndarray]]] = {}  # (dtype, size) -> [(last use, block)]
    target: dict[int, np.ndarray] = {}
    for key in order:
        root = candidates[key]
        blocks = free.setdefault((root.dtype.str, root.size), [])
        block = root
        for j, (ends, earlier) in enumerate(blocks):
            if ends < first[key]:
                block = target[key] = earlier
                del blocks[j]
                break
        blocks.append((last[key], block))
    if not target:
        return stats
    stats.buffers_after -= len(target)
    stats.bytes_after -= sum(candidates[k].nbytes for k in target)
    for data in _datas(trace):  # (a TensorData met again already lies in its block, which is not a target)
        root = root_of(data.storage)
        if id(root) not in target:
            continue
        storage, into = data.storage, target[id(root)]
        offset = (storage.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // root.itemsize
        data._storage = data.storage = into[offset : offset + storage.size]
    return stats
