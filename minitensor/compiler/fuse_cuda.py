"""Fusing runs of element-wise calls of a plan into one generated CUDA kernel (``cuda`` backend).

The rules of a run are :mod:`.fuse`'s (consecutive ``map``/``zip`` calls, every operand a contiguous array of the
run's length or a single element, no buffer the run writes seen through two views or read as one element), so
element ``i`` of every call depends only on element ``i`` of earlier calls and one grid-stride loop can run them
all. Per element, each call in order reads its operands with the read conversion its own kernel would use (the
compute type of :func:`minitensor.backends.cuda_plan.compute_type`: int64, float32 or float64), applies the same
:mod:`minitensor.operators` function compiled the same way (:func:`minitensor.backends.cuda_kernels.device_op`),
and stores into its output (converted on store to the output's dtype). Every output is written, so the results are
those of the separate launches bit for bit; what is saved is a launch and a pass over memory per fused call.

A value a later call of the run reads back is reloaded from memory after a ``threadfence_block``: the fence keeps
the compiler from forwarding the stored value into the next operator, where NVVM's default FMA contraction could
fuse one call's multiply with the next call's add into one rounding (the separate kernels round twice). Generated
kernels are compiled once per process and source text (not cached on disk). Like the fast ones they are used by
default (``minitensor.compile``'s ``backend="inductor"``; ``backend="eager"`` replays the separate launches).

This module reaches the cuda backend's modules only when it is given cuda calls (they are loaded by then): it
imports nothing that needs numba-cuda, so :mod:`.fuse` can import it everywhere.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import Any

from .. import operators
from .capture import Op
from .plan_cuda import ScratchPool, bind_cuda, bind_launch

Call = Callable[[], Any]
_kernels: dict[str, Any] = {}
_lock = threading.Lock()
READ_NAMES = {"int64": "read_int64", "float32": "read_float32", "float64": "read_float64"}


def _backend_modules() -> tuple[Any, Any, Any]:
    """(numba.cuda, cuda_kernels, cuda_plan): already imported whenever a cuda call exists."""
    return (importlib.import_module("numba.cuda"), importlib.import_module("minitensor.backends.cuda_kernels"),
            importlib.import_module("minitensor.backends.cuda_plan"))


def eligible(op: Op) -> bool:
    """Whether the cuda call ``op`` is an element-wise map/zip of a known operator on TensorData operands, which a
    fused run can take when its operands fit :func:`.fuse.run_length`."""
    if op.name not in ("map", "zip") or op.kwargs or type(op.backend).__name__ != "CudaBackend":
        return False
    table = operators.UNARY_OPS if op.name == "map" else operators.BINARY_OPS
    return len(op.args) == (3 if op.name == "map" else 4) and op.args[0] in table


def source(ops: list[Op], names: dict[int, str]) -> tuple[str, dict[str, Any]]:
    """The generated kernel's text for ``ops`` (arrays named by ``names``, keyed by storage id) and the names it
    uses: the operators' device functions and the read conversions."""
    cuda, kernels, plan = _backend_modules()
    scope: dict[str, Any] = {"cuda": cuda, "read_int64": kernels.READERS["int64"],
                             "read_float32": kernels.READERS["float32"], "read_float64": kernels.READERS["float64"]}
    lines: list[str] = []
    for k, op in enumerate(ops):
        table = operators.UNARY_OPS if op.name == "map" else operators.BINARY_OPS
        fn = table[op.args[0]]
        scope[f"op_{fn.__name__}"] = kernels.device_op(fn)
        inputs, out = op.args[1:-1], op.args[-1]
        read = READ_NAMES[plan.compute_type(out, *inputs)]
        operands = [f"{read}({names[id(d.storage)]}[{'0' if d.size == 1 else 'i'}])" for d in inputs]
        target = names[id(out.storage)]
        lines.append(f"        {target}[i] = op_{fn.__name__}({', '.join(operands)})")
        if any(names[id(d.storage)] == target for later in ops[k + 1 :] for d in later.args[1:-1]):
            lines.append("        cuda.threadfence_block()")
    header = [f"def fused({', '.join(names.values())}, n):", "    for i in range(cuda.grid(1), n, cuda.gridsize(1)):"]
    return "\n".join(header + lines) + "\n", scope


def _kernel(text: str, scope: dict[str, Any]) -> Any:
    with _lock:
        kernel = _kernels.get(text)
        if kernel is None:
            namespace = dict(scope)
            exec(compile(text, "<minitensor fused cuda kernel>", "exec"), namespace)  # noqa: S102 - our own text
            kernel = _kernels[text] = scope["cuda"].jit(namespace["fused"])
        return kernel


def build(ops: list[Op], arrays: dict[int, Any], n: int) -> Call:
    """One launch of a generated kernel that runs ``ops`` (a fused run over ``n`` elements; ``arrays``: every storage
    the run touches, by id) element by element, bound to its arrays and geometry."""
    names = {key: f"a{i}" for i, key in enumerate(arrays)}
    text, scope = source(ops, names)
    kernel = _kernel(text, scope)
    _, _, plan = _backend_modules()
    blocks, threads = plan.elementwise_launch(n)
    return bind_launch(kernel, blocks, threads, (*arrays.values(), n))


def _split(op: Op, scratch: ScratchPool | None) -> list[Op] | None:
    """``add_scaled`` on a cuda backend that keeps the base class's two passes, as those two ``zip`` calls (alpha * b
    rounded into a temporary of out's dtype, then a + that): calls a run can take. The temporary is live between
    those two calls only: it comes from ``scratch`` (given back at once), else is allocated here. None for every
    other call."""
    backend = op.backend
    if op.name != "add_scaled" or op.kwargs or len(op.args) != 4 or type(backend).__name__ != "CudaBackend":
        return None
    if "add_scaled" in vars(type(backend)):  # the backend has its own one-pass kernel
        return None
    a, b, alpha, out = op.args
    if scratch is not None:
        scaled = scratch.take(backend, out.shape, out.dtype)
        scratch.release()
    else:
        scaled = backend.empty(out.shape, out.dtype)
    zip_method = type(backend).zip
    return [Op(backend, "zip", zip_method, ("mul", b, alpha, scaled), {}),
            Op(backend, "zip", zip_method, ("add", a, scaled, out), {})]


def split_composites(ops: list[Op], calls: list[Call], scratch: ScratchPool | None,
                     run_length: Callable[[tuple[Any, ...]], int | None]) -> tuple[list[Op], list[Call]]:
    """``ops`` and their ``calls`` with each cuda ``add_scaled`` whose operands fit ``run_length`` (:mod:`.fuse`'s
    rule, so each of its two passes could join a run) split into its two element-wise calls, each bound to its
    launch."""
    new_ops: list[Op] = []
    new_calls: list[Call] = []
    for op, call in zip(ops, calls):
        parts = _split(op, scratch) if op.name == "add_scaled" and run_length(op.args) is not None else None
        bound = [bind_cuda(part) for part in parts] if parts is not None else None
        if parts is None or bound is None or any(c is None for c in bound):
            new_ops.append(op)
            new_calls.append(call)
            continue
        new_ops.extend(parts)
        new_calls.extend(c for c in bound if c is not None)
    return new_ops, new_calls
