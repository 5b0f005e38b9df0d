"""A replay plan: a trace's kernel calls bound once, run again on new inputs.

Buffers allocated during the trace are kept and reused by every replay (the plan owns them); buffers that existed
before (parameters, gradients of earlier steps, optimizer state, cached constants) are used in place. A replay
runs, in order: the copies of the new inputs into the traced input buffers, the library's validation checks of the
inputs (class indices in range), the host steps the trace registered (optimizer step counts and learning rates),
the re-draws of random numbers, the refills of allocated-and-initialised buffers that the step later overwrites,
and the kernel calls (with ``fused=True``, what ``minitensor.compile`` asks for by default, each run of element-wise
calls replaced by one generated kernel: :mod:`.fuse`). On the ``fast`` backend most calls are bound to
the Numba kernel and its planned layout at plan time (:mod:`.plan_fast`), on ``cuda`` to their planned kernel
launches (:mod:`.plan_cuda`; refills there are device-side too, so a replay moves no data between host and device
but the redrawn random numbers, drawn on the host as eager draws them, and the reads of the input checks, which eager
makes too); others call the backend method.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backends.base import Backend, is_host, strided_view
from ..tensor_data import TensorData
from .capture import Alloc, Op, Trace, root_of
from .fuse import fuse
from .plan_cuda import ScratchPool, bind_cuda, bind_fill, is_cuda
from .plan_fast import bind_fast

Call = Callable[[], Any]


def copy_into(backend: Backend, src: TensorData, dst: TensorData) -> None:
    """dst[...] = src[...] (same shape; any strides) on ``backend``, without recording."""
    if is_host(backend) and src.size:
        if src.strides == dst.strides and src.dtype == dst.dtype and src.is_contiguous():
            dst.storage[: src.size] = src.storage[: src.size]
        else:
            np.copyto(strided_view(dst, writeable=True), strided_view(src), casting="unsafe")
    else:
        type(backend).map(backend, "id", src, dst)


def fresh_copy(backend: Backend, data: TensorData) -> TensorData:
    """A new contiguous TensorData holding ``data``'s values."""
    if is_host(backend):
        return TensorData(np.array(strided_view(data), order="C").reshape(-1), data.shape)
    out = type(backend).empty(backend, data.shape, data.dtype)
    type(backend).map(backend, "id", data, out)
    return out


def _filler(backend: Backend, data: TensorData, contents: np.ndarray) -> Call:
    """A call that writes ``contents`` (its initial values) back into the allocated ``data``."""
    flat = np.ascontiguousarray(contents.reshape(-1), dtype=data.dtype)
    if is_host(backend):
        storage = data.storage
        return functools.partial(np.copyto, storage[: flat.size], flat)
    on_device = bind_fill(backend, data, contents) if type(backend).__name__ == "CudaBackend" else None
    return on_device if on_device is not None else functools.partial(data.storage.copy_to_device, flat)


def _redrawer(backend: Backend, alloc: Alloc) -> Call:
    """A call that draws again from the generator and writes the values into the draw's buffer (as eager would)."""
    draw, data = alloc.draw, alloc.data
    assert draw is not None
    dtype, size, host = data.dtype, data.size, is_host(backend)

    def redraw() -> None:
        values = np.asarray(draw.again()).astype(dtype, copy=False).reshape(-1)
        if host:
            np.copyto(data.storage[:size], values)
        else:
            data.storage.copy_to_device(np.ascontiguousarray(values))

    return redraw


def bind(op: Op, pool: ScratchPool | None = None) -> Call:
    """``op`` as a call without arguments: pre-planned on fast and cuda (temporaries of cuda calls from ``pool``),
    else the backend method with its arguments."""
    bound = bind_cuda(op, pool) if is_cuda(op) else bind_fast(op)
    if bound is not None:
        return bound
    return functools.partial(op.method, *op.args, **op.kwargs)


def _methods(trace: Trace) -> list[Any]:
    return [op.method for op in trace.ops]


class Plan:
    """Everything a replay needs, built from a :class:`~.capture.Trace` whose call took ``inputs`` (the traced
    input buffers, with their backends)."""

    def __init__(self, trace: Trace, inputs: list[tuple[Backend, TensorData]], fused: bool = False, reuse: Any = None):
        self.host_steps = list(trace.host_steps)
        self.guards = list(trace.guards)
        self.inputs = inputs
        self.ops = trace.ops
        allocated = {id(root_of(a.data.storage)) for a in trace.allocs}
        allocated.update(id(root_of(data.storage)) for _, data in inputs)
        written: set[int] = set()
        self.external_reads: set[int] = set()
        for op in trace.ops:
            for data in op.inputs():
                key = id(root_of(data.storage))
                if key not in written and key not in allocated:
                    self.external_reads.add(key)
            written.update(id(root_of(data.storage)) for data in op.outputs())
        self.written = written
        self.touched = written | self.external_reads
        prologue: list[Call] = []
        for alloc in trace.allocs:
            backend = alloc.backend
            if alloc.draw is not None:
                prologue.append(_redrawer(backend, alloc))
            elif alloc.kind != "empty" and id(root_of(alloc.data.storage)) in written and alloc.data.size:
                contents = alloc.contents if alloc.contents is not None else np.zeros(alloc.data.shape, alloc.data.dtype)
                prologue.append(_filler(backend, alloc.data, contents))
        self.prologue = prologue
        # Checks of what the caller passes in (an input, or a min/max of one: the class-index and embedding checks) run
        # again before the kernels, so out-of-range indices never reach them; checks of values the library computed
        # itself (the indices cross_entropy derives from checked targets) are trace-time only, like other Python.
        on_inputs = {id(root_of(data.storage)) for _, data in inputs}
        for op in trace.ops:
            if op.name == "reduce" and all(id(root_of(d.storage)) in on_inputs for d in op.inputs()):
                on_inputs.update(id(root_of(d.storage)) for d in op.outputs())
        self.checks = [functools.partial(function, *args, **kwargs) for function, args, kwargs, reads in trace.checks
                       if all(id(root_of(d.storage)) in on_inputs for d in reads)]
        self.scratch = ScratchPool()  # the temporaries of cuda calls, shared between calls
        calls = [bind(op, self.scratch) for op in trace.ops]
        self.calls = fuse(trace.ops, calls, self.scratch) if fused else calls
        self.method_calls = sum(1 for c in self.calls if isinstance(c, functools.partial) and c.func in _methods(trace))
        self.keep_alive = (trace.allocs, trace.ops)  # the buffers the calls write
        self.reuse = reuse  # what buffer reuse did before the trace was bound (a reuse.ReuseStats), if it ran

    def guards_hold(self) -> bool:
        """Whether every host value the trace registered with ``add_guard`` still has its traced value."""
        return all(key() == value for key, value in self.guards)

    def run(self, new_inputs: list[TensorData]) -> None:
        """Replay: input copies, input checks, host steps, re-draws and refills, then the kernel calls in order."""
        for (backend, buffer), data in zip(self.inputs, new_inputs):
            if data is not buffer:
                copy_into(backend, data, buffer)
        for check in self.checks:  # before anything changes state, as eager raises before its first op
            check()
        for step in self.host_steps:
            step()
        for call in self.prologue:
            call()
        for call in self.calls:
            call()
