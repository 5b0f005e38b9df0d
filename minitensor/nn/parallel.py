"""Synchronous data parallelism across MPI processes (``torch.nn.parallel.DistributedDataParallel``).

How the gradient averaging works (one MPI job of N ranks, each running the same script on its own data shard):

1. At construction every rank receives rank 0's parameters and buffers (``broadcast``), so all start equal.
   The parameters that require grad are laid out, in reverse registration order (roughly the order backward
   produces their gradients), into a few flat host buckets of at most ``bucket_cap_mb`` MiB, one dtype each.
2. A gradient hook on every parameter (``Tensor.register_hook``: the engine calls it with the parameter's total
   gradient for this backward, just before adding it into ``.grad``) copies that gradient into its slot. When a
   bucket's last slot is filled, a non-blocking ``MPI_Iallreduce`` (sum) of the bucket starts, in bucket order
   on every rank (MPI matches collectives by order), while backward goes on computing earlier layers' gradients.
3. The hook of the last parameter to get its gradient ends the round: it waits for every bucket, divides by N,
   and sets each ``.grad`` to ``previous .grad + mean of this backward's gradients`` (what accumulation over
   several backward calls gives in PyTorch too). So after ``loss.backward()`` returns, every rank holds the same
   averaged gradients and an unchanged ``optimizer.step()`` keeps the parameters bit-identical.

Parameters that get no gradient in a backward stop step 3 from happening: with ``find_unused_parameters=True``
the forward walks the graph from the outputs and counts the parameters it cannot reach as ready (zero
gradient) up front, as PyTorch does; otherwise, as in PyTorch, the next forward raises. :meth:`finish` ends a
round by hand. Inside ``with ddp.no_sync():`` gradients only accumulate locally; the next synchronised backward
averages the accumulated sums. Buffers (BatchNorm running statistics) are overwritten with rank 0's at each
training-mode forward when ``broadcast_buffers`` (PyTorch's default); batch statistics stay per rank.

In a single process (not started by ``mpiexec``) the wrapper only delegates ``forward``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import distributed as dist
from ..autodiff import is_grad_enabled, no_grad
from ..backward import topological_sort
from ..creation import tensor as make_tensor
from ..module import Module
from ..tensor import Tensor
from .data_parallel import DataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]


class _Bucket:
    """One flat host buffer holding the gradients of ``params`` back to back."""

    def __init__(self, params: list[Tensor], dtype: np.dtype):
        self.params = params
        self.offsets: list[int] = []
        total = 0
        for p in params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = np.zeros(total, dtype=dtype)
        self.filled = 0
        self.request: Any = None


class DistributedDataParallel(Module):
    """Wrap ``module`` so that ``backward()`` leaves every rank with the gradients averaged over all ranks.

    ``state_dict()`` keys start with ``"module."`` (the wrapped model is the child named ``module``), as in
    PyTorch; save ``ddp.module.state_dict()`` for a checkpoint that loads into the plain model. ``device_ids``,
    ``output_device``, ``dim``, ``process_group``, ``check_reduction``, ``gradient_as_bucket_view`` and
    ``static_graph`` are accepted for PyTorch compatibility and ignored (MPI's world is the only group).
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group: Any = None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel needs an nn.Module, got {type(module).__name__}")
        cap = 25.0 if bucket_cap_mb is None else float(bucket_cap_mb)
        if not cap > 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb!r}")
        self.module = module
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.bucket_cap_mb = cap
        self.require_backward_grad_sync = True
        self.world_size = dist.world_size()
        self.comm_seconds = 0.0  # time spent starting, waiting for and unpacking all-reduces (cumulative)
        self.comm_bytes = 0
        self._params = [p for p in module.parameters() if isinstance(p, Tensor) and p.requires_grad]
        self._buckets: list[_Bucket] = []
        self._slot: dict[int, tuple[int, int]] = {}  # id(param) -> (bucket index, position in bucket)
        self._handles: list[Any] = []
        self._unused: list[Tensor] = []
        self._reset_round()
        if self.world_size > 1:
            with no_grad():
                for t in [*module.parameters(), *module.buffers()]:
                    if isinstance(t, Tensor):
                        dist.broadcast(t, 0)
            self._build_buckets(int(cap * 2**20))
            for p in self._params:
                self._handles.append(p.register_hook(self._make_hook(p)))

    # --- setup ---------------------------------------------------------------------------------------

    def _build_buckets(self, cap_bytes: int) -> None:
        """Reverse parameter order, split where a bucket would pass ``cap_bytes`` or the dtype changes."""
        open_lists: dict[np.dtype, list[Tensor]] = {}
        sizes: dict[np.dtype, int] = {}

        def close(dtype: np.dtype) -> None:
            params = open_lists.pop(dtype, [])
            sizes.pop(dtype, None)
            if params:
                self._buckets.append(_Bucket(params, dtype))

        for p in reversed(self._params):
            dtype = np.dtype(p.dtype)
            nbytes = p.numel() * dtype.itemsize
            if dtype in open_lists and sizes[dtype] + nbytes > cap_bytes:
                close(dtype)
            open_lists.setdefault(dtype, []).append(p)
            sizes[dtype] = sizes.get(dtype, 0) + nbytes
        for dtype in list(open_lists):
            close(dtype)
        for b, bucket in enumerate(self._buckets):
            for i, p in enumerate(bucket.params):
                self._slot[id(p)] = (b, i)

    def _reset_round(self) -> None:
        self._in_round = False
        self._reported: dict[int, Any] = {}  # id(param) -> its .grad before this backward (None if it had none)
        self._next_launch = 0
        self._unsynced = getattr(self, "_pending_local", False)
        for bucket in self._buckets:
            bucket.filled = 0
            bucket.request = None

    @property
    def bucket_sizes(self) -> list[int]:
        """Elements per bucket, in launch order (empty in a single process)."""
        return [b.buffer.size for b in self._buckets]

    # --- forward -------------------------------------------------------------------------------------

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """``module(*args, **kwargs)``; first syncs buffers from rank 0 (training mode, ``broadcast_buffers``)."""
        if self._in_round:
            missing = [i for i, p in enumerate(self._params) if id(p) not in self._reported]
            raise RuntimeError(
                "DistributedDataParallel: expected to have finished reduction in the prior iteration before starting a "
                f"new one: parameters at indices {missing} of module.parameters() received no gradient. Pass "
                "find_unused_parameters=True, or call finish() after backward")
        if self.world_size > 1 and self.broadcast_buffers and self.training:
            with no_grad():
                for buf in self.module.buffers():
                    if isinstance(buf, Tensor):
                        dist.broadcast(buf, 0)
        out = self.module(*args, **kwargs)
        if self.world_size > 1 and self.find_unused_parameters and is_grad_enabled():
            roots = [t for t in _tensors_in(out) if t.requires_grad]
            reached = {id(var) for var, history in topological_sort(*roots) if history is None} if roots else set()
            self._unused = [p for p in self._params if id(p) not in reached]
        return out

    # --- gradient hooks ------------------------------------------------------------------------------

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside, backward only accumulates local gradients; the first synchronised backward after it averages
        the accumulated sums (gradient accumulation with one all-reduce)."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _make_hook(self, param: Tensor) -> Any:
        def hook(grad: Tensor) -> Tensor | None:
            return self._on_grad(param, grad)

        return hook

    def _on_grad(self, param: Tensor, grad: Tensor) -> Tensor | None:
        if not self.require_backward_grad_sync:
            self._pending_local = True
            return None
        if not self._in_round:
            self._in_round = True
            self._unsynced = getattr(self, "_pending_local", False)
            for p in self._unused:
                if id(p) not in self._reported:
                    self._fill(p, None)
        if id(param) in self._reported:
            raise RuntimeError("DistributedDataParallel: a parameter got two gradients in one reduction round (a second "
                               "backward before the first finished?)")
        self._fill(param, grad)
        if len(self._reported) < len(self._params):
            return None
        # The last gradient of this backward: finish the round. This parameter's .grad is written by the engine
        # right after the hook returns (old .grad + returned value), so clear it and return the final value.
        final = self._finish(skip=param)
        param.grad = None
        return final

    def _fill(self, param: Tensor, grad: Tensor | None) -> None:
        """Copy this backward's gradient (plus a local accumulation from ``no_sync``) into its bucket slot."""
        tick = time.perf_counter()
        b, i = self._slot[id(param)]
        bucket = self._buckets[b]
        start, n = bucket.offsets[i], param.numel()
        prev = param.grad
        self._reported[id(param)] = prev
        slot = bucket.buffer[start : start + n]
        if grad is None:
            slot[...] = 0
        else:
            if grad.shape != param.shape:
                grad = grad.sum_to_shape(param.shape)
            slot[...] = dist._host_buffer(grad)[0].reshape(-1)  # host storage read in place, device data copied
        if self._unsynced and prev is not None:
            slot += dist._host_buffer(prev)[0].reshape(-1)
        bucket.filled += 1
        while self._next_launch < len(self._buckets):
            nxt = self._buckets[self._next_launch]
            if nxt.filled < len(nxt.params):
                break
            nxt.request = dist.iallreduce_sum(nxt.buffer)
            self.comm_bytes += nxt.buffer.nbytes
            self._next_launch += 1
        self.comm_seconds += time.perf_counter() - tick

    def finish(self) -> None:
        """End the current reduction round now (no-op when none is open): parameters that got no gradient count
        as zero, every bucket is all-reduced and waited for, and each ``.grad`` gets the mean. Call it after
        ``backward()`` when some parameters may get no gradient and ``find_unused_parameters`` is False."""
        if not self._in_round:
            return
        for p in self._params:
            if id(p) not in self._reported:
                self._fill(p, None)
        self._finish(skip=None)

    def _finish(self, skip: Tensor | None) -> Tensor | None:
        """Wait for every bucket, write the averaged gradients; returns ``skip``'s final gradient (not written)."""
        tick = time.perf_counter()
        result = None
        with no_grad():
            for bucket in self._buckets:
                bucket.request.Wait()
                bucket.buffer /= self.world_size
                for p, start in zip(bucket.params, bucket.offsets):
                    mean = make_tensor(bucket.buffer[start : start + p.numel()].reshape(p.shape), dtype=p.dtype,
                                       backend=p.backend.name)
                    prev = self._reported[id(p)]
                    final = mean if prev is None or self._unsynced else prev + mean
                    if p is skip:
                        result = final
                    else:
                        p.grad = final
        self._pending_local = False
        self._reset_round()
        self.comm_seconds += time.perf_counter() - tick
        return result

    def extra_repr(self) -> str:
        return f"world_size={self.world_size}, buckets={len(self._buckets)}, bucket_cap_mb={self.bucket_cap_mb}"


def _tensors_in(value: Any) -> list[Tensor]:
    """Every Tensor in a (nested) tuple/list/dict output."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors_in(v)]
    return []
