"""Fusing runs of element-wise calls of a plan into one generated Numba loop (``fast`` backend).

A run is consecutive recorded ``map``/``zip`` calls that the fast backend sends to its Numba element-wise kernels,
over float data, where every operand is either a contiguous array of the run's length or a single element, and no
two operands are different views of one buffer that the run writes. Element ``i`` of every call then depends only
on element ``i`` of earlier calls, so one loop can run them all: per element, each call in order reads its operands
as float64, applies the same :mod:`minitensor.operators` function compiled the same way as the backend's kernels,
and stores into its output (rounding to the output's dtype, as the separate kernel would). Every output is still
written, so the results are bit for bit those of the separate calls; what is saved is a kernel launch and a pass
over memory per fused call. Generated kernels are compiled once per process and source text. Runs of ``cuda``
calls (same rules) become one generated CUDA kernel instead (:mod:`.fuse_cuda`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from .. import operators
from ..backends.fast_launch import use_parallel
from ..tensor_data import TensorData
from . import fuse_cuda
from .capture import Op, root_of

Call = Callable[[], Any]
_kernels: dict[tuple[str, bool], Any] = {}
_lock = threading.Lock()
_namespace: dict[str, Any] | None = None


def _operators() -> dict[str, Any]:
    """Every scalar function of :mod:`minitensor.operators`, njit-ed inline as the fast kernels' template does."""
    global _namespace
    if _namespace is None:
        namespace = dict(vars(operators))
        for name, value in vars(operators).items():
            if callable(value) and getattr(value, "__module__", None) == operators.__name__ and hasattr(value, "__code__"):
                fn = type(value)(value.__code__, namespace, name, value.__defaults__)
                namespace[name] = numba.njit(inline="always")(fn)
        _namespace = namespace
    return _namespace


def _kernel(source: str, parallel: bool) -> Any:
    with _lock:
        kernel = _kernels.get((source, parallel))
        if kernel is None:
            scope = {**_operators(), "prange": numba.prange, "compute": np.float64}
            exec(compile(source, "<minitensor fused kernel>", "exec"), scope)  # noqa: S102 - our own generated text
            kernel = _kernels[(source, parallel)] = numba.njit(parallel=parallel)(scope["fused"])
        return kernel


def _fusible(op: Op, call: Call) -> int | None:
    """The run length of ``op`` when it can join a fused run (its output's size), else None."""
    if type(op.backend).__name__ == "CudaBackend":
        return fuse_cuda.fusible(op)
    if op.name not in ("map", "zip") or op.kwargs or type(op.backend).__name__ != "FastBackend":
        return None
    kernel = getattr(call, "func", None)
    if getattr(kernel, "__name__", None) not in ("map_kernel", "zip_kernel"):  # NumPy routes are not fused
        return None
    out = op.args[-1]
    datas = [a for a in op.args[1:] if isinstance(a, TensorData)]
    if any(d.dtype.kind != "f" or not isinstance(d.storage, np.ndarray) for d in datas):
        return None
    n = out.size
    if n < 2 or not _flat(out, n):
        return None
    if any(not (d.size == 1 or _flat(d, n)) for d in datas):
        return None
    return n


def _flat(data: TensorData, n: int) -> bool:
    """Contiguous row-major with ``n`` elements from the start of its storage."""
    return data.size == n and data.is_contiguous() and data.storage.size >= n


class _Run:
    """A run being collected: its calls, its arrays (by storage object) and the roots it writes."""

    def __init__(self, n: int, backend: Any):
        self.n, self.backend = n, backend
        self.ops: list[Op] = []
        self.arrays: dict[int, Any] = {}  # NumPy arrays (fast) or device arrays (cuda)
        self.views: dict[int, set[int]] = {}  # root id -> ids of the storages (views) of it the run uses
        self.written: set[int] = set()
        self.scalars: set[int] = set()  # roots read as one element

    def accepts(self, op: Op, n: int) -> bool:
        """Whether ``op`` can join: same length, and no buffer the run writes is seen through two views or read as
        one element (element i must depend on element i alone)."""
        if n != self.n or op.backend is not self.backend:
            return False
        out = op.args[-1]
        out_root = id(root_of(out.storage))
        if self.views.get(out_root, {id(out.storage)}) != {id(out.storage)} or out_root in self.scalars:
            return False
        for data in op.args[1:-1]:
            if isinstance(data, TensorData):
                root = id(root_of(data.storage))
                if root in self.written and (data.size == 1 or self.views[root] != {id(data.storage)}):
                    return False
                if root == out_root and (data.size == 1 or data.storage is not out.storage):
                    return False
        return True

    def add(self, op: Op) -> None:
        self.ops.append(op)
        for data in op.args[1:]:
            if isinstance(data, TensorData):
                root = id(root_of(data.storage))
                self.arrays[id(data.storage)] = data.storage
                self.views.setdefault(root, set()).add(id(data.storage))
                if data.size == 1:
                    self.scalars.add(root)
        self.written.add(id(root_of(op.args[-1].storage)))

    def build(self) -> Call:
        if type(self.backend).__name__ == "CudaBackend":
            return fuse_cuda.build(self.ops, self.arrays, self.n)
        names = {key: f"a{i}" for i, key in enumerate(self.arrays)}
        lines = [f"def fused({', '.join(names.values())}, n):", "    for i in prange(n):"]
        for op in self.ops:
            table = operators.UNARY_OPS if op.name == "map" else operators.BINARY_OPS
            fn = table[op.args[0]].__name__
            operands = [f"compute({names[id(d.storage)]}[{'0' if d.size == 1 else 'i'}])" for d in op.args[1:-1]]
            lines.append(f"        {names[id(op.args[-1].storage)]}[i] = {fn}({', '.join(operands)})")
        source = "\n".join(lines) + "\n"
        parallel = use_parallel(self.n)  # the fast backend's rule
        kernel = _kernel(source if parallel else source.replace("prange(n)", "range(n)"), parallel)
        arrays = list(self.arrays.values())
        return lambda: kernel(*arrays, self.n)


def fuse(ops: list[Op], calls: list[Call], scratch: Any = None) -> list[Call]:
    """``calls`` (bound from ``ops``) with each run of two or more fusible element-wise calls replaced by one
    (``scratch``: the plan's :class:`~.plan_cuda.ScratchPool`, for the temporaries of split cuda calls)."""
    if "numba" not in sys.modules:
        return calls
    ops, calls = fuse_cuda.split_composites(ops, calls, scratch)
    out: list[Call] = []
    run: _Run | None = None
    pending: list[Call] = []

    def close() -> None:
        if run is not None and len(run.ops) > 1:
            out.append(run.build())
        else:
            out.extend(pending)
        pending.clear()

    for op, call in zip(ops, calls):
        n = _fusible(op, call)
        if n is not None and run is not None and run.accepts(op, n):
            run.add(op)
            pending.append(call)
            continue
        close()
        run = None
        if n is not None:
            run = _Run(n, op.backend)
            if run.accepts(op, n):
                run.add(op)
                pending.append(call)
                continue
            run = None
        out.append(call)
    close()
    return out
